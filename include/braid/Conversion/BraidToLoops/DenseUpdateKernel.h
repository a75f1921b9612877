//===- DenseUpdateKernel.h - The dense optimizer step -----------*- C++ -*-===//
//
// This file declares the target-neutral kernel of `braid.dense_update`: one
// elementwise linalg.generic over the parameter that every target runs (an
// OpenMP loop on a CPU, a GPU kernel on the CUDA target), so a GPU's
// parameters and optimizer state never travel to the host for the step.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_CONVERSION_BRAIDTOLOOPS_DENSEUPDATEKERNEL_H
#define BRAID_CONVERSION_BRAIDTOLOOPS_DENSEUPDATEKERNEL_H

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/IR/Builders.h"

namespace mlir::braid {

/// `op` (SGD, Adagrad or Adam on a statically shaped f32 parameter) as one
/// elementwise linalg.generic computing, per element, in f64, the formulas
/// of braidrt/OptimizerMath.h (torch.optim's), the new parameter and state
/// rounded to f32. `step` is the step number as an i64 scalar; Adam's bias
/// corrections 1 - beta^step are computed from it once, outside the loop.
/// Returns the values replacing the op's results; emits a located error
/// and fails on a form it does not build.
FailureOr<SmallVector<Value>>
buildDenseUpdateKernel(OpBuilder &b, DenseUpdateOp op, Value step);

/// `op`'s members' steps as one scf.parallel over all their elements, one
/// after the other, on buffers: element i belongs to the member whose
/// range holds it (an scf.index_switch picks the member's buffers), reads
/// its gradient from `op`'s grads at the member's offset, and writes the
/// member's new parameter and state, each a new buffer. The arithmetic is
/// buildDenseUpdateKernel's. Returns the results as tensors of those
/// buffers, in `op`'s order.
FailureOr<SmallVector<Value>>
buildFusedDenseUpdateKernel(OpBuilder &b, FusedDenseUpdateOp op, Value step);

} // namespace mlir::braid

#endif // BRAID_CONVERSION_BRAIDTOLOOPS_DENSEUPDATEKERNEL_H
