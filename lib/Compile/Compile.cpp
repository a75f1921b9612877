//===- Compile.cpp - Compile a model for a cluster ------------------------===//
//
// This file implements compileModel: the model is imported (a JSON spec or
// MLIR), the registered braid-compile pipeline (braid-shard, then
// braid-co-optimize) runs on it, and the results are written to the output
// directory: program.mlir (the per-rank program), model.mlir (the planned
// global program, the oracle of `braid-run OUT --reference --check`),
// plan.json (the plan read back from the program's placements and the
// simulated program) and trace.json (the simulated timeline). With target
// cpu the program is lowered (braid-lower-cpu) into libprogram.so.
//
//===----------------------------------------------------------------------===//

#include "braid/Compile/Compile.h"

#include "braid/Compile/CpuArtifact.h"
#include "braid/Compile/CudaArtifact.h"
#include "braid/Pipelines/Pipelines.h"
#include "braid/Support/AtomicOutput.h"
#include "braid/Target/PlanReport.h"
#include "braid/Tools/ModuleLoader.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <chrono>
#include <functional>

using namespace mlir;
using namespace mlir::braid;

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

/// Checks the options that the pipeline does not.
static LogicalResult checkRequest(const CompileRequest &request,
                                  llvm::raw_ostream &errors) {
  auto fail = [&](const llvm::Twine &message) {
    errors << "braid-compile: error: " << message << "\n";
    return failure();
  };
  if (request.target != "none" && request.target != "cpu" &&
      request.target != "cuda")
    return fail("unknown --target '" + request.target +
                "' (expected none, cpu or cuda)");
  for (const std::string &chip : request.cudaChips)
    if (!isKnownCudaChip(chip))
      return fail("unknown --cuda-chips entry '" + chip +
                  "' (expected a chip from sm_70 that LLVM's NVPTX backend "
                  "compiles for, e.g. sm_80, sm_90 or sm_100)");
  if (request.optLevel < 0 || request.optLevel > 2)
    return fail("--opt-level must be 0, 1 or 2");
  if (!request.exchangePrecision.empty() &&
      request.exchangePrecision != "bf16" && request.exchangePrecision != "f16")
    return fail("--exchange-precision must be bf16 or f16, got '" +
                request.exchangePrecision + "'");
  if (!request.exchangePrecision.empty() && request.optLevel < 2)
    return fail("--exchange-precision needs --opt-level 2: the exchanges "
                "are rewritten with the co-optimizing passes");
  if (request.pipelineInputDist && request.optLevel < 2)
    return fail("--pipeline-input-dist needs --opt-level 2: below it the "
                "exchanges are not started, so no input distribution can "
                "run beside a step");
  if (request.poolingLanes < 0 || request.poolingLanes > 1024)
    return fail("--pooling-lanes must be between 0 and 1024");
  if (request.poolingLanes != 0 && request.target != "cpu")
    return fail("--pooling-lanes applies to --target cpu (--target cuda "
                "always pools 4 columns per thread)");
  if (request.catLanes < 0 || request.catLanes > 1024)
    return fail("--cat-lanes must be between 0 and 1024");
  if (request.catLanes != 0 && request.target != "cpu")
    return fail("--cat-lanes applies to --target cpu (--target cuda always "
                "copies 4 columns of a cat per thread)");
  if (request.parallelChecks && request.target != "cpu")
    return fail("--parallel-checks applies to --target cpu (--target cuda "
                "always takes the parallel form of these checks)");
  if (request.profileOps && request.target != "cpu")
    return fail("--profile-ops applies to --target cpu");
  // 0, the default, is the hardware's (braid-plan-sharding reads it).
  if (request.nodes < 0 || request.nodes > 1024)
    return fail("--nodes must be between 1 and 1024");
  if (request.ranksPerNode < 0 || request.ranksPerNode > 1024)
    return fail("--ranks-per-node must be between 1 and 1024");
  if (request.maxTableRows < 0)
    return fail("--max-table-rows must not be negative");
  if (request.outDir.empty())
    return fail("no output directory");
  if (llvm::sys::fs::exists(request.outDir) &&
      !llvm::sys::fs::is_directory(request.outDir))
    return fail("cannot create '" + request.outDir +
                "': a file of that name exists");
  if (std::error_code ec = llvm::sys::fs::create_directories(request.outDir))
    return fail("cannot create '" + request.outDir + "': " + ec.message());
  return success();
}

LogicalResult mlir::braid::compileModel(const CompileRequest &request,
                                        llvm::raw_ostream &report,
                                        llvm::raw_ostream &errors) {
  if (failed(checkRequest(request, errors)))
    return failure();
  ModuleLoader loader(errors);
  OwningOpRef<ModuleOp> module = loader.loadModel(request.modelPath);
  if (!module)
    return failure();
  CompilePipelineOptions options;
  options.cluster = request.cluster;
  options.nodes = request.nodes;
  options.ranksPerNode = request.ranksPerNode;
  options.planner = request.planner;
  options.forceSharding = request.forceSharding;
  options.plan = request.planFile;
  options.optLevel = request.optLevel;
  options.forceCoOptimization = request.forceCoOptimization;
  options.pipelineInputDist = request.pipelineInputDist;
  options.exchangePrecision = request.exchangePrecision;
  options.train = request.train;

  // The one compile path: the registered braid-compile pipeline, exactly
  // what `braid-opt --pass-pipeline='builtin.module(braid-compile{...})'`
  // runs.
  std::string pipeline = printCompilePipeline(options);
  PassManager pm(module->getContext());
  buildCompilePipeline(pm, options);
  auto snapshot = std::make_unique<PlanSnapshot>();
  PlanSnapshot *planned = snapshot.get();
  pm.addInstrumentation(std::move(snapshot));
  std::string reproducer = joinPath(request.outDir, "reproducer.mlir");
  pm.enableCrashReproducerGeneration(reproducer);
  if (failed(pm.run(*module))) {
    errors << "braid-compile: note: the pipeline failed; reproduce it with: "
              "braid-opt --run-reproducer "
           << reproducer << "\n"
           << "braid-compile: note: the pipeline was: braid-opt MODEL.mlir "
              "--pass-pipeline='builtin.module("
           << pipeline << ")'\n";
    return failure();
  }
  llvm::sys::fs::remove(reproducer);

  FailureOr<PlanReport> plan = buildPlanReport(
      *module, planned->planned ? *planned->planned : ModuleOp(),
      planned->planningSeconds);
  if (failed(plan))
    return failure();
  // A pipelined form an earlier compile left in OUT (OUT/pipelined) is not
  // this program's: it goes before anything is written, whatever the
  // target, so that no later failure leaves it beside the new program.
  std::string pipelinedDir = joinPath(request.outDir, "pipelined");
  if (std::error_code ec = llvm::sys::fs::remove_directories(
          pipelinedDir, /*IgnoreErrors=*/false)) {
    errors << "braid-compile: error: cannot remove '" << pipelinedDir
           << "': " << ec.message() << "\n";
    return failure();
  }
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
              os << llvm::formatv("{0:2}", planReportToJson(*plan)) << "\n";
            }},
           {"trace.json", [&](llvm::raw_ostream &os) {
              if (!writePlanTrace(os, *plan))
                os << "{\"traceEvents\": []}\n";
            }}})
    if (llvm::Error error =
            writeFileAtomically(joinPath(request.outDir, name), write)) {
      errors << "braid-compile: error: " << llvm::toString(std::move(error))
             << "\n";
      return failure();
    }

  if (request.target == "cpu" &&
      failed(writeCpuArtifact(*module,
                              planned->planned ? *planned->planned : *module,
                              request.outDir, plan->sharding.problem.ranks(),
                              request.targetCpu,
                              request.embeddingUpdateKernel,
                              request.poolingLanes, request.catLanes,
                              request.parallelChecks, request.profileOps)))
    return failure();
  int64_t kernels = 0;
  if (request.target == "cuda" &&
      failed(writeCudaArtifact(
          *module, planned->planned ? *planned->planned : *module,
          request.outDir, plan->sharding.problem.ranks(), request.targetCpu,
          request.cudaChips, kernels)))
    return failure();
  printPlanReport(report, *plan, request.maxTableRows);
  report << "wrote " << request.outDir
         << "/{plan.json, trace.json, model.mlir, program.mlir"
         << (request.target != "none" ? ", manifest.json, libprogram.so"
                                      : "")
         << (request.target == "cuda" ? ", kernels/" : "")
         << (request.target != "none" &&
                     llvm::sys::fs::is_directory(pipelinedDir)
                 ? ", pipelined/"
                 : "")
         << "}\n";
  if (request.target == "cuda")
    report << "cuda: " << kernels
           << " kernels, each as PTX, a cubin per chip and their fat "
              "binary in kernels/ (kernels.json lists their registers and "
              "spills)\n";
  return success();
}
