//===- ProgramShapesTest.cpp - Tests of per-rank size binding -------------===//
//
// This file tests how the simulator binds a partitioned program's dynamic
// sizes on each rank: a row range receives its share of the indices, the
// ranks' received indices add up to what was sent, and a rank's shard
// lookup is priced on the rows it holds.
//
//===----------------------------------------------------------------------===//

#include "braid/Cost/CostModel.h"
#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/InitAll.h"
#include "braid/Sharding/Passes.h"
#include "braid/Sim/ProgramShapes.h"
#include "braid/Sim/ScheduleBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::sim;

namespace {
/// 100 rows split 25 / 75 over two ranks, pooling factor 4, a batch of 8.
constexpr StringLiteral kRowWise = R"mlir(
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<100x16xf32> pooling_factor = 4.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 25, 100]>
  func.func @forward(%i: tensor<?xi64> {braid.input = "t.indices"}, %o: tensor<9xi64> {braid.input = "t.offsets"}) -> tensor<8x16xf32> {
    %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi64>, tensor<9xi64>) -> tensor<8x16xf32>
    return %e : tensor<8x16xf32>
  }
}
)mlir";

class ProgramShapesTest : public ::testing::Test {
protected:
  ProgramShapesTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }
  /// The per-rank program of kRowWise.
  func::FuncOp partition() {
    module = parseSourceString<ModuleOp>(kRowWise, &context);
    if (!module)
      return nullptr;
    PassManager pm(&context);
    pm.addPass(createBraidPartitionPass());
    if (failed(pm.run(*module)))
      return nullptr;
    return module->lookupSymbol<func::FuncOp>("forward");
  }
  template <typename OpTy> OpTy first(func::FuncOp func) {
    OpTy found;
    func.walk([&](OpTy op) {
      if (!found)
        found = op;
    });
    return found;
  }
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};
} // namespace

TEST_F(ProgramShapesTest, RowRangesReceiveTheirShareOfTheIndices) {
  func::FuncOp func = partition();
  ASSERT_TRUE(func);
  auto bucketize = first<BucketizeOp>(func);
  auto exchange = first<AllToAllVOp>(func);
  ASSERT_TRUE(bucketize && exchange);
  RoutingTable routing(2);
  SmallVector<int64_t> split = {4, 4};
  for (int64_t rank : {0, 1}) {
    FailureOr<ProgramShapes> shapes =
        ProgramShapes::bind(func, rank, 2, split, routing);
    ASSERT_TRUE(succeeded(shapes));
    // 4 samples x 4 indices: a quarter to rank 0, three quarters to rank 1.
    EXPECT_DOUBLE_EQ(shapes->routed(bucketize, rank, 0), 4.0);
    EXPECT_DOUBLE_EQ(shapes->routed(bucketize, rank, 1), 12.0);
    EXPECT_DOUBLE_EQ(shapes->rows(bucketize.getValues()), 16.0);
    EXPECT_DOUBLE_EQ(shapes->rows(func.getArgument(0)), 16.0);
    EXPECT_DOUBLE_EQ(shapes->rows(func.getArgument(1)), 5.0);
    // What a rank receives is what every rank routes to it.
    EXPECT_DOUBLE_EQ(shapes->rows(exchange.getResult()),
                     rank == 0 ? 8.0 : 24.0);
  }
}

TEST_F(ProgramShapesTest, ShardLookupsArePricedOnTheRowsARankHolds) {
  func::FuncOp func = partition();
  ASSERT_TRUE(func);
  cluster::HardwareDesc hw = *cluster::loadHardware("dgx-h100");
  hw.device.launchOverheadUs = 0; // compare the work alone
  FailureOr<std::vector<SimOp>> schedule = buildSchedule(func, hw, 2, 2);
  ASSERT_TRUE(succeeded(schedule));
  double lookupUs[2] = {0, 0};
  for (const SimOp &op : *schedule)
    if (op.category == "lookup")
      lookupUs[op.rank] += op.durationUs;
  // Rank 1 holds three times the rows and receives three times the indices.
  EXPECT_GT(lookupUs[1], lookupUs[0]);
  // A collective over every rank takes its slowest member's time on all.
  std::map<int64_t, std::set<double>> byCollective;
  for (const SimOp &op : *schedule)
    if (op.collectiveId >= 0)
      byCollective[op.collectiveId].insert(op.durationUs);
  EXPECT_FALSE(byCollective.empty());
  for (auto &[id, durations] : byCollective)
    EXPECT_EQ(durations.size(), 1u) << "collective " << id;
}

TEST_F(ProgramShapesTest, RanksInNoGroupTakeNoPartInACollective) {
  // A table-row-wise table on node 1 of 2: its partials are reduced inside
  // node 1's group alone; node 0's ranks are in no group and take no part.
  module = parseSourceString<ModuleOp>(R"mlir(
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 2, ranks_per_node = 2>} {
  braid.table @t : tensor<4000x64xf32> pooling_factor = 8.0 placement = #braid.table_row_wise<node = 1, ranks = [2, 3], row_offsets = [0, 2000, 4000]>
  func.func @forward(%i: tensor<?xi64> {braid.input = "t.indices"}, %o: tensor<4097xi64> {braid.input = "t.offsets"}) -> tensor<4096x64xf32> {
    %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi64>, tensor<4097xi64>) -> tensor<4096x64xf32>
    return %e : tensor<4096x64xf32>
  }
})mlir",
                                       &context);
  ASSERT_TRUE(module);
  PassManager pm(&context);
  pm.addPass(createBraidPartitionPass());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  auto func = module->lookupSymbol<func::FuncOp>("forward");
  cluster::HardwareDesc hw = *cluster::loadHardware("dgx-h100");
  FailureOr<std::vector<SimOp>> schedule = buildSchedule(func, hw, 4, 2);
  ASSERT_TRUE(succeeded(schedule));
  std::map<int64_t, std::pair<int64_t, double>> reduceScatter; // rank -> id, us
  for (const SimOp &op : *schedule)
    if (op.name == "reduce_scatter")
      reduceScatter[op.rank] = {op.collectiveId, op.durationUs};
  ASSERT_EQ(reduceScatter.size(), 4u);
  // One collective for node 1's group; node 0's ranks each run alone, in
  // no time, waiting for nobody.
  EXPECT_EQ(reduceScatter[2].first, reduceScatter[3].first);
  EXPECT_GT(reduceScatter[2].second, 0);
  EXPECT_NE(reduceScatter[0].first, reduceScatter[1].first);
  EXPECT_NE(reduceScatter[0].first, reduceScatter[2].first);
  EXPECT_EQ(reduceScatter[0].second, 0);
  EXPECT_EQ(reduceScatter[1].second, 0);
}

TEST_F(ProgramShapesTest, AGlobalProgramHasOnlyIndicesDynamic) {
  module = parseSourceString<ModuleOp>(R"mlir(
    func.func @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      return %x : tensor<?x4xf32>
    })mlir",
                                       &context);
  ASSERT_TRUE(module);
  auto func = module->lookupSymbol<func::FuncOp>("forward");
  RoutingTable routing(1);
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) {
    return success();
  });
  EXPECT_TRUE(failed(ProgramShapes::bind(func, 0, 1, {}, routing)));
}

TEST_F(ProgramShapesTest, FusedExchangeShapesFollowReshapesConcatsAndTheRank) {
  // What braid-bucket-collectives' fused exchanges are made of: dim-0
  // concatenations, reshapes of dynamic rows, expand_shape's output size
  // and a size selected by the rank.
  module = parseSourceString<ModuleOp>(R"mlir(
    func.func @forward(%x: tensor<?x4xf32> {braid.input = "dense"}) -> (tensor<?x4xf32>, tensor<?xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %cat = tensor.concat dim(0) %x, %x : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
      %flat = tensor.collapse_shape %x [[0, 1]] : tensor<?x4xf32> into tensor<?xf32>
      %rows = tensor.dim %x, %c0 : tensor<?x4xf32>
      %back = tensor.expand_shape %flat [[0, 1]] output_shape [%rows, 4] : tensor<?xf32> into tensor<?x4xf32>
      %half = arith.divui %rows, %c2 : index
      %halves = tensor.extract_slice %x[0, 0] [%half, 4] [1, 1] : tensor<?x4xf32> to tensor<?x4xf32>
      %rank = braid.rank : index
      %is1 = arith.cmpi eq, %rank, %c1 : index
      %mine = arith.select %is1, %c2, %c0 : index
      %chosen = tensor.extract_slice %x[0, 0] [%mine, 4] [1, 1] : tensor<?x4xf32> to tensor<?x4xf32>
      return %cat, %flat, %back, %halves, %chosen : tensor<?x4xf32>, tensor<?xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
    })mlir",
                                       &context);
  ASSERT_TRUE(module);
  auto func = module->lookupSymbol<func::FuncOp>("forward");
  Operation *ret = func.getBody().front().getTerminator();
  RoutingTable routing(2);
  SmallVector<int64_t> split = {6, 10};
  for (int64_t rank : {0, 1}) {
    FailureOr<ProgramShapes> shapes =
        ProgramShapes::bind(func, rank, 2, split, routing);
    ASSERT_TRUE(succeeded(shapes));
    double rows = split[rank];
    EXPECT_DOUBLE_EQ(shapes->rows(ret->getOperand(0)), 2 * rows);
    EXPECT_DOUBLE_EQ(shapes->rows(ret->getOperand(1)), 4 * rows);
    EXPECT_DOUBLE_EQ(shapes->rows(ret->getOperand(2)), rows);
    EXPECT_DOUBLE_EQ(shapes->rows(ret->getOperand(3)), rows / 2);
    EXPECT_DOUBLE_EQ(shapes->rows(ret->getOperand(4)), rank == 1 ? 2.0 : 0.0);
  }
}

TEST_F(ProgramShapesTest, ARangeOfBagsRoutesItsShareOfTheBatch) {
  // Rank 0 has 3 bags and rank 1 has 4 (4 bags per rank): ranges of 2 bags
  // give rank 0 one full range and one of 1 bag.
  module = parseSourceString<ModuleOp>(R"mlir(
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>, braid.batch_split = array<i64: 3, 4>} {
  braid.table @t : tensor<100x16xf32> pooling_factor = 4.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 25, 100]>
  func.func @forward(%i: tensor<?xi64>, %o: tensor<?xi64>) -> (tensor<?xi64>, tensor<?xi64>) {
    %i1, %o1 = braid.slice_bags %i, %o bags [2, 2] : (tensor<?xi64>, tensor<?xi64>) -> (tensor<?xi64>, tensor<?xi64>)
    %len, %vals, %counts = braid.bucketize @t(%i1, %o1) to [0, 1] bags_per_rank = 2 : (tensor<?xi64>, tensor<?xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>)
    %recv = braid.all_to_all_v %vals, %counts : (tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
    return %recv, %o1 : tensor<?xi64>, tensor<?xi64>
  }
})mlir",
                                       &context);
  ASSERT_TRUE(module);
  auto func = module->lookupSymbol<func::FuncOp>("forward");
  auto slice = first<SliceBagsOp>(func);
  auto bucketize = first<BucketizeOp>(func);
  auto exchange = first<AllToAllVOp>(func);
  RoutingTable routing(2);
  SmallVector<int64_t> split = {3, 4};
  FailureOr<ProgramShapes> rank0 =
      ProgramShapes::bind(func, 0, 2, split, routing);
  FailureOr<ProgramShapes> rank1 =
      ProgramShapes::bind(func, 1, 2, split, routing);
  ASSERT_TRUE(succeeded(rank0) && succeeded(rank1));
  // The batch's offsets and indices follow from the bags the range feeds.
  EXPECT_DOUBLE_EQ(rank0->rows(func.getArgument(1)), 4.0);
  EXPECT_DOUBLE_EQ(rank0->rows(func.getArgument(0)), 12.0);
  // Bags [2, 4): 1 of rank 0's 3, 2 of rank 1's 4, with their indices.
  EXPECT_DOUBLE_EQ(rank0->rows(slice.getResultOffsets()), 2.0);
  EXPECT_DOUBLE_EQ(rank0->rows(slice.getResultIndices()), 4.0);
  EXPECT_DOUBLE_EQ(rank1->rows(slice.getResultOffsets()), 3.0);
  EXPECT_DOUBLE_EQ(rank1->rows(slice.getResultIndices()), 8.0);
  // Rank 1 routes half its batch (8 indices), a quarter to rank 0.
  EXPECT_DOUBLE_EQ(rank1->routed(bucketize, 1, 0), 2.0);
  EXPECT_DOUBLE_EQ(rank1->routed(bucketize, 1, 1), 6.0);
  EXPECT_DOUBLE_EQ(rank1->rows(bucketize.getValues()), 8.0);
  // Rank 0 routes a third of its batch.
  EXPECT_DOUBLE_EQ(rank0->rows(bucketize.getValues()), 4.0);
  // What a rank receives assumes every rank takes the same share of its
  // batch as it does: rank 1 takes half, and 3/4 of each index is its own.
  EXPECT_DOUBLE_EQ(rank1->rows(exchange.getResult()), 0.5 * (3 + 4) * 3.0);
}

namespace {
/// Two row-wise tables' index exchanges on 2 ranks, apart or fused (@fused
/// and @apart differ only in that).
constexpr StringLiteral kIndexExchanges = R"mlir(
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @a : tensor<100x16xf32> pooling_factor = 4.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 25, 100]>
  braid.table @b : tensor<100x16xf32> pooling_factor = 2.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 50, 100]>
  func.func @apart(%ai: tensor<?xi64> {braid.input = "a.indices"}, %ao: tensor<9xi64> {braid.input = "a.offsets"},
                   %bi: tensor<?xi64> {braid.input = "b.indices"}, %bo: tensor<9xi64> {braid.input = "b.offsets"}) -> (tensor<?xi64>, tensor<?xi64>) {
    %la, %va, %ca = braid.bucketize @a(%ai, %ao) to [0, 1] bags_per_rank = 8 : (tensor<?xi64>, tensor<9xi64>) -> (tensor<16xi64>, tensor<?xi64>, tensor<2xi64>)
    %lb, %vb, %cb = braid.bucketize @b(%bi, %bo) to [0, 1] bags_per_rank = 8 : (tensor<?xi64>, tensor<9xi64>) -> (tensor<16xi64>, tensor<?xi64>, tensor<2xi64>)
    %ta = braid.all_to_all_v_start %va, %ca : (tensor<?xi64>, tensor<2xi64>) -> !braid.token<tensor<?xi64>>
    %tb = braid.all_to_all_v_start %vb, %cb : (tensor<?xi64>, tensor<2xi64>) -> !braid.token<tensor<?xi64>>
    %ra = braid.wait %ta : !braid.token<tensor<?xi64>>
    %rb = braid.wait %tb : !braid.token<tensor<?xi64>>
    return %ra, %rb : tensor<?xi64>, tensor<?xi64>
  }
  func.func @fused(%ai: tensor<?xi64> {braid.input = "a.indices"}, %ao: tensor<9xi64> {braid.input = "a.offsets"},
                   %bi: tensor<?xi64> {braid.input = "b.indices"}, %bo: tensor<9xi64> {braid.input = "b.offsets"}) -> (tensor<?xi64>, tensor<?xi64>) {
    %la, %va, %ca = braid.bucketize @a(%ai, %ao) to [0, 1] bags_per_rank = 8 : (tensor<?xi64>, tensor<9xi64>) -> (tensor<16xi64>, tensor<?xi64>, tensor<2xi64>)
    %lb, %vb, %cb = braid.bucketize @b(%bi, %bo) to [0, 1] bags_per_rank = 8 : (tensor<?xi64>, tensor<9xi64>) -> (tensor<16xi64>, tensor<?xi64>, tensor<2xi64>)
    %ta, %tb = braid.fused_all_to_all_v_start (%va, %vb) counts(%ca, %cb) : (tensor<?xi64>, tensor<?xi64>), (tensor<2xi64>, tensor<2xi64>) -> !braid.token<tensor<?xi64>>, !braid.token<tensor<?xi64>>
    %ra = braid.wait %ta : !braid.token<tensor<?xi64>>
    %rb = braid.wait %tb : !braid.token<tensor<?xi64>>
    return %ra, %rb : tensor<?xi64>, tensor<?xi64>
  }
}
)mlir";
} // namespace

TEST_F(ProgramShapesTest, FusedIndexExchangeMembersReceiveWhatTheyWouldApart) {
  module = parseSourceString<ModuleOp>(kIndexExchanges, &context);
  ASSERT_TRUE(module);
  auto apart = module->lookupSymbol<func::FuncOp>("apart");
  auto fused = module->lookupSymbol<func::FuncOp>("fused");
  ASSERT_TRUE(apart && fused);
  RoutingTable routing(2);
  SmallVector<int64_t> split = {8, 8};
  auto received = [&](func::FuncOp func, int64_t rank) {
    FailureOr<ProgramShapes> shapes =
        ProgramShapes::bind(func, rank, 2, split, routing);
    EXPECT_TRUE(succeeded(shapes));
    SmallVector<double> rows;
    func.walk([&](WaitOp wait) { rows.push_back(shapes->rows(wait)); });
    return rows;
  };
  for (int64_t rank : {0, 1}) {
    SmallVector<double> alone = received(apart, rank);
    ASSERT_EQ(alone.size(), 2u);
    EXPECT_GT(alone[0], 0.0);
    EXPECT_EQ(received(fused, rank), alone);
  }
}

TEST_F(ProgramShapesTest, FusedIndexExchangeCostsLessThanItsMembersApart) {
  module = parseSourceString<ModuleOp>(kIndexExchanges, &context);
  ASSERT_TRUE(module);
  cluster::HardwareDesc hw = *cluster::loadHardware("dgx-h100");
  auto commUs = [&](StringRef name) {
    auto func = module->lookupSymbol<func::FuncOp>(name);
    FailureOr<std::vector<SimOp>> schedule = buildSchedule(func, hw, 2, 2);
    EXPECT_TRUE(succeeded(schedule));
    SmallVector<double> exchanges;
    for (const SimOp &op : *schedule)
      if (op.rank == 0 && op.category == "index_exchange")
        exchanges.push_back(op.durationUs);
    return exchanges;
  };
  SmallVector<double> apart = commUs("apart"), fused = commUs("fused");
  ASSERT_EQ(apart.size(), 2u);
  ASSERT_EQ(fused.size(), 1u);
  // One exchange of the values and two of counts, against two of each: more
  // than either member alone, less than both.
  EXPECT_GT(fused[0], std::max(apart[0], apart[1]));
  EXPECT_LT(fused[0], apart[0] + apart[1]);
}

TEST_F(ProgramShapesTest, NarrowedIndexExchangeMovesFewerBytes) {
  // The fused exchange of 65,536 bags a rank with and without wire_type =
  // i32: the values' part of the exchange moves half the bytes, so it
  // takes less time, and more than the exchange's latency alone.
  std::string source = kIndexExchanges.str();
  for (auto [from, to] :
       {std::pair<StringRef, StringRef>{"9xi64", "65537xi64"},
        {"16xi64", "131072xi64"},
        {"bags_per_rank = 8", "bags_per_rank = 65536"},
        {"module attributes {",
         "module attributes {braid.batch_split = array<i64: 65536, 65536>, "}})
    for (size_t at = source.find(from.str()); at != std::string::npos;
         at = source.find(from.str(), at + to.size()))
      source.replace(at, from.size(), to.str());
  module = parseSourceString<ModuleOp>(source, &context);
  ASSERT_TRUE(module);
  cluster::HardwareDesc hw = *cluster::loadHardware("dgx-h100");
  auto fusedFunc = module->lookupSymbol<func::FuncOp>("fused");
  ASSERT_TRUE(fusedFunc);
  auto exchangeUs = [&]() {
    FailureOr<std::vector<SimOp>> schedule = buildSchedule(fusedFunc, hw, 2, 2);
    EXPECT_TRUE(succeeded(schedule));
    double us = 0;
    for (const SimOp &op : *schedule)
      if (op.rank == 0 && op.category == "index_exchange")
        us += op.durationUs;
    return us;
  };
  double wide = exchangeUs();
  FusedAllToAllVStartOp fused;
  fusedFunc.walk([&](FusedAllToAllVStartOp op) { fused = op; });
  ASSERT_TRUE(fused);
  fused.setWireTypeAttr(TypeAttr::get(IntegerType::get(&context, 32)));
  double narrow = exchangeUs();
  double latency = cost::collectiveLatencyUs(
      hw, cost::CollectiveKind::all_to_all, 2, 1);
  EXPECT_LT(narrow, wide);
  EXPECT_GT(narrow, latency);
}

TEST_F(ProgramShapesTest, FusedOptimizerStepIsOneKernelOverItsMembersBytes) {
  // Two Adagrad steps reading a bucket of 2^20 + 2^10 + 7 floats, apart and
  // fused: the fused step is one kernel that streams both members'
  // parameters, gradients and state (not the bucket's 7 other floats), so
  // it costs one launch less than the two, and no less than the larger.
  constexpr StringLiteral kSteps = R"mlir(
module {
  func.func @apart(%w: tensor<1024x1024xf32>, %b: tensor<1024xf32>, %g: tensor<1049607xf32>, %t: tensor<i64>, %sw: tensor<1024x1024xf32>, %sb: tensor<1024xf32>) -> (tensor<1024x1024xf32>, tensor<1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32>) {
    %gw0 = tensor.extract_slice %g[7] [1048576] [1] : tensor<1049607xf32> to tensor<1048576xf32>
    %gw = tensor.expand_shape %gw0 [[0, 1]] output_shape [1024, 1024] : tensor<1048576xf32> into tensor<1024x1024xf32>
    %gb = tensor.extract_slice %g[1048583] [1024] [1] : tensor<1049607xf32> to tensor<1024xf32>
    %w2, %sw2 = braid.dense_update %w, %gw step %t state(%sw) optimizer = {eps = 1.0e-10 : f64, lr = 1.0e-01 : f64, type = "adagrad"} : (tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<i64>, tensor<1024x1024xf32>) -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>)
    %b2, %sb2 = braid.dense_update %b, %gb step %t state(%sb) optimizer = {eps = 1.0e-10 : f64, lr = 1.0e-01 : f64, type = "adagrad"} : (tensor<1024xf32>, tensor<1024xf32>, tensor<i64>, tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>)
    return %w2, %b2, %sw2, %sb2 : tensor<1024x1024xf32>, tensor<1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32>
  }
  func.func @fused(%w: tensor<1024x1024xf32>, %b: tensor<1024xf32>, %g: tensor<1049607xf32>, %t: tensor<i64>, %sw: tensor<1024x1024xf32>, %sb: tensor<1024xf32>) -> (tensor<1024x1024xf32>, tensor<1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32>) {
    %r:4 = braid.fused_dense_update(%w, %b) grads %g offsets = [7, 1048583] step %t state(%sw, %sb) optimizer = {eps = 1.0e-10 : f64, lr = 1.0e-01 : f64, type = "adagrad"} : (tensor<1024x1024xf32>, tensor<1024xf32>, tensor<1049607xf32>, tensor<i64>, tensor<1024x1024xf32>, tensor<1024xf32>) -> (tensor<1024x1024xf32>, tensor<1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32>)
    return %r#0, %r#1, %r#2, %r#3 : tensor<1024x1024xf32>, tensor<1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32>
  }
}
)mlir";
  module = parseSourceString<ModuleOp>(kSteps, &context);
  ASSERT_TRUE(module);
  cluster::HardwareDesc hw = *cluster::loadHardware("dgx-h100");
  auto optimizerKernels = [&](StringRef name) {
    auto func = module->lookupSymbol<func::FuncOp>(name);
    FailureOr<std::vector<SimOp>> schedule = buildSchedule(func, hw, 1, 1);
    EXPECT_TRUE(succeeded(schedule));
    std::vector<double> us;
    for (const SimOp &op : *schedule)
      if (op.category == "optimizer")
        us.push_back(op.durationUs);
    return us;
  };
  std::vector<double> apart = optimizerKernels("apart");
  std::vector<double> fused = optimizerKernels("fused");
  ASSERT_EQ(apart.size(), 2u);
  ASSERT_EQ(fused.size(), 1u);
  // Each member streams its parameter, gradient and state in and its new
  // parameter and state out: 5 floats an element.
  double bytes = 5.0 * 4 * (1048576 + 1024);
  EXPECT_DOUBLE_EQ(fused[0], cost::estimateElementwise(hw, bytes).timeUs);
  EXPECT_LT(fused[0], apart[0] + apart[1]);
  EXPECT_GE(fused[0], std::max(apart[0], apart[1]));
}

TEST_F(ProgramShapesTest, ElementwiseChainIsOneKernelOverItsInputs) {
  // x0 * p + x on 2^20 floats: the backends fuse the product into the sum
  // (braid-fuse-elementwise-kernels), so the simulator prices one kernel
  // reading x0, p and x and writing the sum. A product also returned is
  // read twice and stays a kernel of its own.
  constexpr StringLiteral kChains = R"mlir(
module {
  func.func @chain(%x0: tensor<1024x1024xf32>, %p: tensor<1024x1024xf32>, %x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
    %m = arith.mulf %x0, %p : tensor<1024x1024xf32>
    %s = arith.addf %m, %x : tensor<1024x1024xf32>
    return %s : tensor<1024x1024xf32>
  }
  func.func @shared(%x0: tensor<1024x1024xf32>, %p: tensor<1024x1024xf32>, %x: tensor<1024x1024xf32>) -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>) {
    %m = arith.mulf %x0, %p : tensor<1024x1024xf32>
    %s = arith.addf %m, %x : tensor<1024x1024xf32>
    return %m, %s : tensor<1024x1024xf32>, tensor<1024x1024xf32>
  }
  func.func @twice(%x0: tensor<1024x1024xf32>, %p: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
    %m = arith.mulf %x0, %p : tensor<1024x1024xf32>
    %s = arith.addf %m, %m : tensor<1024x1024xf32>
    return %s : tensor<1024x1024xf32>
  }
  func.func @selected(%c: i1, %x0: tensor<1024x1024xf32>, %p: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
    %m = arith.mulf %x0, %p : tensor<1024x1024xf32>
    %s = arith.select %c, %m, %x0 : tensor<1024x1024xf32>
    return %s : tensor<1024x1024xf32>
  }
}
)mlir";
  module = parseSourceString<ModuleOp>(kChains, &context);
  ASSERT_TRUE(module);
  cluster::HardwareDesc hw = *cluster::loadHardware("dgx-h100");
  auto kernels = [&](StringRef name) {
    auto func = module->lookupSymbol<func::FuncOp>(name);
    FailureOr<std::vector<SimOp>> schedule = buildSchedule(func, hw, 1, 1);
    EXPECT_TRUE(succeeded(schedule));
    std::vector<double> us;
    for (const SimOp &op : *schedule)
      if (op.durationUs > 0)
        us.push_back(op.durationUs);
    return us;
  };
  double tensorBytes = 4.0 * 1024 * 1024;
  std::vector<double> chain = kernels("chain");
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_DOUBLE_EQ(chain[0],
                   cost::estimateElementwise(hw, 4 * tensorBytes).timeUs);
  std::vector<double> shared = kernels("shared");
  ASSERT_EQ(shared.size(), 2u);
  EXPECT_DOUBLE_EQ(shared[0] + shared[1],
                   2 * cost::estimateElementwise(hw, 3 * tensorBytes).timeUs);
  // A select on a scalar condition broadcasts it: the backend leaves that
  // generic apart, and so does the simulator.
  std::vector<double> selected = kernels("selected");
  EXPECT_EQ(selected.size(), 2u);
  // A product its one reader reads twice (m + m) is fused all the same:
  // one kernel reading x0 and p.
  std::vector<double> twice = kernels("twice");
  ASSERT_EQ(twice.size(), 1u);
  EXPECT_DOUBLE_EQ(twice[0],
                   cost::estimateElementwise(hw, 3 * tensorBytes).timeUs);
}

TEST_F(ProgramShapesTest, CpuEmbeddingUpdateStreamsItsRowSumsButForSgd) {
  // On a CPU the runtime updates a table: SGD on sum bags moves each row by
  // each entry's share; Adagrad (and max pooling) first sums every distinct
  // row's gradient into an appended buffer that the optimizer reads back,
  // three streams of 4 bytes an element for an f32 table. A GPU's generated
  // update owns a row per thread and has no such buffer.
  constexpr StringLiteral kUpdates = R"mlir(
module {
  braid.table @t : tensor<100000x64xf32> pooling_factor = 4.0
  func.func @sgd(%i: tensor<4096xi64>, %o: tensor<1025xi64>, %g: tensor<1024x64xf32>) {
    braid.embedding_bag_update @t(%i, %o, %g) sum optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : tensor<4096xi64>, tensor<1025xi64>, tensor<1024x64xf32>
    return
  }
  func.func @sgd_max(%i: tensor<4096xi64>, %o: tensor<1025xi64>, %g: tensor<1024x64xf32>) {
    braid.embedding_bag_update @t(%i, %o, %g) max optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : tensor<4096xi64>, tensor<1025xi64>, tensor<1024x64xf32>
    return
  }
  func.func @adagrad(%i: tensor<4096xi64>, %o: tensor<1025xi64>, %g: tensor<1024x64xf32>) {
    braid.embedding_bag_update @t(%i, %o, %g) sum optimizer = {eps = 1.0e-10 : f64, lr = 1.0e-01 : f64, type = "adagrad"} : tensor<4096xi64>, tensor<1025xi64>, tensor<1024x64xf32>
    return
  }
}
)mlir";
  module = parseSourceString<ModuleOp>(kUpdates, &context);
  ASSERT_TRUE(module);
  // The same hardware described as a CPU: only the arch differs, so the
  // two prices differ by the sums alone.
  cluster::HardwareDesc gpu = *cluster::loadHardware("dgx-h100");
  cluster::HardwareDesc cpu = gpu;
  cpu.device.arch = cluster::Arch::cpu;
  auto updateUs = [&](StringRef name, const cluster::HardwareDesc &hw) {
    auto func = module->lookupSymbol<func::FuncOp>(name);
    FailureOr<std::vector<SimOp>> schedule = buildSchedule(func, hw, 1, 1);
    EXPECT_TRUE(succeeded(schedule));
    double us = 0;
    for (const SimOp &op : *schedule)
      if (op.category == "embedding_update")
        us += op.durationUs;
    return us;
  };
  // 1024 bags of 4 distinct rows of 64 floats, each read and written (8
  // bytes an element; Adagrad's state 8 more).
  cost::EmbeddingBagShape shape;
  shape.bags = 1024;
  shape.poolingFactor = 4;
  shape.dim = 64;
  shape.rows = 100000;
  auto gather = [&](const cluster::HardwareDesc &hw, int64_t elementBytes) {
    cost::EmbeddingBagShape s = shape;
    s.elementBytes = elementBytes;
    return cost::estimateEmbeddingBag(hw, s).timeUs;
  };
  double sums = cost::estimateElementwise(cpu, 3.0 * 4096 * 64 * 4).timeUs;
  EXPECT_NEAR(updateUs("sgd", cpu), gather(cpu, 8), 1e-9);
  EXPECT_NEAR(updateUs("sgd_max", cpu), gather(cpu, 8) + sums, 1e-9);
  EXPECT_NEAR(updateUs("adagrad", cpu), gather(cpu, 16) + sums, 1e-9);
  EXPECT_NEAR(updateUs("adagrad", gpu), gather(gpu, 16), 1e-9);
}

/// A pipelined form (braid-pipeline-input-dist) of kRowWise's per-rank
/// program: the routed indices come in as a carried argument.
constexpr StringLiteral kPipelined = R"mlir(
module attributes {braid.batch_split = array<i64: 4, 4>, braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<100x16xf32> pooling_factor = 4.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 25, 100]>
  func.func @forward_input_dist(%i: tensor<?xi64> {braid.input = "t.indices"}, %o: tensor<5xi64> {braid.input = "t.offsets"}) -> (tensor<?xi64> {braid.carried = "carried.0"}) {
    %l, %v, %c = braid.bucketize @t(%i, %o) to [0, 1] bags_per_rank = 4 : (tensor<?xi64>, tensor<5xi64>) -> (tensor<8xi64>, tensor<?xi64>, tensor<2xi64>)
    %t = braid.all_to_all_v_start %v, %c : (tensor<?xi64>, tensor<2xi64>) -> !braid.token<tensor<?xi64>>
    %r = braid.wait %t : !braid.token<tensor<?xi64>>
    return %r : tensor<?xi64>
  }
  func.func @forward_pipelined(%i: tensor<?xi64> {braid.input = "t.indices"}, %o: tensor<5xi64> {braid.input = "t.offsets"},
                               %ni: tensor<?xi64> {braid.next_input = "t.indices"}, %no: tensor<5xi64> {braid.next_input = "t.offsets"},
                               %routed: tensor<?xi64> {braid.carried = "carried.0"})
      -> (tensor<?xi64>, tensor<?xi64> {braid.carried = "carried.0"})
      attributes {braid.input_dist = @forward_input_dist} {
    %l, %v, %c = braid.bucketize @t(%ni, %no) to [0, 1] bags_per_rank = 4 : (tensor<?xi64>, tensor<5xi64>) -> (tensor<8xi64>, tensor<?xi64>, tensor<2xi64>)
    %t = braid.all_to_all_v_start %v, %c : (tensor<?xi64>, tensor<2xi64>) -> !braid.token<tensor<?xi64>>
    %r = braid.wait %t : !braid.token<tensor<?xi64>>
    return %routed, %r : tensor<?xi64>, tensor<?xi64>
  }
}
)mlir";

TEST_F(ProgramShapesTest, CarriedArgumentsHaveTheSizesTheInputDistributionGives) {
  module = parseSourceString<ModuleOp>(kPipelined, &context);
  ASSERT_TRUE(module);
  auto pipelined = module->lookupSymbol<func::FuncOp>("forward_pipelined");
  ASSERT_TRUE(pipelined);
  RoutingTable routing(2);
  SmallVector<int64_t> split = {4, 4};
  for (int64_t rank : {0, 1}) {
    FailureOr<ProgramShapes> shapes =
        ProgramShapes::bind(pipelined, rank, 2, split, routing);
    ASSERT_TRUE(succeeded(shapes));
    // Rank 0 holds a quarter of the rows and receives a quarter of both
    // ranks' 16 indices; rank 1 three quarters: this batch's (carried) as
    // the next batch's (exchanged here).
    double received = rank == 0 ? 8.0 : 24.0;
    EXPECT_DOUBLE_EQ(shapes->rows(pipelined.getArgument(4)), received);
    EXPECT_DOUBLE_EQ(shapes->rows(first<WaitOp>(pipelined).getResult()),
                     received);
    // The next batch's indices, bound from their bags like any input.
    EXPECT_DOUBLE_EQ(shapes->rows(pipelined.getArgument(2)), 16.0);
  }
}
