#!/usr/bin/env bash
# Differential testing of dwc against Cedar (@cedar-policy/cedar-wasm 4.13.0).
# Usage: tests/diff/run.sh N [SEED] [extra run.js options]
#        DIFF_SUITE=templates tests/diff/run.sh N [SEED]: templates and links instead (templates.js,
#        through build/dwc authorize -k)
#        DIFF_SUITE=est tests/diff/run.sh K: Cedar's JSON policy format (est.js) over every K-th
#        corpus policy set (build/corpus: make conformance unpacks it) and Cedar's example files
#        DIFF_SUITE=schema tests/diff/run.sh K: translate-schema (schema.js) over every K-th schema
#        DIFF_SUITE=evaluate tests/diff/run.sh N [SEED]: `dwc evaluate` (evaluate.js): N cases of 10
#        generated expressions each, every value and error checked through Cedar's isAuthorized
# Run from the repository root after `make` (needs build/dw-conformance).
# Installs cedar-wasm into build/diff/node (tests/diff/cedar_wasm.sh: npm ci, pinned by tests/diff/package-lock.json)
# unless it is already there.  Last line: "<P> passed, <F> failed"; exit 1 on unexplained
# disagreements (minimised cases are written to tests/regress/diff-*/).
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-1000}; SEED=${2:-1}; shift $(( $# < 2 ? $# : 2 ))
MOD=$(tests/diff/cedar_wasm.sh)
if [ ! -x build/dw-conformance ]; then echo "run.sh: build/dw-conformance missing: run make first" >&2; exit 2; fi
if [ "${DIFF_SUITE:-}" = schema ]; then      # translate-schema (schema.js) over every N-th schema
    exec node tests/diff/schema.js --every "$N" --module "$MOD" build/corpus/corpus-tests build/corpus/tests build/corpus/sample-data tests
fi
if [ "${DIFF_SUITE:-}" = est ]; then
    exec node tests/diff/est.js --every "$N" --module "$MOD" build/corpus/corpus-tests build/corpus/tests build/corpus/sample-data tests
fi
if [ "${DIFF_SUITE:-}" = evaluate ]; then exec node tests/diff/evaluate.js -n "$N" -k 10 --seed "$SEED" --module "$MOD" "$@"; fi
if [ "${DIFF_SUITE:-}" = templates ]; then exec node tests/diff/templates.js -n "$N" --seed "$SEED" --module "$MOD" "$@"; fi
exec node tests/diff/run.js -n "$N" --seed "$SEED" --module "$MOD" "$@"
