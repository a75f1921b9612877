"""The simulator's figures, as braid-sim prints them."""
import json
import numbers

from . import _native


def collective(kind, bytes, ranks=0, nodes=0, hardware="dgx-h100"):
    """The predicted time of one collective (braid-sim collective).

    kind: all_reduce, all_gather, reduce_scatter, all_to_all or broadcast;
    bytes: the buffer size (nccl-tests' convention); ranks and nodes: 0 takes
    the hardware's; hardware: a preset, local-cpu or a hardware JSON file.
    Returns {"time_us", "algbw_GBps", "busbw_GBps", "algorithm"}."""
    if not isinstance(bytes, numbers.Real) or isinstance(bytes, bool):
        raise _native.Error(f"bytes must be a number, not {type(bytes).__name__}")
    try:
        bytes = float(bytes)
    except OverflowError:
        raise _native.Error(f"bytes must be a finite number, got {bytes!r}") from None
    for name, value in (("ranks", ranks), ("nodes", nodes)):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 0:
            raise _native.Error(f"{name} must be a non-negative integer, got {value!r}")
        # The native call takes a 64-bit integer; the model bounds ranks far
        # below that.
        if value >= 1 << 62:
            raise _native.Error(f"{name} must be below 2^62, got {value!r}")
    text = _native.call(_native.native().simulate_collective, str(kind), float(bytes),
                        int(ranks), int(nodes), str(hardware))
    return json.loads(text)
