/*===- compiled.h - Entry points compiled Braid programs call ----*- C -*-===*\
|*                                                                            *|
|* Functions the code braid-lower-cpu generates calls through MLIR's C      *|
|* interface: each memref argument arrives as a pointer to an unranked      *|
|* descriptor {rank, pointer to {allocated, aligned, offset, sizes[rank],   *|
|* strides[rank]}}.                                                          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef BRAIDRT_COMPILED_H
#define BRAIDRT_COMPILED_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int64_t rank;
  void *descriptor;
} braidrt_unranked_memref;

/* output = act(input * weight^T + bias) through BLAS: input [B, in],
 * weight [out, in], bias [out], output [B, out], f32; activation as
 * braidrt_activation. */
void _mlir_ciface_braidrt_linear_f32(braidrt_unranked_memref *input,
                                     braidrt_unranked_memref *weight,
                                     braidrt_unranked_memref *bias,
                                     braidrt_unranked_memref *output,
                                     int32_t activation);

/* The exchanges of partitioned programs, over all ranks. Buffers are
 * row-major; a row is everything after the first dimension.
 * all_to_all: `split` is the R x R matrix of rows rank i sends to rank j.
 * all_to_all_v: `send_counts` and `recv_counts` (R entries) count rows;
 * exchange_counts fills `recv` from every rank's `send`.
 * reduce_scatter: over consecutive blocks of `group_size` ranks;
 * `reduction` as braidrt_reduction; a rank whose block is not one of the
 * op's groups passes `member` 0 and keeps its input (out = in). */
void _mlir_ciface_braidrt_exchange_counts(braidrt_unranked_memref *send,
                                          braidrt_unranked_memref *recv);
#define BRAIDRT_DECLARE_EXCHANGES(SUFFIX)                                      \
  void _mlir_ciface_braidrt_all_to_all_##SUFFIX(braidrt_unranked_memref *in,   \
                                                braidrt_unranked_memref *out,  \
                                                braidrt_unranked_memref *split); \
  void _mlir_ciface_braidrt_all_to_all_v_##SUFFIX(                             \
      braidrt_unranked_memref *in, braidrt_unranked_memref *send_counts,       \
      braidrt_unranked_memref *out, braidrt_unranked_memref *recv_counts);
BRAIDRT_DECLARE_EXCHANGES(f32)
BRAIDRT_DECLARE_EXCHANGES(f64)
BRAIDRT_DECLARE_EXCHANGES(i64)
#undef BRAIDRT_DECLARE_EXCHANGES
void _mlir_ciface_braidrt_reduce_scatter_f32(braidrt_unranked_memref *in,
                                             braidrt_unranked_memref *out,
                                             int64_t group_size, int32_t member,
                                             int32_t reduction);
void _mlir_ciface_braidrt_reduce_scatter_f64(braidrt_unranked_memref *in,
                                             braidrt_unranked_memref *out,
                                             int64_t group_size, int32_t member,
                                             int32_t reduction);

/* The asynchronous forms: a start returns a handle; the wait completes it.
 * The wait also takes the exchange's buffers, so that they stay alive (and
 * untouched) while MPI reads and writes them. */
int64_t _mlir_ciface_braidrt_all_to_all_start_f32(braidrt_unranked_memref *in,
                                                  braidrt_unranked_memref *out,
                                                  braidrt_unranked_memref *split);
int64_t _mlir_ciface_braidrt_all_to_all_start_f64(braidrt_unranked_memref *in,
                                                  braidrt_unranked_memref *out,
                                                  braidrt_unranked_memref *split);
int64_t _mlir_ciface_braidrt_reduce_scatter_start_f32(
    braidrt_unranked_memref *in, braidrt_unranked_memref *out,
    int64_t group_size, int32_t member, int32_t reduction);
int64_t _mlir_ciface_braidrt_reduce_scatter_start_f64(
    braidrt_unranked_memref *in, braidrt_unranked_memref *out,
    int64_t group_size, int32_t member, int32_t reduction);
void _mlir_ciface_braidrt_wait_exchange_f32(int64_t handle,
                                            braidrt_unranked_memref *in,
                                            braidrt_unranked_memref *out);
void _mlir_ciface_braidrt_wait_exchange_f64(int64_t handle,
                                            braidrt_unranked_memref *in,
                                            braidrt_unranked_memref *out);

#ifdef __cplusplus
}
#endif

#endif /* BRAIDRT_COMPILED_H */
