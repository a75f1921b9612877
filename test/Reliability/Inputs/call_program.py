"""Calls a braid-compile --target cpu artifact through the runtime's C API
(braidrt/program.h) with ctypes, bypassing braid-run's host-side checks, so
that a test reaches the checks compiled into the program itself.

usage: call_program.py LIBBRAIDRT OUT [NAME=[SHAPE:]JSON_LIST ...]
Inputs named on the command line are staged as 1-D tensors of their
dtype, or of SHAPE (sizes joined by x, e.g. 9x13; the values, then
zeros); other inputs and tables are staged as zeros with their static sizes
(dynamic sizes 0, tables rank 0's slice)."""

import ctypes
import json
import os
import sys


class ArgumentInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_char_p),
                ("dtype", ctypes.c_char_p), ("rank", ctypes.c_int64),
                ("shape", ctypes.POINTER(ctypes.c_int64))]


class TableSlice(ctypes.Structure):
    _fields_ = [("row_offset", ctypes.c_int64), ("rows", ctypes.c_int64),
                ("col_offset", ctypes.c_int64), ("cols", ctypes.c_int64)]


CTYPES = {"f32": ctypes.c_float, "f64": ctypes.c_double,
          "i64": ctypes.c_int64, "index": ctypes.c_int64,
          "i32": ctypes.c_int32, "f16": ctypes.c_uint16,
          "bf16": ctypes.c_uint16}


def main():
    runtime = ctypes.CDLL(sys.argv[1])
    runtime.braidrt_program_load.restype = ctypes.c_void_p
    runtime.braidrt_program_load.argtypes = [ctypes.c_char_p]
    runtime.braidrt_program_last_error.restype = ctypes.c_char_p
    runtime.braidrt_program_num_arguments.argtypes = [ctypes.c_void_p]
    runtime.braidrt_program_num_arguments.restype = ctypes.c_int64
    runtime.braidrt_program_argument.argtypes = [
        ctypes.c_void_p, ctypes.c_int64, ctypes.POINTER(ArgumentInfo)]
    runtime.braidrt_program_table_slice.argtypes = [
        ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
        ctypes.POINTER(TableSlice)]
    runtime.braidrt_program_stage.restype = ctypes.c_void_p
    runtime.braidrt_program_stage.argtypes = [
        ctypes.c_void_p, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64),
        ctypes.c_int64]
    runtime.braidrt_program_call.argtypes = [ctypes.c_void_p, ctypes.c_void_p]

    # Under mpirun with BRAID_CALL_INIT=1 the runtime joins the MPI job, as
    # braid-run does.
    if os.environ.get("BRAID_CALL_INIT") == "1":
        runtime.braidrt_init(None, None)
    program = runtime.braidrt_program_load(sys.argv[2].encode())
    if not program:
        sys.exit("load: " + runtime.braidrt_program_last_error().decode())
    given = dict(arg.split("=", 1) for arg in sys.argv[3:])
    for i in range(runtime.braidrt_program_num_arguments(program)):
        info = ArgumentInfo()
        runtime.braidrt_program_argument(program, i, ctypes.byref(info))
        name, dtype = info.name.decode(), info.dtype.decode()
        if info.kind == b"table":
            piece = TableSlice()
            runtime.braidrt_program_table_slice(program, i, 0,
                                                ctypes.byref(piece))
            shape, values = [piece.rows, piece.cols], []
        elif name in given:
            text = given[name]
            shape = None
            if not text.startswith("["):
                sizes_text, text = text.split(":", 1)
                shape = [int(size) for size in sizes_text.split("x")]
            values = json.loads(text)
            if shape is None:
                shape = [len(values)]
        else:
            shape = [max(info.shape[d], 0) for d in range(info.rank)]
            values = []
        sizes = (ctypes.c_int64 * len(shape))(*shape)
        data = runtime.braidrt_program_stage(program, i, sizes, len(shape))
        if not data:
            sys.exit("stage: " + runtime.braidrt_program_last_error().decode())
        count = 1
        for size in shape:
            count *= size
        array = (CTYPES[dtype] * count).from_address(data)
        for e in range(count):
            array[e] = values[e] if e < len(values) else 0
    if runtime.braidrt_program_call(program, None):
        sys.exit("call: " + runtime.braidrt_program_last_error().decode())
    print("called")


main()
