//===- DeferWeightGradients.cpp - Weight gradients behind exchanges -------===//
//
// This file implements braid-defer-weight-gradients: in a training step, a
// dense layer's gradient (braid.linear_grad) is split into its input
// gradient, which the backward needs to go on, and its weight and bias
// gradients, which only the optimizer needs. The input part stays where it
// is; the weight part moves after the last pooled-gradient collective that
// the input part leads to, with the ops that read its results (which must
// write no memory but communication's, and read no table rows that the ops
// they pass may write), so that the embedding gradients' exchanges run
// while the weight gradients' GEMMs compute instead of after them. The
// rewrite lands where the simulator predicts the function faster.
//
//===----------------------------------------------------------------------===//

#include "braid/CoOpt/Passes.h"

#include "CoOptSupport.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDDEFERWEIGHTGRADIENTSPASS
#include "braid/CoOpt/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

/// The ops of `block` that read `values`, directly or through each other,
/// in block order.
static llvm::SetVector<Operation *> forwardSlice(ValueRange values,
                                                 Block &block) {
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> work(values.begin(), values.end());
  while (!work.empty()) {
    Value value = work.pop_back_val();
    for (Operation *user : value.getUsers()) {
      Operation *inBlock = block.findAncestorOpInBlock(*user);
      if (inBlock && slice.insert(inBlock))
        llvm::append_range(work, inBlock->getResults());
    }
  }
  SmallVector<Operation *> ordered = slice.takeVector();
  llvm::sort(ordered, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  return llvm::SetVector<Operation *>(ordered.begin(), ordered.end());
}

/// Whether the started collective `start` sends pooled rows' gradients:
/// its input is a braid.combine_shards_grad's result, packed or not (an
/// exchange to the tables' owners, or the all_gather of row-wise tables).
static bool sendsPooledGradients(Operation *start) {
  if (!isa<AllToAllStartOp, AllGatherStartOp>(start))
    return false;
  SmallVector<Value> work = {start->getOperand(0)};
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def)
      continue;
    if (isa<CombineShardsGradOp>(def))
      return true;
    if (isa<tensor::ConcatOp>(def))
      llvm::append_range(work, def->getOperands());
    else if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                 tensor::ExtractSliceOp, tensor::CastOp>(def))
      work.push_back(def->getOperand(0));
  }
  return false;
}

/// The exchange that `grad`'s weight part waits behind: the last started
/// collective of pooled gradients that its input gradient leads to, or null
/// when there is none or when `grad` has no two parts to split.
static Operation *exchangeBehind(LinearGradOp grad) {
  if (grad->hasAttr(BraidDialect::kGradPartAttrName) ||
      grad.getInputGrad().use_empty() ||
      (grad.getWeightGrad().use_empty() && grad.getBiasGrad().use_empty()))
    return nullptr;
  Operation *last = nullptr;
  for (Operation *op : forwardSlice(grad.getInputGrad(), *grad->getBlock()))
    if (sendsPooledGradients(op))
      last = op;
  return last;
}

/// The linear_grads of `block` with an exchange to defer behind, and
/// that exchange, in program order.
static SmallVector<std::pair<LinearGradOp, Operation *>>
candidates(Block &block) {
  SmallVector<std::pair<LinearGradOp, Operation *>> grads;
  for (auto grad : block.getOps<LinearGradOp>())
    if (Operation *exchange = exchangeBehind(grad))
      grads.push_back({grad, exchange});
  return grads;
}

/// Whether `reader`, which stands before `exchange` or after it, may move
/// after `exchange` unchanged: it holds no region and writes no memory (a
/// collective, its start and wait move their own results), and, where it
/// reads a table's rows, no op it would pass may write them.
static bool canFollowExchange(Operation *reader, Operation *exchange) {
  if (reader->getNumRegions() != 0 ||
      (!isMemoryEffectFree(reader) && !communicates(reader)))
    return false;
  FlatSymbolRefAttr table = tableRowsOf(reader);
  if (!table || !reader->isBeforeInBlock(exchange))
    return true;
  for (Operation *op = reader->getNextNode(); op != exchange->getNextNode();
       op = op->getNextNode())
    if (mayWriteRowsOf(op, table))
      return false;
  return true;
}

/// Splits every candidate of `func`'s body: the input part stays, the
/// weight part goes after its exchange (after the weight parts already
/// there, in program order), and the ops that read the weight part's
/// results and stood before it follow it, in their order. Returns the
/// number split.
static int64_t deferWeightGradients(func::FuncOp func) {
  if (func.isExternal() || !llvm::hasSingleElement(func.getBody()))
    return 0;
  Block &block = func.getBody().front();
  StringAttr input = StringAttr::get(func.getContext(), "input");
  StringAttr params = StringAttr::get(func.getContext(), "params");
  // Where the next weight part behind each exchange goes.
  llvm::DenseMap<Operation *, Operation *> insertAfter;
  int64_t split = 0;
  // Splitting moves only the weight parts and their readers (a reader may
  // be on another layer's input-gradient path, which then moves with it,
  // in its order), never the path from this layer's input gradient to its
  // exchange: each exchange is found once, up front.
  for (auto [grad, exchange] : candidates(block)) {
    // The weight part's readers must not lead to the exchange.
    llvm::SetVector<Operation *> readers = forwardSlice(
        ValueRange{grad.getWeightGrad(), grad.getBiasGrad()}, block);
    if (readers.contains(exchange) ||
        !llvm::all_of(readers, [&](Operation *reader) {
          return canFollowExchange(reader, exchange);
        }))
      continue;
    Operation *&anchor = insertAfter[exchange];
    if (!anchor)
      anchor = exchange;
    OpBuilder b(grad);
    b.setInsertionPointAfter(anchor);
    auto weights = cast<LinearGradOp>(b.clone(*grad));
    weights->setAttr(BraidDialect::kGradPartAttrName, params);
    grad->setAttr(BraidDialect::kGradPartAttrName, input);
    grad.getWeightGrad().replaceAllUsesWith(weights.getWeightGrad());
    grad.getBiasGrad().replaceAllUsesWith(weights.getBiasGrad());
    anchor = weights;
    // The readers that stood before the weight part follow it.
    for (Operation *reader : readers)
      if (reader->isBeforeInBlock(weights)) {
        reader->moveAfter(anchor);
        anchor = reader;
      }
    ++split;
  }
  return split;
}

namespace {
struct BraidDeferWeightGradientsPass
    : public braid::impl::BraidDeferWeightGradientsPassBase<
          BraidDeferWeightGradientsPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<ProgramPredictor> predictor =
        ProgramPredictor::forModule(getOperation());
    if (failed(predictor))
      return signalPassFailure();
    for (func::FuncOp func :
         llvm::to_vector(getOperation().getOps<func::FuncOp>())) {
      int64_t split = 0;
      FailureOr<RewriteOutcome> outcome = applyIfFaster(
          func, *predictor, force, [&](func::FuncOp copy) -> FailureOr<bool> {
            split = deferWeightGradients(copy);
            return split > 0;
          });
      if (failed(outcome))
        return signalPassFailure();
      if (*outcome == RewriteOutcome::applied)
        numDeferred += split;
      else if (*outcome == RewriteOutcome::rejected)
        ++numRejected;
    }
  }
};
} // namespace
