//===- Greedy.cpp - Greedy baselines and forced plans ---------------------===//
//
// This file implements the table-wise greedy baselines of DreamShard,
// NeuroShard and AutoShard (identical in all three: sort by cost key, place
// each table on the rank with the smallest accumulated key whose memory
// still fits, ties to the smaller accumulated size), and plans that put
// every table in one sharding type.
//
//===----------------------------------------------------------------------===//

#include "TablePlans.h"

#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace mlir::braid;
using namespace mlir::braid::plan;

llvm::StringRef plan::stringifyGreedyKey(GreedyKey key) {
  switch (key) {
  case GreedyKey::size:
    return "size";
  case GreedyKey::dim:
    return "dim";
  case GreedyKey::dim_pooling:
    return "dim_pooling";
  case GreedyKey::dim_pooling_logrows:
    return "dim_pooling_logrows";
  }
  llvm_unreachable("unknown greedy key");
}

std::optional<GreedyKey> plan::symbolizeGreedyKey(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<GreedyKey>>(name)
      .Case("size", GreedyKey::size)
      .Case("dim", GreedyKey::dim)
      .Case("dim_pooling", GreedyKey::dim_pooling)
      .Case("dim_pooling_logrows", GreedyKey::dim_pooling_logrows)
      .Default(std::nullopt);
}

static double keyOf(const TableSpec &table, GreedyKey key) {
  switch (key) {
  case GreedyKey::size:
    return table.bytes();
  case GreedyKey::dim:
    return table.dim;
  case GreedyKey::dim_pooling:
    return table.dim * table.poolingFactor;
  case GreedyKey::dim_pooling_logrows:
    return table.dim * table.poolingFactor * std::log10(double(table.rows));
  }
  return 0;
}

static llvm::Error noRoom(const TableSpec &table, const PlanProblem &problem,
                          double mostFreeBytes) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "table '" + table.name + "' (" +
          formatGB(tableMemoryBytes(problem, table)) +
          (problem.training ? " with its optimizer state and activations"
                            : "") +
          ") fits on no rank: the freest has " + formatGB(mostFreeBytes) +
          " left of the " + formatGB(problem.capacityBytes()) +
          " each rank has for tables");
}

llvm::Expected<Plan> plan::planGreedy(const PlanProblem &problem,
                                      GreedyKey key) {
  int64_t R = problem.ranks();
  std::vector<size_t> order(problem.tables.size());
  std::iota(order.begin(), order.end(), 0);
  // Stable: equal keys keep problem order, so plans are deterministic.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return keyOf(problem.tables[a], key) > keyOf(problem.tables[b], key);
  });
  std::vector<double> load(R, 0), size(R, 0);
  Plan plan;
  plan.planner = ("greedy:" + stringifyGreedyKey(key)).str();
  plan.tables.resize(problem.tables.size());
  for (size_t t : order) {
    const TableSpec &table = problem.tables[t];
    int64_t best = -1;
    for (int64_t r = 0; r < R; ++r) {
      if (size[r] + tableMemoryBytes(problem, table) > problem.capacityBytes())
        continue;
      if (best < 0 || load[r] < load[best] ||
          (load[r] == load[best] && size[r] < size[best]))
        best = r;
    }
    if (best < 0)
      return noRoom(table, problem,
                    problem.capacityBytes() -
                        *std::min_element(size.begin(), size.end()));
    load[best] += keyOf(table, key);
    size[best] += tableMemoryBytes(problem, table);
    plan.tables[t] = {ShardingType::table_wise,
                      {{best, 0, table.rows, 0, table.dim}}};
  }
  return plan;
}

std::optional<Plan> plan::planBestGreedy(const PlanProblem &problem) {
  std::optional<Plan> best;
  double bestUs = INFINITY;
  for (GreedyKey key : kGreedyKeys) {
    llvm::Expected<Plan> greedy = planGreedy(problem, key);
    if (!greedy) {
      llvm::consumeError(greedy.takeError());
      continue;
    }
    PlanCost cost = evaluatePlan(problem, *greedy);
    if (cost.fitsMemory && cost.iterationUs < bestUs) {
      bestUs = cost.iterationUs;
      best = std::move(*greedy);
    }
  }
  return best;
}

llvm::Expected<Plan> plan::planForced(const PlanProblem &problem,
                                      ShardingType type) {
  Plan plan;
  plan.planner = ("forced:" + stringifyShardingType(type)).str();
  int64_t R = problem.ranks();
  for (size_t t = 0; t < problem.tables.size(); ++t) {
    const TableSpec &table = problem.tables[t];
    int64_t parts = std::min<int64_t>(R, table.dim);
    plan.tables.push_back(makeTablePlan(problem, table, type,
                                        type == ShardingType::table_row_wise
                                            ? int64_t(t) % problem.nodes
                                            : int64_t(t) % R,
                                        parts));
  }
  return plan;
}
