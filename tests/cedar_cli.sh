#!/usr/bin/env bash
# cedar_cli.sh DWC - dwc standing in for Cedar's CLI (issue 17): templates
# and `-k` links (a linked policy decides under its link id, an unlinked
# template is ignored, a bad link is refused), Cedar's @id naming of
# templates; entities and requests parsed as Cedar does under a schema.
# Fixtures in tests/cedar_cli/.  Ends with `N passed, N failed`.
set -u
DWC=$1
case $DWC in /*) ;; *) DWC=$(pwd)/$DWC ;; esac
cd "$(dirname "$0")/cedar_cli" || exit 1
. ../harness.bash     # its run/expect are redefined below with this script's own signature
# expect NAME RC WANT CMD...: exit status RC and stdout+stderr containing WANT (a fixed string)
expect() {
    local n=$1 rc=$2 want=$3; shift 3
    local out got
    out=$("$@" 2>&1); got=$?
    if [ "$got" = "$rc" ] && grep -qF -- "$want" <<<"$out"; then ok
    else bad "$n: wanted exit $rc and \"$want\", got exit $got:"; head -5 <<<"$out"; fi
}
A=(authorize -p templates.cedar --entities entities.json)
ALICE=(-l 'User::"alice"' -a 'Action::"view"' -r 'Photo::"p"')

# an unlinked template takes no part (Cedar ignores it); the file is not refused
expect unlinked 2 "DENY" "$DWC" "${A[@]}" "${ALICE[@]}" -v
# a link instantiates both slots and decides under its link id
expect linked 0 "determining: alice-photos" "$DWC" "${A[@]}" -k links.json "${ALICE[@]}" -v
expect linked-long 0 "determining: alice-photos" "$DWC" "${A[@]}" --template-linked=links.json "${ALICE[@]}" -v
# `principal in ?principal` linked to a group
expect linked-in 0 "determining: admins" "$DWC" "${A[@]}" -k links.json -l 'User::"bob"' -a 'Action::"edit"' -r 'Photo::"p"' -v
# the linked value is what matches: another user is not alice
expect linked-other 2 "DENY" "$DWC" "${A[@]}" -k links.json -l 'User::"carl"' -a 'Action::"view"' -r 'Photo::"p"'
# a static policy keeps its positional name, counted over templates too (Cedar's policyN)
expect positional 0 "determining: policy1" "$DWC" "${A[@]}" -k links.json -l 'User::"carl"' -a 'Action::"list"' -r 'Photo::"p"' -v
# --requests (Box's requests.jsonl) decides linked policies too
printf '%s\n' '{"principal":"User::\"alice\"","action":"Action::\"view\"","resource":"Photo::\"p\""}' >"$tmp/r.jsonl"
expect batch 0 "1: ALLOW [alice-photos]" "$DWC" "${A[@]}" -k links.json --requests "$tmp/r.jsonl"
# an empty links file holds no links (Cedar's CLI)
: >"$tmp/empty.json"
expect empty-links 2 "DENY" "$DWC" "${A[@]}" -k "$tmp/empty.json" "${ALICE[@]}"

# bad links are refused (exit 1), never decided
# link_refused NAME FILE WANT JSON: $tmp/FILE.json holds JSON; authorize with it is refused with WANT
link_refused() {
    printf '%s\n' "$4" >"$tmp/$2.json"
    expect "$1" 1 "$3" "$DWC" "${A[@]}" -k "$tmp/$2.json" "${ALICE[@]}"
}
link_refused link-static l1 "it is a static policy, not a template" '[{"template_id":"policy1","link_id":"x","args":{}}]'
link_refused link-unknown l2 "no template with id \`nope\`" '[{"template_id":"nope","link_id":"x","args":{}}]'
link_refused link-missing l3 "no value for slot ?principal" '[{"template_id":"admin","link_id":"x","args":{"?resource":"Album::\"a\""}}]'
link_refused link-extra l4 "a value given for slot ?resource" '[{"template_id":"admin","link_id":"x","args":{"?principal":"Group::\"g\"","?resource":"Album::\"a\""}}]'
link_refused link-dup l5 "the id is already taken" '[{"template_id":"admin","link_id":"policy1","args":{"?principal":"Group::\"g\""}}]'
link_refused link-dup2 l6 "the id is already taken" '[{"template_id":"admin","link_id":"x","args":{"?principal":"Group::\"g\""}},{"template_id":"admin","link_id":"x","args":{"?principal":"Group::\"h\""}}]'
link_refused link-uid l7 "must be an entity uid" '[{"template_id":"admin","link_id":"x","args":{"?principal":"alice"}}]'
link_refused link-slot l8 "Expected ?principal|?resource" '[{"template_id":"admin","link_id":"x","args":{"?group":"G::\"g\""}}]'
link_refused link-shape l9 "expected a JSON array of links" '{"template_id":"admin"}'
expect link-nofile 1 "cannot read" "$DWC" "${A[@]}" -k "$tmp/none.json" "${ALICE[@]}"

# validate: templates with the set, each linked policy under its link id
V=(validate -p templates.cedar -s photo.cedarschema)
expect validate 0 "validation passed" "$DWC" "${V[@]}"
expect validate-links 0 "validation passed" "$DWC" "${V[@]}" -k links.json
echo '[{"template_id":"admin","link_id":"bad-link","args":{"?principal":"Team::\"x\""}}]' >"$tmp/v1.json"
expect validate-bad-link 3 "for policy \`bad-link\`, unrecognized entity type \`Team\`" "$DWC" "${V[@]}" -k "$tmp/v1.json"
expect validate-link-unknown 3 "no template with id \`nope\`" "$DWC" "${V[@]}" -k "$tmp/l2.json"

# entities and requests as Cedar parses them under a schema (checked against cedar-wasm 4.13):
# a parent whose type is reachable only through the memberOf chain (Reservation in [Property],
# Property in [Hotel]: a Reservation with parent Hotel::"G"), the extension form {"fn","arg"}
# without __extn in entity attributes and contexts, an enum entity's undeclared id refused
H=(authorize -p hotel.cedar -s hotel.cedarschema --entities hotel.entities.json -l 'User::"u"' -a 'Action::"view"')
echo '{"now":{"fn":"datetime","arg":"2025-06-01"}}' >"$tmp/c1.json"
echo '{"now":"2024-06-01"}' >"$tmp/c2.json"
expect member-of-chain 0 "determining: policy0" "$DWC" "${H[@]}" -r 'Reservation::"r1"' -c "$tmp/c1.json" -v
expect fn-arg-context 2 "DENY" "$DWC" "${H[@]}" -r 'Reservation::"r1"' -c "$tmp/c2.json"
expect enum-request 1 "is of an enumerated entity type, but \"blue\" is not declared as a valid eid" "$DWC" "${H[@]}" -r 'Color::"blue"' -c "$tmp/c2.json"
expect enum-request-ok 0 "ALLOW" "$DWC" "${H[@]}" -r 'Color::"red"' -c "$tmp/c2.json"
echo '[{"uid":{"type":"Property","id":"p"},"attrs":{},"parents":[{"type":"Reservation","id":"r1"}]}]' >"$tmp/e1.json"
expect member-of-down 1 "an entity of type Property cannot have a parent of this type" \
    "$DWC" authorize -p hotel.cedar -s hotel.cedarschema --entities "$tmp/e1.json" -l 'User::"u"' -a 'Action::"view"' -r 'Color::"red"' -c "$tmp/c2.json"
echo '[{"uid":{"type":"User","id":"u"},"attrs":{"since":{"fn":"datetime","arg":"not a date"}},"parents":[]}]' >"$tmp/e2.json"
expect fn-arg-bad 1 "extension call datetime failed" \
    "$DWC" authorize -p hotel.cedar -s hotel.cedarschema --entities "$tmp/e2.json" -l 'User::"u"' -a 'Action::"view"' -r 'Color::"red"' -c "$tmp/c2.json"

# an entity given twice the same way is taken once (Cedar); two different ones are refused
echo '[{"uid":{"type":"User","id":"u"},"attrs":{"since":"2024-01-01"},"parents":[]},{"uid":{"type":"User","id":"u"},"attrs":{"since":"2024-01-01"},"parents":[]}]' >"$tmp/d1.json"
expect dup-same 0 "ALLOW" "$DWC" authorize -p hotel.cedar -s hotel.cedarschema --entities "$tmp/d1.json" -l 'User::"u"' -a 'Action::"view"' -r 'Color::"red"' -c "$tmp/c2.json"
echo '[{"uid":{"type":"User","id":"u"},"attrs":{"since":"2024-01-01"},"parents":[]},{"uid":{"type":"User","id":"u"},"attrs":{"since":"2024-01-02"},"parents":[]}]' >"$tmp/d2.json"
expect dup-differs 1 "duplicate entity u" "$DWC" authorize -p hotel.cedar -s hotel.cedarschema --entities "$tmp/d2.json" -l 'User::"u"' -a 'Action::"view"' -r 'Color::"red"' -c "$tmp/c2.json"

# link: Cedar's `link` command appends to the links file (created if missing), refusing a link
# that does not apply without touching the file
LK=(link -p templates.cedar -k "$tmp/new.json")
expect link-create 0 "Template-linked policy added: carl-a" "$DWC" "${LK[@]}" --template-id owner-view -n carl-a \
    -a '{"?principal":"User::\"carl\"","?resource":"Album::\"a\""}'
expect link-append 0 "Template-linked policy added: grp" "$DWC" "${LK[@]}" --template-id admin --new-id grp --arguments '{"?principal":"Group::\"g\""}'
cp "$tmp/new.json" "$tmp/before.json"
expect link-dup-id 1 "the id is already taken" "$DWC" "${LK[@]}" --template-id admin -n grp -a '{"?principal":"Group::\"h\""}'
expect link-inject 1 "trailing characters" "$DWC" "${LK[@]}" --template-id admin -n x -a '{"?principal":"Group::\"g\""}},{"a":1'
expect link-no-slot 1 "no value for slot ?resource" "$DWC" "${LK[@]}" --template-id owner-view -n y -a '{"?principal":"User::\"u\""}'
if cmp -s "$tmp/new.json" "$tmp/before.json"; then ok; else bad "a refused link changed the links file"; fi
expect link-decides 0 "determining: carl-a" "$DWC" "${A[@]}" -k "$tmp/new.json" -l 'User::"carl"' -a 'Action::"view"' -r 'Photo::"p"' -v
expect link-decides-2 0 "determining: grp" "$DWC" "${A[@]}" -k "$tmp/new.json" -l 'Group::"g"' -a 'Action::"edit"' -r 'Photo::"p"' -v

# compile -k: the artifact decides the linked policies under their link ids; a template that
# fails validation stops the artifact even unlinked
expect compile-links 0 "" "$DWC" compile templates.cedar -s photo.cedarschema -k links.json -o "$tmp/t.dwb"
expect artifact-links 0 "determining: alice-photos" "$DWC" authorize -p "$tmp/t.dwb" --entities entities.json "${ALICE[@]}" -v
expect artifact-no-relink 1 "template links apply to policy text" "$DWC" authorize -p "$tmp/t.dwb" -k links.json "${ALICE[@]}"
printf '@id("bad")\npermit(principal == ?principal, action == Action::"view", resource) when { principal.nope };\n' >"$tmp/badt.cedar"
expect compile-bad-template 3 "for policy \`bad\`, attribute \`nope\` on entity type \`User\` not found" \
    "$DWC" compile "$tmp/badt.cedar" -s photo.cedarschema -o "$tmp/b.dwb"

# Cedar's CLI flags, and its output shape when dwc runs as `cedar` (cedar-policy-cli's
# authorize.rs: a blank line, the decision, errors, -v's note with @id-aware ids)
ln -s "$DWC" "$tmp/cedar"
"$tmp/cedar" "${A[@]}" -k links.json "${ALICE[@]}" -v >"$tmp/o1" 2>&1; echo $? >>"$tmp/o1"
printf '\nALLOW\n\nnote: this decision was due to the following policies:\n  alice-photos\n\n0\n' >"$tmp/w1"
if cmp -s "$tmp/o1" "$tmp/w1"; then ok; else bad "cedar -v shape:"; diff "$tmp/w1" "$tmp/o1" | head -5; fi
"$tmp/cedar" "${A[@]}" "${ALICE[@]}" -v >"$tmp/o2" 2>&1; echo $? >>"$tmp/o2"
printf '\nDENY\n\nnote: no policies applied to this request\n2\n' >"$tmp/w2"
if cmp -s "$tmp/o2" "$tmp/w2"; then ok; else bad "cedar -v no policies:"; diff "$tmp/w2" "$tmp/o2" | head -5; fi
# as `cedar`, static policies are named by @id too
expect cedar-at-id 0 "  in-hotel" "$tmp/cedar" "${H[@]}" -r 'Reservation::"r1"' -c "$tmp/c1.json" -v
printf 'permit(principal, action, resource) when { principal.nope };\n' >"$tmp/err.cedar"
expect cedar-errors 2 "error while evaluating policy \`policy0\`" "$tmp/cedar" authorize -p "$tmp/err.cedar" "${ALICE[@]}"
expect timing 0 "Authorization Time (micro seconds) : " "$DWC" "${H[@]}" -r 'Reservation::"r1"' -c "$tmp/c1.json" -t
# --request-validation false: a principal type outside appliesTo is decided, not refused
HG=(authorize -p hotel.cedar -s hotel.cedarschema --entities hotel.entities.json -l 'Hotel::"G"' -a 'Action::"view"' -r 'Color::"red"' -c "$tmp/c2.json")
expect request-validated 1 "principal type Hotel is not allowed for this action" "$DWC" "${HG[@]}"
expect request-validation-false 0 "ALLOW" "$DWC" "${HG[@]}" --request-validation false
expect request-validation-bad 1 "--request-validation must be true or false" "$DWC" "${HG[@]}" --request-validation no
expect schema-format 0 "ALLOW" "$DWC" "${HG[@]}" --request-validation=false --schema-format cedar
expect schema-format-bad 1 "--schema-format must be cedar or json" "$DWC" "${HG[@]}" --schema-format yaml
expect validate-schema-format 0 "validation passed" "$DWC" "${V[@]}" --schema-format cedar
# `human`, Cedar 3.x's name for the Cedar text form, is taken as cedar (scripts written for 3.x pass it)
expect schema-format-human 0 "ALLOW" "$tmp/cedar" "${HG[@]}" --request-validation=false --schema-format human
expect validate-schema-format-human 0 "validation passed" "$tmp/cedar" "${V[@]}" --schema-format human
expect policy-format-human 0 "ALLOW" "$DWC" "${HG[@]}" --request-validation=false --policy-format human
expect check-parse-human 0 "" "$DWC" check-parse -p hotel.cedar -s hotel.cedarschema --schema-format human
# Cedar's global -f/--error-format human|plain (before the command or among its options); json
# (Cedar's JSON error reports) is refused, dwc's reports being text; dwc's own commands keep -f unknown
expect error-format-first 0 "ALLOW" "$tmp/cedar" -f plain "${HG[@]}" --request-validation=false
expect error-format-after 0 "ALLOW" "$tmp/cedar" "${HG[@]}" --request-validation=false --error-format=human
# a usage error (an unknown option, a missing or bad argument) exits 2 as `cedar`, as Cedar's CLI
# (clap) does, and 1 as dwc; as `cedar`, authorize and validate read the policies from standard input
for u in "authorize --bogus" "validate -p hotel.cedar" "evaluate" "translate-policy --direction up" "new" \
         "check-parse --schema-format yaml" "link -p templates.cedar" "-f json check-parse -p hotel.cedar"; do
    read -r -a ua <<<"$u"
    "$tmp/cedar" "${ua[@]}" >/dev/null 2>&1 </dev/null; rc=$?
    [ $rc = 2 ] && ok || bad "cedar $u: exit $rc, not 2 (a usage error)"
    "$DWC" "${ua[@]}" >/dev/null 2>&1 </dev/null; rc=$?
    [ $rc = 1 ] && ok || bad "dwc $u: exit $rc, not 1 (a usage error)"
done
expect usage-request-validation 2 "--request-validation must be true or false" "$tmp/cedar" "${HG[@]}" --request-validation no
expect cedar-policies-stdin 0 "ALLOW" "$tmp/cedar" authorize "${HG[@]:3}" --request-validation false <hotel.cedar
expect cedar-validate-stdin 0 "validation passed" "$tmp/cedar" validate -s hotel.cedarschema <hotel.cedar
# ... and link too (Cedar's LinkArgs take the same PoliciesArgs: no -p, the set on stdin); as dwc, -p is required
expect cedar-link-stdin 0 "Template-linked policy added: dan" "$tmp/cedar" link -k "$tmp/stdin-links.json" --template-id owner-view \
    -n dan -a '{"?principal":"User::\"dan\"","?resource":"Album::\"a\""}' <templates.cedar
expect cedar-link-stdin-decides 0 "determining: dan" "$DWC" "${A[@]}" -k "$tmp/stdin-links.json" -l 'User::"dan"' -a 'Action::"view"' -r 'Photo::"p"' -v
expect cedar-link-stdin-bad 1 "" "$tmp/cedar" link --template-id owner-view -n eve -a '{"?principal":"User::\"e\"","?resource":"Album::\"a\""}' <hotel.cedar
expect dwc-link-policies-missing 1 "give -p, --template-id, -n and -a" "$DWC" link --template-id owner-view -n dan \
    -a '{"?principal":"User::\"dan\"","?resource":"Album::\"a\""}' <templates.cedar
expect dwc-policies-missing 1 "missing -p POLICIES" "$DWC" authorize "${HG[@]:3}" </dev/null
expect error-format-short 3 "" "$DWC" validate -fplain -p hotel.cedar -s photo.cedarschema
expect error-format-json 1 "dwc reports errors as text only" "$DWC" "${HG[@]}" -f json
expect error-format-bad 1 "--error-format must be human, plain or json, not \`yaml\`" "$DWC" --error-format yaml "${HG[@]}"
expect error-format-missing 1 "-f wants a value" "$DWC" "${HG[@]}" -f
expect error-format-dwc-own 1 "unknown option \`-f\`" "$DWC" check -f plain -p hotel.cedar
expect version 0 "dwc " "$tmp/cedar" --version

# Cedar's JSON policy format: translate-policy both ways, and --policy-format json deciding
# as the text does (ids from the JSON set's keys, its templateLinks linked)
"$DWC" translate-policy --direction cedar-to-json -p templates.cedar >"$tmp/t.json" 2>"$tmp/t.err"
expect est-shape 0 '"templates":{"owner-view":' cat "$tmp/t.json"
expect est-static 0 '"staticPolicies":{"policy1":{"effect":"permit","principal":{"op":"All"},"action":{"op":"==","entity":{"type":"Action","id":"list"}}' cat "$tmp/t.json"
expect est-stdin 0 '"staticPolicies":{"policy0":{"effect":"forbid"' sh -c "printf 'forbid(principal, action, resource);' | '$DWC' translate-policy --direction cedar-to-json"
expect est-back 0 'permit(principal == ?principal, action == Action::"view", resource in ?resource);' \
    "$DWC" translate-policy --direction json-to-cedar -p "$tmp/t.json"
expect est-direction 1 "--direction must be cedar-to-json or json-to-cedar" "$DWC" translate-policy --direction up -p templates.cedar
printf 'permit(principal, action, resource) when temporal { formerly within 1h Action::"view"::request{ } };\n' >"$tmp/t.dw"
expect est-dogwood 1 "has no form in Cedar's JSON policy format" "$DWC" translate-policy --direction cedar-to-json -p "$tmp/t.dw"
# translate-schema: resolved both ways, read back to the same schema
expect ts-json 0 '"memberOfTypes":[]' "$DWC" translate-schema --direction cedar-to-json -s photo.cedarschema
"$DWC" translate-schema --direction cedar-to-json -s photo.cedarschema >"$tmp/p.json"
"$DWC" translate-schema --direction json-to-cedar -s "$tmp/p.json" >"$tmp/p.cedarschema"
expect ts-back 0 "validation passed" "$DWC" validate -p templates.cedar -s "$tmp/p.cedarschema"
expect ts-same 0 "" cmp "$tmp/p.cedarschema" <("$DWC" translate-schema --direction json-to-cedar < "$tmp/p.json")
expect ts-resolved 0 '"memberOfTypes":[]' "$DWC" translate-schema --direction cedar-to-json-with-resolved-types -s photo.cedarschema
expect ts-direction 1 "--direction must be cedar-to-json, json-to-cedar or cedar-to-json-with-resolved-types" "$DWC" translate-schema --direction x -s photo.cedarschema
expect ts-bad 1 "error" sh -c "printf 'entity ;' | '$DWC' translate-schema --direction cedar-to-json"
# check-parse: each input given must parse; the policies on stdin when none is given
expect cp-ok 0 "" "$DWC" check-parse -p templates.cedar
expect cp-stdin-bad 1 "unexpected end of input" sh -c "printf 'permit(principal' | '$DWC' check-parse"
expect cp-stdin-ok 0 "" sh -c "printf 'permit(principal, action, resource);' | '$DWC' check-parse"
expect cp-expr 1 "unexpected end of input" "$DWC" check-parse --expression '1 +'
expect cp-expr-ok 0 "" "$DWC" check-parse --expression 'principal.x && [1]'
expect cp-schema 0 "" "$DWC" check-parse -s photo.cedarschema --entities entities.json
expect cp-schema-bad 1 "error" sh -c "printf 'entity ;' >'$tmp/bad.cedarschema'; '$DWC' check-parse -s '$tmp/bad.cedarschema'"
expect cp-json 0 "" "$DWC" check-parse --policy-format json -p "$tmp/t.json"
expect cp-links 1 "no template with id" "$DWC" check-parse -p templates.cedar -k "$tmp/l2.json"
# an empty record and an empty set (fuzz_est found qsort given NULL for the empty record: UBSan)
expect est-empty-record 0 '{"==":{"left":{"Record":{}},"right":{"Set":[]}}}' sh -c \
    "printf 'permit(principal, action, resource) when { {} == [] };' | '$DWC' translate-policy --direction cedar-to-json"
expect est-empty-record-back 0 'when { {} == [] }' sh -c \
    "printf '{\"staticPolicies\":{},\"templates\":{}}' >/dev/null; printf 'permit(principal, action, resource) when { {} == [] };' | '$DWC' translate-policy --direction cedar-to-json | '$DWC' translate-policy --direction json-to-cedar"
printf '{"effect":"permit","principal":{"op":"All"},"action":{"op":"All"},"resource":{"op":"All"},"conditions":[],"extra":1}' >"$tmp/x.json"
expect est-unknown-field 1 "unknown field \`extra\`" "$DWC" translate-policy --direction json-to-cedar -p "$tmp/x.json"
printf '{"staticPolicies":{"s":{"effect":"permit","principal":{"op":"==","slot":"?principal"},"action":{"op":"All"},"resource":{"op":"All"},"conditions":[]}}}' >"$tmp/x2.json"
expect est-slot-static 1 "expected a static policy, got a template containing the slot ?principal" "$DWC" translate-policy --direction json-to-cedar -p "$tmp/x2.json"
printf '{"staticPolicies":{},"templates":{"t":{"effect":"permit","principal":{"op":"==","slot":"?principal"},"action":{"op":"All"},"resource":{"op":"All"},"conditions":[]}},"templateLinks":[{"templateId":"t","newId":"ln","values":{"?principal":{"type":"User","id":"alice"}}}]}' >"$tmp/l.json"
expect est-links-text 1 "Unable to translate policy set containing template linked policies." "$DWC" translate-policy --direction json-to-cedar -p "$tmp/l.json"
expect pf-json-link 0 "determining: ln" "$DWC" authorize --policy-format json -p "$tmp/l.json" --entities entities.json "${ALICE[@]}" -v
expect pf-json-link-other 2 "DENY" "$DWC" authorize --policy-format json -p "$tmp/l.json" --entities entities.json -l 'User::"bob"' -a 'Action::"view"' -r 'Photo::"p"'
expect pf-json-k 0 "determining: alice-photos" "$DWC" "${A[@]}" -k links.json "${ALICE[@]}" -v
printf '{"staticPolicies":{"mine":{"effect":"permit","principal":{"op":"All"},"action":{"op":"==","entity":{"type":"Action","id":"list"}},"resource":{"op":"All"},"conditions":[],"annotations":{"id":"other"}}}}' >"$tmp/s.json"
expect pf-json-id 0 "determining: mine" "$DWC" authorize --policy-format json -p "$tmp/s.json" -l 'User::"carl"' -a 'Action::"list"' -r 'Photo::"p"' -v
expect pf-json-same 0 "determining: policy1" "$DWC" authorize --policy-format json -p "$tmp/t.json" --entities entities.json -l 'User::"carl"' -a 'Action::"list"' -r 'Photo::"p"' -v
expect pf-json-validate 0 "validation passed" "$DWC" validate --policy-format json -p "$tmp/t.json" -s photo.cedarschema
expect pf-json-bad 1 "--policy-format must be cedar or json" "$DWC" authorize --policy-format yaml -p "$tmp/t.json" "${ALICE[@]}"
expect pf-json-refused 1 "unknown field \`extra\`" "$DWC" authorize --policy-format json -p "$tmp/x.json" "${ALICE[@]}"

# app/: an example application of the shape of Cedar's (cedar-examples): templates linked to a
# ward, a department and a hospital (record -> ward -> department -> hospital), a role, datetime,
# duration, decimal and ipaddr values in every form Cedar reads under a schema, ALLOW/ and DENY/
# requests.  Run as cedar-examples' scripts run it; where node and cedar-wasm are installed
# (tests/diff/run.sh puts it in build/diff/node) ref_cedar.sh runs each check too and its
# output and exit status must be dwc's, byte for byte.
REFC=$(dirname "$PWD")/cedar_cli/ref_cedar.sh
ref_ok=false
if command -v node >/dev/null && "$REFC" --version >/dev/null 2>&1; then ref_ok=true; else echo "note: cedar-wasm not installed, app/ checked without the reference"; fi
# same_as_ref NAME ARGS...: dwc as cedar and the reference print the same and exit the same
# (validate: the exit only; Cedar's report is a miette rendering, dwc's text is its own).  dwc
# runs now; the reference runs every call at the end, in one process (ref_done).
nref=0
same_as_ref() {
    local n=$1 a s='['; shift
    $ref_ok || return 0
    { "$tmp/cedar" "$@" 2>/dev/null; echo "exit $?"; } >"$tmp/dwco.$nref"
    for a in "$@"; do a=${a//\\/\\\\}; a=${a//\"/\\\"}; s+="\"$a\","; done
    printf '%s]\n' "${s%,}" >>"$tmp/ref.calls"
    printf '%s %s\n' "$n" "$1" >>"$tmp/ref.names"
    nref=$((nref + 1))
}
ref_done() {
    $ref_ok && [ "$nref" -gt 0 ] || return 0
    "$REFC" --batch "$tmp/ref.calls" >"$tmp/ref.out" 2>&1
    awk -v d="$tmp/refo" 'BEGIN { n = 0 } { print > (d "." n) } /^exit [0-9]+$/ { close(d "." n); n++ }' "$tmp/ref.out"
    local i=0 n cmd
    while read -r n cmd; do
        if [ "$cmd" = validate ]; then tail -1 "$tmp/dwco.$i" >"$tmp/a"; tail -1 "$tmp/refo.$i" >"$tmp/b" 2>/dev/null
        else cp "$tmp/dwco.$i" "$tmp/a"; cp "$tmp/refo.$i" "$tmp/b" 2>/dev/null || : >"$tmp/b"; fi
        if cmp -s "$tmp/a" "$tmp/b"; then ok; else bad "$n: dwc and cedar-wasm differ:"; diff "$tmp/a" "$tmp/b" | head -6; fi
        i=$((i + 1))
    done <"$tmp/ref.names"
}
AP=(--policies app/policies.cedar --schema app/policies.cedarschema)
for sf in cedar human; do
    expect "app-validate-$sf" 0 "validation passed" "$tmp/cedar" validate "${AP[@]}" --schema-format "$sf" -k app/linked
    for f in app/ALLOW/*.json app/DENY/*.json; do
        d=${f#app/}; d=${d%%/*}; rc=0; [ "$d" = DENY ] && rc=2
        Q=(authorize "${AP[@]}" --schema-format "$sf" -k app/linked --entities app/entities.json --request-json "$f" -v)
        expect "app-$sf-$f" $rc "$d" "$tmp/cedar" "${Q[@]}"
        same_as_ref "app-ref-$sf-$f" "${Q[@]}"
    done
done
same_as_ref app-ref-validate validate "${AP[@]}" -k app/linked
expect app-format 0 "" "$tmp/cedar" format --policies app/policies.cedar --check
same_as_ref app-ref-format format --policies app/policies.cedar --check
# without its links a template decides nothing: the linked readers are denied
expect app-unlinked 2 "DENY" "$tmp/cedar" authorize "${AP[@]}" --entities app/entities.json --request-json app/ALLOW/ana-reads-ward-record.json
same_as_ref app-ref-unlinked authorize "${AP[@]}" --entities app/entities.json --request-json app/ALLOW/ana-reads-ward-record.json -v
ref_done

finish
