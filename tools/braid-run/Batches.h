//===- Batches.h - The batches a training run takes -------------*- C++ -*-===//
//
// The data of braid-run's training runs: one batch (the inputs of --inputs
// DIR with DIR/labels.npy), several used in turn (DIR/batch_0000/,
// DIR/batch_0001/, ..., each with its inputs and labels.npy), or without
// --inputs a seeded synthetic click dataset, a fresh batch per step whose
// labels are planted in its dense features.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_TOOLS_BRAID_RUN_BATCHES_H
#define BRAID_TOOLS_BRAID_RUN_BATCHES_H

#include "braid/Interp/Signature.h"

#include <string>
#include <vector>

namespace mlir::braid {

class TrainingBatches {
public:
  /// The batches for the global program `global` bound with `options`
  /// (--seed, --inputs, --weights), of `globalBatch` samples each; a
  /// located error (reported) when a directory or its labels are bad.
  static FailureOr<TrainingBatches> open(const interp::Signature &global,
                                         const interp::TableMap &tables,
                                         const interp::BindingOptions &options,
                                         int64_t globalBatch);

  /// Puts the inputs of step `step`'s batch (from 0) into `args`, the
  /// global program's arguments (its parameters are left alone), and
  /// returns the batch's labels; errors are reported.
  FailureOr<interp::HostTensor> load(int64_t step,
                                     std::vector<interp::HostTensor> &args) const;

  /// "a synthetic click dataset (seed 0)", "DIR", "3 batches in DIR".
  std::string describe() const;

private:
  interp::Signature global;
  const interp::TableMap *tables = nullptr;
  interp::BindingOptions options;
  /// The batch directories; empty for the synthetic dataset.
  std::vector<std::string> dirs;
  int64_t globalBatch = 0;
};

/// Where a run binds its first inputs from: DIR/batch_0000 when DIR holds
/// batches, else DIR.
std::string getFirstBatchDir(StringRef dir);

/// The samples of a global program's batch: the rows of its dense input,
/// else its first bag offsets' bags.
int64_t getGlobalBatch(const interp::Signature &global,
                       ArrayRef<interp::HostTensor> args);

/// The labels: `labels.npy` in `inputsDir` (every element in [0, 1], one
/// per sample of the global batch) or, without it, a signal planted in the
/// dense features of `args`: a sample is a click when its dense features
/// sum above the batch's mean. Errors are reported.
FailureOr<interp::HostTensor> loadLabels(const interp::Signature &global,
                                         ArrayRef<interp::HostTensor> args,
                                         StringRef inputsDir,
                                         int64_t globalBatch);

} // namespace mlir::braid

#endif // BRAID_TOOLS_BRAID_RUN_BATCHES_H
