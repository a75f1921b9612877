//===- Runtime.cpp - The Braid runtime over MPI and BLAS ------------------===//
//
// This file implements the C interface of braidrt.h. Every collective is
// started non-blocking and completed by a wait that polls with a deadline,
// so a rank whose peer never arrives aborts the job with a message instead
// of hanging.
//
//===----------------------------------------------------------------------===//

#include "Exchanges.h"

#include "braidrt/braidrt.h"
#include "braidrt/compiled.h"

#include <cblas.h>
#include <mpi.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
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

/// max or min of `in` into `inout`, element-wise, NaN when either is NaN
/// (PyTorch's max pooling and the reference semantics; MPI_MAX leaves NaN to
/// the operand order).
template <bool isMax, typename T> void reduceExtremum(void *in, void *inout, int count) {
  const T *a = static_cast<const T *>(in);
  T *b = static_cast<T *>(inout);
  for (int i = 0; i < count; ++i) {
    if (a[i] != a[i] || b[i] != b[i])
      b[i] = a[i] + b[i];
    else if (isMax ? a[i] > b[i] : a[i] < b[i])
      b[i] = a[i];
  }
}

template <bool isMax>
void extremumOp(void *in, void *inout, int *count, MPI_Datatype *type) {
  if (*type == MPI_FLOAT)
    reduceExtremum<isMax, float>(in, inout, *count);
  else if (*type == MPI_DOUBLE)
    reduceExtremum<isMax, double>(in, inout, *count);
  else
    reduceExtremum<isMax, int64_t>(in, inout, *count);
}

MPI_Op mpiOp(braidrt_reduction reduction) {
  static MPI_Op maxOp = MPI_OP_NULL, minOp = MPI_OP_NULL;
  switch (reduction) {
  case BRAIDRT_SUM:
    return MPI_SUM;
  case BRAIDRT_MAX:
    if (maxOp == MPI_OP_NULL)
      MPI_Op_create(extremumOp<true>, /*commute=*/1, &maxOp);
    return maxOp;
  case BRAIDRT_MIN:
    if (minOp == MPI_OP_NULL)
      MPI_Op_create(extremumOp<false>, /*commute=*/1, &minOp);
    return minOp;
  }
  braidrt_fail("unknown reduction %d", int(reduction));
}

size_t elementSize(braidrt_dtype dtype) {
  return dtype == BRAIDRT_F32 ? sizeof(float) : sizeof(double);
}

} // namespace

namespace braidrt::detail {
int rankCount() { return ::worldSize; }

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

/// Milliseconds this rank has spent in waitFor: blocked on its
/// communication, waiting for its data to move and for its peers to come;
/// in all, and by what it waited for (the few kinds the runtime names).
double waitedMs = 0;
std::vector<std::pair<std::string, double>> waitedMsByKind;

void addWaited(const char *what, double ms) {
  waitedMs += ms;
  for (auto &[kind, total] : waitedMsByKind)
    if (kind == what) {
      total += ms;
      return;
    }
  waitedMsByKind.emplace_back(what, ms);
}

/// Completes `request`, aborting after the timeout.
void waitFor(MPI_Request &request, const char *what) {
  auto start = std::chrono::steady_clock::now();
  struct AddWaited {
    std::chrono::steady_clock::time_point start;
    const char *what;
    ~AddWaited() {
      addWaited(what, std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count());
    }
  } waited{start, what};
  auto deadline = start + std::chrono::duration<double>(timeoutSeconds);
  // Poll, yielding the core (to another rank, when there are more ranks
  // than cores) between tests; only a wait past 10 ms, a rank far behind or
  // gone, sleeps between tests. Sleeping sooner added up to a timer tick to
  // every wait behind a slower rank.
  auto patience = start + std::chrono::milliseconds(10);
  int done = 0;
  for (int polls = 0;; ++polls) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done)
      return;
    auto now = std::chrono::steady_clock::now();
    if (now > deadline)
      braidrt_fail("%s did not complete within %g s: another rank failed or "
                   "did not reach it (BRAIDRT_TIMEOUT_S)",
                   what, timeoutSeconds);
    if (now > patience)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    else if (polls > 100)
      std::this_thread::yield();
  }
}
} // namespace braidrt::detail

using namespace braidrt::detail;

extern "C" {

void braidrt_init(int *argc, char ***argv) {
#ifdef __GLIBC__
  // A compiled program mallocs its intermediate tensors on every call and
  // frees them on return. glibc serves blocks above its mmap threshold with
  // fresh mappings, which the next call faults in and zeroes again: about
  // 1,450 page faults per forward call of bench/cpu_vs_torch's model, some
  // milliseconds. Serving them from the heap (blocks up to 32 MiB, glibc's
  // largest threshold) and never trimming it keeps their pages between
  // calls.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
#endif
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    MPI_Init(argc, argv);
    initializedHere = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  initDeferredExchanges();
  if (const char *timeout = std::getenv("BRAIDRT_TIMEOUT_S")) {
    char *end = nullptr;
    double value = std::strtod(timeout, &end);
    // A week at most: an infinite or NaN timeout would let a stopped rank
    // hang the job.
    if (end == timeout || *end != '\0' || !(value > 0) || !(value <= 604800))
      braidrt_fail("BRAIDRT_TIMEOUT_S must be a number of seconds in (0, "
                   "604800], got '%s'",
                   timeout);
    timeoutSeconds = value;
  }
}

void braidrt_finalize(void) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    finalizeDeferredExchanges();
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
  if (initialized && !finalized) {
    // mpirun forwards a rank's stderr through a pipe and tears the job down
    // as soon as one rank aborts: when every rank fails at once, the lines
    // still in the pipes were seen lost (CI, cuda_no_device.test). A moment
    // before aborting lets mpirun read this rank's message.
    if (worldSize > 1)
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
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

void braidrt_barrier(void) {
  requireInitialized("barrier");
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  waitFor(request, "barrier");
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
      output[i] = output[i] < 0 ? 0.0f : output[i]; // relu(NaN) is NaN
  else if (activation == BRAIDRT_ACT_SIGMOID)
    for (int64_t i = 0; i < n; ++i)
      output[i] = 1.0f / (1.0f + std::exp(-output[i]));
}

void braidrt_index_error(int64_t index, int64_t rows) {
  braidrt_fail("index %lld is outside its table of %lld rows",
               static_cast<long long>(index), static_cast<long long>(rows));
}

void braidrt_bags_error(int64_t bags, int64_t slots) {
  braidrt_fail("%lld local bags, but bags_per_rank is only %lld",
               static_cast<long long>(bags), static_cast<long long>(slots));
}

void braidrt_rows_error(int64_t rows, int64_t expected) {
  braidrt_fail("interaction: a feature has %lld rows where the dense "
               "features have %lld",
               static_cast<long long>(rows), static_cast<long long>(expected));
}

void braidrt_step_error(int64_t step) {
  braidrt_fail("dense_update: adam needs a step number from 1, got %lld",
               static_cast<long long>(step));
}

void braidrt_offsets_error(int64_t entry, int64_t value) {
  if (entry < 0)
    braidrt_fail("bag offsets have no entries: they need at least one (0), "
                 "and one more per bag");
  braidrt_fail("bag offsets entry %lld is %lld: offsets must start at 0, "
               "never decrease and end at the number of indices",
               static_cast<long long>(entry), static_cast<long long>(value));
}

void braidrt_weights_error(int64_t weights, int64_t indices) {
  braidrt_fail("per-sample weights have %lld entries but there are %lld "
               "indices",
               static_cast<long long>(weights), static_cast<long long>(indices));
}

double braidrt_comm_wait_ms(void) { return waitedMs; }

double braidrt_comm_wait_ms_of(const char *what) {
  for (const auto &[kind, total] : waitedMsByKind)
    if (what && kind == what)
      return total;
  return 0;
}

double braidrt_time_ms(void) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The op timers: each op's start and its total, by index, and the op that
// began and has not ended (-1 for none). A program's ops run one after the
// other on the calling thread.
static std::vector<double> opStartMs, opTotalMs;
static int64_t openOp = -1;

void braidrt_op_begin(int64_t index) {
  // A program has as many timers as ops; 2^20 is far past any.
  if (index < 0 || index >= (int64_t(1) << 20))
    braidrt_fail("braidrt_op_begin: op index %lld is out of range",
                 (long long)index);
  if (size_t(index) >= opStartMs.size()) {
    opStartMs.resize(size_t(index) + 1, 0);
    opTotalMs.resize(size_t(index) + 1, 0);
  }
  opStartMs[index] = braidrt_time_ms();
  openOp = index;
}

void braidrt_op_end(int64_t index) {
  if (index < 0 || size_t(index) >= opStartMs.size())
    braidrt_fail("braidrt_op_end: op %lld never began", (long long)index);
  opTotalMs[index] += braidrt_time_ms() - opStartMs[index];
  openOp = -1;
}

void braidrt_op_close(void) {
  if (openOp >= 0)
    braidrt_op_end(openOp);
}

int64_t braidrt_op_count(void) { return int64_t(opTotalMs.size()); }

double braidrt_op_ms(int64_t index) {
  return index >= 0 && size_t(index) < opTotalMs.size() ? opTotalMs[index] : 0;
}

} // extern "C"

//===----------------------------------------------------------------------===//
// Exchanges compiled programs call (compiled.h)
//===----------------------------------------------------------------------===//

namespace braidrt::detail {
Rows rowsOf(const braidrt_unranked_memref *memref, size_t elementBytes,
            const char *what) {
  if (!memref || memref->rank < 1)
    braidrt_fail("%s: expects a buffer with at least one dimension", what);
  auto *words = static_cast<int64_t *>(memref->descriptor);
  int64_t rank = memref->rank;
  Rows result;
  result.data = reinterpret_cast<char *>(words[1]) + words[2] * elementBytes;
  result.rows = words[3];
  int64_t inner = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (words[3 + rank + d] != inner && words[3 + d] > 1)
      braidrt_fail("%s: expects a row-major buffer", what);
    if (d > 0)
      inner *= words[3 + d];
  }
  result.rowBytes = inner * int64_t(elementBytes);
  return result;
}

const int64_t *countsOf(const braidrt_unranked_memref *memref, const char *what) {
  Rows rows = rowsOf(memref, sizeof(int64_t), what);
  if (rows.rows != worldSize)
    braidrt_fail("%s: %lld counts for %d ranks", what,
                 static_cast<long long>(rows.rows), worldSize);
  return reinterpret_cast<const int64_t *>(rows.data);
}
} // namespace braidrt::detail

namespace {

/// An exchange in flight: MPI needs its count arrays until it completes.
struct PendingExchange {
  MPI_Request request = MPI_REQUEST_NULL;
  std::vector<int> sendCounts, recvCounts, sendOffsets, recvOffsets;
  const char *what = "";
};

/// The exchanges started and not yet waited for, in start order, which
/// braidrt_progress tests.
std::vector<PendingExchange *> inFlight;

/// `pending`, recorded as in flight.
PendingExchange *track(PendingExchange *pending) {
  inFlight.push_back(pending);
  return pending;
}

/// Starts moving rows: rank r sends sendRows[j] rows to j, receives
/// recvRows[i] from i.
PendingExchange *startRows(const Rows &in, const Rows &out,
                           const int64_t *sendRows, const int64_t *recvRows,
                           const char *what) {
  auto *pending = new PendingExchange;
  pending->what = what;
  pending->sendCounts.resize(worldSize);
  pending->recvCounts.resize(worldSize);
  pending->sendOffsets.resize(worldSize);
  pending->recvOffsets.resize(worldSize);
  int64_t sent = 0, received = 0;
  for (int r = 0; r < worldSize; ++r) {
    pending->sendOffsets[r] = checkedCount(sent * in.rowBytes, what);
    pending->recvOffsets[r] = checkedCount(received * out.rowBytes, what);
    pending->sendCounts[r] = checkedCount(sendRows[r] * in.rowBytes, what);
    pending->recvCounts[r] = checkedCount(recvRows[r] * out.rowBytes, what);
    sent += sendRows[r];
    received += recvRows[r];
  }
  if (sent != in.rows || received != out.rows)
    braidrt_fail("%s: sends %lld of %lld rows and receives %lld into %lld",
                 what, (long long)sent, (long long)in.rows, (long long)received,
                 (long long)out.rows);
  MPI_Ialltoallv(in.data, pending->sendCounts.data(),
                 pending->sendOffsets.data(), MPI_BYTE, out.data,
                 pending->recvCounts.data(), pending->recvOffsets.data(),
                 MPI_BYTE, MPI_COMM_WORLD, &pending->request);
  return track(pending);
}

void finish(PendingExchange *pending) {
  waitFor(pending->request, pending->what);
  inFlight.erase(std::remove(inFlight.begin(), inFlight.end(), pending),
                 inFlight.end());
  delete pending;
}

PendingExchange *startAllToAllRows(braidrt_unranked_memref *in,
                                   braidrt_unranked_memref *out,
                                   braidrt_unranked_memref *split,
                                   size_t elementBytes) {
  const char *what = "all_to_all";
  requireInitialized(what);
  Rows input = rowsOf(in, elementBytes, what),
       output = rowsOf(out, elementBytes, what);
  Rows matrix = rowsOf(split, sizeof(int64_t), what);
  if (matrix.rows != int64_t(worldSize) * worldSize)
    braidrt_fail("%s: split sizes for %lld ranks, the world has %d", what,
                 (long long)matrix.rows, worldSize);
  auto *sizes = reinterpret_cast<const int64_t *>(matrix.data);
  std::vector<int64_t> recvRows(worldSize);
  for (int i = 0; i < worldSize; ++i)
    recvRows[i] = sizes[i * worldSize + worldRank];
  return startRows(input, output, sizes + int64_t(worldRank) * worldSize,
                   recvRows.data(), what);
}

void allToAllRows(braidrt_unranked_memref *in, braidrt_unranked_memref *out,
                  braidrt_unranked_memref *split, size_t elementBytes) {
  finish(startAllToAllRows(in, out, split, elementBytes));
}

PendingExchange *startAllToAllVRows(braidrt_unranked_memref *in,
                                    braidrt_unranked_memref *sendCounts,
                                    braidrt_unranked_memref *out,
                                    braidrt_unranked_memref *recvCounts,
                                    size_t elementBytes) {
  const char *what = "all_to_all_v";
  requireInitialized(what);
  return startRows(rowsOf(in, elementBytes, what),
                   rowsOf(out, elementBytes, what), countsOf(sendCounts, what),
                   countsOf(recvCounts, what), what);
}

void allToAllVRows(braidrt_unranked_memref *in, braidrt_unranked_memref *sendCounts,
                   braidrt_unranked_memref *out, braidrt_unranked_memref *recvCounts,
                   size_t elementBytes) {
  finish(startAllToAllVRows(in, sendCounts, out, recvCounts, elementBytes));
}

/// The communicator of the calling rank's block of `groupSize` consecutive
/// ranks. Only the block's members create it (MPI_Comm_create_group), so a
/// collective over some blocks never waits for ranks outside them.
/// Waits, within the timeout, until every rank of the group `first`,
/// `first + stride`, ... (`count` ranks, the caller among them) has arrived:
/// MPI_Comm_create_group blocks until its members all call it, with no
/// timeout of its own, so a member stuck elsewhere hung the others there.
static void awaitGroup(int first, int count, int stride, int tag) {
  std::vector<MPI_Request> requests;
  static char token = 0;
  std::vector<char> received(size_t(count), 0);
  for (int i = 0; i < count; ++i) {
    int peer = first + i * stride;
    if (peer == worldRank)
      continue;
    requests.emplace_back();
    MPI_Irecv(&received[size_t(i)], 1, MPI_CHAR, peer, tag, MPI_COMM_WORLD,
              &requests.back());
    requests.emplace_back();
    MPI_Isend(&token, 1, MPI_CHAR, peer, tag, MPI_COMM_WORLD,
              &requests.back());
  }
  for (MPI_Request &request : requests)
    waitFor(request, "forming a group's communicator");
}

MPI_Comm blockComm(int64_t groupSize) {
  struct Entry {
    int64_t size;
    MPI_Comm comm;
  };
  static std::vector<Entry> cache;
  for (const Entry &entry : cache)
    if (entry.size == groupSize)
      return entry.comm;
  if (groupSize < 1 || worldSize % groupSize != 0)
    braidrt_fail("reduce_scatter: groups of %lld do not tile %d ranks",
                 (long long)groupSize, worldSize);
  int first = int(worldRank / groupSize * groupSize);
  int range[1][3] = {{first, first + int(groupSize) - 1, 1}};
  // Tags of their own, within the 32767 every MPI allows
  // (MPI_Comm_create_group's are a group size, and world size plus a
  // stride, at most 8192; a world has at most 4096 ranks).
  awaitGroup(first, int(groupSize), 1, 16384 + int(groupSize));
  MPI_Group world, block;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_range_incl(world, 1, range, &block);
  MPI_Comm comm;
  MPI_Comm_create_group(MPI_COMM_WORLD, block, /*tag=*/int(groupSize), &comm);
  MPI_Group_free(&block);
  MPI_Group_free(&world);
  cache.push_back({groupSize, comm});
  return comm;
}

/// The communicator of the calling rank's group among the groups of
/// `groupSize` ranks `stride` apart, [[0, stride, ..], [1, stride + 1, ..],
/// ..], which tile the world (the ranks at one position on every node).
MPI_Comm strideComm(int64_t groupSize, int64_t stride) {
  struct Entry {
    int64_t size, stride;
    MPI_Comm comm;
  };
  static std::vector<Entry> cache;
  for (const Entry &entry : cache)
    if (entry.size == groupSize && entry.stride == stride)
      return entry.comm;
  if (groupSize < 1 || stride < 1 || groupSize * stride != worldSize)
    braidrt_fail("all_reduce: %lld groups of %lld do not tile %d ranks",
                 (long long)stride, (long long)groupSize, worldSize);
  int first = int(worldRank % stride);
  int range[1][3] = {
      {first, first + int((groupSize - 1) * stride), int(stride)}};
  awaitGroup(first, int(groupSize), int(stride), 24576 + int(stride));
  MPI_Group world, strided;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_range_incl(world, 1, range, &strided);
  MPI_Comm comm;
  // Tags apart from blockComm's (a group size).
  MPI_Comm_create_group(MPI_COMM_WORLD, strided,
                        /*tag=*/int(worldSize + stride), &comm);
  MPI_Group_free(&strided);
  MPI_Group_free(&world);
  cache.push_back({groupSize, stride, comm});
  return comm;
}

PendingExchange *startReduceScatterRows(braidrt_unranked_memref *in,
                                        braidrt_unranked_memref *out,
                                        int64_t groupSize, int32_t member,
                                        int32_t reduction, braidrt_dtype dtype) {
  const char *what = "reduce_scatter";
  requireInitialized(what);
  size_t bytes = elementSize(dtype);
  Rows input = rowsOf(in, bytes, what), output = rowsOf(out, bytes, what);
  if (!member) {
    // A rank in no group takes no part: its result is its input.
    if (input.rows != output.rows || input.rowBytes != output.rowBytes)
      braidrt_fail("%s: a rank in no group keeps its %lld rows, not %lld",
                   what, (long long)input.rows, (long long)output.rows);
    if (input.rows > 0)
      std::memcpy(output.data, input.data, size_t(input.rows) * input.rowBytes);
    auto *done = new PendingExchange;
    done->what = what;
    return done;
  }
  if (input.rows != output.rows * groupSize || input.rowBytes != output.rowBytes)
    braidrt_fail("%s: %lld rows do not scatter into %lld per rank of %lld",
                 what, (long long)input.rows, (long long)output.rows,
                 (long long)groupSize);
  int count = checkedCount(output.rows * output.rowBytes / int64_t(bytes), what);
  auto *pending = new PendingExchange;
  pending->what = what;
  MPI_Ireduce_scatter_block(input.data, output.data, count, mpiType(dtype),
                            mpiOp(braidrt_reduction(reduction)),
                            blockComm(groupSize), &pending->request);
  return track(pending);
}

void reduceScatterRows(braidrt_unranked_memref *in, braidrt_unranked_memref *out,
                       int64_t groupSize, int32_t member, int32_t reduction,
                       braidrt_dtype dtype) {
  finish(startReduceScatterRows(in, out, groupSize, member, reduction, dtype));
}

/// The first element and the element count of a row-major buffer of any
/// rank (a scalar has one element).
std::pair<char *, int64_t> elementsOf(const braidrt_unranked_memref *memref,
                                      size_t elementBytes, const char *what) {
  if (!memref || memref->rank < 0)
    braidrt_fail("%s: expects a ranked buffer", what);
  auto *words = static_cast<int64_t *>(memref->descriptor);
  int64_t rank = memref->rank, count = 1, inner = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (words[3 + rank + d] != inner && words[3 + d] > 1)
      braidrt_fail("%s: expects a row-major buffer", what);
    inner *= words[3 + d];
    count *= words[3 + d];
  }
  return {reinterpret_cast<char *>(words[1]) + words[2] * elementBytes, count};
}

/// Starts an all_reduce over blocks of `groupSize` consecutive ranks; a
/// rank in no group, or a group of one, keeps its input (and its exchange
/// is already complete).
PendingExchange *startAllReduceElements(braidrt_unranked_memref *in,
                                        braidrt_unranked_memref *out,
                                        int64_t groupSize, int64_t stride,
                                        int32_t member, int32_t reduction,
                                        braidrt_dtype dtype) {
  const char *what = "all_reduce";
  size_t bytes = elementSize(dtype);
  auto [input, count] = elementsOf(in, bytes, what);
  auto [output, outCount] = elementsOf(out, bytes, what);
  if (count != outCount)
    braidrt_fail("%s: %lld elements reduce into %lld", what, (long long)count,
                 (long long)outCount);
  auto *pending = new PendingExchange;
  pending->what = what;
  if (!member || groupSize == 1) {
    if (count > 0 && input != output)
      std::memcpy(output, input, size_t(count) * bytes);
    return pending;
  }
  requireInitialized(what);
  MPI_Iallreduce(input, output, checkedCount(count, what), mpiType(dtype),
                 mpiOp(braidrt_reduction(reduction)),
                 stride == 1 ? blockComm(groupSize)
                             : strideComm(groupSize, stride),
                 &pending->request);
  return track(pending);
}

void allReduceElements(braidrt_unranked_memref *in,
                       braidrt_unranked_memref *out, int64_t groupSize,
                       int64_t stride, int32_t member, int32_t reduction,
                       braidrt_dtype dtype) {
  finish(startAllReduceElements(in, out, groupSize, stride, member, reduction,
                                dtype));
}

/// Starts an all_gather of rows over blocks of `groupSize` consecutive
/// ranks, in rank order; a rank in no group, or a group of one, keeps its
/// input (and its exchange is already complete).
PendingExchange *startAllGatherRows(braidrt_unranked_memref *in,
                                    braidrt_unranked_memref *out,
                                    int64_t groupSize, int32_t member,
                                    braidrt_dtype dtype) {
  const char *what = "all_gather";
  size_t bytes = elementSize(dtype);
  Rows input = rowsOf(in, bytes, what), output = rowsOf(out, bytes, what);
  auto *pending = new PendingExchange;
  pending->what = what;
  if (!member || groupSize == 1) {
    if (input.rows != output.rows || input.rowBytes != output.rowBytes)
      braidrt_fail("%s: a rank in no group keeps its %lld rows, not %lld",
                   what, (long long)input.rows, (long long)output.rows);
    if (input.rows > 0)
      std::memcpy(output.data, input.data, size_t(input.rows) * input.rowBytes);
    return pending;
  }
  if (output.rows != input.rows * groupSize || input.rowBytes != output.rowBytes)
    braidrt_fail("%s: %lld rows per rank do not gather into %lld over %lld",
                 what, (long long)input.rows, (long long)output.rows,
                 (long long)groupSize);
  requireInitialized(what);
  int count = checkedCount(input.rows * input.rowBytes, what);
  MPI_Iallgather(input.data, count, MPI_BYTE, output.data, count, MPI_BYTE,
                 blockComm(groupSize), &pending->request);
  return track(pending);
}

void allGatherRows(braidrt_unranked_memref *in, braidrt_unranked_memref *out,
                   int64_t groupSize, int32_t member, braidrt_dtype dtype) {
  finish(startAllGatherRows(in, out, groupSize, member, dtype));
}
} // namespace

extern "C" {

void braidrt_progress(void) {
  // BRAIDRT_NO_PROGRESS=1 turns it off, to measure what it gains.
  static const bool enabled = !std::getenv("BRAIDRT_NO_PROGRESS");
  if (!enabled)
    return;
  progressDeferredExchanges();
  for (PendingExchange *pending : inFlight)
    if (pending->request != MPI_REQUEST_NULL) {
      int done = 0;
      MPI_Test(&pending->request, &done, MPI_STATUS_IGNORE);
    }
}

void _mlir_ciface_braidrt_exchange_counts(braidrt_unranked_memref *send,
                                          braidrt_unranked_memref *recv) {
  const char *what = "all_to_all_v (counts)";
  requireInitialized(what);
  const int64_t *sendCounts = countsOf(send, what);
  auto *recvCounts = const_cast<int64_t *>(countsOf(recv, what));
  MPI_Request request;
  MPI_Ialltoall(sendCounts, 1, MPI_INT64_T, recvCounts, 1, MPI_INT64_T,
                MPI_COMM_WORLD, &request);
  waitFor(request, what);
}

int64_t _mlir_ciface_braidrt_all_to_all_start_f32(braidrt_unranked_memref *in,
                                                  braidrt_unranked_memref *out,
                                                  braidrt_unranked_memref *split) {
  return reinterpret_cast<int64_t>(startAllToAllRows(in, out, split, sizeof(float)));
}

int64_t _mlir_ciface_braidrt_all_to_all_start_f64(braidrt_unranked_memref *in,
                                                  braidrt_unranked_memref *out,
                                                  braidrt_unranked_memref *split) {
  return reinterpret_cast<int64_t>(startAllToAllRows(in, out, split, sizeof(double)));
}

int64_t _mlir_ciface_braidrt_reduce_scatter_start_f32(
    braidrt_unranked_memref *in, braidrt_unranked_memref *out,
    int64_t groupSize, int32_t member, int32_t reduction) {
  return reinterpret_cast<int64_t>(startReduceScatterRows(
      in, out, groupSize, member, reduction, BRAIDRT_F32));
}

int64_t _mlir_ciface_braidrt_reduce_scatter_start_f64(
    braidrt_unranked_memref *in, braidrt_unranked_memref *out,
    int64_t groupSize, int32_t member, int32_t reduction) {
  return reinterpret_cast<int64_t>(startReduceScatterRows(
      in, out, groupSize, member, reduction, BRAIDRT_F64));
}

static void waitExchange(int64_t handle) {
  if (!handle)
    braidrt_fail("wait on an exchange that was never started");
  finish(reinterpret_cast<PendingExchange *>(handle));
}

void _mlir_ciface_braidrt_wait_exchange_f32(int64_t handle,
                                            braidrt_unranked_memref *,
                                            braidrt_unranked_memref *) {
  waitExchange(handle);
}

void _mlir_ciface_braidrt_wait_exchange_f64(int64_t handle,
                                            braidrt_unranked_memref *,
                                            braidrt_unranked_memref *) {
  waitExchange(handle);
}

int64_t _mlir_ciface_braidrt_all_to_all_start_i64(braidrt_unranked_memref *in,
                                                  braidrt_unranked_memref *out,
                                                  braidrt_unranked_memref *split) {
  return reinterpret_cast<int64_t>(
      startAllToAllRows(in, out, split, sizeof(int64_t)));
}

void _mlir_ciface_braidrt_wait_exchange_i64(int64_t handle,
                                            braidrt_unranked_memref *,
                                            braidrt_unranked_memref *) {
  waitExchange(handle);
}

void _mlir_ciface_braidrt_wait_exchange_i32(int64_t handle,
                                            braidrt_unranked_memref *,
                                            braidrt_unranked_memref *) {
  waitExchange(handle);
}

#define BRAIDRT_TYPED_EXCHANGES(SUFFIX, TYPE)                                  \
  void _mlir_ciface_braidrt_all_to_all_##SUFFIX(braidrt_unranked_memref *in,   \
                                                braidrt_unranked_memref *out,  \
                                                braidrt_unranked_memref *split) { \
    allToAllRows(in, out, split, sizeof(TYPE));                                \
  }                                                                            \
  void _mlir_ciface_braidrt_all_to_all_v_##SUFFIX(                             \
      braidrt_unranked_memref *in, braidrt_unranked_memref *sendCounts,        \
      braidrt_unranked_memref *out, braidrt_unranked_memref *recvCounts) {     \
    allToAllVRows(in, sendCounts, out, recvCounts, sizeof(TYPE));              \
  }                                                                            \
  int64_t _mlir_ciface_braidrt_all_to_all_v_start_##SUFFIX(                    \
      braidrt_unranked_memref *in, braidrt_unranked_memref *sendCounts,        \
      braidrt_unranked_memref *out, braidrt_unranked_memref *recvCounts) {     \
    return reinterpret_cast<int64_t>(                                          \
        startAllToAllVRows(in, sendCounts, out, recvCounts, sizeof(TYPE)));    \
  }
BRAIDRT_TYPED_EXCHANGES(f32, float)
BRAIDRT_TYPED_EXCHANGES(f64, double)
BRAIDRT_TYPED_EXCHANGES(i64, int64_t)
BRAIDRT_TYPED_EXCHANGES(i32, int32_t)
#undef BRAIDRT_TYPED_EXCHANGES

void _mlir_ciface_braidrt_reduce_scatter_f32(braidrt_unranked_memref *in,
                                             braidrt_unranked_memref *out,
                                             int64_t groupSize, int32_t member,
                                             int32_t reduction) {
  reduceScatterRows(in, out, groupSize, member, reduction, BRAIDRT_F32);
}

void _mlir_ciface_braidrt_reduce_scatter_f64(braidrt_unranked_memref *in,
                                             braidrt_unranked_memref *out,
                                             int64_t groupSize, int32_t member,
                                             int32_t reduction) {
  reduceScatterRows(in, out, groupSize, member, reduction, BRAIDRT_F64);
}

// Pooled rows and their gradients in 16 bits: their all_to_all moves rows
// of bytes, so only the element's size matters.
#define BRAIDRT_HALF_EXCHANGES(SUFFIX)                                         \
  void _mlir_ciface_braidrt_all_to_all_##SUFFIX(                               \
      braidrt_unranked_memref *in, braidrt_unranked_memref *out,               \
      braidrt_unranked_memref *split) {                                        \
    allToAllRows(in, out, split, sizeof(uint16_t));                            \
  }                                                                            \
  int64_t _mlir_ciface_braidrt_all_to_all_start_##SUFFIX(                      \
      braidrt_unranked_memref *in, braidrt_unranked_memref *out,               \
      braidrt_unranked_memref *split) {                                        \
    return reinterpret_cast<int64_t>(                                          \
        startAllToAllRows(in, out, split, sizeof(uint16_t)));                  \
  }                                                                            \
  void _mlir_ciface_braidrt_wait_exchange_##SUFFIX(                            \
      int64_t handle, braidrt_unranked_memref *, braidrt_unranked_memref *) {  \
    waitExchange(handle);                                                      \
  }
BRAIDRT_HALF_EXCHANGES(bf16)
BRAIDRT_HALF_EXCHANGES(f16)
#undef BRAIDRT_HALF_EXCHANGES

#define BRAIDRT_GRADIENT_EXCHANGES(SUFFIX, DTYPE)                              \
  void _mlir_ciface_braidrt_all_reduce_##SUFFIX(                               \
      braidrt_unranked_memref *in, braidrt_unranked_memref *out,               \
      int64_t groupSize, int64_t stride, int32_t member, int32_t reduction) {  \
    allReduceElements(in, out, groupSize, stride, member, reduction, DTYPE);   \
  }                                                                            \
  int64_t _mlir_ciface_braidrt_all_reduce_start_##SUFFIX(                      \
      braidrt_unranked_memref *in, braidrt_unranked_memref *out,               \
      int64_t groupSize, int64_t stride, int32_t member, int32_t reduction) {  \
    return reinterpret_cast<int64_t>(startAllReduceElements(                   \
        in, out, groupSize, stride, member, reduction, DTYPE));                \
  }                                                                            \
  void _mlir_ciface_braidrt_all_gather_##SUFFIX(                               \
      braidrt_unranked_memref *in, braidrt_unranked_memref *out,               \
      int64_t groupSize, int32_t member) {                                     \
    allGatherRows(in, out, groupSize, member, DTYPE);                          \
  }                                                                            \
  int64_t _mlir_ciface_braidrt_all_gather_start_##SUFFIX(                      \
      braidrt_unranked_memref *in, braidrt_unranked_memref *out,               \
      int64_t groupSize, int32_t member) {                                     \
    return reinterpret_cast<int64_t>(                                          \
        startAllGatherRows(in, out, groupSize, member, DTYPE));                \
  }
BRAIDRT_GRADIENT_EXCHANGES(f32, BRAIDRT_F32)
BRAIDRT_GRADIENT_EXCHANGES(f64, BRAIDRT_F64)
#undef BRAIDRT_GRADIENT_EXCHANGES

} // extern "C"
