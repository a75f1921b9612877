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
  let summary = "combines all_reduces, reduce_scatters and all_gathers of "
                "one group into size-capped buckets, and fuses pooled-row "
                "all_to_alls";
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

    Reduce_scatters and all_gathers along dimension 0 of one kind,
    reduction, groups and element type are bucketed the same way (those
    of `braid-reorder-collectives`' sharded optimizer steps): for a group
    of G, each member is flattened into a G-row matrix whose row `p` is
    its chunk for group position `p`, and the members are concatenated
    side by side, so that the rows of the bucket are the ranks' chunks.
    A reduce_scatter of the bucket's rows gives each rank its chunk of
    every member (a run of the flat result); an all_gather of the ranks'
    flat chunks gives a G-row matrix whose band of columns is a member's
    whole.

    ```mlir
    %a = braid.reduce_scatter sum %ga dim = 0 : tensor<4x3xf32> -> tensor<2x3xf32>
    %b = braid.reduce_scatter sum %gb dim = 0 : tensor<2xf32> -> tensor<1xf32>
    // becomes (2 ranks)
    %fa = tensor.collapse_shape %ga [[0, 1]] : tensor<4x3xf32> into tensor<12xf32>
    %ma = tensor.expand_shape %fa [[0, 1]] output_shape [2, 6] : tensor<12xf32> into tensor<2x6xf32>
    %mb = tensor.expand_shape %gb [[0, 1]] output_shape [2, 1] : tensor<2xf32> into tensor<2x1xf32>
    %m = tensor.concat dim(1) %ma, %mb : (tensor<2x6xf32>, tensor<2x1xf32>) -> tensor<2x7xf32>
    %r = braid.reduce_scatter sum %m dim = 0 : tensor<2x7xf32> -> tensor<1x7xf32>
    ... // %a is elements [0, 6) of %r, %b element 6
    ```

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

    With `exchanges`, the uniform `braid.all_to_all`s along dimension 0 of
    one element type and replica groups, synchronous or started (a
    `braid.all_to_all_start` whose only user is its `braid.wait`), are
    fused the same way. An exchange is uniform by sender when each rank
    sends every destination the same number of rows (each row of its
    `split_sizes` constant: the pooled rows that a sharded lookup's owners
    send to every rank's bags), and by destination when every rank sends a
    destination the same number of rows (each column constant: the routed
    indices' lengths and the pooled rows' gradients, which every rank sends
    to the owners). Exchanges of one layout share a bucket.

    The fused input is, for each destination in group order, each member's
    rows for it, flattened; what a rank receives from each sender is each
    member's rows from it, which are sliced out, reshaped and concatenated
    back into each member's result. By sender, rank `i` sends `s_i` rows of
    a member to every destination, so the member's run for destination `j`
    starts at `j * dim / G` whatever the rank, and a receiver's offsets are
    static. By destination, a sender's runs are static, and a receiver
    reads its own column of each member's `split_sizes`, selected by its
    position in the group (`braid.rank`, so the groups must tile the world
    in consecutive blocks).

    The ops that only unpack a member's result (`braid.combine_shards`,
    casts, reshapes) and a started member's wait first move down to just
    before their own first use, so the exchanges of consecutive lookups can
    share a bucket. The fused exchange is started after its last member's
    input and waited for before the first read of any member's result.

    ```mlir
    // 2 ranks; rank 0 owns %a's rows, rank 1 %b's (both 2 wide)
    %xa = braid.all_to_all %a split_dim = 0 concat_dim = 0 split_sizes = [1, 1, 0, 0] groups [[0, 1]] : tensor<?x2xf32> -> tensor<1x2xf32>
    %xb = braid.all_to_all %b split_dim = 0 concat_dim = 0 split_sizes = [0, 0, 1, 1] groups [[0, 1]] : tensor<?x2xf32> -> tensor<1x2xf32>
    // becomes (%pa, %pb: each input's rows over 2)
    %a0 = tensor.extract_slice %a[0, 0] [%pa, 2] [1, 1] ... // and flattened
    ... // %b0, then %a1 and %b1 at offsets %pa and %pb
    %cat = tensor.concat dim(0) %fa0, %fb0, %fa1, %fb1 : ... -> tensor<?xf32>
    %t = braid.all_to_all_start %cat split_dim = 0 concat_dim = 0 split_sizes = [2, 2, 2, 2] groups [[0, 1]] : tensor<?xf32> -> !braid.token<tensor<4xf32>>
    %r = braid.wait %t : !braid.token<tensor<4xf32>>
    ... // %xa is elements [0, 2) of %r as 1 x 2, %xb elements [2, 4)
    ```

    Fusing saves a latency per member and costs a pack copy and, above
    all, the members' separate starts: an exchange whose input is ready
    early can no longer run behind the work after it. So the simulator
    compares the fused program with the members each started where its
    input is ready and waited for at its first use (what
    `braid-async-exchanges` and `braid-overlap` make of them), and
    `braid-co-optimize` runs this part after `braid-overlap`
    (`gradients=false`), where the exchanges are already started. Members
    whose results are read before a later member's input is ready stay
    apart; so do exchanges uniform neither way (table-row-wise shards
    across nodes, sent between node pairs).

    An exchange bucket's size is the most that any rank of the group
    receives from it: by sender the members' rows added up, by destination
    each owner's rows from every rank added up per owner, so that members
    sent to different owners (the gradients of tables owned by different
    ranks) fill a bucket by what each owner receives, not by the sum of
    their owners' loads. Unless `bucket-mib` is given, the simulator also
    weighs one bucket per layout, group and chunk against the capped
    buckets and keeps the faster: the training step's pooled gradients are
    all ready at the end of the backward and each brings its owner tens of
    MiB, which a DDP-sized cap would keep apart, one exchange after the
    other, each into one owner.

    Also with `exchanges`, the routed indices' `braid.all_to_all_v`s of one
    element type (synchronous, or started with their waits in the same
    block), each of a `braid.bucketize`'s values, become one
    `braid.fused_all_to_all_v_start` with a token per member: one exchange
    of every member's counts and one of their values, instead of two per
    member (`braid-expand-fused-exchanges` writes it out for the backends).
    It is started once every member's input can be routed: a member's
    bucketize (pure) moves up before the start where its operands are ready
    earlier. A started member's waits stay where they were; a synchronous
    member becomes a wait just before its first reader. Members read before
    the start go into another fused exchange. The simulator compares the
    function with its index exchanges fused against the function as it
    is.
  }];
  let options = [
    Option<"bucketMiB", "bucket-mib", "double", "25.0",
           "The largest bucket in MiB (PyTorch DDP's default bucket_cap_mb); "
           "unless given, exchanges may also fuse into one bucket">,
    Option<"force", "force", "bool", "false",
           "Bucket without asking the simulator (for tests)">,
    Option<"gradients", "gradients", "bool", "true",
           "Bucket the all_reduces, reduce_scatters and all_gathers">,
    Option<"exchanges", "exchanges", "bool", "true",
           "Fuse the uniform all_to_alls (pooled rows), started or not">,
  ];
  let statistics = [
    Statistic<"numBuckets", "buckets", "Buckets of two or more collectives">,
    Statistic<"numCombined", "collectives-combined",
              "Collectives combined into buckets">,
    Statistic<"numRejected", "rejected-by-simulator",
              "Functions whose bucketing the simulator predicted no faster">,
    Statistic<"numExchangeBuckets", "exchange-buckets",
              "Fused exchanges of two or more uniform all_to_alls">,
    Statistic<"numExchangesCombined", "exchanges-combined",
              "Uniform all_to_alls combined into fused exchanges">,
    Statistic<"numExchangesRejected", "exchanges-rejected-by-simulator",
              "Functions whose fused exchanges the simulator predicted no "
              "faster than their members started one by one">,
    Statistic<"numIndexExchangeBuckets", "index-exchange-buckets",
              "Fused exchanges of two or more routed indices' all_to_all_vs">,
    Statistic<"numIndexExchangesCombined", "index-exchanges-combined",
              "all_to_all_vs combined into fused exchanges">,
    Statistic<"numIndexExchangesRejected",
              "index-exchanges-rejected-by-simulator",
              "Functions whose fused index exchanges the simulator predicted "
              "no faster">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::braid::BraidDialect",
                           "::mlir::tensor::TensorDialect"];
}

def BraidReorderCollectivesPass
    : Pass<"braid-reorder-collectives", "::mlir::ModuleOp"> {
  let summary = "runs dense optimizer steps on shards between a "
                "reduce_scatter and an all_gather, and moves slices of a "
                "rank's rows across collectives, where the simulator "
                "predicts a gain";
  let description = [{
    For each `braid.dense_update` of a training step whose gradient is a
    sum (or average) `braid.all_reduce` that nothing else reads, splits the
    all_reduce and moves the optimizer step between its halves (CoCoNet's
    split and reorder; the first stage of ZeRO): the gradient is
    reduce-scattered along dimension 0, each rank updates its own rows of
    the parameter with its rows of the optimizer state, and an
    `all_gather` of the updated rows rebuilds the parameter on every rank.
    The optimizer's arithmetic and its state shrink to `1/group` per rank,
    for the same bytes on the wire as the all_reduce (a ring all_reduce is
    a reduce_scatter and an all_gather).

    The optimizer state then stays sharded between steps: its argument and
    result of the training step hold this rank's rows and carry
    `braid.state_shard` with the groups whose members hold the slices in
    group order; `braid-run` and the reference semantics assemble the
    whole state from the slices. This rank's rows of the parameter are a
    `tensor.extract_slice` at `(braid.rank mod group) * rows`.

    ```mlir
    %g = braid.all_reduce sum %dw groups [[0, 1]] : tensor<32x13xf32>
    %w2, %s2 = braid.dense_update %w, %g step %t state(%s) optimizer = {...}
        : (tensor<32x13xf32>, tensor<32x13xf32>, tensor<i64>, tensor<32x13xf32>)
          -> (tensor<32x13xf32>, tensor<32x13xf32>)
    // becomes (%s is now tensor<16x13xf32> {braid.state_shard = ...})
    %g = braid.reduce_scatter sum %dw dim = 0 groups [[0, 1]] : tensor<32x13xf32> -> tensor<16x13xf32>
    %r = braid.rank : index
    %p = arith.remui %r, %c2 : index
    %o = arith.muli %p, %c16 : index
    %ws = tensor.extract_slice %w[%o, 0] [16, 13] [1, 1] : tensor<32x13xf32> to tensor<16x13xf32>
    %u, %s2 = braid.dense_update %ws, %g step %t state(%s) optimizer = {...}
        : (tensor<16x13xf32>, tensor<16x13xf32>, tensor<i64>, tensor<16x13xf32>)
          -> (tensor<16x13xf32>, tensor<16x13xf32>)
    %w2 = braid.all_gather %u dim = 0 groups [[0, 1]] : tensor<16x13xf32> -> tensor<32x13xf32>
    ```

    A step is sharded when its all_reduce runs over every rank or over
    blocks of consecutive ranks that tile the cluster, the group divides
    the parameter's first dimension, its state is only this step's and its
    new state is only returned. Each is rewritten only when the simulator
    predicts the whole per-rank program faster on the module's
    `braid.cluster`, or with `force`. The optimizers are elementwise, so
    each row's update is the one the whole step computes (a sum is
    reassociated by the reduce_scatter, as by a ring all_reduce).

    Before the steps it moves slices of a rank's rows (offsets
    `braid.rank * rows` or `(braid.rank mod n) * rows` along dimension 0,
    the whole of every other dimension) across the collective they follow,
    as `braid-partition` leaves them around tensor-parallel layers and
    `braid-differentiate` in their gradients:
    - the rows of a sum `all_reduce` are a `reduce_scatter` along
      dimension 0 (half the bytes on the wire of a ring all_reduce);
    - the rows of an `all_gather` along dimension 0 are its input (no
      communication);
    - a sum `all_reduce` of a rank's rows inserted among zeros is an
      `all_gather` of the rows.

    ```mlir
    %s = braid.all_reduce sum %partial : tensor<64x16xf32>
    %r = braid.rank : index
    %o = arith.muli %r, %c16 : index
    %mine = tensor.extract_slice %s[%o, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
    // becomes
    %mine = braid.reduce_scatter sum %partial dim = 0 : tensor<64x16xf32> -> tensor<16x16xf32>
    ```

    The collective's groups must be the whole world for `braid.rank`, or
    the blocks of n consecutive ranks for `braid.rank mod n`.
  }];
  let options = [
    Option<"force", "force", "bool", "false",
           "Shard every step that can be, without asking the simulator (for "
           "tests)">,
  ];
  let statistics = [
    Statistic<"numSharded", "steps-sharded",
              "Dense optimizer steps run on shards">,
    Statistic<"numRowsMoved", "rank-rows-moved",
              "Slices of a rank's rows moved across a collective">,
    Statistic<"numRejected", "rejected-by-simulator",
              "Steps the simulator predicted no faster on shards">,
  ];
  let dependentDialects = ["::mlir::braid::BraidDialect",
                           "::mlir::arith::ArithDialect",
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

    The ops that only carry the result to the function's results (an
    optimizer step, a table update) move to the end of the block. With
    `keep-readers`, each collective is also tried with them left where they
    are, and the simulator keeps the fastest of the variants.
    `braid-co-optimize` runs the pass a second time with it, last, over the
    collectives still synchronous: there a lookup's lengths exchange can
    start at the top of the step while its table's update stays among the
    gradient exchanges it hides.
  }];
  let options = [
    Option<"force", "force", "bool", "false",
           "Start every collective without asking the simulator (for tests)">,
    Option<"keepReaders", "keep-readers", "bool", "false",
           "Also try each start with the readers that only feed the "
           "function's results left in place">,
  ];
  let statistics = [
    Statistic<"numStarted", "collectives-started",
              "Collectives started early and waited for at first use">,
    Statistic<"numRejected", "rejected-by-simulator",
              "Collectives the simulator predicted no faster started early">,
  ];
  let dependentDialects = ["::mlir::braid::BraidDialect"];
}

def BraidChunkLookupsPass
    : Pass<"braid-chunk-lookups", "::mlir::ModuleOp"> {
  let summary = "pipelines sharded lookups, their exchanges and the dense "
                "work after them over chunks of the bags, in a forward pass "
                "or a training step's forward part, where the simulator "
                "predicts a gain";
  let description = [{
    Finds, in each function of a per-rank program, the sharded lookups
    (`braid.bucketize` of a table's bags, the index exchanges,
    `braid.shard_embedding_bag`, the pooled rows' `all_to_all` or
    `reduce_scatter`, synchronous or started) and the row-wise work their
    `braid.combine_shards` feed up to the function's results (the
    interaction, dense layers on their input, elementwise float
    arithmetic). It splits both into k chunks of every rank's bags. Chunk j takes bags
    [j * b/k, (j + 1) * b/k) of each table (`braid.slice_bags`, b the bags
    per rank), routes, exchanges and looks them up with b/k bags per rank,
    and runs the combines, the interaction and the top MLP on its rows
    (`tensor.extract_slice` of the batch-shaped values from outside, such
    as the bottom MLP's output); whatever else reads the back's rows (the
    results, a training step's loss and backward) reads a `tensor.concat`
    of the chunks' rows. Each run of consecutive front ops (routing to the pooled
    rows' start) and of back ops (the pooled rows' wait onwards) is
    emitted chunk after chunk where it stood, so chunk j + 1's lookups and
    exchanges run beside chunk j's dense work. Each chunk's `all_to_all`s
    carry `braid.chunk = j`, so that `braid-bucket-collectives` fuses a
    chunk's exchanges only with each other.

    Bags are independent and every rank takes the same ranges of its own
    bags, so chunk j's exchanges carry exactly chunk j's rows and the
    concatenation is the unchunked result. The simulator chooses k among
    2, 4 and 8 (dividing the bags per rank) or no chunking, for the whole
    per-rank program; `force` takes 2.

    In a training step, the backward reads each table's routed bags in its
    `braid.shard_embedding_bag_update`. The ops that bring the update its
    pooled gradient rows (a `braid.combine_shards_grad` of the batch's
    rows, the `all_to_all` or `all_gather` that sends them to the shards,
    and for a row-wise `max` table the comparison of the shard's partials
    with the gathered maxima and the select against zeros) are then cloned
    per chunk on chunk j's rows, offsets and partials, and the update reads
    every chunk's routed indices, lengths and gradient rows concatenated:
    the same bags in another order, which updates the table as the
    unchunked step does. A function whose front values something else
    reads outside the region stays whole.

    ```mlir
    %len, %vals, %counts = braid.bucketize @t(%idx, %off) to [0] bags_per_rank = 4 ...
    ... // index exchanges, the shard's lookup
    %tok = braid.all_to_all_start %pooled split_dim = 0 concat_dim = 0 split_sizes = [4, 4, 0, 0] ...
    %recv = braid.wait %tok : !braid.token<tensor<4x16xf32>>
    %e = braid.combine_shards @t(%recv, %off) sum bags_per_rank = 4 ...
    %y = braid.interaction dot %dense, %e ...
    // becomes, with 2 chunks
    %idx0, %off0 = braid.slice_bags %idx, %off bags [0, 2] ...
    %len0, %vals0, %counts0 = braid.bucketize @t(%idx0, %off0) to [0] bags_per_rank = 2 ...
    %tok0 = braid.all_to_all_start %pooled0 ... split_sizes = [2, 2, 0, 0] {braid.chunk = 0 : i64} ...
    %idx1, %off1 = braid.slice_bags %idx, %off bags [2, 2] ...
    ... // chunk 1's routing and lookup, beside chunk 0's exchange
    %recv0 = braid.wait %tok0 : !braid.token<tensor<2x16xf32>>
    %e0 = braid.combine_shards @t(%recv0, %off0) sum bags_per_rank = 2 ...
    %d0 = tensor.extract_slice %dense[%first0, 0] [%rows0, 16] [1, 1] ...
    %y0 = braid.interaction dot %d0, %e0 ...  // beside chunk 1's exchange
    ... // chunk 1's back
    %y = tensor.concat dim(0) %y0, %y1 ...
    ```
  }];
  let options = [
    Option<"force", "force", "bool", "false",
           "Split every forward pass into 2 chunks without asking the "
           "simulator (for tests)">,
  ];
  let statistics = [
    Statistic<"numChunked", "functions-chunked",
              "Functions whose lookups were pipelined in chunks">,
    Statistic<"numRejected", "rejected-by-simulator",
              "Functions the simulator predicted no faster in chunks">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::braid::BraidDialect",
                           "::mlir::tensor::TensorDialect"];
}

def BraidChunkPipelinePass
    : Pass<"braid-chunk-pipeline", "::mlir::ModuleOp"> {
  let summary = "splits a gathered batch's row-wise work into chunks whose "
                "collectives run beside the other chunks' computation, where "
                "the simulator predicts a gain";
  let description = [{
    Finds regions of row-wise work (`braid.linear` on its input, elementwise
    float arithmetic) that start at `all_gather`s of the batch along
    dimension 0 over all ranks and end in one `reduce_scatter` along
    dimension 0 back to the ranks' rows, or in an `all_reduce` over all
    ranks read only by a `tensor.extract_slice` of the rank's rows
    [rank * b, +b), whose values nothing outside the region reads: a
    tensor-parallel block's forward pass (`docs/partitioning.md`). An
    all_reduce-ended region's chunks each start an `all_reduce` and keep
    rows [rank * b/k, +b/k) of it. Each is split into k chunks of every rank's
    rows: chunk j gathers rows [j * b/k, +b/k) of every rank, runs the
    region on them, and reduce-scatters its partial sums; its all_gather
    starts where the whole one started and is waited for just before the
    chunk, its reduce_scatter starts right after the chunk and is waited
    for where the result is first read, and a `tensor.concat` puts the
    chunks' rows back together. Chunk j's computation then runs beside
    chunk j + 1's all_gather and chunk j - 1's reduce_scatter.

    Gathering chunk j of every rank's rows orders the batch differently;
    each op of the region treats rows independently and the
    reduce_scatter gives each rank its own rows back, so the values are
    the same. The simulator chooses k among 2, 4 and 8 (dividing the
    rows) or no chunking, for the whole per-rank program; `force` takes 2.
    A training step's forward reads the gathered batch in the backward too,
    so it is left whole.

    ```mlir
    %xa = braid.all_gather %x dim = 0 : tensor<512x2048xf32> -> tensor<4096x2048xf32>
    %h = braid.linear %xa, %w1, %b1 relu : ... -> tensor<4096x1024xf32>
    %p = braid.linear %h, %w2, %b2 none : ... -> tensor<4096x2048xf32>
    %y = braid.reduce_scatter sum %p dim = 0 : tensor<4096x2048xf32> -> tensor<512x2048xf32>
    // becomes, with 2 chunks
    %x0 = tensor.extract_slice %x[0, 0] [256, 2048] [1, 1]
    %t0 = braid.all_gather_start %x0 dim = 0 : tensor<256x2048xf32> -> !braid.token<tensor<2048x2048xf32>>
    %x1 = tensor.extract_slice %x[256, 0] [256, 2048] [1, 1]
    %t1 = braid.all_gather_start %x1 dim = 0 : tensor<256x2048xf32> -> !braid.token<tensor<2048x2048xf32>>
    %a0 = braid.wait %t0 ...
    ... // chunk 0's layers, beside %t1
    %s0 = braid.reduce_scatter_start sum %p0 dim = 0 ...
    %a1 = braid.wait %t1 ...
    ... // chunk 1's layers, beside %s0
    %s1 = braid.reduce_scatter_start sum %p1 dim = 0 ...
    %y0 = braid.wait %s0 ...
    %y1 = braid.wait %s1 ...
    %y = tensor.concat dim(0) %y0, %y1 : (tensor<256x2048xf32>, tensor<256x2048xf32>) -> tensor<512x2048xf32>
    ```
  }];
  let options = [
    Option<"force", "force", "bool", "false",
           "Split every region into 2 chunks without asking the simulator "
           "(for tests)">,
  ];
  let statistics = [
    Statistic<"numChunked", "regions-chunked",
              "Regions split into chunks">,
    Statistic<"numRejected", "rejected-by-simulator",
              "Regions the simulator predicted no faster in chunks">,
  ];
  let dependentDialects = ["::mlir::braid::BraidDialect",
                           "::mlir::tensor::TensorDialect"];
}

def BraidFillWaitsPass : Pass<"braid-fill-waits", "::mlir::ModuleOp"> {
  let summary = "runs the computation that needs no pending collective "
                "before the collective's wait, where the simulator predicts a "
                "gain";
  let description = [{
    For each `braid.wait` of a per-rank function, the ops after it, up to
    the next op that issues communication (a collective, an exchange or a
    start), that read nothing the wait or a later wait gives are moved
    above the wait, in their order: the compute stream then runs them while
    the collective is in flight instead of idling at the wait. An op moves
    only when it writes no memory, holds no region and is no collective,
    start or wait, when every operand is defined above the wait or by an op
    that moves, and, for a lookup, when no op it passes writes its table's
    rows. No collective is issued later than before, and the values are
    the same. A wait whose movable ops are all ones the simulator prices at
    nothing (scalar or index arithmetic, views of a tensor) is left as it
    is. Each wait's move, alone or with every later wait's, is kept where
    the simulator predicts the whole per-rank function faster (`force`:
    every one). A third alternative, weighed by the simulator only, moves
    above a wait the movable work from past the communication after it
    too: those collectives then start after more work, and the rank runs
    it while the wait's collective is in flight (MLPerf DCNv2's forward pass
    on 2 DGX-H100 nodes: its data-parallel lookups after the pooled rows'
    exchange start run while the routed indices are in theirs).

    ```mlir
    %i = braid.wait %t : !braid.token<tensor<?xi64>>      // routed indices
    %a = braid.shard_embedding_bag @c1(%i, %off) sum ...
    %b = braid.embedding_bag @c2(%idx2, %off2) sum ...     // local table
    // becomes
    %b = braid.embedding_bag @c2(%idx2, %off2) sum ...     // beside %t
    %i = braid.wait %t : !braid.token<tensor<?xi64>>
    %a = braid.shard_embedding_bag @c1(%i, %off) sum ...
    ```
  }];
  let options = [
    Option<"force", "force", "bool", "false",
           "Move the work above every wait without asking the simulator "
           "(for tests)">,
  ];
  let statistics = [
    Statistic<"numFilled", "waits-filled",
              "Waits with work moved above them">,
    Statistic<"numRejected", "rejected-by-simulator",
              "Waits the simulator predicted no faster with work above them">,
  ];
  let dependentDialects = ["::mlir::braid::BraidDialect"];
}

def BraidFuseCollectiveComputePass
    : Pass<"braid-fuse-collective-compute", "::mlir::ModuleOp"> {
  let summary = "lets the interaction read pooled rows straight out of the "
                "exchange's receive buffer";
  let description = [{
    The first form of fusing collectives with the compute around them. A
    sharded lookup's pooled rows arrive in the receive buffer of its
    exchange (`all_to_all` or `reduce_scatter`), `bags_per_rank` rows per
    part, and `braid.combine_shards` assembles the rank's rows from there.
    Where that assembly is a copy (one part, `sum` pooling, the result in
    the received element type: a table-wise, row-wise or table-row-wise
    table of f32 rows), the copy goes: the consumers (the interaction) read
    the receive buffer itself, through a `tensor.extract_slice` of its
    first B rows (B the local bags, from the offsets) that bufferizes to a
    view of the buffer, not a kernel.

    ```mlir
    %e = braid.combine_shards @t(%recv, %off) sum bags_per_rank = 4
        : (tensor<4x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    // becomes
    %b = arith.subi (tensor.dim %off, 0), 1
    %e = tensor.extract_slice %recv[0, 0] [%b, 16] [1, 1]
        : tensor<4x16xf32> to tensor<?x16xf32>
    ```

    `mean` (a division by the bag size), `max` (an empty bag's -inf
    becomes 0), column-wise parts (concatenated side by side) and f16 rows
    pooled in f32 are real work and stay. Each rewrite lands only where the
    simulator predicts the function faster (the combine's kernel is gone),
    or with `force`. The pooled rows themselves are already written in the
    exchange's send layout: a shard's lookup writes its bags in rank-slot
    order, which is the layout each peer's block is sent from.

    The routed indices' fused exchange (`braid.fused_all_to_all_v_start`,
    from `braid-bucket-collectives`) packs every member's values by
    destination and unpacks them by member. Where every member's values are
    a `braid.bucketize`'s routed row indices (i64) of a table of fewer than
    2^31 rows, the pass fuses a narrowing into the pack and a widening into
    the unpack: the exchange gets `wire_type = i32` and moves half the
    bytes. `braid.bucketize` has already checked every index against its
    table, so every routed index fits, and each member receives the same
    values.

    A gradient bucket's optimizer: the `braid.dense_update`s that read one
    bucket's reduced buffer (the result of its `all_reduce` or `wait`)
    through static slices, with one optimizer and step number, become one
    `braid.fused_dense_update` at the first of them (up to 16 parameters
    each). It reads every gradient where the collective put it and runs as
    one kernel: on a GPU, one launch per bucket instead of one per
    parameter.

    ```mlir
    %g = braid.wait %t : !braid.token<tensor<73xf32>>
    %gw = tensor.expand_shape (tensor.extract_slice %g[0] [64] [1]) ...
    %w2, %sw2 = braid.dense_update %w, %gw step %s state(%sw) ...
    %b2, %sb2 = braid.dense_update %b, (tensor.extract_slice %g[64] [8] [1]) ...
    // becomes
    %p:2, %st:2 = braid.fused_dense_update(%w, %b) grads %g offsets = [0, 64]
        step %s state(%sw, %sb) ...
    ```
  }];
  let options = [
    Option<"force", "force", "bool", "false",
           "Fuse every combine that is a copy, narrow every index exchange "
           "that can be, and fuse every bucket's optimizer steps, without "
           "asking the simulator (for tests)">,
  ];
  let statistics = [
    Statistic<"numFused", "combines-fused",
              "combine_shards copies replaced by views of the receive buffer">,
    Statistic<"numOptimizerBuckets", "optimizer-buckets-fused",
              "Gradient buckets whose optimizer steps became one kernel">,
    Statistic<"numNarrowed", "index-exchanges-narrowed",
              "Fused index exchanges whose values move as i32">,
    Statistic<"numRejected", "rejected-by-simulator",
              "Rewrites the simulator predicted no faster">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::braid::BraidDialect",
                           "::mlir::tensor::TensorDialect"];
}

def BraidSplitFeatureGemmPass
    : Pass<"braid-split-feature-gemm", "::mlir::ModuleOp"> {
  let summary = "runs a dense layer's GEMM over the features already "
                "computed beside the exchange of the others";
  let description = [{
    A dense layer over a `cat` interaction (the DCN's first projection,
    a top MLP's first layer) multiplies each feature's columns by its
    columns of the weight, and sums. The features computed on the rank (the
    bottom MLP's output, data-parallel tables' lookups) are there long
    before the pooled rows of sharded tables arrive in their exchange, and
    the layer waits for all of them. Where the layer is data-parallel and
    has no activation, the pass splits it: a `braid.linear` over the early
    features side by side and their columns of the weight (no bias), placed
    right after the last of them is computed, and one over the rest with
    the bias where the layer was; `arith.addf` sums the two. The early GEMM
    then runs while the exchange is in flight.

    ```mlir
    %x = braid.interaction cat %dense, %dp, %sharded : ... -> tensor<?x384xf32>
    %y = braid.linear %x, %w, %b none : ...
    // becomes
    %xe = tensor.concat dim(1) %dense, %dp : ... -> tensor<?x256xf32>
    %we = tensor.concat dim(1) (columns 0-255 of %w) : ... -> tensor<64x256xf32>
    %ye = braid.linear %xe, %we, %zeros none : ...        // before the wait
    ...
    %wl = tensor.extract_slice %w[0, 256] [64, 128] [1, 1] : ...
    %yl = braid.linear %sharded, %wl, %b none : ...
    %y = arith.addf %ye, %yl : tensor<?x64xf32>
    ```

    The sum is the layer's output up to the order of its additions (f32
    partial sums added once more). A feature is late when it is computed
    from a `braid.wait`'s result. The rewrite lands where the simulator
    predicts the function faster (the split costs the features' and the
    weight columns' copies, a second GEMM launch and the sum), or with
    `force`.
  }];
  let options = [
    Option<"force", "force", "bool", "false",
           "Split every layer that can be without asking the simulator "
           "(for tests)">,
  ];
  let statistics = [
    Statistic<"numSplit", "layers-split",
              "Dense layers split by their features' arrival">,
    Statistic<"numRejected", "rejected-by-simulator",
              "Splits the simulator predicted no faster">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::braid::BraidDialect",
                           "::mlir::tensor::TensorDialect"];
}

def BraidDeferWeightGradientsPass
    : Pass<"braid-defer-weight-gradients", "::mlir::ModuleOp"> {
  let summary = "computes dense layers' weight gradients behind the "
                "pooled gradients' exchanges";
  let description = [{
    In a training step the backward's chain of input gradients runs from
    the loss through the top MLP and the interaction to the pooled rows'
    gradients, whose exchanges to the tables' owners can start only at
    its end. Each `braid.linear_grad` on that chain also computes its
    weight and bias gradients, which only the optimizer reads, and the
    exchanges wait for those GEMMs too. This pass splits such a layer's
    gradient in two copies of the op: the one that stays computes the
    input gradient (`braid.grad_part = "input"`), and the other, placed
    after the last started collective of pooled gradients that the input
    gradient leads to (an `all_to_all` to the tables' owners, or a
    row-wise table's `all_gather`, of a `combine_shards_grad`'s rows),
    computes the weight and bias gradients (`braid.grad_part =
    "params"`). The ops that read the weight part's results and stood
    before its new place (the gradient bucket's packing, its all_reduce
    start) move after it, in their order. The exchanges then run while
    the weight gradients' GEMMs compute: the split of the backward into
    its input and weight halves that zero-bubble pipeline schedules make.

    ```mlir
    %dx, %dw, %db = braid.linear_grad %x, %w, %y, %dy relu : ...
    ... // %dx -> interaction_grad -> combine_shards_grad -> %g
    %t = braid.all_to_all_start %g ...
    // becomes
    %dx, %0, %1 = braid.linear_grad %x, %w, %y, %dy relu {braid.grad_part = "input"} : ...
    ...
    %t = braid.all_to_all_start %g ...
    %2, %dw, %db = braid.linear_grad %x, %w, %y, %dy relu {braid.grad_part = "params"} : ...
    ```

    Each copy's GEMM reads the same operands as before, so the results are
    bit for bit the same; the backends and the simulator compute only the
    part whose results are read. The rewrite lands on a function where the
    simulator predicts it faster (the weight gradients' all_reduces start
    later, which can cost more than the exchanges gain), or with `force`.
    `braid-co-optimize` runs it after the exchanges are started and fused.
  }];
  let options = [
    Option<"force", "force", "bool", "false",
           "Defer without asking the simulator (for tests)">,
  ];
  let statistics = [
    Statistic<"numDeferred", "weight-gradients-deferred",
              "linear_grads split, their weight part behind an exchange">,
    Statistic<"numRejected", "rejected-by-simulator",
              "Functions the simulator predicted no faster deferred">,
  ];
  let dependentDialects = ["::mlir::braid::BraidDialect"];
}

def BraidStoreParameterBlocksPass
    : Pass<"braid-store-parameter-blocks", "::mlir::ModuleOp"> {
  let summary = "stores a tensor-parallel parameter as this rank's block "
                "and drops its gradient's all_reduce";
  let description = [{
    braid-partition lays a tensor-parallel layer out with its whole weight
    on every rank and reads this rank's block with a
    `tensor.extract_slice` at `braid.rank * block`; its training step sets
    the block's gradient among zeros and all-reduces the whole weight's
    gradient over every rank. Where every function of the module reads a
    parameter only that way, this pass stores the block alone: the
    argument (and the training step's updated parameter) takes the
    block's type and `braid.param_shard` (the ranks, in block order) with
    `braid.shard_dim`, the slices go, and the optimizer step updates the
    block from the block's gradient. No other rank writes this rank's
    block, so the all_reduce summed zeros into it: it goes, with the
    zeros. Optimizer state read only by that step becomes blocks too
    (`braid.state_shard`, `braid.shard_dim`).

    ```mlir
    %w = tensor.extract_slice %arg1[%r1024, 0] [1024, 2048] [1, 1]
        : tensor<8192x2048xf32> to tensor<1024x2048xf32>
    ...
    %z = tensor.insert_slice %gw into %zeros[%r1024, 0] [1024, 2048] [1, 1]
    %g = braid.all_reduce sum %z : tensor<8192x2048xf32>
    %new = braid.dense_update %arg1, %g step %s ...
    // becomes (%arg1 : tensor<1024x2048xf32> {braid.param_shard = ..., braid.shard_dim = 0})
    %new = braid.dense_update %arg1, %gw step %s ...
    ```

    The rewrite lands where the simulator predicts the module's functions
    no slower with it (the blocks always take less memory: a forward pass,
    whose slices cost nothing, gains only that), or with `force`.
  }];
  let options = [
    Option<"force", "force", "bool", "false",
           "Store every parameter that qualifies as blocks without asking "
           "the simulator (for tests)">,
  ];
  let statistics = [
    Statistic<"numStored", "params-stored-as-blocks",
              "Parameters stored as this rank's block">,
    Statistic<"numAllReducesRemoved", "gradient-all-reduces-removed",
              "Gradient all_reduces that summed blocks among zeros, removed">,
    Statistic<"numRejected", "rejected-by-simulator",
              "Modules whose blocks the simulator predicted slower">,
  ];
  let dependentDialects = ["::mlir::braid::BraidDialect",
                           "::mlir::tensor::TensorDialect"];
}

def BraidExchangePrecisionPass
    : Pass<"braid-exchange-precision", "::mlir::ModuleOp"> {
  let summary = "moves pooled rows and their gradients in 16 bits, asked for";
  let description = [{
    An `all_to_all` (blocking or started) of f32 values is a sharded
    lookup's pooled rows, or in a training step their gradients. This pass
    moves them as `bf16` or `f16` (`precision`): the values are rounded to
    the wire type before the exchange (`arith.truncf`) and widened back
    after it (`arith.extf`, after each wait of a started one), so every
    other op keeps its f32 types and the exchange moves half the bytes.

    ```mlir
    %t = braid.all_to_all_start %x split_dim = 0 concat_dim = 0 ...
        : tensor<?x16xf32> -> !braid.token<tensor<8x16xf32>>
    %r = braid.wait %t : !braid.token<tensor<8x16xf32>>
    // becomes
    %h = arith.truncf %x : tensor<?x16xf32> to tensor<?x16xbf16>
    %t = braid.all_to_all_start %h split_dim = 0 concat_dim = 0 ...
        : tensor<?x16xbf16> -> !braid.token<tensor<8x16xbf16>>
    %w = braid.wait %t : !braid.token<tensor<8x16xbf16>>
    %r = arith.extf %w : tensor<8x16xbf16> to tensor<8x16xf32>
    ```

    The rewrite changes the values, as TorchRec's quantized
    communications (`QCommsConfig`'s forward and backward precision) do:
    each exchanged value is rounded to nearest even in the wire type
    (bf16 keeps f32's range and 8 significant bits, f16 11 bits and a
    range up to 65504). It runs only when asked for
    (`braid-compile --exchange-precision`), and each exchange is rewritten
    only where the simulator predicts the function faster (the rounding
    and the widening are kernels of their own), or with `force`. The
    all_reduces of gradients keep f32: their sums would round too.
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"bf16\"",
           "The wire type: bf16 or f16">,
    Option<"force", "force", "bool", "false",
           "Rewrite every f32 all_to_all without asking the simulator">,
  ];
  let statistics = [
    Statistic<"numNarrowed", "exchanges-narrowed",
              "all_to_alls moved in 16 bits">,
    Statistic<"numRejected", "rejected-by-simulator",
              "all_to_alls the simulator predicted no faster in 16 bits">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::braid::BraidDialect"];
}

def BraidPipelineInputDistPass
    : Pass<"braid-pipeline-input-dist", "::mlir::ModuleOp"> {
  let summary = "adds the pipelined form of each per-rank function: the next "
                "batch's input distribution runs inside this step, where the "
                "simulator predicts a gain";
  let description = [{
    A function's input distribution is the work that depends on its batch
    inputs (`braid.input` arguments) alone and feeds a started exchange: the
    routing of a sharded table's indices (`braid.bucketize`), their
    exchanges (starts and waits), and the index arithmetic between. It
    reads no parameter, so it may run a step early, as TorchRec's
    `TrainPipelineSparseDist` runs batch i + 1's input distribution during
    batch i's forward and backward. For each function `@f` with one, the
    pass adds two functions and leaves `@f` as it is:

    - `@f_input_dist`: the input distribution alone, from the inputs it
      reads (`braid.input`) to the values the rest of `@f` reads
      (`braid.carried` results).
    - `@f_pipelined` (`braid.pipelined_of = @f`, `braid.input_dist =
      @f_input_dist`): `@f`'s arguments, then the next batch's inputs the
      input distribution reads (`braid.next_input`), then this batch's
      carried values (`braid.carried`); it returns `@f`'s results, then the
      next batch's carried values. Its body is `@f`'s with the input
      distribution replaced by the carried arguments (scalar work such as
      index arithmetic on `braid.rank` stays and is recomputed), plus the
      next batch's input distribution: its starts where the simulator
      predicts the function fastest (at the top, or after one of the
      waits), its waits before the return.

    A driver calls `@f_input_dist` on the first batch, then `@f_pipelined`
    once per batch with the next batch's inputs, feeding each call's
    carried results to the next call. The values are the same as `@f`'s on
    every batch. A bad index of the next batch is reported one step
    earlier than `@f` would (its routing checks it).

    ```mlir
    func.func @forward(%idx: tensor<?xi64> {braid.input = "c1.indices"}, ...) {
      %lengths, %values, %counts = braid.bucketize @c1(%idx, %off) ...
      %t = braid.all_to_all_v_start %values counts %counts ...
      %dense = braid.linear %x, %w, %b relu ...      // bottom MLP beside %t
      %routed = braid.wait %t ...                      // exposed: little to do
      %rows = braid.shard_embedding_bag @c1(%routed, ...) ...
    // adds
    func.func @forward_pipelined(%idx: ..., %next_idx: tensor<?xi64>
        {braid.next_input = "c1.indices"}, %routed: tensor<?xi64>
        {braid.carried = "carried.0"}) -> (..., tensor<?xi64>
        {braid.carried = "carried.0"}) attributes {braid.pipelined_of = @forward, ...} {
      %l2, %v2, %c2 = braid.bucketize @c1(%next_idx, %next_off) ...
      %t2 = braid.all_to_all_v_start %v2 counts %c2 ... // the next batch's
      %dense = braid.linear %x, %w, %b relu ...
      %rows = braid.shard_embedding_bag @c1(%routed, ...) ...
      ...
      %routed2 = braid.wait %t2 ...
      return ..., %routed2
    ```

    The pipelined form is added where the simulator predicts it at least
    0.1% faster than `@f` (`force`: wherever a function has an input
    distribution): a second entry point, and a driver that carries values
    between calls, are not worth the simulator's rounding. It
    changes how a driver calls the function, so braid-compile adds it only
    when asked (`--pipeline-input-dist`); braid-run runs it with
    `--pipelined` and braid-sim simulates it with `--function
    f_pipelined`.
  }];
  let options = [
    Option<"force", "force", "bool", "false",
           "Add the pipelined form of every function with an input "
           "distribution without asking the simulator (for tests)">,
  ];
  let statistics = [
    Statistic<"numPipelined", "functions-pipelined",
              "Functions given a pipelined form">,
    Statistic<"numRejected", "rejected-by-simulator",
              "Functions whose pipelined form the simulator predicted no "
              "faster">,
  ];
  let dependentDialects = ["::mlir::braid::BraidDialect"];
}

#endif // BRAID_COOPT_PASSES_TD
