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
    The first step of `braid-lower-cpu`. It first writes fused exchanges
    out (`braid-expand-fused-exchanges`). Every table a function looks up
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
      buffers. `all_to_all_v_start` (with `async-counts`, the default)
      only posts its counts exchange (`braidrt_all_to_all_v_post_*`);
      the runtime posts the rows when the counts arrive, inside a later
      `braidrt_progress`, and its wait asks how many rows arrived
      (`braidrt_all_to_all_v_received_rows`), allocates the result and
      takes them (`braidrt_wait_all_to_all_v_<type>`). Without it the start
      exchanges the counts before it returns.

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

    The fused embedding updates of a training step (sum and mean pooling)
    are the runtime's serial update by default, or with
    `embedding-update-kernel` a generated kernel: the runtime groups the
    lookup's entries by row (`braidrt_segment_rows`), then a forall owns
    one distinct row per iteration (no atomics, the same bytes whatever
    the thread count). `braid-lower-cuda` takes the kernel.
  }];
  let options = [
    Option<"embeddingUpdateKernel", "embedding-update-kernel", "bool",
           /*default=*/"false",
           "Lower sum and mean embedding updates to the generated, "
           "row-parallel kernel instead of the runtime's serial update">,
    Option<"poolingLanes", "pooling-lanes", "int64_t", /*default=*/"0",
           "Columns one iteration of a lookup's kernel pools (0: a bag's "
           "whole row); a count dividing the width makes the kernel a 2-D "
           "loop over bags and column groups">,
    Option<"asyncCounts", "async-counts", "bool", /*default=*/"true",
           "A started all_to_all_v posts its counts exchange and returns; "
           "its rows move once the counts have arrived, and the wait sizes "
           "the result (off: the start exchanges the counts before it "
           "returns, the form braid-lower-collectives-to-nccl rewrites)">,
    Option<"biasGradColumns", "bias-grad-columns", "int64_t",
           /*default=*/"16",
           "Columns of a linear_grad's bias gradient one iteration of its "
           "kernel sums, as one vector of f64 accumulators (at least 1; "
           "braid-lower-cuda takes 1, a thread per column)">,
    Option<"catLanes", "cat-lanes", "int64_t", /*default=*/"0",
           "Columns one iteration of a cat interaction's kernel and of its "
           "gradient's copies (0: a sample's whole row); a count dividing "
           "every feature's width makes each one 2-D loop per feature over "
           "samples and column groups">,
    Option<"parallelChecks", "parallel-checks", "bool", /*default=*/"false",
           "Check an embedding lookup's indices and offsets (and a slice of "
           "bags' offsets) with parallel loops (on the CUDA target kernels, "
           "which read them where they live) instead of serial ones, which "
           "report the first bad entry; bucketize's checks stay serial, as "
           "its routing reads every index on the host anyway">
  ];
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

def BraidExpandFusedExchangesPass
    : Pass<"braid-expand-fused-exchanges", "::mlir::ModuleOp"> {
  let summary = "writes each fused exchange as the one exchange it stands for";
  let description = [{
    The first step of `convert-braid-to-cpu` (which runs it itself, for the
    CPU and CUDA targets alike), and a pass of its own for tests. A
    `braid.fused_all_to_all_v_start` of M members over R ranks becomes:

    - its counts, read as indices (`tensor.extract`), and each member's
      input cut into its R chunks;
    - the chunks packed by destination (for each rank, every member's chunk
      for it, in member order) with `tensor.concat`, and the members' counts
      for each rank added up;
    - one `braid.all_to_all_start` of the R x M counts (row j to rank j),
      so that each rank learns what every member gets from every sender;
    - one `braid.all_to_all_v_start` of the packed values;
    - where the first member's `braid.wait` stood, the two waits, and each
      member's values cut out of every sender's block (in sender order) and
      concatenated; every member's wait is replaced by its values.

    Three collectives instead of 2M (each all_to_all_v exchanges its counts
    first), and two copies of the values. The counts are read on the host,
    as the all_to_all_v's own lowering reads them; the summed counts and the
    count matrix are built from those scalars (`tensor.from_elements`), so
    that no kernel runs for them. Within `convert-braid-to-cpu` the packing
    and the unpacking each go into a private function (internal, never
    inlined, like the lookups' outlined kernels): written out in place, 40
    members' copy loops in one function made llc's register allocator give
    up. A token read by anything but a `braid.wait` in the exchange's block
    is an error.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def BraidProfileOpsPass : Pass<"braid-profile-ops", "::mlir::ModuleOp"> {
  let summary = "times every Braid op of a per-rank program where it runs";
  let description = [{
    Instrumentation for `braid-compile --profile-ops` (CPU target), run
    before `convert-braid-to-cpu`. Every op of the Braid dialect at the top
    level of a public function gets an index, in program order, and is
    bracketed by `func.call @braidrt_op_begin(index)` and
    `func.call @braidrt_op_end(index)`: the runtime adds the time between
    them to the op's total. The function's return is timed too, as the op
    "return": what runs after the last op (the frees and result copies
    bufferization puts there), until the runtime's program call ends it. The module's `braid.profiled_ops` attribute
    names the ops by index as braid-sim's trace does ("linear",
    "shard_embedding_bag @t0"), so that measured and predicted times line
    up op by op; the artifact's manifest carries the names and `braid-run
    --json` reports each op's time per step (`ops_ms`).

    A lowered op's kernels and runtime calls sit between its two calls,
    which nothing moves across (they have unknown side effects); a started
    collective's time is its start's, and the wait's is the time spent
    waiting for it. Two clock reads per op are the cost.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
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

def BraidFuseElementwiseKernelsPass
    : Pass<"braid-fuse-elementwise-kernels", "::mlir::func::FuncOp"> {
  let summary = "fuses chains of elementwise arithmetic into one kernel";
  let description = [{
    A step of `braid-lower-cpu` and `braid-lower-cuda`, after
    `convert-elementwise-to-linalg`, which makes every elementwise `arith`
    op on tensors a `linalg.generic` of its own: a kernel that writes its
    result for the next to read back. A generic of elementwise arithmetic
    (parallel loops, identity maps, a body of `arith` ops) whose result only
    one such generic reads is fused into it, so a chain is one kernel that
    reads the chain's inputs once and writes its result once. A DCN cross
    layer's `x0 * (W x + b) + x` is one kernel, not two. A result read by
    several ops stays a kernel of its own, so nothing is computed twice.

    ```mlir
    %m = arith.mulf %x0, %y : tensor<?x8xf32>
    %s = arith.addf %m, %x : tensor<?x8xf32>
    // one linalg.generic ins(%x0, %y, %x) computing mulf then addf
    ```

    The simulator prices a chain as one kernel over its inputs and its
    result (`lib/Sim/ScheduleBuilder.cpp`).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def BraidStridedCopiesToLoopsPass
    : Pass<"braid-strided-copies-to-loops", "::mlir::func::FuncOp"> {
  let summary = "lowers copies between non-contiguous buffers to loops";
  let description = [{
    A step of `braid-lower-cpu`, after bufferization. `memref.copy` between
    two buffers that are both contiguous and statically shaped becomes one
    `memcpy`; any other (a column block of a wider matrix, a buffer of
    dynamic size: what packing and unpacking a fused exchange, a
    concatenation or a slice leave) would become a call to the C runner's
    `memrefCopy`, which moves one element at a time through a call to
    `memcpy` with the index arithmetic of a generic rank. This pass rewrites
    such copies as `scf.parallel` loops over the rows (an `scf.for` over the
    innermost dimension inside), which LLVM vectorizes where the innermost
    stride is 1. A contiguous, static copy is left for `memcpy`.

    On `bench/coopt`'s two-host DLRM (batch 1024, 8 tables), the default
    program's pack and unpack copies took about 1 ms of each rank's step
    through `memrefCopy` (`docs/coopt.md`).
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def BraidFlattenParallelLoopsPass
    : Pass<"braid-flatten-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "collapses each kernel's multi-dimensional parallel loop into one dimension";
  let description = [{
    A step of `braid-lower-cuda`, before the loops are tiled onto blocks of
    threads. An outermost `scf.parallel` of several dimensions (an
    elementwise kernel over rows and columns, `combine_shards`) becomes a
    loop of one dimension over their product, the last dimension varying
    fastest; the body recovers each index with a division and a remainder.

    ```mlir
    scf.parallel (%i, %j) = (%c0, %c0) to (%rows, %c70000) step (%c1, %c1)
    // becomes
    scf.parallel (%k) = (%c0) to (%rows * 70000) step (%c1)
    //   %i = %k floordiv 70000, %j = %k mod 70000
    ```

    Tiled and mapped, the loop of one dimension is a grid of one
    dimension: a tensor of 65,536 columns or more (the most a grid's y or
    z dimension holds) launches, and a warp's 32 threads touch 32
    consecutive elements of a row, not one element of 32 rows. Loops with
    reductions, and loops inside another parallel loop, are left as they
    are.
  }];
  // Normalizing a loop's bounds builds affine.apply.
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def BraidNameGpuKernelsPass
    : Pass<"braid-name-gpu-kernels", "::mlir::ModuleOp"> {
  let summary = "names each outlined GPU kernel after the Braid op it computes";
  let description = [{
    A step of `braid-lower-cuda`, after `gpu-kernel-outlining`, which names
    a kernel after its enclosing function (`forward_kernel_3`). The kernel
    takes the name its body's location carries instead:
    `convert-braid-to-cpu` gives every op it lowers a location named after
    what it computes (`embedding_bag_user_id`, `interaction_dot`,
    `shard_embedding_bag_t3`, `bucketize_t3`, `sparse_update_user_id`, ...),
    and that name survives bufferization, tiling and the mapping to GPU
    blocks and threads. Kernels whose location names nothing (elementwise
    work that bufferization made into loops) are `elementwise`. Equal
    names get `_1`, `_2`, ... in program order. The `gpu.module`, its
    `gpu.func` and every `gpu.launch_func` that calls it are renamed
    together, so profiles, `OUT/kernels/` and `cuobjdump` say what each
    kernel does.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def BraidGpuErrorRecordsPass
    : Pass<"braid-gpu-error-records", "::mlir::gpu::GPUModuleOp"> {
  let summary = "turns a kernel's runtime error calls into a device-side record";
  let description = [{
    A step of `braid-lower-cuda`, on each outlined kernel module. The
    checks `convert-braid-to-cpu` puts inside kernels (a received index
    outside the rank's shard, checked as the row is read) call the
    runtime's `braidrt_index_error`, `braidrt_offsets_error` or
    `braidrt_weights_error`, which a GPU thread cannot. Each such call
    becomes a write of the module's error record, a public
    `memref.global @braid_error : memref<3xi64>` holding
    `{code, first operand, second operand}` (code 1: index, 2: offsets,
    3: weights): the first failing thread claims the record with an
    atomic compare-and-swap of the code, writes the operands, and every
    failing thread then ends (`nvvm.exit`), so the bad index is never
    read. The host reads the record by name after the kernel and reports
    it as the CPU runtime does, naming the rank.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect"];
}

def BraidAlignVectorAccessesPass
    : Pass<"braid-align-vector-accesses", "::mlir::gpu::GPUModuleOp"> {
  let summary = "proves 16-byte alignment of a kernel's row reads and writes";
  let description = [{
    A step of `braid-lower-cuda`, on each outlined kernel module. A
    kernel reads a table row as one `vector.transfer_read`, which the
    LLVM lowering gives only its element's alignment (4 bytes for f32), so
    NVPTX splits it into scalar loads. This pass rewrites every unmasked,
    in-bounds, one-dimensional transfer on a strided memref (the identity
    layout, or a view with a static offset and static outer strides, such
    as the first rows of a receive buffer) into a `vector.load` or
    `vector.store` carrying the alignment it can prove: the largest power
    of two up to 16 dividing the offset's and the outer strides' bytes and
    the access's constant column offset in bytes, given the host's
    contract that every buffer it passes or allocates starts on a 16-byte
    boundary (cudaMalloc gives 256). A row of 16 f32 then reads as four
    `ld.global.v4.f32`; a row of 13 f32 stays at 4 bytes. Transfers on
    views with a dynamic offset keep the element's alignment.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect"];
}

def BraidAssembleCudaKernelsPass
    : Pass<"braid-assemble-cuda-kernels", "::mlir::ModuleOp"> {
  let summary = "assembles every kernel's PTX into cubins and one fat binary";
  let description = [{
    A step of `braid-lower-cuda`, after `gpu-module-to-binary`, which
    leaves each `gpu.binary` with one PTX object per chip. For every
    binary, the CUDA toolkit's `ptxas` assembles each chip's PTX into a
    cubin (`-O3`, its resource report read), and `fatbinary` packs the
    cubins, with the PTX of the newest chip, into one fat binary, which
    becomes the binary's only object:

    ```mlir
    // before
    gpu.binary @embedding_bag_t0 [#gpu.object<#nvvm.target<chip = "sm_80">, "//\n// Generated by LLVM NVPTX..."> ,
                                  #gpu.object<#nvvm.target<chip = "sm_90">, "...">]
    // after
    gpu.binary @embedding_bag_t0 [#gpu.object<#nvvm.target<chip = "sm_90">,
        properties = {cubins = ["sm_80", "sm_90"], ptx = "sm_90"},
        fatbin = "P\ED U\BA...">]
    ```

    The host then loads each module with `cuModuleLoadData`
    (`mgpuModuleLoad`), and the CUDA driver picks the cubin built for the
    device's architecture; a newer GPU than any chip compiles the PTX.
    Before, the first chip's PTX was embedded and compiled by the driver
    at every start, for every GPU, including the ones a cubin existed for.

    A kernel that spills registers (ptxas's report) is an error at the
    binary, as is any ptxas or fatbinary failure, with the tool's message.
    With `kernel-dir`, each kernel's `NAME.CHIP.ptx`, `NAME.CHIP.cubin`
    and `NAME.fatbin` are written there, with `kernels.json` listing each
    kernel's registers, stack and spills per chip.
  }];
  let options = [
    Option<"toolkit", "toolkit", "std::string", /*default=*/"\"\"",
           "The CUDA toolkit's directory (its bin/ holds ptxas and "
           "fatbinary); $BRAID_PTXAS overrides it; empty: the ptxas CMake "
           "found, then PATH's, then /usr/local/cuda/bin's">,
    Option<"kernelDir", "kernel-dir", "std::string", /*default=*/"\"\"",
           "A directory to write every kernel's PTX, cubins, fat binary "
           "and kernels.json into; empty: none">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::NVVM::NVVMDialect"];
  let statistics = [
    Statistic<"numKernels", "kernels", "kernels assembled">,
    Statistic<"numCubins", "cubins", "cubins assembled">
  ];
}

def BraidUseCudaRuntimePass
    : Pass<"braid-use-cuda-runtime", "::mlir::ModuleOp"> {
  let summary = "points the host's runtime calls at the CUDA runtime where it serves them";
  let description = [{
    A step of `braid-lower-cuda`, on the host code. `convert-braid-to-cpu`
    calls the CPU runtime (`passes/Conversion/BraidToCPU/RuntimeFunctions.h`);
    the functions the CUDA runtime (`libbraidrt_cuda`) implements with the
    same arguments are renamed, call and declaration: `braidrt_linear_f32`
    becomes `braidrt_cuda_linear_f32` (cuBLASLt, bias and relu fused in its
    epilogue) and `braidrt_linear_grad_gemms_f32` becomes
    `braidrt_cuda_linear_grad_gemms_f32` (the input's and weight's
    gradients on cuBLASLt; the activation's derivative and the bias
    gradient before them are generated kernels). Every other runtime call keeps the CPU runtime, which works
    on the managed memory the CUDA target's buffers live in: correct, but
    on the host. The renamed functions keep their C-interface ABI.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def BraidLowerCollectivesToNcclPass
    : Pass<"braid-lower-collectives-to-nccl", "::mlir::ModuleOp"> {
  let summary = "lowers the host's collectives and exchanges to NCCL calls";
  let description = [{
    A step of `braid-lower-cuda`, on the host code after bufferization. The
    CPU runtime calls of f32 `all_reduce`, `reduce_scatter` and
    `all_gather`, blocking and started, become NCCL calls in the IR:

    ```mlir
    %comm = call @braidrt_cuda_comm(%group_size, %stride, %member)
    scf.if %member_of_a_group {
      %stream = call @braidrt_cuda_comm_stream()
      %status = call @ncclAllReduce(%send, %recv, %count, %c7_i32, %op,
                                    %comm, %stream)   // 7: ncclFloat32
      call @braidrt_cuda_nccl_result(%status, %comm, %c0_i32)
      call @braidrt_cuda_stream_wait(%stream)         // blocking form
      // started form: %event = call @braidrt_cuda_record_event(%stream)
    } else {
      memref.copy %in, %out   // a rank in no group keeps its input
    }
    ```

    The group's communicator comes from the runtime (split from the
    world's on first use; every rank asks at the same point), the pointers
    and counts from the buffers (identity layouts only), the NCCL reduction
    from the Braid one (sum, max, min, avg).

    The lookups' exchanges (f32, f64 and i64 `all_to_all` with a split
    matrix, `all_to_all_v` with send and receive counts, and the counts'
    own exchange) become one NCCL group on the world's communicator: a loop
    over the peers reads the rows to send and receive from the sizes
    buffers, and issues `ncclSend` and `ncclRecv` at the running offsets,
    each only when it has rows.

    A started collective's handle is the event recorded on the
    communication stream behind it, and its `braidrt_wait_exchange_*`
    becomes `braidrt_cuda_wait_event`: kernels launched between the start
    and the wait run beside the collective. Calls this pass does not
    handle (other element types, non-identity layouts, a reduction that is
    not a constant) keep the CPU runtime's MPI calls on managed memory.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
  let statistics = [
    Statistic<"numLowered", "lowered", "collectives lowered to NCCL calls">,
    Statistic<"numKept", "kept", "collective calls left to the CPU runtime">
  ];
}

#endif // BRAID_CONVERSION_PASSES_TD
