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
#include "braid/Plan/Planner.h"
#include "braid/Sim/Simulator.h"

#include "mlir/Support/LLVM.h"

namespace mlir {
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace mlir::braid::sim {

/// Builds the schedule of `func` run by `numRanks` ranks, `ranksPerNode` to
/// a node. Emits a located error and fails on ops it cannot cost (for
/// example a collective over a dynamically shaped tensor).
/// The embedding stage of a costed sharding plan: on every rank the index
/// all_to_all, the fused lookups, the output all_to_all and the row-wise
/// reduce_scatter, in order, each collective synchronized across ranks.
/// Its simulated makespan is the plan's iteration time.
std::vector<SimOp> buildPlanSchedule(const plan::PlanCost &cost);

FailureOr<std::vector<SimOp>> buildSchedule(func::FuncOp func,
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
