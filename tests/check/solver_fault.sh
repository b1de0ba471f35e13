#!/bin/sh
# A solver failure never takes `dwc check` down (issue 22, compiler/smt_worker.c):
# DWC_SOLVER_FAULT makes the worker of the Nth query crash (abort), hang or
# exhaust its memory; the run must still finish with its normal exit status and
# valid JSON, count the query unknown, report the rule it was about as
# dw-proof-unknown with the worker's fate as the reason, and claim nothing the
# fault-free run does not claim.
#   tests/check/solver_fault.sh [DWC]
set -u
here=$(cd "$(dirname "$0")" && pwd)
dwc=${1:-$here/../../build/dwc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$here" || exit 1
pass=0 fail=0 extra=
case_=docs_shadowed
# one process (-j 1): the Nth query is the run's Nth, not each environment process's
args="$(cat $case_.args) --format json --timeout 500 -j 1"

# compare.py REF OUT WANT_REASON: OUT is valid JSON, has an unknown query, and its
# findings are REF's, except that rules may turn dw-proof-unknown (naming WANT_REASON
# when given) -- a failed query never adds a claim
cat > "$tmp/compare.py" <<'PY'
import json, sys
ref, out = (json.load(open(p)) for p in sys.argv[1:3])
want = sys.argv[3] if len(sys.argv) > 3 else ""
# a claim is a rule about a policy (a failed breakdown query may name other rules in the message)
key = lambda f: (f["rule"], f.get("policy_index"))
base = {key(f) for f in ref["findings"]}
errs = []
fired = out["stats"].get("unknown", 0) >= 1
unknown = [f for f in out["findings"] if f["rule"] == "dw-proof-unknown"]
for f in out["findings"]:
    if f["rule"] != "dw-proof-unknown" and key(f) not in base: errs.append("new claim: " + f["message"])
if want and not any(want in f["message"] for f in unknown): errs.append("no dw-proof-unknown naming '%s'" % want)
if not fired and want: errs.append("no query counted unknown")
print("; ".join(errs))
# 2: the fault never fired (N is past the last query that reached a worker)
sys.exit(1 if errs else 0 if fired else 2)
PY

check() {   # check NAME EXPECTED_REASON ENV...
    name=$1 want=$2
    shift 2
    # shellcheck disable=SC2086
    env "$@" "$dwc" check $case_.dw $args $extra > "$tmp/out.json" 2> "$tmp/err"
    rc=$?
    if [ $rc -ne "$ref_rc" ]; then
        echo "FAIL $name: exit status $rc (fault-free: $ref_rc)"; head -3 "$tmp/err"; fail=$((fail + 1)); return
    fi
    r=$(python3 "$tmp/compare.py" "$tmp/ref.json" "$tmp/out.json" "$want" 2>&1)
    case $? in
    0) pass=$((pass + 1));;
    2) fired=0;;
    *) echo "FAIL $name: $r"; fail=$((fail + 1));;
    esac
}

# shellcheck disable=SC2086
"$dwc" check $case_.dw $args > "$tmp/ref.json" 2>/dev/null
ref_rc=$?

# the first query is about a rule: its finding turns unknown, with the reason
check crash:1 "the solver worker crashed (signal 6" DWC_SOLVER_FAULT=crash:1
check hang:1 "gave no answer within 2000 ms and was killed" DWC_SOLVER_FAULT=hang:1
# (an allocation failure aborts, or under ASan exits with its report)
check oom:1 "the solver worker" DWC_SOLVER_FAULT=oom:1 DWC_SOLVER_MEM_MB=64
# --budget: the hung first query (killed after 2 s) spends the run's 1 s, so
# every later query is not asked, and its rule is unknown for that reason
extra="--budget 1"
check budget "the run's --budget of 1 s was spent" DWC_SOLVER_FAULT=hang:1
extra=
# -j 2: an environment's process that crashes has its environment proved
# again in the parent: the findings are the fault-free run's
for k in 0 3; do
    # shellcheck disable=SC2086
    DWC_PROVE_ENV_FAULT=$k "$dwc" check $case_.dw $args -j 2 > "$tmp/par.json" 2>/dev/null
    if python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda d: [(f["rule"], f.get("policy_index"), f["message"]) for f in d["findings"]]
sys.exit(0 if key(a) == key(b) else 1)' "$tmp/ref.json" "$tmp/par.json"; then pass=$((pass + 1)); else echo "FAIL environment process $k crashed: findings differ"; fail=$((fail + 1)); fi
done
# a crash at every later query: the run completes, claiming nothing new
n=2 fired=1
while [ $fired = 1 ] && [ $n -le 200 ]; do
    check "crash:$n" "" DWC_SOLVER_FAULT=crash:$n
    n=$((n + 1))
done
if [ $n -le 3 ]; then echo "FAIL: the fault-free run asked fewer than two queries"; fail=$((fail + 1)); fi
echo "solver faults: $pass passed, $fail failed"
[ $fail -eq 0 ]
