//===- FuzzModelJson.cpp - Fuzz the JSON model importer -------------------===//
//
// Input: a model spec (docs/model-spec.md). The importer must either reject
// it with a diagnostic or produce a module that verifies.
//
//===----------------------------------------------------------------------===//

#include "FuzzContext.h"
#include "FuzzSupport.h"

#include "braid/Import/ModelJson.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  braid::fuzz::FuzzContext fuzz;
  OwningOpRef<ModuleOp> module = braid::importModelJson(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.json",
      &fuzz.context);
  if (!module) {
    if (!fuzz.diagnosed)
      braid::fuzz::invariantFailed("a rejected model without an error");
    return 0;
  }
  if (failed(verify(*module)))
    braid::fuzz::invariantFailed("the imported module does not verify");
  return 0;
}
