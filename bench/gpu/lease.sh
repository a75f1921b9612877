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
# (the step model's peer on the same GPU), the kernels of dlrm_small's
# training step under Nsight Compute (each kernel's device time, to set
# beside the step's wall time; bench/gpu/kernels.py sums them), and the
# 1-rank tests' and two bench/gpu artifacts under compute-sanitizer's memcheck. Writes device.log, gpu_results.json,
# measured.json, train_kernels.csv and lease.log to OUTDIR.
# STAGES (default "device model ncu memcheck") names the stages to run.
#
# usage: bash bench/gpu/lease.sh BUNDLE.tar.xz OUTDIR
set -uo pipefail
ARCHIVE="${1:?usage: lease.sh BUNDLE.tar.xz OUTDIR}"
OUT="${2:?usage: lease.sh BUNDLE.tar.xz OUTDIR}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
B=/tmp/braid-bundle
STAGES=" ${STAGES:-device model ncu memcheck} "
start=$(date +%s)
stamp() { echo "[lease +$(($(date +%s) - start))s] $*"; }
wanted() { [[ "$STAGES" == *" $1 "* ]]; }
{
  stamp "unpacking $ARCHIVE"
  rm -rf "$B" && mkdir -p "$B" && tar -C "$B" -xJf "$ROOT/$ARCHIVE" || exit 1
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  if wanted device; then
    stamp "device.sh"
    REPEATS="${REPEATS:-3}" timeout 300 bash "$B/device.sh" "$OUT"
    echo "device.sh exit $?"
  fi
  if wanted model; then
    stamp "bench/gpu_model measure"
    PYTHONUNBUFFERED=1 timeout 180 python3 "$ROOT/bench/gpu_model/run.py" measure \
      --out "$OUT"
    echo "gpu_model exit $?"
  fi
  # shellcheck source=/dev/null
  source "$B/env.sh"
  if wanted ncu; then
    stamp "ncu: dlrm_small's training step, 2 steps"
    NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
    # application-only: braid-run's MPI singleton start forks a daemon that
    # ncu cannot attach to (it waited on it until the timeout on 2026-11-30).
    timeout 120 "${NCU:-ncu}" --clock-control none --target-processes application-only --csv \
      --metrics gpu__time_duration.sum \
      braid-run "$B/prepared/train" --steps 2 --json \
      > "$OUT/train_kernels.csv" 2> "$OUT/ncu.err"
    echo "ncu exit $?; $(grep -c gpu__time_duration "$OUT/train_kernels.csv") kernels"
    tail -n 5 "$OUT/ncu.err"
    python3 "$ROOT/bench/gpu/kernels.py" "$OUT/train_kernels.csv" --steps 2
  fi
  if wanted memcheck; then
    # The runtime's probe for a module's error record (cuModuleGetGlobal of
    # braid_error, absent from modules without one) is an API error by
    # design: only the kernels' memory accesses are reported.
    stamp "compute-sanitizer memcheck: the 1-rank tests and two of bench/gpu's artifacts"
    SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -n 1)
    for artifact in tests/fwd-cuda tests/train-cuda prepared/train prepared/embedding; do
      run=(--steps 2); [[ $artifact == */fwd-cuda || $artifact == */embedding ]] && run=(--iterations 1)
      echo "== memcheck $artifact"
      timeout 100 "${SAN:-compute-sanitizer}" --tool memcheck --report-api-errors no \
        --target-processes application-only braid-run "$B/$artifact" "${run[@]}" --seed 5 2>&1 |
        grep -E "^=========" | tail -n 8
    done
  fi
  stamp "done"
} 2>&1 | tee "$OUT/lease.log"
