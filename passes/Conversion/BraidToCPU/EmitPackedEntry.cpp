//===- EmitPackedEntry.cpp - The braid-emit-packed-entry pass -------------===//
//
// This file adds `braid_entry_NAME(ptr)` beside every `_mlir_ciface_NAME`:
// it loads the interface's pointer arguments from an array and calls it, so
// that hosts call compiled functions of any arity through one signature.
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDEMITPACKEDENTRYPASS
#include "braid/Conversion/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;

namespace {
struct BraidEmitPackedEntryPass
    : braid::impl::BraidEmitPackedEntryPassBase<BraidEmitPackedEntryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // LLVM IR has no place for Braid's argument names; the manifest keeps
    // them.
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        for (NamedAttribute attr : llvm::to_vector(
                 function_interface_impl::getArgAttrs(func, i)))
          if (attr.getName().getValue().starts_with("braid."))
            func.removeArgAttr(i, attr.getName());
    for (auto interface : llvm::to_vector(module.getOps<LLVM::LLVMFuncOp>())) {
      StringRef name = interface.getSymName();
      if (!name.consume_front("_mlir_ciface_") || interface.isExternal())
        continue;
      LLVM::LLVMFunctionType type = interface.getFunctionType();
      auto ptr = LLVM::LLVMPointerType::get(&getContext());
      for (Type param : type.getParams())
        if (param != ptr) {
          interface.emitError() << "braid-emit-packed-entry expects pointer "
                                   "arguments only, got "
                                << param;
          return signalPassFailure();
        }
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      Location loc = interface.getLoc();
      auto entry = LLVM::LLVMFuncOp::create(
          b, loc, ("braid_entry_" + name).str(),
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(&getContext()),
                                      {ptr}));
      Block *body = entry.addEntryBlock(b);
      b.setInsertionPointToStart(body);
      SmallVector<Value> args;
      for (unsigned i = 0; i < type.getNumParams(); ++i) {
        Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, body->getArgument(0),
                                         ArrayRef<LLVM::GEPArg>{int32_t(i)});
        args.push_back(LLVM::LoadOp::create(b, loc, ptr, slot));
      }
      LLVM::CallOp::create(b, loc, interface, args);
      LLVM::ReturnOp::create(b, loc, ValueRange{});
    }
  }
};
} // namespace
