//===- FuseOptimizerSteps.cpp - A gradient bucket's steps as one kernel ---===//
//
// This file implements the optimizer part of braid-fuse-collective-compute.
// A gradient bucket (braid-bucket-collectives) all-reduces its members'
// gradients as one buffer, and each member's braid.dense_update reads its
// gradient through a view of that buffer (an extract_slice, reshaped). The
// steps of one optimizer and step number that read one bucket become one
// braid.fused_dense_update: one kernel per bucket instead of one per
// parameter, reading every gradient where the collective put it.
//
//===----------------------------------------------------------------------===//

#include "CoOptSupport.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::braid;

/// The element offset in the 1-D `bucket` where `grad` starts, when `grad`
/// is a piece of it in the same order: a static unit-stride extract_slice
/// of it, reshaped or not.
static std::optional<int64_t> offsetInBucket(Value grad, Value bucket) {
  Value value = grad;
  if (auto expand = value.getDefiningOp<tensor::ExpandShapeOp>())
    value = expand.getSrc();
  else if (auto collapse = value.getDefiningOp<tensor::CollapseShapeOp>())
    value = collapse.getSrc();
  auto slice = value.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || slice.getSource() != bucket ||
      slice.getSourceType().getRank() != 1 || slice.getType().getRank() != 1)
    return std::nullopt;
  int64_t offset = slice.getStaticOffsets()[0];
  if (ShapedType::isDynamic(offset) || slice.getStaticStrides()[0] != 1)
    return std::nullopt;
  return offset;
}

/// Whether `value` is available before `point`: defined in a region
/// around `point`'s block, or before `point` in that block.
static bool isAvailableBefore(Value value, Operation *point) {
  Block *block = point->getBlock();
  if (value.getParentBlock() != block)
    return value.getParentRegion()->isProperAncestor(block->getParent());
  if (isa<BlockArgument>(value))
    return true;
  return value.getDefiningOp()->isBeforeInBlock(point);
}

SmallVector<OptimizerStepGroup>
mlir::braid::fusibleOptimizerSteps(Operation *producer) {
  if (producer->getNumResults() != 1)
    return {};
  Value bucket = producer->getResult(0);
  auto type = dyn_cast<RankedTensorType>(bucket.getType());
  if (!type || type.getRank() != 1 || !type.hasStaticShape() ||
      !type.getElementType().isF32())
    return {};
  // The steps that read the bucket, in block order, each with its offset.
  SmallVector<std::pair<DenseUpdateOp, int64_t>> steps;
  SetVector<Operation *> readers;
  for (Operation *user : bucket.getUsers()) {
    if (!isa<tensor::ExtractSliceOp>(user))
      continue;
    for (Operation *reshape : user->getUsers()) {
      readers.insert(reshape);
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(reshape))
        for (Operation *reader : reshape->getUsers())
          readers.insert(reader);
    }
  }
  for (Operation *reader : readers) {
    auto update = dyn_cast<DenseUpdateOp>(reader);
    if (!update || update->getBlock() != producer->getBlock() ||
        !update.getParam().getType().hasStaticShape() ||
        !update.getParam().getType().getElementType().isF32())
      continue;
    if (std::optional<int64_t> offset =
            offsetInBucket(update.getGrad(), bucket))
      steps.push_back({update, *offset});
  }
  llvm::sort(steps, [](auto &a, auto &b) {
    return a.first->isBeforeInBlock(b.first);
  });
  // Groups of one optimizer and step number, up to kMaxFusedSteps steps in
  // block order, placed at their first step: every member's operands must
  // be there already.
  SmallVector<OptimizerStepGroup> groups;
  SmallVector<bool> taken(steps.size(), false);
  for (size_t first = 0; first < steps.size(); ++first) {
    if (taken[first])
      continue;
    DenseUpdateOp lead = steps[first].first;
    OptimizerStepGroup group;
    group.bucket = bucket;
    for (size_t i = first;
         i < steps.size() && int64_t(group.steps.size()) < kMaxFusedSteps;
         ++i) {
      DenseUpdateOp update = steps[i].first;
      if (taken[i] || update.getOptimizer() != lead.getOptimizer() ||
          update.getStep() != lead.getStep())
        continue;
      bool available = isAvailableBefore(update.getParam(), lead) &&
                       isAvailableBefore(update.getStep(), lead) &&
                       llvm::all_of(update.getState(), [&](Value state) {
                         return isAvailableBefore(state, lead);
                       });
      if (!available)
        continue;
      taken[i] = true;
      group.steps.push_back(update);
      group.offsets.push_back(steps[i].second);
    }
    if (group.steps.size() > 1)
      groups.push_back(std::move(group));
  }
  return groups;
}

void mlir::braid::fuseOptimizerSteps(const OptimizerStepGroup &group) {
  DenseUpdateOp lead = group.steps.front();
  SmallVector<Value> params, state;
  SmallVector<Type> resultTypes, stateTypes;
  for (DenseUpdateOp update : group.steps) {
    params.push_back(update.getParam());
    resultTypes.push_back(update.getNewParam().getType());
    llvm::append_range(state, update.getState());
    llvm::append_range(stateTypes, update.getNewState().getTypes());
  }
  llvm::append_range(resultTypes, stateTypes);
  OpBuilder b(lead);
  auto fused = FusedDenseUpdateOp::create(
      b, lead.getLoc(), resultTypes, params, group.bucket, lead.getStep(),
      state, b.getDenseI64ArrayAttr(group.offsets), lead.getOptimizer());
  int64_t perMember = state.size() / params.size();
  for (auto [index, step] : llvm::enumerate(group.steps)) {
    DenseUpdateOp update = step;
    update.getNewParam().replaceAllUsesWith(fused.getNewParams()[index]);
    for (auto [k, next] : llvm::enumerate(update.getNewState()))
      next.replaceAllUsesWith(fused.getNewState()[index * perMember + k]);
    Value grad = update.getGrad();
    update.erase();
    // The gradient's view, when nothing else reads it.
    while (Operation *def = grad.getDefiningOp()) {
      if (!def->use_empty() ||
          !isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
               tensor::CollapseShapeOp>(def))
        break;
      grad = def->getOperand(0);
      def->erase();
    }
  }
}
