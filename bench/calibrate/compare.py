"""Braid's predictions for this machine beside what braid-calibrate measured.

Runs `mpirun -n R braid-calibrate` (unless --description is given), then
predicts every measured collective with `braid-sim --hardware` the written
description, and prints measured vs predicted with the error; writes JSON.
A description calibrated on several nodes (scripts/two_hosts.sh's hosts,
--description) also has every kind measured over all ranks: those are
compared with the model's forms across nodes, scope "all ranks".

usage: python3 bench/calibrate/compare.py [--ranks 2] [--build build]
                                          [--description FILE] [--json OUT]
"""
import argparse
import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
KINDS = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--build", default="build")
    parser.add_argument("--description")
    parser.add_argument("--json", default=str(ROOT / "bench" / "calibrate" / "results.json"))
    args = parser.parse_args()
    bin_dir = (ROOT / args.build / "bin").resolve()
    description = args.description
    if not description:
        description = os.path.join(tempfile.mkdtemp(), "local-cpu.json")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        subprocess.run(["mpirun", "-n", str(args.ranks), "--oversubscribe",
                        str(bin_dir / "braid-calibrate"), "-o", description],
                       check=True, env=env)
    data = json.loads(pathlib.Path(description).read_text())
    per_node = data["topology"]["ranks_per_node"]
    nodes = data["topology"]["nodes"]
    scopes = [("one node", per_node, 1, data["_measured"]["collectives"], "{kind}_us")]
    if nodes > 1:
        scopes.append(("all ranks", per_node * nodes, nodes, data["_measured"]["network"],
                       "all_ranks_{kind}_us"))
    rows = []
    print(f"{'scope':<10} {'collective':<15} {'bytes':>10} {'measured us':>12} "
          f"{'predicted us':>13} {'error':>8}  algorithm")
    for scope, ranks, span, points, key in scopes:
        for point in points:
            for kind in KINDS:
                size = point["bytes"]
                measured = point.get(key.format(kind=kind))
                if measured is None:
                    continue
                out = subprocess.run([str(bin_dir / "braid-sim"), "collective", "--kind", kind,
                                      "--bytes", str(size), "--ranks", str(ranks),
                                      "--nodes", str(span), "--hardware", description,
                                      "--json"],
                                     check=True, capture_output=True, text=True).stdout
                result = json.loads(out)
                predicted = result["time_us"]
                error = (predicted - measured) / measured
                rows.append({"scope": scope, "kind": kind, "bytes": size,
                             "measured_us": measured, "predicted_us": predicted,
                             "algorithm": result.get("algorithm"), "relative_error": error})
                print(f"{scope:<10} {kind:<15} {size:>10} {measured:>12.2f} {predicted:>13.2f} "
                      f"{error * 100:>+7.1f}%  {result.get('algorithm', '')}")
    # Per scope and kind, the corpus's measure (bench/collectives): the
    # geomean error exp(mean |ln(predicted / measured)|) - 1.
    summary = {}
    for row in rows:
        summary.setdefault(f"{row['scope']} {row['kind']}", []).append(
            abs(math.log(row["predicted_us"] / row["measured_us"])))
    summary = {key: math.exp(sum(errors) / len(errors)) - 1
               for key, errors in summary.items()}
    for key, error in summary.items():
        print(f"geomean error {key}: {error * 100:.1f}%")
    pathlib.Path(args.json).write_text(json.dumps(
        {"description": data, "points": rows, "geomean_error_by_scope_and_kind": summary},
        indent=1))
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
