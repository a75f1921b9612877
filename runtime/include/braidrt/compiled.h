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

#ifdef __cplusplus
}
#endif

#endif /* BRAIDRT_COMPILED_H */
