//===- BraidSearch.cpp - Braid's sharding search --------------------------===//
//
// This file implements Braid's planner. Construction: tables in decreasing
// order of their table-wise lookup cost; each takes the option (table-wise
// on a rank, row-wise, table-row-wise on a node, column-wise, or
// data-parallel) that minimizes a fast estimate of the plan's iteration
// time: the slowest rank's lookups plus the busiest rank's share of the
// exchanges. Portfolio: the best, under the full cost model, of that plan
// and the greedy baselines' plans. Improvement: replicate the tables whose
// exchanges cost most per byte of memory, and move tables off the
// bottleneck rank, whenever the full cost model says the plan gets faster.
// Every choice is deterministic (ties go to the lower rank and earlier
// option).
//
//===----------------------------------------------------------------------===//

#include "TablePlans.h"

#include "braid/Cost/CostModel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <random>

using namespace mlir::braid;
using namespace mlir::braid::plan;

namespace {
/// Up to this many candidates, replication gains are measured one by one.
constexpr size_t kMeasuredPromotionTables = 128;
/// Work the iterated local search may spend, in full-model evaluations
/// times ranks (an evaluation costs time in proportion to the ranks): about
/// half a second here on 16 ranks, two on 128, and the same plan on every
/// machine.
constexpr int64_t kLocalSearchRankEvaluations = 640000;
/// Nor more than this many sweeps over every table's options: small
/// problems converge long before the work limit.
constexpr int64_t kLocalSearchSweeps = 40;
/// Tables one perturbation re-places at random.
constexpr int64_t kPerturbedTables = 3;
/// Least-loaded ranks (or column-shard blocks) a descent tries a table on.
constexpr size_t kCandidateRanks = 4;

/// Incremental state of the construction: per-rank lookup time, exchange
/// bytes and memory.
struct LoadState {
  std::vector<double> lookupUs, exchangeBytes, memory;
  double reduceScatterBytes = 0;
};

/// Lookup time of one table-plan's shards (launch excluded), per rank.
std::vector<std::pair<int64_t, double>> shardTimes(const PlanProblem &problem,
                                                   const TableSpec &table,
                                                   const TablePlan &tp) {
  std::vector<std::pair<int64_t, double>> times;
  for (const Shard &shard : tp.shards)
    times.push_back({shard.rank, shardLookupUs(problem, table, tp.type, shard)});
  return times;
}

class Search {
public:
  explicit Search(const PlanProblem &problem)
      : problem(problem), R(problem.ranks()) {
    state.lookupUs.assign(R, 0);
    state.exchangeBytes.assign(R, 0);
    state.memory.assign(R, 0);
    // Per-rank exchange bandwidth: NVLink inside a node, the node's NICs
    // shared by its ranks across nodes.
    bandwidth = problem.hw.intraNode.bandwidthGBps();
    if (problem.nodes > 1)
      bandwidth = std::min(bandwidth, problem.hw.interNode.nicsPerNode *
                                          problem.hw.interNode.effectiveNicGBps() /
                                          problem.ranksPerNode);
  }

  llvm::Expected<Plan> run();

private:
  /// The options worth trying for a table.
  std::vector<TablePlan> options(const TableSpec &table) const;
  /// Estimated iteration time if `tp` were added to the state.
  double estimateWith(const TableSpec &table, const TablePlan &tp) const;
  /// Adds `tp`'s lookups, exchanges and memory to `into`.
  void apply(LoadState &into, const TableSpec &table, const TablePlan &tp) const;
  bool fits(const TableSpec &table, const TablePlan &tp) const;
  /// Replicates tables while that makes `plan` faster; true if it did.
  bool promoteToDataParallel(Plan &plan, PlanCost &current) const;
  /// Moves table-wise tables off the slowest rank while that makes `plan`
  /// faster; true if it did.
  bool rebalanceTableWise(Plan &plan, PlanCost &current) const;
  /// Gives each sharded table the best of its sharding options under the
  /// full model, where memory allows; true if any table changed.
  bool reassignShardedTables(Plan &plan, PlanCost &current) const;
  /// For few tables: descends over every table's moves, then perturbs a
  /// few tables at random (a fixed seed) and descends again, keeping the
  /// best plan, within a fixed amount of work.
  void iteratedLocalSearch(Plan &plan, PlanCost &current) const;
  /// The options a descent tries for table `t`: all but the table-wise and
  /// column-wise ones, which go only to the least-loaded ranks, the
  /// least-loaded ranks of each node, and the table's own: placements on
  /// equally loaded ranks are alike, and on many ranks trying them all
  /// would spend the search on them.
  std::vector<TablePlan> moves(size_t t, const Plan &plan,
                               const PlanCost &current) const;
  /// Tries each of `candidates` for table `t` under the full model and
  /// keeps the fastest that beats `current` and fits; true if one did.
  /// Each try counts in `evaluations`; none is made past `budget`.
  bool takeBestOption(Plan &plan, PlanCost &current, size_t t,
                      std::vector<TablePlan> candidates, int64_t &evaluations,
                      int64_t budget) const;
  /// One descent: each table in turn takes its best move under the full
  /// model while that helps. Counts evaluations in `evaluations`.
  bool descend(Plan &plan, PlanCost &current, int64_t &evaluations,
               int64_t budget) const;

  const PlanProblem &problem;
  int64_t R;
  double bandwidth;
  LoadState state;
};
} // namespace

std::vector<TablePlan> Search::options(const TableSpec &table) const {
  std::vector<TablePlan> result;
  for (int64_t r = 0; r < R; ++r)
    result.push_back(makeTablePlan(problem, table, ShardingType::table_wise, r, 1));
  if (R > 1) {
    result.push_back(makeTablePlan(problem, table, ShardingType::row_wise, 0, R));
    for (int64_t parts : {2, 4, 8})
      if (parts <= R && table.dim % parts == 0 && table.dim / parts >= 4)
        for (int64_t start = 0; start < R; start += parts)
          result.push_back(makeTablePlan(problem, table, ShardingType::column_wise,
                                         start, parts));
    if (problem.nodes > 1)
      for (int64_t node = 0; node < problem.nodes; ++node)
        result.push_back(makeTablePlan(problem, table,
                                       ShardingType::table_row_wise, node,
                                       problem.ranksPerNode));
    result.push_back(makeTablePlan(problem, table, ShardingType::data_parallel, 0, R));
  }
  return result;
}

bool Search::fits(const TableSpec &table, const TablePlan &tp) const {
  for (const Shard &shard : tp.shards)
    if (state.memory[shard.rank] + double(shard.rows) * shard.cols * table.elementBytes >
        problem.capacityBytes())
      return false;
  return true;
}

void Search::apply(LoadState &into, const TableSpec &table,
                   const TablePlan &tp) const {
  double perRank = double(problem.batch) / R;
  for (auto [rank, us] : shardTimes(problem, table, tp))
    into.lookupUs[rank] += us;
  for (const Shard &shard : tp.shards) {
    into.memory[shard.rank] += double(shard.rows) * shard.cols * table.elementBytes;
    if (tp.type == ShardingType::table_wise || tp.type == ShardingType::column_wise)
      // The owner receives indices from, and sends pooled rows to, all.
      into.exchangeBytes[shard.rank] +=
          (R - 1) * perRank * (table.poolingFactor * 8 + shard.cols * 4);
  }
  if (tp.type == ShardingType::row_wise || tp.type == ShardingType::table_row_wise)
    into.reduceScatterBytes += problem.batch * table.dim * 4.0;
}

double Search::estimateWith(const TableSpec &table, const TablePlan &tp) const {
  LoadState next = state;
  apply(next, table, tp);
  double slowest = *std::max_element(next.lookupUs.begin(), next.lookupUs.end());
  double busiest =
      *std::max_element(next.exchangeBytes.begin(), next.exchangeBytes.end());
  // Reduce-scatter moves (R-1)/R of the partial sums through every rank.
  double rsBytes = next.reduceScatterBytes * (R - 1) / R / R;
  return slowest + (busiest + rsBytes) / bandwidth * 1e-3;
}

llvm::Expected<Plan> Search::run() {
  double totalBytes = 0;
  for (const TableSpec &table : problem.tables)
    totalBytes += table.bytes();
  if (totalBytes > R * problem.capacityBytes())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the tables need " + formatGB(totalBytes) + " but " + llvm::Twine(R) +
            " ranks have " + formatGB(R * problem.capacityBytes()) +
            " for tables");
  // Construction, heaviest tables first.
  std::vector<double> weight;
  for (const TableSpec &table : problem.tables)
    weight.push_back(shardTimes(problem, table,
                                makeTablePlan(problem, table,
                                              ShardingType::table_wise, 0, 1))
                         .front()
                         .second);
  std::vector<size_t> order(problem.tables.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return weight[a] > weight[b]; });
  Plan plan;
  plan.planner = "braid";
  plan.tables.resize(problem.tables.size());
  // Look-ahead: an option may only use memory the unplaced tables can spare,
  // counting them at one copy each (their most compact sharding), so that
  // replicating a table never starves a later one.
  double unplacedBytes = 0;
  for (const TableSpec &table : problem.tables)
    unplacedBytes += table.bytes();
  for (size_t t : order) {
    const TableSpec &table = problem.tables[t];
    unplacedBytes -= table.bytes();
    double freeBytes = 0;
    for (double used : state.memory)
      freeBytes += problem.capacityBytes() - used;
    double bestTime = INFINITY;
    std::optional<TablePlan> best;
    for (TablePlan &option : options(table)) {
      double optionBytes = 0;
      for (const Shard &shard : option.shards)
        optionBytes += double(shard.rows) * shard.cols * table.elementBytes;
      if (!fits(table, option) || freeBytes - optionBytes < unplacedBytes)
        continue;
      double time = estimateWith(table, option);
      if (time < bestTime * (1 - 1e-12)) {
        bestTime = time;
        best = std::move(option);
      }
    }
    if (!best) {
      // No even split fits the memory left: split the rows in proportion to
      // each rank's free memory (uneven row_wise).
      if (freeBytes - table.bytes() < unplacedBytes)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "table '" + table.name + "' (" + formatGB(table.bytes()) +
                ") does not fit: " + formatGB(freeBytes) +
                " are free and the tables after it need " +
                formatGB(unplacedBytes));
      TablePlan uneven;
      uneven.type = ShardingType::row_wise;
      int64_t offset = 0;
      for (int64_t r = 0; r < R; ++r) {
        double spare = problem.capacityBytes() - state.memory[r];
        int64_t rows = r + 1 == R ? table.rows - offset
                                  : std::min<int64_t>(
                                        table.rows - offset,
                                        int64_t(std::floor(table.rows * spare / freeBytes)));
        uneven.shards.push_back({r, offset, rows, 0, table.dim});
        offset += rows;
      }
      best = std::move(uneven);
    }
    apply(state, table, *best);
    plan.tables[t] = std::move(*best);
  }

  // Portfolio: the construction's fast estimate misjudges some clusters
  // (it does not see that cross-node exchanges share the node's NICs), so
  // the search starts from the best, under the full model, of the
  // construction and the table-wise greedy baselines.
  PlanCost current = evaluatePlan(problem, plan);
  for (GreedyKey key : {GreedyKey::size, GreedyKey::dim, GreedyKey::dim_pooling,
                        GreedyKey::dim_pooling_logrows}) {
    llvm::Expected<Plan> greedy = planGreedy(problem, key);
    if (!greedy) {
      llvm::consumeError(greedy.takeError());
      continue;
    }
    PlanCost cost = evaluatePlan(problem, *greedy);
    if (cost.fitsMemory && cost.iterationUs < current.iterationUs) {
      current = cost;
      plan.tables = std::move(greedy->tables);
    }
  }

  // Improvement, until neither step helps: replicate the tables whose
  // exchanges cost the most per byte of memory, then move table-wise tables
  // off the bottleneck rank, each step only when the full model says the
  // plan gets faster.
  for (int round = 0; round < 8; ++round) {
    bool promoted = promoteToDataParallel(plan, current);
    bool moved = rebalanceTableWise(plan, current);
    bool reassigned = plan.tables.size() <= kMeasuredPromotionTables &&
                      reassignShardedTables(plan, current);
    if (!promoted && !moved && !reassigned)
      break;
  }
  if (!plan.tables.empty() && plan.tables.size() <= kMeasuredPromotionTables)
    iteratedLocalSearch(plan, current);
  return plan;
}

std::vector<TablePlan> Search::moves(size_t t, const Plan &plan,
                                    const PlanCost &current) const {
  auto blockLoad = [&](const TablePlan &tp) {
    double load = 0;
    for (const Shard &shard : tp.shards)
      load = std::max(load, current.lookupUs[shard.rank]);
    return load;
  };
  std::vector<TablePlan> all = options(problem.tables[t]), kept, spread;
  for (TablePlan &option : all) {
    if (option.type != ShardingType::table_wise &&
        option.type != ShardingType::column_wise)
      kept.push_back(std::move(option));
    else
      spread.push_back(std::move(option));
  }
  // Per shard count, the least-loaded placements, ties to the earlier
  // option; also the least-loaded placement on each node (exchanges that
  // cross nodes share the node's NICs, which rank loads do not show); the
  // table's own placement stays a candidate.
  std::stable_sort(spread.begin(), spread.end(),
                   [&](const TablePlan &a, const TablePlan &b) {
                     return std::make_pair(a.shards.size(), blockLoad(a)) <
                            std::make_pair(b.shards.size(), blockLoad(b));
                   });
  size_t taken = 0;
  std::vector<bool> nodeSeen(problem.nodes, false);
  for (size_t i = 0; i < spread.size(); ++i) {
    if (i > 0 && spread[i].shards.size() != spread[i - 1].shards.size()) {
      taken = 0;
      nodeSeen.assign(problem.nodes, false);
    }
    int64_t node = spread[i].shards.front().rank / problem.ranksPerNode;
    bool own = spread[i].type == plan.tables[t].type &&
               spread[i].shards.front().rank == plan.tables[t].shards.front().rank;
    if (taken < kCandidateRanks || !nodeSeen[node] || own) {
      nodeSeen[node] = true;
      kept.push_back(std::move(spread[i]));
      ++taken;
    }
  }
  return kept;
}

bool Search::takeBestOption(Plan &plan, PlanCost &current, size_t t,
                            std::vector<TablePlan> candidates,
                            int64_t &evaluations, int64_t budget) const {
  std::optional<TablePlan> best;
  TablePlan saved = plan.tables[t];
  for (TablePlan &option : candidates) {
    if (evaluations >= budget)
      break;
    ++evaluations;
    plan.tables[t] = option;
    PlanCost next = evaluatePlan(problem, plan);
    if (next.fitsMemory && next.iterationUs < current.iterationUs * (1 - 1e-9)) {
      current = std::move(next);
      best = std::move(option);
    }
  }
  plan.tables[t] = best ? std::move(*best) : std::move(saved);
  return best.has_value();
}

bool Search::descend(Plan &plan, PlanCost &current, int64_t &evaluations,
                     int64_t budget) const {
  bool any = false;
  for (bool improved = true; improved && evaluations < budget;) {
    improved = false;
    for (size_t t = 0; t < plan.tables.size() && evaluations < budget; ++t)
      improved |= takeBestOption(plan, current, t, moves(t, plan, current),
                                 evaluations, budget);
    any = any || improved;
  }
  return any;
}

void Search::iteratedLocalSearch(Plan &plan, PlanCost &current) const {
  int64_t sweep = 0;
  for (const TableSpec &table : problem.tables)
    sweep += options(table).size();
  int64_t evaluations = 0,
          budget = std::min(kLocalSearchRankEvaluations / R,
                            kLocalSearchSweeps * sweep);
  descend(plan, current, evaluations, budget);
  Plan best = plan;
  PlanCost bestCost = current;
  std::mt19937_64 random(0x62726169); // fixed: plans are deterministic
  while (evaluations < budget) {
    Plan trial = best;
    for (int64_t k = 0; k < kPerturbedTables; ++k) {
      size_t t = random() % trial.tables.size();
      std::vector<TablePlan> choices = options(problem.tables[t]);
      trial.tables[t] = choices[random() % choices.size()];
    }
    PlanCost trialCost = evaluatePlan(problem, trial);
    ++evaluations;
    if (!trialCost.fitsMemory)
      continue;
    descend(trial, trialCost, evaluations, budget);
    if (trialCost.iterationUs < bestCost.iterationUs * (1 - 1e-9)) {
      best = std::move(trial);
      bestCost = std::move(trialCost);
    }
  }
  plan = std::move(best);
  current = std::move(bestCost);
}

bool Search::reassignShardedTables(Plan &plan, PlanCost &current) const {
  bool improved = false;
  for (size_t t = 0; t < plan.tables.size(); ++t) {
    if (plan.tables[t].type == ShardingType::data_parallel)
      continue;
    const TableSpec &table = problem.tables[t];
    // Memory with this table's shards taken out.
    std::vector<double> memory = current.memoryBytes;
    for (const Shard &shard : plan.tables[t].shards)
      memory[shard.rank] -= double(shard.rows) * shard.cols * table.elementBytes;
    std::vector<TablePlan> candidates;
    for (TablePlan &option : options(table)) {
      if (option.type == ShardingType::data_parallel)
        continue; // promoteToDataParallel's move
      bool fits = true;
      for (const Shard &shard : option.shards)
        fits = fits && memory[shard.rank] + double(shard.rows) * shard.cols *
                                               table.elementBytes <=
                           problem.capacityBytes();
      if (fits)
        candidates.push_back(std::move(option));
    }
    int64_t evaluations = 0;
    improved |= takeBestOption(plan, current, t, std::move(candidates),
                               evaluations, std::numeric_limits<int64_t>::max());
  }
  return improved;
}

bool Search::promoteToDataParallel(Plan &plan, PlanCost &current) const {
  // Exchange bytes saved per byte of replica, best first.
  std::vector<size_t> candidates;
  for (size_t t = 0; t < plan.tables.size(); ++t)
    if (plan.tables[t].type != ShardingType::data_parallel)
      candidates.push_back(t);
  // With few tables, measure each replica's gain under the full model;
  // otherwise estimate it from the bytes the table exchanges.
  std::vector<double> gain(plan.tables.size(), 0);
  bool measured = candidates.size() <= kMeasuredPromotionTables;
  for (size_t t : candidates) {
    const TableSpec &table = problem.tables[t];
    if (!measured) {
      gain[t] = table.poolingFactor * 8 + table.dim * 4;
      continue;
    }
    TablePlan saved = plan.tables[t];
    plan.tables[t] =
        makeTablePlan(problem, table, ShardingType::data_parallel, 0, R);
    gain[t] = current.iterationUs - evaluatePlan(problem, plan).iterationUs;
    plan.tables[t] = std::move(saved);
  }
  auto benefit = [&](size_t t) { return gain[t] / problem.tables[t].bytes(); };
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](size_t a, size_t b) { return benefit(a) > benefit(b); });
  bool improved = false;
  int64_t rejectedInARow = 0;
  for (size_t t : candidates) {
    const TableSpec &table = problem.tables[t];
    // Every rank must hold a replica after freeing its shard.
    bool fits = true;
    for (int64_t r = 0; r < R && fits; ++r) {
      double freed = 0;
      for (const Shard &shard : plan.tables[t].shards)
        if (shard.rank == r)
          freed += double(shard.rows) * shard.cols * table.elementBytes;
      fits = current.memoryBytes[r] - freed + table.bytes() <=
             problem.capacityBytes();
    }
    if (!fits)
      continue;
    TablePlan saved = plan.tables[t];
    plan.tables[t] =
        makeTablePlan(problem, table, ShardingType::data_parallel, 0, R);
    PlanCost next = evaluatePlan(problem, plan);
    if (next.fitsMemory && next.iterationUs < current.iterationUs * (1 - 1e-9)) {
      current = std::move(next);
      improved = true;
      rejectedInARow = 0;
    } else {
      plan.tables[t] = std::move(saved);
      // Later candidates save less per byte; stop after a run of misses.
      if (++rejectedInARow == 32)
        break;
    }
  }
  return improved;
}

bool Search::rebalanceTableWise(Plan &plan, PlanCost &current) const {
  bool any = false;
  for (int round = 0; round < 64; ++round) {
    std::vector<double> lookup(R, 0);
    for (size_t t = 0; t < plan.tables.size(); ++t)
      for (auto [rank, us] : shardTimes(problem, problem.tables[t], plan.tables[t]))
        lookup[rank] += us;
    int64_t hot = std::max_element(lookup.begin(), lookup.end()) - lookup.begin();
    int64_t cold = std::min_element(lookup.begin(), lookup.end()) - lookup.begin();
    bool improved = false;
    for (size_t t = 0; t < plan.tables.size() && !improved; ++t) {
      TablePlan &tp = plan.tables[t];
      if (tp.type != ShardingType::table_wise || tp.shards.front().rank != hot)
        continue;
      TablePlan saved = tp;
      tp.shards.front().rank = cold;
      PlanCost moved = evaluatePlan(problem, plan);
      if (moved.fitsMemory && moved.iterationUs < current.iterationUs * (1 - 1e-9)) {
        current = moved;
        improved = true;
      } else {
        tp = saved;
      }
    }
    if (!improved)
      break;
    any = true;
  }
  return any;
}

llvm::Expected<Plan> plan::planBraid(const PlanProblem &problem) {
  return Search(problem).run();
}
