//===- Simulator.h - Per-rank schedule simulator ----------------*- C++ -*-===//
//
// This file declares the simulator: it runs a per-rank schedule (ops on
// streams, dependencies, collectives that synchronize their group) and
// returns the makespan, per-rank timelines and a breakdown of compute,
// communication, exposed communication and idle time. A kernel that overlaps
// a collective on its rank is slowed by the cost model's contention term, so
// overlap is never predicted to be free; collectives that run at once on a
// rank share its links, so running two side by side gains nothing. The trace is Chrome/Perfetto JSON.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_SIM_SIMULATOR_H
#define BRAID_SIM_SIMULATOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <string>
#include <vector>

namespace mlir::braid::sim {

enum class OpKind { compute, comm };

/// One operation of one rank.
struct SimOp {
  std::string name;
  /// What the op is for, in breakdowns and traces (may be empty).
  std::string category;
  int64_t rank = 0;
  /// Ops on one (rank, stream) run one at a time, in the order given.
  int64_t stream = 0;
  OpKind kind = OpKind::compute;
  /// Time alone on the device.
  double durationUs = 0;
  /// Indices of ops that must finish first (any rank).
  std::vector<int64_t> deps;
  /// Comm ops with the same non-negative id form one collective: all start
  /// when every member is ready, and each member runs for its duration.
  int64_t collectiveId = -1;
  /// Compute ops: the fraction of their time bound by memory bandwidth.
  double memoryBoundFraction = 0;
  /// Comm ops: the memory bandwidth they use while running.
  double memoryGBps = 0;
};

/// How much a compute op slows while comm runs on its rank:
/// (memoryBoundFraction, memory GB/s of the running comm) -> dilation >= 1.
using DilationFn = std::function<double(double, double)>;

struct RankBreakdown {
  double computeUs = 0;      ///< time some compute op runs
  double commUs = 0;         ///< time some comm op runs
  double exposedCommUs = 0;  ///< comm with no compute beside it
  double idleUs = 0;         ///< nothing runs, before the makespan
  double endUs = 0;          ///< when the rank's last op ends
};

struct SimResult {
  double makespanUs = 0;
  std::vector<RankBreakdown> ranks;
  /// Start and end of every op, by op index.
  std::vector<double> startUs, endUs;
};

/// Simulates `ops` on `numRanks` ranks. A comm op advances at
/// `commRateBesideCompute` (in (0, 1]) of its rate while a compute op runs
/// on its rank. Fails on a dependency cycle, an out-of-range index, or a
/// collective whose members can never all be ready.
llvm::Expected<SimResult> simulate(llvm::ArrayRef<SimOp> ops, int64_t numRanks,
                                   const DilationFn &dilation,
                                   double commRateBesideCompute = 1.0);

/// Writes a Chrome/Perfetto trace: one "X" event per op with pid = rank,
/// tid = stream, cat = "compute" or "comm", times in microseconds.
void writeChromeTrace(llvm::raw_ostream &os, llvm::ArrayRef<SimOp> ops,
                      const SimResult &result);

} // namespace mlir::braid::sim

#endif // BRAID_SIM_SIMULATOR_H
