#!/usr/bin/env bash
# The suites cannot pass by running nothing:
#   - tests/suite_lib.sh's account_suite (how run_all.sh counts a suite) counts a suite that
#     reports "0 passed, 0 failed", or fails with no failed case, as a failure;
#   - tests/run_unit.sh counts a program whose group setup failed (cmocka runs
#     none of the group's tests, prints "0 test(s)" passed and exits 1) as a
#     failure, and a program that prints no summary (a crash) as one;
#   - test_artifact_corpus (the hostile-artifact campaign) refuses to run
#     without corpus tests or without Box examples, naming what it lacks,
#     instead of mutating fewer artifacts than it was asked to, and test_artifact_serve fails
#     (no longer skips) its walk of the Box examples when they are missing.
# Usage: tests/unit_harness.sh BUILD_DIR
set -uo pipefail
B=$1
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# a fake bin dir: one program that passes, one whose group setup fails, one that dies
mkdir -p "$tmp/bin/tests"
cat > "$tmp/bin/tests/test_a_passes" <<'SH'
#!/bin/sh
echo "[==========] 2 test(s) run."; echo "[  PASSED  ] 2 test(s)."
SH
cat > "$tmp/bin/tests/test_b_setup_fails" <<'SH'
#!/bin/sh
echo "[  FAILED  ] GROUP SETUP"; echo "[  ERROR   ] ctests"; echo "[==========] 0 test(s) run."; echo "[  PASSED  ] 0 test(s)."
exit 1
SH
cat > "$tmp/bin/tests/test_c_dies" <<'SH'
#!/bin/sh
kill -SEGV $$
SH
chmod +x "$tmp"/bin/tests/*
out=$(tests/run_unit.sh "$tmp/bin" 2>&1); rc=$?
line=$(echo "$out" | tail -n 1)
[ "$line" = "2 passed, 2 failed" ] && ok || bad "run_unit.sh summed '$line', want '2 passed, 2 failed'"
[ "$rc" -ne 0 ] && ok || bad "run_unit.sh exited 0 with failures"
echo "$out" | grep -q "test_b_setup_fails: exit status 1 with no failed test counted" && ok || bad "the failed group setup is not named"
echo "$out" | grep -q "test_c_dies: crashed" && ok || bad "the crash is not named"

# run_all.sh's counting of a suite: its last "N passed, N failed", with a failure for an exit
# status the line does not show and for a suite that ran no case
log=$tmp/logs lane=check
mkdir -p "$log"
. tests/suite_lib.sh
printf 'x\n3 passed, 0 failed\n' > "$log/s-ok.log";      account_suite s-ok 0 0 >/dev/null
printf '0 passed, 0 failed\n' > "$log/s-empty.log";       account_suite s-empty 0 0 >/dev/null
printf '2 passed, 0 failed\n' > "$log/s-exit.log";        account_suite s-exit 3 0 >/dev/null
printf 'no summary\n' > "$log/s-none-ok.log";             account_suite s-none-ok 0 0 >/dev/null
printf 'no summary\n' > "$log/s-none-bad.log";            account_suite s-none-bad 1 0 >/dev/null
want=$'s-ok 3 0\ns-empty 0 1\ns-exit 2 1\ns-none-ok 1 0\ns-none-bad 0 1'
got=$(cat "$log/results.check")
[ "$got" = "$want" ] && ok || bad "account_suite counted: $(echo "$got" | tr '\n' ';') (want $(echo "$want" | tr '\n' ';'))"

# the corpus campaign without its inputs: refused, naming what is missing
camp=$B/tests/test_artifact_corpus
if [ -x "$camp" ]; then
    out=$(DW_CORPUS="${DW_CORPUS:-build/corpus}" DW_SHARED="$tmp/no-shared" DW_MUTATIONS=10 DW_PROGRAM_MUTATIONS=10 "$camp" 2>&1); rc=$?
    [ "$rc" -ne 0 ] && ok || bad "test_artifact_corpus ran without Box examples"
    echo "$out" | grep -q "no Box examples under $tmp/no-shared (set DW_SHARED" && ok || bad "no message naming the missing Box examples: $out"
    out=$(DW_CORPUS="$tmp/no-corpus" DW_SHARED="${DW_SHARED:-../shared}" DW_MUTATIONS=10 DW_PROGRAM_MUTATIONS=10 "$camp" 2>&1); rc=$?
    [ "$rc" -ne 0 ] && ok || bad "test_artifact_corpus ran without corpus tests"
    echo "$out" | grep -q "no corpus tests under $tmp/no-corpus/corpus-tests (set DW_CORPUS" && ok || bad "no message naming the missing corpus: $out"
else
    bad "$camp is not built"
fi
# the artifact-serving test's example walk: a missing examples directory fails, never skips
serve=$B/tests/test_artifact_serve
if [ -x "$serve" ]; then
    out=$(DW_SHARED="$tmp/no-shared" "$serve" 2>&1); rc=$?
    [ "$rc" -ne 0 ] && echo "$out" | grep -q "no Box examples under $tmp/no-shared/examples/box" && ok ||
        bad "test_artifact_serve did not fail naming the missing examples: $(echo "$out" | tail -n 3)"
else
    bad "$serve is not built"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
