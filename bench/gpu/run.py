"""Braid's CUDA artifacts on a lent GPU, beside the hardware's peaks and the
simulator's predictions, in one run.

Three measurements, each a model compiled with --target cuda for one rank
and run with `braid-run OUT --json` (median of --repeats runs):

- embedding: 8 tables of --rows x 128 f32, pooling factor 50, a one-layer
  head: the bytes of rows the lookups read over the whole iteration's time
  (row_GBps_over_iteration), against the device's HBM bandwidth; a lower
  bound of the kernels' own rate, since the iteration also runs the head
  and the host's input checks on managed memory;
- gemm: a 4-layer MLP of width --width on a batch of 8192 and one small
  table: the dense layers' FLOPs over the whole iteration's time
  (dense_tflops_over_iteration), against the FP32 and TF32 peaks;
- training step: dlrm_small's training step, measured per step, against the
  simulator's prediction (plan.json's train_step_ms) for the same device;
- overlap (with two GPUs or more, one rank each, up to 8): the same model's
  training step compiled at --opt-level 0 (every collective waited for where
  it is issued) and at the default level (braid-co-optimize's started
  collectives, NCCL on the communication stream with an event the wait
  synchronizes), run alternately under mpirun; the measured ratio of the two
  steps beside the simulator's (braid-sim on each program), and the
  communication the simulator expects hidden behind computation. With one
  GPU it says why nothing is measured: an NCCL collective between ranks
  needs a GPU per rank.

The device's figures are those of the preset the simulator uses
(examples/clusters/dgx-h100.json, dgx-a100.json or oci-h200.json, chosen by
the GPU's name; each figure's source is in that file).

Without a GPU (nvidia-smi -L fails) it prints why and writes a JSON that
says so; nothing is measured.

Where the GPU machine has no compiler (a lent GPU with CUDA but no LLVM),
--prepare DIR compiles the three artifacts here, for --preset, and
--prepared DIR measures them there; bench/gpu/bundle.sh packs them with a
braid-run that needs no LLVM. The overlap needs braid-compile and braid-sim
beside the GPUs and is not prepared.

usage: python3 bench/gpu/run.py [--repeats 5] [--iterations 20]
           [--rows 1000000] [--width 4096] [--build build]
           [--prepare DIR [--preset dgx-h100] | --prepared DIR]
"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(cmd, env=None):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed:\n{proc.stderr[-3000:]}")
    return proc.stdout


def gpu_name():
    """The first GPU's name, or None (with the reason) without one."""
    if not shutil.which("nvidia-smi"):
        return None, "no nvidia-smi on PATH"
    proc = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                          capture_output=True, text=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        return None, "nvidia-smi finds no GPU: " + (proc.stderr.strip() or "no output")
    return proc.stdout.splitlines()[0].strip(), None


def gpu_count():
    """How many GPUs nvidia-smi lists (0 without it)."""
    if not shutil.which("nvidia-smi"):
        return 0
    proc = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    return sum(1 for line in proc.stdout.splitlines() if line.startswith("GPU "))


def measure_overlap(bin_dir, tmp, preset, ranks, repeats, steps):
    """dlrm_small's training step on `ranks` GPUs at --opt-level 0 and at the
    default level, run alternately; measured and predicted step times."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    programs, predicted, hidden = {}, {}, {}
    for level in (0, 2):
        out = tmp / f"overlap-o{level}"
        run([bin_dir / "braid-compile", ROOT / "examples" / "dlrm_small.json", "--cluster",
             preset, "--nodes", "1", "--ranks-per-node", str(ranks), "--train", "--target",
             "cuda", "--opt-level", str(level), "-o", out])
        programs[level] = out
        sim = json.loads(run([bin_dir / "braid-sim", out, "--function", "train_step",
                              "--json"]))
        predicted[level] = sim["iteration_ms"]
        plan = json.loads((out / "plan.json").read_text())
        hidden[level] = plan["predicted"]["train_step_breakdown"]["hidden_comm_ms"]
    measured = {0: [], 2: []}
    for _ in range(repeats):
        for level in (0, 2):
            out = run(["mpirun", "-n", ranks, bin_dir / "braid-run", programs[level],
                       "--steps", steps, "--json"], env=env)
            measured[level].append(json.loads(out.strip().splitlines()[-1])["step_ms"])
    o0, default = statistics.median(measured[0]), statistics.median(measured[2])
    return {"measured": True, "model": "examples/dlrm_small.json", "ranks": ranks,
            "o0_step_ms": o0, "default_step_ms": default,
            "o0_runs_ms": measured[0], "default_runs_ms": measured[2],
            "measured_ratio": default / o0,
            "predicted_o0_step_ms": predicted[0], "predicted_default_step_ms": predicted[2],
            "predicted_ratio": predicted[2] / predicted[0],
            "predicted_hidden_comm_ms": hidden[2]}


def preset_for(name):
    """The simulator's preset for the GPU: A100s use dgx-a100, H200s oci-h200
    (the H100's chip with 141 GB of HBM3e at 4.8 TB/s), others dgx-h100."""
    if "A100" in name:
        return "dgx-a100"
    return "oci-h200" if "H200" in name else "dgx-h100"


def embedding_spec(rows):
    return {"name": "gpu_embedding", "batch_size": 16384, "dense_features": 16,
            "bottom_mlp": [128], "top_mlp": [1], "interaction": "cat",
            "tables": [{"name": f"t{i}", "num_embeddings": rows, "embedding_dim": 128,
                        "pooling_factor": 50, "pooling": "sum"} for i in range(8)]}


def gemm_spec(width):
    return {"name": "gpu_gemm", "batch_size": 8192, "dense_features": width,
            "bottom_mlp": [width, width, width, width], "top_mlp": [1],
            "interaction": "cat",
            "tables": [{"name": "t0", "num_embeddings": 1000, "embedding_dim": 16,
                        "pooling_factor": 1, "pooling": "sum"}]}


def compile_model(bin_dir, model, out, preset, extra=()):
    run([bin_dir / "braid-compile", model, "--cluster", preset, "--nodes", "1",
         "--ranks-per-node", "1", "--target", "cuda", "-o", out] + list(extra))
    return json.loads((out / "plan.json").read_text())


def prepare(bin_dir, out, preset, rows, width):
    """Compiles the three measured artifacts into `out` for `preset`, with the
    preset's description and the models' specs beside them."""
    out.mkdir(parents=True, exist_ok=True)
    specs = {"embedding": embedding_spec(rows), "gemm": gemm_spec(width)}
    for name, spec in specs.items():
        (out / f"{name}.json").write_text(json.dumps(spec))
        compile_model(bin_dir, out / f"{name}.json", out / name, preset)
    compile_model(bin_dir, ROOT / "examples" / "dlrm_small.json", out / "train", preset,
                  ["--train"])
    shutil.copy(ROOT / "examples" / "clusters" / f"{preset}.json", out / "cluster.json")
    (out / "prepared.json").write_text(json.dumps({"preset": preset, "specs": specs},
                                                  indent=2) + "\n")


def median_of(bin_dir, out, repeats, flags, key):
    runs = [json.loads(run([bin_dir / "braid-run", out, "--json"] + flags).splitlines()[-1])[key]
            for _ in range(repeats)]
    return statistics.median(runs), runs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rows", type=int, default=1000000)
    parser.add_argument("--width", type=int, default=4096)
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--json", default=str(ROOT / "bench" / "gpu" / "results.json"))
    parser.add_argument("--prepare", metavar="DIR",
                        help="compile the artifacts into DIR and measure nothing")
    parser.add_argument("--preset", default="dgx-h100", help="the preset --prepare compiles for")
    parser.add_argument("--prepared", metavar="DIR", help="measure the artifacts in DIR")
    args = parser.parse_args()
    bin_dir = pathlib.Path(args.build) / "bin"
    if args.prepare:
        prepare(bin_dir, pathlib.Path(args.prepare), args.preset, args.rows, args.width)
        print(f"prepared {args.prepare} for {args.preset}")
        return
    if args.prepared and not (pathlib.Path(args.prepared) / "prepared.json").is_file():
        sys.exit(f"bench/gpu: error: {pathlib.Path(args.prepared) / 'prepared.json'} does not "
                 "exist (make it with --prepare DIR)")
    name, reason = gpu_name()
    if name is None:
        print(f"bench/gpu: nothing measured: {reason}")
        pathlib.Path(args.json).write_text(json.dumps(
            {"gpu": None, "measured": False, "reason": reason}, indent=2) + "\n")
        print(f"wrote {args.json}")
        return
    gpus = gpu_count()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        if args.prepared:
            artifacts = pathlib.Path(args.prepared)
        else:
            artifacts = tmp / "prepared"
            prepare(bin_dir, artifacts, preset_for(name), args.rows, args.width)
        prepared = json.loads((artifacts / "prepared.json").read_text())
        preset = prepared["preset"]
        device = json.loads((artifacts / "cluster.json").read_text())["device"]
        result = {"gpu": name, "measured": True, "preset": preset}
        if preset != preset_for(name):
            result["preset_note"] = f"prepared for {preset}, the GPU is {name}"
        # Embedding rows read per second against HBM.
        iteration_ms, runs = median_of(bin_dir, artifacts / "embedding", args.repeats,
                                       ["--iterations", str(args.iterations)], "iteration_ms")
        spec = prepared["specs"]["embedding"]
        row_bytes = sum(spec["batch_size"] * t["pooling_factor"] * t["embedding_dim"] * 4
                        for t in spec["tables"])
        achieved = row_bytes / (iteration_ms * 1e-3) / 1e9
        result["embedding"] = {"iteration_ms": iteration_ms, "runs_ms": runs,
                               "row_bytes": row_bytes, "row_GBps_over_iteration": achieved,
                               "hbm_GBps": device["memory_bandwidth_GBps"],
                               "row_fraction_of_hbm_over_iteration":
                                   achieved / device["memory_bandwidth_GBps"]}
        # Dense layers' FLOP rate against the peaks.
        spec = prepared["specs"]["gemm"]
        iteration_ms, runs = median_of(bin_dir, artifacts / "gemm", args.repeats,
                                       ["--iterations", str(args.iterations)], "iteration_ms")
        widths = [spec["dense_features"]] + spec["bottom_mlp"]
        flops = sum(2 * spec["batch_size"] * a * b for a, b in zip(widths, widths[1:]))
        tflops = flops / (iteration_ms * 1e-3) / 1e12
        result["gemm"] = {"iteration_ms": iteration_ms, "runs_ms": runs, "flops": flops,
                          "dense_tflops_over_iteration": tflops,
                          "peak_tflops_f32": device["peak_tflops"]["f32"],
                          "peak_tflops_tf32": device["peak_tflops"]["tf32"]}
        # A training step against the simulator's prediction.
        plan = json.loads((artifacts / "train" / "plan.json").read_text())
        step_ms, runs = median_of(bin_dir, artifacts / "train", args.repeats,
                                  ["--steps", str(args.steps)], "step_ms")
        predicted = plan["predicted"]["train_step_ms"]
        result["train_step"] = {"measured_ms": step_ms, "runs_ms": runs,
                                "predicted_ms": predicted,
                                "error": (predicted - step_ms) / step_ms}
        # Communication beside computation: two ranks or more.
        if gpus >= 2 and args.prepared:
            result["overlap"] = {"measured": False,
                                 "reason": "prepared artifacts: the overlap compiles on the "
                                           "GPU machine"}
        elif gpus >= 2:
            result["overlap"] = measure_overlap(bin_dir, tmp, preset, min(gpus, 8),
                                                args.repeats, args.steps)
        else:
            result["overlap"] = {"measured": False,
                                 "reason": f"{gpus} GPU: an NCCL collective between ranks "
                                           "needs a GPU per rank"}
    e, g, t = result["embedding"], result["gemm"], result["train_step"]
    print(f"GPU: {name} (figures of the {preset} preset)")
    print(f"{'measurement':<22} {'measured':>14} {'reference':>22}")
    print(f"{'rows / iteration':<22} {e['row_GBps_over_iteration']:>9.0f} GB/s "
          f"{e['hbm_GBps']:>12.0f} GB/s HBM "
          f"({100 * e['row_fraction_of_hbm_over_iteration']:.0f}%)")
    print(f"{'dense FLOPs / iteration':<22} {g['dense_tflops_over_iteration']:>7.1f} TFLOP/s "
          f"{g['peak_tflops_f32']:>6.1f} f32 / {g['peak_tflops_tf32']:.0f} tf32 peak")
    print(f"{'training step':<22} {t['measured_ms']:>11.3f} ms "
          f"{t['predicted_ms']:>16.3f} ms predicted ({100 * t['error']:+.0f}%)")
    o = result["overlap"]
    if o["measured"]:
        print(f"{'overlap, ' + str(o['ranks']) + ' ranks':<22} default / O0 step "
              f"{o['default_step_ms']:.3f} / {o['o0_step_ms']:.3f} ms = "
              f"{o['measured_ratio']:.3f}x measured, {o['predicted_ratio']:.3f}x predicted "
              f"({o['predicted_hidden_comm_ms']:.3f} ms of communication predicted hidden)")
    else:
        print("overlap: not measured (" + o["reason"] + ")")
    pathlib.Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
