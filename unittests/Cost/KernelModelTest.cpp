//===- KernelModelTest.cpp - Tests of the kernel and contention models ----===//
//
// This file tests the roofline kernels (monotone in size, never above peak,
// launch floor), the embedding bag's cache term, and that overlapping a
// collective always slows a kernel down.
//
//===----------------------------------------------------------------------===//

#include "braid/Cost/CostModel.h"

#include "gtest/gtest.h"

#include <tuple>

using namespace mlir::braid;
using namespace mlir::braid::cost;

TEST(KernelModelTest, GemmNeverBeatsPeak) {
  cluster::HardwareDesc hw = *cluster::loadHardware("dgx-h100");
  for (int64_t size : {128, 1024, 8192, 16384})
    for (const char *dtype : {"f32", "bf16"}) {
      KernelEstimate e = estimateGemm(hw, size, size, size, dtype);
      double tflops = 2.0 * size * size * size / (e.timeUs * 1e-6) / 1e12;
      EXPECT_LE(tflops, hw.device.peakTflops.lookup(dtype));
      EXPECT_GE(e.timeUs, hw.device.launchOverheadUs);
    }
  // Large square GEMMs reach the GEMM efficiency of the description.
  KernelEstimate big = estimateGemm(hw, 16896, 16896, 16384, "bf16");
  double tflops = 2.0 * 16896 * 16896 * 16384 / (big.timeUs * 1e-6) / 1e12;
  EXPECT_NEAR(tflops / hw.device.peakTflops.lookup("bf16"), hw.device.gemmEfficiency, 0.02);
  EXPECT_LT(big.memoryBoundFraction, 0.2);
  // A skinny GEMM is memory bound.
  EXPECT_EQ(estimateGemm(hw, 1, 4096, 4096, "f32").memoryBoundFraction, 1.0);
}

TEST(KernelModelTest, EfficiencyPerElementType) {
  // The H100 preset carries a measured f32 efficiency (no tensor cores);
  // the other types keep the general one.
  cluster::HardwareDesc hw = *cluster::loadHardware("dgx-h100");
  ASSERT_TRUE(hw.device.gemmEfficiencyByType.count("f32"));
  auto rate = [&](const char *dtype) {
    KernelEstimate e = estimateGemm(hw, 16896, 16896, 16384, dtype);
    return 2.0 * 16896 * 16896 * 16384 / (e.timeUs * 1e-6) / 1e12 /
           hw.device.peakTflops.lookup(dtype);
  };
  EXPECT_NEAR(rate("f32"), hw.device.gemmEfficiencyByType.lookup("f32"), 0.02);
  EXPECT_NEAR(rate("bf16"), hw.device.gemmEfficiency, 0.02);
}

TEST(KernelModelTest, LongReductionsAreSplit) {
  // A weight gradient (out x in, reduced over a batch of 65,536) has 4
  // output tiles: split along k it still fills the GPU, within 2x of the
  // rate of a large square product, instead of running on 4 of 132 SMs.
  cluster::HardwareDesc hw = *cluster::loadHardware("dgx-h100");
  auto tflops = [&](int64_t m, int64_t n, int64_t k) {
    return 2.0 * m * n * k / (estimateGemm(hw, m, n, k, "f32").timeUs * 1e-6) / 1e12;
  };
  double square = tflops(16896, 16896, 16384);
  EXPECT_GT(tflops(512, 256, 65536), square / 2);
  // A short reduction is not split: 4096 x 256 x 512 runs 64 tiles on 132
  // SMs, under half the square rate.
  EXPECT_LT(tflops(4096, 256, 512), square / 2);
}

TEST(KernelModelTest, EmptyGemmOnlyLaunches) {
  // A rank with no samples runs its layers on zero rows.
  cluster::HardwareDesc hw = *cluster::loadHardware("dgx-h100");
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{0, 512, 13},
                         {64, 0, 13},
                         {64, 512, 0}}) {
    KernelEstimate e = estimateGemm(hw, m, n, k, "f32");
    EXPECT_EQ(e.timeUs, hw.device.launchOverheadUs);
    EXPECT_GE(e.memoryBoundFraction, 0.0);
    EXPECT_LE(e.memoryBoundFraction, 1.0);
  }
}

TEST(KernelModelTest, GemmTimeGrowsWithEachDimension) {
  cluster::HardwareDesc hw = *cluster::loadHardware("dgx-a100");
  double base = estimateGemm(hw, 4096, 4096, 4096, "f32").timeUs;
  EXPECT_GT(estimateGemm(hw, 8192, 4096, 4096, "f32").timeUs, base);
  EXPECT_GT(estimateGemm(hw, 4096, 8192, 4096, "f32").timeUs, base);
  EXPECT_GT(estimateGemm(hw, 4096, 4096, 8192, "f32").timeUs, base);
}

/// 65,536 bags of 20 rows of 128 floats from a 40M-row table.
static EmbeddingBagShape largeBag() {
  EmbeddingBagShape shape;
  shape.bags = 65536;
  shape.poolingFactor = 20;
  shape.dim = 128;
  shape.rows = 40000000;
  return shape;
}

TEST(KernelModelTest, EmbeddingBagReuseAndSize) {
  cluster::HardwareDesc hw = *cluster::loadHardware("dgx-h100");
  EmbeddingBagShape shape = largeBag();
  double allDistinct = estimateEmbeddingBag(hw, shape).timeUs;
  shape.uniqueRatio = 0.1;
  double reused = estimateEmbeddingBag(hw, shape).timeUs;
  EXPECT_LT(reused, allDistinct);
  shape.uniqueRatio = 1;
  shape.poolingFactor = 40;
  EXPECT_GT(estimateEmbeddingBag(hw, shape).timeUs, allDistinct);
  // A tiny table fits in L2: only its rows come from memory.
  EmbeddingBagShape tiny = shape;
  tiny.rows = 100;
  EXPECT_LT(estimateEmbeddingBag(hw, tiny).timeUs, allDistinct / 10);
  // Bandwidth bound: never faster than reading the distinct rows once.
  double bytes = 65536.0 * 40 * 128 * 4;
  double floorUs = bytes / (hw.device.memoryBandwidthGBps * 1e3);
  EXPECT_GE(estimateEmbeddingBag(hw, shape).timeUs, floorUs);
}

TEST(KernelModelTest, GatherEfficiencySlowsOnlyTheRowReads) {
  cluster::HardwareDesc hw = *cluster::loadHardware("dgx-h100");
  EmbeddingBagShape shape = largeBag();
  hw.device.gatherEfficiency = 1;
  double full = estimateEmbeddingBag(hw, shape).timeUs;
  hw.device.gatherEfficiency = 0.5;
  double half = estimateEmbeddingBag(hw, shape).timeUs;
  // The row reads take twice as long; indices, offsets and the output do
  // not, so the lookup takes less than twice as long.
  EXPECT_GT(half, 1.5 * full);
  EXPECT_LT(half, 2 * full);
  // Streaming kernels do not change.
  cluster::HardwareDesc plain = *cluster::loadHardware("dgx-h100");
  EXPECT_EQ(estimateElementwise(hw, 1e9).timeUs,
            estimateElementwise(plain, 1e9).timeUs);
}

TEST(KernelModelTest, OverlapIsNeverFree) {
  cluster::HardwareDesc hw = *cluster::loadHardware("dgx-h100");
  for (double memoryBound : {0.0, 0.5, 1.0})
    for (double commGBps : {10.0, 100.0, 740.0}) { // a collective moves bytes
      double d = overlapDilation(hw, memoryBound, commGBps);
      EXPECT_GT(d, 1.0);
      EXPECT_LT(d, 10.0);
    }
  // Memory-bound kernels suffer more from a bandwidth-hungry collective.
  EXPECT_GT(overlapDilation(hw, 1.0, 740), overlapDilation(hw, 0.0, 740));
  // A measured slowdown (braid-calibrate's) replaces the model, whatever
  // the kernel and the collective.
  mlir::braid::cluster::HardwareDesc measured = hw;
  measured.computeSlowdownBesideComm = 1.7;
  EXPECT_DOUBLE_EQ(overlapDilation(measured, 0.0, 10), 1.7);
  EXPECT_DOUBLE_EQ(overlapDilation(measured, 1.0, 740), 1.7);
}
