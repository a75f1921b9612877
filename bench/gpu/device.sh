#!/usr/bin/env bash
# On a GPU machine, inside a bundle made by bench/gpu/bundle.sh: the CUDA
# runtime's self-test (test/Runtime/cuda_selftest.test), the 1-rank GPU
# integration tests (test/Integration/cuda_{fwd,train}_1rank.test: the CUDA
# artifact checked against the global program, and its dump against the CPU
# backend's) and bench/gpu on each set of prepared artifacts. Writes
# device.log and gpu_results*.json to OUTDIR; prints one line "N passed, N failed" and exits
# non-zero when a check failed.
#
# usage: bash device.sh OUTDIR
set -uo pipefail
B="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:?usage: device.sh OUTDIR}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
# shellcheck source=/dev/null
source "$B/env.sh"
T="$(mktemp -d)"
passed=0 failed=0
# check NAME EXIT PATTERN COMMAND...: runs COMMAND; it passes when COMMAND
# exits 0 (EXIT=ok) or non-zero (EXIT=fails), as the lit tests' `not`
# demands, and its output has a line matching PATTERN.
check() {
  local name="$1" expect="$2" pattern="$3"; shift 3
  echo "== $name: $*"
  local output rc
  output=$("$@" 2>&1)
  rc=$?
  echo "$output" | tail -n 20
  local status_ok=0
  { [[ $expect == ok && $rc == 0 ]] || [[ $expect == fails && $rc != 0 ]]; } && status_ok=1
  if [[ $status_ok == 1 ]] && grep -qE -- "$pattern" <<<"$output"; then
    echo "-- $name: ok"; passed=$((passed + 1))
  else
    echo "-- $name: FAILED (exit $rc, expected $expect; a line matching '$pattern': $(grep -cE -- "$pattern" <<<"$output"))"
    failed=$((failed + 1))
  fi
}
{
  nvidia-smi -L
  echo "libraries: $LD_LIBRARY_PATH"
  check selftest ok "a freed buffer reused: ok" \
    timeout 300 mpirun -n 1 braidrt-cuda-selftest
  check kernel-error-record fails "index 7 is outside its table of 5 rows" \
    timeout 300 braidrt-cuda-selftest --kernel-error
  check double-free fails "which braidrt_cuda_alloc did not give or which is already free" \
    timeout 300 braidrt-cuda-selftest --double-free
  for step in fwd train; do
    steps=(); [[ $step == train ]] && steps=(--steps 3)
    check "$step-1rank-check" ok "check .*: ok" timeout 600 mpirun -n 1 braid-run \
      "$B/tests/$step-cuda" "${steps[@]}" --check --seed 5
    for target in cuda cpu; do
      timeout 600 mpirun -n 1 braid-run "$B/tests/$step-$target" "${steps[@]}" --seed 5 \
        --dump "$T/$step-$target-out" > "$T/$step-$target.log" 2>&1 ||
        tail -n 20 "$T/$step-$target.log"
    done
    check "$step-1rank-same-as-cpu" ok "largest relative difference within tolerance" \
      python3 "$B/tests/compare_dumps.py" "$T/$step-cpu-out" "$T/$step-cuda-out" 1e-4
  done
  # Every prepared set of artifacts (bundle.sh's prepared/, and any
  # prepared-NAME/ beside it, e.g. a baseline compiled by an older
  # compiler), one after the other; with UNCACHED=1 first the runtime's
  # buffer cache off.
  if [[ "${UNCACHED:-0}" == 1 ]]; then
    check bench-gpu-uncached ok "^training step .* predicted" env BRAIDRT_CUDA_CACHING=0 \
      PYTHONUNBUFFERED=1 python3 "$B/run.py" --build "$B" --prepared "$B/prepared" \
      --repeats "${REPEATS:-5}" --json "$OUT/gpu_results_uncached.json"
  fi
  for dir in "$B"/prepared*; do
    name=$(basename "$dir"); suffix=${name#prepared}
    check "bench-gpu$suffix" ok "^training step .* predicted" env PYTHONUNBUFFERED=1 \
      python3 "$B/run.py" --build "$B" --prepared "$dir" --repeats "${REPEATS:-5}" \
      --json "$OUT/gpu_results$suffix.json"
  done
  echo "$passed passed, $failed failed"
} 2>&1 | tee "$OUT/device.log"
rm -rf "$T"
grep -q " 0 failed$" "$OUT/device.log"
