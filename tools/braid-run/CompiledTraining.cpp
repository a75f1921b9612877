//===- CompiledTraining.cpp - braid-run OUT --steps K ---------------------===//
//
// This file implements braid-run's training with a compiled training step
// (braid-compile --train --target cpu): each rank stages its share of the
// batch, its labels, its table slices and zero optimizer state once, then
// calls the step K times. The step updates the tables and their state in
// place; the parameters and their dense state come back as results and
// are staged again for the next step. Afterwards the ranks' slices are
// gathered to rank 0 for --dump and --check.
//
//===----------------------------------------------------------------------===//

#include "CompiledTraining.h"

#include "RunSupport.h"

#include "braidrt/braidrt.h"

#include "braid/Interp/BatchSplit.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

#include <sys/resource.h>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::interp;

static int fail(const llvm::Twine &message) { return failRun(message); }

/// This process's peak resident set so far, in MiB.
static double peakResidentMiB() {
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
  return double(usage.ru_maxrss) / 1024; // kilobytes on Linux
}

/// The optimizer state a rank starts from for argument `index`: zeros of
/// its static shape ("state") or of its table slice ("table_state").
static llvm::Expected<HostTensor> zeroState(const NativeProgram &program,
                                            size_t index, int64_t rank) {
  const NativeProgram::Argument &argument = program.getArguments()[index];
  if (argument.kind == "state") {
    for (int64_t size : argument.shape)
      if (size < 0)
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "the state '" + argument.name +
                                           "' has a dynamic shape");
    return HostTensor(ElementKind::f32, argument.shape);
  }
  llvm::Expected<braidrt_table_slice> slice =
      program.getTableSlice(index, rank);
  if (!slice)
    return slice.takeError();
  SmallVector<int64_t, 2> shape = {slice->rows};
  if (argument.shape.size() == 2)
    shape.push_back(slice->cols);
  return HostTensor(ElementKind::f32, shape);
}

namespace {
/// Where a rank's per-step arguments are in the manifest: the step, the
/// labels, and the batch's inputs (by position in the rank's forward
/// arguments); a pipelined form's next batch's inputs (by name) and
/// carried values.
struct StepArguments {
  size_t step = 0, labels = 0;
  SmallVector<std::pair<size_t, size_t>> inputs;
  SmallVector<std::pair<size_t, std::string>> nextInputs;
  SmallVector<size_t> carried;
};
} // namespace

/// Stages rank `rank`'s tables and zero optimizer state, and its
/// parameters from `rankArgs`, in manifest order; returns where the
/// per-step arguments go.
static llvm::Expected<StepArguments>
stageRank(NativeProgram &program, const CompiledTraining &run,
          ArrayRef<HostTensor> rankArgs, int64_t rank) {
  StepArguments where;
  size_t next = 0;
  std::optional<size_t> step, labels;
  for (auto [index, argument] : llvm::enumerate(program.getArguments())) {
    NativeProgram::ArgumentValue value;
    if (argument.kind == "input" && argument.name == "labels") {
      labels = index;
      continue;
    }
    if (argument.kind == "input" && argument.name == "step") {
      step = index;
      continue;
    }
    if (argument.kind == "input") {
      where.inputs.push_back({index, next++});
      continue;
    }
    if (argument.kind == "next_input") {
      where.nextInputs.push_back({index, argument.name});
      continue;
    }
    if (argument.kind == "carried") {
      where.carried.push_back(index);
      continue;
    }
    if (argument.kind == "table") {
      llvm::Expected<NativeProgram::TableSlice> table =
          tableArgument(program, run.tables, index, rank);
      if (!table)
        return table.takeError();
      value = *table;
    } else if (argument.kind == "state" || argument.kind == "table_state") {
      llvm::Expected<HostTensor> zeros = zeroState(program, index, rank);
      if (!zeros)
        return zeros.takeError();
      value = std::move(*zeros);
    } else {
      if (next >= rankArgs.size())
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "too few arguments for the program");
      value = rankArgs[next++];
    }
    if (llvm::Error error = program.bindOne(index, value))
      return std::move(error);
  }
  if (!step || !labels)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the training step takes no 'step' or no "
                                   "'labels'");
  where.step = *step;
  where.labels = *labels;
  return where;
}

/// Writes rank `rank`'s slice `part` of table or state argument `index`
/// into the global `model` on rank 0.
static llvm::Error placeSlice(const NativeProgram &program, size_t index,
                              int64_t rank, const HostTensor &part,
                              TrainedModel &model) {
  const NativeProgram::Argument &argument = program.getArguments()[index];
  llvm::Expected<braidrt_table_slice> slice =
      program.getTableSlice(index, rank);
  if (!slice)
    return slice.takeError();
  // The slice's width is the manifest's: gathered parts take rank 0's
  // shape apart from their rows.
  int64_t cols = argument.shape.size() == 2 ? slice->cols : 1;
  if (int64_t(part.data.size()) != slice->rows * cols)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "rank " + llvm::Twine(rank) + "'s '" +
                                       argument.name +
                                       "' has an unexpected shape");
  if (argument.kind == "table") {
    TableData &table = model.tables.find(argument.name)->second;
    std::vector<double> row(table.getDim());
    for (int64_t r = 0; r < slice->rows; ++r) {
      int64_t global = slice->row_offset + r;
      for (int64_t c = 0; c < table.getDim(); ++c)
        row[c] = table.get(global, c);
      for (int64_t c = 0; c < cols; ++c)
        row[slice->col_offset + c] = part.data[r * cols + c];
      table.setRow(global, row);
    }
    return llvm::Error::success();
  }
  HostTensor &state = model.tableStates[argument.name];
  int64_t width = state.getRank() == 2 ? state.shape[1] : 1;
  for (int64_t r = 0; r < slice->rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      state.data[(slice->row_offset + r) * width +
                 (state.getRank() == 2 ? slice->col_offset : 0) + c] =
          part.data[r * cols + c];
  return llvm::Error::success();
}

static llvm::Error runError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Runs the input distribution `dist` on this rank's share of the first
/// batch (`input` gives its inputs by name) and stages the carried values
/// it returns as the pipelined form `step`'s arguments of the same names.
static llvm::Error
startPipeline(NativeProgram &dist, NativeProgram &step,
              const StepArguments &where,
              llvm::function_ref<llvm::Expected<HostTensor>(StringRef)> input) {
  llvm::Expected<std::map<std::string, HostTensor>> carried =
      runInputDistribution(dist, input);
  if (!carried)
    return carried.takeError();
  if (carried->size() != where.carried.size())
    return runError("the input distribution @" + dist.getFunctionName() +
                    " returns " + llvm::Twine(carried->size()) +
                    " values, but @" + step.getFunctionName() + " carries " +
                    llvm::Twine(where.carried.size()));
  for (size_t index : where.carried) {
    const std::string &name = step.getArguments()[index].name;
    auto value = carried->find(name);
    if (value == carried->end())
      return runError("@" + step.getFunctionName() + " carries '" + name +
                      "', which the input distribution @" +
                      dist.getFunctionName() + " does not return");
    if (llvm::Error error = step.bindOne(index, value->second))
      return error;
  }
  return llvm::Error::success();
}

int mlir::braid::runCompiledTraining(NativeProgram &program,
                                     const CompiledTraining &run,
                                     const TrainOptions &options) {
  if (options.steps < 1 || options.steps > 1000000)
    return fail("--steps must be between 1 and 1000000, got " +
                llvm::Twine(options.steps));
  if (!program.isTrainingStep())
    return fail("--steps needs a training artifact: compile the model with "
                "braid-compile --train --target cpu");
  int64_t ranks = program.getRanks();
  bool mpi = isUnderMpirun();
  if (!mpi && ranks > 1)
    return fail("this training step exchanges gradients between its " +
                llvm::Twine(ranks) + " ranks; run it under mpirun -n " +
                llvm::Twine(ranks));
  int64_t rank = mpi ? braidrt_rank() : 0;
  auto abortOnError = [&](llvm::Error error) {
    // One rank failing alone would leave the others waiting: abort all.
    if (mpi && ranks > 1)
      braidrt_fail("%s", llvm::toString(std::move(error)).c_str());
    return fail(llvm::toString(std::move(error)));
  };

  llvm::Expected<StepArguments> where =
      stageRank(program, run, run.rankArgs[rank], rank);
  if (!where)
    return abortOnError(where.takeError());
  int64_t offset = 0;
  for (int64_t r = 0; r < rank; ++r)
    offset += run.batchSplit[r];
  std::vector<HostTensor> globalArgs = run.globalArgs;
  // Where each result goes back: the argument of the same kind and name
  // (a pipelined form's carried values too, apart).
  std::optional<size_t> lossIndex;
  SmallVector<std::pair<size_t, size_t>> feedback, carriedFeedback;
  for (auto [r, result] : llvm::enumerate(program.getResults())) {
    if (result.kind == "output")
      lossIndex = r;
    for (auto [a, argument] : llvm::enumerate(program.getArguments()))
      if ((result.kind == "param" || result.kind == "state" ||
           result.kind == "carried") &&
          argument.kind == result.kind && argument.name == result.name)
        (result.kind == "carried" ? carriedFeedback : feedback)
            .push_back({r, a});
  }
  bool pipelined = run.inputDist != nullptr;
  if (!pipelined && !program.getPipelinedOf().empty())
    return abortOnError(runError("@" + program.getFunctionName() +
                                 " is a pipelined form; run it with "
                                 "--pipelined"));
  if (pipelined && (program.getPipelinedOf().empty() ||
                    carriedFeedback.size() != where->carried.size()))
    return abortOnError(runError(
        "@" + program.getFunctionName() +
        " is not a pipelined form that returns a value for each carried "
        "value it takes"));
  if (!lossIndex)
    return abortOnError(runError("the training step returns no loss"));

  // What each rank waited on, by kind, over the steps after the first.
  static const char *const kWaitKinds[] = {
      "all_reduce",     "all_to_all", "all_to_all_v", "all_to_all_v (counts)",
      "reduce_scatter", "all_gather"};
  static const char *const kWaitKeys[] = {
      "all_reduce",          "all_to_all",     "all_to_all_v",
      "all_to_all_v_counts", "reduce_scatter", "all_gather"};
  std::vector<double> waitedByKind(std::size(kWaitKinds));
  auto addWaitedByKind = [&](double sign) {
    for (auto [k, kind] : llvm::enumerate(kWaitKinds))
      waitedByKind[k] += sign * braidrt_comm_wait_ms_of(kind);
  };
  // Each timed op's milliseconds (braid-compile --profile-ops) when the
  // second step starts; its mean over the steps after the first, later.
  std::vector<double> opsAtSecondStep, opMs;
  TrainedModel model;
  // Each step's time, the part of it this rank spent blocked on its
  // communication (braidrt_comm_wait_ms) and the CPU time it used.
  std::vector<double> stepMs, waitMs, cpuStepMs;
  std::vector<HostTensor> outputs;
  double stepFaults = 0;
  // Batch `index` (from 0): this rank's share of its labels and of its
  // inputs and the parameters (in the rank's signature's order); an exit
  // code when it is bad.
  HostTensor labels, nextLabels;
  std::vector<HostTensor> split, nextSplit;
  auto loadBatch = [&](int64_t index, HostTensor &labelsOut,
                       std::vector<HostTensor> &splitOut)
      -> std::optional<int> {
    FailureOr<HostTensor> loaded = options.batches->load(index, globalArgs);
    if (failed(loaded)) {
      // (A pipelined form reads the batch after the last step's too.)
      if (mpi && ranks > 1)
        braidrt_fail(index < options.steps
                         ? "the batch of step %lld is bad"
                         : "the batch after the last step (%lld), which the "
                           "pipelined form distributes, is bad",
                     (long long)index + 1);
      return 1;
    }
    llvm::Expected<RankValues> parts = splitGlobalArguments(
        run.global, globalArgs, program.getRankSignature(), run.batchSplit);
    if (!parts)
      return abortOnError(parts.takeError());
    labelsOut = loaded->slice(0, offset, run.batchSplit[rank]);
    splitOut = std::move((*parts)[rank]);
    return std::nullopt;
  };
  // An input of a batch by name, for a pipelined form's next inputs and
  // its input distribution.
  auto inputOf = [&](const std::vector<HostTensor> &batch,
                     const HostTensor &batchLabels, StringRef name,
                     StringRef reader) -> llvm::Expected<HostTensor> {
    if (name == "labels")
      return batchLabels;
    if (std::optional<size_t> position = program.getInputPosition(name))
      return batch[*position];
    return runError("@" + reader + " takes the batch's '" + name +
                    "', which is no input of the training step");
  };
  if (pipelined && !options.json && rank == 0)
    llvm::outs() << "pipelined: @" << program.getFunctionName()
                 << ", each step distributing the next batch's inputs (@"
                 << run.inputDist->getFunctionName() << " the first's)\n";
  for (int64_t step = 1; step <= options.steps; ++step) {
    // This step's batch: the rank's share of its inputs and labels (after
    // the first, a pipelined form loaded it a step ahead).
    if (!pipelined || step == 1) {
      if (std::optional<int> code = loadBatch(step - 1, labels, split))
        return *code;
    } else {
      labels = std::move(nextLabels);
      split = std::move(nextSplit);
    }
    HostTensor stepNumber(ElementKind::i64, {});
    stepNumber.data[0] = double(step);
    if (llvm::Error error = program.bindOne(where->step, stepNumber))
      return abortOnError(std::move(error));
    if (llvm::Error error = program.bindOne(where->labels, labels))
      return abortOnError(std::move(error));
    for (auto [index, position] : where->inputs)
      if (llvm::Error error = program.bindOne(index, split[position]))
        return abortOnError(std::move(error));
    if (pipelined) {
      // The next batch, whose inputs this step distributes (the last step
      // distributes one more batch than the run takes).
      if (std::optional<int> code = loadBatch(step, nextLabels, nextSplit))
        return *code;
      if (step == 1)
        if (llvm::Error error = startPipeline(
                *run.inputDist, program, *where, [&](StringRef name) {
                  return inputOf(split, labels, name,
                                 run.inputDist->getFunctionName());
                }))
          return abortOnError(std::move(error));
      for (auto &[index, name] : where->nextInputs) {
        llvm::Expected<HostTensor> value =
            inputOf(nextSplit, nextLabels, name, program.getFunctionName());
        if (!value)
          return abortOnError(value.takeError());
        if (llvm::Error error = program.bindOne(index, *value))
          return abortOnError(std::move(error));
      }
    }
    // Ranks start each timed step together (each made its batch first).
    if (mpi && ranks > 1)
      braidrt_barrier();
    double ms = 0;
    double faultsBefore = minorPageFaults();
    if (step == 2) {
      addWaitedByKind(-1);
      opsAtSecondStep = program.readOpTimes();
    }
    double waitedBefore = braidrt_comm_wait_ms(), cpuBefore = cpuMs();
    llvm::Expected<std::vector<HostTensor>> results = program.run(ms);
    waitMs.push_back(braidrt_comm_wait_ms() - waitedBefore);
    cpuStepMs.push_back(cpuMs() - cpuBefore);
    if (!results)
      return abortOnError(results.takeError());
    if (step > 1)
      stepFaults += minorPageFaults() - faultsBefore;
    outputs = std::move(*results);
    for (auto feedsBack : {&feedback, &carriedFeedback})
      for (auto [r, a] : *feedsBack)
        if (llvm::Error error = program.bindOne(a, outputs[r]))
          return abortOnError(std::move(error));
    stepMs.push_back(ms);
    model.losses.push_back(outputs[*lossIndex].data[0]);
    if (!options.json && rank == 0)
      llvm::outs() << llvm::format("step %lld: loss %.6f\n",
                                   static_cast<long long>(step),
                                   model.losses.back());
  }
  if (options.steps > 1) {
    addWaitedByKind(1);
    for (double &ms : waitedByKind)
      ms /= double(options.steps - 1);
    opMs = program.readOpTimes();
    for (auto [ms, before] : llvm::zip(opMs, opsAtSecondStep))
      ms = (ms - before) / double(options.steps - 1);
  }
  // A step takes as long as its slowest rank.
  if (mpi && ranks > 1) {
    std::vector<double> slowest(stepMs.size());
    braidrt_all_reduce(stepMs.data(), slowest.data(), slowest.size(),
                       BRAIDRT_F64, BRAIDRT_MAX);
    stepMs = std::move(slowest);
    // The simulator reports its exposed communication as a mean per rank.
    for (std::vector<double> *perStep :
         {&waitMs, &cpuStepMs, &waitedByKind, &opMs}) {
      if (perStep->empty())
        continue;
      std::vector<double> total(perStep->size());
      braidrt_all_reduce(perStep->data(), total.data(), total.size(),
                         BRAIDRT_F64, BRAIDRT_SUM);
      for (double &ms : total)
        ms /= double(ranks);
      *perStep = std::move(total);
    }
  }
  double medianMs = medianOf(stepMs);
  model.stepsMs = stepMs;
  // Each op's time, the mean over ranks (a trace's counterpart is its ops
  // averaged over its ranks, as bench/cpu_train_vs_torch takes them).
  for (auto [name, ms] : llvm::zip(program.getProfiledOps(), opMs))
    model.opsMs.push_back({name, ms});
  model.metrics["comm_wait_ms"] = medianOf(waitMs);
  model.metrics["cpu_ms"] = medianOf(cpuStepMs);
  // By kind, the mean over the steps after the first.
  for (auto [k, key] : llvm::enumerate(kWaitKeys))
    if (options.steps > 1 && waitedByKind[k] > 0)
      model.metrics["comm_wait_ms_" + std::string(key)] = waitedByKind[k];
  // Memory, the largest rank's: its peak resident set beside the tables and
  // their optimizer state it holds (no dense table gradient exists), and
  // the page faults of a step after the first.
  double memory[3] = {peakResidentMiB(), 0,
                      options.steps > 1 ? stepFaults / double(options.steps - 1)
                                        : 0};
  for (auto [index, argument] : llvm::enumerate(program.getArguments()))
    if (argument.kind == "table" || argument.kind == "table_state")
      memory[1] += double(program.getStagedBytes(index)) / (1 << 20);
  if (mpi && ranks > 1) {
    double largest[3];
    braidrt_all_reduce(memory, largest, 3, BRAIDRT_F64, BRAIDRT_MAX);
    std::copy(largest, largest + 3, memory);
  }
  model.metrics["peak_rss_mib"] = memory[0];
  model.metrics["tables_and_state_mib"] = memory[1];
  if (options.steps > 1)
    model.metrics["page_faults_per_step"] = memory[2];

  // Replicated parameters and their state: rank 0's are the model's.
  // Tables, their state, sharded dense state and parameters stored as
  // blocks come from every rank's slices.
  for (auto [r, a] : feedback) {
    const NativeProgram::Argument &argument = program.getArguments()[a];
    if (argument.shardRanks.empty())
      (argument.kind == "param" ? model.params
                                : model.states)[argument.name] = outputs[r];
  }
  bool gather = run.check || !options.dumpDir.empty();
  if (!gather)
    return rank == 0 ? finishTraining(model, program.getFunctionName(), ranks,
                                      medianMs, options, nullptr)
                     : 0;
  SmallVector<size_t> sliced;
  std::vector<HostTensor> mine;
  for (auto [index, argument] : llvm::enumerate(program.getArguments()))
    if (argument.kind == "table" || argument.kind == "table_state") {
      llvm::Expected<HostTensor> part = program.readArgument(index);
      if (!part)
        return abortOnError(part.takeError());
      sliced.push_back(index);
      mine.push_back(std::move(*part));
    }
  // Each sharded state's or parameter's slice, at its position in `mine`.
  SmallVector<std::pair<size_t, size_t>> shardedStates;
  for (auto [r, a] : feedback)
    if (!program.getArguments()[a].shardRanks.empty()) {
      shardedStates.push_back({a, mine.size()});
      mine.push_back(outputs[r]);
    }
  std::optional<RankValues> all;
  if (mpi && ranks > 1)
    all = gatherToRankZero(mine);
  else
    all = RankValues{std::move(mine)};
  if (!all)
    return 0; // rank 0 reports
  for (auto [index, position] : shardedStates) {
    const NativeProgram::Argument &argument = program.getArguments()[index];
    std::vector<HostTensor> parts;
    for (int64_t member : argument.shardRanks) {
      if (member >= int64_t(all->size()))
        return fail("the sharded " + argument.kind + " '" + argument.name +
                    "' names rank " + llvm::Twine(member) + " of " +
                    llvm::Twine(all->size()));
      parts.push_back((*all)[member][position]);
    }
    (argument.kind == "param" ? model.params : model.states)[argument.name] =
        HostTensor::concat(parts, argument.shardDim);
  }
  model.tables = run.tables;
  for (auto [position, index] : llvm::enumerate(sliced)) {
    const NativeProgram::Argument &argument = program.getArguments()[index];
    if (argument.kind == "table_state") {
      const TableData &table = model.tables.find(argument.name)->second;
      SmallVector<int64_t, 2> shape = {table.getNumRows()};
      if (argument.shape.size() == 2)
        shape.push_back(table.getDim());
      model.tableStates[argument.name] = HostTensor(ElementKind::f32, shape);
    }
    for (int64_t r = 0; r < ranks; ++r)
      if (llvm::Error error =
              placeSlice(program, index, r, (*all)[r][position], model))
        return fail(llvm::toString(std::move(error)));
  }
  return finishTraining(model, program.getFunctionName(), ranks, medianMs,
                        options, run.check ? &*run.check : nullptr);
}
