//===- PlanSharding.h - Planning a module's sharding ------------*- C++ -*-===//
//
// This file declares what braid-plan-sharding does, for the tools that also
// need the planning problem and the plan it chose (braid-compile reports the
// predicted cost and the lower bound of the same plan).
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_SHARDING_PLANSHARDING_H
#define BRAID_SHARDING_PLANSHARDING_H

#include "braid/Plan/Planner.h"

#include "mlir/Support/LLVM.h"

namespace mlir {
class ModuleOp;
class Operation;
} // namespace mlir

namespace mlir::braid {

struct ShardingOptions {
  /// braid | greedy:size | greedy:dim | greedy:dim_pooling |
  /// greedy:dim_pooling_logrows | keep
  std::string planner = "braid";
  /// A sharding type name: every table in that type.
  std::string forceSharding;
  /// A plan.json whose shards become the placements.
  std::string planFile;
  /// A hardware preset or file; empty: the module's braid.cluster.
  std::string cluster;
  int64_t nodes = 0, ranksPerNode = 0;
  /// Plan for the training step (the module's braid.optimizer), not the
  /// forward pass.
  bool train = false;
  /// With `train`: tensor-parallel parameters will be stored as blocks, so
  /// a training step may place Megatron-style pairs tensor-parallel.
  bool parameterBlocks = false;
};

/// A dense layer with static shapes and what each parallelization would
/// cost it; braid-partition implements the data-parallel form, which the
/// planner places every layer in.
struct DenseLayerChoice {
  Operation *op;
  int64_t out, in;
  plan::DenseLayerCost cost;
  /// How the model places the layer: data_parallel, column or row.
  std::string placement = "data_parallel";
};

struct ShardingResult {
  plan::PlanProblem problem;
  plan::Plan plan;
  /// The table ops, in problem order.
  std::vector<Operation *> tables;
  std::vector<DenseLayerChoice> denseLayers;
  double planningSeconds = 0;
};

/// The global batch of `module`: the static number of bags of its
/// embedding bags (or rows of its first input without bags).
FailureOr<int64_t> getGlobalBatch(ModuleOp module);

/// Plans `module`'s tables, writes their placements and the dense
/// placements, and returns the problem and the plan. Emits located errors.
/// Plans `module`'s tables for its cluster (or the options') and writes
/// the placements, the planner's name (`braid.planner`) and every dense
/// layer's data-parallel placement into it. With planner `keep`, the
/// tables' placements stay and are only priced.
FailureOr<ShardingResult> planModuleSharding(ModuleOp module,
                                             const ShardingOptions &options);

/// Writes `plan`'s tables (in module order) as the placements of
/// `module`'s tables, names its planner (`braid.planner`) and places every
/// dense layer data-parallel.
void applyPlan(ModuleOp module, const plan::Plan &plan, int64_t ranksPerNode);

/// The problem and plan `module` carries: its braid.cluster, its batch
/// (static bags, or the braid.batch_split of a partitioned module) and each
/// table's placement. Works on the global and the per-rank program alike.
/// `planningSeconds` is 0: the IR does not record it.
/// With `training` unset, the problem prices the training step when the
/// module has a @train_step.
FailureOr<ShardingResult>
readModuleSharding(ModuleOp module,
                   std::optional<bool> training = std::nullopt);

} // namespace mlir::braid

#endif // BRAID_SHARDING_PLANSHARDING_H
