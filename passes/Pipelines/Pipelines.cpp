//===- Pipelines.cpp - Braid's registered pipelines -----------------------===//
//
// This file builds and registers the pipelines of Braid's compile path (see
// Pipelines.h), each from its passes' constructors, and registers the passes
// they are made of.
//
//===----------------------------------------------------------------------===//

#include "braid/Pipelines/Pipelines.h"

#include "braid/CoOpt/Passes.h"
#include "braid/Training/Passes.h"
#include "braid/Conversion/Passes.h"
#include "braid/Sharding/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::braid;

/// braid-shard's passes, for any pipeline whose options include its.
template <typename Derived>
static void addShardPasses(OpPassManager &pm,
                           const ShardOptionsBase<Derived> &options,
                           bool parameterBlocks = false) {
  BraidPlanShardingPassOptions plan;
  plan.cluster = options.cluster;
  plan.nodes = options.nodes;
  plan.ranksPerNode = options.ranksPerNode;
  plan.planner = options.planner;
  plan.forceSharding = options.forceSharding;
  plan.planFile = options.plan;
  plan.train = options.train;
  plan.parameterBlocks = parameterBlocks;
  // Choose a placement for every table (or keep the ones they carry)...
  pm.addPass(createBraidPlanShardingPass(plan));
  // ...then rewrite the global program into the per-rank program.
  pm.addPass(createBraidPartitionPass());
}

void mlir::braid::buildShardPipeline(OpPassManager &pm,
                                     const ShardPipelineOptions &options) {
  addShardPasses(pm, options);
}

void mlir::braid::buildCoOptimizePipeline(
    OpPassManager &pm, const CoOptimizePipelineOptions &options) {
  if (options.optLevel >= 2) {
    // Level 2: store each tensor-parallel parameter as this rank's block,
    // whose optimizer step then needs no all_reduce of its gradient...
    bool force = options.forceCoOptimization;
    BraidStoreParameterBlocksPassOptions blocks;
    blocks.force = force;
    pm.addPass(createBraidStoreParameterBlocksPass(blocks));
    // ...run dense optimizer steps on shards between a
    // reduce_scatter and an all_gather of their gradient...
    BraidReorderCollectivesPassOptions reorder;
    reorder.force = force;
    pm.addPass(createBraidReorderCollectivesPass(reorder));
    // ...combine the remaining gradient all_reduces into DDP-style buckets
    // where the simulator predicts a gain...
    BraidBucketCollectivesPassOptions bucket;
    bucket.force = force;
    bucket.exchanges = false;
    pm.addPass(createBraidBucketCollectivesPass(bucket));
    // ...split all_reduces into reduce_scatter and all_gather, hierarchically
    // across nodes, where that is predicted faster...
    BraidDecomposeCollectivesPassOptions decompose;
    decompose.force = force;
    pm.addPass(createBraidDecomposeCollectivesPass(decompose));
    // ...start each sharded lookup's output exchange where it is and
    // complete it at the embedding's first use, behind the later lookups...
    pm.addNestedPass<func::FuncOp>(createBraidAsyncExchangesPass());
    // ...and start every other collective as soon as its input is ready,
    // waiting at its first use, where the simulator predicts a gain.
    BraidOverlapPassOptions overlap;
    overlap.force = force;
    pm.addPass(createBraidOverlapPass(overlap));
    // ...pipeline a forward pass's lookups, their exchanges and the dense
    // work after them over chunks of the bags...
    BraidChunkLookupsPassOptions chunkLookups;
    chunkLookups.force = force;
    pm.addPass(createBraidChunkLookupsPass(chunkLookups));
    // ...then fuse the pooled-row exchanges, started as they now are, into
    // one where that beats starting them one by one (a chunk's with each
    // other)...
    BraidBucketCollectivesPassOptions fuseExchanges;
    fuseExchanges.force = force;
    fuseExchanges.gradients = false;
    pm.addPass(createBraidBucketCollectivesPass(fuseExchanges));
    // ...and pipeline a gathered batch's tensor-parallel work in chunks
    // whose collectives run beside each other's computation.
    BraidChunkPipelinePassOptions chunk;
    chunk.force = force;
    pm.addPass(createBraidChunkPipelinePass(chunk));
    // ...and let the interaction read pooled rows straight out of their
    // exchange's receive buffer where assembling them is only a copy.
    BraidFuseCollectiveComputePassOptions fuse;
    fuse.force = force;
    pm.addPass(createBraidFuseCollectiveComputePass(fuse));
    // ...and run a dense layer's GEMM over the features already computed
    // while the others are still in their exchange...
    BraidSplitFeatureGemmPassOptions splitGemm;
    splitGemm.force = force;
    pm.addPass(createBraidSplitFeatureGemmPass(splitGemm));
    // ...and compute the training step's weight gradients behind the pooled
    // gradients' exchanges, now started and fused, where that pays.
    BraidDeferWeightGradientsPassOptions defer;
    defer.force = force;
    pm.addPass(createBraidDeferWeightGradientsPass(defer));
  }
  // Level 1: fold the partitioner's index arithmetic and share equal
  // exchanges and constants.
  if (options.optLevel >= 1) {
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  // Level 2, last: start the collectives still synchronous where the
  // program the rewrites above left predicts a gain, now also with their
  // readers left in place (a lengths exchange read by a lookup at the top
  // of the step and by its table's update among the gradient exchanges).
  // Offered from the start, that variant won locally and cost the later
  // rewrites more than it gained (dlrm_small's training step 0.180 -> 0.183
  // ms, docs/coopt.md). After the folding, the simulations are cheaper.
  if (options.optLevel >= 2) {
    BraidOverlapPassOptions lateOverlap;
    lateOverlap.force = options.forceCoOptimization;
    lateOverlap.keepReaders = true;
    pm.addPass(createBraidOverlapPass(lateOverlap));
    // Fuse the uniform exchanges again, now that every collective is started
    // where it will run: the earlier sweep weighed a program whose waits
    // and starts were still moving (MLPerf's forward pass keeps its two
    // lengths exchanges apart there, and fusing them now saves one
    // exchange's latency on the communication stream).
    BraidBucketCollectivesPassOptions lateFuseExchanges;
    lateFuseExchanges.force = options.forceCoOptimization;
    lateFuseExchanges.gradients = false;
    pm.addPass(createBraidBucketCollectivesPass(lateFuseExchanges));
    // Asked for: move the pooled rows and their gradients in 16 bits where
    // that pays, now that each exchange is fused and started where it runs.
    if (!options.exchangePrecision.empty()) {
      BraidExchangePrecisionPassOptions precision;
      precision.precision = options.exchangePrecision;
      precision.force = options.forceCoOptimization;
      pm.addPass(createBraidExchangePrecisionPass(precision));
    }
    // Then run the work that needs no pending collective above its wait (a
    // forward pass's data-parallel lookups, left after the first sharded
    // table's, whose routed indices it waits for).
    BraidFillWaitsPassOptions fill;
    fill.force = options.forceCoOptimization;
    pm.addPass(createBraidFillWaitsPass(fill));
    // One more sweep of the collectives still synchronous: the late fusion,
    // the 16-bit exchanges and the filled waits moved starts and waits, and
    // a collective that did not pay to start before may now (MLPerf's
    // training step: a parameter all_gather, 16.517 -> 16.370 ms).
    BraidOverlapPassOptions lastOverlap;
    lastOverlap.force = options.forceCoOptimization;
    lastOverlap.keepReaders = true;
    pm.addPass(createBraidOverlapPass(lastOverlap));
    // Asked for, last: each function's pipelined form, which runs the next
    // batch's input distribution inside this step (a driver must call it
    // differently, so it is added only on request).
    if (options.pipelineInputDist) {
      BraidPipelineInputDistPassOptions pipeline;
      pipeline.force = options.forceCoOptimization;
      pm.addPass(createBraidPipelineInputDistPass(pipeline));
    }
  }
}

void mlir::braid::buildCompilePipeline(OpPassManager &pm,
                                       const CompilePipelineOptions &options) {
  // At level 2 the training step stores tensor-parallel parameters as
  // blocks (braid-store-parameter-blocks), which the planner prices.
  addShardPasses(pm, options, /*parameterBlocks=*/options.optLevel >= 2);
  // The training step, from the per-rank forward program.
  if (options.train)
    pm.addPass(createBraidDifferentiatePass());
  CoOptimizePipelineOptions coopt;
  coopt.optLevel = options.optLevel;
  coopt.forceCoOptimization = options.forceCoOptimization;
  coopt.pipelineInputDist = options.pipelineInputDist;
  coopt.exchangePrecision = options.exchangePrecision;
  buildCoOptimizePipeline(pm, coopt);
}

/// The host code to the LLVM dialect, for braid-lower-cpu and (`cuda`)
/// braid-lower-cuda: parallel loops left on the host to OpenMP, vector
/// transfers to (masked) vector loads with reassociated reductions, the
/// standard conversions, and one entry point per function that a host calls
/// with a pointer array. The CUDA host's buffers go through the runtime's
/// allocation hooks (managed memory that kernels and host code share) and
/// its launches to the runtime's GPU entry points.
static void addHostToLLVMPasses(OpPassManager &pm, bool cuda) {
  pm.addPass(createConvertSCFToOpenMPPass());
  ConvertVectorToLLVMPassOptions vector;
  vector.reassociateFPReductions = true;
  pm.addPass(createConvertVectorToLLVMPass(vector));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  FinalizeMemRefToLLVMConversionPassOptions memref;
  memref.useGenericFunctions = cuda;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memref));
  pm.addPass(createSCFToControlFlowPass());
  if (cuda)
    pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createBraidEmitPackedEntryPass());
}

/// The passes braid-lower-cpu and braid-lower-cuda share after
/// convert-braid-to-cpu: kernels on buffers, as scf.parallel loops.
static void addBufferizePasses(OpPassManager &pm) {
  // Elementwise arith on tensors becomes linalg, which bufferizes.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  // A chain of it, one kernel.
  pm.addNestedPass<func::FuncOp>(createBraidFuseElementwiseKernelsPass());
  // One-shot bufferization across function boundaries with identity
  // layouts, so the host passes plain row-major buffers.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Drop the copies of a row onto itself that scf.forall's
  // parallel_insert_slice leaves.
  pm.addNestedPass<func::FuncOp>(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  // Ownership-based deallocation.
  bufferization::buildBufferDeallocationPipeline(pm);
  // Kernels as scf.parallel loops (bags, samples or rows outermost).
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
}

void mlir::braid::addLowerCpuBackendPasses(OpPassManager &pm) {
  addBufferizePasses(pm);
  // Copies memcpy cannot do, as loops rather than memrefCopy's element at a
  // time (the CUDA target's copies stay runtime calls on device memory).
  pm.addNestedPass<func::FuncOp>(createBraidStridedCopiesToLoopsPass());
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  addHostToLLVMPasses(pm, /*cuda=*/false);
}

void mlir::braid::buildLowerCpuPipeline(OpPassManager &pm) {
  // Braid's ops to tensor/linalg/scf/vector kernels and runtime calls.
  pm.addPass(createConvertBraidToCPUPass());
  addLowerCpuBackendPasses(pm);
}

llvm::SmallVector<std::string> mlir::braid::defaultCudaChips() {
  return {"sm_80", "sm_90"};
}

/// The chips from sm_70 that LLVM 22's NVPTX backend compiles for, with a
/// PTX ISA version it accepts for each (it stops with a fatal error below
/// the chip's minimum: 8.6 for sm_100, 8.7 for sm_120); at least 8.0. Each
/// compiles here to PTX, and to a cubin where the installed ptxas knows the
/// chip (CUDA 13's has dropped sm_70, sm_72 and sm_101: a located error).
static constexpr std::pair<llvm::StringLiteral, int> kCudaChips[] = {
    {"sm_70", 80},  {"sm_72", 80},   {"sm_75", 80},   {"sm_80", 80},
    {"sm_86", 80},  {"sm_87", 80},   {"sm_89", 80},   {"sm_90", 80},
    {"sm_90a", 80}, {"sm_100", 86},  {"sm_100a", 86}, {"sm_101", 86},
    {"sm_101a", 86}, {"sm_103", 88}, {"sm_103a", 88}, {"sm_120", 87},
    {"sm_120a", 87}, {"sm_121", 88}, {"sm_121a", 88}};

bool mlir::braid::isKnownCudaChip(llvm::StringRef chip) {
  return llvm::any_of(kCudaChips,
                      [&](const auto &entry) { return entry.first == chip; });
}

std::string mlir::braid::ptxFeaturesFor(llvm::StringRef chip) {
  for (const auto &[name, isa] : kCudaChips)
    if (name == chip)
      return "+ptx" + std::to_string(isa);
  return "+ptx80";
}

void mlir::braid::addLowerCudaKernelPasses(
    OpPassManager &pm, const LowerCudaPipelineOptions &options) {
  // The same kernels as the CPU's, buffers and scf.parallel loops.
  addBufferizePasses(pm);
  // A kernel over rows and columns as one loop over its elements: a grid
  // of one dimension, consecutive threads on consecutive columns.
  pm.addNestedPass<func::FuncOp>(createBraidFlattenParallelLoopsPass());
  // Each kernel's outer loop in blocks of threads: a thread per bag,
  // sample or row, many in flight per block (a whole bag per block would
  // leave all but one thread of it idle).
  int64_t threads = std::max<int64_t>(1, options.threadsPerBlock);
  pm.addNestedPass<func::FuncOp>(
      createParallelLoopTilingPass({threads, 1}, /*noMinMaxBounds=*/false));
  // Without merging a loop over tiles with the loop over its tile: for a
  // loop of static size they would become one 2-D loop, which the mapping
  // below puts on a grid of one-thread blocks (the dense update's; the
  // pattern's name is its type's, and test/Conversion/BraidToCUDA/
  // dense_update.mlir fails if it stops matching).
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass(
      GreedyRewriteConfig(),
      /*disabledPatterns=*/{"(anonymous namespace)::MergeNestedParallelLoops"}));
  // Tiles to blocks, their iterations to threads; then to gpu.launch.
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  // Constant block sizes fold to constants, which outlining records on the
  // kernel (known_block_size: NVPTX's maxntid).
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  // Constants stay constants inside the kernels (a row's column offset
  // must be known there to prove its alignment), not kernel arguments.
  pm.addNestedPass<func::FuncOp>(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createBraidNameGpuKernelsPass());
  // One NVVM target per chip: gpu-module-to-binary emits an object each.
  llvm::SmallVector<std::string> chips(options.chips.begin(),
                                       options.chips.end());
  if (chips.empty())
    chips = defaultCudaChips();
  for (const std::string &chip : chips) {
    GpuNVVMAttachTargetOptions target;
    target.chip = chip;
    target.features =
        options.features.empty() ? ptxFeaturesFor(chip)
                                 : std::string(options.features);
    target.optLevel = 3;
    pm.addPass(createGpuNVVMAttachTarget(target));
  }
  // The kernels' bodies to the LLVM dialect with NVVM intrinsics.
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  // Errors a kernel finds (a bad received index) go to a device record.
  kernels.addPass(createBraidGpuErrorRecordsPass());
  // Row reads and writes as 16-byte vector accesses where provable.
  kernels.addPass(createBraidAlignVectorAccessesPass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createSCFToControlFlowPass());
  ConvertVectorToLLVMPassOptions vector;
  vector.reassociateFPReductions = true;
  kernels.addPass(createConvertVectorToLLVMPass(vector));
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  // PTX for every chip...
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  binary.toolkitPath = options.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  // ...assembled into a cubin each, in one fat binary the driver picks the
  // device's cubin from.
  if (options.format == CudaKernelFormat::Fatbin) {
    BraidAssembleCudaKernelsPassOptions assemble;
    assemble.toolkit = options.toolkit;
    assemble.kernelDir = options.kernelDir;
    pm.addPass(createBraidAssembleCudaKernelsPass(assemble));
  }
}

void mlir::braid::addLowerCudaHostPasses(OpPassManager &pm) {
  // The gradient collectives become NCCL calls on the communication
  // stream (started ones with an event their wait synchronizes)...
  pm.addPass(createBraidLowerCollectivesToNcclPass());
  // ...and the runtime calls the CUDA runtime serves (cuBLASLt GEMMs) swap
  // to it; the others keep the CPU runtime, on managed memory.
  pm.addPass(createBraidUseCudaRuntimePass());
  // What stayed on the host (input checks, loops with reductions) lowers as
  // on the CPU, on managed memory, launching the kernels.
  addHostToLLVMPasses(pm, /*cuda=*/true);
}

ConvertBraidToCPUPassOptions mlir::braid::cudaConvertBraidToCPUOptions() {
  ConvertBraidToCPUPassOptions options;
  options.embeddingUpdateKernel = true;
  options.poolingLanes = cudaLookupPoolingLanes;
  options.catLanes = cudaCatLanes;
  // The host reading every index to check it moved the indices' managed
  // pages back to it before each lookup (docs/cuda-backend.md).
  options.parallelChecks = true;
  options.asyncCounts = false;
  options.biasGradColumns = 1;
  return options;
}

void mlir::braid::buildLowerCudaPipeline(
    OpPassManager &pm, const LowerCudaPipelineOptions &options) {
  // Braid's ops to tensor, linalg, scf and vector (every op's location
  // tagged with its work) and runtime calls, as for the CPU, in the CUDA
  // target's form (cudaConvertBraidToCPUOptions).
  pm.addPass(createConvertBraidToCPUPass(cudaConvertBraidToCPUOptions()));
  addLowerCudaKernelPasses(pm, options);
  addLowerCudaHostPasses(pm);
}

std::string
mlir::braid::printCompilePipeline(const CompilePipelineOptions &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  // The options print themselves in braces.
  os << "braid-compile";
  options.print(os);
  return text;
}

void mlir::braid::registerBraidPassesAndPipelines() {
  registerBraidShardingPasses();
  registerBraidTrainingPasses();
  registerBraidCoOptPasses();
  registerBraidConversionPasses();
  // The upstream passes Braid's pipelines are made of, so that a pipeline
  // printed by -mlir-print-ir-after-all or a reproducer runs by name too.
  registerConversionPasses();
  bufferization::registerBufferizationPasses();
  bufferization::registerBufferizationPipelines();
  registerLinalgPasses();
  memref::registerMemRefPasses();
  registerSCFPasses();
  registerGpuMapParallelLoopsPass();
  registerGPUPasses();
  registerCSEPass();
  registerCanonicalizerPass();
  PassPipelineRegistration<ShardPipelineOptions>(
      "braid-shard",
      "plan the sharding of the module's tables for a cluster, then "
      "partition it into the per-rank program",
      buildShardPipeline);
  PassPipelineRegistration<CoOptimizePipelineOptions>(
      "braid-co-optimize",
      "co-optimize a per-rank program's communication and computation",
      buildCoOptimizePipeline);
  PassPipelineRegistration<CompilePipelineOptions>(
      "braid-compile",
      "braid-shard, then braid-co-optimize: the per-rank program "
      "braid-compile writes",
      buildCompilePipeline);
  PassPipelineRegistration<LowerCudaPipelineOptions>(
      "braid-lower-cuda",
      "lower a per-rank Braid program for NVIDIA GPUs: the CPU target's "
      "kernels tiled onto thread blocks, outlined, named after their work, "
      "serialized to PTX per chip and assembled into cubins; the host code to the LLVM dialect, "
      "launching them on managed memory",
      buildLowerCudaPipeline);
  PassPipelineRegistration<>(
      "braid-lower-cpu",
      "lower a per-rank Braid program to the LLVM dialect for the CPU: "
      "kernels as OpenMP parallel loops, exchanges as MPI calls",
      buildLowerCpuPipeline);
}
