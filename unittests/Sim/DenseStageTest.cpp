//===- DenseStageTest.cpp - Tests of the dense-stage estimate -------------===//
//
// This file tests estimateDenseStageUs: linear layers are GEMMs on the
// largest rank's share of the batch, streaming ops scale with that share,
// embedding lookups are left to the plan, and unknown ops are errors.
//
//===----------------------------------------------------------------------===//

#include "braid/Cost/CostModel.h"
#include "braid/InitAll.h"
#include "braid/Sim/ScheduleBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::braid;

namespace {
class DenseStageTest : public ::testing::Test {
protected:
  DenseStageTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    hw = *cluster::loadHardware("dgx-h100");
  }
  func::FuncOp parseForward(StringRef text) {
    module = parseSourceString<ModuleOp>(text, &context);
    return module ? module->lookupSymbol<func::FuncOp>("forward") : nullptr;
  }
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  cluster::HardwareDesc hw;
};

constexpr StringLiteral kModel = R"mlir(
braid.table @t : tensor<1000x16xf32> pooling_factor = 3.0
func.func @forward(%x: tensor<4096x64xf32>, %w: tensor<32x64xf32>, %b: tensor<32xf32>,
                   %i: tensor<?xi64>, %o: tensor<4097xi64>) -> tensor<4096x48xf32> {
  %h = braid.linear %x, %w, %b relu : tensor<4096x64xf32>, tensor<32x64xf32>, tensor<32xf32> -> tensor<4096x32xf32>
  %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi64>, tensor<4097xi64>) -> tensor<4096x16xf32>
  %z = braid.interaction cat %h, %e : (tensor<4096x32xf32>, tensor<4096x16xf32>) -> tensor<4096x48xf32>
  return %z : tensor<4096x48xf32>
}
)mlir";
} // namespace

TEST_F(DenseStageTest, GemmAndStreamingOnTheLargestShare) {
  func::FuncOp forward = parseForward(kModel);
  ASSERT_TRUE(forward);
  // 3 ranks: the largest share is ceil(4096 / 3) = 1366 samples.
  FailureOr<double> dense = sim::estimateDenseStageUs(forward, hw, 4096, 3);
  ASSERT_TRUE(succeeded(dense));
  double gemm = cost::estimateGemm(hw, 1366, 32, 64, "f32").timeUs;
  // The interaction streams its operands and result: (32 + 16 + 48) f32
  // columns of the share's rows. The lookup is not counted.
  double interaction =
      cost::estimateElementwise(hw, 1366.0 * (32 + 16 + 48) * 4).timeUs;
  EXPECT_NEAR(*dense, gemm + interaction, 1e-9 * (gemm + interaction));
  // One rank runs the whole batch.
  FailureOr<double> whole = sim::estimateDenseStageUs(forward, hw, 4096, 1);
  ASSERT_TRUE(succeeded(whole));
  EXPECT_GT(*whole, *dense);
}

TEST_F(DenseStageTest, UnknownOpsAndBadCountsAreErrors) {
  func::FuncOp forward = parseForward(R"mlir(
func.func @forward(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %y = braid.all_reduce sum %x : tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
)mlir");
  ASSERT_TRUE(forward);
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    message = diagnostic.str();
    return success();
  });
  EXPECT_TRUE(failed(sim::estimateDenseStageUs(forward, hw, 8, 2)));
  EXPECT_EQ(message, "the dense stage cannot cost 'braid.all_reduce'");
  EXPECT_TRUE(failed(sim::estimateDenseStageUs(forward, hw, 8, 0)));
}

// The ranks' skew (rank_skew, braid-calibrate's on CPUs) spreads the ranks'
// compute evenly over mean * (1 +- skew): rank 0 is the slowest by the
// skew, the last the fastest, and their mean is the unskewed time.
TEST_F(DenseStageTest, RankSkewSpreadsComputeOverTheRanks) {
  func::FuncOp forward = parseForward(kModel);
  ASSERT_TRUE(forward);
  FailureOr<std::vector<sim::SimOp>> even = sim::buildSchedule(forward, hw, 3, 3);
  hw.rankSkew = 0.1;
  FailureOr<std::vector<sim::SimOp>> skewed =
      sim::buildSchedule(forward, hw, 3, 3);
  ASSERT_TRUE(succeeded(even) && succeeded(skewed));
  ASSERT_EQ(even->size(), skewed->size());
  size_t stride = even->size() / 3;
  bool sawLinear = false;
  for (size_t i = 0; i < stride; ++i) {
    const sim::SimOp &plain = (*even)[i];
    if (plain.name != "linear")
      continue;
    sawLinear = true;
    double base = plain.durationUs;
    ASSERT_GT(base, 0);
    EXPECT_NEAR((*skewed)[i].durationUs, base * 1.1, 1e-9 * base);
    EXPECT_NEAR((*skewed)[stride + i].durationUs, base, 1e-9 * base);
    EXPECT_NEAR((*skewed)[2 * stride + i].durationUs, base * 0.9, 1e-9 * base);
  }
  EXPECT_TRUE(sawLinear);
}
