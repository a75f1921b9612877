//===- Train.cpp - braid-run --reference --steps K ------------------------===//
//
// This file implements braid-run's training under the reference semantics:
// K steps of the global program on one batch (the inputs given or
// generated) with labels from `labels.npy` or a planted synthetic signal,
// printing each step's loss and dumping the trained weights, the optimizer
// state and the losses.
//
//===----------------------------------------------------------------------===//

#include "Train.h"

#include "RunSupport.h"

#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Dialect/Braid/IR/Optimizers.h"
#include "braid/Interp/BatchSplit.h"
#include "braid/Interp/Bindings.h"
#include "braid/Interp/Npy.h"
#include "braid/Interp/Training.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::interp;

static int fail(const llvm::Twine &message) { return failRun(message); }

/// The labels: `labels.npy` in the inputs directory, every element in
/// [0, 1]; or, without inputs, a signal planted in the dense features (a
/// sample is a click when its dense features sum above the batch's mean),
/// so that the loss visibly falls.
static FailureOr<HostTensor> loadLabels(func::FuncOp func,
                                        ArrayRef<HostTensor> args,
                                        StringRef inputsDir) {
  if (!inputsDir.empty()) {
    std::string path = joinPath(inputsDir, "labels.npy");
    llvm::Expected<HostTensor> labels = readNpy(path);
    if (!labels) {
      fail("training reads its labels from " + path + ": " +
           llvm::toString(labels.takeError()));
      return failure();
    }
    for (auto [index, value] : llvm::enumerate(labels->data))
      if (!(value >= 0 && value <= 1)) {
        std::string text;
        llvm::raw_string_ostream(text) << llvm::format("%g", value);
        fail(path + ": element " + llvm::Twine(index) + " is " + text +
             ", outside [0, 1]");
        return failure();
      }
    return *labels;
  }
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (getArgumentName(func, i) != "dense")
      continue;
    const HostTensor &dense = args[i];
    int64_t batch = dense.shape[0], width = dense.shape[1];
    std::vector<double> sums(batch, 0.0);
    double mean = 0;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t c = 0; c < width; ++c)
        sums[b] += dense.data[b * width + c];
      mean += sums[b] / double(batch);
    }
    HostTensor labels(ElementKind::f32, {batch});
    for (int64_t b = 0; b < batch; ++b)
      labels.data[b] = sums[b] > mean ? 1 : 0;
    return labels;
  }
  fail("synthetic labels are planted in the 'dense' input, which @" +
       func.getSymName() + " does not take; give --inputs DIR with "
       "labels.npy");
  return failure();
}

/// The dense optimizer state of argument `index` under the suffix's slot
/// (getDenseOptimizerStateSuffixes order: the first moment or sum, then the
/// second moment), or null while the optimizer has not written it.
static const HostTensor *getDenseState(const TrainingState &state,
                                       unsigned index, size_t slot) {
  const auto &moments = slot == 0 ? state.first : state.second;
  auto found = moments.find(index);
  return found == moments.end() || found->second.data.empty()
             ? nullptr
             : &found->second;
}

/// Prints the --json report of a training run.
static void printTrainingJson(func::FuncOp func, int64_t ranks, int64_t steps,
                              ArrayRef<double> losses) {
  llvm::json::Array lossArray;
  for (double loss : losses)
    lossArray.push_back(loss);
  llvm::outs() << llvm::json::Value(llvm::json::Object{
                      {"function", func.getSymName()},
                      {"ranks", ranks},
                      {"steps", steps},
                      {"losses", std::move(lossArray)},
                      {"loss", losses.back()}})
               << "\n";
}

/// Writes what training produced: the inputs and labels, the trained
/// weights, the optimizer state and the losses.
static llvm::Error dumpTraining(StringRef dir, func::FuncOp func,
                                const TableMap &tables,
                                ArrayRef<HostTensor> args,
                                const HostTensor &labels,
                                const TrainingState &state,
                                const TrainingConfig &config,
                                ArrayRef<double> losses,
                                int64_t maxDumpElements) {
  std::string inputs = joinPath(dir, "inputs"), weights = joinPath(dir, "weights"),
              stateDir = joinPath(dir, "state");
  if (llvm::Error error = writeNpy(joinPath(inputs, "labels.npy"), labels))
    return error;
  ArrayRef<StringRef> suffixes =
      getDenseOptimizerStateSuffixes(config.dense.type);
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name = getArgumentName(func, i);
    bool param = isParameter(func, i);
    if (llvm::Error error = writeNpy(
            joinPath(param ? weights : inputs, name + ".npy"), args[i]))
      return error;
    if (!param)
      continue;
    for (auto [slot, suffix] : llvm::enumerate(suffixes))
      if (const HostTensor *moment = getDenseState(state, i, slot))
        if (llvm::Error error = writeNpy(
                joinPath(stateDir, name + suffix.str() + ".npy"), *moment))
          return error;
  }
  bool rowwise = config.embedding.type == "rowwise_adagrad";
  bool adagrad = config.embedding.type == "adagrad" || rowwise;
  for (const auto &entry : tables) {
    const TableData &table = entry.second;
    llvm::Expected<bool> written =
        dumpTable(weights, entry.first(), table, maxDumpElements);
    if (!written)
      return written.takeError();
    if (!*written || !adagrad)
      continue;
    // Rows never looked up have a zero sum, as in a fresh optimizer.
    SmallVector<int64_t, 2> shape = {table.getNumRows()};
    if (!rowwise)
      shape.push_back(table.getDim());
    HostTensor sums(ElementKind::f32, shape);
    auto rows = state.rowState.find(entry.first());
    if (rows != state.rowState.end())
      for (const auto &[row, values] : rows->second)
        for (auto [c, value] : llvm::enumerate(values))
          sums.data[row * (rowwise ? 1 : table.getDim()) + c] = value;
    if (llvm::Error error =
            writeNpy(joinPath(stateDir, entry.first() + ".sum.npy"), sums))
      return error;
  }
  HostTensor lossTensor(ElementKind::f64, {int64_t(losses.size())});
  lossTensor.data.assign(losses.begin(), losses.end());
  return writeNpy(joinPath(dir, "losses.npy"), lossTensor);
}

int mlir::braid::runReferenceTraining(ModuleOp module, func::FuncOp func,
                                      TableMap &tables,
                                      std::vector<HostTensor> args,
                                      const TrainOptions &options) {
  if (options.steps < 1 || options.steps > 1000000)
    return fail("--steps must be between 1 and 1000000, got " +
                llvm::Twine(options.steps));
  FailureOr<TrainingConfig> config = readTrainingConfig(module);
  if (failed(config))
    return 1;
  FailureOr<HostTensor> labels = loadLabels(func, args, options.inputsDir);
  if (failed(labels))
    return 1;
  TrainingState state;
  std::vector<double> losses;
  for (int64_t step = 0; step < options.steps; ++step) {
    FailureOr<double> loss =
        trainStep(func, args, tables, *labels, *config, state);
    if (failed(loss))
      return 1;
    losses.push_back(*loss);
    if (!options.json)
      llvm::outs() << llvm::format("step %lld: loss %.6f\n",
                                   static_cast<long long>(step + 1), *loss);
  }
  if (!options.dumpDir.empty())
    if (llvm::Error error =
            dumpTraining(options.dumpDir, func, tables, args, *labels, state,
                         *config, losses, options.maxDumpElements))
      return fail(llvm::toString(std::move(error)));
  if (options.json) {
    printTrainingJson(func, /*ranks=*/1, options.steps, losses);
  } else if (!options.dumpDir.empty()) {
    llvm::outs() << "wrote the trained weights, optimizer state and losses "
                    "to "
                 << options.dumpDir << "\n";
  }
  return 0;
}

/// The argument of `func` whose attribute `key` is `name`, if any.
static std::optional<unsigned> findArgument(func::FuncOp func, StringRef key,
                                            StringRef name) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto attr = func.getArgAttrOfType<StringAttr>(i, key))
      if (attr.getValue() == name)
        return i;
  return std::nullopt;
}

/// Compares the per-rank run with the global reference training step and
/// prints the largest relative error of each kind; true when all are within
/// the tolerance.
static bool checkTraining(const RankTraining &run,
                          ArrayRef<double> rankLosses,
                          ArrayRef<double> globalLosses,
                          ArrayRef<HostTensor> rankArgs,
                          ArrayRef<HostTensor> globalArgs,
                          const TableMap &rankTables,
                          const TableMap &globalTables,
                          const EmbeddingState &rankState,
                          const TrainingState &globalState,
                          const TrainingConfig &config, bool json) {
  double lossError = 0, weightError = 0, tableError = 0, stateError = 0;
  for (auto [actual, expected] : llvm::zip(rankLosses, globalLosses))
    lossError = std::max(lossError, std::abs(actual - expected) /
                                        std::max(std::abs(expected), 1e-30));
  func::FuncOp global = run.globalFunc, train = run.trainStep;
  for (unsigned i = 0; i < global.getNumArguments(); ++i) {
    if (!isParameter(global, i))
      continue;
    std::string name = getArgumentName(global, i);
    std::optional<unsigned> mine =
        findArgument(train, BraidDialect::kParamAttrName, name);
    if (!mine)
      return fail("check failed: @train_step has no parameter '" + name +
                  "'") == 0;
    weightError =
        std::max(weightError, relativeError(rankArgs[*mine], globalArgs[i]));
    // Dense optimizer state, zero in the oracle until it is written.
    for (auto [slot, suffix] :
         llvm::enumerate(getDenseOptimizerStateSuffixes(config.dense.type))) {
      std::optional<unsigned> mine =
          findArgument(train, BraidDialect::kStateAttrName, name + suffix.str());
      if (!mine)
        return fail("check failed: @train_step has no state '" + name +
                    suffix.str() + "'") == 0;
      HostTensor expected = rankArgs[*mine];
      if (const HostTensor *moment = getDenseState(globalState, i, slot))
        expected = *moment;
      else
        std::fill(expected.data.begin(), expected.data.end(), 0.0);
      stateError =
          std::max(stateError, relativeError(rankArgs[*mine], expected));
    }
  }
  for (const auto &entry : globalTables) {
    auto mine = rankTables.find(entry.first());
    if (mine == rankTables.end())
      return fail("check failed: no table '" + entry.first() + "'") == 0;
    tableError = std::max(tableError,
                          relativeError(mine->second.materialize(),
                                        entry.second.materialize()));
    auto expectedRows = globalState.rowState.find(entry.first());
    auto actualRows = rankState.find(entry.first());
    size_t expectedCount =
        expectedRows == globalState.rowState.end() ? 0
                                                   : expectedRows->second.size();
    size_t actualCount =
        actualRows == rankState.end() ? 0 : actualRows->second.size();
    if (expectedCount != actualCount) {
      stateError = std::numeric_limits<double>::infinity();
      continue;
    }
    if (!expectedCount)
      continue;
    for (const auto &[row, expected] : expectedRows->second) {
      auto actual = actualRows->second.find(row);
      if (actual == actualRows->second.end() ||
          actual->second.size() != expected.size()) {
        stateError = std::numeric_limits<double>::infinity();
        continue;
      }
      for (auto [a, e] : llvm::zip(actual->second, expected))
        stateError = std::max(stateError,
                              std::abs(a - e) / std::max(std::abs(e), 1e-12));
    }
  }
  double worst = std::max({lossError, weightError, tableError, stateError});
  bool ok = worst <= run.tolerance;
  (json ? llvm::errs() : llvm::outs())
      << llvm::format("check against the global training step: max relative "
                      "error: losses %.3g, weights %.3g, tables %.3g, "
                      "optimizer state %.3g (tolerance %.3g): %s\n",
                      lossError, weightError, tableError, stateError,
                      run.tolerance, ok ? "ok" : "FAILED");
  return ok;
}

int mlir::braid::runRankTraining(RankTraining &run,
                                 const TrainOptions &options) {
  if (options.steps < 1 || options.steps > 1000000)
    return fail("--steps must be between 1 and 1000000, got " +
                llvm::Twine(options.steps));
  if (!options.dumpDir.empty())
    return fail("--dump of a per-rank training run is not supported yet; "
                "train the global program (a .mlir with --reference) to "
                "dump weights and state");
  FailureOr<TrainingConfig> config = readTrainingConfig(run.globalModule);
  if (failed(config))
    return 1;
  FailureOr<HostTensor> labels =
      loadLabels(run.globalFunc, run.globalArgs, options.inputsDir);
  if (failed(labels))
    return 1;
  int64_t total = 0;
  for (int64_t rows : run.batchSplit)
    total += rows;
  if (labels->getRank() != 1 || labels->shape[0] != total)
    return fail("the labels are " + labels->describeType() +
                " but the global batch has " + llvm::Twine(total) + " rows");

  // Each rank's arguments: its forward arguments, its labels, the step and
  // zero optimizer state.
  func::FuncOp train = run.trainStep;
  unsigned numForwardArgs = run.rankArgs.front().size();
  if (train.getNumArguments() < numForwardArgs + 2)
    return fail("@train_step takes fewer arguments than @forward");
  RankValues args = run.rankArgs;
  int64_t offset = 0;
  for (auto [rank, rows] : llvm::enumerate(run.batchSplit)) {
    std::vector<HostTensor> &mine = args[rank];
    mine.push_back(labels->slice(0, offset, rows));
    offset += rows;
    mine.emplace_back(ElementKind::i64, ArrayRef<int64_t>{});
    for (unsigned i = numForwardArgs + 2; i < train.getNumArguments(); ++i) {
      auto type = cast<RankedTensorType>(train.getArgumentTypes()[i]);
      mine.emplace_back(*getElementKind(type.getElementType()),
                        type.getShape());
    }
  }
  // Where each result goes back: the argument named like it.
  SmallVector<std::optional<unsigned>> feedback;
  for (unsigned r = 0; r < train.getNumResults(); ++r) {
    std::optional<unsigned> target;
    for (StringRef key :
         {BraidDialect::kParamAttrName, BraidDialect::kStateAttrName})
      if (auto name = train.getResultAttrOfType<StringAttr>(r, key))
        target = findArgument(train, key, name.getValue());
    feedback.push_back(target);
  }

  TableMap tables = run.tables;
  EmbeddingState embeddingState;
  std::vector<double> losses;
  for (int64_t step = 1; step <= options.steps; ++step) {
    for (std::vector<HostTensor> &mine : args)
      mine[numForwardArgs + 1].data[0] = double(step);
    FailureOr<RankValues> results =
        runTrainingFunction(train, args, tables, embeddingState);
    if (failed(results))
      return 1;
    double loss = (*results)[0][0].data[0];
    for (auto [rank, rankResults] : llvm::enumerate(*results)) {
      if (rankResults[0].data[0] != loss)
        return fail("rank " + llvm::Twine(rank) +
                    "'s loss differs from rank 0's");
      for (auto [index, target] : llvm::enumerate(feedback))
        if (target)
          args[rank][*target] = std::move(rankResults[index]);
    }
    losses.push_back(loss);
    if (!options.json)
      llvm::outs() << llvm::format("step %lld: loss %.6f\n",
                                   static_cast<long long>(step), loss);
  }
  // Replicated parameters must agree on every rank.
  for (unsigned i = 0; i < numForwardArgs; ++i)
    for (size_t rank = 1; rank < args.size(); ++rank)
      if (train.getArgAttr(i, BraidDialect::kParamAttrName) &&
          args[rank][i].data != args[0][i].data)
        return fail("rank " + llvm::Twine(rank) + "'s parameter '" +
                    getArgumentName(train, i) + "' differs from rank 0's");
  if (options.json)
    printTrainingJson(train, args.size(), options.steps, losses);
  if (!run.check)
    return 0;

  std::vector<HostTensor> globalArgs = run.globalArgs;
  TableMap globalTables = run.tables;
  TrainingState globalState;
  std::vector<double> globalLosses;
  for (int64_t step = 0; step < options.steps; ++step) {
    FailureOr<double> loss = trainStep(run.globalFunc, globalArgs,
                                       globalTables, *labels, *config,
                                       globalState);
    if (failed(loss))
      return 1;
    globalLosses.push_back(*loss);
  }
  return checkTraining(run, losses, globalLosses, args[0], globalArgs, tables,
                       globalTables, embeddingState, globalState, *config,
                       options.json)
             ? 0
             : 1;
}
