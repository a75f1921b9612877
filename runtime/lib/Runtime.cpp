//===- Runtime.cpp - The Braid runtime over MPI and BLAS ------------------===//
//
// This file implements the C interface of braidrt.h. Every collective is
// started non-blocking and completed by a wait that polls with a deadline,
// so a rank whose peer never arrives aborts the job with a message instead
// of hanging.
//
//===----------------------------------------------------------------------===//

#include "braidrt/braidrt.h"

#include <cblas.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

struct braidrt_request {
  MPI_Request request;
  const char *what;
};

namespace {
int worldRank = 0, worldSize = 1;
bool initializedHere = false;
double timeoutSeconds = 300;

MPI_Datatype mpiType(braidrt_dtype dtype) {
  switch (dtype) {
  case BRAIDRT_F32:
    return MPI_FLOAT;
  case BRAIDRT_F64:
    return MPI_DOUBLE;
  case BRAIDRT_I64:
    return MPI_INT64_T;
  }
  braidrt_fail("unknown element type %d", int(dtype));
}

MPI_Op mpiOp(braidrt_reduction reduction) {
  switch (reduction) {
  case BRAIDRT_SUM:
    return MPI_SUM;
  case BRAIDRT_MAX:
    return MPI_MAX;
  case BRAIDRT_MIN:
    return MPI_MIN;
  }
  braidrt_fail("unknown reduction %d", int(reduction));
}

size_t elementSize(braidrt_dtype dtype) {
  return dtype == BRAIDRT_F32 ? sizeof(float) : sizeof(double);
}

int checkedCount(int64_t count, const char *what) {
  if (count < 0 || count > std::numeric_limits<int>::max())
    braidrt_fail("%s: %lld elements are outside what MPI can count", what,
                 static_cast<long long>(count));
  return static_cast<int>(count);
}

void requireInitialized(const char *what) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    std::fprintf(stderr, "braidrt: error: %s before braidrt_init\n", what);
    std::exit(1);
  }
}

/// Completes `request`, aborting after the timeout.
void waitFor(MPI_Request &request, const char *what) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(timeoutSeconds);
  int done = 0;
  for (int polls = 0;; ++polls) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done)
      return;
    if (std::chrono::steady_clock::now() > deadline)
      braidrt_fail("%s did not complete within %g s: another rank failed or "
                   "did not reach it (BRAIDRT_TIMEOUT_S)",
                   what, timeoutSeconds);
    if (polls > 1000)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}
} // namespace

extern "C" {

void braidrt_init(int *argc, char ***argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    MPI_Init(argc, argv);
    initializedHere = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  if (const char *timeout = std::getenv("BRAIDRT_TIMEOUT_S")) {
    char *end = nullptr;
    double value = std::strtod(timeout, &end);
    if (end == timeout || *end != '\0' || !(value > 0))
      braidrt_fail("BRAIDRT_TIMEOUT_S must be a positive number of seconds, "
                   "got '%s'",
                   timeout);
    timeoutSeconds = value;
  }
}

void braidrt_finalize(void) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (initializedHere && !finalized)
    MPI_Finalize();
}

int64_t braidrt_rank(void) { return worldRank; }
int64_t braidrt_world_size(void) { return worldSize; }

void braidrt_fail(const char *format, ...) {
  // Compiled kernels may fail on several OpenMP threads at once: the first
  // reports and ends the process, the others wait for that.
  static std::atomic<bool> failing{false};
  if (failing.exchange(true))
    for (;;)
      std::this_thread::sleep_for(std::chrono::seconds(1));
  char message[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  std::fprintf(stderr, "braidrt: rank %d: error: %s\n", worldRank, message);
  std::fflush(stderr);
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized)
    MPI_Abort(MPI_COMM_WORLD, 1);
  // No exit handlers: other threads may still be inside OpenMP regions.
  std::_Exit(1);
}

void braidrt_all_reduce(const void *input, void *output, int64_t count,
                        braidrt_dtype dtype, braidrt_reduction reduction) {
  braidrt_wait(braidrt_all_reduce_start(input, output, count, dtype, reduction));
}

braidrt_request *braidrt_all_reduce_start(const void *input, void *output,
                                          int64_t count, braidrt_dtype dtype,
                                          braidrt_reduction reduction) {
  requireInitialized("all_reduce");
  auto *request = new braidrt_request{MPI_REQUEST_NULL, "all_reduce"};
  MPI_Iallreduce(input == output ? MPI_IN_PLACE : input, output,
                 checkedCount(count, "all_reduce"), mpiType(dtype),
                 mpiOp(reduction), MPI_COMM_WORLD, &request->request);
  return request;
}

void braidrt_wait(braidrt_request *request) {
  if (!request)
    braidrt_fail("wait on a null request");
  waitFor(request->request, request->what);
  delete request;
}

void braidrt_reduce_scatter(const void *input, void *output, int64_t count,
                            braidrt_dtype dtype, braidrt_reduction reduction) {
  requireInitialized("reduce_scatter");
  MPI_Request request;
  MPI_Ireduce_scatter_block(input, output, checkedCount(count, "reduce_scatter"),
                            mpiType(dtype), mpiOp(reduction), MPI_COMM_WORLD,
                            &request);
  waitFor(request, "reduce_scatter");
}

void braidrt_all_gather(const void *input, void *output, int64_t count,
                        braidrt_dtype dtype) {
  requireInitialized("all_gather");
  MPI_Request request;
  int n = checkedCount(count, "all_gather");
  MPI_Iallgather(input, n, mpiType(dtype), output, n, mpiType(dtype),
                 MPI_COMM_WORLD, &request);
  waitFor(request, "all_gather");
}

int64_t braidrt_all_to_all_v(const void *input, const int64_t *send_counts,
                             void **output, int64_t *recv_counts,
                             braidrt_dtype dtype) {
  requireInitialized("all_to_all_v");
  for (int r = 0; r < worldSize; ++r)
    if (send_counts[r] < 0)
      braidrt_fail("all_to_all_v: a negative count for rank %d", r);
  MPI_Request request;
  MPI_Ialltoall(send_counts, 1, MPI_INT64_T, recv_counts, 1, MPI_INT64_T,
                MPI_COMM_WORLD, &request);
  waitFor(request, "all_to_all_v (counts)");
  std::vector<int> sendCounts(worldSize), recvCounts(worldSize),
      sendOffsets(worldSize), recvOffsets(worldSize);
  int64_t sent = 0, received = 0;
  for (int r = 0; r < worldSize; ++r) {
    sendOffsets[r] = checkedCount(sent, "all_to_all_v");
    recvOffsets[r] = checkedCount(received, "all_to_all_v");
    sendCounts[r] = checkedCount(send_counts[r], "all_to_all_v");
    recvCounts[r] = checkedCount(recv_counts[r], "all_to_all_v");
    sent += send_counts[r];
    received += recv_counts[r];
  }
  *output = std::malloc(std::max<size_t>(1, received * elementSize(dtype)));
  if (!*output)
    braidrt_fail("all_to_all_v: cannot allocate %lld elements",
                 static_cast<long long>(received));
  MPI_Ialltoallv(input, sendCounts.data(), sendOffsets.data(), mpiType(dtype),
                 *output, recvCounts.data(), recvOffsets.data(), mpiType(dtype),
                 MPI_COMM_WORLD, &request);
  waitFor(request, "all_to_all_v");
  return received;
}

void braidrt_free(void *buffer) { std::free(buffer); }

void braidrt_linear(const float *input, const float *weight, const float *bias,
                    float *output, int64_t batch, int64_t in_features,
                    int64_t out_features, braidrt_activation activation) {
  for (int64_t b = 0; b < batch; ++b)
    std::memcpy(output + b * out_features, bias, out_features * sizeof(float));
  if (batch > 0 && out_features > 0)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, batch, out_features,
                in_features, 1.0f, input, in_features, weight, in_features,
                1.0f, output, out_features);
  int64_t n = batch * out_features;
  if (activation == BRAIDRT_ACT_RELU)
    for (int64_t i = 0; i < n; ++i)
      output[i] = std::max(output[i], 0.0f);
  else if (activation == BRAIDRT_ACT_SIGMOID)
    for (int64_t i = 0; i < n; ++i)
      output[i] = 1.0f / (1.0f + std::exp(-output[i]));
}

void braidrt_embedding_bag(const char *table_name, const float *table,
                           int64_t rows, int64_t dim, const int64_t *indices,
                           const int64_t *offsets, int64_t bags,
                           braidrt_pooling pooling, float *output) {
  if (offsets[0] != 0)
    braidrt_fail("table '%s': offsets must start at 0, got %lld", table_name,
                 static_cast<long long>(offsets[0]));
  for (int64_t b = 0; b < bags; ++b) {
    int64_t begin = offsets[b], end = offsets[b + 1];
    if (end < begin)
      braidrt_fail("table '%s': offsets decrease at bag %lld", table_name,
                   static_cast<long long>(b));
    float *row = output + b * dim;
    float init = pooling == BRAIDRT_POOL_MAX && end > begin
                     ? -std::numeric_limits<float>::infinity()
                     : 0.0f;
    std::fill(row, row + dim, init);
    for (int64_t i = begin; i < end; ++i) {
      int64_t index = indices[i];
      if (index < 0 || index >= rows)
        braidrt_fail("table '%s': index %lld of bag %lld is outside its %lld "
                     "rows",
                     table_name, static_cast<long long>(index),
                     static_cast<long long>(b), static_cast<long long>(rows));
      const float *source = table + index * dim;
      if (pooling == BRAIDRT_POOL_MAX)
        for (int64_t c = 0; c < dim; ++c)
          row[c] = std::max(row[c], source[c]);
      else
        for (int64_t c = 0; c < dim; ++c)
          row[c] += source[c];
    }
    if (pooling == BRAIDRT_POOL_MEAN && end > begin)
      for (int64_t c = 0; c < dim; ++c)
        row[c] /= static_cast<float>(end - begin);
  }
}

void braidrt_index_error(int64_t index, int64_t rows) {
  braidrt_fail("index %lld is outside its table of %lld rows",
               static_cast<long long>(index), static_cast<long long>(rows));
}

double braidrt_time_ms(void) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

} // extern "C"
