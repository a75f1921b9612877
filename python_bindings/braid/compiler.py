"""braid.compile and the Artifact it returns."""
import json
import numbers
import os
import pathlib
import shutil
import subprocess
import tempfile

from . import _native
from .model import Model, load_model

_TARGETS = ("none", "cpu", "cuda")
_SHARDING_TYPES = ("table_wise", "row_wise", "column_wise", "table_row_wise", "data_parallel")


def _check_int(name, value, low, high):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise _native.Error(f"{name} must be an integer, not {type(value).__name__}")
    if not low <= value <= high:
        raise _native.Error(f"{name} must be between {low} and {high}, got {value}")
    return int(value)


def compile(model, cluster="dgx-h100", nodes=1, ranks_per_node=None, target="none",
            train=False, planner="braid", plan=None, opt_level=2, out=None,
            force_sharding=None, force_co_optimization=False, cuda_chips=None,
            pipeline_input_dist=False, exchange_precision=None):
    """Compiles `model` for a cluster, as braid-compile does, and returns an
    Artifact.

    model: a Model, a spec dict or a path; cluster: a preset ("dgx-h100",
    "aws-p5", ...), "local-cpu" or a hardware JSON file; nodes and
    ranks_per_node (None: the hardware's); target: "none" (plan, partition
    and predict), "cpu" (also the CPU backend's artifact) or "cuda" (the
    CUDA artifact and its kernels, for sm_80 and sm_90);
    train: also derive the training step; planner: "braid", "greedy:KEY" or
    "keep"; plan: a plan to price and partition as it is (a plan.json path,
    its dict, or a TorchRec ShardingPlan); opt_level: 0, 1 or 2; out: the
    output directory (a new temporary one by default); cuda_chips: with
    target "cuda", the GPU architectures (e.g. ["sm_90"]; default sm_80 and
    sm_90); pipeline_input_dist: also add each function's pipelined form,
    which runs the next batch's input distribution inside the step, where
    the simulator predicts a gain (opt_level 2; with train and target
    "cpu", Artifact.train(..., pipelined=True) trains with it);
    exchange_precision: "bf16" or "f16" to move the pooled rows and their
    gradients in 16 bits where the simulator predicts a gain (lossy; None:
    f32)."""
    model = load_model(model)
    if not isinstance(cluster, (str, pathlib.Path)):
        raise _native.Error(f"cluster must be a preset name or a path, not {type(cluster).__name__}")
    nodes = _check_int("nodes", nodes, 1, 1024)
    if ranks_per_node is not None:
        ranks_per_node = _check_int("ranks_per_node", ranks_per_node, 1, 1024)
    opt_level = _check_int("opt_level", opt_level, 0, 2)
    if target not in _TARGETS:
        raise _native.Error(f"target must be one of {', '.join(_TARGETS)}, got {target!r}")
    if force_sharding is not None and force_sharding not in _SHARDING_TYPES:
        raise _native.Error(f"force_sharding must be one of {', '.join(_SHARDING_TYPES)}, "
                            f"got {force_sharding!r}")
    if cuda_chips is not None and (isinstance(cuda_chips, str) or
                                   not all(isinstance(c, str) for c in cuda_chips)):
        raise _native.Error("cuda_chips must be a list of names such as 'sm_90'")
    if exchange_precision is not None and exchange_precision not in ("bf16", "f16"):
        raise _native.Error(f"exchange_precision must be 'bf16', 'f16' or None, "
                            f"got {exchange_precision!r}")
    if not isinstance(planner, str):
        raise _native.Error(f"planner must be a string, not {type(planner).__name__}")
    made = out is None
    out = pathlib.Path(out if out is not None else tempfile.mkdtemp(prefix="braid-"))
    out.mkdir(parents=True, exist_ok=True)
    try:
        return _compile_into(out, model, cluster, nodes, ranks_per_node, planner, opt_level,
                             train, target, force_co_optimization, force_sharding, cuda_chips,
                             plan, pipeline_input_dist, exchange_precision)
    except BaseException:
        # A folder this call made holds nothing the caller can use.
        if made:
            shutil.rmtree(out, ignore_errors=True)
        raise


def _compile_into(out, model, cluster, nodes, ranks_per_node, planner, opt_level, train,
                  target, force_co_optimization, force_sharding, cuda_chips, plan,
                  pipeline_input_dist, exchange_precision):
    request = {
        "model": model.write(out), "out": str(out), "cluster": str(cluster), "nodes": nodes,
        "ranks_per_node": ranks_per_node or 0, "planner": planner, "opt_level": opt_level,
        "train": bool(train), "target": target,
        "force_co_optimization": bool(force_co_optimization),
        "pipeline_input_dist": bool(pipeline_input_dist),
    }
    if exchange_precision is not None:
        request["exchange_precision"] = str(exchange_precision)
    if force_sharding:
        request["force_sharding"] = force_sharding
    if cuda_chips is not None:
        request["cuda_chips"] = list(cuda_chips)
    if plan is not None:
        request["plan"] = _write_plan(plan, out, model)
    report = _native.call(_native.native().compile, json.dumps(request))
    return Artifact(out, report=report, model=model, target=target, train=bool(train))


def _write_plan(plan, out, model):
    """A plan given as a path, a plan.json dict or a TorchRec ShardingPlan,
    written where braid-compile's --plan reads it. A TorchRec plan's
    data-parallel tables take their sizes from the model."""
    if isinstance(plan, (str, pathlib.Path)):
        if not pathlib.Path(plan).is_file():
            raise _native.Error(f"no plan file '{plan}'")
        return str(plan)
    if not (isinstance(plan, dict) and "tables" in plan):
        from .torchrec_bridge import plan_from_torchrec
        sizes = {t["name"]: (t["num_embeddings"], t["embedding_dim"]) for t in model.tables}
        plan = plan_from_torchrec(plan, tables=sizes)
    path = out / "input_plan.json"
    try:
        path.write_text(json.dumps(plan, indent=2) + "\n")
    except (TypeError, ValueError) as error:
        raise _native.Error(f"the plan is not JSON: {error}") from None
    return str(path)


class Artifact:
    """What braid.compile wrote to `dir`: program.mlir (the per-rank
    program), model.mlir, plan.json, trace.json and, for target "cpu", the
    compiled library. Runs go through braid-run."""

    def __init__(self, directory, report="", model=None, target="none", train=False):
        self.dir = pathlib.Path(directory)
        self.report = report
        self.model = model
        self.target = target
        self.train_step = train
        self._plan = None

    def __repr__(self):
        return f"<braid.Artifact {self.dir} target={self.target}>"

    @property
    def plan(self):
        """plan.json as a dict: the tables' placements, the dense layers,
        the predictions and what co-optimization did."""
        if self._plan is None:
            self._plan = json.loads((self.dir / "plan.json").read_text())
        return self._plan

    @property
    def ranks(self):
        """The number of ranks the program was compiled for."""
        return len(self.plan["predicted"]["per_rank_ms"])

    def plan_table(self):
        """The plan as braid-compile prints it: each table's sharding, ranks
        and lookup time, each rank's predicted time and memory, the
        predictions and the dense layers."""
        return self.report

    @property
    def predicted(self):
        """The simulated per-rank program: {"iteration_ms", "breakdown",
        "critical_rank", "per_rank_ms"}, and for a training artifact
        "train_step_ms" and "train_step_breakdown" too."""
        predicted = self.plan["predicted"]
        keys = ["iteration_ms", "breakdown", "critical_rank", "per_rank_ms",
                "train_step_ms", "train_step_breakdown", "train_step_critical_rank",
                "train_step_per_rank_ms"]
        return {key: predicted[key] for key in keys if key in predicted}

    @property
    def trace_path(self):
        """trace.json: the simulated timeline (chrome://tracing, Perfetto,
        braid.plot.timeline)."""
        return self.dir / "trace.json"

    # -- running --------------------------------------------------------

    def run_reference(self, seed=0):
        """The forward pass of the per-rank program under the reference
        semantics on seeded random inputs, gathered over the ranks."""
        seed = _check_int("seed", seed, 0, 2**63 - 1)
        with tempfile.TemporaryDirectory(prefix="braid-ref-") as dump:
            _run([_native.tool("braid-run"), str(self.dir), "--reference", "--seed", str(seed),
                  "--dump", dump])
            return _load_npy(pathlib.Path(dump) / "output.npy")

    def random_inputs(self, seed=0):
        """Seeded random (inputs, weights) for this model, as the reference
        semantics draws them, keyed like braid-run's .npy files; with a
        training step, also binary "labels"."""
        import numpy as np
        seed = _check_int("seed", seed, 0, 2**63 - 1)
        with tempfile.TemporaryDirectory(prefix="braid-inputs-") as dump:
            _run([_native.tool("braid-run"), str(self.dir / "model.mlir"), "--reference",
                  "--seed", str(seed), "--dump", dump])
            inputs = _load_dir(pathlib.Path(dump) / "inputs")
            weights = _load_dir(pathlib.Path(dump) / "weights")
        if self.train_step:
            batch = inputs["dense"].shape[0]
            inputs["labels"] = np.random.default_rng(seed).integers(0, 2, batch).astype(np.float32)
        return inputs, weights

    def run(self, inputs, weights, ranks=None, pipelined=False):
        """Runs the compiled forward pass (target "cpu") on `ranks` processes
        with numpy `inputs` and `weights` (dicts keyed by braid-run's .npy
        names: "dense", "<table>.indices", "<table>.offsets", "<table>",
        "bottom_mlp.0.weight", ...); returns the output as a numpy array.
        With pipelined=True its pipelined form runs instead (see
        Artifact.pipelined), with the same output."""
        self._need_cpu("run")
        if self.train_step:
            raise _native.Error("this artifact holds a training step: run its forward pass "
                                "from an artifact compiled without train=True")
        self._need_pipelined(pipelined)
        with tempfile.TemporaryDirectory(prefix="braid-run-") as work:
            work = pathlib.Path(work)
            args = self._stage(work, inputs, weights)
            self._launch(ranks, args + ["--dump", str(work / "dump")]
                         + (["--pipelined"] if pipelined else []))
            return _load_npy(work / "dump" / "output.npy")

    @property
    def pipelined(self):
        """Whether the artifact holds its compiled function's pipelined form
        (compiled with pipeline_input_dist=True, where the simulator
        predicted a gain)."""
        return self.target == "cpu" and (self.dir / "pipelined" / "libprogram.so").exists()

    def train(self, steps, inputs, weights, ranks=None, pipelined=False):
        """Trains `steps` steps of the compiled training step (target "cpu",
        train=True) on one batch; `inputs` needs "labels". With
        pipelined=True, its pipelined form trains instead (see
        Artifact.pipelined), with the same results. Returns (losses,
        trained weights, optimizer state): a numpy array and two dicts of
        them."""
        self._need_cpu("train")
        if not self.train_step:
            raise _native.Error("this artifact has no training step: compile with train=True")
        self._need_pipelined(pipelined)
        steps = _check_int("steps", steps, 1, 1000000)
        if "labels" not in inputs:
            raise _native.Error("training needs inputs['labels']")
        with tempfile.TemporaryDirectory(prefix="braid-train-") as work:
            work = pathlib.Path(work)
            args = self._stage(work, inputs, weights)
            self._launch(ranks, args + ["--steps", str(steps), "--dump", str(work / "dump")]
                         + (["--pipelined"] if pipelined else []))
            dump = work / "dump"
            return (_load_npy(dump / "losses.npy"), _load_dir(dump / "weights"),
                    _load_dir(dump / "state"))

    def to_torchrec_plan(self):
        """The plan as a TorchRec ShardingPlan when torchrec imports, else
        the same structure as a dict (see braid.torchrec_bridge)."""
        from .torchrec_bridge import plan_to_torchrec
        return plan_to_torchrec(self.plan, self.ranks)

    # -- helpers --------------------------------------------------------

    def _need_pipelined(self, pipelined):
        if pipelined and not self.pipelined:
            raise _native.Error("this artifact has no pipelined form: compile with "
                                "pipeline_input_dist=True (the simulator adds it where it "
                                "predicts a gain)")

    def _need_cpu(self, what):
        # A library left in the folder by an earlier compile is not this
        # artifact's.
        if self.target != "cpu" or not (self.dir / "libprogram.so").exists():
            raise _native.Error(f"Artifact.{what} needs a CPU artifact: compile with target='cpu'")

    def _stage(self, work, inputs, weights):
        for name, arrays in (("inputs", inputs), ("weights", weights)):
            if not isinstance(arrays, dict):
                raise _native.Error(f"{name} must be a dict of numpy arrays keyed by .npy name")
            _save_dir(work / name, arrays)
        return [str(self.dir), "--inputs", str(work / "inputs"),
                "--weights", str(work / "weights")]

    def _launch(self, ranks, args):
        ranks = self.ranks if ranks is None else _check_int("ranks", ranks, 1, 4096)
        if ranks != self.ranks:
            raise _native.Error(f"the artifact was compiled for {self.ranks} ranks, not {ranks}")
        command = [_native.tool("braid-run")] + args
        if ranks > 1:
            command = ["mpirun", "--oversubscribe", "-n", str(ranks)] + command
        _run(command)


def _run(command):
    env = dict(os.environ)
    # Open MPI refuses root without these; harmless otherwise.
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env)
    except OSError as error:
        raise _native.Error(f"cannot run {command[0]}: {error}") from None
    if done.returncode != 0:
        # Every rank reports; each message once, in order.
        lines = list(dict.fromkeys(line for line in (done.stderr + done.stdout).splitlines()
                                   if "error" in line))
        raise _native.Error("\n".join(lines[:20]) or
                            f"{' '.join(command)} exited with {done.returncode}")
    return done.stdout


def _load_npy(path):
    import numpy as np
    return np.load(path, allow_pickle=False)


def _load_dir(directory):
    return {path.name[:-4]: _load_npy(path) for path in sorted(pathlib.Path(directory).glob("*.npy"))}


def _save_dir(directory, arrays):
    import numpy as np
    directory.mkdir(parents=True, exist_ok=True)
    for name, value in arrays.items():
        if (not isinstance(name, str) or not name or "/" in name or "\0" in name
                or name.startswith(".")):
            raise _native.Error(f"{name!r} is not a .npy name")
        array = np.asarray(value)
        if array.dtype == object or array.dtype.kind not in "biuf":
            raise _native.Error(f"'{name}' must be a numeric array, not {array.dtype}")
        # braid-run reads C-ordered, native-endian .npy files.
        array = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("="))
        np.save(directory / f"{name}.npy", array, allow_pickle=False)
