//===- CompiledTraining.h - braid-run OUT --steps K -------------*- C++ -*-===//
//
// Training with a compiled training step, for braid-run.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_TOOLS_BRAID_RUN_COMPILEDTRAINING_H
#define BRAID_TOOLS_BRAID_RUN_COMPILEDTRAINING_H

#include "NativeProgram.h"
#include "Train.h"

#include <optional>

namespace mlir::braid {

/// What a compiled training run needs beyond TrainOptions: the global
/// program's signature and arguments, their per-rank split, the tables and,
/// for --check, the global reference training.
struct CompiledTraining {
  interp::Signature global;
  std::vector<interp::HostTensor> globalArgs;
  interp::RankValues rankArgs;
  ArrayRef<int64_t> batchSplit;
  interp::TableMap tables;
  std::optional<GlobalTraining> check;
  /// With a pipelined form (braid-pipeline-input-dist) as the program: the
  /// library that computes the first batch's carried values.
  NativeProgram *inputDist = nullptr;
};

/// Trains with `program`'s compiled training step for options.steps steps
/// (this rank's share under mpirun, else the one rank); rank 0 reports.
/// A pipelined form distributes each step's next batch, and run.inputDist
/// the first. Returns the exit code.
int runCompiledTraining(NativeProgram &program, const CompiledTraining &run,
                        const TrainOptions &options);

} // namespace mlir::braid

#endif // BRAID_TOOLS_BRAID_RUN_COMPILEDTRAINING_H
