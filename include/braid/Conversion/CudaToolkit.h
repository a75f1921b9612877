//===- CudaToolkit.h - Finding the CUDA toolkit's programs ------*- C++ -*-===//
//
// This file declares how Braid finds the CUDA toolkit it assembles kernels
// with: the same search for braid-assemble-cuda-kernels and braid-compile.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_CONVERSION_CUDATOOLKIT_H
#define BRAID_CONVERSION_CUDATOOLKIT_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::braid {

/// ptxas: $BRAID_PTXAS (an explicit choice, even of a stand-in), else
/// `toolkit`/bin's when a toolkit is given, else the one CMake found, PATH's,
/// then /usr/local/cuda/bin's; empty if that is not an executable.
std::string findPtxas(llvm::StringRef toolkit = {});

/// fatbinary: beside `ptxas`, else PATH's, else /usr/local/cuda/bin's;
/// empty if none is executable.
std::string findFatbinary(llvm::StringRef ptxas);

/// The toolkit directory holding `ptxas` (its parent's parent).
std::string toolkitOfPtxas(llvm::StringRef ptxas);

} // namespace mlir::braid

#endif // BRAID_CONVERSION_CUDATOOLKIT_H
