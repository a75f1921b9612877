//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// This file declares the .npy reader and writer the reference semantics and
// braid-run use for inputs, weights and outputs. The reader accepts format
// versions 1.0 to 3.0, C order, little-endian <f2, <f4, <f8, <i4, <i8 and
// |b1; anything else is an error naming the file.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_INTERP_NPY_H
#define BRAID_INTERP_NPY_H

#include "braid/Interp/HostTensor.h"

#include "llvm/Support/Error.h"

namespace mlir::braid::interp {

/// Reads `path`. bf16 has no NumPy type: bf16 tensors are stored as <f4.
llvm::Expected<HostTensor> readNpy(llvm::StringRef path);

/// Parses the bytes of an .npy file; `name` is used in error messages.
llvm::Expected<HostTensor> parseNpy(llvm::StringRef bytes,
                                    llvm::StringRef name);

/// Writes `tensor` to `path`, creating parent directories.
llvm::Error writeNpy(llvm::StringRef path, const HostTensor &tensor);

} // namespace mlir::braid::interp

#endif // BRAID_INTERP_NPY_H
