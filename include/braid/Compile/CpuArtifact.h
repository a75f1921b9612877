//===- CpuArtifact.h - The --target cpu artifact ----------------*- C++ -*-===//
//
// This file declares how braid-compile turns a per-rank program into
// OUT/libprogram.so and OUT/manifest.json.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_COMPILE_CPUARTIFACT_H
#define BRAID_COMPILE_CPUARTIFACT_H

#include "braid/Conversion/Passes.h"

#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <string>
#include <vector>

namespace mlir::braid {

/// Lowers a copy of `program` with braid-lower-cpu, writes the manifest
/// (ranks, arguments by name, kind, shape and element type, results), the
/// LLVM IR and the shared library into `outDir`. The IR is optimized (opt
/// -O3) and compiled (llc -O3) for `targetCpu` (an LLVM CPU name, or
/// "native" for the host's CPU and features). Emits located errors.
/// Writes OUT/libprogram.so for `program`, the per-rank program partitioned
/// from `model` (whose signature the manifest carries), and manifest.json.
/// `embeddingUpdateKernel` lowers the fused embedding updates to the
/// generated kernel (convert-braid-to-cpu's embedding-update-kernel), and
/// `poolingLanes`, `catLanes` and `parallelChecks` are its pooling-lanes,
/// cat-lanes and parallel-checks.
/// `profileOps` runs braid-profile-ops
/// first, so every op is timed where it runs.
LogicalResult writeCpuArtifact(ModuleOp program, ModuleOp model,
                               llvm::StringRef outDir, int64_t ranks,
                               llvm::StringRef targetCpu,
                               bool embeddingUpdateKernel = false,
                               int64_t poolingLanes = 0,
                               int64_t catLanes = 0,
                               bool parallelChecks = false,
                               bool profileOps = false);

/// What distinguishes one target's artifact from another's: the manifest's
/// `target`, the passes that take the module from after
/// convert-braid-to-cpu to the LLVM dialect, and the libraries it links
/// against: Braid's runtimes (in Braid's library directory) and others by
/// path.
struct ArtifactTarget {
  std::string name;
  /// Takes the module to the LLVM dialect; the second argument is the
  /// directory the library goes to (a target may write files beside it).
  std::function<LogicalResult(ModuleOp, llvm::StringRef)> lowerToLLVM;
  std::vector<std::string> runtimeLibraries;
  /// Libraries the generated code calls directly (full paths), e.g. NCCL.
  std::vector<std::string> systemLibraries;
  /// How convert-braid-to-cpu runs for this target.
  ConvertBraidToCPUPassOptions convertToCPU;
  /// braid-profile-ops before convert-braid-to-cpu; the manifest's
  /// `profiled_ops` names the timed ops.
  bool profileOps = false;
  /// Whether the entry function's pipelined form (braid-pipeline-input-dist)
  /// gets libraries of its own, OUT/pipelined and OUT/pipelined/input_dist,
  /// for a runtime that keeps its carried values between calls.
  bool pipelinedForms = false;
};

/// writeCpuArtifact for any target: clones `program`, runs
/// convert-braid-to-cpu, describes the result in the manifest, lowers it
/// with `target`, then translates, optimizes, compiles and links
/// OUT/libprogram.so and seals it. The entry function's pipelined form, where
/// `target.pipelinedForms`, goes to OUT/pipelined the same way, and its
/// input distribution to OUT/pipelined/input_dist.
LogicalResult writeProgramArtifact(ModuleOp program, ModuleOp model,
                                   llvm::StringRef outDir, int64_t ranks,
                                   llvm::StringRef targetCpu,
                                   const ArtifactTarget &target);

} // namespace mlir::braid

#endif // BRAID_COMPILE_CPUARTIFACT_H
