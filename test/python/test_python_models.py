"""braid.load_model and braid.from_torchrec: building models from Python,
and the exceptions bad models and options raise."""
import copy
import json
import pathlib

import pytest

from conftest import ROOT

SMALL = json.loads((ROOT / "examples" / "dlrm_small.json").read_text())


def test_load_model_from_a_file_a_dict_and_mlir(braid, tmp_path):
    from_file = braid.load_model(ROOT / "examples" / "dlrm_small.json")
    from_dict = braid.load_model(SMALL)
    assert from_file.name == from_dict.name == "dlrm_small"
    assert [t["name"] for t in from_dict.tables] == ["user_id", "item_history", "category", "region"]
    # The spec is imported at once: the global program has every table.
    assert from_dict.mlir == from_file.mlir
    for table in ("user_id", "item_history", "category", "region"):
        assert f"sym_name = \"{table}\"" in from_dict.mlir or f"@{table}" in from_dict.mlir
    mlir = tmp_path / "model.mlir"
    mlir.write_text(from_dict.mlir)
    assert braid.load_model(mlir).path == str(mlir.resolve())


def test_a_bad_spec_raises_a_located_error(braid):
    spec = copy.deepcopy(SMALL)
    del spec["batch_size"]
    spec["tables"][0]["embedding_dim"] = -4
    with pytest.raises(braid.Error) as error:
        braid.load_model(spec)
    assert "<model spec>:1:1: error: model spec: batch_size: missing required field" in \
        str(error.value)
    spec["batch_size"] = 8
    with pytest.raises(braid.Error, match=r"tables\[0\]\.embedding_dim"):
        braid.load_model(spec)


@pytest.mark.parametrize("bad, expected", [
    ("no/such/model.json", "no model file"),
    (42, "takes a spec dict or a path"),
    ({"name": float("nan")}, "error"),
])
def test_bad_model_arguments_raise(braid, bad, expected):
    with pytest.raises(braid.Error, match=expected):
        braid.load_model(bad)


def test_a_file_that_is_not_json_raises(braid, tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("{\"name\": ")
    with pytest.raises(braid.Error, match="cannot read a JSON model spec"):
        braid.load_model(path)


def test_from_torchrec_with_duck_typed_configs(braid):
    tables = [
        {"name": "user_id", "num_embeddings": 1000, "embedding_dim": 16, "pooling": "SUM"},
        {"name": "history", "num_embeddings": 500, "embedding_dim": 16, "pooling": "mean",
         "data_type": "fp16"},
    ]
    model = braid.from_torchrec(tables, batch_size=32, dense_features=13,
                                bottom_mlp=[32, 16], top_mlp=[32, 1],
                                pooling_factors={"history": 8})
    assert model.spec["tables"][0] == {"name": "user_id", "num_embeddings": 1000,
                                       "embedding_dim": 16, "pooling_factor": 1,
                                       "pooling": "sum"}
    assert model.spec["tables"][1]["pooling_factor"] == 8
    assert model.spec["tables"][1]["dtype"] == "f16"
    assert "tensor<500x16xf16>" in model.mlir


def test_from_torchrec_rejects_what_braid_cannot_model(braid):
    with pytest.raises(braid.Error, match="pooling 'median'"):
        braid.from_torchrec([{"name": "t", "num_embeddings": 10, "embedding_dim": 4,
                              "pooling": "median"}], 8, 4, [8], [1])
    with pytest.raises(braid.Error, match="data type 'int8'"):
        braid.from_torchrec([{"name": "t", "num_embeddings": 10, "embedding_dim": 4,
                              "data_type": "int8"}], 8, 4, [8], [1])


@pytest.mark.parametrize("options, expected", [
    ({"nodes": 0}, "nodes must be between 1 and 1024, got 0"),
    ({"nodes": "two"}, "nodes must be an integer"),
    ({"opt_level": 3}, "opt_level must be between 0 and 2"),
    ({"target": "tpu"}, "target must be one of none, cpu, cuda"),
    ({"target": "cuda", "cuda_chips": "sm_90"}, "cuda_chips must be a list"),
    ({"target": "cuda", "cuda_chips": ["volta"]}, "unknown --cuda-chips entry 'volta'"),
    ({"force_sharding": "diagonal"}, "force_sharding must be one of"),
    ({"cluster": "no-such-cluster"}, "'no-such-cluster' is neither a preset"),
    ({"plan": "no/such/plan.json"}, "no plan file"),
    ({"plan": {"tables": [{"name": "nope"}]}}, "the model has no table 'nope'"),
])
def test_bad_options_raise_with_the_compilers_message(braid, tmp_path, options, expected):
    with pytest.raises(braid.Error, match=expected):
        braid.compile(SMALL, out=tmp_path / "out", **options)


def test_compile_for_cuda_writes_the_artifact_and_named_kernels(braid, tmp_path):
    """target="cuda" writes the CUDA artifact and its kernels (needs ptxas
    and the CUDA runtime in the build, not a GPU)."""
    import os
    import shutil
    ptxas = os.environ.get("BRAID_PTXAS") or shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    build = pathlib.Path(os.environ.get("BRAID_BUILD_DIR", ROOT / "build"))
    if not os.access(ptxas, os.X_OK) or not (build / "lib" / "libbraidrt_cuda.so").exists():
        pytest.skip("no ptxas or no CUDA runtime in this build")
    artifact = braid.compile(SMALL, cluster="dgx-h100", nodes=1, ranks_per_node=1,
                             target="cuda", out=tmp_path / "out")
    braid.compile(SMALL, cluster="dgx-h100", nodes=1, ranks_per_node=1, target="cuda",
                  cuda_chips=["sm_90"], out=tmp_path / "one")
    one = json.loads((tmp_path / "one" / "kernels" / "kernels.json").read_text())
    assert one["chips"] == ["sm_90"], one["chips"]
    kernels = json.loads((tmp_path / "out" / "kernels" / "kernels.json").read_text())
    names = {k["name"] for k in kernels["kernels"]}
    assert "embedding_bag_user_id" in names and "interaction_dot" in names, names
    assert {k["chip"] for k in kernels["kernels"]} == {"sm_80", "sm_90"}
    assert (tmp_path / "out" / "libprogram.so").exists()
    assert artifact is not None


def test_pip_installs_the_package_from_the_tree(braid, tmp_path):
    """pip installs the pure-Python package from python_bindings/; with
    BRAID_BUILD_DIR it finds the build's extension and tools."""
    import os
    import shutil
    import subprocess
    import sys
    source = tmp_path / "source"
    shutil.copytree(ROOT / "python_bindings", source,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                           "--no-build-isolation", "--target", str(tmp_path / "site"),
                           str(source)], capture_output=True, text=True)
    if done.returncode != 0 and "No module named" in done.stderr:
        pytest.skip(f"pip cannot build here: {done.stderr.strip()[-200:]}")
    assert done.returncode == 0, done.stderr
    check = subprocess.run(
        [sys.executable, "-c", "import braid; print(braid.__file__); "
         "print(braid.sim.collective('all_reduce', 4096, 8, 1)['time_us'] > 0)"],
        capture_output=True, text=True, cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(tmp_path / "site")))
    assert check.returncode == 0, check.stderr
    assert str(tmp_path / "site") in check.stdout and "True" in check.stdout


@pytest.mark.parametrize("change, expected", [
    (lambda s: s.update(batch_size=0), "batch_size"),
    (lambda s: s.update(batch_size=2**62), "batch_size"),
    (lambda s: s["tables"][0].update(num_embeddings=-1), "num_embeddings"),
    (lambda s: s["tables"][0].update(embedding_dim=2**40), "embedding_dim"),
    (lambda s: s["tables"][0].update(pooling_factor=float("inf")), "invalid JSON"),
    (lambda s: s["tables"][0].update(pooling_factor=-2), "pooling_factor"),
    (lambda s: s.update(bottom_mlp=[]), "bottom_mlp|bottom MLP"),
    (lambda s: s.update(interaction="cross"), "interaction"),
    (lambda s: s.update(tables=[]), "tables"),
])
def test_hostile_specs_raise_and_never_crash_the_interpreter(braid, tmp_path, change, expected):
    spec = copy.deepcopy(SMALL)
    change(spec)
    with pytest.raises(braid.Error, match=expected):
        braid.compile(spec, out=tmp_path / "out")


@pytest.mark.parametrize("plan, expected", [
    ({"tables": "all of them"}, "expected an object with a \\\\\"tables\\\\\" array|tables"),
    ({"tables": [{"name": "user_id", "sharding": "diagonal", "shards": []}]}, "sharding"),
    ({"tables": [{"name": "user_id", "sharding": "table_wise",
                  "shards": [{"rank": 99, "row_offset": 0, "rows": 1000, "col_offset": 0,
                              "cols": 16}]}]}, "rank"),
    ({"tables": [{"name": "user_id", "sharding": "row_wise",
                  "shards": [{"rank": 0, "row_offset": 0, "rows": 10**12, "col_offset": 0,
                              "cols": 16}]}]}, "outside the table"),
])
def test_hostile_plans_raise(braid, tmp_path, plan, expected):
    with pytest.raises(braid.Error, match=expected):
        braid.compile(SMALL, ranks_per_node=2, plan=plan, out=tmp_path / "out")
