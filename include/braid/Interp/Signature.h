//===- Signature.h - What a Braid program takes, without MLIR ---*- C++ -*-===//
//
// This file declares a program's signature as plain data: its arguments
// (name, element kind, shape, whether a parameter) and the tables it looks
// up (rows, dim, element kind, pooling factor). Binding inputs and weights
// (read from .npy files or generated from a seed) and splitting a global
// batch over ranks work on signatures alone, so that the reference
// semantics (which describes a `func.func`) and a compiled artifact (whose
// manifest carries the signature as JSON) bind exactly the same values.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_INTERP_SIGNATURE_H
#define BRAID_INTERP_SIGNATURE_H

#include "braid/Interp/Interpreter.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::braid::interp {

struct ArgumentSpec {
  std::string name;
  /// The type as MLIR prints it ("tensor<?xi64>"), for messages.
  std::string type;
  /// None for types the host cannot represent.
  std::optional<ElementKind> kind;
  /// Sizes, -1 where dynamic; empty for a scalar.
  llvm::SmallVector<int64_t, 4> shape;
  bool ranked = true;
  bool parameter = false;
  /// A parameter stored as blocks (braid.param_shard): the ranks whose
  /// blocks along `shardDim`, in order, make the whole (rank 0's group;
  /// every group holds the same parameter). Empty when replicated.
  std::vector<int64_t> shardRanks;
  int64_t shardDim = 0;
  /// The block of the whole parameter `rank` holds (its position in its
  /// group of shardRanks.size() consecutive ranks), or -1 if replicated.
  int64_t shardPositionOf(int64_t rank) const;
};

struct TableSpec {
  std::string name;
  int64_t rows = 0, dim = 0;
  ElementKind kind = ElementKind::f32;
  double poolingFactor = 1;
};

struct Signature {
  std::vector<ArgumentSpec> arguments;
  std::vector<TableSpec> tables;

  std::optional<unsigned> findArgument(llvm::StringRef name) const;
  const TableSpec *findTable(llvm::StringRef name) const;
};

/// The signature as JSON: {"arguments": [{name, type, dtype, shape,
/// parameter}], "tables": [{name, rows, dim, dtype, pooling_factor}]}.
llvm::json::Object signatureToJson(const Signature &signature);
/// Reads signatureToJson's output; errors name the JSON path under `what`.
llvm::Expected<Signature> signatureFromJson(const llvm::json::Value &value,
                                            llvm::StringRef what);
/// Why `actual` differs from `expected` (argument names, kinds or shapes,
/// tables), or nothing when they agree.
std::optional<std::string> compareSignatures(const Signature &expected,
                                             const Signature &actual);

std::optional<ElementKind> parseElementKind(llvm::StringRef name);

struct BindingOptions {
  int64_t numRanks = 1;
  uint64_t seed = 0;
  /// Where to read inputs and weights; generated from `seed` when unset.
  std::optional<std::string> inputsDir;
  std::optional<std::string> weightsDir;
};

/// The tables of `signature`, loaded or generated.
llvm::Expected<TableMap> bindTables(const Signature &signature,
                                    const BindingOptions &options);

/// Every rank's arguments of `signature`, loaded or generated.
llvm::Expected<RankValues> bindArguments(const Signature &signature,
                                         const TableMap &tables,
                                         const BindingOptions &options);

/// Every rank's arguments of `perRank` from the arguments of the global
/// program `global`, matched by name. Rank r gets samples
/// [sum(split[0..r)), sum(split[0..r])) of the batch; parameters are
/// replicated.
llvm::Expected<RankValues>
splitGlobalArguments(const Signature &global,
                     llvm::ArrayRef<HostTensor> globalArgs,
                     const Signature &perRank,
                     llvm::ArrayRef<int64_t> batchSplit);

} // namespace mlir::braid::interp

#endif // BRAID_INTERP_SIGNATURE_H
