#!/usr/bin/env bash
# Builds Braid's libFuzzer harnesses (test/Fuzz) with clang, ASan and UBSan
# into ${BRAID_FUZZ_BUILD_DIR:-build-fuzz} and runs each of them from its
# committed seed corpus (test/Fuzz/corpus/NAME).
#
#   scripts/fuzz.sh [--runs N] [--max-time SECONDS] [NAME...]
#
# NAME is model-json, cluster, npy or compile (default: all). Each fuzzer
# stops after N runs (default 2000) or SECONDS (default 120), whichever comes
# first; one input taking over 20 s counts as a hang. New inputs go to
# BUILD/fuzz-corpus/NAME, never into the committed seeds; a crashing input is
# saved as BUILD/fuzz-artifacts/NAME-crash-*. Prints "fuzz NAME: N runs,
# clean" or "fuzz NAME: FAILED ..." per fuzzer and exits non-zero when any
# failed.
set -uo pipefail
cd "$(dirname "$0")/.."

runs=2000
max_time=120
names=()
while (($#)); do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --max-time) max_time=$2; shift 2 ;;
    -*) echo "fuzz.sh: unknown option '$1'" >&2; exit 2 ;;
    *) names+=("$1"); shift ;;
  esac
done
((${#names[@]})) || names=(model-json cluster npy compile)

BUILD_DIR=${BRAID_FUZZ_BUILD_DIR:-build-fuzz}
if ! CC=clang-22 CXX=clang++-22 BRAID_BUILD_DIR="$BUILD_DIR" \
     BRAID_FUZZ=ON bash scripts/build.sh --target braid-fuzzers; then
  echo "fuzz: the fuzzer build failed"
  exit 1
fi

status=0
for name in "${names[@]}"; do
  exe="$BUILD_DIR/bin/braid-fuzz-$name"
  seeds="test/Fuzz/corpus/$name"
  if [ ! -x "$exe" ] || [ ! -d "$seeds" ]; then
    echo "fuzz $name: FAILED (no such fuzzer or seed corpus)"
    status=1
    continue
  fi
  work="$BUILD_DIR/fuzz-corpus/$name"
  mkdir -p "$work" "$BUILD_DIR/fuzz-artifacts"
  dict=()
  [ -f "test/Fuzz/$name.dict" ] && dict=(-dict="test/Fuzz/$name.dict")
  log="$BUILD_DIR/fuzz-$name.log"
  "$exe" "$work" "$seeds" "${dict[@]}" -runs="$runs" -max_total_time="$max_time" \
    -timeout=20 -max_len=8192 -print_final_stats=1 \
    -artifact_prefix="$BUILD_DIR/fuzz-artifacts/$name-" >"$log" 2>&1
  rc=$?
  done_runs=$(grep -oE "Done [0-9]+ runs" "$log" | grep -oE "[0-9]+" || echo 0)
  if [ "$rc" = 0 ]; then
    echo "fuzz $name: ${done_runs:-0} runs, clean"
  else
    echo "fuzz $name: FAILED (exit $rc); the end of $log:"
    tail -n 40 "$log"
    status=1
  fi
done
exit $status
