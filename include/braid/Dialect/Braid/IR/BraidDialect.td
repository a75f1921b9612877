//===- BraidDialect.td - Braid dialect definition ----------*- tablegen -*-===//
//
// This file declares the `braid` dialect: embedding tables, DLRM compute and
// collectives as first-class operations.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_DIALECT_BRAID_IR_BRAIDDIALECT_TD
#define BRAID_DIALECT_BRAID_IR_BRAIDDIALECT_TD

include "mlir/IR/OpBase.td"

def Braid_Dialect : Dialect {
  let name = "braid";
  let cppNamespace = "::mlir::braid";
  let summary = "Computation and communication of distributed recommendation models";
  let description = [{
    The `braid` dialect models deep learning recommendation models (DLRM) and
    the collectives that stitch their shards together. Embedding tables are
    module-level symbols (`braid.table`) carrying the access statistics the
    cost model reads; `braid.embedding_bag`, `braid.linear` and
    `braid.interaction` are the compute; collectives (`braid.all_reduce`,
    `braid.all_gather`, `braid.reduce_scatter`, `braid.all_to_all`,
    `braid.broadcast`, `braid.permute`) are first class, with replica groups
    for hierarchical forms and start/wait pairs for overlap.

    A module may carry a `braid.cluster` attribute naming the hardware it is
    compiled for, a `braid.model` string naming the model and a
    `braid.planner` string naming what chose its tables' placements
    (`braid-plan-sharding` sets it). A per-rank
    program (the output of braid-partition) carries `braid.batch_split`,
    the number of samples of the global batch each rank holds. Function
    arguments are bound to named inputs and parameters with the
    `braid.input` and `braid.param` argument attributes; a training step
    (`braid-differentiate`) also takes optimizer state (`braid.state`) and
    names its results: `braid.output` (the loss), `braid.param` and
    `braid.state` (the updated values). After `convert-braid-to-cpu`, a
    table's rows are the argument marked `braid.table`.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Names of the discardable attributes the dialect understands.
    static constexpr ::llvm::StringLiteral kClusterAttrName = "braid.cluster";
    static constexpr ::llvm::StringLiteral kModelAttrName = "braid.model";
    /// The training optimizers of the model spec: {dense = {type, lr, ...},
    /// embedding = {type, lr, ...}} (docs/model-spec.md).
    static constexpr ::llvm::StringLiteral kOptimizerAttrName = "braid.optimizer";
    static constexpr ::llvm::StringLiteral kBatchSplitAttrName = "braid.batch_split";
    static constexpr ::llvm::StringLiteral kPlannerAttrName = "braid.planner";
    /// On a module braid-profile-ops instrumented: the timed ops' names by
    /// index, an array of strings.
    static constexpr ::llvm::StringLiteral kProfiledOpsAttrName = "braid.profiled_ops";
    static constexpr ::llvm::StringLiteral kInputAttrName = "braid.input";
    static constexpr ::llvm::StringLiteral kParamAttrName = "braid.param";
    static constexpr ::llvm::StringLiteral kTableAttrName = "braid.table";
    static constexpr ::llvm::StringLiteral kStateAttrName = "braid.state";
    /// A lowered program's argument holding a table's optimizer state
    /// (sliced like the table), named by the table.
    static constexpr ::llvm::StringLiteral kTableStateAttrName = "braid.table_state";
    static constexpr ::llvm::StringLiteral kOutputAttrName = "braid.output";
    /// On a training step's optimizer state argument and result: the
    /// replica groups whose members each hold one equal slice of the state
    /// along dimension 0, in group order (braid-reorder-collectives' sharded
    /// optimizer); a #braid.replica_groups.
    static constexpr ::llvm::StringLiteral kStateShardAttrName = "braid.state_shard";
    /// On a parameter argument and result: the replica groups whose members
    /// each hold one equal block of the parameter, in group order
    /// (braid-store-parameter-blocks: a tensor-parallel layer's weight); a
    /// #braid.replica_groups.
    static constexpr ::llvm::StringLiteral kParamShardAttrName = "braid.param_shard";
    /// Beside braid.param_shard or braid.state_shard: the dimension the
    /// blocks split (an integer; 0 when absent).
    static constexpr ::llvm::StringLiteral kShardDimAttrName = "braid.shard_dim";

    /// A function's input distribution run a step ahead
    /// (braid-pipeline-input-dist). On an argument of the pipelined form: an
    /// input of the next batch, named like the `braid.input` it stands for.
    static constexpr ::llvm::StringLiteral kNextInputAttrName = "braid.next_input";
    /// On an argument of the pipelined form: a value of this batch's input
    /// distribution, computed by the step before (or by the function its
    /// `braid.input_dist` names); on a result of the pipelined form and of
    /// that function: the same value for the next batch. A name shared by
    /// the argument and the results.
    static constexpr ::llvm::StringLiteral kCarriedAttrName = "braid.carried";
    /// On the pipelined form of a function: the function that computes the
    /// first batch's `braid.carried` values from its inputs, a symbol.
    static constexpr ::llvm::StringLiteral kInputDistAttrName = "braid.input_dist";
    /// On the pipelined form of a function: that function, a symbol.
    static constexpr ::llvm::StringLiteral kPipelinedOfAttrName = "braid.pipelined_of";

    /// On an all_to_all of a forward pass pipelined in chunks of its bags
    /// (braid-chunk-lookups): the chunk it carries, a non-negative integer;
    /// braid-bucket-collectives fuses exchanges of one chunk only.
    static constexpr ::llvm::StringLiteral kChunkAttrName = "braid.chunk";

    /// On a braid.linear_grad split by braid-defer-weight-gradients: the
    /// part it computes, "input" (the input gradient; the weight and bias
    /// gradients unread) or "params" (the weight and bias gradients; the
    /// input gradient unread). The verifier holds the unread results to it.
    static constexpr ::llvm::StringLiteral kGradPartAttrName = "braid.grad_part";

    /// On a braid.linear split by braid-split-feature-gemm: the half it
    /// computes, "early" (over the features computed on the rank) or
    /// "late" (over those that arrive in an exchange, with the bias).
    static constexpr ::llvm::StringLiteral kFeaturePartAttrName =
        "braid.feature_part";

    void registerAttributes();
    void registerTypes();
  }];
}

class Braid_Op<string mnemonic, list<Trait> traits = []>
    : Op<Braid_Dialect, mnemonic, traits>;

#endif // BRAID_DIALECT_BRAID_IR_BRAIDDIALECT_TD
