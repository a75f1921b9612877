//===- UseCudaRuntime.cpp - Host calls to the CUDA runtime ----------------===//
//
// This file implements braid-use-cuda-runtime: the host's calls of CPU
// runtime functions that the CUDA runtime implements with the same
// arguments are renamed to it, declaration and calls.
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/Passes.h"

#include "../BraidToCPU/RuntimeFunctions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDUSECUDARUNTIMEPASS
#include "braid/Conversion/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

/// CPU runtime function -> the CUDA runtime's.
static constexpr std::pair<llvm::StringLiteral, llvm::StringLiteral>
    kSwapped[] = {{runtime::kLinearF32, runtime::kCudaLinearF32},
                  {runtime::kLinearGradGemmsF32, runtime::kCudaLinearGradGemmsF32}};

namespace {
struct BraidUseCudaRuntimePass
    : public braid::impl::BraidUseCudaRuntimePassBase<BraidUseCudaRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto [cpu, cuda] : kSwapped) {
      auto declaration = module.lookupSymbol<func::FuncOp>(cpu);
      if (!declaration)
        continue;
      if (module.lookupSymbol(cuda)) {
        declaration.emitError()
            << "cannot rename '" << cpu << "' to '" << cuda
            << "': the module already has a '" << cuda << "'";
        return signalPassFailure();
      }
      if (failed(SymbolTable::replaceAllSymbolUses(
              declaration, StringAttr::get(&getContext(), cuda), module)))
        return signalPassFailure();
      declaration.setName(cuda);
    }
  }
};
} // namespace
