/* tcheck.c - temporal well-formedness (dogwood.md §9.1-§9.5, §20 Q8) and
 * temporal validation (§9.6-§9.9, §20 Q7).  See tcheck.h for the API.
 *
 * Variables are identified by name plus the innermost enclosing binder
 * (`exists` or an aggregate's `for` list), tracked on a scope stack that
 * every walk pushes and pops.  The producer/consumer rule (§9.3) threads an
 * accumulator of restricted names through each flattened `&&` chain; the
 * accumulator is an immutable small set copied into the arena on change. */
#include "tcheck.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../stdlib/cedar_quote.h"
#include "../lang/tast.h"

typedef struct pdiag { dw_loc loc; char *msg; const char *hint; size_t seq; } pdiag;
typedef struct bnd { dw_str name; const dw_tbinder *b; } bnd;
typedef struct nset { const dw_str *v; size_t n; } nset;

typedef enum { TY_UNKNOWN, TY_TIMEPOINT, TY_LONG, TY_STRING, TY_BOOL, TY_DECIMAL, TY_ENTITY, TY_ARRAY, TY_CEDAR } tykind;
/* ENTITY: one of `names` (a union for principalType/resourceType leaves);
 * CEDAR: any other Cedar type (sets, records, extension types). */
typedef struct ty { tykind k; const dw_str *names; size_t nnames; const dw_type *ct; } ty;

typedef enum { WHY_FILTER, WHY_SINCE, WHY_AGG } why;

typedef struct tc {
    dw_arena a;
    jmp_buf oom;
    const dw_source *src;
    const char *pid;
    pdiag *dv; size_t dn, dcap;
    bnd *sc; size_t nsc, capsc;                      /* binders in scope */
    const dw_tbinder **bad; size_t nbad, capbad;     /* binders that failed 9.2/9.4 */
    dw_str *freed; size_t nfreed, capfreed;          /* free names reported in this leaf */
    bool deep;                                       /* "too deep" reported for this leaf */
    /* schema pass */
    const dw_schema *s;
    const dw_event_derivation *ev;
    const dw_action_decl **acts; size_t nacts; bool acts_known;
    int64_t maxw;
    dw_str maxw_text;
} tc;

/* ------------------------------------------------------------------ memory, text */

/* Allocation failure unwinds to the pass entry (stdlib/arena.h). */
#define alloc(T, n) dw_arena_alloc_or_jump(&(T)->a, (n), &(T)->oom)
#define vfmt(T, f, ap) dw_arena_vprintf_or_jump(&(T)->a, &(T)->oom, (f), (ap))
#define fmt(T, ...) dw_arena_printf_or_jump(&(T)->a, &(T)->oom, __VA_ARGS__)

/* Grow an arena array to hold n+1 elements. */
static void *grow(tc *T, void *v, size_t n, size_t *cap, size_t size)
{
    if (n < *cap) return v;
    size_t nc = *cap ? *cap * 2 : 8;
    void *nv = alloc(T, nc * size);
    if (n) memcpy(nv, v, n * size);
    *cap = nc;
    return nv;
}

#define PS(x) (int)(x).len, (x).s

/* A Cedar string literal body: quotes and backslashes escaped, controls as \u{..}. */
static char *esc(tc *T, dw_str s)
{
    char *o = alloc(T, s.len * DW_CEDAR_ESCAPE_MAX + 1);
    o[dw_cedar_escape_mem(o, s.s, s.len)] = 0;
    return o;
}

static const char *pred_text(tc *T, const dw_tnode *p)
{
    return fmt(T, "%.*s::\"%s\"::%.*s", PS(p->type), esc(T, p->str), PS(p->ekind));
}

/* ------------------------------------------------------------------ diagnostics */

static void report(tc *T, dw_loc loc, const char *hint, const char *f, ...) __attribute__((format(printf, 4, 5)));
static void report(tc *T, dw_loc loc, const char *hint, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *body = vfmt(T, f, ap);
    va_end(ap);
    char *msg = fmt(T, "for policy `%s`, %s", T->pid, body);
    for (size_t i = 0; i < T->dn; i++)
        if (T->dv[i].loc.off == loc.off && T->dv[i].loc.end == loc.end && strcmp(T->dv[i].msg, msg) == 0) return;
    T->dv = grow(T, T->dv, T->dn, &T->dcap, sizeof *T->dv);
    T->dv[T->dn] = (pdiag){ loc, msg, hint, T->dn };
    T->dn++;
}

static int diag_cmp(const void *pa, const void *pb)
{
    const pdiag *a = pa, *b = pb;
    if (a->loc.off != b->loc.off) return a->loc.off < b->loc.off ? -1 : 1;
    if (a->loc.end != b->loc.end) return a->loc.end < b->loc.end ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static size_t flush(tc *T, dw_diags *diags)
{
    if (T->dn > 1) qsort(T->dv, T->dn, sizeof *T->dv, diag_cmp);
    for (size_t i = 0; i < T->dn; i++)
        dw_diag_add(diags, DW_SEV_ERROR, T->src, T->dv[i].loc, T->dv[i].hint, "%s", T->dv[i].msg);
    size_t n = T->dn;
    T->dn = 0;
    return n;
}

static bool too_deep(tc *T, const dw_tnode *n, int d)
{
    if (d <= DW_TCHECK_MAX_DEPTH) return false;
    if (!T->deep) report(T, n->loc, "simplify the temporal body", "temporal body nested too deeply to check");
    T->deep = true;
    return true;
}

/* ------------------------------------------------------------------ policies and leaves */

static const char *policy_id(tc *T, const dw_policy *p, size_t idx)
{
    for (size_t i = 0; i < p->nannots; i++)
        if (dw_str_is(p->annots[i].key, "id") && p->annots[i].has_value) return fmt(T, "%.*s", PS(p->annots[i].value));
    return fmt(T, "policy%zu", idx);
}

typedef void (*leaf_fn)(tc *T, const dw_tnode *root);

/* Every DW_E_TEMPORAL leaf of a Cedar expression, left to right.  Cedar
 * expressions are at most DW_MAX_EXPR_DEPTH deep (the parser's limit). */
static void each_leaf(tc *T, const dw_expr *e, leaf_fn fn, int d)
{
    if (!e || d > DW_MAX_EXPR_DEPTH + 8) return;
    if (e->kind == DW_E_TEMPORAL) {
        if (e->u.temporal && e->u.temporal->root) {
            T->nfreed = 0;
            T->deep = false;
            fn(T, e->u.temporal->root);
        }
        return;
    }
    const dw_expr *k;
    for (size_t i = 0; (k = dw_expr_kid_c(e, i)); i++) each_leaf(T, k, fn, d + 1);
}

/* Flatten a (possibly parenthesised) `&&` chain left to right.  The parser
 * builds left-deep trees, so the left spine is walked iteratively; right
 * operands that are chains themselves come from parentheses (bounded). */
typedef struct tvec { const dw_tnode **v; size_t n, cap; } tvec;

static void flatten(tc *T, const dw_tnode *n, tvec *out, int d)
{
    size_t start = out->n;
    while (n && n->kind == DW_T_AND) {
        out->v = grow(T, out->v, out->n, &out->cap, sizeof *out->v);
        out->v[out->n++] = n->kids[1];
        n = n->kids[0];
    }
    if (n) {
        out->v = grow(T, out->v, out->n, &out->cap, sizeof *out->v);
        out->v[out->n++] = n;
    }
    for (size_t i = start, j = out->n; i + 1 < j; i++, j--) {   /* reverse: source order */
        const dw_tnode *t = out->v[i];
        out->v[i] = out->v[j - 1];
        out->v[j - 1] = t;
    }
    /* expand right operands that are chains (parenthesised) in place */
    for (size_t i = start; i < out->n; i++) {
        if (out->v[i]->kind != DW_T_AND || d > DW_TCHECK_MAX_DEPTH) continue;
        tvec sub = { 0 };
        flatten(T, out->v[i], &sub, d + 1);
        size_t nn = out->n - 1 + sub.n;
        const dw_tnode **v = alloc(T, nn * sizeof *v);
        memcpy(v, out->v, i * sizeof *v);
        memcpy(v + i, sub.v, sub.n * sizeof *v);
        memcpy(v + i + sub.n, out->v + i + 1, (out->n - i - 1) * sizeof *v);
        out->v = v;
        out->n = out->cap = nn;
        i += sub.n - 1;
    }
}

static tvec conjuncts(tc *T, const dw_tnode *n, int d)
{
    tvec v = { 0 };
    flatten(T, n, &v, d);
    return v;
}

/* ------------------------------------------------------------------ scope */

static void push(tc *T, const dw_tbinder *b)
{
    T->sc = grow(T, T->sc, T->nsc, &T->capsc, sizeof *T->sc);
    T->sc[T->nsc++] = (bnd){ b->slot.name, b };
}

static long lookup(const tc *T, dw_str name)
{
    for (size_t i = T->nsc; i-- > 0;)
        if (dw_str_eq(T->sc[i].name, name)) return (long)i;
    return -1;
}

static bool is_bad(const tc *T, const dw_tbinder *b)
{
    for (size_t i = 0; i < T->nbad; i++) if (T->bad[i] == b) return true;
    return false;
}

static void mark_bad(tc *T, const dw_tbinder *b)
{
    if (is_bad(T, b)) return;
    T->bad = grow(T, T->bad, T->nbad, &T->capbad, sizeof *T->bad);
    T->bad[T->nbad++] = b;
}

/* ------------------------------------------------------------------ name sets */

static bool has(nset s, dw_str x)
{
    for (size_t i = 0; i < s.n; i++) if (dw_str_eq(s.v[i], x)) return true;
    return false;
}

static nset add(tc *T, nset s, dw_str x)
{
    if (has(s, x)) return s;
    dw_str *v = alloc(T, (s.n + 1) * sizeof *v);
    if (s.n) memcpy(v, s.v, s.n * sizeof *v);
    v[s.n] = x;
    return (nset){ v, s.n + 1 };
}

static nset without(tc *T, nset s, dw_str x)
{
    if (!has(s, x)) return s;
    dw_str *v = alloc(T, s.n * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < s.n; i++) if (!dw_str_eq(s.v[i], x)) v[k++] = s.v[i];
    return (nset){ v, k };
}

static nset unite(tc *T, nset a, nset b)
{
    for (size_t i = 0; i < b.n; i++) a = add(T, a, b.v[i]);
    return a;
}

/* ------------------------------------------------------------------ §9.2 / §9.4 helpers */


static bool binds_name(const dw_tnode *n, dw_str x)
{
    for (size_t i = 0; i < n->nbinders; i++) if (dw_str_eq(n->binders[i].slot.name, x)) return true;
    return false;
}

/* A side that can bind a variable in `side == x`: any term but a variable
 * or a wildcard (§9.2: not `x == *`). */
static bool binding_side(const dw_tnode *t) { return t && t->kind != DW_T_VAR && t->kind != DW_T_WILDCARD; }

/* Is x restricted by a positive atom of n (§9.2)? */
static bool restricts(const dw_tnode *n, dw_str x, int d)
{
    while (n && d <= DW_TCHECK_MAX_DEPTH) {
        switch (n->kind) {
        case DW_T_AND:
            if (restricts(n->kids[1], x, d + 1)) return true;
            n = n->kids[0];
            continue;
        case DW_T_PRED:
            for (size_t i = 0; i < n->nfields; i++) {
                const dw_tnode *t = n->fields[i].term;
                if (t && t->kind == DW_T_VAR && dw_str_eq(t->name, x)) return true;
            }
            return false;
        case DW_T_TP: return dw_str_eq(n->slot.name, x);
        case DW_T_CMP: {
            if (n->op != DW_TC_EQ) return false;
            const dw_tnode *l = n->kids[0], *r = n->kids[1];
            return (l && l->kind == DW_T_VAR && dw_str_eq(l->name, x) && binding_side(r)) ||
                   (r && r->kind == DW_T_VAR && dw_str_eq(r->name, x) && binding_side(l));
        }
        case DW_T_FORMERLY: case DW_T_PREVIOUS: n = n->kids[0]; d++; continue;
        case DW_T_SINCE: n = n->kids[1]; d++; continue;
        case DW_T_EXISTS:
            if (binds_name(n, x)) return false;   /* shadowed */
            n = n->kids[0];
            d++;
            continue;
        default: return false;   /* `!`, aggregates (terms) */
        }
    }
    return false;
}

/* Does x occur (unshadowed) anywhere in n, terms included? */
static bool occurs(const dw_tnode *n, dw_str x, int d)
{
    while (n && d <= DW_TCHECK_MAX_DEPTH) {
        switch (n->kind) {
        case DW_T_VAR: return dw_str_eq(n->name, x);
        case DW_T_TP: return dw_str_eq(n->slot.name, x);
        case DW_T_EXISTS: case DW_T_COUNT:
            if (binds_name(n, x)) return false;
            break;
        case DW_T_SUM:
            if (binds_name(n, x)) return false;
            if (dw_str_eq(n->slot.name, x)) return true;
            break;
        default: break;
        }
        for (size_t i = 0; i < n->nfields; i++) if (occurs(n->fields[i].term, x, d + 1)) return true;
        for (size_t i = 0; i < n->nargs; i++) if (occurs(n->args[i], x, d + 1)) return true;
        if (n->kids[1] && occurs(n->kids[1], x, d + 1)) return true;
        n = n->kids[0];   /* left spine iteratively (long `&&` chains) */
        d++;
    }
    return false;
}

/* ------------------------------------------------------------------ §9.1, §9.2, §9.4, §9.5, Q8 */

static void st_cond(tc *T, const dw_tnode *n, int d);

static void use_var(tc *T, dw_str name, dw_loc loc)
{
    if (lookup(T, name) >= 0) return;
    for (size_t i = 0; i < T->nfreed; i++) if (dw_str_eq(T->freed[i], name)) return;
    T->freed = grow(T, T->freed, T->nfreed, &T->capfreed, sizeof *T->freed);
    T->freed[T->nfreed++] = name;
    report(T, loc, fmt(T, "use `_` or `*` for \"any value\", or bind it: `exists (%.*s: T). …` or a `for` list", PS(name)),
           "variable `%.*s` is free in this temporal condition", PS(name));
}

static void neg_window(tc *T, const dw_twindow *w)
{
    if (w->secs < 0 && !w->param.s)
        report(T, w->loc, "a negative window can never contain an event; `within 0s` covers the current timestamp only",
               "window must not be negative");
}

static void st_term(tc *T, const dw_tnode *t, bool agg_ok, int d)
{
    if (!t || too_deep(T, t, d)) return;
    switch (t->kind) {
    case DW_T_VAR: use_var(T, t->name, t->loc); return;
    case DW_T_ARRAY:
        for (size_t i = 0; i < t->nargs; i++) st_term(T, t->args[i], false, d + 1);
        return;
    case DW_T_COUNT: case DW_T_SUM: {
        if (!agg_ok)
            report(T, t->loc, "compare it, or bind it: `exists (n: Long). ((count …) == n && …)`",
                   "an aggregate may only be used as an operand of a comparison");
        const dw_tnode *body = t->kids[0];
        for (size_t i = 0; i < t->nbinders; i++) {
            const dw_tbinder *b = &t->binders[i];
            if (!occurs(body, b->slot.name, 0)) {
                report(T, b->slot.loc, "drop the binder, or use the variable in a predicate field pattern or `tp(…)` of the body",
                       "`for` variable `%.*s` does not occur in the `where` body", PS(b->slot.name));
                mark_bad(T, b);
            } else if (!restricts(body, b->slot.name, 0)) {
                report(T, b->slot.loc, "bind it in a positive predicate field pattern (`P{ f: x }`), with `tp(x)` or with `… == x`, not only under `!`",
                       "`for` variable `%.*s` is not range-restricted in the `where` body", PS(b->slot.name));
                mark_bad(T, b);
            }
        }
        if (t->kind == DW_T_SUM && !binds_name(t, t->slot.name))
            report(T, t->slot.loc, fmt(T, "list it in the `for` binders: `sum %.*s for (%.*s: Long), …`", PS(t->slot.name), PS(t->slot.name)),
                   "summed variable `%.*s` must be one of this aggregate's `for` binders", PS(t->slot.name));
        size_t mark = T->nsc;
        for (size_t i = 0; i < t->nbinders; i++) push(T, &t->binders[i]);
        st_cond(T, body, d + 1);
        T->nsc = mark;
        return;
    }
    default: return;
    }
}

static void st_cond(tc *T, const dw_tnode *n, int d)
{
    while (n && n->kind == DW_T_NOT) n = n->kids[0];
    if (!n || too_deep(T, n, d)) return;
    switch (n->kind) {
    case DW_T_AND: {
        tvec v = conjuncts(T, n, d);
        for (size_t i = 0; i < v.n; i++) st_cond(T, v.v[i], d + 1);
        return;
    }
    case DW_T_FORMERLY: case DW_T_PREVIOUS:
        neg_window(T, &n->win);
        st_cond(T, n->kids[0], d + 1);
        return;
    case DW_T_SINCE:
        st_cond(T, n->kids[0], d + 1);
        neg_window(T, &n->win);
        st_cond(T, n->kids[1], d + 1);
        return;
    case DW_T_EXISTS: {
        const dw_tbinder *b = &n->binders[0];
        if (!restricts(n->kids[0], b->slot.name, 0)) {
            report(T, b->slot.loc,
                   fmt(T, "bind `%.*s` in a positive atom of the body: a predicate field pattern (`P{ f: %.*s }`), `tp(%.*s)` or `(…) == %.*s`; nothing under `!` binds",
                       PS(b->slot.name), PS(b->slot.name), PS(b->slot.name), PS(b->slot.name)),
                   "variable `%.*s` of `exists` is not range-restricted in its body", PS(b->slot.name));
            mark_bad(T, b);
        }
        size_t mark = T->nsc;
        push(T, b);
        st_cond(T, n->kids[0], d + 1);
        T->nsc = mark;
        return;
    }
    case DW_T_TP: use_var(T, n->slot.name, n->slot.loc); return;
    case DW_T_PRED:
        for (size_t i = 0; i < n->nfields; i++) st_term(T, n->fields[i].term, false, d + 1);
        return;
    case DW_T_CMP:
        st_term(T, n->kids[0], true, d + 1);
        st_term(T, n->kids[1], true, d + 1);
        return;
    default: return;
    }
}

/* ------------------------------------------------------------------ §9.3 producers before consumers */

static nset pc(tc *T, const dw_tnode *n, nset A, int d);

static void consume_var(tc *T, dw_str name, dw_loc loc, nset A, why w)
{
    long i = lookup(T, name);
    if (i < 0 || is_bad(T, T->sc[i].b) || has(A, name)) return;   /* free / unrestricted: reported already */
    if (w == WHY_SINCE)
        report(T, loc, fmt(T, "only the anchor (right operand) of `since` binds: bind `%.*s` there or to the left of the `since`", PS(name)),
               "variable `%.*s` in the left operand of `since` is not bound by its anchor or earlier", PS(name));
    else if (w == WHY_AGG)
        report(T, loc, fmt(T, "an aggregate may read an outer variable only after it is bound: move the conjunct that binds `%.*s` to the left", PS(name)),
               "variable `%.*s` is used before it is bound", PS(name));
    else
        report(T, loc, fmt(T, "a filter (a comparison that binds nothing, or a negation) may only use variables bound to its left: move the conjunct that binds `%.*s` before it", PS(name)),
               "variable `%.*s` is used before it is bound", PS(name));
}

/* Every variable of n bound outside n (scope index < base) is consumed. */
static void fv_walk(tc *T, const dw_tnode *n, size_t base, nset A, nset *acc, why w, int d)
{
    while (n && d <= DW_TCHECK_MAX_DEPTH) {
        dw_str use = { NULL, 0 };
        dw_loc uloc = n->loc;
        switch (n->kind) {
        case DW_T_VAR: use = n->name; break;
        case DW_T_TP: use = n->slot.name; uloc = n->slot.loc; break;
        case DW_T_EXISTS: case DW_T_COUNT: case DW_T_SUM: {
            size_t mark = T->nsc;
            for (size_t i = 0; i < n->nbinders; i++) push(T, &n->binders[i]);
            if (n->kind == DW_T_SUM) {
                long i = lookup(T, n->slot.name);
                if (i >= 0 && (size_t)i < base) { *acc = add(T, *acc, n->slot.name); consume_var(T, n->slot.name, n->slot.loc, A, w); }
            }
            fv_walk(T, n->kids[0], base, A, acc, w, d + 1);
            T->nsc = mark;
            return;
        }
        default: break;
        }
        if (use.s) {
            long i = lookup(T, use);
            if (i >= 0 && (size_t)i < base) { *acc = add(T, *acc, use); consume_var(T, use, uloc, A, w); }
            return;
        }
        for (size_t i = 0; i < n->nfields; i++) fv_walk(T, n->fields[i].term, base, A, acc, w, d + 1);
        for (size_t i = 0; i < n->nargs; i++) fv_walk(T, n->args[i], base, A, acc, w, d + 1);
        if (n->kids[1]) fv_walk(T, n->kids[1], base, A, acc, w, d + 1);
        n = n->kids[0];
        d++;
    }
}

/* A filter sub-formula: its outer variables must be in A; then its own
 * structure is checked with those variables counted as restricted (so a
 * violation is reported once). */
static void filter(tc *T, const dw_tnode *n, nset A, why w, int d)
{
    nset fv = { 0 };
    fv_walk(T, n, T->nsc, A, &fv, w, d);
    pc(T, n, unite(T, A, fv), d + 1);
}

/* A term read by a comparison: variables consumed; an aggregate's correlated
 * variables consumed and its body checked as a chain of its own. */
static void consume_term(tc *T, const dw_tnode *t, nset A, int d)
{
    if (!t || d > DW_TCHECK_MAX_DEPTH) return;
    switch (t->kind) {
    case DW_T_VAR: consume_var(T, t->name, t->loc, A, WHY_FILTER); return;
    case DW_T_ARRAY: for (size_t i = 0; i < t->nargs; i++) consume_term(T, t->args[i], A, d + 1); return;
    case DW_T_COUNT: case DW_T_SUM: {
        nset fv = { 0 };
        fv_walk(T, t, T->nsc, A, &fv, WHY_AGG, d);
        nset in = unite(T, A, fv);
        size_t mark = T->nsc;
        for (size_t i = 0; i < t->nbinders; i++) { push(T, &t->binders[i]); in = without(T, in, t->binders[i].slot.name); }
        pc(T, t->kids[0], in, d + 1);
        T->nsc = mark;
        return;
    }
    default: return;
    }
}

/* Returns the accumulator after n: A plus the variables n restricts. */
static nset pc(tc *T, const dw_tnode *n, nset A, int d)
{
    if (!n || d > DW_TCHECK_MAX_DEPTH) return A;
    switch (n->kind) {
    case DW_T_AND: {
        tvec v = conjuncts(T, n, d);
        for (size_t i = 0; i < v.n; i++) A = pc(T, v.v[i], A, d + 1);
        return A;
    }
    case DW_T_PRED:
        for (size_t i = 0; i < n->nfields; i++) {
            const dw_tnode *t = n->fields[i].term;
            if (t && t->kind == DW_T_VAR && lookup(T, t->name) >= 0) A = add(T, A, t->name);
        }
        return A;
    case DW_T_TP:
        return lookup(T, n->slot.name) >= 0 ? add(T, A, n->slot.name) : A;
    case DW_T_CMP: {
        const dw_tnode *l = n->kids[0], *r = n->kids[1];
        if (n->op == DW_TC_EQ && l && r) {
            if (l->kind == DW_T_VAR && !has(A, l->name) && binding_side(r)) {
                consume_term(T, r, A, d + 1);
                return lookup(T, l->name) >= 0 ? add(T, A, l->name) : A;
            }
            if (r->kind == DW_T_VAR && !has(A, r->name) && binding_side(l)) {
                consume_term(T, l, A, d + 1);
                return lookup(T, r->name) >= 0 ? add(T, A, r->name) : A;
            }
        }
        consume_term(T, l, A, d + 1);
        consume_term(T, r, A, d + 1);
        return A;
    }
    case DW_T_NOT:
        filter(T, n->kids[0], A, WHY_FILTER, d + 1);
        return A;
    case DW_T_FORMERLY: case DW_T_PREVIOUS:
        return pc(T, n->kids[0], A, d + 1);
    case DW_T_SINCE: {
        nset ar = pc(T, n->kids[1], A, d + 1);
        filter(T, n->kids[0], ar, WHY_SINCE, d + 1);
        return ar;
    }
    case DW_T_EXISTS: {
        dw_str x = n->binders[0].slot.name;
        size_t mark = T->nsc;
        push(T, &n->binders[0]);
        nset b = pc(T, n->kids[0], without(T, A, x), d + 1);
        T->nsc = mark;
        return unite(T, A, without(T, b, x));
    }
    default: return A;
    }
}

static void structure_leaf(tc *T, const dw_tnode *root)
{
    T->nsc = 0;
    st_cond(T, root, 0);
    T->nsc = 0;
    pc(T, root, (nset){ 0 }, 0);
    T->nsc = 0;
}

size_t dw_tcheck_structure(const dw_policy_set *ps, dw_diags *diags)
{
    if (!ps) return 0;
    tc *T = calloc(1, sizeof *T);
    const dw_loc start = { .line = 1, .col = 1 };
    if (!T) { dw_error(diags, ps->src, start, "out of memory during temporal checks"); return 1; }
    dw_arena_init(&T->a, 1 << 14);
    T->src = ps->src;
    size_t nerr = 0;
    if (setjmp(T->oom)) {
        dw_error(diags, ps->src, start, "out of memory during temporal checks");
        nerr++;
    } else {
        for (size_t i = 0; i < ps->npolicies; i++) {
            const dw_policy *p = &ps->policies[i];
            T->pid = policy_id(T, p, i);
            for (size_t c = 0; c < p->nclauses; c++) each_leaf(T, p->clauses[c].body, structure_leaf, 0);
            nerr += flush(T, diags);
        }
    }
    dw_arena_free(&T->a);
    free(T);
    return nerr;
}

/* ------------------------------------------------------------------ types (§9.8) */

static ty ty_k(tykind k) { return (ty){ k, NULL, 0, NULL }; }

static ty ty_of_cedar(const dw_type *t)
{
    if (!t) return ty_k(TY_UNKNOWN);
    switch (t->kind) {
    case DW_T_BOOL: return ty_k(TY_BOOL);
    case DW_T_LONG: return ty_k(TY_LONG);
    case DW_T_STRING: return ty_k(TY_STRING);
    case DW_T_DECIMAL: return ty_k(TY_DECIMAL);
    case DW_T_ENTITY: return (ty){ TY_ENTITY, &t->name, 1, NULL };
    default: return (ty){ TY_CEDAR, NULL, 0, t };
    }
}

static ty ty_of_field(const dw_event_field *f)
{
    if (!f || f->is_group) return ty_k(TY_UNKNOWN);
    if (f->type) return ty_of_cedar(f->type);
    if (f->from_selector) return (ty){ TY_ENTITY, f->etypes, f->netypes, NULL };
    return ty_k(TY_UNKNOWN);
}

static const char *ty_name(tc *T, ty t)
{
    switch (t.k) {
    case TY_UNKNOWN: return "unknown";
    case TY_TIMEPOINT: return "Timepoint";
    case TY_LONG: return "Long";
    case TY_STRING: return "String";
    case TY_BOOL: return "Bool";
    case TY_DECIMAL: return "decimal";
    case TY_ARRAY: return "an array";
    case TY_ENTITY: {
        if (!t.nnames) return "an entity of no type";
        char *s = fmt(T, "%.*s", PS(t.names[0]));
        for (size_t i = 1; i < t.nnames; i++) s = fmt(T, "%s | %.*s", s, PS(t.names[i]));
        return s;
    }
    case TY_CEDAR: {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f) longjmp(T->oom, 1);
        dw_type_print(f, t.ct);
        fclose(f);
        char *s = fmt(T, "%s", buf ? buf : "");
        free(buf);
        return s;
    }
    }
    return "unknown";
}

static bool known(ty t) { return t.k != TY_UNKNOWN; }

static bool compat(ty a, ty b)
{
    if (!known(a) || !known(b)) return true;
    if (a.k == TY_ARRAY || b.k == TY_ARRAY) {
        ty o = a.k == TY_ARRAY ? b : a;
        return o.k == TY_ARRAY || (o.k == TY_CEDAR && o.ct->kind == DW_T_SET);
    }
    if (a.k != b.k) return false;
    if (a.k == TY_ENTITY) {
        for (size_t i = 0; i < a.nnames; i++)
            for (size_t j = 0; j < b.nnames; j++) if (dw_str_eq(a.names[i], b.names[j])) return true;
        return false;
    }
    if (a.k == TY_CEDAR) return dw_type_equal(a.ct, b.ct);
    return true;
}

static bool is_action_type(const tc *T, dw_str name)
{
    if (!T->s) return false;
    for (size_t i = 0; i < T->s->nactions; i++) if (dw_str_eq(T->s->actions[i].uid.type, name)) return true;
    return false;
}

/* A binder annotation (§6.7): Timepoint, a Cedar primitive, or an entity type. */
static ty binder_ty(tc *T, const dw_tbinder *b, bool *ok)
{
    dw_str t = b->type;
    *ok = true;
    if (dw_str_is(t, "Timepoint")) return ty_k(TY_TIMEPOINT);
    if (dw_str_is(t, "Long")) return ty_k(TY_LONG);
    if (dw_str_is(t, "String")) return ty_k(TY_STRING);
    if (dw_str_is(t, "Bool")) return ty_k(TY_BOOL);
    if (dw_str_is(t, "decimal")) return ty_k(TY_DECIMAL);
    if (!T->s) return (ty){ TY_ENTITY, &b->type, 1, NULL };
    if (dw_schema_entity(T->s, t.s, t.len) || is_action_type(T, t)) return (ty){ TY_ENTITY, &b->type, 1, NULL };
    *ok = false;
    return ty_k(TY_UNKNOWN);
}

static ty var_ty(tc *T, dw_str name)
{
    long i = lookup(T, name);
    if (i < 0) return ty_k(TY_UNKNOWN);
    bool ok;
    return binder_ty(T, T->sc[i].b, &ok);
}

static void check_binder(tc *T, const dw_tbinder *b)
{
    bool ok;
    binder_ty(T, b, &ok);
    if (!ok)
        report(T, b->loc, "a binder type is `Timepoint`, `Long`, `String`, `Bool` or a declared entity type",
               "binder type `%.*s` is not a declared type", PS(b->type));
}

/* The actions the policy's action scope admits (§20 Q10), or unknown. */
static void admitted_actions(tc *T, const dw_policy *p)
{
    T->nacts = 0;
    T->acts_known = false;
    if (!T->s) return;
    const dw_scope_con *c = &p->action;
    const dw_euid_lit *targets;
    size_t nt;
    bool desc;
    if (c->kind == DW_SC_EQ) { targets = &c->target; nt = 1; desc = false; }
    else if (c->kind == DW_SC_IN) { targets = &c->target; nt = 1; desc = true; }
    else if (c->kind == DW_SC_IN_LIST) { targets = c->list; nt = c->nlist; desc = true; }
    else return;
    size_t na = T->s->nactions;
    bool *in = alloc(T, (na ? na : 1) * sizeof *in);
    for (size_t k = 0; k < nt; k++)
        for (size_t i = 0; i < na; i++)
            if (dw_str_eq(T->s->actions[i].uid.type, targets[k].type) && dw_str_eq(T->s->actions[i].uid.id, targets[k].id)) in[i] = true;
    /* descendants: fixpoint over the parent links (cycles cannot loop) */
    for (bool changed = desc; changed;) {
        changed = false;
        for (size_t i = 0; i < na; i++) {
            if (in[i]) continue;
            const dw_action_decl *a = &T->s->actions[i];
            for (size_t j = 0; j < a->nparents && !in[i]; j++)
                for (size_t k = 0; k < na; k++)
                    if (in[k] && dw_str_eq(T->s->actions[k].uid.type, a->parents[j].type) &&
                        dw_str_eq(T->s->actions[k].uid.id, a->parents[j].id)) { in[i] = true; changed = true; break; }
        }
    }
    T->acts = alloc(T, (na ? na : 1) * sizeof *T->acts);
    /* an action without appliesTo (a pure group) never is a request's action */
    for (size_t i = 0; i < na; i++)
        if (in[i] && T->s->actions[i].has_applies_to) T->acts[T->nacts++] = &T->s->actions[i];
    T->acts_known = true;
}

static const dw_type *ctx_lookup(const dw_type *rec, dw_str path)
{
    const char *p = path.s, *end = path.s + path.len;
    const dw_type *t = rec;
    while (t && p < end) {
        const char *q = memchr(p, '.', (size_t)(end - p));
        if (!q) q = end;
        dw_str seg = { p, (size_t)(q - p) };
        if (t->kind != DW_T_RECORD) return NULL;
        const dw_type *next = NULL;
        for (size_t i = 0; i < t->nattrs; i++) if (dw_str_eq(t->attrs[i].name, seg)) { next = t->attrs[i].type; break; }
        t = next;
        p = q < end ? q + 1 : end;
    }
    return t;
}

static ty scope_ty(tc *T, bool principal)
{
    if (!T->acts_known || !T->nacts) return ty_k(TY_UNKNOWN);
    dw_str *names = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < T->nacts; i++) {
        const dw_action_decl *a = T->acts[i];
        const dw_str *v = principal ? a->principals : a->resources;
        size_t nv = principal ? a->nprincipals : a->nresources;
        for (size_t j = 0; j < nv; j++) {
            bool dup = false;
            for (size_t k = 0; k < n; k++) if (dw_str_eq(names[k], v[j])) dup = true;
            if (dup) continue;
            names = grow(T, names, n, &cap, sizeof *names);
            names[n++] = v[j];
        }
    }
    return (ty){ TY_ENTITY, names, n, NULL };
}

static ty entity_lit_ty(tc *T, const dw_tnode *t)
{
    if (!T->s) return (ty){ TY_ENTITY, &t->type, 1, NULL };
    const dw_entity_decl *e = dw_schema_entity(T->s, t->type.s, t->type.len);
    if (e) {
        if (e->is_enum) {
            bool found = false;
            for (size_t i = 0; i < e->nenum && !found; i++) found = dw_str_eq(e->enum_ids[i], t->str);
            if (!found) {
                char *ids = "";
                for (size_t i = 0; i < e->nenum; i++) ids = fmt(T, "%s%s\"%s\"", ids, i ? ", " : "", esc(T, e->enum_ids[i]));
                report(T, t->loc, fmt(T, "declared values: %s", ids),
                       "`%.*s::\"%s\"` is not a declared value of the enumerated entity type `%.*s`",
                       PS(t->type), esc(T, t->str), PS(t->type));
            }
        }
        return (ty){ TY_ENTITY, &e->name, 1, NULL };
    }
    if (dw_schema_action(T->s, t->type.s, t->type.len, t->str.s, t->str.len)) return (ty){ TY_ENTITY, &t->type, 1, NULL };
    if (is_action_type(T, t->type))
        report(T, t->loc, "check the action id against the action schema", "action `%.*s::\"%s\"` is not declared",
               PS(t->type), esc(T, t->str));
    else
        report(T, t->loc, "check the type name against the action schema's entity declarations",
               "entity type `%.*s` is not declared", PS(t->type));
    return ty_k(TY_UNKNOWN);
}

/* ------------------------------------------------------------------ §9.6-§9.9 */

static void sc_cond(tc *T, const dw_tnode *n, int d);

/* §9.6: contains a predicate, a tp, an aggregate or a variable. */
static bool varies(const dw_tnode *n, int d)
{
    while (n && d <= DW_TCHECK_MAX_DEPTH) {
        switch (n->kind) {
        case DW_T_PRED: case DW_T_TP: case DW_T_COUNT: case DW_T_SUM: case DW_T_VAR: return true;
        default: break;
        }
        for (size_t i = 0; i < n->nfields; i++) if (varies(n->fields[i].term, d + 1)) return true;
        for (size_t i = 0; i < n->nargs; i++) if (varies(n->args[i], d + 1)) return true;
        if (n->kids[1] && varies(n->kids[1], d + 1)) return true;
        n = n->kids[0];
        d++;
    }
    return false;
}

static void need_varies(tc *T, const dw_tnode *n, const char *what)
{
    if (!n || varies(n, 0)) return;
    report(T, n->loc,
           "it must mention a predicate, `tp(…)`, an aggregate or a bound variable; a test of `context.*`, `principal` or `resource` alone belongs in a Cedar `when { … }` clause",
           "%s does not depend on the timepoint (it monitors nothing)", what);
}

/* The window as written (`48h`), else in its largest exact unit. */
static const char *win_text(tc *T, const dw_twindow *w)
{
    if (T->src && w->loc.end > w->loc.off && w->loc.end <= T->src->len && w->loc.end - w->loc.off < 64) {
        char buf[64];
        size_t k = 0;
        for (uint32_t i = w->loc.off; i < w->loc.end; i++)
            if (!strchr(" \t\r\n", T->src->text[i])) buf[k++] = T->src->text[i];
        buf[k] = 0;
        char *endp;
        long long v = strtoll(buf, &endp, 10);
        if (endp != buf && endp[0] && !endp[1] && strchr("smhd", endp[0])) {
            long long m = endp[0] == 's' ? 1 : endp[0] == 'm' ? 60 : endp[0] == 'h' ? 3600 : 86400;
            if (v == w->secs / m && w->secs % m == 0) return fmt(T, "%s", buf);
        }
    }
    static const struct { int64_t m; char u; } units[] = { { 86400, 'd' }, { 3600, 'h' }, { 60, 'm' } };
    for (size_t i = 0; i < 3; i++)
        if (w->secs != 0 && w->secs % units[i].m == 0) return fmt(T, "%lld%c", (long long)(w->secs / units[i].m), units[i].u);
    return fmt(T, "%llds", (long long)w->secs);
}

static void window_cap(tc *T, const dw_twindow *w)
{
    if (w->param.s || w->secs < 0 || w->secs <= T->maxw) return;
    /* Box's event schema is built in: its cap is Box's, not the author's to raise */
    bool box = T->ev && T->ev->es && T->ev->es->src && T->ev->es->src->name && !strcmp(T->ev->es->src->name, "<builtin:box>");
    report(T, w->loc,
           box ? fmt(T, "Box keeps %.*s of history (box.md §5) and a policy cannot raise it: shorten the window", PS(T->maxw_text))
               : fmt(T, "split the condition, or raise `max_window` in the event schema; nested windows may reach further back in total"),
           "temporal window `%s` exceeds the maximum allowed window `%.*s`", win_text(T, w), PS(T->maxw_text));
}

/* "did you mean `input.program`?", else the event's leaves */
static void leaf_paths(tc *T, const dw_event_field *fs, size_t n, const char *pre, dw_str want, size_t *best,
                       const char **hit, char **all)
{
    for (size_t i = 0; i < n; i++) {
        char *path = fmt(T, "%s%.*s", pre, PS(fs[i].name));
        if (fs[i].is_group) { leaf_paths(T, fs[i].fields, fs[i].nfields, fmt(T, "%s.", path), want, best, hit, all); continue; }
        if (dw_hint_closer(want.s, want.len, path, strlen(path), best)) *hit = path;
        *all = fmt(T, "%s%s`%s`", *all, **all ? ", " : "", path);
    }
}

static const char *field_hint(tc *T, const dw_derived_event *ev, dw_str want)
{
    size_t best = (size_t)-1;
    const char *hit = NULL;
    char *all = "";
    leaf_paths(T, ev->fields, ev->nfields, "", want, &best, &hit, &all);
    if (hit) return fmt(T, "did you mean `%s`?", hit);
    return *all ? fmt(T, "the event's fields are %s", all) : "this event has no fields";
}

static ty sc_term(tc *T, const dw_tnode *t, int d)
{
    if (!t || d > DW_TCHECK_MAX_DEPTH) return ty_k(TY_UNKNOWN);
    switch (t->kind) {
    case DW_T_LIT_LONG: return ty_k(TY_LONG);
    case DW_T_LIT_STRING: return ty_k(TY_STRING);
    case DW_T_LIT_BOOL: return ty_k(TY_BOOL);
    case DW_T_LIT_DECIMAL: return ty_k(TY_DECIMAL);
    case DW_T_LIT_ENTITY: return entity_lit_ty(T, t);
    case DW_T_ARRAY:
        for (size_t i = 0; i < t->nargs; i++) sc_term(T, t->args[i], d + 1);
        return ty_k(TY_ARRAY);
    case DW_T_VAR: return var_ty(T, t->name);
    case DW_T_PRINCIPAL: case DW_T_RESOURCE:
        if (t->path.len) return ty_k(TY_UNKNOWN);   /* attribute tails are not typed (§9.8) */
        return scope_ty(T, t->kind == DW_T_PRINCIPAL);
    case DW_T_CONTEXT: {
        if (!T->acts_known) return ty_k(TY_UNKNOWN);   /* unconstrained: left to the Cedar side */
        const dw_type *first = NULL;
        bool same = true;
        for (size_t i = 0; i < T->nacts; i++) {
            const dw_action_decl *a = T->acts[i];
            const dw_type *ct = ctx_lookup(a->context, t->path);
            if (!ct) {
                report(T, t->loc, "every action the policy's scope admits must declare it in its context (see the action schema)",
                       "attribute `context.%.*s` is not declared in the context of action %.*s::\"%s\"",
                       PS(t->path), PS(a->uid.type), esc(T, a->uid.id));
                return ty_k(TY_UNKNOWN);
            }
            if (!first) first = ct;
            else if (!dw_type_equal(first, ct)) same = false;
        }
        return same ? ty_of_cedar(first) : ty_k(TY_UNKNOWN);
    }
    case DW_T_COUNT: case DW_T_SUM: {
        size_t mark = T->nsc;
        for (size_t i = 0; i < t->nbinders; i++) { check_binder(T, &t->binders[i]); push(T, &t->binders[i]); }
        if (t->kind == DW_T_SUM) {
            ty v = var_ty(T, t->slot.name);
            if (known(v) && v.k != TY_LONG)
                report(T, t->slot.loc, "declare it `(… : Long)` in the `for` list", "summed variable `%.*s` must be declared `Long`, not `%s`",
                       PS(t->slot.name), ty_name(T, v));
        }
        need_varies(T, t->kids[0], "this `where` body");
        sc_cond(T, t->kids[0], d + 1);
        T->nsc = mark;
        return ty_k(TY_LONG);
    }
    default: return ty_k(TY_UNKNOWN);
    }
}

/* elem: t is an element of an array matched against a Set field. */
static void field_term(tc *T, const dw_tnode *t, ty ft, dw_str path, bool elem, int d)
{
    if (!t || d > DW_TCHECK_MAX_DEPTH) return;
    if (t->kind == DW_T_WILDCARD) return;
    if (t->kind == DW_T_ARRAY && ft.k == TY_CEDAR && ft.ct->kind == DW_T_SET) {
        for (size_t i = 0; i < t->nargs; i++) field_term(T, t->args[i], ty_of_cedar(ft.ct->elem), path, true, d + 1);
        return;
    }
    ty tt = sc_term(T, t, d + 1);
    if (compat(ft, tt)) return;
    const char *what = elem ? fmt(T, "the elements of field `%.*s` have", PS(path)) : fmt(T, "field `%.*s` has", PS(path));
    if (t->kind == DW_T_VAR)
        report(T, t->loc, "binder annotations are authoritative: declare the variable with the field's type",
               "%s type %s, but variable `%.*s` is declared `%s`", what, ty_name(T, ft), PS(t->name), ty_name(T, tt));
    else
        report(T, t->loc, NULL, "%s type %s, but the pattern has type %s", what, ty_name(T, ft), ty_name(T, tt));
}

/* The span of a field pattern's path, when the source text there is it. */
static dw_loc path_loc(tc *T, const dw_tfield *f)
{
    if (T->src && f->loc.off + f->path.len <= T->src->len && memcmp(T->src->text + f->loc.off, f->path.s, f->path.len) == 0)
        return dw_loc_at(T->src, f->loc.off, f->loc.off + (uint32_t)f->path.len);
    return f->loc;
}

static void sc_pred(tc *T, const dw_tnode *n, int d)
{
    const dw_derived_event *ev = NULL;
    if (T->ev) {
        ev = dw_event_find(T->ev, n->type.s, n->type.len, n->str.s, n->str.len, n->ekind.s, n->ekind.len);
        if (!ev) {
            const char *hint;
            if (T->s && !dw_schema_action(T->s, n->type.s, n->type.len, n->str.s, n->str.len)) {
                hint = fmt(T, "the action schema declares no action %.*s::\"%s\"", PS(n->type), esc(T, n->str));
            } else {
                char *kinds = "";
                for (size_t i = 0; i < T->ev->es->ndecls; i++) kinds = fmt(T, "%s%s`%.*s`", kinds, i ? ", " : "", PS(T->ev->es->decls[i].kind));
                hint = T->ev->es->ndecls ? fmt(T, "the event schema declares the kinds %s", kinds) : "the event schema declares no events";
            }
            report(T, n->loc, hint, "predicate `%s` does not name a declared event", pred_text(T, n));
        }
    }
    for (size_t i = 0; i < n->nfields; i++) {
        const dw_tfield *f = &n->fields[i];
        const dw_event_field *ef = ev ? dw_event_field_lookup(ev, f->path.s, f->path.len) : NULL;
        if (ev && !ef) {
            report(T, path_loc(T, f), field_hint(T, ev, f->path),
                   "field `%.*s` is not declared for event `%s`", PS(f->path), pred_text(T, n));
        } else if (ef && ef->is_group) {
            const char *hint = ef->nfields ? fmt(T, "name one of its leaves, e.g. `%.*s.%.*s`", PS(f->path), PS(ef->fields[0].name))
                                           : "name one of its leaves";
            report(T, path_loc(T, f), hint, "field `%.*s` of event `%s` is a group, not a leaf", PS(f->path), pred_text(T, n));
            ef = NULL;
        }
        field_term(T, f->term, ty_of_field(ef), f->path, false, d + 1);
    }
}

static const char *op_text(dw_tcmp op)
{
    static const char *t[] = { "==", "!=", "<", "<=", ">", ">=" };
    return t[op];
}

/* An operand's type under one admitted action: a `context.*` path as that
 * action declares it (UNKNOWN where it does not: reported already), any other
 * operand as typed over them all. */
static ty operand_ty_for(const dw_tnode *t, const dw_action_decl *a, ty all)
{
    if (t->kind != DW_T_CONTEXT) return all;
    const dw_type *ct = ctx_lookup(a->context, t->path);
    return ct ? ty_of_cedar(ct) : ty_k(TY_UNKNOWN);
}

/* A comparison with a `context.*` operand whose type differs across the
 * admitted actions (its type over them all is unknown): Cedar checks the
 * request environment of each action (§5.2), so check it under each: `==` /
 * `!=` need compatible sides, `<` `<=` `>` `>=` Long ones.  One report per
 * comparison, naming the first action it fails under. */
static void cmp_per_action(tc *T, const dw_tnode *n, ty l, ty r)
{
    if (!T->acts_known || T->nacts < 2 || (n->kids[0]->kind != DW_T_CONTEXT && n->kids[1]->kind != DW_T_CONTEXT)) return;
    bool eq = n->op == DW_TC_EQ || n->op == DW_TC_NE;
    for (size_t i = 0; i < T->nacts; i++) {
        const dw_action_decl *a = T->acts[i];
        ty la = operand_ty_for(n->kids[0], a, l), ra = operand_ty_for(n->kids[1], a, r);
        if (eq) {
            if (compat(la, ra)) continue;
            report(T, n->loc, "both sides of `==` / `!=` must have the same type under every action the policy's scope admits",
                   "`%s` compares incompatible types %s and %s under action %.*s::\"%s\"",
                   op_text(n->op), ty_name(T, la), ty_name(T, ra), PS(a->uid.type), esc(T, a->uid.id));
            return;
        }
        const dw_tnode *side = n->kids[0]->kind == DW_T_CONTEXT && known(la) && la.k != TY_LONG ? n->kids[0]
                             : n->kids[1]->kind == DW_T_CONTEXT && known(ra) && ra.k != TY_LONG ? n->kids[1] : NULL;
        if (!side) continue;
        report(T, side->loc, "`<`, `<=`, `>` and `>=` compare Longs only, under every action the policy's scope admits",
               "`%s` needs Long operands, but this operand has type %s under action %.*s::\"%s\"",
               op_text(n->op), ty_name(T, side == n->kids[0] ? la : ra), PS(a->uid.type), esc(T, a->uid.id));
        return;
    }
}

static void sc_cond(tc *T, const dw_tnode *n, int d)
{
    while (n && n->kind == DW_T_NOT) n = n->kids[0];
    if (!n || d > DW_TCHECK_MAX_DEPTH) return;
    switch (n->kind) {
    case DW_T_AND: {
        tvec v = conjuncts(T, n, d);
        for (size_t i = 0; i < v.n; i++) sc_cond(T, v.v[i], d + 1);
        return;
    }
    case DW_T_FORMERLY: case DW_T_PREVIOUS:
        window_cap(T, &n->win);
        need_varies(T, n->kids[0], n->kind == DW_T_FORMERLY ? "the body of `formerly`" : "the body of `previous`");
        sc_cond(T, n->kids[0], d + 1);
        return;
    case DW_T_SINCE:
        need_varies(T, n->kids[0], "the left operand of `since`");
        window_cap(T, &n->win);
        need_varies(T, n->kids[1], "the right operand of `since`");
        sc_cond(T, n->kids[0], d + 1);
        sc_cond(T, n->kids[1], d + 1);
        return;
    case DW_T_EXISTS: {
        check_binder(T, &n->binders[0]);
        need_varies(T, n->kids[0], "the body of `exists`");
        size_t mark = T->nsc;
        push(T, &n->binders[0]);
        sc_cond(T, n->kids[0], d + 1);
        T->nsc = mark;
        return;
    }
    case DW_T_TP: {
        ty v = var_ty(T, n->slot.name);
        if (known(v) && v.k != TY_TIMEPOINT)
            report(T, n->slot.loc, "declare it `(… : Timepoint)`", "variable `%.*s` in `tp(…)` must be declared `Timepoint`, not `%s`",
                   PS(n->slot.name), ty_name(T, v));
        return;
    }
    case DW_T_PRED: sc_pred(T, n, d); return;
    case DW_T_CMP: {
        ty l = sc_term(T, n->kids[0], d + 1), r = sc_term(T, n->kids[1], d + 1);
        if (n->op == DW_TC_EQ || n->op == DW_TC_NE) {
            if (!compat(l, r))
                report(T, n->loc, "both sides of `==` / `!=` must have the same type", "`%s` compares incompatible types %s and %s",
                       op_text(n->op), ty_name(T, l), ty_name(T, r));
            else cmp_per_action(T, n, l, r);
            return;
        }
        const dw_tnode *side[2] = { n->kids[0], n->kids[1] };
        ty st[2] = { l, r };
        bool bad = false;
        for (int i = 0; i < 2; i++)
            if (known(st[i]) && st[i].k != TY_LONG) {
                bad = true;
                report(T, side[i]->loc, "`<`, `<=`, `>` and `>=` compare Longs only in temporal bodies (aggregates are Long; decimals and timepoints are not ordered)",
                       "`%s` needs Long operands, but this operand has type %s", op_text(n->op), ty_name(T, st[i]));
            }
        if (!bad) cmp_per_action(T, n, l, r);
        return;
    }
    default: return;
    }
}

static void schema_leaf(tc *T, const dw_tnode *root)
{
    T->nsc = 0;
    tvec v = conjuncts(T, root, 0);
    for (size_t i = 0; i < v.n; i++) {
        /* a temporal operator's own operand check (below) names the same
         * subtree more precisely: report it once */
        const dw_tnode *c = v.v[i];
        while (c && c->kind == DW_T_NOT) c = c->kids[0];
        if (c && (c->kind == DW_T_FORMERLY || c->kind == DW_T_PREVIOUS || c->kind == DW_T_SINCE || c->kind == DW_T_EXISTS)) continue;
        need_varies(T, v.v[i], "this temporal condition");
    }
    sc_cond(T, root, 0);
    T->nsc = 0;
}

size_t dw_tcheck_schema(const dw_policy_set *ps, const dw_schema *actions, const dw_event_derivation *dv, dw_diags *diags)
{
    if (!ps) return 0;
    tc *T = calloc(1, sizeof *T);
    const dw_loc start = { .line = 1, .col = 1 };
    if (!T) { dw_error(diags, ps->src, start, "out of memory during temporal checks"); return 1; }
    dw_arena_init(&T->a, 1 << 14);
    T->src = ps->src;
    T->s = actions ? actions : dv ? dv->actions : NULL;
    T->ev = dv;
    T->maxw = dv && dv->es ? (int64_t)dv->es->max_window : (int64_t)DW_EVENT_DEFAULT_MAX_WINDOW;
    T->maxw_text = dv && dv->es && dv->es->max_window_text.len ? dv->es->max_window_text : (dw_str){ "24h", 3 };
    size_t nerr = 0;
    if (setjmp(T->oom)) {
        dw_error(diags, ps->src, start, "out of memory during temporal checks");
        nerr++;
    } else {
        for (size_t i = 0; i < ps->npolicies; i++) {
            const dw_policy *p = &ps->policies[i];
            T->pid = policy_id(T, p, i);
            admitted_actions(T, p);
            for (size_t c = 0; c < p->nclauses; c++) each_leaf(T, p->clauses[c].body, schema_leaf, 0);
            nerr += flush(T, diags);
        }
    }
    dw_arena_free(&T->a);
    free(T);
    return nerr;
}
