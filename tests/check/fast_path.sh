#!/bin/sh
# dwc check's fast path loses no finding (issue 21): every check golden with
# a schema, and generated sets (tests/bench/gen_box_shaped.py; gen.js's Box
# and RBAC styles when node is installed), are checked twice -- as usual, and
# with DWC_CHECK_NO_PRUNE=1 --timeout 0 (no literal guards: no guard pruning,
# no guard index, no split of cover queries by alternative; no scope keys,
# no pair answers shared by conditions, compiler/prove_scope.c; no time limit) --
# and the findings (rule, policy, position, message) must be the same.
# Counterexamples may differ (they are models of differently shaped queries).
# Lint's scope analysis likewise: through its index (compiler/lint_scope.c)
# and with DWC_LINT_PAIRWISE=1 (every rule compared with every other), on the
# same goldens, the Box examples and larger generated sets (--lint-only).
#   tests/check/fast_path.sh [DWC] [SHARED]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dwc=${1:-$root/build/dwc}
shared=${2:-$root/../shared}
tmp=${TMPDIR:-/tmp}/dwc-fast-path.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
findings() {
    python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    print("no JSON output")   # a usage error: the same for both runs
    sys.exit(0)
for f in d["findings"]:
    print(f["rule"], f.get("policy_index"), f["line"], f["col"], f["message"])
print("unknown", d["stats"].get("unknown"))'
}
# compare NAME FILE ARGS...: the proofs (or, with lint=1, lint alone) against the reference
lint=0
compare() {
    name=$1 file=$2
    shift 2
    if [ $lint = 1 ]; then
        fast=$("$dwc" check "$file" "$@" --lint-only --format json 2>/dev/null | findings)
        ref=$(DWC_LINT_PAIRWISE=1 "$dwc" check "$file" "$@" --lint-only --format json 2>/dev/null | findings)
    else
        # a generous per-query limit: on a loaded machine a 2 s string query can answer unknown,
        # which is about the load, not the pruning this compares (seen once at load 18)
        fast=$("$dwc" check "$file" "$@" --timeout 60000 --format json 2>/dev/null | findings)
        ref=$(DWC_CHECK_NO_PRUNE=1 "$dwc" check "$file" "$@" --timeout 0 --format json 2>/dev/null | findings)
    fi
    if [ -z "$fast" ] || [ "$fast" != "$ref" ]; then
        fail=$((fail + 1))
        echo "FAIL $name$([ $lint = 1 ] && echo ' (lint)'): the fast path's findings differ from the reference's"
        printf '%s\n' "$ref" > "$tmp/ref"
        printf '%s\n' "$fast" | diff "$tmp/ref" - | head -10
    else
        pass=$((pass + 1))
    fi
}
lint_compare() { lint=1; compare "$@"; lint=0; }
cd "$here" || exit 1
for f in *.dw; do
    n=${f%.dw}
    case $n in *.old|*.assert) continue;; esac
    args=$(cat "$n.args" 2>/dev/null || true)
    args=$(printf '%s\n' "$args" | sed -E 's/--format[= ][a-z]+//; s/--timeout[= ][0-9]+//; s/--lint-only//')
    # shellcheck disable=SC2086
    lint_compare "$n" "$f" $args
    case " $args " in *" -s "*|*" --schema "*) ;; *) continue;; esac
    # shellcheck disable=SC2086
    compare "$n" "$f" $args
done
for f in "$shared"/examples/box/*/policy.dw; do
    [ -f "$f" ] && lint_compare "box example $(basename "$(dirname "$f")")" "$f" --schema box
done
python3 "$root/tests/bench/gen_box_shaped.py" 1000 > "$tmp/boxex.cedar"
lint_compare boxex-1000 "$tmp/boxex.cedar" --schema box
python3 "$root/tests/bench/gen_box_shaped.py" 300 > "$tmp/boxex.cedar"
compare boxex-300 "$tmp/boxex.cedar" --schema box
if command -v node >/dev/null 2>&1; then
    for style in box rbac; do
        if node "$root/tests/bench/gen.js" --style $style --policies 150 --requests 1 --seed 11 --out "$tmp/$style" >/dev/null 2>&1; then
            compare "$style-150" "$tmp/$style/policies.cedar" -s "$tmp/$style/schema.cedarschema"
        fi
        if node "$root/tests/bench/gen.js" --style $style --policies 1000 --requests 1 --seed 11 --out "$tmp/$style-1000" >/dev/null 2>&1; then
            lint_compare "$style-1000" "$tmp/$style-1000/policies.cedar" -s "$tmp/$style-1000/schema.cedarschema"
        fi
    done
fi
echo "fast path: $pass passed, $fail failed"
[ $fail = 0 ]
