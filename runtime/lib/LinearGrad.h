//===- LinearGrad.h - What both runtimes' dense-layer gradients share -----===//
//
// This file defines what the CPU runtime (BLAS) and the CUDA runtime
// (cuBLASLt) share of braidrt_linear_grad_gemms_f32: the operands' views with
// their shapes checked. The compiled program computes the pre-activation
// gradient g and the bias gradient itself (generated kernels), so both
// targets feed the same g to their GEMMs.
//
//===----------------------------------------------------------------------===//

#ifndef BRAIDRT_LIB_LINEARGRAD_H
#define BRAIDRT_LIB_LINEARGRAD_H

#include "Descriptors.h"

namespace braidrt {

/// The operands of a dense layer's gradient GEMMs: input x [B, in], weight
/// w [out, in], pre-activation gradient g [B, out], and the gradients dx
/// and dw to fill, those of `parts` (braidrt_grad_parts).
struct LinearGradViews {
  View<float> x, w, g, dx, dw;
  int64_t batch = 0, in = 0, out = 0;
  bool input = true, weight = true;
};

/// Reads the operands of a compiled braidrt_linear_grad_gemms_f32 call
/// (`op` names it in errors) and fails the job when their shapes disagree.
inline LinearGradViews linearGradViewsOf(braidrt_unranked_memref *inputRef,
                                         braidrt_unranked_memref *weightRef,
                                         braidrt_unranked_memref *gradRef,
                                         braidrt_unranked_memref *inputGradRef,
                                         braidrt_unranked_memref *weightGradRef,
                                         int32_t parts, const char *op) {
  LinearGradViews v;
  if (parts < 1 || parts > BRAIDRT_GRAD_BOTH)
    braidrt_fail("%s: no gradient parts %d (1 input, 2 weight, 3 both)", op,
                 static_cast<int>(parts));
  v.input = parts & BRAIDRT_GRAD_INPUT;
  v.weight = parts & BRAIDRT_GRAD_WEIGHT;
  v.x = viewOf<float>(inputRef, 2, op, "the input");
  v.w = viewOf<float>(weightRef, 2, op, "the weight");
  v.g = viewOf<float>(gradRef, 2, op, "the pre-activation gradient");
  v.dx = viewOf<float>(inputGradRef, 2, op, "the input gradient");
  v.dw = viewOf<float>(weightGradRef, 2, op, "the weight gradient");
  v.batch = v.x.size(0);
  v.in = v.x.size(1);
  v.out = v.w.size(0);
  // A gradient left out has a placeholder buffer, not read.
  if (v.w.size(1) != v.in || v.g.size(0) != v.batch || v.g.size(1) != v.out ||
      (v.input && (v.dx.size(0) != v.batch || v.dx.size(1) != v.in)) ||
      (v.weight && (v.dw.size(0) != v.out || v.dw.size(1) != v.in)))
    braidrt_fail("%s: shapes do not agree (input [%lld, %lld], weight "
                 "[%lld, %lld], gradient [%lld, %lld])",
                 op, (long long)v.batch, (long long)v.in,
                 (long long)v.w.size(0), (long long)v.w.size(1),
                 (long long)v.g.size(0), (long long)v.g.size(1));
  return v;
}

} // namespace braidrt

#endif // BRAIDRT_LIB_LINEARGRAD_H
