#!/usr/bin/env bash
# cedar_evaluate.sh DWC - `dwc evaluate` and `dwc new` as Cedar CLI 4.x's
# `evaluate` and `new` (issue 17): every kind of value printed as Cedar
# prints it, extension functions, entity attributes and tags through
# --entities, `in` over a hierarchy, the request's forms (-l/-a/-r/-c,
# --request-json, --request-validation, the schema's context types), the
# errors in Cedar's words, exit codes; dwc running as `cedar` too.
# Fixtures in tests/cedar_evaluate/.  Ends with `N passed, N failed`.
set -u
DWC=$1
case $DWC in /*) ;; *) DWC=$(pwd)/$DWC ;; esac
cd "$(dirname "$0")/cedar_evaluate" || exit 1
. ../harness.bash     # its run/expect are redefined below with this script's own signature
REQ=(-s schema.cedarschema --entities entities.json -l 'User::"alice"' -a 'Action::"view"' -r 'Photo::"p1"' -c context.json)
# run NAME RC WANT ARGS...: exit RC; stdout's first line empty (Cedar's) and its second line WANT
# (a value), or for RC 1 the report's cause line ("  ╰─▶ WANT") or headline ("  × WANT")
run() {
    local n=$1 rc=$2 want=$3; shift 3
    local out got line2
    out=$("$DWC" evaluate "$@" 2>"$tmp/err"); got=$?
    line2=$(sed -n 2p <<<"$out")
    if [ "$got" != "$rc" ] || [ -n "$(head -1 <<<"$out")" ]; then
        bad "$n: wanted exit $rc, got $got:"; head -4 <<<"$out"; cat "$tmp/err"; return
    fi
    if [ "$rc" = 0 ] && [ "$line2" = "$want" ]; then ok
    elif [ "$rc" = 1 ] && { grep -qxF -- "  ╰─▶ $want" <<<"$out" || grep -qxF -- "  × $want" <<<"$out"; }; then ok
    else bad "$n: wanted \"$want\", got:"; sed -n '2,4p' <<<"$out"; fi
}
# ev NAME RC WANT EXPR: the expression against the fixtures' request
ev() { run "$1" "$2" "$3" "${REQ[@]}" -- "$4"; }

# ---- every kind of value, printed as Cedar prints it
ev bool 0 'true' 'true && !false'
ev long 0 '-42' '6 * -7'
ev long-min 0 '-9223372036854775808' '-9223372036854775808'
ev string 0 '"hi there"' '"hi there"'
ev string-escapes 0 '"tab\there \"q\" \'"'"'s\\\n"' '"tab\there \"q\" '"'"'s\\\n"'
ev string-unicode 0 '"café"' '"caf\u{e9}"'
ev string-nonprint 0 '"a\u{200b}b"' '"a\u{200b}b"'
ev entity 0 'User::"alice"' 'principal'
ev entity-ns 0 'App::Doc::"x \"y\""' 'App::Doc::"x \"y\""'
ev set-order 0 '[false, true, -1, 2, "a", "b", Group::"g", User::"a", A::User::"a", [1], {"k": 1}, decimal("1.0")]' \
   '[decimal("1.0"), {k: 1}, [1], A::User::"a", User::"a", Group::"g", "b", "a", 2, -1, true, false]'
ev set-dedup 0 '[1, 2]' '[2, 1, 2, 1]'
ev set-empty 0 '[]' '[]'
ev record 0 '{"a": [1, 2], "a b": "z", "b": {"c": true}}' '{b: {c: true}, "a b": "z", a: [1, 2]}'
ev record-empty 0 '{}' '{}'
# ---- extension values: as written, computed ones in Cedar's offset form
ev decimal 0 'decimal("1.2300")' 'decimal("1.2300")'
ev decimal-neg 0 'decimal("-0.5")' 'decimal("-0.5")'
ev decimal-zeros 0 'decimal("007.50")' 'decimal("007.50")'
ev ip4 0 'ip("10.0.0.1")' 'ip("10.0.0.1")'
ev ip-range 0 'ip("10.0.0.0/8")' 'ip("10.0.0.0/8")'
ev ip-host-prefix 0 'ip("10.0.0.1/32")' 'ip("10.0.0.1/32")'
ev ip-host-bits 0 'ip("10.1.2.3/8")' 'ip("10.1.2.3/8")'
ev ip6 0 'ip("::1")' 'ip("::1")'
ev datetime-date 0 'datetime("2024-01-01")' 'datetime("2024-01-01")'
ev datetime-offset 0 'datetime("2024-01-01T10:00:00.123+0130")' 'datetime("2024-01-01T10:00:00.123+0130")'
ev datetime-computed 0 'datetime("1970-01-01").offset(duration("1704070800000ms"))' 'datetime("2024-01-01").offset(duration("1h"))'
ev duration 0 'duration("90m")' 'duration("90m")'
ev duration-computed 0 'duration("86400000ms")' 'datetime("2024-01-02").durationSince(datetime("2024-01-01"))'
ev to-date 0 'datetime("1970-01-01").offset(duration("1717200000000ms"))' 'resource.taken.toDate()'
ev to-time 0 'duration("45000000ms")' 'resource.taken.toTime()'
ev to-hours 0 '1' 'context.limit.toHours()'
ev decimal-cmp 0 'true' 'resource.score.greaterThan(context.rate)'
ev ip-range-test 0 'true' 'resource.origin.isInRange(ip("192.168.0.0/16")) && context.ip.isIpv4() && !context.ip.isLoopback()'
ev datetime-cmp 0 'true' 'context.now > resource.taken'
# ---- the context and entities under the schema
ev context 0 '{"ip": ip("10.1.2.3"), "limit": duration("90m"), "n": 9223372036854775807, "now": datetime("2024-06-02T08:00:00+0200"), "rate": decimal("0.25"), "who": User::"bob"}' 'context'
ev attr 0 '"Alice"' 'principal.name'
ev attr-entity 0 'User::"bob"' 'principal.manager'
ev attr-chain 0 '51' 'principal.manager.age'
ev attr-record 0 '{"height": 480, "width": 640}' 'resource.meta'
ev attr-ext 0 'datetime("2024-06-01T12:30:00Z")' 'resource.taken'
ev tag 0 '"gold"' 'principal.getTag("level")'
ev has 0 'false' 'principal.manager has manager || resource.meta has title'
ev contains 0 'true' 'principal.tags.contains("dev") && principal.tags.containsAny(["x", "admin"])'
ev like 0 'true' 'principal.name like "A*e"'
ev is 0 'true' 'resource is Photo && principal is User in Group::"all"'
ev if 0 '"old"' 'if principal.manager.age > 50 then "old" else "young"'
# ---- `in` over the hierarchy
ev in-parent 0 'true' 'principal in Group::"staff"'
ev in-grandparent 0 'true' 'principal in Group::"all"'
ev in-set 0 'true' 'context.who in [Group::"staff", Group::"all"]'
ev in-not 0 'false' 'Group::"all" in Group::"staff"'
ev in-self 0 'true' 'resource in resource'
ev in-unknown 0 'false' 'User::"zed" in Group::"all"'
# ---- errors, in Cedar's words (exit 1)
ev missing-attr 1 '`User::"alice"` does not have the attribute `nope`' 'principal.nope'
ev missing-record-attr 1 'record does not have the attribute `title`' 'resource.meta.title'
ev missing-entity 1 'entity `User::"zed"` does not exist' 'User::"zed".name'
ev missing-tag 1 '`User::"bob"` does not have the tag `level`' 'principal.manager.getTag("level")'
ev overflow-add 1 'integer overflow while attempting to add the values `9223372036854775807` and `1`' 'context.n + 1'
ev overflow-mul 1 'integer overflow while attempting to multiply the values `9223372036854775807` and `2`' '9223372036854775807 * 2'
ev overflow-neg 1 'integer overflow while attempting to negate the value `-9223372036854775808`' '-(-9223372036854775807 - 1)'
ev type-arith 1 'type error: expected long, got string' '1 + "a"'
ev type-cond 1 'type error: expected bool, got long' 'if 1 then 2 else 3'
ev type-and 1 'type error: expected bool, got string' 'true && "x"'
ev type-cmp 1 'type error: expected one of [long, datetime, duration], got string' '"a" < "b"'
ev type-cmp-ext 1 'type error: expected datetime, got duration' 'context.now < context.limit'
ev type-in 1 'type error: expected one of [set, (entity of type `any_entity_type`)], got long' 'principal in 1'
ev type-attr 1 'type error: expected one of [record, (entity of type `any_entity_type`)], got long' '(1).x'
ev type-method 1 'type error: expected set, got string' 'principal.name.contains("A")'
ev type-ext-arg 1 'type error: expected decimal, got long' 'resource.score.lessThan(1)'
ev ext-decimal 1 'error while evaluating `decimal` extension function: too many digits after the decimal in `1.23456`' 'decimal("1.23456")'
ev ext-ip 1 'error while evaluating `ipaddr` extension function: error parsing prefix: 33 is larger than the limit 32' 'ip("1.2.3.4/33")'
ev ext-datetime 1 'error while evaluating `datetime` extension function: invalid date: 2024-02-30' 'datetime("2024-02-30")'
ev ext-duration 1 'error while evaluating `duration` extension function: invalid duration pattern' 'duration("1h1d")'
ev ext-offset 1 'error while evaluating `offset` extension function: overflows when adding an offset: datetime("1970-01-01").offset(duration("1704067200000ms"))+(9223372036854775807ms)' \
   'datetime("2024-01-01").offset(duration("9223372036854775807ms"))'
# a record's values are evaluated in key order, as Cedar's (sorted) record literal is: its first error
ev record-order 1 'integer overflow while attempting to multiply the values `9223372036854775807` and `2`' \
   '{b: decimal("1.0", "2.0"), a: 9223372036854775807 * 2}'
ev parse 1 'failed to parse the expression' 'principal.'
ev parse-function 1 '`foo` is not a valid function' 'foo(1)'
ev parse-method 1 '`foo` is not a valid method' 'principal.foo(1)'
ev parse-path-function 1 '`a::b` is not a valid function' 'a::b(1)'
ev parse-arity 1 'call to `contains` requires exactly 1 argument, but got 0 arguments' '[1].contains()'

# ---- the request's forms
run request-json 0 'Photo::"p1"' -s schema.cedarschema --entities entities.json --request-json request.json resource
run request-json-context 0 '1' -s schema.cedarschema --request-json request.json context.n
run no-schema 0 '"10.1.2.3"' -l 'User::"alice"' -a 'Action::"view"' -r 'Photo::"p1"' -c context.json context.ip
run no-entities 0 'false' -l 'User::"alice"' -a 'Action::"view"' -r 'Photo::"p1"' 'principal in Group::"all"'
run no-entities-attr 1 'entity `User::"alice"` does not exist' -l 'User::"alice"' -a 'Action::"view"' -r 'Photo::"p1"' principal.name
run missing-vars 1 'All three (`principal`, `action`, `resource`) variables must be specified' -l 'User::"alice"' '1 + 1'
run bad-uid 1 'failed to parse principal alice as entity Uid' -l alice -a 'Action::"view"' -r 'Photo::"p1"' '1'
run request-invalid 1 'principal type `Group` is not valid for `Action::"view"`' \
    -s schema.cedarschema -l 'Group::"all"' -a 'Action::"view"' -r 'Photo::"p1"' -c context.json '1'
run request-validation-off 0 '2' -s schema.cedarschema --request-validation false -l 'Group::"all"' -a 'Action::"view"' -r 'Photo::"p1"' -c context.json '1 + 1'
run request-undeclared 1 'principal type `Nope` is not declared in the schema' \
    -s schema.cedarschema -l 'Nope::"x"' -a 'Action::"view"' -r 'Photo::"p1"' -c context.json '1'
run action-undeclared 1 'action `Action::"nope"` does not exist in the supplied schema' \
    -s schema.cedarschema -l 'User::"alice"' -a 'Action::"nope"' -r 'Photo::"p1"' '1'
run action-undeclared-context 1 'failed to create a context from context.json' \
    -s schema.cedarschema -l 'User::"alice"' -a 'Action::"nope"' -r 'Photo::"p1"' -c context.json '1'
run action-undeclared-unvalidated 0 '1' -s schema.cedarschema --request-validation false -l 'User::"alice"' -a 'Action::"nope"' -r 'Photo::"p1"' '1'
run context-missing 1 'context `{}` is not valid for `Action::"view"`' -s schema.cedarschema -l 'User::"alice"' -a 'Action::"view"' -r 'Photo::"p1"' '1'
run context-missing-unvalidated 0 '{}' -s schema.cedarschema --request-validation false -l 'User::"alice"' -a 'Action::"view"' -r 'Photo::"p1"' context
printf '%s\n' '{"principal": "User::\"alice\"", "action": {"x": 1}, "resource": "Photo::\"p1\"", "context": {}}' >"$tmp/rq.json"
run action-not-uid 1 "failed to create a context from $tmp/rq.json" -s schema.cedarschema --request-json "$tmp/rq.json" '1'
run context-bad 1 "failed to create a context from context.json" -s schema.cedarschema -l 'User::"alice"' -a 'Action::"edit"' -r 'Photo::"p1"' -c context.json '1'
run no-file 1 'failed to open request-json file none.json' --request-json none.json '1'
run no-file-cause 1 'No such file or directory (os error 2)' --request-json none.json '1'
run no-context-file 1 'error while loading context from none.json' -l 'User::"a"' -a 'Action::"view"' -r 'Photo::"p"' -c none.json '1'
run no-schema-file 1 'failed to open schema file none.cedarschema' -s none.cedarschema -l 'User::"a"' -a 'Action::"view"' -r 'Photo::"p"' '1'
run no-entities-file 1 'failed to open entities file none.json' --entities none.json -l 'User::"a"' -a 'Action::"view"' -r 'Photo::"p"' '1'
run schema-bad 1 "failed to parse schema from file entities.json" -s entities.json -l 'User::"alice"' -a 'Action::"view"' -r 'Photo::"p1"' '1'
out=$("$DWC" evaluate --entities context.json -l 'User::"alice"' -a 'Action::"view"' -r 'Photo::"p1"' '1')
if [ $? = 1 ] && [ "$(sed -n 2,3p <<<"$out")" = $'  × failed to parse entities from file context.json\n  ├─▶ error during entity deserialization' ]; then ok
else bad "entities-chain: $out"; fi
run entities-bad 1 "failed to parse entities from file schema.cedarschema" --entities schema.cedarschema -l 'User::"alice"' -a 'Action::"view"' -r 'Photo::"p1"' '1'
run schema-format 0 '3' -s schema.cedarschema --schema-format cedar -l 'User::"alice"' -a 'Action::"view"' -r 'Photo::"p1"' -c context.json '1 + 2'
run temporal 1 'failed to parse the expression' -l 'User::"alice"' -a 'Action::"view"' -r 'Photo::"p1"' 'temporal { once(true) }'
# usage errors exit 1 with dwc's message on stderr, stdout empty
if "$DWC" evaluate -l 'User::"a"' >"$tmp/o" 2>"$tmp/e"; then bad "no-expression: exit 0"; elif [ -s "$tmp/o" ] || ! grep -q "EXPRESSION" "$tmp/e"; then bad "no-expression: output"; else ok; fi
if "$DWC" evaluate --request-validation maybe 1 >/dev/null 2>&1; then bad "reqval-value: exit 0"; else ok; fi
# as `cedar` (a link named cedar): the same command, the same output
ln -s "$DWC" "$tmp/cedar"
out=$("$tmp/cedar" evaluate "${REQ[@]}" 'principal.manager.name'); rc=$?
if [ $rc = 0 ] && [ "$out" = $'\n"Bob"' ]; then ok; else bad "as-cedar: exit $rc: $out"; fi

# ---- dwc new: Cedar's layout, an existing directory refused
(cd "$tmp" && "$DWC" new --name proj >"$tmp/new.out" 2>&1); rc=$?
if [ $rc = 0 ] && [ ! -s "$tmp/new.out" ] && [ "$(cd "$tmp/proj" && ls | tr '\n' ' ')" = "entities.json policy.cedar schema.cedarschema.json " ]; then ok
else bad "new: exit $rc, files: $(ls "$tmp/proj" 2>&1 | tr '\n' ' ')"; cat "$tmp/new.out"; fi
P=$tmp/proj
v=$("$DWC" validate -s "$P/schema.cedarschema.json" --schema-format json -p "$P/policy.cedar" 2>&1); rc=$?
if [ $rc = 0 ]; then ok; else bad "new-validates: exit $rc: $v"; fi
v=$("$DWC" authorize -s "$P/schema.cedarschema.json" --schema-format json -p "$P/policy.cedar" --entities "$P/entities.json" \
    -l 'User::"alice"' -a 'Action::"view"' -r 'Document::"plan"' 2>&1); rc=$?
if [ $rc = 0 ] && [ "$v" = ALLOW ]; then ok; else bad "new-authorizes: exit $rc: $v"; fi
v=$("$DWC" authorize -s "$P/schema.cedarschema.json" -p "$P/policy.cedar" --entities "$P/entities.json" \
    -l 'Team::"planners"' -a 'Action::"view"' -r 'Document::"plan"' 2>&1); rc=$?
if [ $rc = 0 ]; then ok; else bad "new-authorizes-team: exit $rc: $v"; fi
if "$DWC" format --check -p "$P/policy.cedar" >/dev/null 2>&1; then ok; else bad "new-formatted"; fi
if "$DWC" check-parse --entities "$P/entities.json" -s "$P/schema.cedarschema.json" >/dev/null 2>&1; then ok; else bad "new-entities-parse"; fi
out=$(cd "$tmp" && "$DWC" new -n proj); rc=$?
if [ $rc = 1 ] && [ "$out" = "  × File exists (os error 17)" ]; then ok; else bad "new-exists: exit $rc: $out"; fi
out=$(cd "$tmp" && "$DWC" new -n missing/proj); rc=$?
if [ $rc = 1 ] && [ "$out" = "  × No such file or directory (os error 2)" ]; then ok; else bad "new-no-parent: exit $rc: $out"; fi
if "$DWC" new >/dev/null 2>&1; then bad "new-no-name: exit 0"; else ok; fi
(cd "$tmp" && "$tmp/cedar" new -n viacedar >/dev/null 2>&1) && [ -f "$tmp/viacedar/policy.cedar" ] && ok || bad "new-as-cedar"

# a chain of `has` paths is a parse error, refused at once: the error recovery used to expand
# each path, cloning the chain once per name (3^14 nodes here: 3.6 s and GBs; fuzz_evaluate)
chain='principal has a.b.c has d.e.f has g.h.i has j.k.l has m.n.o has p.q.r has s.t.u has v.w.x has y.z.a has b.c.d has e.f.g has h.i.j has k.l.m has n.o.p'
out=$(timeout 2 "$DWC" evaluate -l 'User::"a"' -a 'Action::"a"' -r 'R::"r"' "$chain" 2>&1); rc=$?
[ $rc = 1 ] && grep -qF "multiple relational operators" <<<"$out" && ok || bad "has-chain: exit $rc (wanted 1 at once)"

# a `has` path over a parenthesised `has` path, nested k deep: valid syntax (Cedar parses any depth;
# a Bool has no attributes, so evaluation is a type error).  dwc holds the left side once per path
# (DW_E_HAS_PATH), so the tree is linear in k; it was 3^k (k = 25 ran for ever, then k >= 12 was
# refused).  The answers below are cedar-wasm 4.13's (isAuthorized of `when { NEST }`, 2026-12-01):
# k = 5, 12, 20, 40, 100, 120: deny with this error (from k = 130 cedar-wasm aborts, out of stack);
# the record form (nestr) k = 5, 12, 20, 40: allow, no error (cedar-wasm aborts from k = 60)
nest() { local e="context has a.b.c" i; for ((i = 1; i < $1; i++)); do e="($e) has a.b.c"; done; printf '%s' "$e"; }
nestr() { local e="context has a.b.c" i; for ((i = 1; i < $1; i++)); do e="{a: {b: $e}} has a.b"; done; printf '%s' "$e"; }
REQ0=(-l 'User::"a"' -a 'Action::"a"' -r 'R::"r"')
for k in 5 12 20 40 100 120; do
    run has-nest-$k 1 'type error: expected one of [record, (entity of type `any_entity_type`)], got bool' "${REQ0[@]}" "$(nest $k)"
done
for k in 5 12 20 40; do run has-nest-rec-$k 0 true "${REQ0[@]}" "$(nestr $k)"; done
for k in 10 40; do
    printf 'permit(principal, action, resource) when { %s };\n' "$(nest $k)" >"$tmp/n$k.cedar"
    out=$(timeout 10 "$DWC" authorize -p "$tmp/n$k.cedar" "${REQ0[@]}" -v 2>&1); rc=$?
    [ $rc = 2 ] && grep -qxF 'errors: policy0 (type error: attribute access on a value that is not a record or entity)' <<<"$out" && ok || bad "has-nest-$k authorize: exit $rc: $out"
    printf 'permit(principal, action, resource) when { %s };\n' "$(nestr $k)" >"$tmp/r$k.cedar"
    out=$(timeout 10 "$DWC" authorize -p "$tmp/r$k.cedar" "${REQ0[@]}" -v 2>&1); rc=$?
    [ $rc = 0 ] && grep -qxF 'determining: policy0' <<<"$out" && ok || bad "has-nest-rec-$k authorize: exit $rc: $out"
done
# the formatter keeps each path as written (Cedar's formatPolicies prints it so, any depth)
out=$("$DWC" format -p "$tmp/n40.cedar" | "$DWC" format); rc=$?
[ $rc = 0 ] && [ "$(tr -d ' \n' <<<"$out")" = "$(tr -d ' \n' <"$tmp/n40.cedar")" ] && ok || bad "has-nest-40 format: exit $rc: $(head -c 300 <<<"$out")"
# one path over entities and records: each step HAS, then the read (cedar-wasm 4.13's answers)
HREQ=(--entities has_path_entities.json -l 'User::"alice"' -a 'Action::"view"' -r 'Photo::"p1"')
while IFS=$'\t' read -r rc want e; do run "has-path: $e" "$rc" "$want" "${HREQ[@]}" "$e"; done <<'EOF2'
0	true	principal has manager.name
0	false	principal has manager.manager
0	false	principal has manager.manager.name
0	true	resource has owner.manager.name
1	type error: expected one of [record, (entity of type `any_entity_type`)], got string	principal has name.x
0	false	User::"zed" has a.b
0	false	resource has ghost.name
0	true	principal has meta.w
0	false	principal has meta.q.r
1	type error: expected one of [record, (entity of type `any_entity_type`)], got long	principal has meta.w.r
EOF2
# past the depth bound (§19: 256) a nesting is refused at once, like any other
printf 'permit(principal, action, resource)\nwhen { %s };\n' "$(nest 300)" >"$tmp/n300.cedar"
out=$(timeout 5 "$DWC" check-parse -p "$tmp/n300.cedar" 2>&1); rc=$?
[ $rc = 1 ] && grep -qF 'expression nested too deeply' <<<"$out" && ok || bad "has-nest-300 check-parse: exit $rc: $(head -c 400 <<<"$out")"

finish
