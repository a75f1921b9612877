//===- Passes.h - Braid's training passes -----------------------*- C++ -*-===//
//
// This file declares the passes that derive a training step from a forward
// program.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_TRAINING_PASSES_H
#define BRAID_TRAINING_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::braid {

#define GEN_PASS_DECL
#include "braid/Training/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "braid/Training/Passes.h.inc"

} // namespace mlir::braid

#endif // BRAID_TRAINING_PASSES_H
