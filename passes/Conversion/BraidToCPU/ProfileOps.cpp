//===- ProfileOps.cpp - The braid-profile-ops pass -----------------------===//
//
// This file brackets every Braid op of a per-rank program's public
// functions with calls that time it (braidrt_op_begin / braidrt_op_end),
// and names the timed ops in the module's `braid.profiled_ops` attribute.
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/Passes.h"
#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDPROFILEOPSPASS
#include "braid/Conversion/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

namespace {
constexpr StringLiteral kBegin = "braidrt_op_begin";
constexpr StringLiteral kEnd = "braidrt_op_end";
constexpr StringLiteral kProfiledOps = BraidDialect::kProfiledOpsAttrName;

struct BraidProfileOpsPass
    : braid::impl::BraidProfileOpsPassBase<BraidProfileOpsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    if (module->hasAttr(kProfiledOps)) {
      module.emitError() << "braid-profile-ops: the module is already "
                            "profiled ('"
                         << kProfiledOps << "' is set)";
      return signalPassFailure();
    }
    for (StringRef name : {kBegin, kEnd})
      if (module.lookupSymbol(name)) {
        module.emitError() << "braid-profile-ops: the module already defines "
                              "'@"
                           << name << "'";
        return signalPassFailure();
      }
    OpBuilder b(context);
    Type i64 = b.getI64Type();
    auto timerType = FunctionType::get(context, {i64}, {});
    b.setInsertionPointToEnd(module.getBody());
    for (StringRef name : {kBegin, kEnd}) {
      auto decl = func::FuncOp::create(b, module.getLoc(), name, timerType);
      decl.setPrivate();
    }
    SmallVector<Attribute> names;
    Dialect *braid = context->getLoadedDialect<BraidDialect>();
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (!func.isPublic() || func.isExternal())
        continue;
      // A per-rank program's function is one block ending in its return,
      // which the last timer brackets.
      if (!llvm::hasSingleElement(func.getBody()) ||
          !isa<func::ReturnOp>(func.getBody().front().getTerminator())) {
        func.emitError() << "braid-profile-ops needs functions of one block";
        return signalPassFailure();
      }
      for (Operation &op :
           llvm::make_early_inc_range(func.getBody().front())) {
        if (op.getDialect() != braid)
          continue;
        int64_t index = names.size();
        names.push_back(b.getStringAttr(getReportName(&op)));
        Location loc = op.getLoc();
        b.setInsertionPoint(&op);
        Value id = arith::ConstantIntOp::create(b, loc, i64, index);
        func::CallOp::create(b, loc, kBegin, TypeRange{}, ValueRange{id});
        b.setInsertionPointAfter(&op);
        func::CallOp::create(b, loc, kEnd, TypeRange{}, ValueRange{id});
      }
      // The return: what runs after the last op (the buffers' frees and
      // the results' copies that bufferization puts there). Its timer ends
      // when the function has returned (braidrt_op_close, which the
      // runtime's program call makes).
      Operation *terminator = func.getBody().front().getTerminator();
      b.setInsertionPoint(terminator);
      Value id = arith::ConstantIntOp::create(b, terminator->getLoc(), i64,
                                              int64_t(names.size()));
      names.push_back(b.getStringAttr("return"));
      func::CallOp::create(b, terminator->getLoc(), kBegin, TypeRange{},
                           ValueRange{id});
    }
    module->setAttr(kProfiledOps, b.getArrayAttr(names));
  }
};
} // namespace
