//===- Compile.h - Compile a model for a cluster ----------------*- C++ -*-===//
//
// This file declares compileModel, what braid-compile and the C API's
// braidCompile both run: import a model, run the registered braid-compile
// pipeline on it, and write the per-rank program, the planned global
// program, the plan report and the simulated timeline, and for --target cpu
// the compiled artifact.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_COMPILE_COMPILE_H
#define BRAID_COMPILE_COMPILE_H

#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::braid {

/// What to compile, and how: braid-compile's options.
struct CompileRequest {
  /// A model spec (.json) or a Braid module (.mlir).
  std::string modelPath;
  /// A hardware preset, `local-cpu`, or a hardware JSON file.
  std::string cluster = "dgx-h100";
  /// 0: the hardware description's topology.nodes.
  int64_t nodes = 0;
  /// 0: the hardware's.
  int64_t ranksPerNode = 0;
  std::string planner = "braid";
  std::string forceSharding;
  /// A plan.json to price and partition as it is.
  std::string planFile;
  int64_t optLevel = 2;
  bool forceCoOptimization = false;
  /// braid-co-optimize's pipeline-input-dist.
  bool pipelineInputDist = false;
  /// braid-co-optimize's exchange-precision ("bf16", "f16"; empty: f32).
  std::string exchangePrecision;
  bool train = false;
  /// "none", "cpu" or "cuda".
  std::string target = "none";
  /// --target cuda: the GPU architectures (empty: sm_80 and sm_90).
  std::vector<std::string> cudaChips;
  /// --target cpu: the LLVM CPU name ("native": this machine's).
  std::string targetCpu = "native";
  /// --target cpu: the fused embedding updates as the generated,
  /// row-parallel kernel rather than the runtime's serial update (--target
  /// cuda always takes the kernel).
  bool embeddingUpdateKernel = false;
  /// --target cpu: convert-braid-to-cpu's pooling-lanes (--target cuda
  /// takes cudaLookupPoolingLanes).
  int64_t poolingLanes = 0;
  /// --target cpu: convert-braid-to-cpu's cat-lanes (--target cuda takes
  /// cudaCatLanes).
  int64_t catLanes = 0;
  /// --target cpu: convert-braid-to-cpu's parallel-checks (--target cuda
  /// always takes it).
  bool parallelChecks = false;
  /// --target cpu: time every op of the program where it runs
  /// (braid-profile-ops); braid-run --json then reports `ops_ms`.
  bool profileOps = false;
  std::string outDir;
  /// Tables listed one per row in the printed plan.
  int64_t maxTableRows = 40;
};

/// Compiles `request`: writes OUT/{model.mlir, program.mlir, plan.json,
/// trace.json}, and for --target cpu OUT/{manifest.json, libprogram.so}, then
/// prints the plan report to `report`. Errors, located where they can be,
/// go to `errors` (an invalid option, the model's diagnostics, a failed
/// pipeline with the command that reproduces it); returns failure then.
LogicalResult compileModel(const CompileRequest &request,
                           llvm::raw_ostream &report,
                           llvm::raw_ostream &errors);

} // namespace mlir::braid

#endif // BRAID_COMPILE_COMPILE_H
