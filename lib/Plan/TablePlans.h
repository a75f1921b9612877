//===- TablePlans.h - Building table plans (internal) -----------*- C++ -*-===//
//
// This file declares the helpers the planners share to lay out one table in
// one sharding type with even splits, and the layouts Braid's search tries.
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

/// `table` column_wise in `parts` shards spread over the nodes: shard k on
/// node (n + k) mod N, at local rank (l + k / N) mod the ranks per node, for
/// rank `where` = n * ranksPerNode + l.
TablePlan makeSpreadColumnPlan(const PlanProblem &problem,
                               const TableSpec &table, int64_t where,
                               int64_t parts);

/// Whether `tp`'s shards lie on more than one node.
bool crossesNodes(const PlanProblem &problem, const TablePlan &tp);

/// Every layout Braid's search tries for `table`: table-wise on each rank;
/// row-wise; column-wise in 2, 4, 8 or 16 shards, in blocks of a node's
/// ranks and spread over nodes; table-row-wise on each node; replicated.
/// Whether the problem allows shards that hold some of a table's columns:
/// not when training with row-wise Adagrad, whose per-row statistic needs
/// all of a row's columns.
inline bool allowsColumnShards(const PlanProblem &problem) {
  return !(problem.training && problem.embeddingOptimizer == "rowwise_adagrad");
}

/// Whether `table` may be split by rows (row_wise, table_row_wise): not a
/// max-pooled table in a training step, where a maximum tied across row
/// shards would train differently from the global step (docs/design.md,
/// "Known limits"). Only the memory fallback (no other layout fits) does.
inline bool allowsRowShards(const PlanProblem &problem,
                            const TableSpec &table) {
  return !(problem.training && table.maxPooled);
}

std::vector<TablePlan> tableOptions(const PlanProblem &problem,
                                    const TableSpec &table);

/// "12.34 GB".
std::string formatGB(double bytes);

} // namespace mlir::braid::plan

#endif // BRAID_LIB_PLAN_TABLEPLANS_H
