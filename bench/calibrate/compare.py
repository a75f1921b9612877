"""Braid's predictions for this machine beside what braid-calibrate measured.

Runs `mpirun -n R braid-calibrate` (unless --description is given), then
predicts every measured collective with `braid-sim --hardware` the written
description, and prints measured vs predicted with the error; writes JSON.

usage: python3 bench/calibrate/compare.py [--ranks 2] [--build build]
                                          [--description FILE] [--json OUT]
"""
import argparse
import json
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
    ranks = data["topology"]["ranks_per_node"]
    rows = []
    print(f"{'collective':<15} {'bytes':>10} {'measured us':>12} {'predicted us':>13} {'error':>8}")
    for point in data["_measured"]["collectives"]:
        for kind in KINDS:
            size = point["bytes"]
            out = subprocess.run([str(bin_dir / "braid-sim"), "collective", "--kind", kind,
                                  "--bytes", str(size), "--ranks", str(ranks), "--nodes", "1",
                                  "--hardware", description, "--json"],
                                 check=True, capture_output=True, text=True).stdout
            predicted = json.loads(out)["time_us"]
            measured = point[f"{kind}_us"]
            error = (predicted - measured) / measured
            rows.append({"kind": kind, "bytes": size, "measured_us": measured,
                         "predicted_us": predicted, "relative_error": error})
            print(f"{kind:<15} {size:>10} {measured:>12.2f} {predicted:>13.2f} {error * 100:>+7.1f}%")
    pathlib.Path(args.json).write_text(json.dumps({"description": data, "points": rows}, indent=1))
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
