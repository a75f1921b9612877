//===- Pipelines.cpp - Braid's registered pipelines -----------------------===//
//
// This file registers Braid's passes and the pipelines that chain them.
//
//===----------------------------------------------------------------------===//

#include "braid/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void mlir::braid::registerBraidPassesAndPipelines() {
  registerBraidPasses();
  PassPipelineRegistration<>(
      "braid-shard",
      "plan the sharding for the module's braid.cluster, then partition",
      [](OpPassManager &pm) {
        pm.addPass(createBraidPlanShardingPass());
        pm.addPass(createBraidPartitionPass());
      });
}
