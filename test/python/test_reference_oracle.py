"""The reference semantics against independent NumPy and PyTorch DLRMs."""
import copy
import json

import numpy as np
import pytest

from conftest import ROOT
from dlrm_numpy import forward

SMALL = json.loads((ROOT / "examples" / "dlrm_small.json").read_text())


def loaders(dump):
    return (lambda name: np.load(dump / "inputs" / f"{name}.npy"),
            lambda name: np.load(dump / "weights" / f"{name}.npy"))


def relative_error(actual, expected):
    return np.max(np.abs(actual - expected)) / max(np.max(np.abs(expected)), 1e-30)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dlrm_small_matches_numpy(compile_and_dump, seed):
    dump = compile_and_dump(SMALL, seed)
    expected = forward(SMALL, *loaders(dump))
    output = np.load(dump / "output.npy")
    assert output.shape == (SMALL["batch_size"], 1) and output.dtype == np.float32
    assert relative_error(output, expected) <= 1e-5


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_cat_interaction_and_pooling_modes_match_numpy(compile_and_dump, mode):
    spec = copy.deepcopy(SMALL)
    spec["interaction"] = "cat"
    spec["batch_size"] = 16
    for table in spec["tables"]:
        table["pooling"] = mode
        table["pooling_factor"] = 4
    spec["tables"][1]["embedding_dim"] = 24  # cat allows different dims
    dump = compile_and_dump(spec, seed=5)
    expected = forward(spec, *loaders(dump))
    assert relative_error(np.load(dump / "output.npy"), expected) <= 1e-5


def dcn_spec():
    spec = copy.deepcopy(SMALL)
    spec.update(interaction="dcn", dcn_num_layers=3, dcn_low_rank_dim=5, batch_size=12)
    spec["tables"][1]["embedding_dim"] = 24  # cat allows different dims
    return spec


def test_dcn_matches_numpy(compile_and_dump):
    spec = dcn_spec()
    dump = compile_and_dump(spec, seed=6)
    expected = forward(spec, *loaders(dump))
    assert relative_error(np.load(dump / "output.npy"), expected) <= 1e-5


def test_generated_bags_follow_pooling_factor(compile_and_dump):
    spec = copy.deepcopy(SMALL)
    spec["batch_size"] = 512
    dump = compile_and_dump(spec, seed=3)
    load_input, _ = loaders(dump)
    for table in spec["tables"]:
        offsets = load_input(table["name"] + ".offsets")
        indices = load_input(table["name"] + ".indices")
        assert offsets[0] == 0 and offsets[-1] == len(indices)
        assert np.all(np.diff(offsets) >= 0)
        assert np.all((indices >= 0) & (indices < table["num_embeddings"]))
        mean_bag = len(indices) / spec["batch_size"]
        assert abs(mean_bag - table["pooling_factor"]) <= 0.25 * table["pooling_factor"] + 0.1


def test_rerun_from_dump_is_bit_identical(run_tool, compile_and_dump, tmp_path):
    dump = compile_and_dump(SMALL, seed=9)
    again = tmp_path / "again"
    run_tool("braid-run", tmp_path / "model.mlir", "--reference",
             "--inputs", dump / "inputs", "--weights", dump / "weights", "--dump", again)
    assert np.array_equal(np.load(dump / "output.npy"), np.load(again / "output.npy"))


def test_matches_pytorch(compile_and_dump):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (python3 -c 'import torch' fails)")
    spec = copy.deepcopy(SMALL)
    for table in spec["tables"]:
        table.pop("dtype", None)  # torch.nn.EmbeddingBag in f32
    dump = compile_and_dump(spec, seed=4)
    load_input, load_weight = loaders(dump)
    t = lambda a: torch.from_numpy(np.ascontiguousarray(a))
    with torch.no_grad():
        x = t(load_input("dense"))
        for i in range(len(spec["bottom_mlp"])):
            x = torch.relu(torch.nn.functional.linear(
                x, t(load_weight(f"bottom_mlp.{i}.weight")), t(load_weight(f"bottom_mlp.{i}.bias"))))
        embeddings = []
        for table in spec["tables"]:
            bag = torch.nn.EmbeddingBag.from_pretrained(
                t(load_weight(table["name"])), mode=table["pooling"], include_last_offset=True)
            embeddings.append(bag(t(load_input(table["name"] + ".indices")),
                                  t(load_input(table["name"] + ".offsets"))))
        stacked = torch.stack([x] + embeddings, dim=1)
        gram = torch.bmm(stacked, stacked.transpose(1, 2))
        li, lj = torch.tril_indices(len(embeddings) + 1, len(embeddings) + 1, offset=-1)
        z = torch.cat([x, gram[:, li, lj]], dim=1)
        for i in range(len(spec["top_mlp"])):
            z = torch.nn.functional.linear(z, t(load_weight(f"top_mlp.{i}.weight")),
                                           t(load_weight(f"top_mlp.{i}.bias")))
            z = torch.sigmoid(z) if i == len(spec["top_mlp"]) - 1 else torch.relu(z)
    assert relative_error(np.load(dump / "output.npy"), z.numpy().astype(np.float64)) <= 1e-4


@pytest.fixture
def compile_cpu(run_tool, tmp_path):
    """Compiles the spec of the last compile_and_dump with --target cpu and
    runs the artifact natively on the dumped inputs and weights."""
    def go(dump, ranks=1, sharding="data_parallel"):
        out = tmp_path / f"cpu{ranks}"
        run_tool("braid-compile", tmp_path / "model.json", "--cluster", "dgx-h100",
                 "--nodes", 1, "--ranks-per-node", ranks, "--force-sharding", sharding,
                 "--target", "cpu", "-o", out)
        run_tool("braid-run", out, "--inputs", dump / "inputs", "--weights", dump / "weights",
                 "--dump", out / "run")
        return np.load(out / "run" / "output.npy")
    return go


@pytest.mark.parametrize("ranks", [1, 3])
def test_compiled_cpu_matches_numpy(compile_and_dump, compile_cpu, ranks):
    dump = compile_and_dump(SMALL, seed=7)
    expected = forward(SMALL, *loaders(dump))
    output = compile_cpu(dump, ranks)
    assert output.shape == (SMALL["batch_size"], 1)
    assert relative_error(output, expected) <= 1e-5


@pytest.mark.parametrize("ranks,sharding", [(1, "table_wise"), (3, "data_parallel")])
def test_compiled_cpu_dcn_matches_numpy(compile_and_dump, compile_cpu, ranks, sharding):
    spec = dcn_spec()
    dump = compile_and_dump(spec, seed=11)
    expected = forward(spec, *loaders(dump))
    assert relative_error(compile_cpu(dump, ranks, sharding), expected) <= 1e-5


def test_compiled_cpu_matches_pytorch(compile_and_dump, compile_cpu):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (python3 -c 'import torch' fails)")
    spec = copy.deepcopy(SMALL)
    spec["interaction"] = "cat"
    for table in spec["tables"]:
        table.pop("dtype", None)  # torch.nn.EmbeddingBag in f32
    dump = compile_and_dump(spec, seed=8)
    load_input, load_weight = loaders(dump)
    t = lambda a: torch.from_numpy(np.ascontiguousarray(a)).float()
    with torch.no_grad():
        x = t(load_input("dense"))
        for i in range(len(spec["bottom_mlp"])):
            x = torch.relu(torch.nn.functional.linear(
                x, t(load_weight(f"bottom_mlp.{i}.weight")), t(load_weight(f"bottom_mlp.{i}.bias"))))
        parts = [x]
        for table in spec["tables"]:
            bag = torch.nn.EmbeddingBag.from_pretrained(
                t(load_weight(table["name"])), mode=table["pooling"], include_last_offset=True)
            parts.append(bag(torch.from_numpy(load_input(table["name"] + ".indices")),
                             torch.from_numpy(load_input(table["name"] + ".offsets"))))
        z = torch.cat(parts, dim=1)
        for i in range(len(spec["top_mlp"])):
            z = torch.nn.functional.linear(z, t(load_weight(f"top_mlp.{i}.weight")),
                                           t(load_weight(f"top_mlp.{i}.bias")))
            z = torch.sigmoid(z) if i == len(spec["top_mlp"]) - 1 else torch.relu(z)
    assert relative_error(compile_cpu(dump), z.numpy().astype(np.float64)) <= 1e-4
