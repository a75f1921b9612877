//===- Pipelined.cpp - Running a pipelined form ---------------------------===//
//
// This file implements what braid-run needs to call a function's pipelined
// form (Pipelined.h).
//
//===----------------------------------------------------------------------===//

#include "Pipelined.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstring>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::interp;

/// The argument of `func` named `name` by `braid.input`.
static std::optional<unsigned> inputNamed(func::FuncOp func, StringAttr name) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, BraidDialect::kInputAttrName) == name)
      return i;
  return std::nullopt;
}

FailureOr<PipelinedForm> PipelinedForm::of(func::FuncOp func) {
  auto module = func->getParentOfType<ModuleOp>();
  PipelinedForm form;
  for (auto candidate : module.getOps<func::FuncOp>()) {
    auto of = candidate->getAttrOfType<FlatSymbolRefAttr>(
        BraidDialect::kPipelinedOfAttrName);
    if (of && of.getValue() == func.getSymName())
      form.step = candidate;
  }
  if (!form.step)
    return func.emitError()
           << "@" << func.getSymName()
           << " has no pipelined form: compile the model with braid-compile "
              "--pipeline-input-dist (the simulator adds it where it "
              "predicts a gain; braid-compile prints what it added)";
  auto distName = form.step->getAttrOfType<FlatSymbolRefAttr>(
      BraidDialect::kInputDistAttrName);
  form.inputDist =
      distName ? module.lookupSymbol<func::FuncOp>(distName) : func::FuncOp();
  if (!form.inputDist)
    return form.step.emitError() << "has no '"
                                 << BraidDialect::kInputDistAttrName
                                 << "' function";
  form.numArgs = func.getNumArguments();
  form.numResults = func.getNumResults();
  unsigned numCarried = form.inputDist.getNumResults();
  if (form.step.getNumArguments() < form.numArgs + numCarried ||
      form.step.getNumResults() != form.numResults + numCarried ||
      form.step.getArgumentTypes().take_front(form.numArgs) !=
          func.getArgumentTypes())
    return form.step.emitError()
           << "does not take @" << func.getSymName()
           << "'s arguments, next inputs and " << numCarried
           << " carried values, or does not return @" << func.getSymName()
           << "'s results and as many carried values";
  unsigned numNext = form.step.getNumArguments() - form.numArgs - numCarried;
  // The carried values come last, in the input distribution's order, and
  // carry its names: what a call returns is what the next call takes.
  for (unsigned i = 0; i < numCarried; ++i) {
    Attribute name = form.inputDist.getResultAttr(
        i, BraidDialect::kCarriedAttrName);
    unsigned arg = form.numArgs + numNext + i, result = form.numResults + i;
    if (!name ||
        form.step.getArgAttr(arg, BraidDialect::kCarriedAttrName) != name ||
        form.step.getResultAttr(result, BraidDialect::kCarriedAttrName) !=
            name ||
        form.step.getArgumentTypes()[arg] !=
            form.inputDist.getResultTypes()[i] ||
        form.step.getResultTypes()[result] !=
            form.inputDist.getResultTypes()[i])
      return form.step.emitError()
             << "argument " << arg << " and result " << result
             << " are not the carried value " << i << " of @"
             << form.inputDist.getSymName() << " (its name and type)";
  }
  if (form.step.getResultTypes().take_front(form.numResults) !=
      func.getResultTypes())
    return form.step.emitError()
           << "does not return @" << func.getSymName() << "'s results first";
  for (unsigned i = 0; i < numNext; ++i) {
    auto name = form.step.getArgAttrOfType<StringAttr>(
        form.numArgs + i, BraidDialect::kNextInputAttrName);
    std::optional<unsigned> from = name ? inputNamed(func, name) : std::nullopt;
    if (!from)
      return form.step.emitError()
             << "argument " << form.numArgs + i
             << " is no next input of an input of @" << func.getSymName();
    form.nextFrom.push_back(*from);
  }
  for (unsigned i = 0; i < form.inputDist.getNumArguments(); ++i) {
    auto name = form.inputDist.getArgAttrOfType<StringAttr>(
        i, BraidDialect::kInputAttrName);
    std::optional<unsigned> from = name ? inputNamed(func, name) : std::nullopt;
    if (!from)
      return form.inputDist.emitError()
             << "argument " << i << " is no input of @" << func.getSymName();
    form.distFrom.push_back(*from);
  }
  return form;
}

FailureOr<RankValues> PipelinedForm::start(const RankValues &args,
                                           const TableMap &tables) const {
  RankValues distArgs;
  for (const std::vector<HostTensor> &mine : args) {
    std::vector<HostTensor> &dist = distArgs.emplace_back();
    for (unsigned from : distFrom)
      dist.push_back(mine[from]);
  }
  return runFunction(inputDist, distArgs, tables);
}

FailureOr<RankValues> PipelinedForm::callArgs(const RankValues &args,
                                              const RankValues &next,
                                              RankValues carried) const {
  RankValues call;
  func::FuncOp stepFunc = step;
  for (auto [rank, mine] : llvm::enumerate(args)) {
    std::vector<HostTensor> &all = call.emplace_back(
        mine.begin(), mine.begin() + std::min<size_t>(numArgs, mine.size()));
    for (auto [index, from] : llvm::enumerate(nextFrom)) {
      if (rank >= next.size() || from >= next[rank].size())
        return stepFunc.emitError()
               << "argument " << numArgs + index
               << " takes a next batch's input this driver does not give "
                  "(only the forward pass's inputs are distributed ahead)";
      all.push_back(next[rank][from]);
    }
    for (HostTensor &value : carried[rank])
      all.push_back(std::move(value));
  }
  return call;
}

RankValues PipelinedForm::takeCarried(RankValues &results) const {
  RankValues carried;
  for (std::vector<HostTensor> &mine : results) {
    carried.emplace_back(std::make_move_iterator(mine.begin() + numResults),
                         std::make_move_iterator(mine.end()));
    mine.resize(numResults);
  }
  return carried;
}

FailureOr<RankValues>
PipelinedForm::runOnSameBatch(const RankValues &args,
                              const TableMap &tables) const {
  FailureOr<RankValues> carried = start(args, tables);
  if (failed(carried))
    return failure();
  FailureOr<RankValues> call = callArgs(args, args, *carried);
  if (failed(call))
    return failure();
  FailureOr<RankValues> results = runFunction(step, *call, tables);
  if (failed(results))
    return failure();
  RankValues next = takeCarried(*results);
  func::FuncOp stepFunc = step, distFunc = inputDist;
  for (auto [rank, mine] : llvm::enumerate(next))
    for (auto [index, value] : llvm::enumerate(mine))
      if (value.shape != (*carried)[rank][index].shape ||
          value.data.size() != (*carried)[rank][index].data.size() ||
          (!value.data.empty() &&
           std::memcmp(value.data.data(), (*carried)[rank][index].data.data(),
                       value.data.size() * sizeof(double)) != 0))
        return stepFunc.emitError()
               << "rank " << rank << "'s carried value " << index
               << " for the next batch differs from what @"
               << distFunc.getSymName() << " gives on the same batch";
  return results;
}
