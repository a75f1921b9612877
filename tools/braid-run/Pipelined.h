//===- Pipelined.h - Running a pipelined form ------------------*- C++ -*-===//
//
// braid-run --pipelined: a function's pipelined form
// (braid-pipeline-input-dist) under the reference semantics. Its input
// distribution function runs on the first batch; each call then takes the
// function's arguments, the next batch's inputs and the carried values of
// this batch, and returns the function's results and the next batch's
// carried values.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_TOOLS_BRAID_RUN_PIPELINED_H
#define BRAID_TOOLS_BRAID_RUN_PIPELINED_H

#include "braid/Interp/Interpreter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::braid {

/// A function's pipelined form and what its arguments are.
struct PipelinedForm {
  func::FuncOp step, inputDist;
  /// The function's own arguments and results, which come first.
  unsigned numArgs = 0, numResults = 0;
  /// For each next-batch input of `step` and each argument of `inputDist`:
  /// the argument of the function it stands for (same `braid.input`).
  SmallVector<unsigned> nextFrom, distFrom;

  /// The pipelined form of `func` in its module, or a located error
  /// (reported) when it has none or it is malformed.
  static FailureOr<PipelinedForm> of(func::FuncOp func);

  /// Each rank's carried values of the batch `args` holds (the function's
  /// arguments), from the input distribution function.
  FailureOr<interp::RankValues> start(const interp::RankValues &args,
                                      const interp::TableMap &tables) const;

  /// Each rank's arguments of `step`: `args` (the function's, this batch),
  /// the inputs of `next` (the function's arguments for the next batch, or
  /// their first ones) and `carried`; a located error (reported) when
  /// `next` lacks an input the step takes.
  FailureOr<interp::RankValues> callArgs(const interp::RankValues &args,
                                         const interp::RankValues &next,
                                         interp::RankValues carried) const;

  /// Moves the carried values out of each rank's `results` of `step`,
  /// leaving the function's own.
  interp::RankValues takeCarried(interp::RankValues &results) const;

  /// The function's results on the batch `args` holds, from `step` given
  /// that batch's carried values and the same batch as the next one; fails
  /// (reported) when the carried values it returns differ from those it
  /// took.
  FailureOr<interp::RankValues>
  runOnSameBatch(const interp::RankValues &args,
                 const interp::TableMap &tables) const;
};

} // namespace mlir::braid

#endif // BRAID_TOOLS_BRAID_RUN_PIPELINED_H
