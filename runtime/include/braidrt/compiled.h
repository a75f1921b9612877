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
BRAIDRT_DECLARE_EXCHANGES(i32)
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
/* all_to_all_v_start: the counts were exchanged before (exchange_counts),
 * so that `out` has its size; the rows move until the wait. */
#define BRAIDRT_DECLARE_ALL_TO_ALL_V_START(SUFFIX)                             \
  int64_t _mlir_ciface_braidrt_all_to_all_v_start_##SUFFIX(                    \
      braidrt_unranked_memref *in, braidrt_unranked_memref *send_counts,       \
      braidrt_unranked_memref *out, braidrt_unranked_memref *recv_counts);
BRAIDRT_DECLARE_ALL_TO_ALL_V_START(f32)
BRAIDRT_DECLARE_ALL_TO_ALL_V_START(f64)
BRAIDRT_DECLARE_ALL_TO_ALL_V_START(i64)
BRAIDRT_DECLARE_ALL_TO_ALL_V_START(i32)
#undef BRAIDRT_DECLARE_ALL_TO_ALL_V_START
/* all_to_all_v started with its counts still to move (the CPU target's
 * braid.all_to_all_v_start): post returns at once, having only posted the
 * counts exchange; the rows move, into the runtime's buffer, once the counts
 * have arrived (inside braidrt_progress, or at the latest in
 * received_rows, which says how many rows this rank receives); the wait
 * copies them into `out`, which holds that many rows. */
#define BRAIDRT_DECLARE_ALL_TO_ALL_V_POST(SUFFIX)                              \
  int64_t _mlir_ciface_braidrt_all_to_all_v_post_##SUFFIX(                     \
      braidrt_unranked_memref *in, braidrt_unranked_memref *send_counts);
BRAIDRT_DECLARE_ALL_TO_ALL_V_POST(f32)
BRAIDRT_DECLARE_ALL_TO_ALL_V_POST(f64)
BRAIDRT_DECLARE_ALL_TO_ALL_V_POST(i64)
BRAIDRT_DECLARE_ALL_TO_ALL_V_POST(i32)
#undef BRAIDRT_DECLARE_ALL_TO_ALL_V_POST
int64_t braidrt_all_to_all_v_received_rows(int64_t handle);
#define BRAIDRT_DECLARE_WAIT_ALL_TO_ALL_V(SUFFIX)                              \
  void _mlir_ciface_braidrt_wait_all_to_all_v_##SUFFIX(                        \
      int64_t handle, braidrt_unranked_memref *in,                             \
      braidrt_unranked_memref *out);
BRAIDRT_DECLARE_WAIT_ALL_TO_ALL_V(f32)
BRAIDRT_DECLARE_WAIT_ALL_TO_ALL_V(f64)
BRAIDRT_DECLARE_WAIT_ALL_TO_ALL_V(i64)
BRAIDRT_DECLARE_WAIT_ALL_TO_ALL_V(i32)
#undef BRAIDRT_DECLARE_WAIT_ALL_TO_ALL_V
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
/* The routed lengths (i64) are exchanged the same way. */
int64_t _mlir_ciface_braidrt_all_to_all_start_i64(braidrt_unranked_memref *in,
                                                  braidrt_unranked_memref *out,
                                                  braidrt_unranked_memref *split);
void _mlir_ciface_braidrt_wait_exchange_i64(int64_t handle,
                                            braidrt_unranked_memref *in,
                                            braidrt_unranked_memref *out);
/* Pooled rows and their gradients moved in 16 bits (braid-exchange-precision:
 * rounded before the exchange, widened after), as uneven all_to_all,
 * blocking and started. */
#define BRAIDRT_DECLARE_HALF_EXCHANGES(SUFFIX)                                 \
  void _mlir_ciface_braidrt_all_to_all_##SUFFIX(                               \
      braidrt_unranked_memref *in, braidrt_unranked_memref *out,               \
      braidrt_unranked_memref *split);                                         \
  int64_t _mlir_ciface_braidrt_all_to_all_start_##SUFFIX(                      \
      braidrt_unranked_memref *in, braidrt_unranked_memref *out,               \
      braidrt_unranked_memref *split);                                         \
  void _mlir_ciface_braidrt_wait_exchange_##SUFFIX(                            \
      int64_t handle, braidrt_unranked_memref *in,                             \
      braidrt_unranked_memref *out);
BRAIDRT_DECLARE_HALF_EXCHANGES(bf16)
BRAIDRT_DECLARE_HALF_EXCHANGES(f16)
#undef BRAIDRT_DECLARE_HALF_EXCHANGES
/* The routed indices' fused exchange, narrowed to i32 (wire_type), moves
 * them as one all_to_all_v of i32 values. */
void _mlir_ciface_braidrt_wait_exchange_i32(int64_t handle,
                                            braidrt_unranked_memref *in,
                                            braidrt_unranked_memref *out);

/* The gradient exchanges of training steps: all_reduce (any rank,
 * `reduction` as braidrt_reduction) over blocks of `group_size` consecutive
 * ranks as reduce_scatter (stride 1) or over the groups of `group_size`
 * ranks `stride` apart that tile the world, also started
 * (braidrt_wait_exchange_ completes it), and all_gather (rows, in rank
 * order, over blocks), also started. */
#define BRAIDRT_DECLARE_GRADIENT_EXCHANGES(SUFFIX)                             \
  void _mlir_ciface_braidrt_all_reduce_##SUFFIX(                               \
      braidrt_unranked_memref *in, braidrt_unranked_memref *out,               \
      int64_t group_size, int64_t stride, int32_t member, int32_t reduction);  \
  int64_t _mlir_ciface_braidrt_all_reduce_start_##SUFFIX(                      \
      braidrt_unranked_memref *in, braidrt_unranked_memref *out,               \
      int64_t group_size, int64_t stride, int32_t member, int32_t reduction);  \
  void _mlir_ciface_braidrt_all_gather_##SUFFIX(                               \
      braidrt_unranked_memref *in, braidrt_unranked_memref *out,               \
      int64_t group_size, int32_t member);                                     \
  int64_t _mlir_ciface_braidrt_all_gather_start_##SUFFIX(                      \
      braidrt_unranked_memref *in, braidrt_unranked_memref *out,               \
      int64_t group_size, int32_t member);
BRAIDRT_DECLARE_GRADIENT_EXCHANGES(f32)
BRAIDRT_DECLARE_GRADIENT_EXCHANGES(f64)
#undef BRAIDRT_DECLARE_GRADIENT_EXCHANGES

/* The training step's kernels (runtime/lib/Training.cpp). Gradients are f32;
 * `mode` is the pooling mode (0 sum, 1 mean, 2 max); `optimizer` numbers
 * the optimizer as braidrt/OptimizerMath.h (0 sgd, 1 adagrad, 2
 * rowwise_adagrad, 3 adam); a table's `state` is its optimizer state, f32:
 * [rows] for rowwise_adagrad, [rows, cols] for adagrad, unread for sgd.
 *
 * bce_with_logits: loss (0-d) = scale * sum of the stable binary
 * cross-entropy of logits [B, 1] against labels [B]; grad [B, 1] its
 * gradient. */
void _mlir_ciface_braidrt_bce_with_logits(braidrt_unranked_memref *logits,
                                          braidrt_unranked_memref *labels,
                                          braidrt_unranked_memref *loss,
                                          braidrt_unranked_memref *grad,
                                          double scale);
/* The two GEMMs of braidrt_linear_f32's backward, through BLAS: from its
 * input x [B, in], weight w [out, in] and pre-activation gradient g
 * [B, out] (the compiled program computes g and the bias gradient),
 * input_grad = g w and weight_grad = g^T x; `parts` (braidrt_grad_parts)
 * says which, and the buffer of a gradient left out is not read. */
void _mlir_ciface_braidrt_linear_grad_gemms_f32(
    braidrt_unranked_memref *input, braidrt_unranked_memref *weight,
    braidrt_unranked_memref *pre_activation_grad,
    braidrt_unranked_memref *input_grad, braidrt_unranked_memref *weight_grad,
    int32_t parts);
/* The entries of a lookup's bags (`rows`, `bounds` as for bag_update)
 * grouped by the row they read, for the generated embedding update: the
 * entries' bags sorted stably by row (sorted_bags, [entries]), the distinct
 * rows in increasing order (segment_rows, [entries], the first `count[0]`
 * set) and where each one's entries start (segment_starts, [entries + 1],
 * `count[0]` + 1 set). Fails on a row outside [0, table_rows). */
void _mlir_ciface_braidrt_segment_rows(
    braidrt_unranked_memref *rows, braidrt_unranked_memref *bounds,
    int32_t bounds_are_lengths, int64_t table_rows,
    braidrt_unranked_memref *sorted_bags, braidrt_unranked_memref *segment_rows,
    braidrt_unranked_memref *segment_starts, braidrt_unranked_memref *count);
/* Per table element type (f32, f16, bf16), updating the table in place:
 * bag_update: a lookup's backward fused with the optimizer; `rows` are the
 * looked-up rows, `bounds` the bags' offsets (B + 1) or, with
 * bounds_are_lengths, their lengths (B); grad is [B, >= cols].
 * bag_grad: the whole-table gradient [rows, cols] of a lookup.
 * table_update: the optimizer on every row whose gradient is not zero. */
#define BRAIDRT_DECLARE_TABLE_KERNELS(SUFFIX)                                  \
  void _mlir_ciface_braidrt_bag_update_##SUFFIX(                               \
      braidrt_unranked_memref *table, braidrt_unranked_memref *state,          \
      braidrt_unranked_memref *rows, braidrt_unranked_memref *bounds,          \
      int32_t bounds_are_lengths, braidrt_unranked_memref *grad, int32_t mode, \
      int32_t optimizer, double lr, double eps);                               \
  void _mlir_ciface_braidrt_bag_grad_##SUFFIX(                                 \
      braidrt_unranked_memref *table, braidrt_unranked_memref *indices,        \
      braidrt_unranked_memref *offsets, braidrt_unranked_memref *grad,         \
      braidrt_unranked_memref *out, int32_t mode);                             \
  void _mlir_ciface_braidrt_table_update_##SUFFIX(                             \
      braidrt_unranked_memref *table, braidrt_unranked_memref *state,          \
      braidrt_unranked_memref *grad, int32_t optimizer, double lr,             \
      double eps);
BRAIDRT_DECLARE_TABLE_KERNELS(f32)
BRAIDRT_DECLARE_TABLE_KERNELS(f16)
BRAIDRT_DECLARE_TABLE_KERNELS(bf16)
#undef BRAIDRT_DECLARE_TABLE_KERNELS

#ifdef __cplusplus
}
#endif

#endif /* BRAIDRT_COMPILED_H */
