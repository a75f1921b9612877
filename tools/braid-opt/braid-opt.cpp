//===- braid-opt.cpp - The Braid optimizer driver -------------------------===//
//
// This file implements braid-opt: mlir-opt with the Braid dialect, passes and
// pipelines registered.
//
//===----------------------------------------------------------------------===//

#include "braid/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::braid::registerAllDialects(registry);
  mlir::braid::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Braid optimizer driver\n", registry));
}
