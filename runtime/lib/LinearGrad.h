//===- LinearGrad.h - What both runtimes' dense-layer gradients share -----===//
//
// This file defines the parts of braidrt_linear_grad_f32 that the CPU
// runtime (BLAS) and the CUDA runtime (cuBLASLt) share: the operands' views
// with their shapes checked, and the pre-activation and bias gradients,
// computed on the host the same way (sums in double), so both targets give
// the same bias gradient and feed the same g to their GEMMs.
//
//===----------------------------------------------------------------------===//

#ifndef BRAIDRT_LIB_LINEARGRAD_H
#define BRAIDRT_LIB_LINEARGRAD_H

#include "Descriptors.h"

namespace braidrt {

/// The operands of a dense layer's gradient: input x [B, in], weight w
/// [out, in], result y [B, out], result gradient dy, and the gradients dx,
/// dw and db to fill.
struct LinearGradViews {
  View<float> x, w, y, dy, dx, dw, db;
  int64_t batch = 0, in = 0, out = 0;
};

/// Reads the operands of a compiled braidrt_linear_grad_f32 call (`op`
/// names it in errors) and fails the job when their shapes disagree.
inline LinearGradViews linearGradViewsOf(braidrt_unranked_memref *inputRef,
                                         braidrt_unranked_memref *weightRef,
                                         braidrt_unranked_memref *resultRef,
                                         braidrt_unranked_memref *resultGradRef,
                                         braidrt_unranked_memref *inputGradRef,
                                         braidrt_unranked_memref *weightGradRef,
                                         braidrt_unranked_memref *biasGradRef,
                                         const char *op) {
  LinearGradViews v;
  v.x = viewOf<float>(inputRef, 2, op, "the input");
  v.w = viewOf<float>(weightRef, 2, op, "the weight");
  v.y = viewOf<float>(resultRef, 2, op, "the result");
  v.dy = viewOf<float>(resultGradRef, 2, op, "the result gradient");
  v.dx = viewOf<float>(inputGradRef, 2, op, "the input gradient");
  v.dw = viewOf<float>(weightGradRef, 2, op, "the weight gradient");
  v.db = viewOf<float>(biasGradRef, 1, op, "the bias gradient");
  v.batch = v.x.size(0);
  v.in = v.x.size(1);
  v.out = v.w.size(0);
  if (v.w.size(1) != v.in || v.y.size(0) != v.batch || v.y.size(1) != v.out ||
      v.dy.size(0) != v.batch || v.dy.size(1) != v.out ||
      v.dx.size(0) != v.batch || v.dx.size(1) != v.in ||
      v.dw.size(0) != v.out || v.dw.size(1) != v.in || v.db.size(0) != v.out)
    braidrt_fail("%s: shapes do not agree (input [%lld, %lld], weight "
                 "[%lld, %lld])",
                 op, (long long)v.batch, (long long)v.in,
                 (long long)v.w.size(0), (long long)v.w.size(1));
  return v;
}

/// g = dy * act'(y) over `count` elements (the activation's derivative
/// from its output: relu's mask, sigmoid's y (1 - y) in double).
inline void preActivationGradient(const float *resultGrad, const float *result,
                                  float *g, int64_t count, int32_t activation) {
  for (int64_t i = 0; i < count; ++i) {
    float grad = resultGrad[i], value = result[i];
    if (activation == BRAIDRT_ACT_RELU)
      grad = value > 0 ? grad : 0.0f;
    else if (activation == BRAIDRT_ACT_SIGMOID)
      grad = float(double(grad) * value * (1 - double(value)));
    g[i] = grad;
  }
}

/// db[o] = sum over the batch of g[b, o], summed in double.
inline void biasGradient(const float *g, float *biasGrad, int64_t batch,
                         int64_t out) {
  for (int64_t o = 0; o < out; ++o) {
    double sum = 0;
    for (int64_t b = 0; b < batch; ++b)
      sum += g[b * out + o];
    biasGrad[o] = float(sum);
  }
}

} // namespace braidrt

#endif // BRAIDRT_LIB_LINEARGRAD_H
