//===- IndexExchangeBuckets.cpp - Fused exchanges of routed indices -------===//
//
// This file implements braid-bucket-collectives' fusion of the routed
// indices' exchanges: the braid.all_to_all_v (or started, with its waits in
// the same block) that sends each sharded lookup's routed indices to the
// shards' owners become, several lookups together, one
// braid.fused_all_to_all_v_start with a token per member.
//
//===----------------------------------------------------------------------===//

#include "CoOptSupport.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <tuple>

using namespace mlir;
using namespace mlir::braid;

namespace {
/// An exchange of routed indices that may join a fused one.
struct IndexMember {
  /// braid.all_to_all_v or braid.all_to_all_v_start.
  Operation *op = nullptr;
  Value input, counts;
  /// What the member receives (a start's token value type).
  RankedTensorType resultType;
  /// The bucketize that routes its values and counts, and the position
  /// after which that bucketize's own operands are all computed (-1: the
  /// block's start): the bucketize, pure, can move up to there...
  BucketizeOp routing;
  int64_t ready = -1;
  /// ...and the first position that reads what it receives: the first user
  /// of a synchronous exchange's result (the exchange can move down to it),
  /// the first wait of a started one.
  int64_t firstRead = 0;
  SmallVector<WaitOp> waits;
  /// A synchronous exchange's first user in the block (null when nothing
  /// reads it).
  Operation *firstUser = nullptr;
  /// Where the bucketize stands.
  int64_t routingPosition = 0;
};

/// The members of one fused exchange and where it goes.
struct IndexBucket {
  SmallVector<IndexMember> members;
  int64_t after = -1;
};

/// `op` as a member, when it exchanges a bucketize's values by its counts
/// (the simulator sizes an exchange from its routing) and, started, is only
/// waited for in its block.
std::optional<IndexMember>
memberOf(Operation &op, const llvm::DenseMap<Operation *, int64_t> &position) {
  IndexMember member;
  member.op = &op;
  if (auto exchange = dyn_cast<AllToAllVOp>(op)) {
    member.input = exchange.getInput();
    member.counts = exchange.getSendCounts();
    member.resultType = cast<RankedTensorType>(exchange.getResult().getType());
    member.firstRead = std::numeric_limits<int64_t>::max();
    for (Operation *user : exchange.getResult().getUsers()) {
      Operation *inBlock = op.getBlock()->findAncestorOpInBlock(*user);
      if (!inBlock)
        return std::nullopt;
      int64_t at = position.lookup(inBlock);
      if (at < member.firstRead) {
        member.firstRead = at;
        member.firstUser = inBlock;
      }
    }
  } else if (auto start = dyn_cast<AllToAllVStartOp>(op)) {
    member.input = start.getInput();
    member.counts = start.getSendCounts();
    member.resultType =
        cast<RankedTensorType>(start.getToken().getType().getValueType());
    member.firstRead = std::numeric_limits<int64_t>::max();
    for (Operation *user : start.getToken().getUsers()) {
      auto wait = dyn_cast<WaitOp>(user);
      if (!wait || wait->getBlock() != op.getBlock())
        return std::nullopt;
      member.waits.push_back(wait);
      member.firstRead =
          std::min(member.firstRead, position.lookup(wait.getOperation()));
    }
    if (member.waits.empty())
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  // The values and counts of one bucketize.
  auto inputType = cast<RankedTensorType>(member.input.getType());
  auto bucketize = member.input.getDefiningOp<BucketizeOp>();
  if (inputType.getRank() != 1 || !bucketize ||
      member.counts != bucketize.getSendCounts())
    return std::nullopt;
  if (bucketize->getBlock() != op.getBlock())
    return std::nullopt;
  member.routing = bucketize;
  member.routingPosition = position.lookup(bucketize);
  for (Value operand : bucketize->getOperands())
    if (Operation *def = operand.getDefiningOp()) {
      Operation *inBlock = op.getBlock()->findAncestorOpInBlock(*def);
      if (!inBlock)
        return std::nullopt;
      member.ready = std::max(member.ready, position.lookup(inBlock));
    }
  return member;
}

/// Replaces the members of `bucket` with one fused start after the op at
/// `bucket.after`, the members' bucketizes that stood later moved up before
/// it: a started member's waits take its token, and a synchronous member
/// becomes a wait just before its first user (just after the start when
/// nothing reads it), so that what runs between keeps running beside the
/// exchange.
void emitIndexBucket(Block &block, const IndexBucket &bucket,
                     Operation *anchor) {
  MLIRContext *context = block.getParentOp()->getContext();
  OpBuilder b(context);
  if (anchor)
    b.setInsertionPointAfter(anchor);
  else
    b.setInsertionPointToStart(&block);
  SmallVector<Value> inputs, counts;
  SmallVector<Type> tokens;
  for (const IndexMember &member : bucket.members) {
    inputs.push_back(member.input);
    counts.push_back(member.counts);
    tokens.push_back(TokenType::get(context, member.resultType));
  }
  Operation *first = bucket.members.front().op;
  auto fused = FusedAllToAllVStartOp::create(b, first->getLoc(), tokens,
                                             inputs, counts,
                                             /*wire_type=*/TypeAttr());
  if (Attribute chunk = first->getAttr(BraidDialect::kChunkAttrName))
    fused->setAttr(BraidDialect::kChunkAttrName, chunk);
  // The bucketizes that stood after the start move up before it (their
  // operands are computed by then), in the members' order.
  for (const IndexMember &member : bucket.members)
    if (member.routingPosition > bucket.after)
      member.routing->moveBefore(fused);
  for (auto [member, token] :
       llvm::zip_equal(bucket.members, fused.getTokens())) {
    if (member.waits.empty()) {
      Operation *where =
          member.firstUser ? member.firstUser : fused->getNextNode();
      OpBuilder at(where);
      auto wait =
          WaitOp::create(at, member.op->getLoc(), member.resultType, token);
      member.op->getResult(0).replaceAllUsesWith(wait.getResult());
    } else {
      for (WaitOp wait : member.waits)
        wait.getTokenMutable().assign(token);
    }
    member.op->erase();
  }
}
} // namespace

int64_t mlir::braid::fuseIndexExchanges(func::FuncOp func,
                                        int64_t &combined) {
  combined = 0;
  if (func.isExternal() || !llvm::hasSingleElement(func.getBody()))
    return 0;
  Block &block = func.getBody().front();
  llvm::DenseMap<Operation *, int64_t> position;
  SmallVector<Operation *> ops;
  for (Operation &op : block) {
    position[&op] = ops.size();
    ops.push_back(&op);
  }
  SmallVector<IndexMember> candidates;
  for (Operation &op : block)
    if (std::optional<IndexMember> member = memberOf(op, position))
      candidates.push_back(std::move(*member));
  // A member routed from what another exchange receives stays as it is:
  // its bucketize would move above that exchange's result, and its bucket
  // would go after an op that fusing erases.
  llvm::SmallPtrSet<Operation *, 16> received;
  for (const IndexMember &member : candidates) {
    received.insert(member.op);
    for (WaitOp wait : member.waits)
      received.insert(wait);
  }
  llvm::erase_if(candidates, [&](const IndexMember &member) {
    return llvm::any_of(member.routing->getOperands(), [&](Value operand) {
      Operation *def = operand.getDefiningOp();
      return def && received.contains(block.findAncestorOpInBlock(*def));
    });
  });
  // In the order their inputs are routed, program order among equals.
  llvm::stable_sort(candidates, [](const IndexMember &x, const IndexMember &y) {
    return x.ready < y.ready;
  });
  // One open bucket per element type, number of ranks and chunk.
  using Key = std::tuple<Type, int64_t, Attribute>;
  llvm::MapVector<Key, IndexBucket> open;
  SmallVector<IndexBucket> closed;
  for (IndexMember &member : candidates) {
    Key key{member.resultType.getElementType(),
            cast<RankedTensorType>(member.counts.getType()).getDimSize(0),
            member.op->getAttr(BraidDialect::kChunkAttrName)};
    IndexBucket &bucket = open[key];
    // Joining moves the start after this member's operands: what every
    // member receives must still be read only after that. A bucket holds
    // at most kMaxChunks chunks (ranks x members).
    int64_t after = std::max(bucket.after, member.ready);
    int64_t ranks = std::get<1>(key);
    bool fits = ranks <= FusedAllToAllVStartOp::kMaxChunks /
                             int64_t(bucket.members.size() + 1);
    bool joins =
        fits && member.firstRead > after &&
        llvm::all_of(bucket.members, [&](const IndexMember &other) {
          return other.firstRead > after;
        });
    if (!joins) {
      closed.push_back(std::move(bucket));
      bucket = IndexBucket();
      after = member.ready;
    }
    bucket.members.push_back(member);
    bucket.after = after;
  }
  for (auto &entry : open)
    closed.push_back(std::move(entry.second));
  int64_t buckets = 0;
  for (const IndexBucket &bucket : closed) {
    if (bucket.members.size() < 2)
      continue;
    emitIndexBucket(block, bucket, bucket.after < 0 ? nullptr : ops[bucket.after]);
    ++buckets;
    combined += bucket.members.size();
  }
  return buckets;
}
