//===- RuntimeFunctions.h - The CPU runtime's entry points ------*- C++ -*-===//
//
// This file lists, in one place, the runtime functions that programs lowered
// by convert-braid-to-cpu call, with the signatures the lowering declares
// (runtime/include/braidrt/compiled.h and braidrt.h define them). A target
// that keeps the kernels and swaps the runtime (CUDA: NCCL and cuBLASLt
// behind the same roles) swaps this table. Names ending in `_` take the
// element-type suffix `f32`, `f64` or `i64`; "memref" is an unranked memref
// passed through MLIR's C interface (`_mlir_ciface_` prefix).
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_CONVERSION_BRAIDTOCPU_RUNTIMEFUNCTIONS_H
#define BRAID_CONVERSION_BRAIDTOCPU_RUNTIMEFUNCTIONS_H

#include "llvm/ADT/StringRef.h"

namespace mlir::braid::runtime {

/// i64 (): the calling rank.
inline constexpr llvm::StringLiteral kRank = "braidrt_rank";
/// (i64 index, i64 rows): aborts the job, an index outside its table.
inline constexpr llvm::StringLiteral kIndexError = "braidrt_index_error";
/// (i64 entry, i64 value): aborts the job, malformed bag offsets.
inline constexpr llvm::StringLiteral kOffsetsError = "braidrt_offsets_error";
/// (i64 bags, i64 slots): aborts the job, more local bags than a rank's
/// slots in an exchange.
inline constexpr llvm::StringLiteral kBagsError = "braidrt_bags_error";
/// (i64 rows, i64 expected): aborts the job, an interaction feature whose
/// rows are not the dense features' (dynamic sizes the verifier cannot tie).
inline constexpr llvm::StringLiteral kRowsError = "braidrt_rows_error";
/// (i64 step): aborts the job, an Adam step numbered below 1.
inline constexpr llvm::StringLiteral kStepError = "braidrt_step_error";
/// (i64 weights, i64 indices): aborts the job, per-sample weights that do
/// not match the indices.
inline constexpr llvm::StringLiteral kWeightsError = "braidrt_weights_error";
/// (memref input, memref weight, memref bias, memref output, i32
/// activation): an f32 GEMM with bias and activation through BLAS.
inline constexpr llvm::StringLiteral kLinearF32 = "braidrt_linear_f32";
/// (memref send counts, memref receive counts): every rank's counts.
inline constexpr llvm::StringLiteral kExchangeCounts =
    "braidrt_exchange_counts";
/// (memref in, memref out, memref split sizes): uneven all_to_all.
inline constexpr llvm::StringLiteral kAllToAll = "braidrt_all_to_all_";
/// i64 (memref in, memref out, memref split sizes): started; a handle.
inline constexpr llvm::StringLiteral kAllToAllStart =
    "braidrt_all_to_all_start_";
/// (memref in, memref send counts, memref out, memref receive counts).
inline constexpr llvm::StringLiteral kAllToAllV = "braidrt_all_to_all_v_";
inline constexpr llvm::StringLiteral kAllToAllVStart =
    "braidrt_all_to_all_v_start_";
/// i64 (memref in, memref send counts): started before the counts are
/// known; a handle (convert-braid-to-cpu's async-counts).
inline constexpr llvm::StringLiteral kAllToAllVPost =
    "braidrt_all_to_all_v_post_";
/// i64 (i64 handle): the rows a posted all_to_all_v brings this rank.
inline constexpr llvm::StringLiteral kAllToAllVReceivedRows =
    "braidrt_all_to_all_v_received_rows";
/// (i64 handle, memref in, memref out): completes a posted all_to_all_v
/// into `out`, which holds the received rows; one per element type, like the
/// post (a program may post i32 and i64 exchanges).
inline constexpr llvm::StringLiteral kWaitAllToAllV =
    "braidrt_wait_all_to_all_v_";
/// (memref in, memref out, i64 group size, i32 member, i32 reduction): over
/// blocks of consecutive ranks; a rank whose block is no group of the op
/// passes member 0 and gets its input back.
inline constexpr llvm::StringLiteral kReduceScatter =
    "braidrt_reduce_scatter_";
/// i64 (memref in, memref out, i64 group size, i32 member, i32 reduction):
/// started.
inline constexpr llvm::StringLiteral kReduceScatterStart =
    "braidrt_reduce_scatter_start_";
/// (i64 handle, memref in, memref out): completes a started exchange.
inline constexpr llvm::StringLiteral kWaitExchange = "braidrt_wait_exchange_";

/// The gradient exchanges: (memref in, memref out, i64 group size, i64
/// stride, i32 member, i32 reduction) for all_reduce (any rank; stride 1:
/// blocks of consecutive ranks as reduce_scatter's, stride s: the groups
/// [[0, s, ..], [1, s + 1, ..], ..]), reduce_scatter's arguments without
/// the reduction for all_gather (rows).
inline constexpr llvm::StringLiteral kAllReduce = "braidrt_all_reduce_";
/// i64 (all_reduce's arguments): started; braidrt_wait_exchange_ completes it.
inline constexpr llvm::StringLiteral kAllReduceStart =
    "braidrt_all_reduce_start_";
inline constexpr llvm::StringLiteral kAllGather = "braidrt_all_gather_";
/// i64 (all_gather's arguments): started; braidrt_wait_exchange_ completes it.
inline constexpr llvm::StringLiteral kAllGatherStart =
    "braidrt_all_gather_start_";
/// The training kernels (runtime/lib/Training.cpp; compiled.h documents
/// them): (memref logits, memref labels, memref loss, memref grad, f64
/// scale).
inline constexpr llvm::StringLiteral kBceWithLogits =
    "braidrt_bce_with_logits";
/// (memref x, w, g, dx, dw, i32 parts): a dense layer's two gradient GEMMs,
/// dx = g w and dw = g^T x, on the pre-activation gradient g; `parts`
/// (braidrt_grad_parts: 1 dx, 2 dw, 3 both) says which.
inline constexpr llvm::StringLiteral kLinearGradGemmsF32 =
    "braidrt_linear_grad_gemms_f32";
/// (memref rows, memref bounds, i32 bounds are lengths, i64 table rows,
/// memref sorted bags, memref segment rows, memref segment starts, memref
/// count): a lookup's entries grouped by row for the generated update.
inline constexpr llvm::StringLiteral kSegmentRows = "braidrt_segment_rows";
/// Per table element type (suffix f32, f16, bf16): (memref table, memref
/// state, memref rows, memref bounds, i32 bounds are lengths, memref grad,
/// i32 mode, i32 optimizer, f64 lr, f64 eps).
inline constexpr llvm::StringLiteral kBagUpdate = "braidrt_bag_update_";
/// (memref table, memref indices, memref offsets, memref grad, memref out,
/// i32 mode).
inline constexpr llvm::StringLiteral kBagGrad = "braidrt_bag_grad_";
/// (memref table, memref state, memref grad, i32 optimizer, f64 lr, f64
/// eps).
inline constexpr llvm::StringLiteral kTableUpdate = "braidrt_table_update_";

/// The CUDA runtime's (libbraidrt_cuda) functions with a CPU runtime
/// function's arguments: braid-use-cuda-runtime calls them instead.
/// (memref input, weight, bias, output, i32 activation): cuBLASLt.
inline constexpr llvm::StringLiteral kCudaLinearF32 =
    "braidrt_cuda_linear_f32";
/// (memref x, w, g, dx, dw, i32 parts): the GEMMs of `parts` on cuBLASLt.
inline constexpr llvm::StringLiteral kCudaLinearGradGemmsF32 =
    "braidrt_cuda_linear_grad_gemms_f32";

} // namespace mlir::braid::runtime

#endif // BRAID_CONVERSION_BRAIDTOCPU_RUNTIMEFUNCTIONS_H
