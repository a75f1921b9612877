//===- PlanReport.h - plan.json and the printed plan ------------*- C++ -*-===//
//
// This file declares what braid-compile reports about a per-rank program:
// the plan read back from its placements, the planner's estimate of it, and
// the simulated program (the prediction), as `plan.json`, `trace.json` and
// the printed table. Everything is computed from the program itself, so a
// report of `braid-opt`'s output is the report of braid-compile's.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_TARGET_PLANREPORT_H
#define BRAID_TARGET_PLANREPORT_H

#include "braid/Sharding/PlanSharding.h"
#include "braid/Sim/ScheduleBuilder.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <optional>

namespace mlir::braid {

/// What braid-co-optimize left in one function of the per-rank program.
struct CoOptSummary {
  /// Collectives of concatenations (an all_reduce's, reduce_scatter's or
  /// all_gather's bucket), and the members they carry.
  int64_t buckets = 0, bucketedMembers = 0;
  /// All_to_alls of concatenations (fused pooled-row exchanges), and the
  /// exchanges they carry.
  int64_t fusedExchanges = 0, fusedMembers = 0;
  /// Fused exchanges of routed indices (braid.fused_all_to_all_v_start), and
  /// the all_to_all_vs they carry.
  int64_t fusedIndexExchanges = 0, fusedIndexMembers = 0;
  /// Of those, the ones whose values move narrowed (a wire_type).
  int64_t narrowedIndexExchanges = 0;
  /// All_to_alls of f32 values moved in bf16 or f16
  /// (braid-exchange-precision).
  int64_t halfExchanges = 0;
  /// Dense layers braid-split-feature-gemm split by their features'
  /// arrival.
  int64_t splitFeatureGemms = 0;
  /// Collectives in their `_start` form.
  int64_t started = 0;
  /// Dense optimizer steps on this rank's rows of their parameter.
  int64_t shardedSteps = 0;
  /// Parameters stored as this rank's block (braid.param_shard).
  int64_t parameterBlocks = 0;
  /// The chunks of the bags a pipelined forward pass looks up
  /// (braid-chunk-lookups' braid.slice_bags); 1 when it is whole.
  int64_t lookupChunks = 1;
  /// Dense layers whose weight gradients were deferred behind an exchange
  /// (braid-defer-weight-gradients: linear_grads computing "params").
  int64_t deferredWeightGradients = 0;
  /// One-kernel optimizer steps of a gradient bucket
  /// (braid.fused_dense_update), and the parameters they update.
  int64_t fusedOptimizerSteps = 0, fusedOptimizerMembers = 0;
};

struct PlanReport {
  /// The problem and plan the program's placements describe.
  ShardingResult sharding;
  /// The planner's cost model of that plan (the embedding stage only).
  plan::PlanCost plannerCost;
  /// The planner's lower bound on the embedding stage; infinite when no
  /// plan fits memory.
  double lowerBoundUs = 0;
  /// The planner's estimate of the data-parallel dense stage, from the
  /// global program (none for a module with several functions).
  std::optional<double> plannerDenseUs;
  /// The simulated per-rank program (none for several functions).
  std::optional<sim::ProgramPrediction> prediction;
  /// The simulated @train_step of a training program.
  std::optional<sim::ProgramPrediction> trainPrediction;
  /// What co-optimization did to the forward function and @train_step.
  CoOptSummary forwardCoOpt, trainCoOpt;
  /// The simulated pipelined forms of the forward function and of
  /// @train_step (braid-pipeline-input-dist), when the program has them.
  std::optional<sim::ProgramPrediction> forwardPipelined, trainPipelined;
};

/// Builds the report of the partitioned `program`; `globalProgram` (the
/// planned program before partitioning) gives the planner's dense-stage
/// estimate when not null. Emits a located error and fails when the
/// program cannot be read back or simulated.
FailureOr<PlanReport> buildPlanReport(ModuleOp program,
                                      ModuleOp globalProgram,
                                      double planningSeconds);

/// plan.json (docs/partitioning.md).
llvm::json::Value planReportToJson(const PlanReport &report);

/// The Chrome trace of the simulated program; false when there is none.
bool writePlanTrace(llvm::raw_ostream &os, const PlanReport &report);

/// The readable plan braid-compile prints: tables, per-rank figures, the
/// prediction and its breakdown, the dense layers. Tables past
/// `maxTableRows` are elided.
void printPlanReport(llvm::raw_ostream &os, const PlanReport &report,
                     int64_t maxTableRows);

} // namespace mlir::braid

#endif // BRAID_TARGET_PLANREPORT_H
