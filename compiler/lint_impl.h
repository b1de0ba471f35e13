/* lint_impl.h - what compiler/lint.c, lint_lower.c and lint_rules.c (the
 * rules, and the pipeline's DW_FE_PROFILE stage, in libdogwood) share among
 * themselves and with compiler/lint_run.c
 * (dw_lint_run and the Unicode hygiene rules, which read ICU's tables and so
 * stay in dwc).  Not an API. */
#ifndef DW_LINT_IMPL_H
#define DW_LINT_IMPL_H
#include <setjmp.h>
#include <stdarg.h>
#include "lint.h"
#include "../stdlib/arena.h"
#include "../lang/tast.h"

enum {
    R_PARSE, R_MACRO, R_TEMPORAL, R_VALIDATION, R_NO_ENV, R_UNKNOWN_ACTION, R_UNGUARDED, R_WINDOW_CAP,
    R_DUP_ID, R_RESERVED_ATTR, R_EMPTY_STRING, R_BIDI, R_INVISIBLE, R_MIXED, R_CONFUSABLE, R_IMPOSSIBLE, R_ALWAYS,
    R_SHADOW_PERMIT, R_SHADOW_FORBID, R_OVERRIDDEN, R_TPERMIT_CAP, R_INERT, R_HOME_AFTER_WILD,
    R_PROGRAM_SLASH, R_RESERVED_ACTION, R_PROVIDERS, R_OUTPUT_DECISION, R_IP_HISTORY, R_PRECOND_REQUEST,
    R_MACRO_CALL, R_FORBID_ERROR, R_INDEX_DOMINANCE, R_REDUNDANT, R_VACUOUS, R_DIFF, R_ASSERT_REFUTED,
    R_ASSERT_PROVED, R_PROOF_UNKNOWN, R_N
};

enum { C_UNKNOWN = 0, C_ALWAYS = 1, C_NEVER = 2 };
/* Folding over literals only.  F_T / F_F: always true / false, without error;
 * F_N: never true (false or an error); F_U: unknown. */
enum { F_U, F_T, F_F, F_N };

typedef struct pinfo {
    const dw_annotation *id;    /* @id, or NULL */
    bool temporal;              /* some clause holds a temporal leaf */
    int cond;                   /* C_*: the folded condition (clauses only) */
    uint8_t *acts;              /* admitted elements of the action universe */
    size_t nacts;
    bool all_acts;              /* admits every element */
    bool impossible_reported;
    bool fs;                    /* admits an fs:* action */
    struct conj *cj;            /* conjuncts (analysis), computed once */
    size_t ncj;
    bool cj_done;
} pinfo;

typedef struct L {
    const dw_source *src;
    const dw_lint_options *opt;
    dw_findings *out;
    dw_policy_set *ps;
    dw_arena a;
    jmp_buf oom;
    pinfo *pi;
    size_t np;
    /* action universe: the schema's actions, or (no schema) every action named
     * in a scope, plus "descendants of A" for every `in A`, plus "others" */
    size_t nu;
    const char **uname;         /* display name of each element */
    bool *u_fs, *u_fsother;
} L;

/* Allocation failure unwinds to the pass entry (stdlib/arena.h). */
#define alloc(l, n) dw_arena_alloc_or_jump(&(l)->a, (n), &(l)->oom)
#define vfmt(l, f, ap) dw_arena_vprintf_or_jump(&(l)->a, &(l)->oom, (f), (ap))
#define fmt(l, ...) dw_arena_printf_or_jump(&(l)->a, &(l)->oom, __VA_ARGS__)

struct dw_front_end;
L *dw_lint_new(const dw_source *src, const dw_lint_options *opt, dw_findings *out);
void dw_lint_free(L *l);
/* sev < 0: the rule's severity under the profile */
void dw_lint_addv(L *l, int rule, int sev, uint32_t off, uint32_t end, const char *hint, const char *msg);
/* the same at [off, end) of src, a file other than the policy text (the finding's src) */
void dw_lint_add_in(L *l, int rule, int sev, const dw_source *src, uint32_t off, uint32_t end, const char *hint, const char *msg);
static inline void add(L *l, int rule, int sev, dw_loc loc, const char *hint, const char *f, ...)
    __attribute__((format(printf, 6, 7)));
static inline void add(L *l, int rule, int sev, dw_loc loc, const char *hint, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *m = vfmt(l, f, ap);
    va_end(ap);
    dw_lint_addv(l, rule, sev, loc.off, loc.end, hint, m);
}
/* A Cedar string shown quoted, escaping `"`, `\` and control characters. */
const char *dw_lint_quote(L *l, const char *s, size_t n);
/* d's diagnostics of the front-end stage reported under rule `stage`, as findings; d is emptied */
void dw_lint_take_diags(L *l, dw_diags *d, int stage);
/* e folded over its literals (F_*) */
int dw_lint_fold(const dw_expr *e);
bool dw_lint_has_temporal(const dw_expr *e);
/* structural equality, temporal leaves by their canonical text */
bool dw_lint_expr_eq(L *l, const dw_expr *a, const dw_expr *b);
/* `rule @id("x")`, else `rule policy_<i>` */
const char *dw_lint_rname(L *l, size_t i);
/* shadowed, overridden, vacuous and always-true rules, temporal permit caps,
 * reserved-action-only rules (compiler/lint_scope.c) */
void dw_lint_scope_analysis(L *l);
/* l->np and each rule's @id */
void dw_lint_find_ids(L *l);
/* box-macro-call over the unexpanded set (lib: the macro library) */
void dw_lint_macro_calls(L *l, const dw_policy_set *lib);

typedef void (*expr_fn)(L *l, size_t pi, const dw_expr *e, void *ud);
typedef void (*tnode_fn)(L *l, size_t pi, const dw_tnode *n, void *ud);

/* lint.c: the walkers, folding, the action universe, shared with lint_lower.c and lint_rules.c */
void dw_lint_walk_policy(L *l, size_t pi, expr_fn fn, void *ud);
void dw_lint_twalk(L *l, size_t pi, const dw_tnode *n, tnode_fn fn, void *ud, int depth);
void dw_lint_walk_temporal(L *l, size_t pi, tnode_fn fn, void *ud);
const char *dw_lint_ctx_path(L *l, const dw_expr *e);
bool dw_lint_is_provider_value(const dw_expr *e);
int dw_lint_clause_fold(const dw_clause *c);
void dw_lint_build_universe(L *l);
void dw_lint_compute_acts(L *l, size_t pi);

/* lint_lower.c: the profile's strict validation of the lowered set */
void dw_lint_run_validation(L *l, dw_diags *d);

/* lint_rules.c: the rules over the expanded set (DW_FE_PROFILE) */
void dw_lint_profile_rules(L *l, dw_diags *d);

#endif
