//===- FuzzContext.h - The MLIR context of a fuzzed input --------*- C++ -*-===//
//
// Shared by the harnesses that build IR (model-json, compile).
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_TEST_FUZZ_FUZZCONTEXT_H
#define BRAID_TEST_FUZZ_FUZZCONTEXT_H

#include "braid/InitAll.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

namespace mlir::braid::fuzz {

/// A fresh context per input, with Braid's dialects, that keeps diagnostics
/// quiet and records whether an error was emitted. Fresh, because uniqued
/// attributes would otherwise pile up over millions of runs.
class FuzzContext {
public:
  FuzzContext()
      : context(registry(), MLIRContext::Threading::DISABLED),
        handler(&context, [this](Diagnostic &diag) {
          if (diag.getSeverity() == DiagnosticSeverity::Error)
            diagnosed = true;
          return success();
        }) {}

  MLIRContext context;
  /// Whether an error was emitted since construction or the last reset.
  bool diagnosed = false;

private:
  static DialectRegistry &registry() {
    static DialectRegistry *braid = [] {
      auto *r = new DialectRegistry;
      registerAllDialects(*r);
      return r;
    }();
    return *braid;
  }
  ScopedDiagnosticHandler handler;
};

} // namespace mlir::braid::fuzz

#endif // BRAID_TEST_FUZZ_FUZZCONTEXT_H
