#!/usr/bin/env bash
# Compile time, artifact size and load+verify time for the 10,000-policy benchmark sets
# (tests/bench/run.sh generates them in build/bench/); prints a markdown section.
# Usage: tests/bench/artifact_report.sh DWC LOAD_BENCH
set -uo pipefail
DWC=$1; LOAD=$2
echo
echo '## Compiling and loading (tests/bench/load_bench.c)'
echo
echo '`dwc compile` with the schema (parse, validate, compile, index, write), wall time; the artifact'"'"'s'
echo 'size against the source text; loading it (read, checksum, verify every operand, jump, stack bound,'
echo 'temporal table and index entry, then intern strings and build the index probe table and condition'
echo 'guards), best of 20.'
echo
echo '| set | policies | compile | source | artifact | artifact ÷ source | load + verify |'
echo '|---|---:|---:|---:|---:|---:|---:|'
for s in rbac-10000 box-10000; do
    d=build/bench/$s
    [ -f "$d/policies.cedar" ] || continue
    out=$(mktemp --suffix=.dwb)
    t0=$(date +%s%N)
    "$DWC" compile "$d/policies.cedar" -s "$d/schema.cedarschema" -o "$out" >/dev/null 2>&1 || { echo "| $s | compile failed | | | | | |"; continue; }
    t1=$(date +%s%N)
    src=$(stat -c %s "$d/policies.cedar"); art=$(stat -c %s "$out")
    ms=$("$LOAD" "$out" | sed -n 's/^load_verify_ms=//p')
    n=$(grep -c '^@id' "$d/policies.cedar")
    awk -v s="$s" -v n="$n" -v t0="$t0" -v t1="$t1" -v src="$src" -v art="$art" -v ms="$ms" \
        'BEGIN { printf "| %s | %d | %.2f s | %d B | %d B | %.2f | %s ms |\n", s, n, (t1 - t0) / 1e9, src, art, art / src, ms }'
    rm -f "$out"
done
