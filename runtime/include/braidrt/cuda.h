/*===- braidrt/cuda.h - The CUDA runtime's C interface -----------*- C -*-===*\
|*                                                                            *|
|* libbraidrt_cuda: what the CUDA target's compiled programs and hosts call.  *|
|* It sits on libbraidrt (MPI, ranks, braidrt_fail) and adds the CUDA driver  *|
|* (loaded at run time, so a machine without a driver gets a message, not a   *|
|* loader error), cuBLASLt and NCCL. Every CUDA, cuBLASLt or NCCL error is    *|
|* reported as "braidrt: rank R: error: CALL failed at FILE:LINE: NAME:       *|
|* TEXT" through braidrt_fail, which aborts the whole MPI job: every rank     *|
|* ends non-zero and none hangs.                                              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef BRAIDRT_CUDA_H
#define BRAIDRT_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The device this rank uses, initializing CUDA on first use: the local
 * rank (from the MPI launcher's environment, OMPI_COMM_WORLD_LOCAL_RANK or
 * MPI_LOCALRANKID, so it works before MPI_Init) modulo the device count. */
int braidrt_cuda_device(void);

/* Managed memory (host and device see the same address), 256-byte aligned
 * as every kernel's 16-byte row loads require; never NULL. A freed buffer
 * is kept and handed out again to an allocation of a close size, unless a
 * started collective is outstanding or BRAIDRT_CUDA_CACHING=0; freeing a
 * pointer this function did not give, or one already freed, fails the job. */
void *braidrt_cuda_alloc(size_t bytes);
void braidrt_cuda_free(void *pointer);

/* How many allocations a cached block served. */
int64_t braidrt_cuda_reused_blocks(void);

/* Reads and clears every loaded kernel module's error record
 * (`braid_error`: code, operand, operand; braid-gpu-error-records) and
 * fails the job with the CPU runtime's message for the first one set.
 * mgpuStreamSynchronize calls it after each kernel. */
void braidrt_cuda_check_kernel_errors(void);

/* The NCCL communicator over MPI_COMM_WORLD (rank 0 makes the unique id,
 * MPI broadcasts it), made on first use after braidrt_init. Its creation
 * is non-blocking and polled: past BRAIDRT_TIMEOUT_S (default 300 s) it is
 * aborted (ncclCommAbort) and the job fails instead of hanging. */
void *braidrt_cuda_nccl_comm(void);
void braidrt_cuda_nccl_finalize(void);

/* Collectives over every rank on the runtime's communication stream, f32,
 * completed before they return. */
void braidrt_cuda_all_reduce_f32(const float *input, float *output,
                                 int64_t count);
void braidrt_cuda_reduce_scatter_f32(const float *input, float *output,
                                     int64_t count_per_rank);
void braidrt_cuda_all_gather_f32(const float *input, float *output,
                                 int64_t count_per_rank);
/* Uneven all_to_all as grouped ncclSend/ncclRecv: send_counts[r] elements
 * go to rank r, recv_counts[r] come from it, packed in rank order. */
void braidrt_cuda_all_to_all_f32(const float *input, const int64_t *send_counts,
                                 float *output, const int64_t *recv_counts);

/* What code braid-lower-collectives-to-nccl generates calls around its
 * ncclAllReduce / ncclReduceScatter / ncclAllGather calls. */

/* The communicator of this rank's group: groups of `group_size` ranks,
 * consecutive (stride 1) or `stride` apart ([[0, s, ..], [1, s + 1, ..],
 * ..], within blocks of s * group_size ranks), split from the world's
 * communicator (ncclCommSplit) on first use of the shape and kept; every
 * rank joins its block's. Every rank calls it at the same point (the split
 * is collective); a rank in none of this collective's groups (`member` 0)
 * gets NULL. */
void *braidrt_cuda_comm(int64_t group_size, int64_t stride, int32_t member);
/* Fails the job: a rank in no group of a reduce_scatter or all_gather,
 * whose input and output differ in size, cannot keep its input. */
void braidrt_cuda_no_group_error(int64_t group_size, int32_t member);
/* The stream collectives run on. */
void *braidrt_cuda_comm_stream(void);
/* Checks an NCCL call's result (`call` names it: 0 ncclAllReduce, 1
 * ncclReduceScatter, 2 ncclAllGather, 3 an exchange's grouped
 * ncclSend/ncclRecv) and waits, bounded by the timeout,
 * until the non-blocking communicator has taken it. */
void braidrt_cuda_nccl_result(int32_t result, void *comm, int32_t call);
/* Waits for everything issued on `stream` (a blocking collective). */
void braidrt_cuda_stream_wait(void *stream);
/* A started collective: an event recorded on `stream`, as a handle. */
int64_t braidrt_cuda_record_event(void *stream);
/* Waits for a started collective's event, then releases it; 0 (a rank in
 * no group, which copied its input) returns at once. */
void braidrt_cuda_wait_event(int64_t handle);

/* output[b, o] = act(sum_i input[b, i] * weight[o, i] + bias[o]) through
 * cuBLASLt with a fused bias (and relu) epilogue; sigmoid (activation 2)
 * is applied by the caller's kernel. Row-major, f32. */
void braidrt_cuda_linear_f32(const float *input, const float *weight,
                             const float *bias, float *output, int64_t batch,
                             int64_t in_features, int64_t out_features,
                             int32_t activation);

/* The dense layer's gradient GEMMs, as the CPU runtime's
 * braidrt_linear_grad_gemms_f32: from the pre-activation gradient g
 * [batch, out], input_grad = g weight and weight_grad = g^T input on
 * cuBLASLt, those of `parts` (braidrt_grad_parts). Row-major, f32; every
 * pointer in managed or device memory. */
void braidrt_cuda_linear_grad_gemms_f32(const float *input,
                                        const float *weight,
                                        const float *pre_activation_grad,
                                        float *input_grad, float *weight_grad,
                                        int64_t batch, int64_t in_features,
                                        int64_t out_features, int32_t parts);

#ifdef __cplusplus
}
#endif

#endif /* BRAIDRT_CUDA_H */
