//===- TablePlans.cpp - Laying out one table ------------------------------===//
//
// This file lays out one table in one sharding type, and lists the layouts
// the planners try for a table.
//
//===----------------------------------------------------------------------===//

#include "TablePlans.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir::braid;
using namespace mlir::braid::plan;

/// `count` ranges splitting `extent` as evenly as possible.
static std::vector<std::pair<int64_t, int64_t>> evenSplit(int64_t extent,
                                                          int64_t count) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int64_t i = 0; i < count; ++i) {
    int64_t begin = extent * i / count, end = extent * (i + 1) / count;
    ranges.push_back({begin, end - begin});
  }
  return ranges;
}

std::string plan::formatGB(double bytes) {
  return llvm::formatv("{0:f2} GB", bytes / 1e9).str();
}

TablePlan plan::makeTablePlan(const PlanProblem &problem, const TableSpec &table,
                        ShardingType type, int64_t where, int64_t parts) {
  TablePlan tp;
  tp.type = type;
  int64_t R = problem.ranks(), g = problem.ranksPerNode;
  switch (type) {
  case ShardingType::table_wise:
    tp.shards.push_back({where, 0, table.rows, 0, table.dim});
    break;
  case ShardingType::row_wise: {
    int64_t r = 0;
    for (auto [offset, rows] : evenSplit(table.rows, R))
      tp.shards.push_back({r++, offset, rows, 0, table.dim});
    break;
  }
  case ShardingType::table_row_wise: {
    int64_t r = where * g;
    for (auto [offset, rows] : evenSplit(table.rows, g))
      tp.shards.push_back({r++, offset, rows, 0, table.dim});
    break;
  }
  case ShardingType::column_wise: {
    int64_t i = 0;
    for (auto [offset, cols] : evenSplit(table.dim, parts))
      tp.shards.push_back({(where + i++) % R, 0, table.rows, offset, cols});
    break;
  }
  case ShardingType::data_parallel:
    for (int64_t r = 0; r < R; ++r)
      tp.shards.push_back({r, 0, table.rows, 0, table.dim});
    break;
  }
  return tp;
}

TablePlan plan::makeSpreadColumnPlan(const PlanProblem &problem,
                                     const TableSpec &table, int64_t where,
                                     int64_t parts) {
  int64_t g = problem.ranksPerNode, N = problem.nodes;
  TablePlan tp;
  tp.type = ShardingType::column_wise;
  int64_t k = 0;
  for (auto [offset, cols] : evenSplit(table.dim, parts)) {
    int64_t node = (where / g + k) % N, local = (where % g + k / N) % g;
    tp.shards.push_back({node * g + local, 0, table.rows, offset, cols});
    ++k;
  }
  return tp;
}

bool plan::crossesNodes(const PlanProblem &problem, const TablePlan &tp) {
  for (const Shard &shard : tp.shards)
    if (shard.rank / problem.ranksPerNode !=
        tp.shards.front().rank / problem.ranksPerNode)
      return true;
  return false;
}

std::vector<TablePlan> plan::tableOptions(const PlanProblem &problem,
                                          const TableSpec &table) {
  int64_t R = problem.ranks();
  std::vector<TablePlan> result;
  for (int64_t r = 0; r < R; ++r)
    result.push_back(makeTablePlan(problem, table, ShardingType::table_wise, r, 1));
  if (R == 1)
    return result;
  bool rowSplits = allowsRowShards(problem, table);
  if (rowSplits)
    result.push_back(
        makeTablePlan(problem, table, ShardingType::row_wise, 0, R));
  for (int64_t parts : {2, 4, 8, 16}) {
    if (!allowsColumnShards(problem))
      break;
    if (parts > R || table.dim % parts != 0 || table.dim / parts < 4)
      continue;
    // Inside a node where it holds that many ranks (NVLink carries part of
    // the exchange), and one shard per node across nodes (each node's NICs
    // carry a share).
    if (parts <= problem.ranksPerNode)
      for (int64_t start = 0; start < R; start += parts)
        result.push_back(makeTablePlan(problem, table, ShardingType::column_wise,
                                       start, parts));
    if (problem.nodes > 1)
      for (int64_t start = 0; start < R; ++start)
        result.push_back(makeSpreadColumnPlan(problem, table, start, parts));
  }
  if (problem.nodes > 1 && rowSplits)
    for (int64_t node = 0; node < problem.nodes; ++node)
      result.push_back(makeTablePlan(problem, table, ShardingType::table_row_wise,
                                     node, problem.ranksPerNode));
  result.push_back(makeTablePlan(problem, table, ShardingType::data_parallel, 0, R));
  return result;
}
