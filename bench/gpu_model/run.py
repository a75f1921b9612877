"""The GPU step model against one real GPU: Braid's predictions for one GPU
(a cluster preset, 1 node x 1 rank: dgx-h100 by default, oci-h200 for an
H200) beside PyTorch running the same DLRMs on a lent GPU, stage by stage,
plus the device figures the preset assumes (streaming and random-row-gather
bandwidth, launch overhead) measured.

The measured side is PyTorch's CUDA kernels (nn.EmbeddingBag, cuBLAS GEMMs,
its optimizers): a realisation of the same kernels whose times the simulator
prices, so the gap per stage says where the kernel model is off (Braid's own
CUDA backend is measured by bench/gpu).

Three steps, because the GPU and the compiler are on different machines:
  python3 bench/gpu_model/run.py predict  [--build build] [--cluster C]  # here
  python3 bench/gpu_model/run.py measure  --out DIR          # on the GPU machine (torch + CUDA)
  python3 bench/gpu_model/run.py compare  [--cluster C] --measured DIR/measured.json
predict writes bench/gpu_model/predicted-C.json (commit it before measuring:
the prediction is then blind; predicted-oci-h200-blind.json is the H200's,
as committed before the lent H200 measured); compare prints the table and
writes bench/gpu_model/results-C.json. Without --measured, compare takes the
newest measurement of the preset's GPU (A100, H100 or H200 by its name).
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = ROOT / "bench" / "gpu_model"


def predicted_path(args):
    return pathlib.Path(args.predicted or HERE / f"predicted-{args.cluster}.json")

# (name, tables, rows, dim, pooling, batch). Rows are kept small enough for
# one 80 GB card; the lookup cost depends on the rows touched, not held.
CONFIGS = [
    ("mid_b4k", 8, 1_000_000, 64, 20, 4096),
    ("mid_b64k", 8, 1_000_000, 64, 20, 65536),
    ("wide_b16k", 26, 2_000_000, 128, 10, 16384),
]
DENSE = 13
BOTTOM = [512, 256, 64]
TOP = [512, 256, 1]


def spec(name, tables, rows, dim, pooling, batch):
    return {
        "_about": f"bench/gpu_model config {name}",
        "name": name, "batch_size": batch, "dense_features": DENSE,
        "bottom_mlp": BOTTOM[:-1] + [dim], "top_mlp": TOP, "interaction": "dot",
        "optimizer": {"dense": {"type": "adagrad", "lr": 0.01},
                      "embedding": {"type": "sgd", "lr": 0.01}},
        "tables": [{"name": f"t{i}", "num_embeddings": rows, "embedding_dim": dim,
                    "pooling_factor": pooling, "pooling": "sum"} for i in range(tables)],
    }


def predict(args):
    compile_ = ROOT / args.build / "bin" / "braid-compile"
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for config in CONFIGS:
            model = pathlib.Path(tmp) / f"{config[0]}.json"
            model.write_text(json.dumps(spec(*config)))
            artifact = pathlib.Path(tmp) / config[0]
            proc = subprocess.run([str(compile_), str(model), "--cluster", args.cluster,
                                   "--nodes", "1", "--ranks-per-node", "1", "--train",
                                   "--target", "none", "-o", str(artifact)],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                sys.exit(f"braid-compile failed for {config[0]}:\n{proc.stderr[-2000:]}")
            out[config[0]] = json.loads((artifact / "plan.json").read_text())["predicted"]
    hardware = json.loads((ROOT / "examples" / "clusters" / f"{args.cluster}.json").read_text())
    path = predicted_path(args)
    path.write_text(json.dumps({"cluster": args.cluster, "configs": out,
                                "device": hardware["device"]}, indent=1) + "\n")
    print(f"wrote {path}")


def timed(torch, fn, iterations=30, warmup=5):
    """Median milliseconds of fn() between CUDA events, each call synchronised."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iterations):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def graphed(torch, fn):
    """fn captured in a CUDA graph: the kernels without the launch path."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


def device_figures(torch):
    """Streaming copy bandwidth, random 256-byte-row gather bandwidth, and the
    time of an empty kernel launch, as the preset's efficiencies see them."""
    n = 1 << 30
    a = torch.empty(n, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    copy_ms = timed(torch, lambda: b.copy_(a), 20)
    rows = torch.empty(16_000_000, 64, device="cuda")
    index = torch.randint(0, rows.shape[0], (4_000_000,), device="cuda")
    gathered = torch.empty(index.shape[0], 64, device="cuda")
    gather_ms = timed(torch, lambda: torch.index_select(rows, 0, index, out=gathered), 20)
    tiny = torch.empty(1, device="cuda")
    launch_ms = timed(torch, lambda: [tiny.add_(1) for _ in range(100)], 20) / 100
    del a, b, rows, gathered
    # One sum-pooled bag kernel over a 4M-row table, batch 65536, pooling 20,
    # by row width: the row bytes it reads per second.
    bag_GBps = {}
    for dim in (32, 64, 128, 256):
        bag = torch.nn.EmbeddingBag(4_000_000, dim, mode="sum", include_last_offset=True).cuda()
        ix = torch.randint(0, 4_000_000, (65536 * 20,), device="cuda")
        off = torch.arange(0, 65536 * 20 + 1, 20, device="cuda")
        with torch.no_grad():
            ms = timed(torch, graphed(torch, lambda: bag(ix, off)), 20)
        bag_GBps[dim] = ix.shape[0] * dim * 4 / ms * 1e-6
        del bag
    return {
        "bag_row_GBps_by_dim": bag_GBps,
        "copy_GBps": 2 * n / copy_ms * 1e-6,
        # read the rows and write them out: the gather's own traffic
        "gather_GBps": 2 * index.shape[0] * 256 / gather_ms * 1e-6,
        "launch_us": launch_ms * 1e3,
    }


def measure_config(torch, name, tables, rows, dim, pooling, batch):
    dev = "cuda"
    model = spec(name, tables, rows, dim, pooling, batch)
    bags = torch.nn.ModuleList(
        torch.nn.EmbeddingBag(rows, dim, mode="sum", include_last_offset=True, sparse=True)
        for _ in range(tables)).to(dev)

    def mlp(sizes, inputs, last_sigmoid):
        layers = []
        for i, width in enumerate(sizes):
            layers.append(torch.nn.Linear(inputs, width))
            last = i == len(sizes) - 1
            layers.append(torch.nn.Sigmoid() if last and last_sigmoid else torch.nn.ReLU())
            inputs = width
        return torch.nn.Sequential(*layers).to(dev)

    bottom = mlp(model["bottom_mlp"], DENSE, False)
    features = tables + 1
    li, lj = torch.tril_indices(features, features, offset=-1, device=dev)
    top = mlp(TOP, dim + features * (features - 1) // 2, True)
    dense = torch.rand(batch, DENSE, device=dev)
    labels = torch.randint(0, 2, (batch, 1), device=dev).float()
    offsets = torch.arange(0, batch * pooling + 1, pooling, device=dev)
    indices = [torch.randint(0, rows, (batch * pooling,), device=dev) for _ in range(tables)]

    def lookups():
        return [bag(ix, offsets) for bag, ix in zip(bags, indices)]

    def interact(x, pooled):
        t = torch.stack([x] + pooled, dim=1)
        z = torch.bmm(t, t.transpose(1, 2))[:, li, lj]
        return torch.cat([x, z], dim=1)

    def forward():
        x = bottom(dense)
        return top(interact(x, lookups()))

    def dense_only(pooled):
        return lambda: top(interact(bottom(dense), pooled))

    sgd = torch.optim.SGD(bags.parameters(), lr=0.01)
    adagrad = torch.optim.Adagrad(list(bottom.parameters()) + list(top.parameters()), lr=0.01)
    loss_fn = torch.nn.BCELoss()

    def train_step():
        sgd.zero_grad(set_to_none=True)
        adagrad.zero_grad(set_to_none=True)
        loss = loss_fn(forward(), labels)
        loss.backward()
        sgd.step()
        adagrad.step()

    result = {}
    with torch.no_grad():
        pooled = lookups()
        result["lookup_ms"] = timed(torch, lookups)
        result["dense_ms"] = timed(torch, dense_only(pooled))
        result["forward_ms"] = timed(torch, forward)
        result["forward_graphed_ms"] = timed(torch, graphed(torch, forward))
        result["lookup_graphed_ms"] = timed(torch, graphed(torch, lookups))
        result["dense_graphed_ms"] = timed(torch, graphed(torch, dense_only(pooled)))
        # The dense stage's parts: the GEMMs alone (bias added by addmm, no
        # activation), and the rest (activations, interaction) by difference.
        linears = [m for m in list(bottom) + list(top) if isinstance(m, torch.nn.Linear)]
        operands = []
        x = dense
        for layer in linears:
            operands.append((layer.bias, x, layer.weight.t()))
            x = torch.empty(batch, layer.out_features, device=dev)
            if layer is linears[len(model["bottom_mlp"]) - 1]:
                x = torch.empty(batch, dim + features * (features - 1) // 2, device=dev)
        result["gemm_graphed_ms"] = timed(torch, graphed(
            torch, lambda: [torch.addmm(*o) for o in operands]))
        result["gemm_flops"] = sum(2 * batch * l.in_features * l.out_features for l in linears)
    result["train_step_ms"] = timed(torch, train_step, 20)

    # The training step's stages as Braid prices them, each by its nearest
    # PyTorch realisation: the embedding update as one scatter-add of every
    # lookup's share of its bag's gradient per table (SGD; atomics, no
    # sort), CUDA-graphed; the dense stage as forward + backward of the MLPs
    # and the interaction from given pooled rows, eager.
    bag_of = torch.arange(batch, device=dev).repeat_interleave(pooling)
    pooled_grad = torch.rand(batch, dim, device=dev)
    with torch.no_grad():
        def update():
            rows = pooled_grad.index_select(0, bag_of).mul_(-0.01)
            for bag, ix in zip(bags, indices):
                bag.weight.index_add_(0, ix, rows)
        result["embedding_update_graphed_ms"] = timed(torch, graphed(torch, update), 20)
    pooled_leaf = [t.detach().requires_grad_() for t in lookups()]

    def dense_train():
        adagrad.zero_grad(set_to_none=True)
        loss_fn(top(interact(bottom(dense), pooled_leaf)), labels).backward()
    result["dense_train_ms"] = timed(torch, dense_train, 20)
    del bags
    torch.cuda.empty_cache()
    return result


def measure(args):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
              "figures": device_figures(torch), "configs": {}}
    print(json.dumps(report["figures"]), flush=True)
    for config in CONFIGS:
        report["configs"][config[0]] = measure_config(torch, *config)
        print(config[0], json.dumps(report["configs"][config[0]]), flush=True)
    (out / "measured.json").write_text(json.dumps(report, indent=1))


def compare(args):
    predicted = json.loads(predicted_path(args).read_text())
    gpu = next((g for g in ("A100", "H100", "H200") if g in predicted["device"]["name"]), None)
    if args.measured:
        measured_path = pathlib.Path(args.measured)
    else:
        of_gpu = [p for p in sorted((HERE / "measurements").glob("*.json"))
                  if gpu and gpu in json.loads(p.read_text())["device"]]
        if not of_gpu:
            sys.exit(f"bench/gpu_model: error: no measurement of {gpu or 'this GPU'} in "
                     f"{HERE / 'measurements'}: give --measured")
        measured_path = of_gpu[-1]
    measured = json.loads(measured_path.read_text())
    if gpu and gpu not in measured["device"]:
        sys.exit(f"bench/gpu_model: error: {measured_path} measured a {measured['device']}, "
                 f"but the {args.cluster} preset is a {predicted['device']['name']}")
    device = predicted["device"]
    figures = measured["figures"]
    print(f"Device: {measured['device']} (torch {measured['torch']})")
    print(f"{'figure':<28} {'preset':>10} {'measured':>10}")
    preset_stream = device["memory_bandwidth_GBps"] * device["memory_efficiency"]
    preset_gather = preset_stream * device.get("gather_efficiency", 1)
    rows = [("streaming GB/s", preset_stream, figures["copy_GBps"]),
            ("random 256 B rows GB/s", preset_gather, figures["gather_GBps"]),
            ("launch overhead us", device["launch_overhead_us"], figures["launch_us"])]
    for label, p, m in rows:
        print(f"{label:<28} {p:>10.1f} {m:>10.1f}")
    for dim, rate in figures.get("bag_row_GBps_by_dim", {}).items():
        print(f"{'bag rows of ' + dim + ' f32 GB/s':<28} {preset_gather:>10.1f} {rate:>10.1f}")
    print()
    stages = [("lookup", "lookup_ms", "lookup_graphed_ms"),
              ("dense (MLPs + interaction)", "dense_ms", "dense_graphed_ms"),
              ("forward (iteration)", "iteration_ms", "forward_graphed_ms"),
              ("training step", "train_step_ms", "train_step_ms")]
    print(f"{'config':<10} {'stage':<28} {'braid ms':>9} {'torch ms':>9} {'graphed':>9} {'error':>7}")
    table = []
    for name, pred in predicted["configs"].items():
        got = measured["configs"][name]
        for label, key, graph_key in stages:
            p = pred.get(key, pred["breakdown"].get(key))
            eager = got["forward_ms" if key == "iteration_ms" else key]
            reference = got[graph_key]
            error = (p - reference) / reference
            table.append({"config": name, "stage": label, "predicted_ms": p,
                          "torch_eager_ms": eager, "torch_reference_ms": reference,
                          "relative_error": error})
            print(f"{name:<10} {label:<28} {p:>9.3f} {eager:>9.3f} {reference:>9.3f} "
                  f"{error * 100:>+6.0f}%")
    print(f"\n{'config':<10} {'stage of the training step':<30} {'braid ms':>9} {'torch ms':>9} {'error':>7}")
    for name, pred in predicted["configs"].items():
        got = measured["configs"][name]
        parts = pred["train_step_breakdown"]
        for label, braid, key in [
                ("embedding update (graphed)", parts["embedding_update_ms"],
                 "embedding_update_graphed_ms"),
                ("dense fwd + bwd (eager)", parts["dense_ms"], "dense_train_ms")]:
            if key not in got:
                continue
            error = (braid - got[key]) / got[key]
            table.append({"config": name, "stage": label, "predicted_ms": braid,
                          "torch_reference_ms": got[key], "relative_error": error})
            print(f"{name:<10} {label:<30} {braid:>9.3f} {got[key]:>9.3f} {error * 100:>+6.0f}%")
    print(f"\n{'config':<10} {'GEMMs graphed ms':>17} {'TFLOP/s':>8}  (f32, no TF32; preset: "
          f"{device['peak_tflops']['f32'] * device.get('gemm_efficiency_by_type', {}).get('f32', device['gemm_efficiency']):.1f})")
    for name in predicted["configs"]:
        got = measured["configs"][name]
        if "gemm_graphed_ms" in got:
            rate = got["gemm_flops"] / got["gemm_graphed_ms"] * 1e-9
            print(f"{name:<10} {got['gemm_graphed_ms']:>17.3f} {rate:>8.1f}")
    print("\nerror: Braid's prediction against the graphed time (the training step: eager)")
    results = pathlib.Path(args.results or HERE / f"results-{args.cluster}.json")
    results.write_text(json.dumps({"figures": rows, "stages": table,
                                   "device": measured["device"]}, indent=1))
    print(f"wrote {results}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("step", choices=["predict", "measure", "compare"])
    parser.add_argument("--build", default="build")
    parser.add_argument("--out", default="gpu_model_out")
    parser.add_argument("--measured")
    parser.add_argument("--cluster", default="dgx-h100",
                        help="the preset predict compiles for and compare reads")
    parser.add_argument("--predicted", help="the predictions' file (default: "
                        "bench/gpu_model/predicted-CLUSTER.json)")
    parser.add_argument("--results", help="compare's output (default: "
                        "bench/gpu_model/results-CLUSTER.json)")
    args = parser.parse_args()
    {"predict": predict, "measure": measure, "compare": compare}[args.step](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
