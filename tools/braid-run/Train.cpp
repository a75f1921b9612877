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

#include "Pipelined.h"

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
#include <tuple>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::interp;

static int fail(const llvm::Twine &message) { return failRun(message); }

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

/// The optimizer state of `table` as a tensor: [rows] (rowwise_adagrad)
/// or [rows, dim] (adagrad), zero for rows never updated, as in a fresh
/// optimizer.
static HostTensor materializeRowState(
    const TableData &table,
    const llvm::DenseMap<int64_t, std::vector<double>> *rows, bool rowwise) {
  SmallVector<int64_t, 2> shape = {table.getNumRows()};
  if (!rowwise)
    shape.push_back(table.getDim());
  HostTensor sums(ElementKind::f32, shape);
  if (rows)
    for (const auto &[row, values] : *rows)
      for (auto [c, value] : llvm::enumerate(values))
        sums.data[row * (rowwise ? 1 : table.getDim()) + c] = value;
  return sums;
}

/// Whether the embedding optimizer keeps per-row state, and of which kind.
static bool hasTableState(const TrainingConfig &config) {
  return config.embedding.type == "adagrad" ||
         config.embedding.type == "rowwise_adagrad";
}

void mlir::braid::setTableStates(TrainedModel &model,
                                 const EmbeddingState &rowState,
                                 const TrainingConfig &config) {
  if (!hasTableState(config))
    return;
  bool rowwise = config.embedding.type == "rowwise_adagrad";
  for (const auto &entry : model.tables) {
    auto rows = rowState.find(entry.first());
    model.tableStates[entry.first().str()] = materializeRowState(
        entry.second, rows == rowState.end() ? nullptr : &rows->second,
        rowwise);
  }
}

/// What the global reference training produced, by name.
static TrainedModel describeGlobalTraining(func::FuncOp func,
                                           ArrayRef<HostTensor> args,
                                           const TableMap &tables,
                                           const TrainingState &state,
                                           const TrainingConfig &config,
                                           ArrayRef<double> losses) {
  TrainedModel model;
  model.losses.assign(losses.begin(), losses.end());
  ArrayRef<StringRef> suffixes =
      getDenseOptimizerStateSuffixes(config.dense.type);
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (!isParameter(func, i))
      continue;
    std::string name = getArgumentName(func, i);
    model.params[name] = args[i];
    // Zero until the optimizer first writes it.
    for (auto [slot, suffix] : llvm::enumerate(suffixes)) {
      HostTensor moment(ElementKind::f32, args[i].shape);
      if (const HostTensor *written = getDenseState(state, i, slot))
        moment = *written;
      model.states[name + suffix.str()] = std::move(moment);
    }
  }
  model.tables = tables;
  setTableStates(model, state.rowState, config);
  return model;
}

/// Prints the --json report of a training run; `stepMs` is negative where
/// steps were not timed (the reference semantics).
static void printTrainingJson(StringRef function, int64_t ranks,
                              double stepMs, const TrainedModel &model) {
  ArrayRef<double> losses = model.losses;
  llvm::json::Array lossArray;
  for (double loss : losses)
    lossArray.push_back(loss);
  llvm::json::Object report{{"function", function},
                            {"ranks", ranks},
                            {"steps", int64_t(losses.size())},
                            {"losses", std::move(lossArray)},
                            {"loss", losses.back()}};
  if (stepMs >= 0)
    report["step_ms"] = stepMs;
  if (!model.stepsMs.empty())
    report["steps_ms"] = llvm::json::Array(model.stepsMs);
  if (!model.opsMs.empty())
    report["ops_ms"] = opTimesJson(model.opsMs);
  for (const auto &[name, value] : model.metrics)
    report[name] = value;
  llvm::outs() << llvm::json::Value(std::move(report)) << "\n";
}

/// Writes a trained model: the weights under DIR/weights (the file names
/// --weights reads), the optimizer state under DIR/state and the losses as
/// DIR/losses.npy.
static llvm::Error dumpTrainedModel(StringRef dir, const TrainedModel &model,
                                    int64_t maxDumpElements) {
  std::string weights = joinPath(dir, "weights"),
              stateDir = joinPath(dir, "state");
  for (const auto &[name, value] : model.params)
    if (llvm::Error error = writeNpy(joinPath(weights, name + ".npy"), value))
      return error;
  for (const auto &[name, value] : model.states)
    if (llvm::Error error = writeNpy(joinPath(stateDir, name + ".npy"), value))
      return error;
  for (const auto &entry : model.tables) {
    llvm::Expected<bool> written =
        dumpTable(weights, entry.first(), entry.second, maxDumpElements);
    if (!written)
      return written.takeError();
    auto state = model.tableStates.find(entry.first().str());
    if (*written && state != model.tableStates.end())
      if (llvm::Error error = writeNpy(
              joinPath(stateDir, entry.first() + ".sum.npy"), state->second))
        return error;
  }
  HostTensor lossTensor(ElementKind::f64, {int64_t(model.losses.size())});
  lossTensor.data.assign(model.losses.begin(), model.losses.end());
  return writeNpy(joinPath(dir, "losses.npy"), lossTensor);
}

/// Writes the inputs and labels of a global training run's last batch
/// under DIR/inputs.
static llvm::Error dumpTrainingInputs(StringRef dir, func::FuncOp func,
                                      ArrayRef<HostTensor> args,
                                      const HostTensor &labels) {
  std::string inputs = joinPath(dir, "inputs");
  if (llvm::Error error = writeNpy(joinPath(inputs, "labels.npy"), labels))
    return error;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (!isParameter(func, i))
      if (llvm::Error error = writeNpy(
              joinPath(inputs, getArgumentName(func, i) + ".npy"), args[i]))
        return error;
  return llvm::Error::success();
}

/// The worst relative error of a comparison and what it was found in.
struct WorstError {
  double error = 0;
  std::string name;
  void update(double e, llvm::StringRef where) {
    if (e > error || (name.empty() && e == error)) {
      error = e;
      name = where.str();
    }
  }
};

/// The largest relative error between the values of `actual` and
/// `expected` under each name; infinity when a name is missing. `worst`
/// learns the name of the largest.
static double compareByName(const std::map<std::string, HostTensor> &actual,
                            const std::map<std::string, HostTensor> &expected,
                            std::string &missing, WorstError &worst) {
  double largest = 0;
  for (const auto &[name, value] : expected) {
    auto found = actual.find(name);
    if (found == actual.end()) {
      missing = name;
      return std::numeric_limits<double>::infinity();
    }
    double error = relativeError(found->second, value);
    largest = std::max(largest, error);
    worst.update(error, name);
  }
  return largest;
}

/// Compares a training run with the global reference training and prints
/// the largest relative error of each kind; true when all are within the
/// tolerance.
static bool checkTrainedModel(const TrainedModel &actual,
                              const TrainedModel &expected, double tolerance,
                              bool json) {
  double lossError = 0, tableError = 0;
  if (actual.losses.size() != expected.losses.size())
    lossError = std::numeric_limits<double>::infinity();
  for (auto [a, e] : llvm::zip(actual.losses, expected.losses))
    lossError = std::max(lossError,
                         std::abs(a - e) / std::max(std::abs(e), 1e-30));
  std::string missing;
  WorstError worstNamed;
  double weightError =
      compareByName(actual.params, expected.params, missing, worstNamed);
  double stateError = std::max(
      compareByName(actual.states, expected.states, missing, worstNamed),
      compareByName(actual.tableStates, expected.tableStates, missing,
                    worstNamed));
  for (const auto &entry : expected.tables) {
    auto mine = actual.tables.find(entry.first());
    if (mine == actual.tables.end()) {
      missing = entry.first().str();
      tableError = std::numeric_limits<double>::infinity();
      continue;
    }
    double error = relativeError(mine->second.materialize(),
                                 entry.second.materialize());
    tableError = std::max(tableError, error);
    worstNamed.update(error, entry.first());
  }
  if (!missing.empty())
    failRun("check: the run has no '" + missing + "'");
  double worst = std::max({lossError, weightError, tableError, stateError});
  bool ok = worst <= tolerance;
  (json ? llvm::errs() : llvm::outs())
      << llvm::format("check against the global training step: max relative "
                      "error: losses %.3g, weights %.3g, tables %.3g, "
                      "optimizer state %.3g (tolerance %.3g): %s\n",
                      lossError, weightError, tableError, stateError,
                      tolerance, ok ? "ok" : "FAILED");
  // Where a failing check is worst, to start looking.
  if (!ok && !worstNamed.name.empty() && worstNamed.error > tolerance)
    (json ? llvm::errs() : llvm::outs())
        << llvm::format("check: the largest error, %.3g, is in '%s'\n",
                        worstNamed.error, worstNamed.name.c_str());
  return ok;
}

int mlir::braid::finishTraining(const TrainedModel &actual,
                                StringRef function, int64_t ranks,
                                double stepMs, const TrainOptions &options,
                                const GlobalTraining *check) {
  if (options.json)
    printTrainingJson(function, ranks, stepMs, actual);
  if (!options.dumpDir.empty()) {
    if (llvm::Error error = dumpTrainedModel(options.dumpDir, actual,
                                             options.maxDumpElements))
      return fail(llvm::toString(std::move(error)));
    if (!options.json)
      llvm::outs() << "wrote the trained weights, optimizer state and losses "
                      "to "
                   << options.dumpDir << "\n";
  }
  if (!check)
    return 0;
  FailureOr<TrainingConfig> config = readTrainingConfig(check->module);
  if (failed(config))
    return 1;
  std::vector<HostTensor> args = check->args;
  TableMap tables = check->tables;
  TrainingState state;
  std::vector<double> losses;
  for (size_t step = 0; step < actual.losses.size(); ++step) {
    FailureOr<HostTensor> labels = options.batches->load(int64_t(step), args);
    if (failed(labels))
      return 1;
    FailureOr<double> loss =
        trainStep(check->func, args, tables, *labels, *config, state);
    if (failed(loss))
      return 1;
    losses.push_back(*loss);
  }
  TrainedModel expected =
      describeGlobalTraining(check->func, args, tables, state, *config, losses);
  return checkTrainedModel(actual, expected, check->tolerance, options.json)
             ? 0
             : 1;
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
  TrainingState state;
  std::vector<double> losses;
  HostTensor lastLabels;
  for (int64_t step = 0; step < options.steps; ++step) {
    FailureOr<HostTensor> labels = options.batches->load(step, args);
    if (failed(labels))
      return 1;
    lastLabels = *labels;
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
            dumpTrainingInputs(options.dumpDir, func, args, lastLabels))
      return fail(llvm::toString(std::move(error)));
  return finishTraining(
      describeGlobalTraining(func, args, tables, state, *config, losses),
      func.getSymName(), /*ranks=*/1, /*stepMs=*/-1, options,
      /*check=*/nullptr);
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

int mlir::braid::runRankTraining(RankTraining &run,
                                 const TrainOptions &options) {
  if (options.steps < 1 || options.steps > 1000000)
    return fail("--steps must be between 1 and 1000000, got " +
                llvm::Twine(options.steps));
  FailureOr<TrainingConfig> config = readTrainingConfig(run.globalModule);
  if (failed(config))
    return 1;
  // Each rank's arguments: its forward arguments, its labels, the step and
  // zero optimizer state.
  func::FuncOp train = run.trainStep;
  unsigned numForwardArgs = run.rankArgs.front().size();
  if (train.getNumArguments() < numForwardArgs + 2)
    return fail("@train_step takes fewer arguments than @forward");
  RankValues args = run.rankArgs;
  for (std::vector<HostTensor> &mine : args) {
    mine.emplace_back(); // the labels, per step
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

  TrainedModel model;
  model.tables = run.tables;
  EmbeddingState embeddingState;
  Signature perRank = describeFunction(train);
  perRank.arguments.resize(numForwardArgs);
  std::vector<HostTensor> globalArgs = run.globalArgs;
  // Step `step`'s batch (from 0), split by rank.
  auto splitBatch = [&](int64_t step, FailureOr<HostTensor> &labels)
      -> FailureOr<RankValues> {
    labels = options.batches->load(step, globalArgs);
    if (failed(labels))
      return failure();
    llvm::Expected<RankValues> split = splitGlobalArguments(
        describeFunction(run.globalFunc), globalArgs, perRank, run.batchSplit);
    if (!split) {
      fail(llvm::toString(split.takeError()));
      return failure();
    }
    return std::move(*split);
  };
  std::optional<PipelinedForm> form;
  if (run.pipelined) {
    FailureOr<PipelinedForm> found = PipelinedForm::of(train);
    if (failed(found))
      return 1;
    form = std::move(*found);
    if (!options.json)
      llvm::outs() << "pipelined: @" << form->step.getSymName()
                   << ", each step distributing the next batch's inputs (@"
                   << form->inputDist.getSymName() << " the first's)\n";
  }
  RankValues carried;
  FailureOr<HostTensor> labels = failure();
  FailureOr<RankValues> split = failure();
  for (int64_t step = 1; step <= options.steps; ++step) {
    // This step's batch, split by rank (after the first, the pipelined form
    // loaded it a step ahead); the parameters stay the ranks' own.
    if (!form || step == 1)
      split = splitBatch(step - 1, labels);
    if (failed(split))
      return 1;
    int64_t offset = 0;
    for (auto [rank, rows] : llvm::enumerate(run.batchSplit)) {
      std::vector<HostTensor> &mine = args[rank];
      for (unsigned i = 0; i < numForwardArgs; ++i)
        if (!isParameter(train, i))
          mine[i] = std::move((*split)[rank][i]);
      mine[numForwardArgs] = labels->slice(0, offset, rows);
      offset += rows;
      mine[numForwardArgs + 1].data[0] = double(step);
    }
    FailureOr<RankValues> results = failure();
    if (form) {
      // The next batch, whose inputs the pipelined form distributes (the
      // last step distributes one more batch than the run takes).
      FailureOr<HostTensor> nextLabels = failure();
      FailureOr<RankValues> next = splitBatch(step, nextLabels);
      if (failed(next))
        return 1;
      if (step == 1) {
        FailureOr<RankValues> first = form->start(args, model.tables);
        if (failed(first))
          return 1;
        carried = std::move(*first);
      }
      FailureOr<RankValues> call =
          form->callArgs(args, *next, std::move(carried));
      if (failed(call))
        return 1;
      results = runTrainingFunction(form->step, *call, model.tables,
                                    embeddingState);
      if (succeeded(results))
        carried = form->takeCarried(*results);
      split = std::move(next);
      labels = std::move(nextLabels);
    } else {
      results = runTrainingFunction(train, args, model.tables, embeddingState);
    }
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
    model.losses.push_back(loss);
    if (!options.json)
      llvm::outs() << llvm::format("step %lld: loss %.6f\n",
                                   static_cast<long long>(step), loss);
  }
  // Replicated parameters must agree on every rank.
  for (unsigned i = 0; i < numForwardArgs; ++i)
    for (size_t rank = 1; rank < args.size(); ++rank)
      if (train.getArgAttr(i, BraidDialect::kParamAttrName) &&
          !train.getArgAttr(i, BraidDialect::kParamShardAttrName) &&
          args[rank][i].data != args[0][i].data)
        return fail("rank " + llvm::Twine(rank) + "'s parameter '" +
                    getArgumentName(train, i) + "' differs from rank 0's");
  for (unsigned i = 0; i < train.getNumArguments(); ++i)
    for (auto [key, shardKey, target] :
         {std::tuple{BraidDialect::kParamAttrName,
                     BraidDialect::kParamShardAttrName, &model.params},
          std::tuple{BraidDialect::kStateAttrName,
                     BraidDialect::kStateShardAttrName, &model.states}}) {
      auto name = train.getArgAttrOfType<StringAttr>(i, key);
      if (!name)
        continue;
      auto groups = train.getArgAttrOfType<ReplicaGroupsAttr>(i, shardKey);
      if (!groups) {
        (*target)[name.getValue().str()] = args[0][i];
        continue;
      }
      // Stored as blocks: the blocks of rank 0's group, in order.
      std::vector<HostTensor> blocks;
      for (int64_t member : shardRanksOf(groups)) {
        if (member < 0 || member >= int64_t(args.size()))
          return fail("the sharded '" + name.getValue() + "' names rank " +
                      llvm::Twine(member) + " of " + llvm::Twine(args.size()));
        blocks.push_back(args[member][i]);
      }
      if (!blocks.empty())
        (*target)[name.getValue().str()] =
            HostTensor::concat(blocks, getShardDim(train, i));
    }
  setTableStates(model, embeddingState, *config);
  GlobalTraining global{run.globalModule, run.globalFunc, run.globalArgs,
                        run.tables, run.tolerance};
  return finishTraining(model, train.getSymName(), args.size(),
                        /*stepMs=*/-1, options,
                        run.check ? &global : nullptr);
}

