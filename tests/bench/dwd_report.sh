#!/usr/bin/env bash
# tests/bench/dwd_report.sh SHARED_DIR [DWD] [DWD_LOAD] - the "dwd over the socket" section of
# docs/PERFORMANCE.md (markdown on stdout; `make bench` appends it).
#
# Runs build/bench/dwd_load (tests/bench/dwd_load.c) on Box's example policies 01-04 taken
# together (fs reads and writes, deletes, net/http egress, shell commands) with their requests:
#   * decisions: --durability batch and full, 1 / 8 / 64 clients, one outstanding request per
#     client (closed loop) and 16 per client (pipelined);
#   * the transport's ceiling: the same clients against a trivial server of dwd's shape (--echo);
#   * durable appends: `record` ops under full at 8 and 64 clients, against write + fdatasync per
#     append measured in the same run on the same file system (one thread, and 8 threads);
#   * the bounds: fsync latency, server and client CPU per request.
# Knobs: DWC (the dwc dwd compiles the policy with; default the one beside DWD),
# DWD_LOAD_SECONDS (measured seconds per run, default 5), DWD_LOAD_CLIENTS ("1 8 64"),
# DWD_LOAD_TMP (directory for state and the fsync baseline, default build/bench), DWD_LOAD_PAIRS (the
# back-to-back dwd/echo pairs, default 5), DWD_LOAD_REUSE=1
# (report the results of the previous run, rerunning only what is missing), CEDAR_PEER (a Cedar
# peer result file of the same run: adds the CPU-per-decision comparison with cedar-wasm).
set -uo pipefail
SHARED=${1:?usage: dwd_report.sh SHARED_DIR [DWD] [DWD_LOAD]}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
DWD_SRC=${2:-build/dwd}
LOAD=${3:-build/bench/dwd_load}
SECS=${DWD_LOAD_SECONDS:-5}
CLIENTS=${DWD_LOAD_CLIENTS:-"1 8 64"}
PAIRS=${DWD_LOAD_PAIRS:-5}
TMPD=${DWD_LOAD_TMP:-build/bench}
ex=$SHARED/examples/box
mkdir -p "$TMPD"
[ -x "$DWD_SRC" ] && [ -x "$LOAD" ] || { echo "dwd_report: $DWD_SRC or $LOAD missing: run make" >&2; exit 1; }
# measure a private copy, so that a rebuild during the run cannot swap binaries under it
DWD=$TMPD/dwd-under-test
cp "$DWD_SRC" "$DWD"
# the copy has no dwc beside it to compile the policy text: the one beside DWD, unless DWC names one
: "${DWC:=$(cd "$(dirname "$DWD_SRC")" && pwd)/dwc}"
export DWC
POLICY=$TMPD/dwd-load-policy.dw
for b in 01-project-read 02-no-deletes 03-model-egress 04-shell-allowlist; do cat "$ex/$b/policy.dw"; echo; done > "$POLICY"
REQ=()
for b in 01-project-read 02-no-deletes 03-model-egress 04-shell-allowlist; do REQ+=(--requests "$ex/$b/requests.jsonl"); done
HTTPREQ=(--requests "$ex/03-model-egress/requests.jsonl" --requests "$ex/06-http-request-budget/requests.jsonl")
RES=$TMPD/dwd-load-results
[ -n "${DWD_LOAD_REUSE:-}" ] || rm -rf "$RES"
mkdir -p "$RES"

# run NAME ARGS...: one dwd_load run, its key=value output kept in $RES/NAME
run() {
    local name=$1; shift
    [ -n "${DWD_LOAD_REUSE:-}" ] && [ -s "$RES/$name" ] && return
    echo "dwd_report: $name" >&2
    "$LOAD" --tmp "$TMPD" --seconds "$SECS" "$@" > "$RES/$name" 2> "$RES/$name.err" ||
        echo "dwd_report: $name: exit $? $(head -c 300 "$RES/$name.err")" >&2
}
get() { sed -n "s/^$2=//p" "$RES/$1" 2>/dev/null | head -n 1; }
num() {        # 1234567.8 -> 1,234,568
    awk -v n="${1:-0}" 'BEGIN { s = sprintf("%.0f", n); r = ""
        while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) }
        print s r }'
}

psi() { sed -n 's/^some avg10=[0-9.]* avg60=\([0-9.]*\).*/\1/p' /proc/pressure/cpu 2>/dev/null; }
load0=$(cut -d' ' -f1-3 /proc/loadavg); psi0=$(psi)
started=$(date -u '+%Y-%m-%d %H:%M UTC')
for d in batch full; do
    for c in $CLIENTS; do
        run "$d-closed-$c" --dwd "$DWD" --policy "$POLICY" --durability "$d" --clients "$c" "${REQ[@]}"
        run "$d-pipe-$c" --dwd "$DWD" --policy "$POLICY" --durability "$d" --clients "$c" --pipeline 16 "${REQ[@]}"
    done
done
for c in $CLIENTS; do
    run "echo-closed-$c" --echo --clients "$c" "${REQ[@]}"
    run "echo-pipe-$c" --echo --clients "$c" --pipeline 16 "${REQ[@]}"
done
run "record-8" --dwd "$DWD" --policy "$POLICY" --durability full --clients 8 --op record --baseline "${HTTPREQ[@]}"
run "record-64" --dwd "$DWD" --policy "$POLICY" --durability full --clients 64 --op record --baseline "${HTTPREQ[@]}"
# dwd against the echo server, batch, 8 closed-loop clients, in back-to-back pairs: on a shared
# machine the load moves within minutes, so runs far apart in the matrix compare badly.
for r in $(seq 1 "$PAIRS"); do
    run "pair-batch-$r" --dwd "$DWD" --policy "$POLICY" --durability batch --clients 8 "${REQ[@]}"
    run "pair-echo-$r" --echo --clients 8 "${REQ[@]}"
done
load1=$(cut -d' ' -f1-3 /proc/loadavg); psi1=$(psi)

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
cat <<EOF

## dwd over the socket (tests/bench/dwd_load.c)

Measured $started on $(nproc) × ${cpu:-unknown CPU}, $(uname -sr), state on
$(df -T "$TMPD" | awk 'NR == 2 { print $2 " (" $1 ")" }'); load average $load0 before and $load1 after, CPU pressure
(PSI "some", avg60) ${psi0:-?}% before and ${psi1:-?}% after: the share of time some task was waiting for a core
(the machine is shared: other engineers' builds and campaigns run at the same time, and the
clients share the same 2 cores with dwd). Policy: Box examples 01-04 together
($(grep -c '^@id' "$POLICY") rules), requests: their \`requests.jsonl\` (fs reads/writes/deletes, net and
http egress, shell commands) as \`decide\` ops, cycled by every client. ${SECS} s measured per
run after 1 s of warm-up; a fresh dwd and state directory per run. *closed*: one outstanding request
per client; *pipelined*: 16 per client. Latency is per request, from writing its line to reading
its reply. Server CPU is dwd's time per request (from \`/proc\`): total (user + system).

| durability | clients | mode | decisions/s | p50 | p99 | p99.9 | server CPU / decision | events per sync |
|---|---:|---|---:|---:|---:|---:|---:|---:|
EOF
for d in batch full echo; do
    for c in $CLIENTS; do
        for m in closed pipe; do
            f=$d-$m-$c
            [ -s "$RES/$f" ] || { echo "| $d | $c | $m | failed | | | | | |"; continue; }
            label=$d; [ "$d" = echo ] && label="echo server (ceiling)"
            mode=closed; [ "$m" = pipe ] && mode="pipelined (16)"
            ops=$(get "$f" ops_per_sync); [ -n "$ops" ] || ops="–"
            printf '| %s | %s | %s | %s | %s µs | %s µs | %s µs | %s µs | %s |\n' "$label" "$c" "$mode" \
                "$(num "$(get "$f" decisions_per_s)")" "$(get "$f" p50_us)" "$(get "$f" p99_us)" "$(get "$f" p999_us)" \
                "$(get "$f" server_cpu_us_per_op) ($(get "$f" server_user_us_per_op) + $(get "$f" server_sys_us_per_op))" "$ops"
        done
    done
done
cat <<EOF

dwd against the echo server, batch, 8 clients, closed loop, in $PAIRS back-to-back pairs (a dwd run, then
an echo run): the load of a shared machine moves within minutes, so the pairs, not the matrix above,
give the ratio. Server CPU per decision (user + system, from \`/proc\`) moves less with the load than
the rate does.

| pair | dwd decisions/s | dwd p99 | dwd server CPU | echo decisions/s | echo p99 | echo server CPU | dwd ÷ echo |
|---:|---:|---:|---:|---:|---:|---:|---:|
EOF
ratios="" cpus="" ecpus=""
med_of() { [ $# -gt 0 ] || { echo "?"; return; }; printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "?" }'; }
for r in $(seq 1 "$PAIRS"); do
    a=$(get "pair-batch-$r" decisions_per_s); b=$(get "pair-echo-$r" decisions_per_s)
    if [ -z "$a" ] || [ -z "$b" ]; then echo "| $r | failed | | | | | | |"; continue; fi
    q=$(awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print 0 }')
    ratios="$ratios $q" cpus="$cpus $(get "pair-batch-$r" server_cpu_us_per_op)" ecpus="$ecpus $(get "pair-echo-$r" server_cpu_us_per_op)"
    printf '| %s | %s | %s µs | %s µs | %s | %s µs | %s µs | %s× |\n' "$r" "$(num "$a")" "$(get "pair-batch-$r" p99_us)" \
        "$(get "pair-batch-$r" server_cpu_us_per_op)" "$(num "$b")" "$(get "pair-echo-$r" p99_us)" "$(get "pair-echo-$r" server_cpu_us_per_op)" "$q"
done
echo
echo "Median dwd ÷ echo: $(med_of $ratios)×; median server CPU per decision: dwd $(med_of $cpus) µs, echo $(med_of $ecpus) µs."

# Cedar of the same run (run.sh passes CEDAR_PEER: the Cedar peer's from-json result on the Box
# example): CPU per decision and decisions per core against dwd's server CPU per decision.
cedar_ns=$(sed -n 's/^ns_per_decision=//p' "${CEDAR_PEER:-/nonexistent}" 2>/dev/null | head -n 1)
if [ -n "$cedar_ns" ]; then
    cedar_us=$(awk -v n="$cedar_ns" 'BEGIN { printf "%.1f", n / 1000 }')
    per_core() { awk -v u="$1" 'BEGIN { if (u > 0) printf "%.0f", 1e6 / u; else print 0 }'; }
    cat <<EOF

Against Cedar in the same run: cedar-wasm decides the Box example's requests from their JSON in a mean of
$cedar_us µs (one Node.js thread, in process: no socket, no history; the Box example's from-json row
above), so a core does at most $(num "$(per_core "$cedar_us")") of its decisions per second. dwd's figure is its own CPU per
decision (user + system, the socket's system calls and the history append included):

| | CPU per decision | decisions/s per core | ÷ cedar-wasm |
|---|---:|---:|---:|
| cedar-wasm, from JSON, in process | $cedar_us µs | $(num "$(per_core "$cedar_us")") | 1.0× |
EOF
    for f in batch-closed-8 batch-pipe-8 full-closed-8; do
        [ -s "$RES/$f" ] || continue
        u=$(get "$f" server_cpu_us_per_op)
        printf '| dwd %s | %s µs | %s | %s× |\n' "$(echo "$f" | sed 's/-closed-/, closed loop, /; s/-pipe-/, pipelined (16), /; s/$/ clients/')" \
            "$u" "$(num "$(per_core "$u")")" "$(awk -v c="$cedar_us" -v u="$u" 'BEGIN { if (u > 0) printf "%.1f", c / u; else print "?" }')"
    done
fi
cat <<EOF

Durable appends (\`record\` ops, \`--durability full\`, closed loop), against one \`fdatasync\` per
append measured just before, in the same run, on the same file system (write 256 B + fdatasync):

| clients | durable appends/s | p50 | p99 | appends per sync | one fsync per append, 1 thread | same, N threads | ratio to 1 thread | fdatasync p50 / p99 / p99.9 |
|---:|---:|---:|---:|---:|---:|---:|---:|---|
EOF
for c in 8 64; do
    f=record-$c
    [ -s "$RES/$f" ] || { echo "| $c | failed | | | | | | | |"; continue; }
    printf '| %s | %s | %s µs | %s µs | %s | %s/s | %s/s | %s× | %s / %s / %s µs |\n' "$c" "$(num "$(get "$f" appends_per_s)")" \
        "$(get "$f" p50_us)" "$(get "$f" p99_us)" "$(get "$f" ops_per_sync)" "$(num "$(get "$f" fsync_1t_appends_per_s)")" \
        "$(num "$(get "$f" "fsync_${c}t_appends_per_s")")" "$(get "$f" vs_fsync_1t)" \
        "$(get "$f" fsync_p50_us)" "$(get "$f" fsync_p99_us)" "$(get "$f" fsync_p999_us)"
done
b8=$RES/batch-closed-8
# the bounds: CPU per closed-loop round trip (server + client) on this many cores, and
# closed-loop clients per fdatasync
bound() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { if (a + b > 0) printf "%.0f", n * 1e6 / (a + b); else print "?" }'; }
ncpu=$(nproc)
cat <<EOF

Bounds, from the same runs. A closed-loop request costs dwd $(get batch-closed-8 server_cpu_us_per_op) µs and its client
$(get batch-closed-8 client_cpu_us_per_op) µs of CPU (batch, 8 clients): with all $ncpu cores and nothing else running that
is at most $(num "$(bound "$(get batch-closed-8 server_cpu_us_per_op)" "$(get batch-closed-8 client_cpu_us_per_op)" "$ncpu")") decisions/s. The echo server, which does no work at all, costs
$(get echo-closed-8 server_cpu_us_per_op) µs + $(get echo-closed-8 client_cpu_us_per_op) µs (at most $(num "$(bound "$(get echo-closed-8 server_cpu_us_per_op)" "$(get echo-closed-8 client_cpu_us_per_op)" "$ncpu")")/s), nearly all of it system time (socket
wake-ups). Closed-loop durable appends are bounded by clients / sync time, since one sync can cover
at most one append per client: dwd's syncs in the 8-client run took $(awk -v r="$(get record-8 appends_per_s)" -v k="$(get record-8 ops_per_sync)" 'BEGIN { if (r > 0) printf "%.2f", 1000 * k / r; else print "?" }') ms each on average
(appends per sync ÷ appends/s), so 8 clients could reach $(num "$(awk -v r="$(get record-8 appends_per_s)" -v k="$(get record-8 ops_per_sync)" 'BEGIN { if (k > 0) print 8 * r / k }')")/s with perfect batching; 20,000/s at
8 clients needs syncs of 0.4 ms or less. A closed loop's mean latency is clients ÷ throughput (Little's
law): a p99 of 1 ms at 64 clients needs a mean well under 1 ms, so more than 64,000 decisions/s; the echo
server, which does nothing, managed $(num "$(get echo-closed-64 decisions_per_s)")/s at 64 clients here (a mean of $(awk -v r="$(get echo-closed-64 decisions_per_s)" 'BEGIN { if (r > 0) printf "%.2f", 64000 / r; else print "?" }') ms),
with the 64 client threads on the same $ncpu cores as the server. Raw key=value output of every run: \`$RES/\`.
EOF
[ -s "$b8" ] || exit 1
