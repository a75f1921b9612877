//===- ProgramShapes.h - Expected sizes of a per-rank program ---*- C++ -*-===//
//
// This file declares how the simulator binds the dynamic sizes of a per-rank
// program. One program runs on every rank, and what differs between ranks is
// dynamic in the IR: the local batch, the indices a rank looks up, what it
// routes to and receives from the owners of sharded tables. The expected
// value of each follows from the module's batch split, each table's
// pooling factor and placement, assuming indices spread uniformly over a
// table's rows.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_SIM_PROGRAMSHAPES_H
#define BRAID_SIM_PROGRAMSHAPES_H

#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"

#include <vector>

namespace mlir {
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace mlir::braid {
class BucketizeOp;
class TableOp;
} // namespace mlir::braid

namespace mlir::braid::sim {

/// For each braid.bucketize, the expected indices it sends to each rank per
/// sample of the sending rank: the table's pooling factor times the share
/// of the table's rows the destination holds (all of them for table-wise
/// and column-wise shards, none for a rank without a shard). Computed once
/// per op and shared by every rank's ProgramShapes.
/// It also resolves table symbols once for every rank (a module may hold
/// hundreds of tables).
class RoutingTable {
public:
  explicit RoutingTable(int64_t numRanks) : numRanks(numRanks) {}
  ArrayRef<double> perSample(BucketizeOp bucketize);
  /// The table a lookup-like op (embedding_bag, bucketize,
  /// shard_embedding_bag, combine_shards) reads, or null.
  TableOp tableOf(Operation *op);

private:
  int64_t numRanks;
  llvm::DenseMap<Operation *, std::vector<double>> cache;
  llvm::DenseMap<Attribute, TableOp> tables;
  bool tablesRead = false;
};

/// Expected sizes of the values of one function on one rank.
class ProgramShapes {
public:
  /// Binds `func`'s values on `rank` of `numRanks`, with `batchSplit` the
  /// samples of every rank (empty: a global program, whose sizes are all
  /// static). Emits a located error and fails on a dynamic size it cannot
  /// bind.
  static FailureOr<ProgramShapes> bind(func::FuncOp func, int64_t rank,
                                       int64_t numRanks,
                                       ArrayRef<int64_t> batchSplit,
                                       RoutingTable &routing);

  /// The expected number of elements of `value` (a ranked tensor), its
  /// dynamic dimension (only the first may be) bound.
  double elements(Value value) const;
  /// The expected size of `value`'s first dimension.
  double rows(Value value) const;
  /// The expected number of indices `bucketize` sends from rank `from` to
  /// rank `to`.
  double routed(BucketizeOp bucketize, int64_t from, int64_t to) const;

private:
  ProgramShapes(int64_t rank, int64_t numRanks, ArrayRef<int64_t> batchSplit,
                RoutingTable &routing)
      : rank(rank), numRanks(numRanks),
        batchSplit(batchSplit.begin(), batchSplit.end()), routing(&routing) {}
  LogicalResult bindArgument(BlockArgument arg);
  /// Binds the carried arguments of a pipelined form from the values its
  /// `braid.input_dist` function returns on this rank.
  LogicalResult bindCarried(func::FuncOp func);
  LogicalResult bindOp(Operation &op);
  /// The expected value of an index computed from constants and rows
  /// (tensor.dim of the first dimension, addi, subi, muli), if it is one.
  std::optional<double> indexValueOf(Value value) const;
  /// Records that `value` has `rows` rows when its first size is dynamic.
  void setRows(Value value, double rows);

  int64_t rank, numRanks;
  std::vector<int64_t> batchSplit;
  RoutingTable *routing;
  llvm::DenseMap<Value, double> boundRows;
};

} // namespace mlir::braid::sim

#endif // BRAID_SIM_PROGRAMSHAPES_H
