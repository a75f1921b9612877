//===- Passes.td - Braid's conversions ---------------------*- tablegen -*-===//
//
// This file declares the conversions of per-rank Braid programs to a
// target. The reference (docs/reference/BraidConversionPasses.md) is
// generated from these descriptions.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_CONVERSION_PASSES_TD
#define BRAID_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertBraidToCPUPass : Pass<"convert-braid-to-cpu", "::mlir::ModuleOp"> {
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

    It is a dialect conversion (`populateBraidComputeToCPUPatterns`,
    `populateBraidExchangeToCPUPatterns`); the runtime functions it calls
    are listed in `passes/Conversion/BraidToCPU/RuntimeFunctions.h`.
    Each `embedding_bag`, `shard_embedding_bag`, `bucketize` and
    `combine_shards` of a public function first moves into an internal,
    `noinline` private function of its own (its operands and table rows as
    arguments), called where it was: upstream passes are superlinear in a
    function's size, and a thousand tables would otherwise make one
    function of a thousand kernels. Public functions get
    `llvm.emit_c_interface`. Other collectives, `permute`,
    `rank` and `world_size` are errors for now.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::LLVM::LLVMDialect",
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

#endif // BRAID_CONVERSION_PASSES_TD
