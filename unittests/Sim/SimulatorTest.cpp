//===- SimulatorTest.cpp - Tests of the schedule simulator ----------------===//
//
// This file tests dependencies, stream serialization and overlap,
// collective synchronization, contention, the breakdown, errors, and the
// Chrome trace format.
//
//===----------------------------------------------------------------------===//

#include "braid/Plan/Planner.h"
#include "braid/Sim/ScheduleBuilder.h"
#include "braid/Sim/Simulator.h"

#include "llvm/Support/JSON.h"

#include "gtest/gtest.h"

#include <limits>

using namespace mlir::braid;
using namespace mlir::braid::sim;

static DilationFn noContention() {
  return [](double, double) { return 1.0; };
}

static SimOp compute(std::string name, int64_t rank, double us,
                     std::vector<int64_t> deps = {}, int64_t stream = 0) {
  SimOp op;
  op.name = std::move(name);
  op.rank = rank;
  op.durationUs = us;
  op.deps = std::move(deps);
  op.stream = stream;
  return op;
}

static SimOp comm(std::string name, int64_t rank, double us, int64_t id,
                  std::vector<int64_t> deps = {}, int64_t stream = 1) {
  SimOp op = compute(std::move(name), rank, us, std::move(deps), stream);
  op.kind = OpKind::comm;
  op.collectiveId = id;
  return op;
}

TEST(SimulatorTest, DependenciesAndStreamOrder) {
  // a (10) -> b (5) on one stream; c (7) on another stream, independent.
  std::vector<SimOp> ops = {compute("a", 0, 10), compute("b", 0, 5, {0}),
                            compute("c", 0, 7, {}, 1)};
  SimResult r = *simulate(ops, 1, noContention());
  EXPECT_DOUBLE_EQ(r.startUs[1], 10);
  EXPECT_DOUBLE_EQ(r.endUs[1], 15);
  EXPECT_DOUBLE_EQ(r.startUs[2], 0); // overlaps a on its own stream
  EXPECT_DOUBLE_EQ(r.makespanUs, 15);
  // The same ops on one stream serialize even without dependencies.
  ops[2].stream = 0;
  EXPECT_DOUBLE_EQ(simulate(ops, 1, noContention())->makespanUs, 22);
}

TEST(SimulatorTest, CollectivesWaitForEveryMember) {
  // Rank 1 computes 20 us before the collective; rank 0 only 5 us.
  std::vector<SimOp> ops = {compute("pre", 0, 5), compute("pre", 1, 20),
                            comm("ar", 0, 10, 7, {0}), comm("ar", 1, 10, 7, {1})};
  SimResult r = *simulate(ops, 2, noContention());
  EXPECT_DOUBLE_EQ(r.startUs[2], 20);
  EXPECT_DOUBLE_EQ(r.startUs[3], 20);
  EXPECT_DOUBLE_EQ(r.makespanUs, 30);
  // Rank 0 idles 15 us waiting for rank 1.
  EXPECT_DOUBLE_EQ(r.ranks[0].idleUs, 15);
  EXPECT_DOUBLE_EQ(r.ranks[0].exposedCommUs, 10);
}

TEST(SimulatorTest, OverlapHidesCommunicationAndContentionSlowsCompute) {
  // A collective on stream 1 beside 30 us of compute on stream 0.
  std::vector<SimOp> ops = {comm("ar", 0, 20, 1), compute("mlp", 0, 30)};
  SimResult free = *simulate(ops, 1, noContention());
  EXPECT_DOUBLE_EQ(free.makespanUs, 30);
  EXPECT_DOUBLE_EQ(free.ranks[0].exposedCommUs, 0);
  // With a dilation of 1.5 while comm runs: 20 us at 2/3 speed covers 13.33
  // us of work; the remaining 16.67 us run at full speed afterwards.
  SimResult slowed = *simulate(ops, 1, [](double, double) { return 1.5; });
  EXPECT_NEAR(slowed.makespanUs, 20 + (30 - 20 / 1.5), 1e-9);
  EXPECT_GT(slowed.makespanUs, free.makespanUs);
  EXPECT_NEAR(slowed.ranks[0].computeUs, slowed.makespanUs, 1e-9);
}

TEST(SimulatorTest, CommBesideComputeAdvancesAtTheMachinesRate) {
  // 20 us of collective beside 10 us of compute: at 0.5 of its rate while
  // the compute runs it covers 5 us of work by then, and the other 15 us
  // after it.
  std::vector<SimOp> ops = {comm("ar", 0, 20, 1), compute("mlp", 0, 10)};
  SimResult full = *simulate(ops, 1, noContention());
  EXPECT_DOUBLE_EQ(full.makespanUs, 20);
  SimResult halved = *simulate(ops, 1, noContention(), 0.5);
  EXPECT_NEAR(halved.makespanUs, 10 + 15, 1e-9);
  EXPECT_NEAR(halved.ranks[0].exposedCommUs, 15, 1e-9);
  // Only compute on the collective's own rank slows it.
  std::vector<SimOp> apart = {comm("ar", 0, 20, 1), comm("ar", 1, 20, 1),
                              compute("mlp", 1, 10)};
  SimResult oneSide = *simulate(apart, 2, noContention(), 0.5);
  EXPECT_NEAR(oneSide.makespanUs, 25, 1e-9); // the slowest member sets it
  // A rate outside (0, 1] is an error, not a silent answer.
  llvm::Expected<SimResult> bad = simulate(ops, 1, noContention(), 0);
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("must lie in (0, 1]"),
            std::string::npos);
}

TEST(SimulatorTest, BreakdownAddsUp) {
  std::vector<SimOp> ops = {compute("a", 0, 10), comm("x", 0, 10, 3, {0}, 0),
                            compute("b", 0, 5, {1})};
  SimResult r = *simulate(ops, 1, noContention());
  const RankBreakdown &b = r.ranks[0];
  EXPECT_DOUBLE_EQ(b.computeUs, 15);
  EXPECT_DOUBLE_EQ(b.commUs, 10);
  EXPECT_DOUBLE_EQ(b.exposedCommUs, 10);
  EXPECT_DOUBLE_EQ(b.computeUs + b.exposedCommUs + b.idleUs, r.makespanUs);
}

TEST(SimulatorTest, BadSchedulesAreErrors) {
  std::vector<SimOp> cycle = {compute("a", 0, 1, {1}), compute("b", 0, 1, {0}, 1)};
  llvm::Expected<SimResult> r = simulate(cycle, 1, noContention());
  ASSERT_FALSE(static_cast<bool>(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("cannot progress"), std::string::npos);
  // A collective whose other member is stuck behind it on the same stream.
  std::vector<SimOp> crossed = {comm("x", 0, 1, 1, {}, 0), comm("y", 0, 1, 2, {}, 0),
                                comm("y", 1, 1, 2, {}, 0), comm("x", 1, 1, 1, {}, 0)};
  EXPECT_FALSE(static_cast<bool>(simulate(crossed, 2, noContention())));
  llvm::consumeError(simulate(crossed, 2, noContention()).takeError());
  // An infinite duration (sizes too large to price) is an error, not a
  // simulation that never ends.
  std::vector<SimOp> endless = {
      compute("huge", 0, std::numeric_limits<double>::infinity())};
  llvm::Expected<SimResult> never = simulate(endless, 1, noContention());
  ASSERT_FALSE(static_cast<bool>(never));
  EXPECT_EQ(llvm::toString(never.takeError()),
            "op 0 'huge' has no finite duration (its sizes are too large to "
            "price)");
  std::vector<SimOp> badRank = {compute("a", 3, 1)};
  llvm::Expected<SimResult> bad = simulate(badRank, 2, noContention());
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()), "op 0 'a' runs on rank 3 of 2");
}

TEST(SimulatorTest, ChromeTraceHasOneEventPerOp) {
  std::vector<SimOp> ops = {compute("mlp", 0, 10), comm("ar", 1, 5, 1)};
  ops.push_back(comm("ar", 0, 5, 1));
  SimResult r = *simulate(ops, 2, noContention());
  std::string text;
  llvm::raw_string_ostream os(text);
  writeChromeTrace(os, ops, r);
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  ASSERT_TRUE(static_cast<bool>(json));
  const llvm::json::Array *events = json->getAsObject()->getArray("traceEvents");
  ASSERT_EQ(events->size(), 3u);
  const llvm::json::Object *first = (*events)[0].getAsObject();
  EXPECT_EQ(*first->getString("ph"), "X");
  EXPECT_EQ(*first->getString("cat"), "compute");
  EXPECT_EQ(*first->getString("name"), "mlp");
  EXPECT_EQ(*first->getInteger("pid"), 0);
  EXPECT_EQ(*first->getInteger("tid"), 0);
  EXPECT_EQ(*(*events)[1].getAsObject()->getString("cat"), "comm");
  EXPECT_EQ(*(*events)[1].getAsObject()->getNumber("dur"), 5);
}

// The schedule braid-compile writes to trace.json simulates to exactly the
// iteration time the planner predicts, for every sharding type.
TEST(PlanScheduleTest, MakespanIsThePlansIterationTime) {
  plan::PlanProblem problem;
  problem.hw = *cluster::loadHardware("dgx-h100");
  problem.nodes = 2;
  problem.ranksPerNode = 8;
  problem.batch = 4096;
  for (int t = 0; t < 12; ++t)
    problem.tables.push_back({"t" + std::to_string(t), 100000 * (t + 1),
                              t % 2 ? 64 : 128, 4, 2.0 + t, 0.5});
  for (plan::ShardingType type :
       {plan::ShardingType::table_wise, plan::ShardingType::row_wise,
        plan::ShardingType::column_wise, plan::ShardingType::table_row_wise,
        plan::ShardingType::data_parallel}) {
    llvm::Expected<plan::Plan> forced = plan::planForced(problem, type);
    ASSERT_TRUE(bool(forced)) << llvm::toString(forced.takeError());
    plan::PlanCost cost = plan::evaluatePlan(problem, *forced);
    std::vector<SimOp> ops = plan::buildPlanSchedule(cost);
    llvm::Expected<SimResult> result = simulate(
        ops, problem.ranks(), [](double, double) { return 1.0; });
    ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
    EXPECT_NEAR(result->makespanUs, cost.iterationUs, 1e-6 * cost.iterationUs)
        << plan::stringifyShardingType(type).str();
  }
}
