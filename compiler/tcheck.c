/* tcheck.c - temporal well-formedness (dogwood.md §9.1-§9.5, §20 Q8) and
 * temporal validation (§9.6-§9.9, §20 Q7).  See tcheck.h for the API.
 *
 * Variables are identified by name plus the innermost enclosing binder
 * (`exists` or an aggregate's `for` list), tracked on a scope stack that
 * every walk pushes and pops.  The producer/consumer rule (§9.3) threads an
 * accumulator of restricted names through each flattened `&&` chain; the
 * accumulator is an immutable small set copied into the arena on change.
 *
 * This file: the helpers both passes share and the well-formedness pass
 * (§9.1-§9.5); the validation against the schema is in tcheck_schema.c. */
#include "tcheck_int.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../stdlib/cedar_quote.h"

typedef struct nset { const dw_str *v; size_t n; } nset;
typedef enum { WHY_FILTER, WHY_SINCE, WHY_AGG } why;

/* ------------------------------------------------------------------ memory, text */

/* Grow an arena array to hold n+1 elements. */
void *dw_tcheck_grow(tc *T, void *v, size_t n, size_t *cap, size_t size)
{
    if (n < *cap) return v;
    size_t nc = *cap ? *cap * 2 : 8;
    void *nv = alloc(T, nc * size);
    if (n) memcpy(nv, v, n * size);
    *cap = nc;
    return nv;
}

/* A Cedar string literal body: quotes and backslashes escaped, controls as \u{..}. */
char *dw_tcheck_esc(tc *T, dw_str s)
{
    char *o = alloc(T, s.len * DW_CEDAR_ESCAPE_MAX + 1);
    o[dw_cedar_escape_mem(o, s.s, s.len)] = 0;
    return o;
}

const char *dw_tcheck_pred_text(tc *T, const dw_tnode *p)
{
    return fmt(T, "%.*s::\"%s\"::%.*s", PS(p->type), dw_tcheck_esc(T, p->str), PS(p->ekind));
}

/* ------------------------------------------------------------------ diagnostics */

void dw_tcheck_report(tc *T, dw_loc loc, const char *hint, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *body = vfmt(T, f, ap);
    va_end(ap);
    char *msg = fmt(T, "for policy `%s`, %s", T->pid, body);
    for (size_t i = 0; i < T->dn; i++)
        if (T->dv[i].loc.off == loc.off && T->dv[i].loc.end == loc.end && strcmp(T->dv[i].msg, msg) == 0) return;
    T->dv = dw_tcheck_grow(T, T->dv, T->dn, &T->dcap, sizeof *T->dv);
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

size_t dw_tcheck_flush(tc *T, dw_diags *diags)
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
    if (!T->deep) dw_tcheck_report(T, n->loc, "simplify the temporal body", "temporal body nested too deeply to check");
    T->deep = true;
    return true;
}

/* ------------------------------------------------------------------ policies and leaves */

const char *dw_tcheck_policy_id(tc *T, const dw_policy *p, size_t idx)
{
    for (size_t i = 0; i < p->nannots; i++)
        if (dw_str_is(p->annots[i].key, "id") && p->annots[i].has_value) return fmt(T, "%.*s", PS(p->annots[i].value));
    return fmt(T, "policy%zu", idx);
}

/* Every DW_E_TEMPORAL leaf of a Cedar expression, left to right.  Cedar
 * expressions are at most DW_MAX_EXPR_DEPTH deep (the parser's limit). */
void dw_tcheck_each_leaf(tc *T, const dw_expr *e, leaf_fn fn, int d)
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
    for (size_t i = 0; (k = dw_expr_kid_c(e, i)); i++) dw_tcheck_each_leaf(T, k, fn, d + 1);
}

/* Flatten a (possibly parenthesised) `&&` chain left to right.  The parser
 * builds left-deep trees, so the left spine is walked iteratively; right
 * operands that are chains themselves come from parentheses (bounded). */

static void flatten(tc *T, const dw_tnode *n, tvec *out, int d)
{
    size_t start = out->n;
    while (n && n->kind == DW_T_AND) {
        out->v = dw_tcheck_grow(T, out->v, out->n, &out->cap, sizeof *out->v);
        out->v[out->n++] = n->kids[1];
        n = n->kids[0];
    }
    if (n) {
        out->v = dw_tcheck_grow(T, out->v, out->n, &out->cap, sizeof *out->v);
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

tvec dw_tcheck_conjuncts(tc *T, const dw_tnode *n, int d)
{
    tvec v = { 0 };
    flatten(T, n, &v, d);
    return v;
}

/* ------------------------------------------------------------------ scope */

void dw_tcheck_push(tc *T, const dw_tbinder *b)
{
    T->sc = dw_tcheck_grow(T, T->sc, T->nsc, &T->capsc, sizeof *T->sc);
    T->sc[T->nsc++] = (bnd){ b->slot.name, b };
}

long dw_tcheck_lookup(const tc *T, dw_str name)
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
    T->bad = dw_tcheck_grow(T, T->bad, T->nbad, &T->capbad, sizeof *T->bad);
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
    if (dw_tcheck_lookup(T, name) >= 0) return;
    for (size_t i = 0; i < T->nfreed; i++) if (dw_str_eq(T->freed[i], name)) return;
    T->freed = dw_tcheck_grow(T, T->freed, T->nfreed, &T->capfreed, sizeof *T->freed);
    T->freed[T->nfreed++] = name;
    dw_tcheck_report(T, loc, fmt(T, "use `_` or `*` for \"any value\", or bind it: `exists (%.*s: T). …` or a `for` list", PS(name)),
           "variable `%.*s` is free in this temporal condition", PS(name));
}

static void neg_window(tc *T, const dw_twindow *w)
{
    if (w->secs < 0 && !w->param.s)
        dw_tcheck_report(T, w->loc, "a negative window can never contain an event; `within 0s` covers the current timestamp only",
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
            dw_tcheck_report(T, t->loc, "compare it, or bind it: `exists (n: Long). ((count …) == n && …)`",
                   "an aggregate may only be used as an operand of a comparison");
        const dw_tnode *body = t->kids[0];
        for (size_t i = 0; i < t->nbinders; i++) {
            const dw_tbinder *b = &t->binders[i];
            if (!occurs(body, b->slot.name, 0)) {
                dw_tcheck_report(T, b->slot.loc, "drop the binder, or use the variable in a predicate field pattern or `tp(…)` of the body",
                       "`for` variable `%.*s` does not occur in the `where` body", PS(b->slot.name));
                mark_bad(T, b);
            } else if (!restricts(body, b->slot.name, 0)) {
                dw_tcheck_report(T, b->slot.loc, "bind it in a positive predicate field pattern (`P{ f: x }`), with `tp(x)` or with `… == x`, not only under `!`",
                       "`for` variable `%.*s` is not range-restricted in the `where` body", PS(b->slot.name));
                mark_bad(T, b);
            }
        }
        if (t->kind == DW_T_SUM && !binds_name(t, t->slot.name))
            dw_tcheck_report(T, t->slot.loc, fmt(T, "list it in the `for` binders: `sum %.*s for (%.*s: Long), …`", PS(t->slot.name), PS(t->slot.name)),
                   "summed variable `%.*s` must be one of this aggregate's `for` binders", PS(t->slot.name));
        size_t mark = T->nsc;
        for (size_t i = 0; i < t->nbinders; i++) dw_tcheck_push(T, &t->binders[i]);
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
        tvec v = dw_tcheck_conjuncts(T, n, d);
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
            dw_tcheck_report(T, b->slot.loc,
                   fmt(T, "bind `%.*s` in a positive atom of the body: a predicate field pattern (`P{ f: %.*s }`), `tp(%.*s)` or `(…) == %.*s`; nothing under `!` binds",
                       PS(b->slot.name), PS(b->slot.name), PS(b->slot.name), PS(b->slot.name)),
                   "variable `%.*s` of `exists` is not range-restricted in its body", PS(b->slot.name));
            mark_bad(T, b);
        }
        size_t mark = T->nsc;
        dw_tcheck_push(T, b);
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
    long i = dw_tcheck_lookup(T, name);
    if (i < 0 || is_bad(T, T->sc[i].b) || has(A, name)) return;   /* free / unrestricted: reported already */
    if (w == WHY_SINCE)
        dw_tcheck_report(T, loc, fmt(T, "only the anchor (right operand) of `since` binds: bind `%.*s` there or to the left of the `since`", PS(name)),
               "variable `%.*s` in the left operand of `since` is not bound by its anchor or earlier", PS(name));
    else if (w == WHY_AGG)
        dw_tcheck_report(T, loc, fmt(T, "an aggregate may read an outer variable only after it is bound: move the conjunct that binds `%.*s` to the left", PS(name)),
               "variable `%.*s` is used before it is bound", PS(name));
    else
        dw_tcheck_report(T, loc, fmt(T, "a filter (a comparison that binds nothing, or a negation) may only use variables bound to its left: move the conjunct that binds `%.*s` before it", PS(name)),
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
            for (size_t i = 0; i < n->nbinders; i++) dw_tcheck_push(T, &n->binders[i]);
            if (n->kind == DW_T_SUM) {
                long i = dw_tcheck_lookup(T, n->slot.name);
                if (i >= 0 && (size_t)i < base) { *acc = add(T, *acc, n->slot.name); consume_var(T, n->slot.name, n->slot.loc, A, w); }
            }
            fv_walk(T, n->kids[0], base, A, acc, w, d + 1);
            T->nsc = mark;
            return;
        }
        default: break;
        }
        if (use.s) {
            long i = dw_tcheck_lookup(T, use);
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
        for (size_t i = 0; i < t->nbinders; i++) { dw_tcheck_push(T, &t->binders[i]); in = without(T, in, t->binders[i].slot.name); }
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
        tvec v = dw_tcheck_conjuncts(T, n, d);
        for (size_t i = 0; i < v.n; i++) A = pc(T, v.v[i], A, d + 1);
        return A;
    }
    case DW_T_PRED:
        for (size_t i = 0; i < n->nfields; i++) {
            const dw_tnode *t = n->fields[i].term;
            if (t && t->kind == DW_T_VAR && dw_tcheck_lookup(T, t->name) >= 0) A = add(T, A, t->name);
        }
        return A;
    case DW_T_TP:
        return dw_tcheck_lookup(T, n->slot.name) >= 0 ? add(T, A, n->slot.name) : A;
    case DW_T_CMP: {
        const dw_tnode *l = n->kids[0], *r = n->kids[1];
        if (n->op == DW_TC_EQ && l && r) {
            if (l->kind == DW_T_VAR && !has(A, l->name) && binding_side(r)) {
                consume_term(T, r, A, d + 1);
                return dw_tcheck_lookup(T, l->name) >= 0 ? add(T, A, l->name) : A;
            }
            if (r->kind == DW_T_VAR && !has(A, r->name) && binding_side(l)) {
                consume_term(T, l, A, d + 1);
                return dw_tcheck_lookup(T, r->name) >= 0 ? add(T, A, r->name) : A;
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
        dw_tcheck_push(T, &n->binders[0]);
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
            T->pid = dw_tcheck_policy_id(T, p, i);
            for (size_t c = 0; c < p->nclauses; c++) dw_tcheck_each_leaf(T, p->clauses[c].body, structure_leaf, 0);
            nerr += dw_tcheck_flush(T, diags);
        }
    }
    dw_arena_free(&T->a);
    free(T);
    return nerr;
}
