//===- ChunkLookups.cpp - The braid-chunk-lookups pass --------------------===//
//
// This file implements braid-chunk-lookups: a forward pass's sharded lookups
// (route, exchange the indices, look up, exchange the pooled rows) and the
// row-wise work after them (combine, interaction, top MLP) are split into
// chunks of each rank's bags. Chunk j routes, looks up and exchanges bags
// [j b/k, (j+1) b/k) of every rank (braid.slice_bags), and its interaction
// and top MLP run on those rows; chunk j + 1's lookups and exchanges then run
// beside chunk j's dense work: the issue's "split the batch and pipeline
// lookup -> exchange -> interaction/top MLP over the chunks". The simulator
// picks the number of chunks, or none.
//
// Every op of the chunked region treats bags (rows) independently, and every
// rank takes the same ranges of its own bags, so each exchange of chunk j
// carries exactly chunk j's rows and the chunks' results, concatenated in
// order, are the unchunked result.
//
// In a training step the backward reads the region's values: the back's rows
// (activations, logits) are concatenated where it first reads them, and each
// sharded table's update, which reads its chunks' routed bags, gets its
// pooled gradient exchanged chunk by chunk (the combine_shards_grad, its
// exchange and a max table's choice of shard cloned on chunk j's rows) and
// all chunks' bags, lengths and gradient rows concatenated. An update treats its bags independently and
// sums a row's gradients over them, so the concatenated bags, in another
// order, update the tables as the unchunked step does.
//
//===----------------------------------------------------------------------===//

#include "braid/CoOpt/Passes.h"

#include "CoOptSupport.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDCHUNKLOOKUPSPASS
#include "braid/CoOpt/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

namespace {
/// Where an op of the chunked region runs.
enum class Stage {
  /// From routing a table's bags to starting its pooled rows' exchange.
  front,
  /// From the pooled rows' arrival to the function's results.
  back,
};

/// The region of a function to chunk.
struct Region {
  /// Each op of the region and its stage.
  llvm::MapVector<Operation *, Stage> ops;
  /// The bags per rank every routing and combine of the region has.
  int64_t bagsPerRank = 0;
  /// An offsets argument: the rank's bags are its entries less one.
  Value offsets;
  /// The tables' updates that read the front's routed bags, and for each
  /// the ops that bring it its gradient rows, in block order.
  SmallVector<std::pair<ShardEmbeddingBagUpdateOp, SmallVector<Operation *>>>
      updates;
};

/// Whether `op` may be on the way from a table's routing to its pooled
/// rows: the routing, its index exchanges, the shard's lookup and the
/// pooled rows' exchange, synchronous or started.
bool isFrontKind(Operation *op) {
  return isa<BucketizeOp, AllToAllOp, AllToAllStartOp, AllToAllVOp,
             AllToAllVStartOp, ReduceScatterOp, ReduceScatterStartOp,
             ShardEmbeddingBagOp, WaitOp>(op);
}

/// Whether `op` may be in the back: the combine of pooled rows, and ops
/// that treat the rows of their batch-shaped operands independently.
bool isBackKind(Operation *op) {
  return isa<CombineShardsOp, InteractionOp, LinearOp, arith::AddFOp,
             arith::SubFOp, arith::MulFOp, arith::DivFOp, arith::NegFOp,
             arith::MaximumFOp, arith::MinimumFOp, arith::ExtFOp,
             arith::TruncFOp>(op);
}

/// Whether operand `index` of back op `op` has the batch's rows: a dense
/// layer's input, and every operand of the interaction and of elementwise
/// ops (a layer's weight and bias do not, and may not come from the
/// chunked region).
bool isBatchOperand(Operation *op, unsigned index) {
  if (isa<LinearOp>(op))
    return index == 0;
  return !isa<CombineShardsOp>(op);
}

/// Whether `type` has a dynamic first dimension (rows of the batch).
bool hasBatchRows(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() > 0 && tensor.isDynamicDim(0);
}

/// The ops that bring `update` its pooled gradient rows, in block order:
/// a braid.combine_shards_grad of the batch's rows and the exchanges that
/// send them to the table's shards (synchronous or started), and for a
/// row-wise `max` table the choice of the shard whose partial won (a
/// comparison of the forward's partials with their gathered maxima, values
/// of the region, `inRegion`, and a select against splat zeros). Empty
/// when the gradient comes another way or something else reads one of these
/// ops.
SmallVector<Operation *>
gradientOps(ShardEmbeddingBagUpdateOp update, Block &block,
            llvm::function_ref<bool(Value)> inRegion) {
  llvm::SetVector<Operation *> ops;
  SmallVector<Value> worklist = {update.getPooledGrad()};
  bool combined = false;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (inRegion(value))
      continue;
    Operation *op = value.getDefiningOp();
    if (!op || op->getBlock() != &block)
      return {};
    // A scalar constant (a splat's value, a dimension's index) is read as
    // it is.
    if (isa<arith::ConstantOp>(op) && !isa<ShapedType>(value.getType()))
      continue;
    if (!ops.insert(op))
      continue;
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      // A splat, which a chunk's clone takes with its own shape.
      auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
      if (!splat || !splat.getType().hasStaticShape())
        return {};
      continue;
    }
    if (auto grad = dyn_cast<CombineShardsGradOp>(op)) {
      if (grad.getTable() != update.getTable() ||
          !hasBatchRows(grad.getResultGrad().getType()))
        return {};
      combined = true;
      continue;
    }
    // The zeros before canonicalization: a splat of a scalar, its dynamic
    // sizes read off the gradient.
    if (!isa<AllToAllOp, AllToAllStartOp, AllGatherOp, AllGatherStartOp,
             WaitOp, arith::CmpFOp, arith::SelectOp, tensor::SplatOp,
             tensor::DimOp>(op))
      return {};
    llvm::append_range(worklist, op->getOperands());
  }
  // Only the update and each other read them (a constant may be shared: its
  // clones are new constants and it stays).
  for (Operation *op : ops)
    for (Operation *user : op->getUsers())
      if (user != update && !ops.contains(user) &&
          !isa<arith::ConstantOp>(op))
        return {};
  if (!combined)
    return {};
  SmallVector<Operation *> sorted(ops.begin(), ops.end());
  llvm::sort(sorted,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return sorted;
}

/// The region of `func`'s body to chunk, or nothing when the body has no
/// sharded lookup or something outside the region reads its values other
/// than as a training step does.
std::optional<Region> findRegion(func::FuncOp func) {
  if (func.isExternal() || !llvm::hasSingleElement(func.getBody()))
    return std::nullopt;
  Block &block = func.getBody().front();
  auto inFunc = [&](Value value) {
    auto arg = dyn_cast<BlockArgument>(value);
    return arg && arg.getOwner() == &block;
  };
  Region region;
  SmallVector<CombineShardsOp> combines(block.getOps<CombineShardsOp>());
  if (combines.empty())
    return std::nullopt;
  auto sameBags = [&](int64_t bags) {
    if (!region.bagsPerRank)
      region.bagsPerRank = bags;
    return region.bagsPerRank == bags;
  };
  // The front: everything between a combine's rows and its routing.
  SmallVector<Operation *> back;
  for (CombineShardsOp combine : combines) {
    if (!inFunc(combine.getOffsets()) || !sameBags(combine.getBagsPerRank()))
      return std::nullopt;
    back.push_back(combine);
    SmallVector<Value> worklist = {combine.getReceived()};
    // The wait that completes the pooled rows runs with the back; its other
    // readers (a training step's backward) read the chunks' rows
    // concatenated, so they must stand in the block.
    if (auto wait = combine.getReceived().getDefiningOp<WaitOp>()) {
      if (llvm::any_of(wait->getUsers(), [&](Operation *user) {
            return user->getBlock() != &block;
          }))
        return std::nullopt;
      back.push_back(wait);
      worklist = {wait.getToken()};
    }
    bool routed = false;
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      Operation *op = value.getDefiningOp();
      if (!op || !isFrontKind(op) || op->getBlock() != &block)
        return std::nullopt;
      if (region.ops.count(op))
        continue;
      region.ops[op] = Stage::front;
      if (auto bucketize = dyn_cast<BucketizeOp>(op)) {
        // A table's bags: arguments of the function, the combine's offsets.
        if (!inFunc(bucketize.getIndices()) ||
            bucketize.getOffsets() != combine.getOffsets() ||
            !sameBags(bucketize.getBagsPerRank()))
          return std::nullopt;
        routed = true;
        continue;
      }
      llvm::append_range(worklist, op->getOperands());
    }
    if (!routed)
      return std::nullopt;
    region.offsets = combine.getOffsets();
  }
  // The back: what the combines' rows flow into, up to the results.
  SmallVector<Value> worklist;
  for (Operation *op : back) {
    region.ops[op] = Stage::back;
    if (isa<CombineShardsOp>(op))
      worklist.push_back(op->getResult(0));
  }
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!hasBatchRows(value.getType()))
      return std::nullopt;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user->getBlock() != &block)
        return std::nullopt;
      // Other readers (the results, a training step's loss and backward)
      // stay outside and read the chunks' rows concatenated.
      if (!isBackKind(user))
        continue;
      // A back op reads the rows as its batch: a dense layer whose weight
      // or bias they are would mix the bags.
      if (!isBatchOperand(user, use.getOperandNumber()))
        return std::nullopt;
      if (region.ops.count(user))
        continue;
      region.ops[user] = Stage::back;
      llvm::append_range(worklist, user->getResults());
    }
  }
  // A training step's updates of the chunked tables, and the ops that bring
  // them their gradient rows: each combine_shards_grad takes the table's
  // bags (a combine's offsets) and bags per rank.
  auto stageOf = [&](Value value) -> std::optional<Stage> {
    Operation *def = value.getDefiningOp();
    auto it = def ? region.ops.find(def) : region.ops.end();
    if (it == region.ops.end())
      return std::nullopt;
    return it->second;
  };
  llvm::SmallPtrSet<Operation *, 16> gradientReaders;
  for (auto update : block.getOps<ShardEmbeddingBagUpdateOp>()) {
    bool routedValues = stageOf(update.getValues()) == Stage::front;
    bool routedLengths = stageOf(update.getLengths()) == Stage::front;
    if (!routedValues && !routedLengths)
      continue;
    // Both from the chunks, or the chunks' bags would not line up.
    if (routedValues != routedLengths)
      return std::nullopt;
    SmallVector<Operation *> ops = gradientOps(
        update, block, [&](Value value) { return stageOf(value).has_value(); });
    if (ops.empty())
      return std::nullopt;
    for (Operation *op : ops) {
      auto grad = dyn_cast<CombineShardsGradOp>(op);
      if (grad && (!inFunc(grad.getOffsets()) ||
                   static_cast<int64_t>(grad.getBagsPerRank()) !=
                       region.bagsPerRank ||
                   llvm::none_of(combines, [&](CombineShardsOp combine) {
                     return combine.getOffsets() == grad.getOffsets() &&
                            combine.getTable() == grad.getTable();
                   })))
        return std::nullopt;
      gradientReaders.insert(op);
    }
    gradientReaders.insert(update);
    region.updates.emplace_back(update, std::move(ops));
  }
  // Outside the region, the back's rows may be read by anything (they are
  // concatenated), the front's values only by those updates (their bags and
  // lengths) and the ops that bring them their gradient rows; and the back's
  // batch-shaped operands from outside have the batch's rows.
  for (auto [op, stage] : region.ops) {
    for (OpOperand &use : op->getUses()) {
      Operation *user = use.getOwner();
      if (region.ops.count(user) || stage == Stage::back)
        continue;
      if (!gradientReaders.contains(user) ||
          (isa<ShardEmbeddingBagUpdateOp>(user) && use.getOperandNumber() >= 2))
        return std::nullopt;
    }
    if (stage == Stage::front)
      continue;
    for (OpOperand &operand : op->getOpOperands()) {
      Operation *def = operand.get().getDefiningOp();
      if ((def && region.ops.count(def)) ||
          !isBatchOperand(op, operand.getOperandNumber()))
        continue;
      if (!hasBatchRows(operand.get().getType()))
        return std::nullopt;
    }
  }
  return region;
}

/// `type` with its static first dimension divided by `chunks`, or nothing
/// when it does not divide.
FailureOr<Type> chunkType(Type type, int64_t chunks) {
  if (auto token = dyn_cast<TokenType>(type)) {
    FailureOr<Type> value = chunkType(token.getValueType(), chunks);
    if (failed(value))
      return failure();
    return Type(TokenType::get(type.getContext(),
                               cast<RankedTensorType>(*value)));
  }
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() == 0 || tensor.isDynamicDim(0))
    return type;
  if (tensor.getDimSize(0) % chunks != 0)
    return failure();
  SmallVector<int64_t> shape(tensor.getShape());
  shape[0] /= chunks;
  return Type(RankedTensorType::get(shape, tensor.getElementType()));
}

/// Makes the clone `op` of a front or back op one chunk's of `chunks`: its
/// bags per rank, the rows its exchanges carry and its static rows divided
/// by `chunks`. Fails when something does not divide.
LogicalResult shrinkToChunk(Operation *op, int64_t chunks) {
  if (auto bucketize = dyn_cast<BucketizeOp>(op))
    bucketize.setBagsPerRank(bucketize.getBagsPerRank() / chunks);
  if (auto combine = dyn_cast<CombineShardsOp>(op))
    combine.setBagsPerRank(combine.getBagsPerRank() / chunks);
  if (auto grad = dyn_cast<CombineShardsGradOp>(op))
    grad.setBagsPerRank(grad.getBagsPerRank() / chunks);
  if (auto sizes = op->getAttrOfType<DenseI64ArrayAttr>("split_sizes");
      sizes && isa<AllToAllOp, AllToAllStartOp>(op)) {
    SmallVector<int64_t> shrunk;
    for (int64_t size : sizes.asArrayRef()) {
      if (size % chunks != 0)
        return failure();
      shrunk.push_back(size / chunks);
    }
    op->setAttr("split_sizes", DenseI64ArrayAttr::get(op->getContext(), shrunk));
  }
  // Routed lengths and pooled rows have static rows; the rank's bags,
  // routed indices and the batch's rows are dynamic and stay.
  for (Value result : op->getResults()) {
    if (isa<BucketizeOp>(op) && result != op->getResult(0))
      continue;
    FailureOr<Type> type = chunkType(result.getType(), chunks);
    if (failed(type))
      return failure();
    result.setType(*type);
  }
  return success();
}

/// Rewrites `region` of `func` as `chunks` chunks; fails (leaving `func`
/// to be dropped) when a size does not divide.
LogicalResult chunk(func::FuncOp func, Region &region, int64_t chunks) {
  Block &block = func.getBody().front();
  int64_t bags = region.bagsPerRank / chunks;
  Location loc = func.getLoc();
  // Chunk j's rows of the batch: [min(j c, B), min((j + 1) c, B)).
  OpBuilder top = OpBuilder::atBlockBegin(&block);
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(top, loc, value);
  };
  Value batch = arith::SubIOp::create(
      top, loc, tensor::DimOp::create(top, loc, region.offsets, 0), index(1));
  SmallVector<Value> firstRow, rowCount;
  for (int64_t j = 0; j < chunks; ++j) {
    Value first = arith::MinUIOp::create(top, loc, index(j * bags), batch);
    Value end = arith::MinUIOp::create(top, loc, index((j + 1) * bags), batch);
    firstRow.push_back(first);
    rowCount.push_back(arith::SubIOp::create(top, loc, end, first));
  }
  // Chunk j's rows of `value`, which has the batch's rows.
  auto rowsOfChunk = [&](OpBuilder &b, Location at, Value value,
                         int64_t j) -> Value {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes, strides(type.getRank(),
                                             b.getIndexAttr(1));
    offsets[0] = firstRow[j];
    sizes.push_back(rowCount[j]);
    for (int64_t d = 1; d < type.getRank(); ++d)
      sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
    return tensor::ExtractSliceOp::create(b, at, type, value, offsets, sizes,
                                          strides);
  };
  // The chunks' pieces of `value` (a region's value, or one of a gradient
  // chain), concatenated along the rows before `before`.
  auto concatenated = [&](ArrayRef<IRMapping> pieces, Value value,
                          Operation *before) -> Value {
    SmallVector<Value> parts;
    for (const IRMapping &mapping : pieces)
      parts.push_back(mapping.lookup(value));
    OpBuilder b(before);
    return tensor::ConcatOp::create(b, before->getLoc(), 0, parts);
  };

  // The region's ops in runs of one stage; each run is emitted chunk by
  // chunk where it stood, so that chunk j + 1's front follows chunk j's and
  // chunk j's back runs before chunk j + 1's.
  SmallVector<SmallVector<Operation *>> runs;
  std::optional<Stage> last;
  for (Operation &op : block) {
    auto it = region.ops.find(&op);
    if (it == region.ops.end()) {
      last.reset();
      continue;
    }
    if (last != it->second)
      runs.emplace_back();
    last = it->second;
    runs.back().push_back(&op);
  }
  // A front run goes in two phases: first every chunk's routing and index
  // exchange starts (nothing waits for a collective there), then every
  // chunk's lookups and pooled rows' starts. Each chunk's exchanges then
  // queue on the communication stream before any chunk's pooled rows, and
  // a lookup never waits behind another chunk's pooled rows.
  // Each phase with the op it is emitted before: its run's first, so that a
  // run's phases stay in order when its first op is a late one.
  SmallVector<std::pair<Operation *, SmallVector<Operation *>>> phases;
  for (SmallVector<Operation *> &run : runs) {
    Operation *anchor = run.front();
    if (region.ops.lookup(anchor) == Stage::back) {
      phases.emplace_back(anchor, std::move(run));
      continue;
    }
    llvm::SmallPtrSet<Operation *, 16> late;
    SmallVector<Operation *> early, rest;
    for (Operation *op : run) {
      bool waits = llvm::any_of(op->getOperands(), [&](Value operand) {
        Operation *def = operand.getDefiningOp();
        return def && (late.contains(def) || isa<WaitOp>(def) ||
                       getStartFormName(def).has_value());
      });
      if (waits)
        late.insert(op);
      (waits ? rest : early).push_back(op);
    }
    for (SmallVector<Operation *> *phase : {&early, &rest})
      if (!phase->empty())
        phases.emplace_back(anchor, std::move(*phase));
  }
  SmallVector<IRMapping> mappings(chunks);
  SmallVector<Operation *> synchronous;
  // Clones `op` for chunk j at `b`, made the chunk's size.
  auto cloneForChunk = [&](OpBuilder &b, Operation *op,
                           int64_t j) -> LogicalResult {
    Operation *copy = b.clone(*op, mappings[j]);
    if (failed(shrinkToChunk(copy, chunks)))
      return failure();
    // The chunk's exchanges fuse among themselves only
    // (braid-bucket-collectives).
    if (isa<AllToAllOp, AllToAllStartOp>(copy))
      copy->setAttr(BraidDialect::kChunkAttrName, b.getI64IntegerAttr(j));
    if (getStartFormName(copy))
      synchronous.push_back(copy);
    return success();
  };
  // Each chunk's bags of a table: one slice per indices and offsets (two
  // tables may share their offsets and not their indices).
  SmallVector<llvm::DenseMap<std::pair<Value, Value>, SliceBagsOp>> ranges(
      chunks);
  for (auto &[anchor, run] : phases) {
    OpBuilder b(anchor);
    for (int64_t j = 0; j < chunks; ++j) {
      IRMapping &mapping = mappings[j];
      for (Operation *op : run) {
        if (auto bucketize = dyn_cast<BucketizeOp>(op)) {
          SliceBagsOp &range =
              ranges[j][{bucketize.getIndices(), bucketize.getOffsets()}];
          if (!range)
            range = SliceBagsOp::create(
                b, op->getLoc(), bucketize.getIndices().getType(),
                bucketize.getOffsets().getType(), bucketize.getIndices(),
                bucketize.getOffsets(), j * bags, bags);
          mapping.map(bucketize.getIndices(), range.getResultIndices());
          mapping.map(bucketize.getOffsets(), range.getResultOffsets());
        }
        if (region.ops.lookup(op) == Stage::back)
          for (OpOperand &operand : op->getOpOperands()) {
            Value value = operand.get();
            if (mapping.contains(value) ||
                !isBatchOperand(op, operand.getOperandNumber()))
              continue;
            // A batch-shaped value from outside: this chunk's rows of it.
            mapping.map(value, rowsOfChunk(b, op->getLoc(), value, j));
          }
        if (failed(cloneForChunk(b, op, j)))
          return failure();
      }
    }
  }
  // A training step's table updates: each chunk's pooled gradient rows go
  // back to the shards as chunk j's pooled rows came (the combine's
  // backward and its exchanges, cloned where they stood, on chunk j's rows
  // and bags), and the update reads every chunk's bags and rows.
  for (auto &[update, ops] : region.updates) {
    for (Operation *op : ops) {
      OpBuilder b(op);
      for (int64_t j = 0; j < chunks; ++j) {
        if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
          // The splat with chunk j's shape.
          auto splat = cast<SplatElementsAttr>(constant.getValue());
          FailureOr<Type> type = chunkType(splat.getType(), chunks);
          if (failed(type))
            return failure();
          mappings[j].map(
              constant.getResult(),
              arith::ConstantOp::create(
                  b, op->getLoc(),
                  DenseElementsAttr::get(cast<ShapedType>(*type),
                                         splat.getSplatValue<Attribute>())));
          continue;
        }
        if (auto grad = dyn_cast<CombineShardsGradOp>(op))
          mappings[j].map(grad.getResultGrad(),
                          rowsOfChunk(b, op->getLoc(), grad.getResultGrad(), j));
        if (failed(cloneForChunk(b, op, j)))
          return failure();
      }
    }
    Value values = concatenated(mappings, update.getValues(), update);
    Value lengths = concatenated(mappings, update.getLengths(), update);
    Value rows = concatenated(mappings, update.getPooledGrad(), update);
    update.getValuesMutable().set(values);
    update.getLengthsMutable().set(lengths);
    update.getPooledGradMutable().set(rows);
  }
  // The back's rows, concatenated where something outside first reads them
  // (the function's results, a training step's loss and backward; the
  // gradient ops, cloned per chunk, read their chunk's rows).
  llvm::SmallPtrSet<Operation *, 16> cloned;
  for (auto &entry : region.updates)
    cloned.insert(entry.second.begin(), entry.second.end());
  for (auto [op, stage] : region.ops) {
    if (stage != Stage::back)
      continue;
    for (Value result : op->getResults()) {
      SmallVector<OpOperand *> outside;
      Operation *first = nullptr;
      for (OpOperand &use : result.getUses()) {
        Operation *user = use.getOwner();
        if (region.ops.count(user) || cloned.contains(user))
          continue;
        outside.push_back(&use);
        if (!first || user->isBeforeInBlock(first))
          first = user;
      }
      if (outside.empty())
        continue;
      Value whole = concatenated(mappings, result, first);
      for (OpOperand *use : outside)
        use->set(whole);
    }
  }
  // A chunk's collectives run beside the other chunks' work only started:
  // each waits just before its first use.
  for (Operation *op : synchronous) {
    Operation *firstUse = firstUserInBlock(op, block);
    WaitOp wait = startCollective(op, *getStartFormName(op));
    if (firstUse)
      wait->moveBefore(firstUse);
  }
  SmallVector<Operation *> erased;
  for (auto &entry : region.ops)
    erased.push_back(entry.first);
  // The gradient ops (a shared constant stays for its other readers;
  // canonicalization drops it when none is left).
  for (auto &entry : region.updates)
    for (Operation *op : entry.second)
      if (!isa<arith::ConstantOp>(op))
        erased.push_back(op);
  llvm::sort(erased,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : llvm::reverse(erased))
    op->erase();
  return success();
}

struct BraidChunkLookupsPass
    : braid::impl::BraidChunkLookupsPassBase<BraidChunkLookupsPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<ProgramPredictor> predictor = ProgramPredictor::forModule(module);
    if (failed(predictor))
      return signalPassFailure();
    if (!force && !predictor->hasCluster())
      return;
    for (func::FuncOp func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      std::optional<Region> region = findRegion(func);
      if (!region)
        continue;
      int64_t worldSize = predictor->getWorldSize();
      // One alternative per number of chunks that divides the bags.
      SmallVector<FunctionRewrite> alternatives;
      for (int64_t chunks : {2, 4, 8}) {
        if (region->bagsPerRank < chunks || region->bagsPerRank % chunks != 0)
          continue;
        alternatives.push_back(
            [chunks, worldSize, this](func::FuncOp copy) -> FailureOr<bool> {
              std::optional<Region> found = findRegion(copy);
              if (!found || failed(chunk(copy, *found, chunks)))
                return false;
              // Forced, the chunks alone: braid-bucket-collectives fuses
              // their exchanges when it runs.
              if (!force)
                fuseExchanges(copy, worldSize);
              return true;
            });
      }
      if (alternatives.empty())
        continue;
      // Chunks pay through their exchanges fused (braid-bucket-collectives,
      // next in the pipeline): many small exchanges cost their latencies.
      // So each alternative is chunked and then fused, a chunk's exchanges
      // together, and competes with the function fused as it is; the one
      // kept stays fused.
      std::optional<double> fusedUs;
      if (!force) {
        FailureOr<double> us =
            predictVariantUs(func, *predictor, [&](func::FuncOp copy) {
              fuseExchanges(copy, worldSize);
            });
        if (failed(us))
          return signalPassFailure();
        fusedUs = *us;
      }
      FailureOr<RewriteOutcome> outcome =
          applyFastestOf(func, *predictor, force, alternatives, &fusedUs);
      if (failed(outcome))
        return signalPassFailure();
      if (*outcome == RewriteOutcome::applied)
        ++numChunked;
      else if (*outcome == RewriteOutcome::rejected)
        ++numRejected;
    }
  }
};
} // namespace
