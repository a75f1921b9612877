//===- CudaArtifact.cpp - The --target cuda kernels -----------------------===//
//
// This file lowers a per-rank program with braid-lower-cuda, writes every
// kernel's PTX for each chip into OUT/kernels, assembles it with the CUDA
// toolkit's ptxas into a cubin, reads ptxas's resource report (registers,
// stack, spills) into OUT/kernels/kernels.json, and refuses a kernel that
// spills registers.
//
//===----------------------------------------------------------------------===//

#include "braid/Compile/CudaArtifact.h"

#include "braid/Compile/CpuArtifact.h"

#include "braid/Pipelines/Pipelines.h"
#include "braid/Support/AtomicOutput.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::braid;

/// ptxas: $BRAID_PTXAS, the one CMake found, PATH, then the toolkit's
/// usual place; empty if none exists.
static std::string findPtxas() {
  if (const char *fromEnv = std::getenv("BRAID_PTXAS"))
    return llvm::sys::fs::can_execute(fromEnv) ? fromEnv : "";
  StringRef configured = BRAID_PTXAS_PATH;
  if (!configured.empty() && llvm::sys::fs::can_execute(configured))
    return configured.str();
  if (llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName("ptxas"))
    return *onPath;
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return "/usr/local/cuda/bin/ptxas";
  return "";
}

/// libnccl.so: $NCCL_HOME/lib, the one CMake found, then the toolkit's
/// library directories beside ptxas; empty if none exists.
static std::string findNccl(StringRef ptxas) {
  SmallVector<std::string> candidates;
  if (const char *home = std::getenv("NCCL_HOME"))
    candidates.push_back(joinPath(joinPath(home, "lib"), "libnccl.so"));
  candidates.push_back(BRAID_NCCL_LIBRARY_PATH);
  StringRef toolkit =
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(ptxas));
  for (StringRef dir : {"lib64", "lib"})
    candidates.push_back(joinPath(joinPath(toolkit, dir), "libnccl.so"));
  for (const std::string &candidate : candidates)
    if (!candidate.empty() && llvm::sys::fs::exists(candidate))
      return candidate;
  return "";
}

namespace {
/// What ptxas -v reports of one kernel.
struct KernelResources {
  int64_t registers = -1, stackBytes = 0, spillStoreBytes = 0,
          spillLoadBytes = 0;
};
} // namespace

/// Reads ptxas -v's report of one kernel.
static KernelResources parsePtxasReport(StringRef report) {
  KernelResources resources;
  llvm::Regex frame("([0-9]+) bytes stack frame, ([0-9]+) bytes spill "
                    "stores, ([0-9]+) bytes spill loads");
  llvm::Regex used("Used ([0-9]+) registers");
  SmallVector<StringRef> groups;
  if (frame.match(report, &groups)) {
    llvm::to_integer(groups[1], resources.stackBytes);
    llvm::to_integer(groups[2], resources.spillStoreBytes);
    llvm::to_integer(groups[3], resources.spillLoadBytes);
  }
  if (used.match(report, &groups))
    llvm::to_integer(groups[1], resources.registers);
  return resources;
}

/// Writes every kernel of `module` (after addLowerCudaKernelPasses: one
/// gpu.binary per kernel, a PTX object per chip) into `outDir`/kernels as
/// PTX and, through `ptxas`, as a cubin, with kernels.json; refuses a kernel
/// that spills.
static LogicalResult writeKernelObjects(ModuleOp module, StringRef outDir,
                                        ArrayRef<std::string> chips,
                                        StringRef ptxas, int64_t &kernelCount) {
  // A previous compile's kernels go: kernels.json lists exactly these.
  std::string kernelDir = joinPath(outDir, "kernels");
  if (std::error_code ec = llvm::sys::fs::remove_directories(kernelDir))
    return module->emitError()
           << "cannot replace '" << kernelDir << "': " << ec.message();
  if (std::error_code ec = llvm::sys::fs::create_directories(kernelDir))
    return module->emitError()
           << "cannot create '" << kernelDir << "': " << ec.message();
  llvm::json::Array listed;
  kernelCount = 0;
  for (auto binary : module.getOps<gpu::BinaryOp>()) {
    ++kernelCount;
    for (auto object : binary.getObjects().getAsRange<gpu::ObjectAttr>()) {
      auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
      if (!target || object.getFormat() != gpu::CompilationTarget::Assembly)
        return binary.emitError() << "expected PTX for an NVVM target";
      std::string stem = (binary.getName() + "." + target.getChip()).str();
      std::string ptxPath = joinPath(kernelDir, stem + ".ptx");
      std::string cubinPath = joinPath(kernelDir, stem + ".cubin");
      std::string reportPath = joinPath(kernelDir, stem + ".ptxas.txt");
      if (llvm::Error error =
              writeFileAtomically(ptxPath, [&](llvm::raw_ostream &os) {
                os << object.getObject().getValue();
              }))
        return binary.emitError() << llvm::toString(std::move(error));
      std::string arch = ("-arch=" + target.getChip()).str();
      SmallVector<StringRef> args = {
          ptxas,   arch, "-O3",    "-v", "--warn-on-spills",
          ptxPath, "-o", cubinPath};
      std::optional<StringRef> redirects[] = {std::nullopt, reportPath,
                                              reportPath};
      std::string launchError;
      int code = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                           0, 0, &launchError);
      std::string report;
      if (auto text = llvm::MemoryBuffer::getFile(reportPath))
        report = (*text)->getBuffer().str();
      llvm::sys::fs::remove(reportPath);
      if (code != 0)
        return binary.emitError()
               << "ptxas failed on kernel '" << binary.getName() << "' for "
               << target.getChip() << ": "
               << (launchError.empty() ? StringRef(report).trim()
                                       : StringRef(launchError));
      KernelResources resources = parsePtxasReport(report);
      if (resources.spillStoreBytes > 0 || resources.spillLoadBytes > 0)
        return binary.emitError()
               << "kernel '" << binary.getName() << "' spills registers on "
               << target.getChip() << " (" << resources.spillStoreBytes
               << " bytes stored, " << resources.spillLoadBytes << " loaded)";
      listed.push_back(
          llvm::json::Object{{"name", binary.getName()},
                             {"chip", target.getChip()},
                             {"ptx", "kernels/" + stem + ".ptx"},
                             {"cubin", "kernels/" + stem + ".cubin"},
                             {"registers", resources.registers},
                             {"stack_bytes", resources.stackBytes},
                             {"spill_store_bytes", resources.spillStoreBytes},
                             {"spill_load_bytes", resources.spillLoadBytes}});
    }
  }
  llvm::json::Array chipNames;
  for (const std::string &chip : chips)
    chipNames.push_back(chip);
  llvm::json::Object manifest{{"chips", std::move(chipNames)},
                              {"kernels", std::move(listed)}};
  if (llvm::Error error = writeFileAtomically(
          joinPath(kernelDir, "kernels.json"), [&](llvm::raw_ostream &os) {
            os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest)))
               << "\n";
          }))
    return module->emitError() << llvm::toString(std::move(error));
  return success();
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
  LowerCudaPipelineOptions options;
  options.chips = chips;
  SmallVector<std::string> compiledFor(chips.begin(), chips.end());
  if (compiledFor.empty())
    compiledFor = defaultCudaChips();
  // libdevice (math functions) lives in the toolkit ptxas belongs to.
  options.toolkit =
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(ptxas)).str();
  ArtifactTarget cuda;
  // The fused embedding updates run on the device, as the generated kernel.
  cuda.embeddingUpdateKernel = true;
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
  cuda.lowerToLLVM = [&](ModuleOp module) -> LogicalResult {
    PassManager kernels(module->getContext());
    addLowerCudaKernelPasses(kernels, options);
    if (failed(kernels.run(module)) ||
        failed(writeKernelObjects(module, outDir, compiledFor, ptxas,
                                  kernelCount)))
      return failure();
    PassManager host(module->getContext());
    addLowerCudaHostPasses(host);
    return host.run(module);
  };
  return writeProgramArtifact(program, model, outDir, ranks, targetCpu, cuda);
}
