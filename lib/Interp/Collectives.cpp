//===- Collectives.cpp - Collectives of the reference semantics -----------===//
//
// This file implements the reference semantics of Braid's collectives over
// simulated ranks: each collective receives the inputs of all ranks and
// returns what every rank receives, group by group, in group order.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::interp;

using Groups = SmallVector<SmallVector<int64_t>>;

/// The groups of `attr` over `numRanks` ranks, or all ranks when null.
/// A rank is in at most one group; `outside` gets the ranks in none.
static FailureOr<Groups> resolveGroups(Operation *op, ReplicaGroupsAttr attr,
                                       int64_t numRanks,
                                       SmallVectorImpl<int64_t> &outside) {
  Groups groups;
  if (!attr) {
    SmallVector<int64_t> all;
    for (int64_t rank = 0; rank < numRanks; ++rank)
      all.push_back(rank);
    groups.push_back(std::move(all));
    return groups;
  }
  std::vector<bool> covered(numRanks, false);
  for (int64_t g = 0, e = attr.getNumGroups(); g < e; ++g) {
    ArrayRef<int64_t> group = attr.getGroup(g);
    for (int64_t rank : group) {
      if (rank >= numRanks)
        return op->emitError() << "replica groups name rank " << rank
                               << " but only " << numRanks << " ranks run";
      covered[rank] = true;
    }
    groups.push_back(llvm::to_vector(group));
  }
  for (int64_t rank = 0; rank < numRanks; ++rank)
    if (!covered[rank])
      outside.push_back(rank);
  return groups;
}

/// Checks that concatenating `parts` along `dim` gives a tensor the
/// reference semantics can hold.
static LogicalResult checkConcatSize(Operation *op, ArrayRef<HostTensor> parts,
                                     int64_t dim) {
  SmallVector<int64_t> shape = llvm::to_vector(parts.front().shape);
  shape[dim] = 0;
  for (const HostTensor &part : parts)
    shape[dim] += part.shape[dim];
  if (isAllocatable(shape))
    return success();
  (void)allocate(op, parts.front().kind, shape); // reports the error
  return failure();
}

/// Checks that the members of `group` send tensors of one shape.
static LogicalResult checkSameShapes(Operation *op, ArrayRef<int64_t> group,
                                     ArrayRef<HostTensor> inputs) {
  for (int64_t rank : group)
    if (inputs[rank].shape != inputs[group.front()].shape)
      return op->emitError()
             << "ranks " << group.front() << " and " << rank
             << " send different shapes: " << inputs[group.front()].describeType()
             << " and " << inputs[rank].describeType();
  return success();
}

/// Element-wise reduction of the group's inputs, in group order.
static HostTensor reduce(ReductionKind kind, ArrayRef<int64_t> group,
                         ArrayRef<HostTensor> inputs) {
  HostTensor result = inputs[group.front()];
  for (int64_t rank : ArrayRef<int64_t>(group).drop_front()) {
    const std::vector<double> &other = inputs[rank].data;
    for (size_t i = 0; i < result.data.size(); ++i) {
      double &acc = result.data[i];
      switch (kind) {
      case ReductionKind::sum:
      case ReductionKind::avg:
        acc += other[i];
        break;
      case ReductionKind::max:
        acc = maxPropagatingNaN(acc, other[i]);
        break;
      case ReductionKind::min:
        acc = minPropagatingNaN(acc, other[i]);
        break;
      }
    }
  }
  if (kind == ReductionKind::avg)
    for (double &value : result.data)
      value /= static_cast<double>(group.size());
  result.round();
  return result;
}

static LogicalResult checkDim(Operation *op, int64_t dim,
                              const HostTensor &tensor, int64_t parts,
                              StringRef what) {
  if (tensor.shape[dim] % parts != 0)
    return op->emitError() << what << ": size " << tensor.shape[dim]
                           << " along dim " << dim << " does not divide into "
                           << parts << " equal chunks";
  return success();
}

template <typename OpTy>
static LogicalResult runAllToAllGroup(OpTy op, ArrayRef<int64_t> group,
                                      ArrayRef<HostTensor> inputs,
                                      std::vector<HostTensor> &results) {
  int64_t g = group.size();
  int64_t splitDim = op.getSplitDim(), concatDim = op.getConcatDim();
  // chunks[i][j]: what group position i sends to position j.
  std::vector<std::vector<HostTensor>> chunks(g);
  std::optional<ArrayRef<int64_t>> sizes = op.getSplitSizes();
  for (int64_t i = 0; i < g; ++i) {
    const HostTensor &input = inputs[group[i]];
    int64_t offset = 0;
    if (!sizes && failed(checkDim(op, splitDim, input, g, "all_to_all")))
      return failure();
    int64_t rowSum = 0;
    for (int64_t j = 0; j < g; ++j)
      rowSum += sizes ? (*sizes)[i * g + j] : input.shape[splitDim] / g;
    if (rowSum != input.shape[splitDim])
      return op.emitError() << "rank " << group[i] << " sends " << rowSum
                            << " slices by split_sizes but its input has "
                            << input.shape[splitDim] << " along dim "
                            << splitDim;
    for (int64_t j = 0; j < g; ++j) {
      int64_t size = sizes ? (*sizes)[i * g + j] : input.shape[splitDim] / g;
      chunks[i].push_back(input.slice(splitDim, offset, size));
      offset += size;
    }
  }
  for (int64_t j = 0; j < g; ++j) {
    SmallVector<HostTensor> received;
    for (int64_t i = 0; i < g; ++i) {
      const HostTensor &chunk = chunks[i][j];
      for (int64_t d = 0; d < chunk.getRank(); ++d)
        if (d != concatDim && chunk.shape[d] != chunks[0][j].shape[d])
          return op.emitError()
                 << "rank " << group[j] << " receives chunks of different "
                 << "shapes outside concat_dim: " << chunk.describeType()
                 << " and " << chunks[0][j].describeType();
      received.push_back(chunk);
    }
    if (failed(checkConcatSize(op, received, concatDim)))
      return failure();
    results[group[j]] = HostTensor::concat(received, concatDim);
  }
  return success();
}

FailureOr<std::vector<HostTensor>>
mlir::braid::interp::runCollective(CollectiveOpInterface op,
                                   ArrayRef<HostTensor> inputs) {
  int64_t numRanks = inputs.size();
  SmallVector<int64_t> outside;
  FailureOr<Groups> groups =
      resolveGroups(op, op.getReplicaGroupsAttr(), numRanks, outside);
  if (failed(groups))
    return failure();
  std::vector<HostTensor> results(numRanks);
  // A rank in no group takes no part: its result is its input.
  for (int64_t rank : outside)
    results[rank] = inputs[rank];
  for (ArrayRef<int64_t> group : *groups) {
    bool needSameShapes = !isa<AllGatherOp, AllGatherStartOp, AllToAllOp,
                               AllToAllStartOp>(op.getOperation());
    if (needSameShapes && failed(checkSameShapes(op, group, inputs)))
      return failure();
    LogicalResult status =
        llvm::TypeSwitch<Operation *, LogicalResult>(op.getOperation())
            .Case<AllReduceOp, AllReduceStartOp>([&](auto allReduce) {
              HostTensor reduced =
                  reduce(allReduce.getReduction(), group, inputs);
              for (int64_t rank : group)
                results[rank] = reduced;
              return success();
            })
            .Case<AllGatherOp, AllGatherStartOp>([&](auto allGather) {
              SmallVector<HostTensor> parts;
              for (int64_t rank : group)
                parts.push_back(inputs[rank]);
              for (const HostTensor &part : parts)
                for (int64_t d = 0; d < part.getRank(); ++d)
                  if (d != int64_t(allGather.getDim()) &&
                      part.shape[d] != parts.front().shape[d])
                    return LogicalResult(allGather.emitError()
                           << "all_gather inputs differ outside dim "
                           << allGather.getDim() << ": "
                           << parts.front().describeType() << " and "
                           << part.describeType());
              if (failed(checkConcatSize(allGather, parts, allGather.getDim())))
                return failure();
              HostTensor gathered =
                  HostTensor::concat(parts, allGather.getDim());
              for (int64_t rank : group)
                results[rank] = gathered;
              return success();
            })
            .Case<ReduceScatterOp, ReduceScatterStartOp>([&](auto scatter) {
              HostTensor reduced =
                  reduce(scatter.getReduction(), group, inputs);
              int64_t dim = scatter.getDim(), g = group.size();
              if (failed(checkDim(scatter, dim, reduced, g, "reduce_scatter")))
                return failure();
              int64_t chunk = reduced.shape[dim] / g;
              for (auto [position, rank] : llvm::enumerate(group))
                results[rank] = reduced.slice(dim, position * chunk, chunk);
              return success();
            })
            .Case<AllToAllOp, AllToAllStartOp>([&](auto allToAll) {
              return runAllToAllGroup(allToAll, group, inputs, results);
            })
            .Case<BroadcastOp, BroadcastStartOp>([&](auto broadcast) {
              int64_t root = broadcast.getRoot();
              if (root >= static_cast<int64_t>(group.size()))
                return LogicalResult(broadcast.emitError()
                       << "root " << root << " is not a position in a group "
                       << "of " << group.size());
              for (int64_t rank : group)
                results[rank] = inputs[group[root]];
              return success();
            })
            .Default([&](Operation *other) {
              return other->emitError()
                     << "the reference semantics does not know this "
                        "collective";
            });
    if (failed(status))
      return failure();
  }
  return results;
}

FailureOr<std::vector<HostTensor>>
mlir::braid::interp::runPermute(PermuteOp op, ArrayRef<HostTensor> inputs) {
  int64_t numRanks = inputs.size();
  std::vector<HostTensor> results;
  for (const HostTensor &input : inputs)
    results.emplace_back(input.kind, input.shape); // zeros
  ReplicaGroupsAttr pairs = op.getSourceTargetPairs();
  for (int64_t p = 0, e = pairs.getNumGroups(); p < e; ++p) {
    int64_t source = pairs.getGroup(p)[0], target = pairs.getGroup(p)[1];
    if (source >= numRanks || target >= numRanks)
      return op.emitError() << "pair [" << source << ", " << target
                            << "] names a rank beyond the " << numRanks
                            << " ranks that run";
    if (inputs[source].shape != inputs[target].shape)
      return op.emitError() << "rank " << source << " sends "
                            << inputs[source].describeType() << " but rank "
                            << target << " expects "
                            << inputs[target].describeType();
    results[target] = inputs[source];
  }
  return results;
}
