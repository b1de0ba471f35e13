#!/bin/sh
# Benchmark runner: `make bench`, or from the repository root after `make`:
#
#   tests/bench/run.sh [SHARED_DIR]          (SHARED_DIR defaults to ../shared)
#
# Generates the workloads into build/bench/, installs @cedar-policy/cedar-wasm into
# build/bench/node if missing, runs `build/dwc bench` and the Cedar peer (tests/bench/cedar_peer.js)
# on Box's 01-project-read example and on generated RBAC, Box and keyed sets of 10 .. 100,000 policies,
# each with and without --from-json, one process at a time; then compile/load times
# (artifact_report.sh), Box events through the engine (dwc bench --engine), the temporal rule's
# cost (temporal_bench) and dwd over its socket
# (dwd_report.sh); and rewrites docs/PERFORMANCE.md from all of it (report.js, which refuses to
# write a report that lacks a section's table).
#
# Environment knobs (all optional):
#   DWC=path            dwc binary (default build/dwc)
#   BENCH_SIZES="..."   policy counts (default "10 100 1000 10000 100000")
#   BENCH_STYLES="..."  generated styles (default "rbac box keyed")
#   BENCH_QUICK=1       small decision counts: checks the plumbing in a minute or two
#   BENCH_PEER_MAX=N    largest policy count the Cedar peer is run on (default 10000: a single
#                       cedar-wasm run on 100,000 policies takes well over a minute)
#   BENCH_PEER_BUDGET=S seconds of timed loop per Cedar run (default 5)
#   BENCH_CPU=N         the core dwc bench runs on (default: the last; empty: not pinned)
#   BENCH_REPEAT=K      dwc bench runs per case; the one with the median p50 is reported (default 3)
#   BENCH_REPORT=path   report file (default docs/PERFORMANCE.md)
#   DWD_LOAD_SECONDS=S  measured seconds per dwd_load run (default here 3; dwd_report.sh's own is 5)
#   LOAD_BENCH, TEMPORAL_BENCH, DWD_BIN, DWD_LOAD, CLOCK_PROBE   the other programs (default build/bench/load_bench,
#                       build/temporal_bench, build/dwd, build/bench/dwd_load, build/bench/clock_probe;
#                       `make bench` builds them);
#                       a missing one is reported as "not measured" with the reason
set -eu

# Resolve the shared folder against the caller's directory, then work from the repo root.
SHARED=${1:-../shared}
case $SHARED in /*) ;; *) SHARED=$(pwd)/$SHARED ;; esac
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

DWC_SRC=${DWC:-build/dwc}
SIZES=${BENCH_SIZES:-"10 100 1000 10000 100000"}
STYLES=${BENCH_STYLES:-"rbac box keyed"}
QUICK=${BENCH_QUICK:-0}
PEER_MAX=${BENCH_PEER_MAX:-10000}
PEER_BUDGET=${BENCH_PEER_BUDGET:-5}
REPEAT=${BENCH_REPEAT:-3}
REPORT=${BENCH_REPORT:-docs/PERFORMANCE.md}
OUT=build/bench
RES=$OUT/results
NODE_DIR=$OUT/node
SEED=1

# Every line says how far into the run it is: the sections' times go into the report.
T0=$(date +%s)
say() { printf 'bench: [%4ss] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }
die() { say "error: $*"; exit 1; }

command -v node >/dev/null 2>&1 || die "node (Node.js >= 18) is required"
[ -x "$DWC_SRC" ] || die "$DWC_SRC not found: run \`make\` first"
BOX_EX=$SHARED/examples/box/01-project-read
BOX_SCHEMA=$SHARED/spec/box/actions.cedarschema
[ -f "$BOX_EX/policy.dw" ] && [ -f "$BOX_SCHEMA" ] || die "Box example not found under $SHARED (pass the shared folder as \$1)"

# A per-run time limit, when coreutils' timeout exists.
if command -v timeout >/dev/null 2>&1; then TO="timeout 300"; else TO=""; fi
# dwc bench runs on one core (the last; BENCH_CPU=N another, BENCH_CPU= none): unpinned, a run
# that the scheduler moves between the 2 cores mid-way reads its per-decision timestamps on both
# and loses its caches, and the same binary's Box-example p50 varied 70-130 ns from run to run
# (pinned: 60 ns every run).  The Cedar peer is not pinned: V8 compiles and collects on helper
# threads, which one core would slow.
BENCH_CPU=${BENCH_CPU-$(( $(nproc 2>/dev/null || echo 1) - 1 ))}
PIN=""
if [ -n "$BENCH_CPU" ] && command -v taskset >/dev/null 2>&1; then PIN="taskset -c $BENCH_CPU"; fi

# ---- Cedar peer: @cedar-policy/cedar-wasm, pinned by tests/bench/package-lock.json ----
if [ ! -f "$NODE_DIR/node_modules/@cedar-policy/cedar-wasm/nodejs/cedar_wasm.js" ] ||
   ! cmp -s tests/bench/package-lock.json "$NODE_DIR/package-lock.json"; then
  say "installing @cedar-policy/cedar-wasm into $NODE_DIR"
  mkdir -p "$NODE_DIR"
  cp tests/bench/package.json tests/bench/package-lock.json "$NODE_DIR/"
  npm ci --prefix "$NODE_DIR" --no-audit --no-fund --loglevel=error >&2 || die "npm ci failed"
fi
PEER="node tests/bench/cedar_peer.js --module $NODE_DIR/node_modules/@cedar-policy/cedar-wasm"

# ---- does this dwc have `bench`? ----
# Measure a private copy, so that a rebuild during the run cannot swap binaries under it.
mkdir -p "$OUT"
DWC=$OUT/dwc-under-test
cp "$DWC_SRC" "$DWC"
if "$DWC" bench --help >/dev/null 2>&1; then HAVE_BENCH=1; else
  HAVE_BENCH=0; say "warning: \`$DWC_SRC bench\` is not available; measuring the Cedar side only"
fi

rm -rf "$RES"
mkdir -p "$RES"
# what the report says about the run itself: when, how long, how loaded (the machine may be shared)
loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null; }
# The core clock (clock_probe, on the core dwc bench is pinned to) and the CPU time the hypervisor
# took (/proc/stat's steal column, all cores): a VM's ns figures move with both.
CLOCK_PROBE=${CLOCK_PROBE:-build/bench/clock_probe}
clock_ghz() { if [ -x "$CLOCK_PROBE" ]; then $PIN "$CLOCK_PROBE" 2>/dev/null | sed -n 's/^clock_ghz=//p'; fi; }
cpu_jiffies() { awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print t, $9 }' /proc/stat 2>/dev/null; }
printf 'started=%s\nloadavg_start=%s\ncommit=%s\ndirty=%s\nclock_ghz_start=%s\njiffies_start=%s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(loadavg)" \
  "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$(git diff-index --quiet HEAD -- 2>/dev/null && echo 0 || echo 1)" \
  "$(clock_ghz)" "$(cpu_jiffies)" > "$RES/run.meta"
section() { printf 'section_%s=%s\n' "$1" "$(( $(date +%s) - T0 ))" >> "$RES/run.meta"; }
[ -n "$PIN" ] && printf 'pinned_cpu=%s\n' "$BENCH_CPU" >> "$RES/run.meta"

# ---- workloads ----
# Each workload directory holds policies.cedar (or policy.dw), schema.cedarschema, entities.json
# (optional) and requests.jsonl; $RES/NAME.meta records what the report needs to know.
#
# Box example: requests that fail the schema gate (`dwc authorize` says `invalid:`) are dropped.
W=$OUT/box-example
mkdir -p "$W"
cp "$BOX_EX/policy.dw" "$W/policies.cedar"
cp "$BOX_SCHEMA" "$W/schema.cedarschema"
$DWC authorize -p "$W/policies.cedar" -s "$W/schema.cedarschema" --requests "$BOX_EX/requests.jsonl" \
  > "$W/authorize-all.txt" 2>&1 || true
grep -Eq '^[0-9]+: (ALLOW|DENY)' "$W/authorize-all.txt" || die "dwc authorize --requests failed on the Box example: $(head -3 "$W/authorize-all.txt")"
awk 'NR==FNR { if (match($0, /^[0-9]+: DENY invalid:/)) { split($0, a, ":"); bad[a[1]] = 1 } next }
     !(FNR in bad) && $0 != "" { print }' "$W/authorize-all.txt" "$BOX_EX/requests.jsonl" > "$W/requests.jsonl"
dropped=$(( $(grep -c . "$BOX_EX/requests.jsonl") - $(grep -c . "$W/requests.jsonl") ))
say "box-example: $(grep -c . "$W/requests.jsonl") requests ($dropped dropped: not schema-valid)"

WORKLOADS="box-example"
printf 'label=Box example 01-project-read\nstyle=example\npolicies=%s\nrequests=%s\ndropped=%s\n' \
  "$(grep -c '^ *\(permit\|forbid\)' "$W/policies.cedar")" "$(grep -c . "$W/requests.jsonl")" "$dropped" \
  > "$RES/box-example.meta"

# Decision counts.  dwc: 1,000,000 (its default) unless a calibration run (-n 300) says that would
# take more than ~3 s (dwc bench runs about 2.1 N decisions: warm-up N/10, a timed pass and a
# throughput pass); never below 500.  Each case runs BENCH_REPEAT times (the machine may be
# shared: single runs vary by tens of percent).  Cedar: capped by a time budget in the peer.
dwc_n() {
  ns=$($TO $PIN $DWC bench "$@" -n 300 2>/dev/null | sed -n 's/^ns_per_decision=//p')
  awk -v ns="${ns:-0}" -v q="$QUICK" 'BEGIN {
    n = ns > 0 ? int(1.5e9 / ns) : 10000
    if (n > 1000000) n = 1000000
    if (q == 1 && n > 20000) n = 20000
    if (n < 500) n = 500
    print n }'
}
# Requests per generated set: fewer for the big sets so that Cedar's warm-up pass stays short.
req_count() {
  case $1 in
    10|100|1000) echo 1000 ;;
    10000) echo 100 ;;
    *) echo 50 ;;
  esac
}

for style in $STYLES; do
  for n in $SIZES; do
    name=$style-$n
    m=$(req_count "$n")
    node tests/bench/gen.js --style "$style" --policies "$n" --requests "$m" --seed $SEED --out "$OUT/$name" ||
      die "generator failed for $name"
    printf 'label=%s, %s policies\nstyle=%s\npolicies=%s\nrequests=%s\n' "$style" "$n" "$style" "$n" "$m" \
      > "$RES/$name.meta"
    WORKLOADS="$WORKLOADS $name"
  done
done

# ---- runs (strictly one benchmark process at a time) ----
for name in $WORKLOADS; do
  W=$OUT/$name
  set -- -p "$W/policies.cedar" -s "$W/schema.cedarschema"
  [ -f "$W/entities.json" ] && set -- "$@" --entities "$W/entities.json"
  set -- "$@" --requests "$W/requests.jsonl"
  n=$(sed -n 's/^policies=//p' "$RES/$name.meta")

  # Per-request decisions from dwc authorize, compared with Cedar's by the peer.
  $TO $DWC authorize "$@" > "$RES/$name.authorize.txt" 2>&1 || true

  dn=0; [ "$HAVE_BENCH" = 1 ] && dn=$(dwc_n "$@")

  for mode in parsed json; do
    flag=""; [ "$mode" = json ] && flag=--from-json
    base=$RES/$name.$mode
    if [ "$HAVE_BENCH" = 1 ]; then
      say "$name ($mode): dwc bench -n $dn, $REPEAT runs"
      r=1
      while [ $r -le "$REPEAT" ]; do
        if ! $TO $PIN $DWC bench "$@" -n "$dn" $flag > "$base.dwc.$r" 2> "$base.dwc.err"; then
          say "warning: dwc bench failed on $name ($mode): $(head -2 "$base.dwc.err")"
          rm -f "$base.dwc.$r"; break
        fi
        r=$((r + 1))
      done
      # Keep the run with the median p50 as NAME.MODE.dwc.
      med=$(for f in "$base".dwc.[0-9]*; do
              [ -f "$f" ] && printf '%s %s\n' "$(sed -n 's/^p50_ns=//p' "$f")" "$f"
            done | sort -n | awk '{ a[NR] = $2 } END { if (NR) print a[int((NR + 1) / 2)] }')
      [ -n "$med" ] && cp "$med" "$base.dwc"
    fi
    if [ "$n" -gt "$PEER_MAX" ]; then
      echo "skipped: a single cedar-wasm run on $n policies takes well over a minute (preparsePolicySet alone needs about 70 s for 100,000 policies on 2 EPYC cores, then 0.5-1.5 s per decision); raise BENCH_PEER_MAX to run it anyway" \
        > "$base.peer.skip"
      say "$name ($mode): Cedar peer skipped (more than $PEER_MAX policies)"
      continue
    fi
    extra=""
    [ "$HAVE_BENCH" = 1 ] && [ -s "$base.dwc" ] && extra="--check-dwc $base.dwc"
    [ "$mode" = parsed ] && extra="$extra --check-authorize $RES/$name.authorize.txt"
    [ "$mode" = parsed ] && [ "$name" != box-example ] && extra="$extra --validate"
    if [ "$QUICK" = 1 ]; then pn="-n 2000 --budget-s 1 --min-n 50"; else pn="-n 1000000 --budget-s $PEER_BUDGET --min-n 100"; fi
    say "$name ($mode): Cedar peer"
    # shellcheck disable=SC2086
    if ! $TO $PEER "$@" $pn $flag $extra > "$base.peer" 2> "$base.peer.err"; then
      say "warning: Cedar peer failed on $name ($mode): $(head -2 "$base.peer.err")"
    fi
    grep -h WARNING "$base.peer.err" >&2 || true
  done
done

# ---- the keyed scaling target: keyed-10 and keyed-10,000 alternating, round by round ----
# The runs above are minutes apart, and this host moves between two speeds for seconds at a time
# (PERFORMANCE.md's stretch columns): one keyed-10 run here took 247 ns per decision and the next
# 153 ns.  So the growth is the median of each round's keyed-10,000 / keyed-10 mean, the two runs
# of a round back to back (~1 s each), as the budget's cost and dwd's ratio are measured.
: > "$RES/keyed-rounds.txt"
if [ "$HAVE_BENCH" = 1 ] && [ -f "$OUT/keyed-10/policies.cedar" ] && [ -f "$OUT/keyed-10000/policies.cedar" ]; then
  KR=$(( REPEAT > 5 ? REPEAT : 5 ))
  kn=1000000; [ "$QUICK" = 1 ] && kn=20000
  say "keyed-10 / keyed-10000: dwc bench -n $kn, $KR alternating rounds"
  r=1
  while [ $r -le "$KR" ]; do
    line="round=$r"
    for k in 10 10000; do
      W=$OUT/keyed-$k
      if $TO $PIN $DWC bench -p "$W/policies.cedar" -s "$W/schema.cedarschema" --entities "$W/entities.json" \
           --requests "$W/requests.jsonl" -n "$kn" > "$RES/keyed-round.out" 2> "$RES/keyed-round.err"; then
        line="$line keyed_${k}_mean_ns=$(sed -n 's/^ns_per_decision=//p' "$RES/keyed-round.out") keyed_${k}_p50_ns=$(sed -n 's/^p50_ns=//p' "$RES/keyed-round.out")"
      else say "warning: dwc bench failed on keyed-$k (round $r): $(head -2 "$RES/keyed-round.err")"; fi
    done
    echo "$line" >> "$RES/keyed-rounds.txt"
    r=$((r + 1))
  done
  rm -f "$RES/keyed-round.out" "$RES/keyed-round.err"
fi

section workloads
# ---- Box events through the stateful engine (dwc bench --engine) ----
# 01-project-read's requests as Box events, alone and with a count budget over 1 h appended
# (tests/bench/engine/); of the runs of each set the one with the median p50 goes into engine.txt.
# 200,000 decisions: the budget's window keeps every event of the run (47 MB of RSS at 200,000, 208 MB at 1,000,000:
# a kept event holds its identity and time only, runtime/engine_keep.c; 124 MB and over 1 GB when it held its record).
EV=tests/bench/engine/project-read.events.jsonl
if [ "$HAVE_BENCH" = 1 ] && "$DWC" bench --help | grep -q -- --engine; then
  cat "$BOX_EX/policy.dw" tests/bench/engine/budget-rule.dw > "$OUT/engine-budget.dw"
  en=200000; [ "$QUICK" = 1 ] && en=20000
  : > "$RES/engine.txt"
  # The two sets alternate, round by round (a run takes a fraction of a second): the budget's cost
  # is the median of each round's budget / plain, as dwd's is against the echo server, since a
  # shared machine's speed moves between runs more than the ratio does.
  ER=$(( REPEAT > 5 ? REPEAT : 5 ))
  say "engine (plain, budget): dwc bench --engine -n $en, $ER rounds"
  r=1
  while [ $r -le "$ER" ]; do
    for set in plain budget; do
      pol=$BOX_EX/policy.dw; [ "$set" = budget ] && pol=$OUT/engine-budget.dw
      $TO $PIN $DWC bench --engine -p "$pol" --requests "$EV" -n "$en" > "$RES/engine-$set.$r" 2> "$RES/engine-$set.err" ||
        rm -f "$RES/engine-$set.$r"
    done
    p1=$(sed -n 's/^p50_ns=//p' "$RES/engine-plain.$r" 2>/dev/null); p2=$(sed -n 's/^p50_ns=//p' "$RES/engine-budget.$r" 2>/dev/null)
    [ -n "$p1" ] && [ -n "$p2" ] && echo "pair=$r plain_p50_ns=$p1 budget_p50_ns=$p2" >> "$RES/engine.txt"
    r=$((r + 1))
  done
  for set in plain budget; do
    med=$(for f in "$RES/engine-$set".[0-9]*; do
            [ -f "$f" ] && printf '%s %s\n' "$(sed -n 's/^p50_ns=//p' "$f")" "$f"
          done | sort -n | awk '{ a[NR] = $2 } END { if (NR) print a[int((NR + 1) / 2)] }')
    [ -n "$med" ] && { printf 'set=%s ' "$set"; tr '\n' ' ' < "$med"; echo; } >> "$RES/engine.txt"
  done
  if [ ! -s "$RES/engine.txt" ]; then
    echo "dwc bench --engine failed: $(cat "$RES"/engine-*.err | head -c 300)" > "$RES/engine.skip"
    rm -f "$RES/engine.txt"
  fi
else echo "this dwc has no \`bench --engine\`" > "$RES/engine.skip"; fi

section engine
# ---- the sections other programs measure ----
# Each leaves NAME.{md,txt} in $RES, or NAME.skip saying why not: report.js needs one of the two.
LOAD_BENCH=${LOAD_BENCH:-build/bench/load_bench}
TEMPORAL_BENCH=${TEMPORAL_BENCH:-build/temporal_bench}
DWD_BIN=${DWD_BIN:-build/dwd}
DWD_LOAD=${DWD_LOAD:-build/bench/dwd_load}
if [ ! -d "$OUT/rbac-10000" ] && [ ! -d "$OUT/box-10000" ]; then
  echo "no 10,000-policy set was generated (BENCH_SIZES=\"$SIZES\")" > "$RES/load.skip"
elif [ -x "$LOAD_BENCH" ]; then
  say "compile and load times"
  BENCH_RESULTS=$RES tests/bench/artifact_report.sh "$DWC" "$LOAD_BENCH" > "$RES/load.md" 2> "$RES/load.err" ||
    echo "tests/bench/artifact_report.sh failed: $(head -c 300 "$RES/load.err")" > "$RES/load.skip"
else echo "$LOAD_BENCH is not built (make benchbins)" > "$RES/load.skip"; fi
section load
if [ -x "$TEMPORAL_BENCH" ]; then
  say "temporal rules: $TEMPORAL_BENCH"
  $TO "$TEMPORAL_BENCH" > "$RES/temporal.txt" 2> "$RES/temporal.err" ||
    echo "$TEMPORAL_BENCH failed: $(head -c 300 "$RES/temporal.err")" > "$RES/temporal.skip"
else echo "$TEMPORAL_BENCH is not built (make benchbins)" > "$RES/temporal.skip"; fi
section temporal
if [ -x "$DWD_BIN" ] && [ -x "$DWD_LOAD" ]; then
  say "dwd over the socket"
  if [ "$QUICK" = 1 ]; then : "${DWD_LOAD_SECONDS:=1}"; else : "${DWD_LOAD_SECONDS:=3}"; fi
  export DWD_LOAD_SECONDS
  # the Cedar figure of this run for the dwd section's comparison
  CEDAR_PEER=$RES/box-example.json.peer; export CEDAR_PEER
  tests/bench/dwd_report.sh "$SHARED" "$DWD_BIN" "$DWD_LOAD" > "$RES/dwd.md" 2> "$RES/dwd.err" ||
    echo "tests/bench/dwd_report.sh failed: $(tail -c 300 "$RES/dwd.err")" > "$RES/dwd.skip"
else echo "$DWD_BIN or $DWD_LOAD is not built (make benchbins)" > "$RES/dwd.skip"; fi

section dwd
printf 'loadavg_end=%s\nseconds=%s\nclock_ghz_end=%s\njiffies_end=%s\n' "$(loadavg)" "$(( $(date +%s) - T0 ))" \
  "$(clock_ghz)" "$(cpu_jiffies)" >> "$RES/run.meta"
# ---- report ----
node tests/bench/report.js --results "$RES" --out "$REPORT" --workloads "$WORKLOADS" \
  --dwc "$DWC_SRC" --have-bench "$HAVE_BENCH" --quick "$QUICK" --node-dir "$NODE_DIR" ||
  die "report.js did not write $REPORT (raw results in $RES)"
say "wrote $REPORT"
