#!/usr/bin/env bash
# Runs every suite of `make test` and sums their "N passed, N failed" lines.
# Usage: tests/run_all.sh SHARED_DIR
# Suites: unit (cmocka), golden, conformance (also with the switch dispatch), ..., dogwood-ref; the same again under
# ASan+UBSan; then each libFuzzer target for FUZZ_SECONDS, two at a time (default 15: fourteen targets, and
# .ci/run's 25 minutes; tests/campaign.sh runs each for 10 minutes or more).  Each suite's time is shown.
# Two lanes share the 2 cores: the ASan+UBSan suites run beside the plain build's suites, the library,
# the crash trials and the difftests (about 460 s each on their own); its output is shown when both end.
# Every suite is a single process at a time and works in its own mktemp directory, so the lanes share
# nothing one writes and the other reads (the ASan lane only reads build/asan; cedar-wasm is installed
# here, before either starts).
set -uo pipefail
cd "$(dirname "$0")/.."
SHARED=${1:-../shared}
FUZZ_SECONDS=${FUZZ_SECONDS:-15}
export DW_SHARED=$SHARED   # test_artifact_corpus's campaign and test_artifact_serve read the Box examples from here
log=build/test-logs
mkdir -p "$log"
# each lane appends "NAME PASSED FAILED" per suite to its own results file; the total is summed from them
rm -f "$log"/results.* "$log"/lane-asan.*
lane=plain

# run_suite and account_suite (each suite's "N passed, N failed" into $log/results.$lane)
. tests/suite_lib.sh

suites() {
    local B=$1 tag=$2
    run_suite "unit$tag" tests/run_unit.sh "$B"
    # run_unit.sh counts a failed group setup; the corpus campaign refuses to run without its inputs
    run_suite "unit-harness$tag" tests/unit_harness.sh "$B"
    run_suite "golden$tag" "$B/dw-golden" tests/golden
    run_suite "conformance$tag" "$B/dw-conformance" build/corpus
    # the same through the interpreter's switch dispatch (-DDW_NO_JUMP_TABLE)
    run_suite "conformance-switch$tag" "$B/nojt/dw-conformance" build/corpus
    run_suite "examples$tag" tests/examples.sh "$B/dwc" "$SHARED"
    run_suite "regress$tag" tests/regress.sh "$B/dwc" "$B/dw-conformance"
    run_suite "traces$tag" tests/traces.sh "$B/dwc"
    run_suite "dwd$tag" tests/dwd/run.sh "$B/dwd" "$B/dwc"
    run_suite "dwd-faults$tag" tests/dwd/faults.sh "$B/dwd" "$B/dwc"
    # dwd links no front end: nm shows no parser, macro expander, type checker, schema parser or compiler
    run_suite "dwd-links$tag" tests/dwd/no_front_end.sh "$B/dwd" "$B/dwc"
    run_suite "check$tag" tests/check/run.sh "$PWD/$B/dwc"
    run_suite "cli$tag" tests/cli.sh "$B/dwc" "$SHARED"
    # dwc test: the Box examples as test files, failures, invalid files, junit/tap/json
    run_suite "dwtest$tag" tests/dwtest/run.sh "$B/dwc"
    # dwc explain: every example decision explained without disagreement, the events behind a budget
    run_suite "explain$tag" tests/explain/run.sh "$B/dwc"
    # the Dogwood reference's own conformance cases, as its harness runs them
    run_suite "dogwood-ref$tag" tests/dogwood_ref/run.sh "$B/dwc" "$SHARED"
    # dwc dogwood lower's output compiles as plain Cedar and decides as the set it came from (§20 D4)
    run_suite "dogwood-lower-decide$tag" tests/dogwood_ref/lower_decide.py "$B/dwc" "$SHARED"
    run_suite "solver-fault$tag" tests/check/solver_fault.sh "$PWD/$B/dwc"
    # check's pruning and split queries lose no finding (issue 21)
    run_suite "check-fast-path$tag" tests/check/fast_path.sh "$PWD/$B/dwc"
    run_suite "check-cache$tag" tests/check/cache.sh "$PWD/$B/dwc"
    run_suite "cedar-cli$tag" tests/cedar_cli.sh "$B/dwc"
    run_suite "cedar-evaluate$tag" tests/cedar_evaluate.sh "$B/dwc"
    run_suite "dogwood-schema$tag" tests/mcp.sh "$B/dwc"
    # dwc lsp: a scripted editor session over pipes (tests/lsp/session.py)
    run_suite "lsp$tag" tests/lsp/session.py "$B/dwc"
    # dwc format: Cedar's formatter byte for byte (a corpus sample; all of it: make formatdiff)
    run_suite "format$tag" tests/format/run.sh "$B/dwc" "$SHARED"
}

# the Cedar peer, once, before the lanes start (a failed install fails every suite that needs it, loudly)
if ! tests/diff/cedar_wasm.sh >"$log/cedar-wasm.log" 2>&1; then
    echo "== cedar-wasm install failed:"; tail -n 12 "$log/cedar-wasm.log" | sed 's/^/   /'
    echo "cedar-wasm 0 1" >>"$log/results.plain"
fi
# the ASan+UBSan lane, in the background; its output is shown after the plain lane's
( lane=asan; suites build/asan "-asan"; touch "$log/lane-asan.done" ) >"$log/lane-asan.out" 2>&1 &
asan_lane=$!
suites build ""
# libdogwood as installed: make install DESTDIR, exports, pkg-config/dlopen/static C, Python, Rust, man pages
run_suite "lib" tests/lib/run.sh build "$SHARED"
# the build without information providers (make PROVIDERS=0, dogwood.md §13.6)
run_suite "noprov" tests/noprov.sh build/noprov build/dwc "$SHARED"
# the editor files of docs/editors/ (TextMate grammars, VS Code manifest, Vim syntax)
run_suite "editors" tests/lsp/grammars.py
# docs/PERFORMANCE.md's generator on made-up results: every section keeps its table
run_suite "bench-report" tests/bench/report_test.sh
# dwd killed with SIGKILL at random points and restarted (CRASH_TRIALS, default 20)
run_suite "dwd-crash" tests/dwd/crash.sh build/dwd
CRASH_FAULT=mixed CRASH_TRIALS=${CRASH_FAULT_TRIALS:-8} run_suite "dwd-crash-faults" tests/dwd/crash.sh build/dwd
# ... and around a reload to a changed leaf, restarted on either artifact (CRASH_RELOAD_TRIALS, default 10)
CRASH_RELOAD=1 CRASH_TRIALS=${CRASH_RELOAD_TRIALS:-10} run_suite "dwd-crash-reload" tests/dwd/crash.sh build/dwd
# differential testing against Cedar itself (cedar-wasm from npm)
run_suite "difftest" tests/diff/run.sh "${DIFF_CASES:-10000}"
DIFF_SUITE=templates run_suite "difftest-templates" tests/diff/run.sh "${DIFF_TEMPLATE_CASES:-300}"
DIFF_SUITE=est run_suite "difftest-est" tests/diff/run.sh "${DIFF_EST_EVERY:-20}"
DIFF_SUITE=schema run_suite "difftest-schema" tests/diff/run.sh "${DIFF_SCHEMA_EVERY:-50}"
DIFF_SUITE=evaluate run_suite "difftest-evaluate" tests/diff/run.sh "${DIFF_EVAL_CASES:-120}"
# `dwc dogwood lower`'s output parsed and validated by cedar-wasm (installed by the difftests above)
run_suite "dogwood-lower" tests/dogwood_ref/lower.sh build/dwc "$SHARED"
t0=$SECONDS
wait "$asan_lane" || true
echo "== (the ASan+UBSan lane, which ran beside the suites above; waited $((SECONDS - t0)) s more for it)"
cat "$log/lane-asan.out"
# a lane that died part way has not run its later suites: that is a failure, never a shorter total
[ -f "$log/lane-asan.done" ] || { echo "   the ASan+UBSan lane did not finish"; echo "asan-lane 0 1" >>"$log/results.asan"; }
lane=fuzz

# two targets at a time (each libFuzzer run is one process): every target still gets FUZZ_SECONDS,
# in half the wall time on the 2 cores
fuzz_targets=()
for f in build/fuzz/fuzz_*; do [ -x "$f" ] && fuzz_targets+=("$f"); done
for ((i = 0; i < ${#fuzz_targets[@]}; i += 2)); do
    pair=("${fuzz_targets[@]:i:2}")
    t0=$SECONDS
    for f in "${pair[@]}"; do
        n=$(basename "$f")
        rm -f "$log/$n.rc"       # a run that ends without writing it counts as failed, never as a stale pass
        ( tests/fuzz/run.sh "$f" "build/fuzz-corpus/$n" "$FUZZ_SECONDS" >"$log/$n.log" 2>&1; echo $? >"$log/$n.rc" ) &
    done
    wait
    for f in "${pair[@]}"; do
        n=$(basename "$f")
        echo "== $n"
        account_suite "$n" "$(cat "$log/$n.rc" 2>/dev/null || echo 1)" $((SECONDS - t0))
    done
done
echo
echo "make test's suites took $SECONDS s"
total_pass=0
total_fail=0
while read -r name p f; do
    total_pass=$((total_pass + p))
    total_fail=$((total_fail + f))
    [ "$f" -eq 0 ] && continue
    # each failed suite with the first lines of its log that say what failed (CI shows only the tail)
    echo "FAILED suite $name ($log/$name.log):"
    grep -m 8 -E 'FAIL|fail:|FAILED|mismatch|differ|error|Error|crashed|exit status|expected' "$log/$name.log" 2>/dev/null | cut -c1-300 | sed 's/^/   /'
done < <(cat "$log/results.plain" "$log/results.asan" "$log/results.fuzz" 2>/dev/null)
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
