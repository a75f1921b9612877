//===- ShardKernels.cpp - Reference kernels of partitioned lookups --------===//
//
// This file implements the reference semantics of the ops braid-partition
// emits for sharded tables: bucketize, all_to_all_v, shard_embedding_bag and
// combine_shards. Each validates its run-time inputs (offsets, lengths,
// counts, index ranges) and reports a located error naming the rank.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::interp;

/// Checks `offsets` (ending at `numIndices`) and that their bags fit in
/// `op`'s bags_per_rank slots; returns the number of bags.
template <typename OpTy>
static FailureOr<int64_t> checkLocalBags(OpTy op, const HostTensor &offsets,
                                         int64_t numIndices) {
  if (failed(checkOffsets(op, offsets, numIndices)))
    return failure();
  int64_t numBags = offsets.getNumElements() - 1;
  if (numBags > int64_t(op.getBagsPerRank()))
    return op.emitError() << "there are " << numBags
                          << " local bags but bags_per_rank is only "
                          << op.getBagsPerRank();
  return numBags;
}

std::optional<TableShard>
mlir::braid::interp::getShardOnRank(TableOp table, int64_t rank) {
  for (const TableShard &shard : table.getPlacementAttr().getShards(
           table.getNumRows(), table.getDim()))
    if (shard.rank == rank)
      return shard;
  return std::nullopt;
}

FailureOr<std::array<HostTensor, 3>>
mlir::braid::interp::runBucketize(BucketizeOp op, TableOp table,
                                  const HostTensor &indices,
                                  const HostTensor &offsets, int64_t rank,
                                  int64_t numRanks) {
  FailureOr<int64_t> numBags =
      checkLocalBags(op, offsets, indices.getNumElements());
  if (failed(numBags))
    return failure();
  int64_t slots = op.getBagsPerRank();
  int64_t numCounts = op.getSendCounts().getType().getDimSize(0);
  if (numCounts != numRanks)
    return op.emitError() << "send_counts has " << numCounts
                          << " entries but the program runs on " << numRanks
                          << " ranks";
  ArrayRef<int64_t> destinations = op.getDestinations();
  if (!destinations.empty() && destinations.back() >= numRanks)
    return op.emitError() << "destination " << destinations.back()
                          << " is not a rank of " << numRanks;
  int64_t rows = table.getNumRows();
  for (int64_t i = 0; i < indices.getNumElements(); ++i)
    if (indices.data[i] < 0 || indices.data[i] >= rows)
      return op.emitError() << "rank " << rank << ": index "
                            << formatIndex(indices.data[i])
                            << " at position " << i << " is outside table '"
                            << table.getSymName() << "' (" << rows << " rows)";

  // bags_per_rank is at most 2^30 and the destinations ranks: their
  // product is an int64, and allocate() bounds it.
  FailureOr<HostTensor> allocatedLengths =
      allocate(op, ElementKind::i64, {slots * int64_t(destinations.size())});
  if (failed(allocatedLengths))
    return failure();
  HostTensor &lengths = *allocatedLengths;
  HostTensor counts(ElementKind::i64, {numRanks});
  std::vector<double> values;
  for (auto [d, destination] : llvm::enumerate(destinations)) {
    std::optional<TableShard> shard = getShardOnRank(table, destination);
    size_t before = values.size();
    for (int64_t b = 0; shard && b < *numBags; ++b) {
      int64_t count = 0;
      for (int64_t i = offsets.data[b]; i < offsets.data[b + 1]; ++i) {
        int64_t row = indices.data[i];
        if (row < shard->rowOffset || row >= shard->rowOffset + shard->rows)
          continue;
        values.push_back(row - shard->rowOffset);
        ++count;
      }
      lengths.data[d * slots + b] = count;
    }
    counts.data[destination] = values.size() - before;
  }
  if (!isAllocatable({int64_t(values.size())}))
    return op.emitError() << "bucketize routes more than "
                          << kMaxTensorElements << " values";
  HostTensor routed(indices.kind, {int64_t(values.size())});
  routed.data = std::move(values);
  return std::array<HostTensor, 3>{std::move(lengths), std::move(routed),
                                   std::move(counts)};
}

FailureOr<std::vector<HostTensor>>
mlir::braid::interp::runAllToAllV(Operation *op, ArrayRef<HostTensor> inputs,
                                  ArrayRef<HostTensor> sendCounts) {
  int64_t numRanks = inputs.size();
  // chunks[j]: what every rank sends to rank j, in source order.
  std::vector<SmallVector<HostTensor>> chunks(numRanks);
  for (int64_t i = 0; i < numRanks; ++i) {
    const HostTensor &input = inputs[i];
    const HostTensor &counts = sendCounts[i];
    if (counts.getNumElements() != numRanks)
      return op->emitError() << "rank " << i << " has "
                            << counts.getNumElements()
                            << " send counts for " << numRanks << " ranks";
    if (input.getRank() != inputs[0].getRank() ||
        !std::equal(input.shape.begin() + 1, input.shape.end(),
                    inputs[0].shape.begin() + 1))
      return op->emitError() << "rank " << i << " sends "
                            << input.describeType() << " but rank 0 sends "
                            << inputs[0].describeType()
                            << "; only dimension 0 may differ";
    int64_t offset = 0;
    for (int64_t j = 0; j < numRanks; ++j) {
      int64_t count = counts.data[j];
      if (count < 0 || offset + count > input.shape[0])
        return op->emitError() << "rank " << i << " sends "
                              << (count < 0 ? "a negative count" : "more")
                              << " to rank " << j << " than its input of "
                              << input.shape[0] << " slices holds";
      chunks[j].push_back(input.slice(0, offset, count));
      offset += count;
    }
    if (offset != input.shape[0])
      return op->emitError() << "rank " << i << " sends " << offset
                            << " slices but its input has " << input.shape[0];
  }
  std::vector<HostTensor> results;
  for (int64_t j = 0; j < numRanks; ++j) {
    SmallVector<int64_t> shape = llvm::to_vector(inputs[0].shape);
    shape[0] = 0;
    for (const HostTensor &chunk : chunks[j])
      shape[0] += chunk.shape[0];
    if (!isAllocatable(shape))
      return op->emitError() << "rank " << j << " would receive more than "
                            << kMaxTensorElements << " elements";
    results.push_back(HostTensor::concat(chunks[j], 0));
  }
  return results;
}

FailureOr<HostTensor> mlir::braid::interp::runShardEmbeddingBag(
    ShardEmbeddingBagOp op, TableOp table, const TableData &data, int64_t rank,
    const HostTensor &values, const HostTensor &lengths) {
  std::optional<TableShard> shard = getShardOnRank(table, rank);
  TableShard empty{rank, 0, 0, 0, 0};
  const TableShard &local = shard ? *shard : empty;
  int64_t total = 0;
  for (double length : lengths.data) {
    if (length < 0)
      return op.emitError() << "rank " << rank << ": a bag length is negative";
    total += length;
  }
  if (total != values.getNumElements())
    return op.emitError() << "rank " << rank << ": lengths add up to " << total
                          << " but there are " << values.getNumElements()
                          << " values";
  int64_t numBags = lengths.getNumElements();
  int64_t width = getWidestShardCols(table);
  ElementKind kind = *getElementKind(getAccumulationType(table));
  FailureOr<HostTensor> result = allocate(op, kind, {numBags, width});
  if (failed(result))
    return failure();
  bool isMax = op.getMode() == PoolingMode::max;
  int64_t next = 0;
  for (int64_t b = 0; b < numBags; ++b) {
    double *row = &result->data[b * width];
    int64_t length = lengths.data[b];
    if (isMax && length > 0)
      std::fill(row, row + local.cols, -std::numeric_limits<double>::infinity());
    if (isMax && length == 0)
      std::fill(row, row + width, -std::numeric_limits<double>::infinity());
    for (int64_t k = 0; k < length; ++k, ++next) {
      int64_t value = values.data[next];
      if (value < 0 || value >= local.rows)
        return op.emitError() << "rank " << rank << ": value " << value
                              << " is outside its shard of table '"
                              << table.getSymName() << "' (" << local.rows
                              << " rows)";
      for (int64_t c = 0; c < local.cols; ++c) {
        double element = data.get(local.rowOffset + value, local.colOffset + c);
        row[c] = isMax ? maxPropagatingNaN(row[c], element) : row[c] + element;
      }
    }
  }
  result->round();
  return result;
}

FailureOr<HostTensor>
mlir::braid::interp::runCombineShards(CombineShardsOp op, TableOp table,
                                      const HostTensor &received,
                                      const HostTensor &offsets) {
  // The offsets alone define the bags here: they end wherever they end.
  FailureOr<int64_t> numBags = checkLocalBags(
      op, offsets, offsets.data.empty() ? 0 : int64_t(offsets.data.back()));
  if (failed(numBags))
    return failure();
  int64_t slots = op.getBagsPerRank();
  SmallVector<TableShard> parts = getReceivedParts(table);
  if (received.shape[0] != int64_t(parts.size()) * slots)
    return op.emitError() << "received " << received.shape[0] << " rows but "
                          << parts.size() << " part(s) of " << slots
                          << " bags need " << int64_t(parts.size()) * slots;
  int64_t dim = table.getDim(), width = received.shape[1];
  for (auto [p, part] : llvm::enumerate(parts))
    if (part.cols > width)
      return op.emitError()
             << "received rows are " << width << " wide, but part " << p
             << " of '" << table.getSymName() << "' has " << part.cols
             << " columns";
  FailureOr<HostTensor> result =
      allocate(op, *getElementKind(table.getElementType()), {*numBags, dim});
  if (failed(result))
    return failure();
  for (int64_t b = 0; b < *numBags; ++b) {
    int64_t size = offsets.data[b + 1] - offsets.data[b];
    double *row = &result->data[b * dim];
    for (auto [p, part] : llvm::enumerate(parts))
      for (int64_t c = 0; c < part.cols; ++c)
        row[part.colOffset + c] = received.data[(p * slots + b) * width + c];
    if (size == 0 && op.getMode() != PoolingMode::sum)
      std::fill(row, row + dim, 0.0);
    if (size > 0 && op.getMode() == PoolingMode::mean)
      for (int64_t c = 0; c < dim; ++c)
        row[c] /= static_cast<double>(size);
  }
  result->round();
  return result;
}
