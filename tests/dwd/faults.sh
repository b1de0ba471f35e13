#!/usr/bin/env bash
# tests/dwd/faults.sh DWD DWC - dwd under the operator slips and hostile
# clients of issue 13 (rows 4, 9, 16, 17, 18), each reproduced and checked
# to fail closed: a second dwd on a live socket, a non-dwd listener, a stale
# socket, a shared state directory; 300 idle and 40 half-line connections,
# a client that never reads its replies, a line over --max-request; random
# trace ids while confined; the request's principal in the decision log;
# reloads of artifacts compiled for another schema or none, a 0-byte policy,
# a failing background checkpoint, a failed final flush (exit status); the
# option spellings (--socket=PATH) and --help.  Loopback sockets only; every
# wait is bounded.  Ends with "N passed, N failed".
set -uo pipefail
DWD=${1:?usage: faults.sh DWD DWC}
DWC=${2:?usage: faults.sh DWD DWC}
. "$(dirname "$0")/common.sh"

T=$(mktemp -d "${TMPDIR:-/tmp}/dwd-faults.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT

for prog in client flood; do
    if ! $CC -std=c11 -D_GNU_SOURCE -O1 -o "$T/$prog" "$here/$prog.c"; then
        bad "build tests/dwd/$prog.c"; echo "$pass passed, $fail failed"; exit 1
    fi
done
C="$T/client"

# start NAME SOCKET STATE [flags...]: dwd in the background (pid in $pid, stderr in $T/NAME.err)
start() {
    local name=$1 sock=$2 state=$3; shift 3
    "$DWD" --policy "$ex/policy.dw" --state "$state" --socket "$sock" "$@" ${DWD_EXTRA_FLAGS:-} 2>"$T/$name.err" &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 1 600); do
        grep -q '^dwd: serving' "$T/$name.err" 2>/dev/null && return 0
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}
stop() { kill "$1" 2>/dev/null; wait "$1"; }
stat_of() { echo '{"op":"stats"}' | "$C" "$1" | sed -n "s/.*\"$2\":\\([0-9]*\\).*/\\1/p"; }
req='{"op":"decide","action":"http:request","input":{"host":"api.github.com","port":443,"method":"GET","path":"/x","body_bytes":0,"intercepted":true}}'

# ---- row 4: the socket is never taken from a live server ----
start a "$T/sock" "$T/sa" || bad "dwd starts"
pa=$pid
for _ in 1 2 3 4; do echo "$req"; done | "$C" "$T/sock" > "$T/a-replies"
check "4 decisions: the 4th denied by github_burst" grep -q '"verdict":"deny","cause":"forbidden","rule":"github_burst"' <(tail -n 1 "$T/a-replies")
check "the socket's mode is 0600 (connect needs write; the owner only)" test "$(stat -c %a "$T/sock")" = 600
ino=$(stat -c %i "$T/sock")
timeout 20 "$DWD" --policy "$ex/policy.dw" --state "$T/sb" --socket "$T/sock" 2>"$T/b.err"
rc=$?
check "a second dwd (another --state, same --socket) exits 1" test "$rc" -eq 1
check "... saying another dwd holds the socket" grep -q "another dwd holds this socket's lock" "$T/b.err"
check "... and leaves the live socket in place" test "$(stat -c %i "$T/sock")" = "$ino"
check "... which still serves the first history (the 5th request is denied)" \
    grep -q '"rule":"github_burst"' <(echo "$req" | "$C" "$T/sock")
timeout 20 "$DWD" --policy "$ex/policy.dw" --state "$T/sa" --socket "$T/sock-other" 2>"$T/c.err"
check "a second dwd on the same --state exits 1 (the directory is locked)" test $? -eq 1
check "... saying the state directory is in use" grep -q "is in use by another process" "$T/c.err"
stop "$pa"
# a listener that is not dwd (no lock file): the connect probe finds it
python3 - "$T/psock" <<'EOP' & pp=$!
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)
time.sleep(15)
EOP
pids+=("$pp")
for _ in $(seq 1 600); do [ -S "$T/psock" ] && break; sleep 0.05; done
timeout 20 "$DWD" --policy "$ex/policy.dw" --state "$T/sp" --socket "$T/psock" 2>"$T/p.err"
check "a socket another process listens on is refused (exit 1)" test $? -eq 1
check "... saying a connection succeeded" grep -q "another process is serving on this socket (a connection succeeded)" "$T/p.err"
check "... and the socket is left alone" test -S "$T/psock"
kill "$pp" 2>/dev/null
# a stale socket (bound, nobody listens: connect is refused) is replaced
python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$T/stale"
check "a stale socket file exists" test -S "$T/stale"
if start stale "$T/stale" "$T/ss"; then ok "dwd replaces a stale socket"; else bad "dwd replaces a stale socket"; cat "$T/stale.err"; fi
check "... and serves on it" grep -q '"ok":true' <(echo '{"op":"stats"}' | "$C" "$T/stale")
stop "$pid"
timeout 20 "$DWD" --policy "$ex/policy.dw" --state "$T/sx" --socket "$T/sa/LOCK" 2>"$T/x.err"
check "a path that is not a socket is refused (exit 1)" test $? -eq 1

# ---- row 9: idle, half-line and non-reading clients lock nobody out ----
# Defaults: 300 idle and 40 half-line connections (more than --max-connections 256);
# the longest-idle ones make room, a new client is served at once.
start flood "$T/fsock" "$T/sf" || bad "dwd starts (flood)"
out=$("$T/flood" "$T/fsock" hold 300 40 300); rc=$?
ms=$(sed -n 's/.*fresh_ms=\(-*[0-9]*\).*/\1/p' <<<"$out")
check "300 idle + 40 half-line connections: a new client is served ($out)" test "$rc" -eq 0 -a "${ms:--1}" -ge 0
check "... promptly (${ms:-?} ms < 3000)" test "${ms:--1}" -ge 0 -a "${ms:-9999}" -lt 3000
check "... the longest-idle connections made room" test "$(stat_of "$T/fsock" evicted)" -ge 80
stop "$pid"
# Short timeouts: half-line connections get an error line, idle ones are closed.
start timeouts "$T/tsock" "$T/st" --request-timeout 1 --idle-timeout 2 || bad "dwd starts (--request-timeout 1 --idle-timeout 2)"
out=$("$T/flood" "$T/tsock" hold 100 40 6000); rc=$?
check "--request-timeout 1: all 40 half-line connections got an error line ($out)" grep -q 'half_errors=40 half_closed=40 ' <<<"$out"
check "--idle-timeout 2: all 100 idle connections were closed" grep -q 'idle_closed=100$' <<<"$out"
check "stats counts them (timed_out, idle_closed)" \
    test "$(stat_of "$T/tsock" timed_out)" -ge 40 -a "$(stat_of "$T/tsock" idle_closed)" -ge 100
printf '{"op":"sta' | timeout 10 "$C" "$T/tsock" --raw 1 > "$T/half-reply"
check "the half line's error names the timeout" grep -q '^{"ok":false,"error":"request incomplete after 1 s (--request-timeout); closing the connection"}$' "$T/half-reply"
# a client that pipelines requests and never reads: dwd stops reading it, then drops it
out=$("$T/flood" "$T/tsock" pipeline 50000000 5000); rc=$?
check "a non-reading client does not stall others ($out)" test "$rc" -eq 0
check "... and is dropped after --request-timeout" grep -q 'dropped=1$' <<<"$out"
stop "$pid"
# a line over --max-request gets an error line, not a reset
start cap "$T/csock" "$T/sc" --max-request 4096 || bad "dwd starts (--max-request 4096)"
{ printf '{"op":"stats"'; head -c 10000 /dev/zero | tr '\0' ' '; printf '}\n'; } > "$T/long"
"$C" "$T/csock" --raw 1 < "$T/long" > "$T/long-reply"; rc=$?
check "a 10,000-byte line over --max-request 4096 gets an error line (client rc $rc)" \
    grep -q '^{"ok":false,"error":"request line longer than 4096 bytes (--max-request); closing the connection"}$' "$T/long-reply"
{ printf '{"op":"stats"'; head -c 4000 /dev/zero | tr '\0' ' '; printf '}\n'; } > "$T/near"
check "a 4,014-byte request is served" grep -q '^{"ok":true,"decisions"' <("$C" "$T/csock" < "$T/near")
check "stats counts the over-long line" test "$(stat_of "$T/csock" overlong)" -eq 1
python3 - "$T/csock" > "$T/eof-reply" <<'EOP'
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
s.sendall(b'{"op":"stats"}\n{"op":"stats"}'); s.shutdown(socket.SHUT_WR)
data = b''
while True:
    chunk = s.recv(65536)
    if not chunk: break
    data += chunk
sys.stdout.write(data.decode())
EOP
check "input that ends inside a line: the complete one answered, then an error line" \
    test "$(grep -c '^{"ok":true,"decisions"' "$T/eof-reply")" -eq 1 -a \
         "$(tail -n 1 "$T/eof-reply")" = '{"ok":false,"error":"the connection ended inside a request line (no newline); closing the connection"}'
stop "$pid"
# each connection is a descriptor: a soft limit below --max-connections + 64 is raised, a hard one refused
( ulimit -S -n 200; exec "$DWD" --policy "$ex/policy.dw" --state "$T/sl" --socket "$T/lsock" 2>"$T/soft.err" ) & pid=$!; pids+=("$pid")
for _ in $(seq 1 600); do [ -S "$T/lsock" ] && break; sleep 0.05; done
out=$("$T/flood" "$T/lsock" hold 250 0 100)
check "a soft descriptor limit of 200 is raised for 256 connections ($out)" grep -q '^opened=250 fresh_ms=[0-9]' <<<"$out"
stop "$pid"
( ulimit -n 200; exec timeout 20 "$DWD" --policy "$ex/policy.dw" --state "$T/sh" --socket "$T/hsock" --max-connections 256 2>"$T/hard.err" )
check "a hard limit of 200 is refused for --max-connections 256 (exit 1)" test $? -eq 1 -a ! -S "$T/hsock"
check "... saying what it needs" grep -q "^dwd: --max-connections 256 needs 320 file descriptors; the limit is 200 (ulimit -n)$" "$T/hard.err"
( ulimit -n 200; exec "$DWD" --policy "$ex/policy.dw" --state "$T/sh2" --socket "$T/hsock2" 2>"$T/hard2.err" ) & pid=$!; pids+=("$pid")
for _ in $(seq 1 600); do [ -S "$T/hsock2" ] && break; sleep 0.05; done
out=$("$T/flood" "$T/hsock2" hold 150 0 100)
check "under a hard limit of 200 the default serves 136 connections, the longest-idle making room ($out)" \
    test "$(stat_of "$T/hsock2" evicted)" -ge 15 -a "$(stat_of "$T/hsock2" connections)" -le 136
check "... and says so" grep -q "^dwd: serving at most 136 connections (ulimit -n 200)$" "$T/hard2.err"
stop "$pid"
for o in "--max-connections 0" "--max-request 10" "--max-request 2000000" "--idle-timeout x" "--request-timeout 0"; do
    # shellcheck disable=SC2086
    timeout 20 "$DWD" --policy "$ex/policy.dw" --state "$T/sbad" --socket "$T/sock-bad" $o 2>/dev/null
    check "$o is refused (exit 2)" test $? -eq 2 -a ! -S "$T/sock-bad"
done

# ---- row 16: trace and span ids from getrandom, also while confined ----
timeout 20 "$DWD" --selftest-seccomp > "$T/seccomp" 2>&1
check "getrandom works under the serving filter" grep -qx "getrandom: allowed" "$T/seccomp"
ids=()
for r in 1 2; do
    start ids$r "$T/isock$r" "$T/si$r" --decision-log "$T/ids$r.jsonl" --log-include deny,permit,trace || bad "dwd starts (ids $r)"
    for _ in 1 2 3; do echo "$req"; done | "$C" "$T/isock$r" > /dev/null
    stop "$pid"
    ids+=("$(grep -o '"traceId":"[0-9a-f]*","spanId":"[0-9a-f]*"' "$T/ids$r.jsonl" | sort -u | paste -sd ' ')")
done
check "3 decisions: 3 distinct trace/span id pairs (record and span share one)" test "$(wc -w <<<"${ids[0]}")" -eq 3
check "two runs draw different ids" test "${ids[0]}" != "${ids[1]}"

# ---- row 17: the decision log names the request's principal ----
start principal "$T/psock2" "$T/spr" --decision-log "$T/pr.jsonl" || bad "dwd starts (principal)"
{ echo "$req"; sed 's/^{/{"principal":{"type":"Box::Agent","id":"other \\"x\\""},/' <<<"$req"; } | "$C" "$T/psock2" > "$T/pr-replies"
stop "$pid"
check "without a principal: Box::Agent::\"self\"" grep -q '"strands.box.policy.principal","value":{"stringValue":"Box::Agent::\\"self\\""}' <(sed -n 3p "$T/pr.jsonl")
check "with one: the request's (Box::Agent::\"other \\\"x\\\"\")" \
    grep -qF '"strands.box.policy.principal","value":{"stringValue":"Box::Agent::\"other \\\"x\\\"\""}' <(sed -n 4p "$T/pr.jsonl")

# ---- row 18 ----
# reload: only an artifact compiled for the serving schema
{ cat "$shared/spec/box/actions.cedarschema"; printf 'namespace other {\n    entity Thing;\n}\n'; } > "$T/other.cedarschema"
if "$DWC" compile "$ex/policy.dw" -s box -o "$T/box.dwb" >/dev/null 2>&1 && "$DWC" compile "$ex/policy.dw" -o "$T/none.dwb" >/dev/null 2>&1 &&
   "$DWC" compile "$ex/policy.dw" -s "$T/other.cedarschema" -o "$T/other.dwb" >/dev/null 2>&1; then
    start reload "$T/rsock" "$T/sr" --decision-log "$T/reload.jsonl" || bad "dwd starts (reload)"
    printf '%s\n' "{\"op\":\"reload\",\"artifact\":\"$T/none.dwb\"}" "{\"op\":\"reload\",\"artifact\":\"$T/other.dwb\"}" \
        '{"op":"stats"}' "{\"op\":\"reload\",\"artifact\":\"$T/box.dwb\"}" | "$C" "$T/rsock" > "$T/reload-replies"
    stop "$pid"
    check "reload of an artifact compiled without a schema is refused" \
        grep -q '^{"ok":false,"error":"artifact refused: compiled without a schema; recompile it with dwc compile -s' <(sed -n 1p "$T/reload-replies")
    check "reload of an artifact compiled for another schema is refused" \
        grep -q '^{"ok":false,"error":"artifact refused: compiled for another schema; recompile' <(sed -n 2p "$T/reload-replies")
    check "... the policy stays (generation 0)" grep -q '"policy_generation":0' <(sed -n 3p "$T/reload-replies")
    check "reload of one compiled with -s box is installed" grep -q '^{"ok":true,"policy_generation":1,' <(sed -n 4p "$T/reload-replies")
    check "refusals are policy_refused control records" test "$(grep -c '"eventName":"strands.box.control.policy_refused"' "$T/reload.jsonl")" -eq 2
    timeout 20 "$DWD" --artifact "$T/other.dwb" --state "$T/so" --socket "$T/osock" 2>"$T/other.err"
    check "starting on an artifact compiled for another schema is refused (exit 1, no socket)" test $? -eq 1 -a ! -S "$T/osock"
    check "... saying so" grep -q "other.dwb: error: artifact refused: compiled for another schema" "$T/other.err"
    if start other-ok "$T/osock2" "$T/so2" --artifact "$T/other.dwb" --schema "$T/other.cedarschema"; then
        ok "... and served with the schema it was compiled for"; stop "$pid"
    else bad "... and served with the schema it was compiled for"; cat "$T/other-ok.err"; fi
else
    bad "compile the reload artifacts with $DWC"
fi
# a 0-byte policy file would deny everything: refused
: > "$T/empty.dwb"
timeout 20 "$DWD" --artifact "$T/empty.dwb" --state "$T/se" --socket "$T/esock" 2>"$T/empty.err"
check "a 0-byte --artifact is refused (exit 1, no socket)" test $? -eq 1 -a ! -S "$T/esock"
check "... saying the file is empty" grep -q "the policy file is empty (0 bytes): it would deny every request; refusing to start" "$T/empty.err"
# a background checkpoint that fails (a directory where its temp file goes) is reported
start ck "$T/ksock" "$T/sk" --checkpoint-every 3 --decision-log "$T/ck.jsonl" || bad "dwd starts (checkpoint)"
mkdir "$T/sk/ckpt.tmp"
for _ in $(seq 1 10); do echo "$req"; done | "$C" "$T/ksock" > /dev/null
for _ in $(seq 1 300); do [ "$(stat_of "$T/ksock" checkpoint_failures)" -ge 1 ] && break; sleep 0.1; done
echo '{"op":"stats"}' | "$C" "$T/ksock" > "$T/ck-stats"
for _ in $(seq 1 300); do grep -q "background checkpoint failed" "$T/ck.err" && break; sleep 0.1; done
stop "$pid"
check "stats: checkpoint_failures and the last error" grep -q '"checkpoint_failures":[1-9].*"checkpoint_error":"dogwood history: checkpoint failed: Is a directory"' "$T/ck-stats"
check "stderr: background checkpoint failed" grep -q "^dwd: background checkpoint failed ([0-9]* so far): dogwood history: checkpoint failed: Is a directory" "$T/ck.err"
check "decision log: a checkpoint_failed control record" grep -q '"eventName":"strands.box.control.checkpoint_failed".*"error.message","value":{"stringValue":"dogwood history: checkpoint failed: Is a directory"}' "$T/ck.jsonl"
# the final flush fails (file size limit; SIGXFSZ ignored so the write itself fails): exit status 1
( trap '' XFSZ; ulimit -f 16; exec "$DWD" --policy "$ex/policy.dw" --state "$T/sz" --socket "$T/zsock" --durability none 2>"$T/z.err" ) &
pid=$!; pids+=("$pid")
for _ in $(seq 1 600); do [ -S "$T/zsock" ] && break; sleep 0.05; done
rec='{"op":"record","action":"http:request","kind":"response","input":{"host":"api.github.com","port":443,"method":"GET","path":"/x","body_bytes":0,"intercepted":true},"output":{"status":200,"body_bytes":10}}'
for _ in $(seq 1 300); do echo "$rec"; done | "$C" "$T/zsock" > "$T/z-replies"
check "writes past the file size limit are errors, not acknowledgements" grep -q '"ok":false,"error":"policy history failure' "$T/z-replies"
stop "$pid"; rc=$?
check "dwd exits non-zero after the final flush failed (rc $rc)" test "$rc" -ne 0
check "... and says so" grep -q "^dwd: the history log's final flush failed: exiting with status 1" "$T/z.err"

# ---- issue 14: option spellings, --help ----
"$DWD" --policy="$ex/policy.dw" --state="$T/seq" --socket="$T/eqsock" 2>"$T/eq.err" &
pid=$!; pids+=("$pid")
for _ in $(seq 1 600); do [ -S "$T/eqsock" ] && break; sleep 0.05; done
check "--policy=P --state=D --socket=S serve" grep -q '"ok":true' <(echo '{"op":"stats"}' | "$C" "$T/eqsock")
stop "$pid"
"$DWC" compile "$ex/policy.dw" -s box -o "$T/eq.dwb" >/dev/null 2>&1
start eq2 "$T/eqsock2" "$T/seq2" --artifact="$T/eq.dwb" --checkpoint-every=5 --durability=batch || bad "dwd starts with --artifact=P.dwb"
check "--artifact=P.dwb serves the artifact" grep -q "^dwd: serving $T/eq.dwb on" "$T/eq2.err"
stop "$pid"
timeout 20 "$DWD" --help > "$T/help" 2>&1
check "dwd --help exits 0" test $? -eq 0
check "--help lists the connection limits" grep -q -- '--max-connections N' "$T/help"
timeout 20 "$DWD" --bogus 2> "$T/bogus"
check "an unknown option exits 2 and names it" test $? -eq 2
check "... naming it" grep -q "unrecognized option '--bogus'" "$T/bogus"
timeout 20 "$DWD" --policy "$ex/policy.dw" --state "$T/sy" --socket "$T/ysock" stray 2> "$T/stray"
check "a stray argument is refused (exit 2)" test $? -eq 2 -a ! -S "$T/ysock"
check "no sanitizer reports" sh -c "! grep -lE 'Sanitizer|runtime error' '$T'/*.err"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
