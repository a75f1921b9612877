"""Sums an Nsight Compute kernel list (bench/gpu/lease.sh's ncu stage:
`ncu --csv --metrics gpu__time_duration.sum braid-run OUT --steps K`) by
step and by kernel: each kernel's device time, the kernels over --slow-us
(on the lent H200's run, each the first reader of a buffer the host had
written: its managed pages moved to the device inside it, by inference), and
what is left for the host in the step's wall time.

usage: python3 bench/gpu/kernels.py KERNELS.csv --steps K [--step-ms MS]
           [--slow-us 20]
"""
import argparse
import collections
import csv
import sys


def read(path):
    """The rows of the CSV that ncu prints after its own log lines."""
    try:
        with open(path, newline="") as f:
            lines = [line for line in f if line.startswith('"')]
    except OSError as error:
        sys.exit(f"bench/gpu/kernels: error: {path}: {error.strerror}")
    rows = list(csv.DictReader(lines))
    if not rows or "Metric Value" not in rows[0]:
        sys.exit(f"bench/gpu/kernels: error: {path}: no ncu CSV rows (Kernel Name, "
                 "Metric Name, Metric Value)")
    kernels = []
    for number, row in enumerate(rows, 1):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        unit = row.get("Metric Unit", "")
        scale = {"ns": 1e-3, "nsecond": 1e-3, "usecond": 1, "us": 1, "msecond": 1e3,
                 "ms": 1e3, "second": 1e6, "s": 1e6}.get(unit)
        try:
            value = float(row["Metric Value"].replace(",", ""))
        except ValueError:
            value = None
        if scale is None or value is None:
            sys.exit(f"bench/gpu/kernels: error: {path}: row {number}: duration "
                     f"'{row['Metric Value']}' in unit '{unit}' is not a time")
        kernels.append((row["Kernel Name"], value * scale))
    if not kernels:
        sys.exit(f"bench/gpu/kernels: error: {path}: no gpu__time_duration.sum rows")
    return kernels


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("csv")
    parser.add_argument("--steps", type=int, required=True,
                        help="training steps (or iterations) the kernel list covers")
    parser.add_argument("--step-ms", type=float,
                        help="the step's wall time measured without the profiler")
    parser.add_argument("--slow-us", type=float, default=20.0,
                        help="a kernel above this is listed as slow")
    args = parser.parse_args()
    if args.steps < 1:
        sys.exit("bench/gpu/kernels: error: --steps must be at least 1")
    kernels = read(args.csv)
    if len(kernels) % args.steps:
        sys.exit(f"bench/gpu/kernels: error: {len(kernels)} kernels do not divide into "
                 f"{args.steps} steps")
    per_step = len(kernels) // args.steps
    total_us = sum(us for _, us in kernels)
    slow = [(name, us) for name, us in kernels if us > args.slow_us]
    fast_us = total_us - sum(us for _, us in slow)
    print(f"{len(kernels)} kernels, {per_step} a step")
    for step in range(args.steps):
        part = kernels[step * per_step:(step + 1) * per_step]
        print(f"step {step + 1}: {sum(us for _, us in part) / 1e3:.3f} ms of kernels")
    print(f"kernel time a step: {total_us / args.steps / 1e3:.3f} ms; "
          f"{len(slow) / args.steps:.1f} kernels a step over {args.slow_us:g} us take "
          f"{sum(us for _, us in slow) / args.steps / 1e3:.3f} ms, the other "
          f"{(len(kernels) - len(slow)) / args.steps:.1f} take "
          f"{fast_us / args.steps / 1e3:.3f} ms")
    if args.step_ms is not None:
        host = args.step_ms - total_us / args.steps / 1e3
        print(f"step wall time {args.step_ms:.3f} ms: {host:.3f} ms not in any kernel")
    by_name = collections.defaultdict(list)
    for name, us in slow:
        by_name[name.split("(")[0][:60]].append(us)
    print(f"{'kernel over ' + format(args.slow_us, 'g') + ' us':<62} {'calls':>5} {'mean us':>8}")
    for name, times in sorted(by_name.items(), key=lambda item: -sum(item[1])):
        print(f"{name:<62} {len(times):>5} {sum(times) / len(times):>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
