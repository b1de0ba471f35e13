#!/usr/bin/env bash
# The Dogwood reference implementation's own conformance cases
# (SHARED/conformance/dogwood-ref, see its README.md), run as the reference's harness runs them,
# with request validation off as the reference (dwc replay --request-validation false):
#   temporal_only, mixed: the policy_*.dw joined with "\n", the case's schema (else the shared one,
#     plus the Confirm fragment where MANIFEST says substitute:), its event.dwschema (else the
#     request_response fixture); each trace_N.log replayed on a fresh authorizer and compared
#     exactly with expected_N.out in the library form (lines trimmed, blank ones dropped);
#   examples: `dwc dogwood validate` passes; with a trace, `dwc dogwood replay`'s output (the
#     reference CLI's form) equals expected.out up to trailing whitespace;
#   cedar_only: parse and strict validation pass (`lower` is not built yet);
#   expected_failures: the policy is rejected (validate with the case schema and the fixture event
#     schema; parse-stage cases: compile without a schema), not merely for a feature dwc lacks
#     ("not supported").
# Only cases MANIFEST marks `complete`.  Cases known to fail for a feature not built yet are listed
# in known.tsv with the reason: counted and printed as known-unsupported; one that passes is a
# failure (take it off the list).  Ends with `N passed, N failed`.
# Usage: tests/dogwood_ref/run.sh DWC SHARED_DIR
set -uo pipefail
DWC=$1
REF=$2/conformance/dogwood-ref
KNOWN="$(dirname "$0")/known.tsv"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
SHARED_SCHEMA=$REF/_shared/fork-ad91527/temporal_only.shared_schema.cedarschema
FIXTURE=$REF/_shared/fork-ad91527/request_response.dwschema
# the Confirm declaration goes inside the shared schema's namespace: before its closing brace
{ sed '$d' "$SHARED_SCHEMA"; cat "$REF/_shared/upstream-substitute/confirm-action.cedarschema-fragment"; tail -n 1 "$SHARED_SCHEMA"; } \
    >"$W/substitute.cedarschema"
[ "$(tail -n 1 "$SHARED_SCHEMA")" = "}" ] || { echo "the shared schema does not end with its namespace's brace"; echo "0 passed, 1 failed"; exit 1; }
declare -A pass fail known
pass_all=0; fail_all=0; known_all=0

# trimmed, blank lines dropped
norm() { sed -E 's/^[[:space:]]+//; s/[[:space:]]+$//' "$1" | grep -v '^$'; }

# run_case DIR CATEGORY SCHEMACOL: 0 when the case passes; why it failed on stdout
run_case() {
    local dir=$1 cat=$2 schcol=$3 sch ev out rc
    sch=$dir/schema.cedarschema
    if [ ! -f "$sch" ]; then
        case $schcol in substitute:*) sch=$W/substitute.cedarschema ;; *) sch=$SHARED_SCHEMA ;; esac
    fi
    ev=$dir/event.dwschema
    [ -f "$ev" ] || ev=$FIXTURE
    case $cat in
    temporal_only|mixed)
        local first=1 p ok=0 n
        : >"$W/policy.dw"
        for p in $(ls "$dir"/policy_*.dw | sort -V); do
            [ $first = 1 ] || printf '\n' >>"$W/policy.dw"
            cat "$p" >>"$W/policy.dw"; first=0
        done
        for t in "$dir"/trace_*.log; do
            n=${t##*/trace_}; n=${n%.log}
            [ -f "$dir/expected_$n.out" ] || continue
            out=$("$DWC" replay -p "$W/policy.dw" -s "$sch" --events "$ev" --format library \
                  --request-validation false --validate false "$t" 2>"$W/err")
            rc=$?
            if [ $rc -ne 0 ]; then echo "trace_$n: exit $rc: $(grep -m1 error "$W/err")"; ok=1; continue; fi
            if ! diff <(norm "$dir/expected_$n.out") <(printf '%s\n' "$out" | sed -E 's/^[[:space:]]+//; s/[[:space:]]+$//' | grep -v '^$') >"$W/diff"; then
                echo "trace_$n differs (expected <, dwc >):"; head -6 "$W/diff"; ok=1
            fi
        done
        return $ok ;;
    examples)     # through the reference's own commands (dwc dogwood, §18)
        out=$("$DWC" dogwood validate "$dir/policy.dw" --policy-schema "$sch" --event-schema "$ev" 2>&1) ||
            { echo "validate: $(echo "$out" | grep -m1 error)"; return 1; }
        [ -f "$dir/trace.log" ] || return 0
        out=$("$DWC" dogwood replay "$dir/policy.dw" --policy-schema "$sch" --event-schema "$ev" --trace "$dir/trace.log" 2>"$W/err")
        rc=$?
        [ $rc -eq 0 ] || { echo "replay: exit $rc: $(grep -m1 error "$W/err")"; return 1; }
        diff <(sed -E 's/[[:space:]]+$//' "$dir/expected.out") <(printf '%s\n' "$out" | sed -E 's/[[:space:]]+$//') >"$W/diff" ||
            { echo "replay differs (expected <, dwc >):"; head -6 "$W/diff"; return 1; }
        return 0 ;;
    cedar_only)
        out=$("$DWC" validate -p "$(ls "$dir"/policy*.dw | head -1)" -s "$sch" --events "$ev" 2>&1) ||
            { echo "validate: $(echo "$out" | grep -m1 error)"; return 1; }
        return 0 ;;
    expected_failures)
        local pol=$W/policy.dw
        cat $(ls "$dir"/policy_*.dw | sort -V) >"$pol"
        case $schcol in
        none-available*) out=$("$DWC" compile -p "$pol" -o "$W/out.dwb" 2>&1); rc=$? ;;
        *) out=$("$DWC" validate -p "$pol" -s "$sch" --events "$ev" 2>&1); rc=$? ;;
        esac
        if [ $rc -eq 0 ]; then echo "accepted; the reference rejects it: $(head -c 200 "$dir/expected_error.txt" 2>/dev/null)"; return 1; fi
        if [ $rc -ge 128 ] || ! grep -q 'error' <<< "$out"; then echo "exit $rc without a diagnostic; dwc said:"; echo "$out" | head -5; return 1; fi
        # refused only because dwc lacks the feature: not the reference's reason
        if grep -q 'not supported' <<< "$out"; then echo "rejected for a feature dwc lacks: $(echo "$out" | grep -m1 'not supported')"; return 1; fi
        echo "rejected: $(echo "$out" | grep -m1 error)"   # shown only if a known.tsv case passes
        return 0 ;;
    esac
}

while IFS=$'\t' read -r name cat src _repo _files _commits schcol status _note; do
    [ "$name" = case ] && continue
    [ "$status" = complete ] || continue
    dir=$REF/$src/$cat/$name
    reason=$(awk -F'\t' -v c="$name" '$1 == c { print $2 }' "$KNOWN")
    why=$(run_case "$dir" "$cat" "$schcol")
    rc=$?
    if [ -n "$reason" ]; then
        if [ $rc -eq 0 ]; then
            echo "FAIL $cat/$name: listed in known.tsv but passes: take it off the list"; echo "$why" | sed 's/^/    /'
            fail[$cat]=$((${fail[$cat]:-0} + 1)); fail_all=$((fail_all + 1))
        else
            echo "known-unsupported $cat/$name: $reason"
            known[$cat]=$((${known[$cat]:-0} + 1)); known_all=$((known_all + 1))
        fi
    elif [ $rc -eq 0 ]; then
        pass[$cat]=$((${pass[$cat]:-0} + 1)); pass_all=$((pass_all + 1))
    else
        echo "FAIL $cat/$name:"; echo "$why" | sed 's/^/    /'
        fail[$cat]=$((${fail[$cat]:-0} + 1)); fail_all=$((fail_all + 1))
    fi
done <"$REF/MANIFEST.tsv"
for c in temporal_only mixed examples cedar_only expected_failures; do
    echo "dogwood-ref $c: ${pass[$c]:-0} passed, ${fail[$c]:-0} failed, ${known[$c]:-0} known-unsupported"
done
echo "dogwood-ref: $known_all known-unsupported (known.tsv)"
echo "$pass_all passed, $fail_all failed"
[ "$fail_all" -eq 0 ]
