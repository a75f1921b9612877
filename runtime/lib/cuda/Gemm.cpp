//===- Gemm.cpp - Dense layers through cuBLASLt ---------------------------===//
//
// This file implements the CUDA runtime's dense layer: one cuBLASLt matmul
// with the bias (and relu) fused into its epilogue. Row-major activations
// and a [out, in] weight are, read column-major, a [in, batch] matrix and an
// [in, out] one, so output^T = weight * input^T needs no transposed copy:
// A = weight (transposed op), B = input, D = output, all column-major.
//
//===----------------------------------------------------------------------===//

#include "CudaCheck.h"

#include "braidrt/braidrt.h"
#include "braidrt/cuda.h"

#include "../Descriptors.h"

#include <cublasLt.h>

#include <cmath>
#include <cstdlib>
#include <mutex>

using namespace braidrt::cuda;

[[noreturn]] static void failCublas(cublasStatus_t status, const char *call,
                                    const char *file, int line) {
  braidrt_fail("%s failed at %s:%d: %s: %s", call, file, line,
               cublasLtGetStatusName(status), cublasLtGetStatusString(status));
  std::abort();
}

#define BRAIDRT_CUBLAS(call)                                                   \
  do {                                                                         \
    cublasStatus_t braidrtStatus = (call);                                     \
    if (braidrtStatus != CUBLAS_STATUS_SUCCESS)                                \
      failCublas(braidrtStatus, #call, __FILE__, __LINE__);                    \
  } while (0)

static cublasLtHandle_t handle() {
  static cublasLtHandle_t instance = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    driver();
    BRAIDRT_CUBLAS(cublasLtCreate(&instance));
  });
  return instance;
}

void braidrt_cuda_linear_f32(const float *input, const float *weight,
                             const float *bias, float *output, int64_t batch,
                             int64_t inFeatures, int64_t outFeatures,
                             int32_t activation) {
  if (batch == 0 || outFeatures == 0)
    return;
  if (activation != BRAIDRT_ACT_NONE && activation != BRAIDRT_ACT_RELU)
    braidrt_fail("braidrt_cuda_linear_f32 fuses no activation %d (only none "
                 "and relu; sigmoid is a kernel of its own)",
                 static_cast<int>(activation));
  cublasLtMatmulDesc_t operation = nullptr;
  BRAIDRT_CUBLAS(
      cublasLtMatmulDescCreate(&operation, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t transposed = CUBLAS_OP_T;
  BRAIDRT_CUBLAS(cublasLtMatmulDescSetAttribute(
      operation, CUBLASLT_MATMUL_DESC_TRANSA, &transposed,
      sizeof(transposed)));
  cublasLtEpilogue_t epilogue = activation == BRAIDRT_ACT_RELU
                                    ? CUBLASLT_EPILOGUE_RELU_BIAS
                                    : CUBLASLT_EPILOGUE_BIAS;
  BRAIDRT_CUBLAS(cublasLtMatmulDescSetAttribute(
      operation, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
  BRAIDRT_CUBLAS(cublasLtMatmulDescSetAttribute(
      operation, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  // Column-major views: the weight is [in, out] (transposed by the op), the
  // input [in, batch], the output [out, batch].
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  BRAIDRT_CUBLAS(cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, inFeatures,
                                            outFeatures, inFeatures));
  BRAIDRT_CUBLAS(cublasLtMatrixLayoutCreate(&b, CUDA_R_32F, inFeatures, batch,
                                            inFeatures));
  BRAIDRT_CUBLAS(cublasLtMatrixLayoutCreate(&d, CUDA_R_32F, outFeatures, batch,
                                            outFeatures));
  float one = 1.0f, zero = 0.0f;
  BRAIDRT_CUBLAS(cublasLtMatmul(handle(), operation, &one, weight, a, input, b,
                                &zero, output, d, output, d,
                                /*algo=*/nullptr, /*workspace=*/nullptr, 0,
                                /*stream=*/nullptr));
  BRAIDRT_CUBLAS(cublasLtMatrixLayoutDestroy(d));
  BRAIDRT_CUBLAS(cublasLtMatrixLayoutDestroy(b));
  BRAIDRT_CUBLAS(cublasLtMatrixLayoutDestroy(a));
  BRAIDRT_CUBLAS(cublasLtMatmulDescDestroy(operation));
  BRAIDRT_CU(driver().ctxSynchronize());
}

/// The compiled programs' entry (braid-use-cuda-runtime renames their
/// braidrt_linear_f32 calls to it): the CPU runtime's arguments, the GEMM
/// and bias (and relu) on cuBLASLt. A sigmoid (the model's last layer, one
/// column) is applied on the host after it, on managed memory.
extern "C" void _mlir_ciface_braidrt_cuda_linear_f32(
    braidrt_unranked_memref *input, braidrt_unranked_memref *weight,
    braidrt_unranked_memref *bias, braidrt_unranked_memref *output,
    int32_t activation) {
  const char *op = "linear (CUDA)";
  auto in = braidrt::viewOf<float>(input, 2, op, "the input");
  auto w = braidrt::viewOf<float>(weight, 2, op, "the weight");
  auto b = braidrt::viewOf<float>(bias, 1, op, "the bias");
  auto out = braidrt::viewOf<float>(output, 2, op, "the output");
  int64_t batch = in.sizes[0], inFeatures = in.sizes[1],
          outFeatures = w.sizes[0];
  if (w.sizes[1] != inFeatures || b.sizes[0] != outFeatures ||
      out.sizes[0] != batch || out.sizes[1] != outFeatures)
    braidrt_fail("%s: shapes [%lld, %lld] x [%lld, %lld]^T + [%lld] -> "
                 "[%lld, %lld] do not agree",
                 op, (long long)batch, (long long)inFeatures,
                 (long long)w.sizes[0], (long long)w.sizes[1],
                 (long long)b.sizes[0], (long long)out.sizes[0],
                 (long long)out.sizes[1]);
  bool sigmoid = activation == BRAIDRT_ACT_SIGMOID;
  braidrt_cuda_linear_f32(in.data, w.data, b.data, out.data, batch,
                          inFeatures, outFeatures,
                          sigmoid ? BRAIDRT_ACT_NONE : activation);
  if (sigmoid)
    for (int64_t i = 0, n = batch * outFeatures; i < n; ++i)
      out.data[i] = 1.0f / (1.0f + std::exp(-out.data[i]));
}
