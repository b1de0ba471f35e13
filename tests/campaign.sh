#!/usr/bin/env bash
# The full reliability campaign recorded in docs/RELIABILITY.md (issue 8):
#   - every libFuzzer target (build/fuzz/fuzz_*) for FUZZ_SECONDS (>= 600),
#     one after another, each from a corpus seeded as `make test` seeds it;
#   - DIFF_CASES differential cases against Cedar (tests/diff/run.sh);
#   - MUTATIONS hostile artifacts (tests/unit/test_artifact_corpus.c's
#     campaign, ASan+UBSan build) over DW_MUTATION_FILES corpus tests and
#     every Box example: byte mutations, and PROGRAM_MUTATIONS mutations of
#     the loaded programs written back as well-formed files;
#   - CRASH_RELOAD_TRIALS (>= 200) crash trials around a policy reload
#     (tests/dwd/crash.sh with CRASH_RELOAD=1).
#   - CRASH_TRIALS dwd crash trials (tests/dwd/crash.sh) for each fault of CRASH_FAULTS: SIGKILL
#     alone, then SIGKILL followed by a flipped byte, a deleted or emptied newest segment, its
#     last record cut off (issue 13: 0 acknowledged events lost silently).
# It takes hours: run it off the test path, under nice.  Nothing here is part
# of `make test` (which runs the same tools for 30 s / 10,000 / 1,000).
# Usage: tests/campaign.sh [OUT_DIR] [FUZZ_SECONDS] [DIFF_CASES] [MUTATIONS] [PROGRAM_MUTATIONS]
#        CRASH_TRIALS (default 200), CRASH_FAULTS (default "none flip delete zero truncate"); PARTS
#        (default "fuzz diff mutations crash") runs only those parts (crash: the fault and the
#        reload trials).
# Writes OUT_DIR/summary.txt (one line per part) and ends "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build/campaign}
FUZZ_SECONDS=${2:-600}
DIFF_CASES=${3:-1000000}
MUTATIONS=${4:-100000}
PROGRAM_MUTATIONS=${5:-1000000}
CRASH_RELOAD_TRIALS=${CRASH_RELOAD_TRIALS:-200}
SHARED=${SHARED:-$(make --no-print-directory -s print-shared)}   # as make finds it (also from a clone)
# without the Box examples every part would run on less than it says
[ -d "$SHARED/examples/box" ] || { echo "campaign: no shared directory with examples/box (found '$SHARED'); run with SHARED=/path/to/shared" >&2; exit 2; }
SEED=${SEED:-2026}
SAN_OPT="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
export ASAN_OPTIONS=detect_leaks=1:exitcode=99 UBSAN_OPTIONS=print_stacktrace=1:exitcode=99
CRASH_TRIALS=${CRASH_TRIALS:-200}
CRASH_FAULTS=${CRASH_FAULTS:-none flip delete zero truncate}
PARTS=" ${PARTS:-fuzz diff mutations crash} "
want() { case $PARTS in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$OUT/bin" "$OUT/fuzz"
pass=0; fail=0
note() { echo "$*" | tee -a "$OUT/summary.txt"; }
: > "$OUT/summary.txt"

make --no-print-directory deps all >/dev/null || { echo "build failed"; exit 1; }
if want fuzz || want mutations; then
    make --no-print-directory fuzz build/corpus/.unpacked >/dev/null || { echo "build failed"; exit 1; }
    make --no-print-directory BUILD=build/asan OPT="$SAN_OPT" build/asan/tests/test_artifact_corpus >/dev/null || { echo "asan build failed"; exit 1; }
    # copies, so rebuilds during the campaign do not change what runs
    cp build/fuzz/fuzz_* build/asan/tests/test_artifact_corpus "$OUT/bin/"
fi

# 1. fuzz targets
for f in "$OUT"/bin/fuzz_*; do
    want fuzz || break
    t=$(basename "$f")
    corpus="$OUT/fuzz/$t-corpus"
    tests/fuzz/run.sh "$f" "$corpus" 1 "$SHARED" >/dev/null 2>&1   # seeds an empty corpus
    start=$(date +%s)
    nice -n 19 "$f" -max_total_time="$FUZZ_SECONDS" -max_len=65536 -rss_limit_mb=4096 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$OUT/fuzz/$t-" "$corpus" > "$OUT/fuzz/$t.log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - start ))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$OUT/fuzz/$t.log")
    crashes=$(ls "$OUT/fuzz/$t-"crash-* "$OUT/fuzz/$t-"leak-* "$OUT/fuzz/$t-"timeout-* "$OUT/fuzz/$t-"oom-* 2>/dev/null | wc -l)
    note "fuzz $t: ${secs} s, ${execs:-?} executions, corpus $(ls "$corpus" | wc -l), crashes $crashes, exit $rc"
    if [ "$rc" -eq 0 ] && [ "$crashes" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done

# 2. differential testing against Cedar
if want diff; then
start=$(date +%s)
nice -n 19 tests/diff/run.sh "$DIFF_CASES" "$SEED" > "$OUT/diff.log" 2>&1
rc=$?
note "difftest: $DIFF_CASES cases (seed $SEED), $(( $(date +%s) - start )) s: $(tail -n 1 "$OUT/diff.log"), exit $rc"
if [ "$rc" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
fi

# 3. hostile artifacts
if want mutations; then
start=$(date +%s)
DW_MUTATIONS=$MUTATIONS DW_PROGRAM_MUTATIONS=$PROGRAM_MUTATIONS DW_MUTATION_FILES=${DW_MUTATION_FILES:-2000} DW_MUTATION_SEED=$SEED DW_SHARED=$SHARED \
    nice -n 19 "$OUT/bin/test_artifact_corpus" > "$OUT/mutations.log" 2>&1
rc=$?
note "mutations: $(( $(date +%s) - start )) s: $(grep -E '^(corpus|program) mutations' "$OUT/mutations.log"), exit $rc"
if [ "$rc" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
fi

# 4. dwd crash trials, one run per fault
if want crash; then
cp build/dwd "$OUT/bin/"
for fault in $CRASH_FAULTS; do
    start=$(date +%s)
    CRASH_FAULT=$fault CRASH_TRIALS=$CRASH_TRIALS CRASH_SEED=$SEED DW_SHARED=$SHARED \
        nice -n 19 tests/dwd/crash.sh "$OUT/bin/dwd" > "$OUT/crash-$fault.log" 2>&1
    rc=$?
    note "crash $fault: $(( $(date +%s) - start )) s: $(grep '^crash trials:' "$OUT/crash-$fault.log"); $(tail -n 1 "$OUT/crash-$fault.log"), exit $rc"
    if [ "$rc" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
fi

# 5. crash trials around reloads (issue 13 row 5): SIGKILL around a reload to a changed leaf,
#    restart on either artifact, verdicts of an uninterrupted run
if want crash; then
start=$(date +%s)
CRASH_RELOAD=1 CRASH_TRIALS=$CRASH_RELOAD_TRIALS DW_SHARED=$SHARED nice -n 19 tests/dwd/crash.sh build/dwd > "$OUT/crash-reload.log" 2>&1
rc=$?
note "crash reload: $(( $(date +%s) - start )) s: $(grep '^reload trials:' "$OUT/crash-reload.log"), exit $rc"
if [ "$rc" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
