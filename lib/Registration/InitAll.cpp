//===- InitAll.cpp - Register everything Braid provides -------------------===//
//
// This file defines the registration entry points declared in InitAll.h.
//
//===----------------------------------------------------------------------===//

#include "braid/InitAll.h"

#include "braid/Transforms/Passes.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void mlir::braid::registerAllDialects(DialectRegistry &registry) {
  registry.insert<BraidDialect, arith::ArithDialect, func::FuncDialect,
                  tensor::TensorDialect>();
}

void mlir::braid::registerAllPasses() {
  // The generic upstream transforms: canonicalize, cse, symbol-dce, ...
  registerTransformsPasses();
  registerBraidPassesAndPipelines();
}
