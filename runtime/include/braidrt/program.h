/*===- program.h - Loading and calling compiled Braid programs ---*- C -*-===*\
|*                                                                            *|
|* A `braid-compile --target cpu` artifact is a shared library that         *|
|* describes itself: the NUL-terminated JSON string `braid_manifest` inside *|
|* it names the entry point, every argument (inputs, parameters and table   *|
|* slices, with names, element types and shapes), the results, the ranks,   *|
|* each rank's slice of every table and the global program's signature.     *|
|* These functions load such a library, stage arguments and call it; a      *|
|* host needs neither MLIR nor the artifact's other files.                  *|
|*                                                                            *|
|* Unlike the collectives of braidrt.h, these functions return errors: a    *|
|* NULL or -1 result, with the message in braidrt_program_last_error().     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef BRAIDRT_PROGRAM_H
#define BRAIDRT_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct braidrt_program braidrt_program;

/* An argument or result: `kind` is "input", "param" or "table", and for a
 * training step "state" (a parameter's optimizer state) or "table_state"
 * (a table's optimizer state, sliced like the table: [rows] or [rows,
 * cols]); a training step's results are "output" (the loss), "param" and
 * "state", named like the arguments they update (empty for a forward
 * program's results); `dtype` is "f32", "f64", "f16", "bf16", "i32", "i64" or
 * "index"; `shape` has `rank` sizes, -1 where dynamic. The strings and
 * the shape live as long as the program. */
typedef struct {
  const char *name;
  const char *kind;
  const char *dtype;
  int64_t rank;
  const int64_t *shape;
} braidrt_argument_info;

/* Rows [row_offset, row_offset + rows) and columns [col_offset,
 * col_offset + cols) of a table that a rank passes. */
typedef struct {
  int64_t row_offset, rows, col_offset, cols;
} braidrt_table_slice;

/* A result of the last call, row-major or strided as the program wrote it:
 * element (i0, ..., in) is at data + (offset + sum_d i_d * strides[d]) *
 * element size. Valid until the next call or braidrt_program_free. */
typedef struct {
  const void *data;
  const char *dtype;
  int64_t rank;
  int64_t offset;
  const int64_t *shape;
  const int64_t *strides;
} braidrt_tensor_view;

/* The message of this thread's last failed braidrt_program_* call. */
const char *braidrt_program_last_error(void);

/* An artifact's library carries a content hash, so that a truncated or
 * modified library is refused before it is mapped and run: the 16 bytes
 * BRAIDRT_HASH_MAGIC followed by 8 bytes, the FNV-1a hash of the whole file
 * with those 8 bytes taken as zero. A compiler emits the magic and 8 zero
 * bytes as an exported constant; braidrt_program_seal writes the hash into
 * the linked library. */
#define BRAIDRT_HASH_MAGIC "\x7f" "BRAID-HASH-v1\n"
int braidrt_program_seal(const char *library_path);

/* Loads `dir`/libprogram.so, after checking its size and content hash, and
 * checks its manifest. */
braidrt_program *braidrt_program_load(const char *dir);
void braidrt_program_free(braidrt_program *program);

/* The manifest's JSON text. */
const char *braidrt_program_manifest(const braidrt_program *program);
int64_t braidrt_program_ranks(const braidrt_program *program);
/* 1 when the ranks exchange data (one process per rank, under mpirun). */
int braidrt_program_has_exchanges(const braidrt_program *program);
/* Samples of the global batch each rank takes, `ranks` entries. */
const int64_t *braidrt_program_batch_split(const braidrt_program *program);

int64_t braidrt_program_num_arguments(const braidrt_program *program);
int braidrt_program_argument(const braidrt_program *program, int64_t index,
                             braidrt_argument_info *info);
/* The slice of table (or table state) argument `index` that `rank`
 * passes. */
int braidrt_program_table_slice(const braidrt_program *program, int64_t index,
                                int64_t rank, braidrt_table_slice *slice);
int64_t braidrt_program_num_results(const braidrt_program *program);
int braidrt_program_result_info(const braidrt_program *program, int64_t index,
                                braidrt_argument_info *info);

/* Storage for argument `index` with the given sizes (checked against the
 * manifest's shape), in the argument's element type, row-major, owned by
 * the program: fill it before calling. Staging an argument again replaces
 * its storage. */
void *braidrt_program_stage(braidrt_program *program, int64_t index,
                            const int64_t *shape, int64_t rank);

/* Calls the program on the staged arguments (every argument must be
 * staged); `milliseconds`, when not NULL, receives the call's wall time. */
int braidrt_program_call(braidrt_program *program, double *milliseconds);

/* Result `index` of the last call. */
int braidrt_program_result(const braidrt_program *program, int64_t index,
                           braidrt_tensor_view *view);

#ifdef __cplusplus
}
#endif

#endif /* BRAIDRT_PROGRAM_H */
