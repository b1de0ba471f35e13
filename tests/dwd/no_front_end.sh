#!/usr/bin/env bash
# tests/dwd/no_front_end.sh DWD [DWC] - dwd serves compiled artifacts only and links
# no front end (docs/ARCHITECTURE.md, "What dwd links"): nm must show none of
# the parser and lexer (and their flex/bison tables), the macro library and
# expander, the schema and event-schema parsers, the type checker, the
# validator, the compiler and artifact writer, lint, the proofs, the front-end
# pipeline, the loader's session, or the engine's source-text opening.
# With DWC, each pattern must find its part in dwc, which links them all: a
# pattern that matched nothing anywhere would prove nothing.
set -uo pipefail
DWD=${1:-build/dwd}
DWC=${2:-}
pass=0 fail=0
ok()  { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }

syms=$(nm "$DWD" 2>/dev/null | awk 'NF >= 2 {print $NF}')
# a stripped or unreadable binary would pass vacuously: the serving path must be visible
if grep -qx 'dw_engine_open_artifact_durable' <<<"$syms"; then ok "nm reads $DWD's symbols"; else bad "nm reads $DWD's symbols"; fi

dwc_syms=$([ -n "$DWC" ] && nm "$DWC" 2>/dev/null | awk 'NF >= 2 {print $NF}')
# NAME REGEX: no symbol of dwd matches REGEX
front=(
    "the parser and lexer, their tables|(^|_)yy"
    "the policy parser|^dw_parse_"
    "the macro library and expander|^dw_(expand_macros|stdlib_macros|macro)"
    "the schema parsers and resolver|^dw_schema_(parse|resolve)"
    "the event-schema parser and derivation|^dw_event_schema_(parse|derive|builtin\$)|^dw_event_derivation"
    "the type checker and validator|^dw_(typecheck|validate|tcheck)"
    "the compiler and artifact writer|^dw_(compile|artifact_write|artifact_attach_serve|temporal_canon|tlower)"
    "lint|^dw_lint"
    "the proofs|^dw_(prove|smt)"
    "the front-end pipeline and the loader's session|^dw_(front_end|session_)"
    "the engine's source-text opening|^dw_engine_open(_printing|_unvalidated|_durable)?\$"
)
for entry in "${front[@]}"; do
    name=${entry%%|*}
    re=${entry#*|}
    hits=$(grep -E "$re" <<<"$syms" | sort -u | head -5 | tr '\n' ' ')
    if [ -z "$hits" ]; then ok "dwd links none of $name"; else bad "dwd links $name: $hits"; fi
    if [ -n "$DWC" ]; then
        if grep -qE "$re" <<<"$dwc_syms"; then ok "... the pattern finds $name in dwc"
        else bad "... the pattern finds $name in dwc"; fi
    fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
