/* provcheck.h - validation of information-provider invocations (dogwood.md
 * §13.3, §13.4, §16's provider stage), for the strict validator
 * (compiler/typecheck.c), which calls it once per request environment:
 * the provider is declared; the argument count equals its argumentTypes;
 * literal arguments match their paramType; attribute-path arguments exist
 * with a matching type in the environment (so on every action the rule's
 * scope admits); output methods are declared, in arity, argument types and
 * inputType along the chain.  The result's Cedar type is the declared
 * output type of the last step, so projections and comparisons after it are
 * typed as ordinary Cedar. */
#ifndef DW_PROVCHECK_H
#define DW_PROVCHECK_H
#include "../lang/ast.h"
#include "../lang/providers.h"
#include "../lang/schema.h"

typedef struct dw_pcheck_env {
    const dw_providers *decls;          /* NULL: the built-ins alone */
    const dw_schema *schema;
    const dw_action_decl *act;          /* the environment being checked */
    const dw_type *ptype, *rtype, *ctxtype;
    void (*report)(void *ctx, dw_loc loc, const char *hint, const char *msg);
    void *ctx;
} dw_pcheck_env;

/* e is the head of a provider invocation: a call `Ns::Fn(...)` (two or more
 * segments), or an output method (a non-Cedar method) on one. */
bool dw_is_provider_chain(const dw_expr *e);
/* The Cedar type of invocation e, or NULL after reporting why. */
const dw_type *dw_provider_chain_type(const dw_pcheck_env *env, const dw_expr *e);
/* The argument form rule (§13.3), for the lowering: NULL when arg is an
 * attribute path rooted at context (with at least one attribute), principal
 * or resource, or a string, integer, decimal("...") or bool literal or a set
 * literal of those; else what it is not. */
const char *dw_provider_arg_form_error(const dw_expr *arg);

/* A literal pattern of a built-in regex provider must compile (§13.5): the
 * pattern argument of `call` if it does not (the reason in err), else NULL. */
const dw_expr *dw_provider_pattern_error(const dw_provider_decl *d, const dw_expr *call, char *err, size_t cap);

/* e (`x.a` or `x has a`) reads a hoisted name (§14.3, §20 D4):
 * `context.policy_<i>__temporal_<k>` or `context.providers.policy_<i>_p_<k>`.
 * Such a read is refused when the set is lowered ("reserved attribute"). */
bool dw_reads_hoisted_name(const dw_expr *e);
/* e holds a temporal leaf, a provider call or a provider output method: something lowering
 * hoists (§14.3), numbered in source order. */
bool dw_expr_hoists(const dw_expr *e);
/* Some condition of ps's policies or templates hoists something.  Only then are the hoisted
 * names reserved (§20 D4: lowering declares them); a set that hoists nothing is plain Cedar,
 * where they are context attributes like any other (dwc dogwood lower's output reads them). */
bool dw_set_hoists(const dw_policy_set *ps);
/* How such a read is refused, by the compiler and by `dwc validate`. */
#define DW_HOISTED_READ_HINT "write the condition itself (`temporal { ... }` or the provider call)"
#define DW_HOISTED_READ_MSG "reserved attribute: a name reserved for hoisted temporal leaves and provider outputs " \
    "(context.policy_<i>__temporal_<k>, context.providers.policy_<i>_p_<k>) is read directly"
/* Each read of a hoisted name in the conditions of ps's policies and templates, reported as the
 * compiler reports it (an error at the read); how many.  None in a set that hoists nothing (no
 * temporal leaf, no provider call): that is plain Cedar, such as dwc's own lowering. */
size_t dw_report_hoisted_reads(const dw_policy_set *ps, dw_diags *d);

#endif
