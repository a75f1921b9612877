"""The reference semantics' training step against an independent NumPy
training step (dlrm_numpy_train.py): losses, trained weights and tables, for
every dense and embedding optimizer, every interaction and pooling mode."""
import copy
import json

import numpy as np
import pytest

from conftest import ROOT
from dlrm_numpy_train import train

SMALL = json.loads((ROOT / "examples" / "dlrm_small.json").read_text())
STEPS = 4


def spec_for(interaction, dense, embedding):
    spec = copy.deepcopy(SMALL)
    spec["batch_size"] = 12
    spec["interaction"] = "dot" if interaction == "dot" else interaction
    if interaction == "dcn":
        spec.update(dcn_num_layers=2, dcn_low_rank_dim=3)
    if interaction != "dot":
        spec["tables"][1]["embedding_dim"] = 12  # cat allows different dims
    for table in spec["tables"]:
        table.pop("dtype", None)  # f32 tables: NumPy rounds nothing
    spec["optimizer"] = {"dense": dense, "embedding": embedding}
    return spec


def load_dir(path):
    return {p.stem: np.load(p) for p in path.glob("*.npy")}


def rel(actual, expected):
    return np.max(np.abs(actual - expected)) / max(np.max(np.abs(expected)), 1e-30)


@pytest.mark.parametrize("interaction,dense,embedding", [
    ("dot", {"type": "sgd", "lr": 0.1}, {"type": "sgd", "lr": 0.2}),
    ("dot", {"type": "adagrad", "lr": 0.05}, {"type": "rowwise_adagrad", "lr": 0.1}),
    ("cat", {"type": "adam", "lr": 0.01}, {"type": "adagrad", "lr": 0.05}),
    ("dcn", {"type": "adam", "lr": 0.01, "beta1": 0.8}, {"type": "rowwise_adagrad", "lr": 0.1, "eps": 1e-6}),
    ("dcn", {"type": "adagrad", "lr": 0.05, "eps": 1e-8}, {"type": "sgd", "lr": 0.3}),
])
def test_training_matches_numpy(run_tool, tmp_path, interaction, dense, embedding):
    spec = spec_for(interaction, dense, embedding)
    (tmp_path / "model.json").write_text(json.dumps(spec))
    mlir = tmp_path / "model.mlir"
    run_tool("braid-translate", "--import-model-json", tmp_path / "model.json", "-o", mlir)
    start = tmp_path / "start"
    run_tool("braid-run", mlir, "--reference", "--seed", 3, "--dump", start)
    labels = (np.random.default_rng(0).random(spec["batch_size"]) < 0.5).astype(np.float32)
    np.save(start / "inputs" / "labels.npy", labels)
    trained = tmp_path / "trained"
    run_tool("braid-run", mlir, "--reference", "--steps", STEPS, "--inputs", start / "inputs",
             "--weights", start / "weights", "--dump", trained)

    losses, weights, _ = train(spec, load_dir(start / "inputs"), load_dir(start / "weights"),
                               labels, STEPS)
    braid_losses = np.load(trained / "losses.npy")
    assert braid_losses.shape == (STEPS,)
    assert rel(braid_losses, losses) <= 1e-4
    braid_weights = load_dir(trained / "weights")
    assert set(braid_weights) == set(weights)
    for name, expected in weights.items():
        assert rel(braid_weights[name], expected) <= 1e-4, name
        # Training moved every parameter that gets a gradient.
    assert not np.allclose(braid_weights["top_mlp.0.weight"], load_dir(start / "weights")["top_mlp.0.weight"])


def test_synthetic_signal_loss_falls(run_tool, tmp_path):
    """The synthetic click dataset draws a fresh batch per step with its
    clicks planted in the dense features: a signal the model learns, so
    the loss falls on batches it has not seen."""
    spec = spec_for("dot", {"type": "adagrad", "lr": 0.02}, {"type": "rowwise_adagrad", "lr": 0.02})
    spec["batch_size"] = 128
    (tmp_path / "model.json").write_text(json.dumps(spec))
    mlir = tmp_path / "model.mlir"
    run_tool("braid-translate", "--import-model-json", tmp_path / "model.json", "-o", mlir)
    out = run_tool("braid-run", mlir, "--reference", "--steps", 60, "--json").stdout
    losses = json.loads(out)["losses"]
    assert abs(losses[0] - np.log(2)) < 0.05  # a fresh model guesses 1/2
    assert np.mean(losses[-10:]) < 0.6 * losses[0]
