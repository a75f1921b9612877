//===- ShardKernels.h - Kernels of sharded lookups --------------*- C++ -*-===//
//
// This file declares the target-neutral kernels of the sharded-lookup ops
// that move no data between ranks (bucketize, shard_embedding_bag,
// combine_shards), built on tensors for every target.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_CONVERSION_BRAIDTOLOOPS_SHARDKERNELS_H
#define BRAID_CONVERSION_BRAIDTOLOOPS_SHARDKERNELS_H

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::braid {

/// A 1-D constant of `values` with `element` type (index or integer).
Value buildConstantVector(OpBuilder &b, Location loc, ArrayRef<int64_t> values,
                          Type element);

/// shard_embedding_bag on `table`, the rank's shard: bag starts from the
/// received lengths, then the pooling kernel's partial pooling, each
/// received row checked against the shard (`indexError` aborts);
/// `columnLanes` is BagPooling's.
FailureOr<Value> buildShardLookupKernel(OpBuilder &b, ShardEmbeddingBagOp op,
                                        Value table, func::FuncOp indexError,
                                        int64_t columnLanes = 0);

/// bucketize: per destination and bag the number of indices it receives
/// (lengths), the routed indices rebased to their shard (values), and per
/// rank how many it is sent (send counts), in the op's result order; every
/// index is checked against the table (`indexError` aborts) and the offsets
/// for a valid bag layout (`offsetsError` aborts), and the bags against
/// bags_per_rank (`bagsError` (bags, slots) aborts).
FailureOr<SmallVector<Value>> buildBucketizeKernel(OpBuilder &b, BucketizeOp op,
                                                   func::FuncOp indexError,
                                                   func::FuncOp offsetsError,
                                                   func::FuncOp bagsError);

/// combine_shards: column parts concatenated in rank order, the rank's
/// bags kept, mean divided by the bag size and empty mean and max bags 0.
FailureOr<Value> buildCombineShardsKernel(OpBuilder &b, CombineShardsOp op);

/// `combine_shards_grad`: a tensor.generate over the received parts'
/// gradient [parts x bags_per_rank, width] (parts: (column offset, columns)
/// pairs in rank order). Element (p x slots + b, c) is the result's
/// gradient at (b, offset_p + c), times 1 / the bag's size for `mean`
/// (in f64, rounded once), or zero past the local bags, past part p's
/// columns and for the empty bags of `mean` and `max`. A local bag count
/// above bags_per_rank calls `bagsError` (bags, slots).
FailureOr<Value> buildCombineShardsGradKernel(OpBuilder &b,
                                              CombineShardsGradOp op,
                                              ArrayRef<int64_t> parts,
                                              func::FuncOp bagsError);

} // namespace mlir::braid

#endif // BRAID_CONVERSION_BRAIDTOLOOPS_SHARDKERNELS_H
