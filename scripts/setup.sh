#!/usr/bin/env bash
# Installs everything Braid needs on a fresh Debian bookworm machine. Idempotent: a second run
# installs nothing. Stops with a clear message when a package cannot be had; it never picks
# another LLVM version.
set -euo pipefail

LLVM_VERSION=22
APT_PACKAGES=(
  cmake ninja-build ccache gcc g++ pkg-config
  "libmlir-${LLVM_VERSION}-dev" "mlir-${LLVM_VERSION}-tools"
  "llvm-${LLVM_VERSION}-dev" "llvm-${LLVM_VERSION}-tools" "libomp-${LLVM_VERSION}-dev"
  "clang-${LLVM_VERSION}" "libclang-rt-${LLVM_VERSION}-dev"
  libopenmpi-dev openmpi-bin
  libopenblas-dev
  libgtest-dev googletest
  python3 python3-dev python3-numpy python3-pytest
)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$pkg")
done

if ((${#missing[@]})); then
  echo "setup: installing ${#missing[@]} packages with apt-get (a few minutes on a fresh machine): ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -q
  for pkg in "${missing[@]}"; do
    policy=$(apt-cache policy "$pkg" 2>/dev/null || true)
    if ! grep -q 'Candidate: [0-9]' <<<"$policy"; then
      echo "setup: error: package '$pkg' is not available from the configured apt sources." >&2
      echo "setup: Braid needs exactly LLVM/MLIR ${LLVM_VERSION}; it will not fall back to another version." >&2
      exit 1
    fi
  done
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

for tool in "/usr/lib/llvm-${LLVM_VERSION}/bin/mlir-tblgen" "/usr/lib/llvm-${LLVM_VERSION}/bin/FileCheck" \
            "/usr/lib/llvm-${LLVM_VERSION}/bin/lit" mpirun ninja cmake; do
  if ! command -v "$tool" >/dev/null 2>&1 && [ ! -x "$tool" ]; then
    echo "setup: error: '$tool' is missing after installation." >&2
    exit 1
  fi
done

# The python3 on PATH may not be Debian's (pyenv, venvs): give it numpy and
# pytest too, nanobind (the Python package's extension is built with it),
# matplotlib (braid.plot), and setuptools and wheel (pip builds the package
# from the tree without build isolation; setuptools before 70.1 needs wheel
# for that).
if ! python3 -c "import numpy, pytest, nanobind, matplotlib, setuptools, wheel" >/dev/null 2>&1; then
  echo "setup: installing numpy, pytest, nanobind, matplotlib, setuptools and wheel for $(command -v python3) with pip"
  python3 -m pip install -q numpy pytest "nanobind>=2.0" matplotlib setuptools wheel || {
    echo "setup: error: could not install numpy/pytest/nanobind/matplotlib/setuptools/wheel for $(command -v python3)" >&2
    exit 1
  }
fi
echo "setup: all dependencies present"
