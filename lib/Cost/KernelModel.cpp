//===- KernelModel.cpp - Kernel and contention cost models ----------------===//
//
// This file models kernels by roofline: time = max(arithmetic time, memory
// time) + launch overhead, with the two efficiency terms of the hardware
// description. GEMMs add wave quantization; embedding bags read only the
// distinct rows from memory while they fit in L2. The contention model
// dilates a kernel that overlaps a collective. docs/cost-model.md derives
// each term.
//
//===----------------------------------------------------------------------===//

#include "braid/Cost/CostModel.h"

#include <algorithm>
#include <cmath>

using namespace mlir::braid;
using namespace mlir::braid::cost;
using cluster::HardwareDesc;

/// Memory time in microseconds for `bytes` at the achievable bandwidth.
static double memoryUs(const HardwareDesc &hw, double bytes) {
  return bytes / (hw.device.memoryBandwidthGBps * hw.device.memoryEfficiency) *
         1e-3;
}

static KernelEstimate roofline(const HardwareDesc &hw, double computeUs,
                               double memUs) {
  KernelEstimate estimate;
  estimate.timeUs = std::max(computeUs, memUs) + hw.device.launchOverheadUs;
  double busy = std::max(computeUs, memUs);
  estimate.memoryBoundFraction = busy > 0 ? memUs / busy : 1;
  return estimate;
}

KernelEstimate cost::estimateGemm(const HardwareDesc &hw, int64_t m, int64_t n,
                                  int64_t k, llvm::StringRef dtype) {
  auto peak = hw.device.peakTflops.find(dtype);
  double tflops = peak != hw.device.peakTflops.end()
                      ? peak->second
                      : hw.device.peakTflops.lookup("f32");
  double elementBytes = (dtype == "bf16" || dtype == "f16") ? 2
                        : dtype == "f64"                    ? 8
                                                            : 4;
  // An empty product (a rank without samples) only launches.
  if (m <= 0 || n <= 0 || k <= 0)
    return roofline(hw, 0, 0);
  // Output tiles of 128 x 128 run in waves of one tile per SM; a partial
  // last wave leaves SMs idle.
  double tiles = std::ceil(m / 128.0) * std::ceil(n / 128.0);
  // A product with fewer output tiles than SMs and a reduction much longer
  // than its sides (a weight gradient: k is the batch) is split along k, as
  // cuBLAS does, into slices of at least 128; the partial tiles are then
  // summed. Short reductions are not split (measured on an H100:
  // bench/gpu_model).
  double splitK = 1;
  if (k >= 4 * std::max(m, n))
    splitK = std::clamp(std::floor(hw.device.sms / tiles), 1.0,
                        std::max(1.0, std::floor(k / 128.0)));
  tiles *= splitK;
  double waves = std::ceil(tiles / hw.device.sms);
  double waveUtilization = tiles / (waves * hw.device.sms);
  double flops = 2.0 * m * n * k;
  auto measured = hw.device.gemmEfficiencyByType.find(
      peak != hw.device.peakTflops.end() ? dtype : "f32");
  double efficiency = measured != hw.device.gemmEfficiencyByType.end()
                          ? measured->second
                          : hw.device.gemmEfficiency;
  double computeUs =
      flops / (tflops * 1e12 * efficiency * waveUtilization) * 1e6;
  double bytes = elementBytes * (double(m) * k + double(k) * n + double(m) * n);
  // Split partial tiles are written in f32 and read back by the sum.
  bytes += (splitK - 1) * 2 * 4 * double(m) * n;
  return roofline(hw, computeUs, memoryUs(hw, bytes));
}

KernelEstimate cost::estimateEmbeddingBag(const HardwareDesc &hw,
                                          const EmbeddingBagShape &shape) {
  double lookups = shape.bags * shape.poolingFactor;
  // Memory moves 32-byte sectors: a row costs its size rounded up.
  double rowBytes = std::ceil(shape.dim * shape.elementBytes / 32.0) * 32.0;
  double unique = std::clamp(shape.uniqueRatio, 0.0, 1.0);
  double distinct = std::min(lookups * unique, double(shape.rows));
  double distinctBytes = distinct * rowBytes;
  // Repeated rows hit in L2 while the distinct set fits; beyond that, the
  // fraction that does not fit misses.
  double l2Bytes = hw.device.l2MB * 1e6;
  double missRate =
      distinctBytes > 0 ? std::max(0.0, 1.0 - l2Bytes / distinctBytes) : 0;
  double rowTraffic = distinctBytes + (lookups - distinct) * rowBytes * missRate;
  // Random row reads reach the calibrated gather fraction of the streaming
  // bandwidth: they cost proportionally more bytes of streaming time.
  double bytes = rowTraffic / hw.device.gatherEfficiency +
                 lookups * 8 /*indices*/ + (shape.bags + 1) * 8 /*offsets*/ +
                 double(shape.bags) * shape.dim * shape.elementBytes;
  double flops = lookups * shape.dim;
  double computeUs =
      flops / (hw.device.peakTflops.lookup("f32") * 1e12) * 1e6;
  return roofline(hw, computeUs, memoryUs(hw, bytes));
}

KernelEstimate cost::estimateElementwise(const HardwareDesc &hw, double bytes) {
  return roofline(hw, 0, memoryUs(hw, bytes));
}

KernelEstimate cost::estimatePack(const HardwareDesc &hw, double bytes) {
  return roofline(hw, 0, memoryUs(hw, 2 * bytes));
}

double cost::collectiveMemoryGBps(const CollectiveEstimate &estimate) {
  // Every byte a device sends is read from its memory and every byte it
  // receives is written: about twice the bus bandwidth.
  return 2 * estimate.busbwGBps;
}

double cost::overlapDilation(const HardwareDesc &hw, double memoryBoundFraction,
                             double commMemoryGBps) {
  // A measured slowdown (braid-calibrate's, on CPUs) replaces the model.
  if (hw.computeSlowdownBesideComm > 0)
    return hw.computeSlowdownBesideComm;
  double smShare = std::min(0.9, double(hw.commChannels) / hw.device.sms);
  double memShare = std::min(
      0.9, commMemoryGBps /
               (hw.device.memoryBandwidthGBps * hw.device.memoryEfficiency));
  double f = std::clamp(memoryBoundFraction, 0.0, 1.0);
  return (1 - f) / (1 - smShare) + f / (1 - memShare);
}
