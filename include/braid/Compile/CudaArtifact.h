//===- CudaArtifact.h - The --target cuda kernels ---------------*- C++ -*-===//
//
// This file declares how braid-compile turns a per-rank program into the
// CUDA target's kernels: OUT/kernels/NAME.CHIP.ptx and .cubin, and
// OUT/kernels/kernels.json.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_COMPILE_CUDAARTIFACT_H
#define BRAID_COMPILE_CUDAARTIFACT_H

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlir::braid {

/// Lowers a copy of `program` with braid-lower-cuda for `chips` (empty:
/// sm_80 and sm_90), writes each kernel's PTX per chip into
/// `outDir`/kernels, assembles it with ptxas into a cubin, and lists every
/// kernel with its registers, stack and spills in kernels.json. A kernel
/// that spills registers is an error, as is a missing ptxas. Emits located
/// errors. `kernelCount` receives the number of kernels.
LogicalResult writeCudaKernels(ModuleOp program, llvm::StringRef outDir,
                               const std::vector<std::string> &chips,
                               int64_t &kernelCount);

} // namespace mlir::braid

#endif // BRAID_COMPILE_CUDAARTIFACT_H
