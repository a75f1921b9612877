//===- Passes.h - Braid passes ----------------------------------*- C++ -*-===//
//
// This file declares Braid's passes and pipelines (see Passes.td and
// docs/reference/BraidPasses.md).
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_TRANSFORMS_PASSES_H
#define BRAID_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace arith {
class ArithDialect;
} // namespace arith
namespace bufferization {
class BufferizationDialect;
} // namespace bufferization
namespace func {
class FuncDialect;
} // namespace func
namespace memref {
class MemRefDialect;
} // namespace memref
namespace LLVM {
class LLVMDialect;
} // namespace LLVM
namespace linalg {
class LinalgDialect;
} // namespace linalg
namespace math {
class MathDialect;
} // namespace math
namespace scf {
class SCFDialect;
} // namespace scf
namespace tensor {
class TensorDialect;
} // namespace tensor
namespace vector {
class VectorDialect;
} // namespace vector
} // namespace mlir

namespace mlir::braid {

#define GEN_PASS_DECL
#include "braid/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "braid/Transforms/Passes.h.inc"

/// Adds the passes of `braid-lower-cpu` that follow `braid-lower-compute`:
/// bufferization, OpenMP loops, the LLVM dialect and the packed entry.
void addLowerCpuBackendPasses(OpPassManager &pm);

/// Registers the passes and the `braid-shard` and `braid-lower-cpu`
/// pipelines.
void registerBraidPassesAndPipelines();

} // namespace mlir::braid

#endif // BRAID_TRANSFORMS_PASSES_H
