//===- AsyncExchanges.cpp - The braid-async-exchanges pass ----------------===//
//
// This file implements braid-async-exchanges: the output exchange of every
// sharded lookup is started where it stood and completed just before the
// pooled embedding is first used, so the lookups that follow overlap it.
//
//===----------------------------------------------------------------------===//

#include "braid/CoOpt/Passes.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDASYNCEXCHANGESPASS
#include "braid/CoOpt/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

/// The name of the `_start` form of a synchronous exchange, if it has one
/// that the CPU and the simulator know.
static std::optional<StringRef> startFormOf(Operation *op) {
  if (isa<AllToAllOp>(op))
    return AllToAllStartOp::getOperationName();
  if (isa<ReduceScatterOp>(op))
    return ReduceScatterStartOp::getOperationName();
  return std::nullopt;
}

/// Replaces the synchronous exchange `op` with its start (same operands
/// and attributes, a token of its result type) and a wait right after it;
/// returns the wait.
static WaitOp startExchange(Operation *op, StringRef startName) {
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

namespace {
struct BraidAsyncExchangesPass
    : braid::impl::BraidAsyncExchangesPassBase<BraidAsyncExchangesPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<CombineShardsOp> combines;
    getOperation().walk([&](CombineShardsOp op) { combines.push_back(op); });
    for (CombineShardsOp combine : combines) {
      Operation *exchange = combine.getReceived().getDefiningOp();
      std::optional<StringRef> startName =
          exchange ? startFormOf(exchange) : std::nullopt;
      // Only an exchange that feeds this combine alone, in the same block,
      // can complete later without changing what else reads it.
      if (!startName || !exchange->hasOneUse() ||
          exchange->getBlock() != combine->getBlock())
        continue;
      WaitOp wait = startExchange(exchange, *startName);
      ++numStarted;
      // Complete the exchange just before the embedding's first use; with
      // no use (a dead lookup), leave it where it is.
      Operation *firstUse = nullptr;
      for (Operation *user : combine->getUsers()) {
        Operation *inBlock = combine->getBlock()->findAncestorOpInBlock(*user);
        if (inBlock && (!firstUse || inBlock->isBeforeInBlock(firstUse)))
          firstUse = inBlock;
      }
      if (!firstUse)
        continue;
      wait->moveBefore(firstUse);
      combine->moveBefore(firstUse);
    }
  }
};
} // namespace
