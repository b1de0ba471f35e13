#!/usr/bin/env bash
# dwtest/run.sh DWC - `dwc test` (docs/TESTING.md): the Box examples as test
# files (tests/box_tests/, from tests/box_tests/generate.py) all pass; a
# wrong expectation fails with FILE:LINE and exit 1; every kind of invalid
# test file is an error on its line with exit 2 and runs nothing; each case
# has a fresh history; --format tap, junit (well-formed XML, checked with
# python3's parser) and json.  Ends with `N passed, N failed`.
set -u
DWC=$1
case $DWC in /*) ;; *) DWC=$(pwd)/$DWC ;; esac
cd "$(dirname "$0")/../.." || exit 1
. tests/harness.bash
P=$PWD/tests/box_tests/01-project-read/policy.dw
B=$PWD/tests/box_tests/06-http-request-budget/policy.dw
RD_='"action":"fs:read","kind":"request","input":{"path":"/dev/null","operation":{"__entity":{"type":"Box::FsReadOperation","id":"read_content"}}}'

# the Box examples: every case passes
run box "$DWC" test tests/box_tests
expect box 0 "59 passed, 0 failed"
n=$(grep -c '^PASS tests/box_tests/.*\.dwtest:[0-9]*: ' "$tmp/box.out")
[ "$n" = 59 ] && ok || bad "box: $n PASS lines with FILE:LINE, wanted 59"
# the generated files are what the script makes of the examples now
if [ -n "${DW_SHARED:-}" ] && [ -d "$DW_SHARED/examples/box" ]; then
    cp -r tests/box_tests "$tmp/gen"
    python3 "$tmp/gen/generate.py" "$DW_SHARED" >/dev/null
    diff -r tests/box_tests "$tmp/gen" >/dev/null && ok || bad "tests/box_tests differs from generate.py's output: rerun it"
fi

# a wrong expectation: FAIL with the case's line, the check's line, expected and actual
cat >"$tmp/wrong.dwtest" <<T
{"policy": "$P"}
{"case": "env contents are secret"}
{"action":"fs:read","kind":"request","input":{"path":"~/project/.env","operation":{"__entity":{"type":"Box::FsReadOperation","id":"read_content"}}},"expect":"deny","rules":["no_env"],"cause":"forbidden"}
{"case": "a wrong expectation"}
// the policy allows this read
{"action":"fs:read","kind":"request","input":{"path":"~/project/a.c","operation":{"__entity":{"type":"Box::FsReadOperation","id":"read_content"}}},"expect":"deny","rules":["no_env"]}
T
run wrong "$DWC" test "$tmp/wrong.dwtest"
expect wrong 1 "1 passed, 1 failed"
expect wrong 1 "FAIL $tmp/wrong.dwtest:4: a wrong expectation"
expect wrong 1 "$tmp/wrong.dwtest:6: expected deny [no_env], got allow [project_read] permitted"
expect wrong 1 "PASS $tmp/wrong.dwtest:2: env contents are secret"

# junit: well-formed XML (names with markup and a control character), counts, file and line
printf '{"policy": "%s"}\n{"case": "<&\\"quotes\\u0001\\">"}\n{"action":"fs:read","kind":"request","input":{"path":"/dev/null","operation":{"__entity":{"type":"Box::FsReadOperation","id":"read_content"}}},"expect":"deny"}\n' "$P" >"$tmp/markup.dwtest"
run junit "$DWC" test --format junit "$tmp/wrong.dwtest" "$tmp/markup.dwtest"
expect junit 1 "<testsuites"
if python3 - "$tmp/junit.out" "$tmp" <<'PY'
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
assert r.tag == 'testsuites' and r.get('tests') == '3' and r.get('failures') == '2', r.attrib
cases = r.findall('testsuite/testcase')
assert [c.get('line') for c in cases] == ['2', '4', '2'], [c.attrib for c in cases]
assert cases[1].find('failure').get('message').startswith(sys.argv[2] + '/wrong.dwtest:6: expected deny'), cases[1].find('failure').attrib
assert cases[2].get('name').startswith('<&"quotes'), cases[2].get('name')
assert cases[0].find('failure') is None
PY
then ok; else bad "junit: not the expected XML"; head -20 "$tmp/junit.out"; fi
# an invalid file in junit: still a well-formed document, with an <error>
printf '{"policy": "%s"}\n{"case": "x"}\n{"action":"fs:raed","kind":"request","input":{},"expect":"allow"}\n' "$P" >"$tmp/typo.dwtest"
run junit_bad "$DWC" test --format junit "$tmp/typo.dwtest" "$tmp/wrong.dwtest"
if [ "$(cat "$tmp/junit_bad.rc")" = 2 ] && python3 -c '
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
e = r.find("testsuite/testcase/error")
assert r.get("errors") == "1" and e is not None and ":3: error: action Box::Action::\"fs:raed\"" in e.get("message"), ET.tostring(r)' "$tmp/junit_bad.out"
then ok; else bad "junit with an invalid file"; cat "$tmp/junit_bad.out" | head; fi

# tap: the plan, ok / not ok with FILE:LINE, a YAML block naming the failing line
run tap "$DWC" test --format tap "$tmp/wrong.dwtest"
expect tap 1 "TAP version 13"
expect tap 1 "1..2"
expect tap 1 "ok 1 - env contents are secret ($tmp/wrong.dwtest:2)"
expect tap 1 "not ok 2 - a wrong expectation ($tmp/wrong.dwtest:4)"
expect tap 1 "    - line: 6"
# json: parses, with the counts and each check's expected and actual
run json "$DWC" test --format json "$tmp/wrong.dwtest"
if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["passed"] == 1 and d["failed"] == 1 and d["invalid"] == 0
c = d["files"][0]["cases"][1]
assert c["line"] == 4 and not c["ok"] and c["checks"][0]["line"] == 6
assert c["checks"][0]["expected"] == {"verdict": "deny", "rules": ["no_env"]}, c
assert c["checks"][0]["actual"]["rules"] == ["project_read"] and c["checks"][0]["actual"]["cause"] == "permitted"' "$tmp/json.out"
then ok; else bad "json: not the expected document"; head -c 600 "$tmp/json.out"; fi

# every case starts from an empty history: the budget case's responses are not the next case's
R='{"action":"http:request","kind":"response","input":{"host":"api.github.com","port":443,"method":"GET","path":"/","body_bytes":1,"intercepted":true},"output":{"status":200}}'
Q='{"action":"http:request","kind":"request","input":{"host":"api.github.com","port":443,"method":"GET","path":"/","body_bytes":0,"intercepted":true}'
cat >"$tmp/fresh.dwtest" <<T
{"policy": "$B", "schema": "box"}
{"case": "three responses in ten minutes: over budget"}
$R
$R
$R
$Q,"expect":"deny","rules":["github_budget"],"cause":"forbidden"}
{"case": "a new case: an empty history"}
$Q,"expect":"allow","rules":["github_hosts"]}
T
run fresh "$DWC" test "$tmp/fresh.dwtest"
expect fresh 0 "2 passed, 0 failed"
# times are implied 1 s apart: a burst of 4 attempts in 4 s trips the 60 s burst cap
printf '{"policy": "%s"}\n{"case": "burst"}\n%s\n%s\n%s\n%s,"expect":"deny","rules":["github_burst"]}\n' "$B" \
    "$Q,\"expect\":\"allow\"}" "$Q,\"expect\":\"allow\"}" "$Q,\"expect\":\"allow\"}" "$Q" >"$tmp/burst.dwtest"
run burst "$DWC" test "$tmp/burst.dwtest"
expect burst 0 "1 passed, 0 failed"
# --explain: a failed check says why, down to the events behind the count
printf '{"policy": "%s"}\n{"case": "a fourth request after three responses (wrong)"}\n%s\n%s\n%s\n%s,"expect":"allow"}\n' "$B" "$R" "$R" "$R" "$Q" >"$tmp/why.dwtest"
run why "$DWC" test --explain "$tmp/why.dwtest"
expect why 1 "$tmp/why.dwtest:6: expected allow, got deny [github_budget] forbidden"
expect why 1 "      |   temporal leaf 0 = true (the decision used true)"
for k in 0 1 2; do expect why 1 "|         event $k ($tmp/why.dwtest:$((k + 3))): 2025-01-01T00:00:0${k}Z Box::Action::\"http:request\"::response"; done
run why_json "$DWC" test --explain --format json "$tmp/why.dwtest"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["files"][0]["cases"][0]["checks"][0]; assert "= 3, over 3 rows" in c["explanation"]' "$tmp/why_json.out" && ok || bad "why_json: no explanation"
# a request refused at the gate, then one decided: each failed check gets its own account
G='{"action":"fs:read","kind":"request","input":{"path":"~/project/a.c"},"expect":"allow"}'
printf '{"policy": "%s"}\n{"case": "gate then decision"}\n%s\n{%s,"expect":"deny"}\n' "$P" "$G" "$RD_" >"$tmp/gate.dwtest"
run gate "$DWC" test --explain "$tmp/gate.dwtest"
expect gate 1 "      | no policy ran: the event was refused before the decision"
expect gate 1 "      | dev_null (permit, line 16): satisfied"
run why_pass "$DWC" test --explain "$tmp/fresh.dwtest"
expect why_pass 0 "2 passed, 0 failed"
grep -q '|' "$tmp/why_pass.out" && bad "why_pass: an explanation for a passing check" || ok
# a plain Box trace is one implicit case, with -p
run trace "$DWC" test -p tests/box_tests/06-http-request-budget/policy.dw --schema box \
    <(grep -v '^//\|"policy"\|"case"' tests/box_tests/06-http-request-budget/trace.dwtest)
expect trace 0 "1 passed, 0 failed"
# a directory: *.dwtest below it, nested, sorted; other files ignored
mkdir -p "$tmp/dir/sub"; cp "$tmp/fresh.dwtest" "$tmp/dir/b.dwtest"; cp "$tmp/burst.dwtest" "$tmp/dir/sub/a.dwtest"
cp "$tmp/wrong.dwtest" "$tmp/dir/not-a-test.jsonl"
run dir "$DWC" test "$tmp/dir"
expect dir 0 "3 passed, 0 failed"
[ "$(grep -c '^PASS' "$tmp/dir.out")" = 3 ] && ok || bad "dir: wanted 3 cases"

# invalid test files: exit 2, FILE:LINE, nothing of the file runs
invalid() {   # invalid NAME LINE TEXT CONTENT...
    local n=$1 line=$2 text=$3; shift 3
    printf '%s\n' "$@" >"$tmp/$n.dwtest"
    run "$n" "$DWC" test "$tmp/$n.dwtest"
    expect "$n" 2 "$tmp/$n.dwtest:$line: error: "
    expect "$n" 2 "$text"
    if grep -q '^PASS\|^FAIL' "$tmp/$n.out"; then bad "$n: an invalid file ran cases"; else ok; fi
}
H="{\"policy\": \"$P\"}"
RD='"action":"fs:read","kind":"request","input":{"path":"/dev/null","operation":{"__entity":{"type":"Box::FsReadOperation","id":"read_content"}}}'
invalid bad_json 3 "" "$H" '{"case": "x"}' '{"action": '
invalid bad_member 3 'unknown member "expcet"' "$H" '{"case": "x"}' "{$RD,\"expcet\":\"allow\"}"
invalid bad_action 3 'action Box::Action::"fs:raed" is not declared' "$H" '{"case": "x"}' '{"action":"fs:raed","kind":"request","input":{},"expect":"allow"}'
invalid bad_time 3 '"time" "yesterday" is not RFC 3339' "$H" '{"case": "x"}' "{\"time\":\"yesterday\",$RD,\"expect\":\"allow\"}"
invalid back_time 4 'is not after line 3' "$H" '{"case": "x"}' "{\"time\":\"2025-01-01T00:00:10Z\",$RD,\"expect\":\"allow\"}" "{\"time\":\"2025-01-01T00:00:05Z\",$RD,\"expect\":\"allow\"}"
invalid bad_rule 3 '"rules" names "dev_nul", which is not a rule of' "$H" '{"case": "x"}' "{$RD,\"expect\":\"allow\",\"rules\":[\"dev_nul\"]}"
expect bad_rule 2 '(did you mean "dev_null"?)'
invalid bad_cause 3 '"cause" "forbiden" is not a cause' "$H" '{"case": "x"}' "{$RD,\"expect\":\"deny\",\"cause\":\"forbiden\"}"
invalid no_expect 3 'needs "expect"' "$H" '{"case": "x"}' "{$RD}"
invalid no_check 2 'case "x" checks nothing' "$H" '{"case": "x"}' '{"case": "y"}' "{$RD,\"expect\":\"allow\"}"
invalid dup_case 4 'case "x" is named twice' "$H" '{"case": "x"}' "{$RD,\"expect\":\"allow\"}" '{"case": "x"}' "{$RD,\"expect\":\"allow\"}"
invalid late_header 4 'comes first' "$H" '{"case": "x"}' "{$RD,\"expect\":\"allow\"}" "$H"
invalid two_headers 2 'has one' "$H" "$H" '{"case": "x"}' "{$RD,\"expect\":\"allow\"}"
invalid no_cases 1 'no test cases' "$H"
invalid case_member 2 'unknown member "name"' "$H" '{"case": "x", "name": "y"}'
invalid header_member 1 'unknown member "polcy"' "{\"policy\": \"$P\", \"polcy\": 1}"
invalid no_policy 1 'no policy set' '{"case": "x"}' "{$RD,\"expect\":\"allow\"}"
printf 'permit (principal, action, resource) when { nope };\n' >"$tmp/broken.dw"
invalid broken_policy 2 'cannot load the policy set' "{\"policy\": \"$tmp/broken.dw\"}" '{"case": "x"}' "{$RD,\"expect\":\"allow\"}"
expect broken_policy 2 "broken.dw:1:"
# an invalid file does not stop the others; the exit status says 2
run mixed "$DWC" test "$tmp/bad_action.dwtest" "$tmp/fresh.dwtest"
expect mixed 2 "2 passed, 0 failed, 1 invalid test file"
# usage
run fmt "$DWC" test --format xml tests/box_tests
expect fmt 2 "--format must be human, tap, junit or json"
run none "$DWC" test "$tmp/nothing-here"
expect none 2 "nothing-here"
mkdir -p "$tmp/empty"
run empty "$DWC" test "$tmp/empty"
expect empty 2 "no *.dwtest files found"

finish
