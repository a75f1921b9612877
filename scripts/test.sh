#!/usr/bin/env bash
# Runs every Braid test: lit, ctest (gtest) and pytest. Installs what is
# missing and builds first. Ends with one line "N passed, N failed" and exits
# non-zero on any failure.
#
# --sanitize also builds the project with ASan and UBSan into
# ${BRAID_SANITIZE_BUILD_DIR:-build-san} and runs the lit suite, the gtests
# and the Python tests there, any sanitizer report failing its test, and
# runs each libFuzzer harness briefly (scripts/fuzz.sh).
set -uo pipefail
cd "$(dirname "$0")/.."

sanitize=0
for arg in "$@"; do
  case "$arg" in
    --sanitize) sanitize=1 ;;
    *) echo "test.sh: unknown argument '$arg' (expected --sanitize)" >&2; exit 2 ;;
  esac
done

bash scripts/setup.sh || exit 1
bash scripts/build.sh || exit 1
BUILD_DIR=${BRAID_BUILD_DIR:-build}
SAN_DIR=${BRAID_SANITIZE_BUILD_DIR:-build-san}
ORIGINAL_PATH=$PATH
export PATH="$PWD/$BUILD_DIR/bin:$PATH"

passed=0
failed=0
status=0

# run_lit BUILD_DIR LABEL: the lit suite of one build.
run_lit() {
  local dir=$1 label=$2
  local lit_out
  lit_out=$(mktemp)
  # Each runner's status is taken straight from it, never through a
  # pipeline: under pipefail, `runner | tee | grep || true` leaves
  # PIPESTATUS as true's.
  /usr/lib/llvm-22/bin/lit -sv "$dir/test" >"$lit_out" 2>&1
  local lit_rc=$?
  grep -E "^(FAIL|XPASS|UNRESOLVED|TIMEOUT):|Failed Tests|Testing Time" "$lit_out"
  local lit_pass lit_fail
  lit_pass=$(grep -E "^ *Passed *: *[0-9]+" "$lit_out" | grep -oE "Passed *: *[0-9]+" | grep -oE "[0-9]+$" || echo 0)
  lit_fail=$(grep -E "^ *(Failed|Unresolved|Timed Out|Unexpectedly Passed) *: *[0-9]+" "$lit_out" | grep -oE ": *[0-9]+" | grep -oE "[0-9]+$" | awk '{s+=$1} END {print s+0}')
  # The output of every failing test, so that a CI log explains itself.
  if [ "${lit_fail:-0}" != 0 ]; then
    sed -nE '/^\*+ TEST /,/^\*+$/p' "$lit_out" | tail -n 400
  fi
  echo "$label: ${lit_pass:-0} passed, ${lit_fail:-0} failed"
  passed=$((passed + ${lit_pass:-0}))
  failed=$((failed + ${lit_fail:-0}))
  if [ "$lit_rc" != 0 ]; then
    status=1
    echo "$label: exited with status $lit_rc"
  fi
  rm -f "$lit_out"
}

# run_ctest BUILD_DIR LABEL: the gtests of one build.
run_ctest() {
  local dir=$1 label=$2
  local ctest_out
  ctest_out=$(mktemp)
  (cd "$dir" && ctest --output-on-failure) >"$ctest_out" 2>&1
  local ctest_rc=$?
  grep -E "tests passed|tests failed|\*\*\*Failed|Test +#" "$ctest_out" | tail -n 40
  local ctest_total ctest_fail ctest_pass
  ctest_total=$(grep -oE "out of [0-9]+" "$ctest_out" | grep -oE "[0-9]+" || echo 0)
  ctest_fail=$(grep -oE "[0-9]+ tests failed" "$ctest_out" | grep -oE "^[0-9]+" || echo 0)
  ctest_pass=$(( ${ctest_total:-0} - ${ctest_fail:-0} ))
  echo "$label: ${ctest_pass} passed, ${ctest_fail:-0} failed"
  passed=$((passed + ctest_pass))
  failed=$((failed + ${ctest_fail:-0}))
  if [ "$ctest_rc" != 0 ]; then
    status=1
    echo "$label: exited with status $ctest_rc"
  fi
  rm -f "$ctest_out"
}

run_lit "$BUILD_DIR" lit
run_ctest "$BUILD_DIR" ctest

# run_pytest BUILD_DIR LABEL REQUIRE_PYTHON: the Python tests against one
# build's tools and Python package; with REQUIRE_PYTHON=1 a build without the
# package fails its tests instead of skipping them.
run_pytest() {
  local dir=$1 label=$2 require=${3:-0}
  local py_out
  py_out=$(mktemp)
  BRAID_BUILD_DIR="$dir" BRAID_REQUIRE_PYTHON="$require" python3 -m pytest -q test/python >"$py_out" 2>&1
  local py_rc=$?
  tail -n 15 "$py_out"
  local py_pass py_fail
  py_pass=$(grep -oE "[0-9]+ passed" "$py_out" | tail -1 | grep -oE "^[0-9]+" || echo 0)
  py_fail=$(grep -oE "[0-9]+ (failed|error)" "$py_out" | grep -oE "^[0-9]+" | awk '{s+=$1} END {print s+0}')
  echo "$label: ${py_pass:-0} passed, ${py_fail:-0} failed"
  passed=$((passed + ${py_pass:-0}))
  failed=$((failed + ${py_fail:-0}))
  # pytest exits 5 when it collected nothing: that is a failure too.
  if [ "$py_rc" != 0 ]; then
    status=1
    echo "$label: exited with status $py_rc"
  fi
  rm -f "$py_out"
}

run_pytest "$BUILD_DIR" pytest 1

if [ "$sanitize" = 1 ]; then
  # Every report is an error; leaks are not checked (MLIR's global
  # registries live until exit).
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:halt_on_error=1
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  if BRAID_BUILD_DIR="$SAN_DIR" BRAID_SANITIZE=ON bash scripts/build.sh; then
    PATH="$PWD/$SAN_DIR/bin:$ORIGINAL_PATH" run_lit "$SAN_DIR" "lit (asan+ubsan)"
    run_ctest "$SAN_DIR" "ctest (asan+ubsan)"
    run_pytest "$SAN_DIR" "pytest (asan+ubsan)"
  else
    echo "the ASan+UBSan build failed"
    status=1
  fi
  # A short run of each libFuzzer harness (clang, ASan+UBSan, build-fuzz);
  # each fuzzer is one test.
  fuzz_out=$(mktemp)
  bash scripts/fuzz.sh --runs 20000 --max-time 45 >"$fuzz_out" 2>&1
  fuzz_rc=$?
  grep -E "^fuzz " "$fuzz_out"
  fuzz_pass=$(grep -cE "^fuzz [a-z-]+: [0-9]+ runs, clean" "$fuzz_out")
  fuzz_fail=$(grep -cE "^fuzz .*FAILED" "$fuzz_out")
  if [ "$fuzz_rc" != 0 ]; then
    tail -n 60 "$fuzz_out"
    status=1
    [ "$fuzz_fail" = 0 ] && fuzz_fail=1
  fi
  echo "fuzz: ${fuzz_pass} passed, ${fuzz_fail} failed"
  passed=$((passed + fuzz_pass))
  failed=$((failed + fuzz_fail))
  rm -f "$fuzz_out"
fi

if [ "$status" != 0 ] && [ "$failed" = 0 ]; then
  failed=1 # a runner failed without reporting a count (crash, config error)
fi
echo "${passed} passed, ${failed} failed"
exit $status
