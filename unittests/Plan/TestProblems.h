//===- TestProblems.h - Planning problems for the planner's tests -*- C++ -*-===//
//
// This file gives the planner's tests their common starting point: a
// problem with no tables on a cluster of DGX-H100 nodes.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_UNITTESTS_PLAN_TESTPROBLEMS_H
#define BRAID_UNITTESTS_PLAN_TESTPROBLEMS_H

#include "braid/Plan/Planner.h"

namespace mlir::braid::plan {

/// `nodes` x `ranksPerNode` H100s, a global batch of `batch`, and 8 GB of
/// each rank's 80 kept free for activations.
inline PlanProblem dgxProblem(int64_t nodes, int64_t ranksPerNode,
                              int64_t batch) {
  PlanProblem problem;
  problem.hw = *cluster::loadHardware("dgx-h100");
  problem.nodes = nodes;
  problem.ranksPerNode = ranksPerNode;
  problem.batch = batch;
  problem.reserveBytes = 8e9;
  return problem;
}

} // namespace mlir::braid::plan

#endif // BRAID_UNITTESTS_PLAN_TESTPROBLEMS_H
