//===- LocalSearch.cpp - Improving a plan by local search -----------------===//
//
// This file implements the improvement phase of Braid's planner. It works
// on a plan state that keeps each table's load and their sum (PlanLoad.h),
// so that pricing one table's re-placement takes time linear in the ranks.
// Steps, each taken only when the full cost model says the plan gets
// faster and still fits:
//   - replicate the tables whose exchanges cost most per byte of memory;
//   - move table-wise tables off the bottleneck rank;
//   - split large table-wise tables into column shards when the memory
//     that frees, filled with replicas, makes the plan faster (the largest
//     of the fullest rank one at a time, or the k largest together);
//   - give each sharded table the best of its layouts;
//   - for up to 128 tables, an iterated local search: descents over every
//     table's moves and over moves of every table of one sharding type at
//     once (collectives are paid per type, so single moves cannot leave a
//     type), restarted from seeded perturbations of the best plan.
// Every choice is deterministic (ties go to the earlier table and option).
//
//===----------------------------------------------------------------------===//

#include "LocalSearch.h"
#include "PlanLoad.h"
#include "TablePlans.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <tuple>

using namespace mlir::braid;
using namespace mlir::braid::plan;

namespace {
/// Up to this many tables, replication gains are measured one by one and
/// the iterated local search runs.
constexpr size_t kSearchedTables = 128;
/// Work the iterated local search may spend, in evaluations times ranks
/// (an evaluation costs time in proportion to the ranks): the same plan on
/// every machine.
constexpr int64_t kLocalSearchRankEvaluations = 16000000;
/// Nor more than this many sweeps over every table's options: small
/// problems converge long before the work limit.
constexpr int64_t kLocalSearchSweeps = 40;
/// Tables one perturbation re-places at random.
constexpr int64_t kPerturbedTables = 3;
/// Least-loaded placements per layout family a descent tries a table on.
constexpr size_t kCandidateRanks = 4;
/// Table changes a plan state takes incrementally before summing afresh.
constexpr size_t kChangesPerResum = 64;
/// A move must gain this fraction of the iteration time to count.
constexpr double kMinGain = 1e-9;

/// A plan with each table's load and their sum.
class PlanState {
public:
  PlanState(const PlanProblem &problem, Plan plan)
      : problem(&problem), plan_(std::move(plan)), total(problem) {
    for (size_t t = 0; t < plan_.tables.size(); ++t)
      loads.push_back(std::make_shared<const PlanLoad>(
          tableLoad(problem, problem.tables[t], plan_.tables[t])));
    resum();
  }

  const Plan &plan() const { return plan_; }
  const PlanCost &cost() const { return cost_; }

  /// The iteration time and feasibility if table `t` had `load`.
  CostSummary costWith(size_t t, const PlanLoad &load) const {
    PlanLoad trial = total;
    trial.add(*loads[t], -1);
    trial.add(load, +1);
    return summarizeLoad(*problem, trial);
  }

  /// Gives tables new layouts (with their loads), updating the sum; every
  /// kChangesPerResum changes it is summed from scratch, so that rounding
  /// never accumulates.
  void set(std::vector<std::tuple<size_t, TablePlan, PlanLoad>> changes) {
    for (auto &[t, tp, load] : changes) {
      total.add(*loads[t], -1);
      total.add(load, +1);
      plan_.tables[t] = std::move(tp);
      loads[t] = std::make_shared<const PlanLoad>(std::move(load));
    }
    changesSinceResum += changes.size();
    if (changesSinceResum >= kChangesPerResum)
      resum();
    else
      cost_ = costOfLoad(*problem, total);
  }
  void set(size_t t, TablePlan tp) {
    PlanLoad load = tableLoad(*problem, problem->tables[t], tp);
    set({{t, std::move(tp), std::move(load)}});
  }

  /// Table `t` takes `tp` if that makes the plan faster and it still fits;
  /// true if it did.
  bool improveWith(size_t t, TablePlan tp, PlanLoad load) {
    TablePlan oldPlan = plan_.tables[t];
    PlanLoad oldLoad = *loads[t];
    double before = cost_.iterationUs;
    set({{t, std::move(tp), std::move(load)}});
    if (cost_.fitsMemory && cost_.iterationUs < before)
      return true;
    set({{t, std::move(oldPlan), std::move(oldLoad)}});
    return false;
  }

private:
  void resum() {
    changesSinceResum = 0;
    total = PlanLoad(*problem);
    for (const std::shared_ptr<const PlanLoad> &load : loads)
      total.add(*load, +1);
    cost_ = costOfLoad(*problem, total);
  }

  const PlanProblem *problem;
  Plan plan_;
  /// Shared, so that trial copies of a state copy no loads.
  std::vector<std::shared_ptr<const PlanLoad>> loads;
  PlanLoad total;
  PlanCost cost_;
  size_t changesSinceResum = 0;
};

class Improver {
public:
  explicit Improver(const PlanProblem &problem)
      : problem(problem), R(problem.ranks()),
        replicaLoads(problem.tables.size()) {}

  void run(PlanState &state) const;

private:
  /// Replicates tables while that makes the plan faster; true if it did.
  bool promoteToDataParallel(PlanState &state) const;
  /// Moves table-wise tables off the slowest rank while that helps.
  bool rebalanceTableWise(PlanState &state) const;
  /// Splits the largest table-wise table of the fullest rank into column
  /// shards (spread over nodes, or a block of the node on one), then
  /// replicates what the freed memory allows, while the two together make
  /// the plan faster: neither step alone gains, since a replica needs room
  /// on every rank and a split only adds index traffic.
  bool splitToReplicate(PlanState &state) const;
  /// The two orders of splitting: the largest table of the fullest rank,
  /// one at a time; and the k largest table-wise tables together, for k
  /// doubling (a replica needs room on every rank, so several full ranks
  /// hold it back at once), then one at a time. Each keeps its best
  /// improvement; true if either changed the plan.
  bool splitLargestOnFullest(PlanState &state) const;
  bool splitLargestTogether(PlanState &state) const;
  /// Replicates into `trial`'s freed memory and keeps it in `best` if it
  /// beats both `best` and `state`.
  bool improveBySplitting(PlanState &state, PlanState trial,
                          std::optional<PlanState> &best) const;
  /// Table `t` in `parts` column shards from `rank`: spread over nodes, or
  /// a block of the node on one; nothing where the split does not apply.
  std::optional<TablePlan> columnSplit(size_t t, int64_t rank,
                                       int64_t parts) const;
  /// Gives each sharded table the best of its sharded layouts.
  bool reassignShardedTables(PlanState &state) const;
  /// Descents from the plan and from seeded perturbations of the best one,
  /// within a fixed amount of work; keeps the best.
  void iteratedLocalSearch(PlanState &state) const;
  /// Each table in turn takes its best move, then whole sharding types
  /// move, while that helps. Counts evaluations; none past `budget`.
  void descend(PlanState &state, int64_t &evaluations, int64_t budget) const;
  /// The layouts a descent tries for table `t`: all but the table-wise
  /// and column-wise ones, of which only the least-loaded per family
  /// (shard count, and whether they cross nodes), the least-loaded on each
  /// node and the table's own: placements on equally loaded ranks are
  /// alike, and on many ranks trying them all would spend the search.
  std::vector<TablePlan> moves(size_t t, const PlanState &state) const;
  /// Tries each candidate for table `t` and keeps the fastest that beats
  /// the plan and fits; true if one did.
  bool takeBestOption(PlanState &state, size_t t,
                      std::vector<TablePlan> candidates, int64_t &evaluations,
                      int64_t budget) const;
  /// Moves every table of one sharded type to another type at once, the
  /// best such move if it helps; true if one did.
  bool moveWholeTypes(PlanState &state, int64_t &evaluations) const;
  /// Table `t` laid out in `type` near its current placement, or nothing
  /// where that type does not apply.
  std::optional<TablePlan> retype(const PlanState &state, size_t t,
                                  ShardingType type) const;

  /// Table `t` replicated, and its load (the same in every plan).
  TablePlan replica(size_t t) const;
  const PlanLoad &replicaLoad(size_t t) const;

  const PlanProblem &problem;
  int64_t R;
  mutable std::vector<std::optional<PlanLoad>> replicaLoads;
};
} // namespace

TablePlan Improver::replica(size_t t) const {
  return makeTablePlan(problem, problem.tables[t], ShardingType::data_parallel,
                       0, R);
}

const PlanLoad &Improver::replicaLoad(size_t t) const {
  if (!replicaLoads[t])
    replicaLoads[t] = tableLoad(problem, problem.tables[t], replica(t));
  return *replicaLoads[t];
}

void Improver::run(PlanState &state) const {
  // Until no step helps.
  for (int round = 0; round < 8; ++round) {
    bool promoted = promoteToDataParallel(state);
    bool moved = rebalanceTableWise(state);
    bool split = splitToReplicate(state);
    bool reassigned = state.plan().tables.size() <= kSearchedTables &&
                      reassignShardedTables(state);
    if (!promoted && !moved && !split && !reassigned)
      break;
  }
  if (!state.plan().tables.empty() &&
      state.plan().tables.size() <= kSearchedTables)
    iteratedLocalSearch(state);
}

bool Improver::takeBestOption(PlanState &state, size_t t,
                              std::vector<TablePlan> candidates,
                              int64_t &evaluations, int64_t budget) const {
  const TableSpec &table = problem.tables[t];
  double bestUs = state.cost().iterationUs;
  std::optional<std::pair<TablePlan, PlanLoad>> best;
  for (TablePlan &option : candidates) {
    if (evaluations >= budget)
      break;
    ++evaluations;
    PlanLoad load = tableLoad(problem, table, option);
    CostSummary next = state.costWith(t, load);
    if (next.fitsMemory && next.iterationUs < bestUs * (1 - kMinGain)) {
      bestUs = next.iterationUs;
      best.emplace(std::move(option), std::move(load));
    }
  }
  return best &&
         state.improveWith(t, std::move(best->first), std::move(best->second));
}

std::vector<TablePlan> Improver::moves(size_t t, const PlanState &state) const {
  const PlanCost &current = state.cost();
  auto blockLoad = [&](const TablePlan &tp) {
    double load = 0;
    for (const Shard &shard : tp.shards)
      load = std::max(load, current.lookupUs[shard.rank]);
    return load;
  };
  auto family = [&](const TablePlan &tp) {
    return std::make_pair(crossesNodes(problem, tp), tp.shards.size());
  };
  const TablePlan &own = state.plan().tables[t];
  std::vector<TablePlan> kept, spread;
  for (TablePlan &option : tableOptions(problem, problem.tables[t])) {
    if (option.type != ShardingType::table_wise &&
        option.type != ShardingType::column_wise)
      kept.push_back(std::move(option));
    else
      spread.push_back(std::move(option));
  }
  std::stable_sort(spread.begin(), spread.end(),
                   [&](const TablePlan &a, const TablePlan &b) {
                     return std::make_pair(family(a), blockLoad(a)) <
                            std::make_pair(family(b), blockLoad(b));
                   });
  size_t taken = 0;
  std::vector<bool> nodeSeen(problem.nodes, false);
  for (size_t i = 0; i < spread.size(); ++i) {
    if (i > 0 && family(spread[i]) != family(spread[i - 1])) {
      taken = 0;
      nodeSeen.assign(problem.nodes, false);
    }
    int64_t node = spread[i].shards.front().rank / problem.ranksPerNode;
    bool isOwn = spread[i].type == own.type &&
                 spread[i].shards.size() == own.shards.size() &&
                 spread[i].shards.front().rank == own.shards.front().rank &&
                 family(spread[i]) == family(own);
    if (taken < kCandidateRanks || !nodeSeen[node] || isOwn) {
      nodeSeen[node] = true;
      kept.push_back(std::move(spread[i]));
      ++taken;
    }
  }
  return kept;
}

std::optional<TablePlan> Improver::retype(const PlanState &state, size_t t,
                                          ShardingType type) const {
  const TableSpec &table = problem.tables[t];
  int64_t rank = state.plan().tables[t].shards.front().rank;
  switch (type) {
  case ShardingType::table_wise:
    return makeTablePlan(problem, table, type, rank, 1);
  case ShardingType::column_wise:
    if (!allowsColumnShards(problem) || table.dim % 2 != 0 ||
        table.dim / 2 < 4 || problem.ranksPerNode < 2)
      return std::nullopt;
    return makeTablePlan(problem, table, type, rank / 2 * 2, 2);
  case ShardingType::table_row_wise:
    if (problem.nodes < 2 || !allowsRowShards(problem, table))
      return std::nullopt;
    return makeTablePlan(problem, table, type, rank / problem.ranksPerNode,
                         problem.ranksPerNode);
  case ShardingType::row_wise:
    if (!allowsRowShards(problem, table))
      return std::nullopt;
    return makeTablePlan(problem, table, type, 0, R);
  case ShardingType::data_parallel:
    return makeTablePlan(problem, table, type, 0, R);
  }
  return std::nullopt;
}

bool Improver::moveWholeTypes(PlanState &state, int64_t &evaluations) const {
  const ShardingType types[] = {ShardingType::table_wise, ShardingType::row_wise,
                                ShardingType::column_wise,
                                ShardingType::table_row_wise,
                                ShardingType::data_parallel};
  std::optional<PlanState> best;
  double bestUs = state.cost().iterationUs;
  for (ShardingType from : types) {
    if (from == ShardingType::data_parallel)
      continue; // replicas leave one at a time (promoteToDataParallel's undo)
    for (ShardingType to : types) {
      if (to == from)
        continue;
      std::vector<std::tuple<size_t, TablePlan, PlanLoad>> changes;
      for (size_t t = 0; t < state.plan().tables.size(); ++t) {
        if (state.plan().tables[t].type != from)
          continue;
        if (std::optional<TablePlan> tp = retype(state, t, to)) {
          PlanLoad load = tableLoad(problem, problem.tables[t], *tp);
          changes.emplace_back(t, std::move(*tp), std::move(load));
        }
      }
      if (changes.size() < 2)
        continue; // single tables are the descent's moves
      ++evaluations;
      PlanState trial = state;
      trial.set(std::move(changes));
      if (trial.cost().fitsMemory &&
          trial.cost().iterationUs < bestUs * (1 - kMinGain)) {
        bestUs = trial.cost().iterationUs;
        best = std::move(trial);
      }
    }
  }
  if (!best)
    return false;
  state = std::move(*best);
  return true;
}

void Improver::descend(PlanState &state, int64_t &evaluations,
                       int64_t budget) const {
  for (bool improved = true; improved && evaluations < budget;) {
    improved = false;
    for (size_t t = 0; t < state.plan().tables.size() && evaluations < budget;
         ++t)
      improved |= takeBestOption(state, t, moves(t, state), evaluations, budget);
    if (!improved && evaluations < budget)
      improved = moveWholeTypes(state, evaluations);
  }
}

void Improver::iteratedLocalSearch(PlanState &state) const {
  int64_t sweep = 0;
  for (const TableSpec &table : problem.tables)
    sweep += tableOptions(problem, table).size();
  int64_t evaluations = 0,
          budget = std::min(kLocalSearchRankEvaluations / R,
                            kLocalSearchSweeps * sweep);
  descend(state, evaluations, budget);
  PlanState best = state;
  std::mt19937_64 random(0x62726169); // fixed: plans are deterministic
  while (evaluations < budget) {
    PlanState trial = best;
    std::vector<std::tuple<size_t, TablePlan, PlanLoad>> changes;
    for (int64_t k = 0; k < kPerturbedTables; ++k) {
      size_t t = random() % trial.plan().tables.size();
      std::vector<TablePlan> choices = tableOptions(problem, problem.tables[t]);
      TablePlan tp = choices[random() % choices.size()];
      PlanLoad load = tableLoad(problem, problem.tables[t], tp);
      changes.emplace_back(t, std::move(tp), std::move(load));
    }
    trial.set(std::move(changes));
    ++evaluations;
    if (!trial.cost().fitsMemory)
      continue;
    descend(trial, evaluations, budget);
    if (trial.cost().iterationUs <
        best.cost().iterationUs * (1 - kMinGain))
      best = std::move(trial);
  }
  state = std::move(best);
}

bool Improver::reassignShardedTables(PlanState &state) const {
  bool improved = false;
  for (size_t t = 0; t < state.plan().tables.size(); ++t) {
    if (state.plan().tables[t].type == ShardingType::data_parallel)
      continue;
    std::vector<TablePlan> candidates;
    for (TablePlan &option : tableOptions(problem, problem.tables[t]))
      if (option.type != ShardingType::data_parallel) // promotion's move
        candidates.push_back(std::move(option));
    int64_t evaluations = 0;
    improved |= takeBestOption(state, t, std::move(candidates), evaluations,
                               std::numeric_limits<int64_t>::max());
  }
  return improved;
}

bool Improver::promoteToDataParallel(PlanState &state) const {
  std::vector<size_t> candidates;
  for (size_t t = 0; t < state.plan().tables.size(); ++t)
    if (state.plan().tables[t].type != ShardingType::data_parallel)
      candidates.push_back(t);
  // With few tables, measure each replica's gain under the full model;
  // otherwise estimate it from the bytes the table exchanges.
  std::vector<double> gain(state.plan().tables.size(), 0);
  bool measured = candidates.size() <= kSearchedTables;
  for (size_t t : candidates) {
    const TableSpec &table = problem.tables[t];
    gain[t] = measured ? state.cost().iterationUs -
                             state.costWith(t, replicaLoad(t)).iterationUs
                       : table.poolingFactor * 8 + table.dim * 4;
  }
  auto benefit = [&](size_t t) { return gain[t] / problem.tables[t].bytes(); };
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](size_t a, size_t b) { return benefit(a) > benefit(b); });
  // Every candidate is tried: a replica only helps when it takes bytes off
  // the busiest link, so gains are not monotone in the order.
  bool improved = false;
  for (size_t t : candidates) {
    // Every rank must hold a replica after freeing its shard.
    const TableSpec &table = problem.tables[t];
    bool fits = true;
    for (int64_t r = 0; r < R && fits; ++r) {
      double freed = 0;
      const TablePlan &current = state.plan().tables[t];
      for (const Shard &shard : current.shards)
        if (shard.rank == r)
          freed += shardMemoryBytes(problem, table, current.type, shard);
      Shard whole{r, 0, table.rows, 0, table.dim};
      fits = state.cost().memoryBytes[r] - freed +
                 shardMemoryBytes(problem, table, ShardingType::data_parallel,
                                  whole) <=
             problem.capacityBytes();
    }
    if (!fits)
      continue;
    CostSummary next = state.costWith(t, replicaLoad(t));
    if (next.fitsMemory &&
        next.iterationUs < state.cost().iterationUs * (1 - kMinGain) &&
        state.improveWith(t, replica(t), replicaLoad(t)))
      improved = true;
  }
  return improved;
}

bool Improver::rebalanceTableWise(PlanState &state) const {
  bool any = false;
  for (int round = 0; round < 64; ++round) {
    const std::vector<double> &lookup = state.cost().lookupUs;
    int64_t hot = std::max_element(lookup.begin(), lookup.end()) - lookup.begin();
    int64_t cold = std::min_element(lookup.begin(), lookup.end()) - lookup.begin();
    bool improved = false;
    for (size_t t = 0; t < state.plan().tables.size() && !improved; ++t) {
      const TablePlan &tp = state.plan().tables[t];
      if (tp.type != ShardingType::table_wise || tp.shards.front().rank != hot)
        continue;
      TablePlan moved = tp;
      moved.shards.front().rank = cold;
      PlanLoad load = tableLoad(problem, problem.tables[t], moved);
      CostSummary next = state.costWith(t, load);
      improved = next.fitsMemory &&
                 next.iterationUs < state.cost().iterationUs * (1 - kMinGain) &&
                 state.improveWith(t, std::move(moved), std::move(load));
    }
    if (!improved)
      break;
    any = true;
  }
  return any;
}

std::optional<TablePlan> Improver::columnSplit(size_t t, int64_t rank,
                                               int64_t parts) const {
  const TableSpec &table = problem.tables[t];
  if (!allowsColumnShards(problem) || parts > R || table.dim % parts != 0 ||
      table.dim / parts < 4)
    return std::nullopt;
  // Across nodes where there are several, else a block of the node.
  if (problem.nodes > 1)
    return makeSpreadColumnPlan(problem, table, rank, parts);
  if (parts > problem.ranksPerNode)
    return std::nullopt;
  return makeTablePlan(problem, table, ShardingType::column_wise,
                       rank / parts * parts, parts);
}

bool Improver::splitToReplicate(PlanState &state) const {
  PlanState oneByOne = state, groupsFirst = state;
  bool splitOne = splitLargestOnFullest(oneByOne);
  bool splitGroups = splitLargestTogether(groupsFirst);
  splitGroups = splitLargestOnFullest(groupsFirst) || splitGroups;
  if (!splitOne && !splitGroups)
    return false;
  state = std::move(groupsFirst.cost().iterationUs <
                            oneByOne.cost().iterationUs
                        ? groupsFirst
                        : oneByOne);
  return true;
}

bool Improver::improveBySplitting(PlanState &state, PlanState trial,
                                  std::optional<PlanState> &best) const {
  if (!trial.cost().fitsMemory)
    return false;
  promoteToDataParallel(trial);
  if (trial.cost().iterationUs >=
      (best ? best->cost().iterationUs : state.cost().iterationUs) *
          (1 - kMinGain))
    return false;
  best = std::move(trial);
  return true;
}

bool Improver::splitLargestTogether(PlanState &state) const {
  std::vector<size_t> tableWise;
  for (size_t t = 0; t < problem.tables.size(); ++t)
    if (state.plan().tables[t].type == ShardingType::table_wise)
      tableWise.push_back(t);
  std::stable_sort(tableWise.begin(), tableWise.end(), [&](size_t a, size_t b) {
    return problem.tables[a].bytes() > problem.tables[b].bytes();
  });
  std::optional<PlanState> best;
  for (size_t k = 2; k <= tableWise.size(); k *= 2) {
    for (int64_t parts : {4, 16}) {
      std::vector<std::tuple<size_t, TablePlan, PlanLoad>> changes;
      for (size_t i = 0; i < k; ++i) {
        size_t t = tableWise[i];
        if (std::optional<TablePlan> tp = columnSplit(
                t, state.plan().tables[t].shards.front().rank, parts)) {
          PlanLoad load = tableLoad(problem, problem.tables[t], *tp);
          changes.emplace_back(t, std::move(*tp), std::move(load));
        }
      }
      PlanState trial = state;
      trial.set(std::move(changes));
      improveBySplitting(state, std::move(trial), best);
    }
  }
  if (!best)
    return false;
  state = std::move(*best);
  return true;
}

bool Improver::splitLargestOnFullest(PlanState &state) const {
  bool any = false;
  std::vector<bool> tried(problem.tables.size(), false);
  for (int round = 0; round < 64; ++round) {
    const std::vector<double> &memory = state.cost().memoryBytes;
    int64_t fullest = std::max_element(memory.begin(), memory.end()) - memory.begin();
    std::optional<size_t> largest;
    for (size_t t = 0; t < problem.tables.size(); ++t) {
      const TablePlan &tp = state.plan().tables[t];
      if (tried[t] || tp.type != ShardingType::table_wise ||
          tp.shards.front().rank != fullest)
        continue;
      if (!largest || problem.tables[t].bytes() > problem.tables[*largest].bytes())
        largest = t;
    }
    if (!largest)
      break;
    tried[*largest] = true;
    std::optional<PlanState> best;
    for (int64_t parts : {2, 4, 8, 16}) {
      if (std::optional<TablePlan> tp = columnSplit(*largest, fullest, parts)) {
        PlanState trial = state;
        trial.set(*largest, std::move(*tp));
        improveBySplitting(state, std::move(trial), best);
      }
    }
    if (best) {
      state = std::move(*best);
      any = true;
    }
  }
  return any;
}

void plan::improvePlan(const PlanProblem &problem, Plan &plan) {
  PlanState state(problem, std::move(plan));
  Improver(problem).run(state);
  plan = state.plan();
}
