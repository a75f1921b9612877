//===- Passes.td - Braid passes ----------------------------*- tablegen -*-===//
//
// This file declares Braid's passes. The reference (docs/reference/
// BraidPasses.md) is generated from these descriptions.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_TRANSFORMS_PASSES_TD
#define BRAID_TRANSFORMS_PASSES_TD

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
    type. The result is deterministic.

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
           "greedy:dim_pooling_logrows">,
    Option<"forceSharding", "force-sharding", "std::string",
           /*default=*/"\"\"",
           "put every table in one sharding type (table_wise, row_wise, "
           "column_wise, table_row_wise, data_parallel)">,
    Option<"cluster", "cluster", "std::string", /*default=*/"\"\"",
           "hardware preset or JSON file; defaults to the module's "
           "braid.cluster">,
    Option<"nodes", "nodes", "int64_t", /*default=*/"0",
           "nodes of the cluster (with `cluster`)">,
    Option<"ranksPerNode", "ranks-per-node", "int64_t", /*default=*/"0",
           "ranks per node (with `cluster`)">,
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
    `braid.embedding_bag`. Dense layers
    and the interaction run data-parallel on the local rows, which needs no
    communication in the forward pass.

    With `async-exchanges`, the exchange of pooled rows is started
    (`all_to_all_start`, `reduce_scatter_start`) and its `wait` and
    `combine_shards` move to just before the first use of the embedding, so
    the following tables' routing and lookups overlap it.

    Errors: a table without placement, a dynamic global batch, per-sample
    weights on a sharded table, or a batch-shaped value used by an op the
    partitioner does not know.
  }];
  let options = [
    Option<"asyncExchanges", "async-exchanges", "bool", /*default=*/"false",
           "start the pooled-row exchanges asynchronously and wait at their "
           "first use">,
  ];
  let dependentDialects = ["::mlir::braid::BraidDialect"];
}

def BraidLowerComputePass : Pass<"braid-lower-compute", "::mlir::ModuleOp"> {
  let summary = "lowers Braid's compute ops to tensor, linalg, scf and vector";
  let description = [{
    The first step of `braid-lower-cpu`. Every table a function looks up
    becomes a trailing argument of the table's type, marked
    `braid.table = "<name>"` (the host passes the rows this rank holds),
    and the compute ops become upstream ops on tensors that one-shot
    bufferization turns into parallel loops:

    - `braid.embedding_bag`: every index is checked first (one outside
      the table calls `braidrt_index_error`; the runtime aborts the job
      naming the rank), and so are the offsets (start at 0, never
      decrease, end at the number of indices; else
      `braidrt_offsets_error`), then a row-major kernel: an `scf.forall` over the
      bags whose body loops over the bag's indices, reads each row with a
      `vector.transfer_read` (rows wider than 64 in chunks of 64 lanes)
      and pools it in a vector accumulator, f32 (f64 for f64 tables);
      `mean` divides by the bag size, `max` starts from -inf and gives 0
      for an empty bag; per-sample weights scale each row first (their
      count is checked against the indices' at run time); the row is
      written once into the result;
    - `braid.linear`: for f32, a call of the runtime's BLAS GEMM with
      bias and activation (`braidrt_linear_f32`, through MLIR's C
      interface) on a buffer the call fills; otherwise a `linalg.generic`
      contraction with the weight in [out, in] layout, then one for bias
      and activation;
    - `braid.interaction`: `cat` is a `tensor.concat`; `dot` concatenates
      the features and a `tensor.generate` computes the dense columns and
      the pairwise dot products.

    - the ops of partitioned programs: `all_to_all` (with `split_sizes`),
      `all_to_all_v` and `reduce_scatter` over blocks of consecutive ranks
      call the runtime's MPI exchanges on the operands' buffers and a
      buffer the call fills (`bufferization.to_buffer`/`to_tensor` around
      a C-interface call); `bucketize` counts, then routes, with
      `tensor.insert`; `shard_embedding_bag` (its table argument is the
      rank's shard, `tensor<?x?xT>`) is the embedding bag's kernel with
      masked reads, partial pooling (no mean division, -inf for an empty
      `max` bag), zero past the shard's columns and each received row
      checked as it is read; `combine_shards` is a `tensor.generate`. The
      placement fixes the routing at compile time; only the calling rank
      is read at run time;
    - the async forms (`all_to_all_start`, `reduce_scatter_start`,
      `wait`): non-blocking runtime calls and a wait that takes the
      buffers.

    Functions get `llvm.emit_c_interface`. Other collectives, `permute`,
    `rank` and `world_size` are errors for now.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::vector::VectorDialect"];
}

def BraidEmitPackedEntryPass
    : Pass<"braid-emit-packed-entry", "::mlir::ModuleOp"> {
  let summary = "adds a one-argument entry point to every C interface";
  let description = [{
    The last step of `braid-lower-cpu`. For every `_mlir_ciface_NAME`
    function in the LLVM dialect, adds `braid_entry_NAME(ptr)`, which reads
    its arguments (pointers to memref descriptors; the result descriptor's
    first when the function returns one) from an array of pointers and
    calls the interface. A host can then call any compiled function
    through one signature, whatever its arity. It also drops the
    `braid.input`, `braid.param` and `braid.table` argument attributes,
    which LLVM IR has no place for (the manifest keeps them).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // BRAID_TRANSFORMS_PASSES_TD
