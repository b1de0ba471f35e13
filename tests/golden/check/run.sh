#!/bin/sh
# Golden tests of `dwc check` (see README.md).
#   tests/golden/check/run.sh [--update] [DWC]
# DWC: a binary whose `DWC check ARGS` runs dw_cmd_check.  Default: build/dwc when it
# knows `check`, else a scratch driver linked against build/libdogwood.a.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
update=0
if [ "${1:-}" = "--update" ]; then update=1; shift; fi
dwc=${1:-}
if [ -z "$dwc" ]; then
    if "$root/build/dwc" check --help >/dev/null 2>&1; then
        dwc="$root/build/dwc"
    else
        tmp=${TMPDIR:-/tmp}/dwc-check-golden.$$
        mkdir -p "$tmp"
        printf '#include "runtime/check.h"\nint main(int c, char **v) { return dw_cmd_check(c - 1, v + 1); }\n' > "$tmp/main.c"
        ${CC:-cc} -std=c11 -D_GNU_SOURCE -I"$root" -I"$root/build/gen" -o "$tmp/dwc" "$tmp/main.c" \
            "$root/build/libdogwood.a" -lxxhash -lm || exit 1
        dwc="$tmp/dwc"
    fi
fi
pass=0 fail=0
cd "$here" || exit 1
for f in *.dw; do
    n=${f%.dw}
    args=$(cat "$n.args" 2>/dev/null || true)
    # shellcheck disable=SC2086
    out=$("$dwc" check "$f" $args 2>&1; echo "exit $?")
    if [ $update = 1 ]; then
        printf '%s\n' "$out" > "$n.expected"
        pass=$((pass + 1))
    elif [ "$out" = "$(cat "$n.expected" 2>/dev/null)" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $n"
        printf '%s\n' "$out" | diff "$n.expected" - | head -20
    fi
done
echo "check goldens: $pass passed, $fail failed"
[ $fail = 0 ]
