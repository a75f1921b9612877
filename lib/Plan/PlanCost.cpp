//===- PlanCost.cpp - Cost of a sharding plan -----------------------------===//
//
// This file evaluates a plan under the cost model (see Planner.h for the
// stages), and computes the lower bound. Rank r holds samples
// [r * B / R, (r + 1) * B / R) of the global batch B.
//
//===----------------------------------------------------------------------===//

#include "TablePlans.h"

#include "braid/Cost/CostModel.h"

#include "llvm/ADT/STLExtras.h"
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

PlanCost plan::evaluatePlan(const PlanProblem &problem, const Plan &plan) {
  int64_t R = problem.ranks(), g = problem.ranksPerNode;
  double B = problem.batch, perRank = B / R;
  const cluster::HardwareDesc &hw = problem.hw;
  PlanCost cost;
  std::vector<double> compute(R, 0);
  cost.memoryBytes.assign(R, 0);
  std::vector<double> indexBytes(R * R, 0), outputBytes(R * R, 0);
  double rowWiseBytes = 0, tableRowWiseBytes = 0;
  for (size_t t = 0; t < plan.tables.size(); ++t) {
    const TableSpec &table = problem.tables[t];
    const TablePlan &tp = plan.tables[t];
    double indicesPerRank = perRank * table.poolingFactor * 8;
    for (const Shard &shard : tp.shards) {
      compute[shard.rank] += shardLookupUs(problem, table, tp.type, shard);
      cost.memoryBytes[shard.rank] +=
          double(shard.rows) * shard.cols * table.elementBytes;
      if (tp.type == ShardingType::data_parallel)
        continue;
      double rowShare = double(shard.rows) / table.rows;
      for (int64_t i = 0; i < R; ++i) {
        // Indices from every rank to the owner (row shards get their share).
        indexBytes[i * R + shard.rank] += indicesPerRank * rowShare;
        // Pooled rows back to the samples' ranks (f32 output).
        if (tp.type == ShardingType::table_wise ||
            tp.type == ShardingType::column_wise)
          outputBytes[shard.rank * R + i] += perRank * shard.cols * 4;
      }
    }
    if (tp.type == ShardingType::row_wise)
      rowWiseBytes += B * table.dim * 4;
    if (tp.type == ShardingType::table_row_wise) {
      tableRowWiseBytes += B * table.dim * 4;
      // After the node-local reduce_scatter, node rank k holds samples
      // [k B/g, (k+1) B/g) and sends each owner its B/R rows.
      int64_t node = tp.shards.front().rank / g;
      for (int64_t k = 0; k < g; ++k)
        for (int64_t i = 0; i < R; ++i)
          if (i * g / R == k)
            outputBytes[(node * g + k) * R + i] += perRank * table.dim * 4;
    }
  }
  for (int64_t r = 0; r < R; ++r)
    if (compute[r] > 0)
      compute[r] += hw.device.launchOverheadUs; // one fused kernel per rank
  // A plan with no sharded table (all data-parallel) exchanges nothing.
  auto exchangeUs = [&](const std::vector<double> &bytes) {
    bool any = llvm::any_of(bytes, [](double b) { return b > 0; });
    return any ? cost::estimateAllToAllvUs(hw, bytes, R, g) : 0.0;
  };
  cost.indexExchangeUs = exchangeUs(indexBytes);
  cost.outputExchangeUs = exchangeUs(outputBytes);
  if (rowWiseBytes > 0)
    cost.reduceScatterUs += cost::estimateCollective(
        hw, cost::CollectiveKind::reduce_scatter, rowWiseBytes, R,
        problem.nodes).timeUs;
  if (tableRowWiseBytes > 0)
    cost.reduceScatterUs += cost::estimateCollective(
        hw, cost::CollectiveKind::reduce_scatter, tableRowWiseBytes, g, 1)
                                .timeUs;
  cost.lookupUs = compute;
  double comm = cost.indexExchangeUs + cost.outputExchangeUs + cost.reduceScatterUs;
  double slowest = *std::max_element(compute.begin(), compute.end());
  cost.perRankUs.resize(R);
  for (int64_t r = 0; r < R; ++r)
    cost.perRankUs[r] = compute[r] + comm;
  cost.iterationUs = slowest + comm;
  for (double bytes : cost.memoryBytes)
    cost.fitsMemory = cost.fitsMemory && bytes <= problem.capacityBytes();
  return cost;
}

namespace {
/// One way to place a table, for the lower bound: the least exchange time
/// it implies and the lookup time of its largest shard ("piece").
struct BoundOption {
  double commUs, pieceUs;
};
} // namespace

/// For every table, its options: table-wise, column-wise in 2, 4, ... R
/// shards, table-row-wise and row-wise. Each option's exchange is bounded
/// by the bytes it must move over the links the cost model charges, at
/// their full bandwidth (the NICs' average across nodes, else the ranks'
/// intra-node links): table-wise and table-row-wise move every index and
/// pooled row of the other nodes' (ranks') samples; column-wise moves the
/// indices once per shard; row-wise moves the indices and reduce-scatters
/// every partial sum. Row-wise's piece is taken as zero.
static std::vector<std::vector<BoundOption>>
boundOptions(const PlanProblem &problem) {
  const cluster::HardwareDesc &hw = problem.hw;
  int64_t R = problem.ranks(), g = problem.ranksPerNode, N = problem.nodes;
  double B = problem.batch;
  double crossShare = N > 1 ? double(R - g) / R : double(R - 1) / R;
  double a2aUsPerByte =
      N > 1 ? 1e-3 / (N * hw.interNode.nicsPerNode *
                      hw.interNode.effectiveNicGBps())
            : 1e-3 / (R * hw.intraNode.bandwidthGBps());
  double rsUsPerByte = cost::reduceScatterUsPerByteAtLeast(hw, R, N);
  std::vector<std::vector<BoundOption>> result;
  for (const TableSpec &table : problem.tables) {
    double indexBytes = B * table.poolingFactor * 8;
    double outputBytes = B * table.dim * 4;
    auto piece = [&](ShardingType type, int64_t where, int64_t parts) {
      double worst = 0;
      for (const Shard &shard :
           makeTablePlan(problem, table, type, where, parts).shards)
        worst = std::max(worst, shardLookupUs(problem, table, type, shard));
      return worst;
    };
    std::vector<BoundOption> options;
    options.push_back({crossShare * (indexBytes + outputBytes) * a2aUsPerByte,
                       piece(ShardingType::table_wise, 0, 1)});
    for (int64_t parts = 2; parts <= std::min(R, table.dim); parts *= 2)
      options.push_back(
          {crossShare * (parts * indexBytes + outputBytes) * a2aUsPerByte,
           piece(ShardingType::column_wise, 0, parts)});
    if (N > 1)
      options.push_back(
          {crossShare * (indexBytes + outputBytes) * a2aUsPerByte,
           piece(ShardingType::table_row_wise, 0, g)});
    options.push_back(
        {crossShare * indexBytes * a2aUsPerByte + outputBytes * rsUsPerByte, 0});
    result.push_back(std::move(options));
  }
  return result;
}

/// Up to this many tables, which to replicate is an exact 0/1 knapsack.
static constexpr size_t kExactKnapsackItems = 128;
static constexpr int64_t kKnapsackUnits = 4096;

/// A lower bound on the exchanges of every plan whose largest shard
/// lookup is at most `pieceUs`: each table takes its cheapest option within
/// that, or is replicated (no exchange, a copy on every rank, its
/// per-rank lookup within `pieceUs`). Which tables to replicate is a
/// knapsack under the ranks' average memory: 0/1 over rounded-down weights
/// for small table counts, fractional beyond. A plan that shards any table
/// pays at least one all_to_all's latency for its indices.
static double exchangeLowerBoundUs(
    const PlanProblem &problem,
    const std::vector<std::vector<BoundOption>> &options,
    const std::vector<double> &replicaPieceUs, double pieceUs,
    double replicaCharge = 0) {
  int64_t R = problem.ranks();
  struct Item {
    double weight, value;
  };
  std::vector<Item> items;
  double budget = problem.capacityBytes(), total = 0;
  bool someSharded = false;
  for (size_t t = 0; t < problem.tables.size(); ++t) {
    const TableSpec &table = problem.tables[t];
    double cheapest = INFINITY;
    for (const BoundOption &option : options[t])
      if (option.pieceUs <= pieceUs)
        cheapest = std::min(cheapest, option.commUs);
    budget -= table.bytes() / R;
    total += cheapest;
    // Charged replicas are priced by their lookups instead of being
    // limited by the piece.
    if (replicaCharge > 0 || replicaPieceUs[t] <= pieceUs)
      items.push_back({table.bytes() * (1 - 1.0 / R),
                       cheapest - replicaCharge * replicaPieceUs[t]});
    else
      someSharded = true;
  }
  double saved = 0;
  if (budget > 0 && items.size() <= kExactKnapsackItems) {
    // 0/1 knapsack over weights rounded down to 1/kKnapsackUnits of the
    // budget, which only enlarges the feasible set.
    double unit = budget / kKnapsackUnits;
    std::vector<double> best(kKnapsackUnits + 1, 0);
    double weightSum = 0;
    for (const Item &item : items) {
      weightSum += item.weight;
      if (item.value <= 0)
        continue;
      int64_t w = int64_t(std::floor(item.weight / unit));
      for (int64_t c = kKnapsackUnits; c >= w; --c)
        best[c] = std::max(best[c], best[c - w] + item.value);
    }
    saved = best[kKnapsackUnits];
    // Unless every table can be replicated, some table exchanges indices.
    someSharded = someSharded || weightSum > budget;
  } else {
    // Fractional: replicate the most exchange per byte first.
    std::sort(items.begin(), items.end(), [](const Item &a, const Item &b) {
      return a.value * b.weight > b.value * a.weight;
    });
    double left = budget;
    for (const Item &item : items) {
      if (item.value <= 0)
        continue;
      if (left <= 0) {
        someSharded = true;
        break;
      }
      double fraction = item.weight <= left ? 1 : left / item.weight;
      someSharded = someSharded || fraction < 1;
      saved += fraction * item.value;
      left -= fraction * item.weight;
    }
  }
  double latencyUs = 0;
  // With a charge for replicas, leaving a table sharded may be the cheaper
  // choice in the relaxation, so no latency is claimed.
  if (someSharded && replicaCharge == 0)
    latencyUs = cost::estimateAllToAllvUs(problem.hw,
                                          std::vector<double>(R * R, 0), R,
                                          problem.ranksPerNode);
  return std::max(0.0, total - saved) + latencyUs;
}

double plan::lowerBoundUs(const PlanProblem &problem) {
  // iteration = slowest rank's lookups + communication >= mean lookups.
  // Whatever the sharding, the lookups of a table together read each
  // distinct row at least once at its exact size (shards round rows up to
  // sectors and split the distinct rows in proportion to their rows),
  // every index once and every pooled output once, and do every
  // multiply-add once. The cost model charges every shard at least the
  // larger of its memory and arithmetic time, so their sums bound the total.
  // The fused launch is bounded by one launch on some rank. The exchanges
  // add their own bound: the iteration is the slowest rank's lookups plus
  // the exchanges.
  const cluster::HardwareDesc &hw = problem.hw;
  double bandwidth = hw.device.memoryBandwidthGBps * hw.device.memoryEfficiency;
  double total = 0;
  for (const TableSpec &table : problem.tables) {
    double lookups = double(problem.batch) * table.poolingFactor;
    double distinct = std::min(lookups * table.uniqueRatio, double(table.rows));
    double bytes = distinct * table.dim * table.elementBytes /
                       hw.device.gatherEfficiency +
                   lookups * 8 +
                   double(problem.batch) * table.dim * table.elementBytes;
    double memoryUs = bytes / bandwidth * 1e-3;
    double computeUs =
        lookups * table.dim / (hw.device.peakTflops.lookup("f32") * 1e12) * 1e6;
    total += std::max(memoryUs, computeUs);
  }
  int64_t R = problem.ranks();
  double computeUs = total / R + hw.device.launchOverheadUs / R;
  if (R == 1)
    return computeUs;
  // A plan whose largest shard lookup takes P has its slowest rank at
  // max(computeUs, P) and its exchanges at least exchangeLowerBoundUs(P),
  // which only falls as P grows; so the bound is the least, over the
  // pieces P >= computeUs that options can have, of their sum.
  std::vector<std::vector<BoundOption>> options = boundOptions(problem);
  std::vector<double> replicaPieceUs, pieces{computeUs};
  for (size_t t = 0; t < problem.tables.size(); ++t) {
    const TableSpec &table = problem.tables[t];
    Shard replica{0, 0, table.rows, 0, table.dim};
    replicaPieceUs.push_back(
        shardLookupUs(problem, table, ShardingType::data_parallel, replica));
    pieces.push_back(replicaPieceUs.back());
    for (const BoundOption &option : options[t])
      pieces.push_back(option.pieceUs);
  }
  std::sort(pieces.begin(), pieces.end());
  pieces.erase(std::unique(pieces.begin(), pieces.end()), pieces.end());
  double best = INFINITY;
  for (double piece : pieces)
    if (piece >= computeUs)
      best = std::min(best, piece + exchangeLowerBoundUs(problem, options,
                                                         replicaPieceUs, piece));
  // Replicas put their lookups on every rank, the owner of the largest
  // sharded piece P included: slowest >= W + P with W the replicas'
  // per-rank lookups, and slowest >= computeUs. For lambda in [0, 1], slowest >=
  // lambda computeUs + (1 - lambda)(W + P), which the knapsack prices by
  // charging each replica (1 - lambda) of its lookups.
  pieces.push_back(0);
  for (double lambda : {0.0, 0.5}) {
    double coupled = INFINITY;
    for (double piece : pieces)
      coupled = std::min(coupled,
                         lambda * computeUs + (1 - lambda) * piece +
                             exchangeLowerBoundUs(problem, options,
                                                  replicaPieceUs, piece,
                                                  1 - lambda));
    best = std::max(best, coupled);
  }
  return best;
}
