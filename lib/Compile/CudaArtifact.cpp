//===- CudaArtifact.cpp - The --target cuda kernels -----------------------===//
//
// This file lowers a per-rank program with braid-lower-cuda for
// --target cuda: its kernels assembled into fat binaries (a cubin per chip)
// with their PTX, cubins and resources in OUT/kernels
// (braid-assemble-cuda-kernels), the host linked with the CUDA runtime and
// NCCL.
//
//===----------------------------------------------------------------------===//

#include "braid/Compile/CudaArtifact.h"

#include "braid/Compile/CpuArtifact.h"
#include "braid/Conversion/CudaToolkit.h"

#include "braid/Pipelines/Pipelines.h"
#include "braid/Support/AtomicOutput.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::braid;

/// libnccl.so: $NCCL_HOME/lib, the one CMake found, then the toolkit's
/// library directories beside ptxas; empty if none exists.
static std::string findNccl(StringRef ptxas) {
  SmallVector<std::string> candidates;
  if (const char *home = std::getenv("NCCL_HOME"))
    candidates.push_back(joinPath(joinPath(home, "lib"), "libnccl.so"));
  candidates.push_back(BRAID_NCCL_LIBRARY_PATH);
  std::string toolkit = toolkitOfPtxas(ptxas);
  for (StringRef dir : {"lib64", "lib"})
    candidates.push_back(joinPath(joinPath(toolkit, dir), "libnccl.so"));
  for (const std::string &candidate : candidates)
    if (!candidate.empty() && llvm::sys::fs::exists(candidate))
      return candidate;
  return "";
}

LogicalResult mlir::braid::writeCudaArtifact(
    ModuleOp program, ModuleOp model, StringRef outDir, int64_t ranks,
    StringRef targetCpu, const std::vector<std::string> &chips,
    int64_t &kernelCount) {
  std::string ptxas = findPtxas();
  if (ptxas.empty())
    return program->emitError()
           << "--target cuda needs ptxas from the CUDA toolkit: none in "
              "$BRAID_PTXAS, on PATH or in /usr/local/cuda/bin";
  // A previous compile's kernels go: kernels.json lists exactly these.
  std::string kernelDir = joinPath(outDir, "kernels");
  if (std::error_code ec = llvm::sys::fs::remove_directories(kernelDir))
    return program->emitError()
           << "cannot replace '" << kernelDir << "': " << ec.message();
  LowerCudaPipelineOptions options;
  options.chips = chips;
  // libdevice (math functions) and fatbinary live in the toolkit ptxas
  // belongs to.
  options.toolkit = toolkitOfPtxas(ptxas);
  ArtifactTarget cuda;
  // The fused embedding updates run on the device, as the generated kernel,
  // and the rest in the forms braid-lower-cuda takes.
  cuda.convertToCPU = cudaConvertBraidToCPUOptions();
  cuda.name = "cuda";
  // The CUDA runtime serves what it can; the CPU runtime the rest.
  cuda.runtimeLibraries = {"braidrt_cuda", "braidrt"};
  // The generated code calls NCCL's collectives itself.
  std::string nccl = findNccl(ptxas);
  if (nccl.empty())
    return program->emitError()
           << "--target cuda needs NCCL (libnccl.so): none in $NCCL_HOME, "
              "where CMake found it, or beside ptxas's toolkit";
  cuda.systemLibraries = {nccl};
  // A training step's pipelined form and its input distribution are
  // libraries of their own (OUT/pipelined, OUT/pipelined/input_dist), each
  // with its kernels beside it.
  cuda.pipelinedForms = true;
  cuda.lowerToLLVM = [&](ModuleOp module, StringRef dir) -> LogicalResult {
    options.kernelDir = joinPath(dir, "kernels");
    PassManager kernels(module->getContext());
    addLowerCudaKernelPasses(kernels, options);
    if (failed(kernels.run(module)))
      return failure();
    // braid-compile reports the plain program's kernels.
    if (dir == outDir)
      kernelCount = llvm::range_size(module.getOps<gpu::BinaryOp>());
    PassManager host(module->getContext());
    addLowerCudaHostPasses(host);
    return host.run(module);
  };
  return writeProgramArtifact(program, model, outDir, ranks, targetCpu, cuda);
}
