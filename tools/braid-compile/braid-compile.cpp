//===- braid-compile.cpp - Compile a model for a cluster ------------------===//
//
// This file implements braid-compile, a thin driver over the registered
// braid-compile pipeline (braid-shard, then braid-co-optimize): it reads its
// options and calls compileModel (lib/Compile), which imports a model (JSON
// spec or MLIR), runs the pipeline, and writes OUT/program.mlir (the
// per-rank program), OUT/model.mlir (the planned global program, the oracle
// of `braid-run OUT --reference --check`), OUT/plan.json (the plan read back
// from the program's placements and the simulated program) and
// OUT/trace.json (the simulated program's timeline), then prints the plan.
// With --target cpu it also lowers the program (braid-lower-cpu) into
// OUT/libprogram.so; with --target cuda (braid-lower-cuda) into a
// libprogram.so that launches its kernels on the GPU, and OUT/kernels/. The Python package's braid.compile runs the same
// function through the C API.
//
//===----------------------------------------------------------------------===//

#include "braid/Compile/Compile.h"
#include "braid/Pipelines/Pipelines.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::braid;
namespace cl = llvm::cl;

/// The tool's own options; --help lists only these (LLVM's are hidden).
static cl::OptionCategory toolOptions("braid-compile options");
static cl::opt<std::string> modelPath(cl::cat(toolOptions), cl::Positional,
                                      cl::Required,
                                      cl::desc("<model.json | model.mlir>"));
static cl::opt<std::string>
    clusterName(cl::cat(toolOptions), "cluster", cl::Required,
                cl::desc("Hardware preset (dgx-h100, dgx-a100, pcie-a100x4, aws-p4d, "
                         "aws-p5, gcp-a3, gcp-a3-mega, gcp-a3-ultra, "
                         "azure-nd-a100-v4, azure-nd-h100-v5, oci-a100, "
                         "oci-h100, oci-h200), "
                         "local-cpu (this machine, calibrated on first use) "
                         "or JSON file"));
static cl::opt<int64_t>
    nodes(cl::cat(toolOptions), "nodes", cl::init(0),
          cl::desc("Nodes (default: the hardware's, its topology.nodes)"));
static cl::opt<int64_t>
    ranksPerNode(cl::cat(toolOptions), "ranks-per-node", cl::init(0),
                 cl::desc("Ranks per node (default: the hardware's)"));
static cl::opt<std::string> target(cl::cat(toolOptions), "target",
                                   cl::init("none"),
                                   cl::desc("none | cpu | cuda"));
static cl::opt<std::string> outDir(cl::cat(toolOptions), "o", cl::Required,
                                   cl::desc("Output directory"));
static cl::opt<std::string>
    planner(cl::cat(toolOptions), "planner", cl::init("braid"),
            cl::desc("braid | greedy:size | greedy:dim | greedy:dim_pooling "
                     "| greedy:dim_pooling_logrows | keep (the placements "
                     "the tables carry)"));
static cl::opt<std::string>
    forceSharding(cl::cat(toolOptions), "force-sharding",
                  cl::desc("Every table in one sharding type (table_wise, "
                           "row_wise, column_wise, table_row_wise, "
                           "data_parallel)"));
static cl::opt<std::string>
    planFile(cl::cat(toolOptions), "plan",
             cl::desc("A plan.json (braid-compile's format, TorchRec's "
                      "sharding names) to price and partition as it is"));
static cl::opt<int> optLevel(
    cl::cat(toolOptions), "opt-level", cl::init(2),
    cl::desc("0: partition only; 1: then canonicalize and CSE; 2: also "
             "every co-optimizing pass of braid-co-optimize (parameter "
             "blocks, sharded optimizer steps, buckets, decomposition, early "
             "starts, chunks, fused exchanges and kernels, split and "
             "deferred GEMMs, filled waits; docs/coopt.md lists them in "
             "order), each where the simulator predicts a gain"));
static cl::opt<bool> forceCoOptimization(
    cl::cat(toolOptions), "force-co-optimization",
    cl::desc("Apply every co-optimization rewrite (parameter blocks, "
             "sharded optimizer steps, buckets, decomposition, early starts, "
             "chunks, fused exchanges) without asking the simulator: for "
             "tests and experiments, like --force-sharding"));
static cl::opt<bool> pipelineInputDist(
    cl::cat(toolOptions), "pipeline-input-dist",
    cl::desc("Also add each function's pipelined form (@forward_pipelined, "
             "@train_step_pipelined and their @..._input_dist), which runs "
             "the next batch's routing and index exchanges inside this step, "
             "where the simulator predicts a gain: braid-run --pipelined "
             "runs it"));
static cl::opt<std::string> exchangePrecision(
    cl::cat(toolOptions), "exchange-precision",
    cl::desc("Move the pooled rows and their gradients in bf16 or f16 "
             "(rounded before each all_to_all, widened after it), where the "
             "simulator predicts a gain: lossy, as TorchRec's quantized "
             "communications (braid-exchange-precision)"));
static cl::opt<bool>
    train(cl::cat(toolOptions), "train",
          cl::desc("Also derive the per-rank training step (@train_step: "
                   "loss, backward, optimizer updates) from the model's "
                   "braid.optimizer"));
static cl::opt<std::string> targetCpu(
    cl::cat(toolOptions), "target-cpu", cl::init("native"),
    cl::desc("--target cpu and cuda: the LLVM CPU name the (host) program is compiled for "
             "(native: this machine's CPU and features)"));
static cl::opt<bool> embeddingUpdateKernel(
    cl::cat(toolOptions), "embedding-update-kernel",
    cl::desc("--target cpu: the training step's fused embedding updates (sum "
             "and mean pooling) as the generated kernel that --target cuda "
             "runs (one row per parallel iteration) instead of the runtime's "
             "serial update"));
static cl::opt<int64_t> poolingLanes(
    cl::cat(toolOptions), "pooling-lanes", cl::init(0),
    cl::desc("--target cpu: a lookup's kernel pools this many columns per "
             "parallel iteration, the form --target cuda runs with 4 (0: a "
             "bag's whole row per iteration)"));
static cl::opt<int64_t> catLanes(
    cl::cat(toolOptions), "cat-lanes", cl::init(0),
    cl::desc("--target cpu: a cat interaction's kernel copies this many "
             "columns per parallel iteration, one loop per feature, the form "
             "--target cuda runs with 4 (0: a sample's whole row per "
             "iteration)"));
static cl::opt<bool> parallelChecks(
    cl::cat(toolOptions), "parallel-checks", cl::init(false),
    cl::desc("--target cpu: check a lookup's indices and offsets with "
             "parallel loops, the form --target cuda runs as kernels, instead "
             "of serial ones"));
static cl::opt<bool> profileOps(
    cl::cat(toolOptions), "profile-ops",
    cl::desc("--target cpu: time every op of the program where it runs "
             "(braid-profile-ops); braid-run --json reports each op's time "
             "per step beside the step (ops_ms)"));
static cl::list<std::string> cudaChips(
    cl::cat(toolOptions), "cuda-chips", cl::CommaSeparated,
    cl::desc("--target cuda: the GPU architectures the kernels are "
             "compiled for (default sm_80,sm_90)"));
static cl::opt<int64_t>
    maxTableRows(cl::cat(toolOptions), "max-table-rows", cl::init(40),
                 cl::desc("Tables listed one per row in the printed plan"));

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerBraidPassesAndPipelines();
  cl::HideUnrelatedOptions(toolOptions);
  cl::ParseCommandLineOptions(
      argc, argv,
      "braid-compile: plan, partition and emit a model for a cluster\n\n"
      "  braid-compile MODEL --cluster PRESET|FILE [--nodes N] "
      "[--ranks-per-node R] --target none|cpu|cuda -o OUT\n");
  CompileRequest request;
  request.modelPath = modelPath;
  request.cluster = clusterName;
  request.nodes = nodes;
  request.ranksPerNode = ranksPerNode;
  request.planner = planner;
  request.forceSharding = forceSharding;
  request.planFile = planFile;
  request.optLevel = optLevel;
  request.forceCoOptimization = forceCoOptimization;
  request.pipelineInputDist = pipelineInputDist;
  request.exchangePrecision = exchangePrecision;
  request.train = train;
  request.target = target;
  request.targetCpu = targetCpu;
  request.embeddingUpdateKernel = embeddingUpdateKernel;
  request.poolingLanes = poolingLanes;
  request.catLanes = catLanes;
  request.parallelChecks = parallelChecks;
  request.profileOps = profileOps;
  request.cudaChips.assign(cudaChips.begin(), cudaChips.end());
  request.outDir = outDir;
  request.maxTableRows = maxTableRows;
  return failed(compileModel(request, llvm::outs(), llvm::errs())) ? 1 : 0;
}
