"""Shared fixtures: where the Braid tools are, and how to run them."""
import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def tool(name):
    build = os.environ.get("BRAID_BUILD_DIR", "build")
    path = pathlib.Path(build)
    if not path.is_absolute():
        path = ROOT / path
    return str(path / "bin" / name)


@pytest.fixture
def run_tool():
    def run(name, *args, check=True):
        proc = subprocess.run([tool(name), *map(str, args)], capture_output=True, text=True)
        if check and proc.returncode != 0:
            raise AssertionError(f"{name} {' '.join(map(str, args))} failed:\n{proc.stderr}")
        return proc
    return run


@pytest.fixture
def compile_and_dump(run_tool, tmp_path):
    """Imports a spec, runs the reference semantics with --dump, returns (spec, dump dir)."""
    def go(spec, seed=0):
        spec_path = tmp_path / "model.json"
        spec_path.write_text(json.dumps(spec))
        mlir = tmp_path / "model.mlir"
        run_tool("braid-translate", "--import-model-json", spec_path, "-o", mlir)
        dump = tmp_path / f"dump{seed}"
        run_tool("braid-run", mlir, "--reference", "--seed", seed, "--dump", dump)
        return dump
    return go


@pytest.fixture(scope="session")
def braid():
    """The Python package `braid` of the build under test
    (BRAID_BUILD_DIR/python). Where the build has no Python extension the
    tests skip, unless BRAID_REQUIRE_PYTHON=1 (scripts/test.sh sets it for
    the main build) makes that a failure."""
    import importlib
    import sys
    build = pathlib.Path(os.environ.get("BRAID_BUILD_DIR", "build"))
    if not build.is_absolute():
        build = ROOT / build
    package = build / "python"
    if not list((package / "braid").glob("_braid*.so")):
        message = f"{build} was built without the Python package (no {package}/braid/_braid*.so)"
        if os.environ.get("BRAID_REQUIRE_PYTHON") == "1":
            pytest.fail(message)
        pytest.skip(message)
    sys.path.insert(0, str(package))
    os.environ["BRAID_BUILD_DIR"] = str(build)
    return importlib.import_module("braid")
