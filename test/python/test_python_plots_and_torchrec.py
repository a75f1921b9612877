"""braid.plot's PNGs and the TorchRec bridge's round trip."""
import subprocess
import sys

import pytest

from conftest import ROOT

SMALL = ROOT / "examples" / "dlrm_small.json"
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def artifact(braid, tmp_path_factory):
    return braid.compile(SMALL, nodes=2, ranks_per_node=2, train=True,
                         out=tmp_path_factory.mktemp("plots"))


def test_plots_are_written_and_not_empty(braid, artifact, tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib is not installed")
    for path in (braid.plot.load(artifact, tmp_path / "load.png"),
                 braid.plot.timeline(artifact, tmp_path / "timeline.png"),
                 braid.plot.losses([[0.7, 0.6, 0.55], [0.7, 0.65, 0.6]], tmp_path / "losses.png",
                                   labels=["braid", "torch"])):
        data = path.read_bytes()
        assert data.startswith(PNG) and len(data) > 5000


def test_losses_takes_what_train_returns(braid, tmp_path):
    # Artifact.train returns the losses as one NumPy array.
    pytest.importorskip("matplotlib", reason="matplotlib is not installed")
    import numpy as np
    path = braid.plot.losses(np.array([0.7, 0.6, 0.55]), tmp_path / "one.png")
    assert path.read_bytes().startswith(PNG)


def test_python_m_braid_plot_writes_the_outputs_plots(braid, artifact):
    pytest.importorskip("matplotlib", reason="matplotlib is not installed")
    done = subprocess.run([sys.executable, "-m", "braid.plot", str(artifact.dir)],
                          capture_output=True, text=True,
                          env={"PYTHONPATH": str(braid.__file__.rsplit("/braid/", 1)[0]),
                               "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    for name in ("load.png", "timeline.png"):
        assert (artifact.dir / name).read_bytes().startswith(PNG)
    bad = subprocess.run([sys.executable, "-m", "braid.plot", str(artifact.dir / "nope")],
                         capture_output=True, text=True,
                         env={"PYTHONPATH": str(braid.__file__.rsplit("/braid/", 1)[0])})
    assert bad.returncode == 1 and "braid.plot: error:" in bad.stderr


def test_a_plan_round_trips_through_torchrec_form(braid, artifact, tmp_path):
    torchrec_plan = artifact.to_torchrec_plan()
    plan = getattr(torchrec_plan, "plan", torchrec_plan)
    assert set(dict(plan[""])) == {"user_id", "item_history", "category", "region"}
    again = braid.compile(SMALL, nodes=2, ranks_per_node=2, train=True, plan=torchrec_plan,
                          out=tmp_path / "again")
    assert again.plan["planner"] == "given"
    for mine, theirs in zip(artifact.plan["tables"], again.plan["tables"]):
        assert (mine["name"], mine["sharding"], mine["ranks"]) == \
            (theirs["name"], theirs["sharding"], theirs["ranks"])
    assert again.predicted["train_step_ms"] == pytest.approx(artifact.predicted["train_step_ms"])


def test_a_hand_written_torchrec_style_plan_is_priced(braid, tmp_path):
    plan = {"": {
        "user_id": {"sharding_type": "row_wise", "compute_kernel": "fused", "ranks": [0, 1],
                    "shards": [{"rank": 0, "shard_offsets": [0, 0], "shard_sizes": [500, 16]},
                               {"rank": 1, "shard_offsets": [500, 0], "shard_sizes": [500, 16]}]},
        "item_history": {"sharding_type": "table_wise", "compute_kernel": "fused", "ranks": [1],
                         "shards": [{"rank": 1, "shard_offsets": [0, 0],
                                     "shard_sizes": [500, 16]}]},
        "category": {"sharding_type": "data_parallel", "compute_kernel": "dense",
                     "ranks": [0, 1]},
        "region": {"sharding_type": "table_wise", "compute_kernel": "fused", "ranks": [0],
                   "shards": [{"rank": 0, "shard_offsets": [0, 0], "shard_sizes": [12, 16]}]},
    }}
    # braid.compile sizes the data-parallel table from the model...
    art = braid.compile(SMALL, ranks_per_node=2, plan=plan, out=tmp_path / "a")
    assert [t["sharding"] for t in art.plan["tables"]] == [
        "row_wise", "table_wise", "data_parallel", "table_wise"]
    assert art.plan["tables"][2]["shards"][1] == {"rank": 1, "row_offset": 0, "rows": 40,
                                                  "col_offset": 0, "cols": 16}
    # ...which the bridge alone cannot.
    from braid.torchrec_bridge import plan_from_torchrec
    with pytest.raises(braid.Error, match="table 'category': the plan gives no shards"):
        plan_from_torchrec(plan)


def test_torchrec_objects_round_trip(braid, artifact):
    torchrec = pytest.importorskip("torchrec", reason="torchrec is not installed "
                                   "(scripts/install-torchrec.sh)")
    from torchrec.distributed.types import ShardingPlan
    from torchrec.modules.embedding_configs import EmbeddingBagConfig, PoolingType
    plan = artifact.to_torchrec_plan()
    assert isinstance(plan, ShardingPlan)
    sharding = plan.plan[""]["user_id"]
    assert sharding.sharding_type == artifact.plan["tables"][0]["sharding"]
    config = EmbeddingBagConfig(name="t", embedding_dim=16, num_embeddings=100,
                                feature_names=["f"], pooling=PoolingType.MEAN)
    model = braid.from_torchrec([config], 16, 13, [16], [1])
    assert model.spec["tables"][0]["pooling"] == "mean"
    assert torchrec is not None


@pytest.mark.parametrize("plan", [
    {"": 42},
    {"": {"user_id": {"sharding_type": "row_wise", "ranks": [0],
                      "shards": [{"rank": 0, "shard_offsets": [0]}]}}},
    {"": {"user_id": {"sharding_type": "row_wise", "ranks": [0], "shards": [{}]}}},
    [],
    7,
])
def test_malformed_torchrec_plans_raise(braid, tmp_path, plan):
    with pytest.raises(braid.Error):
        braid.compile(SMALL, ranks_per_node=2, plan=plan, out=tmp_path / "out")


def test_from_torchrec_refuses_arguments_of_the_wrong_kind(braid):
    tables = [{"name": "a", "num_embeddings": 100, "embedding_dim": 16}]
    with pytest.raises(braid.Error, match="tables must be a list"):
        braid.from_torchrec(None, 64, 13, [32, 16], [32, 1])
    with pytest.raises(braid.Error, match="bottom_mlp must be a list of layer widths"):
        braid.from_torchrec(tables, 64, 13, 32, [32, 1])
    with pytest.raises(braid.Error, match="top_mlp must be a list of layer widths"):
        braid.from_torchrec(tables, 64, 13, [32, 16], None)
    with pytest.raises(braid.Error, match="pooling_factors must be a dict"):
        braid.from_torchrec(tables, 64, 13, [32, 16], [32, 1], pooling_factors=[2])
