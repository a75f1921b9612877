//===- StoreParameterBlocks.cpp - The braid-store-parameter-blocks pass ---===//
//
// This file implements braid-store-parameter-blocks: a parameter that every
// function reads only as this rank's block (a tensor-parallel layer's
// weight or bias, which braid-partition slices at braid.rank * block) is
// stored as that block. Its argument and, in a training step, its updated
// result hold the block alone, marked braid.param_shard (and
// braid.shard_dim); the slices go; and its optimizer step runs on the
// block's gradient as it is. The gradient's all_reduce over every rank,
// whose input was the block set among zeros, summed blocks that no other
// rank wrote, so each rank's block of the sum is its own gradient: the
// collective and the zeros go too. Optimizer state read only by that step
// is stored as blocks the same way (braid.state_shard).
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
#define GEN_PASS_DEF_BRAIDSTOREPARAMETERBLOCKSPASS
#include "braid/CoOpt/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

namespace {
/// This rank's block of a tensor: `size` entries along `dim` starting at
/// braid.rank * size, everything along the other dimensions.
struct RankBlock {
  int64_t dim = -1;
  int64_t size = 0;
  bool operator==(const RankBlock &other) const {
    return dim == other.dim && size == other.size;
  }
};

/// The block that `offsets` and `sizes` select of `full` when it is this
/// rank's block over `worldSize` ranks.
std::optional<RankBlock> rankBlockOf(ArrayRef<OpFoldResult> offsets,
                                     ArrayRef<int64_t> sizes,
                                     RankedTensorType full,
                                     int64_t worldSize) {
  if (worldSize < 2 || !full.hasStaticShape() ||
      int64_t(offsets.size()) != full.getRank() ||
      int64_t(sizes.size()) != full.getRank())
    return std::nullopt;
  std::optional<RankBlock> block;
  for (int64_t d = 0; d < full.getRank(); ++d) {
    if (getConstantIntValue(offsets[d]) == 0 && sizes[d] == full.getDimSize(d))
      continue;
    auto offset = dyn_cast<Value>(offsets[d]);
    auto mul = offset ? offset.getDefiningOp<arith::MulIOp>() : nullptr;
    if (block || !mul)
      return std::nullopt;
    for (auto [position, step] : {std::pair{mul.getLhs(), mul.getRhs()},
                                  std::pair{mul.getRhs(), mul.getLhs()}})
      if (position.getDefiningOp<RankOp>() &&
          getConstantIntValue(step) == sizes[d] &&
          sizes[d] * worldSize == full.getDimSize(d))
        block = RankBlock{d, sizes[d]};
    if (!block)
      return std::nullopt;
  }
  return block;
}

std::optional<RankBlock> rankBlockOf(tensor::ExtractSliceOp slice,
                                     int64_t worldSize) {
  if (!slice.hasUnitStride() ||
      slice.getResultType().getRank() != slice.getSourceType().getRank())
    return std::nullopt;
  return rankBlockOf(slice.getMixedOffsets(), slice.getStaticSizes(),
                     slice.getSourceType(), worldSize);
}

/// Whether every rank takes part in `groups` as one group.
bool isWholeWorld(ReplicaGroupsAttr groups, int64_t worldSize) {
  return !groups || (groups.getNumGroups() == 1 &&
                     areConsecutiveBlocks(groups, worldSize, worldSize));
}

/// How one parameter argument of one function becomes its block: the
/// slices that read the block, and the optimizer step (if any) with the
/// gradient block it then reads.
struct ParamPlan {
  BlockArgument argument;
  RankBlock block;
  SmallVector<tensor::ExtractSliceOp> slices;
  DenseUpdateOp update;
  Value gradientBlock;
};

/// The plan for `argument`, a parameter of `func`, when every use of it
/// reads this rank's block: slices of the block, and at most one optimizer
/// step whose gradient is a sum all_reduce over every rank of the block's
/// gradient set among zeros (read by the step alone), whose updated
/// parameter is only returned as a parameter, and whose state is
/// arguments only it reads, returned only as state.
std::optional<ParamPlan> planFor(func::FuncOp func, BlockArgument argument,
                                 int64_t worldSize) {
  ParamPlan plan{argument, {}, {}, {}, {}};
  std::optional<RankBlock> block;
  auto agree = [&](std::optional<RankBlock> found) {
    if (!found || (block && !(*block == *found)))
      return false;
    block = found;
    return true;
  };
  for (OpOperand &use : argument.getUses()) {
    Operation *user = use.getOwner();
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user)) {
      if (!agree(rankBlockOf(slice, worldSize)))
        return std::nullopt;
      plan.slices.push_back(slice);
      continue;
    }
    auto update = dyn_cast<DenseUpdateOp>(user);
    if (!update || plan.update || update.getParam() != argument)
      return std::nullopt;
    auto reduce = update.getGrad().getDefiningOp<AllReduceOp>();
    if (!reduce || reduce.getReduction() != ReductionKind::sum ||
        !reduce.getResult().hasOneUse() ||
        !isWholeWorld(reduce.getReplicaGroupsAttr(), worldSize))
      return std::nullopt;
    auto insert = reduce.getInput().getDefiningOp<tensor::InsertSliceOp>();
    if (!insert || !insert.hasUnitStride() ||
        !matchPattern(insert.getDest(), m_AnyZeroFloat()) ||
        insert.getSourceType().getRank() != insert.getDestType().getRank() ||
        !agree(rankBlockOf(insert.getMixedOffsets(), insert.getStaticSizes(),
                           insert.getDestType(), worldSize)))
      return std::nullopt;
    std::optional<unsigned> result = returnedOnlyAt(update.getNewParam());
    if (!result ||
        !func.getResultAttr(*result, BraidDialect::kParamAttrName) ||
        !ownsItsState(update))
      return std::nullopt;
    plan.update = update;
    plan.gradientBlock = insert.getSource();
  }
  if (!block || plan.slices.empty())
    return std::nullopt;
  plan.block = *block;
  return plan;
}

/// Rewrites `func` as `plans` say, marking the blocks as sharded over
/// `groups`.
void storeBlocks(func::FuncOp func, ArrayRef<ParamPlan> plans,
                 ReplicaGroupsAttr groups) {
  MLIRContext *context = func.getContext();
  auto blockTypeOf = [](Type full, RankBlock block) {
    auto tensor = cast<RankedTensorType>(full);
    SmallVector<int64_t> shape(tensor.getShape());
    shape[block.dim] = block.size;
    return RankedTensorType::get(shape, tensor.getElementType());
  };
  SmallVector<Type> argTypes(func.getArgumentTypes()),
      resultTypes(func.getResultTypes());
  auto dimAttr = [&](RankBlock block) {
    return IntegerAttr::get(IntegerType::get(context, 64), block.dim);
  };
  for (const ParamPlan &plan : plans) {
    BlockArgument argument = plan.argument;
    unsigned index = argument.getArgNumber();
    argument.setType(blockTypeOf(argument.getType(), plan.block));
    argTypes[index] = argument.getType();
    func.setArgAttr(index, BraidDialect::kParamShardAttrName, groups);
    func.setArgAttr(index, BraidDialect::kShardDimAttrName,
                    dimAttr(plan.block));
    for (tensor::ExtractSliceOp slice : plan.slices) {
      slice.getResult().replaceAllUsesWith(argument);
      slice->erase();
    }
    if (!plan.update)
      continue;
    DenseUpdateOp update = plan.update;
    SmallVector<Type> stateTypes;
    for (Value state : update.getState()) {
      auto stateArg = cast<BlockArgument>(state);
      stateArg.setType(blockTypeOf(stateArg.getType(), plan.block));
      argTypes[stateArg.getArgNumber()] = stateArg.getType();
      func.setArgAttr(stateArg.getArgNumber(),
                      BraidDialect::kStateShardAttrName, groups);
      func.setArgAttr(stateArg.getArgNumber(), BraidDialect::kShardDimAttrName,
                      dimAttr(plan.block));
      stateTypes.push_back(stateArg.getType());
    }
    unsigned paramResult = *returnedOnlyAt(update.getNewParam());
    resultTypes[paramResult] = argument.getType();
    func.setResultAttr(paramResult, BraidDialect::kParamShardAttrName, groups);
    func.setResultAttr(paramResult, BraidDialect::kShardDimAttrName,
                       dimAttr(plan.block));
    for (Value state : update.getNewState()) {
      unsigned index = *returnedOnlyAt(state);
      resultTypes[index] = blockTypeOf(state.getType(), plan.block);
      func.setResultAttr(index, BraidDialect::kStateShardAttrName, groups);
      func.setResultAttr(index, BraidDialect::kShardDimAttrName,
                         dimAttr(plan.block));
    }
    OpBuilder b(update);
    auto blockUpdate = DenseUpdateOp::create(
        b, update.getLoc(), argument.getType(), stateTypes, argument,
        plan.gradientBlock, update.getStep(), update.getState(),
        update.getOptimizerAttr());
    update.getNewParam().replaceAllUsesWith(blockUpdate.getNewParam());
    for (auto [before, after] :
         llvm::zip(update.getNewState(), blockUpdate.getNewState()))
      before.replaceAllUsesWith(after);
    auto reduce = update.getGrad().getDefiningOp<AllReduceOp>();
    update->erase();
    auto insert = reduce.getInput().getDefiningOp<tensor::InsertSliceOp>();
    reduce->erase();
    if (insert->use_empty())
      insert->erase();
  }
  func.setType(FunctionType::get(context, argTypes, resultTypes));
}

/// The parameter name of argument `index` of `func`, if it is one.
StringRef paramNameOf(func::FuncOp func, unsigned index) {
  auto name =
      func.getArgAttrOfType<StringAttr>(index, BraidDialect::kParamAttrName);
  return name ? name.getValue() : StringRef();
}

struct BraidStoreParameterBlocksPass
    : braid::impl::BraidStoreParameterBlocksPassBase<
          BraidStoreParameterBlocksPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<ProgramPredictor> predictor = ProgramPredictor::forModule(module);
    if (failed(predictor))
      return signalPassFailure();
    if (!predictor->hasCluster())
      return;
    int64_t worldSize = predictor->getWorldSize();

    // A parameter is stored as its block only where every function that
    // takes it reads nothing else of it, with the same block: the
    // functions of one artifact share their parameters.
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    llvm::StringMap<std::optional<RankBlock>> blockOfName;
    for (func::FuncOp func : funcs)
      for (BlockArgument argument : func.getArguments()) {
        StringRef name = paramNameOf(func, argument.getArgNumber());
        if (name.empty() || func.isExternal())
          continue;
        std::optional<ParamPlan> plan = planFor(func, argument, worldSize);
        auto [it, inserted] = blockOfName.try_emplace(
            name, plan ? std::optional<RankBlock>(plan->block) : std::nullopt);
        if (!inserted && (!plan || !it->second || !(*it->second == plan->block)))
          it->second = std::nullopt;
      }
    auto plansOf = [&](func::FuncOp func) {
      SmallVector<ParamPlan> plans;
      for (BlockArgument argument : func.getArguments()) {
        StringRef name = paramNameOf(func, argument.getArgNumber());
        auto it = blockOfName.find(name);
        if (name.empty() || it == blockOfName.end() || !it->second)
          continue;
        plans.push_back(*planFor(func, argument, worldSize));
      }
      return plans;
    };
    SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, worldSize));
    auto groups = ReplicaGroupsAttr::get(&getContext(), worldSize, all);

    // One decision for the module: the functions with blocks to store,
    // predicted as they are and with the blocks stored.
    double beforeUs = 0, afterUs = 0;
    bool any = false;
    for (func::FuncOp func : funcs) {
      if (plansOf(func).empty())
        continue;
      any = true;
      if (force)
        continue;
      FailureOr<double> before = predictor->predictUs(func);
      FailureOr<double> after =
          predictVariantUs(func, *predictor, [&](func::FuncOp copy) {
            storeBlocks(copy, plansOf(copy), groups);
          });
      if (failed(before) || failed(after))
        return signalPassFailure();
      beforeUs += *before;
      afterUs += *after;
    }
    if (!any)
      return;
    // No slower is enough: the blocks always take less memory (a forward
    // pass, whose slices cost nothing, gains only that).
    if (!force && !(afterUs <= beforeUs)) {
      ++numRejected;
      return;
    }
    for (func::FuncOp func : funcs) {
      SmallVector<ParamPlan> plans = plansOf(func);
      for (const ParamPlan &plan : plans)
        if (plan.update)
          ++numAllReducesRemoved;
      storeBlocks(func, plans, groups);
    }
    for (auto &entry : blockOfName)
      if (entry.second)
        ++numStored;
  }
};
} // namespace
