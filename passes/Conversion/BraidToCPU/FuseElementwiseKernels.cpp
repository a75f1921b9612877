//===- FuseElementwiseKernels.cpp - One kernel per elementwise chain ------===//
//
// This file implements braid-fuse-elementwise-kernels, a step of the
// backends' lowering after convert-elementwise-to-linalg. Each elementwise
// arith op on tensors became a linalg.generic of its own, a kernel that
// writes its result to memory for the next one to read back. A generic
// whose only reader is another elementwise generic is fused into it (upstream
// linalg's producer-consumer fusion), so a chain such as a DCN cross layer's
// `x0 * (W x + b) + x` is one kernel. The simulator prices a chain the same
// way (ScheduleBuilder.cpp).
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDFUSEELEMENTWISEKERNELSPASS
#include "braid/Conversion/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;

/// Whether `op` is elementwise arithmetic: a linalg.generic over parallel
/// loops whose operands all use the identity map and whose body is arith
/// alone (what convert-elementwise-to-linalg makes, and chains of it).
static bool isElementwiseArith(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumParallelLoops() != generic.getNumLoops() ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return false;
  return llvm::all_of(generic.getBody()->without_terminator(),
                      [](Operation &inner) {
                        return isa<arith::ArithDialect>(inner.getDialect());
                      });
}

namespace {
struct BraidFuseElementwiseKernelsPass
    : public braid::impl::BraidFuseElementwiseKernelsPassBase<
          BraidFuseElementwiseKernelsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // convert-elementwise-to-linalg makes its first operand the result's
    // init, which the body never reads; an empty tensor of its sizes
    // instead leaves the operand's value one reader fewer, so a producer
    // read by one consumer is read only there.
    func.walk([&](linalg::GenericOp generic) {
      if (!isElementwiseArith(generic))
        return;
      OpBuilder b(generic);
      for (OpOperand &init : generic.getDpsInitsMutable()) {
        if (generic.payloadUsesValueFromOperand(&init) ||
            init.get().getDefiningOp<tensor::EmptyOp>())
          continue;
        auto type = cast<RankedTensorType>(init.get().getType());
        SmallVector<OpFoldResult> sizes =
            tensor::getMixedSizes(b, generic.getLoc(), init.get());
        init.set(tensor::EmptyOp::create(b, generic.getLoc(), sizes,
                                         type.getElementType()));
      }
    });
    // The empty tensors' sizes read from what the generics read, not from
    // their results (a tensor.dim of a result is a reader too).
    RewritePatternSet sizes(&getContext());
    memref::populateResolveRankedShapedTypeResultDimsPatterns(sizes);
    if (failed(applyPatternsGreedily(func, std::move(sizes))))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fused) {
          Operation *producer = fused->get().getDefiningOp();
          return producer && producer->hasOneUse() &&
                 isElementwiseArith(producer) &&
                 isElementwiseArith(fused->getOwner());
        });
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
