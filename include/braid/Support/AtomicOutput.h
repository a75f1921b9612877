//===- AtomicOutput.h - Writing output files all or nothing -----*- C++ -*-===//
//
// This file declares how Braid's tools write their outputs: into a unique
// temporary file beside the destination, renamed over it only once every
// byte is written and the file is closed. A full disk or any other write
// error is a message naming the file, and leaves neither a partial file
// nor LLVM's "IO failure on output stream" abort behind.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_SUPPORT_ATOMICOUTPUT_H
#define BRAID_SUPPORT_ATOMICOUTPUT_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::braid {

/// The path of the file `name` in the directory `dir` (an output
/// directory's files: OUT/program.mlir, OUT/kernels/...).
std::string joinPath(llvm::StringRef dir, llvm::StringRef name);

/// Writes `path` with `write`, all or nothing. A path that is not a
/// regular file or absent (a device, say) is written in place.
llvm::Error
writeFileAtomically(llvm::StringRef path,
                    llvm::function_ref<void(llvm::raw_ostream &)> write);

} // namespace mlir::braid

#endif // BRAID_SUPPORT_ATOMICOUTPUT_H
