"""braid.compile and the Artifact: the plan, its table, the predictions
and the trace, the same as braid-compile's and braid-sim's."""
import json

import pytest

from conftest import ROOT

SMALL = ROOT / "examples" / "dlrm_small.json"


@pytest.fixture(scope="module")
def artifact(braid, tmp_path_factory):
    out = tmp_path_factory.mktemp("compiled")
    return braid.compile(braid.load_model(SMALL), cluster="dgx-h100", nodes=2,
                         ranks_per_node=2, train=True, out=out)


def test_the_artifact_is_what_braid_compile_writes(braid, artifact, run_tool, tmp_path):
    run_tool("braid-compile", SMALL, "--cluster", "dgx-h100", "--nodes", 2,
             "--ranks-per-node", 2, "--train", "-o", tmp_path / "cli")
    for name in ("program.mlir", "model.mlir"):
        assert (artifact.dir / name).read_text() == (tmp_path / "cli" / name).read_text()
    cli_plan = json.loads((tmp_path / "cli" / "plan.json").read_text())
    for key in ("tables", "predicted", "co_optimization", "dense_layers"):
        assert artifact.plan[key] == cli_plan[key]


def test_plan_inspection(artifact):
    assert artifact.ranks == 4
    assert [t["name"] for t in artifact.plan["tables"]] == [
        "user_id", "item_history", "category", "region"]
    for table in artifact.plan["tables"]:
        assert table["sharding"] in ("table_wise", "row_wise", "column_wise",
                                     "table_row_wise", "data_parallel")
        assert table["ranks"] and all(0 <= r < 4 for r in table["ranks"])
    text = artifact.plan_table()
    assert "sharding" in text and "user_id" in text and "predicted training step" in text
    predicted = artifact.predicted
    assert predicted["iteration_ms"] > 0 and predicted["train_step_ms"] > predicted["iteration_ms"]
    assert len(predicted["per_rank_ms"]) == 4
    assert max(predicted["per_rank_ms"]) == pytest.approx(predicted["iteration_ms"])


def test_the_prediction_is_braid_sims(artifact, run_tool):
    simulated = json.loads(run_tool("braid-sim", artifact.dir, "--function", "train_step",
                                    "--json").stdout)
    assert simulated["iteration_ms"] == pytest.approx(artifact.predicted["train_step_ms"],
                                                      rel=1e-9)


def test_the_trace_is_a_chrome_trace_of_every_rank(artifact):
    events = json.loads(artifact.trace_path.read_text())["traceEvents"]
    assert {e["pid"] for e in events} == {0, 1, 2, 3}
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in events)


def test_sim_collective_is_braid_sim_collective(braid, run_tool):
    mine = braid.sim.collective("all_reduce", 1 << 26, ranks=16, nodes=2, hardware="dgx-h100")
    cli = json.loads(run_tool("braid-sim", "collective", "--kind", "all_reduce", "--bytes",
                              1 << 26, "--ranks", 16, "--nodes", 2, "--hardware", "dgx-h100",
                              "--json").stdout)
    assert mine == cli
    with pytest.raises(braid.Error, match="the nodes must divide the ranks"):
        braid.sim.collective("all_reduce", 1024, ranks=16, nodes=3)
    with pytest.raises(braid.Error, match="the kind must be"):
        braid.sim.collective("all_shuffle", 1024)
    with pytest.raises(braid.Error, match="bytes must be a number"):
        braid.sim.collective("all_reduce", "1 MiB")
    # Python's unbounded integers are checked before the native call.
    with pytest.raises(braid.Error, match="ranks must be below 2\\^62"):
        braid.sim.collective("all_reduce", 1024, ranks=2**70)
    with pytest.raises(braid.Error, match="bytes must be a finite number"):
        braid.sim.collective("all_reduce", 10**400)


def test_the_co_optimizer_levels_by_name(braid, tmp_path):
    o0 = braid.compile(SMALL, ranks_per_node=8, train=True, opt_level=0, out=tmp_path / "o0")
    o2 = braid.compile(SMALL, ranks_per_node=8, train=True, out=tmp_path / "o2")
    assert o0.plan["co_optimization"]["train_step"]["started_collectives"] == 0
    assert o2.plan["co_optimization"]["train_step"]["started_collectives"] > 0
    assert o2.predicted["train_step_ms"] < o0.predicted["train_step_ms"]


def test_local_cpu_calibrates_without_the_tools_on_path(braid, tmp_path):
    # Inside Python the running program is the interpreter, so the native
    # code finds braid-calibrate through BRAID_TOOLS_DIR, which the package
    # sets to its build's tools: no tool on PATH, an empty cache.
    import os
    import subprocess
    import sys
    script = ("import braid; a = braid.compile(%r, cluster='local-cpu', ranks_per_node=2); "
              "print(a.predicted['iteration_ms'] > 0)" % str(SMALL))
    env = {"PATH": "/usr/bin:/bin", "BRAID_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": braid.__file__.rsplit("/braid/", 1)[0],
           "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    env.update({k: v for k, v in os.environ.items() if k.startswith(("OMPI_", "BRAID_BUILD"))})
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
    assert (tmp_path / "cache" / "local-cpu.json").exists()
