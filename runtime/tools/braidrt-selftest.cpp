//===- braidrt-selftest.cpp - Checks the runtime on real ranks ------------===//
//
// This file implements braidrt-selftest: run under `mpirun -n R`, every rank
// drives each runtime entry point with inputs whose results it can compute
// itself, and fails the job on a mismatch. `--bad-index` makes the last
// rank look up a row outside its table; `--stall` makes the last rank miss
// a collective, which the others must report after BRAIDRT_TIMEOUT_S;
// `--kill` and `--stop` make the last rank send itself SIGKILL or SIGSTOP
// there, and the job must still end (through mpirun, or the timeout);
// `--short-result` makes the last rank take a posted all_to_all_v into a
// result one row short of what it receives.
//
//===----------------------------------------------------------------------===//

#include "braidrt/braidrt.h"
#include "braidrt/compiled.h"

#include <mpi.h>

#include <csignal>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace {
int checks = 0;

void expect(bool ok, const char *what) {
  if (!ok)
    braidrt_fail("check failed: %s", what);
  ++checks;
}

bool near(double a, double b) { return std::abs(a - b) <= 1e-5 * (1 + std::abs(b)); }

/// A 1-D i64 buffer as compiled code passes it (MLIR's C interface).
struct Buffer1D {
  struct {
    int64_t *allocated, *aligned;
    int64_t offset, size, stride;
  } descriptor;
  braidrt_unranked_memref memref;
  explicit Buffer1D(std::vector<int64_t> &data)
      : descriptor{data.data(), data.data(), 0, int64_t(data.size()), 1},
        memref{1, &descriptor} {}
};

/// The started all_to_all_v of compiled programs, whose start only posts
/// the counts. Rank i sends `factor` (i + j + 1) copies of 10 i + j to j.
struct PostedExchange {
  std::vector<int64_t> counts, payload;
  int64_t handle = 0, factor;
  PostedExchange(int64_t rank, int64_t ranks, int64_t factor) : factor(factor) {
    for (int64_t j = 0; j < ranks; ++j) {
      counts.push_back(factor * (rank + j + 1));
      payload.insert(payload.end(), factor * (rank + j + 1), 10 * rank + j);
    }
    Buffer1D in(payload), send(counts);
    handle = _mlir_ciface_braidrt_all_to_all_v_post_i64(&in.memref, &send.memref);
  }
  void finish(int64_t rank, int64_t ranks, bool shortResult = false) {
    int64_t rows = braidrt_all_to_all_v_received_rows(handle);
    int64_t expected = 0;
    for (int64_t i = 0; i < ranks; ++i)
      expected += factor * (i + rank + 1);
    expect(rows == expected, "posted all_to_all_v rows");
    if (shortResult)
      --rows;
    std::vector<int64_t> out(rows, -1);
    Buffer1D in(payload), result(out);
    _mlir_ciface_braidrt_wait_all_to_all_v_i64(handle, &in.memref,
                                               &result.memref);
    int64_t at = 0;
    bool ok = true;
    for (int64_t i = 0; i < ranks; ++i)
      for (int64_t k = 0; k < factor * (i + rank + 1); ++k)
        ok = ok && out[at++] == 10 * i + rank;
    expect(ok, "posted all_to_all_v data");
  }
};
} // namespace

// A compiled program's all_reduce over groups (Runtime.cpp; not in the
// public headers, which the generated code declares itself).
extern "C" void _mlir_ciface_braidrt_all_reduce_f32(
    braidrt_unranked_memref *in, braidrt_unranked_memref *out,
    int64_t groupSize, int64_t stride, int32_t member, int32_t reduction);

int main(int argc, char **argv) {
  braidrt_init(&argc, &argv);
  bool badIndex = false, stall = false, shortResult = false, lateGroup = false;
  int selfSignal = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--bad-index"))
      badIndex = true;
    else if (!std::strcmp(argv[i], "--stall"))
      stall = true;
    else if (!std::strcmp(argv[i], "--kill"))
      selfSignal = SIGKILL;
    else if (!std::strcmp(argv[i], "--stop"))
      selfSignal = SIGSTOP;
    else if (!std::strcmp(argv[i], "--short-result"))
      shortResult = true;
    else if (!std::strcmp(argv[i], "--late-group"))
      lateGroup = true;
    else
      braidrt_fail("unknown argument '%s' (expected --bad-index, --stall, "
                   "--kill, --stop, --short-result or --late-group)",
                   argv[i]);
  }
  int64_t rank = braidrt_rank(), ranks = braidrt_world_size();
  bool last = rank == ranks - 1;

  // The last rank reaches the first compiled all_reduce over groups (whose
  // communicator is formed on first use) after the others' timeout: they
  // fail, where they blocked in MPI_Comm_create_group.
  if (lateGroup) {
    if (last)
      std::this_thread::sleep_for(std::chrono::seconds(5));
    float in = 1, out = 0;
    struct {
      float *allocated, *aligned;
      int64_t offset, size, stride;
    } inDescriptor{&in, &in, 0, 1, 1}, outDescriptor{&out, &out, 0, 1, 1};
    braidrt_unranked_memref inRef{1, &inDescriptor},
        outRef{1, &outDescriptor};
    _mlir_ciface_braidrt_all_reduce_f32(&inRef, &outRef, ranks, 1, 1, 0);
    std::printf("rank %lld: the group's all_reduce returned\n",
                static_cast<long long>(rank));
  }

  // all_reduce: sum and max of rank + 1.
  double value = double(rank + 1), sum = 0, max = 0;
  braidrt_all_reduce(&value, &sum, 1, BRAIDRT_F64, BRAIDRT_SUM);
  expect(sum == double(ranks * (ranks + 1) / 2), "all_reduce sum");
  braidrt_all_reduce(&value, &max, 1, BRAIDRT_F64, BRAIDRT_MAX);
  expect(max == double(ranks), "all_reduce max");

  // reduce_scatter: element i of rank r is 100 r + i; rank r keeps 2.
  std::vector<float> contribution(2 * ranks), mine(2);
  for (int64_t i = 0; i < 2 * ranks; ++i)
    contribution[i] = float(100 * rank + i);
  braidrt_reduce_scatter(contribution.data(), mine.data(), 2, BRAIDRT_F32,
                         BRAIDRT_SUM);
  for (int64_t k = 0; k < 2; ++k)
    expect(near(mine[k], 100.0 * ranks * (ranks - 1) / 2 +
                             double(ranks) * (2 * rank + k)),
           "reduce_scatter");

  // all_gather: every rank's id.
  int64_t id = rank;
  std::vector<int64_t> ids(ranks);
  braidrt_all_gather(&id, ids.data(), 1, BRAIDRT_I64);
  for (int64_t r = 0; r < ranks; ++r)
    expect(ids[r] == r, "all_gather");

  // all_to_all_v: rank i sends i + j + 1 copies of 10 i + j to rank j.
  std::vector<int64_t> sendCounts(ranks), recvCounts(ranks), payload;
  for (int64_t j = 0; j < ranks; ++j) {
    sendCounts[j] = rank + j + 1;
    payload.insert(payload.end(), rank + j + 1, 10 * rank + j);
  }
  void *received = nullptr;
  int64_t total = braidrt_all_to_all_v(payload.data(), sendCounts.data(),
                                       &received, recvCounts.data(), BRAIDRT_I64);
  const int64_t *got = static_cast<const int64_t *>(received);
  int64_t at = 0;
  for (int64_t i = 0; i < ranks; ++i) {
    expect(recvCounts[i] == i + rank + 1, "all_to_all_v counts");
    for (int64_t k = 0; k < recvCounts[i]; ++k)
      expect(got[at++] == 10 * i + rank, "all_to_all_v data");
  }
  expect(at == total, "all_to_all_v total");
  braidrt_free(received);

  // Posted all_to_all_v: the start returns before any other rank has
  // started. Rank 0 starts two, then receives a synchronous message the
  // last rank sends before it starts them; were a start to wait for the
  // counts, both would wait forever. The second is taken first: its rows
  // are posted after the first's, in start order on every rank.
  if (ranks > 1 && last)
    MPI_Ssend(&value, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
  PostedExchange first(rank, ranks, 1), second(rank, ranks, 3);
  if (ranks > 1 && rank == 0) {
    double message = 0;
    MPI_Recv(&message, 1, MPI_DOUBLE, int(ranks - 1), 7, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    expect(message == double(ranks), "posted all_to_all_v start returned");
  }
  braidrt_progress();
  second.finish(rank, ranks, shortResult && last);
  first.finish(rank, ranks);

  // A non-blocking all_reduce with work between start and wait.
  std::vector<float> big(1 << 16, 1.0f), reduced(1 << 16);
  braidrt_request *request = braidrt_all_reduce_start(
      big.data(), reduced.data(), big.size(), BRAIDRT_F32, BRAIDRT_SUM);
  float w[6] = {1, 2, 3, 4, 5, 6}, bias[2] = {0.5f, 1}, x[6] = {1, 0, -1, 2, 1, 0};
  float y[4];
  braidrt_linear(x, w, bias, y, 2, 3, 2, BRAIDRT_ACT_RELU);
  braidrt_wait(request);
  expect(reduced.front() == float(ranks) && reduced.back() == float(ranks),
         "all_reduce_start/wait");
  // y = relu(x w^T + b) = relu([[1 - 3 + 0.5, 4 - 6 + 1], [2 + 2 + 0.5,
  // 8 + 5 + 1]]).
  expect(y[0] == 0 && y[1] == 0 && near(y[2], 4.5) && near(y[3], 14),
         "linear");

  // What a compiled lookup calls for an index outside its table.
  if (badIndex && last)
    braidrt_index_error(3, 3);
  if (stall && last)
    std::this_thread::sleep_for(std::chrono::seconds(30));
  if (selfSignal && last)
    raise(selfSignal);
  // Every rank meets here; a failed or stalled rank leaves the others
  // waiting, and the wait must end the job.
  braidrt_all_reduce(&value, &sum, 1, BRAIDRT_F64, BRAIDRT_SUM);
  std::printf("rank %lld of %lld: %d checks passed\n",
              static_cast<long long>(rank), static_cast<long long>(ranks),
              checks);
  braidrt_finalize();
  return 0;
}
