//===- ScheduleBuilder.h - Schedules from Braid programs --------*- C++ -*-===//
//
// This file declares how a Braid function becomes a simulator schedule: every
// op is costed by the cost model and placed on a stream of every rank.
// Compute and synchronous collectives run on stream 0; the `_start` form of a
// collective runs on stream 1 and its `braid.wait` makes stream 0 wait for
// it, so asynchronous collectives overlap the compute between them.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_SIM_SCHEDULEBUILDER_H
#define BRAID_SIM_SCHEDULEBUILDER_H

#include "braid/Cluster/Hardware.h"
#include "braid/Sim/Simulator.h"

#include "mlir/Support/LLVM.h"

#include <map>
#include <string>

namespace mlir {
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace mlir::braid::sim {

/// Builds the schedule of `func` run by `numRanks` ranks, `ranksPerNode` to
/// a node. A per-rank program (with `braid.batch_split`) has its dynamic
/// sizes bound on each rank from the batch split, the pooling factors and
/// the placements (ProgramShapes), and each rank's ops are costed on its
/// own sizes and shards; the ranks of each replica group run one
/// collective, which takes the group's slowest member's time.
/// Emits a located error and fails on ops it cannot cost.
FailureOr<std::vector<SimOp>> buildSchedule(func::FuncOp func,
                                            const cluster::HardwareDesc &hw,
                                            int64_t numRanks,
                                            int64_t ranksPerNode);

/// A simulated program: its schedule, the simulation, and where the time
/// of the rank that finishes last goes, by op category (`lookup`,
/// `routing`, `index_exchange`, `output_exchange`, `other_comm`, `dense`;
/// each op's time as simulated, contention included).
struct ProgramPrediction {
  std::vector<SimOp> schedule;
  SimResult result;
  int64_t criticalRank = 0;
  std::map<std::string, double> categoryUs;
};

/// buildSchedule, then simulate with the cost model's contention.
FailureOr<ProgramPrediction> simulateProgram(func::FuncOp func,
                                             const cluster::HardwareDesc &hw,
                                             int64_t numRanks,
                                             int64_t ranksPerNode);

/// The data-parallel dense stage of the global program `func` (static
/// shapes, global batch `batch`) on `ranks` ranks: every op but the
/// embedding lookups, which the sharding plan prices, costed on the largest
/// rank's share of the batch, ceil(batch / ranks) samples, one after the
/// other. Linear layers are GEMMs of that many rows; interactions and
/// elementwise ops stream that share of their bytes. Emits a located error
/// and fails on an op it cannot cost.
FailureOr<double> estimateDenseStageUs(func::FuncOp func,
                                       const cluster::HardwareDesc &hw,
                                       int64_t batch, int64_t ranks);

} // namespace mlir::braid::sim

#endif // BRAID_SIM_SCHEDULEBUILDER_H
