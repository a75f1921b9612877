//===- PlanLoadTest.cpp - Tests of the planner's internals ----------------===//
//
// This file tests the pieces the search is built on: a plan's cost summed
// from per-table loads equals the cost after swapping tables in and out
// incrementally, and the layouts the search tries are complete and placed
// where they claim.
//
//===----------------------------------------------------------------------===//

#include "PlanLoad.h"
#include "TablePlans.h"
#include "TestProblems.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>
#include <set>

using namespace mlir::braid;
using namespace mlir::braid::plan;

namespace {
PlanProblem problemOn(int64_t nodes, int64_t ranksPerNode, unsigned seed) {
  PlanProblem problem = dgxProblem(nodes, ranksPerNode, 4096);
  std::mt19937_64 random(seed);
  for (int64_t t = 0; t < 12; ++t) {
    TableSpec table;
    table.name = "t" + std::to_string(t);
    table.rows = 100 + int64_t(random() % 5000000);
    table.dim = 16 << (random() % 4);
    table.poolingFactor = 1 + double(random() % 40);
    problem.tables.push_back(table);
  }
  return problem;
}
} // namespace

// Replacing tables one at a time in a running sum gives the cost of the
// final plan computed from scratch, down to rounding, for every layout.
TEST(PlanLoadTest, IncrementalSumsMatchEvaluatePlan) {
  for (auto [nodes, perNode] : {std::pair{1, 8}, {2, 4}, {4, 8}}) {
    PlanProblem problem = problemOn(nodes, perNode, nodes * 7 + perNode);
    std::mt19937_64 random(3);
    Plan plan;
    PlanLoad total(problem);
    std::vector<PlanLoad> loads;
    for (const TableSpec &table : problem.tables) {
      plan.tables.push_back(
          makeTablePlan(problem, table, ShardingType::table_wise, 0, 1));
      loads.push_back(tableLoad(problem, table, plan.tables.back()));
      total.add(loads.back(), +1);
    }
    for (int step = 0; step < 200; ++step) {
      size_t t = random() % problem.tables.size();
      std::vector<TablePlan> options = tableOptions(problem, problem.tables[t]);
      plan.tables[t] = options[random() % options.size()];
      total.add(loads[t], -1);
      loads[t] = tableLoad(problem, problem.tables[t], plan.tables[t]);
      total.add(loads[t], +1);
      PlanCost incremental = costOfLoad(problem, total);
      PlanCost scratch = evaluatePlan(problem, plan);
      ASSERT_NEAR(incremental.iterationUs, scratch.iterationUs,
                  1e-9 * scratch.iterationUs)
          << "step " << step;
      EXPECT_NEAR(incremental.indexExchangeUs, scratch.indexExchangeUs, 1e-6);
      EXPECT_NEAR(incremental.outputExchangeUs, scratch.outputExchangeUs, 1e-6);
      EXPECT_NEAR(incremental.reduceScatterUs, scratch.reduceScatterUs, 1e-6);
      EXPECT_EQ(incremental.fitsMemory, scratch.fitsMemory);
      CostSummary summary = summarizeLoad(problem, total);
      EXPECT_NEAR(summary.iterationUs, scratch.iterationUs,
                  1e-9 * scratch.iterationUs);
    }
  }
}

// The link totals give the time of the all_to_all matrix they summarize.
TEST(PlanLoadTest, LinkTotalsPriceLikeTheMatrix) {
  cluster::HardwareDesc hw = *cluster::loadHardware("dgx-h100");
  std::mt19937_64 random(5);
  for (auto [nodes, perNode] : {std::pair{1, 8}, {2, 4}, {3, 2}}) {
    int64_t R = nodes * perNode;
    std::vector<double> matrix(R * R);
    for (double &bytes : matrix)
      bytes = double(random() % 1000000);
    cost::AllToAllLinkBytes links(R, nodes);
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < R; ++j) {
        if (i == j)
          continue;
        if (i / perNode == j / perNode) {
          links.rankOut[i] += matrix[i * R + j];
          links.rankIn[j] += matrix[i * R + j];
        } else {
          links.nodeOut[i / perNode] += matrix[i * R + j];
          links.nodeIn[j / perNode] += matrix[i * R + j];
        }
      }
    EXPECT_DOUBLE_EQ(cost::estimateAllToAllvUs(hw, links),
                     cost::estimateAllToAllvUs(hw, matrix, R, perNode));
  }
}

// Every layout covers the table exactly once (R times when replicated),
// and column shards spread over nodes sit on distinct ranks, one per node
// while there are nodes enough.
TEST(PlanLoadTest, LayoutsCoverTheTableAndSpreadOverNodes) {
  PlanProblem problem = problemOn(4, 8, 11);
  for (const TableSpec &table : problem.tables) {
    for (const TablePlan &tp : tableOptions(problem, table)) {
      double covered = 0;
      std::set<int64_t> ranks;
      for (const Shard &shard : tp.shards) {
        covered += double(shard.rows) * shard.cols;
        ranks.insert(shard.rank);
        EXPECT_LT(shard.rank, problem.ranks());
      }
      double expected = double(table.rows) * table.dim;
      if (tp.type == ShardingType::data_parallel)
        expected *= problem.ranks();
      EXPECT_EQ(covered, expected);
      EXPECT_EQ(ranks.size(), tp.shards.size()) << "a rank holds two shards";
    }
    for (int64_t parts : {2, 4, 8, 16}) {
      if (table.dim / parts < 4)
        continue;
      for (int64_t where = 0; where < problem.ranks(); ++where) {
        TablePlan tp = makeSpreadColumnPlan(problem, table, where, parts);
        std::set<int64_t> nodes, ranks;
        for (const Shard &shard : tp.shards) {
          nodes.insert(shard.rank / problem.ranksPerNode);
          ranks.insert(shard.rank);
        }
        EXPECT_EQ(ranks.size(), size_t(parts));
        EXPECT_EQ(nodes.size(), size_t(std::min<int64_t>(parts, problem.nodes)));
        EXPECT_EQ(crossesNodes(problem, tp), true);
        EXPECT_EQ(tp.shards.front().rank, where);
      }
    }
  }
}
