/* tcheck.h - temporal well-formedness and temporal validation (dogwood.md §9).
 *
 * Both passes run on a policy set after macro expansion (compiler/macros.h):
 * they walk every `temporal { … }` leaf of every policy (clause bodies and
 * inline leaves at any depth of a Cedar condition) and never look at macro
 * definitions.  Leaves that failed to parse (root == NULL) are skipped.
 *
 * Diagnostics are errors appended to `diags`, one policy at a time, sorted by
 * source position within a policy.  Each message starts with
 * "for policy `ID`, " (ID = the `@id` annotation, else `policy<N>`, N the
 * 0-based position) and points at the offending span inside the temporal
 * body; most carry a hint.  Memory: one arena per call, freed before return.
 * Recursion is bounded (`&&` chains are walked iteratively; nesting beyond
 * DW_TCHECK_MAX_DEPTH is reported, not followed). */
#ifndef DW_TCHECK_H
#define DW_TCHECK_H
#include <stddef.h>
#include "../lang/ast.h"
#include "../lang/diag.h"
#include "../lang/eventschema.h"
#include "../lang/schema.h"

#define DW_TCHECK_MAX_DEPTH 1024

/* §9.1–§9.5 (need no schemas): the fatal acceptance rules, plus §20 Q8
 * (a negative window is rejected at compile time).
 *   9.1 closedness        "variable `x` is free in this temporal condition"
 *   9.2 range restriction of `exists`
 *   9.3 producers before consumers (pure filters, binding equalities,
 *       correlated aggregate reads, the left operand of `since`)
 *   9.4 aggregation domain (summed variable, `for` variables occur and are
 *       range-restricted in the `where` body)
 *   9.5 aggregate position (only as an operand of a comparison)
 * Returns the number of errors added. */
size_t dw_tcheck_structure(const dw_policy_set *ps, dw_diags *diags);

/* §9.6–§9.9 (need the schemas): validation findings.
 *   9.6 tp-dependence (incl. §20 Q7: `temporal { context.input.x == "a" }`)
 *   9.7 window cap: every window ≤ the event schema's max_window (dv == NULL:
 *       the default 24h)
 *   9.8 temporal typing: binder types, field-pattern terms against the
 *       event's declared field types, `<`… need Long, `==`/`!=` compatible,
 *       `tp(x)` Timepoint, summed variable Long, entity literals and enum ids
 *       declared, `context.<path>` declared for every action the policy's
 *       action scope admits (unconstrained scope: skipped), `principal` /
 *       `resource` typed by the admitted actions' appliesTo
 *   9.9 predicates name a derived event; field paths resolve to leaves
 * `actions` may be NULL (no schema-dependent typing); `dv` may be NULL (no
 * event schema semantics available: 9.9 and field-pattern typing are
 * skipped, the cap is the default 24h).  Meant to run only on a set that
 * passed dw_tcheck_structure, but safe on any expanded set.
 * Returns the number of errors added. */
size_t dw_tcheck_schema(const dw_policy_set *ps, const dw_schema *actions, const dw_event_derivation *dv,
                        dw_diags *diags);

#endif
