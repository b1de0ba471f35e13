#!/bin/sh
# dwc check --cache DIR (issue 21, compiler/prove_cache.c): a re-run reads
# every unchanged environment back and reports exactly the findings of a run
# without the cache; a one-rule change re-proves only the steps of the pairs
# that rule is in (in the environments it applies in); a damaged, truncated
# or foreign file (bytes flipped anywhere, another dwc's salt) is reported
# and ignored, never trusted; a step with an unknown query is not kept.
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
    for e in "$c"/*.rules; do
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
# ... and of those two only the steps the rule's pairs are in: a few queries, not the environments'
qa=$(stat_of "$tmp/q.json" queries) qb=$(stat_of "$tmp/qref.json" queries)
[ $((qa * 20)) -le "$qb" ] && ok || bad "one rule changed: $qa queries with the cache, $qb without: more than pairs re-proved"
# a byte flipped anywhere in a file (magic, salt, a key, a value, the checksum): that file is
# reported and ignored, the findings are those of the run without the cache
c=$tmp/cache-boxex
run "$tmp/q.dw" --schema box --cache "$c" > /dev/null
f=$(ls -S "$c"/*.rules | head -1)
cp "$f" "$tmp/whole"
for at in 0 12 40 90 half -20 -3; do
    python3 -c 'import sys; p, at = sys.argv[1], int(sys.argv[2]) if sys.argv[2] != "half" else None
b = bytearray(open(p, "rb").read()); b[len(b) // 2 if at is None else at] ^= 0x5a; open(p, "wb").write(b)' "$f" "$at"
    "$dwc" check "$tmp/q.dw" --schema box --cache "$c" --format json > "$tmp/5.json" 2> "$tmp/5.err"
    same "byte $at flipped" "$tmp/qref.json" "$tmp/5.json"
    grep -q "warning: --cache: .*: ignored" "$tmp/5.err" && ok || bad "byte $at flipped: not reported"
    cached "byte $at flipped" "$tmp/5.json" $(($(stat_of "$tmp/qref.json" environments) - 1))
    cp "$tmp/whole" "$f"
done
# another dwc's file (the salt changed, the checksum made right again): reported, ignored
python3 - "$f" <<'PY'
import ctypes, struct, sys
x = ctypes.CDLL("libxxhash.so.0")
x.XXH3_64bits.restype = ctypes.c_uint64
x.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
b = bytearray(open(sys.argv[1], "rb").read())
i = b.index(b"dwc ", 12)
b[i + 2] = ord("x")
body = bytes(b[:-8])
open(sys.argv[1], "wb").write(body + struct.pack("<Q", x.XXH3_64bits(body, len(body))))
PY
"$dwc" check "$tmp/q.dw" --schema box --cache "$c" --format json > "$tmp/6.json" 2> "$tmp/6.err"
same "another salt" "$tmp/qref.json" "$tmp/6.json"
grep -q "written by another dwc release" "$tmp/6.err" && ok || bad "another salt: not reported"
# a run whose queries answer unknown (a 1 ms --timeout) keeps none of those steps:
# the next run proves them and finds what a run without the cache finds
c=$tmp/cache-unknown
run "$tmp/q.dw" --schema box --cache "$c" --timeout 1 > "$tmp/7.json"
[ "$(stat_of "$tmp/7.json" unknown)" -gt 0 ] 2>/dev/null && ok || bad "1 ms timeout run: no unknown"
run "$tmp/q.dw" --schema box --cache "$c" > "$tmp/8.json"
same "after unknowns" "$tmp/qref.json" "$tmp/8.json"
[ "$(stat_of "$tmp/8.json" queries)" != 0 ] && ok || bad "after unknowns: nothing proved again"
echo "check cache: $pass passed, $fail failed"
[ $fail = 0 ]
