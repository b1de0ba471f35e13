#!/usr/bin/env bash
# Runs one libFuzzer target for N seconds on a corpus seeded from the shared
# conformance files and examples (and the repository's own test inputs:
# event schemas, traces, JSON schemas).  Prints "1 passed, 0 failed" when it finds nothing.
# Usage: tests/fuzz/run.sh TARGET CORPUS_DIR SECONDS [SHARED]
set -uo pipefail
target=$1; corpus=$2; secs=$3; shared=${4:-../shared}
mkdir -p "$corpus"
name=$(basename "$target")
if [ -z "$(ls -A "$corpus" 2>/dev/null)" ]; then
    case "$name" in
        fuzz_policy) find "$shared/conformance" "$shared/examples" build/corpus/corpus-tests -name '*.cedar' -o -name '*.dw' 2>/dev/null | head -400 | xargs -r cp -t "$corpus" 2>/dev/null ;;
        fuzz_schema) find "$shared" build/corpus/corpus-tests -name '*.cedarschema' 2>/dev/null | head -300 | xargs -r cp -t "$corpus" 2>/dev/null ;;
        fuzz_json)   find "$shared/conformance" build/corpus/corpus-tests -name '*.json' 2>/dev/null | head -300 | xargs -r cp -t "$corpus" 2>/dev/null
                     find "$shared/examples" -name '*.jsonl' -exec split -l 1 {} "$corpus/line-" \; 2>/dev/null ;;
        fuzz_artifact) for f in $(ls build/corpus/corpus-tests/*.cedar 2>/dev/null | head -200) "$shared"/examples/box/0[1-4]*/policy.dw; do
                         build/dwc compile "$f" -o "$corpus/$(basename "$f").dwb" >/dev/null 2>&1; done
                     for d in "$shared"/examples/box/0[5-8]*/; do   # with their serving context (SERVE)
                         build/dwc compile "$d/policy.dw" -s box -o "$corpus/$(basename "$d")-box.dwb" >/dev/null 2>&1; done ;;
        fuzz_dwd)    find "$shared/examples" -name 'trace.jsonl' -exec split -l 1 {} "$corpus/ev-" \; 2>/dev/null
                     printf '{"op":"stats"}\n' > "$corpus/stats"
                     printf '{"op":"decide","action":"fs:read","input":{"path":"~/project/a","operation":"read_content"}}\n' > "$corpus/decide" ;;
        fuzz_eventschema) find "$shared" tests/golden/eventschema tests/traces -name '*.dwschema' 2>/dev/null | head -300 | xargs -r cp -t "$corpus" 2>/dev/null ;;
        fuzz_schema_json) find "$shared" tests/golden/schema build/corpus/corpus-tests -name '*.json' 2>/dev/null | xargs -r grep -l -s -E '"(entityTypes|actions|commonTypes)"' | head -300 | xargs -r cp -t "$corpus" 2>/dev/null ;;
        fuzz_trace)  find "$shared/examples" tests/traces -name '*.log' -o -name '*.jsonl' 2>/dev/null | head -300 | while read -r f; do cp "$f" "$corpus/$(echo "$f" | tr / _)"; done ;;
        fuzz_lsp)    tests/fuzz/lsp_seeds.py "$corpus" "$shared" ;;
        fuzz_est)    for f in $(ls build/corpus/corpus-tests/*.cedar 2>/dev/null | head -200); do
                         build/dwc translate-policy --direction cedar-to-json -p "$f" > "$corpus/$(basename "$f").json" 2>/dev/null; done ;;
        fuzz_mcp)    cp tests/mcp/*.json "$corpus"/ 2>/dev/null ;;
        fuzz_evaluate) node -e 'const { genEvalCase } = require("./tests/diff/gen.js"); const fs = require("fs");
                         for (let i = 0; i < 30; i++) genEvalCase(i, 10).exprs.forEach((e, k) => fs.writeFileSync(process.argv[1] + "/g" + i + "-" + k, e));' \
                         "$corpus" 2>/dev/null
                     printf '%s' '[1, "a", {b: decimal("1.50")}, ip("10.0.0.0/8"), datetime("2024-01-01").offset(duration("1h"))]' > "$corpus/values"
                     printf '%s' '{a: 1}.b + (9223372036854775807 * 2)' > "$corpus/errors" ;;
        fuzz_structured) find "$shared/conformance" build/corpus/corpus-tests -name '*.cedar' 2>/dev/null | head -100 | xargs -r cp -t "$corpus" 2>/dev/null ;;
    esac
fi
mkdir -p build/fuzz-artifacts
"$target" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=4096 -timeout=10 -print_final_stats=1 \
    -artifact_prefix=build/fuzz-artifacts/"$name"- "$corpus" > "build/fuzz-artifacts/$name.log" 2>&1
rc=$?
tail -n 15 "build/fuzz-artifacts/$name.log"
if [ "$rc" -eq 0 ]; then echo "1 passed, 0 failed"; exit 0; fi
echo "0 passed, 1 failed"
exit 1
