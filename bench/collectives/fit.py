"""Fits the free constants of the collective model on the calibration half
of bench/collectives' corpus, never on the validation half.

Free constants, per fabric class (the network transport NCCL runs over):
  inter_node.latency_us       what the transport adds to a step between nodes
  inter_node.nic_efficiency   the share of the NICs' line rate NCCL reaches
  inter_node.post_overhead_us what the transport costs per posted network
                              operation: no ring step across nodes is
                              faster (NCCL's getNetOverhead, 1 us, is the
                              default)
and one for all descriptions:
  comm_chunk_KiB            the bytes a channel moves per pipeline step

Each class is fitted on the calibration sweeps of its own descriptions
(grid search, minimizing the geomean error of bench/collectives/run.py:
latency x efficiency, then latency x post overhead, alternately until
neither moves),
then written into every description of that class, so that a validation
system gets the constants of its transport and nothing fitted on itself.

--classes A,B fits only those classes (the others keep the constants their
descriptions hold); --keep-chunk keeps the descriptions' comm_chunk_KiB
instead of fitting it.

usage: python3 bench/collectives/fit.py [--build build] [--classes A,B]
                                        [--keep-chunk] [--write]
"""
import argparse
import importlib.util
import json
import math
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("collectives_run", ROOT / "bench" / "collectives" / "run.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

# Fabric class -> the descriptions that use it (examples/clusters unless a
# path is given). The first names of each list have calibration sweeps.
CLASSES = {
    "infiniband_roce": ["dgx-h100", "dgx-a100", "azure-nd-h100-v5", "gcp-a3-ultra", "oci-a100",
                        "oci-h100", "oci-h200", "bench/collectives/systems/hgx-h200-ib.json"],
    "efa": ["aws-p5", "aws-p4d"],
    "gpudirect_tcpx": ["gcp-a3"],
    "gpudirect_tcpxo": ["gcp-a3-mega"],
    "slingshot": ["bench/collectives/systems/alcf-polaris.json",
                  "bench/collectives/systems/nersc-perlmutter.json"],
}
LATENCIES = [0, 2, 5, 10, 15, 20, 30, 45, 60, 80, 100]
EFFICIENCIES = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.94, 0.96]
POSTS = [1, 2, 3, 4, 6, 8, 10, 12, 14, 16, 20]
CHUNKS_KIB = [32, 64, 128, 256, 512]


def description_path(name):
    return ROOT / name if name.endswith(".json") else ROOT / "examples" / "clusters" / f"{name}.json"


class Variants:
    """Hardware descriptions with some constants replaced, as temp files."""

    def __init__(self, tmp):
        self.tmp = pathlib.Path(tmp)
        self.count = 0

    def make(self, name, chunk_kib, inter=None):
        desc = json.loads(description_path(name).read_text())
        desc["comm_chunk_KiB"] = chunk_kib
        if inter:
            desc["inter_node"].update(inter)
        self.count += 1
        path = self.tmp / f"v{self.count}.json"
        path.write_text(json.dumps(desc))
        return str(path)


def error(braid_sim, variants, chunk_kib, params, only=None):
    """Geomean error of the calibration half; `params` maps a class to its
    inter_node constants; `only` restricts to one class's sweeps."""
    owner = {name: cls for cls, names in CLASSES.items() for name in names}
    cache = {}

    def hardware_of(stem, entry):
        name = entry["hardware"]
        if only and owner.get(name) != only:
            return None
        key = (name, owner.get(name))
        if key not in cache:
            cache[key] = variants.make(name, chunk_kib, params.get(owner.get(name)))
        return cache[key]

    points, _ = bench.corpus(braid_sim, hardware_of, halves=("calibration",))
    return bench.geomean_error([p["error"] for p in points]), len(points)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--write", action="store_true",
                        help="write the fitted constants into the descriptions")
    parser.add_argument("--classes", default=",".join(CLASSES),
                        help="the fabric classes to fit (comma-separated)")
    parser.add_argument("--keep-chunk", action="store_true",
                        help="keep the descriptions' comm_chunk_KiB")
    args = parser.parse_args()
    fitted = args.classes.split(",")
    unknown = [c for c in fitted if c not in CLASSES]
    if unknown:
        parser.error(f"unknown classes {unknown}; known: {', '.join(CLASSES)}")
    braid_sim = str((ROOT / args.build / "bin" / "braid-sim").resolve())
    with tempfile.TemporaryDirectory() as tmp:
        variants = Variants(tmp)
        # Start from the constants the descriptions hold (the last fit's),
        # NCCL's default post overhead where a description has none.
        params = {}
        for cls, names in CLASSES.items():
            inter = json.loads(description_path(names[0]).read_text())["inter_node"]
            params[cls] = {"latency_us": inter.get("latency_us", 0),
                           "nic_efficiency": inter["nic_efficiency"],
                           "post_overhead_us": inter.get("post_overhead_us", 1)}
        chunk = None
        held = json.loads(description_path(CLASSES[fitted[0]][0]).read_text()).get(
            "comm_chunk_KiB", 128)
        for round_ in range(2):
            previous = chunk
            chunk = held if args.keep_chunk else min(
                CHUNKS_KIB, key=lambda c: error(braid_sim, variants, c, params)[0])
            print(f"round {round_}: comm_chunk_KiB {chunk}")
            if round_ > 0 and chunk == previous and not any_moved:
                break
            any_moved = False
            for cls in fitted:
                start = dict(params[cls])
                best = None
                # Two-dimensional grids in turn, each keeping the third
                # constant, until a pass moves nothing (at most 4 passes).
                for pass_ in range(4):
                    moved = False
                    for first, second, values in (
                            ("latency_us", "nic_efficiency", (LATENCIES, EFFICIENCIES)),
                            ("latency_us", "post_overhead_us", (LATENCIES, POSTS))):
                        for a in values[0]:
                            for b in values[1]:
                                trial_cls = dict(params[cls], **{first: a, second: b})
                                trial = dict(params, **{cls: trial_cls})
                                e, n = error(braid_sim, variants, chunk, trial, only=cls)
                                if n and (best is None or e < best[0] - 1e-12):
                                    best = (e, trial_cls, n)
                        if best and best[1] != params[cls]:
                            params[cls] = best[1]
                            moved = True
                    if not moved:
                        break
                any_moved = any_moved or params[cls] != start
                if best:
                    c = params[cls]
                    print(f"  {cls:<16} latency_us {c['latency_us']:>4} nic_efficiency "
                          f"{c['nic_efficiency']:.2f} post_overhead_us {c['post_overhead_us']:>3}: "
                          f"{best[0] * 100:.1f}% over {best[2]} calibration points")
        total, n = error(braid_sim, variants, chunk, params)
        print(f"calibration half: {total * 100:.1f}% geomean error over {n} points")
    result = {"comm_chunk_KiB": chunk, "classes": params}
    print(json.dumps(result, indent=1))
    if args.write:
        for cls in fitted:
            for name in CLASSES[cls]:
                path = description_path(name)
                desc = json.loads(path.read_text())
                desc["inter_node"].update(params[cls])
                desc["comm_chunk_KiB"] = chunk
                text = json.dumps(desc, indent=2) + "\n"
                path.write_text(text)
                print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
