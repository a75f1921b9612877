//===- Differentiate.cpp - The braid-differentiate pass -------------------===//
//
// This file implements braid-differentiate: @train_step, derived from
// @forward by reverse-mode differentiation. The forward ops are cloned, the
// click probability's layer is replaced by its logit and the loss, and the
// ops are then visited in reverse, each building its operands' gradients
// through its GradientOpInterface rule. Gradients reaching a parameter are
// summed over the ranks that replicate it and handed to the dense
// optimizer; lookups update their tables themselves.
//
//===----------------------------------------------------------------------===//

#include "braid/Training/Passes.h"

#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Dialect/Braid/IR/Optimizers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/TypeUtilities.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDDIFFERENTIATEPASS
#include "braid/Training/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

namespace {
struct DifferentiatePass
    : braid::impl::BraidDifferentiatePassBase<DifferentiatePass> {
  void runOnOperation() override;
  LogicalResult differentiate(func::FuncOp forward);
};
} // namespace

/// The global batch and the number of ranks: from braid.batch_split in a
/// per-rank program, else the forward's static batch on one rank.
static FailureOr<std::pair<int64_t, int64_t>>
getBatchAndRanks(ModuleOp module, func::FuncOp forward, Value output) {
  if (auto split = module->getAttrOfType<DenseI64ArrayAttr>(
          BraidDialect::kBatchSplitAttrName)) {
    int64_t batch = 0;
    for (int64_t rows : split.asArrayRef())
      batch += rows;
    if (batch <= 0 || split.empty())
      return forward.emitError() << "braid.batch_split has no rows";
    return std::make_pair(batch, int64_t(split.size()));
  }
  int64_t batch = cast<RankedTensorType>(output.getType()).getDimSize(0);
  if (ShapedType::isDynamic(batch))
    return forward.emitError() << "a global program needs a static batch to "
                                  "scale its loss";
  return std::make_pair(batch, int64_t(1));
}

/// A group of all `ranks` ranks.
static ReplicaGroupsAttr allRanks(MLIRContext *context, int64_t ranks) {
  SmallVector<int64_t> all;
  for (int64_t r = 0; r < ranks; ++r)
    all.push_back(r);
  return ReplicaGroupsAttr::get(context, ranks, all);
}

LogicalResult DifferentiatePass::differentiate(func::FuncOp forward) {
  ModuleOp module = getOperation();
  MLIRContext *context = &getContext();
  auto optimizer =
      module->getAttrOfType<DictionaryAttr>(BraidDialect::kOptimizerAttrName);
  if (!optimizer)
    return module.emitError() << "braid-differentiate needs the module's '"
                              << BraidDialect::kOptimizerAttrName
                              << "' (the model spec's \"optimizer\")";
  if (module.lookupSymbol("train_step"))
    return module.emitError() << "the module already has a @train_step";
  if (!llvm::hasSingleElement(forward.getBody()))
    return forward.emitError() << "braid-differentiate needs a one-block "
                                  "@forward";
  Block &body = forward.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  LinearOp last = ret.getNumOperands() == 1
                      ? ret.getOperand(0).getDefiningOp<LinearOp>()
                      : LinearOp();
  if (!last || last.getActivation() != Activation::sigmoid ||
      last.getType().getDimSize(1) != 1 ||
      !last.getType().getElementType().isF32())
    return forward.emitError()
           << "training needs a @forward that returns one f32 braid.linear "
              "with a sigmoid and one column (the click probability)";
  FailureOr<std::pair<int64_t, int64_t>> batchAndRanks =
      getBatchAndRanks(module, forward, last.getResult());
  if (failed(batchAndRanks))
    return failure();
  auto [globalBatch, numRanks] = *batchAndRanks;
  GradientContext gradientContext{numRanks,
                                  optimizer.getAs<DictionaryAttr>("dense"),
                                  optimizer.getAs<DictionaryAttr>("embedding")};
  StringRef denseType =
      gradientContext.denseOptimizer.getAs<StringAttr>("type").getValue();

  // The signature: the forward's arguments, labels, step, then the state of
  // every parameter.
  auto f32 = Float32Type::get(context);
  SmallVector<Type> argTypes(forward.getArgumentTypes());
  SmallVector<DictionaryAttr> argAttrs;
  forward.getAllArgAttrs(argAttrs);
  auto named = [&](StringRef key, StringRef value) {
    return DictionaryAttr::get(
        context, {NamedAttribute(StringAttr::get(context, key),
                                 StringAttr::get(context, value))});
  };
  int64_t localBatch = last.getType().getDimSize(0);
  argTypes.push_back(RankedTensorType::get({localBatch}, f32));
  argAttrs.push_back(named(BraidDialect::kInputAttrName, "labels"));
  auto stepType = RankedTensorType::get({}, IntegerType::get(context, 64));
  argTypes.push_back(stepType);
  argAttrs.push_back(named(BraidDialect::kInputAttrName, "step"));
  // Per parameter argument: its name and its state arguments.
  struct Param {
    unsigned index;
    std::string name;
    SmallVector<unsigned> states;
  };
  SmallVector<Param> params;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
    auto name = forward.getArgAttrOfType<StringAttr>(i, BraidDialect::kParamAttrName);
    if (!name)
      continue;
    Param param{i, name.getValue().str(), {}};
    auto type = cast<RankedTensorType>(forward.getArgumentTypes()[i]);
    for (StringRef suffix : getDenseOptimizerStateSuffixes(denseType)) {
      param.states.push_back(argTypes.size());
      argTypes.push_back(type.clone(f32));
      argAttrs.push_back(named(BraidDialect::kStateAttrName, (name.getValue() + suffix).str()));
    }
    params.push_back(std::move(param));
  }

  OpBuilder b(context);
  b.setInsertionPointAfter(forward);
  auto lossType = RankedTensorType::get({}, f32);
  auto train = func::FuncOp::create(
      b, forward.getLoc(), "train_step",
      FunctionType::get(context, argTypes, {lossType}));
  train.setAllArgAttrs(argAttrs);
  Block *entry = train.addEntryBlock();
  b.setInsertionPointToStart(entry);

  // The forward pass, up to the logit.
  IRMapping mapping;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    mapping.map(forward.getArgument(i), entry->getArgument(i));
  SmallVector<Operation *> forwardOps;
  for (Operation &op : body.without_terminator()) {
    if (&op == last.getOperation())
      continue;
    if (op.getNumRegions() != 0)
      return op.emitError() << "braid-differentiate cannot differentiate an "
                               "op with regions";
    if (isa<WaitOp>(op) ||
        llvm::any_of(op.getResultTypes(), llvm::IsaPred<TokenType>))
      return op.emitError() << "braid-differentiate runs before "
                               "braid-async-exchanges: it differentiates "
                               "synchronous collectives only";
    forwardOps.push_back(b.clone(op, mapping));
  }
  auto logits = LinearOp::create(
      b, last.getLoc(), last.getType(), mapping.lookup(last.getInput()),
      mapping.lookup(last.getWeight()), mapping.lookup(last.getBias()),
      Activation::none, last.getPlacementAttr());
  forwardOps.push_back(logits);
  Value labels = entry->getArgument(forward.getNumArguments());
  Value step = entry->getArgument(forward.getNumArguments() + 1);
  auto loss = BceWithLogitsOp::create(
      b, last.getLoc(), lossType, logits.getType(), logits.getResult(),
      labels, b.getF64FloatAttr(1.0 / double(globalBatch)));
  Value globalLoss = loss.getLoss();
  if (numRanks > 1)
    globalLoss = AllReduceOp::create(b, last.getLoc(), lossType,
                                     ReductionKind::sum, globalLoss,
                                     allRanks(context, numRanks));

  // The backward pass.
  DenseMap<Value, Value> grads;
  auto accumulate = [&](Value value, Value grad, Location loc) {
    auto [it, inserted] = grads.try_emplace(value, grad);
    if (!inserted)
      it->second = arith::AddFOp::create(b, loc, it->second, grad);
  };
  grads[logits.getResult()] = loss.getLogitsGrad();
  for (Operation *op : llvm::reverse(forwardOps)) {
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value result : op->getResults()) {
      resultGrads.push_back(grads.lookup(result));
      any |= bool(resultGrads.back());
    }
    if (!any)
      continue;
    auto rule = dyn_cast<GradientOpInterface>(op);
    if (!rule) {
      // Nothing flows further back from an op without float operands (a
      // constant, integer routing); a lookup has a rule of its own.
      if (llvm::none_of(op->getOperandTypes(), [](Type type) {
            return isa<FloatType>(getElementTypeOrSelf(type));
          }))
        continue;
      return op->emitError() << "braid-differentiate: '" << op->getName()
                             << "' has no gradient rule";
    }
    SmallVector<Value> operandGrads;
    if (failed(rule.buildGradients(b, resultGrads, gradientContext,
                                   operandGrads)))
      return failure();
    if (operandGrads.size() != op->getNumOperands())
      return op->emitError() << "the gradient rule of '" << op->getName()
                             << "' gave " << operandGrads.size()
                             << " gradients for " << op->getNumOperands()
                             << " operands";
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads))
      if (grad && isa<FloatType>(getElementTypeOrSelf(operand.getType())))
        accumulate(operand, grad, op->getLoc());
  }

  // The dense optimizer: the gradient summed over the replicas, then the
  // update of the parameter and its state.
  SmallVector<Value> results = {globalLoss};
  SmallVector<Type> resultTypes = {lossType};
  SmallVector<DictionaryAttr> resultAttrs = {named(BraidDialect::kOutputAttrName, "loss")};
  for (const Param &param : params) {
    Value weight = entry->getArgument(param.index);
    Value grad = grads.lookup(weight);
    auto type = cast<RankedTensorType>(weight.getType());
    SmallVector<Value> state;
    for (unsigned index : param.states)
      state.push_back(entry->getArgument(index));
    Value newWeight = weight;
    SmallVector<Value> newState = state;
    if (grad) {
      if (numRanks > 1)
        grad = AllReduceOp::create(b, weight.getLoc(), grad.getType(),
                                   ReductionKind::sum, grad,
                                   allRanks(context, numRanks));
      SmallVector<Type> stateTypes;
      for (Value value : state)
        stateTypes.push_back(value.getType());
      auto update = DenseUpdateOp::create(
          b, weight.getLoc(), type, stateTypes, weight, grad, step, state,
          gradientContext.denseOptimizer);
      newWeight = update.getNewParam();
      newState.assign(update.getNewState().begin(),
                      update.getNewState().end());
    }
    results.push_back(newWeight);
    resultTypes.push_back(type);
    resultAttrs.push_back(named(BraidDialect::kParamAttrName, param.name));
    for (auto [value, index] : llvm::zip(newState, param.states)) {
      results.push_back(value);
      resultTypes.push_back(value.getType());
      resultAttrs.push_back(argAttrs[index]);
    }
  }
  func::ReturnOp::create(b, forward.getLoc(), results);
  train.setFunctionType(FunctionType::get(context, argTypes, resultTypes));
  train.setAllResultAttrs(resultAttrs);

  // Forward values nothing needs (the probability's layer was replaced).
  for (Operation *op : llvm::reverse(forwardOps))
    if (op->use_empty() && isPure(op))
      op->erase();
  return success();
}

void DifferentiatePass::runOnOperation() {
  ModuleOp module = getOperation();
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward) {
    module.emitError() << "braid-differentiate needs a func.func @forward";
    return signalPassFailure();
  }
  if (failed(differentiate(forward)))
    signalPassFailure();
}
