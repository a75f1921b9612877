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
#include "../LinearGrad.h"

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

/// D[m, n] = op(A)[m, k] * op(B)[k, n], column-major, f32, with `epilogue`
/// (and its bias) applied, on the legacy default stream, then that stream
/// synchronized (the runtime's other streams are non-blocking, so they
/// neither wait for it nor it for them).
static void matmul(bool transposeA, const float *a, int64_t lda,
                   bool transposeB, const float *b, int64_t ldb, float *d,
                   int64_t ldd, int64_t m, int64_t n, int64_t k,
                   cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT,
                   const float *bias = nullptr) {
  cublasLtMatmulDesc_t operation = nullptr;
  BRAIDRT_CUBLAS(
      cublasLtMatmulDescCreate(&operation, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t opA = transposeA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = transposeB ? CUBLAS_OP_T : CUBLAS_OP_N;
  BRAIDRT_CUBLAS(cublasLtMatmulDescSetAttribute(
      operation, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA)));
  BRAIDRT_CUBLAS(cublasLtMatmulDescSetAttribute(
      operation, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB)));
  BRAIDRT_CUBLAS(cublasLtMatmulDescSetAttribute(
      operation, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
  if (bias)
    BRAIDRT_CUBLAS(cublasLtMatmulDescSetAttribute(
        operation, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  cublasLtMatrixLayout_t layoutA = nullptr, layoutB = nullptr,
                         layoutD = nullptr;
  BRAIDRT_CUBLAS(cublasLtMatrixLayoutCreate(
      &layoutA, CUDA_R_32F, transposeA ? k : m, transposeA ? m : k, lda));
  BRAIDRT_CUBLAS(cublasLtMatrixLayoutCreate(
      &layoutB, CUDA_R_32F, transposeB ? n : k, transposeB ? k : n, ldb));
  BRAIDRT_CUBLAS(cublasLtMatrixLayoutCreate(&layoutD, CUDA_R_32F, m, n, ldd));
  float one = 1.0f, zero = 0.0f;
  BRAIDRT_CUBLAS(cublasLtMatmul(handle(), operation, &one, a, layoutA, b,
                                layoutB, &zero, d, layoutD, d, layoutD,
                                /*algo=*/nullptr, /*workspace=*/nullptr, 0,
                                /*stream=*/nullptr));
  BRAIDRT_CUBLAS(cublasLtMatrixLayoutDestroy(layoutD));
  BRAIDRT_CUBLAS(cublasLtMatrixLayoutDestroy(layoutB));
  BRAIDRT_CUBLAS(cublasLtMatrixLayoutDestroy(layoutA));
  BRAIDRT_CUBLAS(cublasLtMatmulDescDestroy(operation));
  // Only the GEMM's stream: a whole-context synchronize would also wait for
  // a collective started on the communication stream, which is meant to
  // run beside this GEMM.
  BRAIDRT_CU(driver().streamSynchronize(nullptr));
}

void braidrt_cuda_linear_f32(const float *input, const float *weight,
                             const float *bias, float *output, int64_t batch,
                             int64_t inFeatures, int64_t outFeatures,
                             int32_t activation) {
  if (batch == 0 || outFeatures == 0)
    return;
  if (activation != BRAIDRT_ACT_NONE && activation != BRAIDRT_ACT_RELU)
    braidrt_fail("braidrt_cuda_linear_f32 fuses no activation %d (only none "
                 "and relu; sigmoid is applied after it)",
                 static_cast<int>(activation));
  // Column-major views: the weight is [in, out] (transposed by the op), the
  // input [in, batch], the output [out, batch].
  matmul(/*transposeA=*/true, weight, inFeatures, /*transposeB=*/false, input,
         inFeatures, output, outFeatures, outFeatures, batch, inFeatures,
         activation == BRAIDRT_ACT_RELU ? CUBLASLT_EPILOGUE_RELU_BIAS
                                        : CUBLASLT_EPILOGUE_BIAS,
         bias);
}

void braidrt_cuda_linear_grad_gemms_f32(const float *input,
                                        const float *weight, const float *g,
                                        float *inputGrad, float *weightGrad,
                                        int64_t batch, int64_t inFeatures,
                                        int64_t outFeatures, int32_t parts) {
  bool inputPart = parts & BRAIDRT_GRAD_INPUT;
  bool weightPart = parts & BRAIDRT_GRAD_WEIGHT;
  if (batch == 0 || inFeatures == 0 || outFeatures == 0) {
    for (int64_t i = 0; inputPart && i < batch * inFeatures; ++i)
      inputGrad[i] = 0.0f;
    for (int64_t i = 0; weightPart && i < outFeatures * inFeatures; ++i)
      weightGrad[i] = 0.0f;
    return;
  }
  // dx = g w: column-major dx^T [in, batch] = w^T-view [in, out] (the
  // row-major weight as is) x g-view [out, batch].
  if (inputPart)
    matmul(false, weight, inFeatures, false, g, outFeatures, inputGrad,
           inFeatures, inFeatures, batch, outFeatures);
  // dw = g^T x: column-major dw^T [in, out] = x-view [in, batch] x
  // (g-view [out, batch])^T.
  if (weightPart)
    matmul(false, input, inFeatures, true, g, outFeatures, weightGrad,
           inFeatures, inFeatures, outFeatures, batch);
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
  braidrt_cuda_linear_f32(in.data, w.data, b.data, out.data, batch, inFeatures,
                          outFeatures, sigmoid ? BRAIDRT_ACT_NONE : activation);
  if (sigmoid)
    for (int64_t i = 0, n = batch * outFeatures; i < n; ++i)
      out.data[i] = 1.0f / (1.0f + std::exp(-out.data[i]));
}

/// The training step's dense-layer gradient GEMMs (braid-use-cuda-runtime
/// renames braidrt_linear_grad_gemms_f32 calls to it): both on cuBLASLt.
extern "C" void _mlir_ciface_braidrt_cuda_linear_grad_gemms_f32(
    braidrt_unranked_memref *inputRef, braidrt_unranked_memref *weightRef,
    braidrt_unranked_memref *gradRef, braidrt_unranked_memref *inputGradRef,
    braidrt_unranked_memref *weightGradRef, int32_t parts) {
  braidrt::LinearGradViews v =
      braidrt::linearGradViewsOf(inputRef, weightRef, gradRef, inputGradRef,
                                 weightGradRef, parts, "linear_grad (CUDA)");
  braidrt_cuda_linear_grad_gemms_f32(v.x.data, v.w.data, v.g.data, v.dx.data,
                                     v.dw.data, v.batch, v.in, v.out, parts);
}
