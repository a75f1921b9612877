//===- BenchPlanner.cpp - Planner benchmark -------------------------------===//
//
// This file implements braid-bench-planner: Braid's plan, the four greedy
// baselines and the lower bound, side by side, with planning time, on
// MLPerf DLRM-DCNv2 (examples/mlperf_dcnv2.json) and on synthetic table sets
// built as in the shared protocols (rows 10^2 to 10^7.7, skewed pooling
// factors, dims 16..128), over 1, 2, 4 and 16 DGX-H100 nodes. For the
// model, Braid's plan is also compiled through the registered braid-compile
// pipeline (planner=keep) and the per-rank program simulated, the figure
// plan.json reports, beside the planner's own estimate. Prints a table and
// writes JSON.
//
//   braid-bench-planner SPEC.json [-o results.json]
//
//===----------------------------------------------------------------------===//

#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Import/ModelJson.h"
#include "braid/InitAll.h"
#include "braid/Pipelines/Pipelines.h"
#include "braid/Plan/Planner.h"
#include "braid/Sharding/PlanSharding.h"
#include "braid/Target/PlanReport.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <random>
#include <tuple>

using namespace mlir::braid;
using mlir::braid::plan::TableSpec;
using namespace mlir::braid::plan;
namespace cl = llvm::cl;

/// The tool's own options; --help lists only these (LLVM's are hidden).
static cl::OptionCategory toolOptions("braid-bench-planner options");
static cl::opt<std::string> specPath(cl::cat(toolOptions), cl::Positional,
                                     cl::Required,
                                     cl::desc("<mlperf_dcnv2.json>"));
static cl::opt<std::string> outputPath(cl::cat(toolOptions), "o",
                                       cl::init("bench/planner/results.json"),
                                       cl::desc("JSON output"));

/// The tables and batch of a model spec, through the importer (which
/// validates the spec and reports errors with their JSON path); `module`
/// keeps the imported program.
static std::vector<TableSpec>
readSpec(llvm::StringRef path, mlir::MLIRContext &context,
         mlir::OwningOpRef<mlir::ModuleOp> &module, int64_t &batch,
         std::string &name) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    llvm::errs() << "braid-bench-planner: error: cannot read " << path << "\n";
    std::exit(1);
  }
  module = importModelJson((*buffer)->getBuffer(), path, &context);
  if (!module)
    std::exit(1);
  if (auto model = (*module)->getAttrOfType<mlir::StringAttr>(
          BraidDialect::kModelAttrName))
    name = model.str();
  std::vector<TableSpec> result;
  for (TableOp op : module->getOps<TableOp>()) {
    TableSpec table;
    table.name = op.getSymName().str();
    table.rows = op.getNumRows();
    table.dim = op.getDim();
    table.elementBytes = op.getElementType().getIntOrFloatBitWidth() / 8;
    table.poolingFactor = op.getPoolingFactor().convertToDouble();
    if (std::optional<llvm::APFloat> ratio = op.getUniqueRatio())
      table.uniqueRatio = ratio->convertToDouble();
    result.push_back(table);
  }
  module->walk([&](EmbeddingBagOp bag) {
    batch = bag.getResult().getType().getDimSize(0);
  });
  return result;
}

/// Compiles `model` with `plan` on `nodes` x 8 ranks of DGX-H100 through the
/// braid-compile pipeline (planner=keep) and simulates the per-rank
/// program: its iteration and its exchanges' time on the slowest rank.
static std::pair<double, double> simulateCompiled(mlir::ModuleOp model,
                                                  const Plan &plan,
                                                  int64_t nodes) {
  mlir::OwningOpRef<mlir::ModuleOp> module(model.clone());
  mlir::MLIRContext *context = module->getContext();
  (*module)->setAttr(BraidDialect::kClusterAttrName,
                     ClusterAttr::get(context, "dgx-h100", nodes, 8));
  applyPlan(*module, plan, 8);
  CompilePipelineOptions options;
  options.planner = "keep";
  mlir::PassManager pm(context);
  buildCompilePipeline(pm, options);
  if (mlir::failed(pm.run(*module)))
    return {NAN, NAN};
  mlir::FailureOr<PlanReport> report =
      buildPlanReport(*module, mlir::ModuleOp(), 0);
  if (mlir::failed(report) || !report->prediction)
    return {NAN, NAN};
  const sim::ProgramPrediction &p = *report->prediction;
  double exchangesUs = 0;
  for (const char *key : {"index_exchange", "output_exchange"})
    if (auto it = p.categoryUs.find(key); it != p.categoryUs.end())
      exchangesUs += it->second;
  return {p.result.makespanUs * 1e-3, exchangesUs * 1e-3};
}

static std::vector<TableSpec> synthetic(int64_t count, unsigned seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  const int64_t dims[] = {16, 32, 64, 128};
  std::vector<TableSpec> tables;
  for (int64_t t = 0; t < count; ++t) {
    TableSpec table;
    table.name = "t" + std::to_string(t);
    table.rows = int64_t(std::pow(10.0, 2 + 5.7 * unit(random)));
    table.dim = dims[random() % 4];
    table.poolingFactor = std::exp(3 * unit(random)) - 0.5;
    table.uniqueRatio = 0.2 + 0.8 * unit(random);
    tables.push_back(table);
  }
  return tables;
}

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(toolOptions);
  cl::ParseCommandLineOptions(argc, argv, "Braid planner benchmark\n");
  registerAllPasses();
  int64_t dcnBatch = 65536;
  std::string modelName = "model";
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> model;
  std::vector<TableSpec> modelTables =
      readSpec(specPath, context, model, dcnBatch, modelName);
  std::vector<std::pair<std::string, std::vector<TableSpec>>> sets = {
      {modelName, modelTables},
      {"synthetic-300", synthetic(300, 1)},
      {"synthetic-856", synthetic(856, 2)}};
  cluster::HardwareDesc hw = *cluster::loadHardware("dgx-h100");
  llvm::json::Array rows;
  llvm::outs() << llvm::formatv("{0,-14} {1,5} {2,10} {3,10} {4,10} {5,10} "
                                "{6,10} {7,10} {8,9} {9,9} {10,9} {11,10} "
                                "{12,10}\n",
                                "tables", "ranks", "lower_ms", "braid_ms",
                                "size_ms", "dim_ms", "dimpool_ms", "logrows_ms",
                                "vs_best", "vs_bound", "plan_s", "program_ms",
                                "xchg_ms");
  for (auto &[name, tables] : sets) {
    for (int64_t nodes : {1, 2, 4, 16}) {
      PlanProblem problem;
      problem.tables = tables;
      problem.batch = dcnBatch;
      problem.hw = hw;
      problem.nodes = nodes;
      problem.ranksPerNode = 8;
      problem.reserveBytes = defaultReserveBytes(hw);
      double bound = lowerBoundUs(problem) * 1e-3;
      auto start = std::chrono::steady_clock::now();
      llvm::Expected<Plan> braid = planBraid(problem);
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      double braidMs = NAN, programMs = NAN, exchangesMs = NAN;
      if (braid) {
        braidMs = evaluatePlan(problem, *braid).iterationUs * 1e-3;
        if (name == modelName)
          std::tie(programMs, exchangesMs) =
              simulateCompiled(*model, *braid, nodes);
      } else
        llvm::consumeError(braid.takeError());
      double greedyMs[4], bestGreedy = INFINITY;
      int k = 0;
      for (GreedyKey key : kGreedyKeys) {
        llvm::Expected<Plan> greedy = planGreedy(problem, key);
        greedyMs[k] = NAN;
        if (greedy)
          greedyMs[k] = evaluatePlan(problem, *greedy).iterationUs * 1e-3;
        else
          llvm::consumeError(greedy.takeError());
        if (!std::isnan(greedyMs[k]))
          bestGreedy = std::min(bestGreedy, greedyMs[k]);
        ++k;
      }
      // "-" where a planner found no plan (or none fits: no bound).
      auto cell = [](double v) {
        return std::isfinite(v) ? llvm::formatv("{0:f3}", v).str()
                                : std::string("-");
      };
      llvm::outs() << llvm::formatv(
          "{0,-14} {1,5} {2,10} {3,10} {4,10} {5,10} {6,10} {7,10} {8,9} "
          "{9,9} {10,9:f3} {11,10} {12,10}\n",
          name, nodes * 8, cell(bound), cell(braidMs), cell(greedyMs[0]),
          cell(greedyMs[1]), cell(greedyMs[2]), cell(greedyMs[3]),
          cell(braidMs / bestGreedy), cell(braidMs / bound), seconds,
          cell(programMs), cell(exchangesMs));
      auto number = [](double v) {
        return std::isnan(v) || std::isinf(v) ? llvm::json::Value(nullptr)
                                              : llvm::json::Value(v);
      };
      rows.push_back(llvm::json::Object{
          {"tables", name},
          {"ranks", nodes * 8},
          {"lower_bound_ms", number(bound)},
          {"braid_ms", number(braidMs)},
          {"greedy_size_ms", number(greedyMs[0])},
          {"greedy_dim_ms", number(greedyMs[1])},
          {"greedy_dim_pooling_ms", number(greedyMs[2])},
          {"greedy_dim_pooling_logrows_ms", number(greedyMs[3])},
          {"planning_seconds", seconds},
          {"braid_program_iteration_ms", number(programMs)},
          {"braid_program_exchanges_ms", number(exchangesMs)}});
    }
  }
  std::error_code ec;
  llvm::raw_fd_ostream out(outputPath, ec);
  if (ec) {
    llvm::errs() << "braid-bench-planner: error: cannot write " << outputPath
                 << "\n";
    return 1;
  }
  out << llvm::formatv("{0:2}", llvm::json::Value(std::move(rows))) << "\n";
  llvm::outs() << "wrote " << outputPath << "\n";
  return 0;
}
