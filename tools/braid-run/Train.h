//===- Train.h - braid-run --reference --steps K ----------------*- C++ -*-===//
//
// Training under the reference semantics, for braid-run.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_TOOLS_BRAID_RUN_TRAIN_H
#define BRAID_TOOLS_BRAID_RUN_TRAIN_H

#include "braid/Interp/Interpreter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

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

/// What a per-rank training run needs beyond TrainOptions: the global
/// program (for the labels' synthetic signal and --check), the per-rank
/// @train_step, the global arguments and their per-rank split, the tables.
struct RankTraining {
  ModuleOp globalModule;
  func::FuncOp globalFunc, trainStep;
  std::vector<interp::HostTensor> globalArgs;
  interp::RankValues rankArgs;
  ArrayRef<int64_t> batchSplit;
  interp::TableMap tables;
  /// Also train the global program under the reference training step and
  /// compare losses, weights, tables and optimizer state.
  bool check = false;
  double tolerance = 0;
};

/// Trains the per-rank @train_step on the simulated ranks of its batch
/// split for options.steps steps; returns the exit code.
int runRankTraining(RankTraining &run, const TrainOptions &options);

} // namespace mlir::braid

#endif // BRAID_TOOLS_BRAID_RUN_TRAIN_H
