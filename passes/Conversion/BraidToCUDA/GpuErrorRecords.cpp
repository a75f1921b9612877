//===- GpuErrorRecords.cpp - Kernel errors as a device-side record --------===//
//
// This file implements braid-gpu-error-records: in an outlined kernel
// module, each call of a runtime error function (which a GPU thread cannot
// make) becomes a claim of the module's error record `@braid_error`
// (code, operand, operand) by compare-and-swap, and the failing thread
// ends. The host reads the record after the kernel.
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/Passes.h"

#include "../BraidToCPU/RuntimeFunctions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDGPUERRORRECORDSPASS
#include "braid/Conversion/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

/// The record's name and its codes, which the CUDA host reads.
static constexpr llvm::StringLiteral kRecordName = "braid_error";

/// The record code of a runtime error function, 0 if `callee` is not one.
static int64_t errorCodeOf(StringRef callee) {
  if (callee == runtime::kIndexError)
    return 1;
  if (callee == runtime::kOffsetsError)
    return 2;
  if (callee == runtime::kWeightsError)
    return 3;
  return 0;
}

/// The module's error record, created on first use.
static memref::GlobalOp recordOf(gpu::GPUModuleOp module) {
  if (auto existing = module.lookupSymbol<memref::GlobalOp>(kRecordName))
    return existing;
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  auto type = MemRefType::get({3}, builder.getI64Type());
  return memref::GlobalOp::create(
      builder, module.getLoc(), kRecordName,
      /*sym_visibility=*/builder.getStringAttr("public"), type,
      DenseElementsAttr::get(RankedTensorType::get({3}, builder.getI64Type()),
                             builder.getI64IntegerAttr(0).getValue()),
      /*constant=*/false, /*alignment=*/builder.getI64IntegerAttr(8));
}

/// Replaces `call` (an error call with two i64 operands) by a claim of the
/// record and the end of the thread.
static void replaceByRecord(func::CallOp call, memref::GlobalOp record,
                            int64_t code) {
  OpBuilder builder(call);
  Location loc = call.getLoc();
  Value buffer = memref::GetGlobalOp::create(builder, loc, record.getType(),
                                             record.getSymName());
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  Value free = arith::ConstantIntOp::create(builder, loc, 0, 64);
  Value codeValue = arith::ConstantIntOp::create(builder, loc, code, 64);
  // Claim the record: the code goes in only where none is yet.
  auto claim = memref::GenericAtomicRMWOp::create(builder, loc, buffer, zero);
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(claim.getBody());
    Value current = claim.getCurrentValue();
    Value isFree = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                         current, free);
    Value next =
        arith::SelectOp::create(builder, loc, isFree, codeValue, current);
    memref::AtomicYieldOp::create(builder, loc, next);
  }
  Value won = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                    claim.getResult(), free);
  auto ifWon = scf::IfOp::create(builder, loc, won, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(ifWon.thenBlock());
    for (auto [slot, operand] : llvm::enumerate(call.getOperands())) {
      Value at = arith::ConstantIndexOp::create(builder, loc, slot + 1);
      memref::StoreOp::create(builder, loc, operand, buffer, at);
    }
  }
  // The thread ends here: what follows would read the bad index.
  NVVM::Exit::create(builder, loc);
  call.erase();
}

namespace {
struct BraidGpuErrorRecordsPass
    : public braid::impl::BraidGpuErrorRecordsPassBase<
          BraidGpuErrorRecordsPass> {
  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    SmallVector<std::pair<func::CallOp, int64_t>> calls;
    module.walk([&](func::CallOp call) {
      int64_t code = errorCodeOf(call.getCallee());
      if (code == 0)
        return;
      if (call.getNumOperands() != 2 || call.getNumResults() != 0 ||
          !llvm::all_of(call.getOperandTypes(),
                        [](Type type) { return type.isInteger(64); })) {
        call.emitError() << "runtime error call '" << call.getCallee()
                         << "' without two i64 operands in a kernel";
        return signalPassFailure();
      }
      calls.push_back({call, code});
    });
    if (calls.empty())
      return;
    memref::GlobalOp record = recordOf(module);
    for (auto [call, code] : calls)
      replaceByRecord(call, record, code);
    // The error functions the outlining copied in are called no more.
    for (auto callee : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (errorCodeOf(callee.getName()) != 0 && callee.isDeclaration())
        callee.erase();
  }
};
} // namespace
