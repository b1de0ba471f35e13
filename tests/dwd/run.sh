#!/usr/bin/env bash
# tests/dwd/run.sh DWD DWC - end-to-end tests of dwd, the decision service.
# Starts dwd on a socket in a temp dir with Box's example 06 (HTTP request
# budget), replays its trace as decide/record ops and compares the verdicts
# with the trace's "expect"/"rules"/"cause"; sends malformed requests; restarts
# dwd on the same state directory and checks verdicts that depend on the
# pre-restart history; refuses a corrupted history (exit 1, segment/offset/count) and
# serves it with --salvage; checks the event-schema refusal, the peer-uid check,
# the decision log, reloads (an unchanged temporal leaf keeps its state, a
# changed one starts empty, a restart after a reload agrees), checkpoints
# (a restart replays only the records after one), the seccomp selftest and
# the state keeper's confinement, the OTLP shape of every decision-log line, spans and
# --log-include, resource attributes, the per-tool MCP gate, and Box mode's refusals (another
# principal or resource, a NUL byte in a string), and the Box profile's load refusals (each of
# box.md §11's in dwc check's words; artifacts not compiled for Box), and serving artifacts only
# (policy text compiled by dwc in a child: --dwc, $DWC; `=` option forms; a reload of text refused;
# a damaged serving context refused), and a client with the smallest send buffer (answered requests
# consumed in batches: it gets every reply, then EOF).  Ends with "N passed, N failed".
set -uo pipefail
DWD=${1:?usage: run.sh DWD DWC}
DWC=${2:?usage: run.sh DWD DWC}
. "$(dirname "$0")/common.sh"

T=$(mktemp -d "${TMPDIR:-/tmp}/dwd-test.XXXXXX")
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; [ -n "${DWD_KEEP:-}" ] && cp "$T/dwd.err" "$DWD_KEEP"; rm -rf "$T"; }
trap cleanup EXIT

if ! $CC -std=c11 -D_GNU_SOURCE -O1 -o "$T/client" "$here/client.c"; then
    bad "build the test client"; echo "$pass passed, $fail failed"; exit 1
fi
C="$T/client"
[ -x "$DWC" ] || echo "note: $DWC not found (only dwd is exercised)"

# start_dwd STATE [extra flags...]: start dwd, wait for its socket
# wait_socket SOCK PID: 0 once SOCK exists; 1 when PID exits first, or after 30 s (an ASan dwd
# compiling its policy on a loaded 2-core machine can take several)
wait_socket() {
    for _ in $(seq 1 600); do [ -S "$1" ] && return 0; kill -0 "$2" 2>/dev/null || return 1; sleep 0.05; done
    return 1
}
start_dwd() {
    local state=$1; shift
    rm -f "$T/sock"
    "$DWD" --policy "${POLICY:-$ex/policy.dw}" --schema box --state "$state" --socket "$T/sock" "$@" ${DWD_EXTRA_FLAGS:-} 2>>"$T/dwd.err" &
    pid=$!
    wait_socket "$T/sock" "$pid"
}
stop_dwd() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid"; local rc=$?; pid=""; return $rc; }

# The trace as ops: request lines -> decide, response/error lines -> record;
# expectations (expect, rules, cause) kept aside, one line per decide.
sed -e '/"kind":"request"/{s/"kind":"request",//;s/,"expect":.*$/}/;s/^{/{"op":"decide",/}' \
    -e '/"kind":"\(response\|error\)"/{s/,"note":.*$/}/;s/^{/{"op":"record",/}' "$ex/trace.jsonl" > "$T/ops"
expect_of() {   # the trace's expectations for request lines, as "verdict|rules|cause"
    grep '"kind":"request"' "$1" | sed -e 's/.*"expect":"\([a-z]*\)".*"rules":\[\([^]]*\)\].*"cause":"\([a-z_]*\)".*/\1|\2|\3/' \
        -e 's/^allow|/permit|/' -e 's/"//g'
}
got_of() {      # dwd's decide replies, in the same form (determining sorted)
    grep '"verdict"' "$1" | sed -e 's/.*"verdict":"\([a-z]*\)".*"cause":"\([a-z_]*\)".*"determining":\[\([^]]*\)\].*/\1|\3|\2/' -e 's/"//g' |
        while IFS='|' read -r v r c; do echo "$v|$(echo "$r" | tr ',' '\n' | sort | paste -sd, -)|$c"; done
}
norm_expect() { while IFS='|' read -r v r c; do echo "$v|$(echo "$r" | tr ',' '\n' | sort | paste -sd, -)|$c"; done; }

# ---- 1. the whole trace in one run ----
if start_dwd "$T/state1" --trust-client-time --decision-log "$T/decisions.jsonl"; then ok "dwd starts"; else bad "dwd starts"; cat "$T/dwd.err"; fi
"$C" "$T/sock" < "$T/ops" > "$T/replies1"
check "one reply per op" test "$(wc -l < "$T/replies1")" -eq "$(wc -l < "$T/ops")"
expect_of "$ex/trace.jsonl" | norm_expect > "$T/want1"
got_of "$T/replies1" > "$T/got1"
n=0
while IFS= read -r w && IFS= read -r g <&3; do
    n=$((n + 1))
    if [ "$w" = "$g" ]; then ok "trace decision $n: $g"; else bad "trace decision $n: want $w, got $g"; fi
done < "$T/want1" 3< "$T/got1"
check "all $(wc -l < "$T/want1") trace decisions answered" test "$n" -eq "$(wc -l < "$T/want1")" -a "$n" -gt 0
check "records answered ok:true" test "$(grep -c '^{"ok":true}$' "$T/replies1")" -eq "$(grep -c '"op":"record"' "$T/ops")"
check "denial text (box.md §9)" grep -q "\"message\":\"policy denied this operation on 'api.github.com:443/repos/o/r/issues' \[policy: github_budget\]: At most 3 completed requests to api.github.com in ten minutes; \[policy: github_burst\]: At most 3 attempts to api.github.com in one minute.\"" "$T/replies1"

# ---- 2. malformed and invalid requests: error replies, connection and server survive ----
good='{"op":"decide","time":"2025-06-02T13:00:00Z","action":"http:request","input":{"host":"uploads.github.com","port":443,"method":"GET","path":"/x","body_bytes":0,"intercepted":true}}'
cat > "$T/bad" <<EOB
this is not json

{"op":"decide"
[1,2,3]
{"op":"bogus"}
{"op":"decide","input":{}}
{"op":"decide","action":"http:request"}
{"op":"decide","action":"http:request","input":[]}
{"op":"decide","action":"http:request","input":{},"extra":1}
{"op":"decide","op":"decide","action":"http:request","input":{}}
{"op":"record","action":"http:request","kind":"request","input":{}}
{"op":"record","action":"http:request","kind":"error","input":{},"output":{}}
{"op":"stats","x":1}
{"op":"reload"}
$good
EOB
"$C" "$T/sock" < "$T/bad" > "$T/badreplies"
nb=$(($(wc -l < "$T/bad") - 1))
check "malformed lines get ok:false ($nb)" test "$(head -n "$nb" "$T/badreplies" | grep -c '^{"ok":false,"error":')" -eq "$nb"
check "reload without an artifact is an error" grep -q '"error":"op \\"reload\\" takes one member' "$T/badreplies"
check "the connection survives malformed lines" grep -q '"verdict":"permit"' <(tail -n 1 "$T/badreplies")
# a request that fails Box's schema gate is a deny with cause internal_fault, not an error
echo '{"op":"decide","time":"2025-06-02T13:00:01Z","action":"http:request","input":{"host":"api.github.com","port":"443"}}' | "$C" "$T/sock" > "$T/gate"
check "schema-gate failure denies with internal_fault" grep -q '"verdict":"deny","cause":"internal_fault","rule":"<default-deny>"' "$T/gate"
echo '{"op":"decide","time":"2025-06-02T13:00:02Z","action":"fs:nothing","input":{}}' | "$C" "$T/sock" > "$T/gate2"
echo '{"op":"decide","action":"http:request","input":{"host":"api.github.com"},"time":"not a time"}' | "$C" "$T/sock" > "$T/gate3"
check "a bad time denies with internal_fault" grep -q '"cause":"internal_fault"' "$T/gate3"
check "unknown action denies with internal_fault" grep -q '"cause":"internal_fault"' "$T/gate2"
head -c 1100000 /dev/zero | tr '\0' 'x' > "$T/long"; echo >> "$T/long"
"$C" "$T/sock" --raw 1 < "$T/long" > "$T/longreply"
check "an over-long line gets an error" grep -q '"ok":false' "$T/longreply"
printf '%s\n' "$good" | sed 's/13:00:00/13:00:03/' | "$C" "$T/sock" > "$T/after"
check "the server survives malformed input" grep -q '"verdict":"permit"' "$T/after"
echo '{"op":"stats"}' | "$C" "$T/sock" > "$T/stats1"
check "stats counts decisions and records" grep -q '"ok":true,"decisions":1[0-9],.*"records":5,' "$T/stats1"
# Box mode's refusals (box.md §1; issue 13): another principal or resource, a NUL in a string
echo '{"op":"decide","time":"2025-06-02T13:00:04Z","action":"http:request","principal":{"type":"Box::Agent","id":"mallory"},"input":{"host":"uploads.github.com","port":443,"method":"GET","path":"/x","body_bytes":0,"intercepted":true}}' | "$C" "$T/sock" > "$T/box1"
check "another principal denies with internal_fault" grep -q '"verdict":"deny","cause":"internal_fault"' "$T/box1"
check "... and says why (stderr)" grep -q 'internal fault: Box takes requests only from the principal Box::Agent::"self" (box.md §1), not Box::Agent::"mallory"' "$T/dwd.err"
echo '{"op":"decide","time":"2025-06-02T13:00:05Z","action":"http:request","resource":{"type":"Box::Resource","id":"x"},"input":{"host":"uploads.github.com","port":443,"method":"GET","path":"/x","body_bytes":0,"intercepted":true}}' | "$C" "$T/sock" > "$T/box2"
check "another resource denies with internal_fault" grep -q '"verdict":"deny","cause":"internal_fault"' "$T/box2"
check "... and says why (stderr)" grep -q 'internal fault: Box.s requests have the resource Box::Resource::"unused"' "$T/dwd.err"
echo '{"op":"decide","time":"2025-06-02T13:00:06Z","action":"http:request","input":{"host":"uploads.github.com\u0000.evil","port":443,"method":"GET","path":"/x","body_bytes":0,"intercepted":true}}' | "$C" "$T/sock" > "$T/box3"
check "a NUL byte in a string denies with internal_fault" grep -q '"verdict":"deny","cause":"internal_fault"' "$T/box3"
check "... and says why (stderr)" grep -q 'internal fault: Box refuses a string with a NUL byte (input.host)' "$T/dwd.err"
echo '{"op":"record","time":"2025-06-02T13:00:07Z","action":"http:request","kind":"response","input":{"host":"uploads.github.com","port":443,"method":"GET","path":"/x\u0000","body_bytes":0,"intercepted":true},"output":{"status":200}}' | "$C" "$T/sock" > "$T/box4"
check "a record with a NUL byte is an error" grep -q '^{"ok":false,"error":"Box refuses a string with a NUL byte (input.path)' "$T/box4"
# a flood of requests that fault: each one denies and is counted, but stderr takes
# about 20 lines a second and a summary of the rest (a write(2) per fault on the
# serving thread, and a log flood, would be any client's to cause)
echo '{"op":"stats"}' | "$C" "$T/sock" > "$T/fl0"
f0=$(sed -n 's/.*"internal_faults":\([0-9]*\).*/\1/p' "$T/fl0"); l0=$(grep -c 'internal fault:' "$T/dwd.err")
for i in $(seq 1 300); do echo '{"op":"decide","action":"http:request","input":{"host":"api.github.com","port":"443"}}'; done |
    "$C" "$T/sock" > "$T/flood"
check "300 faulting requests: 300 internal_fault denials" test "$(grep -c '"verdict":"deny","cause":"internal_fault"' "$T/flood")" -eq 300
# the summary comes with the first round a second after the count began (rounds run at least once a second)
for _ in $(seq 1 100); do grep -q 'more internal fault(s) not shown' "$T/dwd.err" && break; sleep 0.1; done
echo '{"op":"stats"}' | "$C" "$T/sock" > "$T/fl1"
f1=$(sed -n 's/.*"internal_faults":\([0-9]*\).*/\1/p' "$T/fl1"); l1=$(grep -c 'internal fault:' "$T/dwd.err")
check "... stats counts all 300" test "$((f1 - f0))" -eq 300
check "... stderr shows a few of them ($((l1 - l0)))" test "$((l1 - l0))" -ge 1 -a "$((l1 - l0))" -le 80
check "... and says how many it did not show" grep -q 'more internal fault(s) not shown (stderr takes at most 20 a second; stats counts every one)' "$T/dwd.err"

# ---- 3. only the socket owner's uid may connect (SO_PEERCRED) ----
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    chmod 0777 "$T" && chmod 0666 "$T/sock" && chmod 0755 "$C"
    echo '{"op":"stats"}' | setpriv --reuid=65534 --regid=65534 --clear-groups "$C" "$T/sock" > "$T/other" 2>/dev/null
    rc=$?
    check "another uid is closed without a reply" test "$rc" -eq 3 -a ! -s "$T/other"
    echo '{"op":"stats"}' | "$C" "$T/sock" > "$T/stats2"
    check "refused peers are counted" grep -q '"refused_peers":1' "$T/stats2"
    chmod 0700 "$T"
else
    echo "skip peer-uid test (needs root and setpriv)"
fi
check "dwd stops cleanly on SIGTERM" stop_dwd

# ---- 4. the decision log ----
nd=$(grep -c '"verdict"' "$T/replies1")
check "decision log: one line per decision" test "$(grep -c '^{"resourceLogs":\[' "$T/decisions.jsonl")" -ge "$nd"
check "decision log: Box's scope, event and severities" grep -q '"scope":{"name":"strands-box.policy","version":"'"$("$DWD" --version | cut -d' ' -f2)"'"},"logRecords":\[{"timeUnixNano":"1748865600000000000","severityNumber":9,"severityText":"permit","eventName":"strands.box.policy.decision"' "$T/decisions.jsonl"
check "decision log: deny reason and determining ids" grep -q '"strands.box.policy.determining.ids","value":{"arrayValue":{"values":\[{"stringValue":"github_budget"},{"stringValue":"github_burst"}\]}}},{"key":"strands.box.policy.reason"' "$T/decisions.jsonl"

# ---- 5. durability across a restart ----
# Run the trace up to the 12:02:01 response, stop, restart on the same state
# directory, run the rest: the 12:03:00 deny (github_budget) needs the two
# pre-restart responses, the 12:03:30 deny (both rules) pre-restart requests.
split=$(grep -n '12:02:01Z' "$T/ops" | cut -d: -f1)
head -n "$split" "$T/ops" > "$T/ops_a"; tail -n +"$((split + 1))" "$T/ops" > "$T/ops_b"
start_dwd "$T/state2" --trust-client-time || bad "dwd starts (restart test, first run)"
"$C" "$T/sock" < "$T/ops_a" > "$T/replies2"
stop_dwd
if start_dwd "$T/state2" --trust-client-time; then ok "dwd restarts on the same state"; else bad "dwd restarts on the same state"; fi
echo '{"op":"stats"}' | "$C" "$T/sock" > "$T/stats3"
check "the restart restored the history ($split events)" grep -q "\"restored\":$split," "$T/stats3"
"$C" "$T/sock" < "$T/ops_b" >> "$T/replies2"
got_of "$T/replies2" > "$T/got2"
check "verdicts across the restart equal the trace's" cmp -s "$T/want1" "$T/got2"
check "12:03:00 denied by github_budget using pre-restart responses" grep -q '^deny|github_budget|forbidden$' <(sed -n "$(($(grep -c '"op":"decide"' "$T/ops_a") + 1))p" "$T/got2")
stop_dwd
# a fresh state directory does not see that history: the same request is permitted
start_dwd "$T/state3" --trust-client-time
head -n 1 "$T/ops_b" | "$C" "$T/sock" > "$T/fresh"
check "without the history the same request is permitted" grep -q '"verdict":"permit"' "$T/fresh"
stop_dwd
# ---- 5b. a corrupted history is refused; --salvage serves what is intact (issue 13 row 1) ----
# One flipped byte in the record of the 12:00:11 response (seq 3) with 7 acknowledged records
# after it: dwd exits 1 naming the segment, the byte offset and those 7; with --salvage it serves,
# says what was lost, and the 12:03:00 request the intact history denies (3 responses) is decided
# on the 2 responses that survive.
. "$here/histlog_faults.sh"
start_dwd "$T/state-bad" --trust-client-time || bad "dwd starts (corruption test)"
"$C" "$T/sock" < "$T/ops_a" > /dev/null
stop_dwd
seg_records "$T/state-bad/seg-0000000000000000.log"
flip_byte "$T/state-bad/seg-0000000000000000.log" $(( rec_off[3] + 40 ))
rm -f "$T/sock"
# bounded: a dwd that wrongly serves is killed after 30 s instead of hanging the suite
timeout 30 "$DWD" --policy "$ex/policy.dw" --schema box --state "$T/state-bad" --socket "$T/sock" --trust-client-time 2> "$T/bad.err"
rc=$?
check "dwd refuses a corrupted history (exit $rc, want 1)" test "$rc" -eq 1
check "the refusal names the segment, the offset and the acknowledged records after it" \
    grep -q "dogwood history is corrupt in .*seg-0000000000000000.log: the record at byte ${rec_off[3]} (seq 3) is damaged, 1 record(s) lost there, 7 acknowledged record(s) follow.*--salvage" "$T/bad.err"
check "the refusal left no socket behind" test ! -e "$T/sock"
if start_dwd "$T/state-bad" --trust-client-time --salvage; then ok "dwd --salvage serves the corrupted history"; else bad "dwd --salvage serves the corrupted history"; fi
check "--salvage reports the loss loudly" grep -q "SALVAGED A CORRUPT HISTORY (verdicts no longer count what was lost): 1 record(s) lost, 1 of them acknowledged" "$T/dwd.err"
check "--salvage names what was lost" grep -q "acknowledged; SALVAGE: seg-0000000000000000.log: the record at byte ${rec_off[3]} (seq 3) is damaged" "$T/dwd.err"
head -n 1 "$T/ops_b" | "$C" "$T/sock" > "$T/salvaged"
check "the salvaged history decides on what survived (12:03:00 with 2 responses: permit)" grep -q '"verdict":"permit"' "$T/salvaged"
stop_dwd
if start_dwd "$T/state-bad" --trust-client-time; then ok "after a salvage dwd starts without --salvage"; else bad "after a salvage dwd starts without --salvage"; fi
check "and notes the earlier loss" grep -q "lost by an earlier salvage" "$T/dwd.err"
stop_dwd
# a log written under a different event schema is refused
sed 's/^/ /' "$shared/spec/box/events.dwschema" > "$T/events-other.dwschema"
# (exit status, not a 1 s sleep: under load a refusing dwd may take longer than that to exit)
timeout 30 "$DWD" --policy "$ex/policy.dw" --schema box --events "$T/events-other.dwschema" --state "$T/state2" --socket "$T/sock2" 2> "$T/schema.err"
check "a different event schema is refused" grep -q "different event schema" "$T/schema.err"
# client time is refused unless --trust-client-time (a test-only flag)
start_dwd "$T/state4"
head -n 1 "$T/ops" | "$C" "$T/sock" > "$T/notime"
check "\"time\" is refused without --trust-client-time" grep -q '"ok":false' "$T/notime"
sed 's/"time":"[^"]*",//' "$T/ops" | "$C" "$T/sock" > "$T/clock"
check "clock-stamped decisions work" test "$(grep -c '"ok":true' "$T/clock")" -eq "$(wc -l < "$T/ops")"
stop_dwd
# pipelined: the whole trace in one write; one sync covers a round (group commit)
start_dwd "$T/state-pipe" --trust-client-time
"$C" "$T/sock" --raw "$(wc -l < "$T/ops")" < "$T/ops" > "$T/replies-pipe"
got_of "$T/replies-pipe" > "$T/got-pipe"
check "pipelined requests: trace verdicts, in order" cmp -s "$T/want1" "$T/got-pipe"
echo '{"op":"stats"}' | "$C" "$T/sock" > "$T/stats-pipe"
check "pipelined requests share syncs" grep -qE '"log_max_batch":([2-9]|[1-9][0-9])' "$T/stats-pipe"
stop_dwd
# a burst of ~590 KB in one write: lines straddle dwd's reads (a read that fills its 64 KiB
# buffer is taken off the socket at once, the last one only peeked and taken off after the
# replies went out); every line answered once, in order
awk 'BEGIN { for (i = 0; i < 2000; i++) { p = sprintf("%*s", (i * 37) % 301, ""); gsub(/ /, "x", p)
    printf "{\"op\":\"decide\",\"action\":\"http:request\",\"input\":{\"host\":\"%s\",\"port\":443,\"method\":\"GET\",\"path\":\"/%s\",\"body_bytes\":0,\"intercepted\":true}}\n", i % 2 ? "example.com" : "uploads.github.com", p } }' > "$T/burst"
awk 'BEGIN { for (i = 0; i < 2000; i++) print i % 2 ? "deny" : "permit" }' > "$T/burst-want"
for d in full batch; do
    start_dwd "$T/state-burst-$d" --durability "$d"
    "$C" "$T/sock" --raw 2000 < "$T/burst" | sed -n 's/.*"verdict":"\([a-z]*\)".*/\1/p' > "$T/burst-got"
    check "--durability $d: a $(wc -c < "$T/burst")-byte burst: 2000 replies, in order" cmp -s "$T/burst-want" "$T/burst-got"
    stop_dwd
done
for d in batch none; do
    start_dwd "$T/state-$d" --trust-client-time --durability "$d"
    "$C" "$T/sock" < "$T/ops" > "$T/replies-$d"
    got_of "$T/replies-$d" > "$T/got-$d"
    check "--durability $d: trace verdicts" cmp -s "$T/want1" "$T/got-$d"
    stop_dwd
done

# ---- 6. reloads (box.md §7: prospective edits) ----
# A.dwb is the example; B.dwb widens github_budget's window (a changed leaf:
# it starts empty) and keeps github_burst (an unchanged leaf: it keeps its
# count).  Ops up to the 12:01:00 request run under A, then B is installed.
if [ -x "$DWC" ] && "$DWC" compile "$ex/policy.dw" -s box -o "$T/A.dwb" >/dev/null 2>&1 &&
   sed 's/within 10m/within 11m/' "$ex/policy.dw" > "$T/B.dw" && "$DWC" compile "$T/B.dw" -s box -o "$T/B.dwb" >/dev/null 2>&1; then
    r1=$(grep -n '12:01:00Z' "$T/ops" | cut -d: -f1); r2=$(grep -n '12:02:01Z' "$T/ops" | cut -d: -f1)
    head -n "$r1" "$T/ops" > "$T/rl1"; sed -n "$((r1 + 1)),${r2}p" "$T/ops" > "$T/rl2"; tail -n +"$((r2 + 1))" "$T/ops" > "$T/rl3"
    # reference: no restart
    POLICY="$T/A.dwb" start_dwd "$T/state-rl" --trust-client-time --decision-log "$T/rl-decisions.jsonl" || bad "dwd starts with --policy A.dwb"
    { cat "$T/rl1"; echo "{\"op\":\"reload\",\"artifact\":\"$T/B.dwb\"}"; cat "$T/rl2" "$T/rl3"; } | "$C" "$T/sock" > "$T/rl-ref"
    stop_dwd
    check "reload answers ok with 1 leaf kept and 1 fresh" grep -q '^{"ok":true,"policy_generation":1,"leaves":2,"kept":1,"fresh":1}$' "$T/rl-ref"
    got_of "$T/rl-ref" > "$T/rl-got"
    n1=$(grep -c '"op":"decide"' "$T/rl1")
    check "unchanged leaf keeps its count: 12:01:01 still denied by github_burst" grep -q '^deny|github_burst|forbidden$' <(sed -n "$((n1 + 1))p" "$T/rl-got")
    n2=$(grep -c '"op":"decide"' "$T/rl2")
    check "changed leaf starts empty: 12:03:00 permitted (the original denies it)" grep -q '^permit|github_hosts|permitted$' <(sed -n "$((n1 + n2 + 1))p" "$T/rl-got")
    check "the trace itself denies 12:03:00" grep -q '^deny|github_budget|forbidden$' <(sed -n "$((n1 + n2 + 1))p" "$T/want1")
    check "decision log: policy_installed control record for the reload" grep -q '"scope":{"name":"strands-box.control","version":"[0-9.]*"}.*"eventName":"strands.box.control.policy_installed".*"stringValue":"'"$T"'/B.dwb"' "$T/rl-decisions.jsonl"
    check "decision log: box_started control record" grep -q '"eventName":"strands.box.control.box_started"' "$T/rl-decisions.jsonl"
    # restart after the reload (on B, --artifact as the issue spells it) agrees with the reference
    POLICY="$T/A.dwb" start_dwd "$T/state-rl2" --trust-client-time || bad "dwd starts (reload restart test)"
    { cat "$T/rl1"; echo "{\"op\":\"reload\",\"artifact\":\"$T/B.dwb\"}"; cat "$T/rl2"; } | "$C" "$T/sock" > "$T/rl-a"
    stop_dwd
    rm -f "$T/sock"
    "$DWD" --artifact "$T/B.dwb" --state "$T/state-rl2" --socket "$T/sock" --trust-client-time 2>>"$T/dwd.err" & pid=$!
    wait_socket "$T/sock" "$pid"
    "$C" "$T/sock" < "$T/rl3" >> "$T/rl-a"
    stop_dwd
    check "a restart after the reload gives the same verdicts" cmp -s <(got_of "$T/rl-ref") <(got_of "$T/rl-a")
    # refusals: a missing file, a source file, garbage; the server keeps the installed policy
    POLICY="$T/A.dwb" start_dwd "$T/state-rl3" --trust-client-time
    printf '%s\n' "{\"op\":\"reload\",\"artifact\":\"$T/nonexistent.dwb\"}" "{\"op\":\"reload\",\"artifact\":\"$ex/policy.dw\"}" \
        "{\"op\":\"reload\",\"artifact\":\"/dev/null\"}" '{"op":"stats"}' | "$C" "$T/sock" > "$T/rl-bad"
    check "reload of a missing file is an error" grep -q '"ok":false,"error":"reload: cannot open .*nonexistent.dwb' "$T/rl-bad"
    check "reload of a source file is refused (artifacts only)" grep -q '"ok":false,"error":"not a compiled policy artifact' "$T/rl-bad"
    check "reload of a device is refused by the keeper" grep -q '"ok":false,"error":"reload: cannot open /dev/null: Invalid argument' "$T/rl-bad"
    check "failed reloads keep generation 0" grep -q '"policy_generation":0' "$T/rl-bad"
    stop_dwd
else
    bad "compile the reload artifacts with $DWC"
fi

# ---- 7. checkpoints: a restart loads one and replays only later records ----
start_dwd "$T/state-ck" --trust-client-time --checkpoint-every 5
"$C" "$T/sock" < "$T/ops_a" > "$T/ck-a"
sleep 0.5
echo '{"op":"stats"}' | "$C" "$T/sock" > "$T/ck-stats1"
stop_dwd
check "checkpoints were written while confined" grep -qE '"checkpoints":([2-9]|[1-9][0-9])' "$T/ck-stats1"
check "one checkpoint file in the state directory" test "$(ls "$T/state-ck" | grep -c '^ckpt-.*\.ckpt$')" -eq 1
start_dwd "$T/state-ck" --trust-client-time --checkpoint-every 5
echo '{"op":"stats"}' | "$C" "$T/sock" > "$T/ck-stats2"
check "the restart restored $split events" grep -q "\"restored\":$split," "$T/ck-stats2"
rp=$(sed 's/.*"replayed":\([0-9]*\).*/\1/' "$T/ck-stats2")
check "the restart replayed only records after the checkpoint ($rp < 5)" test "$rp" -lt 5
"$C" "$T/sock" < "$T/ops_b" >> "$T/ck-a"
check "verdicts across a checkpointed restart equal the trace's" cmp -s "$T/want1" <(got_of "$T/ck-a")
stop_dwd

# ---- 7b. the work bound and fairness (issue 13 row 14) ----
# 2,000 writes make every fs:read decision of a join no index answers run into the
# temporal work bound (a deny naming it, tens of ms each); a client pipelining 200 of
# them gets one answered per round, so another client's request is answered after
# about one of them, not after the backlog: when its stats reply comes, most of the
# 200 are still waiting (before: all were decided first, ~10 s here).
cat > "$T/join.dw" <<'JOIN'
@id("reads")
permit (principal, action == Box::Action::"fs:read", resource);
@id("rewritten_after_delete")
forbid (principal, action == Box::Action::"fs:read", resource)
when temporal {
  exists (p: String). formerly within 1h (Box::Action::"fs:write"::response{ input.path: p } &&
    formerly within 1h (Box::Action::"fs:delete"::response{ input.path: p } &&
                        !Box::Action::"fs:move"::response{ input.path: p }))
};
JOIN
POLICY="$T/join.dw" start_dwd "$T/state-join" --durability none
for k in $(seq 2000); do echo "{\"op\":\"record\",\"action\":\"fs:write\",\"kind\":\"response\",\"input\":{\"path\":\"~/f$k\",\"operation\":\"write_content\"},\"output\":{}}"; done > "$T/join-fill"
"$C" "$T/sock" --raw 2000 < "$T/join-fill" > /dev/null
read_op='{"op":"decide","action":"fs:read","input":{"path":"~/a","operation":"read_content"}}'
echo "$read_op" | "$C" "$T/sock" > "$T/join-one"
check "a decision past the work bound denies with internal_fault" grep -q '"verdict":"deny","cause":"internal_fault"' "$T/join-one"
check "... and the reason names the bound (stderr)" grep -q 'exceeded the work bound of 4000000 steps per decision (temporal_work_bound)' "$T/dwd.err"
for k in $(seq 200); do echo "$read_op"; done | "$C" "$T/sock" --raw 200 > "$T/join-many" &
hp=$!
sleep 0.3
echo '{"op":"stats"}' | "$C" "$T/sock" > "$T/join-stats"
nd=$(sed 's/.*"decisions":\([0-9]*\).*/\1/' "$T/join-stats")
check "another client is answered while a pipelined backlog of bound-hitting decisions waits ($nd of 201 decided)" test "$nd" -lt 100
# A client's last bytes and its EOF can come in one epoll event: here they arrive while dwd is in a
# round of those slow decisions, so the event that reports them already says the peer shut down, and no
# other event follows; a read that got the bytes must go on to the EOF (before: the connection hung
# until --idle-timeout and this client's 10 s timeout fired).
python3 - "$T/sock" > "$T/join-eof" 2> "$T/join-eof.err" <<'EOP'
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
s.sendall(b'{"op":"stats"}\n')
data = b''
while data.count(b'\n') < 1: data += s.recv(65536)
time.sleep(0.05)
s.sendall(b'{"op":"stats"}\n{"op":"sta'); s.shutdown(socket.SHUT_WR)
while True:
    chunk = s.recv(65536)
    if not chunk: break
    data += chunk
sys.stdout.write(data.decode())
EOP
check "bytes and EOF in one event, dwd busy: both complete lines answered, then an error line and EOF $(tail -n 1 "$T/join-eof.err")" \
    test "$(grep -c '^{"ok":true,"decisions"' "$T/join-eof")" -eq 2 -a \
         "$(tail -n 1 "$T/join-eof")" = '{"ok":false,"error":"the connection ended inside a request line (no newline); closing the connection"}'
kill $hp 2>/dev/null; wait $hp 2>/dev/null
stop_dwd

# ---- 7c. a client with the smallest send buffer ----
# dwd consumes answered requests in batches (runtime/dwd_conn.h), and each queued send is
# charged to the client's send buffer until then: a client whose buffer holds only a few
# requests blocks in write() until dwd consumes them, which it must do when it goes idle.
# At the end dwd consumes what is left before it closes: the client reads EOF, not a reset.
start_dwd "$T/state-sndbuf" --durability none
for k in $(seq 300); do echo "$read_op"; done > "$T/sndbuf-ops"
t0=$(date +%s%N)
timeout ${SNDBUF_TIMEOUT:-30} "$C" "$T/sock" --sndbuf 1 < "$T/sndbuf-ops" > "$T/sndbuf-replies" 2> "$T/sndbuf-err"; rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check "a client with the smallest SO_SNDBUF gets all 300 closed-loop replies ($(grep -c '"verdict"' "$T/sndbuf-replies"), exit $rc, $ms ms), then EOF $(cat "$T/sndbuf-err")" \
    test "$rc" -eq 0 -a "$(grep -c '"verdict"' "$T/sndbuf-replies")" -eq 300
stop_dwd

# ---- 8. decision-log attributes, enum inputs as plain strings ----
start_dwd "$T/state-attr" --decision-log "$T/attr.jsonl"
printf '%s\n' '{"op":"decide","action":"shell:exec","input":{"command":"git status -s","program":"git","arg1":"status","arg2":"-s","arg_count":2,"cwd":"/work"},"jsonrpc_id":17}' \
    '{"op":"decide","action":"fs:read","input":{"path":"/tmp/x","operation":"read_content"}}' \
    '{"op":"decide","action":"fs:read","input":{"path":"/tmp/x","operation":{"__entity":{"type":"Box::FsReadOperation","id":"read_content"}}}}' \
    '{"op":"decide","action":"fs:read","input":{"path":"/tmp/x","operation":"no_such_operation"}}' | "$C" "$T/sock" > "$T/attr-replies"
stop_dwd
check "decision log: process.command_args as an array" grep -q '"process.command_args","value":{"arrayValue":{"values":\[{"stringValue":"git"},{"stringValue":"status"},{"stringValue":"-s"}\]}}' "$T/attr.jsonl"
check "decision log: process.working_directory" grep -q '"process.working_directory","value":{"stringValue":"/work"}' "$T/attr.jsonl"
check "decision log: jsonrpc.request.id" grep -q '"jsonrpc.request.id","value":{"stringValue":"17"}' "$T/attr.jsonl"
check "an enum input as a plain string decides like its entity form" test "$(sed -n 2p "$T/attr-replies" | sed 's/"message".*//')" = "$(sed -n 3p "$T/attr-replies" | sed 's/"message".*//')"
check "an enum plain string outside the enum fails the gate" grep -q '"cause":"internal_fault"' <(sed -n 4p "$T/attr-replies")
check "decision log: box_stopped control record" grep -q '"eventName":"strands.box.control.box_stopped"' "$T/attr.jsonl"

# ---- 10. OTLP shape, spans, --log-include, resource attributes, the per-tool MCP gate ----
# otlp_check FILE [--paired]: every line parses and has the OTLP fields box.md §10.2-§10.4 need;
# prints one summary line "lines=… records=… permits=… denies=… spans=… controls=… paired=…
# parents=…" (paired: spans whose traceId/spanId equal a decision record's, and whose
# parentSpanId equals that record's strands.box.trace.parent_span_id); exit 1 on any fault.
cat > "$T/otlp_check.py" <<'EOP'
import json, re, sys
HEX16, HEX32, NUM = re.compile(r'^[0-9a-f]{16}$'), re.compile(r'^[0-9a-f]{32}$'), re.compile(r'^[0-9]+$')
errs, n = [], {'lines': 0, 'records': 0, 'permits': 0, 'denies': 0, 'spans': 0, 'controls': 0, 'paired': 0, 'parents': 0}
recs, spans = {}, []
def bad(i, m): errs.append('line %d: %s' % (i, m))
def value_ok(v):
    if not isinstance(v, dict) or len(v) != 1: return False
    (k, x), = v.items()
    if k == 'stringValue': return isinstance(x, str)
    if k == 'intValue': return isinstance(x, str) and re.match(r'^-?[0-9]+$', x) is not None
    if k == 'boolValue': return isinstance(x, bool)
    if k == 'arrayValue': return isinstance(x, dict) and list(x) == ['values'] and all(value_ok(e) for e in x['values'])
    return False
def attrs(i, a, what):
    if not isinstance(a, list): bad(i, what + ': attributes is not a list'); return {}
    d = {}
    for kv in a:
        if not isinstance(kv, dict) or set(kv) != {'key', 'value'} or not isinstance(kv['key'], str) or not value_ok(kv['value']):
            bad(i, what + ': malformed attribute %r' % (kv,)); continue
        if kv['key'] in d: bad(i, what + ': duplicate attribute ' + kv['key'])
        v = kv['value']
        d[kv['key']] = v.get('stringValue', v)
    return d
def resource(i, r):
    if not isinstance(r, dict) or list(r) != ['resource']: pass
    a = attrs(i, r.get('resource', {}).get('attributes'), 'resource')
    if a.get('service.name') != 'strands-box': bad(i, 'service.name is not strands-box')
    for k in ('strands.box.name', 'strands.box.run.id'):
        if not isinstance(a.get(k), str) or not a[k]: bad(i, 'resource lacks ' + k)
    if a.get('strands.box.source') not in ('box', 'agent'): bad(i, 'strands.box.source is not box|agent')
DECISION_KEYS = ('strands.box.policy.principal', 'strands.box.policy.action', 'strands.box.policy.resource',
                 'strands.box.policy.verdict', 'strands.box.policy.cause', 'strands.box.policy.rule')
CAUSES = ('permitted', 'forbidden', 'no_match', 'policy_pending', 'internal_fault', 'enforcement')
for i, line in enumerate(open(sys.argv[1], encoding='utf-8'), 1):
    n['lines'] += 1
    try: j = json.loads(line)
    except Exception as e: bad(i, 'not JSON: %s' % e); continue
    if not isinstance(j, dict) or len(j) != 1 or list(j)[0] not in ('resourceLogs', 'resourceSpans'):
        bad(i, 'not one resourceLogs/resourceSpans export request'); continue
    kind = list(j)[0]
    if not isinstance(j[kind], list) or len(j[kind]) != 1: bad(i, kind + ' is not a one-element list'); continue
    r = j[kind][0]
    resource(i, r)
    if kind == 'resourceLogs':
        for sl in r.get('scopeLogs') or [bad(i, 'no scopeLogs')] or []:
            scope = sl.get('scope', {}).get('name')
            if scope not in ('strands-box.policy', 'strands-box.control'): bad(i, 'scope %r' % scope)
            for lr in sl.get('logRecords') or []:
                if not NUM.match(str(lr.get('timeUnixNano', ''))) or not isinstance(lr.get('timeUnixNano'), str): bad(i, 'timeUnixNano')
                if not isinstance(lr.get('severityNumber'), int) or not isinstance(lr.get('severityText'), str): bad(i, 'severity')
                a = attrs(i, lr.get('attributes'), 'record')
                if scope == 'strands-box.control':
                    n['controls'] += 1
                    if not str(lr.get('eventName', '')).startswith('strands.box.control.'): bad(i, 'control eventName')
                    if 'strands.box.control.operation' not in a: bad(i, 'control record without an operation')
                    continue
                n['records'] += 1
                if lr.get('eventName') != 'strands.box.policy.decision': bad(i, 'decision eventName')
                if not HEX32.match(str(lr.get('traceId', ''))) or not HEX16.match(str(lr.get('spanId', ''))): bad(i, 'record trace/span id')
                for k in DECISION_KEYS:
                    if not isinstance(a.get(k), str): bad(i, 'record lacks ' + k)
                v = a.get('strands.box.policy.verdict')
                if (v, lr.get('severityNumber'), lr.get('severityText')) not in (('permit', 9, 'permit'), ('deny', 13, 'deny')): bad(i, 'verdict/severity mismatch')
                n['permits' if v == 'permit' else 'denies'] += 1
                if a.get('strands.box.policy.cause') not in CAUSES: bad(i, 'cause')
                if v == 'deny' and not str(a.get('strands.box.policy.reason', '')).startswith('policy denied this operation'): bad(i, 'deny without reason')
                if 'strands.box.policy.determining.ids' not in a: bad(i, 'no determining.ids')
                if 'strands.box.trace.parent_span_id' in a:
                    n['parents'] += 1
                    if not HEX16.match(a['strands.box.trace.parent_span_id']): bad(i, 'parent_span_id attribute')
                recs[(lr.get('traceId'), lr.get('spanId'))] = a
    else:
        for ss in r.get('scopeSpans') or [bad(i, 'no scopeSpans')] or []:
            if ss.get('scope', {}).get('name') != 'strands-box.policy': bad(i, 'span scope')
            for sp in ss.get('spans') or []:
                n['spans'] += 1
                if not HEX32.match(str(sp.get('traceId', ''))) or sp['traceId'] == '0' * 32: bad(i, 'span traceId')
                if not HEX16.match(str(sp.get('spanId', ''))) or sp['spanId'] == '0' * 16: bad(i, 'span spanId')
                if 'parentSpanId' in sp and not HEX16.match(str(sp['parentSpanId'])): bad(i, 'parentSpanId')
                if sp.get('name') != 'strands.box.policy.decision' or not isinstance(sp.get('kind'), int): bad(i, 'span name/kind')
                st, en = sp.get('startTimeUnixNano'), sp.get('endTimeUnixNano')
                if not isinstance(st, str) or not NUM.match(st) or st != en: bad(i, 'span is not zero-length')
                a = attrs(i, sp.get('attributes'), 'span')
                for k in DECISION_KEYS:
                    if not isinstance(a.get(k), str): bad(i, 'span lacks ' + k)
                spans.append((i, sp, a))
for i, sp, a in spans:
    rec = recs.get((sp['traceId'], sp['spanId']))
    if rec is None: continue
    if rec.get('strands.box.trace.parent_span_id') != sp.get('parentSpanId'): bad(i, 'parentSpanId differs from the record')
    elif any(rec.get(k) != a.get(k) for k in DECISION_KEYS): bad(i, 'span attributes differ from the record')
    else: n['paired'] += 1
for e in errs[:20]: print(e, file=sys.stderr)
print(' '.join('%s=%d' % kv for kv in n.items()))
sys.exit(1 if errs else 0)
EOP
otlp() { python3 "$T/otlp_check.py" "$1"; }
otlp_ok() { [ -s "$1" ] && python3 "$T/otlp_check.py" "$1" >/dev/null; }
for f in decisions.jsonl rl-decisions.jsonl attr.jsonl; do
    check "OTLP shape of every line of $f" otlp_ok "$T/$f"
done
# the checker itself: a truncated line, a bad span id, a missing resource attribute are caught
one=$(grep -m1 '"strands-box.policy"' "$T/decisions.jsonl")
{ head -n 3 "$T/decisions.jsonl"; printf '%s\n' "${one:0:200}"; sed 's/"spanId":"[0-9a-f]*"/"spanId":"xyz"/' <<<"$one"
  sed 's/,{"key":"strands.box.run.id","value":{"stringValue":"[^"]*"}}//' <<<"$one"; } > "$T/broken.jsonl"
check "the OTLP checker finds 3 faults in a damaged log" test "$(python3 "$T/otlp_check.py" "$T/broken.jsonl" 2>&1 >/dev/null | grep -c '^line [456]:')" -ge 3
check "default --log-include (deny,permit): no spans" test "$(grep -c '"resourceSpans"' "$T/decisions.jsonl")" -eq 0
check "default resource attributes: source box, name dwd, run id run-0001" grep -q '"attributes":\[{"key":"service.name","value":{"stringValue":"strands-box"}},{"key":"strands.box.name","value":{"stringValue":"dwd"}},{"key":"strands.box.source","value":{"stringValue":"box"}},{"key":"strands.box.run.id","value":{"stringValue":"run-0001"}}\]' "$T/decisions.jsonl"

# A schema with Box's actions and one MCP server's generated per-tool actions (box.md §2.3),
# and a policy: mcp:call permitted, github::delete_repo forbidden, secret titles forbidden, a
# forbid that errors (Long overflow) on the title "overflow".
{ cat "$shared/spec/box/actions.cedarschema"; cat <<'EOS'
namespace github {
    action "create_issue" appliesTo {
        principal: Box::Agent, resource: Box::Resource,
        context: { input: { repo: String, title: String } }
    };
    action "delete_repo" appliesTo {
        principal: Box::Agent, resource: Box::Resource,
        context: { input: { repo: String } }
    };
}
EOS
} > "$T/mcp.cedarschema"
cat > "$T/mcp.dw" <<'EOP'
@id("mcp_ok")
permit (principal, action == Box::Action::"mcp:call", resource);

@id("no_delete_repo")
@description("Repositories are never deleted")
forbid (principal, action == github::Action::"delete_repo", resource);

@id("no_secret_titles")
forbid (principal, action == github::Action::"create_issue", resource) when { context.input.title like "*secret*" };

@id("overflow_guard")
forbid (principal, action == github::Action::"create_issue", resource)
when { context.input.title == "overflow" && 9223372036854775807 + (if context.input.repo == "o/r" then 1 else 0) > 0 };
EOP
# start_mcp STATE LOG [flags...]: dwd on the MCP schema
start_mcp() {
    local state=$1 log=$2; shift 2
    rm -f "$T/sock"
    "$DWD" --policy "$T/mcp.dw" --schema "$T/mcp.cedarschema" --events box --state "$state" --socket "$T/sock" \
        --decision-log "$log" "$@" ${DWD_EXTRA_FLAGS:-} 2>>"$T/dwd.err" &
    pid=$!
    wait_socket "$T/sock" "$pid"
}
cat > "$T/mcp-ops" <<'EOO'
{"op":"decide","namespace":"github","action":"create_issue","input":{"repo":"o/r","title":"hello"},"parent_span_id":"00f067aa0ba902b7","request_id":"r1"}
{"op":"decide","namespace":"github","action":"create_issue","input":{"repo":"o/r","title":"a secret plan"}}
{"op":"decide","namespace":"github","action":"delete_repo","input":{"repo":"o/r"},"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","parent_span_id":"A3CE929D0E0E4736"}
{"op":"decide","namespace":"github","action":"create_issue","input":{"repo":"o/r","title":"overflow"}}
{"op":"decide","namespace":"github","action":"create_issue","input":{"repo":"o/r","title":"hi","labels":"x"}}
{"op":"decide","namespace":"github","action":"no_such_tool","input":{}}
{"op":"decide","action":"fs:read","input":{"path":"/tmp/x","operation":"read_content"}}
{"op":"decide","namespace":"Box","action":"fs:read","input":{"path":"/tmp/x","operation":"read_content"}}
{"op":"decide","action":"mcp:call","input":{"server":"github","method":"tools/call","tool":"create_issue"},"jsonrpc_id":"7"}
{"op":"decide","action":"mcp:call","input":{"server":"github","method":"tools/call"},"parent_span_id":"0000000000000000"}
{"op":"decide","action":"mcp:call","input":{"server":"github","method":"tools/call"},"parent_span_id":"00f067aa0ba902"}
{"op":"decide","action":"mcp:call","input":{"server":"github","method":"tools/call"},"trace_id":"00f067aa0ba902b700f067aa0ba902bz"}
{"op":"record","action":"mcp:call","kind":"response","input":{"server":"github","method":"tools/call"},"parent_span_id":"00f067aa0ba902b7"}
EOO
ndec=9
if start_mcp "$T/state-mcp" "$T/mcp.jsonl" --log-include deny,permit,trace --box-source agent --box-name t-box --run-id run-42; then
    ok "dwd starts with per-tool MCP actions in its schema"
else
    bad "dwd starts with per-tool MCP actions in its schema"; tail -n 5 "$T/dwd.err"
fi
"$C" "$T/sock" < "$T/mcp-ops" > "$T/mcp-replies"
stop_dwd
line() { sed -n "$1p" "$T/mcp-replies"; }
check "per-tool gate: no match is Allow (permit, no_match, <default-allow>)" test "$(line 1)" = '{"ok":true,"verdict":"permit","cause":"no_match","rule":"<default-allow>","determining":[],"message":""}'
check "per-tool gate: an explicit forbid denies" grep -q '"verdict":"deny","cause":"forbidden","rule":"no_secret_titles"' <(line 2)
check "per-tool gate: forbid with description, subject <ns>/<tool>" grep -q "\"message\":\"policy denied this operation on 'github/delete_repo' \[policy: no_delete_repo\]: Repositories are never deleted.\"" <(line 3)
check "per-tool gate: a forbid that errors denies (internal_fault), never Allow" grep -q '"verdict":"deny","cause":"internal_fault"' <(line 4)
check "per-tool gate: a schema-gate failure denies (internal_fault)" grep -q '"verdict":"deny","cause":"internal_fault","rule":"<default-deny>"' <(line 5)
check "per-tool gate: an unknown tool denies (internal_fault)" grep -q '"verdict":"deny","cause":"internal_fault"' <(line 6)
check "Box actions keep default deny (no match denies)" grep -q '"verdict":"deny","cause":"no_match","rule":"<default-deny>"' <(line 7)
check "namespace \"Box\" is not a per-tool action" grep -q '"verdict":"deny","cause":"no_match","rule":"<default-deny>"' <(line 8)
check "mcp:call permitted" grep -q '"verdict":"permit","cause":"permitted","rule":"mcp_ok"' <(line 9)
check "parent_span_id of zeros / wrong length, a bad trace_id, parent_span_id on record: errors" \
    test "$(sed -n '10,13p' "$T/mcp-replies" | grep -c '^{"ok":false,"error":"\\"\(parent_span_id\|trace_id\)\\" (decide only) must be')" -eq 4
sum=$(otlp "$T/mcp.jsonl"); rc=$?
check "OTLP shape of every line with spans ($sum)" test "$rc" -eq 0
check "one record and one span per decision, all paired by trace and span id" \
    grep -q "records=$ndec permits=2 denies=7 spans=$ndec controls=[0-9]* paired=$ndec parents=2" <<<"$sum"
check "each decision's span line follows its record line" \
    test "$(grep -v '"strands-box.control"' "$T/mcp.jsonl" | sed -e 's/^{"resourceLogs".*/R/' -e 's/^{"resourceSpans".*/S/' | paste -sd '' -)" = "$(printf 'RS%.0s' $(seq 1 $ndec))"
pair=$(grep -A1 '"stringValue":"r1"' "$T/mcp.jsonl" | head -n 2)
check "span line follows its record with the same ids and parentSpanId" \
    python3 -c 'import json,sys; r,s=[json.loads(l) for l in sys.stdin.read().splitlines()]; lr=r["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]; sp=s["resourceSpans"][0]["scopeSpans"][0]["spans"][0]; sys.exit(not(lr["traceId"]==sp["traceId"] and lr["spanId"]==sp["spanId"] and sp["parentSpanId"]=="00f067aa0ba902b7" and sp["startTimeUnixNano"]==lr["timeUnixNano"]==sp["endTimeUnixNano"]))' <<<"$pair"
check "decision record: strands.box.trace.parent_span_id" grep -q '"strands.box.trace.parent_span_id","value":{"stringValue":"00f067aa0ba902b7"}' "$T/mcp.jsonl"
check "trace_id joins the caller's trace; parent id lowercased" grep -q '"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"[0-9a-f]\{16\}","parentSpanId":"a3ce929d0e0e4736","name":"strands.box.policy.decision","kind":1' "$T/mcp.jsonl"
check "an internal fault's span has status ERROR" grep -q '"status":{"code":2,' "$T/mcp.jsonl"
check "resource attributes from --box-name, --box-source, --run-id" \
    test "$(grep -c '"resource":{"attributes":\[{"key":"service.name","value":{"stringValue":"strands-box"}},{"key":"strands.box.name","value":{"stringValue":"t-box"}},{"key":"strands.box.source","value":{"stringValue":"agent"}},{"key":"strands.box.run.id","value":{"stringValue":"run-42"}}\]}' "$T/mcp.jsonl")" -eq "$(wc -l < "$T/mcp.jsonl")"
check "per-tool decision record: category mcp, resource <ns>/<tool>" grep -q '"strands.box.policy.resource","value":{"stringValue":"github/create_issue"}},{"key":"strands.box.policy.verdict","value":{"stringValue":"permit"}},{"key":"strands.box.policy.cause","value":{"stringValue":"no_match"}},{"key":"strands.box.policy.rule","value":{"stringValue":"<default-allow>"}},{"key":"strands.box.policy.category","value":{"stringValue":"mcp"}}' "$T/mcp.jsonl"
# include filtering
sums=()
for inc in deny trace permit,kernel; do
    start_mcp "$T/state-mcp-$inc" "$T/mcp-$inc.jsonl" --log-include "$inc" || bad "dwd starts with --log-include $inc"
    head -n 9 "$T/mcp-ops" | "$C" "$T/sock" > /dev/null
    stop_dwd
    sums[${#sums[@]}]="$inc: $(otlp "$T/mcp-$inc.jsonl")"
done
check "--log-include deny: deny records only, no spans" grep -q "^deny: lines=[0-9]* records=7 permits=0 denies=7 spans=0 " <(printf '%s\n' "${sums[@]}")
check "--log-include trace: spans only (all $ndec), no decision records" grep -q "^trace: lines=[0-9]* records=0 permits=0 denies=0 spans=$ndec " <(printf '%s\n' "${sums[@]}")
check "--log-include permit,kernel: permit records only" grep -q "^permit,kernel: lines=[0-9]* records=2 permits=2 denies=0 spans=0 " <(printf '%s\n' "${sums[@]}")
check "--log-include trace: control records still written" grep -q '"eventName":"strands.box.control.box_started"' "$T/mcp-trace.jsonl"
for badinc in bogus deny,deny '' 'deny,' ; do
    "$DWD" --policy "$ex/policy.dw" --state "$T/state-badinc" --socket "$T/sock-bad" --log-include "$badinc" 2>"$T/badinc.err"
    rc=$?
    check "--log-include '$badinc' is refused (exit 2)" test "$rc" -eq 2 -a ! -S "$T/sock-bad"
done
"$DWD" --policy "$ex/policy.dw" --state "$T/state-badinc" --socket "$T/sock-bad" --box-source kernel 2>"$T/badsrc.err"
check "--box-source other than box|agent is refused (exit 2)" test $? -eq 2
"$DWD" --policy "$ex/policy.dw" --state "$T/state-badinc" --socket "$T/sock-bad" --temporal-work-bound -5 2>"$T/badbound.err"
check "--temporal-work-bound takes a number of steps (exit 2)" test $? -eq 2 -a ! -S "$T/sock-bad"

# ---- 9. confinement ----
"$DWD" --selftest-seccomp > "$T/seccomp" 2>&1
rc=$?
check "seccomp selftest exits 0" test "$rc" -eq 0
for call in socket openat execve "setsockopt SO_RCVBUF"; do
    check "seccomp refuses $call with EPERM" grep -qx "$call: refused (EPERM)" "$T/seccomp"
done
check "seccomp allows setsockopt SO_PEEK_OFF (the connections' peek offset)" grep -qx "setsockopt SO_PEEK_OFF: allowed" "$T/seccomp"
stop_dwd
check "the server runs confined" grep -q "; confined)" "$T/dwd.err"
mkdir -p "$T/keeper"
"$DWD" --selftest-keeper "$T/keeper" > "$T/keeper.out" 2>&1
check "keeper selftest exits 0" test $? -eq 0
for call in socket execve fork; do
    check "the keeper's filter refuses $call" grep -q "^keeper filter: $call: refused (Operation not permitted)$" "$T/keeper.out"
done
check "the keeper refuses names outside the log's patterns" grep -q '^open LOCK: refused (Operation not permitted)$' "$T/keeper.out"
check "the keeper refuses paths with ../" grep -q '^create ../escape.tmp: refused (Operation not permitted)$' "$T/keeper.out"
check "the keeper never follows a symlink" grep -q '^create ckpt.tmp through a symlink: refused (Too many levels of symbolic links)$' "$T/keeper.out"
check "the keeper opens artifacts read-only" grep -q '^  ... and the fd is read-only (write): refused (Bad file descriptor)$' "$T/keeper.out"
check "no sanitizer or fault reports from dwd" sh -c "! grep -E 'Sanitizer|runtime error|internal fault: history' '$T/dwd.err'"

# ---- 10. the Box profile at load (box.md §11, §17): each refusal exits 1 with dwc check's first error ----
rules="$here/../check"
for n in duplicate_id unknown_action unguarded_optional window_over_cap inert_home_literal temporal_permit_cap reserved_action_only providers; do
    pol="$rules/$n.dw"
    # check's first error and its hint, as one line (the loader's form)
    want=$("$DWC" check "$pol" --schema box 2>/dev/null | awk '/^[^ ].*: error\[/ && !l {l=$0; next} l && /^  hint: / {sub(/^  hint: /, ""); print l " (hint: " $0 ")"; exit} l && /^[^ ]/ {print l; exit}')
    timeout 20 "$DWD" --policy "$pol" --schema box --state "$T/state-prof-$n" --socket "$T/sock-prof" 2>"$T/prof.err"
    rc=$?
    check "Box profile: $n refuses to start (exit 1)" test "$rc" -eq 1 -a ! -S "$T/sock-prof"
    check "Box profile: $n: the message is dwc check's ($(echo "$want" | sed -n 's/.*error\[\([a-z-]*\)\].*/\1/p')), the path once" test "$(cat "$T/prof.err")" = "dwd: $want" -a -n "$want"
done
# information providers (dogwood.md §13.6): --no-providers refuses an artifact that calls one
pv="$here/../dogwood_ref/providers"
"$DWC" compile "$pv/policy.dw" -s "$pv/schema.cedarschema" --events unpinned --providers "$pv/providers.json" -o "$T/prov.dwb" 2>/dev/null
timeout 20 "$DWD" --artifact "$T/prov.dwb" --schema "$pv/schema.cedarschema" --events unpinned --no-providers \
    --state "$T/state-prov" --socket "$T/sock-prof" 2>"$T/prof.err"
rc=$?
check "--no-providers: a set that calls a provider is refused (exit 1)" test "$rc" -eq 1 -a ! -S "$T/sock-prof"
check "... saying so" grep -q "information providers are not enabled in this build" "$T/prof.err"
# artifacts: only one compiled with --schema box serves in Box mode
"$DWC" compile "$ex/policy.dw" -o "$T/plain.dwb" 2>/dev/null
"$DWC" compile "$ex/policy.dw" --schema box -o "$T/boxed.dwb" 2>/dev/null
timeout 20 "$DWD" --artifact "$T/plain.dwb" --schema box --state "$T/state-prof-a" --socket "$T/sock-prof" 2>"$T/prof.err"
rc=$?
check "Box profile: an artifact not checked for Box is refused (exit 1)" test "$rc" -eq 1
check "Box profile: ... saying so" grep -q "artifact refused: not checked against the Box profile" "$T/prof.err"
"$DWD" --artifact "$T/boxed.dwb" --schema box --state "$T/state-prof-b" --socket "$T/sock-prof" 2>"$T/prof.err" & p3=$!
wait_socket "$T/sock-prof" "$p3"
check "Box profile: an artifact from dwc compile --schema box serves" test -S "$T/sock-prof"
kill "$p3" 2>/dev/null; wait "$p3" 2>/dev/null

# ---- 11. dwd serves artifacts only (issue 14): policy text is compiled by dwc in a child ----
# the option forms getopt_long takes: --socket=PATH --artifact=PATH --state=DIR
rm -f "$T/sock-eq"
"$DWD" --artifact="$T/boxed.dwb" --schema=box --state="$T/state-eq" --socket="$T/sock-eq" 2>"$T/eq.err" & p4=$!
wait_socket "$T/sock-eq" "$p4"
check "dwd --socket=... --artifact=... serves" test -S "$T/sock-eq"
echo '{"op":"decide","action":"http:request","input":{"host":"api.github.com","port":443,"method":"GET","path":"/","body_bytes":0,"intercepted":true}}' |
    "$C" "$T/sock-eq" > "$T/eq.out"
check "... and decides" grep -q '"verdict":"permit"' "$T/eq.out"
kill "$p4" 2>/dev/null; wait "$p4" 2>/dev/null
# the compiler it runs: --dwc, else $DWC, else the dwc beside dwd; one that cannot run is named
timeout 20 "$DWD" --policy "$ex/policy.dw" --dwc "$T/no-such-dwc" --state "$T/state-nodwc" --socket "$T/sock-nodwc" 2>"$T/nodwc.err"
check "--dwc naming no program: exit 1, no socket" test $? -eq 1 -a ! -S "$T/sock-nodwc"
check "... saying which" grep -q "dwd: $ex/policy.dw: error: cannot run $T/no-such-dwc to compile it: No such file or directory" "$T/nodwc.err"
DWC="$T/no-such-dwc" timeout 20 "$DWD" --policy "$ex/policy.dw" --state "$T/state-nodwc" --socket "$T/sock-nodwc" 2>"$T/nodwc.err"
check "\$DWC naming no program: exit 1" test $? -eq 1 -a ! -S "$T/sock-nodwc"
rm -f "$T/sock-dwc"
"$DWD" --policy "$ex/policy.dw" --dwc "$DWC" --state "$T/state-dwc" --socket "$T/sock-dwc" 2>"$T/dwc.err" & p5=$!
wait_socket "$T/sock-dwc" "$p5"
check "--dwc DWC compiles the policy text and serves it" test -S "$T/sock-dwc"
# a reload names an artifact: the confined server cannot run the compiler (seccomp refuses exec)
echo "{\"op\":\"reload\",\"artifact\":\"$ex/policy.dw\"}" | "$C" "$T/sock-dwc" > "$T/rl-src"
check "reload of policy text is refused, saying to compile it" \
    grep -q '"ok":false,"error":"not a compiled policy artifact (.dwb): a reload takes artifacts only; compile the policy with dwc compile -s SCHEMA"' "$T/rl-src"
kill "$p5" 2>/dev/null; wait "$p5" 2>/dev/null
# an artifact whose serving context is damaged is refused at start, naming the damage
if python3 -c 1 2>/dev/null; then
    python3 - "$T/boxed.dwb" "$T/damaged.dwb" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
n = struct.unpack_from('<I', b, 8)[0]
sid, sz = struct.unpack_from('<II', b, 40 + 8 * (n - 1))   # SERVE has the highest id: the last section
b[len(b) - sz // 2] ^= 0x10                                  # a byte in its middle
open(sys.argv[2], 'wb').write(b)
PY
    timeout 20 "$DWD" --artifact "$T/damaged.dwb" --state "$T/state-dmg" --socket "$T/sock-dmg" 2>"$T/dmg.err"
    check "an artifact with a damaged serving context is refused (exit 1, no socket)" test $? -eq 1 -a ! -S "$T/sock-dmg"
    check "... saying so" grep -q "damaged.dwb: error: artifact refused: artifact checksum mismatch (the file is corrupt)" "$T/dmg.err"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
