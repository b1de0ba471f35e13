# tests/dwd/common.sh - sourced by the dwd suites (run.sh, faults.sh): where
# things are, and the pass/fail counting that ends in "N passed, N failed".
here=$(cd "$(dirname "$0")" && pwd)
shared=${DW_SHARED:-/work/shared}
ex=$shared/examples/box/06-http-request-budget
CC=${CC:-cc}
pass=0; fail=0
ok()  { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
