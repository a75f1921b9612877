//===- braidrt-cuda-selftest.cpp - The CUDA runtime, checked on a GPU -----===//
//
// This file implements braidrt-cuda-selftest: under mpirun, each rank takes
// its device, checks a cuBLASLt dense layer against the CPU runtime's and
// its gradients against their definition, an NCCL all_reduce and an uneven
// all_to_all against their definitions, and
// prints one line per check. `--kernel-error` instead loads a module whose
// kernel sets its braid_error record, which must fail the job with the CPU
// runtime's message. Without a driver or a device it fails with a located
// message, as every program on the CUDA runtime does.
//
//===----------------------------------------------------------------------===//

#include "braidrt/braidrt.h"
#include "braidrt/cuda.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" {
void *mgpuModuleLoadJIT(void *data, int optLevel);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedBytes, void *stream,
                      void **params, void **extra, size_t paramCount);
void *mgpuStreamCreate();
void mgpuStreamSynchronize(void *stream);
}

/// A kernel that reports index 7 outside a table of 5 rows, as
/// braid-gpu-error-records makes a kernel do.
static const char kErrorKernel[] = R"(
.version 8.0
.target sm_80
.address_size 64
.visible .global .align 8 .b8 braid_error[24];
.visible .entry report_index_error()
{
  .reg .b64 %rd<4>;
  mov.u64 %rd1, 1;
  st.global.u64 [braid_error], %rd1;
  mov.u64 %rd2, 7;
  st.global.u64 [braid_error+8], %rd2;
  mov.u64 %rd3, 5;
  st.global.u64 [braid_error+16], %rd3;
  ret;
}
)";

static bool close(float a, float b) {
  return std::fabs(a - b) <= 1e-4f * (1.0f + std::fabs(b));
}

int main(int argc, char **argv) {
  braidrt_init(&argc, &argv);
  int rank = static_cast<int>(braidrt_rank());
  int ranks = static_cast<int>(braidrt_world_size());
  int device = braidrt_cuda_device();
  std::printf("rank %d: device %d\n", rank, device);

  if (argc > 1 && std::strcmp(argv[1], "--kernel-error") == 0) {
    std::vector<char> ptx(kErrorKernel, kErrorKernel + sizeof(kErrorKernel));
    void *module = mgpuModuleLoadJIT(ptx.data(), 2);
    void *kernel = mgpuModuleGetFunction(module, "report_index_error");
    void *stream = mgpuStreamCreate();
    mgpuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, stream, nullptr, nullptr, 0);
    mgpuStreamSynchronize(stream); // Fails the job: index 7 of 5 rows.
    std::printf("rank %d: kernel error: not reported\n", rank);
    return 1;
  }

  if (argc > 1 && std::strcmp(argv[1], "--double-free") == 0) {
    void *buffer = braidrt_cuda_alloc(1024);
    braidrt_cuda_free(buffer);
    braidrt_cuda_free(buffer); // Fails the job: already free (cached).
    std::printf("rank %d: double free: not reported\n", rank);
    return 1;
  }

  // A dense layer with relu: cuBLASLt against the CPU runtime's BLAS.
  const int64_t batch = 33, in = 17, out = 9;
  auto *input = static_cast<float *>(braidrt_cuda_alloc(batch * in * 4));
  auto *weight = static_cast<float *>(braidrt_cuda_alloc(out * in * 4));
  auto *bias = static_cast<float *>(braidrt_cuda_alloc(out * 4));
  auto *output = static_cast<float *>(braidrt_cuda_alloc(batch * out * 4));
  for (int64_t i = 0; i < batch * in; ++i)
    input[i] = std::sin(0.37f * i);
  for (int64_t i = 0; i < out * in; ++i)
    weight[i] = std::cos(0.11f * i);
  for (int64_t i = 0; i < out; ++i)
    bias[i] = 0.1f * i - 0.4f;
  braidrt_cuda_linear_f32(input, weight, bias, output, batch, in, out,
                          BRAIDRT_ACT_RELU);
  std::vector<float> expected(batch * out);
  braidrt_linear(input, weight, bias, expected.data(), batch, in, out,
                 BRAIDRT_ACT_RELU);
  int wrong = 0;
  for (int64_t i = 0; i < batch * out; ++i)
    wrong += !close(output[i], expected[i]);
  std::printf("rank %d: cuBLASLt linear relu %lldx%lld->%lld: %s\n", rank,
              static_cast<long long>(batch), static_cast<long long>(in),
              static_cast<long long>(out), wrong ? "WRONG" : "ok");

  // The dense layer's gradient GEMMs: cuBLASLt against the definition,
  // computed here in double, on a pre-activation gradient g.
  auto *g = static_cast<float *>(braidrt_cuda_alloc(batch * out * 4));
  auto *inputGrad = static_cast<float *>(braidrt_cuda_alloc(batch * in * 4));
  auto *weightGrad = static_cast<float *>(braidrt_cuda_alloc(out * in * 4));
  for (int64_t i = 0; i < batch * out; ++i)
    g[i] = std::cos(0.13f * i);
  braidrt_cuda_linear_grad_gemms_f32(input, weight, g, inputGrad, weightGrad,
                                     batch, in, out, BRAIDRT_GRAD_BOTH);
  int gradWrong = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < in; ++i) {
      double sum = 0;
      for (int64_t o = 0; o < out; ++o)
        sum += double(g[b * out + o]) * weight[o * in + i];
      gradWrong += !close(inputGrad[b * in + i], float(sum));
    }
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i) {
      double sum = 0;
      for (int64_t b = 0; b < batch; ++b)
        sum += double(g[b * out + o]) * input[b * in + i];
      gradWrong += !close(weightGrad[o * in + i], float(sum));
    }
  std::printf("rank %d: cuBLASLt linear gradient GEMMs: %s\n", rank,
              gradWrong ? "WRONG" : "ok");

  // all_reduce: every rank adds rank + i.
  const int64_t count = 1000;
  auto *sendBuffer = static_cast<float *>(braidrt_cuda_alloc(count * 4));
  auto *receiveBuffer = static_cast<float *>(braidrt_cuda_alloc(count * 4));
  for (int64_t i = 0; i < count; ++i)
    sendBuffer[i] = static_cast<float>(rank + i);
  braidrt_cuda_all_reduce_f32(sendBuffer, receiveBuffer, count);
  int reduceWrong = 0;
  for (int64_t i = 0; i < count; ++i)
    reduceWrong +=
        !close(receiveBuffer[i], ranks * (ranks - 1) / 2.0f + ranks * float(i));
  std::printf("rank %d: NCCL all_reduce of %lld floats on %d ranks: %s\n", rank,
              static_cast<long long>(count), ranks,
              reduceWrong ? "WRONG" : "ok");

  // Uneven all_to_all: rank r sends 2r + p + 1 values r * 100 + p to rank
  // p, so it receives 2p + r + 1 from p: what r sends p and receives from p
  // differ, and counts read the wrong way round would show.
  std::vector<int64_t> sendCounts(ranks), recvCounts(ranks);
  int64_t sent = 0, received = 0;
  for (int p = 0; p < ranks; ++p) {
    sendCounts[p] = 2 * rank + p + 1;
    recvCounts[p] = 2 * p + rank + 1;
    sent += sendCounts[p];
    received += recvCounts[p];
  }
  auto *a2aIn = static_cast<float *>(braidrt_cuda_alloc(sent * 4));
  auto *a2aOut = static_cast<float *>(braidrt_cuda_alloc(received * 4));
  for (int p = 0, at = 0; p < ranks; ++p)
    for (int64_t k = 0; k < sendCounts[p]; ++k)
      a2aIn[at++] = static_cast<float>(rank * 100 + p);
  braidrt_cuda_all_to_all_f32(a2aIn, sendCounts.data(), a2aOut,
                              recvCounts.data());
  int a2aWrong = 0;
  for (int p = 0, at = 0; p < ranks; ++p)
    for (int64_t k = 0; k < recvCounts[p]; ++k)
      a2aWrong += a2aOut[at++] != static_cast<float>(p * 100 + rank);
  std::printf("rank %d: NCCL uneven all_to_all on %d ranks: %s\n", rank, ranks,
              a2aWrong ? "WRONG" : "ok");

  // The cache: a freed buffer serves the next allocation of a close size,
  // with no collective outstanding (all of the above were waited for).
  void *first = braidrt_cuda_alloc(size_t(3) << 20);
  braidrt_cuda_free(first);
  int64_t reusedBefore = braidrt_cuda_reused_blocks();
  void *second = braidrt_cuda_alloc((size_t(3) << 20) - 100);
  const char *caching = std::getenv("BRAIDRT_CUDA_CACHING");
  bool cacheOff = caching && std::strcmp(caching, "0") == 0;
  bool cacheWrong = !cacheOff && (second != first ||
                                  braidrt_cuda_reused_blocks() != reusedBefore + 1);
  std::printf("rank %d: a freed buffer reused: %s\n", rank,
              cacheOff ? "off (BRAIDRT_CUDA_CACHING=0)" : cacheWrong ? "WRONG" : "ok");
  braidrt_cuda_free(second);

  braidrt_cuda_nccl_finalize();
  braidrt_finalize();
  return wrong || gradWrong || reduceWrong || a2aWrong || cacheWrong ? 1 : 0;
}
