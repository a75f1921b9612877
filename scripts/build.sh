#!/usr/bin/env bash
# Configures Braid with CMake + Ninja into ${BRAID_BUILD_DIR:-build} and builds
# it. Every tool lands in $BRAID_BUILD_DIR/bin. BRAID_SANITIZE=ON builds with
# ASan and UBSan, BRAID_FUZZ=ON (with CC=clang-22 CXX=clang++-22) the
# libFuzzer harnesses (use another BRAID_BUILD_DIR for either).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BRAID_BUILD_DIR:-build}
LLVM_PREFIX=/usr/lib/llvm-22

launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=${BRAID_BUILD_TYPE:-Release} \
    -DCMAKE_C_COMPILER=${CC:-gcc} -DCMAKE_CXX_COMPILER=${CXX:-g++} \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_DIR="$LLVM_PREFIX/lib/cmake/llvm" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" \
    -DPython3_EXECUTABLE="$(command -v python3)" \
    -DPython_EXECUTABLE="$(command -v python3)" \
    -DBRAID_SANITIZE=${BRAID_SANITIZE:-OFF} \
    -DBRAID_FUZZ=${BRAID_FUZZ:-OFF} \
    "${launcher[@]}"
fi
cmake --build "$BUILD_DIR" "$@"
