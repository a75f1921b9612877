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
// The uneven all_to_alls in which each rank sends every destination the
// same number of rows (the pooled rows of sharded lookups, which each owner
// sends to every rank's bags), or every rank sends each destination the
// same number (the routed lengths and the pooled rows' gradients, sent to
// the owners), are fused the same way into one exchange of a flat buffer,
// started where the last member's input is ready and, synchronous or
// started, compared by the simulator with the members started one by one.
//
//===----------------------------------------------------------------------===//

#include "braid/CoOpt/Passes.h"

#include "CoOptSupport.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <tuple>

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDBUCKETCOLLECTIVESPASS
#include "braid/CoOpt/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

namespace {
/// The collectives a bucket combines: all_reduce, reduce_scatter and
/// all_gather along dimension 0, and uniform exchanges (exchangeLayout).
enum class BucketKind { allReduce, reduceScatter, allGather, exchange };

/// The collectives of one bucket, all of one kind, and where it goes.
struct Bucket {
  BucketKind kind = BucketKind::allReduce;
  /// The group size (reduce_scatter and all_gather).
  int64_t groupSize = 1;
  SmallVector<Operation *> members;
  /// Its bytes (not an exchange's).
  int64_t bytes = 0;
  /// An exchange's bytes received by each rank of its group, its size the
  /// most of them: members that send to different owners add up per owner,
  /// not in the most loaded.
  SmallVector<int64_t> received;
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

/// What an all_to_all gives: its result, or, started, that of its only
/// user, a braid.wait in its block (null for anything else).
Value exchangeResult(Operation *op) {
  if (auto exchange = dyn_cast<AllToAllOp>(op))
    return exchange.getResult();
  if (!isa<AllToAllStartOp>(op) || !op->hasOneUse())
    return nullptr;
  auto wait = dyn_cast<WaitOp>(*op->getUsers().begin());
  if (!wait || wait->getBlock() != op->getBlock())
    return nullptr;
  return wait.getResult();
}

/// How a uniform exchange's rows go: either every sender sends each
/// destination the same rows as it sends the others (`bySender`: sender
/// `i` sends `counts[i]` rows to each; the pooled rows that a lookup's
/// owners send to every rank's bags), or every sender sends destination
/// `j` the same rows as the other senders do (`counts[j]` rows from each;
/// the routed indices' lengths and the pooled rows' gradients, which every
/// rank sends to the owners only).
struct ExchangeLayout {
  bool bySender = true;
  SmallVector<int64_t> counts;
};

/// The layout of an all_to_all (or a started one) along dimension 0 with
/// static sizes past it, whose split_sizes rows (or, failing that, columns)
/// are each constant and not all zero. Only such an exchange can be packed
/// and unpacked at offsets that need the rank at most once per member. A
/// layout by destination needs the rank's position in its group, so its
/// groups must tile the world in consecutive blocks.
std::optional<ExchangeLayout> exchangeLayout(Operation *op, int64_t worldSize) {
  Value result = exchangeResult(op);
  auto split = op->getAttrOfType<IntegerAttr>("split_dim");
  auto concat = op->getAttrOfType<IntegerAttr>("concat_dim");
  auto splitSizes = op->getAttrOfType<DenseI64ArrayAttr>("split_sizes");
  if (!result || !split || !concat || !splitSizes || split.getInt() != 0 ||
      concat.getInt() != 0)
    return std::nullopt;
  auto in = cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = cast<RankedTensorType>(result.getType());
  if (in.getRank() < 1 || out.getRank() != in.getRank())
    return std::nullopt;
  for (int64_t d = 1; d < in.getRank(); ++d)
    if (in.isDynamicDim(d) || out.getDimSize(d) != in.getDimSize(d))
      return std::nullopt;
  int64_t size =
      cast<CollectiveOpInterface>(op).getStaticGroupSize().value_or(worldSize);
  ArrayRef<int64_t> sizes = splitSizes.asArrayRef();
  if (size < 1 || int64_t(sizes.size()) != size * size ||
      llvm::all_of(sizes, [](int64_t n) { return n == 0; }))
    return std::nullopt;
  auto at = [&](int64_t i, int64_t j) { return sizes[i * size + j]; };
  ExchangeLayout layout;
  for (int64_t i = 0; i < size; ++i) {
    if (!llvm::all_of(llvm::seq<int64_t>(0, size),
                      [&](int64_t j) { return at(i, j) == at(i, 0); }))
      break;
    layout.counts.push_back(at(i, 0));
  }
  if (int64_t(layout.counts.size()) == size)
    return layout;
  layout.bySender = false;
  layout.counts.clear();
  for (int64_t j = 0; j < size; ++j) {
    if (!llvm::all_of(llvm::seq<int64_t>(0, size),
                      [&](int64_t i) { return at(i, j) == at(0, j); }))
      return std::nullopt;
    layout.counts.push_back(at(0, j));
  }
  if (!areConsecutiveBlocks(
          op->getAttrOfType<ReplicaGroupsAttr>("replica_groups"), size,
          worldSize))
    return std::nullopt;
  return layout;
}

/// The elements of one slice along dimension 0 of `type` (static past it).
int64_t elementsPerRow(RankedTensorType type) {
  int64_t elements = 1;
  for (int64_t d = 1; d < type.getRank(); ++d)
    elements *= type.getDimSize(d);
  return elements;
}

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

/// `value` as a flat 1-D tensor (of dynamic size when its first size is;
/// the others are static).
Value flatten(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() == 1)
    return value;
  int64_t size = type.getRank() && type.isDynamicDim(0) ? ShapedType::kDynamic
                                                        : type.getNumElements();
  auto flat = RankedTensorType::get({size}, type.getElementType());
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

/// A builder at `bucket`'s place in `block`: after its anchor, or at the
/// block's start.
OpBuilder builderAt(Block &block, const Bucket &bucket) {
  OpBuilder b(block.getParentOp()->getContext());
  if (!bucket.anchor)
    b.setInsertionPointToStart(&block);
  else
    b.setInsertionPointAfter(bucket.anchor);
  return b;
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
  OpBuilder b = builderAt(block, bucket);
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
  case BucketKind::exchange:
    llvm_unreachable("exchanges are fused by emitExchangeBucket");
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

/// Replaces the uniform exchanges of `bucket` (of one layout) with one
/// all_to_all of a flat buffer, started at the bucket's place and waited
/// for just before the first use of any member's result. A sender's buffer
/// holds, for each destination in group order, each member's rows for it,
/// flattened; so a receiver's holds, for each sender in group order, each
/// member's rows from it: a member's result is its runs, reshaped and
/// concatenated. By sender, a member's run for destination `j` is the
/// `j`-th G-th of its input, and what a receiver gets is static; by
/// destination, the sender's runs are static, and a receiver's runs are
/// as long as its own column of the member's split_sizes says, which it
/// selects by its position in the group.
void emitExchangeBucket(Block &block, const Bucket &bucket, int64_t worldSize) {
  Operation *first = bucket.members.front();
  Location loc = first->getLoc();
  OpBuilder b = builderAt(block, bucket);
  int64_t size = bucket.groupSize;
  struct Member {
    Operation *op;
    Value input, result;
    ExchangeLayout layout;
    int64_t rowElements;
  };
  SmallVector<Member> members;
  for (Operation *op : bucket.members) {
    Value input = op->getOperand(0);
    members.push_back(
        {op, input, exchangeResult(op), *exchangeLayout(op, worldSize),
         elementsPerRow(cast<RankedTensorType>(input.getType()))});
  }
  bool bySender = members.front().layout.bySender;
  // Index constants, each made once where it is first needed (before the
  // exchange, so it dominates the unpacking too), and arithmetic that
  // folds the trivial.
  llvm::SmallDenseMap<int64_t, Value> constants;
  auto index = [&](int64_t value) -> Value {
    Value &constant = constants[value];
    if (!constant)
      constant = arith::ConstantIndexOp::create(b, loc, value);
    return constant;
  };
  auto times = [&](Value value, int64_t factor) -> Value {
    if (factor == 1)
      return value;
    return arith::MulIOp::create(b, loc, value, index(factor));
  };
  auto plus = [&](Value lhs, Value rhs) -> Value {
    if (lhs == index(0))
      return rhs;
    if (rhs == index(0))
      return lhs;
    return arith::AddIOp::create(b, loc, lhs, rhs);
  };
  // The rows `member` sends to destination `j`, from offset `offset`.
  auto run = [&](const Member &member, OpFoldResult offset, OpFoldResult rows) {
    auto type = cast<RankedTensorType>(member.input.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = {rows};
    SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
    offsets[0] = offset;
    for (int64_t d = 1; d < type.getRank(); ++d)
      sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
    return flatten(b, loc,
                   tensor::ExtractSliceOp::create(b, loc, member.input, offsets,
                                                  sizes, strides));
  };
  SmallVector<Value> pieces;
  if (bySender) {
    // Each member's rows per destination: its input's rows over G.
    Value zero = index(0), groupSize = index(size);
    SmallVector<Value> perDestination;
    for (Member &member : members)
      perDestination.push_back(arith::DivUIOp::create(
          b, loc, tensor::DimOp::create(b, loc, member.input, zero),
          groupSize));
    for (int64_t j = 0; j < size; ++j)
      for (auto [member, count] : llvm::zip(members, perDestination)) {
        OpFoldResult offset = b.getIndexAttr(0);
        if (j > 0)
          offset = times(count, j);
        pieces.push_back(run(member, offset, count));
      }
  } else {
    SmallVector<int64_t> offsets(members.size(), 0);
    for (int64_t j = 0; j < size; ++j)
      for (auto [member, offset] : llvm::zip(members, offsets)) {
        int64_t rows = member.layout.counts[j];
        if (rows == 0)
          continue;
        pieces.push_back(
            run(member, b.getIndexAttr(offset), b.getIndexAttr(rows)));
        offset += rows;
      }
  }
  Value packed = tensor::ConcatOp::create(b, loc, /*dim=*/0, pieces);
  // The fused matrix counts elements.
  SmallVector<int64_t> matrix(size * size, 0);
  for (int64_t i = 0; i < size; ++i)
    for (int64_t j = 0; j < size; ++j)
      for (Member &member : members)
        matrix[i * size + j] +=
            member.layout.counts[bySender ? i : j] * member.rowElements;
  // What each position receives: the same everywhere by sender.
  SmallVector<int64_t> receivedBy(size, 0);
  for (int64_t j = 0; j < size; ++j)
    for (int64_t i = 0; i < size; ++i)
      receivedBy[j] += matrix[i * size + j];
  int64_t received =
      llvm::all_equal(receivedBy) ? receivedBy.front() : ShapedType::kDynamic;
  Type element = cast<RankedTensorType>(packed.getType()).getElementType();
  auto exchange = AllToAllOp::create(
      b, loc, RankedTensorType::get({received}, element), packed,
      /*split_dim=*/0, /*concat_dim=*/0, b.getDenseI64ArrayAttr(matrix),
      first->getAttrOfType<ReplicaGroupsAttr>("replica_groups"));
  // A chunk's exchanges fused stay that chunk's.
  if (Attribute chunk = first->getAttr(BraidDialect::kChunkAttrName))
    exchange->setAttr(BraidDialect::kChunkAttrName, chunk);
  // Unpacked where the first member's result is first read.
  SmallVector<Operation *> results;
  for (Member &member : members)
    results.push_back(member.result.getDefiningOp());
  Operation *firstUse = firstUserInBlock(results, block);
  WaitOp wait = startCollective(exchange, *getStartFormName(exchange));
  if (firstUse)
    wait->moveBefore(firstUse);
  b.setInsertionPointAfter(wait);
  // A member's run of `rows` (static or not) at `offset` of the receive
  // buffer, in the member's row shape.
  auto unpack = [&](const Member &member, OpFoldResult offset,
                    OpFoldResult rows) -> Value {
    auto resultType = cast<RankedTensorType>(member.result.getType());
    std::optional<int64_t> staticRows = getConstantIntValue(rows);
    OpFoldResult length =
        staticRows
            ? OpFoldResult(b.getIndexAttr(*staticRows * member.rowElements))
            : OpFoldResult(times(cast<Value>(rows), member.rowElements));
    Value flat = tensor::ExtractSliceOp::create(
        b, loc, wait.getResult(), ArrayRef<OpFoldResult>{offset},
        ArrayRef<OpFoldResult>{length},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    if (resultType.getRank() == 1)
      return flat;
    SmallVector<int64_t> shape(resultType.getShape());
    shape[0] = staticRows ? *staticRows : ShapedType::kDynamic;
    SmallVector<OpFoldResult> outputShape = {rows};
    for (int64_t d = 1; d < resultType.getRank(); ++d)
      outputShape.push_back(b.getIndexAttr(shape[d]));
    auto all = llvm::to_vector<2>(llvm::seq<int64_t>(0, shape.size()));
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, element), flat,
        ArrayRef<ReassociationIndices>{all}, outputShape);
  };
  SmallVector<SmallVector<Value>> runs(members.size());
  if (bySender) {
    int64_t offset = 0;
    for (int64_t i = 0; i < size; ++i)
      for (auto [member, parts] : llvm::zip(members, runs)) {
        int64_t rows = member.layout.counts[i];
        if (rows == 0)
          continue;
        parts.push_back(
            unpack(member, b.getIndexAttr(offset), b.getIndexAttr(rows)));
        offset += rows * member.rowElements;
      }
  } else {
    // This rank's column: its rows from each sender, per member.
    Value position = RankOp::create(b, loc);
    if (size != worldSize)
      position = arith::RemUIOp::create(b, loc, position, index(size));
    SmallVector<Value> mine;
    Value zero = index(0), width = zero;
    SmallVector<Value> before;
    for (Member &member : members) {
      Value rows = zero;
      for (auto [j, count] : llvm::enumerate(member.layout.counts))
        if (count != 0)
          rows = arith::SelectOp::create(
              b, loc,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, position,
                                    index(j)),
              index(count), rows);
      mine.push_back(rows);
      before.push_back(width);
      width = plus(width, times(rows, member.rowElements));
    }
    for (int64_t i = 0; i < size; ++i) {
      Value start = i == 0 ? zero : times(width, i);
      for (auto [member, parts, rows, at] :
           llvm::zip(members, runs, mine, before))
        parts.push_back(unpack(member, plus(start, at), rows));
    }
  }
  for (auto [member, parts] : llvm::zip(members, runs)) {
    Value result = parts.size() == 1
                       ? parts.front()
                       : tensor::ConcatOp::create(b, loc, /*dim=*/0, parts);
    if (result.getType() != member.result.getType())
      result = tensor::CastOp::create(b, loc, member.result.getType(), result);
    member.result.replaceAllUsesWith(result);
    // A started member: its wait, then its start.
    if (Operation *wait = member.result.getDefiningOp(); wait != member.op)
      wait->erase();
    member.op->erase();
  }
}

/// Moves the ops that only unpack `op`'s result (braid.combine_shards,
/// casts, reshapes, slices, arith conversions), and theirs, down to just
/// before their own first use, so that the result is read as late as the
/// computation allows (what braid-async-exchanges does for its combine).
void sinkUnpacking(Operation *op) {
  Block *block = op->getBlock();
  SmallVector<Operation *> users;
  for (Operation *user : op->getResult(0).getUsers())
    if (user->getBlock() == block && !llvm::is_contained(users, user) &&
        isa<CombineShardsOp, tensor::CastOp, tensor::CollapseShapeOp,
            tensor::ExpandShapeOp, tensor::ExtractSliceOp, arith::ExtFOp,
            arith::TruncFOp>(user))
      users.push_back(user);
  for (Operation *user : users) {
    sinkUnpacking(user);
    if (Operation *first = firstUserInBlock(user, *block))
      user->moveBefore(first);
  }
}

/// Starts each uniform exchange of `func` where it is and waits for it
/// just before its result's first use.
void startEach(func::FuncOp func, int64_t worldSize) {
  SmallVector<Operation *> exchanges;
  for (Operation &op : func.getBody().getOps())
    if (isa<AllToAllOp>(op) && exchangeLayout(&op, worldSize))
      exchanges.push_back(&op);
  for (Operation *op : exchanges) {
    sinkUnpacking(op);
    Block *block = op->getBlock();
    WaitOp wait = startCollective(op, *getStartFormName(op));
    if (Operation *firstUse = firstUserInBlock(wait.getOperation(), *block))
      wait->moveBefore(firstUse);
  }
}

/// Buckets the all_reduces, reduce_scatters and all_gathers of `func`;
/// false when there is nothing to combine. `worldSize` is the group of a
/// collective without groups (0: unknown).
bool bucketCollectives(func::FuncOp func, int64_t capBytes, int64_t worldSize,
                       bool exchanges, BucketCounts &counts) {
  if (func.isExternal() || !llvm::hasSingleElement(func.getBody()))
    return false;
  Block &block = func.getBody().front();
  // An exchange's result is read as late as it can be, so that exchanges
  // ready one after another can still share a bucket.
  if (exchanges) {
    SmallVector<Operation *> uniform;
    for (Operation &op : block)
      if (exchangeLayout(&op, worldSize))
        uniform.push_back(&op);
    // A started one's wait too.
    for (Operation *op : uniform) {
      Operation *last = exchangeResult(op).getDefiningOp();
      sinkUnpacking(last);
      if (last != op)
        if (Operation *firstUse = firstUserInBlock(last, block))
          last->moveBefore(firstUse);
    }
  }
  BlockOrder order(block);
  SmallVector<Operation *> candidates;
  // A collective of another's result stays as it is: its bucket would go
  // after an op that bucketing erases (an exchange's wait included), or
  // pack that result before the fused op computes it.
  llvm::SmallPtrSet<Operation *, 8> exchangeResults;
  if (exchanges)
    for (Operation &op : block)
      if (exchangeLayout(&op, worldSize))
        if (Operation *def = exchangeResult(&op).getDefiningOp())
          exchangeResults.insert(def);
  for (Operation &op : block) {
    if (exchanges) {
      if (exchangeLayout(&op, worldSize) &&
          !exchangeResults.contains(op.getOperand(0).getDefiningOp()))
        candidates.push_back(&op);
      continue;
    }
    if (!bucketKindOf(&op))
      continue;
    Operation *producer = op.getOperand(0).getDefiningOp();
    // Static in and out: a member's share of the bucket is its size.
    if (cast<RankedTensorType>(op.getOperand(0).getType()).hasStaticShape() &&
        cast<RankedTensorType>(op.getResult(0).getType()).hasStaticShape() &&
        !(producer && bucketKindOf(producer)))
      candidates.push_back(&op);
  }
  // In the order their inputs become ready, program order among equals.
  llvm::stable_sort(candidates, [&](Operation *a, Operation *b) {
    return order.readyAt(a->getOperand(0)) < order.readyAt(b->getOperand(0));
  });
  // One open bucket per kind, reduction, groups and element type (and, for
  // a pipelined forward pass's exchanges, chunk).
  using Key = std::tuple<int64_t, int64_t, Attribute, Type, Attribute>;
  llvm::MapVector<Key, Bucket> open;
  SmallVector<Bucket> closed;
  for (Operation *op : candidates) {
    BucketKind kind = exchanges ? BucketKind::exchange : *bucketKindOf(op);
    Value input = op->getOperand(0);
    auto groups = op->getAttrOfType<ReplicaGroupsAttr>("replica_groups");
    int64_t groupSize =
        cast<CollectiveOpInterface>(op).getStaticGroupSize().value_or(
            worldSize);
    // A scattered or gathered member splits into whole chunks per rank.
    if (kind != BucketKind::allReduce && kind != BucketKind::exchange &&
        (groupSize < 1 ||
         cast<RankedTensorType>(kind == BucketKind::allGather
                                    ? op->getResult(0).getType()
                                    : input.getType())
                     .getNumElements() %
                 groupSize !=
             0))
      continue;
    // Exchanges of one layout only share a bucket.
    int64_t reduction = reductionOf(op);
    if (kind == BucketKind::exchange)
      reduction = exchangeLayout(op, worldSize)->bySender ? -1 : -2;
    Key key{static_cast<int64_t>(kind), reduction, groups,
            cast<RankedTensorType>(input.getType()).getElementType(),
            op->getAttr(BraidDialect::kChunkAttrName)};
    // An exchange's size is what each rank of its group receives: by
    // sender the same on every rank, by destination each owner's rows from
    // every rank.
    int64_t bytes = 0;
    SmallVector<int64_t> received;
    if (kind == BucketKind::exchange) {
      auto type = cast<RankedTensorType>(input.getType());
      ExchangeLayout layout = *exchangeLayout(op, worldSize);
      int64_t rowBytes = elementsPerRow(type) *
                         std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
      int64_t all = 0;
      for (int64_t count : layout.counts)
        all += count;
      for (int64_t count : layout.counts)
        received.push_back((layout.bySender ? all : count * groupSize) *
                           rowBytes);
    } else {
      bytes = bytesOf(cast<RankedTensorType>(input.getType()));
    }
    int64_t ready = order.readyAt(input);
    Bucket &bucket = open[key];
    // Joining moves the bucket after this input: every member's result
    // must still be used only after that.
    int64_t after = std::max(bucket.after, ready);
    SmallVector<int64_t> together = received;
    if (!received.empty() && bucket.received.size() == received.size())
      for (auto [sum, mine] : llvm::zip_equal(together, bucket.received))
        sum += mine;
    int64_t joined = received.empty() ? bucket.bytes + bytes
                                      : *llvm::max_element(together);
    bool fits = bucket.members.empty() || joined <= capBytes;
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
      together = received;
    }
    bucket.kind = kind;
    bucket.groupSize = groupSize;
    bucket.members.push_back(op);
    bucket.received = std::move(together);
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
    if (bucket.kind == BucketKind::exchange)
      emitExchangeBucket(block, bucket, worldSize);
    else
      emitBucket(block, bucket);
    ++counts.buckets;
    counts.combined += bucket.members.size();
    changed = true;
  }
  return changed;
}

} // namespace

bool mlir::braid::fuseExchanges(func::FuncOp func, int64_t worldSize) {
  BucketCounts counts;
  return bucketCollectives(func, kUnlimitedBucketBytes, worldSize,
                           /*exchanges=*/true, counts);
}

namespace {
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
    for (func::FuncOp func : gradients ? funcs : SmallVector<func::FuncOp>()) {
      BucketCounts counts;
      FailureOr<RewriteOutcome> outcome = applyIfFaster(
          func, *predictor, force, [&](func::FuncOp copy) -> FailureOr<bool> {
            counts = BucketCounts();
            return bucketCollectives(copy, capBytes, worldSize,
                                     /*exchanges=*/false, counts);
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
    // The exchanges apart: what bucketing them competes with is each started
    // on its own where its input is ready (braid-async-exchanges' form),
    // not the synchronous program.
    for (func::FuncOp func : exchanges ? funcs : SmallVector<func::FuncOp>()) {
      if (func.isExternal() ||
          llvm::count_if(func.getBody().getOps(), [&](Operation &op) {
            return exchangeLayout(&op, worldSize).has_value();
          }) < 2)
        continue;
      std::optional<double> startedUs;
      if (!force && predictor->hasCluster()) {
        FailureOr<double> us =
            predictVariantUs(func, *predictor, [&](func::FuncOp copy) {
              startEach(copy, worldSize);
            });
        if (failed(us))
          return signalPassFailure();
        startedUs = *us;
      }
      // Exchanges of gradient rows all become ready at the end of the
      // backward, and a DDP-sized cap would keep each (tens of MiB to its
      // owner) apart. So, unless bucket-mib is given, the simulator also
      // weighs one bucket per layout and chunk against the capped ones.
      SmallVector<int64_t, 2> caps = {capBytes};
      if (!bucketMiB.hasValue())
        caps.push_back(kUnlimitedBucketBytes);
      BucketCounts counts;
      SmallVector<BucketCounts, 2> countsOf(caps.size());
      SmallVector<FunctionRewrite> alternatives;
      for (auto [cap, capCounts] : llvm::zip_equal(caps, countsOf))
        alternatives.push_back(
            [&, cap = cap](func::FuncOp copy) -> FailureOr<bool> {
              capCounts = BucketCounts();
              return bucketCollectives(copy, cap, worldSize,
                                       /*exchanges=*/true, capCounts);
            });
      size_t chosen = 0;
      FailureOr<RewriteOutcome> outcome = applyFastestOf(
          func, *predictor, force, alternatives, &startedUs, &chosen);
      if (failed(outcome))
        return signalPassFailure();
      counts = countsOf[chosen];
      if (*outcome == RewriteOutcome::rejected)
        ++numExchangesRejected;
      if (*outcome != RewriteOutcome::applied)
        continue;
      numExchangeBuckets += counts.buckets;
      numExchangesCombined += counts.combined;
    }
    // The routed indices' exchanges, against the function as it is (their
    // members already started where braid-overlap chose).
    for (func::FuncOp func : exchanges ? funcs : SmallVector<func::FuncOp>()) {
      int64_t buckets = 0, combined = 0;
      FailureOr<RewriteOutcome> outcome = applyIfFaster(
          func, *predictor, force, [&](func::FuncOp copy) -> FailureOr<bool> {
            buckets = fuseIndexExchanges(copy, combined);
            return buckets > 0;
          });
      if (failed(outcome))
        return signalPassFailure();
      if (*outcome == RewriteOutcome::rejected)
        ++numIndexExchangesRejected;
      if (*outcome != RewriteOutcome::applied)
        continue;
      numIndexExchangeBuckets += buckets;
      numIndexExchangesCombined += combined;
    }
  }
};
} // namespace
