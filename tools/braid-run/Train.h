//===- Train.h - braid-run --reference --steps K ----------------*- C++ -*-===//
//
// Training under the reference semantics, for braid-run.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_TOOLS_BRAID_RUN_TRAIN_H
#define BRAID_TOOLS_BRAID_RUN_TRAIN_H

#include "braid/Interp/Interpreter.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace mlir::braid {

struct TrainOptions {
  int64_t steps = 0;
  /// Where labels.npy is read from (with the inputs); empty: synthetic.
  std::string inputsDir;
  std::string dumpDir;
  bool json = false;
  int64_t maxDumpElements = 0;
};

/// Trains `func` (one rank, the global batch `args`) for options.steps
/// steps under the reference semantics; returns the exit code.
int runReferenceTraining(ModuleOp module, func::FuncOp func,
                         interp::TableMap &tables,
                         std::vector<interp::HostTensor> args,
                         const TrainOptions &options);

} // namespace mlir::braid

#endif // BRAID_TOOLS_BRAID_RUN_TRAIN_H
