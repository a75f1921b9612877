//===- braid-run.cpp - Run Braid programs ---------------------------------===//
//
// This file implements braid-run. With --reference it executes a Braid module
// under the reference semantics on N simulated ranks, on inputs and weights
// read from .npy files or generated from a seed, and reports, dumps or
// prints the results. Given a braid-compile output directory, it runs the
// per-rank program on the global inputs split by rank and, with --check,
// compares the gathered results with the global program. Bad input is a
// located error and exit code 1.
//
//===----------------------------------------------------------------------===//

#include "CompiledTraining.h"
#include "NativeProgram.h"
#include "Pipelined.h"
#include "RunSupport.h"
#include "Train.h"

#include "braidrt/braidrt.h"

#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Interp/BatchSplit.h"
#include "braid/Interp/Bindings.h"
#include "braid/Interp/Npy.h"
#include "braid/Tools/ModuleLoader.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::interp;
namespace cl = llvm::cl;

/// The tool's own options; --help lists only these (LLVM's are hidden).
static cl::OptionCategory toolOptions("braid-run options");
static cl::opt<std::string> inputFile(cl::cat(toolOptions), cl::Positional,
                                      cl::Required,
                                      cl::desc("<program.mlir | OUT>"));
static cl::opt<bool> reference(cl::cat(toolOptions), "reference",
                               cl::desc("Run under the reference semantics"));
static cl::opt<bool> pipelined(
    cl::cat(toolOptions), "pipelined",
    cl::desc("Call the function's pipelined form (braid-compile "
             "--pipeline-input-dist), which distributes the next batch's "
             "inputs inside each step: compiled (OUT/pipelined) or with "
             "--reference; training (--steps K) distributes each next "
             "batch, and a forward pass gives the form its own batch again "
             "and checks the carried values it returns against the first"));
static cl::opt<int64_t> numRanks(cl::cat(toolOptions), "ranks", cl::init(1),
                                 cl::desc("Number of simulated ranks"));
static cl::opt<uint64_t> seed(cl::cat(toolOptions), "seed", cl::init(0),
                              cl::desc("Seed of generated inputs and weights"));
static cl::opt<std::string>
    inputsDir(cl::cat(toolOptions), "inputs",
              cl::desc("Directory of input .npy files"));
static cl::opt<std::string>
    weightsDir(cl::cat(toolOptions), "weights",
               cl::desc("Directory of weight .npy files"));
static cl::opt<std::string>
    dumpDir(cl::cat(toolOptions), "dump",
            cl::desc("Write inputs, weights and outputs as .npy here"));
static cl::opt<bool> emitJson(cl::cat(toolOptions), "json",
                              cl::desc("Print one JSON object"));
static cl::opt<bool> printValues(cl::cat(toolOptions), "print-values",
                                 cl::desc("Print every result element"));
static cl::opt<int64_t>
    iterations(cl::cat(toolOptions), "iterations", cl::init(1),
               cl::desc("With a --target cpu directory: timed calls per rank"));
static cl::opt<bool>
    check(cl::cat(toolOptions), "check",
          cl::desc("With OUT: compare the per-rank program's gathered "
                   "results with the global program"));
static cl::opt<double>
    tolerance(cl::cat(toolOptions), "tolerance", cl::init(1e-5),
              cl::desc("Largest relative error --check accepts"));
static cl::opt<int64_t>
    steps(cl::cat(toolOptions), "steps", cl::init(0),
          cl::desc("Train K steps: on the batch in --inputs DIR (with "
                   "labels.npy), on DIR/batch_0000/, DIR/batch_0001/, ... in "
                   "turn, or without --inputs on a fresh synthetic batch per "
                   "step; a braid-compile --train directory (--target cpu or "
                   "cuda), its per-rank program with --reference, or a "
                   "global .mlir with --reference"));
static cl::opt<int64_t>
    maxDumpElements(cl::cat(toolOptions), "max-dump-table-elements",
                    cl::init(1 << 24),
                    cl::desc("Largest table (rows x dim) written by --dump"));

static int fail(const llvm::Twine &message) { return failRun(message); }

namespace {
struct Summary {
  double sum = 0, min = 0, max = 0;
};
} // namespace

static Summary summarize(const HostTensor &tensor) {
  Summary summary;
  if (tensor.data.empty())
    return summary;
  summary.min = summary.max = tensor.data.front();
  for (double value : tensor.data) {
    summary.sum += value;
    summary.min = std::min(summary.min, value);
    summary.max = std::max(summary.max, value);
  }
  return summary;
}

static std::string rankDir(StringRef dir, int64_t rank, int64_t ranks) {
  if (ranks == 1)
    return dir.str();
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "rank" + std::to_string(rank));
  return std::string(path);
}

/// Writes what the run used and produced under `dir`, so that a later run
/// with `--inputs DIR/inputs --weights DIR/weights` reproduces it.
static llvm::Error dumpRun(StringRef dir, func::FuncOp func,
                           const TableMap &tables, const RankValues &args,
                           const RankValues &results) {
  int64_t ranks = args.size();
  std::string inputs = joinPath(dir, "inputs");
  std::string weights = joinPath(dir, "weights");
  // Made even when the program has no parameter or table, so that the
  // re-run `--inputs DIR/inputs --weights DIR/weights` always works.
  if (std::error_code ec = llvm::sys::fs::create_directories(weights))
    return llvm::createStringError(ec, "cannot create '" + weights +
                                           "': " + ec.message());
  for (int64_t rank = 0; rank < ranks; ++rank) {
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      bool param = isParameter(func, i);
      if (param && rank != 0)
        continue;
      std::string target = param ? weights : rankDir(inputs, rank, ranks);
      if (llvm::Error error =
              writeNpy(joinPath(target, getArgumentName(func, i) + ".npy"),
                       args[rank][i]))
        return error;
    }
    for (auto [index, result] : llvm::enumerate(results[rank])) {
      std::string name = index == 0
                             ? std::string("output.npy")
                             : "output." + std::to_string(index) + ".npy";
      if (llvm::Error error =
              writeNpy(joinPath(rankDir(dir, rank, ranks), name), result))
        return error;
    }
  }
  for (const auto &entry : tables)
    if (llvm::Expected<bool> written = dumpTable(
            weights, entry.first(), entry.second, maxDumpElements);
        !written)
      return written.takeError();
  return llvm::Error::success();
}

static void printResults(StringRef label, ArrayRef<HostTensor> results) {
  for (auto [index, result] : llvm::enumerate(results)) {
    Summary summary = summarize(result);
    llvm::outs() << label << " result " << index << ": "
                 << result.describeType()
                 << llvm::format(" sum=%.6g min=%.6g max=%.6g", summary.sum,
                                 summary.min, summary.max)
                 << "\n";
    if (printValues)
      llvm::outs() << "  " << result.formatValues() << "\n";
  }
}

/// Calls the compiled program for each rank of `rankIds` (all in this
/// process without mpirun, this rank's alone under it) `--iterations`
/// times; `iterationMs` is the median over iterations of the slowest
/// rank's call.
/// The minor page faults of a timed call after the first, on the rank that
/// takes most (-1: not measured).
static double faultsPerCall = -1;
/// braid-compile --profile-ops: each timed op's name and milliseconds per
/// call, the mean over ranks and over the calls after the first.
static std::vector<std::pair<std::string, double>> opsMsPerCall;

static llvm::Expected<RankValues>
runNative(NativeProgram &program, const RankValues &rankArgs,
          ArrayRef<int64_t> rankIds, const TableMap &tables,
          double &iterationMs, NativeProgram *inputDist = nullptr) {
  std::vector<double> perIteration(iterations, 0);
  std::vector<double> opTotals(program.getProfiledOps().size(), 0);
  RankValues results(rankArgs.size());
  for (size_t local = 0; local < rankArgs.size(); ++local) {
    int64_t rank = rankIds[local];
    // A pipelined form (forward): its carried values for this batch, from
    // the input distribution; each call gets this batch as the next one
    // too (the run repeats it), so each returns the values it took.
    // A batch input by name, from this rank's values.
    auto inputNamed = [&](StringRef name) -> llvm::Expected<HostTensor> {
      if (std::optional<size_t> position = program.getInputPosition(name))
        return rankArgs[local][*position];
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "@" + program.getFunctionName() + " distributes '" + name +
              "', which is no input of @" + program.getPipelinedOf());
    };
    std::map<std::string, HostTensor> carried;
    if (inputDist) {
      llvm::Expected<std::map<std::string, HostTensor>> started =
          runInputDistribution(*inputDist, inputNamed);
      if (!started)
        return started.takeError();
      carried = std::move(*started);
    }
    // The manifest's order: inputs and parameters from `rankArgs`, tables
    // as this rank's slices; a pipelined form's next inputs by name and its
    // carried values.
    std::vector<NativeProgram::ArgumentValue> args;
    size_t next = 0;
    for (auto [index, argument] : llvm::enumerate(program.getArguments())) {
      if (argument.kind == "next_input") {
        llvm::Expected<HostTensor> value = inputNamed(argument.name);
        if (!value)
          return value.takeError();
        args.push_back(std::move(*value));
        continue;
      }
      if (argument.kind == "carried") {
        auto value = carried.find(argument.name);
        if (value == carried.end())
          return llvm::createStringError(
              llvm::inconvertibleErrorCode(),
              "@" + program.getFunctionName() + " carries '" + argument.name +
                  "', which no input distribution returned");
        args.push_back(value->second);
        continue;
      }
      if (argument.kind != "table") {
        if (next >= rankArgs[local].size())
          return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                         "too few arguments for the program");
        args.push_back(rankArgs[local][next++]);
        continue;
      }
      llvm::Expected<NativeProgram::TableSlice> table =
          tableArgument(program, tables, index, rank);
      if (!table)
        return table.takeError();
      args.push_back(*table);
    }
    if (llvm::Error error = program.bind(args))
      return std::move(error);
    args.clear();
    double faults = 0;
    std::vector<double> opsAtSecondCall;
    for (int64_t i = 0; i < iterations; ++i) {
      if (i == 1)
        opsAtSecondCall = program.readOpTimes();
      // Ranks start each timed call together: a rank's time is then its
      // own call, not also its wait for a peer that started later.
      if (isUnderMpirun() && braidrt_world_size() > 1)
        braidrt_barrier();
      double ms = 0;
      double faultsBefore = minorPageFaults();
      llvm::Expected<std::vector<HostTensor>> outputs = program.run(ms);
      if (!outputs)
        return outputs.takeError();
      if (i > 0)
        faults += minorPageFaults() - faultsBefore;
      perIteration[i] = std::max(perIteration[i], ms);
      // A pipelined form returns the next batch's carried values last:
      // this batch's again, which must be the ones it took.
      if (inputDist) {
        std::vector<HostTensor> mine;
        for (auto [result, value] :
             llvm::zip(program.getResults(), *outputs)) {
          if (result.kind != "carried") {
            mine.push_back(std::move(value));
            continue;
          }
          auto took = carried.find(result.name);
          if (took == carried.end() || took->second.shape != value.shape ||
              took->second.data != value.data)
            return llvm::createStringError(
                llvm::inconvertibleErrorCode(),
                "rank " + llvm::Twine(rank) + ": @" +
                    program.getFunctionName() + " returns a carried value '" +
                    result.name + "' for the same batch that differs from "
                    "the one @" + inputDist->getFunctionName() + " gives");
        }
        *outputs = std::move(mine);
      }
      results[local] = std::move(*outputs);
    }
    if (iterations > 1)
      faultsPerCall = std::max(faultsPerCall, faults / double(iterations - 1));
    if (iterations > 1) {
      std::vector<double> opsAtEnd = program.readOpTimes();
      for (auto [total, now, before] :
           llvm::zip(opTotals, opsAtEnd, opsAtSecondCall))
        total += now - before;
    }
  }
  // Each op's time per call after the first, the mean over this process's
  // ranks, then over every process's.
  if (iterations > 1 && !opTotals.empty()) {
    for (double &ms : opTotals)
      ms /= double(iterations - 1) * double(rankArgs.size());
    if (isUnderMpirun() && braidrt_world_size() > 1) {
      std::vector<double> sum(opTotals.size());
      braidrt_all_reduce(opTotals.data(), sum.data(), sum.size(), BRAIDRT_F64,
                         BRAIDRT_SUM);
      for (auto [mine, total] : llvm::zip(opTotals, sum))
        mine = total / double(braidrt_world_size());
    }
    opsMsPerCall.clear();
    for (auto [name, ms] : llvm::zip(program.getProfiledOps(), opTotals))
      opsMsPerCall.push_back({name, ms});
  }
  if (iterations > 1 && isUnderMpirun() && braidrt_world_size() > 1) {
    double largest = 0;
    braidrt_all_reduce(&faultsPerCall, &largest, 1, BRAIDRT_F64, BRAIDRT_MAX);
    faultsPerCall = largest;
  }
  if (isUnderMpirun() && braidrt_world_size() > 1) {
    std::vector<double> slowest(perIteration.size());
    braidrt_all_reduce(perIteration.data(), slowest.data(), slowest.size(),
                       BRAIDRT_F64, BRAIDRT_MAX);
    perIteration = std::move(slowest);
  }
  iterationMs = medianOf(perIteration);
  return results;
}

/// The values a run of an artifact binds: the global program's tables and
/// arguments (loaded or generated from its signature) and each rank's
/// share of them.
struct ArtifactBinding {
  Signature global;
  TableMap tables;
  RankValues globalArgs, rankArgs;
};

static llvm::Expected<ArtifactBinding>
bindArtifact(const Signature &global, const Signature &perRank,
             ArrayRef<int64_t> split, const BindingOptions &options) {
  ArtifactBinding binding;
  binding.global = global;
  llvm::Expected<TableMap> tables = bindTables(global, options);
  if (!tables)
    return tables.takeError();
  binding.tables = std::move(*tables);
  llvm::Expected<RankValues> globalArgs =
      bindArguments(global, binding.tables, options);
  if (!globalArgs)
    return globalArgs.takeError();
  binding.globalArgs = std::move(*globalArgs);
  llvm::Expected<RankValues> rankArgs = splitGlobalArguments(
      global, binding.globalArgs.front(), perRank, split);
  if (!rankArgs)
    return rankArgs.takeError();
  binding.rankArgs = std::move(*rankArgs);
  return binding;
}

/// Runs the compiled per-rank program of OUT on `binding` (every rank in
/// this process, or this rank's share under mpirun); returns every rank's
/// results on rank 0 and nothing on the others.
static llvm::Expected<std::optional<RankValues>>
runCompiled(NativeProgram &program, const ArtifactBinding &binding,
            double &iterationMs, NativeProgram *inputDist) {
  int64_t ranks = program.getRanks();
  if (!isUnderMpirun()) {
    if (ranks > 1 && program.hasExchanges())
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "this program exchanges data between its " + llvm::Twine(ranks) +
              " ranks; run it under mpirun -n " + llvm::Twine(ranks));
    SmallVector<int64_t> all;
    for (int64_t r = 0; r < ranks; ++r)
      all.push_back(r);
    llvm::Expected<RankValues> results =
        runNative(program, binding.rankArgs, all, binding.tables, iterationMs,
                  inputDist);
    if (!results)
      return results.takeError();
    return std::optional<RankValues>(std::move(*results));
  }
  // One process per rank: run this rank's share, gather to rank 0.
  int64_t rank = braidrt_rank();
  RankValues mine = {binding.rankArgs[rank]};
  llvm::Expected<RankValues> native =
      runNative(program, mine, {rank}, binding.tables, iterationMs, inputDist);
  if (!native)
    braidrt_fail("%s", llvm::toString(native.takeError()).c_str());
  return gatherToRankZero(native->front());
}

/// Runs OUT, a braid-compile output: its compiled library (needing no MLIR)
/// or, with --reference, OUT/program.mlir under the reference semantics,
/// on the global inputs split by rank. --check compares the gathered
/// results with OUT/model.mlir, the global program.
static int runArtifact(StringRef dir, const BindingOptions &options) {
  std::optional<NativeProgram> program, inputDist;
  ModuleLoader globalLoader, rankLoader;
  OwningOpRef<ModuleOp> globalModule, rankModule;
  func::FuncOp globalFunc, rankFunc;
  Signature global, perRank;
  SmallVector<int64_t> split;
  if (check || reference) {
    globalModule = globalLoader.load(joinPath(dir, "model.mlir"));
    if (!globalModule)
      return 1;
    FailureOr<func::FuncOp> found = findEntryFunction(*globalModule);
    if (failed(found))
      return 1;
    globalFunc = *found;
    global = describeFunction(globalFunc);
  }
  if (reference) {
    rankModule = rankLoader.load(joinPath(dir, "program.mlir"));
    if (!rankModule)
      return 1;
    auto attr = (*rankModule)->getAttrOfType<DenseI64ArrayAttr>(
        BraidDialect::kBatchSplitAttrName);
    if (!attr)
      return fail(joinPath(dir, "program.mlir") +
                  " is not a per-rank program (no braid.batch_split)");
    FailureOr<func::FuncOp> found = findEntryFunction(*rankModule);
    if (failed(found))
      return 1;
    rankFunc = *found;
    perRank = describeFunction(rankFunc);
    split.assign(attr.asArrayRef().begin(), attr.asArrayRef().end());
  } else {
    if (!llvm::sys::fs::exists(joinPath(dir, "libprogram.so")) &&
        llvm::sys::fs::exists(joinPath(dir, "program.mlir")))
      return fail(dir + " has no compiled program (braid-compile --target "
                        "none): add --reference to run its per-rank program "
                        "under the reference semantics, or compile it with "
                        "--target cpu");
    // A pipelined form's library lies in OUT/pipelined, its input
    // distribution's below it.
    std::string programDir = pipelined ? joinPath(dir, "pipelined") : dir.str();
    if (pipelined && !llvm::sys::fs::is_directory(programDir))
      return fail(dir + " has no compiled pipelined form (" + programDir +
                  "): compile the model with braid-compile "
                  "--pipeline-input-dist --target cpu (the simulator adds it "
                  "where it predicts a gain; braid-compile prints what it "
                  "added)");
    llvm::Expected<NativeProgram> loaded = NativeProgram::load(programDir);
    if (!loaded)
      return fail(llvm::toString(loaded.takeError()));
    program.emplace(std::move(*loaded));
    if (pipelined) {
      if (program->getPipelinedOf().empty())
        return fail(joinPath(programDir, "libprogram.so") +
                    " is no pipelined form (its manifest names no "
                    "'pipelined_of')");
      std::string distDir = joinPath(programDir, program->getInputDistDir());
      llvm::Expected<NativeProgram> dist = NativeProgram::load(distDir);
      if (!dist)
        return fail(llvm::toString(dist.takeError()));
      inputDist.emplace(std::move(*dist));
      if (inputDist->getInputDistOf() != program->getFunctionName())
        return fail(joinPath(distDir, "libprogram.so") +
                    " is no input distribution of @" +
                    program->getFunctionName() + " (its manifest's "
                    "'input_dist_of' names '" + inputDist->getInputDistOf() +
                    "')");
      if (inputDist->getRanks() != program->getRanks() ||
          inputDist->getBatchSplit() != program->getBatchSplit())
        return fail(distDir + " splits the batch differently from " +
                    programDir);
    }
    // The library carries everything a run needs; with --check it (and a
    // pipelined form's input distribution) must also have been compiled
    // from OUT/model.mlir.
    for (auto [library, loaded] :
         {std::pair{joinPath(programDir, "libprogram.so"), &*program},
          std::pair{joinPath(joinPath(programDir, program->getInputDistDir()),
                             "libprogram.so"),
                    inputDist ? &*inputDist : nullptr}})
      if (check && loaded)
        if (std::optional<std::string> why =
                compareSignatures(global, loaded->getGlobalSignature()))
          return fail(library + " was not compiled from " +
                      joinPath(dir, "model.mlir") + ": " + *why);
    if (program->isTrainingStep() && !steps.getNumOccurrences())
      return fail(dir + " holds a training step (braid-compile --train): "
                        "train it with --steps K");
    global = program->getGlobalSignature();
    perRank = program->getRankSignature();
    split.assign(program->getBatchSplit().begin(),
                 program->getBatchSplit().end());
    if (isUnderMpirun()) {
      braidrt_init(nullptr, nullptr);
      if (braidrt_world_size() != program->getRanks()) {
        // Every rank sees the mismatch; rank 0 alone reports it, before
        // any rank leaves MPI (a rank that exits first with an error gets
        // the job killed, rank 0's message with it).
        int64_t rank = braidrt_rank(), started = braidrt_world_size();
        if (rank == 0)
          fail("the artifact is for " + llvm::Twine(program->getRanks()) +
               " ranks but mpirun started " + llvm::Twine(started));
        braidrt_finalize();
        return 1;
      }
    }
  }
  llvm::Expected<ArtifactBinding> binding =
      bindArtifact(global, perRank, split, options);
  if (!binding)
    return fail(llvm::toString(binding.takeError()));
  int64_t ranks = split.size();
  TrainOptions train;
  train.steps = steps;
  int64_t globalBatch = 0;
  for (int64_t samples : split)
    globalBatch += samples;
  FailureOr<TrainingBatches> batches;
  if (steps.getNumOccurrences()) {
    BindingOptions data = options;
    data.inputsDir = inputsDir.empty() ? std::nullopt
                                       : std::optional(inputsDir.getValue());
    batches = TrainingBatches::open(global, binding->tables, data,
                                    globalBatch);
    if (failed(batches))
      return 1;
    train.batches = &*batches;
  }
  train.dumpDir = dumpDir.getValue();
  train.json = emitJson;
  train.maxDumpElements = maxDumpElements;
  if (steps.getNumOccurrences() && !reference) {
    CompiledTraining run;
    run.global = global;
    run.globalArgs = binding->globalArgs.front();
    run.rankArgs = binding->rankArgs;
    run.batchSplit = split;
    run.tables = binding->tables;
    run.inputDist = inputDist ? &*inputDist : nullptr;
    if (check)
      run.check = GlobalTraining{*globalModule, globalFunc, run.globalArgs,
                                 run.tables, tolerance};
    return runCompiledTraining(*program, run, train);
  }
  if (steps.getNumOccurrences()) {
    auto trainStep = rankModule->lookupSymbol<func::FuncOp>("train_step");
    if (!trainStep)
      return fail(joinPath(dir, "program.mlir") +
                  " has no @train_step: compile the model with "
                  "braid-compile --train");
    RankTraining run;
    run.globalModule = *globalModule;
    run.globalFunc = globalFunc;
    run.trainStep = trainStep;
    run.globalArgs = binding->globalArgs.front();
    run.rankArgs = binding->rankArgs;
    run.batchSplit = split;
    run.tables = binding->tables;
    run.check = check;
    run.tolerance = tolerance;
    run.pipelined = pipelined;
    return runRankTraining(run, train);
  }
  RankValues rankResults;
  double iterationMs = 0;
  if (reference && pipelined) {
    // The batch's carried values, then the pipelined form on the batch
    // with the same batch next: the carried values it returns are the
    // ones it took.
    FailureOr<PipelinedForm> form = PipelinedForm::of(rankFunc);
    if (failed(form))
      return 1;
    FailureOr<RankValues> results =
        form->runOnSameBatch(binding->rankArgs, binding->tables);
    if (failed(results))
      return 1;
    if (!emitJson)
      llvm::outs() << "pipelined: @" << form->step.getSymName()
                   << " after @" << form->inputDist.getSymName()
                   << ", given the same batch as the next\n";
    rankResults = std::move(*results);
  } else if (reference) {
    FailureOr<RankValues> results =
        runFunction(rankFunc, binding->rankArgs, binding->tables);
    if (failed(results))
      return 1;
    rankResults = std::move(*results);
  } else {
    llvm::Expected<std::optional<RankValues>> results =
        runCompiled(*program, *binding, iterationMs,
                    inputDist ? &*inputDist : nullptr);
    if (!results)
      return fail(llvm::toString(results.takeError()));
    if (!*results)
      return 0; // other ranks are done; rank 0 reports
    rankResults = std::move(**results);
    if (inputDist && !emitJson)
      llvm::outs() << "pipelined: @" << program->getFunctionName()
                   << " after @" << inputDist->getFunctionName()
                   << ", given the same batch as the next\n";
  }
  std::vector<HostTensor> gathered = gatherResults(rankResults);
  std::string function = rankFunc ? rankFunc.getSymName().str()
                                  : program->getFunctionName().str();
  if (emitJson) {
    llvm::json::Object report{
        {"iteration_ms", iterationMs},
        {"ranks", ranks},
        {"iterations", static_cast<int64_t>(iterations)}};
    if (faultsPerCall >= 0)
      report["page_faults_per_call"] = faultsPerCall;
    if (!opsMsPerCall.empty())
      report["ops_ms"] = opTimesJson(opsMsPerCall);
    llvm::outs() << llvm::json::Value(std::move(report)) << "\n";
  } else {
    llvm::outs() << "per-rank program of @" << function << " on "
                 << ranks << (ranks == 1 ? " rank" : " ranks") << " ("
                 << (reference ? "reference semantics" : "compiled")
                 << ", seed " << seed << "), results gathered\n";
    if (!reference)
      llvm::outs() << llvm::format("iteration: %.3f ms (median of %lld)\n",
                                   iterationMs,
                                   static_cast<long long>(iterations));
  }
  if (!emitJson)
    printResults("gathered", gathered);
  if (!dumpDir.empty()) {
    for (auto [index, result] : llvm::enumerate(gathered)) {
      std::string name = index == 0
                             ? std::string("output.npy")
                             : "output." + std::to_string(index) + ".npy";
      if (llvm::Error error = writeNpy(joinPath(dumpDir, name), result))
        return fail(llvm::toString(std::move(error)));
    }
    llvm::outs() << "wrote the gathered outputs to " << dumpDir << "\n";
  }
  if (!check)
    return 0;
  FailureOr<RankValues> expected =
      runFunction(globalFunc, binding->globalArgs, binding->tables);
  if (failed(expected))
    return 1;
  if (expected->front().size() != gathered.size())
    return fail("the per-rank program returns " + llvm::Twine(gathered.size()) +
                " results, the global one " +
                llvm::Twine(expected->front().size()));
  double worst = 0;
  for (auto [actual, reference] : llvm::zip(gathered, expected->front())) {
    if (actual.shape != reference.shape)
      return fail("check failed: the gathered result is " +
                  actual.describeType() + " but the global result is " +
                  reference.describeType());
    worst = std::max(worst, relativeError(actual, reference));
  }
  bool ok = worst <= tolerance;
  (emitJson ? llvm::errs() : llvm::outs())
      << llvm::format("check against the global program: max "
                      "relative error %.3g (tolerance %.3g): %s\n",
                      worst, tolerance.getValue(), ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(toolOptions);
  cl::ParseCommandLineOptions(
      argc, argv,
      "braid-run: run a Braid program\n\n"
      "  braid-run FILE.mlir --reference [--ranks N] [--seed S | --inputs DIR "
      "--weights DIR] [--dump DIR] [--json]\n"
      "  braid-run OUT [--reference] [--pipelined] [--check] [--seed S | "
      "--inputs DIR --weights DIR] [--dump DIR] [--iterations N] [--json]\n"
      "  braid-run OUT|FILE.mlir --steps K [--reference] [--pipelined] "
      "[--check] [--seed S | --inputs DIR] [--dump DIR] [--json]\n");
  bool isArtifact = llvm::sys::fs::is_directory(inputFile);
  if (!reference && !isArtifact)
    return fail("a .mlir file runs under the reference semantics; pass "
                "--reference, or give a braid-compile --target cpu directory");

  if (pipelined && !isArtifact && steps.getNumOccurrences())
    return fail("--pipelined --steps trains an artifact's per-rank program: "
                "braid-run OUT --reference --pipelined --steps K");
  if (iterations < 1 || iterations > 1000000)
    return fail("--iterations must be between 1 and 1000000");
  if (numRanks < 1 || numRanks > 4096)
    return fail("--ranks must be between 1 and 4096, got " +
                llvm::Twine(numRanks));
  for (const std::string &dir : {inputsDir.getValue(), weightsDir.getValue()})
    if (!dir.empty() && !llvm::sys::fs::is_directory(dir))
      return fail("'" + dir + "' is not a directory");

  if (isArtifact) {
    if (numRanks.getNumOccurrences())
      return fail("with a braid-compile directory the ranks come from its "
                  "program");
    if (emitJson && reference && !steps.getNumOccurrences())
      return fail("--json reports the timing of a compiled run; drop "
                  "--reference");
    BindingOptions globalOptions;
    globalOptions.seed = seed;
    if (!inputsDir.empty())
      globalOptions.inputsDir = getFirstBatchDir(inputsDir);
    if (!weightsDir.empty())
      globalOptions.weightsDir = weightsDir.getValue();
    int code = runArtifact(inputFile, globalOptions);
    braidrt_finalize();
    return code;
  }
  if (check)
    return fail("--check needs a braid-compile output directory");

  ModuleLoader loader;
  OwningOpRef<ModuleOp> module = loader.load(inputFile);
  if (!module)
    return 1;

  BindingOptions options;
  options.numRanks = numRanks;
  options.seed = seed;
  if (!inputsDir.empty())
    options.inputsDir = getFirstBatchDir(inputsDir);
  if (!weightsDir.empty())
    options.weightsDir = weightsDir.getValue();

  FailureOr<func::FuncOp> func = findEntryFunction(*module);
  if (failed(func))
    return 1;
  FailureOr<TableMap> tables = bindTables(*func, options);
  if (failed(tables))
    return 1;
  FailureOr<RankValues> args = bindArguments(*func, *tables, options);
  if (failed(args))
    return 1;
  if (steps.getNumOccurrences()) {
    if (numRanks != 1)
      return fail("--steps trains the global program on one rank for now; "
                  "drop --ranks");
    TrainOptions train;
    train.steps = steps;
    Signature signature = describeFunction(*func);
    BindingOptions data = options;
    data.inputsDir = inputsDir.empty() ? std::nullopt
                                       : std::optional(inputsDir.getValue());
    FailureOr<TrainingBatches> batches = TrainingBatches::open(
        signature, *tables, data, getGlobalBatch(signature, args->front()));
    if (failed(batches))
      return 1;
    train.batches = &*batches;
    train.dumpDir = dumpDir.getValue();
    train.json = emitJson;
    train.maxDumpElements = maxDumpElements;
    return runReferenceTraining(*module, *func, *tables, args->front(), train);
  }
  FailureOr<RankValues> results = failure();
  if (pipelined) {
    FailureOr<PipelinedForm> form = PipelinedForm::of(*func);
    if (failed(form))
      return 1;
    results = form->runOnSameBatch(*args, *tables);
    if (succeeded(results) && !emitJson)
      llvm::outs() << "pipelined: @" << form->step.getSymName()
                   << " after @" << form->inputDist.getSymName()
                   << ", given the same batch as the next\n";
  } else {
    results = runFunction(*func, *args, *tables);
  }
  if (failed(results))
    return 1;

  if (!dumpDir.empty())
    if (llvm::Error error = dumpRun(dumpDir, *func, *tables, *args, *results))
      return fail(llvm::toString(std::move(error)));

  if (emitJson) {
    llvm::json::Array outputs;
    for (int64_t rank = 0; rank < numRanks; ++rank)
      for (auto [index, result] : llvm::enumerate((*results)[rank])) {
        Summary summary = summarize(result);
        outputs.push_back(
            llvm::json::Object{{"rank", rank},
                               {"index", static_cast<int64_t>(index)},
                               {"type", result.describeType()},
                               {"sum", summary.sum},
                               {"min", summary.min},
                               {"max", summary.max}});
      }
    llvm::json::Object report{{"function", func->getSymName()},
                              {"ranks", static_cast<int64_t>(numRanks)},
                              {"seed", static_cast<int64_t>(seed)},
                              {"outputs", std::move(outputs)}};
    llvm::outs() << llvm::json::Value(std::move(report)) << "\n";
    return 0;
  }
  llvm::outs() << "reference semantics of @" << func->getSymName() << " on "
               << numRanks << (numRanks == 1 ? " rank" : " ranks");
  if (inputsDir.empty() || weightsDir.empty())
    llvm::outs() << " (seed " << seed << ")";
  llvm::outs() << "\n";
  for (int64_t rank = 0; rank < numRanks; ++rank)
    printResults("rank " + std::to_string(rank), (*results)[rank]);
  if (!dumpDir.empty())
    llvm::outs() << "wrote inputs, weights and outputs to " << dumpDir << "\n";
  return 0;
}
