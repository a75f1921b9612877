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
  /// The simulated time of `step`'s linear_grad on `machine` (one rank).
  double linearGradUs(func::FuncOp step, const cluster::HardwareDesc &machine) {
    FailureOr<std::vector<sim::SimOp>> ops =
        sim::buildSchedule(step, machine, 1, 1);
    EXPECT_TRUE(succeeded(ops));
    if (succeeded(ops))
      for (const sim::SimOp &op : *ops)
        if (op.name == "linear_grad")
          return op.durationUs;
    ADD_FAILURE() << "no linear_grad in the schedule";
    return 0.0;
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

// On a CPU the runtime's dense layer makes passes of its own over its output
// (the bias fill, BLAS's read-back for beta = 1, the activation); a GPU's
// GEMM writes it once.
TEST_F(DenseStageTest, CpuLinearPaysTheRuntimesPasses) {
  func::FuncOp forward = parseForward(R"mlir(
func.func @forward(%x: tensor<4096x64xf32>, %w: tensor<32x64xf32>, %w2: tensor<32x32xf32>, %b: tensor<32xf32>) -> tensor<4096x32xf32> {
  %h = braid.linear %x, %w, %b relu : tensor<4096x64xf32>, tensor<32x64xf32>, tensor<32xf32> -> tensor<4096x32xf32>
  %y = braid.linear %h, %w2, %b none : tensor<4096x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<4096x32xf32>
  return %y : tensor<4096x32xf32>
}
)mlir");
  ASSERT_TRUE(forward);
  cluster::HardwareDesc cpu = hw;
  cpu.device.arch = cluster::Arch::cpu;
  FailureOr<double> gpuUs = sim::estimateDenseStageUs(forward, hw, 4096, 2);
  FailureOr<double> cpuUs = sim::estimateDenseStageUs(forward, cpu, 4096, 2);
  ASSERT_TRUE(succeeded(gpuUs) && succeeded(cpuUs));
  double gemms = cost::estimateGemm(hw, 2048, 32, 64, "f32").timeUs +
                 cost::estimateGemm(hw, 2048, 32, 32, "f32").timeUs;
  EXPECT_NEAR(*gpuUs, gemms, 1e-9 * gemms);
  // 2048 x 32 outputs each: 16 bytes an element with relu, 8 without.
  double passes = cost::estimateElementwise(hw, 2048.0 * 32 * 16).timeUs +
                  cost::estimateElementwise(hw, 2048.0 * 32 * 8).timeUs;
  EXPECT_NEAR(*cpuUs, gemms + passes, 1e-9 * (gemms + passes));
}

// linear_grad on a CPU: the runtime zeroes both gradients, BLAS zeroes them
// again (beta = 0) and reads them back; 12 bytes an element beyond the GEMMs
// and the activation's gradient.
TEST_F(DenseStageTest, CpuLinearGradPaysTheRuntimesPasses) {
  func::FuncOp step = parseForward(R"mlir(
func.func @forward(%x: tensor<2048x64xf32>, %w: tensor<32x64xf32>, %y: tensor<2048x32xf32>, %g: tensor<2048x32xf32>) -> (tensor<2048x64xf32>, tensor<32x64xf32>, tensor<32xf32>) {
  %dx, %dw, %db = braid.linear_grad %x, %w, %y, %g relu : (tensor<2048x64xf32>, tensor<32x64xf32>, tensor<2048x32xf32>, tensor<2048x32xf32>) -> (tensor<2048x64xf32>, tensor<32x64xf32>, tensor<32xf32>)
  return %dx, %dw, %db : tensor<2048x64xf32>, tensor<32x64xf32>, tensor<32xf32>
}
)mlir");
  ASSERT_TRUE(step);
  cluster::HardwareDesc cpu = hw;
  cpu.device.arch = cluster::Arch::cpu;
  double gemms = cost::estimateGemm(hw, 2048, 64, 32, "f32").timeUs +
                 cost::estimateGemm(hw, 32, 64, 2048, "f32").timeUs;
  double activation = cost::estimateElementwise(hw, 3 * 2048.0 * 32 * 4).timeUs;
  EXPECT_NEAR(linearGradUs(step, hw), gemms + activation, 1e-6 * gemms);
  double passes = cost::estimateElementwise(
                      hw, 3 * 2048.0 * 32 * 4 + (2048.0 * 64 + 32.0 * 64) * 12)
                      .timeUs;
  EXPECT_NEAR(linearGradUs(step, cpu), gemms + passes, 1e-6 * gemms);
}

// A gradient nothing reads is not computed (one part of a split
// linear_grad, braid-defer-weight-gradients), nor priced: the weight part
// pays its GEMM and, on a CPU, the runtime's passes over dw alone.
TEST_F(DenseStageTest, UnreadLinearGradPartsAreNotPriced) {
  func::FuncOp step = parseForward(R"mlir(
func.func @forward(%x: tensor<2048x64xf32>, %w: tensor<32x64xf32>, %y: tensor<2048x32xf32>, %g: tensor<2048x32xf32>) -> tensor<32x64xf32> {
  %dx, %dw, %db = braid.linear_grad %x, %w, %y, %g relu {braid.grad_part = "params"} : (tensor<2048x64xf32>, tensor<32x64xf32>, tensor<2048x32xf32>, tensor<2048x32xf32>) -> (tensor<2048x64xf32>, tensor<32x64xf32>, tensor<32xf32>)
  return %dw : tensor<32x64xf32>
}
)mlir");
  ASSERT_TRUE(step);
  cluster::HardwareDesc cpu = hw;
  cpu.device.arch = cluster::Arch::cpu;
  double weightGemm = cost::estimateGemm(hw, 32, 64, 2048, "f32").timeUs;
  double activation = cost::estimateElementwise(hw, 3 * 2048.0 * 32 * 4).timeUs;
  EXPECT_NEAR(linearGradUs(step, hw), weightGemm + activation, 1e-6 * weightGemm);
  double passes =
      cost::estimateElementwise(hw, 3 * 2048.0 * 32 * 4 + 32.0 * 64 * 12).timeUs;
  EXPECT_NEAR(linearGradUs(step, cpu), weightGemm + passes, 1e-6 * weightGemm);
}
