#!/bin/sh
# dwc check --cache DIR (issue 21, compiler/prove_cache.c): a re-run reads
# every unchanged environment back and reports exactly the findings of a run
# without the cache; a one-rule change re-proves only the environments that
# rule applies in; a damaged or truncated entry is ignored and proved again,
# never trusted.
#   tests/check/cache.sh [DWC]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dwc=${1:-$root/build/dwc}
tmp=${TMPDIR:-/tmp}/dwc-cache-test.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
# findings (rule, policy, position, message) and counterexamples, then the cache counts
summary() {
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for f in d["findings"]:
    print(f["rule"], f.get("policy_index"), f["line"], f["col"], f["message"], json.dumps(f.get("counterexample"), sort_keys=True))
' "$1"
}
stat_of() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["stats"].get(sys.argv[2]))' "$1" "$2"; }
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
same() {   # same NAME A.json B.json: the same findings
    if [ "$(summary "$2")" = "$(summary "$3")" ] && [ -n "$(summary "$2")" ]; then ok; else bad "$1: findings differ"; summary "$2" > "$tmp/a"; summary "$3" | diff "$tmp/a" - | head -6; fi
}
cached() {   # cached NAME OUT.json WANT: environments read back
    got=$(stat_of "$2" environments_cached)
    if [ "$got" = "$3" ]; then ok; else bad "$1: $got environments read back, want $3"; fi
}

run() { "$dwc" check "$@" --format json 2>/dev/null; }
for set_ in planted boxex; do
    case $set_ in
    planted) cp "$here/box_planted.dw" "$tmp/p.dw";;
    boxex) python3 "$root/tests/bench/gen_box_shaped.py" 300 > "$tmp/p.dw";;
    esac
    c=$tmp/cache-$set_
    run "$tmp/p.dw" --schema box > "$tmp/ref.json"
    envs=$(stat_of "$tmp/ref.json" environments)
    run "$tmp/p.dw" --schema box --cache "$c" > "$tmp/1.json"
    same "$set_ first run" "$tmp/ref.json" "$tmp/1.json"
    cached "$set_ first run" "$tmp/1.json" 0
    run "$tmp/p.dw" --schema box --cache "$c" > "$tmp/2.json"
    same "$set_ re-run" "$tmp/ref.json" "$tmp/2.json"
    cached "$set_ re-run" "$tmp/2.json" "$envs"
    [ "$(stat_of "$tmp/2.json" queries)" = 0 ] && ok || bad "$set_ re-run: queries asked"
    # every entry damaged: a byte of the payload flipped, or cut short
    n=0
    for e in "$c"/*.env; do
        n=$((n + 1))
        if [ $((n % 2)) = 0 ]; then
            python3 -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[len(b) // 2] ^= 0x01; open(p, "wb").write(b)' "$e"
        else
            python3 -c 'import sys; p = sys.argv[1]; b = open(p, "rb").read(); open(p, "wb").write(b[:len(b) - 3])' "$e"
        fi
    done
    run "$tmp/p.dw" --schema box --cache "$c" > "$tmp/3.json"
    same "$set_ damaged entries" "$tmp/ref.json" "$tmp/3.json"
    cached "$set_ damaged entries" "$tmp/3.json" 0
    # (proved again: the entries are whole again)
    run "$tmp/p.dw" --schema box --cache "$c" > "$tmp/4.json"
    cached "$set_ rewritten entries" "$tmp/4.json" "$envs"
done
# one rule changed (the fs:write/fs:move permit r1): only its two environments are proved again
python3 "$root/tests/bench/gen_box_shaped.py" 300 > "$tmp/p.dw"
sed 's|"~/project/out1/\*"|"~/project/out1b/*"|' "$tmp/p.dw" > "$tmp/q.dw"
run "$tmp/q.dw" --schema box > "$tmp/qref.json"
run "$tmp/q.dw" --schema box --cache "$tmp/cache-boxex" > "$tmp/q.json"
same "one rule changed" "$tmp/qref.json" "$tmp/q.json"
cached "one rule changed" "$tmp/q.json" $(($(stat_of "$tmp/qref.json" environments) - 2))
echo "check cache: $pass passed, $fail failed"
[ $fail = 0 ]
