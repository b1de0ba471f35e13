#!/usr/bin/env bash
# Runs every cmocka program BINDIR/tests/test_* and sums their cases into one
# "N passed, N failed" line (tests/run_all.sh's unit suites).  A program that
# exits non-zero with no failed case counted (a group's setup or teardown
# failed: cmocka then runs none of that group's tests) is one failure, and so
# is one that prints no summary at all (a crash): neither may pass as zero tests.
# Usage: tests/run_unit.sh BINDIR
set -uo pipefail
bindir=$1
pass=0 fail=0
for t in "$bindir"/tests/test_*; do
    [ -x "$t" ] || continue
    rc=0
    out=$("$t" 2>&1) || rc=$?
    echo "$out" | tail -n 3
    # a program may run several cmocka groups: sum them
    p=$(echo "$out" | grep -oE '\[  PASSED  \] [0-9]+' | grep -oE '[0-9]+$' | awk '{s+=$1} END {if (NR) print s}')
    f=$(echo "$out" | grep -oE '\[  FAILED  \] [0-9]+' | grep -oE '[0-9]+$' | awk '{s+=$1} END {if (NR) print s}')
    pass=$((pass + ${p:-0})); fail=$((fail + ${f:-0}))
    if [ -z "$p" ] && [ -z "$f" ]; then fail=$((fail + 1)); echo "$t: crashed (exit status $rc, no summary)"
    elif [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
        fail=$((fail + 1)); echo "$t: exit status $rc with no failed test counted (a group's setup or teardown failed)"
    fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
