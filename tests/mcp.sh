#!/usr/bin/env bash
# dwc dogwood schema mcp|action|event (dogwood.md §18, §11.3): each tests/mcp/NAME.json manifest
# gives NAME.cedarschema exactly (options in NAME.args), or is refused with NAME.err's message and
# exit 2; each generated schema passes `schema action`, reads back in dwc and, when cedar-wasm is
# installed (tests/diff/run.sh), in Cedar; a policy validates against one; `schema event`, -o and
# --format json.  Ends with `N passed, N failed`.
# Usage: tests/mcp.sh DWC
set -u
DWC=$1
case $DWC in /*) ;; *) DWC=$(pwd)/$DWC ;; esac
MOD=$(pwd)/build/diff/node/node_modules/@cedar-policy/cedar-wasm/nodejs/cedar_wasm.js
cd "$(dirname "$0")/mcp" || exit 1
. ../harness.bash
for m in *.json; do
    n=${m%.json}
    args=(); [ -f "$n.args" ] && read -r -a args <"$n.args"
    "$DWC" dogwood schema mcp --manifest "$m" "${args[@]}" >"$tmp/out" 2>"$tmp/err"; rc=$?
    if [ -f "$n.cedarschema" ]; then
        if [ $rc = 0 ] && cmp -s "$tmp/out" "$n.cedarschema"; then ok; else bad "$n: exit $rc or output differs"; diff "$n.cedarschema" "$tmp/out" | head -5; cat "$tmp/err"; fi
        if "$DWC" dogwood schema action "$n.cedarschema" >/dev/null; then ok; else bad "$n: schema action refuses the generated schema"; fi
        if [ -f "$MOD" ]; then
            if node -e "const c=require('$MOD'); const r=c.checkParseSchema(require('fs').readFileSync('$n.cedarschema','utf8')); process.exit(r.type==='success'?0:1)"; then ok
            else bad "$n: Cedar cannot parse the generated schema"; fi
        fi
    else
        want=$(head -1 "$n.err" | sed 's/^[^ ]* error: //')
        if [ $rc = 2 ] && grep -qF -- "$want" "$tmp/err"; then ok; else bad "$n: wanted exit 2 and \"$want\", got exit $rc:"; head -3 "$tmp/err"; fi
    fi
done
# a Dogwood policy over a generated schema validates; a field typo does not
if "$DWC" dogwood validate policy.dw --policy-schema tools_list.cedarschema >/dev/null 2>&1; then ok; else bad "policy.dw does not validate"; fi
sed 's/input.path/input.pth/' policy.dw >"$tmp/typo.dw"
if ! "$DWC" dogwood validate "$tmp/typo.dw" --policy-schema tools_list.cedarschema >/dev/null 2>&1; then ok; else bad "a field typo validates"; fi
# -o writes the file; --format json of the checks; schema event; the exit codes
"$DWC" dogwood schema mcp --manifest tools_list.json -o "$tmp/o.cedarschema" && cmp -s "$tmp/o.cedarschema" tools_list.cedarschema && ok || bad "-o"
out=$("$DWC" dogwood schema action tools_list.cedarschema --format json)
[ "$out" = '{"kind":"action","ok":true,"errors":[],"warnings":[]}' ] && ok || bad "schema action --format json: $out"
printf 'entity ;' >"$tmp/bad.cedarschema"
"$DWC" dogwood schema action "$tmp/bad.cedarschema" >/dev/null; [ $? = 2 ] && ok || bad "schema action of a bad schema: not exit 2"
printf 'decision event <A>::request { ...inputs(A) }\n' >"$tmp/ok.dwschema"
out=$("$DWC" dogwood schema event "$tmp/ok.dwschema"); [ $? = 0 ] && [ "$out" = "OK: the event schema parses" ] && ok || bad "schema event: $out"
printf 'event <A>::request { ...inputs(B) }\n' >"$tmp/bad.dwschema"
out=$("$DWC" dogwood schema event "$tmp/bad.dwschema" --format json); [ $? = 2 ] && grep -q '"ok":false' <<<"$out" && ok || bad "schema event of a bad schema: $out"
"$DWC" dogwood schema action "$tmp/none" 2>/dev/null; [ $? = 1 ] && ok || bad "a missing file: not exit 1"
"$DWC" dogwood schema mcp 2>/dev/null; [ $? = 2 ] && ok || bad "mcp without --manifest: not exit 2"
"$DWC" dogwood schema mcp --manifest bare_list.json --number float 2>/dev/null; [ $? = 2 ] && ok || bad "--number float: not exit 2"
finish
