//===- Interpreter.h - Reference semantics of Braid -------------*- C++ -*-===//
//
// This file declares the reference semantics: an interpreter that runs a
// Braid function on host tensors, either as a global program (one rank) or
// as a per-rank SPMD program on N simulated ranks in one process. It is the
// oracle every Braid transformation is tested against.
//
// The ranks run in lockstep: every operation is executed for all ranks
// before the next one, and a collective sees the inputs of every rank at
// once. This is exact for Braid's SPMD programs, whose control flow does not
// depend on the rank, and it makes a mismatched collective impossible to
// hang on.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_INTERP_INTERPRETER_H
#define BRAID_INTERP_INTERPRETER_H

#include "braid/Interp/HostTensor.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "mlir/IR/Value.h"

#include <memory>
#include <vector>

namespace mlir {
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace mlir::braid::interp {

/// The rows of an embedding table: loaded from a file, or generated from a
/// seed on demand so that tables of billions of elements cost no memory.
class TableData {
public:
  /// Rows drawn uniformly from [-1/sqrt(rows), 1/sqrt(rows)] (TorchRec's
  /// default initialization), a pure function of (seed, name, row, col).
  static TableData generated(StringRef name, int64_t rows, int64_t dim,
                             ElementKind kind, uint64_t seed);
  /// Rows of `tensor`, which must be [rows, dim].
  static TableData loaded(HostTensor tensor);

  int64_t getNumRows() const { return rows; }
  int64_t getDim() const { return dim; }
  ElementKind getKind() const { return kind; }
  bool isGenerated() const { return !tensor; }
  double get(int64_t row, int64_t col) const;
  /// The whole table as a tensor (generating it if needed).
  HostTensor materialize() const;
  /// Replaces one row (rounded to the table's kind): what a training step
  /// writes. Rows not written keep their generated or loaded values.
  void setRow(int64_t row, ArrayRef<double> values);

private:
  int64_t rows = 0, dim = 0;
  ElementKind kind = ElementKind::f32;
  uint64_t nameSeed = 0;
  double bound = 0;
  std::shared_ptr<const HostTensor> tensor;
  /// Rows a training step wrote, by row.
  llvm::DenseMap<int64_t, std::vector<double>> writtenRows;
};

/// The tables of a module by symbol name.
using TableMap = llvm::StringMap<TableData>;

/// Values of one function call on every rank: `[rank][value index]`.
using RankValues = std::vector<std::vector<HostTensor>>;

/// Runs `func` on `args.size()` simulated ranks; `args[r]` holds rank r's
/// arguments. Returns each rank's results, or failure after emitting a
/// diagnostic located at the offending operation.
FailureOr<RankValues> runFunction(func::FuncOp func, const RankValues &args,
                                  const TableMap &tables);

/// Runs `func` on one rank and returns the value of every SSA value it
/// computed (arguments included): the forward pass a training step's
/// backward reads.
FailureOr<llvm::DenseMap<Value, HostTensor>>
runFunctionRecording(func::FuncOp func, ArrayRef<HostTensor> args,
                     const TableMap &tables);

} // namespace mlir::braid::interp

#endif // BRAID_INTERP_INTERPRETER_H
