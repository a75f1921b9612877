//===- DeferredExchanges.cpp - all_to_all_v with asynchronous counts ------===//
//
// A started all_to_all_v (braid.all_to_all_v_start on the CPU target) whose
// start returns at once. Before its rows can move, every rank must learn how
// many it receives; the start only posts that counts exchange. The rows are
// posted when the counts have arrived: inside a later braidrt_progress call
// (the runtime's GEMMs and updates make them between their blocks), or at
// the latest when the program asks for the received size. They land in a
// buffer of the runtime's, and the wait copies them into the result the
// program allocated from that size.
//
// MPI requires every rank to post the collectives of a communicator in one
// order. The counts exchanges are posted by the starts, in program order,
// on MPI_COMM_WORLD like every other collective. The rows' exchanges are
// posted from progress calls, whose place differs between ranks, so they go
// on a communicator of their own and, among themselves, in start order: an
// exchange's rows are posted only after those of every exchange started
// before it.
//
//===----------------------------------------------------------------------===//

#include "Exchanges.h"

#include "braidrt/braidrt.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <vector>

using namespace braidrt::detail;

namespace {
constexpr const char *kWhat = "all_to_all_v";
constexpr const char *kWhatCounts = "all_to_all_v (counts)";

/// A started all_to_all_v, from its start to its wait.
struct DeferredExchange {
  Rows input;
  size_t elementBytes = 0;
  std::vector<int64_t> sendCounts, recvCounts;
  MPI_Request countsRequest = MPI_REQUEST_NULL;
  // Set when the rows are posted.
  bool posted = false;
  int64_t receivedRows = 0;
  std::vector<char> received;
  std::vector<int> sendBytes, recvBytes, sendOffsets, recvOffsets;
  MPI_Request rowsRequest = MPI_REQUEST_NULL;
};

/// The communicator the rows move on (a duplicate of MPI_COMM_WORLD).
MPI_Comm rowsComm = MPI_COMM_NULL;
/// Started exchanges whose rows are not posted yet, in start order.
std::deque<DeferredExchange *> unposted;
/// Exchanges whose rows are posted and not yet waited for.
std::vector<DeferredExchange *> moving;

/// Posts `exchange`'s rows; its counts have arrived.
void postRows(DeferredExchange *exchange) {
  int ranks = rankCount();
  exchange->sendBytes.resize(ranks);
  exchange->recvBytes.resize(ranks);
  exchange->sendOffsets.resize(ranks);
  exchange->recvOffsets.resize(ranks);
  int64_t rowBytes = exchange->input.rowBytes, sent = 0, received = 0;
  for (int r = 0; r < ranks; ++r) {
    int64_t in = exchange->recvCounts[r];
    if (in < 0)
      braidrt_fail("%s: rank %d sends a negative count", kWhat, r);
    exchange->sendOffsets[r] = checkedCount(sent * rowBytes, kWhat);
    exchange->recvOffsets[r] = checkedCount(received * rowBytes, kWhat);
    exchange->sendBytes[r] =
        checkedCount(exchange->sendCounts[r] * rowBytes, kWhat);
    exchange->recvBytes[r] = checkedCount(in * rowBytes, kWhat);
    sent += exchange->sendCounts[r];
    received += in;
  }
  exchange->receivedRows = received;
  exchange->received.resize(size_t(checkedCount(received * rowBytes, kWhat)));
  MPI_Ialltoallv(exchange->input.data, exchange->sendBytes.data(),
                 exchange->sendOffsets.data(), MPI_BYTE,
                 exchange->received.data(), exchange->recvBytes.data(),
                 exchange->recvOffsets.data(), MPI_BYTE, rowsComm,
                 &exchange->rowsRequest);
  exchange->posted = true;
  moving.push_back(exchange);
}

/// Posts the rows of the unposted exchanges, in start order, while their
/// counts have arrived; with `until`, waits for the counts up to and
/// including that exchange's.
void advance(DeferredExchange *until) {
  while (!unposted.empty()) {
    DeferredExchange *front = unposted.front();
    if (until) {
      waitFor(front->countsRequest, kWhatCounts);
    } else {
      int done = 0;
      MPI_Test(&front->countsRequest, &done, MPI_STATUS_IGNORE);
      if (!done)
        return;
    }
    unposted.pop_front();
    postRows(front);
    if (front == until)
      return;
  }
}

DeferredExchange *exchangeOf(int64_t handle) {
  if (!handle)
    braidrt_fail("wait on an all_to_all_v that was never started");
  return reinterpret_cast<DeferredExchange *>(handle);
}

int64_t start(braidrt_unranked_memref *in, braidrt_unranked_memref *counts,
              size_t elementBytes) {
  requireInitialized(kWhat);
  if (rowsComm == MPI_COMM_NULL)
    braidrt_fail("%s before braidrt_init", kWhat);
  auto *exchange = new DeferredExchange;
  exchange->input = rowsOf(in, elementBytes, kWhat);
  exchange->elementBytes = elementBytes;
  int ranks = rankCount();
  const int64_t *send = countsOf(counts, kWhat);
  exchange->sendCounts.assign(send, send + ranks);
  int64_t total = 0;
  for (int r = 0; r < ranks; ++r) {
    if (send[r] < 0)
      braidrt_fail("%s: a negative count for rank %d", kWhat, r);
    total += send[r];
  }
  if (total != exchange->input.rows)
    braidrt_fail("%s: the counts send %lld rows of %lld", kWhat,
                 static_cast<long long>(total),
                 static_cast<long long>(exchange->input.rows));
  exchange->recvCounts.assign(size_t(ranks), 0);
  MPI_Ialltoall(exchange->sendCounts.data(), 1, MPI_INT64_T,
                exchange->recvCounts.data(), 1, MPI_INT64_T, MPI_COMM_WORLD,
                &exchange->countsRequest);
  unposted.push_back(exchange);
  // A start is a progress point too, as the synchronous counts exchange
  // (which polled MPI) was: earlier exchanges' counts and rows move along.
  braidrt_progress();
  return reinterpret_cast<int64_t>(exchange);
}
} // namespace

void braidrt::detail::initDeferredExchanges() {
  if (rowsComm == MPI_COMM_NULL)
    MPI_Comm_dup(MPI_COMM_WORLD, &rowsComm);
}

void braidrt::detail::finalizeDeferredExchanges() {
  if (rowsComm != MPI_COMM_NULL)
    MPI_Comm_free(&rowsComm);
}

void braidrt::detail::progressDeferredExchanges() {
  advance(nullptr);
  for (DeferredExchange *exchange : moving) {
    int done = 0;
    MPI_Test(&exchange->rowsRequest, &done, MPI_STATUS_IGNORE);
  }
}

extern "C" {

int64_t _mlir_ciface_braidrt_all_to_all_v_post_f32(
    braidrt_unranked_memref *in, braidrt_unranked_memref *send_counts) {
  return start(in, send_counts, sizeof(float));
}

int64_t _mlir_ciface_braidrt_all_to_all_v_post_f64(
    braidrt_unranked_memref *in, braidrt_unranked_memref *send_counts) {
  return start(in, send_counts, sizeof(double));
}

int64_t _mlir_ciface_braidrt_all_to_all_v_post_i64(
    braidrt_unranked_memref *in, braidrt_unranked_memref *send_counts) {
  return start(in, send_counts, sizeof(int64_t));
}

int64_t _mlir_ciface_braidrt_all_to_all_v_post_i32(
    braidrt_unranked_memref *in, braidrt_unranked_memref *send_counts) {
  return start(in, send_counts, sizeof(int32_t));
}

int64_t braidrt_all_to_all_v_received_rows(int64_t handle) {
  DeferredExchange *exchange = exchangeOf(handle);
  if (!exchange->posted)
    advance(exchange);
  return exchange->receivedRows;
}

} // extern "C"

namespace {
void waitAllToAllV(int64_t handle, braidrt_unranked_memref *out) {
  DeferredExchange *exchange = exchangeOf(handle);
  if (!exchange->posted)
    advance(exchange);
  waitFor(exchange->rowsRequest, kWhat);
  moving.erase(std::remove(moving.begin(), moving.end(), exchange),
               moving.end());
  Rows result = rowsOf(out, exchange->elementBytes, kWhat);
  if (result.rows != exchange->receivedRows ||
      (result.rows > 0 && result.rowBytes != exchange->input.rowBytes))
    braidrt_fail("%s: %lld rows of %lld bytes received, the result holds "
                 "%lld of %lld",
                 kWhat, static_cast<long long>(exchange->receivedRows),
                 static_cast<long long>(exchange->input.rowBytes),
                 static_cast<long long>(result.rows),
                 static_cast<long long>(result.rowBytes));
  if (!exchange->received.empty())
    std::memcpy(result.data, exchange->received.data(),
                exchange->received.size());
  delete exchange;
}
} // namespace

extern "C" {

// `in` is passed so that the input stays alive until the wait.
#define BRAIDRT_DEFINE_WAIT_ALL_TO_ALL_V(SUFFIX)                               \
  void _mlir_ciface_braidrt_wait_all_to_all_v_##SUFFIX(                        \
      int64_t handle, braidrt_unranked_memref *in,                             \
      braidrt_unranked_memref *out) {                                          \
    (void)in;                                                                  \
    waitAllToAllV(handle, out);                                                \
  }
BRAIDRT_DEFINE_WAIT_ALL_TO_ALL_V(f32)
BRAIDRT_DEFINE_WAIT_ALL_TO_ALL_V(f64)
BRAIDRT_DEFINE_WAIT_ALL_TO_ALL_V(i64)
BRAIDRT_DEFINE_WAIT_ALL_TO_ALL_V(i32)
#undef BRAIDRT_DEFINE_WAIT_ALL_TO_ALL_V

} // extern "C"
