"""Co-optimization measured on two real hosts, beside its prediction.

The hosts are scripts/two_hosts.sh's: two network namespaces on this
machine, joined by a veth pair limited to 1 Gbit/s (tc tbf), 2 MPI ranks on
each (Open MPI over TCP between them, shared memory inside). The steps:

1. braid-calibrate runs on the two hosts and writes their description
   (nodes, ranks per node, the link's latency and rate).
2. Each model is compiled for that description with --train --target cpu,
   at --opt-level 0 and at the default level: bench/coopt/two_hosts_model.json
   (a DLRM whose dense gradients' all_reduce matters) and
   bench/coopt/two_hosts_tp.mlir (a tensor-parallel block over the 4 ranks).
   The default level is compiled with --pipeline-input-dist, so the
   artifact also holds the training step's pipelined form (OUT/pipelined),
   which distributes the next batch's inputs inside each step, where the
   simulator predicts a gain.
3. braid-sim predicts each training step (@train_step, and
   @train_step_pipelined where there is one).
   The DLRM is also compiled at the default level with --exchange-precision
   bf16: its pooled rows and their gradients cross the link in bf16.
4. The programs train on the two hosts, in alternating runs: O0, the
   default step, its pipelined form (braid-run OUT --pipelined) and the
   DLRM's bf16 exchanges. So
   does the DLRM's default program with BRAIDRT_NO_PROGRESS=1: the runtime
   then no longer drives started exchanges from inside its GEMMs, and MPI
   moves their data only inside MPI calls.

The table gives each program's predicted and measured (median) step, the
time a rank waits on its communication, predicted (the simulator's exposed
communication plus idle time, mean per rank) and measured (braidrt's time
blocked in waits, mean over ranks, median over steps), and the default
level's ratio to O0, predicted and measured; then, for the O0 programs
(every collective synchronous), the simulator's time per collective kind
beside the runtime's measured wait on it; then how many of the
alternating runs the default program won, with a sign test's p-value.

usage: python3 bench/coopt/two_hosts.py [--build build] [--repeats 5]
           [--steps 30] [--rate 1gbit] [--burst 256kb] [--json OUT.json]
Needs root (network namespaces); prints why and writes nothing otherwise.
"""
import argparse
import json
import math
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
# What braid-calibrate measures of a GEMM beside a running all_reduce.
OVERLAP_KEYS = ("comm_rate_beside_compute", "compute_slowdown_beside_comm")
HOSTS = ROOT / "scripts" / "two_hosts.sh"
MODEL = ROOT / "bench" / "coopt" / "two_hosts_model.json"
TP_MODEL = ROOT / "bench" / "coopt" / "two_hosts_tp.mlir"


def run(cmd, env=None, timeout=900):
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env,
                          timeout=timeout)
    if done.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return done.stdout


# The runtime's wait keys (braid-run --json's comm_wait_ms_KEY) for each of
# the simulator's collective kinds.
KINDS = {"all_reduce": ("all_reduce",), "all_to_all": ("all_to_all",),
         "all_to_all_v": ("all_to_all_v", "all_to_all_v_counts"),
         "reduce_scatter": ("reduce_scatter",), "all_gather": ("all_gather",)}


def comm_by_kind(trace):
    """Milliseconds of communication per collective kind in a simulated
    trace, the mean over ranks."""
    events = json.loads(pathlib.Path(trace).read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    ranks, total = set(), {}
    for event in events:
        if event.get("ph") != "X":
            continue
        ranks.add(event.get("pid"))
        if event.get("cat") == "comm":
            kind = event["name"].split(" ")[0]
            total[kind] = total.get(kind, 0) + event["dur"] / 1000
    return {kind: ms / max(1, len(ranks)) for kind, ms in total.items()}


def sign_test(fast, slow):
    """How many of the alternating runs `fast` won against the `slow` run
    beside it, and the chance of winning at least that often if neither
    program were faster (a one-sided sign test)."""
    wins = sum(f < s for f, s in zip(fast, slow))
    n = len(fast)
    p = sum(math.comb(n, k) for k in range(wins, n + 1)) / 2 ** n
    return wins, p


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--rate", default="1gbit",
                        help="the link's rate, as tc's tbf takes it (default 1gbit)")
    parser.add_argument("--burst", default="256kb",
                        help="the token bucket's burst, as tc's tbf takes it (default 256kb): "
                             "what crosses at the veth's own speed after the link idled")
    parser.add_argument("--json", default=str(ROOT / "bench" / "coopt" / "two_hosts_results.json"))
    args = parser.parse_args()
    bin_dir = pathlib.Path(args.build) / "bin"
    env = dict(os.environ, BRAID_HOSTS="braidbench", BRAID_HOSTS_BURST=args.burst,
               OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    check = subprocess.run(["bash", HOSTS, "check"], capture_output=True, text=True, env=env)
    if check.returncode != 0:
        print(f"skipped: {check.stderr.strip()}")
        return 0

    def mpirun(*cmd, extra_env=()):
        mpi_args = ["-n", "4", "-x", "OMP_NUM_THREADS=1"]
        for name in extra_env:
            mpi_args += ["-x", name]
        return run(["bash", HOSTS, "mpirun", *mpi_args, *cmd],
                   env=dict(env, **{n: "1" for n in extra_env}))

    run(["bash", HOSTS, "down"], env=env)
    run(["bash", HOSTS, "up", args.rate], env=env)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = pathlib.Path(tmp)
            description = tmp / "two_hosts.json"
            mpirun(bin_dir / "braid-calibrate", "--name", "two-hosts-1gbit", "-o", description)
            hw = json.loads(description.read_text())
            # The same description without the overlap constants
            # braid-calibrate measured (the channel model instead), to
            # predict the same programs the way the simulator did before.
            unmeasured = dict(hw)
            for key in OVERLAP_KEYS:
                unmeasured.pop(key, None)
            unmeasured_path = tmp / "two_hosts_unmeasured_overlap.json"
            unmeasured_path.write_text(json.dumps(unmeasured))
            programs, predicted, predicted_unmeasured, coopt = {}, {}, {}, {}
            predicted_wait, predicted_by_kind = {}, {}
            models = [("", MODEL), ("tp ", TP_MODEL)]
            for prefix, model in models:
                # The DLRM's default program with its pooled rows and their
                # gradients exchanged in bf16 too (the key's level "2h"):
                # the tensor-parallel block exchanges no pooled rows.
                for level in ((0, 2) if prefix else (0, 2, "2h")):
                    out = tmp / f"{prefix.strip() or 'dlrm'}-o{level}"
                    flags = {2: ["--pipeline-input-dist"],
                             "2h": ["--exchange-precision", "bf16"]}.get(level, [])
                    run([bin_dir / "braid-compile", model, "--cluster", description,
                         "--nodes", "2", "--ranks-per-node", "2", "--train", "--target",
                         "cpu", "--opt-level", "0" if level == 0 else "2", "-o", out]
                        + flags)
                    programs[(prefix, level)] = out
                    coopt[(prefix, level)] = json.loads(
                        (out / "plan.json").read_text())["co_optimization"]["train_step"]
                    # The step, and at the default level its pipelined form
                    # (the key's level "2p") where the simulator added one.
                    functions = [(level, "train_step")]
                    if level == 2 and (out / "pipelined").is_dir():
                        functions.append(("2p", "train_step_pipelined"))
                        programs[(prefix, "2p")] = out
                        coopt[(prefix, "2p")] = coopt[(prefix, level)]
                    for key, function in functions:
                        trace = tmp / f"{out.name}-{function}.trace.json"
                        sim = json.loads(run([bin_dir / "braid-sim", out, "--function",
                                              function, "--json", "--trace", trace]))
                        predicted[(prefix, key)] = sim["iteration_ms"]
                        if key == 0:
                            predicted_by_kind[prefix] = comm_by_kind(trace)
                        # What a rank waits on its communication: the exposed
                        # part, and the time it idles for its peers.
                        breakdown = sim["mean_per_rank"]
                        predicted_wait[(prefix, key)] = (breakdown["exposed_comm_ms"]
                                                         + breakdown["idle_ms"])
                        sim = json.loads(run([bin_dir / "braid-sim", out, "--function",
                                              function, "--hardware", unmeasured_path,
                                              "--json"]))
                        predicted_unmeasured[(prefix, key)] = sim["iteration_ms"]
            variants = [("O0", "", 0, ()), ("default", "", 2, ()),
                        ("default, no runtime progress", "", 2, ("BRAIDRT_NO_PROGRESS",)),
                        ("tp O0", "tp ", 0, ()), ("tp default", "tp ", 2, ())]
            # The pipelined forms, beside their default programs, and the
            # DLRM's bf16 exchanges.
            for name, prefix in (("pipelined", ""), ("tp pipelined", "tp ")):
                if (prefix, "2p") in programs:
                    at = [v[0] for v in variants].index(prefix + "default") + 1
                    variants.insert(at, (name, prefix, "2p", ()))
            variants.insert([v[0] for v in variants].index("default") + 1,
                            ("bf16 exchanges", "", "2h", ()))
            measured = {name: [] for name, _, _, _ in variants}
            waited = {name: [] for name, _, _, _ in variants}
            waited_by_kind = {}
            # The order turns every repeat (ABBA): the programs' positions
            # in a repeat even out, so a pair's winner is not its position.
            orders = []
            for repeat in range(args.repeats):
                order = variants if repeat % 2 == 0 else variants[::-1]
                orders.append([name for name, _, _, _ in order])
                for name, prefix, level, extra in order:
                    line = mpirun(bin_dir / "braid-run", programs[(prefix, level)], "--steps",
                                  str(args.steps), "--json",
                                  *(["--pipelined"] if level == "2p" else []),
                                  extra_env=extra).strip().splitlines()[-1]
                    report = json.loads(line)
                    measured[name].append(report["step_ms"])
                    waited[name].append(report["comm_wait_ms"])
                    for kind in KINDS:
                        waited_by_kind.setdefault((name, kind), []).append(
                            sum(report.get(f"comm_wait_ms_{key}", 0) for key in KINDS[kind]))
    finally:
        subprocess.run(["bash", HOSTS, "down"], env=env)

    median = {name: statistics.median(times) for name, times in measured.items()}
    median_wait = {name: statistics.median(times) for name, times in waited.items()}
    rows = []
    print(f"two hosts x 2 ranks, link {hw['inter_node']['nic_bandwidth_GBps'] * 8:.2f} Gbit/s "
          f"and {hw['inter_node'].get('latency_us', 0):.0f} us as calibrated; "
          f"{args.repeats} alternating runs of {args.steps} steps")
    print(f"a GEMM beside an all_reduce runs {hw.get('compute_slowdown_beside_comm', 0):.2f}x "
          f"slower and the all_reduce at {hw.get('comm_rate_beside_compute', 1):.2f} of its "
          "rate, as calibrated ('before': the same programs predicted with the channel "
          "model instead)")
    header = (f"{'program':<32}{'predicted ms':>14}{'before':>10}{'measured ms':>13}"
              f"{'wait pred':>11}{'wait meas':>11}  {'runs (ms)'}")
    print(header)
    print("-" * len(header))
    for name, prefix, level, extra in variants:
        pred = predicted[(prefix, level)] if not extra else None
        before = predicted_unmeasured[(prefix, level)] if not extra else None
        wait = predicted_wait[(prefix, level)] if not extra else None
        runs = ", ".join(f"{t:.1f}" for t in measured[name])
        print(f"{name:<32}{(f'{pred:.3f}' if pred else '-'):>14}"
              f"{(f'{before:.3f}' if before else '-'):>10}{median[name]:>13.3f}"
              f"{(f'{wait:.3f}' if wait else '-'):>11}{median_wait[name]:>11.3f}  {runs}")
        rows.append({"program": name, "model": str((TP_MODEL if prefix else MODEL).relative_to(ROOT)),
                     "opt_level": 0 if level == 0 else 2,
                     "pipelined": level == "2p",
                     "exchange_precision": "bf16" if level == "2h" else "f32",
                     "predicted_step_ms": pred,
                     "predicted_step_ms_with_channel_model": before,
                     "predicted_comm_wait_ms": wait,
                     "measured_step_ms": median[name], "runs_ms": measured[name],
                     "measured_comm_wait_ms": median_wait[name],
                     "comm_wait_runs_ms": waited[name],
                     "co_optimization": coopt[(prefix, level)]})
    predicted_ratio = predicted[("", 2)] / predicted[("", 0)]
    measured_ratio = median["default"] / median["O0"]
    no_progress_ratio = median["default, no runtime progress"] / median["O0"]
    before_ratio = predicted_unmeasured[("", 2)] / predicted_unmeasured[("", 0)]
    tp_predicted_ratio = predicted[("tp ", 2)] / predicted[("tp ", 0)]
    tp_before_ratio = predicted_unmeasured[("tp ", 2)] / predicted_unmeasured[("tp ", 0)]
    tp_measured_ratio = median["tp default"] / median["tp O0"]
    for prefix, name in (("", "default"), ("tp ", "tp default")):
        c = coopt[(prefix, 2)]
        print(f"{name}: {c['started_collectives']} collectives started, {c['buckets']} "
              f"bucket(s), {c['fused_exchanges']} fused exchange(s) of "
              f"{c['fused_all_to_alls']} all_to_alls, {c['fused_index_exchanges']} fused "
              f"index exchange(s) of {c['fused_all_to_all_vs']} all_to_all_vs, "
              f"{c['sharded_optimizer_steps']} "
              "optimizer step(s) on shards")
    print(f"default / O0: predicted {predicted_ratio:.3f}x (before {before_ratio:.3f}x), "
          f"measured {measured_ratio:.3f}x "
          f"(without the runtime's progress calls {no_progress_ratio:.3f}x)")
    print(f"tp default / tp O0: predicted {tp_predicted_ratio:.3f}x (before "
          f"{tp_before_ratio:.3f}x), measured {tp_measured_ratio:.3f}x")
    # At O0 every collective is synchronous: the simulator's time for each
    # kind is what a rank waits on it, beside the runtime's measured wait.
    by_kind = {}
    for prefix, name in (("", "O0"), ("tp ", "tp O0")):
        parts = []
        for kind in KINDS:
            pred = predicted_by_kind[prefix].get(kind, 0)
            meas = statistics.median(waited_by_kind[(name, kind)])
            if pred or meas:
                parts.append(f"{kind} {pred:.1f} / {meas:.1f}")
                by_kind.setdefault(name, {})[kind] = {"predicted_ms": pred, "measured_ms": meas}
        print(f"{name} waits by kind, predicted / measured ms: " + ", ".join(parts))
    # Each pipelined form beside its default program and O0.
    pipelined_ratios = {}
    for label, prefix in (("dlrm", ""), ("tp", "tp ")):
        name = prefix + "pipelined"
        if name not in measured:
            print(f"{prefix}default: no pipelined form (the simulator predicted no gain)")
            continue
        ratios = {"predicted_to_default": predicted[(prefix, "2p")] / predicted[(prefix, 2)],
                  "measured_to_default": median[name] / median[prefix + "default"],
                  "predicted_to_o0": predicted[(prefix, "2p")] / predicted[(prefix, 0)],
                  "measured_to_o0": median[name] / median[prefix + "O0"]}
        pipelined_ratios[label] = ratios
        print(f"{name} / {prefix}default: predicted {ratios['predicted_to_default']:.3f}x, "
              f"measured {ratios['measured_to_default']:.3f}x; / {prefix}O0: predicted "
              f"{ratios['predicted_to_o0']:.3f}x, measured {ratios['measured_to_o0']:.3f}x")
    bf16_ratios = {"predicted_to_default": predicted[("", "2h")] / predicted[("", 2)],
                   "measured_to_default": median["bf16 exchanges"] / median["default"]}
    print(f"bf16 exchanges / default: predicted {bf16_ratios['predicted_to_default']:.3f}x, "
          f"measured {bf16_ratios['measured_to_default']:.3f}x "
          f"({coopt[('', '2h')].get('half_precision_exchanges', 0)} exchange(s) in bf16)")
    paired = {}
    comparisons = [("dlrm", "default", "O0"), ("tp", "tp default", "tp O0"),
                   ("dlrm bf16 exchanges", "bf16 exchanges", "default")]
    for label, prefix in (("dlrm", ""), ("tp", "tp ")):
        if prefix + "pipelined" in measured:
            comparisons.append((f"{label} pipelined", prefix + "pipelined", prefix + "default"))
    for label, fast, slow in comparisons:
        wins, p = sign_test(measured[fast], measured[slow])
        paired[label] = {"faster_runs": wins, "runs": len(measured[fast]), "sign_test_p": p}
        print(f"{fast} faster than {slow} in {wins} of {len(measured[fast])} alternating "
              f"runs (one-sided sign test p = {p:.4f})")
    pathlib.Path(args.json).write_text(json.dumps({
        "hardware": hw,
        "model": str(MODEL.relative_to(ROOT)), "steps": args.steps, "repeats": args.repeats,
        "rate": args.rate, "burst": args.burst, "run_order_by_repeat": orders,
        "programs": rows, "predicted_ratio": predicted_ratio,
        "predicted_ratio_with_channel_model": before_ratio, "measured_ratio": measured_ratio,
        "measured_ratio_without_progress": no_progress_ratio,
        "tensor_parallel": {"model": str(TP_MODEL.relative_to(ROOT)),
                            "predicted_ratio": tp_predicted_ratio,
                            "predicted_ratio_with_channel_model": tp_before_ratio,
                            "measured_ratio": tp_measured_ratio},
        "pipelined": pipelined_ratios, "bf16_exchanges": bf16_ratios,
        "paired_runs": paired, "o0_comm_wait_by_kind": by_kind}, indent=2) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
