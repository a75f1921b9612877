//===- Compiled.cpp - The GEMM entry point of compiled programs -----------===//
//
// This file implements braidrt_linear_f32 of compiled.h, the f32 GEMM with
// bias and activation that compiled programs call through MLIR's C
// interface: it reads the memref descriptors and calls BLAS, checking the
// shapes it is handed (a mismatch is a compiler bug, reported like any
// runtime error). The exchanges' entry points are in Runtime.cpp.
//
//===----------------------------------------------------------------------===//

#include "braidrt/braidrt.h"
#include "braidrt/compiled.h"

#include <cblas.h>

#include <vector>

namespace {
/// A view of a ranked descriptor.
struct View {
  float *data = nullptr;
  std::vector<int64_t> sizes, strides;
};

View viewOf(const braidrt_unranked_memref *memref, int64_t rank,
            const char *what) {
  if (!memref || memref->rank != rank)
    braidrt_fail("linear: %s has rank %lld, expected %lld", what,
                 static_cast<long long>(memref ? memref->rank : -1),
                 static_cast<long long>(rank));
  auto *words = static_cast<int64_t *>(memref->descriptor);
  View view;
  auto *aligned = reinterpret_cast<float *>(words[1]);
  view.data = aligned + words[2];
  view.sizes.assign(words + 3, words + 3 + rank);
  view.strides.assign(words + 3 + rank, words + 3 + 2 * rank);
  return view;
}
} // namespace

extern "C" void _mlir_ciface_braidrt_linear_f32(braidrt_unranked_memref *input,
                                                braidrt_unranked_memref *weight,
                                                braidrt_unranked_memref *bias,
                                                braidrt_unranked_memref *output,
                                                int32_t activation) {
  View in = viewOf(input, 2, "input"), w = viewOf(weight, 2, "weight"),
       b = viewOf(bias, 1, "bias"), out = viewOf(output, 2, "output");
  int64_t batch = in.sizes[0], inFeatures = in.sizes[1],
          outFeatures = w.sizes[0];
  if (w.sizes[1] != inFeatures || b.sizes[0] != outFeatures ||
      out.sizes[0] != batch || out.sizes[1] != outFeatures)
    braidrt_fail("linear: shapes [%lld, %lld] x [%lld, %lld]^T + [%lld] -> "
                 "[%lld, %lld] do not agree",
                 (long long)batch, (long long)inFeatures, (long long)w.sizes[0],
                 (long long)w.sizes[1], (long long)b.sizes[0],
                 (long long)out.sizes[0], (long long)out.sizes[1]);
  bool rowMajor = in.strides[1] == 1 && w.strides[1] == 1 &&
                  out.strides[1] == 1 && b.strides[0] == 1;
  if (!rowMajor)
    braidrt_fail("linear: expects row-major buffers");
  for (int64_t r = 0; r < batch; ++r)
    for (int64_t o = 0; o < outFeatures; ++o)
      out.data[r * out.strides[0] + o] = b.data[o];
  if (batch > 0 && outFeatures > 0 && inFeatures > 0)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, batch, outFeatures,
                inFeatures, 1.0f, in.data, in.strides[0], w.data, w.strides[0],
                1.0f, out.data, out.strides[0]);
  for (int64_t r = 0; r < batch; ++r) {
    float *row = out.data + r * out.strides[0];
    for (int64_t o = 0; o < outFeatures; ++o) {
      if (activation == BRAIDRT_ACT_RELU)
        row[o] = row[o] < 0 ? 0.0f : row[o]; // relu(NaN) is NaN
      else if (activation == BRAIDRT_ACT_SIGMOID)
        row[o] = 1.0f / (1.0f + __builtin_expf(-row[o]));
    }
  }
}
