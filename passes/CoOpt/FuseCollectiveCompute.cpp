//===- FuseCollectiveCompute.cpp - Reading pooled rows in place -----------===//
//
// This file implements braid-fuse-collective-compute: a braid.combine_shards
// that only copies the first rows of its exchange's receive buffer (one
// part, sum pooling, no change of element type) becomes a
// tensor.extract_slice of that buffer, which bufferizes to a view, so the
// interaction reads the pooled rows where the exchange put them. Each
// rewrite lands where the simulator predicts the function faster.
//
//===----------------------------------------------------------------------===//

#include "braid/CoOpt/Passes.h"

#include "CoOptSupport.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDFUSECOLLECTIVECOMPUTEPASS
#include "braid/CoOpt/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

/// Whether `combine` copies the first rows of its received part and does
/// nothing else: one part of `bags_per_rank` rows as wide as the result,
/// sum pooling, the same element type.
static bool isCopy(CombineShardsOp combine) {
  auto received = cast<RankedTensorType>(combine.getReceived().getType());
  auto result = cast<RankedTensorType>(combine.getResult().getType());
  if (combine.getMode() != PoolingMode::sum ||
      received.getElementType() != result.getElementType() ||
      received.isDynamicDim(0) || received.isDynamicDim(1) ||
      result.isDynamicDim(1) || received.getDimSize(1) != result.getDimSize(1))
    return false;
  // One part: exactly the rank's bag slots.
  int64_t slots = static_cast<int64_t>(combine.getBagsPerRank());
  if (received.getDimSize(0) != slots)
    return false;
  return result.isDynamicDim(0) || result.getDimSize(0) <= slots;
}

/// Replaces `combine` (a copy) with a slice of its received rows.
static void replaceWithSlice(CombineShardsOp combine) {
  OpBuilder b(combine);
  Location loc = combine.getLoc();
  auto result = cast<RankedTensorType>(combine.getResult().getType());
  Value received = combine.getReceived();
  if (received.getType() == result) {
    combine.getResult().replaceAllUsesWith(received);
    combine.erase();
    return;
  }
  // The local bags: one fewer than the offsets.
  OpFoldResult bags;
  if (result.isDynamicDim(0)) {
    Value offsets = tensor::DimOp::create(b, loc, combine.getOffsets(), 0);
    bags = arith::SubIOp::create(b, loc, offsets,
                                 arith::ConstantIndexOp::create(b, loc, 1))
               .getResult();
  } else {
    bags = b.getIndexAttr(result.getDimSize(0));
  }
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {bags,
                                     b.getIndexAttr(result.getDimSize(1))};
  SmallVector<OpFoldResult> strides = {b.getIndexAttr(1), b.getIndexAttr(1)};
  Value slice = tensor::ExtractSliceOp::create(b, loc, result, received,
                                               offsets, sizes, strides);
  combine.getResult().replaceAllUsesWith(slice);
  combine.erase();
}

/// The positions of the copies among `block`'s ops.
static SmallVector<int64_t> copyPositions(Block &block) {
  SmallVector<int64_t> positions;
  for (auto [position, op] : llvm::enumerate(block))
    if (auto combine = dyn_cast<CombineShardsOp>(op);
        combine && isCopy(combine))
      positions.push_back(position);
  return positions;
}

namespace {
struct BraidFuseCollectiveComputePass
    : public braid::impl::BraidFuseCollectiveComputePassBase<
          BraidFuseCollectiveComputePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<ProgramPredictor> predictor = ProgramPredictor::forModule(module);
    if (failed(predictor))
      return signalPassFailure();
    for (func::FuncOp func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      auto alternativesAt = [&](int64_t position) {
        FunctionRewrite fuse =
            [position](func::FuncOp copy) -> FailureOr<bool> {
          auto combine = dyn_cast<CombineShardsOp>(opAt(copy, position));
          if (!combine || !isCopy(combine))
            return false;
          replaceWithSlice(combine);
          return true;
        };
        return SmallVector<FunctionRewrite>{fuse};
      };
      auto record = [&](int64_t, RewriteOutcome outcome) {
        ++(outcome == RewriteOutcome::applied ? numFused : numRejected);
      };
      if (failed(rewriteEachCandidate(func, *predictor, force, copyPositions,
                                      alternativesAt, record)))
        return signalPassFailure();
    }
  }
};
} // namespace
