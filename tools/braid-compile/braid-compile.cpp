//===- braid-compile.cpp - Compile a model for a cluster ------------------===//
//
// This file implements braid-compile, a thin driver over the registered
// braid-compile pipeline (braid-shard, then braid-co-optimize): it imports a
// model (JSON spec or MLIR), runs the pipeline, and writes OUT/program.mlir
// (the per-rank program), OUT/model.mlir (the planned global program, the
// oracle of `braid-run OUT --reference --check`), OUT/plan.json (the plan
// read back from the program's placements and the simulated program) and
// OUT/trace.json (the simulated program's timeline), then prints the plan.
// With --target cpu it also lowers the program (braid-lower-cpu) into
// OUT/libprogram.so.
//
//===----------------------------------------------------------------------===//

#include "CpuArtifact.h"

#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Support/AtomicOutput.h"
#include "braid/Pipelines/Pipelines.h"
#include "braid/Target/PlanReport.h"
#include "braid/Tools/ModuleLoader.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <functional>

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
                         "azure-nd-h100-v5, oci-a100, oci-h100, oci-h200), "
                         "local-cpu (this machine, calibrated on first use) "
                         "or JSON file"));
static cl::opt<int64_t> nodes(cl::cat(toolOptions), "nodes", cl::init(1),
                              cl::desc("Nodes"));
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
             "run dense optimizer steps on shards, bucket and decompose the "
             "all_reduces, start the pooled-row exchanges asynchronously "
             "and start collectives as soon as their input is ready "
             "(braid-reorder-collectives, braid-bucket-collectives, "
             "braid-decompose-collectives, braid-async-exchanges, "
             "braid-overlap), each where the simulator predicts a gain"));
static cl::opt<bool> forceCoOptimization(
    cl::cat(toolOptions), "force-co-optimization",
    cl::desc("Apply every co-optimization rewrite (sharded optimizer "
             "steps, buckets, decomposition, early starts) without asking the simulator: for tests and "
             "experiments, like --force-sharding"));
static cl::opt<bool>
    train(cl::cat(toolOptions), "train",
          cl::desc("Also derive the per-rank training step (@train_step: "
                   "loss, backward, optimizer updates) from the model's "
                   "braid.optimizer"));
static cl::opt<std::string> targetCpu(
    cl::cat(toolOptions), "target-cpu", cl::init("native"),
    cl::desc("--target cpu: the LLVM CPU name the program is compiled for "
             "(native: this machine's CPU and features)"));
static cl::opt<int64_t>
    maxTableRows(cl::cat(toolOptions), "max-table-rows", cl::init(40),
                 cl::desc("Tables listed one per row in the printed plan"));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "braid-compile: error: " << message << "\n";
  return 1;
}

static std::string joinPath(StringRef dir, StringRef name) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

static llvm::Error
writeFile(StringRef path, llvm::function_ref<void(llvm::raw_ostream &)> write) {
  return writeFileAtomically(path, write);
}

namespace {
/// Watches the registered braid-compile pipeline run: keeps a copy of the
/// planned global program (after braid-plan-sharding: the oracle of
/// `braid-run OUT --reference --check`) and times the planner.
class PlanSnapshot : public PassInstrumentation {
public:
  void runBeforePass(Pass *pass, Operation *op) override {
    if (pass->getArgument() == "braid-plan-sharding")
      start = std::chrono::steady_clock::now();
  }
  void runAfterPass(Pass *pass, Operation *op) override {
    if (pass->getArgument() != "braid-plan-sharding")
      return;
    planningSeconds = std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    if (auto module = dyn_cast<ModuleOp>(op))
      planned = OwningOpRef<ModuleOp>(module.clone());
  }
  OwningOpRef<ModuleOp> planned;
  double planningSeconds = 0;

private:
  std::chrono::steady_clock::time_point start;
};
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerBraidPassesAndPipelines();
  cl::HideUnrelatedOptions(toolOptions);
  cl::ParseCommandLineOptions(
      argc, argv,
      "braid-compile: plan, partition and emit a model for a cluster\n\n"
      "  braid-compile MODEL --cluster PRESET|FILE [--nodes N] "
      "[--ranks-per-node R] --target none|cpu|cuda -o OUT\n");
  if (target == "cuda")
    return fail("--target cuda is not yet supported; use --target none "
                "(plan and partition only) or cpu");
  if (target != "none" && target != "cpu")
    return fail("unknown --target '" + target +
                "' (expected none, cpu or cuda)");
  if (optLevel < 0 || optLevel > 2)
    return fail("--opt-level must be 0, 1 or 2");
  if (nodes < 1 || nodes > 1024)
    return fail("--nodes must be between 1 and 1024");

  ModuleLoader loader;
  OwningOpRef<ModuleOp> module = loader.loadModel(modelPath);
  if (!module)
    return 1;
  CompilePipelineOptions options;
  options.cluster = clusterName;
  options.nodes = nodes;
  options.ranksPerNode = ranksPerNode;
  options.planner = planner;
  options.forceSharding = forceSharding;
  options.plan = planFile;
  options.optLevel = optLevel;
  options.forceCoOptimization = forceCoOptimization;
  options.train = train;
  // 0, the default, is the hardware's (braid-plan-sharding reads it).
  if (ranksPerNode < 0 || ranksPerNode > 1024)
    return fail("--ranks-per-node must be between 1 and 1024");
  if (llvm::sys::fs::exists(outDir) && !llvm::sys::fs::is_directory(outDir))
    return fail("cannot create '" + outDir + "': a file of that name exists");
  if (std::error_code ec = llvm::sys::fs::create_directories(outDir))
    return fail("cannot create '" + outDir + "': " + ec.message());

  // The one compile path: the registered braid-compile pipeline, exactly
  // what `braid-opt --pass-pipeline='builtin.module(braid-compile{...})'`
  // runs.
  std::string pipeline = printCompilePipeline(options);
  PassManager pm(module->getContext());
  buildCompilePipeline(pm, options);
  auto snapshot = std::make_unique<PlanSnapshot>();
  PlanSnapshot *planned = snapshot.get();
  pm.addInstrumentation(std::move(snapshot));
  std::string reproducer = joinPath(outDir, "reproducer.mlir");
  pm.enableCrashReproducerGeneration(reproducer);
  if (failed(pm.run(*module))) {
    llvm::errs() << "braid-compile: note: the pipeline failed; reproduce it "
                    "with: braid-opt --run-reproducer "
                 << reproducer << "\n"
                 << "braid-compile: note: the pipeline was: braid-opt MODEL.mlir "
                    "--pass-pipeline='builtin.module("
                 << pipeline << ")'\n";
    return 1;
  }
  llvm::sys::fs::remove(reproducer);

  FailureOr<PlanReport> report = buildPlanReport(
      *module, planned->planned ? *planned->planned : ModuleOp(),
      planned->planningSeconds);
  if (failed(report))
    return 1;
  for (auto [name, write] : std::initializer_list<
           std::pair<const char *, std::function<void(llvm::raw_ostream &)>>>{
           {"model.mlir",
            [&](llvm::raw_ostream &os) {
              if (planned->planned)
                planned->planned->print(os);
              os << "\n";
            }},
           {"program.mlir",
            [&](llvm::raw_ostream &os) {
              module->print(os);
              os << "\n";
            }},
           {"plan.json",
            [&](llvm::raw_ostream &os) {
              os << llvm::formatv("{0:2}", planReportToJson(*report)) << "\n";
            }},
           {"trace.json", [&](llvm::raw_ostream &os) {
              if (!writePlanTrace(os, *report))
                os << "{\"traceEvents\": []}\n";
            }}})
    if (llvm::Error error = writeFile(joinPath(outDir, name), write))
      return fail(llvm::toString(std::move(error)));

  if (target == "cpu" &&
      failed(writeCpuArtifact(*module,
                              planned->planned ? *planned->planned : *module,
                              outDir,
                              report->sharding.problem.ranks(), targetCpu)))
    return 1;
  printPlanReport(llvm::outs(), *report, maxTableRows);
  llvm::outs() << "wrote " << outDir
               << "/{plan.json, trace.json, model.mlir, program.mlir"
               << (target == "cpu" ? ", manifest.json, libprogram.so" : "")
               << "}\n";
  return 0;
}
