//===- EmbeddingUpdateKernel.h - The fused embedding update -----*- C++ -*-===//
//
// This file declares the target-neutral kernel of a lookup's backward fused
// with its table's optimizer (embedding_bag_update and
// shard_embedding_bag_update with sum or mean pooling). The kernel reads
// the lookup's entries grouped by row (the runtime's segment_rows), so each
// touched row is summed and updated by one iteration, in a fixed order: no
// atomics, the same result on every target and every run.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_CONVERSION_BRAIDTOLOOPS_EMBEDDINGUPDATEKERNEL_H
#define BRAID_CONVERSION_BRAIDTOLOOPS_EMBEDDINGUPDATEKERNEL_H

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/IR/Builders.h"

namespace mlir::braid {

/// The embedding optimizers, numbered as braidrt/OptimizerMath.h.
enum class EmbeddingOptimizer : int64_t {
  sgd = 0,
  adagrad = 1,
  rowwiseAdagrad = 2
};

/// One segmented update. Buffers are memrefs; `count` is an index.
struct SegmentedRowUpdate {
  /// [rows, cols] of f32, f16 or bf16, updated in place.
  Value table;
  /// f32 [rows] (row-wise Adagrad), [rows, cols] (Adagrad), or null (SGD).
  Value state;
  /// f32 [bags, width], width static and at least the table's columns.
  Value grad;
  /// i64 offsets [bags + 1], or with `boundsAreLengths` lengths [bags].
  Value bounds;
  bool boundsAreLengths = false;
  PoolingMode mode = PoolingMode::sum;
  EmbeddingOptimizer optimizer = EmbeddingOptimizer::sgd;
  double lr = 0, eps = 0;
  /// i64 [entries]: the entries' bags, stably sorted by row.
  Value sortedBags;
  /// i64 [entries]: the distinct rows, the first `count` valid.
  Value segmentRows;
  /// i64 [entries + 1]: where each distinct row's entries start.
  Value segmentStarts;
  Value count;
};

/// Emits a forall over the `count` distinct rows. Each iteration sums its
/// row's gradient over the row's entries in entry order (f32 for an f32
/// table, f64 for 16-bit ones; a mean bag's share scaled by 1 / its size,
/// as the runtime and the reference semantics do), then applies the
/// optimizer to the row in f64 (braidrt/OptimizerMath.h's formulas),
/// column chunk by column chunk, and rounds the row back once. Emits a
/// located error and fails on a form it does not build.
LogicalResult buildSegmentedRowUpdate(OpBuilder &b, Location loc,
                                      const SegmentedRowUpdate &update);

} // namespace mlir::braid

#endif // BRAID_CONVERSION_BRAIDTOLOOPS_EMBEDDINGUPDATEKERNEL_H
