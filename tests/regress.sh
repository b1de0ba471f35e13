#!/usr/bin/env bash
# Every input under tests/regress/ once crashed or misbehaved (found by a fuzzer
# or a differential run).  Each must now be handled cleanly: an answer or a
# diagnostic, never a crash (the suite runs this with the ASan build too).
# An artifact NAME.dwb with a NAME.expect beside it must be refused with that text: the
# file still reaches the check it was kept for (an instruction-set or format change
# would otherwise make it fail earlier, and silently test nothing).
# Minimised differential disagreements (tests/regress/diff-*/corpus-tests/, Cedar's test
# format) run through DW_CONFORMANCE and must now agree with Cedar on every dimension.
# Usage: tests/regress.sh DWC [DW_CONFORMANCE]
set -uo pipefail
DWC=$1; CONF=${2:-}
pass=0; fail=0
for d in tests/regress/diff-*/; do
    [ -n "$CONF" ] && [ -d "$d/corpus-tests" ] || continue
    out=$("$CONF" "$d" 2>&1); rc=$?
    if [ "$rc" -eq 0 ] && printf '%s\n' "$out" | tail -n 1 | grep -q ' 0 failed$'; then pass=$((pass + 1))
    else fail=$((fail + 1)); echo "FAIL $d (exit $rc)"; printf '%s\n' "$out" | grep -m5 FAIL; fi
done
for f in tests/regress/*; do
    case "$f" in
        *.cedar|*.dw) "$DWC" disasm -p "$f" >/dev/null 2>&1 ;;
        *.dwb)        out=$("$DWC" disasm -p "$f" 2>&1) ;;
        *) continue ;;
    esac
    rc=$?
    want="${f%.dwb}.expect"
    if [ "${f%.dwb}" != "$f" ] && [ -f "$want" ] && ! printf '%s\n' "$out" | grep -qF -- "$(cat "$want")"; then
        fail=$((fail + 1)); echo "FAIL $f: wanted \"$(cat "$want")\", got: $out"; continue
    fi
    # 0 = ok, 1/2 = a clean error; anything else (signals, sanitizer aborts) is a failure
    if [ "$rc" -le 2 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $f (exit $rc)"; fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
