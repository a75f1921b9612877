//===- ModuleLoader.cpp - Read one Braid module in a tool -----------------===//
//
// This file implements ModuleLoader.
//
//===----------------------------------------------------------------------===//

#include "braid/Tools/ModuleLoader.h"

#include "braid/InitAll.h"
#include "braid/Import/ModelJson.h"
#include "braid/Support/BoundedInput.h"

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

// A pass's error names its op by location; printing the whole module
// after it (MLIR's default) buries the message.
ModuleLoader::ModuleLoader()
    : context(makeRegistry()), diagnostics(sourceMgr, &context) {
  context.printOpOnDiagnostic(false);
}

ModuleLoader::ModuleLoader(llvm::raw_ostream &os)
    : context(makeRegistry()), diagnostics(sourceMgr, &context, os) {
  context.printOpOnDiagnostic(false);
}

/// The most a textual program may be.
static constexpr uint64_t kMaxProgramBytes = uint64_t(1) << 30;

OwningOpRef<ModuleOp> ModuleLoader::load(llvm::StringRef path) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> file =
      readBoundedFile(path, kMaxProgramBytes, "");
  if (!file) {
    emitError(UnknownLoc::get(&context)) << llvm::toString(file.takeError());
    return nullptr;
  }
  if (std::optional<TextPosition> at =
          findMlirNestingBeyond((*file)->getBuffer())) {
    emitError(FileLineColLoc::get(&context, path, at->line, at->column))
        << "brackets nested deeper than " << kMaxMlirNesting << " levels";
    return nullptr;
  }
  // The source manager owns the text, so diagnostics can quote it.
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(
                                   (*file)->getBuffer(), path),
                               llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module || failed(verify(*module)))
    return nullptr;
  return module;
}

OwningOpRef<ModuleOp> ModuleLoader::loadModel(llvm::StringRef path) {
  if (!path.ends_with(".json"))
    return load(path);
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> file =
      readBoundedFile(path, kMaxJsonFileBytes, "a model");
  if (!file) {
    emitError(UnknownLoc::get(&context)) << llvm::toString(file.takeError());
    return nullptr;
  }
  OwningOpRef<ModuleOp> module =
      importModelJson((*file)->getBuffer(), path, &context);
  if (!module || failed(verify(*module)))
    return nullptr;
  return module;
}
