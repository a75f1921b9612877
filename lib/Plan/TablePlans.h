//===- TablePlans.h - Building table plans (internal) -----------*- C++ -*-===//
//
// This file declares the helper the planners share to lay out one table in
// one sharding type with even splits.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_LIB_PLAN_TABLEPLANS_H
#define BRAID_LIB_PLAN_TABLEPLANS_H

#include "braid/Plan/Planner.h"

namespace mlir::braid::plan {

/// `table` in sharding `type`: table_wise on rank `where`; row_wise over all
/// ranks; table_row_wise over node `where`; column_wise in `parts` shards
/// on ranks where, where+1, ...; data_parallel on every rank.
TablePlan makeTablePlan(const PlanProblem &problem, const TableSpec &table,
                        ShardingType type, int64_t where, int64_t parts);

/// "12.34 GB".
std::string formatGB(double bytes);

} // namespace mlir::braid::plan

#endif // BRAID_LIB_PLAN_TABLEPLANS_H
