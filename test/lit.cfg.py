# -*- Python -*-
# Lit configuration for Braid's tests.

import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "BRAID"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".json", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.braid_obj_root, "test")
config.excludes = ["Inputs", "Fuzz", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%braid_src", config.braid_src_root))
config.substitutions.append(("%braid_tools_dir", config.braid_tools_dir))
config.substitutions.append(("%braid_obj_root", config.braid_obj_root))
config.substitutions.append(("%python", config.python_executable or "python3"))

# A [[VAR]] captured in one CHECK-LABEL block is not visible in the next.
config.environment["FILECHECK_OPTS"] = "-enable-var-scope"

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tools = ["braid-opt", "braid-compile", "braidrt-selftest", "braid-translate", "braid-run", "braid-sim", "braid-calibrate", "braid-bench-planner"]
llvm_config.add_tool_substitutions(
    [ToolSubst(t, unresolved="ignore") for t in tools], [config.braid_tools_dir]
)

import os
import subprocess

# MPI tests: Open MPI refuses to run as root unless told to, and CI machines
# have fewer cores than some tests have ranks.
if shutil.which("mpirun"):
    config.available_features.add("mpi")
    config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    config.environment["OMPI_MCA_rmaps_base_oversubscribe"] = "1"

# Two hosts on one machine (scripts/two_hosts.sh): network namespaces, which
# need root (or CAP_NET_ADMIN) and iproute2.
if "mpi" in config.available_features:
    probe = subprocess.run(
        ["bash", os.path.join(config.braid_src_root, "scripts", "two_hosts.sh"), "check"],
        env=dict(os.environ, BRAID_HOSTS="braidlit"),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if probe.returncode == 0:
        config.available_features.add("two-hosts")
    else:
        lit_config.note("two-host tests are unsupported: " + probe.stderr.strip())

# A small filesystem of our own (a tmpfs in a private mount namespace) lets
# tests fill a disk; it needs root or user namespaces.
import subprocess
if shutil.which("unshare") and subprocess.run(
        ["unshare", "--mount", "--map-root-user", "sh", "-c",
         "mount -t tmpfs -o size=64k none /tmp 2>/dev/null"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
    config.available_features.add("tmpfs")

# An ASan+UBSan build (scripts/test.sh --sanitize): its reports fail tests,
# and tests that load the instrumented runtime into an uninstrumented
# process (Python's ctypes) cannot run.
import os
cache = os.path.join(config.braid_obj_root, "CMakeCache.txt")
sanitized = os.path.exists(cache) and "BRAID_SANITIZE:BOOL=ON" in open(cache).read()
if sanitized:
    config.available_features.add("asan")
# How long a tool may run on one input before a test calls it hung:
# instrumented code runs several times slower (a 4-rank reference run of
# 1024 x 1024 GEMMs: 6.5 s plain, 39 s under ASan on 2 shared cores).
config.substitutions.append(("%hang_timeout_s", "180" if sanitized else "30"))
for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

# mlir-runner executes lowered loops on this machine, with the C runner's
# printing helpers (a rewrite of GPU loops is checked on the CPU).
runner = shutil.which("mlir-runner", path=config.llvm_tools_dir)
runner_libs = [os.path.join(os.path.dirname(config.llvm_tools_dir), "lib", name)
               for name in ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so")]
if runner and all(os.path.exists(lib) for lib in runner_libs):
    config.available_features.add("mlir-runner")
    config.substitutions.append(
        ("%mlir_runner", f"{runner} -shared-libs={','.join(runner_libs)}"))

# The CUDA target: ptxas (the CUDA toolkit) assembles the kernels
# braid-compile --target cuda writes; a GPU runs them.
ptxas = os.environ.get("BRAID_PTXAS") or shutil.which("ptxas") or (
    "/usr/local/cuda/bin/ptxas" if os.access("/usr/local/cuda/bin/ptxas", os.X_OK) else None)
if ptxas:
    config.available_features.add("ptxas")
    config.environment["BRAID_PTXAS"] = ptxas
    config.substitutions.append(("%ptxas", ptxas))
if shutil.which("nvidia-smi") and subprocess.run(
        ["nvidia-smi", "-L"], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL).returncode == 0:
    config.available_features.add("cuda-device")
if os.path.exists(os.path.join(config.braid_tools_dir, "braidrt-cuda-selftest")):
    config.available_features.add("cuda-runtime")
    tools.append("braidrt-cuda-selftest")
    llvm_config.add_tool_substitutions(
        [ToolSubst("braidrt-cuda-selftest", unresolved="ignore")],
        [config.braid_tools_dir])
