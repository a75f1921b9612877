//===- ModuleLoader.cpp - Read one Braid module in a tool -----------------===//
//
// This file implements ModuleLoader.
//
//===----------------------------------------------------------------------===//

#include "braid/Tools/ModuleLoader.h"

#include "braid/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;
using namespace mlir::braid;

static DialectRegistry makeRegistry() {
  DialectRegistry registry;
  registerAllDialects(registry);
  return registry;
}

ModuleLoader::ModuleLoader()
    : context(makeRegistry()), diagnostics(sourceMgr, &context) {}

OwningOpRef<ModuleOp> ModuleLoader::load(llvm::StringRef path) {
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(path, sourceMgr, &context);
  if (!module || failed(verify(*module)))
    return nullptr;
  return module;
}
