//===- BucketCollectives.cpp - The braid-bucket-collectives pass ----------===//
//
// This file implements braid-bucket-collectives: the synchronous
// all_reduces of a per-rank function that share a reduction, replica
// groups and element type are combined, in the order their inputs become
// ready, into flat buckets of at most a given size, each placed just after
// its last member's input is computed. The simulator decides whether a
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
/// The all_reduces of one bucket and where it goes.
struct Bucket {
  SmallVector<AllReduceOp> members;
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

/// Replaces the members of `bucket` with one all_reduce of their
/// concatenation.
void emitBucket(Block &block, const Bucket &bucket) {
  AllReduceOp first = bucket.members.front();
  Location loc = first.getLoc();
  OpBuilder b(first->getContext());
  if (!bucket.anchor)
    b.setInsertionPointToStart(&block);
  else
    b.setInsertionPointAfter(bucket.anchor);
  SmallVector<Value> flats;
  for (AllReduceOp member : bucket.members)
    flats.push_back(flatten(b, member.getLoc(), member.getInput()));
  Value packed = tensor::ConcatOp::create(b, loc, /*dim=*/0, flats);
  auto reduced = AllReduceOp::create(b, loc, first.getReductionAttr(), packed,
                                     first.getReplicaGroupsAttr());
  int64_t offset = 0;
  for (AllReduceOp member : bucket.members) {
    auto type = cast<RankedTensorType>(member.getResult().getType());
    int64_t size = type.getNumElements();
    Value slice = tensor::ExtractSliceOp::create(
        b, member.getLoc(), reduced.getResult(),
        ArrayRef<OpFoldResult>{b.getIndexAttr(offset)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(size)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    member.getResult().replaceAllUsesWith(
        unflatten(b, member.getLoc(), slice, type));
    offset += size;
  }
  for (AllReduceOp member : bucket.members)
    member->erase();
}

/// Buckets the all_reduces of `func`; false when there is nothing to
/// combine.
bool bucketAllReduces(func::FuncOp func, int64_t capBytes,
                      BucketCounts &counts) {
  if (func.isExternal() || !llvm::hasSingleElement(func.getBody()))
    return false;
  Block &block = func.getBody().front();
  BlockOrder order(block);
  SmallVector<AllReduceOp> candidates;
  // An all_reduce of another's result stays as it is: its bucket would go
  // after an op that bucketing erases.
  for (AllReduceOp op : block.getOps<AllReduceOp>())
    if (op.getInput().getType().hasStaticShape() &&
        !op.getInput().getDefiningOp<AllReduceOp>())
      candidates.push_back(op);
  // In the order their inputs become ready, program order among equals.
  llvm::stable_sort(candidates, [&](AllReduceOp a, AllReduceOp b) {
    return order.readyAt(a.getInput()) < order.readyAt(b.getInput());
  });
  // One open bucket per reduction, groups and element type.
  using Key = std::tuple<int64_t, Attribute, Type>;
  llvm::MapVector<Key, Bucket> open;
  SmallVector<Bucket> closed;
  for (AllReduceOp op : candidates) {
    Key key{static_cast<int64_t>(op.getReduction()), op.getReplicaGroupsAttr(),
            op.getInput().getType().getElementType()};
    int64_t bytes = bytesOf(op.getInput().getType());
    int64_t ready = order.readyAt(op.getInput());
    Bucket &bucket = open[key];
    // Joining moves the bucket after this input: every member's result
    // must still be used only after that.
    int64_t after = std::max(bucket.after, ready);
    bool fits = bucket.members.empty() || bucket.bytes + bytes <= capBytes;
    bool usesFollow =
        llvm::all_of(bucket.members,
                     [&](AllReduceOp member) {
                       return order.firstUse(member.getResult(), block) > after;
                     }) &&
        order.firstUse(op.getResult(), block) > after;
    if (!fits || !usesFollow) {
      closed.push_back(std::move(bucket));
      bucket = Bucket();
      after = ready;
    }
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
    SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      BucketCounts counts;
      FailureOr<RewriteOutcome> outcome = applyIfFaster(
          func, *predictor, force, [&](func::FuncOp copy) -> FailureOr<bool> {
            counts = BucketCounts();
            return bucketAllReduces(copy, capBytes, counts);
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
