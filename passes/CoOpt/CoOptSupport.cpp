//===- CoOptSupport.cpp - What the co-optimization passes share -----------===//
//
// This file implements the simulator-guarded rewrite and the start/wait
// form of collectives that Braid's co-optimization passes share.
//
//===----------------------------------------------------------------------===//

#include "CoOptSupport.h"

#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Sim/ScheduleBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace mlir::braid;

FailureOr<ProgramPredictor> ProgramPredictor::forModule(ModuleOp module) {
  ProgramPredictor predictor;
  auto cluster =
      module->getAttrOfType<ClusterAttr>(BraidDialect::kClusterAttrName);
  if (!cluster)
    return predictor;
  llvm::Expected<cluster::HardwareDesc> hw =
      cluster::loadHardware(cluster.getHardware());
  if (!hw)
    return module.emitError() << "cannot load the hardware of the module's "
                                 "cluster: "
                              << llvm::toString(hw.takeError());
  predictor.hw = std::move(*hw);
  predictor.ranks = cluster.getWorldSize();
  predictor.ranksPerNode = cluster.getRanksPerNode();
  return predictor;
}

FailureOr<double> ProgramPredictor::predictUs(func::FuncOp func) const {
  if (!hw)
    return func.emitError() << "no cluster to predict the program on";
  FailureOr<sim::ProgramPrediction> prediction =
      sim::simulateProgram(func, *hw, ranks, ranksPerNode);
  if (failed(prediction))
    return failure();
  return prediction->result.makespanUs;
}

/// A copy of `func` beside it, so that the simulator finds the module's
/// tables and batch split; the caller erases it.
static func::FuncOp copyBeside(func::FuncOp func) {
  auto copy = cast<func::FuncOp>(func->clone());
  OpBuilder(func).insert(copy);
  copy.setPrivate();
  SymbolTable::setSymbolName(copy, (func.getSymName() + ".coopt").str());
  return copy;
}

FailureOr<double>
mlir::braid::predictVariantUs(func::FuncOp func,
                              const ProgramPredictor &predictor,
                              llvm::function_ref<void(func::FuncOp)> variant) {
  func::FuncOp copy = copyBeside(func);
  llvm::scope_exit erase([&] { copy.erase(); });
  variant(copy);
  return predictor.predictUs(copy);
}

FailureOr<RewriteOutcome>
mlir::braid::applyIfFaster(func::FuncOp func, const ProgramPredictor &predictor,
                           bool force, const FunctionRewrite &rewrite) {
  return applyFastestOf(func, predictor, force, {rewrite});
}

FailureOr<RewriteOutcome>
mlir::braid::applyFastestOf(func::FuncOp func,
                            const ProgramPredictor &predictor, bool force,
                            ArrayRef<FunctionRewrite> rewrites,
                            std::optional<double> *knownUs,
                            size_t *chosen) {
  if (!force && !predictor.hasCluster())
    return RewriteOutcome::unchanged;
  std::optional<double> baseline = knownUs ? *knownUs : std::nullopt;
  std::optional<double> bestUs;
  func::FuncOp best;
  size_t bestIndex = 0;
  bool changedAny = false;
  auto dropBest = [&] {
    if (best)
      best.erase();
  };
  llvm::scope_exit dropOnExit(dropBest);
  for (auto [index, rewrite] : llvm::enumerate(rewrites)) {
    // The copy never outlives this function.
    func::FuncOp copy = copyBeside(func);
    FailureOr<bool> changed = rewrite(copy);
    if (failed(changed) || !*changed) {
      copy.erase();
      if (failed(changed))
        return failure();
      continue;
    }
    changedAny = true;
    if (force) {
      dropBest();
      best = copy;
      bestIndex = index;
      break;
    }
    if (!baseline) {
      FailureOr<double> before = predictor.predictUs(func);
      if (failed(before)) {
        copy.erase();
        return failure();
      }
      baseline = *before;
    }
    FailureOr<double> after = predictor.predictUs(copy);
    if (failed(after)) {
      copy.erase();
      return failure();
    }
    // A gain within rounding is no gain.
    if (*after < *baseline * (1 - 1e-9) && (!bestUs || *after < *bestUs)) {
      dropBest();
      best = copy;
      bestIndex = index;
      bestUs = *after;
    } else {
      copy.erase();
    }
  }
  if (knownUs)
    *knownUs = baseline;
  if (!changedAny)
    return RewriteOutcome::unchanged;
  if (!best)
    return RewriteOutcome::rejected;
  // A forced copy was not simulated.
  if (knownUs)
    *knownUs = bestUs;
  if (chosen)
    *chosen = bestIndex;
  // The signature too: a rewrite may reshape arguments (a sharded
  // optimizer state) and their attributes.
  func.getBody().takeBody(best.getBody());
  func.setFunctionType(best.getFunctionType());
  func.setAllArgAttrs(best.getAllArgAttrs());
  func.setAllResultAttrs(best.getAllResultAttrs());
  return RewriteOutcome::applied;
}

std::optional<StringRef> mlir::braid::getStartFormName(Operation *op) {
  if (isa<AllToAllOp>(op))
    return AllToAllStartOp::getOperationName();
  if (isa<ReduceScatterOp>(op))
    return ReduceScatterStartOp::getOperationName();
  if (isa<AllReduceOp>(op))
    return AllReduceStartOp::getOperationName();
  if (isa<AllGatherOp>(op))
    return AllGatherStartOp::getOperationName();
  if (isa<AllToAllVOp>(op))
    return AllToAllVStartOp::getOperationName();
  return std::nullopt;
}

LogicalResult mlir::braid::rewriteEachCandidate(
    func::FuncOp func, const ProgramPredictor &predictor, bool force,
    llvm::function_ref<SmallVector<int64_t>(Block &)> candidates,
    llvm::function_ref<SmallVector<FunctionRewrite>(int64_t)> alternativesAt,
    llvm::function_ref<void(int64_t, RewriteOutcome)> record) {
  if (func.isExternal() || !llvm::hasSingleElement(func.getBody()))
    return success();
  // The prediction of the function as it stands, kept across candidates.
  std::optional<double> currentUs;
  for (size_t skipped = 0;;) {
    SmallVector<int64_t> positions = candidates(func.getBody().front());
    if (skipped >= positions.size())
      return success();
    int64_t position = positions[skipped];
    FailureOr<RewriteOutcome> outcome = applyFastestOf(
        func, predictor, force, alternativesAt(position), &currentUs);
    if (failed(outcome))
      return failure();
    if (*outcome != RewriteOutcome::unchanged)
      record(position, *outcome);
    if (*outcome != RewriteOutcome::applied)
      ++skipped;
  }
}

bool mlir::braid::areConsecutiveBlocks(ReplicaGroupsAttr groups,
                                       int64_t size, int64_t worldSize) {
  if (!groups)
    return size == worldSize;
  return groups.getGroupSize() == size &&
         groups.getTilingStride(worldSize) == 1;
}

Operation *mlir::braid::firstUserInBlock(ArrayRef<Operation *> ops,
                                         Block &block) {
  Operation *first = nullptr;
  for (Operation *op : ops)
    for (Operation *user : op->getUsers())
      if (Operation *inBlock = block.findAncestorOpInBlock(*user))
        if (!first || inBlock->isBeforeInBlock(first))
          first = inBlock;
  return first;
}

Operation *mlir::braid::opAt(func::FuncOp func, int64_t position) {
  return &*std::next(func.getBody().front().begin(), position);
}

SmallVector<int64_t> mlir::braid::positionsWhere(
    Block &block, llvm::function_ref<bool(Operation &)> isCandidate) {
  SmallVector<int64_t> positions;
  for (auto [position, op] : llvm::enumerate(block))
    if (isCandidate(op))
      positions.push_back(position);
  return positions;
}

WaitOp mlir::braid::startCollective(Operation *op, StringRef startName) {
  OpBuilder b(op);
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  OperationState state(op->getLoc(), startName);
  state.addOperands(op->getOperands());
  state.addAttributes(op->getAttrs());
  state.addTypes(TokenType::get(op->getContext(), resultType));
  Operation *start = b.create(state);
  auto wait = WaitOp::create(b, op->getLoc(), resultType, start->getResult(0));
  op->getResult(0).replaceAllUsesWith(wait.getResult());
  op->erase();
  return wait;
}

std::optional<unsigned> mlir::braid::returnedOnlyAt(Value value) {
  if (!value.hasOneUse() ||
      !isa<func::ReturnOp>(value.getUses().begin()->getOwner()))
    return std::nullopt;
  return value.getUses().begin()->getOperandNumber();
}

bool mlir::braid::ownsItsState(DenseUpdateOp update) {
  auto func = update->getParentOfType<func::FuncOp>();
  if (!func)
    return false;
  // Sharding its state changes the function's type, which a call of it in
  // the module would no longer match.
  if (auto module = func->getParentOfType<ModuleOp>();
      !module || !SymbolTable::symbolKnownUseEmpty(func, module))
    return false;
  for (Value state : update.getState()) {
    auto argument = dyn_cast<BlockArgument>(state);
    if (!argument || argument.getOwner()->getParentOp() != func ||
        !state.hasOneUse() ||
        !func.getArgAttr(argument.getArgNumber(),
                         BraidDialect::kStateAttrName) ||
        func.getArgAttr(argument.getArgNumber(),
                        BraidDialect::kStateShardAttrName))
      return false;
  }
  for (Value state : update.getNewState()) {
    std::optional<unsigned> index = returnedOnlyAt(state);
    if (!index || !func.getResultAttr(*index, BraidDialect::kStateAttrName))
      return false;
  }
  return true;
}

int64_t mlir::braid::positionGroupSize(Value position, int64_t worldSize) {
  if (position.getDefiningOp<RankOp>())
    return worldSize;
  if (auto rem = position.getDefiningOp<arith::RemUIOp>())
    if (rem.getLhs().getDefiningOp<RankOp>())
      if (std::optional<int64_t> n = getConstantIntValue(rem.getRhs()))
        return *n;
  return 0;
}

std::optional<std::pair<int64_t, int64_t>>
mlir::braid::rankRowsOf(ArrayRef<OpFoldResult> offsets, int64_t worldSize) {
  if (offsets.empty())
    return std::nullopt;
  for (OpFoldResult offset : offsets.drop_front())
    if (getConstantIntValue(offset) != 0)
      return std::nullopt;
  auto value = dyn_cast<Value>(offsets.front());
  auto mul = value ? value.getDefiningOp<arith::MulIOp>() : arith::MulIOp();
  if (!mul)
    return std::nullopt;
  for (auto [position, size] : {std::pair{mul.getLhs(), mul.getRhs()},
                                std::pair{mul.getRhs(), mul.getLhs()}}) {
    std::optional<int64_t> rows = getConstantIntValue(size);
    int64_t group = positionGroupSize(position, worldSize);
    if (rows && *rows > 0 && group > 1)
      return std::make_pair(*rows, group);
  }
  return std::nullopt;
}

std::optional<std::pair<int64_t, int64_t>>
mlir::braid::rankRowsSlice(tensor::ExtractSliceOp slice, int64_t worldSize) {
  RankedTensorType source = slice.getSourceType();
  if (!slice.hasUnitStride() || !source.hasStaticShape() ||
      slice.getResultType().getRank() != source.getRank())
    return std::nullopt;
  auto rows = rankRowsOf(slice.getMixedOffsets(), worldSize);
  if (!rows || rows->first * rows->second != source.getDimSize(0) ||
      slice.getResultType().getShape().drop_front() !=
          source.getShape().drop_front() ||
      slice.getStaticSizes()[0] != rows->first)
    return std::nullopt;
  return rows;
}

FlatSymbolRefAttr mlir::braid::tableRowsOf(Operation *op) {
  // A max-pooled bag's gradient reads the rows to find each column's
  // maximum; a sum or mean's reads the pooled gradient alone.
  bool reads = isa<EmbeddingBagOp, ShardEmbeddingBagOp>(op);
  if (auto grad = dyn_cast<EmbeddingBagGradOp>(op))
    reads = grad.getMode() == PoolingMode::max;
  if (!reads && isMemoryEffectFree(op))
    return nullptr;
  return op->getAttrOfType<FlatSymbolRefAttr>("table");
}

bool mlir::braid::communicates(Operation *op) {
  return isa<WaitOp, CollectiveOpInterface, AllToAllVOp, PermuteOp>(op) ||
         llvm::any_of(op->getResultTypes(), llvm::IsaPred<TokenType>);
}

bool mlir::braid::mayWriteRowsOf(Operation *op, FlatSymbolRefAttr table) {
  if (isMemoryEffectFree(op))
    return false;
  if (auto named = op->getAttrOfType<FlatSymbolRefAttr>("table"))
    return named == table;
  if (communicates(op))
    return false;
  // An op holding regions writes what the ops in them write.
  if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
    return op
        ->walk([&](Operation *nested) {
          return nested != op && mayWriteRowsOf(nested, table)
                     ? WalkResult::interrupt()
                     : WalkResult::advance();
        })
        .wasInterrupted();
  // Declared effects that write may write any table; undeclared ones (a
  // call) too.
  if (auto effects = dyn_cast<MemoryEffectOpInterface>(op))
    return effects.hasEffect<MemoryEffects::Write>();
  return true;
}

bool mlir::braid::touchesRowsOf(Operation *op, FlatSymbolRefAttr table) {
  return op
      ->walk([&](Operation *nested) {
        return tableRowsOf(nested) == table ? WalkResult::interrupt()
                                            : WalkResult::advance();
      })
      .wasInterrupted();
}
