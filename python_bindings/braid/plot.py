"""Plots of a compiled model, to PNG (matplotlib, Agg backend).

    python3 -m braid.plot OUT/   # OUT/load.png and OUT/timeline.png (and
                                 # OUT/losses.png where OUT/losses.npy is)
"""
import json
import pathlib
import sys

from . import _native


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise _native.Error("braid.plot needs matplotlib (python3 -m pip install matplotlib)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _plan_dict(plan):
    if hasattr(plan, "plan") and hasattr(plan, "dir"):  # an Artifact
        return plan.plan
    if isinstance(plan, (str, pathlib.Path)):
        path = pathlib.Path(plan)
        if path.is_dir():
            path = path / "plan.json"
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError) as error:
            raise _native.Error(f"{path}: cannot read a plan: {error}") from None
    if isinstance(plan, dict):
        return plan
    raise _native.Error(f"a plan is an Artifact, a plan.json path or its dict, not {type(plan).__name__}")


def load(plan, path="load.png"):
    """Per-rank predicted time (the forward pass, and the training step
    where there is one) and table memory, side by side. Returns the path."""
    predicted = _plan_dict(plan).get("predicted")
    if not predicted or "per_rank_ms" not in predicted:
        raise _native.Error("the plan has no per-rank predictions")
    plt = _pyplot()
    ranks = list(range(len(predicted["per_rank_ms"])))
    fig, (time_ax, memory_ax) = plt.subplots(1, 2, figsize=(11, 4))
    width = 0.4 if "train_step_per_rank_ms" in predicted else 0.8
    time_ax.bar([r - (width / 2 if width < 0.8 else 0) for r in ranks], predicted["per_rank_ms"],
                width, label="forward")
    if "train_step_per_rank_ms" in predicted:
        time_ax.bar([r + width / 2 for r in ranks], predicted["train_step_per_rank_ms"], width,
                    label="training step")
    time_ax.set_xlabel("rank")
    time_ax.set_ylabel("predicted ms")
    time_ax.set_title("predicted time per rank")
    time_ax.legend()
    memory = [b / 2**30 for b in predicted.get("table_bytes", [0] * len(ranks))]
    memory_ax.bar(ranks, memory, 0.8, color="tab:green")
    memory_ax.set_xlabel("rank")
    memory_ax.set_ylabel("GiB")
    memory_ax.set_title("embedding tables per rank")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return pathlib.Path(path)


def timeline(trace, path="timeline.png", max_ranks=16):
    """The simulated per-rank timeline of trace.json: each rank's compute
    stream and communication stream as bars over time, so that overlap shows
    as bars stacked at the same time. Returns the path."""
    if hasattr(trace, "trace_path"):
        trace = trace.trace_path
    trace = pathlib.Path(trace)
    if trace.is_dir():
        trace = trace / "trace.json"
    try:
        events = json.loads(trace.read_text())["traceEvents"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise _native.Error(f"{trace}: cannot read a trace: {error}") from None
    plt = _pyplot()
    colors = {"compute": "tab:blue", "comm": "tab:orange"}
    lanes = sorted({(e["pid"], e["tid"]) for e in events if e.get("ph") == "X"
                    and e["pid"] < max_ranks})
    fig, ax = plt.subplots(figsize=(12, 1 + 0.4 * max(1, len(lanes))))
    for row, (pid, tid) in enumerate(lanes):
        spans = [(e["ts"], e["dur"]) for e in events
                 if e.get("ph") == "X" and e["pid"] == pid and e["tid"] == tid]
        kinds = {e.get("cat", "compute") for e in events if e["pid"] == pid and e["tid"] == tid}
        color = colors.get(next(iter(kinds)) if len(kinds) == 1 else "compute", "tab:gray")
        ax.broken_barh(spans, (row - 0.4, 0.8), facecolors=color, edgecolors="white",
                       linewidth=0.5)
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels([f"rank {p} {'comm' if t else 'compute'}" for p, t in lanes])
    ax.set_xlabel("us")
    ax.set_title("simulated timeline (compute blue, communication orange)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return pathlib.Path(path)


def losses(values, path="losses.png", labels=None):
    """One or more loss curves (a sequence, or a list of sequences with
    `labels`). Returns the path."""
    import numpy as np
    # A list of curves, or one curve (a list or an array, as Artifact.train
    # returns it).
    nested = len(values) > 0 and np.ndim(values[0]) == 1
    curves = values if nested else [values]
    try:
        curves = [np.asarray(c, dtype=float) for c in curves]
    except (TypeError, ValueError) as error:
        raise _native.Error(f"losses must be numbers: {error}") from None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for i, curve in enumerate(curves):
        label = labels[i] if labels and i < len(labels) else None
        ax.plot(np.arange(1, len(curve) + 1), curve, marker="o", label=label)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    if labels:
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return pathlib.Path(path)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python3 -m braid.plot OUT/", file=sys.stderr)
        return 2
    out = pathlib.Path(argv[0])
    try:
        written = [load(out, out / "load.png"), timeline(out, out / "timeline.png")]
        if (out / "losses.npy").exists():
            import numpy as np
            written.append(losses(np.load(out / "losses.npy"), out / "losses.png"))
    except _native.Error as error:
        print(f"braid.plot: error: {error}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
