//===- Optimizers.h - The optimizers braid.optimizer names ------*- C++ -*-===//
//
// The one description of the training optimizers: which types each part of
// braid.optimizer takes and each type's hyperparameters after `lr`, with
// their defaults (PyTorch's torch.optim ones; FBGEMM's for
// rowwise_adagrad). The importer fills the defaults in from it and the
// dialect verifies against it.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_DIALECT_BRAID_IR_OPTIMIZERS_H
#define BRAID_DIALECT_BRAID_IR_OPTIMIZERS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::braid {

/// The types of braid.optimizer's `dense` part.
inline llvm::ArrayRef<llvm::StringRef> getDenseOptimizerTypes() {
  static const llvm::StringRef types[] = {"sgd", "adagrad", "adam"};
  return types;
}

/// The types of braid.optimizer's `embedding` part.
inline llvm::ArrayRef<llvm::StringRef> getEmbeddingOptimizerTypes() {
  static const llvm::StringRef types[] = {"sgd", "adagrad", "rowwise_adagrad"};
  return types;
}

/// A hyperparameter of an optimizer type and its default.
struct OptimizerHyperparameter {
  llvm::StringRef name;
  double defaultValue;
};

/// The hyperparameters of `type` besides `lr` (which has no default).
inline llvm::ArrayRef<OptimizerHyperparameter>
getOptimizerHyperparameters(llvm::StringRef type) {
  static const OptimizerHyperparameter adagrad[] = {{"eps", 1e-10}};
  static const OptimizerHyperparameter rowwise[] = {{"eps", 1e-8}};
  static const OptimizerHyperparameter adam[] = {
      {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8}};
  if (type == "adagrad")
    return adagrad;
  if (type == "rowwise_adagrad")
    return rowwise;
  if (type == "adam")
    return adam;
  return {};
}

/// The state tensors a dense optimizer type keeps per parameter, by the
/// suffix of their names (torch.optim's state keys): Adagrad's sum of
/// squares, Adam's two moments, none for SGD.
inline llvm::ArrayRef<llvm::StringRef>
getDenseOptimizerStateSuffixes(llvm::StringRef type) {
  static const llvm::StringRef adagrad[] = {".sum"};
  static const llvm::StringRef adam[] = {".exp_avg", ".exp_avg_sq"};
  if (type == "adagrad")
    return adagrad;
  if (type == "adam")
    return adam;
  return {};
}

} // namespace mlir::braid

#endif // BRAID_DIALECT_BRAID_IR_OPTIMIZERS_H
