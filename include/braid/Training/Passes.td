//===- Passes.td - Braid's training passes -----------------*- tablegen -*-===//
//
// This file declares the passes that derive the training step from a
// forward program. The reference (docs/reference/BraidTrainingPasses.md) is
// generated from these descriptions.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_TRAINING_PASSES_TD
#define BRAID_TRAINING_PASSES_TD

include "mlir/Pass/PassBase.td"

def BraidDifferentiatePass
    : Pass<"braid-differentiate", "::mlir::ModuleOp"> {
  let summary = "derives the training step from the forward program";
  let description = [{
    Adds `func.func @train_step` beside `@forward`: the forward pass, the
    binary cross-entropy of its click probability against the labels, the
    backward pass and the optimizer updates, for a global program or a
    per-rank one (after `braid-partition`). The backward is not written per
    model: the pass walks the forward ops in reverse and asks each its
    gradient rule (`GradientOpInterface`, attached to every op a forward
    program uses), so a collective's gradient is the collective that moves
    gradients back, a lookup's is a fused embedding update, and a
    replicated weight's gradient is summed over the ranks by an
    `all_reduce` before its `braid.dense_update`.

    `@forward` must return one `braid.linear` with a sigmoid, the click
    probability; `@train_step` computes that layer's logit instead and
    feeds it to `braid.bce_with_logits`, with scale one over the global
    batch (the sum of the module's `braid.batch_split`, or the forward's
    static batch), so the losses of all ranks add up to the global mean.
    The module's `braid.optimizer` gives the optimizers; the dense
    optimizer's state tensors become arguments and results.

    The signature: `@forward`'s arguments, then `labels` ([B] f32, named
    `braid.input = "labels"`), `step` (`tensor<i64>`, the step's number
    from 1), then each parameter's optimizer state (`braid.state =
    "<param>.sum"` for Adagrad, `.exp_avg` and `.exp_avg_sq` for Adam).
    The results: the global loss (`braid.output = "loss"`), then every
    parameter's new value and state, in argument order, named like the
    arguments. Tables are updated in place by the fused update ops; their
    optimizer state lives with the table in the runtime, as in FBGEMM.

    Errors: no `@forward` or `braid.optimizer`, a forward that does not end
    in a sigmoid layer, an existing `@train_step`, an op without a gradient
    rule, asynchronous collectives (differentiate before
    `braid-async-exchanges`).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // BRAID_TRAINING_PASSES_TD
