//===- AsyncExchanges.cpp - The braid-async-exchanges pass ----------------===//
//
// This file implements braid-async-exchanges: the output exchange of every
// sharded lookup is started where it stood and completed just before the
// pooled embedding is first used, so the lookups that follow overlap it.
//
//===----------------------------------------------------------------------===//

#include "braid/CoOpt/Passes.h"

#include "CoOptSupport.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDASYNCEXCHANGESPASS
#include "braid/CoOpt/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

namespace {
struct BraidAsyncExchangesPass
    : braid::impl::BraidAsyncExchangesPassBase<BraidAsyncExchangesPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<CombineShardsOp> combines;
    getOperation().walk([&](CombineShardsOp op) { combines.push_back(op); });
    for (CombineShardsOp combine : combines) {
      Operation *exchange = combine.getReceived().getDefiningOp();
      // The pooled rows come from an all_to_all or a reduce_scatter.
      std::optional<StringRef> startName =
          isa_and_nonnull<AllToAllOp, ReduceScatterOp>(exchange)
              ? getStartFormName(exchange)
              : std::nullopt;
      // Only an exchange that feeds this combine alone, in the same block,
      // can complete later without changing what else reads it.
      if (!startName || !exchange->hasOneUse() ||
          exchange->getBlock() != combine->getBlock())
        continue;
      WaitOp wait = startCollective(exchange, *startName);
      ++numStarted;
      // Complete the exchange just before the embedding's first use; with
      // no use (a dead lookup), leave it where it is.
      Operation *firstUse =
          firstUserInBlock(combine.getOperation(), *combine->getBlock());
      if (!firstUse)
        continue;
      wait->moveBefore(firstUse);
      combine->moveBefore(firstUse);
    }
  }
};
} // namespace
