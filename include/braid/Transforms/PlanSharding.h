//===- PlanSharding.h - Planning a module's sharding ------------*- C++ -*-===//
//
// This file declares what braid-plan-sharding does, for the tools that also
// need the planning problem and the plan it chose (braid-compile reports the
// predicted cost and the lower bound of the same plan).
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_TRANSFORMS_PLANSHARDING_H
#define BRAID_TRANSFORMS_PLANSHARDING_H

#include "braid/Plan/Planner.h"

#include "mlir/Support/LLVM.h"

namespace mlir {
class ModuleOp;
class Operation;
} // namespace mlir

namespace mlir::braid {

struct ShardingOptions {
  /// braid | greedy:size | greedy:dim | greedy:dim_pooling |
  /// greedy:dim_pooling_logrows
  std::string planner = "braid";
  /// A sharding type name: every table in that type.
  std::string forceSharding;
  /// A hardware preset or file; empty: the module's braid.cluster.
  std::string cluster;
  int64_t nodes = 0, ranksPerNode = 0;
};

/// A dense layer with static shapes and what each parallelization would
/// cost it; braid-partition implements the data-parallel form, which the
/// planner places every layer in.
struct DenseLayerChoice {
  Operation *op;
  int64_t out, in;
  plan::DenseLayerCost cost;
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
FailureOr<ShardingResult> planModuleSharding(ModuleOp module,
                                             const ShardingOptions &options);

} // namespace mlir::braid

#endif // BRAID_TRANSFORMS_PLANSHARDING_H
