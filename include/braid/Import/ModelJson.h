//===- ModelJson.h - Import DLRM model specs --------------------*- C++ -*-===//
//
// This file declares the importer of JSON DLRM model specs (docs/model-spec.md)
// into Braid IR, and its registration as braid-translate's
// --import-model-json.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_IMPORT_MODELJSON_H
#define BRAID_IMPORT_MODELJSON_H

#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class MLIRContext;
class ModuleOp;
} // namespace mlir

namespace mlir::braid {

/// Imports the model spec `json` (read from `fileName`). On a malformed
/// spec, emits an error naming the JSON path and returns null.
OwningOpRef<ModuleOp> importModelJson(llvm::StringRef json,
                                      llvm::StringRef fileName,
                                      MLIRContext *context);

/// Registers `--import-model-json` with the translation registry.
void registerImportModelJsonTranslation();

} // namespace mlir::braid

#endif // BRAID_IMPORT_MODELJSON_H
