"""Reads a --profile-ops training run's braid-run --json report and the
simulator's trace of the same artifact, and prints what
test/Integration/mpirun_profile_ops.test checks."""
import json
import sys

report = json.load(open(sys.argv[1]))
trace = json.load(open(sys.argv[2]))
events = trace["traceEvents"] if isinstance(trace, dict) else trace
predicted = {e["name"] for e in events if e.get("ph") == "X"}
ops = report["ops_ms"]
names = [op["op"] for op in ops]
print("first:", names[0])
print("has lookups:", any(n.startswith("shard_embedding_bag @") for n in names))
print("has updates:", any(n.startswith("shard_embedding_bag_update @") for n in names))
print("has waits:", "wait" in names)
print("last:", names[-1])
print("all timed:", all(op["ms"] >= 0 for op in ops))
# Every op but the return is one the simulator's trace names the same way.
print("named as the trace:", all(n in predicted for n in names if n != "return"))
# The timers bracket the step's work: together at least half of the fastest
# step after the first and no more than the slowest (a training run's).
if "steps_ms" in report:
    total = sum(op["ms"] for op in ops)
    later = report["steps_ms"][1:]
    print("cover the step:", 0.5 * min(later) <= total <= max(later))
