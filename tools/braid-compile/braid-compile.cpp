//===- braid-compile.cpp - Compile a model for a cluster ------------------===//
//
// This file implements braid-compile: it imports a model (JSON spec or
// MLIR), plans its sharding for a cluster, partitions it into the per-rank
// program, and writes OUT/plan.json, OUT/trace.json (the simulated
// embedding stage), OUT/model.mlir (the planned global program, the oracle
// of `braid-run OUT --reference --check`) and OUT/program.mlir, then prints
// the plan.
//
//===----------------------------------------------------------------------===//

#include "CpuArtifact.h"

#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Sim/ScheduleBuilder.h"
#include "braid/Tools/ModuleLoader.h"
#include "braid/Transforms/Passes.h"
#include "braid/Transforms/PlanSharding.h"

#include "braid/Cost/CostModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace mlir::braid;
namespace cl = llvm::cl;

/// The tool's own options; --help lists only these (LLVM's are hidden).
static cl::OptionCategory toolOptions("braid-compile options");
static cl::opt<std::string> modelPath(cl::cat(toolOptions), cl::Positional,
                                      cl::Required,
                                      cl::desc("<model.json | model.mlir>"));
static cl::opt<std::string>
    clusterName(cl::cat(toolOptions), "cluster", cl::Required,
                cl::desc("Hardware preset (dgx-h100, dgx-a100, pcie-a100x4), "
                         "local-cpu (this machine, calibrated on first use) "
                         "or JSON file"));
static cl::opt<int64_t> nodes(cl::cat(toolOptions), "nodes", cl::init(1),
                              cl::desc("Nodes"));
static cl::opt<int64_t>
    ranksPerNode(cl::cat(toolOptions), "ranks-per-node", cl::init(0),
                 cl::desc("Ranks per node (default: the hardware's)"));
static cl::opt<std::string> target(cl::cat(toolOptions), "target",
                                   cl::init("none"),
                                   cl::desc("none | cpu | cuda"));
static cl::opt<std::string> outDir(cl::cat(toolOptions), "o", cl::Required,
                                   cl::desc("Output directory"));
static cl::opt<std::string>
    planner(cl::cat(toolOptions), "planner", cl::init("braid"),
            cl::desc("braid | greedy:size | greedy:dim | greedy:dim_pooling "
                     "| greedy:dim_pooling_logrows"));
static cl::opt<std::string>
    forceSharding(cl::cat(toolOptions), "force-sharding",
                  cl::desc("Every table in one sharding type (table_wise, "
                           "row_wise, column_wise, table_row_wise, "
                           "data_parallel)"));
static cl::opt<int> optLevel(
    cl::cat(toolOptions), "opt-level", cl::init(1),
    cl::desc("0: partition only; 1: then canonicalize and CSE; 2: also "
             "start the pooled-row exchanges asynchronously, waiting at "
             "their first use"));
static cl::opt<std::string> targetCpu(
    cl::cat(toolOptions), "target-cpu", cl::init("native"),
    cl::desc("--target cpu: the LLVM CPU name the program is compiled for "
             "(native: this machine's CPU and features)"));
static cl::opt<int64_t>
    maxTableRows(cl::cat(toolOptions), "max-table-rows", cl::init(40),
                 cl::desc("Tables listed one per row in the printed plan"));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "braid-compile: error: " << message << "\n";
  return 1;
}

static std::string joinPath(StringRef dir, StringRef name) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

static llvm::Error
writeFile(StringRef path, llvm::function_ref<void(llvm::raw_ostream &)> write) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return llvm::createStringError(ec, "cannot write '%s': %s",
                                   path.str().c_str(), ec.message().c_str());
  write(os);
  return llvm::Error::success();
}

static llvm::json::Value planJson(const ShardingResult &sharding,
                                  const plan::PlanCost &cost, double boundUs,
                                  std::optional<double> denseUs) {
  // Null where the dense stage is not estimated (see main).
  llvm::json::Value denseMs = nullptr, forwardMs = nullptr;
  if (denseUs) {
    denseMs = *denseUs * 1e-3;
    forwardMs = (cost.iterationUs + *denseUs) * 1e-3;
  }
  llvm::json::Array tables;
  for (auto [spec, tp] :
       llvm::zip(sharding.problem.tables, sharding.plan.tables)) {
    llvm::json::Array ranks, shards;
    for (const plan::Shard &shard : tp.shards) {
      ranks.push_back(shard.rank);
      shards.push_back(llvm::json::Object{{"rank", shard.rank},
                                          {"row_offset", shard.rowOffset},
                                          {"rows", shard.rows},
                                          {"col_offset", shard.colOffset},
                                          {"cols", shard.cols}});
    }
    tables.push_back(
        llvm::json::Object{{"name", spec.name},
                           {"sharding", plan::stringifyShardingType(tp.type)},
                           {"ranks", std::move(ranks)},
                           {"shards", std::move(shards)}});
  }
  llvm::json::Array denseLayers;
  for (const DenseLayerChoice &layer : sharding.denseLayers)
    denseLayers.push_back(llvm::json::Object{
        {"out", layer.out},
        {"in", layer.in},
        {"placement", "data_parallel"},
        {"data_parallel_ms", layer.cost.dataParallelUs * 1e-3},
        {"column_ms", layer.cost.columnUs * 1e-3},
        {"row_ms", layer.cost.rowUs * 1e-3}});
  llvm::json::Array perRank, memory;
  for (double us : cost.perRankUs)
    perRank.push_back(us * 1e-3);
  for (double bytes : cost.memoryBytes)
    memory.push_back(static_cast<int64_t>(bytes));
  return llvm::json::Object{
      {"planner", sharding.plan.planner},
      {"planning_seconds", sharding.planningSeconds},
      // No bound when no plan fits (a forced plan may still be written).
      {"lower_bound_ms", std::isfinite(boundUs)
                             ? llvm::json::Value(boundUs * 1e-3)
                             : llvm::json::Value(nullptr)},
      {"predicted",
       llvm::json::Object{{"iteration_ms", cost.iterationUs * 1e-3},
                          {"per_rank_ms", std::move(perRank)},
                          {"peak_memory_bytes", std::move(memory)},
                          {"index_exchange_ms", cost.indexExchangeUs * 1e-3},
                          {"output_exchange_ms", cost.outputExchangeUs * 1e-3},
                          {"reduce_scatter_ms", cost.reduceScatterUs * 1e-3},
                          {"dense_ms", denseMs},
                          {"forward_ms", forwardMs}}},
      {"tables", std::move(tables)},
      {"dense_layers", std::move(denseLayers)}};
}

/// "0-7" for consecutive ranks, else "0,3,5" (elided past 8).
static std::string formatRanks(const plan::TablePlan &tp) {
  SmallVector<int64_t> ranks;
  for (const plan::Shard &shard : tp.shards)
    ranks.push_back(shard.rank);
  bool consecutive = ranks.size() > 2;
  for (size_t i = 1; consecutive && i < ranks.size(); ++i)
    consecutive = ranks[i] == ranks[i - 1] + 1;
  if (consecutive)
    return llvm::formatv("{0}-{1}", ranks.front(), ranks.back());
  std::string text;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i == 8) {
      text += ",...";
      break;
    }
    text += (i ? "," : "") + std::to_string(ranks[i]);
  }
  return text;
}

static void printPlan(const ShardingResult &sharding,
                      const plan::PlanCost &cost, double boundUs,
                      std::optional<double> denseUs) {
  const plan::PlanProblem &problem = sharding.problem;
  llvm::outs() << llvm::formatv(
      "plan by '{0}' for {1} x {2} ranks of {3}, global batch {4} "
      "({5:f3} s)\n",
      sharding.plan.planner, problem.nodes, problem.ranksPerNode,
      problem.hw.name, problem.batch, sharding.planningSeconds);
  llvm::outs() << llvm::formatv("{0,-24} {1,-15} {2,-16} {3,12}\n", "table",
                                "sharding", "ranks", "lookup_us");
  int64_t listed = 0;
  for (auto [spec, tp] : llvm::zip(problem.tables, sharding.plan.tables)) {
    if (listed++ == maxTableRows) {
      llvm::outs() << "... " << problem.tables.size() - maxTableRows
                   << " more tables in plan.json\n";
      break;
    }
    double lookupUs = 0;
    for (const plan::Shard &shard : tp.shards)
      lookupUs += plan::shardLookupUs(problem, spec, tp.type, shard);
    llvm::outs() << llvm::formatv(
        "{0,-24} {1,-15} {2,-16} {3,12:f2}\n", spec.name,
        plan::stringifyShardingType(tp.type), formatRanks(tp), lookupUs);
  }
  llvm::outs() << llvm::formatv("{0,-6} {1,12} {2,12} {3,12}\n", "rank",
                                "lookups_us", "total_us", "memory_GB");
  for (size_t r = 0; r < cost.perRankUs.size(); ++r)
    llvm::outs() << llvm::formatv("{0,-6} {1,12:f2} {2,12:f2} {3,12:f3}\n", r,
                                  cost.lookupUs[r], cost.perRankUs[r],
                                  cost.memoryBytes[r] * 1e-9);
  std::string bound = std::isfinite(boundUs)
                          ? llvm::formatv("{0:f3} ms", boundUs * 1e-3).str()
                          : std::string("none (no plan fits memory)");
  llvm::outs() << llvm::formatv(
      "predicted embedding stage: {0:f3} ms (index all_to_all {1:f3}, output "
      "all_to_all {2:f3}, reduce_scatter {3:f3}); lower bound {4}\n",
      cost.iterationUs * 1e-3, cost.indexExchangeUs * 1e-3,
      cost.outputExchangeUs * 1e-3, cost.reduceScatterUs * 1e-3, bound);
  // Forced plans ignore memory: say so where one does not fit.
  for (size_t r = 0; r < cost.memoryBytes.size(); ++r)
    if (cost.memoryBytes[r] > problem.capacityBytes()) {
      llvm::errs() << llvm::formatv(
          "braid-compile: warning: the plan does not fit: rank {0} holds "
          "{1:f2} GB of tables, {2:f2} GB are available for them\n",
          r, cost.memoryBytes[r] * 1e-9, problem.capacityBytes() * 1e-9);
      break;
    }
  if (!denseUs) {
    llvm::outs() << "predicted forward pass: not estimated (the dense stage is "
                    "estimated for a module with one function)\n";
    return;
  }
  llvm::outs() << llvm::formatv(
      "predicted forward pass: {0:f3} ms (embedding stage {1:f3} + "
      "data-parallel dense stage {2:f3} on {3} of {4} samples per rank)\n",
      (cost.iterationUs + *denseUs) * 1e-3, cost.iterationUs * 1e-3,
      *denseUs * 1e-3, (problem.batch + problem.ranks() - 1) / problem.ranks(),
      problem.batch);
}

/// Each dense layer's cost in the three parallelizations; notes a layer
/// that a tensor-parallel form would make faster than the data-parallel
/// form braid-partition implements.
static void printDenseLayers(const ShardingResult &sharding) {
  if (sharding.denseLayers.empty())
    return;
  llvm::outs() << llvm::formatv("{0,-24} {1,-15} {2,16} {3,12} {4,12}\n",
                                "dense layer [out x in]", "placement",
                                "data_parallel_us", "column_us", "row_us");
  for (const DenseLayerChoice &layer : sharding.denseLayers) {
    const plan::DenseLayerCost &cost = layer.cost;
    llvm::outs() << llvm::formatv(
        "{0,-24} {1,-15} {2,16:f2} {3,12:f2} {4,12:f2}\n",
        llvm::formatv("linear {0} x {1}", layer.out, layer.in).str(),
        "data_parallel", cost.dataParallelUs, cost.columnUs, cost.rowUs);
    double best = std::min(cost.columnUs, cost.rowUs);
    if (best < cost.dataParallelUs)
      llvm::outs() << llvm::formatv(
          "note: tensor-parallel ({0}) would take {1:f2} us instead of "
          "{2:f2}; braid-partition implements data-parallel dense layers "
          "only\n",
          cost.columnUs <= cost.rowUs ? "column" : "row", best,
          cost.dataParallelUs);
  }
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerBraidPassesAndPipelines();
  cl::HideUnrelatedOptions(toolOptions);
  cl::ParseCommandLineOptions(
      argc, argv,
      "braid-compile: plan, partition and emit a model for a cluster\n\n"
      "  braid-compile MODEL --cluster PRESET|FILE [--nodes N] "
      "[--ranks-per-node R] --target none|cpu|cuda -o OUT\n");
  if (target == "cuda")
    return fail("--target cuda is not yet supported; use --target none "
                "(plan and partition only) or cpu");
  if (target != "none" && target != "cpu")
    return fail("unknown --target '" + target +
                "' (expected none, cpu or cuda)");
  if (optLevel < 0 || optLevel > 2)
    return fail("--opt-level must be 0, 1 or 2");
  if (nodes < 1 || nodes > 1024)
    return fail("--nodes must be between 1 and 1024");

  ModuleLoader loader;
  OwningOpRef<ModuleOp> module = loader.loadModel(modelPath);
  if (!module)
    return 1;
  ShardingOptions options;
  options.planner = planner;
  options.forceSharding = forceSharding;
  options.cluster = clusterName;
  options.nodes = nodes;
  options.ranksPerNode = ranksPerNode;
  if (!ranksPerNode) {
    llvm::Expected<cluster::HardwareDesc> hw =
        cluster::loadHardware(clusterName);
    if (!hw)
      return fail(llvm::toString(hw.takeError()));
    options.ranksPerNode = hw->ranksPerNode;
  }
  if (options.ranksPerNode < 1 || options.ranksPerNode > 1024)
    return fail("--ranks-per-node must be between 1 and 1024");
  FailureOr<ShardingResult> sharding = planModuleSharding(*module, options);
  if (failed(sharding))
    return 1;
  plan::PlanCost cost = plan::evaluatePlan(sharding->problem, sharding->plan);
  double boundUs = plan::lowerBoundUs(sharding->problem);
  // The dense stage, from the global program before partitioning.
  auto forward = llvm::to_vector(
      llvm::make_filter_range(module->getOps<func::FuncOp>(),
                              [](func::FuncOp f) { return !f.isExternal(); }));
  // The forward pass is the one function's; with several, which one runs
  // is the host's choice, so the dense stage is left unestimated.
  std::optional<double> denseUs;
  if (forward.size() == 1) {
    FailureOr<double> dense = sim::estimateDenseStageUs(
        forward.front(), sharding->problem.hw, sharding->problem.batch,
        sharding->problem.ranks());
    if (failed(dense))
      return 1;
    denseUs = *dense;
  }

  if (llvm::sys::fs::exists(outDir) && !llvm::sys::fs::is_directory(outDir))
    return fail("cannot create '" + outDir + "': a file of that name exists");
  if (std::error_code ec = llvm::sys::fs::create_directories(outDir))
    return fail("cannot create '" + outDir + "': " + ec.message());
  if (llvm::Error error =
          writeFile(joinPath(outDir, "model.mlir"), [&](llvm::raw_ostream &os) {
            module->print(os);
            os << "\n";
          }))
    return fail(llvm::toString(std::move(error)));

  PassManager pm(module->getContext());
  // --opt-level 2 overlaps the pooled-row exchanges with later lookups.
  BraidPartitionPassOptions partitionOptions;
  partitionOptions.asyncExchanges = optLevel >= 2;
  pm.addPass(createBraidPartitionPass(partitionOptions));
  if (optLevel >= 1) {
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  if (failed(pm.run(*module)))
    return 1;

  std::vector<sim::SimOp> schedule = sim::buildPlanSchedule(cost);
  llvm::Expected<sim::SimResult> simulated = sim::simulate(
      schedule, cost.lookupUs.size(),
      [&](double memoryBoundFraction, double commMemoryGBps) {
        return cost::overlapDilation(sharding->problem.hw, memoryBoundFraction,
                                     commMemoryGBps);
      });
  if (!simulated)
    return fail(llvm::toString(simulated.takeError()));

  llvm::json::Value planValue = planJson(*sharding, cost, boundUs, denseUs);
  for (auto [name, write] : std::initializer_list<
           std::pair<const char *, std::function<void(llvm::raw_ostream &)>>>{
           {"program.mlir",
            [&](llvm::raw_ostream &os) {
              module->print(os);
              os << "\n";
            }},
           {"plan.json",
            [&](llvm::raw_ostream &os) {
              os << llvm::formatv("{0:2}", planValue) << "\n";
            }},
           {"trace.json", [&](llvm::raw_ostream &os) {
              sim::writeChromeTrace(os, schedule, *simulated);
            }}})
    if (llvm::Error error = writeFile(joinPath(outDir, name), write))
      return fail(llvm::toString(std::move(error)));

  if (target == "cpu" &&
      failed(writeCpuArtifact(*module, outDir, sharding->problem.ranks(),
                              targetCpu)))
    return 1;
  printPlan(*sharding, cost, boundUs, denseUs);
  printDenseLayers(*sharding);
  llvm::outs() << "wrote " << outDir
               << "/{plan.json, trace.json, model.mlir, program.mlir"
               << (target == "cpu" ? ", manifest.json, libprogram.so" : "")
               << "}\n";
  return 0;
}
