#!/usr/bin/env bash
# heldout.sh CHECKOUT [DWC] - Cedar's public example applications (a checkout of
# cedar-policy/cedar-examples, not kept in this repository) run through their own test
# scripts with DWC (default build/dwc) on PATH as `cedar`.  Not part of `make test`: the
# data is held out.  Three parts, each check counted as the scripts print it (PASS:/FAIL:):
#   1. every DIR/run.sh that sources ../test_utils.sh (cedar-example-use-cases,
#      cedar-policy-language-in-action), as it is;
#   2. every directory under those that the run.sh does not name and that has
#      policies.cedar, a policies.cedarschema and ALLOW/ or DENY/ requests, through
#      test_utils.sh's own validate, authorize and format functions;
#   3. every directory with a `linked` file again with its links (`-k`), as Cedar 4's
#      scripts call it (`validate|authorize --schema-format cedar -k linked`).
set -u
CHECKOUT=$(cd "${1:?usage: heldout.sh CHECKOUT [DWC]}" && pwd) || exit 1
DWC=${2:-build/dwc}
case $DWC in /*) ;; *) DWC=$(pwd)/$DWC ;; esac
[ -f "$CHECKOUT/cedar-example-use-cases/run.sh" ] && [ -f "$CHECKOUT/test_utils.sh" ] || { echo "heldout: $CHECKOUT holds no cedar-example-use-cases/run.sh and test_utils.sh" >&2; exit 1; }
tmp=$(mktemp -d)
if [ -n "${KEEP:-}" ]; then echo "heldout: outputs kept in $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi

# checks_with BIN: the three parts with BIN/cedar first on PATH; the PASS/FAIL lines
checks_with() {
    (
        set +u      # the checkout's scripts are not written for nounset
        export PATH="$1:$PATH"
        for app in "$CHECKOUT"/*/run.sh; do
            grep -q 'source \.\./test_utils\.sh' "$app" || continue
            cd "$(dirname "$app")" || exit 1
            echo "== $(basename "$PWD")/run.sh"
            bash run.sh
        done
        for app in "$CHECKOUT"/*/run.sh; do
            grep -q 'source \.\./test_utils\.sh' "$app" || continue
            cd "$(dirname "$app")" || exit 1
            echo "== $(basename "$PWD"): directories run.sh does not name"
            # shellcheck disable=SC1091
            source ../test_utils.sh >/dev/null
            for d in */ */*/; do
                d=${d%/}
                [ -f "$d/policies.cedar" ] && [ -f "$d/policies.cedarschema" ] || continue
                [ -d "$d/ALLOW" ] || [ -d "$d/DENY" ] || continue
                grep -q "\"$d\"" run.sh && continue
                echo "Testing $d..."
                validate "$d" policies.cedar policies.cedarschema
                authorize "$d" policies.cedar entities.json policies.cedarschema
                format "$d" policies.cedar
            done
            echo "== $(basename "$PWD"): with links (-k)"
            for d in */linked */*/linked; do
                [ -f "$d" ] || continue
                d=${d%/linked}
                echo "Testing $d with links..."
                if cedar validate --policies "$d/policies.cedar" --schema "$d/policies.cedarschema" --schema-format cedar -k "$d/linked" >/dev/null 2>&1
                then passed "validate -k succeeded"; else failed "validate -k on $d"; fi
                for decision in ALLOW DENY; do
                    for file in "$d/$decision"/*.json; do
                        res=$(cedar authorize --policies "$d/policies.cedar" --schema "$d/policies.cedarschema" --schema-format cedar \
                            -k "$d/linked" --entities "$d/entities.json" --request-json "$file" 2>/dev/null | grep -m1 -E '^(ALLOW|DENY)$')
                        if [ "$res" = "$decision" ]; then passed "decision \"$decision\" with links for $file"
                        else failed "decision \"$res\" with links for $file, expected \"$decision\""; fi
                    done
                done
            done
        done
    ) 2>&1
}

mkdir -p "$tmp/dwc"
ln -s "$DWC" "$tmp/dwc/cedar"
checks_with "$tmp/dwc" >"$tmp/dwc.out"
grep -E '^== |Testing|PASS:|FAIL:' "$tmp/dwc.out"
pass=$(grep -c 'PASS:' "$tmp/dwc.out"); fail=$(grep -c 'FAIL:' "$tmp/dwc.out")

if [ -n "${REF:-}" ]; then
    mkdir -p "$tmp/ref"
    printf '#!/bin/sh\nexec %s "$@"\n' "$REF" >"$tmp/ref/cedar"; chmod +x "$tmp/ref/cedar"
    checks_with "$tmp/ref" >"$tmp/ref.out"
    # the same checks run in the same order: pair them line by line
    grep -oE '(PASS|FAIL):' "$tmp/dwc.out" >"$tmp/dwc.v"; grep -oE '(PASS|FAIL):' "$tmp/ref.out" >"$tmp/ref.v"
    grep -E 'PASS:|FAIL:' "$tmp/dwc.out" >"$tmp/dwc.l"
    if [ "$(wc -l <"$tmp/dwc.v")" != "$(wc -l <"$tmp/ref.v")" ]; then
        echo "heldout: dwc ran $(wc -l <"$tmp/dwc.v") checks, the reference $(wc -l <"$tmp/ref.v")"; agree=0; differ=$(wc -l <"$tmp/dwc.v")
    else
        agree=$(paste -d' ' "$tmp/dwc.v" "$tmp/ref.v" | grep -cE '^(PASS: PASS:|FAIL: FAIL:)$')
        differ=$(paste -d' ' "$tmp/dwc.v" "$tmp/ref.v" | grep -cvE '^(PASS: PASS:|FAIL: FAIL:)$')
        paste -d'|' "$tmp/dwc.v" "$tmp/ref.v" "$tmp/dwc.l" | grep -vE '^(PASS:\|PASS:|FAIL:\|FAIL:)' | sed 's/^/DIFFERS (dwc|reference): /'
        both=$(paste -d' ' "$tmp/dwc.v" "$tmp/ref.v" | grep -c '^FAIL: FAIL:$')
        echo "reference: $(grep -c 'PASS:' "$tmp/ref.out") passed, $(grep -c 'FAIL:' "$tmp/ref.out") failed; $both checks fail with both (the data's)"
    fi
    echo "$agree agree, $differ differ"
    # call by call: every directory of the checkout with requests (ALLOW/, DENY/, allow_requests/,
    # deny_requests/), one *.cedar policy file and an entities file, authorize -v without a
    # schema and with each schema it holds (*.cedarschema, *.cedarschema.json as json), with and
    # without its links: the exit, the decision and the determining policies (in any order:
    # Cedar's are a hash set) must be the reference's (error texts are dwc's own; Cedar prints a
    # refusal on stdout, dwc on stderr)
    calls=0; cdiff=0
    while IFS= read -r d; do
        pols=("$d"/*.cedar); ents=("$d"/*entities.json)
        [ ${#pols[@]} = 1 ] && [ -f "${pols[0]}" ] && [ -f "${ents[0]}" ] || continue
        schemas=("")
        for sf in "$d"/*.cedarschema; do [ -f "$sf" ] && schemas+=("--schema $sf --schema-format cedar"); done
        for sf in "$d"/*.cedarschema.json; do [ -f "$sf" ] && schemas+=("--schema $sf --schema-format json"); done
        for sa in "${schemas[@]}"; do
            for k in "" "$d/linked"; do
                [ -z "$k" ] || [ -f "$k" ] || continue
                # shellcheck disable=SC2206
                args=(authorize --policies "${pols[0]}" --entities "${ents[0]}" -v $sa)
                [ -n "$k" ] && args+=(-k "$k")
                for q in "$d"/ALLOW/*.json "$d"/DENY/*.json "$d"/allow_requests/*.json "$d"/deny_requests/*.json; do
                    [ -f "$q" ] || continue
                    a=$("$tmp/dwc/cedar" "${args[@]}" --request-json "$q" 2>/dev/null; echo "exit $?")
                    b=$("$tmp/ref/cedar" "${args[@]}" --request-json "$q" 2>/dev/null; echo "exit $?")
                    calls=$((calls + 1))
                    # a refused call (exit 1) is compared by its exit: the message is dwc's own
                    [ "${a##*$'\n'}" = "exit 1" ] && a="exit 1"; [ "${b##*$'\n'}" = "exit 1" ] && b="exit 1"
                    if [ "$(grep -v '^error while' <<<"$a" | sort)" != "$(grep -v '^error while' <<<"$b" | sort)" ]; then
                        cdiff=$((cdiff + 1)); echo "CALL DIFFERS: ${args[*]} --request-json $q"
                    fi
                done
            done
        done
    done < <(find "$CHECKOUT" -type d \( -name ALLOW -o -name DENY -o -name allow_requests -o -name deny_requests \) -exec dirname {} \; | sort -u)
    echo "authorize calls: $calls compared, $cdiff differ"
fi
echo "$pass passed, $fail failed"
