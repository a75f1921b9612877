#!/usr/bin/env bash
# Runs every Braid test: lit, ctest (gtest) and pytest. Installs what is
# missing and builds first. Ends with one line "N passed, N failed" and exits
# non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh || exit 1
bash scripts/build.sh || exit 1
BUILD_DIR=${BRAID_BUILD_DIR:-build}
export PATH="$PWD/$BUILD_DIR/bin:$PATH"

passed=0
failed=0
status=0

# lit: count from its summary.
lit_out=$(mktemp)
# Each runner's status is taken straight from it, never through a pipeline:
# under pipefail, `runner | tee | grep || true` leaves PIPESTATUS as true's.
/usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/test" >"$lit_out" 2>&1
lit_rc=$?
grep -E "^(FAIL|XPASS|UNRESOLVED|TIMEOUT):|Failed Tests|Testing Time" "$lit_out"
lit_pass=$(grep -E "^ *Passed *: *[0-9]+" "$lit_out" | grep -oE "Passed *: *[0-9]+" | grep -oE "[0-9]+$" || echo 0)
lit_fail=$(grep -E "^ *(Failed|Unresolved|Timed Out|Unexpectedly Passed) *: *[0-9]+" "$lit_out" | grep -oE ": *[0-9]+" | grep -oE "[0-9]+$" | awk '{s+=$1} END {print s+0}')
# The output of every failing test, so that a CI log explains itself.
if [ "${lit_fail:-0}" != 0 ]; then
  sed -nE '/^\*+ TEST /,/^\*+$/p' "$lit_out" | tail -n 400
fi
echo "lit: ${lit_pass:-0} passed, ${lit_fail:-0} failed"
passed=$((passed + ${lit_pass:-0}))
failed=$((failed + ${lit_fail:-0}))
if [ "$lit_rc" != 0 ]; then
  status=1
  echo "lit: exited with status $lit_rc"
fi
rm -f "$lit_out"

# ctest
ctest_out=$(mktemp)
(cd "$BUILD_DIR" && ctest --output-on-failure) >"$ctest_out" 2>&1
ctest_rc=$?
grep -E "tests passed|tests failed|\*\*\*Failed|Test +#" "$ctest_out" | tail -n 40
ctest_total=$(grep -oE "out of [0-9]+" "$ctest_out" | grep -oE "[0-9]+" || echo 0)
ctest_fail=$(grep -oE "[0-9]+ tests failed" "$ctest_out" | grep -oE "^[0-9]+" || echo 0)
ctest_pass=$(( ${ctest_total:-0} - ${ctest_fail:-0} ))
echo "ctest: ${ctest_pass} passed, ${ctest_fail:-0} failed"
passed=$((passed + ctest_pass))
failed=$((failed + ${ctest_fail:-0}))
if [ "$ctest_rc" != 0 ]; then
  status=1
  echo "ctest: exited with status $ctest_rc"
fi
rm -f "$ctest_out"

# pytest
py_out=$(mktemp)
BRAID_BUILD_DIR="$BUILD_DIR" python3 -m pytest -q test/python >"$py_out" 2>&1
py_rc=$?
tail -n 15 "$py_out"
py_pass=$(grep -oE "[0-9]+ passed" "$py_out" | tail -1 | grep -oE "^[0-9]+" || echo 0)
py_fail=$(grep -oE "[0-9]+ (failed|error)" "$py_out" | grep -oE "^[0-9]+" | awk '{s+=$1} END {print s+0}')
echo "pytest: ${py_pass:-0} passed, ${py_fail:-0} failed"
passed=$((passed + ${py_pass:-0}))
failed=$((failed + ${py_fail:-0}))
# pytest exits 5 when it collected nothing: that is a failure too.
if [ "$py_rc" != 0 ]; then
  status=1
  echo "pytest: exited with status $py_rc"
fi
rm -f "$py_out"

if [ "$status" != 0 ] && [ "$failed" = 0 ]; then
  failed=1 # a runner failed without reporting a count (crash, config error)
fi
echo "${passed} passed, ${failed} failed"
exit $status
