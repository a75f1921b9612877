//===- BucketCollectives.cpp - The braid-bucket-collectives pass ----------===//
//
// This file implements braid-bucket-collectives: the synchronous
// all_reduces of a per-rank function that share a reduction, replica
// groups and element type are combined, in the order their inputs become
// ready, into flat buckets of at most a given size, each placed just after
// its last member's input is computed; reduce_scatters and all_gathers
// along dimension 0 likewise, packed so that each rank's chunk of the
// bucket is its chunks of the members. The simulator decides whether a
// function keeps its buckets.
//
//===----------------------------------------------------------------------===//

#include "braid/CoOpt/Passes.h"

#include "CoOptSupport.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

#include <tuple>

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDBUCKETCOLLECTIVESPASS
#include "braid/CoOpt/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

namespace {
/// The collectives a bucket combines: all_reduce, and reduce_scatter and
/// all_gather along dimension 0.
enum class BucketKind { allReduce, reduceScatter, allGather };

/// The collectives of one bucket, all of one kind, and where it goes.
struct Bucket {
  BucketKind kind = BucketKind::allReduce;
  /// The group size (reduce_scatter and all_gather).
  int64_t groupSize = 1;
  SmallVector<Operation *> members;
  int64_t bytes = 0;
  /// The bucket goes after the op at this position (-1: the block's start)
  /// of the block as planned...
  int64_t after = -1;
  /// ...which is this op (null: the block's start).
  Operation *anchor = nullptr;
};

/// What the rewrite of one function did.
struct BucketCounts {
  int64_t buckets = 0, combined = 0;
};

/// The positions of a block's ops, and of the first use of each value.
class BlockOrder {
public:
  explicit BlockOrder(Block &block) {
    for (auto [index, op] : llvm::enumerate(block))
      position[&op] = index;
  }
  /// Where `value` is computed (-1 for a block argument).
  int64_t readyAt(Value value) const {
    Operation *def = value.getDefiningOp();
    return def ? position.lookup(def) : -1;
  }
  /// The position of the first op of the block that uses `value`, itself or
  /// in a region (the block's size when none does).
  int64_t firstUse(Value value, Block &block) const {
    int64_t first = block.getOperations().size();
    for (Operation *user : value.getUsers())
      if (Operation *inBlock = block.findAncestorOpInBlock(*user))
        first = std::min<int64_t>(first, position.lookup(inBlock));
    return first;
  }
  static Operation *opAt(Block &block, int64_t index) {
    return &*std::next(block.begin(), index);
  }

private:
  llvm::DenseMap<Operation *, int64_t> position;
};

int64_t bytesOf(RankedTensorType type) {
  return type.getNumElements() *
         std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
}

/// `value` as a flat 1-D tensor.
Value flatten(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() == 1)
    return value;
  auto flat =
      RankedTensorType::get({type.getNumElements()}, type.getElementType());
  if (type.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, flat, value,
                                         ArrayRef<ReassociationIndices>{});
  auto all = llvm::to_vector<2>(llvm::seq<int64_t>(0, type.getRank()));
  return tensor::CollapseShapeOp::create(b, loc, flat, value,
                                         ArrayRef<ReassociationIndices>{all});
}

/// The flat slice `flat` in the shape of `type`.
Value unflatten(OpBuilder &b, Location loc, Value flat, RankedTensorType type) {
  if (type.getRank() == 1)
    return flat;
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, flat,
                                           ArrayRef<ReassociationIndices>{});
  auto all = llvm::to_vector<2>(llvm::seq<int64_t>(0, type.getRank()));
  return tensor::ExpandShapeOp::create(b, loc, type, flat,
                                       ArrayRef<ReassociationIndices>{all});
}

/// `value` reshaped to `type` (same number of elements; both static).
Value reshape(OpBuilder &b, Location loc, Value value, RankedTensorType type) {
  return unflatten(b, loc, flatten(b, loc, value), type);
}

/// The kind of bucket `op` can join, if any.
std::optional<BucketKind> bucketKindOf(Operation *op) {
  if (isa<AllReduceOp>(op))
    return BucketKind::allReduce;
  if (auto scatter = dyn_cast<ReduceScatterOp>(op))
    return scatter.getDim() == 0 ? std::optional(BucketKind::reduceScatter)
                                 : std::nullopt;
  if (auto gather = dyn_cast<AllGatherOp>(op))
    return gather.getDim() == 0 ? std::optional(BucketKind::allGather)
                                : std::nullopt;
  return std::nullopt;
}

/// The reduction of a member (-1 for an all_gather).
int64_t reductionOf(Operation *op) {
  if (auto allReduce = dyn_cast<AllReduceOp>(op))
    return static_cast<int64_t>(allReduce.getReduction());
  if (auto scatter = dyn_cast<ReduceScatterOp>(op))
    return static_cast<int64_t>(scatter.getReduction());
  return -1;
}

/// Replaces the members of `bucket` with one collective of their packed
/// inputs. An all_reduce's bucket is the members flattened and
/// concatenated. A reduce_scatter's (or all_gather's) is a G x K matrix
/// for a group of G whose row p holds every member's chunk p, flattened,
/// side by side: reduce-scattering its rows gives each rank its chunk of
/// every member, and gathering the rank's chunks gives back every member's
/// whole.
void emitBucket(Block &block, const Bucket &bucket) {
  Operation *first = bucket.members.front();
  Location loc = first->getLoc();
  OpBuilder b(first->getContext());
  if (!bucket.anchor)
    b.setInsertionPointToStart(&block);
  else
    b.setInsertionPointAfter(bucket.anchor);
  int64_t rows = bucket.groupSize;
  bool scatters = bucket.kind == BucketKind::reduceScatter;
  SmallVector<Value> packed;
  for (Operation *member : bucket.members) {
    Value input = member->getOperand(0);
    auto type = cast<RankedTensorType>(input.getType());
    Value flat = flatten(b, member->getLoc(), input);
    if (scatters)
      flat = reshape(b, member->getLoc(), flat,
                     RankedTensorType::get({rows, type.getNumElements() / rows},
                                           type.getElementType()));
    packed.push_back(flat);
  }
  Value input = tensor::ConcatOp::create(b, loc, /*dim=*/scatters ? 1 : 0,
                                         packed);
  auto inputType = cast<RankedTensorType>(input.getType());
  ReplicaGroupsAttr groups =
      first->getAttrOfType<ReplicaGroupsAttr>("replica_groups");
  Value result;
  switch (bucket.kind) {
  case BucketKind::allReduce:
    result = AllReduceOp::create(b, loc,
                                 cast<AllReduceOp>(first).getReductionAttr(),
                                 input, groups);
    break;
  case BucketKind::reduceScatter: {
    auto chunk = RankedTensorType::get({1, inputType.getDimSize(1)},
                                       inputType.getElementType());
    result = ReduceScatterOp::create(
        b, loc, chunk, cast<ReduceScatterOp>(first).getReductionAttr(), input,
        b.getI64IntegerAttr(0), groups);
    result = flatten(b, loc, result);
    break;
  }
  case BucketKind::allGather: {
    auto mine = RankedTensorType::get({1, inputType.getDimSize(0)},
                                      inputType.getElementType());
    auto all = RankedTensorType::get({rows, inputType.getDimSize(0)},
                                     inputType.getElementType());
    result = AllGatherOp::create(b, loc, all, reshape(b, loc, input, mine),
                                 b.getI64IntegerAttr(0), groups);
    break;
  }
  }
  // Each member's part: a run of the flat result, or, for an all_gather,
  // a band of columns of every row.
  int64_t offset = 0;
  for (Operation *member : bucket.members) {
    auto type = cast<RankedTensorType>(member->getResult(0).getType());
    Location at = member->getLoc();
    Value part;
    if (bucket.kind == BucketKind::allGather) {
      int64_t width = type.getNumElements() / rows;
      part = tensor::ExtractSliceOp::create(
          b, at, result,
          ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(rows), b.getIndexAttr(width)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
      offset += width;
    } else {
      int64_t size = type.getNumElements();
      part = tensor::ExtractSliceOp::create(
          b, at, result, ArrayRef<OpFoldResult>{b.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(size)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
      offset += size;
    }
    member->getResult(0).replaceAllUsesWith(reshape(b, at, part, type));
  }
  for (Operation *member : bucket.members)
    member->erase();
}

/// Buckets the all_reduces, reduce_scatters and all_gathers of `func`;
/// false when there is nothing to combine. `worldSize` is the group of a
/// collective without groups (0: unknown).
bool bucketCollectives(func::FuncOp func, int64_t capBytes, int64_t worldSize,
                       BucketCounts &counts) {
  if (func.isExternal() || !llvm::hasSingleElement(func.getBody()))
    return false;
  Block &block = func.getBody().front();
  BlockOrder order(block);
  SmallVector<Operation *> candidates;
  // A collective of another's result stays as it is: its bucket would go
  // after an op that bucketing erases.
  for (Operation &op : block) {
    if (!bucketKindOf(&op))
      continue;
    auto type = cast<RankedTensorType>(op.getOperand(0).getType());
    Operation *producer = op.getOperand(0).getDefiningOp();
    if (type.hasStaticShape() && !(producer && bucketKindOf(producer)))
      candidates.push_back(&op);
  }
  // In the order their inputs become ready, program order among equals.
  llvm::stable_sort(candidates, [&](Operation *a, Operation *b) {
    return order.readyAt(a->getOperand(0)) < order.readyAt(b->getOperand(0));
  });
  // One open bucket per kind, reduction, groups and element type.
  using Key = std::tuple<int64_t, int64_t, Attribute, Type>;
  llvm::MapVector<Key, Bucket> open;
  SmallVector<Bucket> closed;
  for (Operation *op : candidates) {
    BucketKind kind = *bucketKindOf(op);
    Value input = op->getOperand(0);
    auto groups = op->getAttrOfType<ReplicaGroupsAttr>("replica_groups");
    int64_t groupSize = groups ? groups.getGroupSize() : worldSize;
    // A scattered or gathered member splits into whole chunks per rank.
    if (kind != BucketKind::allReduce &&
        (groupSize < 1 ||
         cast<RankedTensorType>(kind == BucketKind::allGather
                                    ? op->getResult(0).getType()
                                    : input.getType())
                     .getNumElements() %
                 groupSize !=
             0))
      continue;
    Key key{static_cast<int64_t>(kind), reductionOf(op), groups,
            cast<RankedTensorType>(input.getType()).getElementType()};
    int64_t bytes = bytesOf(cast<RankedTensorType>(input.getType()));
    int64_t ready = order.readyAt(input);
    Bucket &bucket = open[key];
    // Joining moves the bucket after this input: every member's result
    // must still be used only after that.
    int64_t after = std::max(bucket.after, ready);
    bool fits = bucket.members.empty() || bucket.bytes + bytes <= capBytes;
    bool usesFollow =
        llvm::all_of(bucket.members,
                     [&](Operation *member) {
                       return order.firstUse(member->getResult(0), block) >
                              after;
                     }) &&
        order.firstUse(op->getResult(0), block) > after;
    if (!fits || !usesFollow) {
      closed.push_back(std::move(bucket));
      bucket = Bucket();
      after = ready;
    }
    bucket.kind = kind;
    bucket.groupSize = groupSize;
    bucket.members.push_back(op);
    bucket.bytes += bytes;
    bucket.after = after;
    bucket.anchor = after < 0 ? nullptr : order.opAt(block, after);
  }
  for (auto &entry : open)
    closed.push_back(std::move(entry.second));
  // In the order they are placed, so that the printed program reads in
  // the order the gradients become ready.
  llvm::stable_sort(closed, [](const Bucket &a, const Bucket &b) {
    return a.after < b.after;
  });
  bool changed = false;
  for (const Bucket &bucket : closed) {
    if (bucket.members.size() < 2)
      continue;
    emitBucket(block, bucket);
    ++counts.buckets;
    counts.combined += bucket.members.size();
    changed = true;
  }
  return changed;
}

struct BraidBucketCollectivesPass
    : braid::impl::BraidBucketCollectivesPassBase<BraidBucketCollectivesPass> {
  using Base::Base;
  void runOnOperation() override {
    if (!(bucketMiB > 0)) {
      getOperation().emitError()
          << "bucket-mib must be positive, not " << bucketMiB;
      return signalPassFailure();
    }
    FailureOr<ProgramPredictor> predictor =
        ProgramPredictor::forModule(getOperation());
    if (failed(predictor))
      return signalPassFailure();
    // Beyond 2^40 MiB every bucket is one: keep the conversion defined.
    auto capBytes = static_cast<int64_t>(
        std::min(double(bucketMiB), double(int64_t(1) << 40)) * 1024 * 1024);
    int64_t worldSize = 0;
    if (auto cluster = getOperation()->getAttrOfType<ClusterAttr>(
            BraidDialect::kClusterAttrName))
      worldSize = cluster.getWorldSize();
    SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      BucketCounts counts;
      FailureOr<RewriteOutcome> outcome = applyIfFaster(
          func, *predictor, force, [&](func::FuncOp copy) -> FailureOr<bool> {
            counts = BucketCounts();
            return bucketCollectives(copy, capBytes, worldSize, counts);
          });
      if (failed(outcome))
        return signalPassFailure();
      if (*outcome == RewriteOutcome::rejected)
        ++numRejected;
      if (*outcome != RewriteOutcome::applied)
        continue;
      numBuckets += counts.buckets;
      numCombined += counts.combined;
    }
  }
};
} // namespace
