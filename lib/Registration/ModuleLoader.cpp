//===- ModuleLoader.cpp - Read one Braid module in a tool -----------------===//
//
// This file implements ModuleLoader.
//
//===----------------------------------------------------------------------===//

#include "braid/Tools/ModuleLoader.h"

#include "braid/InitAll.h"
#include "braid/Import/ModelJson.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"

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

OwningOpRef<ModuleOp> ModuleLoader::loadModel(llvm::StringRef path) {
  if (!path.ends_with(".json"))
    return load(path);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path);
  if (!file) {
    emitError(UnknownLoc::get(&context))
        << "cannot read '" << path << "': " << file.getError().message();
    return nullptr;
  }
  OwningOpRef<ModuleOp> module =
      importModelJson((*file)->getBuffer(), path, &context);
  if (!module || failed(verify(*module)))
    return nullptr;
  return module;
}
