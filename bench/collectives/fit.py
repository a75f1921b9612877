"""Fits the free constants of the collective model on the calibration half
of bench/collectives' corpus, never on the validation or fresh3 half.

Free constants, per fabric class (the network transport NCCL runs over):
  inter_node.latency_us       what the transport adds to a step between nodes
  inter_node.nic_efficiency   the share of the NICs' line rate NCCL reaches
  inter_node.post_overhead_us what the transport costs per posted network
                              operation: no ring step across nodes is
                              faster (NCCL's getNetOverhead, 1 us, is the
                              default)
and one for all descriptions:
  comm_chunk_KiB            the bytes a channel moves per pipeline step

Free constants per intra-node class (the fabric inside a node), fitted after
the fabric classes on a grid of their own (--classes pcie,nvls):
  pcie: intra_node.link_efficiency  the share of NCCL's nominal PCIe rate a
                                    ring reaches
        collective_floor_us         the least time a collective takes
                                    (back-to-back calls go no faster than the
                                    host issues them)
  nvls: intra_node.nvls_node_efficiency  the share of the NVLink rate one
                                         node's NVLS all_reduce reaches
        intra_node.nvls_fill_KiB         the bytes its pipeline fills first
(an NVLink node's link figures are what NCCL reaches, so its ring has none).

Each class is fitted on the calibration sweeps of its own descriptions
(grid search, minimizing the geomean error of bench/collectives/run.py:
latency x efficiency, then latency x post overhead, alternately until
neither moves; a class keeps the constants it holds unless that lowers its
error by more than 0.1 point, the grid's flat optimum, with any one of its
points left out),
then written into every description of that class, so that a validation
system gets the constants of its transport and nothing fitted on itself.

--classes A,B fits only those classes (the others keep the constants their
descriptions hold), and needs --keep-chunk, which keeps the descriptions'
comm_chunk_KiB instead of fitting it (a constant every class shares).

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
    "infiniband_roce": ["dgx-h100", "dgx-a100", "gcp-a3-ultra", "oci-a100",
                        "oci-h100", "oci-h200", "bench/collectives/systems/hgx-h200-ib.json"],
    # InfiniBand reached through a virtual machine's SR-IOV virtual
    # functions (Azure's ND VMs): a bare-metal InfiniBand fabric's rate,
    # with what the VF path adds to each operation.
    "infiniband_vf": ["azure-nd-a100-v4", "azure-nd-h100-v5"],
    # EFA as aws-ofi-nccl drives it per platform (src/platform-aws.c, v1.13):
    # RDMA writes with no flush on p5's EFA v2, send/recv with a flush on
    # p4d's EFA v1. Two transports, two sets of constants.
    "efa_rdma": ["aws-p5"],
    "efa_sendrecv": ["aws-p4d"],
    "gpudirect_tcpx": ["gcp-a3"],
    "gpudirect_tcpxo": ["gcp-a3-mega"],
    "slingshot": ["bench/collectives/systems/alcf-polaris.json",
                  "bench/collectives/systems/nersc-perlmutter.json"],
}
# Intra-node class -> its descriptions, as above (the first has the
# calibration sweeps).
INTRA_CLASSES = {
    "pcie": ["bench/collectives/systems/sheffield-bessemer-v100.json", "pcie-a100x4",
             "bench/collectives/systems/pcie-a100x2-n013.json"],
    # NVSwitch nodes with NVLS (Hopper); the one-node NVLS sweep of the
    # calibration half is AWS p5's.
    "nvls": ["aws-p5", "dgx-h100", "azure-nd-h100-v5", "gcp-a3", "gcp-a3-mega",
             "gcp-a3-ultra", "oci-h100", "oci-h200",
             "bench/collectives/systems/hgx-h200-ib.json"],
}
LINK_EFFICIENCIES = [0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0]
FLOORS_US = [0, 4, 6, 8, 10, 11, 12, 13, 14, 15, 16, 18]
NVLS_EFFICIENCIES = [0.6, 0.65, 0.68, 0.7, 0.72, 0.74, 0.76, 0.78, 0.8, 0.85, 0.9]
NVLS_FILLS_KIB = [0, 1024, 2048, 4096, 6144, 8192, 12288, 16384, 32768]
# Each intra-node class's constants: (where in the description, the grid,
# the messages [low, high) bytes whose time it sets), fitted in this order.
# Each on the messages whose time it sets, as an alpha-beta model is
# fitted: a floor on messages under 64 KiB (latency-bound), an efficiency
# on those from 64 MiB (bandwidth-bound), NVLS's fill on those between.
# Fitted on all sizes at once, the medium messages (whose error is the
# ring's pipeline fill, a shared constant) pull the PCIe efficiency to
# wherever it offsets them.
INTRA_CONSTANTS = {
    "pcie": [("collective_floor_us", FLOORS_US, (0, 64 << 10)),
             ("intra_node.link_efficiency", LINK_EFFICIENCIES, (64 << 20, 1 << 62))],
    "nvls": [("intra_node.nvls_node_efficiency", NVLS_EFFICIENCIES, (64 << 20, 1 << 62)),
             ("intra_node.nvls_fill_KiB", NVLS_FILLS_KIB, (64 << 10, 64 << 20))],
}
LATENCIES = [0, 2, 5, 10, 15, 20, 30, 45, 60, 80, 100]
EFFICIENCIES = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.94, 0.96]
POSTS = [1, 2, 3, 4, 6, 8, 10, 12, 14, 16, 20]
CHUNKS_KIB = [32, 64, 128, 256, 512]
# A fabric class's constants move only when the fit improves its geomean
# calibration error by more than this (0.1 point), with any one of the
# class's calibration points left out.
FLAT_OPTIMUM = 0.001


def description_path(name):
    return ROOT / name if name.endswith(".json") else ROOT / "examples" / "clusters" / f"{name}.json"


class Variants:
    """Hardware descriptions with some constants replaced, as temp files."""

    def __init__(self, tmp):
        self.tmp = pathlib.Path(tmp)
        self.count = 0

    def make(self, name, chunk_kib, inter=None, intra=None):
        desc = json.loads(description_path(name).read_text())
        desc["comm_chunk_KiB"] = chunk_kib
        if inter:
            desc["inter_node"].update(inter)
        if intra:
            apply_intra(desc, intra)
        self.count += 1
        path = self.tmp / f"v{self.count}.json"
        path.write_text(json.dumps(desc))
        return str(path)


def apply_intra(desc, intra):
    """Writes an intra-node class's constants (key paths such as
    "intra_node.link_efficiency") into a description."""
    for path, value in intra.items():
        *parents, key = path.split(".")
        node = desc
        for parent in parents:
            node = node[parent]
        node[key] = value


def held_intra(desc, cls):
    """The constants of intra-node class `cls` a description holds (a
    constant it leaves out at the value the model then takes)."""
    defaults = {"collective_floor_us": 0, "intra_node.link_efficiency": 1.0,
                "intra_node.nvls_node_efficiency": desc["intra_node"].get("nvls_efficiency"),
                "intra_node.nvls_fill_KiB": 0}
    held = {}
    for path, _, _ in INTRA_CONSTANTS[cls]:
        node = desc
        for part in path.split(".")[:-1]:
            node = node[part]
        held[path] = node.get(path.split(".")[-1], defaults[path])
    return held


def error(braid_sim, variants, chunk_kib, params, only=None, intra_params=None,
          sizes=(0, 1 << 62), per_point=False):
    """Geomean error of the calibration half; `params` maps a class to its
    inter_node constants, `intra_params` an intra-node class to its own;
    `only` restricts to one (fabric or intra-node) class's sweeps, `sizes`
    to the messages in [low, high) bytes. With `per_point`, each point's
    error by (sweep, bytes) instead."""
    owner = {name: cls for cls, names in CLASSES.items() for name in names}
    intra_owner = {name: cls for cls, names in INTRA_CLASSES.items() for name in names}
    intra_params = intra_params or {}
    cache = {}

    def hardware_of(stem, entry):
        name = entry["hardware"]
        if only and only not in (owner.get(name), intra_owner.get(name)):
            return None
        key = (name, owner.get(name))
        if key not in cache:
            cache[key] = variants.make(name, chunk_kib, params.get(owner.get(name)),
                                       intra_params.get(intra_owner.get(name)))
        return cache[key]

    points, _ = bench.corpus(braid_sim, hardware_of, halves=("calibration",))
    points = [p for p in points if sizes[0] <= p["bytes"] < sizes[1]]
    if per_point:
        return {(p["sweep"], p["bytes"]): p["error"] for p in points}
    return bench.geomean_error([p["error"] for p in points]), len(points)


def improves_without_any_one_point(kept, fitted):
    """Whether `fitted` (a point -> error map) lowers the geomean error of
    `kept` by more than FLAT_OPTIMUM with any one calibration point left
    out: a class's constants do not move for what a single point says."""
    keys = list(kept)
    if len(keys) < 2:
        return False
    total_kept = sum(kept.values())
    total_fitted = sum(fitted[k] for k in keys)
    n = len(keys) - 1
    return all(math.exp((total_kept - kept[k]) / n) -
               math.exp((total_fitted - fitted[k]) / n) > FLAT_OPTIMUM
               for k in keys)


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
    requested = args.classes.split(",")
    unknown = [c for c in requested if c not in CLASSES and c not in INTRA_CLASSES]
    if unknown:
        parser.error(f"unknown classes {unknown}; known: "
                     f"{', '.join(list(CLASSES) + list(INTRA_CLASSES))}")
    fitted = [c for c in requested if c in CLASSES]
    fitted_intra = [c for c in requested if c in INTRA_CLASSES]
    # comm_chunk_KiB is one constant for every description, and --write
    # writes it only into the classes fitted: fitted on a subset, the other
    # descriptions would keep the old chunk the fit did not use.
    if not args.keep_chunk and set(fitted) != set(CLASSES):
        parser.error("comm_chunk_KiB is shared by every class: fit it with all of "
                     "them, or keep it (--keep-chunk) when fitting --classes")
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
        intra_params = {}
        for cls, names in INTRA_CLASSES.items():
            intra_params[cls] = held_intra(
                json.loads(description_path(names[0]).read_text()), cls)
        chunk = None
        held = json.loads(description_path(
            CLASSES[fitted[0]][0] if fitted else "dgx-h100").read_text()).get(
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
                # A grid's optimum is flat: the constants a class holds stay
                # unless the fit lowers its calibration error by more than
                # FLAT_OPTIMUM with any one of its points left out
                # (docs/cost-model.md), so that a refit after a model change
                # moves only what the change moved, and no single point
                # moves a class.
                if best and params[cls] != start:
                    kept = error(braid_sim, variants, chunk,
                                 dict(params, **{cls: start}), only=cls, per_point=True)
                    fitted_points = error(braid_sim, variants, chunk, params, only=cls,
                                          per_point=True)
                    if not improves_without_any_one_point(kept, fitted_points):
                        params[cls] = start
                        best = (bench.geomean_error(list(kept.values())), start, best[2])
                any_moved = any_moved or params[cls] != start
                if best:
                    c = params[cls]
                    print(f"  {cls:<16} latency_us {c['latency_us']:>4} nic_efficiency "
                          f"{c['nic_efficiency']:.2f} post_overhead_us {c['post_overhead_us']:>3}: "
                          f"{best[0] * 100:.1f}% over {best[2]} calibration points")
        for cls in fitted_intra:
            # Each constant on the messages whose time it sets
            # (INTRA_CONSTANTS), in turn, twice: NVLS's fill also lengthens
            # the large messages its efficiency is fitted on.
            for key, values, sizes in INTRA_CONSTANTS[cls] * 2:
                best = None
                for value in values:
                    trial = dict(intra_params, **{cls: dict(intra_params[cls], **{key: value})})
                    e, n = error(braid_sim, variants, chunk, params, only=cls,
                                 intra_params=trial, sizes=sizes)
                    if n and (best is None or e < best[0] - 1e-12):
                        best = (e, trial[cls], n)
                if best:
                    intra_params[cls] = best[1]
                    print(f"  {cls:<16} {key} {best[1][key]}: {best[0] * 100:.1f}% over "
                          f"{best[2]} calibration points")
            e, n = error(braid_sim, variants, chunk, params, only=cls, intra_params=intra_params)
            print(f"  {cls:<16} all sizes: {e * 100:.1f}% over {n} calibration points")
        total, n = error(braid_sim, variants, chunk, params, intra_params=intra_params)
        print(f"calibration half: {total * 100:.1f}% geomean error over {n} points")
    result = {"comm_chunk_KiB": chunk, "classes": params, "intra_classes": intra_params}
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
        for cls in fitted_intra:
            for name in INTRA_CLASSES[cls]:
                path = description_path(name)
                desc = json.loads(path.read_text())
                apply_intra(desc, intra_params[cls])
                path.write_text(json.dumps(desc, indent=2) + "\n")
                print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
