"""Braid's planner beside TorchRec's, priced by one simulator.

The same tables are planned by TorchRec's EmbeddingShardingPlanner (its
default proposers and its own cost model, on a Topology of the same
cluster) and by Braid's planner. Both plans then go through braid.compile:
Braid's own plan, and TorchRec's given as `plan=` and partitioned as it
is. Braid's simulator prices the per-rank programs both compile to, the
forward pass and the training step. Planning times are wall times, each the
best of --repeats runs, measured in one process and alternated.

usage: PYTHONPATH=build/python python3 bench/planner/vs_torchrec.py
       [--model examples/mlperf_dcnv2.json] [--nodes 2] [--json OUT.json]

Without torchrec (scripts/install-torchrec.sh) TorchRec's rows say n/a.
"""
import argparse
import json
import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]

# DGX-H100, as Braid's preset describes it: 8 GPUs of 80 GB per node.
RANKS_PER_NODE = 8
HBM_BYTES = 80 * 1024**3


def torchrec_plan(spec, nodes, batch_size):
    """TorchRec's plan of `spec`'s tables and its planning time, or
    (None, None, reason) without torchrec."""
    import logging
    logging.getLogger().setLevel(logging.ERROR)  # TorchRec's per-table notes
    try:
        import torch
        from torchrec.distributed.embeddingbag import EmbeddingBagCollectionSharder
        from torchrec.distributed.planner import EmbeddingShardingPlanner, Topology
        from torchrec.distributed.planner.types import ParameterConstraints
        from torchrec.modules.embedding_configs import EmbeddingBagConfig, PoolingType
        from torchrec.modules.embedding_modules import EmbeddingBagCollection
    except Exception as error:  # ImportError, or a torch/fbgemm that fails to load
        return None, None, f"torchrec does not import ({type(error).__name__}: {error})"
    pooling = {"sum": PoolingType.SUM, "mean": PoolingType.MEAN, "max": PoolingType.SUM}
    configs = [EmbeddingBagConfig(name=t["name"], embedding_dim=t["embedding_dim"],
                                  num_embeddings=t["num_embeddings"],
                                  feature_names=[t["name"]],
                                  pooling=pooling[t.get("pooling", "sum")])
               for t in spec["tables"]]
    module = EmbeddingBagCollection(tables=configs, device=torch.device("meta"))
    topology = Topology(world_size=nodes * RANKS_PER_NODE, local_world_size=RANKS_PER_NODE,
                        compute_device="cuda", hbm_cap=HBM_BYTES)
    # The tables' bag sizes, which TorchRec's cost model reads from its
    # constraints; its batch size is per rank.
    constraints = {t["name"]: ParameterConstraints(pooling_factors=[float(t.get("pooling_factor", 1))])
                   for t in spec["tables"]}
    planner = EmbeddingShardingPlanner(topology=topology,
                                       batch_size=batch_size // (nodes * RANKS_PER_NODE),
                                       constraints=constraints, debug=False)
    start = time.perf_counter()
    plan = planner.plan(module, [EmbeddingBagCollectionSharder()])
    seconds = time.perf_counter() - start
    return plan, seconds, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(ROOT / "examples" / "mlperf_dcnv2.json"))
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=str(ROOT / "bench" / "planner" / "vs_torchrec.json"))
    args = parser.parse_args()
    try:
        import braid
    except ImportError:
        sys.exit("vs_torchrec: cannot import braid: set PYTHONPATH=build/python")
    from braid.torchrec_bridge import plan_from_torchrec

    model = braid.load_model(args.model)
    spec = model.spec
    sizes = {t["name"]: (t["num_embeddings"], t["embedding_dim"]) for t in spec["tables"]}
    rows, reason = [], None
    with tempfile.TemporaryDirectory() as tmp:
        braid_seconds, torchrec_seconds, theirs = [], [], None
        for repeat in range(args.repeats):
            # Alternate the two planners, so that a slow moment hurts both.
            start = time.perf_counter()
            mine = braid.compile(model, cluster="dgx-h100", nodes=args.nodes, train=True,
                                 out=pathlib.Path(tmp) / f"braid{repeat}")
            braid_seconds.append(mine.plan["planning_seconds"])
            plan, seconds, reason = torchrec_plan(spec, args.nodes, spec["batch_size"])
            if plan is not None:
                torchrec_seconds.append(seconds)
                theirs = plan
        rows.append({"planner": "braid", "planning_s": min(braid_seconds),
                     "forward_ms": mine.predicted["iteration_ms"],
                     "train_step_ms": mine.predicted["train_step_ms"],
                     "shardings": _count(mine.plan)})
        if theirs is not None:
            given = braid.compile(model, cluster="dgx-h100", nodes=args.nodes, train=True,
                                  plan=plan_from_torchrec(theirs, tables=sizes),
                                  out=pathlib.Path(tmp) / "torchrec")
            rows.append({"planner": "torchrec", "planning_s": min(torchrec_seconds),
                         "forward_ms": given.predicted["iteration_ms"],
                         "train_step_ms": given.predicted["train_step_ms"],
                         "shardings": _count(given.plan)})
    print(f"{spec.get('name', 'model')}: {len(spec['tables'])} tables on {args.nodes} x "
          f"{RANKS_PER_NODE} DGX-H100, both plans priced by Braid's simulator")
    header = f"{'planner':<10}{'planning s':>12}{'forward ms':>12}{'train step ms':>15}  shardings"
    print(header)
    print("-" * len(header))
    for row in rows:
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(row["shardings"].items()))
        print(f"{row['planner']:<10}{row['planning_s']:>12.3f}{row['forward_ms']:>12.3f}"
              f"{row['train_step_ms']:>15.3f}  {kinds}")
    if reason:
        print(f"torchrec  n/a: {reason}; scripts/install-torchrec.sh installs it")
    pathlib.Path(args.json).write_text(json.dumps(
        {"model": args.model, "nodes": args.nodes, "rows": rows, "torchrec_missing": reason},
        indent=2) + "\n")
    print(f"wrote {args.json}")
    return 0


def _count(plan):
    counts = {}
    for table in plan["tables"]:
        counts[table["sharding"]] = counts.get(table["sharding"], 0) + 1
    return counts


if __name__ == "__main__":
    sys.exit(main())
