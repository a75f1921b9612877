//===- Passes.td - Braid's sharding passes -----------------*- tablegen -*-===//
//
// This file declares the passes that plan a global Braid program's sharding
// and partition it into the per-rank program. The reference
// (docs/reference/BraidShardingPasses.md) is generated from these
// descriptions.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_SHARDING_PASSES_TD
#define BRAID_SHARDING_PASSES_TD

include "mlir/Pass/PassBase.td"

def BraidPlanShardingPass : Pass<"braid-plan-sharding", "::mlir::ModuleOp"> {
  let summary = "chooses a placement for every embedding table";
  let description = [{
    Plans the sharding of the module's `braid.table`s for the cluster its
    `braid.cluster` attribute names (or the `cluster`, `nodes` and
    `ranks-per-node` options, which then set that attribute), and writes
    each table's `placement` and every `braid.linear`'s
    `#braid.dense_placement<data_parallel>`.

    The planner (`lib/Plan`, see docs/planner.md) minimizes the cost
    model's time of the embedding stage with every rank's table memory
    within its capacity less a reserve. `planner=braid` (the default) is
    Braid's search; `greedy:size`, `greedy:dim`, `greedy:dim_pooling` and
    `greedy:dim_pooling_logrows` are the table-wise greedy baselines of the
    published benchmarks; `force-sharding` puts every table in one sharding
    type. `planner=keep` keeps the placements the tables already carry, and
    `plan=FILE` reads them from a plan.json (braid-compile's own, whose
    sharding names are TorchRec's), so that a plan made elsewhere is priced
    and partitioned as it is. The module's `braid.planner` names what chose
    the placements. The result is deterministic.

    The global batch is the static number of rows of the module's bags.
    Errors: no cluster, an unknown planner, sharding type or hardware, a
    dynamic batch, or tables that do not fit in memory.

    ```mlir
    // braid-opt --braid-plan-sharding="cluster=dgx-h100 nodes=1 ranks-per-node=2"
    braid.table @t : tensor<1000x16xf32> pooling_factor = 4.0
    // becomes
    braid.table @t : tensor<1000x16xf32> pooling_factor = 4.0
        placement = #braid.table_wise<rank = 0>
    ```
  }];
  let options = [
    Option<"planner", "planner", "std::string", /*default=*/"\"braid\"",
           "braid | greedy:size | greedy:dim | greedy:dim_pooling | "
           "greedy:dim_pooling_logrows | keep (the placements the tables "
           "carry)">,
    Option<"planFile", "plan", "std::string", /*default=*/"\"\"",
           "a plan.json (braid-compile's format) whose shards become the "
           "tables' placements, priced as they are">,
    Option<"forceSharding", "force-sharding", "std::string",
           /*default=*/"\"\"",
           "put every table in one sharding type (table_wise, row_wise, "
           "column_wise, table_row_wise, data_parallel)">,
    Option<"cluster", "cluster", "std::string", /*default=*/"\"\"",
           "hardware preset or JSON file; defaults to the module's "
           "braid.cluster">,
    Option<"nodes", "nodes", "int64_t", /*default=*/"0",
           "nodes of the cluster (with `cluster`; 0: the hardware's)">,
    Option<"ranksPerNode", "ranks-per-node", "int64_t", /*default=*/"0",
           "ranks per node (with `cluster`; 0: the hardware's)">,
    Option<"train", "train", "bool", /*default=*/"false",
           "plan for the training step (backward, gradient exchanges, the "
           "embedding optimizer of braid.optimizer and its state), not the "
           "forward pass">,
    Option<"parameterBlocks", "parameter-blocks", "bool", /*default=*/"false",
           "with `train`: the training step will store tensor-parallel "
           "parameters as blocks (braid-store-parameter-blocks, "
           "braid-compile's default level), so Megatron-style pairs are "
           "priced for training that way and placed tensor-parallel where "
           "that is faster; without it a training step keeps its dense "
           "layers data-parallel">,
  ];
}

def BraidPartitionPass : Pass<"braid-partition", "::mlir::ModuleOp"> {
  let summary = "rewrites the global program into a per-rank SPMD program";
  let description = [{
    Rewrites every function of a planned module (every table has a
    placement, the module has a `braid.cluster`) into the program each of
    the R ranks runs. The global batch B is data-parallel: rank r holds
    b_r samples, B / R rounded up for the first B mod R ranks and down for
    the rest, so every batch-shaped argument and value gets a dynamic first
    dimension. The split is recorded as the module's `braid.batch_split`.
    Exchanges give every rank c = ceil(B / R) bag slots.

    Each `braid.embedding_bag` of a sharded table becomes:
    - `braid.bucketize`: route the local bags to the shard owners (row
      ranges rebased), `braid.all_to_all` of the bag lengths and
      `braid.all_to_all_v` of the indices;
    - `braid.shard_embedding_bag`: the owner's partial pooling (`mean`
      pools as `sum`; `max` keeps -inf for empty bags);
    - the output exchange: for `table_wise` and `column_wise` an
      `all_to_all` of the pooled rows back to their ranks; for `row_wise`
      a `reduce_scatter` (sum, or max) over all ranks; for
      `table_row_wise` a `reduce_scatter` inside the node followed by an
      `all_to_all` to the samples' ranks (two levels);
    - `braid.combine_shards`: concatenate column shards, drop the padding
      slots and finish `mean` and `max`.

    `data_parallel` tables, and every table on a single rank, keep a local
    `braid.embedding_bag`. Data-parallel dense layers and the interaction
    run on the local rows, which needs no communication in the forward
    pass.

    Exchanges are synchronous; `braid-async-exchanges` (co-optimization)
    starts them early and waits late.

    Dense layers placed `column` or `row` (`#braid.dense_placement`) run
    tensor-parallel over all R ranks, on the whole batch B, with this
    rank's block of the weight (a `tensor.extract_slice` of the parameter
    at `braid.rank * block`); every value they produce has one of three
    layouts, and each consumer gets the one it needs:
    - a `column` layer reads the whole batch (an `all_gather` of the local
      rows, made once per value) and produces its block of the output
      features;
    - a `row` layer reads its block of the input features (a column
      layer's output as it is, or a slice of the whole batch) and produces
      a partial sum of every output (rank 0 adds the bias, through an
      `arith.select`);
    - any other op reads this rank's rows: a partial sum is made whole by
      a sum `all_reduce` of which each rank slices its rows, a column
      block first takes its place among zeros (`tensor.insert_slice`).

    Only collectives along the batch dimension are used, which every
    backend lowers; `braid-reorder-collectives` then turns an all_reduce
    whose rows a rank keeps into a reduce_scatter. A tensor-parallel layer
    needs the batch to divide by R, its split features to divide by R,
    its placement to name ranks 0..R-1 in order and, for `row`, no
    activation.

    Errors: a table without placement, a dynamic global batch, per-sample
    weights on a sharded table, a batch-shaped value used by an op the
    partitioner does not know, or a tensor-parallel layer it cannot lay
    out.
  }];
  let dependentDialects = ["::mlir::braid::BraidDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // BRAID_SHARDING_PASSES_TD
