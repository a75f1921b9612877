//===- ReorderCollectives.cpp - The braid-reorder-collectives pass --------===//
//
// This file implements braid-reorder-collectives: a dense optimizer step
// that reads an all_reduce of its gradient runs on each rank's shard
// instead of the whole parameter. The all_reduce becomes a reduce_scatter,
// each rank updates its slice of the parameter with its slice of the
// optimizer state (which the training step then keeps sharded: its argument
// and result hold one slice per rank), and an all_gather of the updated
// slices rebuilds the parameter. CoCoNet's split and reorder of an
// all_reduce with the optimizer after it; ZeRO's first stage.
//
// It also moves the slice of a rank's rows across the collective before it
// (a tensor-parallel layer's outputs and their gradients): the rows of an
// all_reduce are a reduce_scatter, the rows of an all_gather are this
// rank's input, and an all_reduce of rows set among zeros is an
// all_gather. The simulator decides for each rewrite.
//
//===----------------------------------------------------------------------===//

#include "braid/CoOpt/Passes.h"

#include "CoOptSupport.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDREORDERCOLLECTIVESPASS
#include "braid/CoOpt/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

namespace {
/// How one optimizer step is sharded: over `groups` (explicit), each of
/// `size` consecutive ranks, with the all_reduce it reads.
struct ShardPlan {
  AllReduceOp allReduce;
  ReplicaGroupsAttr groups;
  int64_t size = 0;
};


/// Whether `update` can run on shards, and how. The gradient is a sum (or
/// average) all_reduce read by this step alone, over every rank or over
/// blocks of consecutive ranks that tile the cluster, whose size divides
/// the parameter's first dimension; each state is an argument named
/// `braid.state` that only this step reads, and each new state is only
/// returned, as a `braid.state` result.
std::optional<ShardPlan> planFor(DenseUpdateOp update, int64_t worldSize) {
  auto allReduce = update.getGrad().getDefiningOp<AllReduceOp>();
  if (!allReduce || !allReduce.getResult().hasOneUse() ||
      (allReduce.getReduction() != ReductionKind::sum &&
       allReduce.getReduction() != ReductionKind::avg))
    return std::nullopt;
  auto type = cast<RankedTensorType>(update.getParam().getType());
  if (!type.hasStaticShape() || type.getRank() == 0)
    return std::nullopt;
  ShardPlan plan{allReduce, allReduce.getReplicaGroupsAttr(), 0};
  MLIRContext *context = update.getContext();
  if (!plan.groups) {
    if (worldSize < 1)
      return std::nullopt;
    SmallVector<int64_t> all =
        llvm::to_vector(llvm::seq<int64_t>(0, worldSize));
    plan.groups = ReplicaGroupsAttr::get(context, worldSize, all);
  }
  plan.size = plan.groups.getGroupSize();
  // Blocks [[0, .., n-1], [n, ..], ..] that tile the cluster: a rank's
  // position is rank mod n.
  if (plan.size < 2 || type.getDimSize(0) % plan.size != 0 ||
      !areConsecutiveBlocks(plan.groups, plan.size, worldSize))
    return std::nullopt;
  if (!ownsItsState(update))
    return std::nullopt;
  return plan;
}

/// Rewrites `update` on shards as `plan` says.
void shard(DenseUpdateOp update, ShardPlan plan) {
  MLIRContext *context = update.getContext();
  Location loc = update.getLoc();
  auto func = update->getParentOfType<func::FuncOp>();
  auto type = cast<RankedTensorType>(update.getParam().getType());
  int64_t rows = type.getDimSize(0) / plan.size;
  auto shardOf = [&](Type full) {
    auto tensor = cast<RankedTensorType>(full);
    SmallVector<int64_t> shape(tensor.getShape());
    shape[0] = rows;
    return RankedTensorType::get(shape, tensor.getElementType());
  };
  ReplicaGroupsAttr collectiveGroups = plan.allReduce.getReplicaGroupsAttr();

  // The gradient: reduced and scattered where the all_reduce stood.
  OpBuilder b(plan.allReduce);
  Value grad = ReduceScatterOp::create(
      b, plan.allReduce.getLoc(), shardOf(plan.allReduce.getInput().getType()),
      plan.allReduce.getReductionAttr(), plan.allReduce.getInput(),
      b.getI64IntegerAttr(0), collectiveGroups);
  plan.allReduce.getResult().replaceAllUsesWith(grad);
  plan.allReduce->erase();

  // This rank's rows of the parameter: [position * rows, +rows).
  b.setInsertionPoint(update);
  Value rank = RankOp::create(b, loc, b.getIndexType());
  Value position = arith::RemUIOp::create(
      b, loc, rank, arith::ConstantIndexOp::create(b, loc, plan.size));
  Value offset = arith::MulIOp::create(
      b, loc, position, arith::ConstantIndexOp::create(b, loc, rows));
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  offsets[0] = offset;
  SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t size : shardOf(type).getShape())
    sizes.push_back(b.getIndexAttr(size));
  Value param = tensor::ExtractSliceOp::create(
      b, loc, cast<RankedTensorType>(shardOf(type)), update.getParam(), offsets,
      sizes, strides);

  // The state arguments and results hold this rank's rows from now on.
  auto shardAttr = NamedAttribute(
      StringAttr::get(context, BraidDialect::kStateShardAttrName), plan.groups);
  SmallVector<Type> argTypes(func.getArgumentTypes()),
      resultTypes(func.getResultTypes());
  for (Value state : update.getState()) {
    auto argument = cast<BlockArgument>(state);
    argument.setType(shardOf(argument.getType()));
    argTypes[argument.getArgNumber()] = argument.getType();
    func.setArgAttr(argument.getArgNumber(), shardAttr.getName(),
                    shardAttr.getValue());
  }
  SmallVector<Type> newStateTypes;
  for (Value state : update.getNewState()) {
    unsigned index = *returnedOnlyAt(state);
    resultTypes[index] = shardOf(state.getType());
    newStateTypes.push_back(resultTypes[index]);
    func.setResultAttr(index, shardAttr.getName(), shardAttr.getValue());
  }
  func.setType(FunctionType::get(context, argTypes, resultTypes));

  auto sharded = DenseUpdateOp::create(
      b, loc, param.getType(), newStateTypes, param, grad, update.getStep(),
      update.getState(), update.getOptimizerAttr());
  // The updated rows, gathered back into the parameter every rank reads.
  Value gathered =
      AllGatherOp::create(b, loc, type, sharded.getNewParam(),
                          b.getI64IntegerAttr(0), collectiveGroups);
  update.getNewParam().replaceAllUsesWith(gathered);
  for (auto [before, after] :
       llvm::zip(update.getNewState(), sharded.getNewState()))
    before.replaceAllUsesWith(after);
  update->erase();
}

/// A rank's-rows rewrite at `op`, when one applies: the rows of a sum
/// all_reduce are a reduce_scatter, the rows of an all_gather along
/// dimension 0 are its input, and a sum all_reduce of this rank's rows
/// inserted among zeros is an all_gather.
std::function<void()> rowRewriteAt(Operation *op, int64_t worldSize) {
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    auto rows = rankRowsSlice(slice, worldSize);
    if (!rows)
      return nullptr;
    Operation *def = slice.getSource().getDefiningOp();
    if (auto reduce = dyn_cast_or_null<AllReduceOp>(def)) {
      // Another reader of the whole sum would keep the all_reduce beside
      // the reduce_scatter.
      if (reduce.getReduction() != ReductionKind::sum ||
          !reduce.getResult().hasOneUse() ||
          !areConsecutiveBlocks(reduce.getReplicaGroupsAttr(), rows->second, worldSize))
        return nullptr;
      return [slice, reduce]() mutable {
        OpBuilder b(slice);
        Value scattered = ReduceScatterOp::create(
            b, reduce.getLoc(), slice.getResultType(), reduce.getReductionAttr(),
            reduce.getInput(), b.getI64IntegerAttr(0),
            reduce.getReplicaGroupsAttr());
        slice.getResult().replaceAllUsesWith(scattered);
        slice->erase();
        if (reduce->use_empty())
          reduce->erase();
      };
    }
    if (auto gather = dyn_cast_or_null<AllGatherOp>(def)) {
      if (gather.getDim() != 0 ||
          gather.getInput().getType() != slice.getResultType() ||
          !areConsecutiveBlocks(gather.getReplicaGroupsAttr(), rows->second, worldSize))
        return nullptr;
      return [slice, gather]() mutable {
        slice.getResult().replaceAllUsesWith(gather.getInput());
        slice->erase();
        if (gather->use_empty())
          gather->erase();
      };
    }
    return nullptr;
  }
  auto reduce = dyn_cast<AllReduceOp>(op);
  if (!reduce || reduce.getReduction() != ReductionKind::sum)
    return nullptr;
  auto insert = reduce.getInput().getDefiningOp<tensor::InsertSliceOp>();
  if (!insert || !insert.hasUnitStride() ||
      !matchPattern(insert.getDest(), m_AnyZeroFloat()))
    return nullptr;
  RankedTensorType dest = insert.getDestType();
  auto rows = rankRowsOf(insert.getMixedOffsets(), worldSize);
  if (!rows || !dest.hasStaticShape() ||
      rows->first * rows->second != dest.getDimSize(0) ||
      insert.getSourceType() !=
          RankedTensorType::get(
              llvm::to_vector(llvm::concat<const int64_t>(
                  ArrayRef<int64_t>{rows->first}, dest.getShape().drop_front())),
              dest.getElementType()) ||
      !areConsecutiveBlocks(reduce.getReplicaGroupsAttr(), rows->second, worldSize))
    return nullptr;
  return [reduce, insert]() mutable {
    OpBuilder b(reduce);
    Value gathered = AllGatherOp::create(
        b, reduce.getLoc(), reduce.getType(), insert.getSource(),
        b.getI64IntegerAttr(0), reduce.getReplicaGroupsAttr());
    reduce.getResult().replaceAllUsesWith(gathered);
    reduce->erase();
    if (insert->use_empty())
      insert->erase();
  };
}

/// The rewrite at `op`, when one applies: a rank's-rows rewrite first (a
/// dense step whose gradient one of them changes is then no longer an
/// all_reduce's), else sharding the optimizer step.
std::function<void()> rewriteAt(Operation *op, int64_t worldSize) {
  if (std::function<void()> rows = rowRewriteAt(op, worldSize))
    return rows;
  if (auto update = dyn_cast<DenseUpdateOp>(op))
    if (std::optional<ShardPlan> plan = planFor(update, worldSize))
      return [update, plan]() mutable { shard(update, *plan); };
  return nullptr;
}

/// The positions in `block` of the ops a rewrite applies at, rank's-rows
/// rewrites first.
SmallVector<int64_t> candidatePositions(Block &block, int64_t worldSize) {
  SmallVector<int64_t> rows, steps;
  for (auto [index, op] : llvm::enumerate(block)) {
    if (rowRewriteAt(&op, worldSize))
      rows.push_back(index);
    else if (rewriteAt(&op, worldSize))
      steps.push_back(index);
  }
  llvm::append_range(rows, steps);
  return rows;
}

struct BraidReorderCollectivesPass
    : braid::impl::BraidReorderCollectivesPassBase<
          BraidReorderCollectivesPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<ProgramPredictor> predictor = ProgramPredictor::forModule(module);
    if (failed(predictor))
      return signalPassFailure();
    int64_t worldSize = 0;
    if (auto cluster =
            module->getAttrOfType<ClusterAttr>(BraidDialect::kClusterAttrName))
      worldSize = cluster.getWorldSize();
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      // One candidate at a time, in program order: a rewritten one leaves
      // the candidates (a sharded step reads a reduce_scatter).
      bool isStep = false;
      auto alternativesAt = [&](int64_t position) {
        Operation *op = opAt(func, position);
        isStep = isa<DenseUpdateOp>(op) && !rowRewriteAt(op, worldSize);
        return SmallVector<FunctionRewrite>{
            [&, position](func::FuncOp copy) -> FailureOr<bool> {
              std::function<void()> rewrite =
                  rewriteAt(opAt(copy, position), worldSize);
              if (!rewrite)
                return false;
              rewrite();
              return true;
            }};
      };
      auto record = [&](int64_t, RewriteOutcome outcome) {
        if (outcome != RewriteOutcome::applied) {
          ++numRejected;
          return;
        }
        ++(isStep ? numSharded : numRowsMoved);
      };
      if (failed(rewriteEachCandidate(
              func, *predictor, force,
              [&](Block &block) {
                return candidatePositions(block, worldSize);
              },
              alternativesAt, record)))
        return signalPassFailure();
    }
  }
};
} // namespace
