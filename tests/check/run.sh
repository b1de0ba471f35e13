#!/bin/sh
# Golden tests of `dwc check` (see README.md).
#   tests/check/run.sh [--update] [DWC]
# DWC: a binary whose `DWC check ARGS` runs dw_cmd_check (default build/dwc).
# Each case's output is compared with NAME.expected (solver times normalised);
# then every counterexample of the case (JSON output) is re-run through
# `DWC authorize` by recheck.py, independently of check's own VM run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
update=0
if [ "${1:-}" = "--update" ]; then update=1; shift; fi
dwc=${1:-$root/build/dwc}
pass=0 fail=0 rechecked=0
cd "$here" || exit 1
# the release in SARIF's driver.version is normalised too (tests/lib/run.sh checks it)
norm() { sed -E 's/solver [0-9]+ ms/solver N ms/; s/"(solver_ms|total_ms)": [0-9.]+/"\1": N/g; s/^(          "version": )"[0-9.]+"/\1"V"/'; }
for f in *.dw; do
    n=${f%.dw}
    case $n in *.old|*.assert|*.macros) continue;; esac
    args=$(cat "$n.args" 2>/dev/null || true)
    # shellcheck disable=SC2086
    out=$("$dwc" check "$f" $args 2>&1 | norm; echo "exit $?")
    # the exit status of dwc, not of sed
    # shellcheck disable=SC2086
    "$dwc" check "$f" $args >/dev/null 2>&1; rc=$?
    out=$(printf '%s\n' "$out" | sed '$d'; echo "exit $rc")
    ok=1
    if [ $update = 1 ]; then
        printf '%s\n' "$out" > "$n.expected"
    elif [ "$out" != "$(cat "$n.expected" 2>/dev/null)" ]; then
        ok=0
        echo "FAIL $n"
        printf '%s\n' "$out" | diff "$n.expected" - | head -20
    fi
    # independent re-run of every counterexample
    case " $args " in
    *" -s "*|*" --schema "*|*" --schema="*)
        jargs=$(printf '%s\n' "$args" | sed -E 's/--format[= ][a-z]+//')
        # shellcheck disable=SC2086
        if ! r=$("$dwc" check "$f" $jargs --format json 2>/dev/null | python3 "$here/recheck.py" "$dwc" "$f" $jargs); then
            ok=0
            echo "FAIL $n (counterexample re-run)"
            printf '%s\n' "$r" | head -10
        else
            rechecked=$((rechecked + ${r:-0}))
        fi;;
    esac
    if [ $ok = 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "counterexamples re-run through dwc authorize: $rechecked"
echo "check goldens: $pass passed, $fail failed"
[ $fail = 0 ]
