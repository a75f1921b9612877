#!/usr/bin/env bash
# Installs TorchRec for the TorchRec bridge's optional parts (the torchrec
# tests in test/python and bench/planner/vs_torchrec.py), which skip or say
# "n/a" without it. Not part of setup.sh: it downloads about 1 GB.
#
# Known to work: torch 2.14.0 with torchrec 1.9.2 and fbgemm-gpu-cpu 1.9.0
# (torch 2.15 with fbgemm-gpu-cpu 1.9.0 fails to load: an undefined symbol).
# Each is installed without its dependencies, then the few pure-Python
# packages they import. With BRAID_TORCHREC_TARGET=DIR everything goes into
# DIR (use it with PYTHONPATH=DIR), leaving the interpreter's own torch as
# it is.
set -euo pipefail

PYTHON=${PYTHON:-python3}
target=()
if [ -n "${BRAID_TORCHREC_TARGET:-}" ]; then
  target=(--target "$BRAID_TORCHREC_TARGET")
  export PYTHONPATH="$BRAID_TORCHREC_TARGET${PYTHONPATH:+:$PYTHONPATH}"
fi
if "$PYTHON" -c "from torchrec.distributed.planner import EmbeddingShardingPlanner" 2>/dev/null; then
  echo "install-torchrec: torchrec is already importable"
  exit 0
fi
"$PYTHON" -m pip install -q --no-deps "${target[@]}" "torch==2.14.0" "torchrec==1.9.2" \
  "fbgemm-gpu-cpu==1.9.0"
"$PYTHON" -m pip install -q "${target[@]}" filelock "typing-extensions>=4.10.0" sympy networkx \
  jinja2 fsspec tensordict iopath pyre-extensions typing-inspect mypy-extensions tqdm \
  lightning-utilities pyvers torchmetrics==1.0.3 --no-deps
if ! "$PYTHON" -c "from torchrec.distributed.planner import EmbeddingShardingPlanner"; then
  echo "install-torchrec: error: torchrec was installed but its planner does not import" >&2
  exit 1
fi
echo "install-torchrec: torchrec $("$PYTHON" -c 'import torchrec; print(torchrec.__version__)') installed"
