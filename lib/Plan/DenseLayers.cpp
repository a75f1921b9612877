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

namespace {
/// What pricing a dense layer or block on a problem's cluster needs.
struct DensePricing {
  DensePricing(const PlanProblem &problem, llvm::StringRef dtype)
      : problem(problem), dtype(dtype), R(problem.ranks()), B(problem.batch),
        elementBytes((dtype == "bf16" || dtype == "f16") ? 2 : 4) {}
  double gemmUs(int64_t m, int64_t n, int64_t k) const {
    return cost::estimateGemm(problem.hw, m, n, k, dtype).timeUs;
  }
  double collectiveUs(cost::CollectiveKind kind, double bytes) const {
    return cost::estimateCollective(problem.hw, kind, bytes, R, problem.nodes)
        .timeUs;
  }
  static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

  const PlanProblem &problem;
  llvm::StringRef dtype;
  int64_t R, B;
  double elementBytes;
};
} // namespace

DenseLayerCost plan::estimateDenseLayer(const PlanProblem &problem,
                                        int64_t out, int64_t in,
                                        llvm::StringRef dtype) {
  DensePricing p(problem, dtype);
  auto ceilDiv = DensePricing::ceilDiv;
  int64_t R = p.R, B = p.B;
  DenseLayerCost cost;
  cost.dataParallelUs = p.gemmUs(ceilDiv(B, R), out, in);
  if (R == 1) {
    cost.columnUs = cost.rowUs = cost.dataParallelUs;
    return cost;
  }
  // all_gather counts its output buffer; all_to_all its per-rank buffer;
  // reduce_scatter its input buffer (nccl-tests' conventions).
  cost.columnUs =
      p.collectiveUs(cost::CollectiveKind::all_gather,
                     double(B) * in * p.elementBytes) +
      p.gemmUs(B, ceilDiv(out, R), in) +
      p.collectiveUs(cost::CollectiveKind::all_to_all,
                     double(B) * ceilDiv(out, R) * p.elementBytes);
  cost.rowUs = p.collectiveUs(cost::CollectiveKind::all_to_all,
                              double(ceilDiv(B, R)) * in * p.elementBytes) +
               p.gemmUs(B, out, ceilDiv(in, R)) +
               p.collectiveUs(cost::CollectiveKind::reduce_scatter,
                              double(B) * out * 4);
  return cost;
}

DenseBlockCost plan::estimateDenseBlock(const PlanProblem &problem,
                                        int64_t in1, int64_t out1,
                                        int64_t out2, llvm::StringRef dtype) {
  DensePricing p(problem, dtype);
  auto ceilDiv = DensePricing::ceilDiv;
  int64_t local = ceilDiv(p.B, p.R), hidden = ceilDiv(out1, p.R);
  DenseBlockCost cost;
  cost.dataParallelUs = p.gemmUs(local, out1, in1) + p.gemmUs(local, out2, out1);
  // A layer's backward is two GEMMs of its forward's size (the input's and
  // the weight's gradients).
  cost.trainingDataParallelUs = 3 * cost.dataParallelUs;
  if (p.R == 1) {
    cost.tensorParallelUs = cost.dataParallelUs;
    cost.trainingTensorParallelUs = cost.trainingDataParallelUs;
    return cost;
  }
  double partialBytes = double(p.B) * out2 * p.elementBytes;
  double inputBytes = double(p.B) * in1 * p.elementBytes;
  double gemmsUs = p.gemmUs(p.B, hidden, in1) + p.gemmUs(p.B, out2, hidden);
  double partialsUs = std::min(
      p.collectiveUs(cost::CollectiveKind::reduce_scatter, partialBytes),
      p.collectiveUs(cost::CollectiveKind::all_reduce, partialBytes));
  cost.tensorParallelUs =
      p.collectiveUs(cost::CollectiveKind::all_gather, inputBytes) + gemmsUs +
      partialsUs;
  // Data-parallel: every weight's and bias's gradient all-reduced (one
  // bucket). Tensor-parallel: the forward exchanges reversed (the partial
  // sums' gradient gathered, the gathered input's reduce-scattered), the
  // row layer's bias gradient all-reduced; the blocks need nothing.
  double gradientBytes =
      (double(out1) * in1 + out1 + double(out2) * out1 + out2) * 4;
  cost.trainingDataParallelUs +=
      p.collectiveUs(cost::CollectiveKind::all_reduce, gradientBytes);
  cost.trainingTensorParallelUs =
      cost.tensorParallelUs + 2 * gemmsUs +
      p.collectiveUs(cost::CollectiveKind::all_gather, partialBytes) +
      p.collectiveUs(cost::CollectiveKind::reduce_scatter, inputBytes) +
      p.collectiveUs(cost::CollectiveKind::all_reduce, double(out2) * 4);
  return cost;
}
