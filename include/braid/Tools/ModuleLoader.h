//===- ModuleLoader.h - Read one Braid module in a tool ---------*- C++ -*-===//
//
// This file declares ModuleLoader, which owns what a Braid tool needs to read
// one module: a context with every Braid dialect, a source manager, and a
// handler printing located diagnostics to stderr (or another stream).
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_TOOLS_MODULELOADER_H
#define BRAID_TOOLS_MODULELOADER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

namespace mlir::braid {

class ModuleLoader {
public:
  ModuleLoader();
  /// A loader that prints its diagnostics to `os` instead of stderr.
  explicit ModuleLoader(llvm::raw_ostream &os);

  /// Parses and verifies `path` ("-" for stdin). Returns null after
  /// printing located diagnostics.
  OwningOpRef<ModuleOp> load(llvm::StringRef path);

  /// Like load, but imports a model spec when `path` ends in `.json`.
  OwningOpRef<ModuleOp> loadModel(llvm::StringRef path);

  MLIRContext &getContext() { return context; }

private:
  MLIRContext context;
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics;
};

} // namespace mlir::braid

#endif // BRAID_TOOLS_MODULELOADER_H
