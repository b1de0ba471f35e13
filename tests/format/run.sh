#!/usr/bin/env bash
# tests/format/run.sh DWC SHARED [SAMPLE] - `dwc format` (issue 17).
#  1. Cedar text: byte-identical to Cedar's own formatter (cedar-wasm's formatPolicies), every
#     SAMPLE-th Cedar policy set of the corpus (build/corpus) and every .cedar file of the
#     repository and SHARED (tests/format/diff.js; SAMPLE 1 = all: `make formatdiff`).
#  2. Every .dw and .cedar file of the repository and SHARED that parses: formatting succeeds
#     (its own check: the result parses to the same policy set), is idempotent, and
#     `--check` says 0 on the result, 1 on an unformatted text.
#  3. Line width: every 61st code point measured as Cedar measures it (tests/format/widths.js).
#  4. The CLI: --write (in place, atomic), stdin, options, `cedar format` exit codes.
# Ends with `N passed, N failed`.
set -u
DWC=$1; SHARED=$2; SAMPLE=${3:-40}
case $DWC in /*) ;; *) DWC=$(pwd)/$DWC ;; esac
cd "$(dirname "$0")/../.." || exit 1
. tests/harness.bash

# 1. the differential test against Cedar
MOD=$(tests/diff/cedar_wasm.sh) || { bad "cedar-wasm could not be installed"; MOD=; }
[ -d build/corpus/corpus-tests ] || make --no-print-directory build/corpus/.unpacked >/dev/null
out=$(node tests/format/diff.js --dwc "$DWC" --module "$MOD" --sample "$SAMPLE" build/corpus/corpus-tests 2>&1)
echo "$out" | tail -12
p=$(echo "$out" | tail -1 | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p')
[ -n "$p" ] || { bad "corpus differential did not finish"; p="0 0"; }
pass=$((pass + ${p% *})); fail=$((fail + ${p#* }))
out=$(node tests/format/diff.js --dwc "$DWC" --module "$MOD" build/corpus/tests build/corpus/sample-data . "$SHARED" 2>&1)
echo "$out" | tail -12
p=$(echo "$out" | tail -1 | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p')
[ -n "$p" ] || { bad "repository differential did not finish"; p="0 0"; }
pass=$((pass + ${p% *})); fail=$((fail + ${p#* }))

# 2. every policy file that parses: sound (checked inside), idempotent, --check agrees
n=0
while IFS= read -r f; do
    "$DWC" format "$f" >"$tmp/a" 2>"$tmp/err"; rc=$?
    if [ $rc = 2 ] && ! grep -q "cannot format\|internal error" "$tmp/err"; then continue; fi   # not a valid policy set
    n=$((n + 1))
    if [ $rc != 0 ]; then bad "$f: $(head -1 "$tmp/err")"; continue; fi
    "$DWC" format "$tmp/a" >"$tmp/b" 2>"$tmp/err" || { bad "$f: its formatted text does not format: $(head -1 "$tmp/err")"; continue; }
    cmp -s "$tmp/a" "$tmp/b" || { bad "$f: not idempotent"; diff "$tmp/a" "$tmp/b" | head -6; continue; }
    # --check: on every 10th file (its exit code follows the same comparison)
    if [ $((n % 10)) = 0 ]; then
        "$DWC" format --check "$tmp/a" 2>/dev/null || { bad "$f: --check refuses formatted text"; continue; }
        if ! cmp -s "$f" "$tmp/a"; then
            "$DWC" format --check "$f" 2>/dev/null; rc=$?
            [ $rc = 1 ] || { bad "$f: --check on unformatted text exits $rc, not 1"; continue; }
        fi
    fi
    ok
done < <(find . "$SHARED" \( -name '*.dw' -o -name '*.cedar' \) -not -path './build/*' -not -path '*/node_modules/*' | sort)
echo "$n policy files: formatted, idempotent, --check consistent"

# line width: characters measured as Cedar measures them (every 61st code point; all: --step 1)
out=$(node tests/format/widths.js --dwc "$DWC" --module "$MOD" 2>&1)
echo "$out" | tail -3
p=$(echo "$out" | tail -1 | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p')
[ -n "$p" ] || { bad "width test did not finish"; p="0 0"; }
pass=$((pass + ${p% *})); fail=$((fail + ${p#* }))

# 4. the command line
printf 'permit(principal,action,resource) when { context.a // keep me\n && true };\n' >"$tmp/p.cedar"
want=$("$DWC" format <"$tmp/p.cedar")
if [ "$want" = "$("$DWC" format - <"$tmp/p.cedar")" ] && grep -q "// keep me" <<<"$want"; then ok; else bad "stdin: $want"; fi
cp "$tmp/p.cedar" "$tmp/w.cedar"
"$DWC" format --write "$tmp/w.cedar" && "$DWC" format --check "$tmp/w.cedar" && [ "$(cat "$tmp/w.cedar")" = "$want" ] && ok || bad "--write"
ls "$tmp"/w.cedar.fmt.* >/dev/null 2>&1 && bad "--write left a temporary file" || ok
"$DWC" format --check "$tmp/p.cedar" >"$tmp/out" 2>&1; rc=$?
[ $rc = 1 ] && grep -q "not formatted" "$tmp/out" && ok || bad "--check on unformatted: exit $rc"
printf 'permit(principal == User::"a", action, resource) when { context.aaaaaaaaaa && context.bbbbbbbbbbbb };\n' >"$tmp/l.cedar"
"$DWC" format -l 30 -i 4 "$tmp/l.cedar" >"$tmp/out"
grep -q '^    principal == User::"a",$' "$tmp/out" && grep -q '^    context.aaaaaaaaaa &&$' "$tmp/out" && ok || bad "-l 30 -i 4: $(cat "$tmp/out")"
printf 'permit(principal, action, resource) when { 1 < 2 < 3 };\n' >"$tmp/bad.cedar"
"$DWC" format "$tmp/bad.cedar" >/dev/null 2>&1; rc=$?; [ $rc = 2 ] && ok || bad "invalid input: exit $rc, not 2"
cmp -s "$tmp/bad.cedar" <(printf 'permit(principal, action, resource) when { 1 < 2 < 3 };\n') && ok || bad "invalid input was changed"
"$DWC" format --write "$tmp/bad.cedar" >/dev/null 2>&1; [ $? = 2 ] && cmp -s "$tmp/bad.cedar" <(printf 'permit(principal, action, resource) when { 1 < 2 < 3 };\n') && ok || bad "--write changed an invalid file"
# as `cedar`: Cedar's CLI's shape: the text is printed with --check too; a failure exits 1, a usage error 2
ln -sf "$DWC" "$tmp/cedar"
"$tmp/cedar" format --policies "$tmp/p.cedar" --check >"$tmp/out" 2>/dev/null; rc=$?
[ $rc = 1 ] && [ "$(cat "$tmp/out")" = "$want" ] && ok || bad "cedar format --check (unformatted): exit $rc"
"$tmp/cedar" format --policies "$tmp/w.cedar" --check >/dev/null 2>&1 && ok || bad "cedar format --check (formatted) fails"
"$tmp/cedar" format -p "$tmp/bad.cedar" >"$tmp/out" 2>&1; rc=$?; [ $rc = 1 ] && ok || bad "cedar format on invalid input: exit $rc, not 1"
"$tmp/cedar" format --check --write -p "$tmp/w.cedar" >/dev/null 2>&1; [ $? = 2 ] && ok || bad "cedar format --check --write: not a usage error (2)"
"$tmp/cedar" format -p "$tmp/nonexistent.cedar" >/dev/null 2>&1; [ $? = 1 ] && ok || bad "cedar format on a missing file: not 1"
finish
