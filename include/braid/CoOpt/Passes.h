//===- Passes.h - Braid's co-optimization -----------------------*- C++ -*-===//
//
// This file declares the passes that co-optimize communication and
// computation in per-rank programs.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_COOPT_PASSES_H
#define BRAID_COOPT_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace mlir::braid {

#define GEN_PASS_DECL
#include "braid/CoOpt/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "braid/CoOpt/Passes.h.inc"

} // namespace mlir::braid

#endif // BRAID_COOPT_PASSES_H
