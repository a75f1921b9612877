//===- Train.h - braid-run --reference --steps K ----------------*- C++ -*-===//
//
// Training under the reference semantics, for braid-run.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_TOOLS_BRAID_RUN_TRAIN_H
#define BRAID_TOOLS_BRAID_RUN_TRAIN_H

#include "Batches.h"

#include "braid/Interp/Interpreter.h"
#include "braid/Interp/Signature.h"
#include "braid/Interp/Training.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::braid {

struct TrainOptions {
  int64_t steps = 0;
  /// The batches, taken in turn (not owned).
  const TrainingBatches *batches = nullptr;
  std::string dumpDir;
  bool json = false;
  int64_t maxDumpElements = 0;
};

/// What a training run produced, by name: each step's loss, the
/// parameters and their dense optimizer state (`<param>.sum`, ...), the
/// tables and their optimizer state (`<table>`: [rows] or [rows, dim], zero
/// for rows never updated).
struct TrainedModel {
  std::vector<double> losses;
  std::map<std::string, interp::HostTensor> params, states, tableStates;
  interp::TableMap tables;
  /// Figures --json reports beside the losses (a compiled run's memory).
  std::map<std::string, double> metrics;
  /// Each step's time, the slowest rank's (a compiled run's; empty under
  /// the reference semantics): --json's `steps_ms`, so warm-up shows.
  std::vector<double> stepsMs;
  /// Each timed op's milliseconds per step, in program order (a run of a
  /// braid-compile --profile-ops artifact): --json's `ops_ms`.
  std::vector<std::pair<std::string, double>> opsMs;
};

/// Sets model.tableStates from the reference semantics' per-row state.
void setTableStates(TrainedModel &model, const interp::EmbeddingState &rows,
                    const interp::TrainingConfig &config);

/// The global reference training a run is checked against.
struct GlobalTraining {
  ModuleOp module;
  func::FuncOp func;
  std::vector<interp::HostTensor> args;
  interp::TableMap tables;
  double tolerance = 0;
};

/// Reports a finished run: --json (with the median step time when
/// `stepMs` >= 0), --dump, and with `check` the comparison with the global
/// reference training of as many steps. Returns the exit code.
int finishTraining(const TrainedModel &actual, StringRef function,
                   int64_t ranks, double stepMs, const TrainOptions &options,
                   const GlobalTraining *check);

/// Trains `func` (one rank, the global batch; `args` holds its parameters
/// and the first batch) for options.steps steps under the reference
/// semantics; returns the exit code.
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
  /// Call @train_step's pipelined form (braid-pipeline-input-dist): each
  /// step distributes the next batch's inputs.
  bool pipelined = false;
};

/// Trains the per-rank @train_step on the simulated ranks of its batch
/// split for options.steps steps; returns the exit code.
int runRankTraining(RankTraining &run, const TrainOptions &options);

} // namespace mlir::braid

#endif // BRAID_TOOLS_BRAID_RUN_TRAIN_H
