#!/usr/bin/env bash
# Packs what bench/gpu and the GPU tests need to run on a GPU machine that
# has CUDA's driver, cuBLASLt 13 and NCCL 2 but neither LLVM/MLIR nor
# Open MPI, such as a lent cloud GPU with only a PyTorch image:
#
#   bin/braid-run               relinked against MLIR's and LLVM's static
#                               archives (its --check runs the reference
#                               semantics, so it needs MLIR), stripped
#   bin/braidrt-cuda-selftest   the CUDA runtime's self-test
#   bin/mpirun, bin/orted       Open MPI's launcher, with lib/openmpi3 (its
#                               components), lib/pmix (PMIx's) and the help
#                               texts under share/
#   lib/                        libbraidrt, libbraidrt_cuda and every library
#                               these need that a plain Linux image lacks
#   prepared/                   bench/gpu's artifacts, compiled here for
#                               --preset (python3 bench/gpu/run.py --prepare)
#   tests/                      the 1-rank GPU integration tests' artifacts
#                               (test/Integration/cuda_{fwd,train}_1rank.test),
#                               CUDA and CPU, with the test's dump comparer
#   env.sh                      source it on the GPU machine: PATH,
#                               LD_LIBRARY_PATH and Open MPI's directories
#   device.sh                   runs the self-test, the two tests and bench/gpu
#                               there, writing logs and JSON to one folder
#
# Compiling stays here: the GPU machine only runs. CUDA's own libraries are
# not packed (they are hundreds of megabytes); env.sh finds them on the GPU
# machine (the CUDA toolkit or pip's nvidia-* wheels).
#
# usage: bash bench/gpu/bundle.sh [--build DIR] [--preset dgx-h100] OUTDIR
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="$ROOT/build"
PRESET=dgx-h100
while [[ "${1:-}" == --* ]]; do
  case "$1" in
    --build) BUILD="$(cd "$2" && pwd)"; shift 2 ;;
    --preset) PRESET="$2"; shift 2 ;;
    *) echo "bundle.sh: error: unknown option $1" >&2; exit 1 ;;
  esac
done
OUTDIR="${1:?usage: bundle.sh [--build DIR] [--preset P] OUTDIR}"
LLVM_LIB=/usr/lib/llvm-22/lib
MPI_LIB=/usr/lib/x86_64-linux-gnu/openmpi/lib
PMIX_DIR=/usr/lib/x86_64-linux-gnu/pmix2

for need in "$BUILD/lib/libbraidrt_cuda.so" "$BUILD/bin/braidrt-cuda-selftest" \
            "$LLVM_LIB/libMLIRIR.a" "$MPI_LIB/openmpi3" "$PMIX_DIR/lib/pmix"; do
  [[ -e "$need" ]] || { echo "bundle.sh: error: $need is missing" >&2; exit 1; }
done

rm -rf "$OUTDIR"
mkdir -p "$OUTDIR"/{bin,lib,share}
OUTDIR="$(cd "$OUTDIR" && pwd)"

# braid-run, its MLIR and LLVM linked in: the objects and Braid archives of
# the link line braid-run's build uses (ninja -t commands), with the shared
# libMLIR/libLLVM replaced by their archives.
echo "bundle: linking braid-run statically against MLIR and LLVM"
link_line=$(cd "$BUILD" && ninja -t commands bin/braid-run | tail -n 1)
mapfile -t objects < <(tr ' ' '\n' <<<"$link_line" | grep -E '^tools/braid-run/.*\.o$' |
                       sed "s|^|$BUILD/|")
mapfile -t braid_libs < <(tr ' ' '\n' <<<"$link_line" | grep -E '^lib/libBraid[A-Za-z]*\.a$' |
                          sed "s|^|$BUILD/|")
if [[ ${#objects[@]} -eq 0 || ${#braid_libs[@]} -eq 0 ]]; then
  echo "bundle.sh: error: no braid-run link line in $BUILD/build.ninja" >&2
  exit 1
fi
mapfile -t mlir_archives < <(ls "$LLVM_LIB"/libMLIR*.a | grep -v -E '/libMLIR(CAPI[^/]*)?\.a$')
g++ -O3 -Wl,--gc-sections "${objects[@]}" -o "$OUTDIR/bin/braid-run" \
  -Wl,-rpath,'$ORIGIN/../lib' "${braid_libs[@]}" "$BUILD/lib/libbraidrt.so" \
  -Wl,--start-group "${mlir_archives[@]}" "$LLVM_LIB"/libLLVM*.a -Wl,--end-group \
  /lib/x86_64-linux-gnu/libzstd.so.1 -lz -ltinfo -lpthread -ldl -lrt -lm
strip "$OUTDIR/bin/braid-run"

cp "$BUILD/bin/braidrt-cuda-selftest" "$OUTDIR/bin/"
cp "$BUILD/lib/libbraidrt.so" "$BUILD/lib/libbraidrt_cuda.so" "$OUTDIR/lib/"
cp "$(readlink -f "$(command -v mpirun)")" "$OUTDIR/bin/mpirun"
cp "$(command -v orted)" "$OUTDIR/bin/orted"
cp -r "$MPI_LIB/openmpi3" "$OUTDIR/lib/openmpi3"
cp -r "$PMIX_DIR/lib/pmix" "$OUTDIR/lib/pmix"
cp -r /usr/share/openmpi "$OUTDIR/share/openmpi"
[[ -d "$PMIX_DIR/share/pmix" ]] && cp -r "$PMIX_DIR/share/pmix" "$OUTDIR/share/pmix"

cat > "$OUTDIR/env.sh" <<'EOF'
# Source on the GPU machine: the bundle's programs first, Open MPI told where
# its components and help texts are, CUDA's libraries found where they are.
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export PATH="$B/bin:$PATH"
cuda_dirs=""
for lib in libcublasLt.so.13 libnccl.so.2; do
  found=$(find /usr/local/cuda*/ /usr/lib /opt -name "$lib" 2>/dev/null | head -n 1)
  [ -n "$found" ] && cuda_dirs="$cuda_dirs:$(dirname "$found")"
done
export LD_LIBRARY_PATH="$B/lib$cuda_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OPAL_PREFIX="$B" OPAL_LIBDIR="$B/lib" OPAL_PKGLIBDIR="$B/lib/openmpi3"
export OPAL_DATADIR="$B/share" OPAL_PKGDATADIR="$B/share/openmpi"
export OPAL_SYSCONFDIR="$B/share" OPAL_BINDIR="$B/bin"
export OMPI_MCA_mca_base_component_path="$B/lib/openmpi3"
export PMIX_MCA_mca_base_component_path="$B/lib/pmix"
export OMPI_MCA_btl="self,vader" OMPI_MCA_pml="ob1" OMPI_MCA_mtl="^ofi" OMPI_MCA_osc="^ucx,pt2pt"
export OMPI_MCA_btl_base_warn_component_unused=0 PMIX_MCA_pcompress_base_silence_warning=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
EOF

# The artifacts, compiled here for the preset, without the intermediate
# files braid-run does not read.
python3 "$ROOT/bench/gpu/run.py" --build "$BUILD" --prepare "$OUTDIR/prepared" --preset "$PRESET"
rm -f "$OUTDIR"/prepared/*/{program.ll,program.o,program.opt.bc}
mkdir -p "$OUTDIR/tests"
for step in fwd train; do
  flag=; [[ $step == train ]] && flag=--train
  for target in cuda cpu; do
    "$BUILD/bin/braid-compile" "$ROOT/examples/dlrm_small.json" --cluster dgx-h100 --nodes 1 \
      --ranks-per-node 1 --force-sharding table_wise $flag --target $target \
      -o "$OUTDIR/tests/$step-$target" > /dev/null
    rm -f "$OUTDIR/tests/$step-$target"/{program.ll,program.o,program.opt.bc}
  done
done
# Every library the packed programs and components load, except those any
# Linux image has (glibc's, the C++ runtime's, zlib's) and CUDA's own.
system_lib='^(linux-vdso|ld-linux|libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|libz|libzstd|libcuda|libcublas|libcublasLt|libnccl|libcudart)\.so'
copied=0
for elf in "$OUTDIR"/bin/* "$OUTDIR"/lib/*.so "$OUTDIR"/lib/openmpi3/*.so "$OUTDIR"/lib/pmix/*.so \
           "$OUTDIR"/tests/*/libprogram.so "$OUTDIR"/prepared/*/libprogram.so; do
  while read -r name path; do
    [[ "$name" =~ $system_lib ]] && continue
    [[ -z "$path" || ! -f "$path" || -e "$OUTDIR/lib/$name" ]] && continue
    cp -L "$path" "$OUTDIR/lib/$name"
    copied=$((copied + 1))
  done < <(ldd "$elf" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
done
echo "bundle: $copied libraries packed"

cp "$ROOT/test/Integration/Inputs/compare_dumps.py" "$OUTDIR/tests/"
cp "$ROOT/bench/gpu/run.py" "$OUTDIR/run.py"
cp "$ROOT/bench/gpu/device.sh" "$OUTDIR/device.sh"
du -sh "$OUTDIR"
