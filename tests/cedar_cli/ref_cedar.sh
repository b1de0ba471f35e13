#!/bin/sh
# ref_cedar.sh ARGS - ref_cedar.js (cedar-wasm 4.13 as Cedar's CLI) with the cedar-wasm that
# tests/diff/run.sh installs into build/diff/node; CEDAR_WASM overrides where it is.
here=$(cd "$(dirname "$0")" && pwd)
: "${CEDAR_WASM:=$here/../../build/diff/node/node_modules/@cedar-policy/cedar-wasm/nodejs/cedar_wasm.js}"
export CEDAR_WASM
exec node "$here/ref_cedar.js" "$@"
