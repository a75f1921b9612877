//===- LowerExchanges.h - CPU lowering of partitioned lookups ---*- C++ -*-===//
//
// This file declares the pattern sets of convert-braid-to-cpu, one per op
// family, and what they share: the exchanges become runtime calls through
// MLIR's C interface, and the compute ops, bucketize, shard_embedding_bag
// and combine_shards become generated kernels.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_CONVERSION_BRAIDTOCPU_LOWEREXCHANGES_H
#define BRAID_CONVERSION_BRAIDTOCPU_LOWEREXCHANGES_H

#include "braid/Conversion/BraidToLoops/Checks.h"
#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

namespace mlir::braid {

/// Declares (once) a private runtime function; with `cInterface`, calls
/// go through `_mlir_ciface_NAME` with descriptor pointers.
func::FuncOp declareRuntimeFunction(ModuleOp module, StringRef name,
                                    TypeRange arguments, TypeRange results,
                                    bool cInterface);

/// The runtime's abort for inconsistent bag offsets: (entry, value).
func::FuncOp declareOffsetsError(ModuleOp module);

/// The buffer of `tensor` as an unranked memref (for C-interface calls).
Value toUnrankedBuffer(OpBuilder &b, Location loc, Value tensor);

/// For an exchange over `groups`, which must be blocks of consecutive
/// ranks: the group size and whether the calling rank is in one of the
/// groups (an i1, constant when the groups tile the cluster). An error on
/// `op` otherwise.
FailureOr<std::pair<int64_t, Value>>
lowerRankBlocks(OpBuilder &b, Location loc, ModuleOp module, Operation *op,
                ReplicaGroupsAttr groups);

/// Exchanges started and not yet waited for, by their token. The output
/// is null for an all_to_all_v whose counts are still moving: the wait
/// allocates it.
struct PendingExchange {
  Value handle, input, output;
  std::string suffix;
};
using PendingExchanges = llvm::DenseMap<Value, PendingExchange>;

/// What the patterns of one convert-braid-to-cpu run share: the module
/// (runtime functions are declared in it), the table arguments each
/// function gained, and the exchanges started and not yet waited for.
struct CpuLoweringState {
  ModuleOp module;
  /// Per function and table name, the argument holding its rows.
  llvm::DenseMap<std::pair<Operation *, Attribute>, Value> tableArgs;
  /// Per function and table name, the argument holding the table's
  /// optimizer state, for tables a training step updates with an optimizer
  /// that keeps state.
  llvm::DenseMap<std::pair<Operation *, Attribute>, Value> tableStateArgs;
  PendingExchanges pending;
  /// Whether sum and mean embedding updates become the generated kernel
  /// (the pass's embedding-update-kernel) rather than the runtime's.
  bool embeddingUpdateKernel = false;
  /// convert-braid-to-cpu's pooling-lanes (BagPooling::columnLanes).
  int64_t poolingLanes = 0;
  /// convert-braid-to-cpu's async-counts: a started all_to_all_v posts its
  /// counts and returns; the wait sizes the result.
  bool asyncCounts = true;
  /// convert-braid-to-cpu's bias-grad-columns (buildLinearGradPointwise).
  int64_t biasGradColumns = 16;
  /// convert-braid-to-cpu's cat-lanes (buildInteractionKernel).
  int64_t catLanes = 0;
  /// convert-braid-to-cpu's parallel-checks (emitIndicesCheck,
  /// emitOffsetsCheck).
  bool parallelChecks = false;

  /// The argument of `table` in the function around `op`.
  Value tableArgument(Operation *op, FlatSymbolRefAttr table) const {
    return tableArgs.lookup(
        {op->getParentOfType<func::FuncOp>(), table.getAttr()});
  }
  /// The argument of `table`'s optimizer state in the function around
  /// `op`, or null where its optimizer keeps none.
  Value tableStateArgument(Operation *op, FlatSymbolRefAttr table) const {
    return tableStateArgs.lookup(
        {op->getParentOfType<func::FuncOp>(), table.getAttr()});
  }
  /// The runtime's abort for an index outside a table: (index, rows).
  func::FuncOp indexError() const;
  /// The runtime's abort for inconsistent bag offsets: (entry, value).
  func::FuncOp offsetsError() const { return declareOffsetsError(module); }
};

/// Moves each lookup-side op of the public functions (embedding_bag,
/// shard_embedding_bag, bucketize, combine_shards) into an internal,
/// noinline function of its own, called where the op was, and records the
/// table arguments those functions take in `state`. Keeps every function
/// the upstream passes see small, whatever the number of tables.
void outlineKernels(CpuLoweringState &state);

/// Patterns for the ops of partitioned programs: the exchanges (sync and
/// started, and their waits) become runtime calls; bucketize,
/// shard_embedding_bag and combine_shards become generated kernels.
void populateBraidExchangeToCPUPatterns(RewritePatternSet &patterns,
                                        CpuLoweringState &state);

/// Patterns for the training step's ops: the gradient exchanges
/// (all_reduce, all_gather) and the training kernels, runtime calls that
/// update tables and their state in place.
void populateBraidTrainingToCPUPatterns(RewritePatternSet &patterns,
                                        CpuLoweringState &state);

/// The type of a table's optimizer-state argument under `optimizer` (an
/// `embedding` part of braid.optimizer): [rows] f32 for rowwise_adagrad,
/// [rows, cols] f32 for adagrad, none for sgd. Sizes are dynamic: they are
/// the rank's slice of the table.
std::optional<Type> getTableStateType(MLIRContext *context,
                                      DictionaryAttr optimizer);

/// Patterns for the compute ops: embedding_bag (the pooling kernel with
/// its checks), linear (BLAS through the runtime for f32, else generated)
/// and interaction.
void populateBraidComputeToCPUPatterns(RewritePatternSet &patterns,
                                       CpuLoweringState &state);

} // namespace mlir::braid

#endif // BRAID_CONVERSION_BRAIDTOCPU_LOWEREXCHANGES_H
