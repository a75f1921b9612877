//===- CudaArtifact.h - The --target cuda kernels ---------------*- C++ -*-===//
//
// This file declares how braid-compile turns a per-rank program into the
// CUDA target's artifact: OUT/libprogram.so, manifest.json and the kernels,
// OUT/kernels/NAME.CHIP.ptx and .cubin, and OUT/kernels/kernels.json.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_COMPILE_CUDAARTIFACT_H
#define BRAID_COMPILE_CUDAARTIFACT_H

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlir::braid {

/// The --target cuda artifact: OUT/libprogram.so and manifest.json as for
/// the CPU (the host code, its kernels embedded as PTX that the driver
/// compiles for the device it runs on, linked against libbraidrt_cuda and
/// libbraidrt), plus every kernel's PTX and ptxas cubin per chip in
/// OUT/kernels (`chips`, empty: sm_80 and sm_90) and kernels.json with
/// their registers, stack and spills. A kernel that spills registers is an
/// error, as is a missing ptxas. `kernelCount` receives the number of
/// kernels.
LogicalResult writeCudaArtifact(ModuleOp program, ModuleOp model,
                                llvm::StringRef outDir, int64_t ranks,
                                llvm::StringRef targetCpu,
                                const std::vector<std::string> &chips,
                                int64_t &kernelCount);

} // namespace mlir::braid

#endif // BRAID_COMPILE_CUDAARTIFACT_H
