/* lint.c - `dwc check`: lint rules and structural analysis (see lint.h). */
#include "lint.h"
#include "lint_impl.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    g->loc = dw_lines_loc(&f->lines, l->src, off, end);
    dw_loc e = dw_lines_loc(&f->lines, l->src, end, end);
    g->end_line = e.line;
    g->end_col = e.col;
    g->msg = xstrdup(l, msg);
    size_t pol = policy_at(l, off);
    g->policy = pol == SIZE_MAX ? -1 : (long)pol;
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
        if (g->src != l->src) off = end = 0;   /* e.g. the standard macro library */
        if (rule == R_IMPOSSIBLE) {
            size_t p = policy_at(l, off);
            if (p != SIZE_MAX && l->pi) l->pi[p].impossible_reported = true;
            sev = -1;
        }
        dw_lint_addv(l, rule, sev, off, end, g->hint, m);
    }
    dw_diags_free(d);
    dw_diags_init(d);
    d->limit = 1u << 20;
}

/* ------------------------------------------------------------------ walkers */

typedef void (*expr_fn)(L *l, size_t pi, const dw_expr *e, void *ud);

static void walk(L *l, size_t pi, const dw_expr *e, expr_fn fn, void *ud)
{
    if (!e) return;
    fn(l, pi, e, ud);
    const dw_expr *k;
    for (size_t i = 0; (k = dw_expr_kid_c(e, i)); i++) walk(l, pi, k, fn, ud);
}

static void walk_policy(L *l, size_t pi, expr_fn fn, void *ud)
{
    const dw_policy *p = &l->ps->policies[pi];
    for (size_t c = 0; c < p->nclauses; c++) walk(l, pi, p->clauses[c].body, fn, ud);
}

typedef void (*tnode_fn)(L *l, size_t pi, const dw_tnode *n, void *ud);

static void twalk(L *l, size_t pi, const dw_tnode *n, tnode_fn fn, void *ud, int depth)
{
    if (!n || depth > DW_TCHECK_MAX_DEPTH) return;
    fn(l, pi, n, ud);
    for (int k = 0; k < 2; k++) twalk(l, pi, n->kids[k], fn, ud, depth + 1);
    for (size_t k = 0; k < n->nargs; k++) twalk(l, pi, n->args[k], fn, ud, depth + 1);
    for (size_t k = 0; k < n->nfields; k++) twalk(l, pi, n->fields[k].term, fn, ud, depth + 1);
}

typedef struct { tnode_fn fn; void *ud; } tleaf_ud;
static void tleaf_cb(L *l, size_t pi, const dw_expr *e, void *ud)
{
    tleaf_ud *t = ud;
    if (e->kind == DW_E_TEMPORAL && e->u.temporal) twalk(l, pi, e->u.temporal->root, t->fn, t->ud, 0);
}
static void walk_temporal(L *l, size_t pi, tnode_fn fn, void *ud)
{
    tleaf_ud t = { fn, ud };
    walk_policy(l, pi, tleaf_cb, &t);
}

/* `context.a.b` as written: the dotted path after `context`, else NULL */
static const char *ctx_path(L *l, const dw_expr *e)
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

static bool is_provider_value(const dw_expr *e)
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
static int clause_fold(const dw_clause *c)
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

static void build_universe(L *l)
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

static void compute_acts(L *l, size_t pi)
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

/* ------------------------------------------------------------------ lowering for strict validation */

typedef struct hoist { size_t policy; const char *name; } hoist;
/* providers: also hoist provider invocations (the `lower` command; strict
 * validation keeps the calls, compiler/provcheck.c types them) */
typedef struct phoist { const char *name; const dw_type *type; } phoist;
typedef struct lower_st {
    hoist *v; size_t n, cap; size_t k;
    bool providers; const dw_providers *decls;
    phoist *pv; size_t pn, pcap;
} lower_st;

/* The declared output type of invocation e (its last output method's), or NULL. */
static const dw_type *provider_out(const lower_st *st, const dw_expr *e)
{
    const dw_expr *chain[64];
    size_t n = 0;
    while (e->kind == DW_E_METHOD && n < 64) { chain[n++] = e; e = e->u.call.recv; }
    if (e->kind != DW_E_CALL) return NULL;
    const dw_provider_decl *d = dw_providers_find(st->decls, e->u.call.name.s, e->u.call.name.len);
    const dw_type *t = d ? d->out : NULL;
    for (size_t i = n; t && i-- > 0;) {
        const dw_provider_method *m = dw_provider_method_find(d, chain[i]->u.call.name.s, chain[i]->u.call.name.len);
        t = m ? m->out : NULL;
    }
    return t;
}

/* `context.<a>` or `context.<a>.<b>` (b may be NULL) */
static dw_expr *ctx_attr(L *l, dw_loc loc, const char *a, const char *b)
{
    dw_expr *ctx = alloc(l, sizeof *ctx);
    memset(ctx, 0, sizeof *ctx);
    ctx->kind = DW_E_VAR;
    ctx->u.var = DW_VAR_CONTEXT;
    ctx->loc = loc;
    ctx->depth = 1;
    dw_expr *g = ctx;
    for (int i = 0; i < 2; i++) {
        const char *name = i ? b : a;
        if (!name) break;
        dw_expr *n = alloc(l, sizeof *n);
        memset(n, 0, sizeof *n);
        n->kind = DW_E_GETATTR;
        n->loc = loc;
        n->u.attr.kids0 = g;
        n->u.attr.attr = (dw_str){ name, strlen(name) };
        n->depth = g->depth + 1;
        g = n;
    }
    return g;
}

/* v (n used of *cap elements of size sz) with room for one more, in l's arena */
static void *room(L *l, void *v, size_t n, size_t *cap, size_t sz)
{
    if (n < *cap) return v;
    *cap = *cap ? *cap * 2 : 8;
    void *w = alloc(l, *cap * sz);
    if (n) memcpy(w, v, n * sz);
    return w;
}

static dw_expr *lower(L *l, size_t pi, dw_expr *e, lower_st *st)
{
    if (!e) return e;
    if (e->kind == DW_E_TEMPORAL) {
        const char *name = fmt(l, "policy_%zu__temporal_%zu", pi, st->k++);
        st->v = room(l, st->v, st->n, &st->cap, sizeof *st->v);
        st->v[st->n++] = (hoist){ pi, name };
        return ctx_attr(l, e->loc, name, NULL);
    }
    if (st->providers && dw_is_provider_chain(e)) {              /* context.providers.policy_<i>_p_<k> (§14.3) */
        const dw_type *t = provider_out(st, e);
        if (t) {
            const char *name = fmt(l, "policy_%zu_p_%zu", pi, st->k++);
            st->pv = room(l, st->pv, st->pn, &st->pcap, sizeof *st->pv);
            st->pv[st->pn++] = (phoist){ name, t };
            return ctx_attr(l, e->loc, "providers", name);
        }
    }
    if (e->kind == DW_E_CALL && e->u.call.nsegs >= 2) st->k++;   /* provider leaves share the ordinal */
    dw_expr tmp = *e;
    bool changed = false;
#define LOW(slot) do { dw_expr *o_ = (slot), *n_ = lower(l, pi, o_, st); if (n_ != o_) { (slot) = n_; changed = true; } } while (0)
    switch (e->kind) {
    case DW_E_IF: LOW(tmp.u.kids[0]); LOW(tmp.u.kids[1]); LOW(tmp.u.kids[2]); break;
    case DW_E_AND: case DW_E_OR:
    case DW_E_EQ: case DW_E_NE: case DW_E_LT: case DW_E_LE: case DW_E_GT: case DW_E_GE: case DW_E_IN:
    case DW_E_ADD: case DW_E_SUB: case DW_E_MUL:
        LOW(tmp.u.kids[0]); LOW(tmp.u.kids[1]); break;
    case DW_E_NOT: case DW_E_NEG: LOW(tmp.u.kids[0]); break;
    case DW_E_HAS: case DW_E_GETATTR: LOW(tmp.u.attr.kids0); break;
    case DW_E_LIKE: LOW(tmp.u.like.kids0); break;
    case DW_E_IS: LOW(tmp.u.is.kids0); LOW(tmp.u.is.in); break;
    case DW_E_SET: {
        dw_expr **v = alloc(l, (e->u.list.n + 1) * sizeof *v);
        for (size_t k = 0; k < e->u.list.n; k++) { v[k] = e->u.list.v[k]; LOW(v[k]); }
        tmp.u.list.v = v;
        break;
    }
    case DW_E_RECORD: {
        dw_record_entry *v = alloc(l, (e->u.rec.n + 1) * sizeof *v);
        for (size_t k = 0; k < e->u.rec.n; k++) { v[k] = e->u.rec.v[k]; LOW(v[k].value); }
        tmp.u.rec.v = v;
        break;
    }
    case DW_E_METHOD: case DW_E_CALL: {
        LOW(tmp.u.call.recv);
        dw_expr **v = alloc(l, (e->u.call.nargs + 1) * sizeof *v);
        for (size_t k = 0; k < e->u.call.nargs; k++) { v[k] = e->u.call.args[k]; LOW(v[k]); }
        tmp.u.call.args = v;
        break;
    }
    default: break;
    }
#undef LOW
    if (!changed) return e;
    dw_expr *c = alloc(l, sizeof *c);
    *c = tmp;
    c->depth = dw_expr_compute_depth(c);
    return c;
}

static int attr_cmp(const void *a, const void *b)
{
    const dw_attr_decl *x = a, *y = b;
    size_t n = x->name.len < y->name.len ? x->name.len : y->name.len;
    int c = n ? memcmp(x->name.s, y->name.s, n) : 0;
    if (c) return c;
    return x->name.len < y->name.len ? -1 : x->name.len > y->name.len ? 1 : 0;
}

/* §14.4: if any provider leaf exists, the context of every action gains a
 * required record `providers` with one required attribute per leaf, of its
 * output type; an existing `providers` record is extended. */
static dw_action_decl *provider_contexts(L *l, const dw_schema *s, const lower_st *st)
{
    dw_action_decl *acts = alloc(l, (s->nactions + 1) * sizeof *acts);
    memcpy(acts, s->actions, s->nactions * sizeof *acts);
    for (size_t x = 0; x < s->nactions; x++) {
        const dw_type *old = acts[x].context;
        if (!old || old->kind != DW_T_RECORD) continue;
        const dw_attr_decl *have = NULL;
        for (size_t i = 0; i < old->nattrs; i++) if (dw_str_is(old->attrs[i].name, "providers")) have = &old->attrs[i];
        const dw_type *prev = have && have->type && have->type->kind == DW_T_RECORD ? have->type : NULL;
        dw_type *rec = alloc(l, sizeof *rec);
        memset(rec, 0, sizeof *rec);
        rec->kind = DW_T_RECORD;
        size_t np = prev ? prev->nattrs : 0;
        rec->attrs = alloc(l, (np + st->pn) * sizeof *rec->attrs);
        if (np) memcpy(rec->attrs, prev->attrs, np * sizeof *rec->attrs);
        for (size_t h = 0; h < st->pn; h++)
            rec->attrs[np + h] = (dw_attr_decl){ .name = { st->pv[h].name, strlen(st->pv[h].name) }, .type = (dw_type *)st->pv[h].type, .required = true };
        rec->nattrs = np + st->pn;
        qsort(rec->attrs, rec->nattrs, sizeof *rec->attrs, attr_cmp);
        dw_type *t = alloc(l, sizeof *t);
        *t = *old;
        t->attrs = alloc(l, (old->nattrs + 1) * sizeof *t->attrs);
        if (old->nattrs) memcpy(t->attrs, old->attrs, old->nattrs * sizeof *t->attrs);
        dw_attr_decl pa = { .name = { "providers", 9 }, .type = rec, .required = true };
        if (have) t->attrs[have - old->attrs] = pa;
        else { t->attrs[t->nattrs++] = pa; qsort(t->attrs, t->nattrs, sizeof *t->attrs, attr_cmp); }
        acts[x].context = t;
    }
    return acts;
}

/* The set lowered as §14 says (temporal leaves hoisted into the context)
 * and, with a schema, the schema augmented with the hoisted attributes. */
static void lowered_set(L *l, dw_policy_set *out, dw_schema *aug_out, lower_st *hoisted, bool providers)
{
    const dw_schema *s = l->opt->schema;
    dw_policy_set lowered = *l->ps;
    lowered.policies = alloc(l, (l->ps->npolicies + 1) * sizeof *lowered.policies);
    lower_st st = { .providers = providers, .decls = l->opt->providers };
    for (size_t i = 0; i < l->ps->npolicies; i++) {
        dw_policy p = l->ps->policies[i];
        st.k = 0;
        dw_clause *cl = alloc(l, (p.nclauses + 1) * sizeof *cl);
        for (size_t c = 0; c < p.nclauses; c++) { cl[c] = p.clauses[c]; cl[c].body = lower(l, i, cl[c].body, &st); }
        p.clauses = cl;
        lowered.policies[i] = p;
    }
    *out = lowered;
    *hoisted = st;
    if (!s) return;
    /* the augmented schema (§14.4): each hoisted name becomes a required Bool
     * on the context of every action its rule's scope admits */
    dw_schema aug = *s;
    if (st.n) {
        static dw_type bool_t = { .kind = DW_T_BOOL };
        dw_action_decl *acts = alloc(l, (s->nactions + 1) * sizeof *acts);
        memcpy(acts, s->actions, s->nactions * sizeof *acts);
        for (size_t x = 0; x < s->nactions; x++) {
            size_t extra = 0;
            for (size_t h = 0; h < st.n; h++) if (l->pi[st.v[h].policy].acts[x]) extra++;
            if (!extra || !acts[x].context || acts[x].context->kind != DW_T_RECORD) continue;
            const dw_type *old = acts[x].context;
            dw_type *t = alloc(l, sizeof *t);
            *t = *old;
            t->attrs = alloc(l, (old->nattrs + extra) * sizeof *t->attrs);
            memcpy(t->attrs, old->attrs, old->nattrs * sizeof *t->attrs);
            size_t n = old->nattrs;
            for (size_t h = 0; h < st.n; h++) {
                if (!l->pi[st.v[h].policy].acts[x]) continue;
                dw_attr_decl *a = &t->attrs[n++];
                memset(a, 0, sizeof *a);
                a->name = (dw_str){ st.v[h].name, strlen(st.v[h].name) };
                a->type = &bool_t;
                a->required = true;
            }
            t->nattrs = n;
            qsort(t->attrs, n, sizeof *t->attrs, attr_cmp);
            acts[x].context = t;
        }
        aug.actions = acts;
    }
    if (st.pn) aug.actions = provider_contexts(l, &aug, &st);
    *aug_out = aug;
}

static void run_validation(L *l, dw_diags *d)
{
    dw_policy_set lowered;
    dw_schema aug;
    lower_st st;
    lowered_set(l, &lowered, &aug, &st, false);
    dw_validate(&lowered, &aug, d);
}

int dw_lower(dw_policy_set *ps, const dw_lint_options *opt, dw_lowering *out)
{
    memset(out, 0, sizeof *out);
    L *l = dw_lint_new(ps->src, opt, NULL);
    if (!l) return -1;
    l->ps = ps;
    if (setjmp(l->oom)) { dw_lint_free(l); memset(out, 0, sizeof *out); return -1; }
    dw_lint_find_ids(l);
    build_universe(l);
    for (size_t i = 0; i < l->np; i++) compute_acts(l, i);
    lower_st st;
    lowered_set(l, &out->set, &out->schema, &st, true);
    out->has_schema = opt->schema != NULL;
    out->fields = alloc(l, (st.n + 1) * sizeof *out->fields);
    out->field_policy = alloc(l, (st.n + 1) * sizeof *out->field_policy);
    for (size_t i = 0; i < st.n; i++) { out->fields[i] = st.v[i].name; out->field_policy[i] = st.v[i].policy; }
    out->nfields = st.n;
    out->provider_fields = alloc(l, (st.pn + 1) * sizeof *out->provider_fields);
    for (size_t i = 0; i < st.pn; i++) out->provider_fields[i] = st.pv[i].name;
    out->nprovider_fields = st.pn;
    out->owner = l;
    return 0;
}

void dw_lowering_free(dw_lowering *lw)
{
    if (lw->owner) dw_lint_free(lw->owner);
    memset(lw, 0, sizeof *lw);
}

/* ------------------------------------------------------------------ rules over the AST */

static bool digits(const char *s, size_t n, size_t *used)
{
    size_t i = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    *used = i;
    return i > 0;
}

/* policy_<d>__temporal_<d> (temporal) or policy_<d>_p_<d> (provider) */
static bool reserved_name(dw_str a, bool provider)
{
    const char *s = a.s;
    size_t n = a.len, u;
    if (n < 7 || memcmp(s, "policy_", 7)) return false;
    s += 7; n -= 7;
    if (!digits(s, n, &u)) return false;
    s += u; n -= u;
    const char *mid = provider ? "_p_" : "__temporal_";
    size_t ml = strlen(mid);
    if (n < ml || memcmp(s, mid, ml)) return false;
    s += ml; n -= ml;
    return digits(s, n, &u) && u == n;
}

static void rule_reserved_attr(L *l, size_t pi, const dw_expr *e, void *ud)
{
    if (e->kind != DW_E_GETATTR && e->kind != DW_E_HAS) return;
    const dw_expr *o = e->u.attr.kids0;
    bool hit = false;
    if (o->kind == DW_E_VAR && o->u.var == DW_VAR_CONTEXT && reserved_name(e->u.attr.attr, false)) hit = true;
    else if (reserved_name(e->u.attr.attr, true)) {
        const char *p = ctx_path(l, o);
        if (p && strcmp(p, "providers") == 0) hit = true;
    }
    if (hit)
        add(l, R_RESERVED_ATTR, -1, e->loc, "write the condition itself (`temporal { … }` or the provider call)",
            "reserved attribute: %s reads `%.*s`, a name reserved for hoisted temporal leaves and provider outputs "
            "(policy_<i>__temporal_<k>, providers.policy_<i>_p_<k>)",
            rname(l, pi), (int)e->u.attr.attr.len, e->u.attr.attr.s);
}

static void trule_reserved_attr(L *l, size_t pi, const dw_tnode *n, void *ud)
{
    if (n->kind != DW_T_CONTEXT) return;
    const char *dot = memchr(n->path.s, '.', n->path.len);
    dw_str first = { n->path.s, dot ? (size_t)(dot - n->path.s) : n->path.len };
    bool hit = reserved_name(first, false);
    if (!hit && dot && dw_str_is(first, "providers")) {
        const char *rest = dot + 1, *d2 = memchr(rest, '.', n->path.len - (size_t)(rest - n->path.s));
        hit = reserved_name((dw_str){ rest, d2 ? (size_t)(d2 - rest) : n->path.len - (size_t)(rest - n->path.s) }, true);
    }
    if (hit)
        add(l, R_RESERVED_ATTR, -1, n->loc, "write the condition itself (`temporal { … }` or the provider call)",
            "reserved attribute: %s reads `context.%.*s`, a name reserved for hoisted temporal leaves and provider outputs",
            rname(l, pi), (int)n->path.len, n->path.s);
}

static void rule_providers(L *l, size_t pi, const dw_expr *e, void *ud)
{
    if (e->kind == DW_E_CALL && e->u.call.nsegs >= 2)
        add(l, R_PROVIDERS, -1, e->loc, "Box has no information providers; remove the call",
            "information providers are not enabled in this build: %s calls `%.*s`", rname(l, pi),
            (int)e->u.call.name.len, e->u.call.name.s);
}

static void rule_output(L *l, size_t pi, const dw_expr *e, void *ud)
{
    if (e->kind != DW_E_GETATTR && e->kind != DW_E_HAS) return;
    const dw_expr *o = e->u.attr.kids0;
    if (o->kind != DW_E_VAR || o->u.var != DW_VAR_CONTEXT || !dw_str_is(e->u.attr.attr, "output")) return;
    bool *once = ud;
    if (*once) return;
    *once = true;
    add(l, R_OUTPUT_DECISION, -1, e->loc,
        "read output fields in a temporal predicate on a ::response event, e.g. `output.status: 0`",
        "%s reads context.output outside a temporal clause; decisions never carry output, so this test is inert",
        rname(l, pi));
}

/* the comparisons of a string-valued context path with literals */
typedef struct cmp_site { const char *path; const dw_expr *lit; bool like; dw_loc at; const dw_expr *pe; } cmp_site;
typedef void (*cmp_fn)(L *l, size_t pi, const cmp_site *c);

static void each_cmp(L *l, size_t pi, const dw_expr *e, void *ud)
{
    cmp_fn fn = *(cmp_fn *)ud;
    if (e->kind == DW_E_EQ || e->kind == DW_E_NE) {
        for (int s = 0; s < 2; s++) {
            const dw_expr *a = e->u.kids[s], *b = e->u.kids[1 - s];
            if (b->kind != DW_E_STRING) continue;
            const char *p = ctx_path(l, a);
            if (p || is_provider_value(a)) fn(l, pi, &(cmp_site){ p, b, false, b->loc, a });
        }
    } else if (e->kind == DW_E_LIKE) {
        const char *p = ctx_path(l, e->u.like.kids0);
        size_t rl = e->u.like.raw.len;
        uint32_t off = e->loc.end >= rl + 2 ? e->loc.end - (uint32_t)rl - 2 : e->loc.off;
        if (p) fn(l, pi, &(cmp_site){ p, e, true, dw_lines_loc(&l->out->lines, l->src, off, e->loc.end), e->u.like.kids0 });
    } else if (e->kind == DW_E_METHOD && dw_str_is(e->u.call.name, "contains") && e->u.call.nargs == 1 &&
               e->u.call.recv && e->u.call.recv->kind == DW_E_SET) {
        const char *p = ctx_path(l, e->u.call.args[0]);
        if (!p) return;
        for (size_t k = 0; k < e->u.call.recv->u.list.n; k++) {
            const dw_expr *x = e->u.call.recv->u.list.v[k];
            if (x->kind == DW_E_STRING) fn(l, pi, &(cmp_site){ p, x, false, x->loc, e->u.call.args[0] });
        }
    }
}

static void walk_cmps(L *l, size_t pi, cmp_fn fn) { walk_policy(l, pi, each_cmp, &fn); }

/* the literal (decoded) of a comparison site, and its source spelling */
static dw_str site_text(const cmp_site *c) { return c->like ? c->lit->u.like.raw : c->lit->u.str; }

/* Does s start with a home spelling?  Returns the length of the home prefix
 * ("/Users/dev" in "/Users/dev/x"), or 0. */
static size_t home_prefix(L *l, const char *s, size_t n)
{
    const char *h = l->opt->home;
    if (h && *h) {
        size_t hl = strlen(h);
        while (hl > 1 && h[hl - 1] == '/') hl--;
        if (n >= hl && memcmp(s, h, hl) == 0 && (n == hl || s[hl] == '/')) return hl;
        return 0;
    }
    if (n >= 5 && memcmp(s, "/root", 5) == 0 && (n == 5 || s[5] == '/')) return 5;
    size_t pl = n >= 6 && memcmp(s, "/home/", 6) == 0 ? 6 : n >= 7 && memcmp(s, "/Users/", 7) == 0 ? 7 : 0;
    if (!pl) return 0;
    size_t i = pl;
    while (i < n && s[i] != '/') {
        if (s[i] == '*') return 0;
        i++;
    }
    return i > pl ? i : 0;
}

static void site_inert(L *l, size_t pi, const cmp_site *c)
{
    if (!c->path || strcmp(c->path, "input.path") != 0 || !l->pi[pi].fs) return;
    dw_str t = site_text(c);
    const char *what = c->like ? "the pattern" : "";
    const char *sep = c->like ? " " : "";
    size_t hp = home_prefix(l, t.s, t.len);
    if (hp) {
        const char *fix = fmt(l, "~%.*s", (int)(t.len - hp), t.s + hp);
        const char *qfix = dw_lint_quote(l, fix, strlen(fix));
        if (c->like) qfix = fmt(l, "\"%s\"", fix);
        add(l, R_INERT, -1, c->at, fmt(l, "write %s", qfix),
            "policy compares an inert literal: %s compares context.input.path with %s%s%s, and a path under the "
            "operator home is spelled ~/…; write %s",
            rname(l, pi), what, sep, c->like ? fmt(l, "\"%.*s\"", (int)t.len, t.s) : dw_lint_quote(l, t.s, t.len), qfix);
        return;
    }
    if (t.len > 1 && t.s[t.len - 1] == '/') {
        size_t k = t.len;
        while (k > 1 && t.s[k - 1] == '/') k--;
        const char *lit = c->like ? fmt(l, "\"%.*s\"", (int)t.len, t.s) : dw_lint_quote(l, t.s, t.len);
        const char *fix = c->like ? fmt(l, "\"%.*s\" (the directory) or \"%.*s/*\" (what is under it)", (int)k, t.s, (int)k, t.s)
                                  : dw_lint_quote(l, t.s, k);
        add(l, R_INERT, -1, c->at, fmt(l, "write %s", fix),
            "policy compares an inert literal: %s compares context.input.path with %s%s%s, and paths never end with /; write %s",
            rname(l, pi), what, sep, lit, fix);
    }
}

static void site_home_after_wild(L *l, size_t pi, const cmp_site *c)
{
    if (!c->like || !c->path || strcmp(c->path, "input.path") != 0 || !l->pi[pi].fs) return;
    const dw_like_pattern *p = &c->lit->u.like.pat;
    for (size_t k = 1; k < p->nseg; k++) {
        const char *s = p->seg[k].s;
        size_t n = p->seg[k].len;
        for (size_t i = 0; i < n; i++) {
            bool tilde = s[i] == '~' && i + 1 < n && s[i + 1] == '/' && (i == 0 || s[i - 1] == '/');
            bool abs = s[i] == '/' && home_prefix(l, s + i, n - i) && (l->opt->home || i == 0 || s[i - 1] != '/');
            if (tilde || abs) {
                dw_str t = site_text(c);
                add(l, R_HOME_AFTER_WILD, -1, c->at,
                    "paths under home start with \"~/\": put the home spelling first, or drop the leading wildcard",
                    "%s matches context.input.path with the pattern \"%.*s\", which has the home spelling after a `*`; "
                    "it can match only paths outside home", rname(l, pi), (int)t.len, t.s);
                return;
            }
        }
    }
}

static void site_program(L *l, size_t pi, const cmp_site *c)
{
    if (!c->path || strcmp(c->path, "input.program") != 0) return;
    dw_str t = site_text(c);
    if (!memchr(t.s, '/', t.len)) return;
    const char *slash = t.s + t.len;
    while (slash > t.s && slash[-1] != '/') slash--;
    size_t bl = t.len - (size_t)(slash - t.s);
    add(l, R_PROGRAM_SLASH, -1, c->at,
        bl ? fmt(l, "compare context.input.program with \"%.*s\", or context.input.program_path with the path", (int)bl, slash)
           : "compare context.input.program_path with the path",
        "%s compares context.input.program with \"%.*s\", which contains `/`; program is the resolved command name",
        rname(l, pi), (int)t.len, t.s);
}

static void site_empty(L *l, size_t pi, const cmp_site *c)
{
    if (c->like || c->lit->u.str.len != 0) return;
    const char *what = c->path ? fmt(l, "the context value context.%s", c->path) : "a provider output";
    add(l, R_EMPTY_STRING, -1, c->at,
        c->path ? "test presence with `has` first, or compare with a non-empty value"
                : "test the provider output's own fields, or compare with a non-empty value",
        "%s compares %s with \"\", which is also true when the value is missing (a Null becomes \"\", dogwood.md §20 Q15)",
        rname(l, pi), what);
}

static void trule_empty(L *l, size_t pi, const dw_tnode *n, void *ud)
{
    if (n->kind != DW_T_CMP || (n->op != DW_TC_EQ && n->op != DW_TC_NE)) return;
    for (int s = 0; s < 2; s++) {
        const dw_tnode *a = n->kids[s], *b = n->kids[1 - s];
        if (a && b && a->kind == DW_T_CONTEXT && b->kind == DW_T_LIT_STRING && b->str.len == 0)
            add(l, R_EMPTY_STRING, -1, n->loc, "test presence with `has` in the plain condition, or compare with a non-empty value",
                "%s compares the context value context.%.*s with \"\", which is also true when the value is missing "
                "(a Null becomes \"\", dogwood.md §20 Q15)", rname(l, pi), (int)a->path.len, a->path.s);
    }
}

static void trule_ip(L *l, size_t pi, const dw_tnode *n, void *ud)
{
    if (n->kind != DW_T_PRED || !dw_str_is(n->str, "net:connect")) return;
    for (size_t k = 0; k < n->nfields; k++)
        if (dw_str_is(n->fields[k].path, "input.ip"))
            add(l, R_IP_HISTORY, -1, n->fields[k].loc,
                "match input.host in the predicate, or test context.input.ip in the plain condition",
                "%s: history events of net:connect never record input.ip, so this predicate never matches", rname(l, pi));
}

static void trule_request(L *l, size_t pi, const dw_tnode *n, void *ud)
{
    if (n->kind == DW_T_PRED && dw_str_is(n->ekind, "request"))
        add(l, R_PRECOND_REQUEST, -1, n->loc, "key the precondition on ::response events",
            "%s keys a precondition on ::request events, which include denied attempts", rname(l, pi));
}

/* ---- before expansion: macro calls (Box profile, info) ---- */
static bool is_ext_ctor(dw_str n)
{
    return dw_str_is(n, "decimal") || dw_str_is(n, "ip") || dw_str_is(n, "datetime") || dw_str_is(n, "duration");
}

/* is `name` a temporal macro of the set or of the library? */
static bool temporal_macro(L *l, const dw_policy_set *lib, dw_str name)
{
    for (size_t k = 0; k < l->ps->nmacros; k++)
        if (dw_str_eq(l->ps->macros[k].name, name)) return l->ps->macros[k].kind == DW_MACRO_TEMPORAL;
    for (size_t k = 0; lib && k < lib->nmacros; k++)
        if (dw_str_eq(lib->macros[k].name, name)) return lib->macros[k].kind == DW_MACRO_TEMPORAL;
    return false;
}

static void rule_macro_call(L *l, size_t pi, const dw_expr *e, void *ud)
{
    if (e->kind == DW_E_CALL && e->u.call.nsegs == 1 && !is_ext_ctor(e->u.call.name) && temporal_macro(l, ud, e->u.call.name))
        add(l, R_MACRO_CALL, -1, e->loc, "write the expanded condition instead of the macro call",
            "%s calls the macro `%.*s`; in the reference engine its fresh binders are named after text offsets, so "
            "editing text before the call resets the rule's temporal state on reload (dogwood.md §20 D8)",
            rname(l, pi), (int)e->u.call.name.len, e->u.call.name.s);
}

static void trule_macro_call(L *l, size_t pi, const dw_tnode *n, void *ud)
{
    if (n->kind == DW_T_CALL && temporal_macro(l, ud, n->name))
        add(l, R_MACRO_CALL, -1, n->loc, "write the expanded condition instead of the macro call",
            "%s calls the macro `%.*s`; in the reference engine its fresh binders are named after text offsets, so "
            "editing text before the call resets the rule's temporal state on reload (dogwood.md §20 D8)",
            rname(l, pi), (int)n->name.len, n->name.s);
}

void dw_lint_macro_calls(L *l, const dw_policy_set *lib)
{
    for (size_t i = 0; i < l->np; i++) {
        walk_policy(l, i, rule_macro_call, (void *)lib);
        walk_temporal(l, i, trule_macro_call, (void *)lib);
    }
}

/* ------------------------------------------------------------------ driver */

static int id_order(const void *a, const void *b, void *ud)
{
    const L *l = ud;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    dw_str s = l->pi[x].id->value, t = l->pi[y].id->value;
    size_t n = s.len < t.len ? s.len : t.len;
    int c = n ? memcmp(s.s, t.s, n) : 0;
    if (!c) c = s.len < t.len ? -1 : s.len > t.len ? 1 : 0;
    return c ? c : x < y ? -1 : x > y ? 1 : 0;
}

/* rules grouped by @id value after a sort (a pairwise scan was quadratic:
 * minutes at load for 100,000 rules) */
static void rule_duplicate_ids(L *l)
{
    size_t *ix = alloc(l, (l->np + 1) * sizeof *ix), n = 0;
    for (size_t i = 0; i < l->np; i++) if (l->pi[i].id) ix[n++] = i;
    qsort_r(ix, n, sizeof *ix, id_order, l);
    for (size_t g = 0; g < n;) {
        size_t e = g + 1;
        while (e < n && dw_str_eq(l->pi[ix[e]].id->value, l->pi[ix[g]].id->value)) e++;
        if (e - g >= 2) {
            const dw_annotation *a = l->pi[ix[g]].id;
            /* Box's 0-based names, "policy_N, " per rule: linear, one buffer */
            char *list = alloc(l, (e - g) * 32 + 1), *at = list;
            for (size_t k = g; k < e; k++) at += sprintf(at, k > g ? ", policy_%zu" : "policy_%zu", ix[k]);
            add(l, R_DUP_ID, -1, l->pi[ix[g + 1]].id->loc, "give every rule its own @id",
                "policy gives one @id to more than one rule: @id(%s) is on rules %s", dw_lint_quote(l, a->value.s, a->value.len), list);
        }
        g = e;
    }
}

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

/* The rules over the expanded set (DW_FE_PROFILE): one implementation for
 * `dwc check` and the loader's Box profile. */
static void profile_rules(L *l, dw_diags *d)
{
    const dw_lint_options *opt = l->opt;
    dw_lint_find_ids(l);
    for (size_t i = 0; i < l->np; i++) {
        const dw_policy *p = &l->ps->policies[i];
        pinfo *f = &l->pi[i];
        f->cond = C_ALWAYS;
        for (size_t c = 0; c < p->nclauses; c++) {
            int v = clause_fold(&p->clauses[c]);
            if (v == C_NEVER) f->cond = C_NEVER;
            else if (v == C_UNKNOWN && f->cond == C_ALWAYS) f->cond = C_UNKNOWN;
            if (has_temporal(p->clauses[c].body)) f->temporal = true;
        }
    }
    build_universe(l);
    for (size_t i = 0; i < l->np; i++) compute_acts(l, i);

    /* strict validation of the lowered set (§5, §14) */
    if (opt->schema) {
        run_validation(l, d);
        dw_lint_take_diags(l, d, R_VALIDATION);
    }

    rule_duplicate_ids(l);
    for (size_t i = 0; i < l->np; i++) {
        walk_policy(l, i, rule_reserved_attr, NULL);
        walk_temporal(l, i, trule_reserved_attr, NULL);
        walk_cmps(l, i, site_empty);
        walk_temporal(l, i, trule_empty, NULL);
        if (opt->box) {
            walk_policy(l, i, rule_providers, NULL);
            bool once = false;
            walk_policy(l, i, rule_output, &once);
            walk_cmps(l, i, site_inert);
            walk_cmps(l, i, site_home_after_wild);
            walk_cmps(l, i, site_program);
            walk_temporal(l, i, trule_ip, NULL);
            const dw_policy *p = &l->ps->policies[i];
            for (size_t c = 0; c < p->nclauses; c++) {
                const dw_expr *b = p->clauses[c].body;
                if (!p->clauses[c].is_when && b && b->kind == DW_E_TEMPORAL && b->u.temporal)
                    twalk(l, i, b->u.temporal->root, trule_request, NULL, 0);
            }
        }
    }
    dw_lint_scope_analysis(l);
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
    else profile_rules(l, &d);
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

