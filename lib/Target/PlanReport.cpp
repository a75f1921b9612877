//===- PlanReport.cpp - plan.json and the printed plan --------------------===//
//
// This file reads a per-rank program's plan back from its placements,
// prices it with the planner's model, simulates the program, and writes the
// result as plan.json, trace.json and braid-compile's printed table.
//
//===----------------------------------------------------------------------===//

#include "braid/Target/PlanReport.h"

#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Plan/Planner.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::braid;

/// The function a module runs, when it has exactly one.
/// Not counted: a pipelined form and its input distribution function
/// (braid-pipeline-input-dist), which stand beside the function they
/// pipeline.
static std::optional<func::FuncOp> onlyFunction(ModuleOp module) {
  auto funcs = llvm::to_vector(llvm::make_filter_range(
      module.getOps<func::FuncOp>(), [&](func::FuncOp f) {
        return !f.isExternal() && !isPipelineCompanion(f);
      }));
  if (funcs.size() != 1)
    return std::nullopt;
  return funcs.front();
}

/// The buckets and started collectives of `func`.
static CoOptSummary summarizeCoOpt(func::FuncOp func) {
  CoOptSummary summary;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, BraidDialect::kParamShardAttrName))
      ++summary.parameterBlocks;
  func.walk([&](Operation *op) {
    if (isa<CollectiveOpInterface>(op) &&
        cast<CollectiveOpInterface>(op).isAsync())
      ++summary.started;
    // Chunk j of a pipelined forward pass takes bags [j c, (j + 1) c).
    if (auto slice = dyn_cast<SliceBagsOp>(op))
      summary.lookupChunks = std::max<int64_t>(
          summary.lookupChunks,
          slice.getStartAttr().getInt() / slice.getCountAttr().getInt() + 1);
    // A deferred weight gradient is the split linear_grad's "params" part.
    if (auto part =
            op->getAttrOfType<StringAttr>(BraidDialect::kGradPartAttrName);
        part && part.getValue() == "params")
      ++summary.deferredWeightGradients;
    // A dense layer split by its features' arrival leaves an "early" half.
    if (auto part = op->getAttrOfType<StringAttr>(
            BraidDialect::kFeaturePartAttrName);
        part && part.getValue() == "early")
      ++summary.splitFeatureGemms;
    // A fused exchange of routed indices carries its members' tokens.
    if (auto fused = dyn_cast<FusedAllToAllVStartOp>(op)) {
      ++summary.fusedIndexExchanges;
      summary.fusedIndexMembers += fused.getInputs().size();
      if (fused.getWireType())
        ++summary.narrowedIndexExchanges;
    }
    if (auto fused = dyn_cast<FusedDenseUpdateOp>(op)) {
      ++summary.fusedOptimizerSteps;
      summary.fusedOptimizerMembers += fused.getParams().size();
    }
    // A sharded optimizer step updates a slice of its parameter.
    if (auto update = dyn_cast<DenseUpdateOp>(op))
      if (update.getParam().getDefiningOp<tensor::ExtractSliceOp>())
        ++summary.shardedSteps;
    // A bucket is the concatenation a collective exchanges, reshaped or
    // not.
    if (!isa<CollectiveOpInterface>(op))
      return;
    Value input = op->getOperand(0);
    // Pooled rows or their gradients moved in 16 bits
    // (braid-exchange-precision) are rounded just before.
    if (auto rounded = input.getDefiningOp<arith::TruncFOp>();
        rounded && isa<AllToAllOp, AllToAllStartOp>(op)) {
      ++summary.halfExchanges;
      input = rounded.getIn();
    }
    if (auto reshape = input.getDefiningOp<tensor::ExpandShapeOp>())
      input = reshape.getSrc();
    auto concat = input.getDefiningOp<tensor::ConcatOp>();
    if (!concat)
      return;
    // A fused exchange concatenates slices of its members' inputs (each
    // flattened), one per destination the member sends to.
    if (isa<AllToAllOp, AllToAllStartOp>(op)) {
      llvm::SmallPtrSet<void *, 8> members;
      for (Value piece : concat.getInputs()) {
        if (auto flat = piece.getDefiningOp<tensor::CollapseShapeOp>())
          piece = flat.getSrc();
        if (auto slice = piece.getDefiningOp<tensor::ExtractSliceOp>())
          piece = slice.getSource();
        members.insert(piece.getAsOpaquePointer());
      }
      ++summary.fusedExchanges;
      summary.fusedMembers += members.size();
      return;
    }
    ++summary.buckets;
    summary.bucketedMembers += concat.getInputs().size();
  });
  return summary;
}

FailureOr<PlanReport> mlir::braid::buildPlanReport(ModuleOp program,
                                                   ModuleOp globalProgram,
                                                   double planningSeconds) {
  PlanReport report;
  FailureOr<ShardingResult> sharding = readModuleSharding(program);
  if (failed(sharding))
    return failure();
  report.sharding = std::move(*sharding);
  report.sharding.planningSeconds = planningSeconds;
  const plan::PlanProblem &problem = report.sharding.problem;
  report.plannerCost = plan::evaluatePlan(problem, report.sharding.plan);
  report.lowerBoundUs = plan::lowerBoundUs(problem);
  if (globalProgram)
    if (std::optional<func::FuncOp> global = onlyFunction(globalProgram)) {
      FailureOr<double> dense = sim::estimateDenseStageUs(
          *global, problem.hw, problem.batch, problem.ranks());
      if (failed(dense))
        return failure();
      report.plannerDenseUs = *dense;
    }
  // A training program holds the forward pass and the training step; each
  // is simulated on its own.
  // A pipelined form and its input distribution function stand beside
  // the function they pipeline (braid-pipeline-input-dist).
  auto trainStep = program.lookupSymbol<func::FuncOp>("train_step");
  std::optional<func::FuncOp> forward = onlyFunction(program);
  if (trainStep)
    if (auto found = program.lookupSymbol<func::FuncOp>("forward"))
      forward = found;
  for (auto [func, into] :
       {std::pair{forward, &report.prediction},
        std::pair{trainStep ? std::optional<func::FuncOp>(trainStep)
                            : std::nullopt,
                  &report.trainPrediction}}) {
    if (!func)
      continue;
    FailureOr<sim::ProgramPrediction> prediction = sim::simulateProgram(
        *func, problem.hw, problem.ranks(), problem.ranksPerNode);
    if (failed(prediction))
      return failure();
    *into = std::move(*prediction);
    (into == &report.prediction ? report.forwardCoOpt : report.trainCoOpt) =
        summarizeCoOpt(*func);
  }
  for (auto pipelined : program.getOps<func::FuncOp>()) {
    auto of = pipelined->getAttrOfType<FlatSymbolRefAttr>(
        BraidDialect::kPipelinedOfAttrName);
    std::optional<sim::ProgramPrediction> *into = nullptr;
    if (of && forward && of.getValue() == forward->getSymName())
      into = &report.forwardPipelined;
    else if (of && trainStep && of.getValue() == trainStep.getSymName())
      into = &report.trainPipelined;
    if (!into)
      continue;
    FailureOr<sim::ProgramPrediction> prediction = sim::simulateProgram(
        pipelined, problem.hw, problem.ranks(), problem.ranksPerNode);
    if (failed(prediction))
      return failure();
    *into = std::move(*prediction);
  }
  return report;
}

/// The categories of the breakdown, in print order, with their names.
static constexpr std::pair<const char *, const char *> kCategories[] = {
    {"lookup", "lookups"},
    {"routing", "routing"},
    {"index_exchange", "index exchanges"},
    {"output_exchange", "output exchanges"},
    {"tensor_parallel_activations", "tensor-parallel activations"},
    {"other_comm", "other communication"},
    {"dense", "dense compute"}};
/// A training step's further categories.
static constexpr std::pair<const char *, const char *> kTrainCategories[] = {
    {"embedding_update", "embedding backward and updates"},
    {"embedding_gradient_exchange", "embedding gradient exchanges"},
    {"dense_gradient_all_reduce", "dense gradient all_reduce"},
    {"dense_parameter_all_gather", "sharded parameters' all_gather"},
    {"optimizer", "dense optimizer"}};

/// The time of each category on the critical rank, and the exposed
/// communication, in milliseconds.
static llvm::json::Object breakdownOf(const sim::ProgramPrediction &p,
                                      bool training) {
  llvm::json::Object breakdown;
  auto add = [&](StringRef key) {
    auto it = p.categoryUs.find(key.str());
    breakdown[(key + "_ms").str()] =
        (it == p.categoryUs.end() ? 0.0 : it->second) * 1e-3;
  };
  for (auto [key, name] : kCategories)
    add(key);
  if (training)
    for (auto [key, name] : kTrainCategories)
      add(key);
  const sim::RankBreakdown &critical = p.result.ranks[p.criticalRank];
  breakdown["exposed_comm_ms"] = critical.exposedCommUs * 1e-3;
  breakdown["hidden_comm_ms"] =
      std::max(0.0, critical.commUs - critical.exposedCommUs) * 1e-3;
  return breakdown;
}

static llvm::json::Value coOptToJson(const CoOptSummary &summary) {
  return llvm::json::Object{
      {"buckets", summary.buckets},
      {"bucketed_collectives", summary.bucketedMembers},
      {"fused_exchanges", summary.fusedExchanges},
      {"fused_all_to_alls", summary.fusedMembers},
      {"fused_index_exchanges", summary.fusedIndexExchanges},
      {"fused_all_to_all_vs", summary.fusedIndexMembers},
      {"narrowed_index_exchanges", summary.narrowedIndexExchanges},
      {"half_precision_exchanges", summary.halfExchanges},
      {"split_feature_gemms", summary.splitFeatureGemms},
      {"started_collectives", summary.started},
      {"sharded_optimizer_steps", summary.shardedSteps},
      {"parameters_stored_as_blocks", summary.parameterBlocks},
      {"lookup_chunks", summary.lookupChunks},
      {"deferred_weight_gradients", summary.deferredWeightGradients},
      {"fused_optimizer_steps", summary.fusedOptimizerSteps},
      {"fused_optimizer_parameters", summary.fusedOptimizerMembers}};
}

/// "lookups 0.120, dense compute 0.300" for the printed report.
static std::string describeBreakdown(const sim::ProgramPrediction &p,
                                     bool training) {
  std::string parts;
  auto add = [&](StringRef key, StringRef name) {
    auto it = p.categoryUs.find(key.str());
    if (it == p.categoryUs.end() || it->second <= 0)
      return;
    parts += llvm::formatv("{0}{1} {2:f3}", parts.empty() ? "" : ", ", name,
                           it->second * 1e-3);
  };
  for (auto [key, name] : kCategories)
    add(key, name);
  if (training)
    for (auto [key, name] : kTrainCategories)
      add(key, name);
  return parts;
}

llvm::json::Value mlir::braid::planReportToJson(const PlanReport &report) {
  const ShardingResult &sharding = report.sharding;
  const plan::PlanCost &cost = report.plannerCost;
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
        {"placement", layer.placement},
        {"data_parallel_ms", layer.cost.dataParallelUs * 1e-3},
        {"column_ms", layer.cost.columnUs * 1e-3},
        {"row_ms", layer.cost.rowUs * 1e-3}});
  auto toMs = [](ArrayRef<double> us) {
    llvm::json::Array ms;
    for (double value : us)
      ms.push_back(value * 1e-3);
    return ms;
  };
  // Bytes of table shards each rank holds (with any optimizer state the
  // plan charges), not the whole process's memory: "table_bytes".
  llvm::json::Array memory;
  for (double bytes : cost.memoryBytes)
    memory.push_back(static_cast<int64_t>(bytes));

  // The prediction: the simulated per-rank program; null where a module
  // with several functions leaves the entry point to the host.
  llvm::json::Object predicted{{"table_bytes", std::move(memory)}};
  if (const std::optional<sim::ProgramPrediction> &p = report.prediction) {
    std::vector<double> perRank;
    for (const sim::RankBreakdown &rank : p->result.ranks)
      perRank.push_back(rank.endUs);
    predicted["iteration_ms"] = p->result.makespanUs * 1e-3;
    predicted["per_rank_ms"] = toMs(perRank);
    predicted["critical_rank"] = p->criticalRank;
    predicted["breakdown"] = breakdownOf(*p, /*training=*/false);
  } else {
    predicted["iteration_ms"] = nullptr;
    predicted["per_rank_ms"] = nullptr;
    predicted["critical_rank"] = nullptr;
    predicted["breakdown"] = nullptr;
  }
  // The training step, simulated from @train_step; null without one.
  if (const std::optional<sim::ProgramPrediction> &t = report.trainPrediction) {
    std::vector<double> perRank;
    for (const sim::RankBreakdown &rank : t->result.ranks)
      perRank.push_back(rank.endUs);
    predicted["train_step_ms"] = t->result.makespanUs * 1e-3;
    predicted["train_step_per_rank_ms"] = toMs(perRank);
    predicted["train_step_critical_rank"] = t->criticalRank;
    predicted["train_step_breakdown"] = breakdownOf(*t, /*training=*/true);
  } else {
    predicted["train_step_ms"] = nullptr;
    predicted["train_step_breakdown"] = nullptr;
  }
  // The pipelined forms (braid-pipeline-input-dist); null without one.
  for (auto [key, prediction] :
       {std::pair{"forward_pipelined_ms", &report.forwardPipelined},
        std::pair{"train_step_pipelined_ms", &report.trainPipelined}})
    predicted[key] = *prediction ? llvm::json::Value((*prediction)->result.makespanUs * 1e-3)
                                 : llvm::json::Value(nullptr);
  llvm::json::Value denseMs = nullptr, forwardMs = nullptr;
  if (report.plannerDenseUs) {
    denseMs = *report.plannerDenseUs * 1e-3;
    forwardMs = (cost.iterationUs + *report.plannerDenseUs) * 1e-3;
  }
  return llvm::json::Object{
      {"planner", sharding.plan.planner},
      {"planning_seconds", sharding.planningSeconds},
      // No bound when no plan fits (a forced plan may still be written).
      {"lower_bound_ms", std::isfinite(report.lowerBoundUs)
                             ? llvm::json::Value(report.lowerBoundUs * 1e-3)
                             : llvm::json::Value(nullptr)},
      {"predicted", std::move(predicted)},
      {"co_optimization",
       llvm::json::Object{{"forward", coOptToJson(report.forwardCoOpt)},
                          {"train_step", report.trainPrediction
                                             ? coOptToJson(report.trainCoOpt)
                                             : llvm::json::Value(nullptr)}}},
      {"planner_estimate",
       llvm::json::Object{
           {"embedding_stage_ms", cost.iterationUs * 1e-3},
           {"per_rank_ms", toMs(cost.perRankUs)},
           {"index_exchange_ms", cost.indexExchangeUs * 1e-3},
           {"output_exchange_ms", cost.outputExchangeUs * 1e-3},
           {"reduce_scatter_ms", cost.reduceScatterUs * 1e-3},
           {"training", sharding.problem.training},
           {"gradient_exchange_ms", cost.gradientExchangeUs * 1e-3},
           {"all_gather_ms", cost.allGatherUs * 1e-3},
           {"data_parallel_all_reduce_ms",
            cost.dataParallelAllReduceUs * 1e-3},
           {"dense_stage_ms", std::move(denseMs)},
           {"forward_ms", std::move(forwardMs)}}},
      {"tables", std::move(tables)},
      {"dense_layers", std::move(denseLayers)}};
}

bool mlir::braid::writePlanTrace(llvm::raw_ostream &os,
                                 const PlanReport &report) {
  if (!report.prediction)
    return false;
  sim::writeChromeTrace(os, report.prediction->schedule,
                        report.prediction->result);
  return true;
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

void mlir::braid::printPlanReport(llvm::raw_ostream &os,
                                  const PlanReport &report,
                                  int64_t maxTableRows) {
  const ShardingResult &sharding = report.sharding;
  const plan::PlanProblem &problem = sharding.problem;
  const plan::PlanCost &cost = report.plannerCost;
  os << llvm::formatv("plan by '{0}' for {1} x {2} ranks of {3}, global batch "
                      "{4} ({5:f3} s)\n",
                      sharding.plan.planner, problem.nodes,
                      problem.ranksPerNode, problem.hw.name, problem.batch,
                      sharding.planningSeconds);
  os << llvm::formatv("{0,-24} {1,-15} {2,-16} {3,12}\n", "table", "sharding",
                      "ranks", "lookup_us");
  int64_t listed = 0;
  for (auto [spec, tp] : llvm::zip(problem.tables, sharding.plan.tables)) {
    if (listed++ == maxTableRows) {
      os << "... " << problem.tables.size() - maxTableRows
         << " more tables in plan.json\n";
      break;
    }
    double lookupUs = 0;
    for (const plan::Shard &shard : tp.shards)
      lookupUs += plan::shardLookupUs(problem, spec, tp.type, shard);
    os << llvm::formatv("{0,-24} {1,-15} {2,-16} {3,12:f2}\n", spec.name,
                        plan::stringifyShardingType(tp.type), formatRanks(tp),
                        lookupUs);
  }
  const std::optional<sim::ProgramPrediction> &p = report.prediction;
  os << llvm::formatv("{0,-6} {1,12} {2,12} {3,14} {4,12}\n", "rank",
                      "lookups_us", "planner_us", "simulated_us", "memory_GB");
  for (size_t r = 0; r < cost.perRankUs.size(); ++r)
    os << llvm::formatv("{0,-6} {1,12:f2} {2,12:f2} {3,14} {4,12:f3}\n", r,
                        cost.lookupUs[r], cost.perRankUs[r],
                        p ? llvm::formatv("{0:f2}", p->result.ranks[r].endUs)
                                .str()
                          : std::string("-"),
                        cost.memoryBytes[r] * 1e-9);
  std::string bound =
      std::isfinite(report.lowerBoundUs)
          ? llvm::formatv("{0:f3} ms", report.lowerBoundUs * 1e-3).str()
          : std::string("none (no plan fits memory)");
  if (problem.training)
    os << llvm::formatv(
        "planner's embedding stage of the training step: {0:f3} ms (index "
        "all_to_all {1:f3}, output all_to_all {2:f3}, reduce_scatter {3:f3}, "
        "gradient all_to_all {4:f3}, all_gather {5:f3}, data-parallel "
        "all_reduce {6:f3}); lower bound {7}\n",
        cost.iterationUs * 1e-3, cost.indexExchangeUs * 1e-3,
        cost.outputExchangeUs * 1e-3, cost.reduceScatterUs * 1e-3,
        cost.gradientExchangeUs * 1e-3, cost.allGatherUs * 1e-3,
        cost.dataParallelAllReduceUs * 1e-3, bound);
  else
    os << llvm::formatv(
        "planner's embedding stage: {0:f3} ms (index all_to_all {1:f3}, "
        "output all_to_all {2:f3}, reduce_scatter {3:f3}); lower bound {4}\n",
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
  if (!p) {
    os << "predicted iteration: not simulated (braid-compile simulates a "
          "module with one function)\n";
  } else {
    os << llvm::formatv(
        "predicted iteration: {0:f3} ms, the simulated per-rank program "
        "(slowest rank {1}: {2}; exposed communication {3:f3} ms)\n",
        p->result.makespanUs * 1e-3, p->criticalRank,
        describeBreakdown(*p, /*training=*/false),
        p->result.ranks[p->criticalRank].exposedCommUs * 1e-3);
  }
  if (const std::optional<sim::ProgramPrediction> &t = report.trainPrediction)
    os << llvm::formatv(
        "predicted training step: {0:f3} ms, the simulated @train_step "
        "(slowest rank {1}: {2}; exposed communication {3:f3} ms)\n",
        t->result.makespanUs * 1e-3, t->criticalRank,
        describeBreakdown(*t, /*training=*/true),
        t->result.ranks[t->criticalRank].exposedCommUs * 1e-3);
  // What braid-co-optimize did, and the communication it hid.
  auto describeCoOpt = [&](StringRef name, const CoOptSummary &summary,
                           const sim::ProgramPrediction &p) {
    const sim::RankBreakdown &critical = p.result.ranks[p.criticalRank];
    os << llvm::formatv(
        "co-optimized {0}: {1} optimizer step(s) on shards, {2} bucket(s) "
        "of {3} collectives, {7} fused exchange(s) of {8} all_to_alls, {12} "
        "fused index exchange(s) of {13} all_to_all_vs ({14} as i32), {4} "
        "collectives started early, {9} parameter(s) stored as blocks, "
        "lookups in {10} chunk(s), {11} weight gradient(s) deferred, {15} "
        "layer(s) split by feature arrival, {16} parameter(s) stepped by "
        "{17} fused optimizer kernel(s), {18} exchange(s) in 16 bits; {5:f3} "
        "of {6:f3} ms of communication hidden behind computation on the "
        "slowest rank\n",
        name, summary.shardedSteps, summary.buckets, summary.bucketedMembers,
        summary.started,
        std::max(0.0, critical.commUs - critical.exposedCommUs) * 1e-3,
        critical.commUs * 1e-3, summary.fusedExchanges, summary.fusedMembers,
        summary.parameterBlocks, summary.lookupChunks,
        summary.deferredWeightGradients, summary.fusedIndexExchanges,
        summary.fusedIndexMembers, summary.narrowedIndexExchanges,
        summary.splitFeatureGemms, summary.fusedOptimizerMembers,
        summary.fusedOptimizerSteps, summary.halfExchanges);
  };
  if (p)
    describeCoOpt(report.trainPrediction ? "@forward" : "program",
                  report.forwardCoOpt, *p);
  if (const std::optional<sim::ProgramPrediction> &t = report.trainPrediction)
    describeCoOpt("@train_step", report.trainCoOpt, *t);
  for (auto [name, prediction] :
       {std::pair{report.trainPrediction ? "@forward" : "the program",
                  &report.forwardPipelined},
        std::pair{"@train_step", &report.trainPipelined}}) {
    if (!*prediction)
      continue;
    const sim::RankBreakdown &critical =
        (*prediction)->result.ranks[(*prediction)->criticalRank];
    os << llvm::formatv(
        "pipelined {0} (braid-pipeline-input-dist: the next batch's input "
        "distribution inside the step): {1:f3} ms; {2:f3} of {3:f3} ms of "
        "communication hidden behind computation on the slowest rank\n",
        name, (*prediction)->result.makespanUs * 1e-3,
        std::max(0.0, critical.commUs - critical.exposedCommUs) * 1e-3,
        critical.commUs * 1e-3);
  }
  if (sharding.denseLayers.empty())
    return;
  os << llvm::formatv("{0,-24} {1,-15} {2,16} {3,12} {4,12}\n",
                      "dense layer [out x in]", "placement",
                      "data_parallel_us", "column_us", "row_us");
  for (const DenseLayerChoice &layer : sharding.denseLayers) {
    const plan::DenseLayerCost &lc = layer.cost;
    os << llvm::formatv(
        "{0,-24} {1,-15} {2,16:f2} {3,12:f2} {4,12:f2}\n",
        llvm::formatv("linear {0} x {1}", layer.out, layer.in).str(),
        layer.placement, lc.dataParallelUs, lc.columnUs, lc.rowUs);
    double best = std::min(lc.columnUs, lc.rowUs);
    if (layer.placement == "data_parallel" && best < lc.dataParallelUs)
      os << llvm::formatv(
          "note: tensor-parallel ({0}) would take {1:f2} us instead of "
          "{2:f2} by the per-layer estimate; the planner places dense "
          "layers data-parallel unless the model places them\n",
          lc.columnUs <= lc.rowUs ? "column" : "row", best,
          lc.dataParallelUs);
  }
}
