//===- PlanCost.cpp - Cost of a sharding plan -----------------------------===//
//
// This file evaluates a plan under the cost model (see Planner.h for the
// stages) as a sum of what each table adds (PlanLoad.h). Rank r holds
// samples [r * B / R, (r + 1) * B / R) of the global batch B.
//
//===----------------------------------------------------------------------===//

#include "PlanLoad.h"
#include "TablePlans.h"

#include "braid/Cost/CostModel.h"

#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>

using namespace mlir::braid;
using namespace mlir::braid::plan;

double plan::defaultReserveBytes(const cluster::HardwareDesc &hw) {
  return 0.1 * hw.device.memoryCapacityGB * 1e9;
}

llvm::StringRef plan::stringifyShardingType(ShardingType type) {
  switch (type) {
  case ShardingType::table_wise:
    return "table_wise";
  case ShardingType::row_wise:
    return "row_wise";
  case ShardingType::column_wise:
    return "column_wise";
  case ShardingType::table_row_wise:
    return "table_row_wise";
  case ShardingType::data_parallel:
    return "data_parallel";
  }
  return "?";
}

std::optional<ShardingType> plan::symbolizeShardingType(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ShardingType>>(name)
      .Case("table_wise", ShardingType::table_wise)
      .Case("row_wise", ShardingType::row_wise)
      .Case("column_wise", ShardingType::column_wise)
      .Case("table_row_wise", ShardingType::table_row_wise)
      .Case("data_parallel", ShardingType::data_parallel)
      .Default(std::nullopt);
}

double plan::shardLookupUs(const PlanProblem &problem, const TableSpec &table,
                           ShardingType type, const Shard &shard) {
  cost::EmbeddingBagShape shape;
  shape.dim = shard.cols;
  shape.elementBytes = table.elementBytes;
  shape.uniqueRatio = table.uniqueRatio;
  shape.rows = shard.rows;
  shape.bags = problem.batch;
  shape.poolingFactor = table.poolingFactor;
  if (type == ShardingType::data_parallel) {
    shape.bags = (problem.batch + problem.ranks() - 1) / problem.ranks();
  } else if (type == ShardingType::row_wise ||
             type == ShardingType::table_row_wise) {
    // Uniformly drawn rows: the shard sees its share of the lookups.
    shape.poolingFactor *= double(shard.rows) / table.rows;
  }
  if (shape.rows == 0 || shape.dim == 0)
    return 0;
  return cost::estimateEmbeddingBag(problem.hw, shape).timeUs -
         problem.hw.device.launchOverheadUs;
}

/// The optimizer state a table keeps per element (adagrad) or per row
/// (rowwise_adagrad), in bytes per element of a shard of `cols` columns.
static double stateBytesPerElement(const PlanProblem &problem, int64_t cols) {
  if (problem.embeddingOptimizer == "adagrad")
    return 4;
  if (problem.embeddingOptimizer == "rowwise_adagrad")
    return cols ? 4.0 / double(cols) : 0.0;
  return 0;
}

double plan::shardBackwardUs(const PlanProblem &problem,
                             const TableSpec &table, ShardingType type,
                             const Shard &shard) {
  if (!problem.training || shard.rows == 0 || shard.cols == 0)
    return 0;
  // The looked-up rows: read, updated and written, with their state.
  TableSpec updated = table;
  double state = stateBytesPerElement(problem, shard.cols);
  updated.elementBytes =
      int64_t(std::ceil(2 * table.elementBytes + 2 * state));
  double us = shardLookupUs(problem, updated, type, shard);
  if (type == ShardingType::data_parallel && problem.ranks() > 1) {
    // The whole gradient is filled, then read by the update with the
    // table and its state (DDP's way for a replicated table).
    double elements = double(shard.rows) * shard.cols;
    us += cost::estimateElementwise(
              problem.hw,
              elements * (2 * 4 + 2 * table.elementBytes + 2 * state))
              .timeUs -
          problem.hw.device.launchOverheadUs;
  }
  return us;
}

double plan::shardMemoryBytes(const PlanProblem &problem,
                              const TableSpec &table, ShardingType type,
                              const Shard &shard) {
  double elements = double(shard.rows) * shard.cols;
  double bytes = elements * table.elementBytes;
  if (!problem.training || elements == 0)
    return bytes;
  bytes += elements * stateBytesPerElement(problem, shard.cols);
  int64_t R = problem.ranks();
  if (type == ShardingType::data_parallel) {
    // The local gradient and the all_reduce's result, when there are
    // replicas to sum; the pooled rows of the rank's own samples.
    if (R > 1)
      bytes += 2 * elements * 4;
    bytes += 2.0 * double(problem.batch) / R * shard.cols * 4;
  } else {
    // The owner pools (and later receives the gradient of) every sample's
    // bag.
    bytes += 2.0 * double(problem.batch) * shard.cols * 4;
  }
  return bytes;
}

double plan::tableMemoryBytes(const PlanProblem &problem,
                              const TableSpec &table) {
  return shardMemoryBytes(problem, table, ShardingType::table_wise,
                          {0, 0, table.rows, 0, table.dim});
}

PlanLoad::PlanLoad(const PlanProblem &problem)
    : lookupUs(problem.ranks(), 0), memoryBytes(problem.ranks(), 0),
      indexLinks(problem.ranks(), problem.nodes),
      outputLinks(problem.ranks(), problem.nodes),
      lookupShards(problem.ranks(), 0) {}

static void addVector(std::vector<double> &into,
                      const std::vector<double> &other, double sign) {
  for (size_t i = 0; i < into.size(); ++i)
    into[i] += sign * other[i];
}

static void addLinks(cost::AllToAllLinkBytes &into,
                     const cost::AllToAllLinkBytes &other, double sign) {
  addVector(into.rankOut, other.rankOut, sign);
  addVector(into.rankIn, other.rankIn, sign);
  addVector(into.nodeOut, other.nodeOut, sign);
  addVector(into.nodeIn, other.nodeIn, sign);
}

void PlanLoad::add(const PlanLoad &other, double sign) {
  addVector(lookupUs, other.lookupUs, sign);
  addVector(memoryBytes, other.memoryBytes, sign);
  addLinks(indexLinks, other.indexLinks, sign);
  addLinks(outputLinks, other.outputLinks, sign);
  int64_t step = sign > 0 ? 1 : -1;
  for (size_t r = 0; r < lookupShards.size(); ++r)
    lookupShards[r] += step * other.lookupShards[r];
  indexUsers += step * other.indexUsers;
  outputUsers += step * other.outputUsers;
  rowWiseUsers += step * other.rowWiseUsers;
  tableRowWiseUsers += step * other.tableRowWiseUsers;
  rowWiseBytes += sign * other.rowWiseBytes;
  tableRowWiseBytes += sign * other.tableRowWiseBytes;
  dataParallelUsers += step * other.dataParallelUsers;
  dataParallelGradBytes += sign * other.dataParallelGradBytes;
}

/// `bytes` from every rank to `owner` (`toOwner`), or from `owner` to every
/// rank, on the links the all_to_all model charges.
static void addAllToOne(cost::AllToAllLinkBytes &links, int64_t owner,
                        double bytes, bool toOwner, int64_t ranksPerNode) {
  int64_t node = owner / ranksPerNode, nodes = links.nodeOut.size();
  for (int64_t i = node * ranksPerNode; i < (node + 1) * ranksPerNode; ++i) {
    if (i == owner)
      continue;
    (toOwner ? links.rankOut[i] : links.rankIn[i]) += bytes;
    (toOwner ? links.rankIn[owner] : links.rankOut[owner]) += bytes;
  }
  for (int64_t n = 0; n < nodes; ++n) {
    if (n == node)
      continue;
    (toOwner ? links.nodeOut[n] : links.nodeIn[n]) += ranksPerNode * bytes;
    (toOwner ? links.nodeIn[node] : links.nodeOut[node]) += ranksPerNode * bytes;
  }
}

PlanLoad plan::tableLoad(const PlanProblem &problem, const TableSpec &table,
                         const TablePlan &tp) {
  int64_t R = problem.ranks(), g = problem.ranksPerNode;
  double perRank = double(problem.batch) / R;
  double indicesPerRank = perRank * table.poolingFactor * 8;
  PlanLoad load(problem);
  bool sendsIndices = false, sendsOutputs = false;
  for (const Shard &shard : tp.shards) {
    double us = shardLookupUs(problem, table, tp.type, shard);
    load.lookupUs[shard.rank] +=
        us + shardBackwardUs(problem, table, tp.type, shard);
    load.lookupShards[shard.rank] += us > 0;
    load.memoryBytes[shard.rank] +=
        shardMemoryBytes(problem, table, tp.type, shard);
    if (tp.type == ShardingType::data_parallel)
      continue;
    // Indices from every rank to the owner (row shards get their share).
    double indexBytes = indicesPerRank * double(shard.rows) / table.rows;
    addAllToOne(load.indexLinks, shard.rank, indexBytes, /*toOwner=*/true, g);
    sendsIndices = sendsIndices || indexBytes > 0;
    // Pooled rows back to the samples' ranks (f32 output).
    if (tp.type == ShardingType::table_wise ||
        tp.type == ShardingType::column_wise) {
      double outputBytes = perRank * shard.cols * 4;
      addAllToOne(load.outputLinks, shard.rank, outputBytes, /*toOwner=*/false,
                  g);
      sendsOutputs = sendsOutputs || outputBytes > 0;
    }
  }
  if (tp.type == ShardingType::row_wise) {
    load.rowWiseBytes = double(problem.batch) * table.dim * 4;
    load.rowWiseUsers = 1;
  }
  if (tp.type == ShardingType::table_row_wise) {
    load.tableRowWiseBytes = double(problem.batch) * table.dim * 4;
    load.tableRowWiseUsers = 1;
    // After the node-local reduce_scatter, node rank k holds samples
    // [k B/g, (k+1) B/g) and sends each owner its B/R rows.
    int64_t node = tp.shards.front().rank / g;
    double outputBytes = perRank * table.dim * 4;
    for (int64_t i = 0; i < R; ++i) {
      int64_t sender = node * g + i * g / R;
      if (sender == i)
        continue;
      if (sender / g == i / g) {
        load.outputLinks.rankOut[sender] += outputBytes;
        load.outputLinks.rankIn[i] += outputBytes;
      } else {
        load.outputLinks.nodeOut[node] += outputBytes;
        load.outputLinks.nodeIn[i / g] += outputBytes;
      }
    }
    sendsOutputs = sendsOutputs || outputBytes > 0;
  }
  load.indexUsers = sendsIndices;
  load.outputUsers = sendsOutputs;
  if (problem.training && tp.type == ShardingType::data_parallel && R > 1) {
    load.dataParallelUsers = 1;
    load.dataParallelGradBytes = table.bytes() / table.elementBytes * 4;
  }
  return load;
}

namespace {
/// The exchanges of a load, in microseconds.
struct ExchangeTimes {
  double indexUs = 0, outputUs = 0, reduceScatterUs = 0;
  double gradientUs = 0, allGatherUs = 0, allReduceUs = 0;
  double total() const {
    return indexUs + outputUs + reduceScatterUs + gradientUs + allGatherUs +
           allReduceUs;
  }
};
} // namespace

/// The links of the reverse exchange: what a rank sent, it receives.
static cost::AllToAllLinkBytes reversed(const cost::AllToAllLinkBytes &links) {
  cost::AllToAllLinkBytes back = links;
  std::swap(back.rankOut, back.rankIn);
  std::swap(back.nodeOut, back.nodeIn);
  return back;
}

static ExchangeTimes exchangeTimes(const PlanProblem &problem,
                                   const PlanLoad &load) {
  const cluster::HardwareDesc &hw = problem.hw;
  ExchangeTimes times;
  if (load.indexUsers > 0)
    times.indexUs = cost::estimateAllToAllvUs(hw, load.indexLinks);
  if (load.outputUsers > 0)
    times.outputUs = cost::estimateAllToAllvUs(hw, load.outputLinks);
  if (load.rowWiseUsers > 0)
    times.reduceScatterUs += cost::estimateCollective(
        hw, cost::CollectiveKind::reduce_scatter, load.rowWiseBytes,
        problem.ranks(), problem.nodes).timeUs;
  if (load.tableRowWiseUsers > 0)
    times.reduceScatterUs += cost::estimateCollective(
        hw, cost::CollectiveKind::reduce_scatter, load.tableRowWiseBytes,
        problem.ranksPerNode, 1).timeUs;
  if (!problem.training)
    return times;
  // The backward: the pooled gradients go back the way the rows came, the
  // row-wise partials' gradients are all-gathered, and the data-parallel
  // tables' gradients summed by one all_reduce.
  if (load.outputUsers > 0)
    times.gradientUs = cost::estimateAllToAllvUs(hw, reversed(load.outputLinks));
  if (load.rowWiseUsers > 0)
    times.allGatherUs += cost::estimateCollective(
        hw, cost::CollectiveKind::all_gather, load.rowWiseBytes,
        problem.ranks(), problem.nodes).timeUs;
  if (load.tableRowWiseUsers > 0)
    times.allGatherUs += cost::estimateCollective(
        hw, cost::CollectiveKind::all_gather, load.tableRowWiseBytes,
        problem.ranksPerNode, 1).timeUs;
  if (load.dataParallelUsers > 0)
    times.allReduceUs = cost::estimateCollective(
        hw, cost::CollectiveKind::all_reduce, load.dataParallelGradBytes,
        problem.ranks(), problem.nodes).timeUs;
  return times;
}

/// A rank's lookups: its shards' plus one fused kernel's launch if any.
static double rankLookupUs(const PlanProblem &problem, const PlanLoad &load,
                           int64_t rank) {
  return load.lookupShards[rank] > 0
             ? load.lookupUs[rank] + problem.hw.device.launchOverheadUs
             : 0.0;
}

PlanCost plan::costOfLoad(const PlanProblem &problem, const PlanLoad &load) {
  int64_t R = problem.ranks();
  PlanCost cost;
  ExchangeTimes times = exchangeTimes(problem, load);
  cost.indexExchangeUs = times.indexUs;
  cost.outputExchangeUs = times.outputUs;
  cost.reduceScatterUs = times.reduceScatterUs;
  cost.gradientExchangeUs = times.gradientUs;
  cost.allGatherUs = times.allGatherUs;
  cost.dataParallelAllReduceUs = times.allReduceUs;
  cost.memoryBytes = load.memoryBytes;
  cost.lookupUs.resize(R);
  cost.perRankUs.resize(R);
  double slowest = 0;
  for (int64_t r = 0; r < R; ++r) {
    cost.lookupUs[r] = rankLookupUs(problem, load, r);
    cost.perRankUs[r] = cost.lookupUs[r] + times.total();
    slowest = std::max(slowest, cost.lookupUs[r]);
    cost.fitsMemory =
        cost.fitsMemory && load.memoryBytes[r] <= problem.capacityBytes();
  }
  cost.iterationUs = slowest + times.total();
  return cost;
}

CostSummary plan::summarizeLoad(const PlanProblem &problem,
                                const PlanLoad &load) {
  CostSummary summary;
  double slowest = 0;
  for (int64_t r = 0; r < problem.ranks(); ++r) {
    slowest = std::max(slowest, rankLookupUs(problem, load, r));
    summary.fitsMemory = summary.fitsMemory &&
                         load.memoryBytes[r] <= problem.capacityBytes();
  }
  summary.iterationUs = slowest + exchangeTimes(problem, load).total();
  return summary;
}

PlanCost plan::evaluatePlan(const PlanProblem &problem, const Plan &plan) {
  PlanLoad load(problem);
  for (size_t t = 0; t < plan.tables.size(); ++t)
    load.add(tableLoad(problem, problem.tables[t], plan.tables[t]), +1);
  return costOfLoad(problem, load);
}
