//===- PlanLoad.h - What each table adds to a plan's cost (internal) -*- C++ -*-===//
//
// This file declares the additive form of evaluatePlan: each table's plan
// contributes per-rank lookups and memory, the link totals of the index and
// pooled-row all_to_alls, and reduce_scatter bytes; a plan's cost is a
// function of their sums. evaluatePlan sums them from scratch; the search
// keeps the sums and swaps one table's contribution to try a move in time
// proportional to the ranks, not their square.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_LIB_PLAN_PLANLOAD_H
#define BRAID_LIB_PLAN_PLANLOAD_H

#include "braid/Cost/CostModel.h"
#include "braid/Plan/Planner.h"

namespace mlir::braid::plan {

/// Sums over tables of what evaluatePlan reduces; one table's contribution
/// has the same shape.
struct PlanLoad {
  std::vector<double> lookupUs, memoryBytes; ///< per rank, launch excluded
  cost::AllToAllLinkBytes indexLinks, outputLinks;
  /// Shards with lookups, per rank: a rank with any pays one launch.
  std::vector<int64_t> lookupShards;
  /// Tables that use each exchange; one no table uses costs nothing, not
  /// even its latency. (Counts stay exact as loads come and go.)
  int64_t indexUsers = 0, outputUsers = 0, rowWiseUsers = 0,
          tableRowWiseUsers = 0;
  double rowWiseBytes = 0, tableRowWiseBytes = 0;
  /// Training: data-parallel tables' gradients, summed by one all_reduce.
  int64_t dataParallelUsers = 0;
  double dataParallelGradBytes = 0;

  explicit PlanLoad(const PlanProblem &problem);
  /// Adds `sign` (+1 or -1) times `other`.
  void add(const PlanLoad &other, double sign);
};

/// What table `table` in plan `tp` contributes.
PlanLoad tableLoad(const PlanProblem &problem, const TableSpec &table,
                   const TablePlan &tp);

/// The cost of a plan whose tables sum to `load`.
PlanCost costOfLoad(const PlanProblem &problem, const PlanLoad &load);

/// The cost's iteration time and memory feasibility alone, without
/// allocating its per-rank vectors: what a search compares.
struct CostSummary {
  double iterationUs = 0;
  bool fitsMemory = true;
};
CostSummary summarizeLoad(const PlanProblem &problem, const PlanLoad &load);

} // namespace mlir::braid::plan

#endif // BRAID_LIB_PLAN_PLANLOAD_H
