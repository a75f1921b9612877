//===- braid-translate.cpp - Braid translation driver ---------------------===//
//
// This file implements braid-translate: mlir-translate with Braid's
// importers registered (--import-model-json).
//
//===----------------------------------------------------------------------===//

#include "braid/Import/ModelJson.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::braid::registerImportModelJsonTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "Braid translation driver\n"));
}
