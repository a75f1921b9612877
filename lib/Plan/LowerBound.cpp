//===- LowerBound.cpp - A lower bound on a plan's iteration time ----------===//
//
// This file computes the lower bound reported beside every plan: a
// relaxation of evaluatePlan that no feasible plan can beat (see
// docs/planner.md for the argument).
//
//===----------------------------------------------------------------------===//

#include "TablePlans.h"

#include "braid/Cost/CostModel.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>

using namespace mlir::braid;
using namespace mlir::braid::plan;

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

/// The latency every plan that shards a table pays at least: the index
/// all_to_all (unless a table without lookups could be the only one
/// sharded: it sends no indices), then either the pooled-row all_to_all or
/// a reduce_scatter.
static double shardedLatencyUs(const PlanProblem &problem) {
  int64_t R = problem.ranks();
  double allToAllUs = cost::estimateAllToAllvUs(
      problem.hw, std::vector<double>(R * R, 0), R, problem.ranksPerNode);
  double reduceScatterUs = cost::collectiveLatencyUs(
      problem.hw, cost::CollectiveKind::reduce_scatter, R, problem.nodes);
  bool everyTableSendsIndices =
      llvm::all_of(problem.tables, [](const TableSpec &table) {
        return table.poolingFactor > 0;
      });
  return (everyTableSendsIndices ? allToAllUs : 0) +
         std::min(allToAllUs, reduceScatterUs);
}

/// A lower bound on the exchanges plus the replicas' charge of every plan
/// whose largest sharded lookup is at most `pieceUs`: each table takes its
/// cheapest option within that, or is replicated (no exchange, a copy on
/// every rank) at `replicaChargeUs[t]` (infinite: it may not be). Which
/// tables to replicate is a knapsack under the ranks' average memory: 0/1
/// over rounded-down weights for small table counts, fractional beyond.
/// A plan that shards any table pays `shardedLatencyUs`.
static double exchangeLowerBoundUs(
    const PlanProblem &problem,
    const std::vector<std::vector<BoundOption>> &options,
    const std::vector<double> &replicaChargeUs, double pieceUs,
    double latencyUs) {
  int64_t R = problem.ranks();
  struct Item {
    double weight, value;
  };
  std::vector<Item> items;
  double budget = problem.capacityBytes(), total = 0, allReplicated = 0;
  bool mustShard = false;
  for (size_t t = 0; t < problem.tables.size(); ++t) {
    const TableSpec &table = problem.tables[t];
    double cheapest = INFINITY;
    for (const BoundOption &option : options[t])
      if (option.pieceUs <= pieceUs)
        cheapest = std::min(cheapest, option.commUs);
    budget -= table.bytes() / R;
    total += cheapest;
    if (std::isinf(replicaChargeUs[t])) {
      mustShard = true;
      continue;
    }
    allReplicated += replicaChargeUs[t];
    items.push_back({table.bytes() * (1 - 1.0 / R),
                     cheapest - replicaChargeUs[t]});
  }
  if (budget < 0)
    return INFINITY; // no plan fits: even one copy of every table is too much
  double saved = 0, weightSum = 0;
  for (const Item &item : items)
    weightSum += item.weight;
  mustShard = mustShard || weightSum > budget;
  if (items.size() <= kExactKnapsackItems) {
    // 0/1 knapsack over weights rounded down to 1/kKnapsackUnits of the
    // budget, which only enlarges the feasible set.
    double unit = std::max(budget, 1.0) / kKnapsackUnits;
    std::vector<double> best(kKnapsackUnits + 1, 0);
    for (const Item &item : items) {
      if (item.value <= 0)
        continue;
      double units = std::floor(item.weight / unit);
      if (units > kKnapsackUnits)
        continue;
      for (int64_t c = kKnapsackUnits, w = int64_t(units); c >= w; --c)
        best[c] = std::max(best[c], best[c - w] + item.value);
    }
    saved = best[kKnapsackUnits];
  } else {
    // Fractional: replicate the most value per byte first.
    std::sort(items.begin(), items.end(), [](const Item &a, const Item &b) {
      return a.value * b.weight > b.value * a.weight;
    });
    double left = budget;
    for (const Item &item : items) {
      if (item.value <= 0 || left <= 0)
        break;
      double fraction = item.weight <= left ? 1 : left / item.weight;
      saved += fraction * item.value;
      left -= fraction * item.weight;
    }
  }
  // Unconstrained, the knapsack may replicate every table; a plan that
  // shards one pays the latency on top of its optimum.
  double withSharding = std::max(0.0, total - saved) + latencyUs;
  return mustShard ? withSharding : std::min(withSharding, allReplicated);
}

double plan::lowerBoundUs(const PlanProblem &problem) {
  // Lookups: whatever the sharding, the lookups of a table together read
  // each distinct row at least once at its exact size (shards round rows
  // up to sectors and split the distinct rows in proportion to their
  // rows), every index once and every pooled output once, and do every
  // multiply-add once. The cost model charges every shard at least the
  // larger of its memory and arithmetic time, so `minTotalUs[t]` bounds a
  // sharded table's lookups summed over ranks; a replicated one costs
  // exactly R times its replica's. The slowest rank runs at least the mean
  // of these, and pays the fused kernel's launch.
  const cluster::HardwareDesc &hw = problem.hw;
  double bandwidth = hw.device.memoryBandwidthGBps * hw.device.memoryEfficiency;
  int64_t R = problem.ranks();
  std::vector<double> minTotalUs, replicaPieceUs;
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
    minTotalUs.push_back(std::max(memoryUs, computeUs));
    total += minTotalUs.back();
    Shard replica{0, 0, table.rows, 0, table.dim};
    replicaPieceUs.push_back(
        shardLookupUs(problem, table, ShardingType::data_parallel, replica));
  }
  double launchUs = total > 0 ? hw.device.launchOverheadUs : 0;
  double meanUs = total / R;
  if (R == 1)
    return meanUs + launchUs;
  // With P the largest lookup of one shard (replicas included), the slowest
  // rank is at least max(mean, P), and the exchanges at least
  // exchangeLowerBoundUs(P), which only falls as P grows; so the bound is
  // the least, over the pieces P >= mean that options can have, of their sum.
  std::vector<std::vector<BoundOption>> options = boundOptions(problem);
  double latencyUs = shardedLatencyUs(problem);
  std::vector<double> pieces{meanUs};
  for (size_t t = 0; t < problem.tables.size(); ++t) {
    pieces.push_back(replicaPieceUs[t]);
    for (const BoundOption &option : options[t])
      pieces.push_back(option.pieceUs);
  }
  std::sort(pieces.begin(), pieces.end());
  pieces.erase(std::unique(pieces.begin(), pieces.end()), pieces.end());
  std::vector<double> charges(problem.tables.size());
  double best = INFINITY;
  for (double piece : pieces) {
    if (piece < meanUs)
      continue;
    for (size_t t = 0; t < problem.tables.size(); ++t)
      charges[t] = replicaPieceUs[t] <= piece ? 0 : INFINITY;
    best = std::min(best, piece + exchangeLowerBoundUs(problem, options,
                                                       charges, piece,
                                                       latencyUs));
  }
  // Sharper when replicas matter: every rank holds every replica, the owner
  // of the largest sharded piece P included, so slowest >= W + P with W the
  // replicas' summed lookups; and the mean grows by each replica's excess
  // over its table's least total, replicaPieceUs - minTotalUs / R. For
  // lambda in [0, 1], slowest >= lambda (W + P) + (1 - lambda) mean, which
  // the knapsack prices by charging each replica its share of both.
  pieces.push_back(0);
  for (double lambda : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    for (size_t t = 0; t < problem.tables.size(); ++t)
      charges[t] = lambda * replicaPieceUs[t] +
                   (1 - lambda) * (replicaPieceUs[t] - minTotalUs[t] / R);
    double coupled = INFINITY;
    for (double piece : pieces)
      coupled = std::min(coupled, lambda * piece + (1 - lambda) * meanUs +
                                      exchangeLowerBoundUs(problem, options,
                                                           charges, piece,
                                                           latencyUs));
    best = std::max(best, coupled);
  }
  return best + launchUs;
}
