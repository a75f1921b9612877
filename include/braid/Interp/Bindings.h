//===- Bindings.h - Inputs and weights of a Braid function ------*- C++ -*-===//
//
// This file declares how the reference semantics finds the values of a
// function's arguments and tables: it describes the function as a
// Signature (Signature.h), whose binding reads .npy files or generates
// values from a seed. Argument names come from the `braid.input` /
// `braid.param` argument attributes.
//
// Files: weights `<table>.npy` [rows, dim] and `<param>.npy`; inputs
// `<input>.npy`, or `rank<r>/<input>.npy` for rank r when that file exists.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_INTERP_BINDINGS_H
#define BRAID_INTERP_BINDINGS_H

#include "braid/Interp/Signature.h"

namespace mlir {
class ModuleOp;
namespace braid {
class ReplicaGroupsAttr;
} // namespace braid
} // namespace mlir

namespace mlir::braid::interp {

/// The name an argument binds to: its `braid.input` or `braid.param`
/// attribute, else "arg<i>".
std::string getArgumentName(func::FuncOp func, unsigned index);
/// True if argument `index` is a parameter (`braid.param`).
bool isParameter(func::FuncOp func, unsigned index);

/// The members of the group of `groups` that holds rank 0, in order: the
/// ranks whose blocks make a sharded parameter or state whole (every group
/// holds the same one).
std::vector<int64_t> shardRanksOf(ReplicaGroupsAttr groups);
/// The dimension a sharded argument (`isResult`: result) `index` of `func`
/// splits: its `braid.shard_dim`, 0 when absent.
int64_t getShardDim(func::FuncOp func, unsigned index, bool isResult = false);

/// The function to run: `@forward`, else the module's only public function.
FailureOr<func::FuncOp> findEntryFunction(ModuleOp module);

/// `func`'s arguments and the tables of its module.
Signature describeFunction(func::FuncOp func);

/// The tables of `func`'s module, loaded or generated; errors are
/// reported at `func`.
FailureOr<TableMap> bindTables(func::FuncOp func,
                               const BindingOptions &options);

/// Every rank's arguments of `func`, loaded or generated.
FailureOr<RankValues> bindArguments(func::FuncOp func, const TableMap &tables,
                                    const BindingOptions &options);

} // namespace mlir::braid::interp

#endif // BRAID_INTERP_BINDINGS_H
