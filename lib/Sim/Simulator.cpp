//===- Simulator.cpp - Per-rank schedule simulator ------------------------===//
//
// This file implements a discrete-event simulation with progress rates. Each
// running op holds its remaining work (microseconds at full speed); between
// events every op advances at its rate, which is 1 except for compute that
// overlaps comm on its rank, which advances at 1 / dilation, and for comm
// ops that run beside other comm ops on their rank, which share its links
// (k at once advance at 1 / k), and beside compute on their rank, which
// slows them to the machine's comm-beside-compute rate (a collective at its
// slowest member's rate).
// Events are op completions; after each, newly ready ops start.
//
//===----------------------------------------------------------------------===//

#include "braid/Sim/Simulator.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

using namespace llvm;
using namespace mlir::braid::sim;

namespace {
enum class State { waiting, running, done };

/// Total length of the union of `intervals`.
double unionLength(std::vector<std::pair<double, double>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0, start = 0, end = -1;
  for (auto [s, e] : intervals) {
    if (s > end) {
      if (end > start)
        total += end - start;
      start = s;
      end = e;
    } else {
      end = std::max(end, e);
    }
  }
  if (end > start)
    total += end - start;
  return total;
}

/// Length of `a` minus the parts covered by `b`.
double uncoveredLength(std::vector<std::pair<double, double>> a,
                       std::vector<std::pair<double, double>> b) {
  std::vector<std::pair<double, double>> both = a;
  both.insert(both.end(), b.begin(), b.end());
  return unionLength(both) - unionLength(b);
}
} // namespace

Expected<SimResult> mlir::braid::sim::simulate(ArrayRef<SimOp> ops,
                                               int64_t numRanks,
                                               const DilationFn &dilation,
                                               double commRateBesideCompute) {
  if (!(commRateBesideCompute > 0 && commRateBesideCompute <= 1))
    return createStringError(inconvertibleErrorCode(),
                             "the rate of communication beside computation "
                             "must lie in (0, 1], not " +
                                 std::to_string(commRateBesideCompute));
  int64_t n = ops.size();
  std::vector<State> state(n, State::waiting);
  std::vector<double> remaining(n), start(n, 0), end(n, 0);
  // Program order per (rank, stream): the next op each stream may start.
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> streams;
  std::map<std::pair<int64_t, int64_t>, size_t> head;
  DenseMap<int64_t, std::vector<int64_t>> collectives;
  for (int64_t i = 0; i < n; ++i) {
    const SimOp &op = ops[i];
    if (op.rank < 0 || op.rank >= numRanks)
      return createStringError(inconvertibleErrorCode(),
                               "op " + Twine(i) + " '" + op.name +
                                   "' runs on rank " + Twine(op.rank) + " of " +
                                   Twine(numRanks));
    if (!(op.durationUs >= 0))
      return createStringError(inconvertibleErrorCode(),
                               "op " + Twine(i) + " '" + op.name +
                                   "' has a negative duration");
    if (!std::isfinite(op.durationUs))
      return createStringError(inconvertibleErrorCode(),
                               "op " + Twine(i) + " '" + op.name +
                                   "' has no finite duration (its sizes "
                                   "are too large to price)");
    for (int64_t dep : op.deps)
      if (dep < 0 || dep >= n || dep == i)
        return createStringError(inconvertibleErrorCode(),
                                 "op " + Twine(i) + " '" + op.name +
                                     "' depends on invalid op " + Twine(dep));
    remaining[i] = op.durationUs;
    streams[{op.rank, op.stream}].push_back(i);
    if (op.collectiveId >= 0)
      collectives[op.collectiveId].push_back(i);
  }

  auto isReady = [&](int64_t i) {
    const SimOp &op = ops[i];
    auto key = std::make_pair(op.rank, op.stream);
    const std::vector<int64_t> &queue = streams[key];
    if (head[key] >= queue.size() || queue[head[key]] != i)
      return false;
    return llvm::all_of(op.deps,
                        [&](int64_t dep) { return state[dep] == State::done; });
  };

  // The ops running now, in index order: each event visits them alone, and
  // sums over them in the order a scan of every op would.
  std::vector<int64_t> running;
  std::vector<double> rate(n, 1.0);
  std::vector<double> commMemory(numRanks, 0);
  std::vector<int64_t> commRunning(numRanks, 0), computeRunning(numRanks, 0);
  double now = 0;
  int64_t finished = 0;
  while (finished < n) {
    // Start everything that can start now.
    bool started = true;
    size_t before = running.size();
    while (started) {
      started = false;
      for (auto &[key, queue] : streams) {
        if (head[key] >= queue.size())
          continue;
        int64_t i = queue[head[key]];
        if (state[i] != State::waiting || !isReady(i))
          continue;
        std::vector<int64_t> group{i};
        if (ops[i].collectiveId >= 0) {
          group = collectives[ops[i].collectiveId];
          if (!llvm::all_of(group, [&](int64_t m) {
                return state[m] == State::waiting && isReady(m);
              }))
            continue;
        }
        for (int64_t m : group) {
          state[m] = State::running;
          start[m] = now;
          running.push_back(m);
        }
        started = true;
      }
    }
    if (running.size() != before)
      llvm::sort(running);
    // Rates: compute slows while comm runs on its rank, and the comm ops
    // running at once on a rank share its links evenly; a collective
    // advances at the rate of its slowest member.
    std::fill(commMemory.begin(), commMemory.end(), 0.0);
    std::fill(commRunning.begin(), commRunning.end(), 0);
    std::fill(computeRunning.begin(), computeRunning.end(), 0);
    for (int64_t i : running) {
      if (ops[i].kind == OpKind::comm) {
        ++commRunning[ops[i].rank];
        commMemory[ops[i].rank] += ops[i].memoryGBps;
      } else {
        ++computeRunning[ops[i].rank];
      }
    }
    DenseMap<int64_t, double> collectiveRate;
    for (int64_t i : running) {
      rate[i] = 1.0;
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
    double next = std::numeric_limits<double>::infinity();
    for (int64_t i : running) {
      if (ops[i].kind == OpKind::comm && ops[i].collectiveId >= 0)
        rate[i] = collectiveRate.lookup(ops[i].collectiveId);
      next = std::min(next, remaining[i] / rate[i]);
    }
    if (running.empty()) {
      std::string stuck;
      for (int64_t i = 0; i < n && stuck.size() < 200; ++i)
        if (state[i] == State::waiting)
          stuck += " '" + ops[i].name + "' (rank " +
                   std::to_string(ops[i].rank) + ")";
      return createStringError(inconvertibleErrorCode(),
                               "the schedule cannot progress: waiting ops" +
                                   stuck +
                                   " have dependencies or collective members "
                                   "that never become ready");
    }
    now += next;
    for (int64_t i : running) {
      remaining[i] -= next * rate[i];
      if (remaining[i] <= 1e-9 * std::max(1.0, ops[i].durationUs)) {
        state[i] = State::done;
        end[i] = now;
        ++head[{ops[i].rank, ops[i].stream}];
        ++finished;
      }
    }
    llvm::erase_if(running, [&](int64_t i) { return state[i] == State::done; });
  }

  SimResult result;
  result.startUs = start;
  result.endUs = end;
  result.ranks.resize(numRanks);
  std::vector<std::vector<std::pair<double, double>>> compute(numRanks),
      comm(numRanks);
  for (int64_t i = 0; i < n; ++i) {
    (ops[i].kind == OpKind::compute ? compute : comm)[ops[i].rank].push_back(
        {start[i], end[i]});
    result.ranks[ops[i].rank].endUs =
        std::max(result.ranks[ops[i].rank].endUs, end[i]);
    result.makespanUs = std::max(result.makespanUs, end[i]);
  }
  for (int64_t r = 0; r < numRanks; ++r) {
    RankBreakdown &b = result.ranks[r];
    b.computeUs = unionLength(compute[r]);
    b.commUs = unionLength(comm[r]);
    b.exposedCommUs = uncoveredLength(comm[r], compute[r]);
    std::vector<std::pair<double, double>> all = compute[r];
    all.insert(all.end(), comm[r].begin(), comm[r].end());
    b.idleUs = result.makespanUs - unionLength(all);
  }
  return result;
}

void mlir::braid::sim::writeChromeTrace(raw_ostream &os, ArrayRef<SimOp> ops,
                                        const SimResult &result) {
  // Streamed: a large program has hundreds of thousands of events, too many
  // to build as one JSON value first.
  json::OStream out(os);
  out.object([&] {
    out.attributeArray("traceEvents", [&] {
      for (size_t i = 0; i < ops.size(); ++i)
        out.object([&] {
          if (!ops[i].category.empty())
            out.attributeObject(
                "args", [&] { out.attribute("category", ops[i].category); });
          out.attribute("cat",
                        ops[i].kind == OpKind::compute ? "compute" : "comm");
          out.attribute("dur", result.endUs[i] - result.startUs[i]);
          out.attribute("name", ops[i].name);
          out.attribute("ph", "X");
          out.attribute("pid", ops[i].rank);
          out.attribute("tid", ops[i].stream);
          out.attribute("ts", result.startUs[i]);
        });
    });
    out.attribute("displayTimeUnit", "ms");
  });
}
