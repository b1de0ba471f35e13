/* lint_rules.c - the lint rules over the AST (reserved attributes, providers, comparison sites, macro calls, duplicate ids) and the profile's run of them: each rule on its own, apart from the plumbing in lint.c. */
#include "lint.h"
#include "lint_impl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "macros.h"
#include "pipeline.h"
#include "provcheck.h"
#include "../lang/tast.h"

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

/* Does reading attr on o, o being the context path o_path ("" for context itself, NULL for no
 * context path), read a reserved name? */
static bool reserved_read(const char *o_path, dw_str attr)
{
    if (!o_path) return false;
    if (!*o_path) return reserved_name(attr, false);
    return strcmp(o_path, "providers") == 0 && reserved_name(attr, true);
}

static void rule_reserved_attr(L *l, size_t pi, const dw_expr *e, void *ud)
{
    if (e->kind != DW_E_GETATTR && e->kind != DW_E_HAS && e->kind != DW_E_HAS_PATH) return;
    const dw_expr *o = dw_expr_kid_c(e, 0);  /* the object (a path's base) */
    const char *op = o->kind == DW_E_VAR && o->u.var == DW_VAR_CONTEXT ? "" : dw_lint_ctx_path(l, o);
    const dw_str *names = e->kind == DW_E_HAS_PATH ? e->u.path.attrs : &e->u.attr.attr;
    size_t n = e->kind == DW_E_HAS_PATH ? e->u.path.n : 1;
    /* a path's steps read o.a, o.a.b, …: only the first two can reach providers.policy_… */
    for (size_t i = 0; i < n && i < 2; i++) {
        if (reserved_read(op, names[i])) {
            add(l, R_RESERVED_ATTR, -1, e->loc, "write the condition itself (`temporal { … }` or the provider call)",
                "reserved attribute: %s reads `%.*s`, a name reserved for hoisted temporal leaves and provider outputs "
                "(policy_<i>__temporal_<k>, providers.policy_<i>_p_<k>)",
                dw_lint_rname(l, pi), (int)names[i].len, names[i].s);
            return;
        }
        if (!op) return;
        char *next = alloc(l, strlen(op) + names[i].len + 2);
        sprintf(next, "%s%s%.*s", op, *op ? "." : "", (int)names[i].len, names[i].s);
        op = next;
    }
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
            dw_lint_rname(l, pi), (int)n->path.len, n->path.s);
}

static void rule_providers(L *l, size_t pi, const dw_expr *e, void *ud)
{
    if (e->kind == DW_E_CALL && e->u.call.nsegs >= 2)
        add(l, R_PROVIDERS, -1, e->loc, "Box has no information providers; remove the call",
            "information providers are not enabled in this build: %s calls `%.*s`", dw_lint_rname(l, pi),
            (int)e->u.call.name.len, e->u.call.name.s);
}

static void rule_output(L *l, size_t pi, const dw_expr *e, void *ud)
{
    if (e->kind != DW_E_GETATTR && e->kind != DW_E_HAS && e->kind != DW_E_HAS_PATH) return;
    const dw_expr *o = dw_expr_kid_c(e, 0);  /* the object (a path's base) */
    dw_str a = e->kind == DW_E_HAS_PATH ? e->u.path.attrs[0] : e->u.attr.attr;
    if (o->kind != DW_E_VAR || o->u.var != DW_VAR_CONTEXT || !dw_str_is(a, "output")) return;
    bool *once = ud;
    if (*once) return;
    *once = true;
    add(l, R_OUTPUT_DECISION, -1, e->loc,
        "read output fields in a temporal predicate on a ::response event, e.g. `output.status: 0`",
        "%s reads context.output outside a temporal clause; decisions never carry output, so this test is inert",
        dw_lint_rname(l, pi));
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
            const char *p = dw_lint_ctx_path(l, a);
            if (p || dw_lint_is_provider_value(a)) fn(l, pi, &(cmp_site){ p, b, false, b->loc, a });
        }
    } else if (e->kind == DW_E_LIKE) {
        const char *p = dw_lint_ctx_path(l, e->u.like.kids0);
        size_t rl = e->u.like.raw.len;
        uint32_t off = e->loc.end >= rl + 2 ? e->loc.end - (uint32_t)rl - 2 : e->loc.off;
        if (p) fn(l, pi, &(cmp_site){ p, e, true, dw_lines_loc(&l->out->lines, l->src, off, e->loc.end), e->u.like.kids0 });
    } else if (e->kind == DW_E_METHOD && dw_str_is(e->u.call.name, "contains") && e->u.call.nargs == 1 &&
               e->u.call.recv && e->u.call.recv->kind == DW_E_SET) {
        const char *p = dw_lint_ctx_path(l, e->u.call.args[0]);
        if (!p) return;
        for (size_t k = 0; k < e->u.call.recv->u.list.n; k++) {
            const dw_expr *x = e->u.call.recv->u.list.v[k];
            if (x->kind == DW_E_STRING) fn(l, pi, &(cmp_site){ p, x, false, x->loc, e->u.call.args[0] });
        }
    }
}

static void walk_cmps(L *l, size_t pi, cmp_fn fn) { dw_lint_walk_policy(l, pi, each_cmp, &fn); }

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
            dw_lint_rname(l, pi), what, sep, c->like ? fmt(l, "\"%.*s\"", (int)t.len, t.s) : dw_lint_quote(l, t.s, t.len), qfix);
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
            dw_lint_rname(l, pi), what, sep, lit, fix);
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
                    "it can match only paths outside home", dw_lint_rname(l, pi), (int)t.len, t.s);
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
        dw_lint_rname(l, pi), (int)t.len, t.s);
}

static void site_empty(L *l, size_t pi, const cmp_site *c)
{
    if (c->like || c->lit->u.str.len != 0) return;
    const char *what = c->path ? fmt(l, "the context value context.%s", c->path) : "a provider output";
    add(l, R_EMPTY_STRING, -1, c->at,
        c->path ? "test presence with `has` first, or compare with a non-empty value"
                : "test the provider output's own fields, or compare with a non-empty value",
        "%s compares %s with \"\", which is also true when the value is missing (a Null becomes \"\", dogwood.md §20 Q15)",
        dw_lint_rname(l, pi), what);
}

static void trule_empty(L *l, size_t pi, const dw_tnode *n, void *ud)
{
    if (n->kind != DW_T_CMP || (n->op != DW_TC_EQ && n->op != DW_TC_NE)) return;
    for (int s = 0; s < 2; s++) {
        const dw_tnode *a = n->kids[s], *b = n->kids[1 - s];
        if (a && b && a->kind == DW_T_CONTEXT && b->kind == DW_T_LIT_STRING && b->str.len == 0)
            add(l, R_EMPTY_STRING, -1, n->loc, "test presence with `has` in the plain condition, or compare with a non-empty value",
                "%s compares the context value context.%.*s with \"\", which is also true when the value is missing "
                "(a Null becomes \"\", dogwood.md §20 Q15)", dw_lint_rname(l, pi), (int)a->path.len, a->path.s);
    }
}

static void trule_ip(L *l, size_t pi, const dw_tnode *n, void *ud)
{
    if (n->kind != DW_T_PRED || !dw_str_is(n->str, "net:connect")) return;
    for (size_t k = 0; k < n->nfields; k++)
        if (dw_str_is(n->fields[k].path, "input.ip"))
            add(l, R_IP_HISTORY, -1, n->fields[k].loc,
                "match input.host in the predicate, or test context.input.ip in the plain condition",
                "%s: history events of net:connect never record input.ip, so this predicate never matches", dw_lint_rname(l, pi));
}

static void trule_request(L *l, size_t pi, const dw_tnode *n, void *ud)
{
    if (n->kind == DW_T_PRED && dw_str_is(n->ekind, "request"))
        add(l, R_PRECOND_REQUEST, -1, n->loc, "key the precondition on ::response events",
            "%s keys a precondition on ::request events, which include denied attempts", dw_lint_rname(l, pi));
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
            dw_lint_rname(l, pi), (int)e->u.call.name.len, e->u.call.name.s);
}

static void trule_macro_call(L *l, size_t pi, const dw_tnode *n, void *ud)
{
    if (n->kind == DW_T_CALL && temporal_macro(l, ud, n->name))
        add(l, R_MACRO_CALL, -1, n->loc, "write the expanded condition instead of the macro call",
            "%s calls the macro `%.*s`; in the reference engine its fresh binders are named after text offsets, so "
            "editing text before the call resets the rule's temporal state on reload (dogwood.md §20 D8)",
            dw_lint_rname(l, pi), (int)n->name.len, n->name.s);
}

void dw_lint_macro_calls(L *l, const dw_policy_set *lib)
{
    for (size_t i = 0; i < l->np; i++) {
        dw_lint_walk_policy(l, i, rule_macro_call, (void *)lib);
        dw_lint_walk_temporal(l, i, trule_macro_call, (void *)lib);
    }
}

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

/* The rules over the expanded set (DW_FE_PROFILE): one implementation for
 * `dwc check` and the loader's Box profile. */
void dw_lint_profile_rules(L *l, dw_diags *d)
{
    const dw_lint_options *opt = l->opt;
    dw_lint_find_ids(l);
    for (size_t i = 0; i < l->np; i++) {
        const dw_policy *p = &l->ps->policies[i];
        pinfo *f = &l->pi[i];
        f->cond = C_ALWAYS;
        for (size_t c = 0; c < p->nclauses; c++) {
            int v = dw_lint_clause_fold(&p->clauses[c]);
            if (v == C_NEVER) f->cond = C_NEVER;
            else if (v == C_UNKNOWN && f->cond == C_ALWAYS) f->cond = C_UNKNOWN;
            if (dw_lint_has_temporal(p->clauses[c].body)) f->temporal = true;
        }
    }
    dw_lint_build_universe(l);
    for (size_t i = 0; i < l->np; i++) dw_lint_compute_acts(l, i);

    /* strict validation of the lowered set (§5, §14) */
    if (opt->schema) {
        dw_lint_run_validation(l, d);
        dw_lint_take_diags(l, d, R_VALIDATION);
    }

    rule_duplicate_ids(l);
    /* §20 D4 binds a set that hoists something, as the compiler and `dwc validate` apply it; in
     * plain Cedar (dwc dogwood lower's output) these are context attributes like any other */
    bool reserved = dw_set_hoists(l->ps);
    for (size_t i = 0; i < l->np; i++) {
        if (reserved) dw_lint_walk_policy(l, i, rule_reserved_attr, NULL);
        dw_lint_walk_temporal(l, i, trule_reserved_attr, NULL);
        walk_cmps(l, i, site_empty);
        dw_lint_walk_temporal(l, i, trule_empty, NULL);
        if (opt->box) {
            dw_lint_walk_policy(l, i, rule_providers, NULL);
            bool once = false;
            dw_lint_walk_policy(l, i, rule_output, &once);
            walk_cmps(l, i, site_inert);
            walk_cmps(l, i, site_home_after_wild);
            walk_cmps(l, i, site_program);
            dw_lint_walk_temporal(l, i, trule_ip, NULL);
            const dw_policy *p = &l->ps->policies[i];
            for (size_t c = 0; c < p->nclauses; c++) {
                const dw_expr *b = p->clauses[c].body;
                if (!p->clauses[c].is_when && b && b->kind == DW_E_TEMPORAL && b->u.temporal)
                    dw_lint_twalk(l, i, b->u.temporal->root, trule_request, NULL, 0);
            }
        }
    }
    dw_lint_scope_analysis(l);
}
