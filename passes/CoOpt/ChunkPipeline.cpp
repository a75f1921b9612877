//===- ChunkPipeline.cpp - The braid-chunk-pipeline pass ------------------===//
//
// This file implements braid-chunk-pipeline: a region of row-wise work
// between all_gathers of the batch and a reduction back to the ranks' rows
// (a tensor-parallel block's forward pass) is split into chunks of the
// batch, each with its own all_gather and reduction, started as soon as
// they can be and waited for at their first use. Chunk j's computation
// then runs beside chunk j + 1's all_gather and chunk j - 1's reduction:
// the pipelining of CoCoNet's overlap, and of the "chunking" the
// co-optimization issue names. The simulator picks the number of chunks,
// or none.
//
// The reduction is a reduce_scatter, or an all_reduce of which each rank
// keeps only its own rows (where braid-reorder-collectives keeps an NVLS
// all_reduce, which beats a reduce_scatter on one NVSwitch node).
// Gathering chunk j of every rank's rows gives the batch's rows in another
// order; every op of the region treats rows independently (elementwise
// arithmetic on the region's values, dense layers whose weight and bias
// come from outside it), and the reduction of chunk j gives each rank chunk
// j of its own rows back, so the result is the same.
//
//===----------------------------------------------------------------------===//

#include "braid/CoOpt/Passes.h"

#include "CoOptSupport.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDCHUNKPIPELINEPASS
#include "braid/CoOpt/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

namespace {
/// A collective in its synchronous form or as a start and its wait.
struct Collective {
  /// The collective or its start.
  Operation *op = nullptr;
  /// The wait, for a started collective.
  WaitOp wait;
  /// What the program reads: the result or the wait's.
  Value value() const {
    return wait ? wait->getResult(0) : op->getResult(0);
  }
};

/// The collective whose value `value` is, when it is one.
std::optional<Collective> collectiveOf(Value value) {
  if (auto wait = value.getDefiningOp<WaitOp>())
    if (Operation *start = wait.getToken().getDefiningOp())
      return Collective{start, wait};
  if (Operation *op = value.getDefiningOp())
    if (isa<CollectiveOpInterface>(op))
      return Collective{op, WaitOp()};
  return std::nullopt;
}

/// Whether `op` is an all_gather (`gather`) or reduce_scatter along
/// dimension 0 over every rank of the world in order.
bool isWorldCollectiveAlongRows(Operation *op, bool gather,
                                int64_t worldSize) {
  if (gather ? !isa<AllGatherOp, AllGatherStartOp>(op)
             : !isa<ReduceScatterOp, ReduceScatterStartOp>(op))
    return false;
  if (op->getAttrOfType<IntegerAttr>("dim").getInt() != 0)
    return false;
  return areConsecutiveBlocks(
      cast<CollectiveOpInterface>(op).getReplicaGroupsAttr(), worldSize,
      worldSize);
}

/// Whether `op` is an all_reduce (synchronous or started) over every rank
/// of the world in order.
bool isWorldAllReduce(Operation *op, int64_t worldSize) {
  return isa<AllReduceOp, AllReduceStartOp>(op) &&
         areConsecutiveBlocks(
             cast<CollectiveOpInterface>(op).getReplicaGroupsAttr(), worldSize,
             worldSize);
}

/// A region to chunk: its all_gathers, its ops in program order and the
/// reduction that ends it.
struct Region {
  SmallVector<Collective> gathers;
  SmallVector<Operation *> ops;
  /// The reduce_scatter or all_reduce.
  Collective scatter;
  /// For an all_reduce, the slice of it that keeps the rank's rows.
  tensor::ExtractSliceOp keep;
  /// Rows of each rank's share, and the ranks.
  int64_t rows = 0, worldSize = 0;
  /// What the program reads: the reduce_scatter's value or the slice.
  Value end() { return keep ? keep.getResult() : scatter.value(); }
};

/// The all_reduce that `end`, a slice keeping each rank's rows of it, reads
/// (its only reader), when it is one.
std::optional<Collective> keptAllReduce(Value end, int64_t worldSize,
                                        tensor::ExtractSliceOp &keep) {
  keep = end.getDefiningOp<tensor::ExtractSliceOp>();
  if (!keep)
    return std::nullopt;
  std::optional<Collective> reduce = collectiveOf(keep.getSource());
  std::optional<std::pair<int64_t, int64_t>> rows =
      rankRowsSlice(keep, worldSize);
  if (!reduce || !isWorldAllReduce(reduce->op, worldSize) || !rows ||
      rows->second != worldSize || !keep.getSource().hasOneUse())
    return std::nullopt;
  return reduce;
}

/// Whether `op` treats the rows of its batch-shaped operands independently
/// (and has no other effect): a dense layer on its input, or elementwise
/// float arithmetic.
bool isRowWise(Operation *op) {
  return isa<LinearOp, arith::AddFOp, arith::SubFOp, arith::MulFOp,
             arith::DivFOp, arith::NegFOp, arith::MaximumFOp,
             arith::MinimumFOp>(op);
}

/// The region that ends in `end`, a reduce_scatter's value or a slice that
/// keeps each rank's rows of an all_reduce, when there is one and nothing
/// outside it reads its values.
std::optional<Region> regionEndingAt(Value end, int64_t worldSize) {
  Region region;
  std::optional<Collective> scatter = collectiveOf(end);
  if (!scatter || !isWorldCollectiveAlongRows(scatter->op, false, worldSize))
    scatter = keptAllReduce(end, worldSize, region.keep);
  if (!scatter)
    return std::nullopt;
  region.scatter = *scatter;
  llvm::SetVector<Operation *> ops;
  llvm::SetVector<Operation *> gathers;
  SmallVector<Value> worklist = {scatter->op->getOperand(0)};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (std::optional<Collective> gather = collectiveOf(value);
        gather &&
        isWorldCollectiveAlongRows(gather->op, true, worldSize)) {
      if (gathers.insert(gather->op))
        region.gathers.push_back(*gather);
      continue;
    }
    Operation *op = value.getDefiningOp();
    if (!op || !isRowWise(op))
      return std::nullopt;
    if (!ops.insert(op))
      continue;
    if (auto linear = dyn_cast<LinearOp>(op))
      worklist.push_back(linear.getInput());
    else
      llvm::append_range(worklist, op->getOperands());
  }
  if (region.gathers.empty())
    return std::nullopt;
  // A dense layer's weight and bias come from outside the region: one made
  // from the batch's rows (a Gram matrix) would mix the rows.
  for (Operation *op : ops)
    if (auto linear = dyn_cast<LinearOp>(op))
      for (Value operand : {linear.getWeight(), linear.getBias()}) {
        if (!operand)
          continue;
        if (ops.contains(operand.getDefiningOp()) ||
            llvm::any_of(region.gathers, [&](const Collective &gather) {
              return gather.value() == operand;
            }))
          return std::nullopt;
      }
  // Every value the region makes (and every gathered batch) is read inside
  // it only, and has the whole batch as its static rows.
  auto type = cast<RankedTensorType>(scatter->op->getOperand(0).getType());
  int64_t batch = type.getDimSize(0);
  if (ShapedType::isDynamic(batch) || batch % worldSize != 0)
    return std::nullopt;
  region.rows = batch / worldSize;
  region.worldSize = worldSize;
  auto inside = [&](Operation *user) {
    return ops.contains(user) || user == scatter->op;
  };
  for (const Collective &gather : region.gathers) {
    Value value = gather.value();
    if (cast<RankedTensorType>(value.getType()).getDimSize(0) != batch ||
        !llvm::all_of(value.getUsers(), inside))
      return std::nullopt;
  }
  for (Operation *op : ops) {
    auto result = cast<RankedTensorType>(op->getResult(0).getType());
    if (result.getDimSize(0) != batch ||
        !llvm::all_of(op->getUsers(), inside))
      return std::nullopt;
  }
  region.ops = ops.takeVector();
  llvm::sort(region.ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return region;
}

/// `type` with `rows` rows.
RankedTensorType withRows(Type type, int64_t rows) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[0] = rows;
  return RankedTensorType::get(shape, tensor.getElementType());
}

/// Rows [offset, +rows) of `value`, along dimension 0.
Value rankRows(OpBuilder &b, Location loc, Value value, Value offset,
               int64_t rows) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  offsets[0] = offset;
  SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t size : withRows(type, rows).getShape())
    sizes.push_back(b.getIndexAttr(size));
  return tensor::ExtractSliceOp::create(b, loc, withRows(type, rows), value,
                                        offsets, sizes, strides);
}

/// Rewrites `region` as `chunks` chunks of each rank's rows.
void chunk(Region &region, int64_t chunks) {
  int64_t worldSize = region.worldSize;
  Operation *scatterOp = region.scatter.op;
  int64_t rows = region.rows / chunks;
  Location loc = scatterOp->getLoc();

  // Every chunk's all_gathers start where the whole gather started.
  SmallVector<SmallVector<WaitOp>> gathered(chunks);
  for (const Collective &gather : region.gathers) {
    OpBuilder b(gather.op);
    Value source = gather.op->getOperand(0);
    auto sourceType = cast<RankedTensorType>(source.getType());
    for (int64_t j = 0; j < chunks; ++j) {
      SmallVector<OpFoldResult> offsets(sourceType.getRank(),
                                        b.getIndexAttr(0));
      offsets[0] = b.getIndexAttr(j * rows);
      SmallVector<OpFoldResult> sizes, strides(sourceType.getRank(),
                                               b.getIndexAttr(1));
      for (int64_t size : withRows(sourceType, rows).getShape())
        sizes.push_back(b.getIndexAttr(size));
      Value part = tensor::ExtractSliceOp::create(
          b, loc, withRows(sourceType, rows), source, offsets, sizes, strides);
      Value whole = AllGatherOp::create(
          b, loc, withRows(sourceType, rows * worldSize), part,
          b.getI64IntegerAttr(0),
          cast<CollectiveOpInterface>(gather.op).getReplicaGroupsAttr());
      gathered[j].push_back(
          startCollective(whole.getDefiningOp(), "braid.all_gather_start"));
    }
  }

  // Each chunk's computation where the reduction stood, its wait for its
  // gathers first, its reduction started right after it.
  OpBuilder b(scatterOp);
  auto groups = cast<CollectiveOpInterface>(scatterOp).getReplicaGroupsAttr();
  auto reduction = scatterOp->getAttrOfType<ReductionKindAttr>("reduction");
  SmallVector<Value> parts;
  SmallVector<WaitOp> scatterWaits;
  bool allReduce = static_cast<bool>(region.keep);
  for (int64_t j = 0; j < chunks; ++j) {
    IRMapping mapping;
    for (auto [gather, wait] : llvm::zip(region.gathers, gathered[j])) {
      wait->moveBefore(b.getInsertionBlock(), b.getInsertionPoint());
      mapping.map(gather.value(), wait.getResult());
    }
    for (Operation *op : region.ops) {
      Operation *copy = b.clone(*op, mapping);
      for (Value result : copy->getResults())
        result.setType(withRows(result.getType(), rows * worldSize));
    }
    Value partial = mapping.lookup(scatterOp->getOperand(0));
    Value reduced =
        allReduce
            ? AllReduceOp::create(b, loc, partial.getType(), reduction, partial,
                                  groups)
                  .getResult()
            : ReduceScatterOp::create(b, loc, withRows(partial.getType(), rows),
                                      reduction, partial,
                                      b.getI64IntegerAttr(0), groups)
                  .getResult();
    scatterWaits.push_back(startCollective(
        reduced.getDefiningOp(),
        allReduce ? "braid.all_reduce_start" : "braid.reduce_scatter_start"));
    b.setInsertionPointAfter(scatterWaits.back().getOperand().getDefiningOp());
  }
  // The chunks' rows back together where the first reader needs them; of a
  // chunk's all_reduce, the rank keeps rows [rank * rows, +rows).
  // A reader nested in a region op is reached through that op.
  Value end = region.end();
  Block *block = scatterOp->getBlock();
  Operation *firstUse = nullptr;
  for (Operation *user : end.getUsers())
    if (Operation *inBlock = block->findAncestorOpInBlock(*user))
      if (!firstUse || inBlock->isBeforeInBlock(firstUse))
        firstUse = inBlock;
  OpBuilder after(firstUse ? firstUse : block->getTerminator());
  Value offset;
  if (allReduce)
    offset = arith::MulIOp::create(
        after, loc, RankOp::create(after, loc, after.getIndexType()),
        arith::ConstantIndexOp::create(after, loc, rows));
  for (WaitOp wait : scatterWaits) {
    wait->moveBefore(after.getInsertionBlock(), after.getInsertionPoint());
    parts.push_back(allReduce
                        ? rankRows(after, loc, wait.getResult(), offset, rows)
                        : wait.getResult());
  }
  Value whole = tensor::ConcatOp::create(after, loc, 0, parts);
  end.replaceAllUsesWith(whole);

  // The unchunked region goes, with the arithmetic of the kept rows' offset
  // that nothing else reads.
  if (region.keep) {
    // Ops, not values, on the worklist: an op reached twice (a constant
    // that two products read) is looked at again only if it still exists.
    SmallVector<Operation *> worklist;
    auto pushDefiningOps = [&](ValueRange values) {
      for (Value value : values)
        if (Operation *def = value.getDefiningOp())
          worklist.push_back(def);
    };
    pushDefiningOps(region.keep.getOffsets());
    region.keep->erase();
    llvm::SmallPtrSet<Operation *, 8> erased;
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      if (erased.contains(op) || !isOpTriviallyDead(op))
        continue;
      pushDefiningOps(op->getOperands());
      erased.insert(op);
      op->erase();
    }
  }
  if (region.scatter.wait)
    region.scatter.wait->erase();
  scatterOp->erase();
  for (Operation *op : llvm::reverse(region.ops))
    op->erase();
  for (const Collective &gather : region.gathers) {
    if (gather.wait)
      gather.wait->erase();
    gather.op->erase();
  }
}

/// Whether `value` is one chunk's reduction: a started reduce_scatter's
/// value, or a slice of a started all_reduce's.
bool isChunkReduction(Value value) {
  if (auto slice = value.getDefiningOp<tensor::ExtractSliceOp>())
    if (auto wait = slice.getSource().getDefiningOp<WaitOp>())
      return isa_and_nonnull<AllReduceStartOp>(wait.getToken().getDefiningOp());
  auto wait = value.getDefiningOp<WaitOp>();
  return wait &&
         isa_and_nonnull<ReduceScatterStartOp>(wait.getToken().getDefiningOp());
}

/// Whether `end` is already one chunk's: read only by a concatenation of
/// chunks' reductions.
bool isChunk(Value end) {
  return !end.use_empty() && llvm::all_of(end.getUsers(), [](Operation *user) {
    auto concat = dyn_cast<tensor::ConcatOp>(user);
    return concat && concat.getDim() == 0 &&
           llvm::all_of(concat.getInputs(), isChunkReduction);
  });
}

/// The positions in `block` of the reduce_scatters (or their waits) and of
/// the slices keeping each rank's rows of an all_reduce that end a region
/// chunks could split, and that are not chunks already.
SmallVector<int64_t> candidatePositions(Block &block, int64_t worldSize) {
  SmallVector<int64_t> positions;
  for (auto [index, op] : llvm::enumerate(block)) {
    bool end =
        isa<ReduceScatterOp, tensor::ExtractSliceOp>(op) ||
        (isa<WaitOp>(op) && isa_and_nonnull<ReduceScatterStartOp>(
                                cast<WaitOp>(op).getToken().getDefiningOp()));
    if (end && !isChunk(op.getResult(0)) &&
        regionEndingAt(op.getResult(0), worldSize))
      positions.push_back(index);
  }
  return positions;
}

struct BraidChunkPipelinePass
    : braid::impl::BraidChunkPipelinePassBase<BraidChunkPipelinePass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<ProgramPredictor> predictor = ProgramPredictor::forModule(module);
    if (failed(predictor))
      return signalPassFailure();
    if (!predictor->hasCluster())
      return;
    int64_t worldSize = predictor->getWorldSize();
    for (func::FuncOp func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      // One alternative per number of chunks that divides the rows.
      auto alternativesAt = [&](int64_t position) {
        SmallVector<FunctionRewrite> alternatives;
        for (int64_t chunks : {2, 4, 8})
          alternatives.push_back(
              [=](func::FuncOp copy) -> FailureOr<bool> {
                std::optional<Region> region = regionEndingAt(
                    opAt(copy, position)->getResult(0), worldSize);
                if (!region || region->rows % chunks != 0 ||
                    region->rows < chunks)
                  return false;
                chunk(*region, chunks);
                return true;
              });
        return alternatives;
      };
      if (failed(rewriteEachCandidate(
              func, *predictor, force,
              [&](Block &block) {
                return candidatePositions(block, worldSize);
              },
              alternativesAt, [&](int64_t, RewriteOutcome outcome) {
                ++(outcome == RewriteOutcome::applied ? numChunked
                                                      : numRejected);
              })))
        return signalPassFailure();
    }
  }
};
} // namespace
