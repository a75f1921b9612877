"""Artifact.run_reference, Artifact.run and Artifact.train: values against
the NumPy oracle and the command line's."""
import json

import numpy as np
import pytest

from conftest import ROOT
from dlrm_numpy import forward

SMALL_PATH = ROOT / "examples" / "dlrm_small.json"
SMALL = json.loads(SMALL_PATH.read_text())


def relative_error(actual, expected):
    return np.max(np.abs(actual - expected)) / max(np.max(np.abs(expected)), 1e-30)


@pytest.fixture(scope="module")
def forward_artifact(braid, tmp_path_factory):
    return braid.compile(SMALL_PATH, ranks_per_node=2, target="cpu",
                         out=tmp_path_factory.mktemp("forward"))


@pytest.fixture(scope="module")
def train_artifact(braid, tmp_path_factory):
    return braid.compile(SMALL_PATH, ranks_per_node=2, target="cpu", train=True,
                         out=tmp_path_factory.mktemp("train"))


def test_reference_and_cpu_backend_match_numpy(forward_artifact):
    inputs, weights = forward_artifact.random_inputs(seed=3)
    expected = forward(SMALL, inputs.__getitem__, weights.__getitem__)
    reference = forward_artifact.run_reference(seed=3)
    assert reference.shape == (8, 1) and relative_error(reference, expected) <= 1e-5
    output = forward_artifact.run(inputs, weights, ranks=2)
    assert output.shape == (8, 1) and relative_error(output, expected) <= 1e-5


def test_a_short_training_run_matches_the_command_line(braid, train_artifact, run_tool,
                                                       tmp_path):
    inputs, weights = train_artifact.random_inputs(seed=1)
    losses, trained, state = train_artifact.train(3, inputs, weights, ranks=2)
    assert losses.shape == (3,) and np.all(np.isfinite(losses))
    assert set(trained) >= {"bottom_mlp.0.weight", "user_id"}
    assert "bottom_mlp.0.weight.sum" in state
    # The same batch and weights through mpirun braid-run by hand.
    for name, arrays in (("inputs", inputs), ("weights", weights)):
        (tmp_path / name).mkdir()
        for key, value in arrays.items():
            np.save(tmp_path / name / f"{key}.npy", value)
    import os
    import subprocess
    from conftest import tool
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    subprocess.run(["mpirun", "--oversubscribe", "-n", "2", tool("braid-run"),
                    str(train_artifact.dir), "--steps", "3", "--inputs", str(tmp_path / "inputs"),
                    "--weights", str(tmp_path / "weights"), "--dump", str(tmp_path / "cli")],
                   check=True, capture_output=True, env=env)
    np.testing.assert_array_equal(losses, np.load(tmp_path / "cli" / "losses.npy"))
    np.testing.assert_array_equal(trained["top_mlp.0.weight"],
                                  np.load(tmp_path / "cli" / "weights" / "top_mlp.0.weight.npy"))
    # Training lowers the loss on one batch.
    assert losses[-1] < losses[0]


def test_bad_arrays_and_runs_raise(braid, forward_artifact, train_artifact):
    inputs, weights = forward_artifact.random_inputs(seed=0)
    with pytest.raises(braid.Error, match="compiled for 2 ranks, not 3"):
        forward_artifact.run(inputs, weights, ranks=3)
    with pytest.raises(braid.Error, match="must be a numeric array"):
        forward_artifact.run(dict(inputs, dense=np.array(["a", "b"])), weights)
    with pytest.raises(braid.Error, match="is not a .npy name"):
        forward_artifact.run(dict(inputs, **{"a\0b": inputs["dense"]}), weights)
    with pytest.raises(braid.Error, match="dense"):
        forward_artifact.run(dict(inputs, dense=inputs["dense"][:, :5]), weights)
    with pytest.raises(braid.Error, match="needs inputs\\['labels'\\]"):
        train_artifact.train(2, inputs, weights)
    with pytest.raises(braid.Error, match="holds a training step"):
        train_artifact.run(inputs, weights)
    no_cpu = braid.compile(SMALL_PATH, ranks_per_node=2)
    with pytest.raises(braid.Error, match="needs a CPU artifact"):
        no_cpu.run(inputs, weights)


def test_any_array_layout_runs(forward_artifact):
    # Fortran order and big-endian values are written as braid-run reads
    # them, and give the same output.
    inputs, weights = forward_artifact.random_inputs(seed=4)
    expected = forward_artifact.run(inputs, weights, ranks=2)
    inputs = dict(inputs, dense=np.asfortranarray(inputs["dense"]))
    weights = {name: value.astype(value.dtype.newbyteorder(">")) for name, value in weights.items()}
    assert np.array_equal(forward_artifact.run(inputs, weights, ranks=2), expected)


def test_a_folder_reused_for_another_target_is_not_run(braid, tmp_path):
    # The CPU library an earlier compile left in the folder is not this
    # artifact's: run refuses it rather than running it.
    out = tmp_path / "out"
    braid.compile(SMALL_PATH, ranks_per_node=2, target="cpu", out=out)
    again = braid.compile(SMALL_PATH, ranks_per_node=2, target="none", out=out)
    inputs, weights = again.random_inputs(seed=0)
    with pytest.raises(braid.Error, match="needs a CPU artifact"):
        again.run(inputs, weights)


def test_a_failed_compile_leaves_no_folder(braid, tmp_path, monkeypatch):
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    # The native compile fails (an unknown cluster), after the folder is made.
    with pytest.raises(braid.Error, match="no-such-cluster"):
        braid.compile(SMALL_PATH, cluster="no-such-cluster", ranks_per_node=2)
    assert list(tmp_path.iterdir()) == []


def test_the_pipelined_form_trains_as_the_plain_step(braid, tmp_path):
    # A model whose tables are sharded over 2 nodes has an input
    # distribution (routing, index exchanges) the simulator pipelines; its
    # compiled pipelined form trains bit for bit as the plain step. (Train
    # repeats its one batch, so every next batch is the same; the lit test
    # pipelined_compiled_exact.test trains over different batches.)
    template = (ROOT / "test" / "Training" / "Inputs" / "train_template.json").read_text()
    spec = json.loads(template.replace("DENSE", "adam").replace("EMBEDDING", "rowwise_adagrad")
                      .replace("INTERACTION", "dot"))
    artifact = braid.compile(spec, nodes=2, ranks_per_node=2, force_sharding="table_wise",
                             train=True, target="cpu", pipeline_input_dist=True,
                             out=tmp_path / "piped")
    assert artifact.pipelined
    inputs, weights = artifact.random_inputs(seed=2)
    plain = artifact.train(3, inputs, weights)
    piped = artifact.train(3, inputs, weights, pipelined=True)
    np.testing.assert_array_equal(piped[0], plain[0])
    for name in plain[1]:
        np.testing.assert_array_equal(piped[1][name], plain[1][name])
    for name in plain[2]:
        np.testing.assert_array_equal(piped[2][name], plain[2][name])
    # A forward artifact's form gives the plain forward pass's output.
    forward = braid.compile(spec, nodes=2, ranks_per_node=2, force_sharding="table_wise",
                            target="cpu", pipeline_input_dist=True, out=tmp_path / "forward")
    assert forward.pipelined
    inputs, weights = forward.random_inputs(seed=2)
    np.testing.assert_array_equal(forward.run(inputs, weights, pipelined=True),
                                  forward.run(inputs, weights))
    # Without the option there is no form to train with.
    again = braid.compile(spec, nodes=2, ranks_per_node=2, force_sharding="table_wise",
                          train=True, target="cpu", out=tmp_path / "plain")
    assert not again.pipelined
    with pytest.raises(braid.Error, match="no pipelined form"):
        again.train(1, inputs, weights, pipelined=True)


def test_exchange_precision_reaches_the_compiler(braid, tmp_path):
    # exchange_precision is braid-compile's --exchange-precision: forced,
    # the pooled rows and their gradients go in bf16; a bad type raises.
    template = (ROOT / "test" / "Training" / "Inputs" / "train_template.json").read_text()
    spec = json.loads(template.replace("DENSE", "sgd").replace("EMBEDDING", "sgd")
                      .replace("INTERACTION", "dot"))
    artifact = braid.compile(spec, nodes=2, ranks_per_node=2, force_sharding="table_wise",
                             train=True, force_co_optimization=True,
                             exchange_precision="bf16", out=tmp_path / "bf16")
    assert artifact.plan["co_optimization"]["train_step"]["half_precision_exchanges"] > 0
    with pytest.raises(braid.Error, match="exchange_precision must be"):
        braid.compile(spec, nodes=2, ranks_per_node=2, exchange_precision="f8",
                      out=tmp_path / "bad")
