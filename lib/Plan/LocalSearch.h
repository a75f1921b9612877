//===- LocalSearch.h - Improving a plan by local search (internal) -*- C++ -*-===//
//
// This file declares the improvement phase of Braid's planner.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_LIB_PLAN_LOCALSEARCH_H
#define BRAID_LIB_PLAN_LOCALSEARCH_H

#include "braid/Plan/Planner.h"

namespace mlir::braid::plan {

/// Makes the feasible plan `plan` faster under the full cost model, keeping
/// it feasible: replicas where exchanges cost most per byte, table-wise
/// tables off the bottleneck rank, sharded tables re-placed, then (up to
/// 128 tables) an iterated local search within a fixed amount of work.
/// Deterministic.
void improvePlan(const PlanProblem &problem, Plan &plan);

} // namespace mlir::braid::plan

#endif // BRAID_LIB_PLAN_LOCALSEARCH_H
