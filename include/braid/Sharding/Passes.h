//===- Passes.h - Braid's sharding passes -----------------------*- C++ -*-===//
//
// This file declares braid-plan-sharding and braid-partition.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_SHARDING_PASSES_H
#define BRAID_SHARDING_PASSES_H

#include "mlir/Pass/Pass.h"


namespace mlir::braid {

#define GEN_PASS_DECL
#include "braid/Sharding/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "braid/Sharding/Passes.h.inc"

} // namespace mlir::braid

#endif // BRAID_SHARDING_PASSES_H
