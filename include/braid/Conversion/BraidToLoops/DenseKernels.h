//===- DenseKernels.h - Target-neutral dense kernels ------------*- C++ -*-===//
//
// This file declares the target-neutral kernels of Braid's dense ops, built
// on tensors with linalg, tensor and scf ops that every target lowers.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_CONVERSION_BRAIDTOLOOPS_DENSEKERNELS_H
#define BRAID_CONVERSION_BRAIDTOLOOPS_DENSEKERNELS_H

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::braid {

/// `linear` as a linalg contraction with the weight in [out, in] layout,
/// then one elementwise linalg.generic for bias and activation. Returns the
/// value that replaces its result.
Value buildLinearKernel(OpBuilder &b, LinearOp linear);

/// The parts of `linear_grad` around its two GEMMs, generated on every
/// target: the pre-activation gradient g = dy * act'(y) (relu's mask,
/// sigmoid's y (1 - y) in f64) as one elementwise linalg.generic over the
/// flattened [B, out] result, and the bias gradient, each output column's
/// sum of g over the batch in f64, in batch order, as an scf.forall whose
/// iteration sums `biasColumns` adjacent columns as one vector (the CPU
/// target's 16 keep independent additions in flight; 1 is a thread per
/// column). Returns {g, db}; db is null when nothing reads the op's bias
/// gradient (the input part of a split linear_grad), and no kernel is
/// built for it.
std::pair<Value, Value> buildLinearGradPointwise(OpBuilder &b,
                                                 LinearGradOp op,
                                                 int64_t biasColumns);

/// `interaction`: `cat` as a tensor.concat; `dot` concatenates the
/// features and computes the dense columns and the pairwise dot products
/// with a tensor.generate. Emits a located error and fails on a form it
/// does not build. A feature whose rows are not the dense features' aborts
/// through `rowsError` (rows, expected). With `catLanes` > 0, a `cat`
/// whose every feature's width that count divides is written by one 2-D
/// loop per feature over (sample, group of `catLanes` columns) instead of
/// one loop over the samples: on a GPU consecutive threads then copy
/// consecutive columns of a row.
FailureOr<Value> buildInteractionKernel(OpBuilder &b, InteractionOp interaction,
                                        func::FuncOp rowsError,
                                        int64_t catLanes = 0);

/// `interaction_grad`: a forall over the samples that writes each
/// feature's gradient row once (cat: its columns of the result's gradient;
/// dot: the dense columns plus each pair's gradient times the other
/// feature, as vector FMAs), into buffers the results wrap. Emits a
/// located error and fails on a form it does not build; features of other
/// rows than the result's gradient abort through `rowsError`. With
/// `catLanes` > 0 a cat's gradients are copied as buildInteractionKernel
/// writes its result: one 2-D loop per feature over (sample, group of
/// `catLanes` columns), when that count divides every width.
FailureOr<SmallVector<Value>>
buildInteractionGradKernel(OpBuilder &b, InteractionGradOp op,
                           func::FuncOp rowsError, int64_t catLanes = 0);

} // namespace mlir::braid

#endif // BRAID_CONVERSION_BRAIDTOLOOPS_DENSEKERNELS_H
