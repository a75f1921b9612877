//===- PlannerTest.cpp - Tests of the sharding planner core ---------------===//
//
// This file tests the planner's invariants on random table sets: every plan
// covers every table exactly, fits memory, is deterministic, never beats
// the lower bound, and Braid's plan is no worse than the greedy baselines
// under the cost model they are all judged by.
//
//===----------------------------------------------------------------------===//

#include "TablePlans.h"
#include "TestProblems.h"

#include "braid/Plan/Planner.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <random>
#include <tuple>

using namespace mlir::braid;
using namespace mlir::braid::plan;

namespace {
/// Tables as in the shared protocols: rows 10^2 .. 10^7.7, skewed pooling.
PlanProblem randomProblem(int64_t tables, int64_t nodes, unsigned seed) {
  PlanProblem problem = dgxProblem(nodes, 8, 65536);
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  const int64_t dims[] = {16, 32, 64, 128};
  for (int64_t t = 0; t < tables; ++t) {
    TableSpec table;
    table.name = "t" + std::to_string(t);
    table.rows = int64_t(std::pow(10.0, 2 + 5.7 * unit(random)));
    table.dim = dims[random() % 4];
    table.poolingFactor = std::exp(3 * unit(random)) - 0.5; // 0.5 .. 19.6, skewed
    table.uniqueRatio = 0.2 + 0.8 * unit(random);
    problem.tables.push_back(table);
  }
  return problem;
}

void expectCoversEveryTable(const PlanProblem &problem, const Plan &plan) {
  ASSERT_EQ(plan.tables.size(), problem.tables.size());
  for (size_t t = 0; t < plan.tables.size(); ++t) {
    const TableSpec &table = problem.tables[t];
    const TablePlan &tp = plan.tables[t];
    ASSERT_FALSE(tp.shards.empty());
    double covered = 0;
    for (const Shard &shard : tp.shards) {
      EXPECT_GE(shard.rank, 0);
      EXPECT_LT(shard.rank, problem.ranks());
      EXPECT_LE(shard.rowOffset + shard.rows, table.rows);
      EXPECT_LE(shard.colOffset + shard.cols, table.dim);
      covered += double(shard.rows) * shard.cols;
    }
    double expected = double(table.rows) * table.dim;
    if (tp.type == ShardingType::data_parallel)
      expected *= problem.ranks();
    EXPECT_EQ(covered, expected) << table.name;
  }
}
} // namespace

TEST(PlannerTest, EveryPlanIsCompleteFeasibleAndAboveTheBound) {
  for (unsigned seed : {1u, 2u, 3u}) {
    PlanProblem problem = randomProblem(120, 2, seed);
    double bound = lowerBoundUs(problem);
    // Planners that succeed must fit memory; a table-wise greedy baseline
    // may legitimately fail when the largest tables fill the ranks.
    std::vector<Plan> plans;
    for (GreedyKey key : kGreedyKeys) {
      llvm::Expected<Plan> greedy = planGreedy(problem, key);
      if (!greedy) {
        llvm::consumeError(greedy.takeError());
        continue;
      }
      EXPECT_TRUE(evaluatePlan(problem, *greedy).fitsMemory);
      plans.push_back(std::move(*greedy));
    }
    llvm::Expected<Plan> braid = planBraid(problem);
    ASSERT_TRUE(static_cast<bool>(braid)) << llvm::toString(braid.takeError());
    EXPECT_TRUE(evaluatePlan(problem, *braid).fitsMemory);
    plans.push_back(std::move(*braid));
    // Forced plans ignore memory; they exist for partitioning tests.
    for (ShardingType type : {ShardingType::table_wise, ShardingType::row_wise,
                              ShardingType::column_wise, ShardingType::table_row_wise})
      plans.push_back(*planForced(problem, type));
    for (const Plan &plan : plans) {
      expectCoversEveryTable(problem, plan);
      PlanCost cost = evaluatePlan(problem, plan);
      // The bound may be exact (an all-replicated optimum): allow rounding.
      EXPECT_GE(cost.iterationUs, bound * (1 - 1e-12)) << plan.planner;
    }
  }
}

TEST(PlannerTest, BraidIsNoWorseThanTheGreedyBaselines) {
  for (int64_t nodes : {1, 2, 4}) {
    PlanProblem problem = randomProblem(nodes == 1 ? 60 : 200, nodes, 7);
    llvm::Expected<Plan> braidPlan = planBraid(problem);
    ASSERT_TRUE(static_cast<bool>(braidPlan)) << llvm::toString(braidPlan.takeError());
    double braid = evaluatePlan(problem, *braidPlan).iterationUs;
    for (GreedyKey key : kGreedyKeys) {
      llvm::Expected<Plan> greedy = planGreedy(problem, key);
      if (!greedy) {
        llvm::consumeError(greedy.takeError());
        continue;
      }
      EXPECT_LE(braid, evaluatePlan(problem, *greedy).iterationUs * 1.0001)
          << nodes << " nodes";
    }
  }
}

TEST(PlannerTest, PlansAreDeterministic) {
  // More tables than the iterated local search takes on, and fewer.
  for (auto [tables, nodes] : {std::pair{150, 2}, {40, 4}}) {
    PlanProblem problem = randomProblem(tables, nodes, 11);
    llvm::Expected<Plan> first = planBraid(problem), second = planBraid(problem);
    ASSERT_TRUE(static_cast<bool>(first)) << llvm::toString(first.takeError());
    ASSERT_TRUE(static_cast<bool>(second)) << llvm::toString(second.takeError());
    const Plan &a = *first, &b = *second;
    ASSERT_EQ(a.tables.size(), b.tables.size());
    for (size_t t = 0; t < a.tables.size(); ++t) {
      EXPECT_EQ(a.tables[t].type, b.tables[t].type);
      ASSERT_EQ(a.tables[t].shards.size(), b.tables[t].shards.size());
      for (size_t s = 0; s < a.tables[t].shards.size(); ++s) {
        const Shard &x = a.tables[t].shards[s], &y = b.tables[t].shards[s];
        EXPECT_EQ(std::make_tuple(x.rank, x.rowOffset, x.rows, x.colOffset, x.cols),
                  std::make_tuple(y.rank, y.rowOffset, y.rows, y.colOffset, y.cols));
      }
    }
  }
}

TEST(PlannerTest, GreedyFollowsTheProtocol) {
  PlanProblem problem = randomProblem(4, 1, 5);
  problem.ranksPerNode = 2;
  problem.tables[0].dim = 128;
  problem.tables[1].dim = 64;
  problem.tables[2].dim = 32;
  problem.tables[3].dim = 16;
  // dim greedy: 128 -> rank 0, 64 -> rank 1, 32 -> rank 1 (64 < 128),
  // 16 -> rank 1 (96 < 128).
  llvm::Expected<Plan> greedy = planGreedy(problem, GreedyKey::dim);
  ASSERT_TRUE(static_cast<bool>(greedy));
  const Plan &plan = *greedy;
  EXPECT_EQ(plan.tables[0].shards[0].rank, 0);
  EXPECT_EQ(plan.tables[1].shards[0].rank, 1);
  EXPECT_EQ(plan.tables[2].shards[0].rank, 1);
  EXPECT_EQ(plan.tables[3].shards[0].rank, 1);
}

TEST(PlannerTest, TooLittleMemoryIsAnError) {
  PlanProblem problem = randomProblem(60, 1, 7);
  problem.reserveBytes = 75e9; // 5 GB per rank for tables
  llvm::Expected<Plan> braid = planBraid(problem);
  ASSERT_FALSE(static_cast<bool>(braid));
  std::string message = llvm::toString(braid.takeError());
  EXPECT_NE(message.find("but 8 ranks have 40.00 GB for tables"), std::string::npos)
      << message;
}

TEST(PlannerTest, TablesThatFitNowhereAreErrors) {
  PlanProblem problem = randomProblem(2, 1, 3);
  problem.tables[0].rows = int64_t(1e9);
  problem.tables[0].dim = 128; // 512 GB
  llvm::Expected<Plan> greedy = planGreedy(problem, GreedyKey::size);
  ASSERT_FALSE(static_cast<bool>(greedy));
  EXPECT_NE(llvm::toString(greedy.takeError()).find("table 't0' (512.00 GB) fits on no rank"),
            std::string::npos);
  // Braid shards it instead: a row-wise slice of 64 GB fits the 72 GB left
  // on each of 8 ranks.
  llvm::Expected<Plan> braid = planBraid(problem);
  ASSERT_TRUE(static_cast<bool>(braid)) << llvm::toString(braid.takeError());
  EXPECT_NE(braid->tables[0].type, ShardingType::table_wise);
  EXPECT_TRUE(evaluatePlan(problem, *braid).fitsMemory);
}

// On problems small enough to enumerate (6 tables on 2 ranks, in one node
// or two, each table-wise on either rank, row-wise, column-wise or
// data-parallel: 5^6 plans), Braid's search finds the optimum of the full
// cost model, and the lower bound is at most that optimum; with ample
// memory and with memory for only 3/4 of the tables on each rank; some
// problems have a table without lookups.
TEST(PlannerTest, BraidFindsTheOptimumOfSmallProblems) {
  for (int64_t nodes : {1, 2})
  for (int mode = 0; mode < 3; ++mode) {
    // Forward, forward with tight memory, and the training step (row-wise
    // Adagrad: state in memory, every backward term in the cost).
    bool tight = mode == 1, training = mode == 2;
    for (unsigned seed = 1; seed <= (training ? 6u : 12u); ++seed) {
      PlanProblem problem = randomProblem(6, nodes, seed);
      problem.training = training;
      problem.embeddingOptimizer = "rowwise_adagrad";
      problem.ranksPerNode = 2 / nodes;
      problem.batch = 8192;
      if (seed % 4 == 0)
        problem.tables[seed % 6].poolingFactor = 0; // no indices to send
      if (tight) {
        double bytes = 0;
        for (const TableSpec &table : problem.tables)
          bytes += table.bytes();
        problem.reserveBytes = problem.hw.device.memoryCapacityGB * 1e9 - 0.75 * bytes;
      }
      std::vector<std::vector<TablePlan>> choices(problem.tables.size());
      for (ShardingType type :
           {ShardingType::table_wise, ShardingType::row_wise,
            ShardingType::column_wise, ShardingType::data_parallel}) {
        // Row-wise Adagrad cannot train a column shard: the training
        // problems enumerate row-wise twice instead.
        if (training && type == ShardingType::column_wise)
          type = ShardingType::row_wise;
        llvm::Expected<Plan> forced = planForced(problem, type);
        ASSERT_TRUE(static_cast<bool>(forced))
            << llvm::toString(forced.takeError());
        for (size_t t = 0; t < problem.tables.size(); ++t) {
          choices[t].push_back(forced->tables[t]);
          if (type == ShardingType::table_wise) {
            TablePlan other = forced->tables[t];
            other.shards.front().rank = 1 - other.shards.front().rank;
            choices[t].push_back(other);
          }
        }
      }
      Plan plan = *planForced(problem, ShardingType::table_wise);
      double optimum = std::numeric_limits<double>::infinity();
      for (int64_t code = 0; code < 15625; ++code) {
        for (size_t t = 0, rest = code; t < 6; ++t, rest /= 5)
          plan.tables[t] = choices[t][rest % 5];
        PlanCost cost = evaluatePlan(problem, plan);
        if (cost.fitsMemory)
          optimum = std::min(optimum, cost.iterationUs);
      }
      llvm::Expected<Plan> braid = planBraid(problem);
      ASSERT_TRUE(static_cast<bool>(braid)) << llvm::toString(braid.takeError());
      // The training step's search is not yet exact: within 5% of the
      // optimum (the forward pass's is exact on these problems).
      EXPECT_LE(evaluatePlan(problem, *braid).iterationUs,
                optimum * (training ? 1.05 : 1 + 1e-9))
          << nodes << " nodes, seed " << seed << (tight ? ", tight" : "")
          << (training ? ", training" : "");
      EXPECT_LE(lowerBoundUs(problem), optimum * (1 + 1e-12))
          << nodes << " nodes, seed " << seed << (tight ? ", tight" : "")
          << (training ? ", training" : "");
    }
  }
}

// Tables without lookups send no indices: when the only tables that must be
// sharded are such tables, the bound may not claim the index all_to_all's
// latency. Two 40 GB tables cannot both be replicated on 72 GB ranks.
TEST(PlannerTest, BoundHoldsWhenOnlyTablesWithoutLookupsAreSharded) {
  PlanProblem problem = dgxProblem(1, 2, 1024);
  for (const char *name : {"a", "b"}) {
    TableSpec table;
    table.name = name;
    table.rows = 78125000; // x 128 x 4 bytes = 40 GB
    table.dim = 128;
    table.poolingFactor = 0;
    problem.tables.push_back(table);
  }
  llvm::Expected<Plan> braid = planBraid(problem);
  ASSERT_TRUE(static_cast<bool>(braid)) << llvm::toString(braid.takeError());
  PlanCost cost = evaluatePlan(problem, *braid);
  EXPECT_TRUE(cost.fitsMemory);
  EXPECT_EQ(cost.indexExchangeUs, 0);
  EXPECT_LE(lowerBoundUs(problem), cost.iterationUs * (1 + 1e-12));
}

// On a 300-table set over 4 and 16 nodes (more tables than the iterated
// local search takes on), splitting the tables that fill the fullest ranks
// to make room for replicas is what brings Braid under half the best
// greedy baseline's time on 4 nodes: 0.40x (0.25x before the collective
// model was fitted to measured nccl-tests sweeps, which made small
// all_to_alls over many nodes dearer for every plan). On 16 nodes it was
// 0.43x until the model sent a peer's message on LL only up to NCCL's 16
// KiB (2026-11-29): Braid's plan spreads the tables so that its messages to
// each of 120 remote peers were small enough for LL, and on Simple every
// exchange pays about 480 us of per-peer latency that no plan avoids (the
// index and pooled-row exchanges, 633 and 622 us of Braid's 1386; the best
// greedy baseline's take 2337). So 16 nodes asked for 0.65x (0.59x).
// Since an all_to_all's remote sends are priced one at a time per NIC (one
// NIC per rank here; fitted on the calibration half, 2026-11-29), that
// latency is four times what it was, about 1.9 ms an exchange on 16 nodes
// for every plan, and the ratios are 0.48x on 4 nodes and 0.82x on 16; 16
// nodes asks for 0.85x. Without any splitting it was 0.53x on 4 nodes
// (braid-bench-planner's set: 0.62x); without splitting several tables at
// once, 0.70x on 16 nodes, where many ranks are full (both before the
// change).
TEST(PlannerTest, BraidBeatsTheBestGreedyWellOnManyTables) {
  for (int64_t nodes : {4, 16}) {
    PlanProblem problem = randomProblem(300, nodes, 1);
    std::optional<Plan> greedy = planBestGreedy(problem);
    ASSERT_TRUE(greedy.has_value());
    double bestGreedy = evaluatePlan(problem, *greedy).iterationUs;
    llvm::Expected<Plan> braid = planBraid(problem);
    ASSERT_TRUE(static_cast<bool>(braid)) << llvm::toString(braid.takeError());
    PlanCost cost = evaluatePlan(problem, *braid);
    EXPECT_TRUE(cost.fitsMemory);
    EXPECT_LE(cost.iterationUs, (nodes == 4 ? 0.5 : 0.85) * bestGreedy)
        << nodes << " nodes: " << cost.iterationUs / bestGreedy << "x";
  }
}

// Dense layers: at DLRM widths and batches, splitting the batch beats
// splitting the weights, whose collectives move the whole batch's
// activations; a layer whose weights dwarf a tiny batch is the other way
// round; on one rank the three forms are the same.
TEST(PlannerTest, DenseLayersPayTensorParallelismOnlyForHugeWeights) {
  PlanProblem problem = dgxProblem(2, 8, 65536);
  for (auto [out, in] : {std::pair<int64_t, int64_t>{512, 13}, {1024, 3456},
                         {1024, 1024}, {1, 256}}) {
    DenseLayerCost cost = estimateDenseLayer(problem, out, in, "f32");
    EXPECT_LT(cost.dataParallelUs, cost.columnUs) << out << " x " << in;
    EXPECT_LT(cost.dataParallelUs, cost.rowUs) << out << " x " << in;
  }
  problem.nodes = 1;
  problem.batch = 8;
  DenseLayerCost huge = estimateDenseLayer(problem, 65536, 65536, "f32");
  EXPECT_LT(huge.columnUs, huge.dataParallelUs);
  EXPECT_LT(huge.rowUs, huge.dataParallelUs);
  problem.ranksPerNode = 1;
  DenseLayerCost alone = estimateDenseLayer(problem, 1024, 1024, "f32");
  EXPECT_EQ(alone.columnUs, alone.dataParallelUs);
  EXPECT_EQ(alone.rowUs, alone.dataParallelUs);
}

// The training step: every plan (greedy, Braid's, forced) stays above the
// bound, Braid's is no worse than the greedy baselines, and it is at least
// as fast for the training step as the plan chosen for the forward pass,
// for every embedding optimizer.
TEST(PlannerTest, TrainingPlansAreFeasibleAboveTheBoundAndBeatForwardPlans) {
  for (const char *optimizer : {"sgd", "adagrad", "rowwise_adagrad"})
    for (int64_t nodes : {1, 2}) {
      PlanProblem problem = randomProblem(80, nodes, 11);
      problem.training = true;
      problem.embeddingOptimizer = optimizer;
      double bound = lowerBoundUs(problem);
      llvm::Expected<Plan> braid = planBraid(problem);
      ASSERT_TRUE(static_cast<bool>(braid)) << llvm::toString(braid.takeError());
      PlanCost braidCost = evaluatePlan(problem, *braid);
      EXPECT_TRUE(braidCost.fitsMemory);
      EXPECT_GE(braidCost.iterationUs, bound * (1 - 1e-12)) << optimizer;
      if (std::optional<Plan> greedy = planBestGreedy(problem))
        EXPECT_LE(braidCost.iterationUs,
                  evaluatePlan(problem, *greedy).iterationUs * (1 + 1e-9))
            << optimizer << ", " << nodes << " nodes";
      for (ShardingType type : {ShardingType::table_wise, ShardingType::row_wise,
                                ShardingType::column_wise,
                                ShardingType::data_parallel})
        EXPECT_GE(evaluatePlan(problem, *planForced(problem, type)).iterationUs,
                  bound * (1 - 1e-12));
      PlanProblem forwardProblem = problem;
      forwardProblem.training = false;
      llvm::Expected<Plan> forward = planBraid(forwardProblem);
      ASSERT_TRUE(static_cast<bool>(forward));
      EXPECT_LE(braidCost.iterationUs,
                evaluatePlan(problem, *forward).iterationUs * (1 + 1e-9))
          << optimizer << ", " << nodes << " nodes";
    }
}

// Training costs more than the forward pass, term by term: the backward's
// updates, the gradients' exchanges, a replicated table's gradient
// all_reduce and the optimizer state's memory.
TEST(PlannerTest, TrainingAddsBackwardExchangesAndState) {
  PlanProblem problem = randomProblem(20, 2, 5);
  Plan replicated = *planForced(problem, ShardingType::data_parallel);
  Plan rows = *planForced(problem, ShardingType::row_wise);
  Plan tables = *planForced(problem, ShardingType::table_wise);
  PlanProblem training = problem;
  training.training = true;
  training.embeddingOptimizer = "adagrad";
  for (const Plan &plan : {replicated, rows, tables}) {
    PlanCost forward = evaluatePlan(problem, plan);
    PlanCost step = evaluatePlan(training, plan);
    EXPECT_GT(step.iterationUs, forward.iterationUs);
    for (size_t r = 0; r < forward.memoryBytes.size(); ++r) {
      EXPECT_GT(step.memoryBytes[r], forward.memoryBytes[r]);
      EXPECT_GT(step.lookupUs[r], forward.lookupUs[r]);
    }
  }
  EXPECT_GT(evaluatePlan(training, replicated).dataParallelAllReduceUs, 0);
  EXPECT_EQ(evaluatePlan(training, rows).dataParallelAllReduceUs, 0);
  EXPECT_GT(evaluatePlan(training, rows).allGatherUs, 0);
  EXPECT_GT(evaluatePlan(training, tables).gradientExchangeUs, 0);
  EXPECT_EQ(evaluatePlan(problem, tables).gradientExchangeUs, 0);
}

// Row-wise Adagrad keeps one statistic per row over all its columns, so a
// training step cannot update a column shard: with it, Braid's training
// plans keep rows whole. (Before this was enforced, the planner split the
// columns of 16 of these 26 tables, and braid-compile --train refused the
// plan it had chosen.)
TEST(PlannerTest, RowwiseAdagradTrainingKeepsRowsWhole) {
  PlanProblem problem = randomProblem(26, 2, 1);
  problem.training = true;
  problem.embeddingOptimizer = "rowwise_adagrad";
  llvm::Expected<Plan> plan = planBraid(problem);
  ASSERT_TRUE(static_cast<bool>(plan)) << llvm::toString(plan.takeError());
  for (const TablePlan &table : plan->tables)
    EXPECT_NE(table.type, ShardingType::column_wise);
  // Adagrad's state is per element: columns may be split.
  problem.embeddingOptimizer = "adagrad";
  llvm::Expected<Plan> split = planBraid(problem);
  ASSERT_TRUE(static_cast<bool>(split)) << llvm::toString(split.takeError());
  EXPECT_TRUE(llvm::any_of(split->tables, [](const TablePlan &table) {
    return table.type == ShardingType::column_wise;
  }));
}

// A max-pooled table's rows are never split for a training step (a maximum
// tied across row shards trains differently from the global step); the same
// tables pooled otherwise get row splits, so the rule is what removes them.
TEST(PlannerTest, MaxPooledTablesKeepRowsWholeInTraining) {
  auto rowSplit = [](const TablePlan &table) {
    return table.type == ShardingType::row_wise ||
           table.type == ShardingType::table_row_wise;
  };
  // Three large, heavily pooled tables on 16 ranks, row-wise Adagrad (no
  // column shards): spreading their lookups means splitting rows.
  PlanProblem problem = dgxProblem(2, 8, 65536);
  for (int t = 0; t < 3; ++t) {
    TableSpec table;
    table.name = "t" + std::to_string(t);
    table.rows = 50000000;
    table.dim = 128;
    table.poolingFactor = 30;
    problem.tables.push_back(table);
  }
  problem.training = true;
  problem.embeddingOptimizer = "rowwise_adagrad";
  llvm::Expected<Plan> summed = planBraid(problem);
  ASSERT_TRUE(static_cast<bool>(summed)) << llvm::toString(summed.takeError());
  EXPECT_TRUE(llvm::any_of(summed->tables, rowSplit));
  for (TableSpec &table : problem.tables)
    table.maxPooled = true;
  llvm::Expected<Plan> maxed = planBraid(problem);
  ASSERT_TRUE(static_cast<bool>(maxed)) << llvm::toString(maxed.takeError());
  EXPECT_FALSE(llvm::any_of(maxed->tables, rowSplit));
  // A forward pass may split them: the search offers it row splits.
  problem.training = false;
  EXPECT_TRUE(llvm::any_of(tableOptions(problem, problem.tables.front()),
                           rowSplit));
}

// A Megatron-style pair priced for a training step: tensor-parallel with its
// parameters stored as blocks wins for huge layers on a small batch (no
// all_reduce of their gradients), data-parallel wins for small layers on a
// large batch (DLRM's MLPs); a training step costs more than its forward
// pass either way.
TEST(PlannerTest, DenseBlocksArePricedForTraining) {
  PlanProblem huge = dgxProblem(1, 8, 16);
  DenseBlockCost pair = estimateDenseBlock(huge, 8192, 32768, 8192, "f32");
  EXPECT_LT(pair.trainingTensorParallelUs, pair.trainingDataParallelUs);
  EXPECT_GT(pair.trainingDataParallelUs, 3 * pair.dataParallelUs);
  EXPECT_GT(pair.trainingTensorParallelUs, pair.tensorParallelUs);
  PlanProblem dlrm = dgxProblem(1, 8, 65536);
  DenseBlockCost mlp = estimateDenseBlock(dlrm, 512, 256, 128, "f32");
  EXPECT_LT(mlp.trainingDataParallelUs, mlp.trainingTensorParallelUs);
  // One rank: nothing to exchange, the same either way.
  PlanProblem one = dgxProblem(1, 1, 16);
  DenseBlockCost alone = estimateDenseBlock(one, 64, 128, 64, "f32");
  EXPECT_EQ(alone.trainingDataParallelUs, alone.trainingTensorParallelUs);
}
