#!/usr/bin/env bash
# tests/diff/cedar_wasm.sh - installs the Cedar peer, @cedar-policy/cedar-wasm (npm ci, pinned by
# tests/diff/package-lock.json), into build/diff/node unless it is already there, and prints the
# module's directory (relative to the repository root).  The one installer for every suite that
# checks against Cedar (diff/run.sh, format/run.sh; run_all.sh calls it before any suite starts, so
# suites running side by side never race to install it and none finds it missing).
set -euo pipefail
cd "$(dirname "$0")/../.."
MOD=build/diff/node/node_modules/@cedar-policy/cedar-wasm
if [ ! -f "$MOD/nodejs/cedar_wasm.js" ]; then
    mkdir -p build/diff/node
    cp tests/diff/package.json tests/diff/package-lock.json build/diff/node/
    npm ci --prefix build/diff/node --no-audit --no-fund >&2
fi
echo "$MOD"
