#!/usr/bin/env bash
# explain/run.sh DWC - `dwc explain`: every decision line of every Box example
# trace is explained with its expected verdict holding and no disagreement
# between the re-evaluation and the decision (human and JSON); a count
# budget's deny lists the events behind the count (issue 19's Done-when), a
# sum its amounts; scopes, when/unless conditions, a gate refusal, a .dwb
# (no conditions), EVENT inline, from a file and stdin; invalid input exits 2;
# disasm prints each leaf's formula.  Ends with `N passed, N failed`.
set -u
DWC=$1
case $DWC in /*) ;; *) DWC=$(pwd)/$DWC ;; esac
cd "$(dirname "$0")/../.." || exit 1
. tests/harness.bash
B=tests/box_tests

# every decision line of every example trace: explained, its expectation holds, no disagreement
for d in "$B"/*/; do
    [ -f "$d/trace.dwtest" ] || continue
    grep -v '^//\|^{"policy"\|^{"case"' "$d/trace.dwtest" >"$tmp/trace.jsonl"
    n=0; bads=0
    while IFS= read -r line; do
        n=$((n + 1))
        case $line in *'"kind":"request"'*) ;; *) continue ;; esac
        run x "$DWC" explain -p "$d/policy.dw" --trace "$tmp/trace.jsonl" --line "$n"
        if [ "$(cat "$tmp/x.rc")" != 0 ] || ! grep -q ': holds$' "$tmp/x.out" || grep -q DISAGREEMENT "$tmp/x.out"; then
            bads=$((bads + 1)); echo "  $(basename "$d") line $n:"; head -4 "$tmp/x.out" "$tmp/x.err"; fi
        run xj "$DWC" explain -p "$d/policy.dw" --trace "$tmp/trace.jsonl" --line "$n" --format json
        if ! python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["expectation_holds"] and d["disagreement"] is None' "$tmp/xj.out"; then
            bads=$((bads + 1)); echo "  $(basename "$d") line $n: json"; head -c 300 "$tmp/xj.out"; fi
    done <"$tmp/trace.jsonl"
    [ "$bads" = 0 ] && ok || bad "$(basename "$d"): $bads decision lines not explained cleanly"
done

# the count budget's deny (06, line 12): the three responses behind the count, with their times
T6=$tmp/t6.jsonl
grep -v '^//\|^{"policy"\|^{"case"' "$B/06-http-request-budget/trace.dwtest" >"$T6"
run budget "$DWC" explain -p "$B/06-http-request-budget/policy.dw" --trace "$T6" --line 12
expect budget 0 "verdict: DENY [github_budget] forbidden"
expect budget 0 "github_budget (forbid, line 17): satisfied, determining"
expect budget 0 "temporal leaf 0 = true (the decision used true)"
expect budget 0 'count for (t). where formerly within 10m ((Box::Action::"http:request"::response{ input.host: "api.github.com" } && tp(t))) = 3, over 3 rows:'
for tl in 12:00:01/2 12:00:11/4 12:02:01/11; do
    expect budget 0 "($T6:${tl#*/}): 2025-06-02T${tl%/*}Z Box::Action::\"http:request\"::response"; done
[ "$(grep -c '::response {' "$tmp/budget.out")" = 3 ] && ok || bad "budget: wanted exactly 3 response events listed"
expect budget 0 "github_burst (forbid, line 29): not satisfied"
expect budget 0 "when #2: false  (temporal leaf 1)"
run budget_json "$DWC" explain -p "$B/06-http-request-budget/policy.dw" --trace "$T6" --line 12 --format json
if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
p = [p for p in d["policies"] if p["name"] == "github_budget"][0]
g = p["leaves"][0]["aggregates"][0]
assert d["verdict"] == "deny" and d["rules"] == ["github_budget"] and p["determining"]
assert g["value"] == "3" and [(e["time"], e["line"]) for r in g["rows"] for e in r["events"]] == \
    [("2025-06-02T12:00:01Z", 2), ("2025-06-02T12:00:11Z", 4), ("2025-06-02T12:02:01Z", 11)], g' "$tmp/budget_json.out"
then ok; else bad "budget json"; head -c 500 "$tmp/budget_json.out"; fi
# the byte budget (07): the sum's rows carry the amounts and their events
grep -v '^//\|^{"policy"\|^{"case"' "$B/07-upload-byte-budget/trace.dwtest" >"$tmp/t7.jsonl"
run sum "$DWC" explain -p "$B/07-upload-byte-budget/policy.dw" --trace "$tmp/t7.jsonl"
expect sum 0 "sum b for (b, t). where formerly within 1h"
expect sum 0 "= 750, over 2 rows:"
# rows in the order of the history: 450 bytes at 14:20:03, then 300 at 15:00:05
grep -A4 '= 750, over 2 rows:' "$tmp/sum.out" | grep -E '^      b = ' | sed 's/, t = .*//' | tr -d ' ' | tr '\n' ' ' >"$tmp/sum.rows"
[ "$(cat "$tmp/sum.rows")" = "b=450 b=300 " ] && ok || bad "sum: rows not in history order: $(cat "$tmp/sum.rows")"
# unless (05): a forbid unless a passing run; its unless-body is false on an empty history
run unless "$DWC" explain -p "$B/05-tests-before-release/policy.dw" \
    '{"action":"fs:write","kind":"request","input":{"path":"~/project/RELEASE.md","operation":{"__entity":{"type":"Box::FsWriteOperation","id":"write_content"}}}}'
expect unless 0 "tests_before_release (forbid, line"
expect unless 0 "unless #2: false  (temporal leaf 0)"
expect unless 0 "temporal leaf 0 = false (the decision used false): formerly within 1h"
# a scope that does not match, a false condition, inline / file / stdin EVENT
E='{"action":"fs:write","kind":"request","input":{"path":"/dev/null","operation":{"__entity":{"type":"Box::FsWriteOperation","id":"write_content"}}},"expect":"allow","rules":["dev_null"]}'
run inline "$DWC" explain -p "$B/01-project-read/policy.dw" "$E"
expect inline 0 "verdict: ALLOW [dev_null] permitted"
expect inline 0 "expected: allow [dev_null]: holds"
expect inline 0 "no_env (forbid, line 22): not satisfied"
expect inline 0 "  scope: does not match"
printf '%s\n' "$E" >"$tmp/event.json"
run file "$DWC" explain -p "$B/01-project-read/policy.dw" "$tmp/event.json"
cmp -s <(sed 1d "$tmp/inline.out") <(sed 1d "$tmp/file.out") && ok || bad "EVENT from a file differs from inline"
run stdin "$DWC" explain -p "$B/01-project-read/policy.dw" - <"$tmp/event.json"
cmp -s <(sed 1d "$tmp/inline.out") <(sed 1d "$tmp/stdin.out") && ok || bad "EVENT from stdin differs from inline"
# refused at the gate: no policy ran
run gate "$DWC" explain -p "$B/01-project-read/policy.dw" '{"action":"fs:read","kind":"request","input":{"path":"~/project/a.c"}}'
expect gate 0 "no policy ran: the event was refused before the decision"
expect gate 0 'required attribute "operation" is missing'
# EVENT after a whole trace
run after "$DWC" explain -p "$B/06-http-request-budget/policy.dw" --trace "$T6" \
    '{"action":"http:request","kind":"request","input":{"host":"api.github.com","port":443,"method":"GET","path":"/","body_bytes":0,"intercepted":true}}'
expect after 0 "verdict: ALLOW [github_hosts] permitted"
expect after 0 "= 2, over 2 rows:"
# a compiled artifact: values and leaves, no conditions
"$DWC" compile --schema box "$B/06-http-request-budget/policy.dw" -o "$tmp/p.dwb" >/dev/null 2>&1
run dwb "$DWC" explain -p "$tmp/p.dwb" --trace "$T6" --line 12
expect dwb 0 "conditions are shown only for a policy set compiled from source"
expect dwb 0 "over 3 rows:"
# an erroring condition (overflow) and a condition not reached after a false one
cat >"$tmp/err.dw" <<'P'
@id("overflowing")
permit (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "ls" }
when { context.input.arg_count * 9223372036854775807 > 1 };

@id("two_conditions")
permit (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "make" }
unless { context.input.arg_count > 3 };
P
run err "$DWC" explain -p "$tmp/err.dw" '{"action":"shell:exec","kind":"request","input":{"command":"ls -l x","program":"ls","arg1":"-l","arg_count":2,"cwd":"~"}}'
expect err 0 "verdict: DENY [] internal_fault  (overflowing errored: integer overflow)"
expect err 0 "overflowing (permit, line 2): ERROR (integer overflow)"
expect err 0 "when #2: error (integer overflow)"
expect err 0 "unless #2: not reached"
# invalid input: exit 2 with the line
run notdecision "$DWC" explain -p "$B/06-http-request-budget/policy.dw" --trace "$T6" --line 2
expect notdecision 2 ":2: error: --line 2 is not a decision line"
run noline "$DWC" explain -p "$B/06-http-request-budget/policy.dw" --trace "$T6" --line 99
expect noline 2 "no line 99 in the trace"
run badevent "$DWC" explain -p "$B/01-project-read/policy.dw" '{"action":"fs:raed","kind":"request","input":{}}'
expect badevent 2 'action Box::Action::"fs:raed" is not declared'
run response "$DWC" explain -p "$B/01-project-read/policy.dw" '{"action":"fs:read","kind":"response","input":{}}'
expect response 2 "not a decision kind"
run usage "$DWC" explain -p "$B/01-project-read/policy.dw"
expect usage 2 "usage: dwc explain"
# disasm: every leaf's formula
run disasm "$DWC" disasm "$B/07-upload-byte-budget/policy.dw"
expect disasm 0 'LEAF        temporal leaf 0: exists (total). ((sum b for (b, t). where formerly within 1h'
# an artifact keeps no names: slots print as vN
run disasm_dwb "$DWC" disasm "$tmp/p.dwb"
expect disasm_dwb 0 'LEAF        temporal leaf 0: exists (v0). ((count for (v1). where formerly within 10m'

finish
