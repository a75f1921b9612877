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
  if (p.R == 1) {
    cost.tensorParallelUs = cost.dataParallelUs;
    return cost;
  }
  double partialBytes = double(p.B) * out2 * p.elementBytes;
  cost.tensorParallelUs =
      p.collectiveUs(cost::CollectiveKind::all_gather,
                     double(p.B) * in1 * p.elementBytes) +
      p.gemmUs(p.B, hidden, in1) + p.gemmUs(p.B, out2, hidden) +
      std::min(
          p.collectiveUs(cost::CollectiveKind::reduce_scatter, partialBytes),
          p.collectiveUs(cost::CollectiveKind::all_reduce, partialBytes));
  return cost;
}
