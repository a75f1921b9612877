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
  bool rowWise = false; ///< pays a reduce_scatter instead of an all_to_all
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
  // Training all-gathers the row-wise partials' gradients back.
  double agUsPerByte =
      problem.training
          ? cost::ringUsPerByteAtLeast(hw, cost::CollectiveKind::all_gather, R,
                                       N)
          : 0;
  std::vector<std::vector<BoundOption>> result;
  for (const TableSpec &table : problem.tables) {
    double indexBytes = B * table.poolingFactor * 8;
    double outputBytes = B * table.dim * 4;
    // A shard's piece is its lookups, and when training its backward too.
    auto piece = [&](ShardingType type, int64_t where, int64_t parts) {
      double worst = 0;
      for (const Shard &shard :
           makeTablePlan(problem, table, type, where, parts).shards)
        worst = std::max(worst,
                         shardLookupUs(problem, table, type, shard) +
                             shardBackwardUs(problem, table, type, shard));
      return worst;
    };
    // Training sends the pooled rows' gradients back over the same links.
    double rowBytes = (problem.training ? 2 : 1) * outputBytes;
    std::vector<BoundOption> options;
    options.push_back({crossShare * (indexBytes + rowBytes) * a2aUsPerByte,
                       piece(ShardingType::table_wise, 0, 1)});
    for (int64_t parts = 2; parts <= std::min(R, table.dim); parts *= 2)
      options.push_back(
          {crossShare * (parts * indexBytes + rowBytes) * a2aUsPerByte,
           piece(ShardingType::column_wise, 0, parts)});
    if (N > 1)
      options.push_back(
          {crossShare * (indexBytes + rowBytes) * a2aUsPerByte,
           piece(ShardingType::table_row_wise, 0, g)});
    options.push_back(
        {crossShare * indexBytes * a2aUsPerByte +
             outputBytes * (rsUsPerByte + agUsPerByte),
         0,
         /*rowWise=*/true});
    result.push_back(std::move(options));
  }
  return result;
}

/// Up to this many tables, which to replicate is an exact 0/1 knapsack.
static constexpr size_t kExactKnapsackItems = 128;
static constexpr int64_t kKnapsackUnits = 4096;
/// At most this many tables are solved exactly as the plan's row-wise one
/// (a knapsack each), and only in problems of at most kExactRowWiseTables
/// tables; the rest keep their estimates.
static constexpr int64_t kExactRowWiseCases = 4;
static constexpr size_t kExactRowWiseTables = 32;

namespace {
/// The least latencies of the exchanges a plan that shards a table pays:
/// the index all_to_all (none when a table without lookups could be the
/// only one sharded: it sends no indices), then the pooled-row all_to_all
/// or, for row-wise tables, a reduce_scatter (and when training an
/// all_gather).
struct ExchangeLatencies {
  double indexUs, pooledRowsUs, reduceScatterUs;
};
} // namespace

static ExchangeLatencies exchangeLatencies(const PlanProblem &problem) {
  int64_t R = problem.ranks();
  // The fabric's latencies only: the bound adds the bytes' time to them,
  // and the collective floor bounds that sum instead of adding to it.
  cluster::HardwareDesc fabric = problem.hw;
  fabric.collectiveFloorUs = 0;
  double allToAllUs = cost::estimateAllToAllvUs(
      fabric, std::vector<double>(R * R, 0), R, problem.ranksPerNode);
  bool everyTableSendsIndices =
      llvm::all_of(problem.tables, [](const TableSpec &table) {
        return table.poolingFactor > 0;
      });
  // A row-wise table's partials are reduce-scattered and, when training,
  // their gradients all-gathered: both latencies are paid.
  double rowWiseUs = cost::collectiveLatencyUs(
      problem.hw, cost::CollectiveKind::reduce_scatter, R, problem.nodes);
  if (problem.training)
    rowWiseUs += cost::collectiveLatencyUs(
        problem.hw, cost::CollectiveKind::all_gather, R, problem.nodes);
  return {everyTableSendsIndices ? allToAllUs : 0, allToAllUs, rowWiseUs};
}

namespace {
/// Replicating a table: the per-rank memory it adds and what it saves.
struct Item {
  double weight, value;
};
} // namespace

/// The most value replicas can save within `budget` bytes per rank: a 0/1
/// knapsack over weights rounded down to 1/kKnapsackUnits of the budget
/// (which only enlarges the feasible set) for small table counts,
/// fractional beyond; exact when everything worth replicating fits.
static double knapsackSaving(std::vector<Item> items, double budget) {
  double fitting = 0, weight = 0;
  for (const Item &item : items)
    if (item.value > 0) {
      fitting += item.value;
      weight += item.weight;
    }
  if (weight <= budget)
    return fitting;
  if (items.size() <= kExactKnapsackItems) {
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
    return best[kKnapsackUnits];
  }
  // Fractional: replicate the most value per byte first.
  std::sort(items.begin(), items.end(), [](const Item &a, const Item &b) {
    return a.value * b.weight > b.value * a.weight;
  });
  double saved = 0, left = budget;
  for (const Item &item : items) {
    if (item.value <= 0 || left <= 0)
      break;
    double fraction = item.weight <= left ? 1 : left / item.weight;
    saved += fraction * item.value;
    left -= fraction * item.weight;
  }
  return saved;
}

/// A lower bound on the exchanges plus the replicas' charge of every plan
/// whose largest sharded lookup is at most `pieceUs`: each table takes its
/// cheapest option within that, or is replicated (no exchange, a copy on
/// every rank) at `replicaChargeUs[t]` (infinite: it may not be). Which
/// tables to replicate is a knapsack under the ranks' average memory.
/// Plans fall in two cases, and the bound is the lesser:
///   - no table row-wise: the tables choose among the other options, and a
///     plan that shards any pays the index and pooled-row all_to_alls'
///     latencies;
///   - some table t row-wise: at least the unconstrained optimum, plus what
///     forcing t row-wise adds to it (at least t's row-wise exchange less
///     its cheapest: the others' best without t is at least the optimum
///     less t's cheapest), plus the index all_to_all's and the
///     reduce_scatter's latencies.
static double exchangeLowerBoundUs(
    const PlanProblem &problem,
    const std::vector<std::vector<BoundOption>> &options,
    const std::vector<double> &replicaChargeUs, double pieceUs,
    const ExchangeLatencies &latency) {
  int64_t R = problem.ranks();
  std::vector<Item> items, itemsWithoutRowWise;
  // Per table: its cheapest exchange, its row-wise one, and its item.
  std::vector<double> cheapestOf, rowWiseOf;
  std::vector<int64_t> itemOf;
  double budget = problem.capacityBytes(), total = 0, totalWithoutRowWise = 0,
         allReplicated = 0;
  // Without row-wise, a table with no other option within the piece must
  // be replicated: these are its charges and bytes.
  double forcedCharge = 0, forcedWeight = 0;
  bool mustShard = false, withoutRowWiseFeasible = true;
  for (size_t t = 0; t < problem.tables.size(); ++t) {
    const TableSpec &table = problem.tables[t];
    double cheapest = INFINITY, cheapestWithoutRowWise = INFINITY,
           rowWise = INFINITY;
    for (const BoundOption &option : options[t]) {
      if (option.pieceUs > pieceUs)
        continue;
      cheapest = std::min(cheapest, option.commUs);
      if (option.rowWise)
        rowWise = std::min(rowWise, option.commUs);
      else
        cheapestWithoutRowWise = std::min(cheapestWithoutRowWise, option.commUs);
    }
    budget -= table.bytes() / R;
    total += cheapest;
    cheapestOf.push_back(cheapest);
    rowWiseOf.push_back(rowWise);
    itemOf.push_back(std::isinf(replicaChargeUs[t]) ? -1 : int64_t(items.size()));
    double charge = replicaChargeUs[t];
    double weight = table.bytes() * (1 - 1.0 / R);
    if (std::isinf(cheapestWithoutRowWise)) {
      withoutRowWiseFeasible = withoutRowWiseFeasible && !std::isinf(charge);
      forcedCharge += charge;
      forcedWeight += weight;
    } else {
      totalWithoutRowWise += cheapestWithoutRowWise;
      if (!std::isinf(charge))
        itemsWithoutRowWise.push_back({weight, cheapestWithoutRowWise - charge});
    }
    if (std::isinf(charge)) {
      mustShard = true;
      continue;
    }
    allReplicated += charge;
    items.push_back({weight, cheapest - charge});
  }
  if (budget < 0)
    return INFINITY; // no plan fits: even one copy of every table is too much
  double weightSum = 0;
  for (const Item &item : items)
    weightSum += item.weight;
  mustShard = mustShard || weightSum > budget;
  double withoutRowWise = INFINITY;
  if (withoutRowWiseFeasible && forcedWeight <= budget)
    withoutRowWise =
        std::max(0.0, totalWithoutRowWise + forcedCharge -
                          knapsackSaving(std::move(itemsWithoutRowWise),
                                         budget - forcedWeight)) +
        latency.indexUs + latency.pooledRowsUs;
  if (!mustShard)
    withoutRowWise = std::min(withoutRowWise, allReplicated);
  // With table t row-wise: t's row-wise exchange plus the others' best
  // without t's replica. That is at least the unconstrained optimum plus
  // t's row-wise exchange less its cheapest (the unconstrained problem may
  // shard t at its cheapest and place the others as they are), which
  // orders and prunes the tables worth solving exactly.
  double unconstrained = std::max(0.0, total - knapsackSaving(items, budget));
  std::vector<std::pair<double, size_t>> candidates;
  for (size_t t = 0; t < problem.tables.size(); ++t)
    candidates.push_back({unconstrained + rowWiseOf[t] - cheapestOf[t], t});
  std::sort(candidates.begin(), candidates.end());
  double withRowWise = INFINITY;
  int64_t solved =
      problem.tables.size() <= kExactRowWiseTables ? 0 : kExactRowWiseCases;
  for (auto [atLeast, t] : candidates) {
    if (atLeast >= withRowWise)
      break;
    if (solved++ == kExactRowWiseCases) {
      withRowWise = atLeast; // the least of the unsolved ones' estimates
      break;
    }
    std::vector<Item> others = items;
    if (itemOf[t] >= 0)
      others[itemOf[t]].value = 0; // t is sharded: not a replica
    withRowWise = std::min(
        withRowWise, std::max(0.0, total - cheapestOf[t] + rowWiseOf[t] -
                                       knapsackSaving(std::move(others), budget)));
  }
  withRowWise += latency.indexUs + latency.reduceScatterUs;
  return std::max(0.0, std::min(withoutRowWise, withRowWise));
}

/// At most this many pieces are tried; beyond, every few.
static constexpr size_t kMaxBoundPieces = 512;

/// The least, over pieces P, of fixedUs(P) + exchangeUs(P): fixedUs grows
/// with P, and exchangeUs bounds the exchanges of the plans whose largest
/// piece is at most P, which change only at `pieces` (sorted) and only fall
/// as P grows. Past kMaxBoundPieces, the pieces are taken every few: on
/// [p_i, p_j) between two taken ones, the exchanges are at least those at
/// p_(j-1). Stops once fixedUs alone reaches the best sum.
static double leastOverPieces(const std::vector<double> &pieces,
                              llvm::function_ref<double(double)> fixedUs,
                              llvm::function_ref<double(double)> exchangeUs) {
  size_t stride = std::max<size_t>(
      1, (pieces.size() + kMaxBoundPieces - 1) / kMaxBoundPieces);
  double best = INFINITY;
  for (size_t i = 0; i < pieces.size(); i += stride) {
    double fixed = fixedUs(pieces[i]);
    if (fixed >= best)
      break;
    size_t last = std::min(pieces.size(), i + stride) - 1;
    best = std::min(best, fixed + exchangeUs(pieces[last]));
  }
  return best;
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
    // Training: the backward reads and writes each distinct row once with
    // its optimizer state, whatever the sharding (each shard's update is
    // charged at least that for its rows).
    double backwardUs = 0;
    if (problem.training) {
      double state = problem.embeddingOptimizer == "adagrad" ? 4
                     : problem.embeddingOptimizer == "rowwise_adagrad"
                         ? 4.0 / table.dim
                         : 0;
      backwardUs = distinct * table.dim * (2 * table.elementBytes + 2 * state) /
                   hw.device.gatherEfficiency / bandwidth * 1e-3;
    }
    minTotalUs.push_back(std::max(memoryUs, computeUs) + backwardUs);
    total += minTotalUs.back();
    Shard replica{0, 0, table.rows, 0, table.dim};
    replicaPieceUs.push_back(
        shardLookupUs(problem, table, ShardingType::data_parallel, replica) +
        shardBackwardUs(problem, table, ShardingType::data_parallel, replica));
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
  ExchangeLatencies latency = exchangeLatencies(problem);
  std::vector<double> pieces{meanUs};
  for (size_t t = 0; t < problem.tables.size(); ++t) {
    pieces.push_back(replicaPieceUs[t]);
    for (const BoundOption &option : options[t])
      pieces.push_back(option.pieceUs);
  }
  std::sort(pieces.begin(), pieces.end());
  pieces.erase(std::unique(pieces.begin(), pieces.end()), pieces.end());
  std::vector<double> charges(problem.tables.size());
  std::vector<double> atLeastMean(
      std::lower_bound(pieces.begin(), pieces.end(), meanUs), pieces.end());
  double best = leastOverPieces(
      atLeastMean, [](double piece) { return piece; },
      [&](double piece) {
        for (size_t t = 0; t < problem.tables.size(); ++t)
          charges[t] = replicaPieceUs[t] <= piece ? 0 : INFINITY;
        return exchangeLowerBoundUs(problem, options, charges, piece, latency);
      });
  // Sharper when replicas matter: every rank holds every replica, the owner
  // of the largest sharded piece P included, so slowest >= W + P with W the
  // replicas' summed lookups; and the mean grows by each replica's excess
  // over its table's least total, replicaPieceUs - minTotalUs / R. For
  // lambda in [0, 1], slowest >= lambda (W + P) + (1 - lambda) mean, which
  // the knapsack prices by charging each replica its share of both.
  pieces.insert(pieces.begin(), 0);
  for (double lambda : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    for (size_t t = 0; t < problem.tables.size(); ++t)
      charges[t] = lambda * replicaPieceUs[t] +
                   (1 - lambda) * (replicaPieceUs[t] - minTotalUs[t] / R);
    // With lambda = 0 the piece only loosens the exchanges, so the largest
    // one gives the least.
    std::vector<double> candidates =
        lambda == 0 ? std::vector<double>{pieces.back()} : pieces;
    best = std::max(
        best, leastOverPieces(
                  candidates,
                  [&](double piece) {
                    return lambda * piece + (1 - lambda) * meanUs;
                  },
                  [&](double piece) {
                    return exchangeLowerBoundUs(problem, options, charges,
                                                piece, latency);
                  }));
  }
  return best + launchUs;
}
