//===- Pipelines.h - Braid's registered pipelines ---------------*- C++ -*-===//
//
// This file declares the pipelines that make up Braid's compile path, each
// registered by name with its options so that `braid-opt` runs exactly what
// `braid-compile` runs:
//
//   braid-compile = braid-shard, then braid-co-optimize
//   braid-shard   = braid-plan-sharding, braid-partition
//   braid-co-optimize (opt-level 0, 1, 2)
//   braid-lower-cpu = convert-braid-to-cpu, then upstream passes to LLVM
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_PIPELINES_PIPELINES_H
#define BRAID_PIPELINES_PIPELINES_H

#include "braid/Conversion/Passes.h"

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::braid {

/// The options of braid-shard, shared by every pipeline that contains it:
/// where the program runs and how its tables are planned (see
/// braid-plan-sharding).
template <typename Derived>
struct ShardOptionsBase : public PassPipelineOptions<Derived> {
  template <typename T>
  using Option = typename PassPipelineOptions<Derived>::template Option<T>;
  Option<std::string> cluster{
      *this, "cluster",
      llvm::cl::desc("Hardware preset, local-cpu or JSON file; empty: the "
                     "module's braid.cluster")};
  Option<int64_t> nodes{*this, "nodes",
                        llvm::cl::desc("Nodes (0: the hardware's)"),
                        llvm::cl::init(0)};
  Option<int64_t> ranksPerNode{
      *this, "ranks-per-node",
      llvm::cl::desc("Ranks per node (0: the hardware's)"),
      llvm::cl::init(0)};
  Option<std::string> planner{
      *this, "planner",
      llvm::cl::desc("braid | greedy:KEY | keep (price and partition the "
                     "placements the tables carry)"),
      llvm::cl::init("braid")};
  Option<std::string> forceSharding{
      *this, "force-sharding",
      llvm::cl::desc("Every table in one sharding type")};
  Option<std::string> plan{
      *this, "plan",
      llvm::cl::desc("A plan.json whose shards become the placements")};
  Option<bool> train{*this, "train",
                     llvm::cl::desc("plan for the training step; braid-compile "
                                    "also derives @train_step "
                                    "(braid-differentiate) after partitioning"),
                     llvm::cl::init(false)};
};

/// Options of braid-shard.
struct ShardPipelineOptions : public ShardOptionsBase<ShardPipelineOptions> {};

/// Options of braid-co-optimize.
struct CoOptimizePipelineOptions
    : public PassPipelineOptions<CoOptimizePipelineOptions> {
  Option<int64_t> optLevel{
      *this, "opt-level",
      llvm::cl::desc("0: nothing; 1: canonicalize and CSE; 2: also every "
                     "co-optimizing pass (parameter blocks, sharded "
                     "optimizer steps, buckets, decomposition, early starts, "
                     "chunks, fused exchanges and kernels, split and "
                     "deferred GEMMs, filled waits; docs/coopt.md lists "
                     "them in order), each where the simulator predicts a "
                     "gain"),
      llvm::cl::init(2)};
  Option<bool> forceCoOptimization{
      *this, "force-co-optimization",
      llvm::cl::desc("Apply every co-optimization rewrite without asking "
                     "the simulator (each pass's force option)"),
      llvm::cl::init(false)};
  Option<bool> pipelineInputDist{
      *this, "pipeline-input-dist",
      llvm::cl::desc("At level 2, also add each function's pipelined form "
                     "(braid-pipeline-input-dist: the next batch's input "
                     "distribution inside this step) where the simulator "
                     "predicts a gain"),
      llvm::cl::init(false)};
  Option<std::string> exchangePrecision{
      *this, "exchange-precision",
      llvm::cl::desc("At level 2, also move the pooled rows and their "
                     "gradients in this 16-bit type (bf16 or f16; "
                     "braid-exchange-precision, lossy) where the simulator "
                     "predicts a gain; empty: in f32"),
      llvm::cl::init("")};
};

/// Options of braid-compile: braid-shard's and braid-co-optimize's.
struct CompilePipelineOptions
    : public ShardOptionsBase<CompilePipelineOptions> {
  Option<int64_t> optLevel{*this, "opt-level",
                           llvm::cl::desc("braid-co-optimize's level"),
                           llvm::cl::init(2)};
  Option<bool> forceCoOptimization{
      *this, "force-co-optimization",
      llvm::cl::desc("braid-co-optimize's force-co-optimization"),
      llvm::cl::init(false)};
  Option<bool> pipelineInputDist{
      *this, "pipeline-input-dist",
      llvm::cl::desc("braid-co-optimize's pipeline-input-dist"),
      llvm::cl::init(false)};
  Option<std::string> exchangePrecision{
      *this, "exchange-precision",
      llvm::cl::desc("braid-co-optimize's exchange-precision"),
      llvm::cl::init("")};
};

/// Adds braid-shard: plan the tables, then partition.
/// What braid-lower-cuda's host embeds of each kernel.
enum class CudaKernelFormat { Fatbin, Ptx };

struct LowerCudaPipelineOptions
    : public PassPipelineOptions<LowerCudaPipelineOptions> {
  ListOption<std::string> chips{
      *this, "chips",
      llvm::cl::desc("The GPU architectures the kernels are compiled for "
                     "(one PTX object each; default sm_80 and sm_90)")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("NVPTX features, the PTX ISA version, for every chip "
                     "(default: per chip, the least it needs and at least "
                     "+ptx80: +ptx86 for sm_100 and sm_103, +ptx87 for "
                     "sm_120 and sm_121)"),
      llvm::cl::init("")};
  Option<int64_t> threadsPerBlock{
      *this, "threads-per-block",
      llvm::cl::desc("Iterations of a kernel's outer parallel loop (bags, "
                     "samples, rows) per thread block, one per thread"),
      llvm::cl::init(128)};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("The CUDA toolkit's directory (libdevice for math "
                     "functions, ptxas and fatbinary); empty: ptxas's as "
                     "braid-assemble-cuda-kernels finds it")};
  Option<CudaKernelFormat> format{
      *this, "format",
      llvm::cl::desc("What the host embeds of each kernel"),
      llvm::cl::init(CudaKernelFormat::Fatbin),
      llvm::cl::values(
          clEnumValN(CudaKernelFormat::Fatbin, "fatbin",
                     "a cubin per chip and the newest chip's PTX "
                     "(braid-assemble-cuda-kernels; needs the toolkit)"),
          clEnumValN(CudaKernelFormat::Ptx, "ptx",
                     "the first chip's PTX, compiled by the driver at "
                     "load"))};
  Option<std::string> kernelDir{
      *this, "kernel-dir",
      llvm::cl::desc("With format=fatbin: where every kernel's PTX, cubins, "
                     "fat binary and kernels.json are written; empty: "
                     "nowhere")};
};

void buildShardPipeline(OpPassManager &pm,
                        const ShardPipelineOptions &options);

/// Adds braid-co-optimize at the options' level.
void buildCoOptimizePipeline(OpPassManager &pm,
                             const CoOptimizePipelineOptions &options);

/// Adds braid-compile: braid-shard, then braid-co-optimize. Its result is
/// the per-rank program (`program.mlir` of braid-compile).
void buildCompilePipeline(OpPassManager &pm,
                          const CompilePipelineOptions &options);

/// Adds braid-lower-cpu: convert-braid-to-cpu, then the upstream passes
/// that take the program to the LLVM dialect.
void buildLowerCpuPipeline(OpPassManager &pm);

/// The part of braid-lower-cpu after convert-braid-to-cpu.
void addLowerCpuBackendPasses(OpPassManager &pm);

/// The textual form of braid-compile with `options`, for reproducers:
/// `braid-compile{cluster=... opt-level=...}`.
/// Adds braid-lower-cuda: convert-braid-to-cpu, the kernel passes, then the
/// host passes.
void buildLowerCudaPipeline(OpPassManager &pm,
                            const LowerCudaPipelineOptions &options);

/// The part of braid-lower-cuda after convert-braid-to-cpu that makes the
/// kernels: bufferized like braid-lower-cpu's, tiled onto thread blocks,
/// outlined into gpu.modules named after their work, lowered to NVVM,
/// serialized to PTX for every chip and, with format=fatbin, assembled into
/// cubins in one fat binary per kernel (gpu.binary).
void addLowerCudaKernelPasses(OpPassManager &pm,
                              const LowerCudaPipelineOptions &options);

/// The rest: the host code to the LLVM dialect, its buffers in managed
/// memory, launches through the runtime's GPU entry points, the GEMMs on
/// cuBLASLt, one packed entry point per function.
void addLowerCudaHostPasses(OpPassManager &pm);

/// The chips braid-lower-cuda compiles for when `chips` is empty.
llvm::SmallVector<std::string> defaultCudaChips();

/// The NVPTX features (the PTX ISA version) a kernel for `chip` (sm_NN,
/// sm_NNa) is compiled with: the least the chip needs, and at least 8.0.
std::string ptxFeaturesFor(llvm::StringRef chip);

/// Whether braid-compile compiles kernels for `chip`: the chips LLVM's
/// NVPTX backend knows, from sm_70.
bool isKnownCudaChip(llvm::StringRef chip);

/// The columns one GPU thread of a lookup pools (convert-braid-to-cpu's
/// pooling-lanes on the CUDA target): 4 f32 are one 16-byte load, so a
/// 128-float row is read by 32 threads at once instead of one thread's loop.
inline constexpr int64_t cudaLookupPoolingLanes = 4;

/// The columns one GPU thread of a cat interaction copies (convert-braid-
/// to-cpu's cat-lanes on the CUDA target): with a thread per sample, each
/// thread copied its whole row alone and a warp's loads were a row apart
/// (68 GB/s for a 4096-wide cat on an H200, 2026-11-30).
inline constexpr int64_t cudaCatLanes = 4;

/// convert-braid-to-cpu as the CUDA target runs it (braid-lower-cuda and
/// braid-compile --target cuda alike): the embedding updates as the
/// generated kernel, lookups cudaLookupPoolingLanes a thread, a started
/// all_to_all_v's counts exchanged at its start (the form NCCL's lowering
/// rewrites), and a thread per bias gradient column.
ConvertBraidToCPUPassOptions cudaConvertBraidToCPUOptions();

std::string printCompilePipeline(const CompilePipelineOptions &options);

/// Registers Braid's passes, the upstream passes its pipelines use, and the
/// pipelines.
void registerBraidPassesAndPipelines();

} // namespace mlir::braid

#endif // BRAID_PIPELINES_PIPELINES_H
