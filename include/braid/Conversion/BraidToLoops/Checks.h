//===- Checks.h - Run-time checks in generated kernels ----------*- C++ -*-===//
//
// This file declares the run-time checks generated kernels make on the
// data they read. Each is a branch that calls a function the target
// provides (the CPU runtime's `braidrt_index_error`, for example), which
// reports the error and ends the job.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_CONVERSION_BRAIDTOLOOPS_CHECKS_H
#define BRAID_CONVERSION_BRAIDTOLOOPS_CHECKS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::braid {

/// Calls `fn`(first, second), two index values passed as i64, when
/// `condition` holds.
void emitAbortIf(OpBuilder &b, Location loc, func::FuncOp fn, Value condition,
                 Value first, Value second);

/// Calls `indexError`(row, rows) when the index `row` is outside [0, rows).
void emitIndexCheck(OpBuilder &b, Location loc, func::FuncOp indexError,
                    Value row, Value rows);

/// The same check for every element of the 1-D integer tensor `indices`:
/// a serial loop, which reports the first bad index, or with `parallel` a
/// parallel one (a GPU kernel on the CUDA target, so the indices are read
/// where they live, named `<op's kernel>_indices_check`), which reports one
/// of them.
void emitIndicesCheck(OpBuilder &b, Location loc, func::FuncOp indexError,
                      Value indices, Value rows, bool parallel = false);

/// Aborts through `offsetsError` (entry, value) unless `offsets` start at
/// 0, never decrease and end at the number of `indices` (the reference
/// semantics' rule), so that no bag reads outside the indices. Serial, the
/// first entry, then the last, then the first that decreases is reported;
/// with `parallel` every entry is checked by an iteration of a parallel
/// loop of its own (the first and last entries there too; on the CUDA
/// target the kernel `<op's kernel>_offsets_check`), and one bad entry is
/// reported. Only the count of entries is read on the host.
void emitOffsetsCheck(OpBuilder &b, Location loc, func::FuncOp offsetsError,
                      Value offsets, Value indices, bool parallel = false);

/// Aborts through `rowsError` (rows, expected) unless every tensor of
/// `features` whose dimension 0 is dynamic has `rows` rows (static ones the
/// verifier has tied already).
void emitSameRowsCheck(OpBuilder &b, Location loc, func::FuncOp rowsError,
                       ValueRange features, Value rows);

} // namespace mlir::braid

#endif // BRAID_CONVERSION_BRAIDTOLOOPS_CHECKS_H
