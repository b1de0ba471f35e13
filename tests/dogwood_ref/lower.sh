#!/usr/bin/env bash
# `dwc dogwood lower` (dogwood.md §18, §14) against Cedar itself: every Box example (Box's action
# and event schemas) and every dogwood-ref case that validates (temporal_only, mixed, examples,
# cedar_only; schemas resolved as tests/dogwood_ref/run.sh resolves them) is lowered with
# --format json, and cedar-wasm must parse the policies and both schema forms and validate the
# policies without an error (tests/dogwood_ref/lower.js).  Needs cedar-wasm (tests/diff/run.sh
# installs it).  Ends with `N passed, N failed`.
# Usage: tests/dogwood_ref/lower.sh DWC SHARED_DIR
set -uo pipefail
DWC=$1
SHARED=$2
REF=$SHARED/conformance/dogwood-ref
MOD=build/diff/node/node_modules/@cedar-policy/cedar-wasm
[ -f "$MOD/nodejs/cedar_wasm.js" ] || { echo "lower.sh: cedar-wasm missing (tests/diff/run.sh installs it)"; echo "0 passed, 1 failed"; exit 1; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/out"
pass=0; fail=0
lower() {   # NAME POLICY SCHEMA EVENTS [PROVIDERS]
    if "$DWC" dogwood lower "$2" --policy-schema "$3" --event-schema "$4" ${5:+--providers "$5"} --format json >"$W/out/$1.json" 2>"$W/err"; then return; fi
    echo "FAIL $1: dwc dogwood lower: $(grep -m1 error "$W/err")"; rm -f "$W/out/$1.json"; fail=$((fail + 1))
}
for d in "$SHARED"/examples/box/*/; do
    lower "box-$(basename "$d")" "$d/policy.dw" lang/box_actions.cedarschema box
done
# provider invocations hoisted into context.providers (dogwood.md §14.3-§14.4)
P=tests/dogwood_ref/providers
lower providers "$P/policy.dw" "$P/schema.cedarschema" unpinned "$P/providers.json"
SHARED_SCHEMA=$REF/_shared/fork-ad91527/temporal_only.shared_schema.cedarschema
FIXTURE=$REF/_shared/fork-ad91527/request_response.dwschema
{ sed '$d' "$SHARED_SCHEMA"; cat "$REF/_shared/upstream-substitute/confirm-action.cedarschema-fragment"; tail -n 1 "$SHARED_SCHEMA"; } \
    >"$W/substitute.cedarschema"
while IFS=$'\t' read -r name cat src _repo _files _commits schcol status _note; do
    [ "$status" = complete ] || continue
    case $cat in temporal_only|mixed|examples|cedar_only) ;; *) continue ;; esac
    dir=$REF/$src/$cat/$name
    sch=$dir/schema.cedarschema
    if [ ! -f "$sch" ]; then
        case $schcol in substitute:*) sch=$W/substitute.cedarschema ;; *) sch=$SHARED_SCHEMA ;; esac
    fi
    ev=$dir/event.dwschema
    [ -f "$ev" ] || ev=$FIXTURE
    if [ "$cat" = examples ]; then pol=$dir/policy.dw
    else pol=$W/$name.dw; : >"$pol"; for p in $(ls "$dir"/policy*.dw | sort -V); do cat "$p" >>"$pol"; printf '\n' >>"$pol"; done; fi
    # a case whose set dwc refuses to validate is run.sh's to report, not lower's
    "$DWC" dogwood validate "$pol" --policy-schema "$sch" --event-schema "$ev" >/dev/null 2>&1 || continue
    lower "ref-$name" "$pol" "$sch" "$ev"
done <"$REF/MANIFEST.tsv"
out=$(node tests/dogwood_ref/lower.js --module "$MOD" --dwc "$DWC" "$W/out")
echo "$out" | grep -v 'passed, .* failed$'
p=$(echo "$out" | tail -1 | sed -E 's/^([0-9]+) passed.*/\1/'); f=$(echo "$out" | tail -1 | sed -E 's/.* ([0-9]+) failed$/\1/')
echo "$((pass + p)) passed, $((fail + f)) failed"
[ $((fail + f)) -eq 0 ]
