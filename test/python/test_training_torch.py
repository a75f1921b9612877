"""The compiled training step (braid-compile --train --target cpu) on real
MPI ranks against PyTorch: after K steps on the same batches, the losses,
the dense weights and every table agree with torch autograd plus
torch.optim (SGD, Adagrad, Adam; FBGEMM's row-wise Adagrad written out,
since torch has none) to a relative error of 1e-4. Skipped where torch
does not import (scripts/install-torch.sh installs it)."""
import copy
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

from conftest import ROOT, tool

torch = pytest.importorskip("torch", reason="PyTorch is not installed (python3 -c 'import torch' fails)")

SMALL = json.loads((ROOT / "examples" / "dlrm_small.json").read_text())
STEPS = 4
BATCHES = 2


def spec_for(interaction, dense, embedding):
    spec = copy.deepcopy(SMALL)
    spec["batch_size"] = 12
    spec["interaction"] = interaction
    if interaction == "dcn":
        spec.update(dcn_num_layers=2, dcn_low_rank_dim=3)
    for table in spec["tables"]:
        table.pop("dtype", None)  # torch.nn.EmbeddingBag in f32
    spec["optimizer"] = {"dense": dense, "embedding": embedding}
    return spec


def load_dir(path):
    return {p.stem: np.load(p) for p in path.glob("*.npy")}


def rel(actual, expected):
    return float(np.max(np.abs(actual - expected)) / max(np.max(np.abs(expected)), 1e-30))


def dense_optimizer(params, opt):
    kind = opt["type"]
    if kind == "sgd":
        return torch.optim.SGD(params, lr=opt["lr"])
    if kind == "adagrad":
        return torch.optim.Adagrad(params, lr=opt["lr"], eps=opt.get("eps", 1e-10),
                                   initial_accumulator_value=0)
    return torch.optim.Adam(params, lr=opt["lr"], betas=(opt.get("beta1", 0.9), opt.get("beta2", 0.999)),
                            eps=opt.get("eps", 1e-8))


def update_tables(tables, opt, state):
    """The embedding optimizer on each row a batch read (its sparse
    gradient's rows, coalesced; for max pooling's dense gradient, the rows
    whose gradient is not zero)."""
    kind, lr = opt["type"], opt["lr"]
    with torch.no_grad():
        for name, table in tables.items():
            if table.grad.is_sparse:
                grad = table.grad.coalesce()
                rows, values = grad.indices()[0], grad.values()
            else:  # max pooling has no sparse gradient in torch
                rows = table.grad.abs().sum(1).nonzero()[:, 0]
                values = table.grad[rows]
            if kind == "sgd":
                table[rows] -= lr * values
            elif kind == "adagrad":
                s = state.setdefault(name, torch.zeros_like(table))
                s[rows] += values * values
                table[rows] -= lr * values / (s[rows].sqrt() + opt.get("eps", 1e-10))
            else:  # rowwise_adagrad, FBGEMM's formula
                s = state.setdefault(name, torch.zeros(table.shape[0], dtype=table.dtype))
                s[rows] += (values * values).mean(1)
                table[rows] -= lr * values / (s[rows].sqrt() + opt.get("eps", 1e-8))[:, None]
            table.grad = None


def train_torch(spec, batches, weights, steps):
    """torch autograd and torch.optim: the losses and the trained weights."""
    t = lambda a: torch.from_numpy(np.ascontiguousarray(a)).double()
    nb, nt = len(spec["bottom_mlp"]), len(spec["top_mlp"])
    params = {name: t(value).requires_grad_() for name, value in weights.items()
              if name not in {table["name"] for table in spec["tables"]}}
    tables = {table["name"]: t(weights[table["name"]]).requires_grad_() for table in spec["tables"]}
    optimizer = dense_optimizer(list(params.values()), spec["optimizer"]["dense"])
    state, losses = {}, []
    for step in range(steps):
        inputs, labels = batches[step % len(batches)]
        x = t(inputs["dense"])
        for i in range(nb):
            x = torch.relu(torch.nn.functional.linear(x, params[f"bottom_mlp.{i}.weight"],
                                                      params[f"bottom_mlp.{i}.bias"]))
        pooled = [torch.nn.functional.embedding_bag(
            torch.from_numpy(inputs[table["name"] + ".indices"]), tables[table["name"]],
            torch.from_numpy(inputs[table["name"] + ".offsets"]), mode=table["pooling"],
            sparse=table["pooling"] != "max", include_last_offset=True)
            for table in spec["tables"]]
        if spec["interaction"] == "dot":
            stacked = torch.stack([x] + pooled, dim=1)
            gram = torch.bmm(stacked, stacked.transpose(1, 2))
            li, lj = torch.tril_indices(len(pooled) + 1, len(pooled) + 1, offset=-1)
            z = torch.cat([x, gram[:, li, lj]], dim=1)
        else:
            z = torch.cat([x] + pooled, dim=1)
        if spec["interaction"] == "dcn":  # TorchRec's LowRankCrossNet
            x0 = z
            for l in range(spec["dcn_num_layers"]):
                low = torch.nn.functional.linear(z, params[f"dcn.{l}.V"])
                z = x0 * torch.nn.functional.linear(low, params[f"dcn.{l}.W"], params[f"dcn.{l}.bias"]) + z
        for i in range(nt):
            z = torch.nn.functional.linear(z, params[f"top_mlp.{i}.weight"], params[f"top_mlp.{i}.bias"])
            if i != nt - 1:
                z = torch.relu(z)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(z[:, 0], t(labels))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        update_tables(tables, spec["optimizer"]["embedding"], state)
        losses.append(loss.item())
    trained = {name: p.detach().numpy() for name, p in params.items()}
    trained.update({name: table.detach().numpy() for name, table in tables.items()})
    return np.array(losses), trained


@pytest.mark.parametrize("interaction,dense,embedding,sharding,ranks", [
    ("dot", {"type": "sgd", "lr": 0.1}, {"type": "sgd", "lr": 0.2}, "table_wise", 2),
    ("dot", {"type": "adagrad", "lr": 0.05}, {"type": "rowwise_adagrad", "lr": 0.1}, "row_wise", 2),
    ("dot", {"type": "adam", "lr": 0.01}, {"type": "adagrad", "lr": 0.05}, "column_wise", 2),
    ("cat", {"type": "adam", "lr": 0.01}, {"type": "rowwise_adagrad", "lr": 0.1}, "data_parallel", 2),
    ("dcn", {"type": "adagrad", "lr": 0.05}, {"type": "sgd", "lr": 0.3}, "table_row_wise", 2),
    ("dcn", {"type": "adam", "lr": 0.01, "beta1": 0.8}, {"type": "rowwise_adagrad", "lr": 0.1, "eps": 1e-6},
     "row_wise", 1),
])
def test_compiled_training_matches_pytorch(run_tool, tmp_path, interaction, dense, embedding,
                                           sharding, ranks):
    if ranks > 1 and not shutil.which("mpirun"):
        pytest.skip("mpirun is not installed")
    spec = spec_for(interaction, dense, embedding)
    (tmp_path / "model.json").write_text(json.dumps(spec))
    out = tmp_path / "out"
    run_tool("braid-compile", tmp_path / "model.json", "--cluster", "dgx-h100", "--nodes", 1,
             "--ranks-per-node", ranks, "--force-sharding", sharding, "--train", "--target", "cpu",
             "-o", out)
    # Two batches of seeded inputs with random labels, taken in turn.
    data = tmp_path / "data"
    batches = []
    for b in range(BATCHES):
        start = tmp_path / f"start{b}"
        run_tool("braid-run", out / "model.mlir", "--reference", "--seed", 3 + b, "--dump", start)
        labels = (np.random.default_rng(b).random(spec["batch_size"]) < 0.5).astype(np.float32)
        shutil.copytree(start / "inputs", data / f"batch_{b:04d}")
        np.save(data / f"batch_{b:04d}" / "labels.npy", labels)
        batches.append((load_dir(data / f"batch_{b:04d}"), labels))
    weights_dir = tmp_path / "start0" / "weights"
    trained_dir = tmp_path / "trained"
    command = [tool("braid-run"), out, "--steps", STEPS, "--inputs", data, "--weights", weights_dir,
               "--dump", trained_dir]
    if ranks > 1:
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
        command = ["mpirun", "-n", str(ranks)] + command
    else:
        env = None
    proc = subprocess.run(list(map(str, command)), capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr

    losses, weights = train_torch(spec, batches, load_dir(weights_dir), STEPS)
    braid_losses = np.load(trained_dir / "losses.npy")
    assert braid_losses.shape == (STEPS,)
    assert rel(braid_losses, losses) <= 1e-4
    braid_weights = load_dir(trained_dir / "weights")
    assert set(braid_weights) == set(weights)
    errors = {name: rel(braid_weights[name], expected) for name, expected in weights.items()}
    print(f"max relative error: losses {rel(braid_losses, losses):.2g}, "
          f"weights and tables {max(errors.values()):.2g}")
    for name, error in errors.items():
        assert error <= 1e-4, name
    # Training moved the weights: the comparison is not of two copies of
    # the start.
    start = load_dir(weights_dir)
    assert not np.allclose(braid_weights["top_mlp.0.weight"], start["top_mlp.0.weight"])
    assert not np.allclose(braid_weights["user_id"], start["user_id"])
