/* teval.c - the general (reference) evaluator of temporal leaves (dogwood.md §8).
 *
 * rel(i, ρ, φ) is computed as a set of rows.  A row holds only the bindings
 * φ adds to ρ (a slot mask plus values), so rows of a formula never bind a
 * slot bound in ρ and the unions of §8.5 never conflict.  Row multiplicity is
 * unobservable (every consumer tests emptiness, deduplicates or projects and
 * deduplicates), so row sets are kept duplicate-free.
 *
 * ρ itself is one mutable environment (mask + values per slot): binding sets
 * a slot that is unbound, leaving restores the mask; only `exists` and
 * aggregates unbind slots and they save and restore the values they hide.
 *
 * holds() is §8.6's boolean mode: it is used whenever a formula's rows bind
 * nothing the consumer reads (per the masks of dw_teval_masks), and is
 * exactly "rel() is non-empty" for every formula, well-formed or not. */
#include "teval.h"
#include "../stdlib/bytes.h"
#include "tjoin.h"
#include "tmask.h"
#include <string.h>

typedef struct dw_trow {
    uint64_t mask;
    dw_value v[];               /* indexed by slot; sized up to the highest bit of the mask at creation */
} dw_trow;

typedef struct dw_trows { dw_trow **r; uint32_t n, cap; } dw_trows;

/* Per formula: the join index of a `formerly` over a predicate (vm/tjoin.h). */
typedef struct dw_tjslot {
    dw_tjoin *x;
    dw_value *probe;            /* the resolved key of a question */
    uint8_t asked;              /* questions answered by scanning so far */
} dw_tjslot;

typedef struct dw_tstate {
    dw_teval_ctx *cx;
    const dw_temporal_tables *t;
    uint32_t nvars;
    uint64_t emask;             /* ρ: bound slots */
    dw_value *env;              /* ρ: values (meaningful only under emask) */
    const uint64_t *masks;      /* precomputed, or NULL for lazy */
    uint64_t *lmasks;           /* lazy: [2f] binds, [2f+1] mentions */
    uint8_t *lstate;            /* lazy: 0 unknown, 1 in progress, 2 done */
    uint32_t depth;
    dw_tjslot *joins;           /* per formula, allocated on the first indexable question */
    int8_t monotone;            /* view timestamps non-decreasing: 0 unknown, 1 yes, -1 no */
    bool nojoin;                /* an index could not be allocated: scan from now on */
} dw_tstate;

static int rel_f(dw_tstate *s, uint32_t fi, uint32_t i, dw_trows *out);
static int holds_f(dw_tstate *s, uint32_t fi, uint32_t i, bool *h);
static int resolve(dw_tstate *s, uint32_t ti, uint32_t i, bool *ok, dw_value *out);

/* ---------------------------------------------------------------- values */

static int kind_rank(uint8_t k) { return k == DW_V_SET ? DW_V_ARRAY : k; }

int dw_tval_cmp(const dw_value *a, const dw_value *b)
{
    int ka = kind_rank(a->kind), kb = kind_rank(b->kind);
    if (ka != kb) return ka < kb ? -1 : 1;
    if (ka == DW_V_NULL) return 0;
    if (ka == DW_V_ARRAY) {
        if (a->n != b->n) return a->n < b->n ? -1 : 1;
        for (uint32_t k = 0; k < a->n; k++) {
            int c = dw_tval_cmp(&a->u.elems[k], &b->u.elems[k]);
            if (c) return c;
        }
        return 0;
    }
    if (ka == DW_V_RECORD) {    /* fields are sorted by key (value.h) */
        if (a->n != b->n) return a->n < b->n ? -1 : 1;
        for (uint32_t k = 0; k < a->n; k++) {
            const dw_field *f = &a->u.fields[k], *g = &b->u.fields[k];
            int c = dw_bytes_cmp(f->key, f->klen, g->key, g->klen);
            if (!c) c = dw_tval_cmp(&f->v, &g->v);
            if (c) return c;
        }
        return 0;
    }
    if (ka > DW_V_NULL) return 0;   /* no such kind: not ours to order */
    return dw_value_cmp(a, b);  /* scalars; DECIMAL is fixed-point, so numeric */
}


/* ---------------------------------------------------------------- state */

static int fail(dw_tstate *s, int err)
{
    if (!s->cx->err) s->cx->err = err;
    return -1;
}

static int charge(dw_tstate *s)
{
    if (s->cx->budget == 0) return fail(s, DW_TEVAL_EBUDGET);
    s->cx->budget--;
    return 0;
}

static int masks_of(dw_tstate *s, uint32_t fi, uint64_t *bind, uint64_t *men)
{
    if (fi >= s->t->ntfs) return fail(s, DW_TEVAL_EMALFORMED);
    if (s->masks) {
        *bind = s->masks[2 * (size_t)fi];
        *men = s->masks[2 * (size_t)fi + 1];
        return 0;
    }
    if (dw_tmask_formula(s->t, s->lmasks, s->lstate, fi, bind, men)) return fail(s, DW_TEVAL_EMALFORMED);
    return 0;
}

static int str_of(dw_tstate *s, uint32_t k, dw_str *out)
{
    if (k >= s->cx->nstrs) return fail(s, DW_TEVAL_EMALFORMED);
    *out = s->cx->strs[k];
    return 0;
}

static int slot_ok(dw_tstate *s, uint32_t slot)
{
    return slot < s->nvars ? 0 : fail(s, DW_TEVAL_EMALFORMED);
}

static bool bound(const dw_tstate *s, uint32_t slot) { return (s->emask >> slot) & 1; }

static void bind(dw_tstate *s, uint32_t slot, const dw_value *v)
{
    s->env[slot] = *v;
    s->emask |= (uint64_t)1 << slot;
}

static const dw_event *event(const dw_tstate *s, uint32_t j) { return s->cx->h->ev[j]; }

/* W seconds in ticks, saturating; -1 for a negative window (it holds nothing, Q8). */
static int64_t window_ticks(const dw_tstate *s, int64_t w)
{
    int64_t tps = s->cx->h->ticks_per_second, r;
    if (w < 0) return -1;
    return __builtin_mul_overflow(w, tps, &r) ? INT64_MAX : r;
}

/* §8.3: 0 <= ts(i) - ts(j) <= W, the subtraction saturating. */
static bool in_window(const dw_tstate *s, uint32_t i, uint32_t j, int64_t wt)
{
    int64_t a = event(s, i)->ts, b = event(s, j)->ts, d;
    if (__builtin_sub_overflow(a, b, &d)) d = a < b ? INT64_MIN : INT64_MAX;
    return d >= 0 && d <= wt;
}

/* ---------------------------------------------------------------- rows */

static dw_trow *row_new(dw_tstate *s, uint64_t mask)
{
    size_t nv = mask ? 64 - (size_t)__builtin_clzll(mask) : 0;
    dw_trow *r = dw_arena_alloc_raw(s->cx->scratch, sizeof *r + nv * sizeof(dw_value));
    if (!r) { fail(s, DW_TEVAL_ENOMEM); return NULL; }
    r->mask = mask;
    return r;
}

static int rows_push(dw_tstate *s, dw_trows *rs, dw_trow *r)
{
    if (!r || charge(s)) return -1;
    if (rs->n == rs->cap) {
        uint32_t cap = rs->cap ? rs->cap * 2 : 4;
        if (cap < rs->cap) return fail(s, DW_TEVAL_ENOMEM);
        dw_trow **p = dw_arena_alloc_raw(s->cx->scratch, (size_t)cap * sizeof *p);
        if (!p) return fail(s, DW_TEVAL_ENOMEM);
        if (rs->n) memcpy(p, rs->r, (size_t)rs->n * sizeof *p);
        rs->r = p;
        rs->cap = cap;
    }
    rs->r[rs->n++] = r;
    return 0;
}

/* The row of the slots bound in ρ but not under `before` (a predicate's or a
 * binder's new bindings). */
static int push_env_row(dw_tstate *s, dw_trows *rs, uint64_t before)
{
    uint64_t m = s->emask & ~before;
    dw_trow *r = row_new(s, m);
    if (!r) return -1;
    for (uint64_t b = m; b; b &= b - 1) {
        int k = __builtin_ctzll(b);
        r->v[k] = s->env[k];
    }
    return rows_push(s, rs, r);
}

static int push_empty(dw_tstate *s, dw_trows *rs) { return rows_push(s, rs, row_new(s, 0)); }

/* ρ ∪ r.  Rows never rebind a slot of ρ (see the top), so restoring the
 * mask afterwards restores ρ. */
static void env_extend(dw_tstate *s, const dw_trow *r)
{
    for (uint64_t b = r->mask & ~s->emask; b; b &= b - 1) {
        int k = __builtin_ctzll(b);
        bind(s, (uint32_t)k, &r->v[k]);
    }
}

static int row_cmp(const dw_trow *a, const dw_trow *b)
{
    if (a->mask != b->mask) return a->mask < b->mask ? -1 : 1;
    for (uint64_t m = a->mask; m; m &= m - 1) {
        int k = __builtin_ctzll(m);
        int c = dw_tval_cmp(&a->v[k], &b->v[k]);
        if (c) return c;
    }
    return 0;
}

/* Sort (bottom-up merge, scratch buffer: no qsort, which may malloc) and drop
 * duplicate rows. */
static int rows_dedup(dw_tstate *s, dw_trows *rs)
{
    uint32_t n = rs->n;
    if (n < 2) return 0;
    dw_trow **a = rs->r, **b = dw_arena_alloc_raw(s->cx->scratch, (size_t)n * sizeof *b);
    if (!b) return fail(s, DW_TEVAL_ENOMEM);
    for (uint32_t w = 1; w < n; w = w > n / 2 ? n : 2 * w) {
        if (s->cx->budget < n) { s->cx->budget = 0; return fail(s, DW_TEVAL_EBUDGET); }
        s->cx->budget -= n;     /* a merge pass is n steps of work */
        for (uint32_t lo = 0; lo < n; lo += 2 * w) {
            uint32_t mid = lo + w < n ? lo + w : n, hi = mid + w < n ? mid + w : n;
            uint32_t x = lo, y = mid, o = lo;
            while (x < mid && y < hi) b[o++] = row_cmp(a[y], a[x]) < 0 ? a[y++] : a[x++];
            while (x < mid) b[o++] = a[x++];
            while (y < hi) b[o++] = a[y++];
        }
        dw_trow **tmp = a; a = b; b = tmp;
    }
    uint32_t k = 1;
    for (uint32_t r = 1; r < n; r++)
        if (row_cmp(a[k - 1], a[r]) != 0) a[k++] = a[r];
    if (a != rs->r) rs->cap = n;   /* the result may sit in the n-slot buffer */
    rs->r = a;
    rs->n = k;
    return 0;
}

static int rows_append(dw_tstate *s, dw_trows *dst, const dw_trows *src)
{
    for (uint32_t k = 0; k < src->n; k++)
        if (rows_push(s, dst, src->r[k])) return -1;
    return 0;
}

/* ---------------------------------------------------------------- terms (§8.2) */

/* ρ0["@principal.path"] / ["@resource.path"] (§8.1). */
static void resolve_scope(const dw_value *uid, const dw_value *attrs, dw_str p, bool *ok, dw_value *out)
{
    *ok = false;
    if (p.len == 0) {
        if (uid->kind == DW_V_ENTITY) { *out = *uid; *ok = true; }
        return;
    }
    const dw_value *v = attrs->kind == DW_V_RECORD ? dw_record_path(attrs, p.s, p.len) : NULL;
    if (v) { *out = *v; *ok = true; return; }
    /* id and type come from the uid unless an attribute of that name exists */
    if (uid->kind != DW_V_ENTITY) return;
    const dw_uid *u = uid->u.uid;
    if (p.len == 2 && memcmp(p.s, "id", 2) == 0) {
        out->kind = DW_V_STRING; out->n = u->idlen; out->u.s = u->id; *ok = true;
    } else if (p.len == 4 && memcmp(p.s, "type", 4) == 0) {
        out->kind = DW_V_STRING; out->n = u->tlen; out->u.s = u->type; *ok = true;
    }
}

/* §8.7: the aggregate's Long value at i under ρ. */
/* dwc explain's view of an aggregate: its rows and value (dw_teval_observer) */
static int observe(dw_tstate *s, uint32_t agg, uint32_t i, const dw_trows *rows, const dw_value *value)
{
    const dw_value **v = dw_arena_alloc_raw(s->cx->scratch, (rows->n + 1) * sizeof *v);
    uint64_t *m = dw_arena_alloc_raw(s->cx->scratch, (rows->n + 1) * sizeof *m);
    if (!v || !m) return fail(s, DW_TEVAL_ENOMEM);
    for (uint32_t k = 0; k < rows->n; k++) { v[k] = rows->r[k]->v; m[k] = rows->r[k]->mask; }
    s->cx->obs->aggregate(s->cx->obs->ctx, agg, i, rows->n, v, m, value);
    return 0;
}

static int aggregate(dw_tstate *s, const dw_tterm *tt, uint32_t i, dw_value *out)
{
    const dw_temporal_tables *t = s->t;
    if (tt->a >= t->ntaggs) return fail(s, DW_TEVAL_EMALFORMED);
    const dw_tagg *g = &t->taggs[tt->a];
    bool is_sum = tt->kind == DW_TT_SUM;
    if (g->nvars > t->naggvars || g->first_var > t->naggvars - g->nvars) return fail(s, DW_TEVAL_EMALFORMED);
    uint64_t fmask = 0;
    for (uint32_t k = 0; k < g->nvars; k++) {
        uint16_t v = t->aggvars[g->first_var + k];
        if (slot_ok(s, v)) return -1;
        fmask |= (uint64_t)1 << v;
    }
    if (is_sum && slot_ok(s, g->sum_var)) return -1;

    /* 1. ρ' = ρ minus the `for` names (they shadow; the rest flows in) */
    uint64_t saved_mask = s->emask;
    dw_value *saved = dw_arena_alloc_raw(s->cx->scratch, (size_t)s->nvars * sizeof *saved);
    if (!saved) return fail(s, DW_TEVAL_ENOMEM);
    memcpy(saved, s->env, (size_t)s->nvars * sizeof *saved);
    s->emask &= ~fmask;
    /* 2. rows, projected onto the `for` tuple and deduplicated */
    dw_trows rows = { 0 };
    int rc = rel_f(s, g->body, i, &rows);
    s->emask = saved_mask;
    memcpy(s->env, saved, (size_t)s->nvars * sizeof *saved);
    if (rc) return -1;
    for (uint32_t k = 0; k < rows.n; k++) rows.r[k]->mask &= fmask;   /* rows are ours alone */
    if (rows_dedup(s, &rows)) return -1;
    /* 3. count, or the exact sum of the Long `v`s clamped once (Q12) */
    if (!is_sum) *out = dw_long(rows.n);
    else {
        __int128 acc = 0;
        for (uint32_t k = 0; k < rows.n; k++) {
            const dw_trow *r = rows.r[k];
            if ((r->mask >> g->sum_var) & 1 && r->v[g->sum_var].kind == DW_V_LONG) acc += r->v[g->sum_var].u.i;
        }
        *out = dw_long(acc > INT64_MAX ? INT64_MAX : acc < INT64_MIN ? INT64_MIN : (int64_t)acc);
    }
    return s->cx->obs ? observe(s, tt->a, i, &rows, out) : 0;
}

/* R(t) at timepoint i (aggregates are evaluated there) under ρ. */
static int resolve(dw_tstate *s, uint32_t ti, uint32_t i, bool *ok, dw_value *out)
{
    const dw_temporal_tables *t = s->t;
    const dw_tanchor *an = s->cx->anchor;
    *ok = false;
    if (ti >= t->ntterms) return fail(s, DW_TEVAL_EMALFORMED);
    if (++s->depth > DW_TEVAL_MAX_DEPTH) return fail(s, DW_TEVAL_EDEPTH);
    const dw_tterm *tt = &t->tterms[ti];
    dw_str p;
    int rc = 0;
    switch ((dw_tt_kind)tt->kind) {
    case DW_TT_CONST:
        if (tt->a >= s->cx->nconsts) return fail(s, DW_TEVAL_EMALFORMED);
        *out = s->cx->consts[tt->a];
        *ok = true;
        break;
    case DW_TT_VAR:
        if (slot_ok(s, tt->a)) return -1;
        if (bound(s, tt->a)) { *out = s->env[tt->a]; *ok = true; }
        break;
    case DW_TT_CONTEXT: {
        if (str_of(s, tt->a, &p)) return -1;
        const dw_value *v = an->context.kind == DW_V_RECORD ? dw_record_path(&an->context, p.s, p.len) : NULL;
        if (v) { *out = *v; *ok = true; }
        break;
    }
    case DW_TT_PRINCIPAL:
        if (str_of(s, tt->a, &p)) return -1;
        resolve_scope(&an->principal, &an->principal_attrs, p, ok, out);
        break;
    case DW_TT_RESOURCE:
        if (str_of(s, tt->a, &p)) return -1;
        resolve_scope(&an->resource, &an->resource_attrs, p, ok, out);
        break;
    case DW_TT_WILD:
        break;
    case DW_TT_ARRAY: {
        if (tt->n > t->ntargs || tt->a > t->ntargs - tt->n) return fail(s, DW_TEVAL_EMALFORMED);
        dw_value *el = dw_arena_alloc_raw(s->cx->scratch, (size_t)tt->n * sizeof *el);
        if (!el) return fail(s, DW_TEVAL_ENOMEM);
        bool all = true;
        for (uint32_t k = 0; k < tt->n && all; k++)
            if (resolve(s, t->targs[tt->a + k], i, &all, &el[k])) return -1;
        if (all) {
            out->kind = DW_V_ARRAY;
            out->n = tt->n;
            out->u.elems = el;
            *ok = true;
        }
        break;
    }
    case DW_TT_COUNT: case DW_TT_SUM:
        rc = aggregate(s, tt, i, out);
        *ok = rc == 0;
        break;
    default:
        return fail(s, DW_TEVAL_EMALFORMED);
    }
    s->depth--;
    return rc;
}

/* ---------------------------------------------------------------- predicates (§8.4) */

/* match(j, ρ, P).  On success the new bindings are left bound in ρ: the
 * caller reads them off and restores the mask it saved. */
static int match(dw_tstate *s, const dw_tf *f, uint32_t j, bool *ok)
{
    const dw_temporal_tables *t = s->t;
    const dw_event *e = event(s, j);
    dw_str ty, id, kind;
    *ok = false;
    if (str_of(s, f->type_str, &ty) || str_of(s, f->id_str, &id) || str_of(s, f->kind_str, &kind)) return -1;
    /* 1. identity */
    if (!dw_str_eq(e->atype, ty) || !dw_str_eq(e->aid, id) || !dw_str_eq(e->kind, kind)) return 0;
    if (f->n > t->ntpatterns || f->first > t->ntpatterns - f->n) return fail(s, DW_TEVAL_EMALFORMED);
    /* 2. each field pattern, in order */
    for (uint32_t k = 0; k < f->n; k++) {
        const dw_tpattern *fp = &t->tpatterns[f->first + k];
        dw_str path;
        if (str_of(s, fp->path_str, &path)) return -1;
        if (fp->term >= t->ntterms) return fail(s, DW_TEVAL_EMALFORMED);
        const dw_value *v = dw_record_path(&e->logged, path.s, path.len);
        if (!v) return 0;       /* absent fails, even for a wildcard */
        const dw_tterm *tt = &t->tterms[fp->term];
        if (tt->kind == DW_TT_WILD) continue;
        if (tt->kind == DW_TT_VAR) {
            if (slot_ok(s, tt->a)) return -1;
            if (!bound(s, tt->a)) { bind(s, tt->a, v); continue; }
            if (!dw_tval_eq(&s->env[tt->a], v)) return 0;
            continue;
        }
        bool res;
        dw_value r;
        if (resolve(s, fp->term, j, &res, &r)) return -1;
        if (!res || !dw_tval_eq(&r, v)) return 0;
    }
    *ok = true;
    return 0;
}

/* ---------------------------------------------------------------- comparisons */

/* §8.5/§8.6 on `a op b`: either a binding equality (*bslot < nvars, *bval
 * the value) or a filter with truth *truth. */
static int compare(dw_tstate *s, const dw_tf *f, uint32_t i, uint32_t *bslot, dw_value *bval, bool *truth)
{
    const dw_temporal_tables *t = s->t;
    *bslot = UINT32_MAX;
    *truth = false;
    if (f->a >= t->ntterms || f->b >= t->ntterms) return fail(s, DW_TEVAL_EMALFORMED);
    const dw_tterm *ta = &t->tterms[f->a], *tb = &t->tterms[f->b];
    if ((ta->kind == DW_TT_VAR && slot_ok(s, ta->a)) || (tb->kind == DW_TT_VAR && slot_ok(s, tb->a))) return -1;
    bool ua = ta->kind == DW_TT_VAR && !bound(s, ta->a);
    bool ub = tb->kind == DW_TT_VAR && !bound(s, tb->a);
    dw_value va, vb;
    bool ra, rb;
    if (f->op == DW_TC_OP_EQ && ua != ub) {
        /* exactly one side is an unbound variable: bind it if the other resolves */
        if (resolve(s, ua ? f->b : f->a, i, &ra, &va)) return -1;
        if (ra) { *bslot = ua ? ta->a : tb->a; *bval = va; }
        return 0;               /* otherwise a filter on an unresolved side: false */
    }
    if (resolve(s, f->a, i, &ra, &va)) return -1;
    if (!ra) return 0;          /* unresolved -> false */
    if (resolve(s, f->b, i, &rb, &vb)) return -1;
    if (!rb) return 0;
    switch ((dw_tcmp_op)f->op) {
    case DW_TC_OP_EQ: *truth = dw_tval_eq(&va, &vb); return 0;
    case DW_TC_OP_NE: *truth = !dw_tval_eq(&va, &vb); return 0;   /* Q2 */
    default: break;
    }
    if (va.kind != DW_V_LONG || vb.kind != DW_V_LONG) return 0;   /* only Longs are ordered */
    int64_t x = va.u.i, y = vb.u.i;
    switch ((dw_tcmp_op)f->op) {
    case DW_TC_OP_LT: *truth = x < y; break;
    case DW_TC_OP_LE: *truth = x <= y; break;
    case DW_TC_OP_GT: *truth = x > y; break;
    case DW_TC_OP_GE: *truth = x >= y; break;
    default: return fail(s, DW_TEVAL_EMALFORMED);
    }
    return 0;
}

/* ---------------------------------------------------------------- since */

/* The smallest j <= i in the window of i, or UINT32_MAX if none. */
static int window_low(dw_tstate *s, uint32_t i, int64_t wt, uint32_t *lo)
{
    *lo = UINT32_MAX;
    for (uint32_t j = 0; j <= i; j++) {
        if (charge(s)) return -1;
        if (in_window(s, i, j, wt)) { *lo = j; break; }
    }
    return 0;
}

static int through_joined(dw_tstate *s, uint32_t l, uint32_t j, uint32_t i, bool *h);

/* L holds at every k in (j, i] under the current ρ. */
static int holds_through(dw_tstate *s, uint32_t l, uint32_t j, uint32_t i, bool *h)
{
    int r = through_joined(s, l, j, i, h);
    if (r) return r < 0 ? -1 : 0;
    *h = true;
    for (uint32_t k = i; k > j && *h; k--)
        if (holds_f(s, l, k, h)) return -1;
    return 0;
}

/* `L since within W R` (§8.5), collecting anchor rows into out, or, when out
 * is NULL, stopping at the first one (boolean mode, *h). */
static int since(dw_tstate *s, const dw_tf *f, uint32_t i, dw_trows *out, bool *h)
{
    int64_t wt = window_ticks(s, f->window);
    uint64_t bl, ml, br, mr;
    *h = false;
    if (masks_of(s, f->a, &bl, &ml) || masks_of(s, f->b, &br, &mr)) return -1;
    uint32_t lo;
    if (window_low(s, i, wt, &lo)) return -1;
    if (lo == UINT32_MAX) return 0;
    if (!(br & ml)) {
        /* L does not read what R binds: its truth at k is the same for every
         * anchor, so walk back from i while L keeps holding. */
        for (uint32_t j = i;; j--) {
            if (charge(s)) return -1;
            if (in_window(s, i, j, wt)) {
                if (!out) {
                    if (holds_f(s, f->b, j, h)) return -1;
                    if (*h) return 0;
                } else {
                    dw_trows rr = { 0 };
                    if (rel_f(s, f->b, j, &rr) || rows_append(s, out, &rr)) return -1;
                }
            }
            if (j == lo) break;
            bool lh;
            if (holds_f(s, f->a, j, &lh)) return -1;
            if (!lh) break;
        }
    } else {
        /* L reads the anchor's bindings: check it per anchor row. */
        for (uint32_t j = i + 1; j-- > lo;) {
            if (charge(s)) return -1;
            if (!in_window(s, i, j, wt)) continue;
            dw_trows rr = { 0 };
            if (rel_f(s, f->b, j, &rr)) return -1;
            for (uint32_t k = 0; k < rr.n; k++) {
                uint64_t saved = s->emask;
                bool lh;
                env_extend(s, rr.r[k]);
                int rc = holds_through(s, f->a, j, i, &lh);
                s->emask = saved;
                if (rc) return -1;
                if (!lh) continue;
                if (!out) { *h = true; return 0; }
                if (rows_push(s, out, rr.r[k])) return -1;
            }
        }
    }
    if (out) {
        if (rows_dedup(s, out)) return -1;
        *h = out->n > 0;
    }
    return 0;
}

/* ---------------------------------------------------------------- joins (vm/tjoin.h) */

/* Questions a `formerly` answers by scanning before it is indexed: an index
 * costs O(n log n), a formula asked once or twice is cheaper to scan. */
#define DW_TEVAL_JOIN_AFTER 2

/* R(t) depends on ρ only (not on the timepoint) and can neither fail nor
 * bind: constants, variables, anchored terms and arrays of these.  Checked
 * without fail(): the index must meet no error the scan would not meet. */
static bool term_plain(const dw_tstate *s, uint32_t ti, uint32_t depth)
{
    const dw_temporal_tables *t = s->t;
    if (ti >= t->ntterms || depth > 64) return false;
    const dw_tterm *tt = &t->tterms[ti];
    switch ((dw_tt_kind)tt->kind) {
    case DW_TT_CONST: return tt->a < s->cx->nconsts;
    case DW_TT_VAR: return tt->a < s->nvars;
    case DW_TT_CONTEXT: case DW_TT_PRINCIPAL: case DW_TT_RESOURCE: return tt->a < s->cx->nstrs;
    case DW_TT_ARRAY:
        if (tt->n > t->ntargs || tt->a > t->ntargs - tt->n) return false;
        for (uint32_t k = 0; k < tt->n; k++)
            if (!term_plain(s, t->targs[tt->a + k], depth + 1)) return false;
        return true;
    default:
        return false;
    }
}

/* Under the current ρ, p binds nothing and match(j, ρ, p) depends only on
 * j's identity and the values at p's paths: a filter an index can answer. */
static bool pred_is_filter(const dw_tstate *s, const dw_tf *p)
{
    const dw_temporal_tables *t = s->t;
    uint32_t ns = s->cx->nstrs;
    if (p->kind != DW_TF_PRED || p->type_str >= ns || p->id_str >= ns || p->kind_str >= ns) return false;
    if (p->n > t->ntpatterns || p->first > t->ntpatterns - p->n) return false;
    if (s->depth + 66 > DW_TEVAL_MAX_DEPTH) return false;   /* resolve() nests with the term */
    for (uint32_t k = 0; k < p->n; k++) {
        const dw_tpattern *fp = &t->tpatterns[p->first + k];
        if (fp->path_str >= ns || fp->term >= t->ntterms) return false;
        const dw_tterm *tt = &t->tterms[fp->term];
        if (tt->kind == DW_TT_WILD) continue;
        if (tt->kind == DW_TT_VAR && (tt->a >= s->nvars || !bound(s, tt->a))) return false;
        if (!term_plain(s, fp->term, 0)) return false;
    }
    return true;
}

/* The latest j <= i at which predicate formula pfi matches under ρ, from
 * its join index (UINT32_MAX: none): 1 answered, 0 not applicable (the
 * caller scans), -1 error. */
static int pred_latest(dw_tstate *s, uint32_t pfi, uint32_t i, uint32_t *pos)
{
    const dw_temporal_tables *t = s->t;
    if (s->nojoin || pfi >= t->ntfs || !pred_is_filter(s, &t->tfs[pfi])) return 0;
    const dw_tf *p = &t->tfs[pfi];
    if (!s->joins) {
        s->joins = dw_arena_alloc(s->cx->scratch, t->ntfs * sizeof *s->joins);
        if (!s->joins) { s->nojoin = true; return 0; }   /* no memory for indexes: scan */
    }
    dw_tjslot *js = &s->joins[pfi];
    if (!js->x) {
        if (js->asked < DW_TEVAL_JOIN_AFTER) { js->asked++; return 0; }
        int rc = dw_tjoin_build(t, s->cx->strs, s->cx->h, p, s->cx->scratch, &s->cx->budget, &js->x);
        if (rc == DW_TJOIN_EBUDGET) return fail(s, DW_TEVAL_EBUDGET);
        if (!rc) js->probe = dw_arena_alloc_raw(s->cx->scratch, (dw_tjoin_nkey(js->x) + 1) * sizeof *js->probe);
        if (rc || !js->probe) { js->x = NULL; s->nojoin = true; return 0; }   /* no memory: scan */
    }
    uint32_t c = 0;
    *pos = UINT32_MAX;
    for (uint32_t k = 0; k < p->n; k++) {
        const dw_tpattern *fp = &t->tpatterns[p->first + k];
        if (t->tterms[fp->term].kind == DW_TT_WILD) continue;
        bool ok;
        if (resolve(s, fp->term, i, &ok, &js->probe[c++])) return -1;
        if (!ok) return 1;      /* unresolved: p matches no event */
    }
    if (dw_tjoin_latest(js->x, js->probe, i, &s->cx->budget, pos)) return fail(s, DW_TEVAL_EBUDGET);
    return 1;
}

/* `formerly within W P` (f) at i: 1 answered (*h), 0 not applicable, -1
 * error.  With timestamps that never decrease, ts(i) - ts(j) is >= 0 for
 * j <= i and shrinks as j grows, so the latest matching j <= i is in the
 * window iff any matching j is. */
static int formerly_joined(dw_tstate *s, const dw_tf *f, uint32_t i, int64_t wt, bool *h)
{
    if (!s->monotone) {
        const dw_history_view *v = s->cx->h;
        s->monotone = 1;
        for (uint32_t j = 1; j < v->n && s->monotone > 0; j++) {
            if (charge(s)) return -1;
            if (v->ev[j]->ts < v->ev[j - 1]->ts) s->monotone = -1;
        }
    }
    uint32_t j;
    int r = s->monotone > 0 ? pred_latest(s, f->a, i, &j) : 0;
    if (r > 0) *h = j != UINT32_MAX && in_window(s, i, j, wt);
    return r;
}

/* `!Q` holds at every k in (j, i] iff Q's latest match <= i is <= j (or
 * none): 1 answered (*h), 0 not applicable, -1 error. */
static int through_joined(dw_tstate *s, uint32_t l, uint32_t j, uint32_t i, bool *h)
{
    if (l >= s->t->ntfs || s->t->tfs[l].kind != DW_TF_NOT) return 0;
    uint32_t q;
    int r = pred_latest(s, s->t->tfs[l].a, i, &q);
    if (r > 0) *h = q == UINT32_MAX || q <= j;
    return r;
}

/* ---------------------------------------------------------------- holds (§8.6) */

static int holds_kind(dw_tstate *s, const dw_tf *f, uint32_t i, bool *h)
{
    uint64_t ba, ma, bb, mb;
    *h = false;
    switch ((dw_tf_kind)f->kind) {
    case DW_TF_PRED: {
        uint64_t saved = s->emask;
        int rc = match(s, f, i, h);
        s->emask = saved;
        return rc;
    }
    case DW_TF_AND: {
        if (masks_of(s, f->a, &ba, &ma) || masks_of(s, f->b, &bb, &mb)) return -1;
        if (!(ba & mb)) {       /* B reads nothing A binds */
            if (holds_f(s, f->a, i, h)) return -1;
            return *h ? holds_f(s, f->b, i, h) : 0;
        }
        dw_trows ra = { 0 };
        if (rel_f(s, f->a, i, &ra)) return -1;
        for (uint32_t k = 0; k < ra.n && !*h; k++) {
            uint64_t saved = s->emask;
            env_extend(s, ra.r[k]);
            int rc = holds_f(s, f->b, i, h);
            s->emask = saved;
            if (rc) return -1;
        }
        return 0;
    }
    case DW_TF_NOT:
        if (holds_f(s, f->a, i, h)) return -1;
        *h = !*h;
        return 0;
    case DW_TF_FORMERLY: {
        int64_t wt = window_ticks(s, f->window);
        int jr = formerly_joined(s, f, i, wt, h);
        if (jr) return jr < 0 ? -1 : 0;
        for (uint32_t j = i + 1; j-- > 0 && !*h;) {
            if (charge(s)) return -1;
            if (in_window(s, i, j, wt) && holds_f(s, f->a, j, h)) return -1;
        }
        return 0;
    }
    case DW_TF_PREVIOUS:
        if (i > 0 && in_window(s, i, i - 1, window_ticks(s, f->window))) return holds_f(s, f->a, i - 1, h);
        return 0;
    case DW_TF_SINCE:
        return since(s, f, i, NULL, h);
    case DW_TF_EXISTS: {
        if (slot_ok(s, f->var)) return -1;
        uint64_t saved = s->emask;
        dw_value sv = s->env[f->var];
        s->emask &= ~((uint64_t)1 << f->var);   /* ρ ∖ {x} */
        int rc = holds_f(s, f->a, i, h);
        s->emask = saved;
        s->env[f->var] = sv;
        return rc;
    }
    case DW_TF_TP: {
        if (slot_ok(s, f->var)) return -1;
        dw_value ti = dw_long(i);
        *h = !bound(s, f->var) || dw_tval_eq(&s->env[f->var], &ti);
        return 0;
    }
    case DW_TF_CMP: {
        uint32_t slot;
        dw_value v;
        if (compare(s, f, i, &slot, &v, h)) return -1;
        if (slot != UINT32_MAX) *h = true;
        return 0;
    }
    }
    return fail(s, DW_TEVAL_EMALFORMED);
}

static int holds_f(dw_tstate *s, uint32_t fi, uint32_t i, bool *h)
{
    *h = false;
    if (fi >= s->t->ntfs) return fail(s, DW_TEVAL_EMALFORMED);
    if (++s->depth > DW_TEVAL_MAX_DEPTH) return fail(s, DW_TEVAL_EDEPTH);
    if (charge(s)) return -1;
    int rc = holds_kind(s, &s->t->tfs[fi], i, h);
    s->depth--;
    if (rc) *h = false;
    return rc;
}

/* ---------------------------------------------------------------- rel (§8.5) */

/* r ∪ q (their domains are disjoint: q was computed under ρ ∪ r). */
static dw_trow *row_union(dw_tstate *s, const dw_trow *r, const dw_trow *q)
{
    dw_trow *u = row_new(s, r->mask | q->mask);
    if (!u) return NULL;
    for (uint64_t b = r->mask; b; b &= b - 1) { int k = __builtin_ctzll(b); u->v[k] = r->v[k]; }
    for (uint64_t b = q->mask & ~r->mask; b; b &= b - 1) { int k = __builtin_ctzll(b); u->v[k] = q->v[k]; }
    return u;
}

static int rel_kind(dw_tstate *s, const dw_tf *f, uint32_t i, dw_trows *out)
{
    bool h;
    switch ((dw_tf_kind)f->kind) {
    case DW_TF_PRED: {          /* one row of the new bindings if match(i, ρ, P) */
        uint64_t saved = s->emask;
        int rc = match(s, f, i, &h);
        if (!rc && h) rc = push_env_row(s, out, saved);
        s->emask = saved;
        return rc;
    }
    case DW_TF_AND: {           /* r ∪ q for r in rel(A), q in rel(B) under ρ ∪ r */
        uint64_t bb, mb;
        if (masks_of(s, f->b, &bb, &mb)) return -1;
        dw_trows ra = { 0 };
        if (rel_f(s, f->a, i, &ra)) return -1;
        for (uint32_t k = 0; k < ra.n; k++) {
            dw_trow *r = ra.r[k];
            uint64_t saved = s->emask;
            env_extend(s, r);
            int rc;
            if (!bb) {          /* B's rows are all empty: it filters r */
                rc = holds_f(s, f->b, i, &h);
                if (!rc && h) rc = rows_push(s, out, r);
            } else {
                dw_trows rb = { 0 };
                rc = rel_f(s, f->b, i, &rb);
                for (uint32_t q = 0; !rc && q < rb.n; q++) rc = rows_push(s, out, row_union(s, r, rb.r[q]));
            }
            s->emask = saved;
            if (rc) return -1;
        }
        return 0;
    }
    case DW_TF_FORMERLY: {      /* concatenation over j in the window of i */
        int64_t wt = window_ticks(s, f->window);
        for (uint32_t j = i + 1; j-- > 0;) {
            if (charge(s)) return -1;
            if (!in_window(s, i, j, wt)) continue;
            dw_trows rj = { 0 };
            if (rel_f(s, f->a, j, &rj) || rows_append(s, out, &rj)) return -1;
        }
        return rows_dedup(s, out);
    }
    case DW_TF_PREVIOUS:        /* rel(i−1) if i−1 is in the window of i */
        if (i > 0 && in_window(s, i, i - 1, window_ticks(s, f->window))) return rel_f(s, f->a, i - 1, out);
        return 0;
    case DW_TF_SINCE:
        return since(s, f, i, out, &h);
    case DW_TF_EXISTS: {        /* rel(i, ρ ∖ {x}, A) without column x, deduplicated */
        if (slot_ok(s, f->var)) return -1;
        uint64_t saved = s->emask, xbit = (uint64_t)1 << f->var;
        dw_value sv = s->env[f->var];
        s->emask &= ~xbit;
        int rc = rel_f(s, f->a, i, out);
        s->emask = saved;
        s->env[f->var] = sv;
        if (rc) return -1;
        for (uint32_t k = 0; k < out->n; k++) out->r[k]->mask &= ~xbit;   /* rows are ours alone */
        return rows_dedup(s, out);
    }
    case DW_TF_TP: {            /* {t ↦ i} if t is unbound; {} or {∅} if bound */
        if (slot_ok(s, f->var)) return -1;
        dw_value ti = dw_long(i);
        if (bound(s, f->var)) return dw_tval_eq(&s->env[f->var], &ti) ? push_empty(s, out) : 0;
        uint64_t saved = s->emask;
        bind(s, f->var, &ti);
        int rc = push_env_row(s, out, saved);
        s->emask = saved;
        return rc;
    }
    case DW_TF_CMP: {           /* a binding equality, or a filter */
        uint32_t slot;
        dw_value v;
        if (compare(s, f, i, &slot, &v, &h)) return -1;
        if (slot == UINT32_MAX) return h ? push_empty(s, out) : 0;
        uint64_t saved = s->emask;
        bind(s, slot, &v);
        int rc = push_env_row(s, out, saved);
        s->emask = saved;
        return rc;
    }
    case DW_TF_NOT:             /* binds nothing: rel_f answers it through holds_f */
        break;
    }
    return fail(s, DW_TEVAL_EMALFORMED);
}

static int rel_f(dw_tstate *s, uint32_t fi, uint32_t i, dw_trows *out)
{
    uint64_t b, m;
    out->n = 0;
    if (masks_of(s, fi, &b, &m)) return -1;
    if (!(b & ~s->emask)) {     /* binds nothing (rows never rebind ρ): {∅} if it holds, else {} */
        bool h;
        if (holds_f(s, fi, i, &h)) return -1;
        return h ? push_empty(s, out) : 0;
    }
    if (++s->depth > DW_TEVAL_MAX_DEPTH) return fail(s, DW_TEVAL_EDEPTH);
    if (charge(s)) return -1;
    int rc = rel_kind(s, &s->t->tfs[fi], i, out);
    s->depth--;
    return rc;
}

/* ---------------------------------------------------------------- entry */

int dw_teval_leaf(dw_teval_ctx *cx, uint32_t leaf, bool *holds)
{
    dw_tstate s = { .cx = cx, .t = cx->t, .masks = cx->masks };
    *holds = false;
    cx->err = 0;
    const dw_history_view *h = cx->h;
    if (!cx->t || !h || !cx->anchor || !cx->scratch || h->n == 0 || !h->ev || h->ticks_per_second <= 0 ||
        leaf >= cx->t->nleaves || cx->t->leaves[leaf].nvars > DW_TEMPORAL_MAX_VARS)
        return fail(&s, DW_TEVAL_EMALFORMED);
    for (uint32_t j = 0; j < h->n; j++)
        if (!h->ev[j]) return fail(&s, DW_TEVAL_EMALFORMED);
    s.nvars = cx->t->leaves[leaf].nvars;
    s.env = dw_arena_alloc(cx->scratch, (s.nvars ? s.nvars : 1) * sizeof *s.env);
    if (!s.env) return fail(&s, DW_TEVAL_ENOMEM);
    if (!s.masks) {
        size_t n = cx->t->ntfs ? cx->t->ntfs : 1;
        s.lmasks = dw_arena_alloc_raw(cx->scratch, 2 * n * sizeof *s.lmasks);
        s.lstate = dw_arena_alloc(cx->scratch, n);
        if (!s.lmasks || !s.lstate) return fail(&s, DW_TEVAL_ENOMEM);
    }
    return holds_f(&s, cx->t->leaves[leaf].root, h->n - 1, holds);
}
