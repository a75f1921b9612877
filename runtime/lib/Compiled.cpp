//===- Compiled.cpp - The GEMM entry point of compiled programs -----------===//
//
// This file implements braidrt_linear_f32 of compiled.h, the f32 GEMM with
// bias and activation that compiled programs call through MLIR's C
// interface: it reads the memref descriptors and calls BLAS, checking the
// shapes it is handed (a mismatch is a compiler bug, reported like any
// runtime error). The exchanges' entry points are in Runtime.cpp.
//
//===----------------------------------------------------------------------===//

#include "Descriptors.h"

#include <cblas.h>

#include <algorithm>


using braidrt::View;

extern "C" void _mlir_ciface_braidrt_linear_f32(braidrt_unranked_memref *input,
                                                braidrt_unranked_memref *weight,
                                                braidrt_unranked_memref *bias,
                                                braidrt_unranked_memref *output,
                                                int32_t activation) {
  const char *op = "linear";
  View<float> in = braidrt::viewOf<float>(input, 2, op, "the input");
  View<float> w = braidrt::viewOf<float>(weight, 2, op, "the weight");
  View<float> b = braidrt::viewOf<float>(bias, 1, op, "the bias");
  View<float> out = braidrt::viewOf<float>(output, 2, op, "the output");
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
  // By blocks of the batch's rows (each a whole row's dot products, so the
  // result is the unblocked one), moving the exchanges in flight along
  // between blocks.
  constexpr int64_t kBlocks = 4;
  int64_t rowBlock = (batch + kBlocks - 1) / kBlocks;
  if (outFeatures > 0 && inFeatures > 0)
    for (int64_t r = 0; r < batch; r += rowBlock) {
      braidrt_progress();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans,
                  std::min(rowBlock, batch - r), outFeatures, inFeatures, 1.0f,
                  in.data + r * in.strides[0], in.strides[0], w.data,
                  w.strides[0], 1.0f, out.data + r * out.strides[0],
                  out.strides[0]);
    }
  braidrt_progress();
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
