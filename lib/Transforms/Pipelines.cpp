//===- Pipelines.cpp - Braid's registered pipelines -----------------------===//
//
// This file registers Braid's passes and the pipelines that chain them.
//
//===----------------------------------------------------------------------===//

#include "braid/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;

/// braid-lower-cpu after braid-lower-compute (Braid's compute ops to
/// tensor/linalg/scf/vector): elementwise arith to linalg, one-shot
/// bufferization across function boundaries (identity layouts, so the host
/// passes plain strided buffers; CSE and canonicalization then drop the
/// copies of a row onto itself that scf.forall's parallel_insert_slice
/// leaves) with ownership-based deallocation, linalg
/// and scf.forall to scf.parallel, mapped to GPU processors (block, then
/// thread: the form the CUDA target lowers; OpenMP ignores the mapping) and
/// on to OpenMP, vector transfers to
/// (masked) vector loads, then LLVM.
static constexpr llvm::StringLiteral kLowerCpuBackend =
    "func.func(convert-elementwise-to-linalg),"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "func.func(cse,canonicalize),"
    "buffer-deallocation-pipeline,"
    "func.func(convert-linalg-to-parallel-loops,scf-forall-to-parallel,"
    "gpu-map-parallel-loops),"
    "convert-scf-to-openmp,"
    "convert-vector-to-llvm{reassociate-fp-reductions},"
    "expand-strided-metadata,"
    "lower-affine,"
    "finalize-memref-to-llvm,"
    "convert-scf-to-cf,"
    "convert-to-llvm,"
    "reconcile-unrealized-casts,"
    "braid-emit-packed-entry";

void mlir::braid::addLowerCpuBackendPasses(OpPassManager &pm) {
  if (failed(parsePassPipeline(kLowerCpuBackend, pm)))
    llvm::report_fatal_error("braid-lower-cpu: malformed pipeline");
}

void mlir::braid::registerBraidPassesAndPipelines() {
  registerBraidPasses();
  // The upstream passes braid-lower-cpu is made of.
  registerConversionPasses();
  bufferization::registerBufferizationPasses();
  bufferization::registerBufferizationPipelines();
  registerLinalgPasses();
  memref::registerMemRefPasses();
  registerSCFPasses();
  registerGpuMapParallelLoopsPass();
  registerCSEPass();
  registerCanonicalizerPass();
  PassPipelineRegistration<>(
      "braid-shard",
      "plan the sharding for the module's braid.cluster, then partition",
      [](OpPassManager &pm) {
        pm.addPass(createBraidPlanShardingPass());
        pm.addPass(createBraidPartitionPass());
      });
  PassPipelineRegistration<>(
      "braid-lower-cpu",
      "lower a per-rank Braid program to the LLVM dialect for the CPU: "
      "kernels as OpenMP parallel loops",
      [](OpPassManager &pm) {
        pm.addPass(createBraidLowerComputePass());
        braid::addLowerCpuBackendPasses(pm);
      });
}
