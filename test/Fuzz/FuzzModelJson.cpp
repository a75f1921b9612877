//===- FuzzModelJson.cpp - Fuzz the JSON model importer -------------------===//
//
// Input: a model spec (docs/model-spec.md). The importer must either reject
// it with a diagnostic or produce a module that verifies.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "braid/Import/ModelJson.h"
#include "braid/InitAll.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry;
    braid::registerAllDialects(*r);
    return r;
  }();
  // A fresh context per input: uniqued attributes would otherwise pile up
  // over millions of runs.
  MLIRContext context(*registry, MLIRContext::Threading::DISABLED);
  bool diagnosed = false;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      diagnosed = true;
    return success();
  });
  OwningOpRef<ModuleOp> module = braid::importModelJson(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.json",
      &context);
  if (!module) {
    if (!diagnosed)
      braid::fuzz::invariantFailed("a rejected model without an error");
    return 0;
  }
  if (failed(verify(*module)))
    braid::fuzz::invariantFailed("the imported module does not verify");
  return 0;
}
