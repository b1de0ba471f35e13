# suite_lib.sh - how tests/run_all.sh runs one suite and counts it; sourced (by run_all.sh, and by
# tests/unit_harness.sh, which checks the counting).  The caller sets $log (the logs' directory)
# and $lane (the results file's suffix).

# run_suite NAME CMD...: runs CMD, shows its tail, adds its last "N passed, N failed".
run_suite() {
    local name=$1; shift
    local t0=$SECONDS
    echo "== $name"
    "$@" >"$log/$name.log" 2>&1
    account_suite "$name" $? $((SECONDS - t0))
}

# account_suite NAME RC SECONDS: what run_suite reports for a suite that wrote $log/NAME.log and
# exited RC after SECONDS (each suite's time is shown: .ci/run's 25 minutes are shared by all)
account_suite() {
    local name=$1 rc=$2 secs=$3
    local out="$log/$name.log"
    local line p=0 f=0
    line=$(grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
    tail -n 12 "$out" | sed 's/^/   /'
    if [ -n "$line" ]; then
        p=$(echo "$line" | sed -E 's/^([A-Za-z]+: )?([0-9]+) passed.*/\2/')
        f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
        if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "   (exit status $rc)"; fi
        # a suite that counted no case ran nothing (its inputs gone): that is no pass
        if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then f=1; echo "   (no case ran)"; fi
    else
        if [ "$rc" -eq 0 ]; then p=1; else f=1; echo "   (exit status $rc)"; fi
    fi
    echo "   ($secs s)"
    echo "$name $p $f" >>"$log/results.$lane"
}
