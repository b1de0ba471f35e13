# tests/harness.bash - sourced by the tests/*.sh scripts: what each of them
# needs and used to write out again: a temp dir removed at exit ($tmp), the
# pass/fail counters, and the closing `N passed, N failed` line that
# tests/run_all.sh adds up.
pass=0; fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
# run NAME CMD...: stdout, stderr and exit status into $tmp/NAME.{out,err,rc}
run() { local n=$1; shift; "$@" >"$tmp/$n.out" 2>"$tmp/$n.err"; echo $? >"$tmp/$n.rc"; }
# expect NAME RC TEXT: after `run NAME`, exit status RC and TEXT (a fixed
# string) in its stdout or stderr
expect() {
    if [ "$(cat "$tmp/$1.rc")" = "$2" ] && cat "$tmp/$1.out" "$tmp/$1.err" | grep -qF -- "$3"; then ok
    else bad "$1: wanted exit $2 and \"$3\", got exit $(cat "$tmp/$1.rc"):"; cat "$tmp/$1.out" "$tmp/$1.err" | head -8; fi
}
# finish [LABEL]: the summary line; the script's status is 0 only with no failure
finish() { echo "${1:+$1: }$pass passed, $fail failed"; [ "$fail" -eq 0 ]; }
