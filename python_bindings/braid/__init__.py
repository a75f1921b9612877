"""Braid from Python: build, compile, inspect, plot, run and train models.

    import braid
    art = braid.compile(braid.load_model("examples/dlrm_small.json"), cluster="dgx-h100")
    print(art.plan_table())

`braid.compile` runs braid-compile's registered pipelines through the C API
(include/braid-c/Braid.h); `Artifact.run` and `Artifact.train` launch
`braid-run` on the CPU backend's ranks. Errors are `braid.Error`, carrying
the compiler's located messages. See docs/python.md.
"""
from ._native import Error
from .model import Model, load_model
from .compiler import Artifact, compile
from . import plot, sim
from .torchrec_bridge import from_torchrec

__all__ = ["Error", "Model", "load_model", "Artifact", "compile", "sim", "plot",
           "from_torchrec"]
