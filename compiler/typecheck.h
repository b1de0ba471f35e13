/* typecheck.h - Cedar 4.10 strict validation of a policy set against an
 * action schema (dogwood.md §5, §16).
 *
 * Every policy is type-checked once per request environment (principal type,
 * action, resource type) declared by the schema; the scope is folded into the
 * condition as Cedar does, so environments the scope excludes type as False
 * and their condition is skipped.  Findings are appended to a dw_diags:
 * errors (validation fails) and warnings (the impossible-policy warning).
 * Temporal leaves type as the Bool they are lowered to; provider calls as
 * their declared output type (compiler/provcheck.h, §13.4). */
#ifndef DW_TYPECHECK_H
#define DW_TYPECHECK_H
#include <stddef.h>
#include "../lang/ast.h"
#include "../lang/diag.h"
#include "../lang/schema.h"

typedef struct dw_validate_result { size_t nerrors, nwarnings; } dw_validate_result;

/* Validate every policy of ps against schema; findings appended to diags
 * (errors and warnings).  Never stops at the first finding.  Diagnostics of
 * one policy are sorted by source position; each names the policy (its `@id`
 * annotation, else `policy<N>` with N its 0-based position). */
dw_validate_result dw_validate(const dw_policy_set *ps, const dw_schema *schema, dw_diags *diags);
/* The same with provider declarations (lang/providers.h; NULL: the built-ins alone). */
struct dw_providers;
dw_validate_result dw_validate_with_providers(const dw_policy_set *ps, const dw_schema *schema,
                                              const struct dw_providers *providers, dw_diags *diags);

#endif
