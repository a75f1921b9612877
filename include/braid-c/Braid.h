/*===-- braid-c/Braid.h - C API of the Braid compiler -------------*- C -*-===*\
|*                                                                            *|
|* The C API through which other languages (the Python package `braid`)      *|
|* drive Braid: the dialect's registration, the registered passes and        *|
|* pipelines, braid-compile's compile path and the collective model. It      *|
|* follows MLIR's C API: strings in are MlirStringRef, strings out go to an  *|
|* MlirStringCallback, and a call that fails returns a failed                *|
|* MlirLogicalResult after sending its located messages to the error         *|
|* callback. Nothing here aborts on bad input.                               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef BRAID_C_BRAID_H
#define BRAID_C_BRAID_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Braid, braid);

/* Registers Braid's passes and pipelines (braid-compile, braid-shard,
 * braid-co-optimize, braid-lower-cpu, every pass) and the upstream
 * transforms they use, once; later calls do nothing. */
MLIR_CAPI_EXPORTED void braidRegisterAllPasses(void);

/* Compiles a model exactly as braid-compile does. `request` is a JSON
 * object: {"model": PATH, "out": DIR, "cluster": ..., "nodes": N,
 * "ranks_per_node": R, "planner": ..., "force_sharding": ..., "plan": PATH,
 * "opt_level": L, "force_co_optimization": B, "train": B, "target":
 * "none"|"cpu"|"cuda", "target_cpu": ..., "cuda_chips": ["sm_80", ...],
 * "max_table_rows": N}; every key but
 * "model" and "out" is optional, with braid-compile's defaults. The printed
 * plan report goes to `report`; errors go to `errors`. */
MLIR_CAPI_EXPORTED MlirLogicalResult
braidCompile(MlirStringRef request, MlirStringCallback report,
             MlirStringCallback errors, void *userData);

/* braid-sim collective: the predicted time of one collective. `kind` is
 * all_reduce, all_gather, reduce_scatter, all_to_all or broadcast;
 * `ranks` and `nodes` 0 take the hardware's. `hardware` is a preset name,
 * local-cpu or a hardware JSON file. Sends a JSON object {"time_us",
 * "algbw_GBps", "busbw_GBps", "algorithm"} to `result`. */
MLIR_CAPI_EXPORTED MlirLogicalResult
braidSimulateCollective(MlirStringRef kind, double bytes, int64_t ranks,
                        int64_t nodes, MlirStringRef hardware,
                        MlirStringCallback result, MlirStringCallback errors,
                        void *userData);

/* Imports a model spec (JSON text, docs/model-spec.md) into the global
 * Braid program and sends it, printed, to `output`. `fileName` names the
 * spec in messages. */
MLIR_CAPI_EXPORTED MlirLogicalResult
braidImportModel(MlirStringRef json, MlirStringRef fileName,
                 MlirStringCallback output, MlirStringCallback errors,
                 void *userData);

/* Parses `module` (MLIR text), runs the textual pass pipeline `pipeline`
 * (e.g. "builtin.module(braid-co-optimize{opt-level=2})") on it and sends
 * the printed result to `output`. */
MLIR_CAPI_EXPORTED MlirLogicalResult
braidRunPipeline(MlirStringRef module, MlirStringRef pipeline,
                 MlirStringCallback output, MlirStringCallback errors,
                 void *userData);

#ifdef __cplusplus
}
#endif

#endif /* BRAID_C_BRAID_H */
