#!/usr/bin/env bash
# Compile time, artifact size and load+verify time for the 10,000-policy benchmark sets
# (tests/bench/run.sh generates them in build/bench/); prints a markdown section.
# Usage: tests/bench/artifact_report.sh DWC LOAD_BENCH
# With BENCH_RESULTS=DIR (run.sh's results), each set also gets cedar-wasm's setup time of the same
# run: the Cedar peer's preparse_ms (read the files, preparsePolicySet, preparseSchema) from
# DIR/SET.json.peer.
set -uo pipefail
DWC=$1; LOAD=$2
RESULTS=${BENCH_RESULTS:-}
echo
echo '## Compiling and loading (tests/bench/load_bench.c)'
echo
echo '`dwc compile` with the schema (parse, validate, compile, index, write), wall time; the artifact'"'"'s'
echo 'size against the source text; loading it (read, checksum, verify every operand, jump, stack bound,'
echo 'temporal table and index entry, then intern strings and build the index probe table and condition'
echo 'guards), best of 20. cedar-wasm: the Cedar peer'"'"'s setup in the same run (read the files,'
echo '`preparsePolicySet`, `preparseSchema`; from its from-json run, which skips strict validation), once;'
echo 'its ratios are that time over dwc'"'"'s compile and over dwc'"'"'s load.'
echo
echo '| set | policies | compile | source | artifact | artifact ÷ source | load + verify | cedar-wasm preparse | ÷ dwc compile | ÷ dwc load |'
echo '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
for s in rbac-10000 box-10000; do
    d=build/bench/$s
    [ -f "$d/policies.cedar" ] || continue
    out=$(mktemp --suffix=.dwb)
    t0=$(date +%s%N)
    "$DWC" compile "$d/policies.cedar" -s "$d/schema.cedarschema" -o "$out" >/dev/null 2>&1 || { echo "| $s | compile failed | | | | | | | | |"; continue; }
    t1=$(date +%s%N)
    src=$(stat -c %s "$d/policies.cedar"); art=$(stat -c %s "$out")
    ms=$("$LOAD" "$out" | sed -n 's/^load_verify_ms=//p')
    n=$(grep -c '^@id' "$d/policies.cedar")
    cms=""; [ -n "$RESULTS" ] && cms=$(sed -n 's/^preparse_ms=//p' "$RESULTS/$s.json.peer" 2>/dev/null)
    awk -v s="$s" -v n="$n" -v t0="$t0" -v t1="$t1" -v src="$src" -v art="$art" -v ms="$ms" -v cms="$cms" \
        'BEGIN { c = cms == "" ? "| not run | | " : sprintf("| %.0f ms | %.2f× | %.0f× ", cms, cms / ((t1 - t0) / 1e6), ms > 0 ? cms / ms : 0)
                 printf "| %s | %d | %.2f s | %d B | %d B | %.2f | %s ms %s|\n", s, n, (t1 - t0) / 1e9, src, art, art / src, ms, c }'
    rm -f "$out"
done
