#!/usr/bin/env bash
# report_test.sh - tests/bench/report.js on the made-up results in tests/bench/report-fixture/:
# every section of the report has its table (docs/PERFORMANCE.md once lost its Results tables
# and its temporal and dwd sections without anyone noticing), and a result set missing a
# section, or with no workloads, makes report.js refuse to write instead of writing a report
# without it.  Ends with `N passed, N failed`.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/harness.bash
FIX=tests/bench/report-fixture
command -v node >/dev/null 2>&1 || { echo "node not found"; echo "0 passed, 1 failed"; exit 1; }

# has_table FILE HEADING: the section under HEADING (to the next heading) has a table row
has_table() {
    awk -v h="$2" '
        /^#+ / { on = (substr($0, index($0, " ") + 1) == h); next }
        on && /^\|[-:| ]+\|$/ { sep = 1; next }
        on && sep && /^\|.*\|$/ { rows++ }
        END { exit rows ? 0 : 1 }' "$1"
}

out=$tmp/PERFORMANCE.md
if node tests/bench/report.js --results "$FIX" --out "$out" > "$tmp/log" 2>&1; then ok; else bad "report.js refused the fixture:"; cat "$tmp/log"; fi
for h in "Box example 01-project-read" "rbac, 10 policies" "rbac, 100 policies" "box, 10 policies" "box, 100 policies" \
         "keyed, 10 policies" "keyed, 10000 policies" rbac box keyed "Compiling and loading (tests/bench/load_bench.c)" "Temporal rules (tests/bench/temporal_bench.c)" \
         "Box events through the engine (dwc bench --engine)" \
         "dwd over the socket (tests/bench/dwd_load.c)" "Targets (issue 16)"; do
    if [ -f "$out" ] && has_table "$out" "$h"; then ok; else bad "section \"$h\" has no table"; fi
done
# the machine's clock and steal, from run.meta (fixture: 2.95/2.90 GHz, 100 of 2,000 jiffies stolen)
if grep -q '^- Core clock .*2\.95 GHz at the start, 2\.90 GHz at the end.* 5\.0% of the run' "$out" 2>/dev/null; then ok
else bad "the Machine section does not give run.meta's clock and steal"; fi
# both modes and the ratio row of each workload
n=$(grep -c '^| parsed | \*\*Cedar ÷ dwc\*\*' "$out" 2>/dev/null); [ "${n:-0}" -eq 7 ] && ok || bad "parsed ratio rows: ${n:-0}, want 7"
n=$(grep -c '^| from-json | \*\*Cedar ÷ dwc\*\*' "$out" 2>/dev/null); [ "${n:-0}" -eq 7 ] && ok || bad "from-json ratio rows: ${n:-0}, want 7"
# the budget's cost is the median of the alternating rounds' ratios (fixture: 1.40, 1.43, 1.80)
grep -q '^| … with a count budget over 1 h: ≤ 1.5× the plain set (p50, median of the alternating rounds) | 1.43× (rounds: 1.40, 1.43, 1.80) | yes |$' "$out" && ok || bad "budget target row: $(grep 'count budget over 1 h' "$out")"
# the scope-keyed scaling target is the median of the alternating rounds (fixture: 1.38, 1.80, 1.30)
grep -q '^| 10 → 10,000 scope-keyed policies (\*keyed\*): mean grows ≤ 1.5× (median of the alternating rounds) | 1.38× (150 ns → 207 ns in that round; rounds: 1.30, 1.38, 1.80) | yes |$' "$out" && ok ||
    bad "keyed scaling target row: $(grep 'scope-keyed policies' "$out")"
# without rounds, from the keyed sets' own runs (fixture: 108 ns -> 131 ns)
rm -rf "$tmp/fx" && cp -r "$FIX" "$tmp/fx" && rm "$tmp/fx/keyed-rounds.txt"
node tests/bench/report.js --results "$tmp/fx" --out "$tmp/norounds.md" > "$tmp/log" 2>&1
grep -q '^| 10 → 10,000 scope-keyed policies (\*keyed\*): mean grows ≤ 1.5× | 1.21× ' "$tmp/norounds.md" 2>/dev/null && ok ||
    bad "keyed scaling target without rounds: $(grep 'scope-keyed policies' "$tmp/norounds.md" 2>/dev/null)"
# the lowest and highest p50 of a run's stretches, beside the run's own p50 (fixture: 95-150 ns, engine 300-560 ns)
grep -q '^| parsed | dwc | 1,000,000 | 140 ns | .* | 95 ns – 150 ns |$' "$out" && ok || bad "Box example row has no stretches: $(grep '^| parsed | dwc | 1,000,000 | 140 ns' "$out")"
grep -q '^| `dwc bench --engine`, plain set: p50 ≤ 400 ns | 420 ns (its stretches: 300 ns – 560 ns) | \*\*no\*\* |$' "$out" && ok || bad "engine target row: $(grep 'plain set: p50' "$out")"
grep -q '^| plain | 200,000 | 420 ns | .* | 300 ns – 560 ns |$' "$out" && ok || bad "engine plain row has no stretches"
# the run's length and load average (run.meta) are reported
grep -q '^- Run: started 2026-12-01 12:00 UTC, took 11.7 min' "$out" && grep -q '^- Load average (1, 5, 15 min): 1.50 1.20 1.00 at the start, 2.00 1.80 1.40 at the end' "$out" && ok || bad "run length / load average missing"
# Cedar's figure beside the temporal rows
grep -q 'cedar-wasm mean ÷ dwc |$' "$out" && ok || bad "temporal table has no Cedar column"
# no paragraph twice
d=$(grep -v '^$' "$out" | grep -v '^|' | sort | uniq -d | grep -v -- '^dwc p50 growth\|^Cedar p50 growth' | head -3)
[ -z "$d" ] && ok || bad "repeated lines: $d"

# a missing section or no workloads: refused, nothing written
for drop in temporal.txt engine.txt dwd.md load.md '*.meta'; do
    rm -rf "$tmp/fx" && cp -r "$FIX" "$tmp/fx" && (cd "$tmp/fx" && rm -f $drop)
    rm -f "$tmp/refused.md"
    if node tests/bench/report.js --results "$tmp/fx" --out "$tmp/refused.md" > "$tmp/log" 2>&1; then bad "report.js wrote a report without $drop"
    elif [ -e "$tmp/refused.md" ]; then bad "report.js refused but wrote $tmp/refused.md"
    elif grep -q 'not writing' "$tmp/log"; then ok
    else bad "no reason given without $drop:"; cat "$tmp/log"; fi
done
# a section that says why it was not measured is kept, with the reason
rm -rf "$tmp/fx" && cp -r "$FIX" "$tmp/fx" && rm "$tmp/fx/dwd.md" && echo "dwd_report.sh failed: no dwd" > "$tmp/fx/dwd.skip"
if node tests/bench/report.js --results "$tmp/fx" --out "$tmp/skip.md" > "$tmp/log" 2>&1 && grep -q 'Not measured in this run:\*\* dwd_report.sh failed' "$tmp/skip.md"; then ok
else bad "a .skip section was not reported with its reason"; cat "$tmp/log"; fi

finish
