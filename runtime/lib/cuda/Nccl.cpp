//===- Nccl.cpp - The NCCL communicator and collectives -------------------===//
//
// This file implements the CUDA runtime's collectives: one NCCL communicator
// over MPI_COMM_WORLD, bootstrapped by broadcasting rank 0's unique id over
// MPI, created non-blocking and polled so that a rank that never arrives
// aborts the communicator (ncclCommAbort) and fails the job instead of
// hanging it; all_reduce, reduce_scatter, all_gather and the uneven
// all_to_all (grouped ncclSend/ncclRecv) on a communication stream of its
// own, each completed before it returns. Every wait for NCCL's work on the
// device is bounded by BRAIDRT_TIMEOUT_S, past which the communicators are
// aborted and the job fails: a stopped peer ends the job, it never hangs it.
//
//===----------------------------------------------------------------------===//

#include "CudaCheck.h"

#include "braidrt/braidrt.h"
#include "braidrt/cuda.h"

#include <mpi.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

using namespace braidrt::cuda;

namespace {
struct Communicator {
  ncclComm_t comm = nullptr;
  CUstream stream = nullptr;
  int ranks = 1;
};
} // namespace

static Communicator &communicator() {
  static Communicator instance;
  return instance;
}

/// The group communicators split from the world, by (group size, stride).
static std::map<std::pair<int64_t, int64_t>, ncclComm_t> &groups() {
  static std::map<std::pair<int64_t, int64_t>, ncclComm_t> instance;
  return instance;
}

/// The seconds a communicator may take to form or to finish a collective
/// ($BRAIDRT_TIMEOUT_S, default 300).
static double timeoutSeconds() {
  if (const char *text = std::getenv("BRAIDRT_TIMEOUT_S")) {
    char *end = nullptr;
    double value = std::strtod(text, &end);
    if (end != text && *end == '\0' && value > 0 && value <= 604800)
      return value;
  }
  return 300;
}

/// Fails the job for an NCCL error of `call` at `file`:`line`.
[[noreturn]] static void failNccl(ncclResult_t result, const char *call,
                                  const char *file, int line) {
  Communicator &c = communicator();
  const char *detail = c.comm ? ncclGetLastError(c.comm) : nullptr;
  braidrt_fail("%s failed at %s:%d: %s%s%s", call, file, line,
               ncclGetErrorString(result), detail && *detail ? ": " : "",
               detail ? detail : "");
  std::abort();
}

#define BRAIDRT_NCCL(call)                                                     \
  do {                                                                         \
    ncclResult_t braidrtResult = (call);                                       \
    if (braidrtResult != ncclSuccess && braidrtResult != ncclInProgress)       \
      failNccl(braidrtResult, #call, __FILE__, __LINE__);                      \
  } while (0)

/// Past the timeout: aborts every communicator, the world's and the
/// groups' (which ends their kernels), and fails the job.
[[noreturn]] static void abortAllAndFail(const char *what, double limit) {
  for (auto &[shape, group] : groups())
    if (group)
      ncclCommAbort(group);
  groups().clear();
  if (ncclComm_t world = communicator().comm)
    ncclCommAbort(world);
  communicator().comm = nullptr;
  braidrt_fail("%s did not complete within %g s: another rank failed or "
               "never arrived (BRAIDRT_TIMEOUT_S sets the limit)",
               what, limit);
  std::abort();
}

/// Polls the communicator until its pending work (creation, or a grouped
/// call) is done; past the timeout, aborts the communicators and fails.
static void awaitCommunicator(ncclComm_t comm, const char *what) {
  auto start = std::chrono::steady_clock::now();
  double limit = timeoutSeconds();
  for (;;) {
    ncclResult_t state = ncclSuccess;
    BRAIDRT_NCCL(ncclCommGetAsyncError(comm, &state));
    if (state == ncclSuccess)
      return;
    if (state != ncclInProgress)
      failNccl(state, what, __FILE__, __LINE__);
    std::chrono::duration<double> waited =
        std::chrono::steady_clock::now() - start;
    if (waited.count() > limit)
      abortAllAndFail(what, limit);
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

void *braidrt_cuda_nccl_comm(void) {
  static std::once_flag once;
  std::call_once(once, [] {
    const Driver &table = driver();
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized)
      braidrt_fail("the NCCL communicator needs MPI: call braidrt_init "
                   "first");
    Communicator &c = communicator();
    int rank = static_cast<int>(braidrt_rank());
    c.ranks = static_cast<int>(braidrt_world_size());
    ncclUniqueId id;
    if (rank == 0)
      BRAIDRT_NCCL(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    BRAIDRT_NCCL(ncclCommInitRankConfig(&c.comm, c.ranks, id, rank, &config));
    awaitCommunicator(c.comm, "ncclCommInitRankConfig");
    BRAIDRT_CU(table.streamCreate(&c.stream, CU_STREAM_NON_BLOCKING));
  });
  return communicator().comm;
}

void braidrt_cuda_nccl_finalize(void) {
  Communicator &c = communicator();
  if (!c.comm)
    return;
  BRAIDRT_NCCL(ncclCommFinalize(c.comm));
  awaitCommunicator(c.comm, "ncclCommFinalize");
  BRAIDRT_NCCL(ncclCommDestroy(c.comm));
  c.comm = nullptr;
}

/// Waits until `query` (cuStreamQuery or cuEventQuery of the work to wait
/// for) answers CUDA_SUCCESS. An NCCL kernel whose peer stopped never ends,
/// so the wait is bounded: past the timeout every communicator is aborted
/// (which ends their kernels) and the job fails, as the CPU runtime's waits
/// do. It spins for the first millisecond (a collective's wait is often
/// microseconds), then sleeps 100 us between queries.
template <typename Query>
static void awaitDevice(const char *what, Query query) {
  auto start = std::chrono::steady_clock::now();
  double limit = timeoutSeconds();
  for (;;) {
    CUresult result = query();
    if (result == CUDA_SUCCESS)
      return;
    if (result != CUDA_ERROR_NOT_READY)
      failDriver(result, what, __FILE__, __LINE__);
    std::chrono::duration<double> waited =
        std::chrono::steady_clock::now() - start;
    if (waited.count() > limit)
      abortAllAndFail(what, limit);
    if (waited.count() < 1e-3)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

/// Runs `issue` (NCCL calls on the communicator and its stream) and waits
/// for it, bounded by the timeout.
template <typename Issue>
static void runCollective(const char *what, Issue issue) {
  auto comm = static_cast<ncclComm_t>(braidrt_cuda_nccl_comm());
  Communicator &c = communicator();
  issue(comm, reinterpret_cast<cudaStream_t>(c.stream));
  awaitCommunicator(comm, what);
  awaitDevice(what, [&] { return driver().streamQuery(c.stream); });
}

void braidrt_cuda_all_reduce_f32(const float *input, float *output,
                                 int64_t count) {
  runCollective("ncclAllReduce", [&](ncclComm_t comm, cudaStream_t stream) {
    BRAIDRT_NCCL(ncclAllReduce(input, output, count, ncclFloat32, ncclSum, comm,
                               stream));
  });
}

void braidrt_cuda_reduce_scatter_f32(const float *input, float *output,
                                     int64_t countPerRank) {
  runCollective("ncclReduceScatter", [&](ncclComm_t comm, cudaStream_t stream) {
    BRAIDRT_NCCL(ncclReduceScatter(input, output, countPerRank, ncclFloat32,
                                   ncclSum, comm, stream));
  });
}

void braidrt_cuda_all_gather_f32(const float *input, float *output,
                                 int64_t countPerRank) {
  runCollective("ncclAllGather", [&](ncclComm_t comm, cudaStream_t stream) {
    BRAIDRT_NCCL(
        ncclAllGather(input, output, countPerRank, ncclFloat32, comm, stream));
  });
}

void braidrt_cuda_all_to_all_f32(const float *input, const int64_t *sendCounts,
                                 float *output, const int64_t *recvCounts) {
  runCollective("grouped ncclSend/ncclRecv",
                [&](ncclComm_t comm, cudaStream_t stream) {
                  int ranks = communicator().ranks;
                  int64_t sent = 0, received = 0;
                  BRAIDRT_NCCL(ncclGroupStart());
                  for (int peer = 0; peer < ranks; ++peer) {
                    if (sendCounts[peer] > 0)
                      BRAIDRT_NCCL(ncclSend(input + sent, sendCounts[peer],
                                            ncclFloat32, peer, comm, stream));
                    if (recvCounts[peer] > 0)
                      BRAIDRT_NCCL(ncclRecv(output + received, recvCounts[peer],
                                            ncclFloat32, peer, comm, stream));
                    sent += sendCounts[peer];
                    received += recvCounts[peer];
                  }
                  BRAIDRT_NCCL(ncclGroupEnd());
                });
}

//===----------------------------------------------------------------------===//
// Group communicators, streams and events for generated NCCL calls.
//===----------------------------------------------------------------------===//

void *braidrt_cuda_comm(int64_t groupSize, int64_t stride, int32_t member) {
  auto world = static_cast<ncclComm_t>(braidrt_cuda_nccl_comm());
  Communicator &c = communicator();
  if (groupSize < 1 || stride < 1 || groupSize * stride > c.ranks ||
      c.ranks % (groupSize * stride) != 0)
    braidrt_fail("a collective over groups of %lld ranks %lld apart does "
                 "not tile %d ranks",
                 static_cast<long long>(groupSize),
                 static_cast<long long>(stride), c.ranks);
  if (groupSize == c.ranks)
    return member ? world : nullptr;
  // A group of one communicates with nobody (the caller copies).
  if (groupSize == 1)
    return nullptr;
  // Every rank asks at the same program point, so the split (collective
  // over the world) happens once per (size, stride) and in the same order
  // everywhere. Every rank joins its block's communicator, whether or not
  // this collective uses the block: another one with the same shape may.
  auto key = std::make_pair(groupSize, stride);
  auto found = groups().find(key);
  if (found != groups().end())
    return member ? found->second : nullptr;
  int rank = static_cast<int>(braidrt_rank());
  int64_t block = groupSize * stride;
  int color = static_cast<int>((rank / block) * stride + rank % stride);
  int order = static_cast<int>((rank / stride) % groupSize);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t group = nullptr;
  BRAIDRT_NCCL(ncclCommSplit(world, color, order, &group, &config));
  awaitCommunicator(world, "ncclCommSplit");
  awaitCommunicator(group, "ncclCommSplit");
  groups()[key] = group;
  return member ? group : nullptr;
}

void braidrt_cuda_no_group_error(int64_t groupSize, int32_t member) {
  braidrt_fail("a collective over groups of %lld ranks: this rank (member "
               "%d) is in no group, and its input and output differ in size",
               static_cast<long long>(groupSize), static_cast<int>(member));
}

void *braidrt_cuda_comm_stream(void) {
  braidrt_cuda_nccl_comm();
  return communicator().stream;
}

void braidrt_cuda_nccl_result(int32_t result, void *comm, int32_t call) {
  static const char *const names[] = {
      "ncclAllReduce", "ncclReduceScatter", "ncclAllGather",
      "an exchange's grouped ncclSend/ncclRecv"};
  const char *name = call >= 0 && call < 4 ? names[call] : "an NCCL call";
  auto status = static_cast<ncclResult_t>(result);
  if (status != ncclSuccess && status != ncclInProgress) {
    auto group = static_cast<ncclComm_t>(comm);
    const char *detail = group ? ncclGetLastError(group) : nullptr;
    braidrt_fail("%s (a compiled collective) failed: %s%s%s", name,
                 ncclGetErrorString(status), detail && *detail ? ": " : "",
                 detail ? detail : "");
  }
  awaitCommunicator(static_cast<ncclComm_t>(comm), name);
}

void braidrt_cuda_stream_wait(void *stream) {
  awaitDevice("a compiled collective", [&] {
    return driver().streamQuery(static_cast<CUstream>(stream));
  });
}

int64_t braidrt_cuda_record_event(void *stream) {
  const Driver &table = driver();
  CUevent event = nullptr;
  BRAIDRT_CU(table.eventCreate(&event, CU_EVENT_DISABLE_TIMING));
  BRAIDRT_CU(table.eventRecord(event, static_cast<CUstream>(stream)));
  collectiveStarted();
  return reinterpret_cast<int64_t>(event);
}

void braidrt_cuda_wait_event(int64_t handle) {
  // 0: a rank in no group, whose "collective" was a local copy.
  if (!handle)
    return;
  const Driver &table = driver();
  auto event = reinterpret_cast<CUevent>(handle);
  awaitDevice("a started collective",
              [&] { return table.eventQuery(event); });
  BRAIDRT_CU(table.eventDestroy(event));
  collectiveWaited();
}
