//===- Passes.h - Braid's conversions ---------------------------*- C++ -*-===//
//
// This file declares the conversions of per-rank Braid programs to a target.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_CONVERSION_PASSES_H
#define BRAID_CONVERSION_PASSES_H

#include "mlir/IR/BuiltinOps.h"
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
namespace gpu {
class GPUDialect;
class GPUModuleOp;
} // namespace gpu
namespace LLVM {
class LLVMDialect;
} // namespace LLVM
namespace NVVM {
class NVVMDialect;
} // namespace NVVM
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
#include "braid/Conversion/Passes.h.inc"

/// Writes every braid.fused_all_to_all_v_start of `module` as the
/// collectives and tensor ops it stands for (braid-expand-fused-exchanges;
/// convert-braid-to-cpu runs it first, with `outline`: the packing and the
/// unpacking each in a private function of their own).
LogicalResult expandFusedExchanges(ModuleOp module, bool outline);

#define GEN_PASS_REGISTRATION
#include "braid/Conversion/Passes.h.inc"

} // namespace mlir::braid

#endif // BRAID_CONVERSION_PASSES_H
