//===- PipelineInputDist.cpp - The next batch's input distribution --------===//
//
// This file implements braid-pipeline-input-dist: for a per-rank function
// whose routed indices wait in exchanges that nothing else can hide, it
// adds a pipelined form that runs the next batch's input distribution
// (routing and exchanges) inside this step, and the function that computes
// the first batch's (include/braid/CoOpt/Passes.td says how a driver calls
// them). The input distribution depends on the batch alone, so running it
// a step early gives the same values.
//
//===----------------------------------------------------------------------===//

#include "braid/CoOpt/Passes.h"

#include "CoOptSupport.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDPIPELINEINPUTDISTPASS
#include "braid/CoOpt/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

namespace {

/// A function's input distribution: the ops that depend on its batch
/// inputs alone and feed the wait of an exchange started on them.
struct InputDistribution {
  /// The ops, in block order.
  SmallVector<Operation *> ops;
  /// The batch inputs they read, in argument order.
  SmallVector<BlockArgument> inputs;
  /// The values of non-scalar ops among them that the rest of the function
  /// reads, in block order: what the pipelined form carries.
  SmallVector<Value> carried;
};

/// Whether `op` starts a collective (it gives a token).
bool isStart(Operation *op) {
  return communicates(op) &&
         llvm::any_of(op->getResultTypes(), llvm::IsaPred<TokenType>);
}

/// Whether `op` computes only scalars, which the pipelined form recomputes
/// instead of carrying (constants, braid.rank and index arithmetic).
bool isScalarWork(Operation *op) {
  return isMemoryEffectFree(op) && op->getNumRegions() == 0 &&
         llvm::none_of(op->getResultTypes(),
                       llvm::IsaPred<ShapedType, TokenType>);
}

/// The input distribution of `func`, or std::nullopt when it has none (no
/// exchange started on its batch inputs alone) or carries a token.
std::optional<InputDistribution> findInputDistribution(func::FuncOp func) {
  Block &body = func.getBody().front();
  llvm::DenseSet<Value> batchOnly;
  // The batch's inputs: not a training step's number (braid-differentiate's
  // `step` input), which is no batch data.
  for (BlockArgument arg : body.getArguments())
    if (auto name = func.getArgAttrOfType<StringAttr>(
            arg.getArgNumber(), BraidDialect::kInputAttrName);
        name && name.getValue() != "step")
      batchOnly.insert(arg);
  SmallVector<WaitOp> roots;
  for (Operation &op : body.without_terminator()) {
    // Never a lookup: a table's rows are no batch input (a training step
    // updates them, and the next batch must read them updated).
    bool movable =
        op.getNumRegions() == 0 && !tableRowsOf(&op) &&
        (isStart(&op) || isa<WaitOp>(op) ||
         (!communicates(&op) && isMemoryEffectFree(&op)));
    if (!movable || !llvm::all_of(op.getOperands(), [&](Value v) {
          return batchOnly.contains(v);
        }))
      continue;
    batchOnly.insert(op.result_begin(), op.result_end());
    if (auto wait = dyn_cast<WaitOp>(op))
      roots.push_back(wait);
  }
  if (roots.empty())
    return std::nullopt;
  // What the waits need, and nothing else.
  llvm::SmallPtrSet<Operation *, 32> needed;
  SmallVector<Operation *> worklist(roots.begin(), roots.end());
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!needed.insert(op).second)
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
  }
  InputDistribution dist;
  for (Operation &op : body.without_terminator())
    if (needed.contains(&op))
      dist.ops.push_back(&op);
  for (BlockArgument arg : body.getArguments())
    if (llvm::any_of(arg.getUsers(),
                     [&](Operation *user) { return needed.contains(user); }))
      dist.inputs.push_back(arg);
  // The scalar work the rest of the function reads too, which stays in the
  // pipelined form (directly, or through scalar work that stays).
  llvm::SmallPtrSet<Operation *, 16> keptScalars;
  for (Operation *op : llvm::reverse(dist.ops))
    if (isScalarWork(op) &&
        llvm::any_of(op->getUsers(), [&](Operation *user) {
          return !needed.contains(user) || keptScalars.contains(user);
        }))
      keptScalars.insert(op);
  for (Operation *op : dist.ops) {
    if (isScalarWork(op))
      continue;
    for (Value result : op->getResults()) {
      bool readElsewhere = llvm::any_of(result.getUsers(), [&](Operation *u) {
        return !needed.contains(u) || keptScalars.contains(u);
      });
      if (!readElsewhere)
        continue;
      if (isa<TokenType>(result.getType()))
        return std::nullopt;
      dist.carried.push_back(result);
    }
  }
  return dist;
}

/// Copies `from`'s attribute `fromName` of argument `index` to `to`'s
/// argument `toIndex` as `toName`.
void copyArgAttr(func::FuncOp from, unsigned index, StringRef fromName,
                 func::FuncOp to, unsigned toIndex, StringRef toName) {
  if (Attribute attr = from.getArgAttr(index, fromName))
    to.setArgAttr(toIndex, toName, attr);
}

std::string carriedName(size_t index) {
  return "carried." + std::to_string(index);
}

/// Adds `@<func>_input_dist`: `dist` alone, from the inputs it reads to
/// the values it carries.
func::FuncOp addInputDistFunction(func::FuncOp func,
                                  const InputDistribution &dist,
                                  SymbolTable &symbols) {
  OpBuilder builder(func);
  builder.setInsertionPointAfter(func);
  SmallVector<Type> inputTypes, carriedTypes;
  for (BlockArgument arg : dist.inputs)
    inputTypes.push_back(arg.getType());
  for (Value value : dist.carried)
    carriedTypes.push_back(value.getType());
  auto fn = func::FuncOp::create(
      builder, func.getLoc(), (func.getSymName() + "_input_dist").str(),
      builder.getFunctionType(inputTypes, carriedTypes));
  symbols.insert(fn);
  Block *entry = fn.addEntryBlock();
  IRMapping mapping;
  for (auto [index, arg] : llvm::enumerate(dist.inputs)) {
    mapping.map(arg, entry->getArgument(index));
    copyArgAttr(func, arg.getArgNumber(), BraidDialect::kInputAttrName, fn,
                index, BraidDialect::kInputAttrName);
  }
  builder.setInsertionPointToStart(entry);
  for (Operation *op : dist.ops)
    builder.clone(*op, mapping);
  SmallVector<Value> results;
  for (auto [index, value] : llvm::enumerate(dist.carried)) {
    results.push_back(mapping.lookup(value));
    fn.setResultAttr(index, BraidDialect::kCarriedAttrName,
                     builder.getStringAttr(carriedName(index)));
  }
  func::ReturnOp::create(builder, func.getLoc(), results);
  return fn;
}

/// Adds `@<func>_pipelined` without the next batch's input distribution:
/// `func`'s arguments, then the next batch's inputs, then the carried
/// values, which replace the input distribution's; it returns `func`'s
/// results and (for now) the carried arguments.
func::FuncOp addPipelinedBase(func::FuncOp func, const InputDistribution &dist,
                              func::FuncOp inputDist, SymbolTable &symbols) {
  OpBuilder builder(func);
  builder.setInsertionPointAfter(inputDist);
  auto fn = cast<func::FuncOp>(builder.clone(*func));
  fn.setSymName((func.getSymName() + "_pipelined").str());
  symbols.insert(fn);
  fn->setAttr(BraidDialect::kPipelinedOfAttrName,
              FlatSymbolRefAttr::get(func.getSymNameAttr()));
  fn->setAttr(BraidDialect::kInputDistAttrName,
              FlatSymbolRefAttr::get(inputDist.getSymNameAttr()));
  // The clone's ops by position.
  Block &body = fn.getBody().front();
  llvm::DenseMap<Operation *, Operation *> cloned;
  for (auto [original, copy] :
       llvm::zip(func.getBody().front().getOperations(), body.getOperations()))
    cloned[&original] = &copy;
  unsigned numArgs = fn.getNumArguments();
  for (auto [index, arg] : llvm::enumerate(dist.inputs)) {
    unsigned at = numArgs + index;
    (void)fn.insertArgument(at, arg.getType(), {}, arg.getLoc());
    copyArgAttr(func, arg.getArgNumber(), BraidDialect::kInputAttrName, fn, at,
                BraidDialect::kNextInputAttrName);
  }
  numArgs = fn.getNumArguments();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  unsigned numResults = fn.getNumResults();
  SmallVector<Value> carriedArgs;
  for (auto [index, value] : llvm::enumerate(dist.carried)) {
    unsigned at = numArgs + index;
    (void)fn.insertArgument(at, value.getType(), {}, value.getLoc());
    StringAttr name = builder.getStringAttr(carriedName(index));
    fn.setArgAttr(at, BraidDialect::kCarriedAttrName, name);
    BlockArgument carried = fn.getArgument(at);
    carriedArgs.push_back(carried);
    auto result = cast<OpResult>(value);
    Value copy = cloned.lookup(result.getOwner())->getResult(
        result.getResultNumber());
    copy.replaceAllUsesWith(carried);
  }
  // Its results: the function's, then the carried values (the next
  // batch's, once addNextBatch has placed it).
  ret->insertOperands(ret->getNumOperands(), carriedArgs);
  for (auto [index, carried] : llvm::enumerate(carriedArgs))
    (void)fn.insertResult(
        numResults + index, carried.getType(),
        builder.getDictionaryAttr(builder.getNamedAttr(
            BraidDialect::kCarriedAttrName,
            builder.getStringAttr(carriedName(index)))));
  // The input distribution's non-scalar ops are dead now; erase them from
  // the last.
  for (Operation *op : llvm::reverse(dist.ops)) {
    Operation *copy = cloned.lookup(op);
    if (copy->use_empty())
      copy->erase();
  }
  return fn;
}

/// The waits of `fn`'s body, in order: where the next batch's starts may go
/// (after one of them, or at the top).
SmallVector<WaitOp> waitsOf(func::FuncOp fn) {
  return llvm::to_vector(fn.getBody().front().getOps<WaitOp>());
}

/// Places the next batch's input distribution in `fn` (addPipelinedBase's
/// form): its ops up to the waits after the `after`-th wait of the body
/// (-1: at the top), the waits and what reads them before the return, and
/// returns the next batch's carried values instead of this batch's.
void addNextBatch(func::FuncOp fn, const InputDistribution &dist,
                  int64_t after) {
  Block &body = fn.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  unsigned numCarried = dist.carried.size();
  unsigned firstNext = fn.getNumArguments() - numCarried - dist.inputs.size();
  IRMapping mapping;
  for (auto [index, arg] : llvm::enumerate(dist.inputs))
    mapping.map(arg, fn.getArgument(firstNext + index));
  OpBuilder builder(fn.getContext());
  if (after < 0)
    builder.setInsertionPointToStart(&body);
  else
    builder.setInsertionPointAfter(waitsOf(fn)[after]);
  // The waits, and what reads them, go last.
  llvm::SmallPtrSet<Operation *, 16> late;
  SmallVector<Operation *> lateOps;
  for (Operation *op : dist.ops) {
    bool readsLate = llvm::any_of(op->getOperands(), [&](Value v) {
      return v.getDefiningOp() && late.contains(v.getDefiningOp());
    });
    if (isa<WaitOp>(op) || readsLate) {
      late.insert(op);
      lateOps.push_back(op);
      continue;
    }
    builder.clone(*op, mapping);
  }
  builder.setInsertionPoint(ret);
  for (Operation *op : lateOps)
    builder.clone(*op, mapping);
  unsigned firstCarried = ret.getNumOperands() - numCarried;
  for (auto [index, value] : llvm::enumerate(dist.carried))
    ret->setOperand(firstCarried + index, mapping.lookup(value));
}

/// The least share of a function's predicted time its pipelined form must
/// save to be added.
constexpr double kMinGain = 1e-3;

struct BraidPipelineInputDistPass
    : braid::impl::BraidPipelineInputDistPassBase<BraidPipelineInputDistPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<ProgramPredictor> predictor = ProgramPredictor::forModule(module);
    if (failed(predictor))
      return signalPassFailure();
    if (!force && !predictor->hasCluster())
      return;
    SymbolTable symbols(module);
    for (func::FuncOp func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      // Not a pipelined form or an input distribution function, nor a
      // function that has its pipelined form already; one block (a return
      // to put the next batch's carried values in).
      bool pipelinedAlready =
          llvm::any_of(module.getOps<func::FuncOp>(), [&](func::FuncOp f) {
            auto of = f->getAttrOfType<FlatSymbolRefAttr>(
                BraidDialect::kPipelinedOfAttrName);
            return of && of.getValue() == func.getSymName();
          });
      if (func.isExternal() || !llvm::hasSingleElement(func.getBody()) ||
          !isa<func::ReturnOp>(func.getBody().front().getTerminator()) ||
          isPipelineCompanion(func) || pipelinedAlready)
        continue;
      std::optional<InputDistribution> dist = findInputDistribution(func);
      if (!dist)
        continue;
      func::FuncOp inputDist = addInputDistFunction(func, *dist, symbols);
      func::FuncOp base = addPipelinedBase(func, *dist, inputDist, symbols);
      // The next batch's starts at the top or after one of the waits,
      // whichever the simulator predicts fastest; forced, at the top.
      int64_t best = -1;
      std::optional<double> bestUs;
      int64_t numWaits = force ? -1 : int64_t(waitsOf(base).size());
      for (int64_t after = -1; after < numWaits; ++after) {
        FailureOr<double> us =
            predictVariantUs(base, *predictor, [&](func::FuncOp candidate) {
              addNextBatch(candidate, *dist, after);
            });
        if (failed(us))
          return signalPassFailure();
        if (!bestUs || *us < *bestUs) {
          bestUs = *us;
          best = after;
        }
      }
      if (!force) {
        FailureOr<double> originalUs = predictor->predictUs(func);
        if (failed(originalUs))
          return signalPassFailure();
        // A second entry point and a driver that carries values between
        // calls are worth a measurable gain only (kMinGain), not the
        // simulator's rounding.
        if (!(*bestUs < *originalUs * (1 - kMinGain))) {
          symbols.erase(base);
          symbols.erase(inputDist);
          ++numRejected;
          continue;
        }
      }
      addNextBatch(base, *dist, best);
      ++numPipelined;
    }
  }
};
} // namespace
