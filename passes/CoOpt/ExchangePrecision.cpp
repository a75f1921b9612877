//===- ExchangePrecision.cpp - Pooled rows exchanged in 16 bits -----------===//
//
// This file implements braid-exchange-precision: an `all_to_all` of f32
// values (a sharded lookup's pooled rows, or in a training step their
// gradients) moves them as bf16 or f16, asked for. The values are rounded
// to the wire type before the exchange and widened back after it (its
// wait, for a started one), so every other op keeps its types; the
// exchange moves half the bytes. The rewrite is lossy by design, like
// TorchRec's quantized communications (QCommsConfig), and lands only
// where the simulator predicts the function faster, or with `force`.
//
//===----------------------------------------------------------------------===//

#include "braid/CoOpt/Passes.h"

#include "CoOptSupport.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDEXCHANGEPRECISIONPASS
#include "braid/CoOpt/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

/// `type` with `element` as its element type.
static RankedTensorType withElement(Type type, Type element) {
  return cast<RankedTensorType>(type).clone(element);
}

/// Whether `op` is an all_to_all (blocking or started) of f32 values.
static bool isF32AllToAll(Operation &op) {
  if (!isa<AllToAllOp, AllToAllStartOp>(op))
    return false;
  return cast<RankedTensorType>(op.getOperand(0).getType())
      .getElementType()
      .isF32();
}

/// Moves the all_to_all `op` as `wire` values: its input rounded before
/// it, its result (a started one's, at each wait) widened after it.
static void exchangeAs(Operation *op, FloatType wire) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value input = op->getOperand(0);
  Value narrow = arith::TruncFOp::create(
      b, loc, withElement(input.getType(), wire), input);
  op->setOperand(0, narrow);
  Type f32 = b.getF32Type();
  if (auto exchange = dyn_cast<AllToAllOp>(op)) {
    Type wide = exchange.getResult().getType();
    exchange.getResult().setType(withElement(wide, wire));
    b.setInsertionPointAfter(op);
    auto widened = arith::ExtFOp::create(b, loc, wide, exchange.getResult());
    exchange.getResult().replaceAllUsesExcept(widened, widened);
    return;
  }
  Value token = op->getResult(0);
  auto tokenType = cast<TokenType>(token.getType());
  Type wide = tokenType.getValueType();
  token.setType(TokenType::get(op->getContext(), withElement(wide, wire)));
  for (Operation *user : llvm::to_vector(token.getUsers())) {
    auto wait = cast<WaitOp>(user);
    wait.getResult().setType(withElement(wide, wire));
    b.setInsertionPointAfter(wait);
    auto widened = arith::ExtFOp::create(
        b, wait.getLoc(), withElement(wide, f32), wait.getResult());
    wait.getResult().replaceAllUsesExcept(widened, widened);
  }
}

namespace {
struct BraidExchangePrecisionPass
    : public braid::impl::BraidExchangePrecisionPassBase<
          BraidExchangePrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FloatType wire;
    if (precision == "bf16")
      wire = BFloat16Type::get(&getContext());
    else if (precision == "f16")
      wire = Float16Type::get(&getContext());
    else {
      module.emitError() << "braid-exchange-precision: precision must be "
                            "bf16 or f16, got '"
                         << precision << "'";
      return signalPassFailure();
    }
    // A token only a wait reads can change its type; anything else (a
    // token returned or passed on) keeps the exchange as it is.
    auto rewritable = [](Operation *op) {
      return !isa<AllToAllStartOp>(op) ||
             llvm::all_of(op->getResult(0).getUsers(),
                          llvm::IsaPred<WaitOp>);
    };
    FailureOr<ProgramPredictor> predictor = ProgramPredictor::forModule(module);
    if (failed(predictor))
      return signalPassFailure();
    for (func::FuncOp func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      auto alternativesAt = [&](int64_t position) {
        FunctionRewrite round = [=](func::FuncOp copy) -> FailureOr<bool> {
          Operation *op = opAt(copy, position);
          if (!op || !isF32AllToAll(*op) || !rewritable(op))
            return false;
          exchangeAs(op, wire);
          return true;
        };
        return SmallVector<FunctionRewrite>{round};
      };
      if (failed(rewriteEachCandidate(
              func, *predictor, force,
              [](Block &block) { return positionsWhere(block, isF32AllToAll); },
              alternativesAt, [&](int64_t, RewriteOutcome outcome) {
                ++(outcome == RewriteOutcome::applied ? numNarrowed
                                                      : numRejected);
              })))
        return signalPassFailure();
    }
  }
};
} // namespace
