/* lint.c - `dwc check` (see lint.h): the rule table, findings, the linter's state and walkers, folding, the action universe, and the entry points; the lowering for strict validation is in lint_lower.c, the rules over the AST in lint_rules.c. */
#include "lint.h"
#include "lint_impl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <stdarg.h>
#include "../stdlib/cedar_quote.h"
#include "macros.h"
#include "pipeline.h"
#include "tcheck.h"
#include "provcheck.h"
#include "typecheck.h"
#include "../lang/tast.h"

/* ------------------------------------------------------------------ rules */

#define E DW_LINT_ERROR
#define W DW_LINT_WARNING
#define I DW_LINT_INFO
const dw_lint_rule dw_lint_rules[R_N] = {
    [R_PARSE] = { "dw-parse", NULL, E, E, false, "the policy text does not parse", "type-error" },
    [R_MACRO] = { "dw-macro", NULL, E, E, false, "a macro definition or call is invalid (dogwood.md §10.5)", "type-error" },
    [R_TEMPORAL] = { "dw-temporal", NULL, E, E, false, "temporal well-formedness or temporal validation (dogwood.md §9)", "type-error" },
    [R_VALIDATION] = { "dw-validation", NULL, E, E, false, "Cedar strict validation (dogwood.md §5)", "type-error" },
    [R_NO_ENV] = { "dw-no-applicable-action", NULL, E, E, false, "the scope admits no request environment of the schema", "type-error" },
    [R_UNKNOWN_ACTION] = { "dw-unknown-action", "box-unknown-action", E, E, false, "a rule names an action the schema does not declare", "unknown-action" },
    [R_UNGUARDED] = { "dw-unguarded-optional", "box-unguarded-optional", E, E, false, "an optional attribute is read without a dominating `has`", "unguarded-optional" },
    [R_WINDOW_CAP] = { "dw-window-over-cap", "box-window-over-cap", E, E, false, "a `within` window exceeds the event schema's max_window", "window-over-cap" },
    [R_DUP_ID] = { "dw-duplicate-id", "box-duplicate-id", W, E, false, "two or more rules carry the same @id", "duplicate-id" },
    [R_RESERVED_ATTR] = { "dw-reserved-attribute", NULL, E, E, false, "a rule reads a hoisted attribute name directly (dogwood.md §20 D4)", "type-error" },
    [R_EMPTY_STRING] = { "dw-empty-string-compare", NULL, W, W, false, "a context value or provider output is compared with \"\" (dogwood.md §20 Q15)", "inert-literal" },
    [R_BIDI] = { "dw-unicode-bidi", NULL, W, W, false, "the source contains a bidirectional control character", "unicode" },
    [R_INVISIBLE] = { "dw-unicode-invisible", NULL, W, W, false, "a string literal contains an invisible (default-ignorable) character", "unicode" },
    [R_MIXED] = { "dw-unicode-mixed-script", NULL, W, W, false, "a string literal mixes letters of several scripts", "unicode" },
    [R_CONFUSABLE] = { "dw-unicode-confusable", NULL, W, W, false, "two different string literals look the same (confusable characters)", "unicode" },
    [R_IMPOSSIBLE] = { "dw-impossible-policy", NULL, W, W, false, "a rule matches no request", "impossible-policy" },
    [R_ALWAYS] = { "dw-always-true-policy", NULL, W, W, false, "a rule matches every request", "always-true" },
    [R_SHADOW_PERMIT] = { "dw-shadowed-permit", NULL, W, W, false, "every request a permit allows is also allowed by other permits", "permit-shadowed" },
    [R_SHADOW_FORBID] = { "dw-shadowed-forbid", NULL, W, W, false, "every request a forbid denies is also denied by other forbids", "forbid-shadowed" },
    [R_OVERRIDDEN] = { "dw-overridden-permit", NULL, W, W, false, "every request a permit allows is denied by a forbid", "permit-overridden" },
    [R_TPERMIT_CAP] = { "dw-temporal-permit-cap", "box-temporal-permit-cap", E, E, false, "a temporal permit beside another permit for the same action (a cap must be a forbid)", "cap-as-permit" },
    [R_INERT] = { "box-inert-home-literal", NULL, E, E, true, "a path literal spelled with the home's absolute path, or with a trailing slash", "inert-literal" },
    [R_HOME_AFTER_WILD] = { "box-home-after-wildcard", NULL, W, W, true, "a `like` path pattern has the home spelling after a `*`", "inert-literal" },
    [R_PROGRAM_SLASH] = { "box-program-slash", NULL, W, W, true, "a `program` literal contains `/`", "inert-literal" },
    [R_RESERVED_ACTION] = { "box-reserved-action-only", NULL, E, E, true, "a rule's action scope admits only the reserved fs:other", "reserved-action" },
    [R_PROVIDERS] = { "box-providers", NULL, E, E, true, "the policy calls an information provider", "type-error" },
    [R_OUTPUT_DECISION] = { "box-output-on-decision", NULL, W, W, true, "a non-temporal condition reads context.output", "lint" },
    [R_IP_HISTORY] = { "box-ip-in-history", NULL, W, W, true, "a temporal predicate on net:connect names input.ip", "lint" },
    [R_PRECOND_REQUEST] = { "box-precondition-on-request", NULL, W, W, true, "a precondition keys on ::request events", "lint" },
    [R_MACRO_CALL] = { "box-macro-call", NULL, I, I, true, "a rule calls a macro (its temporal state resets when text before the call changes)", "lint" },
    [R_FORBID_ERROR] = { "dw-forbid-may-error", NULL, E, E, false, "a forbid's condition can error for a schema-valid request (Cedar skips it) (proved, VM-confirmed)", "forbid-may-error" },
    [R_INDEX_DOMINANCE] = { "dw-index-dominance", NULL, E, E, false, "the compiled decision index could skip a forbid whose scope matches (artifact verifier)", "index-dominance" },
    [R_REDUNDANT] = { "dw-redundant", NULL, W, W, false, "two rules match exactly the same requests (proved)", "redundant" },
    [R_VACUOUS] = { "dw-vacuous", NULL, W, W, false, "a rule matches no request, or its condition holds for every request its scope admits (proved)", "vacuous" },
    [R_DIFF] = { "dw-diff", NULL, I, I, false, "the set compared with --against OLD: equivalent, more or less permissive, or incomparable", "diff" },
    [R_ASSERT_REFUTED] = { "dw-assertion-refuted", NULL, E, E, false, "the set allows a request an --assert assertion says it never allows (VM-confirmed)", "assertion-refuted" },
    [R_ASSERT_PROVED] = { "dw-assertion-proved", NULL, I, I, false, "an --assert assertion holds for every schema-valid request (proved)", "assertion-proved" },
    [R_PROOF_UNKNOWN] = { "dw-proof-unknown", NULL, I, I, false, "the solver answered unknown (timeout): nothing is claimed", "unknown" },
};
#undef E
#undef W
#undef I
const size_t dw_lint_nrules = R_N;

const char *dw_lint_sev_name(dw_lint_sev s)
{
    return s == DW_LINT_ERROR ? "error" : s == DW_LINT_WARNING ? "warning" : "info";
}

void dw_findings_free(dw_findings *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->v[i].msg);
        free(f->v[i].hint);
        free(f->v[i].cex_request);
        free(f->v[i].cex_entities);
        free(f->v[i].cex_leaves);
    }
    free(f->v);
    dw_lines_free(&f->lines);
    memset(f, 0, sizeof *f);
}

size_t dw_lint_rule_index(const char *id)
{
    for (size_t i = 0; i < R_N; i++) if (strcmp(dw_lint_rules[i].id, id) == 0) return i;
    return SIZE_MAX;
}

static char *dup_or_null(const char *s, bool *oom)
{
    if (!s) return NULL;
    char *d = strdup(s);
    if (!d) *oom = true;
    return d;
}

int dw_findings_push(dw_findings *f, const dw_source *src, const char *id, int sev, dw_loc loc, long policy,
                     const char *hint, const char *msg, const char *request, const char *entities,
                     const uint8_t *leaves, uint32_t nleaves)
{
    size_t r = dw_lint_rule_index(id);
    if (r == SIZE_MAX) return -1;
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 16;
        dw_finding *v = realloc(f->v, cap * sizeof *v);
        if (!v) return -1;
        f->v = v;
        f->cap = cap;
    }
    dw_finding *g = &f->v[f->n];
    memset(g, 0, sizeof *g);
    bool oom = false;
    g->rule_index = r;
    g->rule = dw_lint_rules[r].id;
    g->sev = sev >= 0 ? (dw_lint_sev)sev : dw_lint_rules[r].sev;
    uint32_t end = loc.end < loc.off ? loc.off : loc.end;
    g->loc = dw_lines_loc(&f->lines, src, loc.off, end);
    dw_loc e = dw_lines_loc(&f->lines, src, end, end);
    g->end_line = e.line;
    g->end_col = e.col;
    g->policy = policy;
    g->src = src;
    g->msg = dup_or_null(msg, &oom);
    g->hint = dup_or_null(hint, &oom);
    g->cex_request = dup_or_null(request, &oom);
    g->cex_entities = dup_or_null(entities, &oom);
    if (leaves && nleaves) {
        g->cex_leaves = malloc(nleaves);
        if (g->cex_leaves) { memcpy(g->cex_leaves, leaves, nleaves); g->cex_nleaves = nleaves; }
        else oom = true;
    }
    if (oom || !g->msg) {
        free(g->msg); free(g->hint); free(g->cex_request); free(g->cex_entities); free(g->cex_leaves);
        return -1;
    }
    f->n++;
    return 0;
}

static int finding_cmp(const void *a, const void *b)
{
    const dw_finding *x = a, *y = b;
    if (x->src != y->src) return x->src == NULL ? -1 : y->src == NULL ? 1 : strcmp(x->src->name, y->src->name);
    if (x->loc.off != y->loc.off) return x->loc.off < y->loc.off ? -1 : 1;
    int c = strcmp(x->rule, y->rule);
    if (c) return c;
    return strcmp(x->msg, y->msg);
}

void dw_findings_sort(dw_findings *f)
{
    if (f->n > 1) qsort(f->v, f->n, sizeof *f->v, finding_cmp);
}

/* ------------------------------------------------------------------ state */

static char *xstrdup(L *l, const char *s)
{
    if (!s) return NULL;
    char *d = strdup(s);
    if (!d) longjmp(l->oom, 1);
    return d;
}

static size_t policy_at(L *l, uint32_t off);

/* a rule's id as reported under the profile */
static const char *reported_id(int rule, bool box)
{
    const dw_lint_rule *r = &dw_lint_rules[rule];
    return box && r->box_id ? r->box_id : r->id;
}

/* sev < 0: the rule's severity under the profile */
void dw_lint_addv(L *l, int rule, int sev, uint32_t off, uint32_t end, const char *hint, const char *msg)
{
    dw_lint_add_in(l, rule, sev, l->src, off, end, hint, msg);
}

void dw_lint_add_in(L *l, int rule, int sev, const dw_source *src, uint32_t off, uint32_t end, const char *hint, const char *msg)
{
    const dw_lint_rule *r = &dw_lint_rules[rule];
    if (r->box_only && !l->opt->box) return;
    dw_findings *f = l->out;
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 16;
        dw_finding *v = realloc(f->v, cap * sizeof *v);
        if (!v) longjmp(l->oom, 1);
        f->v = v;
        f->cap = cap;
    }
    if (end < off) end = off;
    dw_finding *g = &f->v[f->n];
    memset(g, 0, sizeof *g);
    g->rule_index = (size_t)rule;
    g->rule = reported_id(rule, l->opt->box);
    g->sev = sev >= 0 ? (dw_lint_sev)sev : l->opt->box ? r->box_sev : r->sev;
    g->loc = dw_lines_loc(&f->lines, src, off, end);
    dw_loc e = dw_lines_loc(&f->lines, src, end, end);
    g->end_line = e.line;
    g->end_col = e.col;
    g->msg = xstrdup(l, msg);
    size_t pol = src == l->src ? policy_at(l, off) : SIZE_MAX;
    g->policy = pol == SIZE_MAX ? -1 : (long)pol;
    if (src != l->src) g->src = src;
    g->hint = hint ? strdup(hint) : NULL;
    if (hint && !g->hint) { free(g->msg); longjmp(l->oom, 1); }
    f->n++;
}

/* `rule @id("x")`, else `rule policy_<i>`: the name dwd, replay and the
 * decision log use for it (box.md §8: @id, else the 0-based policy_<i>) */
static const char *rname(L *l, size_t i)
{
    const dw_annotation *id = l->pi[i].id;
    if (id) return fmt(l, "rule @id(\"%.*s\")", (int)id->value.len, id->value.s);
    return fmt(l, "rule policy_%zu", i);        /* Box's name for it (0-based) */
}

const char *dw_lint_rname(L *l, size_t i) { return rname(l, i); }

/* A Cedar string shown quoted, escaping `"`, `\` and control characters. */
const char *dw_lint_quote(L *l, const char *s, size_t n)
{
    char *o = alloc(l, n * DW_CEDAR_ESCAPE_MAX + 3), *p = o;
    *p++ = '"';
    p += dw_cedar_escape_mem(p, s, n);
    *p++ = '"';
    *p = 0;
    return o;
}

/* ------------------------------------------------------------------ diagnostics of the front end */

static uint32_t policy_start(const dw_policy *p) { return p->loc.off < p->effect_loc.off ? p->loc.off : p->effect_loc.off; }

/* the policy whose text holds offset off: policies are in source order, so a
 * binary search (a finding per rule of a 100,000-rule set stays linear) */
static size_t policy_at(L *l, uint32_t off)
{
    if (!l->ps || !l->ps->npolicies) return SIZE_MAX;
    const dw_policy *v = l->ps->policies;
    size_t lo = 0, hi = l->ps->npolicies;   /* the last policy starting at or before off is in [lo, hi) */
    if (policy_start(&v[0]) > off) return SIZE_MAX;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (policy_start(&v[mid]) <= off) lo = mid;
        else hi = mid;
    }
    return off <= v[lo].loc.end ? lo : SIZE_MAX;
}

/* The rule a front-end diagnostic of stage rule `stage` is reported under,
 * or -1 to leave it out (`dwc check` and, with a profile, the loader). */
static int classify(int stage, const char *m, bool box)
{
    if (stage == R_VALIDATION && box && strstr(m, ", provider `"))
        return -1;   /* a provider call's validation (compiler/provcheck.c): box-providers reports the call */
    if (stage == R_VALIDATION || stage == R_TEMPORAL) {
        if (strstr(m, "exceeds the maximum allowed window")) return R_WINDOW_CAP;
        if (strstr(m, "unrecognized action")) return R_UNKNOWN_ACTION;
        if (strstr(m, "unable to guarantee safety of access to optional attribute")) return R_UNGUARDED;
        if (strstr(m, "policy is impossible")) return R_IMPOSSIBLE;
        if (strstr(m, "unable to find an applicable action")) return R_NO_ENV;
    }
    return stage;
}

void dw_lint_tag_diags(dw_diags *d, size_t from, const char *stage_rule, bool box)
{
    size_t stage = dw_lint_rule_index(stage_rule);
    if (stage == SIZE_MAX) return;
    for (size_t i = from; i < d->n; i++) {
        int rule = d->v[i].sev == DW_SEV_NOTE || d->v[i].code ? -1 : classify((int)stage, d->v[i].msg, box);
        if (rule >= 0) d->v[i].code = strdup(reported_id(rule, box));   /* NULL on OOM: shown untagged */
    }
}

void dw_lint_take_diags(L *l, dw_diags *d, int stage)
{
    /* a scope naming an unknown action also admits no request environment:
     * that follows from the unknown action, which alone is reported */
    bool *unknown = l->ps && l->np ? alloc(l, l->np) : NULL;
    for (size_t i = 0; unknown && i < d->n; i++) {
        size_t p = d->v[i].src == l->src ? policy_at(l, d->v[i].loc.off) : SIZE_MAX;
        if (p < l->np && d->v[i].sev != DW_SEV_NOTE && classify(stage, d->v[i].msg, l->opt->box) == R_UNKNOWN_ACTION)
            unknown[p] = true;
    }
    for (size_t i = 0; i < d->n; i++) {
        const dw_diag *g = &d->v[i];
        if (g->sev == DW_SEV_NOTE) continue;
        const char *m = g->msg;
        int rule = classify(stage, m, l->opt->box);
        if (rule < 0) continue;
        size_t at = unknown && rule == R_NO_ENV && g->src == l->src ? policy_at(l, g->loc.off) : SIZE_MAX;
        if (at < l->np && unknown[at]) continue;
        int sev = g->sev == DW_SEV_ERROR ? DW_LINT_ERROR : DW_LINT_WARNING;
        uint32_t off = g->loc.off, end = g->loc.end;
        /* a --macros library's errors point into it (its parsed set's copy of
         * the source dies with the front end; the caller's outlives the
         * findings); the standard library's, at the policy file's start */
        const dw_source *in = l->src;
        if (g->src && g->src != l->src && l->opt->macros && g->src->text == l->opt->macros->text) in = l->opt->macros;
        else if (g->src != l->src) off = end = 0;
        if (rule == R_IMPOSSIBLE) {
            size_t p = in == l->src ? policy_at(l, off) : SIZE_MAX;
            if (p != SIZE_MAX && l->pi) l->pi[p].impossible_reported = true;
            sev = -1;
        }
        dw_lint_add_in(l, rule, sev, in, off, end, g->hint, m);
    }
    dw_diags_free(d);
    dw_diags_init(d);
    d->limit = 1u << 20;
}

/* ------------------------------------------------------------------ walkers */

static void walk(L *l, size_t pi, const dw_expr *e, expr_fn fn, void *ud)
{
    if (!e) return;
    fn(l, pi, e, ud);
    const dw_expr *k;
    for (size_t i = 0; (k = dw_expr_kid_c(e, i)); i++) walk(l, pi, k, fn, ud);
}

void dw_lint_walk_policy(L *l, size_t pi, expr_fn fn, void *ud)
{
    const dw_policy *p = &l->ps->policies[pi];
    for (size_t c = 0; c < p->nclauses; c++) walk(l, pi, p->clauses[c].body, fn, ud);
}

void dw_lint_twalk(L *l, size_t pi, const dw_tnode *n, tnode_fn fn, void *ud, int depth)
{
    if (!n || depth > DW_TCHECK_MAX_DEPTH) return;
    fn(l, pi, n, ud);
    for (int k = 0; k < 2; k++) dw_lint_twalk(l, pi, n->kids[k], fn, ud, depth + 1);
    for (size_t k = 0; k < n->nargs; k++) dw_lint_twalk(l, pi, n->args[k], fn, ud, depth + 1);
    for (size_t k = 0; k < n->nfields; k++) dw_lint_twalk(l, pi, n->fields[k].term, fn, ud, depth + 1);
}

typedef struct { tnode_fn fn; void *ud; } tleaf_ud;
static void tleaf_cb(L *l, size_t pi, const dw_expr *e, void *ud)
{
    tleaf_ud *t = ud;
    if (e->kind == DW_E_TEMPORAL && e->u.temporal) dw_lint_twalk(l, pi, e->u.temporal->root, t->fn, t->ud, 0);
}
void dw_lint_walk_temporal(L *l, size_t pi, tnode_fn fn, void *ud)
{
    tleaf_ud t = { fn, ud };
    dw_lint_walk_policy(l, pi, tleaf_cb, &t);
}

/* `context.a.b` as written: the dotted path after `context`, else NULL */
const char *dw_lint_ctx_path(L *l, const dw_expr *e)
{
    size_t n = 0;
    const dw_expr *x = e;
    while (x && x->kind == DW_E_GETATTR) { n += x->u.attr.attr.len + 1; x = x->u.attr.kids0; }
    if (!x || x->kind != DW_E_VAR || x->u.var != DW_VAR_CONTEXT || x == e) return NULL;
    n--;   /* no leading dot */
    char *s = alloc(l, n + 1);
    size_t at = n;
    s[n] = 0;
    for (x = e; x->kind == DW_E_GETATTR; x = x->u.attr.kids0) {
        at -= x->u.attr.attr.len;
        memcpy(s + at, x->u.attr.attr.s, x->u.attr.attr.len);
        if (at) s[--at] = '.';
    }
    return s;
}

bool dw_lint_is_provider_value(const dw_expr *e)
{
    while (e && (e->kind == DW_E_GETATTR || e->kind == DW_E_METHOD))
        e = e->kind == DW_E_GETATTR ? e->u.attr.kids0 : e->u.call.recv;
    return e && e->kind == DW_E_CALL && e->u.call.nsegs >= 2;
}

/* ------------------------------------------------------------------ structural equality and folding */

/* temporal leaves are equal when their canonical texts are (stable binder names) */
static bool temporal_eq(void *ctx, const dw_temporal *a, const dw_temporal *b)
{
    L *l = ctx;
    if (!a || !b || !a->root || !b->root) return false;
    size_t na, nb;
    char *x = dw_temporal_canon_text(a, true, &na), *y = dw_temporal_canon_text(b, true, &nb);
    bool eq = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    if (!x || !y) longjmp(l->oom, 1);
    return eq;
}

bool dw_lint_expr_eq(L *l, const dw_expr *a, const dw_expr *b) { return dw_expr_eq(a, b, temporal_eq, l); }

static int fold(const dw_expr *e)
{
    if (!e) return F_U;
    switch (e->kind) {
    case DW_E_BOOL: return e->u.b ? F_T : F_F;
    case DW_E_NOT: {
        int a = fold(e->u.kids[0]);
        return a == F_T ? F_F : a == F_F ? F_T : a == F_N ? F_U : F_U;
    }
    case DW_E_AND: {
        int a = fold(e->u.kids[0]);
        if (a == F_F) return F_F;
        if (a == F_N) return F_N;
        int b = fold(e->u.kids[1]);
        if (a == F_T) return b;
        return b == F_F || b == F_N ? F_N : F_U;
    }
    case DW_E_OR: {
        int a = fold(e->u.kids[0]);
        if (a == F_T) return F_T;
        int b = fold(e->u.kids[1]);
        if (a == F_F) return b;
        if (a == F_N) return b == F_F || b == F_N ? F_N : F_U;
        return F_U;
    }
    case DW_E_IF: {
        int c = fold(e->u.kids[0]);
        if (c == F_T) return fold(e->u.kids[1]);
        if (c == F_F) return fold(e->u.kids[2]);
        int t = fold(e->u.kids[1]), f = fold(e->u.kids[2]);
        if ((t == F_F || t == F_N) && (f == F_F || f == F_N)) return F_N;
        if (c == F_N) return F_N;
        return F_U;
    }
    case DW_E_EQ: case DW_E_NE: {
        const dw_expr *a = e->u.kids[0], *b = e->u.kids[1];
        if (a->kind != b->kind) {
            bool lit = (a->kind == DW_E_BOOL || a->kind == DW_E_LONG || a->kind == DW_E_STRING || a->kind == DW_E_ENTITY) &&
                       (b->kind == DW_E_BOOL || b->kind == DW_E_LONG || b->kind == DW_E_STRING || b->kind == DW_E_ENTITY);
            if (!lit) return F_U;
            return e->kind == DW_E_EQ ? F_F : F_T;
        }
        bool eq;
        switch (a->kind) {
        case DW_E_BOOL: eq = a->u.b == b->u.b; break;
        case DW_E_LONG: eq = a->u.i == b->u.i; break;
        case DW_E_STRING: eq = dw_str_eq(a->u.str, b->u.str); break;
        case DW_E_ENTITY: eq = dw_str_eq(a->u.euid.type, b->u.euid.type) && dw_str_eq(a->u.euid.id, b->u.euid.id); break;
        default: return F_U;
        }
        return (eq == (e->kind == DW_E_EQ)) ? F_T : F_F;
    }
    default: return F_U;
    }
}

/* A clause: C_ALWAYS (satisfied for every request), C_NEVER, or C_UNKNOWN. */
int dw_lint_clause_fold(const dw_clause *c)
{
    int v = fold(c->body);
    if (c->is_when) return v == F_T ? C_ALWAYS : v == F_F || v == F_N ? C_NEVER : C_UNKNOWN;
    return v == F_F ? C_ALWAYS : v == F_T ? C_NEVER : C_UNKNOWN;
}

int dw_lint_fold(const dw_expr *e) { return fold(e); }

static bool has_temporal(const dw_expr *e)
{
    if (!e) return false;
    if (e->kind == DW_E_TEMPORAL) return true;
    const dw_expr *k;
    for (size_t i = 0; (k = dw_expr_kid_c(e, i)); i++)
        if (has_temporal(k)) return true;
    return false;
}

bool dw_lint_has_temporal(const dw_expr *e) { return has_temporal(e); }

/* ------------------------------------------------------------------ the action universe */

static long act_index(const dw_schema *s, dw_str type, dw_str id)
{
    const dw_action_decl *a = dw_schema_action(s, type.s, type.len, id.s, id.len);
    return a ? (long)(a - s->actions) : -1;
}

/* is schema action x `in` action t (reflexive, transitive over parents)? */
static bool act_in(const dw_schema *s, size_t x, size_t t, int depth)
{
    if (x == t) return true;
    if (depth > 64) return false;
    const dw_action_decl *a = &s->actions[x];
    for (size_t k = 0; k < a->nparents; k++) {
        long p = act_index(s, a->parents[k].type, a->parents[k].id);
        if (p >= 0 && act_in(s, (size_t)p, t, depth + 1)) return true;
    }
    return false;
}

static long uindex(L *l, const char *name)
{
    for (size_t i = 0; i < l->nu; i++) if (strcmp(l->uname[i], name) == 0) return (long)i;
    return -1;
}

static const char *euid_text(L *l, const dw_euid_lit *u)
{
    return fmt(l, "%.*s::%s", (int)u->type.len, u->type.s, dw_lint_quote(l, u->id.s, u->id.len));
}

static bool id_is_fs(dw_str id) { return id.len >= 3 && memcmp(id.s, "fs:", 3) == 0; }

void dw_lint_build_universe(L *l)
{
    const dw_schema *s = l->opt->schema;
    if (s) {
        l->nu = s->nactions;
        l->uname = alloc(l, (l->nu + 1) * sizeof *l->uname);
        l->u_fs = alloc(l, l->nu + 1);
        l->u_fsother = alloc(l, l->nu + 1);
        for (size_t i = 0; i < l->nu; i++) {
            l->uname[i] = euid_text(l, &s->actions[i].uid);
            l->u_fs[i] = id_is_fs(s->actions[i].uid.id);
            l->u_fsother[i] = dw_str_is(s->actions[i].uid.id, "fs:other");
        }
        return;
    }
    size_t cap = 1;
    for (size_t i = 0; i < l->ps->npolicies; i++) cap += 2 * (l->ps->policies[i].action.nlist + 1);
    l->uname = alloc(l, cap * sizeof *l->uname);
    l->u_fs = alloc(l, cap);
    l->u_fsother = alloc(l, cap);
    for (size_t i = 0; i < l->ps->npolicies; i++) {
        const dw_scope_con *c = &l->ps->policies[i].action;
        const dw_euid_lit *v = c->kind == DW_SC_IN_LIST ? c->list : &c->target;
        size_t n = c->kind == DW_SC_IN_LIST ? c->nlist : c->kind == DW_SC_EQ || c->kind == DW_SC_IN ? 1 : 0;
        for (size_t k = 0; k < n; k++) {
            const char *nm = euid_text(l, &v[k]);
            if (uindex(l, nm) < 0) {
                l->u_fs[l->nu] = id_is_fs(v[k].id);
                l->u_fsother[l->nu] = dw_str_is(v[k].id, "fs:other");
                l->uname[l->nu++] = nm;
            }
            if (c->kind != DW_SC_EQ) {
                const char *d = fmt(l, "descendants of %s", nm);
                if (uindex(l, d) < 0) l->uname[l->nu++] = d;
            }
        }
    }
    l->uname[l->nu++] = "other actions";
}

static void admit_in(L *l, uint8_t *acts, const dw_euid_lit *t, bool eq)
{
    const dw_schema *s = l->opt->schema;
    if (s) {
        long ti = act_index(s, t->type, t->id);
        if (ti < 0) return;
        if (eq) { acts[ti] = 1; return; }
        for (size_t x = 0; x < l->nu; x++) if (act_in(s, x, (size_t)ti, 0)) acts[x] = 1;
        return;
    }
    const char *nm = euid_text(l, t);
    long i = uindex(l, nm);
    if (i >= 0) acts[i] = 1;
    if (!eq && (i = uindex(l, fmt(l, "descendants of %s", nm))) >= 0) acts[i] = 1;
}

void dw_lint_compute_acts(L *l, size_t pi)
{
    const dw_policy *p = &l->ps->policies[pi];
    pinfo *f = &l->pi[pi];
    f->acts = alloc(l, l->nu + 1);
    const dw_scope_con *c = &p->action;
    switch (c->kind) {
    case DW_SC_ANY: memset(f->acts, 1, l->nu); break;
    case DW_SC_EQ: admit_in(l, f->acts, &c->target, true); break;
    case DW_SC_IN: admit_in(l, f->acts, &c->target, false); break;
    case DW_SC_IN_LIST: for (size_t k = 0; k < c->nlist; k++) admit_in(l, f->acts, &c->list[k], false); break;
    default: break;
    }
    f->all_acts = true;
    for (size_t x = 0; x < l->nu; x++) {
        if (f->acts[x]) { f->nacts++; if (l->u_fs[x]) f->fs = true; }
        else f->all_acts = false;
    }
}

/* ------------------------------------------------------------------ driver */

void dw_lint_find_ids(L *l)
{
    l->np = l->ps->npolicies;
    l->pi = alloc(l, (l->np + 1) * sizeof *l->pi);
    for (size_t i = 0; i < l->np; i++) {
        const dw_policy *p = &l->ps->policies[i];
        for (size_t k = 0; k < p->nannots; k++)
            if (dw_str_is(p->annots[k].key, "id") && p->annots[k].has_value) l->pi[i].id = &p->annots[k];
    }
}

L *dw_lint_new(const dw_source *src, const dw_lint_options *opt, dw_findings *out)
{
    L *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    l->src = src;
    l->opt = opt;
    l->out = out;
    dw_arena_init(&l->a, 1 << 16);
    return l;
}

void dw_lint_free(L *l)
{
    dw_arena_free(&l->a);
    free(l);
}

int dw_lint_profile(dw_front_end *fe, dw_diags *diags)
{
    if (!fe->profile || !fe->ps) return 0;
    L *l = dw_lint_new(fe->src, fe->profile, &fe->findings);
    if (!l) return -1;
    l->ps = fe->ps;
    dw_diags d;
    dw_diags_init(&d);
    d.limit = 1u << 20;
    size_t first = fe->findings.n;
    int rc = 0;
    if (setjmp(l->oom)) rc = -1;
    else dw_lint_profile_rules(l, &d);
    /* each error finding is a refusal, reported as `dwc check` reports it and
     * in its order (by position), so the loader's first error is check's */
    if (rc == 0) {
        /* no findings yet: v is NULL, and NULL + 0 is undefined (fuzz_lsp found it) */
        dw_findings mine = { fe->findings.v ? fe->findings.v + first : NULL, fe->findings.n - first, fe->findings.n - first, { 0 } };
        dw_findings_sort(&mine);
    }
    for (size_t i = first; rc == 0 && i < fe->findings.n; i++) {
        const dw_finding *g = &fe->findings.v[i];
        if (g->sev != DW_LINT_ERROR) continue;
        size_t before = diags->n;
        dw_diag_add(diags, DW_SEV_ERROR, fe->src, g->loc, g->hint, "%s", g->msg);
        if (diags->n > before) diags->v[before].code = strdup(g->rule);   /* NULL on OOM: untagged */
    }
    for (size_t i = first; rc == 0 && i < fe->findings.n; i++) if (fe->findings.v[i].sev == DW_LINT_ERROR) rc = 1;
    dw_diags_free(&d);
    dw_lint_free(l);
    return rc;
}
