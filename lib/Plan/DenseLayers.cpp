//===- DenseLayers.cpp - Costing a dense layer's parallelization ----------===//
//
// This file prices a dense layer data-parallel and in the two tensor-
// parallel forms (see Planner.h), with the same kernel and collective
// models as the embedding plan.
//
//===----------------------------------------------------------------------===//

#include "braid/Cost/CostModel.h"
#include "braid/Plan/Planner.h"

using namespace mlir::braid;
using namespace mlir::braid::plan;

DenseLayerCost plan::estimateDenseLayer(const PlanProblem &problem,
                                        int64_t out, int64_t in,
                                        llvm::StringRef dtype) {
  const cluster::HardwareDesc &hw = problem.hw;
  int64_t R = problem.ranks(), B = problem.batch;
  double elementBytes = (dtype == "bf16" || dtype == "f16") ? 2 : 4;
  auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  auto collectiveUs = [&](cost::CollectiveKind kind, double bytes) {
    return cost::estimateCollective(hw, kind, bytes, R, problem.nodes).timeUs;
  };
  DenseLayerCost cost;
  cost.dataParallelUs = cost::estimateGemm(hw, ceilDiv(B, R), out, in, dtype).timeUs;
  if (R == 1) {
    cost.columnUs = cost.rowUs = cost.dataParallelUs;
    return cost;
  }
  // all_gather counts its output buffer; all_to_all its per-rank buffer;
  // reduce_scatter its input buffer (nccl-tests' conventions).
  cost.columnUs =
      collectiveUs(cost::CollectiveKind::all_gather, double(B) * in * elementBytes) +
      cost::estimateGemm(hw, B, ceilDiv(out, R), in, dtype).timeUs +
      collectiveUs(cost::CollectiveKind::all_to_all,
                   double(B) * ceilDiv(out, R) * elementBytes);
  cost.rowUs =
      collectiveUs(cost::CollectiveKind::all_to_all,
                   double(ceilDiv(B, R)) * in * elementBytes) +
      cost::estimateGemm(hw, B, out, ceilDiv(in, R), dtype).timeUs +
      collectiveUs(cost::CollectiveKind::reduce_scatter, double(B) * out * 4);
  return cost;
}

DenseBlockCost plan::estimateDenseBlock(const PlanProblem &problem,
                                        int64_t in1, int64_t out1,
                                        int64_t out2, llvm::StringRef dtype) {
  const cluster::HardwareDesc &hw = problem.hw;
  int64_t R = problem.ranks(), B = problem.batch;
  double elementBytes = (dtype == "bf16" || dtype == "f16") ? 2 : 4;
  auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  auto collectiveUs = [&](cost::CollectiveKind kind, double bytes) {
    return cost::estimateCollective(hw, kind, bytes, R, problem.nodes).timeUs;
  };
  DenseBlockCost cost;
  cost.dataParallelUs =
      cost::estimateGemm(hw, ceilDiv(B, R), out1, in1, dtype).timeUs +
      cost::estimateGemm(hw, ceilDiv(B, R), out2, out1, dtype).timeUs;
  if (R == 1) {
    cost.tensorParallelUs = cost.dataParallelUs;
    return cost;
  }
  double partialBytes = double(B) * out2 * elementBytes;
  cost.tensorParallelUs =
      collectiveUs(cost::CollectiveKind::all_gather,
                   double(B) * in1 * elementBytes) +
      cost::estimateGemm(hw, B, ceilDiv(out1, R), in1, dtype).timeUs +
      cost::estimateGemm(hw, B, out2, ceilDiv(out1, R), dtype).timeUs +
      std::min(collectiveUs(cost::CollectiveKind::reduce_scatter, partialBytes),
               collectiveUs(cost::CollectiveKind::all_reduce, partialBytes));
  return cost;
}
