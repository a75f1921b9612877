#!/usr/bin/env bash
# Installs PyTorch for the optional comparisons (test/python's PyTorch tests and
# bench/cpu_vs_torch), which skip or print "n/a" without it. Not part of
# setup.sh: it downloads about 1 GB.
#
# PyPI has only the CUDA build of torch for Linux; its full dependency set is
# several GB of GPU libraries. This installs torch without its dependencies,
# then the Python packages it imports and the four shared libraries its
# binaries link against, which is enough to run it on the CPU.
set -euo pipefail

PYTHON=${PYTHON:-python3}
if "$PYTHON" -c "import torch" 2>/dev/null; then
  echo "install-torch: torch $("$PYTHON" -c 'import torch; print(torch.__version__)') is already importable"
  exit 0
fi
"$PYTHON" -m pip install -q --no-deps "torch==2.15.0"
"$PYTHON" -m pip install -q filelock "typing-extensions>=4.13.0" "sympy>=1.13.3" \
  "networkx>=2.5.1" jinja2 "fsspec>=0.8.5" \
  "nvidia-cusparselt-cu13==0.8.1" "nvidia-nvshmem-cu13==3.7.2" \
  "cuda-toolkit[cufile]==13.2.2" "nvidia-nccl-cu13==2.30.7"
if ! "$PYTHON" -c "import torch; torch.nn.EmbeddingBag(4, 2)"; then
  echo "install-torch: error: torch was installed but does not import" >&2
  exit 1
fi
echo "install-torch: torch $("$PYTHON" -c 'import torch; print(torch.__version__)') installed"
