//===- Kernels.h - Compute kernels of the reference semantics ---*- C++ -*-===//
//
// This file declares the reference kernels of Braid's compute ops and
// collectives, and the deterministic random numbers the interpreter uses.
// Kernels check what only the values can show (an index out of range, bad
// offsets, shapes that do not fit) and report it on the op.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_LIB_INTERP_KERNELS_H
#define BRAID_LIB_INTERP_KERNELS_H

#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Interp/Interpreter.h"
#include "braid/Interp/Training.h"
#include "llvm/ADT/MapVector.h"

#include <array>

namespace mlir::braid::interp {

/// max and min that propagate NaN, as PyTorch's relu, max pooling and
/// max/min reductions do (and IEEE 754-2019 maximum/minimum, which the
/// compiled kernels use): NaN when either is NaN.
inline double maxPropagatingNaN(double a, double b) {
  return a != a || b != b ? a + b : (a < b ? b : a);
}
inline double minPropagatingNaN(double a, double b) {
  return a != a || b != b ? a + b : (b < a ? b : a);
}

/// An index value (held as a double) as text: exact below 2^53, else the
/// double's own digits; never a cast that wraps or overflows.
std::string formatIndex(double index);

/// A 64-bit mix of `x` (SplitMix64's finalizer).
uint64_t mixBits(uint64_t x);
/// A uniform double in [0, 1) from 64 random bits.
double unitInterval(uint64_t bits);
/// A stable 64-bit hash of `text` (FNV-1a).
uint64_t hashName(StringRef text);

/// A zero tensor of `shape`, or an error located at `op` when it is larger
/// than the reference semantics holds (kMaxTensorElements).
FailureOr<HostTensor> allocate(Operation *op, ElementKind kind,
                               ArrayRef<int64_t> shape);

/// Checks that `offsets` start at 0, never decrease and end at `numIndices`.
LogicalResult checkOffsets(Operation *op, const HostTensor &offsets,
                           int64_t numIndices);

/// braid.slice_bags: the bags [start, start + count) of `indices` and
/// `offsets`, cut short at the batch's end, with offsets rebased to 0.
FailureOr<std::array<HostTensor, 2>> runSliceBags(SliceBagsOp op,
                                                  const HostTensor &indices,
                                                  const HostTensor &offsets);

FailureOr<HostTensor> runEmbeddingBag(EmbeddingBagOp op, const TableData &table,
                                      const HostTensor &indices,
                                      const HostTensor &offsets,
                                      const HostTensor *weights);
FailureOr<HostTensor> runLinear(LinearOp op, const HostTensor &input,
                                const HostTensor &weight,
                                const HostTensor &bias);
FailureOr<HostTensor> runInteraction(InteractionOp op, const HostTensor &dense,
                                     ArrayRef<HostTensor> embeddings);

/// Runs a collective for all ranks at once: `inputs[r]` is rank r's input;
/// returns rank r's result at index r.
/// The shard of `table` that `rank` holds, if any.
std::optional<TableShard> getShardOnRank(TableOp table, int64_t rank);

/// The kernels of partitioned lookups (ShardKernels.cpp); `rank` is the
/// calling rank and `numRanks` the world size.
FailureOr<std::array<HostTensor, 3>>
runBucketize(BucketizeOp op, TableOp table, const HostTensor &indices,
             const HostTensor &offsets, int64_t rank, int64_t numRanks);
FailureOr<HostTensor> runShardEmbeddingBag(ShardEmbeddingBagOp op,
                                           TableOp table,
                                           const TableData &data, int64_t rank,
                                           const HostTensor &values,
                                           const HostTensor &lengths);
FailureOr<HostTensor> runCombineShards(CombineShardsOp op, TableOp table,
                                       const HostTensor &received,
                                       const HostTensor &offsets);
/// braid.all_to_all_v or braid.all_to_all_v_start `op` (errors go there).
FailureOr<std::vector<HostTensor>>
runAllToAllV(Operation *op, ArrayRef<HostTensor> inputs,
             ArrayRef<HostTensor> sendCounts);

FailureOr<std::vector<HostTensor>>
runCollective(CollectiveOpInterface op, ArrayRef<HostTensor> inputs);
FailureOr<std::vector<HostTensor>> runPermute(PermuteOp op,
                                              ArrayRef<HostTensor> inputs);

/// The kernels of the training step (TrainKernels.cpp). The add* cores are
/// shared with the global training oracle (Training.cpp), which keeps its
/// gradients in doubles.
/// Adds to dx, dw and db the gradients of y = activation(x w^T + b) given
/// dy, the gradient of y.
void addLinearGradients(Activation activation, const HostTensor &x,
                        const HostTensor &w, const HostTensor &y,
                        ArrayRef<double> dy, MutableArrayRef<double> dx,
                        MutableArrayRef<double> dw, MutableArrayRef<double> db);
/// Adds to `grads` (one per feature) the gradients of an interaction's
/// features given dy, the gradient of its `width`-column result.
void addInteractionGradients(InteractionKind kind,
                             ArrayRef<const HostTensor *> features,
                             ArrayRef<double> dy, int64_t width,
                             ArrayRef<MutableArrayRef<double>> grads);
FailureOr<std::array<HostTensor, 2>>
runBceWithLogits(BceWithLogitsOp op, const HostTensor &logits,
                 const HostTensor &labels);
FailureOr<std::array<HostTensor, 3>>
runLinearGrad(LinearGradOp op, const HostTensor &input,
              const HostTensor &weight, const HostTensor &result,
              const HostTensor &resultGrad);
FailureOr<std::vector<HostTensor>>
runInteractionGrad(InteractionGradOp op, const HostTensor &resultGrad,
                   ArrayRef<HostTensor> features);
FailureOr<HostTensor> runCombineShardsGrad(CombineShardsGradOp op,
                                           TableOp table,
                                           const HostTensor &resultGrad,
                                           const HostTensor &offsets);
/// The gradient of every row a lookup read, by row, in the order first read.
using RowGradients = llvm::MapVector<int64_t, std::vector<double>>;
/// The row gradients of a whole-table lookup (embedding_bag_update and
/// embedding_bag_grad).
FailureOr<RowGradients> runBagRowGradients(Operation *op, PoolingMode mode,
                                           const TableData &table,
                                           const HostTensor &indices,
                                           const HostTensor &offsets,
                                           const HostTensor &pooledGrad);
/// The row gradients (the shard's columns) of `rank`'s shard lookup.
FailureOr<RowGradients>
runShardRowGradients(ShardEmbeddingBagUpdateOp op, TableOp table,
                     const TableData &data, int64_t rank,
                     const HostTensor &values, const HostTensor &lengths,
                     const HostTensor &pooledGrad);
/// Applies `config` to the rows of `gradients` (each `cols` columns from
/// `colOffset`), with their state in `state`.
void applyRowUpdates(TableData &table, int64_t colOffset,
                     const RowGradients &gradients,
                     const OptimizerConfig &config,
                     llvm::DenseMap<int64_t, std::vector<double>> &state);
FailureOr<std::vector<HostTensor>>
runDenseUpdate(DenseUpdateOp op, const HostTensor &param,
               const HostTensor &grad, const HostTensor &step,
               ArrayRef<HostTensor> state);
/// The members' steps of a fused dense update, in its results' order.
FailureOr<std::vector<HostTensor>>
runFusedDenseUpdate(FusedDenseUpdateOp op, ArrayRef<HostTensor> params,
                    const HostTensor &grads, const HostTensor &step,
                    ArrayRef<HostTensor> state);

} // namespace mlir::braid::interp

#endif // BRAID_LIB_INTERP_KERNELS_H
