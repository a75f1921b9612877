//===- FillWaits.cpp - The braid-fill-waits pass --------------------------===//
//
// This file implements braid-fill-waits: the computation that follows a
// braid.wait and reads nothing a pending collective gives is moved above
// the wait, so that the compute stream runs it while the collective is in
// flight instead of idling at the wait. The ops the partitioner and the
// earlier rewrites leave after a wait keep their program order (a forward
// pass looks up its data-parallel tables after the first sharded table,
// whose routed indices it waits for), and braid-overlap places a wait at
// its result's first reader, which may be cheap index arithmetic that the
// expensive reader follows.
//
// Only ops that write no memory and hold no region move, never a
// collective, a start or a wait, and a lookup never past an op that may
// write its table's rows (mayWriteRowsOf: one that names the table or holds
// such an op, or one that names none and writes memory or does not say
// what it does, such as a call); an op moves only when every operand is
// defined above the wait or by an op that moved. The scan stops at the next
// op that issues communication (a collective, an exchange or a start, or
// an op holding one), so no collective moves later in program order; in
// time, the work moved beside a collective can still slow it and what
// follows (contention), which the simulator weighs. Each wait is filled
// alone or with every later wait, or alone with the work from past the
// communication after it too (which then starts after more work: a
// forward pass's data-parallel lookups left after the pooled rows'
// exchange, run while the routed indices are in theirs), whichever the
// simulator predicts fastest, and only where that beats the function as
// it is. Forced, only the first two are offered.
//
//===----------------------------------------------------------------------===//

#include "braid/CoOpt/Passes.h"

#include "CoOptSupport.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDFILLWAITSPASS
#include "braid/CoOpt/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

namespace {
/// Whether `op`, or an op nested in its regions, issues communication: a
/// collective or an exchange, synchronous or started (a wait issues none).
bool issuesCommunication(Operation *op) {
  return op
      ->walk([](Operation *nested) {
        return communicates(nested) && !isa<WaitOp>(nested)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether `op` may run earlier than where it stands (opsToHoist checks the
/// ops it would pass): it writes no memory, holds no region and is no
/// collective, start or wait.
bool isMovable(Operation *op) {
  return isMemoryEffectFree(op) && op->getNumRegions() == 0 &&
         !op->hasTrait<OpTrait::IsTerminator>() && !communicates(op);
}

/// The ops after `wait`, up to the next op that issues communication (with
/// `pastCommunication`, to the end of the block, passing such ops), that
/// can run before it: movable, every operand defined above the wait or by
/// an op in the list, and, for a lookup, no op it passes writing its
/// table's rows. In program order.
SmallVector<Operation *> opsToHoist(WaitOp wait,
                                    bool pastCommunication = false) {
  SmallVector<Operation *> hoisted;
  // The ops that stay between the wait and the op looked at.
  SmallVector<Operation *> passed = {wait};
  llvm::SmallPtrSet<Operation *, 16> passedSet = {wait};
  for (Operation *op = wait->getNextNode();
       op && !op->hasTrait<OpTrait::IsTerminator>() &&
       (pastCommunication || !issuesCommunication(op));
       op = op->getNextNode()) {
    bool ready =
        isMovable(op) && llvm::none_of(op->getOperands(), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return def && passedSet.contains(def);
        });
    if (ready)
      if (FlatSymbolRefAttr table = tableRowsOf(op))
        ready = llvm::none_of(passed, [&](Operation *stays) {
          return mayWriteRowsOf(stays, table);
        });
    if (ready) {
      hoisted.push_back(op);
    } else {
      passed.push_back(op);
      passedSet.insert(op);
    }
  }
  return hoisted;
}

/// Moves opsToHoist(wait, pastCommunication) above `wait`; whether there
/// were any.
bool hoistAbove(WaitOp wait, bool pastCommunication = false) {
  SmallVector<Operation *> ops = opsToHoist(wait, pastCommunication);
  for (Operation *op : ops)
    op->moveBefore(wait);
  return !ops.empty();
}

/// Whether `op` is one the simulator prices as taking no time: scalar or
/// index arithmetic (no tensor result) and views of a tensor. Moving only
/// such ops cannot make a program faster.
bool isFree(Operation *op) {
  return llvm::none_of(op->getResultTypes(), llvm::IsaPred<TensorType>) ||
         isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
             tensor::CollapseShapeOp, tensor::CastOp>(op);
}

/// The positions in `block` of the waits with work to hoist above them,
/// from past later communication too (not free work only: each candidate
/// costs simulations).
SmallVector<int64_t> candidatePositions(Block &block) {
  SmallVector<int64_t> positions;
  for (auto [index, op] : llvm::enumerate(block))
    if (auto wait = dyn_cast<WaitOp>(op);
        wait && !llvm::all_of(opsToHoist(wait, /*pastCommunication=*/true),
                              isFree))
      positions.push_back(index);
  return positions;
}

struct BraidFillWaitsPass
    : braid::impl::BraidFillWaitsPassBase<BraidFillWaitsPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<ProgramPredictor> predictor = ProgramPredictor::forModule(module);
    if (failed(predictor))
      return signalPassFailure();
    for (func::FuncOp func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      // Two alternatives per wait: this wait alone, and this wait with
      // every later one. Filling one wait can delay a later collective's
      // start and expose it where filling the later wait too hides it
      // (test/CoOpt/fill_waits.mlir: the first wait alone slower, the
      // second alone no faster, both faster). The second alternative counts
      // as a change only where a later wait moves something, so that it is
      // not simulated when it is the first.
      // A third: this wait alone, with the work from past the collectives
      // that follow it too (a forward pass's data-parallel lookups left
      // after the pooled rows' exchange starts, run while the routed
      // indices are in theirs); those collectives then start after more
      // work, which the simulator weighs.
      auto alternativesAt = [&](int64_t position) {
        auto fill = [position](bool later,
                               bool pastCommunication) -> FunctionRewrite {
          return [=](func::FuncOp copy) -> FailureOr<bool> {
            auto first = dyn_cast<WaitOp>(opAt(copy, position));
            if (!first)
              return false;
            bool changed = hoistAbove(first, pastCommunication);
            if (!later)
              return changed;
            SmallVector<WaitOp> waits;
            for (Operation *op = first->getNextNode(); op;
                 op = op->getNextNode())
              if (auto wait = dyn_cast<WaitOp>(op))
                waits.push_back(wait);
            bool laterChanged = false;
            for (WaitOp wait : waits)
              laterChanged |= hoistAbove(wait);
            return laterChanged;
          };
        };
        SmallVector<FunctionRewrite> alternatives = {fill(false, false),
                                                     fill(true, false)};
        // Forced, the pass moves work up to the next communication only,
        // as documented for tests; past it only where the simulator says.
        if (!force)
          alternatives.push_back(fill(false, true));
        return alternatives;
      };
      if (failed(rewriteEachCandidate(
              func, *predictor, force,
              [](Block &block) { return candidatePositions(block); },
              alternativesAt,
              [&](int64_t, RewriteOutcome outcome) {
                ++(outcome == RewriteOutcome::applied ? numFilled
                                                      : numRejected);
              })))
        return signalPassFailure();
    }
  }
};
} // namespace
