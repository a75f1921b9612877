//===- BenchPlanner.cpp - Planner benchmark -------------------------------===//
//
// This file implements braid-bench-planner: Braid's plan, the four greedy
// baselines and the lower bound, side by side, with planning time, on
// MLPerf DLRM-DCNv2 (examples/mlperf_dcnv2.json) and on synthetic table sets
// built as in the shared protocols (rows 10^2 to 10^7.7, skewed pooling
// factors, dims 16..128), over 1, 2, 4 and 16 DGX-H100 nodes. For the
// model, Braid's plan is also compiled through the registered braid-compile
// pipeline (planner=keep) and the per-rank program simulated, the figure
// plan.json reports, beside the planner's own estimate. Then the same for
// the training step (the planner's objective and the simulated
// @train_step) on 2 to 16 nodes. With --torchrec, TorchRec's measured DLRM
// training throughput on 8 A100s beside Braid's predicted training step
// for the same configurations, with no constant fitted to them. Prints
// tables and writes JSON.
//
//   braid-bench-planner SPEC.json [-o results.json]
//       [--torchrec criteo_dlrm_table_configs.json]
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
static cl::opt<std::string> torchrecPath(
    cl::cat(toolOptions), "torchrec",
    cl::desc("../shared/data/configs/criteo_dlrm_table_configs.json: also "
             "predict TorchRec's measured 8xA100 DLRM training runs"));

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

/// Compiles `model` with `plan` on `nodes` x `ranksPerNode` ranks of
/// `hardware` through the braid-compile pipeline (planner=keep; with
/// `training`, train=true) and simulates the per-rank program (the forward
/// pass or @train_step): its time and its exchanges' time on the slowest
/// rank.
static std::pair<double, double>
simulateCompiled(mlir::ModuleOp model, const Plan &plan, int64_t nodes,
                 bool training, llvm::StringRef hardware = "dgx-h100",
                 int64_t ranksPerNode = 8) {
  mlir::OwningOpRef<mlir::ModuleOp> module(model.clone());
  mlir::MLIRContext *context = module->getContext();
  (*module)->setAttr(BraidDialect::kClusterAttrName,
                     ClusterAttr::get(context, hardware, nodes, ranksPerNode));
  applyPlan(*module, plan, ranksPerNode);
  CompilePipelineOptions options;
  options.planner = "keep";
  options.train = training;
  mlir::PassManager pm(context);
  buildCompilePipeline(pm, options);
  if (mlir::failed(pm.run(*module)))
    return {NAN, NAN};
  mlir::FailureOr<PlanReport> report =
      buildPlanReport(*module, mlir::ModuleOp(), 0);
  if (mlir::failed(report))
    return {NAN, NAN};
  const std::optional<sim::ProgramPrediction> &prediction =
      training ? report->trainPrediction : report->prediction;
  if (!prediction)
    return {NAN, NAN};
  const sim::ProgramPrediction &p = *prediction;
  double exchangesUs = 0;
  for (const char *key :
       {"index_exchange", "output_exchange", "embedding_gradient_exchange",
        "dense_gradient_all_reduce"})
    if (auto it = p.categoryUs.find(key); it != p.categoryUs.end())
      exchangesUs += it->second;
  return {p.result.makespanUs * 1e-3, exchangesUs * 1e-3};
}

/// The embedding optimizer of a model's braid.optimizer, or `fallback`.
static std::string embeddingOptimizerOf(mlir::ModuleOp module,
                                        llvm::StringRef fallback) {
  if (auto optimizer = module->getAttrOfType<mlir::DictionaryAttr>(
          BraidDialect::kOptimizerAttrName))
    if (auto embedding = optimizer.getAs<mlir::DictionaryAttr>("embedding"))
      if (auto type = embedding.getAs<mlir::StringAttr>("type"))
        return type.str();
  return fallback.str();
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

/// TorchRec's measured DLRM training throughput (records per second) on
/// A100s (`measured_torchrec_dlrm_throughput_8xA100_40GB` of the shared
/// configurations) beside Braid's predicted training step for the same
/// model and batches: the Criteo 1TB tables (dim 128, one index per
/// feature), TorchRec's DLRM MLPs and dot interaction, SGD (its example's
/// default), planned for the training step and simulated on the DGX-A100
/// description. Nothing is fitted to the measurements.
static void predictTorchRec(llvm::StringRef path, mlir::MLIRContext &context,
                            llvm::json::Array &results) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  llvm::Expected<llvm::json::Value> json =
      buffer ? llvm::json::parse((*buffer)->getBuffer())
             : llvm::Expected<llvm::json::Value>(llvm::createStringError(
                   llvm::inconvertibleErrorCode(), "cannot read the file"));
  const llvm::json::Object *root = json ? json->getAsObject() : nullptr;
  const llvm::json::Object *tables =
      root ? root->getObject("criteo_1tb_unhashed_torchrec") : nullptr;
  const llvm::json::Object *measured =
      root ? root->getObject("measured_torchrec_dlrm_throughput_8xA100_40GB")
           : nullptr;
  const llvm::json::Array *rowsPerFeature =
      tables ? tables->getArray("num_embeddings_per_feature") : nullptr;
  const llvm::json::Array *runs = measured ? measured->getArray("rows") : nullptr;
  if (!rowsPerFeature || !runs) {
    if (!json)
      llvm::consumeError(json.takeError());
    llvm::errs() << "braid-bench-planner: error: " << path
                 << ": no criteo_1tb_unhashed_torchrec tables or measured "
                    "runs\n";
    std::exit(1);
  }
  cluster::HardwareDesc hw = *cluster::loadHardware("dgx-a100");
  llvm::outs() << llvm::formatv(
      "\nTorchRec DLRM (Criteo 1TB, dim 128) training on A100s: measured vs "
      "Braid's predicted step\n{0,5} {1,12} {2,14} {3,14} {4,16} {5,10}\n",
      "gpus", "global_batch", "measured_ms", "predicted_ms",
      "predicted_rec_s", "pred/meas");
  for (const llvm::json::Value &run : *runs) {
    const llvm::json::Object *row = run.getAsObject();
    int64_t gpus = row->getInteger("gpus").value_or(0);
    int64_t batch = row->getInteger("global_batch").value_or(0);
    double recordsPerS = row->getNumber("records_per_s").value_or(0);
    llvm::json::Array specTables;
    for (auto [index, rows] : llvm::enumerate(*rowsPerFeature))
      specTables.push_back(llvm::json::Object{
          {"name", "t" + std::to_string(index)},
          {"num_embeddings", rows.getAsInteger().value_or(1)},
          {"embedding_dim", 128},
          {"pooling_factor", 1}});
    llvm::json::Object spec{
        {"name", "torchrec_dlrm_criteo_1tb"},
        {"batch_size", batch},
        {"dense_features", 13},
        {"bottom_mlp", llvm::json::Array{512, 256, 128}},
        {"top_mlp", llvm::json::Array{1024, 1024, 512, 256, 1}},
        {"interaction", "dot"},
        {"optimizer",
         llvm::json::Object{{"dense", llvm::json::Object{{"type", "sgd"},
                                                         {"lr", 15.0}}},
                            {"embedding", llvm::json::Object{{"type", "sgd"},
                                                             {"lr", 15.0}}}}},
        {"tables", std::move(specTables)}};
    std::string text = llvm::formatv("{0}", llvm::json::Value(std::move(spec)));
    mlir::OwningOpRef<mlir::ModuleOp> module =
        importModelJson(text, "torchrec_dlrm", &context);
    double predictedMs = NAN;
    std::string note;
    if (module) {
      PlanProblem problem;
      problem.batch = batch;
      problem.hw = hw;
      problem.nodes = 1;
      problem.ranksPerNode = gpus;
      problem.reserveBytes = defaultReserveBytes(hw);
      problem.training = true;
      problem.embeddingOptimizer = "sgd";
      for (TableOp op : module->getOps<TableOp>())
        problem.tables.push_back(
            {op.getSymName().str(), op.getNumRows(), op.getDim(), 4,
             op.getPoolingFactor().convertToDouble(), 1.0});
      llvm::Expected<Plan> plan = planBraid(problem);
      if (plan)
        predictedMs = simulateCompiled(*module, *plan, 1, /*training=*/true,
                                       "dgx-a100", gpus)
                          .first;
      else
        note = llvm::toString(plan.takeError());
    }
    double measuredMs = recordsPerS > 0 ? batch / recordsPerS * 1e3 : NAN;
    double predictedRate = predictedMs > 0 ? batch / predictedMs * 1e3 : NAN;
    auto cell = [](double v, const char *format) {
      return std::isfinite(v) ? llvm::formatv(format, v).str()
                              : std::string("-");
    };
    llvm::outs() << llvm::formatv(
        "{0,5} {1,12} {2,14} {3,14} {4,16} {5,10}{6}\n", gpus, batch,
        cell(measuredMs, "{0:f2}"), cell(predictedMs, "{0:f2}"),
        cell(predictedRate, "{0:f0}"),
        cell(predictedMs / measuredMs, "{0:f2}"),
        note.empty() ? "" : "  (" + note + ")");
    auto number = [](double v) {
      return std::isfinite(v) ? llvm::json::Value(v)
                              : llvm::json::Value(nullptr);
    };
    results.push_back(llvm::json::Object{
        {"gpus", gpus},
        {"global_batch", batch},
        {"measured_records_per_s", recordsPerS},
        {"measured_step_ms", number(measuredMs)},
        {"predicted_step_ms", number(predictedMs)},
        {"predicted_records_per_s", number(predictedRate)},
        {"note", note}});
  }
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
  llvm::outs() << llvm::formatv("{0,-14} {1,-5} {2,5} {3,10} {4,10} {5,10} "
                                "{6,10} {7,10} {8,10} {9,9} {10,9} {11,9} "
                                "{12,10} {13,10}\n",
                                "tables", "step", "ranks", "lower_ms",
                                "braid_ms", "size_ms", "dim_ms", "dimpool_ms",
                                "logrows_ms", "vs_best", "vs_bound", "plan_s",
                                "program_ms", "xchg_ms");
  // The forward pass on 1 to 16 nodes, then the training step on 2 to 16
  // (the model and the several-hundred-table set).
  std::vector<std::tuple<std::string, bool, int64_t>> cases;
  for (bool training : {false, true})
    for (auto &[name, tables] : sets)
      for (int64_t nodes : {1, 2, 4, 16})
        if (!training || (nodes > 1 && name != "synthetic-856"))
          cases.push_back({name, training, nodes});
  for (auto &[name, training, nodes] : cases) {
    {
      const std::vector<TableSpec> &tables =
          llvm::find_if(sets, [&](auto &set) { return set.first == name; })
              ->second;
      PlanProblem problem;
      problem.tables = tables;
      problem.batch = dcnBatch;
      problem.hw = hw;
      problem.nodes = nodes;
      problem.ranksPerNode = 8;
      problem.reserveBytes = defaultReserveBytes(hw);
      problem.training = training;
      problem.embeddingOptimizer =
          name == modelName ? embeddingOptimizerOf(*model, "rowwise_adagrad")
                            : "rowwise_adagrad";
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
              simulateCompiled(*model, *braid, nodes, training);
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
          "{0,-14} {1,-5} {2,5} {3,10} {4,10} {5,10} {6,10} {7,10} {8,10} "
          "{9,9} {10,9} {11,9:f3} {12,10} {13,10}\n",
          name, training ? "train" : "fwd", nodes * 8, cell(bound),
          cell(braidMs), cell(greedyMs[0]),
          cell(greedyMs[1]), cell(greedyMs[2]), cell(greedyMs[3]),
          cell(braidMs / bestGreedy), cell(braidMs / bound), seconds,
          cell(programMs), cell(exchangesMs));
      auto number = [](double v) {
        return std::isnan(v) || std::isinf(v) ? llvm::json::Value(nullptr)
                                              : llvm::json::Value(v);
      };
      rows.push_back(llvm::json::Object{
          {"tables", name},
          {"step", training ? "train" : "forward"},
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
  llvm::json::Array torchrec;
  if (!torchrecPath.empty())
    predictTorchRec(torchrecPath, context, torchrec);
  std::error_code ec;
  llvm::raw_fd_ostream out(outputPath, ec);
  if (ec) {
    llvm::errs() << "braid-bench-planner: error: cannot write " << outputPath
                 << "\n";
    return 1;
  }
  out << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                  {"plans", std::move(rows)},
                                  {"torchrec_8xA100", std::move(torchrec)}}))
      << "\n";
  llvm::outs() << "wrote " << outputPath << "\n";
  return 0;
}
