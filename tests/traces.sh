#!/bin/sh
# traces.sh DWC - the temporal trace suite (tests/traces/).
#
# Each case is tests/traces/NAME.dw with a header of `// key: value` lines:
#   schema: FILE | box     the action schema (-s)
#   events: E              --events (a built-in name or a .dwschema file); default: the default schema
#   trace:  FILE           the trace; default NAME.log, else NAME.jsonl
#   format: F              --format F (json, library)
#   request-validation: B  --request-validation B (true, false)
#   validate: B            --validate B (true, false)
#   exit:   N              the expected exit code (default 0)
# A .log case compares stdout+stderr with NAME.expected exactly; a Box .jsonl
# case needs exit 0 and `N passed, 0 failed` with N > 0 (its lines carry
# `expect`/`rules`).  Every expected verdict is derived by hand in the case's
# comments (dogwood.md §8).  Then every .log trace is truncated and
# byte-flipped: dwc must exit 0 or 2, never crash.  box-lines/NAME.jsonl is
# replayed against box-lines/policy.dw (NAME.args: more options) and its
# output and exit code compared with NAME.expected.
# Ends with `N passed, N failed`; exit 1 on any failure.
set -u
DWC=${1:-build/dwc}
case $DWC in /*) ;; *) DWC=$(pwd)/$DWC ;; esac
cd "$(dirname "$0")/traces" || exit 1
pass=0; fail=0
out=$(mktemp); trap 'rm -f "$out" "$out.t"' EXIT
hdr() { sed -n "s#^// $1: *##p" "$2" | head -1; }
for dw in *.dw; do
    case $dw in _*) continue ;; esac
    name=${dw%.dw}
    schema=$(hdr schema "$dw"); events=$(hdr events "$dw"); trace=$(hdr trace "$dw")
    format=$(hdr format "$dw"); want_rc=$(hdr exit "$dw"); reqval=$(hdr request-validation "$dw"); validate=$(hdr validate "$dw")
    [ -n "$want_rc" ] || want_rc=0
    if [ -z "$trace" ]; then
        if [ -f "$name.log" ]; then trace=$name.log; else trace=$name.jsonl; fi
    fi
    set -- -p "$dw"
    [ -n "$schema" ] && set -- "$@" -s "$schema"
    [ -n "$events" ] && set -- "$@" --events "$events"
    [ -n "$format" ] && set -- "$@" --format "$format"
    [ -n "$reqval" ] && set -- "$@" --request-validation "$reqval"
    [ -n "$validate" ] && set -- "$@" --validate "$validate"
    "$DWC" replay "$@" "$trace" >"$out" 2>&1
    rc=$?
    ok=1
    case $trace in
    *.jsonl)
        [ $rc -eq 0 ] || ok=0
        tail -1 "$out" | grep -Eq '^[1-9][0-9]* passed, 0 failed$' || ok=0 ;;
    *)
        [ "$rc" = "$want_rc" ] || ok=0
        cmp -s "$out" "$name.expected" || ok=0 ;;
    esac
    if [ $ok = 1 ]; then pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name (exit $rc, expected $want_rc)"
        [ -f "$name.expected" ] && diff "$name.expected" "$out" | head -20 | sed 's/^/    /'
        [ -f "$name.expected" ] || sed 's/^/    /' "$out" | head -20
    fi
done
# robustness: truncated and byte-flipped traces are rejected (2) or replayed (0), never a crash
for log in *.log; do
    
    size=$(wc -c <"$log")
    bad=0
    step=$((size / 23 + 1)); n=1
    while [ $n -lt "$size" ]; do
        head -c $n "$log" >"$out.t"
        "$DWC" replay -p _robust.dw -s t.cedarschema --events unpinned "$out.t" >/dev/null 2>&1
        rc=$?; [ $rc -eq 0 ] || [ $rc -eq 2 ] || { bad=1; echo "  truncated at $n: exit $rc"; }
        n=$((n + step))
    done
    for seed in 1 2 3 4 5 6 7 8 9 10 11 12; do
        off=$(( (seed * 7919) % size ))
        byte=$(( (seed * 37 + 11) % 256 ))
        { head -c $off "$log"; printf "\\$(printf %03o $byte)"; tail -c +$((off + 2)) "$log"; } >"$out.t"
        "$DWC" replay -p _robust.dw -s t.cedarschema --events unpinned "$out.t" >/dev/null 2>&1
        rc=$?; [ $rc -eq 0 ] || [ $rc -eq 2 ] || { bad=1; echo "  byte $off := $byte: exit $rc"; }
    done
    if [ $bad = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL robustness of $log"; fi
done
# Box trace lines (box-lines/): every invalid line kind is an error on its
# line (exit 2, no verdicts); a mismatch shows what was expected
for j in box-lines/*.jsonl; do
    name=${j%.jsonl}
    args=$(cat "$name.args" 2>/dev/null)
    # shellcheck disable=SC2086
    (cd box-lines && "$DWC" replay -p policy.dw --schema box $args "${j#box-lines/}" >"$out" 2>&1; echo "exit $?" >>"$out")
    if cmp -s "$out" "$name.expected"; then pass=$((pass + 1))
    else fail=$((fail + 1)); echo "FAIL $name"; diff "$name.expected" "$out" | head -10 | sed 's/^/    /'; fi
done
# the command line around the traces: exit codes (§18, Q5) and format detection
check() {   # check NAME WANT_RC CMD...
    name=$1; want=$2; shift 2
    "$@" >"$out" 2>&1
    rc=$?
    if [ $rc -eq "$want" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL cli: $name (exit $rc, expected $want)"; sed 's/^/    /' "$out" | head -5; fi
}
check "a .log trace needs -s" 2 "$DWC" replay -p appendix-b.dw appendix-b.log
check "missing trace file" 1 "$DWC" replay -p appendix-b.dw -s drupe.cedarschema no-such-trace.log
check "missing policy file" 1 "$DWC" replay -p no-such-policy.dw -s drupe.cedarschema appendix-b.log
check "missing schema file" 1 "$DWC" replay -p appendix-b.dw -s no-such.cedarschema appendix-b.log
check "bad --format" 2 "$DWC" replay -p appendix-b.dw -s drupe.cedarschema --format xml appendix-b.log
check "neither @ nor {" 2 "$DWC" replay -p appendix-b.dw -s drupe.cedarschema t.cedarschema
check "empty trace" 0 "$DWC" replay -p appendix-b.dw -s drupe.cedarschema /dev/null
# Box's own temporal bundles still pass through the same command
for b in /work/shared/examples/box/0[5-8]*/; do
    [ -f "$b/trace.jsonl" ] || continue
    check "box bundle $(basename "$b")" 0 "$DWC" replay -p "$b/policy.dw" --schema box "$b/trace.jsonl"
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
