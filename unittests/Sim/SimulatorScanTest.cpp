//===- SimulatorScanTest.cpp - The simulator against a scan of every op ---===//
//
// The simulator visits only the ops running at each event. This test keeps
// the plain form beside it, an event loop that scans every op at every
// event, and checks on random schedules (ranks, streams, dependencies across
// ranks, collectives, contention) that both give the same start and end of
// every op, bit for bit, and fail on the same schedules.
//
//===----------------------------------------------------------------------===//

#include "braid/Sim/Simulator.h"

#include "llvm/ADT/DenseMap.h"

#include "gtest/gtest.h"

#include <limits>
#include <map>
#include <optional>
#include <random>

using namespace mlir::braid::sim;

namespace {
/// Start and end of every op, by scanning every op at every event; nullopt
/// where the schedule cannot progress.
std::optional<std::pair<std::vector<double>, std::vector<double>>>
scanEveryOp(const std::vector<SimOp> &ops, int64_t numRanks,
            const DilationFn &dilation, double commRateBesideCompute) {
  enum class State { waiting, running, done };
  int64_t n = ops.size();
  std::vector<State> state(n, State::waiting);
  std::vector<double> remaining(n), start(n, 0), end(n, 0);
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> streams;
  std::map<std::pair<int64_t, int64_t>, size_t> head;
  llvm::DenseMap<int64_t, std::vector<int64_t>> collectives;
  for (int64_t i = 0; i < n; ++i) {
    remaining[i] = ops[i].durationUs;
    streams[{ops[i].rank, ops[i].stream}].push_back(i);
    head[{ops[i].rank, ops[i].stream}] = 0;
    if (ops[i].collectiveId >= 0)
      collectives[ops[i].collectiveId].push_back(i);
  }
  auto isReady = [&](int64_t i) {
    auto key = std::make_pair(ops[i].rank, ops[i].stream);
    if (head[key] >= streams[key].size() || streams[key][head[key]] != i)
      return false;
    for (int64_t dep : ops[i].deps)
      if (state[dep] != State::done)
        return false;
    return true;
  };
  double now = 0;
  int64_t finished = 0;
  while (finished < n) {
    for (bool started = true; started;) {
      started = false;
      for (auto &[key, queue] : streams) {
        if (head[key] >= queue.size())
          continue;
        int64_t i = queue[head[key]];
        if (state[i] != State::waiting || !isReady(i))
          continue;
        std::vector<int64_t> group{i};
        if (ops[i].collectiveId >= 0)
          group = collectives[ops[i].collectiveId];
        bool all = true;
        for (int64_t m : group)
          all &= state[m] == State::waiting && isReady(m);
        if (!all)
          continue;
        for (int64_t m : group) {
          state[m] = State::running;
          start[m] = now;
        }
        started = true;
      }
    }
    std::vector<double> commMemory(numRanks, 0);
    std::vector<int64_t> commRunning(numRanks, 0), computeRunning(numRanks, 0);
    for (int64_t i = 0; i < n; ++i) {
      if (state[i] != State::running)
        continue;
      if (ops[i].kind == OpKind::comm) {
        ++commRunning[ops[i].rank];
        commMemory[ops[i].rank] += ops[i].memoryGBps;
      } else {
        ++computeRunning[ops[i].rank];
      }
    }
    std::vector<double> rate(n, 1.0);
    llvm::DenseMap<int64_t, double> collectiveRate;
    bool anyRunning = false;
    for (int64_t i = 0; i < n; ++i) {
      if (state[i] != State::running)
        continue;
      anyRunning = true;
      int64_t rank = ops[i].rank;
      if (ops[i].kind == OpKind::compute && commRunning[rank])
        rate[i] = 1.0 / std::max(1.0, dilation(ops[i].memoryBoundFraction,
                                               commMemory[rank]));
      if (ops[i].kind == OpKind::comm) {
        rate[i] = 1.0 / double(std::max<int64_t>(1, commRunning[rank]));
        if (computeRunning[rank])
          rate[i] *= commRateBesideCompute;
        if (ops[i].collectiveId >= 0) {
          auto [it, inserted] =
              collectiveRate.try_emplace(ops[i].collectiveId, rate[i]);
          if (!inserted)
            it->second = std::min(it->second, rate[i]);
        }
      }
    }
    if (!anyRunning)
      return std::nullopt;
    double next = std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < n; ++i) {
      if (state[i] != State::running)
        continue;
      if (ops[i].kind == OpKind::comm && ops[i].collectiveId >= 0)
        rate[i] = collectiveRate.lookup(ops[i].collectiveId);
      next = std::min(next, remaining[i] / rate[i]);
    }
    now += next;
    for (int64_t i = 0; i < n; ++i) {
      if (state[i] != State::running)
        continue;
      remaining[i] -= next * rate[i];
      if (remaining[i] <= 1e-9 * std::max(1.0, ops[i].durationUs)) {
        state[i] = State::done;
        end[i] = now;
        ++head[{ops[i].rank, ops[i].stream}];
        ++finished;
      }
    }
  }
  return std::make_pair(start, end);
}

/// A random schedule: compute and comm ops on a few streams per rank,
/// dependencies on earlier ops of any rank, and collectives with a member
/// on each of a random set of ranks (some of which deadlock: both forms
/// must then fail).
std::vector<SimOp> randomSchedule(std::mt19937 &random, int64_t numRanks) {
  std::uniform_int_distribution<int> coin(0, 3), streamOf(0, 2),
      rankOf(0, numRanks - 1), count(20, 120);
  std::uniform_real_distribution<double> duration(0, 50), fraction(0, 1),
      memory(0, 400);
  std::vector<SimOp> ops;
  int64_t collectiveId = 0;
  int total = count(random);
  while (int(ops.size()) < total) {
    bool isComm = coin(random) == 0;
    std::vector<int64_t> members;
    if (isComm) {
      for (int64_t rank = 0; rank < numRanks; ++rank)
        if (coin(random) != 0)
          members.push_back(rank);
      if (members.empty())
        members.push_back(rankOf(random));
    } else {
      members.push_back(rankOf(random));
    }
    int64_t id = isComm ? collectiveId++ : -1;
    for (int64_t rank : members) {
      SimOp op;
      op.name = isComm ? "comm" : "compute";
      op.rank = rank;
      op.stream = isComm ? 1 + streamOf(random) % 2 : streamOf(random) % 2;
      op.kind = isComm ? OpKind::comm : OpKind::compute;
      // Some ops take no time, as views and index arithmetic do.
      op.durationUs = coin(random) == 0 ? 0 : duration(random);
      op.collectiveId = id;
      op.memoryBoundFraction = fraction(random);
      op.memoryGBps = isComm ? memory(random) : 0;
      if (!ops.empty() && coin(random) != 0)
        op.deps.push_back(
            std::uniform_int_distribution<int64_t>(0, ops.size() - 1)(random));
      ops.push_back(op);
    }
  }
  return ops;
}
} // namespace

TEST(SimulatorScanTest, RunningOpsAloneGiveWhatAScanOfEveryOpGives) {
  std::mt19937 random(20261129);
  DilationFn dilation = [](double fraction, double commGBps) {
    return 1.0 + fraction * commGBps / 1000.0;
  };
  int compared = 0, stuck = 0;
  for (int trial = 0; trial < 300; ++trial) {
    int64_t numRanks = 1 + trial % 4;
    std::vector<SimOp> ops = randomSchedule(random, numRanks);
    double commRate = trial % 3 == 0 ? 1.0 : 0.6;
    auto expected = scanEveryOp(ops, numRanks, dilation, commRate);
    llvm::Expected<SimResult> actual =
        simulate(ops, numRanks, dilation, commRate);
    ASSERT_EQ(static_cast<bool>(actual), expected.has_value())
        << "trial " << trial;
    if (!actual) {
      llvm::consumeError(actual.takeError());
      ++stuck;
      continue;
    }
    ++compared;
    for (size_t i = 0; i < ops.size(); ++i) {
      // Bit for bit: the same sums in the same order.
      ASSERT_EQ(actual->startUs[i], expected->first[i])
          << "trial " << trial << " op " << i;
      ASSERT_EQ(actual->endUs[i], expected->second[i])
          << "trial " << trial << " op " << i;
    }
  }
  // Both kinds of schedule were drawn.
  EXPECT_GT(compared, 100);
  EXPECT_GT(stuck, 0);
}
