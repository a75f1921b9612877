//===- Overlap.cpp - The braid-overlap pass -------------------------------===//
//
// This file implements braid-overlap: each synchronous collective of a
// per-rank function that a backend can start asynchronously is moved up to
// just after its input is computed, started there and waited for just
// before its result's first use, when the simulator predicts the whole
// program faster so.
//
//===----------------------------------------------------------------------===//

#include "braid/CoOpt/Passes.h"

#include "CoOptSupport.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDOVERLAPPASS
#include "braid/CoOpt/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

namespace {
/// The positions in `block` of its synchronous collectives that have a
/// start form, in program order.
SmallVector<int64_t> candidatePositions(Block &block) {
  SmallVector<int64_t> positions;
  for (auto [index, op] : llvm::enumerate(block))
    if (getStartFormName(&op))
      positions.push_back(index);
  return positions;
}

/// True when `op` may move later past the ops after it: it writes no
/// memory, or only the rows of tables it names; a writer of a table passes
/// nothing that touches the table's rows, a lookup no writer of them. The
/// tables of the ops in its regions count as its own.
bool canMoveLater(Operation *op) {
  bool writes = !isMemoryEffectFree(op);
  // Effects on memory that no table names (a call inside it) pin it.
  if (writes && mayWriteRowsOf(op, FlatSymbolRefAttr()))
    return false;
  SmallVector<FlatSymbolRefAttr, 2> tables;
  op->walk([&](Operation *nested) {
    if (FlatSymbolRefAttr table = tableRowsOf(nested);
        table && !llvm::is_contained(tables, table))
      tables.push_back(table);
  });
  if (tables.empty())
    return !writes;
  for (Operation *later = op->getNextNode(); later;
       later = later->getNextNode())
    for (FlatSymbolRefAttr table : tables)
      if ((writes && touchesRowsOf(later, table)) ||
          mayWriteRowsOf(later, table))
        return false;
  return true;
}

/// The ops that read `wait`'s result, directly or through each other, and
/// feed nothing but one another and the function's results (an optimizer
/// step and the unpacking before it, a table update): they can run at the
/// end of the block instead. In program order.
SmallVector<Operation *> sinkableUsers(WaitOp wait) {
  Block *block = wait->getBlock();
  Operation *terminator = block->getTerminator();
  // The ops after the wait that depend on it.
  llvm::SetVector<Operation *> dependent;
  dependent.insert(wait);
  for (Operation *op = wait->getNextNode(); op != terminator;
       op = op->getNextNode())
    if (llvm::any_of(op->getOperands(), [&](Value operand) {
          Operation *def = operand.getDefiningOp();
          return def && dependent.contains(def);
        }))
      dependent.insert(op);
  // From the last back: an op sinks when everything it feeds sinks or
  // returns.
  llvm::SmallPtrSet<Operation *, 16> sinks;
  for (Operation *op : llvm::reverse(dependent.getArrayRef().drop_front()))
    if (canMoveLater(op) && llvm::all_of(op->getUsers(), [&](Operation *user) {
          Operation *inBlock = block->findAncestorOpInBlock(*user);
          return inBlock == terminator || sinks.contains(inBlock);
        }))
      sinks.insert(op);
  SmallVector<Operation *> ordered;
  for (Operation *op : dependent)
    if (sinks.contains(op))
      ordered.push_back(op);
  return ordered;
}

/// Moves `op` up to just after the last of its operands' definitions in its
/// block (to the block's start when there is none). A lookup stops below
/// the last op before it that writes its table's rows (a training step's
/// update).
void hoistToOperands(Operation *op) {
  Block *block = op->getBlock();
  Operation *latest = nullptr;
  for (Value operand : op->getOperands())
    if (Operation *def = operand.getDefiningOp())
      if (Operation *inBlock = block->findAncestorOpInBlock(*def))
        if (!latest || latest->isBeforeInBlock(inBlock))
          latest = inBlock;
  if (FlatSymbolRefAttr table = tableRowsOf(op))
    for (Operation *earlier = op->getPrevNode();
         earlier && earlier != latest; earlier = earlier->getPrevNode())
      if (mayWriteRowsOf(earlier, table)) {
        latest = earlier;
        break;
      }
  if (latest)
    op->moveAfter(latest);
  else
    op->moveBefore(&block->front());
}

/// Starts the collective `op` just after its last operand is computed and
/// waits for it just before its result's first use. With `sinkUsers`, the
/// ops that only carry its result to the function's results (unpacking, an
/// optimizer step, a table update) move to the end of the block first, so
/// the computation before them runs beside the collective. Without it they
/// stay: a collective whose result a lookup reads early also feeds that
/// table's update, and sinking the update would only move it past the
/// work that hides the later exchanges. Returns false when `sinkUsers` is
/// off and there was nothing to sink: the variant with it is the same.
bool startEarly(Operation *op, bool hoistProducers, bool sinkUsers) {
  Block *block = op->getBlock();
  // With `hoistProducers`, what the collective reads is computed as early
  // as it can be: the pure ops it depends on move up to just after their
  // own operands (the routing of a lookup's indices goes before a bottom
  // MLP it does not need), and the collective follows them.
  llvm::SetVector<Operation *> slice;
  if (hoistProducers) {
    SmallVector<Operation *> worklist = {op};
    while (!worklist.empty())
      for (Value operand : worklist.pop_back_val()->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (Operation *inBlock = block->findAncestorOpInBlock(*def))
            if (slice.insert(inBlock))
              worklist.push_back(inBlock);
    SmallVector<Operation *> ordered(slice.begin(), slice.end());
    llvm::sort(ordered, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    for (Operation *producer : ordered)
      if (isMemoryEffectFree(producer) && producer->getNumRegions() == 0)
        hoistToOperands(producer);
  }
  hoistToOperands(op);
  StringRef startName = *getStartFormName(op);
  WaitOp wait = startCollective(op, startName);
  SmallVector<Operation *> sinks = sinkableUsers(wait);
  // Sunk in program order, so they keep their order at the end.
  if (sinkUsers)
    for (Operation *sink : sinks)
      sink->moveBefore(block->getTerminator());
  // A result nobody reads is waited for where it was started.
  if (Operation *firstUse = firstUserInBlock(wait.getOperation(), *block))
    wait->moveBefore(firstUse);
  return sinkUsers || !sinks.empty();
}

struct BraidOverlapPass : braid::impl::BraidOverlapPassBase<BraidOverlapPass> {
  using Base::Base;
  void runOnOperation() override {
    FailureOr<ProgramPredictor> predictor =
        ProgramPredictor::forModule(getOperation());
    if (failed(predictor))
      return signalPassFailure();
    SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      // One collective at a time, in program order; a started one leaves
      // the candidates. Started right after its input, or with its input's
      // pure producers hoisted too, and (with keep-readers) with the
      // readers that only carry its result to the function's results left
      // where they are instead of sunk: the simulator keeps the fastest.
      auto alternativesAt = [this](int64_t position) {
        auto startAt = [position](bool hoistProducers,
                                  bool sinkUsers) -> FunctionRewrite {
          return [=](func::FuncOp copy) -> FailureOr<bool> {
            return startEarly(opAt(copy, position), hoistProducers, sinkUsers);
          };
        };
        SmallVector<FunctionRewrite> alternatives = {startAt(false, true),
                                                     startAt(true, true)};
        if (keepReaders)
          alternatives.append({startAt(false, false), startAt(true, false)});
        return alternatives;
      };
      if (failed(rewriteEachCandidate(
              func, *predictor, force,
              [](Block &block) { return candidatePositions(block); },
              alternativesAt, [&](int64_t, RewriteOutcome outcome) {
                ++(outcome == RewriteOutcome::applied ? numStarted
                                                      : numRejected);
              })))
        return signalPassFailure();
    }
  }
};
} // namespace
