#!/usr/bin/env bash
# One call on a lent GPU machine (the device tool's `run`, in the repository
# root there), from a bundle made here:
#
#   bash bench/gpu/bundle.sh --preset oci-h200 /tmp/gpubundle
#   mkdir -p .gpu && tar -C /tmp/gpubundle -cJf .gpu/bundle.tar.xz .
#   run: bash bench/gpu/lease.sh .gpu/bundle.tar.xz "$OUT"     (carry: .gpu)
#
# In order, each stage timed and bounded so that the call ends inside its
# limit: the bundle's device.sh (the CUDA runtime's self-test, the 1-rank
# integration tests, bench/gpu), bench/gpu_model's PyTorch measurements
# (the step model's peer on the same GPU), and the kernels of dlrm_small's
# training step under Nsight Compute (each kernel's device time, to set
# beside the step's wall time). Writes device.log, gpu_results.json,
# measured.json, train_kernels.csv and lease.log to OUTDIR.
#
# usage: bash bench/gpu/lease.sh BUNDLE.tar.xz OUTDIR
set -uo pipefail
ARCHIVE="${1:?usage: lease.sh BUNDLE.tar.xz OUTDIR}"
OUT="${2:?usage: lease.sh BUNDLE.tar.xz OUTDIR}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
B=/tmp/braid-bundle
start=$(date +%s)
stamp() { echo "[lease +$(($(date +%s) - start))s] $*"; }
{
  stamp "unpacking $ARCHIVE"
  rm -rf "$B" && mkdir -p "$B" && tar -C "$B" -xJf "$ROOT/$ARCHIVE" || exit 1
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  stamp "device.sh"
  REPEATS="${REPEATS:-3}" timeout 300 bash "$B/device.sh" "$OUT"
  echo "device.sh exit $?"
  stamp "bench/gpu_model measure"
  PYTHONUNBUFFERED=1 timeout 180 python3 "$ROOT/bench/gpu_model/run.py" measure \
    --out "$OUT"
  echo "gpu_model exit $?"
  stamp "ncu: dlrm_small's training step, 2 steps"
  # shellcheck source=/dev/null
  source "$B/env.sh"
  NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
  timeout 120 "${NCU:-ncu}" --clock-control none --csv \
    --metrics gpu__time_duration.sum \
    braid-run "$B/prepared/train" --steps 2 --json \
    > "$OUT/train_kernels.csv" 2> "$OUT/ncu.err"
  echo "ncu exit $?; $(grep -c gpu__time_duration "$OUT/train_kernels.csv") kernels"
  tail -n 5 "$OUT/ncu.err"
  stamp "done"
} 2>&1 | tee "$OUT/lease.log"
