/*===- braidrt.h - The Braid runtime's C interface ---------------*- C -*-===*\
|*                                                                            *|
|* The runtime compiled Braid programs call on every rank: initialization,   *|
|* collectives over MPI (blocking, and non-blocking with waits that time     *|
|* out), GEMM over BLAS, the embedding-bag kernel with bounds-checked        *|
|* indices, and timers. It is MLIR-free and has a C ABI.                     *|
|*                                                                            *|
|* Errors never return: the runtime prints                                  *|
|*   braidrt: rank R: error: MESSAGE                                          *|
|* and aborts the whole job with exit code 1, so no rank is left waiting.    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef BRAIDRT_BRAIDRT_H
#define BRAIDRT_BRAIDRT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  BRAIDRT_F32 = 0,
  BRAIDRT_F64 = 1,
  BRAIDRT_I64 = 2,
} braidrt_dtype;

typedef enum {
  BRAIDRT_SUM = 0,
  BRAIDRT_MAX = 1,
  BRAIDRT_MIN = 2,
} braidrt_reduction;

typedef enum {
  BRAIDRT_ACT_NONE = 0,
  BRAIDRT_ACT_RELU = 1,
  BRAIDRT_ACT_SIGMOID = 2,
} braidrt_activation;

/* The parts of a dense layer's gradient to compute (a bit set): a split
 * braid.linear_grad computes one of them. */
typedef enum {
  BRAIDRT_GRAD_INPUT = 1,
  BRAIDRT_GRAD_WEIGHT = 2,
  BRAIDRT_GRAD_BOTH = 3,
} braidrt_grad_parts;

/* An outstanding non-blocking collective. */
typedef struct braidrt_request braidrt_request;

/* Initializes MPI (unless already initialized; a process started without
 * mpirun is a world of one rank). Waits time out after BRAIDRT_TIMEOUT_S
 * seconds (default 300). */
void braidrt_init(int *argc, char ***argv);
void braidrt_finalize(void);
int64_t braidrt_rank(void);
int64_t braidrt_world_size(void);

/* Reports an error on this rank and aborts the job (printf format). */
void braidrt_fail(const char *format, ...)
    __attribute__((noreturn, format(printf, 1, 2)));

/* Waits until every rank has called it (timed calls start together). */
void braidrt_barrier(void);

/* Moves the started exchanges not yet waited for along: MPI advances a
 * non-blocking collective's data only inside MPI calls, so the runtime's
 * long kernels (GEMMs, a linear layer's backward) call this between their
 * parts, and a collective started before them runs beside them. Cheap
 * when nothing is in flight; BRAIDRT_NO_PROGRESS=1 turns it off (to
 * measure what it gains). */
void braidrt_progress(void);

/* Collectives over all ranks; `count` elements per rank's contribution. */
void braidrt_all_reduce(const void *input, void *output, int64_t count,
                        braidrt_dtype dtype, braidrt_reduction reduction);
/* `output` gets this rank's `count` of the reduction of world_size * count. */
void braidrt_reduce_scatter(const void *input, void *output, int64_t count,
                            braidrt_dtype dtype, braidrt_reduction reduction);
/* `output` holds world_size * count: every rank's input in rank order. */
void braidrt_all_gather(const void *input, void *output, int64_t count,
                        braidrt_dtype dtype);
/* Uneven all_to_all: `send_counts[j]` elements go to rank j; the counts
 * are exchanged first, `recv_counts` (world_size entries) receives them and
 * the return value is the total received, written to `*output`, a buffer
 * the runtime allocates with malloc (free with braidrt_free). */
int64_t braidrt_all_to_all_v(const void *input, const int64_t *send_counts,
                             void **output, int64_t *recv_counts,
                             braidrt_dtype dtype);
void braidrt_free(void *buffer);

/* Non-blocking all_reduce; braidrt_wait completes it (or aborts the job
 * after the timeout, naming the collective). */
braidrt_request *braidrt_all_reduce_start(const void *input, void *output,
                                          int64_t count, braidrt_dtype dtype,
                                          braidrt_reduction reduction);
void braidrt_wait(braidrt_request *request);

/* output[b, o] = act(sum_i input[b, i] * weight[o, i] + bias[o]), f32. */
void braidrt_linear(const float *input, const float *weight, const float *bias,
                    float *output, int64_t batch, int64_t in_features,
                    int64_t out_features, braidrt_activation activation);

/* Called by compiled lookups for an index outside their table: aborts the
 * job naming the rank, the index and the table's rows. */
void braidrt_index_error(int64_t index, int64_t rows);

/* Called by compiled lookups whose bag offsets do not start at 0, decrease,
 * or do not end at the number of indices: aborts the job naming the rank,
 * the offending entry and its value. */
void braidrt_offsets_error(int64_t entry, int64_t value);

/* Called by compiled shard assembly gradients whose local bag count exceeds
 * the rank's slots in the exchange: aborts the job naming the rank. */
void braidrt_bags_error(int64_t bags, int64_t slots);

/* Called by compiled interactions (and their gradients) whose features do
 * not all have the dense features' rows: aborts the job naming the rank. */
void braidrt_rows_error(int64_t rows, int64_t expected);

/* Called by compiled Adam steps whose step number is below 1 (the bias
 * correction divides by 1 - beta^step): aborts the job naming the rank. */
void braidrt_step_error(int64_t step);

/* Called by compiled weighted lookups whose per-sample weights and indices
 * differ in length: aborts the job naming the rank and both lengths. */
void braidrt_weights_error(int64_t weights, int64_t indices);

/* Milliseconds this rank has spent blocked on its communication since
 * braidrt_init: inside synchronous collectives and waits on started ones,
 * for its data to move and for its peers to arrive. */
double braidrt_comm_wait_ms(void);

/* The part of braidrt_comm_wait_ms spent on one kind of communication:
 * "all_reduce", "all_to_all", "all_to_all_v", "all_to_all_v (counts)",
 * "reduce_scatter", "all_gather" or "barrier"; 0 for a kind never waited on. */
double braidrt_comm_wait_ms_of(const char *what);

/* Milliseconds on a monotonic clock. */
double braidrt_time_ms(void);

/* The op timers braid-profile-ops brackets every op of a program with
 * (braid-compile --profile-ops): op `index` starts, op `index` ends; the
 * time between adds to the op's total. */
void braidrt_op_begin(int64_t index);
void braidrt_op_end(int64_t index);
/* Ends the op that began and has not ended, if any (a profiled program's
 * return, whose end is the function's; braidrt_program_call calls it). */
void braidrt_op_close(void);
/* The number of ops timed so far (the largest index plus one). */
int64_t braidrt_op_count(void);
/* Milliseconds op `index` has taken since braidrt_init, summed over its
 * runs; 0 for an op never timed. */
double braidrt_op_ms(int64_t index);

#ifdef __cplusplus
}
#endif

#endif /* BRAIDRT_BRAIDRT_H */
