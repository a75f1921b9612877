//===- PlanSchedule.cpp - A plan's embedding stage as a schedule ----------===//
//
// This file lays a costed plan's embedding stage out as a simulator
// schedule: the planner's abstraction of the exchanges and lookups, which
// bench/planner simulates beside the compiled program's own schedule.
//
//===----------------------------------------------------------------------===//

#include "braid/Plan/Planner.h"

#include "braid/Sim/Simulator.h"

using namespace mlir::braid;

std::vector<sim::SimOp> mlir::braid::plan::buildPlanSchedule(const PlanCost &cost) {
  struct Stage {
    const char *name;
    sim::OpKind kind;
    bool perRank;
    double us;
  };
  const Stage stages[] = {
      {"index all_to_all", sim::OpKind::comm, false, cost.indexExchangeUs},
      {"lookups", sim::OpKind::compute, true, 0},
      {"output all_to_all", sim::OpKind::comm, false, cost.outputExchangeUs},
      {"reduce_scatter", sim::OpKind::comm, false, cost.reduceScatterUs}};
  std::vector<sim::SimOp> ops;
  int64_t numRanks = cost.lookupUs.size();
  for (int64_t rank = 0; rank < numRanks; ++rank) {
    int64_t previous = -1, collectiveId = 0;
    for (const Stage &stage : stages) {
      double us = stage.perRank ? cost.lookupUs[rank] : stage.us;
      bool isComm = stage.kind == sim::OpKind::comm;
      if (us <= 0 && !stage.perRank)
        continue;
      sim::SimOp op;
      op.name = stage.name;
      op.rank = rank;
      op.kind = stage.kind;
      op.durationUs = us;
      op.collectiveId = isComm ? collectiveId++ : -1;
      if (previous >= 0)
        op.deps.push_back(previous);
      previous = ops.size();
      ops.push_back(std::move(op));
    }
  }
  return ops;
}
