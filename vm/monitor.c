/* monitor.c - incremental monitors for Box's temporal idioms (see monitor.h).
 *
 * Why these are exact (dogwood.md §8.3-§8.7), given non-decreasing
 * timestamps, so that every j <= i has ts(i) - ts(j) >= 0 and "in the window
 * of i" is just ts(i) - ts(j) <= W:
 *  - A predicate P of constants, wildcards and anchored terms matches event
 *    j under ρ0 iff j's identity and constant fields match (decided once, at
 *    observe) and the values at the anchored paths equal the anchored terms'
 *    values (resolved at the decision).  So each matching event is filed
 *    under the canonical encoding of those values, prefixed by its partition
 *    key; the decision looks up the encoding of the anchor's values.
 *  - formerly: some filed event is in the window.  Expiry (at observe, with
 *    the newest timestamp, which is the decision's) drops exactly the events
 *    out of the window, so "a node exists" is the answer.
 *  - count/sum over (P && tp(t)) projected on t (and b): one row per
 *    matching timepoint, so count = matching events in the window, sum = the
 *    sum of their Long amounts (others skipped), exact then clamped (Q12).
 *    An unresolvable anchor makes P match nothing: count 0, sum 0.
 *  - !Q since P: the best anchor is the latest P in the window; it works iff
 *    no Q matched strictly after it (k ranges over (j, i]), so iff
 *    seq(latest P) >= seq(latest Q).  A Q older than the window is older
 *    than every P in it, so Q state expires with the window too.
 *  - previous: the event before i in the (partition's) history. */
#include "monitor.h"
#include "../stdlib/bytes.h"
#include "ident_hash.h"
#include "monitor_keys.h"
#include "teval.h"
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- buffers */

typedef struct mbuf { uint8_t *p; size_t n, cap; bool bad; } mbuf;

static void mb_put(mbuf *b, const void *s, size_t n)
{
    if (b->bad) return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n) cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) { b->bad = true; return; }
        b->p = p;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, s, n);
    b->n += n;
}
static void mb_u8(mbuf *b, uint8_t x) { mb_put(b, &x, 1); }
static void mb_u32(mbuf *b, uint32_t x) { mb_put(b, &x, 4); }
static void mb_i64(mbuf *b, int64_t x) { mb_put(b, &x, 8); }
static void mb_bytes(mbuf *b, const void *s, size_t n) { mb_u32(b, (uint32_t)n); mb_put(b, s, n); }

/* ---------------------------------------------------------------- values */

#define TAG_ABSENT 0xFF

/* The canonical encoding of v: prefix-free, and enc(a) == enc(b) iff
 * dw_tval_cmp(a, b) == 0 (domain equality, §7.4), or, with raw, iff the
 * kinds are equal too (a set is not an array: the engine's partition test).
 * False for a kind the encoder does not know or nesting too deep. */
static bool enc_value(mbuf *b, const dw_value *v, bool raw, int depth)
{
    if (depth > 256) return false;
    uint8_t k = v->kind;
    if (k == DW_V_SET && !raw) k = DW_V_ARRAY;
    mb_u8(b, k);
    /* raw mirrors dw_value_eq, the engine's partition test, which does not
     * know event Arrays: any two of them are equal there */
    if (raw && k == DW_V_ARRAY) return true;
    switch (v->kind) {
    case DW_V_BOOL: mb_u8(b, v->u.b ? 1 : 0); return true;
    case DW_V_LONG: case DW_V_DECIMAL: case DW_V_DATETIME: case DW_V_DURATION: mb_i64(b, v->u.i); return true;
    case DW_V_STRING: mb_bytes(b, v->u.s, v->n); return true;
    case DW_V_ENTITY:
        mb_bytes(b, v->u.uid->type, v->u.uid->tlen);
        mb_bytes(b, v->u.uid->id, v->u.uid->idlen);
        return true;
    case DW_V_IPADDR:
        mb_u8(b, v->u.ip->v6);
        mb_u8(b, v->u.ip->prefix);
        mb_put(b, v->u.ip->addr, v->u.ip->v6 ? 16 : 4);
        return true;
    case DW_V_SET:
    default:
        if (v->kind == DW_V_SET || v->kind == DW_V_ARRAY) {
            mb_u32(b, v->n);
            for (uint32_t i = 0; i < v->n; i++)
                if (!enc_value(b, &v->u.elems[i], raw, depth + 1)) return false;
            return true;
        }
        if (v->kind == DW_V_NULL) return true;
        if (v->kind == DW_V_RECORD) {
            mb_u32(b, v->n);
            for (uint32_t i = 0; i < v->n; i++) {
                mb_bytes(b, v->u.fields[i].key, v->u.fields[i].klen);
                if (!enc_value(b, &v->u.fields[i].v, raw, depth + 1)) return false;
            }
            return true;
        }
        return false;
    }
}



/* ---------------------------------------------------------------- monitors */

enum { PC_WILD, PC_CONST, PC_ANCH, PC_SUMVAR };

typedef struct mpat { dw_str path; uint8_t cls; uint32_t term; const dw_value *cval; } mpat;
/* nanch: how many patterns are PC_ANCH.  Without any, a matching event's
 * tuple is its partition key alone (m->pb), used without copying. */
typedef struct mpred { dw_str type, id, kind; mpat *pats; uint32_t n, nanch; } mpred;

typedef struct mon {
    uint8_t kind;            /* dw_monitor_kind */
    int64_t wt;              /* window in ticks; -1 for a negative window */
    mpred p, q;              /* P (the anchor of since), Q (since's negated left) */
    uint8_t op;              /* COUNT/SUM: the comparison */
    bool k_left;             /* K <op> agg rather than agg <op> K */
    uint32_t kterm;          /* K */
    /* K a Long constant: "agg <op> K" is "agg in [klo, khi]" (k_out: not
     * in it, for !=), decided once at classification */
    bool k_long, k_out;
    int64_t klo, khi;
    kmap a, b;               /* a: P's state (or partitions); b: Q's */
    fifo f;                  /* COUNT/SUM */
    uint64_t expired_seq;    /* dw_monitors.seq when last expired (at that event's ts); 0: not since reset */
    int64_t since;           /* install position: events before it are not the leaf's (INT64_MIN: all) */
} mon;

struct dw_monitors {
    uint32_t nleaves, nactive;
    mon *mons;
    int64_t tps;
    dw_str *ppaths; uint32_t npaths;
    bool disabled, have_last;
    int64_t last_ts;
    uint64_t seq;
    mbuf pb, kb, ab;         /* partition prefix, event tuple, anchor tuple */
    /* dispatch: identity hash -> run of (leaf << 1 | side) in ident[] */
    struct idrun *runs; uint32_t nruns_cap;   /* open addressing, power of two (0: none) */
    uint32_t *ident; uint32_t nident;
    uint32_t *prevs; uint32_t nprev;          /* PREVIOUS leaves: they see every event */
};

typedef struct idrun { uint64_t h; uint32_t first, n; } idrun;

static const idrun *id_find(const dw_monitors *m, uint64_t h)
{
    if (!m->nruns_cap) return NULL;
    for (uint32_t i = (uint32_t)h & (m->nruns_cap - 1);; i = (i + 1) & (m->nruns_cap - 1)) {
        if (m->runs[i].h == h) return &m->runs[i];
        if (!m->runs[i].h) return NULL;
    }
}

static int64_t window_ticks(int64_t w, int64_t tps)
{
    int64_t r;
    if (w < 0) return -1;
    return __builtin_mul_overflow(w, tps, &r) ? INT64_MAX : r;
}

/* ---- classification ---- */

typedef struct cls {
    const dw_program *p;
    const dw_temporal_tables *t;
    uint32_t nvars;
} cls;

static bool str_ok(const cls *c, uint32_t k, dw_str *out)
{
    if (k >= c->p->nstrs) return false;
    *out = c->p->strs[k];
    return true;
}

/* A term resolved from ρ0 alone: constants, anchored terms, arrays of them. */
static bool anchorable(const cls *c, uint32_t ti, int depth)
{
    const dw_temporal_tables *t = c->t;
    if (ti >= t->ntterms || depth > 64) return false;
    const dw_tterm *tt = &t->tterms[ti];
    switch (tt->kind) {
    case DW_TT_CONST: return tt->a < c->p->nconsts;
    case DW_TT_CONTEXT: case DW_TT_PRINCIPAL: case DW_TT_RESOURCE: return tt->a < c->p->nstrs;
    case DW_TT_ARRAY:
        if (tt->n > t->ntargs || tt->a > t->ntargs - tt->n) return false;
        for (uint32_t k = 0; k < tt->n; k++)
            if (!anchorable(c, t->targs[tt->a + k], depth + 1)) return false;
        return true;
    default:
        return false;
    }
}

/* A predicate of constants, wildcards and anchored terms; with sum_slot >= 0,
 * exactly one pattern is that variable. */
static bool build_pred(const cls *c, uint32_t fi, int sum_slot, mpred *out)
{
    const dw_temporal_tables *t = c->t;
    if (fi >= t->ntfs) return false;
    const dw_tf *f = &t->tfs[fi];
    if (f->kind != DW_TF_PRED) return false;
    if (!str_ok(c, f->type_str, &out->type) || !str_ok(c, f->id_str, &out->id) || !str_ok(c, f->kind_str, &out->kind))
        return false;
    if (f->n > t->ntpatterns || f->first > t->ntpatterns - f->n) return false;
    out->pats = calloc(f->n ? f->n : 1, sizeof *out->pats);
    if (!out->pats) return false;
    out->n = f->n;
    bool seen = false;
    for (uint32_t k = 0; k < f->n; k++) {
        const dw_tpattern *fp = &t->tpatterns[f->first + k];
        mpat *mp = &out->pats[k];
        if (!str_ok(c, fp->path_str, &mp->path) || fp->term >= t->ntterms) return false;
        const dw_tterm *tt = &t->tterms[fp->term];
        mp->term = fp->term;
        if (tt->kind == DW_TT_WILD) mp->cls = PC_WILD;
        else if (tt->kind == DW_TT_CONST && tt->a < c->p->nconsts) { mp->cls = PC_CONST; mp->cval = &c->p->consts[tt->a]; }
        else if (tt->kind == DW_TT_VAR && sum_slot >= 0 && tt->a == (uint32_t)sum_slot && !seen) { mp->cls = PC_SUMVAR; seen = true; }
        else if (anchorable(c, fp->term, 0)) { mp->cls = PC_ANCH; out->nanch++; }
        else return false;
    }
    return sum_slot < 0 || seen;
}

/* A term K compared with the aggregate: a constant or an anchored scalar. */
static bool k_term(const cls *c, uint32_t ti)
{
    if (ti >= c->t->ntterms) return false;
    uint8_t k = c->t->tterms[ti].kind;
    return (k == DW_TT_CONST || k == DW_TT_CONTEXT || k == DW_TT_PRINCIPAL || k == DW_TT_RESOURCE) && anchorable(c, ti, 0);
}

static bool is_agg(const cls *c, uint32_t ti)
{
    return ti < c->t->ntterms && (c->t->tterms[ti].kind == DW_TT_COUNT || c->t->tterms[ti].kind == DW_TT_SUM);
}

static bool is_var(const cls *c, uint32_t ti, uint32_t slot)
{
    return ti < c->t->ntterms && c->t->tterms[ti].kind == DW_TT_VAR && c->t->tterms[ti].a == slot;
}

/* count for (t). where formerly within W (P && tp(t)), or
 * sum b for (b), (t). where formerly within W (P{…, f: b} && tp(t)). */
static bool build_agg(const cls *c, uint32_t ti, mon *mo, int64_t tps)
{
    const dw_temporal_tables *t = c->t;
    const dw_tterm *tt = &t->tterms[ti];
    if (tt->a >= t->ntaggs) return false;
    const dw_tagg *g = &t->taggs[tt->a];
    bool sum = tt->kind == DW_TT_SUM;
    if (g->nvars > t->naggvars || g->first_var > t->naggvars - g->nvars || g->nvars != (sum ? 2u : 1u)) return false;
    uint32_t tslot;
    if (!sum) tslot = t->aggvars[g->first_var];
    else {
        uint16_t x = t->aggvars[g->first_var], y = t->aggvars[g->first_var + 1];
        if (x == y) return false;
        if (g->sum_var == x) tslot = y;
        else if (g->sum_var == y) tslot = x;
        else return false;
        if (g->sum_var >= c->nvars) return false;
    }
    if (tslot >= c->nvars) return false;
    if (g->body >= t->ntfs) return false;
    const dw_tf *fo = &t->tfs[g->body];
    if (fo->kind != DW_TF_FORMERLY || fo->a >= t->ntfs) return false;
    const dw_tf *an = &t->tfs[fo->a];
    if (an->kind != DW_TF_AND || an->a >= t->ntfs || an->b >= t->ntfs) return false;
    uint32_t pf, tpf;
    if (t->tfs[an->a].kind == DW_TF_PRED) pf = an->a, tpf = an->b;
    else pf = an->b, tpf = an->a;
    if (t->tfs[tpf].kind != DW_TF_TP || t->tfs[tpf].var != tslot) return false;
    if (!build_pred(c, pf, sum ? (int)g->sum_var : -1, &mo->p)) return false;
    mo->kind = sum ? DW_MON_KIND_SUM : DW_MON_KIND_COUNT;
    mo->wt = window_ticks(fo->window, tps);
    return true;
}

/* "agg <op> K" (or "K <op> agg") for a Long K as an interval of agg; an
 * empty one (x < INT64_MIN) is [1, 0]. */
static void k_interval(mon *mo, int64_t k)
{
    uint8_t op = mo->op;
    if (mo->k_left) op = op == DW_TC_OP_LT ? DW_TC_OP_GT : op == DW_TC_OP_LE ? DW_TC_OP_GE :
                         op == DW_TC_OP_GT ? DW_TC_OP_LT : op == DW_TC_OP_GE ? DW_TC_OP_LE : op;
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    switch (op) {
    case DW_TC_OP_EQ: case DW_TC_OP_NE: lo = hi = k; break;
    case DW_TC_OP_LT: if (k == INT64_MIN) lo = 1, hi = 0; else hi = k - 1; break;
    case DW_TC_OP_LE: hi = k; break;
    case DW_TC_OP_GT: if (k == INT64_MAX) lo = 1, hi = 0; else lo = k + 1; break;
    case DW_TC_OP_GE: lo = k; break;
    default: return;   /* not classified (classify refuses other operators) */
    }
    mo->k_long = true;
    mo->k_out = op == DW_TC_OP_NE;
    mo->klo = lo;
    mo->khi = hi;
}

static void mon_clear_spec(mon *mo)
{
    free(mo->p.pats);
    free(mo->q.pats);
    memset(mo, 0, sizeof *mo);
}

static void classify(const cls *c, uint32_t leaf, mon *mo, int64_t tps)
{
    const dw_temporal_tables *t = c->t;
    const dw_tleaf *l = &t->leaves[leaf];
    if (l->root >= t->ntfs || l->nvars > DW_TEMPORAL_MAX_VARS) return;
    const dw_tf *f = &t->tfs[l->root];
    bool ok = false;
    switch (f->kind) {
    case DW_TF_FORMERLY: case DW_TF_PREVIOUS:
        ok = build_pred(c, f->a, -1, &mo->p);
        mo->kind = f->kind == DW_TF_FORMERLY ? DW_MON_KIND_FORMERLY : DW_MON_KIND_PREVIOUS;
        mo->wt = window_ticks(f->window, tps);
        break;
    case DW_TF_SINCE:
        if (f->a < t->ntfs && t->tfs[f->a].kind == DW_TF_NOT) {
            ok = build_pred(c, f->b, -1, &mo->p) && build_pred(c, t->tfs[f->a].a, -1, &mo->q);
            mo->kind = DW_MON_KIND_SINCE_NEG;
            mo->wt = window_ticks(f->window, tps);
        }
        break;
    case DW_TF_CMP:          /* (agg) <op> K, K <op> (agg) */
        if (is_agg(c, f->a) && k_term(c, f->b)) { mo->k_left = false; mo->kterm = f->b; ok = build_agg(c, f->a, mo, tps); }
        else if (is_agg(c, f->b) && k_term(c, f->a)) { mo->k_left = true; mo->kterm = f->a; ok = build_agg(c, f->b, mo, tps); }
        mo->op = f->op;
        break;
    case DW_TF_EXISTS: {     /* exists (n). ((agg) == n && n <op> K) */
        uint32_t n = f->var;
        if (n >= c->nvars || f->a >= t->ntfs) break;
        const dw_tf *an = &t->tfs[f->a];
        if (an->kind != DW_TF_AND || an->a >= t->ntfs || an->b >= t->ntfs) break;
        const dw_tf *x = &t->tfs[an->a], *y = &t->tfs[an->b];
        if (x->kind != DW_TF_CMP || x->op != DW_TC_OP_EQ || y->kind != DW_TF_CMP || y->op > DW_TC_OP_GE) break;
        uint32_t agg;
        if (is_agg(c, x->a) && is_var(c, x->b, n)) agg = x->a;
        else if (is_agg(c, x->b) && is_var(c, x->a, n)) agg = x->b;
        else break;
        if (is_var(c, y->a, n) && k_term(c, y->b)) { mo->k_left = false; mo->kterm = y->b; }
        else if (is_var(c, y->b, n) && k_term(c, y->a)) { mo->k_left = true; mo->kterm = y->a; }
        else break;
        mo->op = y->op;
        ok = build_agg(c, agg, mo, tps);
        break;
    }
    default:
        break;
    }
    if (ok && f->kind == DW_TF_CMP && f->op > DW_TC_OP_GE) ok = false;
    if (!ok) { mon_clear_spec(mo); return; }
    if (mo->kind == DW_MON_KIND_COUNT || mo->kind == DW_MON_KIND_SUM) {
        const dw_tterm *k = &t->tterms[mo->kterm];
        if (k->kind == DW_TT_CONST && c->p->consts[k->a].kind == DW_V_LONG) k_interval(mo, c->p->consts[k->a].u.i);
    }
}

typedef struct ident_ent { uint64_t h; uint32_t e; } ident_ent;

static int ident_cmp(const void *a, const void *b)
{
    const ident_ent *x = a, *y = b;
    if (x->h != y->h) return x->h < y->h ? -1 : 1;
    return x->e < y->e ? -1 : x->e > y->e;
}

/* The identity dispatch table (observe's O(applicable) lookup). 0 or -1. */
static int build_dispatch(dw_monitors *m)
{
    if (m->nleaves > UINT32_MAX / 2) return -1;
    ident_ent *es = calloc(2 * (size_t)m->nleaves + 1, sizeof *es);
    m->prevs = calloc(m->nleaves + 1, sizeof *m->prevs);
    if (!es || !m->prevs) { free(es); return -1; }
    uint32_t n = 0;
    for (uint32_t l = 0; l < m->nleaves; l++) {
        const mon *mo = &m->mons[l];
        if (mo->kind == DW_MON_KIND_NONE) continue;
        if (mo->kind == DW_MON_KIND_PREVIOUS) { m->prevs[m->nprev++] = l; continue; }
        es[n++] = (ident_ent){ dw_km_ident_hash(mo->p.type, mo->p.id, mo->p.kind), l << 1 };
        if (mo->kind == DW_MON_KIND_SINCE_NEG) es[n++] = (ident_ent){ dw_km_ident_hash(mo->q.type, mo->q.id, mo->q.kind), l << 1 | 1 };
    }
    qsort(es, n, sizeof *es, ident_cmp);   /* at load time only */
    uint32_t nruns = 0;
    for (uint32_t i = 0; i < n; i++) if (!i || es[i].h != es[i - 1].h) nruns++;
    uint32_t cap = 8;
    while (cap < 2 * nruns) cap *= 2;
    m->ident = calloc(n + 1, sizeof *m->ident);
    m->runs = calloc(cap, sizeof *m->runs);
    if (!m->ident || !m->runs) { free(es); return -1; }
    m->nruns_cap = cap;
    m->nident = n;
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i;
        while (j < n && es[j].h == es[i].h) { m->ident[j] = es[j].e; j++; }
        uint32_t slot = (uint32_t)es[i].h & (cap - 1);
        while (m->runs[slot].h) slot = (slot + 1) & (cap - 1);
        m->runs[slot] = (idrun){ es[i].h, i, j - i };
        i = j;
    }
    free(es);
    return 0;
}

dw_monitors *dw_monitors_new(const dw_program *p, int64_t ticks_per_second)
{
    dw_monitors_seed();
    dw_monitors *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->tps = ticks_per_second > 0 ? ticks_per_second : 1;
    const dw_temporal_tables *t = &p->temporal;
    m->nleaves = t->nleaves;
    m->mons = calloc(t->nleaves ? t->nleaves : 1, sizeof *m->mons);
    if (!m->mons) { free(m); return NULL; }
    for (uint32_t l = 0; l < t->nleaves; l++) {
        cls c = { .p = p, .t = t, .nvars = t->leaves[l].nvars };
        classify(&c, l, &m->mons[l], m->tps);
        m->mons[l].since = INT64_MIN;
        if (m->mons[l].kind != DW_MON_KIND_NONE) m->nactive++;
    }
    if (build_dispatch(m)) { dw_monitors_free(m); return NULL; }
    return m;
}

int dw_monitors_set_partition(dw_monitors *m, const dw_str *paths, uint32_t n)
{
    free(m->ppaths);
    m->ppaths = NULL;
    m->npaths = 0;
    if (!n) return 0;
    m->ppaths = calloc(n, sizeof *m->ppaths);
    if (!m->ppaths) return -1;
    memcpy(m->ppaths, paths, n * sizeof *paths);
    m->npaths = n;
    return 0;
}

void dw_monitors_set_since(dw_monitors *m, uint32_t leaf, int64_t since)
{
    if (m && leaf < m->nleaves) m->mons[leaf].since = since;
}

int dw_monitors_leaf_kind(const dw_monitors *m, uint32_t leaf)
{
    return m && leaf < m->nleaves ? m->mons[leaf].kind : DW_MON_KIND_NONE;
}

const char *dw_monitors_kind_name(int kind)
{
    switch (kind) {
    case DW_MON_KIND_FORMERLY: return "formerly";
    case DW_MON_KIND_COUNT: return "count";
    case DW_MON_KIND_SUM: return "sum";
    case DW_MON_KIND_SINCE_NEG: return "since-neg";
    case DW_MON_KIND_PREVIOUS: return "previous";
    default: return "teval";
    }
}

uint32_t dw_monitors_count(const dw_monitors *m) { return m ? m->nactive : 0; }
bool dw_monitors_active(const dw_monitors *m) { return m && !m->disabled; }

static void mon_clear_state(mon *mo)
{
    dw_km_clear(&mo->a);
    dw_km_clear(&mo->b);
    free(mo->f.e);
    memset(&mo->f, 0, sizeof mo->f);
    mo->expired_seq = 0;
}

void dw_monitors_reset(dw_monitors *m)
{
    if (!m) return;
    for (uint32_t l = 0; l < m->nleaves; l++) mon_clear_state(&m->mons[l]);
    m->disabled = m->have_last = false;
    m->last_ts = 0;
    m->seq = 0;
}

static void disable(dw_monitors *m)
{
    for (uint32_t l = 0; l < m->nleaves; l++) mon_clear_state(&m->mons[l]);
    m->disabled = true;
}

size_t dw_monitors_memory(const dw_monitors *m)
{
    if (!m) return 0;
    size_t b = sizeof *m + m->nleaves * sizeof *m->mons + m->pb.cap + m->kb.cap + m->ab.cap +
               m->nruns_cap * sizeof *m->runs + (m->nident + m->nleaves) * sizeof(uint32_t);
    for (uint32_t l = 0; l < m->nleaves; l++)
        b += m->mons[l].a.bytes + m->mons[l].b.bytes + m->mons[l].f.cap * sizeof(fent);
    return b;
}

uint64_t dw_monitors_probes(const dw_monitors *m)
{
    uint64_t n = 0;
    for (uint32_t l = 0; m && l < m->nleaves; l++) n += m->mons[l].a.probes + m->mons[l].b.probes;
    return n;
}

void dw_monitors_free(dw_monitors *m)
{
    if (!m) return;
    for (uint32_t l = 0; l < m->nleaves; l++) { mon_clear_state(&m->mons[l]); mon_clear_spec(&m->mons[l]); }
    free(m->mons);
    free(m->runs);
    free(m->ident);
    free(m->prevs);
    free(m->ppaths);
    free(m->pb.p);
    free(m->kb.p);
    free(m->ab.p);
    free(m);
}

/* ---- observing ---- */

/* The partition key of ev (§8.9) into m->pb; false if not encodable. */
static bool partition_slow(dw_monitors *m, const dw_event *ev)
{
    m->pb.n = 0;
    m->pb.bad = false;
    for (uint32_t k = 0; k < m->npaths; k++) {
        const dw_value *v = ev->logged.kind == DW_V_RECORD ? dw_record_get(&ev->logged, m->ppaths[k].s, m->ppaths[k].len) : NULL;
        if (!v) mb_u8(&m->pb, TAG_ABSENT);
        else if (!enc_value(&m->pb, v, true, 0)) return false;
    }
    return !m->pb.bad;
}

/* Without partition paths m->pb is never written: it stays the empty key. */
static inline bool partition(dw_monitors *m, const dw_event *ev) { return !m->npaths || partition_slow(m, ev); }

static void kb_start(dw_monitors *m, mbuf *b)
{
    b->n = 0;
    b->bad = false;
    mb_put(b, m->pb.p, m->pb.n);
}

/* The tuple a predicate's match (or anchor) is filed under: the partition
 * key, then the anchored values (in b), or the partition key alone. */
static inline const mbuf *pred_key(const dw_monitors *m, const mpred *pr, const mbuf *b) { return pr->nanch ? b : &m->pb; }

/* match(j, ρ0, P) up to the anchored fields: 1 matched (their values appended
 * to m->kb after the partition key when P has any: pred_key), the Long amount
 * of the summed field in *amt), 0 not, -1 error. */
static __attribute__((noinline)) int match_fields(dw_monitors *m, const mpred *pr, const dw_event *ev, int64_t *amt)
{
    if (pr->nanch) kb_start(m, &m->kb);
    for (uint32_t k = 0; k < pr->n; k++) {
        const mpat *mp = &pr->pats[k];
        const dw_value *v = dw_record_path(&ev->logged, mp->path.s, mp->path.len);
        if (!v) return 0;
        switch (mp->cls) {
        case PC_WILD: break;
        case PC_CONST: if (!dw_tval_eq(mp->cval, v)) return 0; break;
        case PC_SUMVAR: *amt = v->kind == DW_V_LONG ? v->u.i : 0; break;
        default: if (!enc_value(&m->kb, v, false, 0)) return -1; break;
        }
    }
    return pr->nanch && m->kb.bad ? -1 : 1;
}

static inline int match_event(dw_monitors *m, const mpred *pr, const dw_event *ev, int64_t *amt)
{
    *amt = 0;
    if (!dw_str_eq(ev->aid, pr->id) || !dw_str_eq(ev->kind, pr->kind) || !dw_str_eq(ev->atype, pr->type)) return 0;
    return pr->n ? match_fields(m, pr, ev, amt) : 1;   /* `request{}`: nothing more to test */
}

static inline knode *upsert(kmap *km, const mbuf *b) { return dw_km_get(km, b->p, (uint32_t)b->n, true); }

static bool prev_set(kmap *km, prevrec *r, bool matched, int64_t ts, const uint8_t *v, size_t n)
{
    r->present = true;
    r->matched = matched;
    r->ts = ts;
    r->n = 0;
    if (!matched) return true;
    if (n > r->cap) {
        uint8_t *p = realloc(r->v, n);
        if (!p) return false;
        km->bytes += n - r->cap;
        r->v = p;
        r->cap = (uint32_t)n;
    }
    if (n) memcpy(r->v, v, n);
    r->n = (uint32_t)n;
    return true;
}

/* Drop what fell out of the window at `now` (the newest timestamp). */
static void mon_expire_slow(mon *mo, int64_t now)
{
    switch (mo->kind) {
    case DW_MON_KIND_COUNT: case DW_MON_KIND_SUM:
        while (mo->f.n) {
            fent *e = &mo->f.e[mo->f.head];
            if (sat_sub(now, e->ts) <= mo->wt) break;
            e->node->count--;
            e->node->sum -= e->amt;
            if (!e->node->count) dw_km_remove(&mo->a, e->node);
            mo->f.head = (mo->f.head + 1) & (mo->f.cap - 1);
            mo->f.n--;
        }
        return;
    case DW_MON_KIND_SINCE_NEG:
        dw_km_expire(&mo->b, now, mo->wt);
        dw_km_expire(&mo->a, now, mo->wt);
        return;
    default:
        dw_km_expire(&mo->a, now, mo->wt);
        return;
    }
}

static inline bool km_due(const kmap *km, int64_t now, int64_t wt) { return km->head && sat_sub(now, km->head->ts) > wt; }

/* Whether anything is out of the window at `now`: the oldest entry decides
 * (the FIFO's front, the maps' least recently touched), so the common case,
 * nothing to drop, costs a compare instead of a call. */
static inline void mon_expire(mon *mo, int64_t now)
{
    bool due;
    switch (mo->kind) {
    case DW_MON_KIND_COUNT: case DW_MON_KIND_SUM: due = mo->f.n && sat_sub(now, mo->f.e[mo->f.head].ts) > mo->wt; break;
    case DW_MON_KIND_SINCE_NEG: due = km_due(&mo->a, now, mo->wt) || km_due(&mo->b, now, mo->wt); break;
    default: due = km_due(&mo->a, now, mo->wt); break;
    }
    if (due) mon_expire_slow(mo, now);
}

/* previous: every event, matching (r) or not, shifts the partition's last two. */
static __attribute__((noinline)) int observe_previous(dw_monitors *m, mon *mo, int r, int64_t now)
{
    /* the anchored tuple without the partition prefix */
    const uint8_t *tv = r && mo->p.nanch ? m->kb.p + m->pb.n : NULL;
    size_t tn = r && mo->p.nanch ? m->kb.n - m->pb.n : 0;
    knode *x = upsert(&mo->a, &m->pb);
    if (!x) return -1;
    prevrec tmp = x->prv;    /* prv <- cur, cur <- this event (reusing buffers) */
    x->prv = x->cur;
    x->cur = tmp;
    if (!prev_set(&mo->a, &x->cur, r == 1, now, tv, tn)) return -1;
    dw_km_touch(&mo->a, x, now);
    return 0;
}

/* Feed ev to one predicate of a monitor (side 0: P, side 1: since's Q). */
static int observe_side(dw_monitors *m, mon *mo, int side, const dw_event *ev)
{
    const mpred *pr = side ? &mo->q : &mo->p;
    int64_t now = ev->ts, amt;
    int r = match_event(m, pr, ev, &amt);
    if (r < 0) return -1;
    if (mo->kind == DW_MON_KIND_PREVIOUS) return observe_previous(m, mo, r, now);
    if (!r) return 0;
    kmap *km = side ? &mo->b : &mo->a;
    knode *x = upsert(km, pred_key(m, pr, &m->kb));
    if (!x) return -1;
    switch (mo->kind) {
    case DW_MON_KIND_COUNT: case DW_MON_KIND_SUM:
        if (!dw_fifo_push(&mo->f, (fent){ now, x, amt })) {
            if (!x->count) dw_km_remove(km, x);
            return -1;
        }
        x->count++;
        x->sum += amt;
        return 0;
    case DW_MON_KIND_SINCE_NEG:
        x->seq = m->seq;
        dw_km_touch(km, x, now);
        return 0;
    default:                 /* FORMERLY */
        dw_km_touch(km, x, now);
        return 0;
    }
}

int dw_monitors_observe(dw_monitors *m, const dw_program *p, const dw_event *ev)
{
    (void)p;
    return dw_monitors_observe_hashed(m, ev, m && !m->disabled && m->nactive ? dw_ident_hash(ev->atype, ev->aid, ev->kind) : 0);
}

int dw_monitors_observe_hashed(dw_monitors *m, const dw_event *ev, uint64_t ihash)
{
    if (!m || m->disabled) return m ? -1 : 0;
    if (!m->nactive) return 0;
    if (m->have_last && ev->ts < m->last_ts) { disable(m); return -1; }   /* §20 Q17: a regression */
    m->have_last = true;
    m->last_ts = ev->ts;
    m->seq++;
    if (!partition(m, ev)) { disable(m); return -1; }
    /* only the predicates naming this event's identity (plus every
     * `previous`, which sees all events): O(applicable), not O(leaves) */
    const idrun *run = id_find(m, ihash);
    for (uint32_t k = 0; run && k < run->n; k++) {
        uint32_t e = m->ident[run->first + k];
        mon *mo = &m->mons[e >> 1];
        if (ev->ts < mo->since) continue;   /* before the leaf was installed */
        if (observe_side(m, mo, (int)(e & 1), ev)) { disable(m); return -1; }
        mon_expire(mo, ev->ts);   /* what grew shrinks with the window */
        mo->expired_seq = m->seq;
    }
    for (uint32_t k = 0; k < m->nprev; k++) {
        mon *mo = &m->mons[m->prevs[k]];
        if (ev->ts < mo->since) continue;
        if (observe_side(m, mo, 0, ev)) { disable(m); return -1; }
        mon_expire_slow(mo, ev->ts);   /* (the inline test's code once, in the loop above) */
        mo->expired_seq = m->seq;
    }
    return 0;
}

/* ---- deciding ---- */

/* ρ0["@principal.path"] / ["@resource.path"] (teval.c's resolve_scope). */
static bool resolve_scope(const dw_value *uid, const dw_value *attrs, dw_str p, dw_value *out)
{
    if (p.len == 0) {
        if (uid->kind == DW_V_ENTITY) { *out = *uid; return true; }
        return false;
    }
    const dw_value *v = attrs->kind == DW_V_RECORD ? dw_record_path(attrs, p.s, p.len) : NULL;
    if (v) { *out = *v; return true; }
    if (uid->kind != DW_V_ENTITY) return false;
    const dw_uid *u = uid->u.uid;
    if (p.len == 2 && memcmp(p.s, "id", 2) == 0) {
        out->kind = DW_V_STRING; out->n = u->idlen; out->u.s = u->id; return true;
    }
    if (p.len == 4 && memcmp(p.s, "type", 4) == 0) {
        out->kind = DW_V_STRING; out->n = u->tlen; out->u.s = u->type; return true;
    }
    return false;
}

/* R(t) for a scalar anchorable term: 1 resolved, 0 unresolved. */
static int resolve_scalar(const dw_program *p, const dw_tanchor *an, uint32_t ti, dw_value *out)
{
    const dw_tterm *tt = &p->temporal.tterms[ti];
    switch (tt->kind) {
    case DW_TT_CONST: *out = p->consts[tt->a]; return 1;
    case DW_TT_CONTEXT: {
        dw_str s = p->strs[tt->a];
        const dw_value *v = an->context.kind == DW_V_RECORD ? dw_record_path(&an->context, s.s, s.len) : NULL;
        if (!v) return 0;
        *out = *v;
        return 1;
    }
    case DW_TT_PRINCIPAL: return resolve_scope(&an->principal, &an->principal_attrs, p->strs[tt->a], out);
    case DW_TT_RESOURCE: return resolve_scope(&an->resource, &an->resource_attrs, p->strs[tt->a], out);
    default: return 0;
    }
}

/* Encode R(t) (an anchorable term) into b: 1, 0 unresolved, -1 unknown kind. */
static int enc_term(const dw_program *p, const dw_tanchor *an, uint32_t ti, mbuf *b, int depth)
{
    const dw_tterm *tt = &p->temporal.tterms[ti];
    if (tt->kind == DW_TT_ARRAY) {
        mb_u8(b, DW_V_ARRAY);
        mb_u32(b, tt->n);
        for (uint32_t k = 0; k < tt->n; k++) {
            int r = enc_term(p, an, p->temporal.targs[tt->a + k], b, depth + 1);
            if (r <= 0) return r;
        }
        return 1;
    }
    dw_value v;
    if (!resolve_scalar(p, an, ti, &v)) return 0;
    return enc_value(b, &v, false, depth) ? 1 : -1;
}

/* The anchor's tuple for pr into m->ab (after the partition prefix): 1, 0 if
 * some anchored term is unresolved (P then matches nothing), -1 error. */
static int anchor_tuple(dw_monitors *m, const dw_program *p, const mpred *pr, const dw_tanchor *an)
{
    if (!pr->nanch) return 1;   /* the tuple is the partition key (pred_key) */
    kb_start(m, &m->ab);
    for (uint32_t k = 0; k < pr->n; k++) {
        if (pr->pats[k].cls != PC_ANCH) continue;
        int r = enc_term(p, an, pr->pats[k].term, &m->ab, 0);
        if (r <= 0) return r;
    }
    return m->ab.bad ? -1 : 1;
}

static inline knode *lookup(kmap *km, const mbuf *b) { return dw_km_get(km, b->p, (uint32_t)b->n, false); }

/* §8.6 on values: ==/!= by ≐, orderings on Longs only. */
static bool cmp_apply(uint8_t op, const dw_value *a, const dw_value *b)
{
    switch (op) {
    case DW_TC_OP_EQ: return dw_tval_eq(a, b);
    case DW_TC_OP_NE: return !dw_tval_eq(a, b);
    default: break;
    }
    if (a->kind != DW_V_LONG || b->kind != DW_V_LONG) return false;
    int64_t x = a->u.i, y = b->u.i;
    switch (op) {
    case DW_TC_OP_LT: return x < y;
    case DW_TC_OP_LE: return x <= y;
    case DW_TC_OP_GT: return x > y;
    case DW_TC_OP_GE: return x >= y;
    default: return false;
    }
}

/* The rarer shapes are out of line: the common decision (formerly, count,
 * sum against a Long constant) stays a few cache lines of code. */

/* agg <op> K for a K resolved at the decision (anchored, or not a Long). */
static __attribute__((noinline)) bool agg_cmp_resolved(const dw_program *p, const mon *mo, const dw_tanchor *anchor, int64_t n)
{
    dw_value agg = dw_long(n), k;
    if (!resolve_scalar(p, anchor, mo->kterm, &k)) return false;   /* unresolved: false */
    return mo->k_left ? cmp_apply(mo->op, &k, &agg) : cmp_apply(mo->op, &agg, &k);
}

/* !Q since P, P's tuple resolved (r) into pred_key(m, &mo->p, &m->ab). */
static __attribute__((noinline)) int eval_since(dw_monitors *m, const dw_program *p, mon *mo, int r, const dw_tanchor *anchor,
                                                bool *holds)
{
    knode *x;
    if (!r || !(x = lookup(&mo->a, pred_key(m, &mo->p, &m->ab)))) return 0;
    uint64_t pseq = x->seq;
    int rq = anchor_tuple(m, p, &mo->q, anchor);
    if (rq < 0) return DW_MON_FALLBACK;
    knode *y = rq ? lookup(&mo->b, pred_key(m, &mo->q, &m->ab)) : NULL;
    *holds = !y || pseq >= y->seq;
    return 0;
}

/* previous within W P, P's tuple resolved (r) as for eval_since. */
static __attribute__((noinline)) int eval_previous(dw_monitors *m, mon *mo, int r, int64_t now, bool *holds)
{
    knode *x;
    if (!r || !(x = lookup(&mo->a, &m->pb))) return 0;
    const prevrec *pv = &x->prv;
    size_t tn = mo->p.nanch ? m->ab.n - m->pb.n : 0;
    *holds = pv->present && pv->matched && sat_sub(now, pv->ts) <= mo->wt && sat_sub(now, pv->ts) >= 0 &&
             pv->n == tn && (tn == 0 || memcmp(pv->v, m->ab.p + m->pb.n, tn) == 0);
    return 0;
}

int dw_monitors_eval(dw_monitors *m, const dw_program *p, uint32_t leaf, const dw_tanchor *anchor,
                     const dw_event *current, bool *holds)
{
    *holds = false;
    if (!m || m->disabled || leaf >= m->nleaves || m->mons[leaf].kind == DW_MON_KIND_NONE) return DW_MON_FALLBACK;
    if (!current || !anchor) return -1;
    if (!m->have_last || current->ts != m->last_ts) return DW_MON_FALLBACK;
    mon *mo = &m->mons[leaf];
    /* monitors not fed since expire lazily (state changes only at observe,
     * so one expiry per observed event suffices) */
    if (mo->expired_seq != m->seq) { mon_expire_slow(mo, current->ts); mo->expired_seq = m->seq; }
    if (!partition(m, current)) return DW_MON_FALLBACK;
    int r = mo->p.nanch ? anchor_tuple(m, p, &mo->p, anchor) : 1;
    if (r < 0) return DW_MON_FALLBACK;
    switch (mo->kind) {
    case DW_MON_KIND_FORMERLY: case DW_MON_KIND_COUNT: case DW_MON_KIND_SUM: break;
    case DW_MON_KIND_SINCE_NEG: return eval_since(m, p, mo, r, anchor, holds);
    case DW_MON_KIND_PREVIOUS: return eval_previous(m, mo, r, current->ts, holds);
    default: return DW_MON_FALLBACK;
    }
    knode *x = r ? lookup(&mo->a, pred_key(m, &mo->p, &m->ab)) : NULL;
    if (mo->kind == DW_MON_KIND_FORMERLY) { *holds = x != NULL; return 0; }
    int64_t n;
    if (mo->kind == DW_MON_KIND_COUNT) n = x ? (int64_t)x->count : 0;
    else {
        __int128 s = x ? x->sum : 0;
        n = s > INT64_MAX ? INT64_MAX : s < INT64_MIN ? INT64_MIN : (int64_t)s;
    }
    *holds = mo->k_long ? (n >= mo->klo && n <= mo->khi) != mo->k_out : agg_cmp_resolved(p, mo, anchor, n);
    return 0;
}
