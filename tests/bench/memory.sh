#!/usr/bin/env bash
# tests/bench/memory.sh [BUILD] [SHARED] - memory figures of issue 13 (rows 10-12), printed for
# docs/RELIABILITY.md (figures, not pass/fail: the regression tests are in tests/unit/test_retain.c).
#   1. dwd after N_UNMATCHED (400,000) events no predicate can match, all inside one 10-minute
#      window (Box example 06, responses from example.com, --durability batch, a checkpoint every
#      10,000 events): RSS, peak RSS, retained history, the newest checkpoint's size.
#   2. `dwc replay` of N_REPLAY (1,000,000) events 1 s apart under example 06's 10-minute window
#      (every tenth a decided request): peak RSS (/usr/bin/time).
#   3. dwd reloaded N_RELOADS (3,000) times with example 06's artifact: RSS before and after.
# Environment: N_UNMATCHED, N_REPLAY, N_RELOADS, CC.  Takes a few minutes on 2 cores.
set -uo pipefail
B=${1:-build}
SHARED=${2:-../shared}
here=$(cd "$(dirname "$0")" && pwd)
ex=$SHARED/examples/box/06-http-request-budget
N_UNMATCHED=${N_UNMATCHED:-400000}
N_REPLAY=${N_REPLAY:-1000000}
N_RELOADS=${N_RELOADS:-3000}
T=$(mktemp -d "${TMPDIR:-/tmp}/dw-memory.XXXXXX")
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
${CC:-cc} -std=c11 -D_GNU_SOURCE -O1 -o "$T/client" "$here/../dwd/client.c" || exit 1

start_dwd() {   # start_dwd ARGS...: dwd on $T/sock, wait for the socket
    rm -f "$T/sock"
    "$B/dwd" --schema box --socket "$T/sock" "$@" 2>>"$T/dwd.err" &
    pid=$!
    for _ in $(seq 1 1000); do [ -S "$T/sock" ] && return 0; sleep 0.01; done
    echo "dwd did not start: $(cat "$T/dwd.err")"; exit 1
}
stop_dwd() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=""; }
kb() { sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$pid/status"; }
stat_of() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }

# ---- 1. unmatched events ----
awk -v n="$N_UNMATCHED" 'BEGIN {
    for (i = 0; i < n; i++) {
        us = int(i * 600000000 / n)          # n events spread over 10 minutes
        printf "{\"op\":\"record\",\"time\":\"2025-06-02T12:%02d:%02d.%06dZ\",\"action\":\"http:request\",\"kind\":\"response\",", int(us / 60000000), int(us / 1000000) % 60, us % 1000000
        printf "\"input\":{\"host\":\"example.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/x\",\"body_bytes\":0,\"intercepted\":true},\"output\":{\"status\":200}}\n"
    }
}' > "$T/unmatched"
start_dwd --policy "$ex/policy.dw" --state "$T/state1" --trust-client-time --durability batch --checkpoint-every 10000
rss0=$(kb VmRSS)
t0=$(date +%s)
"$T/client" "$T/sock" --raw "$N_UNMATCHED" < "$T/unmatched" | grep -c '"ok":true' > "$T/ok"
secs=$(( $(date +%s) - t0 ))
echo '{"op":"stats"}' | "$T/client" "$T/sock" > "$T/stats"
hist=$(stat_of history_events < "$T/stats"); logged=$(stat_of log_next_seq < "$T/stats")
rss=$(kb VmRSS); hwm=$(kb VmHWM)
ckpt=$(ls -S "$T/state1" | grep -i ckpt | head -n 1)
ckb=$( [ -n "$ckpt" ] && stat -c %s "$T/state1/$ckpt" || echo "?")
stop_dwd
echo "1. dwd, $N_UNMATCHED unmatched events in 10 minutes (${secs} s, $(cat "$T/ok") acknowledged, $logged logged): RSS $((rss0 / 1024)) -> $((rss / 1024)) MB (peak $((hwm / 1024)) MB), history_events $hist, largest checkpoint ${ckb} bytes"

# ---- 2. replay ----
awk -v n="$N_REPLAY" 'BEGIN {
    for (i = 0; i < n; i++) {
        t = sprintf("2025-06-%02dT%02d:%02d:%02dZ", 2 + int(i / 86400), int(i / 3600) % 24, int(i / 60) % 60, i % 60)
        k = i % 10 == 9 ? "request" : "response"
        printf "{\"time\":\"%s\",\"action\":\"http:request\",\"kind\":\"%s\",\"input\":{\"host\":\"api.github.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true}%s}\n", t, k, k == "response" ? ",\"output\":{\"status\":200}" : ""
    }
}' > "$T/trace.jsonl"
/usr/bin/time -f "%M %e" -o "$T/time" "$B/dwc" replay --no-expect -p "$ex/policy.dw" "$T/trace.jsonl" > "$T/replay.out"
read -r peak el < "$T/time"
echo "2. dwc replay of $N_REPLAY events 1 s apart ($(du -m "$T/trace.jsonl" | cut -f1) MB trace, $(grep -c DENY "$T/replay.out") denies): peak RSS $((peak / 1024)) MB, ${el} s"

# ---- 3. reloads ----
"$B/dwc" compile "$ex/policy.dw" -s box -o "$T/a.dwb" || exit 1
start_dwd --artifact "$T/a.dwb" --state "$T/state3"
awk -v n=100 -v a="$T/a.dwb" 'BEGIN { for (i = 0; i < n; i++) printf "{\"op\":\"reload\",\"artifact\":\"%s\"}\n", a }' > "$T/warm"
awk -v n="$N_RELOADS" -v a="$T/a.dwb" 'BEGIN { for (i = 0; i < n; i++) printf "{\"op\":\"reload\",\"artifact\":\"%s\"}\n", a }' > "$T/reloads"
"$T/client" "$T/sock" < "$T/warm" > /dev/null        # allocator warm-up
rss0=$(kb VmRSS)
"$T/client" "$T/sock" < "$T/reloads" | grep -vc '"ok":true' > "$T/notok"
rss=$(kb VmRSS)
stop_dwd
echo "3. dwd, $N_RELOADS reloads of a $(stat -c %s "$T/a.dwb")-byte artifact ($(cat "$T/notok") not ok): RSS $((rss0 / 1024)) -> $((rss / 1024)) MB (+$(( (rss - rss0) / 1024 )) MB)"
