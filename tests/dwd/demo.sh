#!/usr/bin/env bash
# tests/dwd/demo.sh DWD DWD_DEMO SHARED - the dwd part of `make demo`.
# Starts dwd (--durability full, a decision log) on Box's example policies 01 (project reads,
# no .env), 02 (no deletes), 04 (shell allowlist, no rm -rf) and 06 (GitHub request budget)
# taken together, in a temp directory (state, socket, log); drives the scripted agent session
# tests/dwd/demo_session.jsonl through it with DWD_DEMO (tests/dwd/demo_client.c), which prints
# each verdict with its rule and the decision-log line; then stops dwd with SIGTERM.
set -uo pipefail
DWD=${1:?usage: demo.sh DWD DWD_DEMO SHARED}
DEMO=${2:?usage: demo.sh DWD DWD_DEMO SHARED}
SHARED=${3:?usage: demo.sh DWD DWD_DEMO SHARED}
here=$(cd "$(dirname "$0")" && pwd)
ex=$SHARED/examples/box
T=$(mktemp -d "${TMPDIR:-/tmp}/dwd-demo.XXXXXX")
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid"; rm -rf "$T"; }
trap cleanup EXIT

for b in 01-project-read 02-no-deletes 04-shell-allowlist 06-http-request-budget; do
    cat "$ex/$b/policy.dw" || exit 1
    echo
done > "$T/policy.dw"
echo "policy: Box examples 01, 02, 04 and 06 together ($(grep -c '^@id' "$T/policy.dw") rules); state, socket and decision log in $T"
"$DWD" --policy "$T/policy.dw" --schema box --state "$T/state" --socket "$T/sock" \
    --decision-log "$T/decisions.jsonl" --durability full 2> "$T/dwd.err" &
pid=$!
for _ in $(seq 1 600); do [ -S "$T/sock" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
if [ ! -S "$T/sock" ]; then echo "dwd did not start:"; cat "$T/dwd.err"; exit 1; fi
sed 's/^/dwd| /' "$T/dwd.err"
"$DEMO" "$T/sock" "$T/decisions.jsonl" < "$here/demo_session.jsonl"
rc=$?
kill "$pid"; wait "$pid"; src=$?; pid=""
tail -n +2 "$T/dwd.err" | sed 's/^/dwd| /'
[ "$src" -eq 0 ] && echo "dwd stopped cleanly (SIGTERM, exit 0)" || { echo "dwd exited with status $src"; rc=1; }
exit "$rc"
