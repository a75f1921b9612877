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

} // namespace mlir::braid::runtime

#endif // BRAID_CONVERSION_BRAIDTOCPU_RUNTIMEFUNCTIONS_H
