//===- Bindings.h - Inputs and weights of a Braid program -------*- C++ -*-===//
//
// This file declares how the reference semantics finds the values of a
// function's arguments and tables: from .npy files in an inputs and a
// weights directory, or generated from a seed. Argument names come from the
// `braid.input` / `braid.param` argument attributes.
//
// Files: weights `<table>.npy` [rows, dim] and `<param>.npy`; inputs
// `<input>.npy`, or `rank<r>/<input>.npy` for rank r when that file exists.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_INTERP_BINDINGS_H
#define BRAID_INTERP_BINDINGS_H

#include "braid/Interp/Interpreter.h"

#include <optional>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace mlir::braid::interp {

struct BindingOptions {
  int64_t numRanks = 1;
  uint64_t seed = 0;
  /// Where to read inputs and weights; generated from `seed` when unset.
  std::optional<std::string> inputsDir;
  std::optional<std::string> weightsDir;
};

/// The name an argument binds to: its `braid.input` or `braid.param`
/// attribute, else "arg<i>".
std::string getArgumentName(func::FuncOp func, unsigned index);
/// True if argument `index` is a parameter (`braid.param`).
bool isParameter(func::FuncOp func, unsigned index);

/// The function to run: `@forward`, else the module's only public function.
FailureOr<func::FuncOp> findEntryFunction(ModuleOp module);

/// The tables of `module`, loaded or generated.
FailureOr<TableMap> bindTables(ModuleOp module, const BindingOptions &options);

/// Every rank's arguments of `func`, loaded or generated.
FailureOr<RankValues> bindArguments(func::FuncOp func, const TableMap &tables,
                                    const BindingOptions &options);

} // namespace mlir::braid::interp

#endif // BRAID_INTERP_BINDINGS_H
