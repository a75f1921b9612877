//===- Passes.td - Braid's co-optimization passes ----------*- tablegen -*-===//
//
// This file declares the passes that co-optimize a per-rank program's
// communication with its computation. The reference
// (docs/reference/BraidCoOptPasses.md) is generated from these
// descriptions.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_COOPT_PASSES_TD
#define BRAID_COOPT_PASSES_TD

include "mlir/Pass/PassBase.td"

def BraidAsyncExchangesPass
    : Pass<"braid-async-exchanges", "::mlir::func::FuncOp"> {
  let summary = "starts the pooled-row exchanges early and waits at first use";
  let description = [{
    For every `braid.combine_shards` whose received rows come straight from
    a synchronous `braid.all_to_all` or `braid.reduce_scatter` (the output
    exchange `braid-partition` emits for a sharded lookup), replaces that
    exchange with its `_start` form where it stood and a `braid.wait`, and
    moves the wait and the `combine_shards` to just before the first use of
    the combined embedding. The routing and lookups of the tables that
    follow then run while the exchange is in flight; the simulator puts
    the started exchange on the communication stream.

    The rewrite only moves the completion of an exchange later in program
    order: every rank still enters the same collectives in the same order,
    so the result is unchanged (lit tests run partitioned programs before
    and after it against the reference semantics).

    ```mlir
    %r = braid.reduce_scatter sum %p dim = 0 : tensor<8x16xf32> -> tensor<4x16xf32>
    %e = braid.combine_shards @t(%r, %off) sum bags_per_rank = 4 : ...
    // becomes
    %tok = braid.reduce_scatter_start sum %p dim = 0 : tensor<8x16xf32>
        -> !braid.token<tensor<4x16xf32>>
    ... // later lookups
    %r = braid.wait %tok : tensor<4x16xf32>
    %e = braid.combine_shards @t(%r, %off) sum bags_per_rank = 4 : ...
    ```
  }];
  let statistics = [
    Statistic<"numStarted", "exchanges-started",
              "Exchanges turned into start/wait pairs">,
  ];
  let dependentDialects = ["::mlir::braid::BraidDialect"];
}

def BraidBucketCollectivesPass
    : Pass<"braid-bucket-collectives", "::mlir::ModuleOp"> {
  let summary = "combines all_reduces of one group into size-capped buckets";
  let description = [{
    Gathers the synchronous `braid.all_reduce`s of static shape in each
    function of a per-rank program and combines those of the same
    reduction, replica groups and element type into buckets of at most
    `bucket-mib` MiB, DDP-style: the training step's dense gradients, one
    all_reduce per parameter after `braid-differentiate`, become a few
    all_reduces of flat buffers. Members join a bucket in the order their
    inputs become ready (the backward produces the last layer's gradients
    first), and a bucket is placed right after its last member's input is
    computed, so that `braid-overlap` can start it there.

    Each member is flattened (`tensor.collapse_shape`, or
    `tensor.expand_shape` for a scalar), the members are concatenated
    (`tensor.concat`), reduced by one all_reduce and sliced back
    (`tensor.extract_slice`, then reshaped). A member joins a bucket only
    when every use of its result comes after the bucket's place.

    ```mlir
    %a = braid.all_reduce sum %ga groups [[0, 1]] : tensor<32x13xf32>
    %b = braid.all_reduce sum %gb groups [[0, 1]] : tensor<32xf32>
    // becomes
    %fa = tensor.collapse_shape %ga [[0, 1]] : tensor<32x13xf32> into tensor<416xf32>
    %flat = tensor.concat dim(0) %fa, %gb : (tensor<416xf32>, tensor<32xf32>) -> tensor<448xf32>
    %r = braid.all_reduce sum %flat groups [[0, 1]] : tensor<448xf32>
    %sa = tensor.extract_slice %r[0] [416] [1] : tensor<448xf32> to tensor<416xf32>
    %a = tensor.expand_shape %sa [[0, 1]] output_shape [32, 13] : tensor<416xf32> into tensor<32x13xf32>
    %b = tensor.extract_slice %r[416] [32] [1] : tensor<448xf32> to tensor<32xf32>
    ```

    The rewrite is applied to a function only when the simulator predicts
    the whole per-rank program faster with it on the module's
    `braid.cluster` (fewer latencies against one pack and unpack copy), or
    with `force`. Summation is elementwise, so the bucketed reduction is
    the members' reductions (lit tests check programs before and after it
    through the reference semantics).
  }];
  let options = [
    Option<"bucketMiB", "bucket-mib", "double", "25.0",
           "The largest bucket in MiB (PyTorch DDP's default bucket_cap_mb)">,
    Option<"force", "force", "bool", "false",
           "Bucket without asking the simulator (for tests)">,
  ];
  let statistics = [
    Statistic<"numBuckets", "buckets", "Buckets of two or more all_reduces">,
    Statistic<"numCombined", "collectives-combined",
              "all_reduces combined into buckets">,
    Statistic<"numRejected", "rejected-by-simulator",
              "Functions whose bucketing the simulator predicted no faster">,
  ];
  let dependentDialects = ["::mlir::braid::BraidDialect",
                           "::mlir::tensor::TensorDialect"];
}

def BraidDecomposeCollectivesPass
    : Pass<"braid-decompose-collectives", "::mlir::ModuleOp"> {
  let summary = "splits all_reduces into reduce_scatter and all_gather, "
                "flat or hierarchical across nodes, where the simulator "
                "predicts a gain";
  let description = [{
    Rewrites each synchronous `braid.all_reduce` of static shape whose
    first dimension divides by the group in one of two forms.

    *Flat*: a `reduce_scatter` along dimension 0, then an `all_gather` of
    the reduced shards, over the same groups. Each rank then holds its
    shard of the reduction between the two, which later passes can work
    on (an optimizer step on a shard).

    *Hierarchical*, for an all_reduce over every rank of a cluster of
    several nodes with several ranks each: a `reduce_scatter` inside each
    node, an `all_reduce` of the shards between the nodes (the ranks at the
    same position on every node), and an `all_gather` inside each node.
    Only `1/ranks_per_node` of the data crosses the network, over every
    rank's own link at once.

    ```mlir
    // 2 nodes x 2 ranks
    %r = braid.all_reduce sum %g : tensor<8x4xf32>
    // becomes (hierarchical)
    %s = braid.reduce_scatter sum %g dim = 0 groups [[0, 1], [2, 3]] : tensor<8x4xf32> -> tensor<4x4xf32>
    %a = braid.all_reduce sum %s groups [[0, 2], [1, 3]] : tensor<4x4xf32>
    %r = braid.all_gather %a dim = 0 groups [[0, 1], [2, 3]] : tensor<4x4xf32> -> tensor<8x4xf32>
    ```

    Each all_reduce takes the form the simulator predicts fastest for the
    whole per-rank program on the module's `braid.cluster`, or stays as it
    is; `force` takes the hierarchical form where it applies and the flat
    one elsewhere. A sum is reassociated (the ranks' values are added in
    another order), so results agree with the all_reduce's to rounding;
    max and min are exact.
  }];
  let options = [
    Option<"force", "force", "bool", "false",
           "Decompose without asking the simulator (for tests)">,
  ];
  let statistics = [
    Statistic<"numFlat", "flat", "all_reduces split into reduce_scatter "
                                 "and all_gather">,
    Statistic<"numHierarchical", "hierarchical",
              "all_reduces split hierarchically across nodes">,
    Statistic<"numRejected", "rejected-by-simulator",
              "all_reduces the simulator predicted no faster decomposed">,
  ];
  let dependentDialects = ["::mlir::braid::BraidDialect"];
}

def BraidOverlapPass : Pass<"braid-overlap", "::mlir::ModuleOp"> {
  let summary = "starts collectives as soon as their input is ready and "
                "waits at first use, where the simulator predicts a gain";
  let description = [{
    For each synchronous `braid.all_reduce`, `braid.reduce_scatter`,
    `braid.all_gather` and `braid.all_to_all` of a per-rank program, in
    program order: moves it
    up to just after its input is computed, replaces it with its `_start`
    form there and a `braid.wait` just before the first use of its result.
    The computation in between (the rest of the backward, for a gradient
    bucket; later lookups and the bottom MLP, for a forward exchange) then
    runs beside the communication.

    Each collective is rewritten only when the simulator predicts the whole
    per-rank program faster with it (contention included: a kernel beside
    a collective is slowed by the cost model's dilation), or with `force`.
    Every rank runs the same program, so the ranks still enter the same
    collectives in the same order; only the completion moves later, and
    the values are unchanged (lit tests run programs before and after it
    through the reference semantics).

    ```mlir
    %g = braid.linear_grad ...
    ... // more of the backward
    %r = braid.all_reduce sum %g : tensor<448xf32>
    %u = braid.dense_update %p, %r ...
    // becomes
    %g = braid.linear_grad ...
    %t = braid.all_reduce_start sum %g : tensor<448xf32> -> !braid.token<tensor<448xf32>>
    ... // more of the backward, beside the all_reduce
    %r = braid.wait %t : tensor<448xf32>
    %u = braid.dense_update %p, %r ...
    ```
  }];
  let options = [
    Option<"force", "force", "bool", "false",
           "Start every collective without asking the simulator (for tests)">,
  ];
  let statistics = [
    Statistic<"numStarted", "collectives-started",
              "Collectives started early and waited for at first use">,
    Statistic<"numRejected", "rejected-by-simulator",
              "Collectives the simulator predicted no faster started early">,
  ];
  let dependentDialects = ["::mlir::braid::BraidDialect"];
}

#endif // BRAID_COOPT_PASSES_TD
