//===- PoolingKernel.h - The bag-pooling kernel -----------------*- C++ -*-===//
//
// This file declares the target-neutral row-major kernel that convert-braid-to-cpu
// emits for
// `braid.embedding_bag` and `braid.shard_embedding_bag`: bags in parallel
// (`scf.forall`), and for each bag its rows read as whole vectors and pooled
// in registers.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_CONVERSION_BRAIDTOLOOPS_POOLINGKERNEL_H
#define BRAID_CONVERSION_BRAIDTOLOOPS_POOLINGKERNEL_H

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::braid {

/// What one pooling kernel reads and writes.
struct BagPooling {
  /// The table (or this rank's shard of it), rows x columns; the columns
  /// may be dynamic or fewer than the result's.
  Value table;
  /// The row of every looked-up entry, integer elements.
  Value rows;
  /// Bag b pools rows[starts[b]] .. rows[starts[b + 1] - 1]; integer or
  /// index elements, one more than there are bags.
  Value starts;
  /// Optional per-sample weights, one per entry of `rows` (mode sum): each
  /// row is scaled by its weight before it is pooled.
  Value weights;
  /// The pooled result: bags x width, width static. Columns at or past
  /// the table's are zero.
  RankedTensorType resultType;
  /// The accumulator's element type (f32 for 16-bit tables).
  Type accumulatorType;
  PoolingMode mode = PoolingMode::sum;
  /// True: a finished pooling (mean divides, an empty bag is zero). False:
  /// a partial for combine_shards (mean is a sum, an empty max bag -inf).
  bool finish = true;
  /// When set, every row is checked against the table's rows in the kernel
  /// and an index outside calls it with (index, rows).
  func::FuncOp indexError;
  /// Every row the kernel reads is as wide as the result although the
  /// table's columns are dynamic: a shard of a table whose every shard holds
  /// the full width (an empty shard has no row that passes `indexError`'s
  /// check). Its rows are then read whole, unmasked, as a static-width
  /// table's are.
  bool rowsFullWidth = false;
  /// 0: one iteration pools a bag's whole row (the CPU's vector
  /// accumulator). N > 0 dividing the width: the forall runs over (bag,
  /// column group) pairs, a bag's width / N groups consecutive, and an
  /// iteration pools N columns of one bag, so a bag's row is read by
  /// width / N threads at once (the CUDA target's form: a thread per bag
  /// alone leaves a GPU nearly idle, and its reads of a row are one
  /// thread's loop).
  int64_t columnLanes = 0;
};

/// Emits the kernel at `b`'s insertion point; returns the pooled tensor, or
/// failure (with an error at `loc`) for a result of dynamic width.
FailureOr<Value> buildBagPooling(OpBuilder &b, Location loc,
                                 const BagPooling &pooling);

} // namespace mlir::braid

#endif // BRAID_CONVERSION_BRAIDTOLOOPS_POOLINGKERNEL_H
