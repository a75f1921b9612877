"""The native extension and the tools beside it."""
import importlib.machinery
import importlib.util
import os
import pathlib
import shutil


class Error(Exception):
    """A Braid error: a bad model, option, plan or array, or a failed run.

    The message is the compiler's or the runtime's, located where it can be
    ("model.json:1:1: error: model spec: batch_size: ...")."""


Error.__module__ = "braid"


_HERE = pathlib.Path(__file__).resolve().parent


def _build_dir():
    """The Braid build this package belongs to: $BRAID_BUILD_DIR, else the
    build tree it was copied into (BUILD/python/braid)."""
    env = os.environ.get("BRAID_BUILD_DIR")
    if env:
        return pathlib.Path(env).resolve()
    return _HERE.parent.parent


def _load_extension():
    # Beside this file (the build tree), else in $BRAID_BUILD_DIR/python/braid
    # (a pip install from the source tree).
    for directory in (_HERE, _build_dir() / "python" / "braid"):
        for path in sorted(directory.glob("_braid*.so")):
            spec = importlib.util.spec_from_file_location(
                "braid._braid", path,
                loader=importlib.machinery.ExtensionFileLoader("braid._braid", str(path)))
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    return None


_extension = _load_extension()
# The native code looks for braid-calibrate beside the running program, which
# here is Python: point it at this build's tools.
os.environ.setdefault("BRAID_TOOLS_DIR", str(_build_dir() / "bin"))


def native():
    """The extension module, or Error saying how to get it."""
    if _extension is None:
        raise Error("braid's native extension (_braid) is not built: build Braid with "
                    "Python's headers and nanobind installed (bash scripts/build.sh), then "
                    "import braid from BUILD/python or set BRAID_BUILD_DIR")
    return _extension


def call(function, *args):
    """Calls a native function returning (ok, output, errors); raises Error."""
    ok, output, errors = function(*args)
    if not ok:
        raise Error(errors.strip() or "failed without a message")
    return output


def tool(name):
    """The path of a Braid tool: the build's bin/, else PATH."""
    path = _build_dir() / "bin" / name
    if path.exists():
        return str(path)
    found = shutil.which(name)
    if found:
        return found
    raise Error(f"cannot find the Braid tool '{name}' (looked in {path.parent} and on PATH)")
