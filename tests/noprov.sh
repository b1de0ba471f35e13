#!/usr/bin/env bash
# noprov.sh - the build without information providers (`make PROVIDERS=0`, dogwood.md §13.6).
#   tests/noprov.sh NOPROV_BIN_DIR DWC SHARED
# NOPROV_BIN_DIR holds dwc and dwd built with PROVIDERS=0 (make test builds build/noprov);
# DWC is the normal dwc.  A provider call is refused everywhere such a build meets one: compile
# and check of the source, an artifact compiled by a build with providers (authorize, dwd's
# load); a set without calls decides exactly as the normal build does.  Ends with
# `N passed, N failed`.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/harness.bash
NP=${1:?usage: tests/noprov.sh NOPROV_BIN_DIR DWC SHARED}
DWC=${2:?}
SHARED=${3:?}
OFF="information providers are not enabled in this build"

cat > "$tmp/s.cedarschema" <<'EOF'
entity User;
entity Doc;
action "read" appliesTo { principal: User, resource: Doc, context: { input: { doc: String } } };
EOF
printf 'permit (principal, action == Action::"read", resource)\nwhen { Strings::Length(context.input.doc).length > 1 };\n' > "$tmp/prov.dw"
echo '{"principal":{"type":"User","id":"a"},"action":{"type":"Action","id":"read"},"resource":{"type":"Doc","id":"d"},"context":{"input":{"doc":"hello"}}}' > "$tmp/req.jsonl"

# the source: compile and check refuse the call at its position
run compile "$NP/dwc" compile "$tmp/prov.dw" -s "$tmp/s.cedarschema" -o "$tmp/x.dwb"
expect compile 2 "prov.dw:2:8: error: $OFF: the policy calls \`Strings::Length\`"
[ ! -e "$tmp/x.dwb" ] && ok || bad "compile wrote an artifact"
run compile-noschema "$NP/dwc" compile "$tmp/prov.dw" -o "$tmp/x.dwb"
expect compile-noschema 2 "$OFF"
run check "$NP/dwc" check "$tmp/prov.dw" -s "$tmp/s.cedarschema"
expect check 3 "$OFF"
run check-noschema "$NP/dwc" check "$tmp/prov.dw"
expect check-noschema 3 "$OFF"
# --providers FILE changes nothing of that: the call is still refused, as compile refuses it
printf '{"availableProviders": {"Risk::Score": {"argumentTypes": [{"paramType": "string"}], "outputType": {"paramType": "bool"}}}}\n' > "$tmp/prov.json"
run compile-decls "$NP/dwc" compile "$tmp/prov.dw" -s "$tmp/s.cedarschema" --providers "$tmp/prov.json" -o "$tmp/x.dwb"
expect compile-decls 2 "$OFF"
run check-decls "$NP/dwc" check "$tmp/prov.dw" -s "$tmp/s.cedarschema" --providers "$tmp/prov.json"
expect check-decls 3 "prov.dw:2:8: error[dw-validation]: for policy \`policy0\`, $OFF: the policy calls \`Strings::Length\`"
run authorize-src "$NP/dwc" authorize -p "$tmp/prov.dw" -s "$tmp/s.cedarschema" --requests "$tmp/req.jsonl"
expect authorize-src 1 "$OFF"

# an artifact with call sites, compiled where providers are on: refused at load
run compile-full "$DWC" compile "$tmp/prov.dw" -s "$tmp/s.cedarschema" -o "$tmp/prov.dwb"
[ "$(cat "$tmp/compile-full.rc")" = 0 ] && [ -s "$tmp/prov.dwb" ] && ok || bad "the normal build did not compile the call: $(cat "$tmp/compile-full.err")"
run authorize-full "$DWC" authorize -p "$tmp/prov.dwb" --requests "$tmp/req.jsonl"
expect authorize-full 0 "1: ALLOW [policy0]"
run authorize-dwb "$NP/dwc" authorize -p "$tmp/prov.dwb" --requests "$tmp/req.jsonl"
expect authorize-dwb 1 "artifact refused: $OFF"
mkdir -p "$tmp/state"
run dwd timeout 20 "$NP/dwd" --artifact "$tmp/prov.dwb" --schema "$tmp/s.cedarschema" --state "$tmp/state" --socket "$tmp/sock"
expect dwd 1 "artifact refused: $OFF"
[ ! -e "$tmp/sock" ] && ok || bad "dwd served"

# a set without calls: the same verdicts as the normal build, from source and from its artifact
n=0
for ex in "$SHARED"/examples/box/*/; do
    [ -f "$ex/policy.dw" ] && [ -f "$ex/requests.jsonl" ] || continue
    s=$SHARED/spec/box/actions.cedarschema
    "$DWC" authorize -p "$ex/policy.dw" -s "$s" --requests "$ex/requests.jsonl" > "$tmp/full.txt" 2>&1
    "$NP/dwc" authorize -p "$ex/policy.dw" -s "$s" --requests "$ex/requests.jsonl" > "$tmp/np.txt" 2>&1
    if cmp -s "$tmp/full.txt" "$tmp/np.txt" && grep -q '^1: ' "$tmp/np.txt"; then ok; else bad "verdicts differ on $ex"; diff "$tmp/full.txt" "$tmp/np.txt" | head -5; fi
    if "$DWC" compile "$ex/policy.dw" -s "$s" -o "$tmp/ex.dwb" 2>/dev/null; then
        "$NP/dwc" authorize -p "$tmp/ex.dwb" --requests "$ex/requests.jsonl" > "$tmp/npb.txt" 2>&1
        "$DWC" authorize -p "$tmp/ex.dwb" --requests "$ex/requests.jsonl" > "$tmp/fullb.txt" 2>&1
        if cmp -s "$tmp/fullb.txt" "$tmp/npb.txt" && grep -q '^1: ' "$tmp/npb.txt"; then ok; else bad "artifact verdicts differ on $ex"; fi
    fi
    n=$((n + 1))
done
[ "$n" -gt 0 ] && ok || bad "no Box example under $SHARED/examples/box"
finish noprov
