"""Predicted collective bus bandwidth for every preset, 1 and 2 nodes, all
collectives, across message sizes; and the large-message predictions side by
side with published nccl-tests measurements of those machines.

usage: python3 bench/collectives/run.py [--build build] [--json OUT.json]
Prints two tables and writes JSON (default bench/collectives/results.json).
"""
import argparse
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
PRESETS = {"dgx-a100": 8, "dgx-h100": 8, "pcie-a100x4": 4}
KINDS = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"]
SIZES = [8, 1 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20, 1 << 30, 4 << 30]

# Published measurements (busbw, GB/s, large messages) and where they come from.
PUBLISHED = [
    ("dgx-h100", "all_reduce", 1, 480.0,
     "nccl-tests#212 (NCCL maintainer: ~480 GB/s NVLS all-reduce busbw on 8 H100); #290 measured 476"),
    ("dgx-h100", "all_gather", 1, 370.0,
     "nccl-tests#212 (NCCL maintainer: ~370 GB/s effective NVLink busbw for non-all-reduce ops)"),
    ("dgx-h100", "reduce_scatter", 1, 370.0, "nccl-tests#212 (as above)"),
    ("dgx-h100", "all_reduce", 2, 376.0,
     "nccl-tests#290 (NCCL maintainer: 46-48 GB/s per NDR NIC; 8 NICs per node, ring busbw = 8 x 47)"),
    ("dgx-a100", "all_reduce", 1, 230.0,
     "shared/data gpu_physical_limits.json: NCCL achievable busbw on A100 NVLink3 ~230 GB/s"),
    ("dgx-a100", "all_reduce", 2, 192.0,
     "shared/data gpu_physical_limits.json: DGX-A100 8xHDR measured 2-node all-reduce busbw 192 GB/s"),
]
LARGE = 4 << 30


def predict(braid_sim, preset, kind, size, ranks, nodes):
    out = subprocess.run(
        [braid_sim, "collective", "--kind", kind, "--bytes", str(size), "--ranks", str(ranks),
         "--nodes", str(nodes), "--hardware", preset, "--json"],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def human(size):
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= scale:
            return f"{size // scale}{unit}"
    return f"{size}B"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--json", default=str(ROOT / "bench" / "collectives" / "results.json"))
    args = parser.parse_args()
    braid_sim = str((ROOT / args.build / "bin" / "braid-sim").resolve())

    sweep = []
    print("Predicted bus bandwidth (GB/s) by message size; time of the smallest size in us")
    header = f"{'preset':<12} {'nodes':>5} {'collective':<15} {'8B us':>8}" + "".join(
        f"{human(s):>9}" for s in SIZES[1:])
    print(header)
    print("-" * len(header))
    for preset, per_node in PRESETS.items():
        for nodes in (1, 2):
            ranks = per_node * nodes
            for kind in KINDS:
                row = [predict(braid_sim, preset, kind, s, ranks, nodes) for s in SIZES]
                sweep.append({"preset": preset, "nodes": nodes, "ranks": ranks, "kind": kind,
                              "points": [dict(bytes=s, **r) for s, r in zip(SIZES, row)]})
                print(f"{preset:<12} {nodes:>5} {kind:<15} {row[0]['time_us']:>8.1f}" +
                      "".join(f"{r['busbw_GBps']:>9.1f}" for r in row[1:]))

    print()
    print(f"Large messages ({human(LARGE)}): Braid's prediction beside published nccl-tests busbw")
    print(f"{'preset':<10} {'nodes':>5} {'collective':<15} {'braid':>8} {'published':>10} {'error':>7}  algorithm / source")
    comparison = []
    for preset, kind, nodes, published, source in PUBLISHED:
        r = predict(braid_sim, preset, kind, LARGE, PRESETS[preset] * nodes, nodes)
        error = (r["busbw_GBps"] - published) / published
        comparison.append({"preset": preset, "kind": kind, "nodes": nodes,
                           "predicted_busbw_GBps": r["busbw_GBps"], "published_busbw_GBps": published,
                           "relative_error": error, "algorithm": r["algorithm"], "source": source})
        print(f"{preset:<10} {nodes:>5} {kind:<15} {r['busbw_GBps']:>8.1f} {published:>10.1f} "
              f"{error * 100:>+6.1f}%  {r['algorithm']}; {source}")
    worst = max(abs(c["relative_error"]) for c in comparison)
    print(f"\nworst large-message error: {worst * 100:.1f}%")
    pathlib.Path(args.json).write_text(json.dumps({"sweep": sweep, "comparison": comparison,
                                                   "worst_relative_error": worst}, indent=1))
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
