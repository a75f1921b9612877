"""Reads a compiled training run's braid-run --json report and prints what
test/Integration/mpirun_comm_wait.test checks of its communication waits."""
import json
import statistics
import sys

report = json.load(open(sys.argv[1]))
wait, step, cpu = report["comm_wait_ms"], report["step_ms"], report["cpu_ms"]
print("waited:", wait > 0)
print("within the step:", wait < step)
print("used the CPU:", cpu > 0)
kinds = sorted(key[len("comm_wait_ms_"):] for key in report if key.startswith("comm_wait_ms_"))
print("kinds:", " ".join(kinds))
# Each kind's wait, the mean over the steps after the first, is positive.
print("every kind waited:", all(report["comm_wait_ms_" + kind] > 0 for kind in kinds))
# Each step's own time (the slowest rank's), so a warm-up shows; step_ms is
# their median (the mean of the middle two for an even count).
each = report["steps_ms"]
print("each step timed:", len(each) == report["steps"] and all(ms > 0 for ms in each))
print("step_ms is their median:", abs(statistics.median(each) - step) <= 1e-9 * step)
