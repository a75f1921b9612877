"""A training step of Braid's compiled CPU DLRM on real MPI ranks beside
PyTorch, in one run.

The model (issue 14): bench/cpu_vs_torch's mid-size DLRM (8 tables of
1M x 64, pooling factor 20, batch 4096, dot interaction), trained with SGD
for the tables and Adagrad for the dense layers. Braid: compile it with
--train --target cpu for this machine (table-wise tables) and run `mpirun
-n RANKS braid-run OUT --steps N --json` with one OpenMP thread per rank;
each step draws a fresh synthetic batch. PyTorch (when importable):
EmbeddingBag(sparse=True) + the same MLPs, torch.optim.SGD on the tables'
sparse gradients and Adagrad on the dense layers, forward + backward +
step on THREADS threads. The two alternate --repeats times; each reports
its median step.

Also each rank's peak resident memory beside the tables and optimizer
state it holds (no dense table gradient exists), and the step time Braid
predicts for this machine (calibrated right before each repeat's run)
beside the measured one: the median prediction against the median step,
and each repeat's own error. The artifact is compiled with --profile-ops,
so each op's measured time (braid-run's ops_ms) is printed beside the
simulator's for the same op (braid-sim --trace of the same artifact with
the repeat's calibration), grouped by op, the medians over the repeats.

usage: python3 bench/cpu_train_vs_torch/run.py [--ranks 2] [--threads 2]
           [--steps 30] [--repeats 5] [--rows 1000000] [--batch 4096]
           [--build build] [--json FILE]
"""
import argparse
import importlib.util
import json
import os
import pathlib
import statistics
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("cpu_vs_torch", ROOT / "bench" / "cpu_vs_torch" / "run.py")
forward_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(forward_bench)


def train_spec(rows, batch):
    model = forward_bench.spec(rows, batch)
    model["name"] = "dlrm_mid_train"
    model["_about"] = "Mid-size DLRM of bench/cpu_train_vs_torch (issue 14)."
    model["optimizer"] = {"dense": {"type": "adagrad", "lr": 0.01},
                          "embedding": {"type": "sgd", "lr": 0.01}}
    return model


def torch_step_time(model, steps, threads):
    try:
        import torch
    except ImportError:
        return None, "PyTorch is not installed (python3 -c 'import torch' fails)"
    torch.set_num_threads(threads)
    batch, pooling = model["batch_size"], 20
    bags, bottom, top, offsets, (li, lj) = forward_bench.torch_dlrm(torch, model, sparse=True)
    sparse = torch.optim.SGD(bags.parameters(), lr=0.01)
    dense = torch.optim.Adagrad(list(bottom.parameters()) + list(top.parameters()), lr=0.01)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    times = []
    for _ in range(steps + 2):
        x = torch.rand(batch, 13)
        indices = [torch.randint(0, t["num_embeddings"], (batch * pooling,)) for t in model["tables"]]
        labels = (x.sum(1) > x.sum(1).mean()).float()
        start = time.perf_counter()
        sparse.zero_grad()
        dense.zero_grad()
        bottom_out = bottom(x)
        stacked = torch.stack([bottom_out] + [b(i, offsets) for b, i in zip(bags, indices)], dim=1)
        gram = torch.bmm(stacked, stacked.transpose(1, 2))
        logit = top(torch.cat([bottom_out, gram[:, li, lj]], dim=1))[:, 0]
        loss_fn(logit, labels).backward()
        sparse.step()
        dense.step()
        times.append((time.perf_counter() - start) * 1e3)
    times = sorted(times[2:])
    return times[len(times) // 2], None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--rows", type=int, default=1000000)
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--build", default="build")
    parser.add_argument("--json", default=str(ROOT / "bench" / "cpu_train_vs_torch" / "results.json"))
    args = parser.parse_args()
    bin_dir = (ROOT / args.build / "bin").resolve()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMP_NUM_THREADS="1")
    mpirun = ["mpirun", "--oversubscribe", "-x", "OMP_NUM_THREADS", "-n", str(args.ranks)]
    model = train_spec(args.rows, args.batch)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / "model.json").write_text(json.dumps(model))
        # Each repeat calibrates this machine and compiles for it right
        # before Braid's run (see bench/cpu_vs_torch).
        braid_runs, torch_runs, reports, predictions = [], [], [], []
        measured_ops, predicted_ops = [], []
        torch_note = None
        for repeat in range(args.repeats):
            # PyTorch runs first in odd repeats (ABBA; bench/cpu_vs_torch).
            def time_torch():
                return forward_bench.timed_into(
                    torch_runs, lambda: torch_step_time(model, args.steps, args.threads))
            if repeat % 2:
                torch_note = time_torch()
            _, plan = forward_bench.calibrate_and_compile(
                bin_dir, mpirun, env, tmp, repeat, tmp / "model.json",
                ["--nodes", "1", "--ranks-per-node", str(args.ranks), "--force-sharding",
                 "table_wise", "--train", "--target", "cpu", "--profile-ops"])
            predictions.append(plan["predicted"])
            report = json.loads(forward_bench.run(
                mpirun + [bin_dir / "braid-run", tmp / f"out{repeat}", "--steps", str(args.steps),
                          "--json"], env).splitlines()[-1])
            reports.append(report)
            measured_ops.append(forward_bench.op_times(
                (o["op"], o["ms"]) for o in report["ops_ms"]))
            predicted_ops.append(forward_bench.predicted_op_times(
                bin_dir, tmp / f"out{repeat}", tmp / f"local-cpu{repeat}.json", args.ranks,
                tmp, "train_step"))
            braid_runs.append(report["step_ms"])
            if repeat % 2 == 0:
                torch_note = time_torch()
    braid_ms = statistics.median(braid_runs)
    torch_ms = statistics.median(torch_runs) if torch_runs else None
    peak = max(r["peak_rss_mib"] for r in reports)
    held = max(r["tables_and_state_mib"] for r in reports)
    print(f"{'system':<10} {'config':<20} {'step_ms':>10}")
    for name, config, ms in [("braid", f"{args.ranks} ranks x 1 thread", braid_ms),
                             ("pytorch", f"{args.threads} threads", torch_ms)]:
        print(f"{name:<10} {config:<20} {('%.2f' % ms) if ms is not None else 'n/a':>10}")
    if torch_note:
        print(f"pytorch: {torch_note}")
    else:
        print(f"pytorch / braid: {torch_ms / braid_ms:.2f}x (above 1: Braid's step is faster)")
    print(f"memory: peak resident {peak:.0f} MiB on the largest rank, which holds {held:.0f} MiB "
          f"of tables and optimizer state: {peak / held:.2f}x")
    summary = forward_bench.prediction_summary([p["train_step_ms"] for p in predictions],
                                               braid_runs)
    breakdown = {key: statistics.median(p["train_step_breakdown"][key] for p in predictions)
                 for key in predictions[0]["train_step_breakdown"]}
    print(f"predicted step {summary['predicted_ms']:.2f} ms (median of {args.repeats} "
          "calibrations; " + ", ".join(f"{k[:-3]} {v:.2f}" for k, v in breakdown.items() if v) +
          f") vs measured {braid_ms:.2f} ms: {100 * summary['relative_error']:+.1f}% (each "
          "repeat: " + ", ".join(f"{100 * e:+.0f}%" for e in summary["per_repeat_relative_error"])
          + ")")
    # Op by op: where the prediction and the measurement part.
    op_rows, timed = forward_bench.print_op_table(measured_ops, predicted_ops, "step")
    result = {"model": model["name"], "ranks": args.ranks, "threads": args.threads,
              "steps": args.steps, "repeats": args.repeats,
              "braid_runs_ms": braid_runs, "pytorch_runs_ms": torch_runs,
              "braid_step_ms": braid_ms, "pytorch_step_ms": torch_ms, "pytorch_note": torch_note,
              "peak_rss_mib": peak, "tables_and_state_mib": held,
              "memory_ratio": peak / held, "predicted_step_ms": summary["predicted_ms"],
              "predicted_runs_ms": [p["train_step_ms"] for p in predictions],
              "predicted_breakdown": breakdown,
              "prediction_error": summary["relative_error"],
              "prediction_error_per_repeat": summary["per_repeat_relative_error"],
              "ops": op_rows, "timed_ops_ms": timed,
              "final_loss": reports[-1]["loss"]}
    pathlib.Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
