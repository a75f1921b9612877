//===- Training.h - Reference semantics of a training step -------*- C++ -*-===//
//
// This file declares the reference semantics of one DLRM training step on
// the global program: the forward pass, the binary cross-entropy of its
// sigmoid output against the labels (the mean over the batch, computed from
// the logit as BCEWithLogitsLoss does), the gradients of every parameter and
// looked-up table row, and the optimizer updates of the module's
// braid.optimizer. It is the oracle a compiled training step is checked
// against; gradients are derived here, op by op, from the forward IR.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_INTERP_TRAINING_H
#define BRAID_INTERP_TRAINING_H

#include "braid/Interp/Interpreter.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::braid::interp {

/// One optimizer of braid.optimizer, every hyperparameter filled in.
struct OptimizerConfig {
  std::string type;
  double lr = 0, eps = 0, beta1 = 0, beta2 = 0;
};

/// The dense and the embedding optimizer.
struct TrainingConfig {
  OptimizerConfig dense, embedding;
};

/// Reads the module's braid.optimizer (verified by the dialect); a located
/// error when it has none.
FailureOr<TrainingConfig> readTrainingConfig(ModuleOp module);

/// One part of braid.optimizer (or an update op's `optimizer`), verified.
OptimizerConfig readOptimizerPart(DictionaryAttr part);

/// One optimizer step of `weights` by `gradient` (in doubles; the caller
/// rounds), with `first` and `second` its state (sized on first use: the
/// sum of squares for adagrad, one value for rowwise_adagrad, the two
/// moments for adam) at step `step`, counted from 1.
void applyOptimizer(const OptimizerConfig &config, int64_t step,
                    MutableArrayRef<double> weights, ArrayRef<double> gradient,
                    std::vector<double> &first, std::vector<double> &second);

/// The embedding optimizer's state: per table, per row that was ever
/// updated, the row's state (the sum of squares of each column for
/// adagrad, their mean for rowwise_adagrad).
using EmbeddingState =
    llvm::StringMap<llvm::DenseMap<int64_t, std::vector<double>>>;

/// Runs a training function (braid-differentiate's @train_step) for all
/// ranks under the reference semantics, updating `tables` and `state` in
/// place as its fused updates do.
FailureOr<RankValues> runTrainingFunction(func::FuncOp func,
                                          const RankValues &args,
                                          TableMap &tables,
                                          EmbeddingState &state);

/// What the optimizers keep between steps: per parameter (argument index)
/// Adagrad's sum of squares or Adam's first and second moments, per table
/// row its Adagrad sums (one per element, or one per row for
/// rowwise_adagrad). Rows never looked up have no state (and are never
/// written).
struct TrainingState {
  int64_t step = 0;
  llvm::DenseMap<unsigned, HostTensor> first, second;
  EmbeddingState rowState;
};

/// Runs one training step of `func` on one rank: `args` holds its inputs and
/// parameters (updated in place), `tables` its tables (looked-up rows
/// updated in place), `labels` is [batch] in [0, 1]. Returns the loss before
/// the update.
FailureOr<double> trainStep(func::FuncOp func, std::vector<HostTensor> &args,
                            TableMap &tables, const HostTensor &labels,
                            const TrainingConfig &config,
                            TrainingState &state);

} // namespace mlir::braid::interp

#endif // BRAID_INTERP_TRAINING_H
