/* prove_guard.c - literal guards of rules and the index over them (prove_guard.h). */
#include "prove_guard.h"
#include <stdlib.h>
#include <string.h>
#include "../stdlib/ext.h"

/* ------------------------------------------------------------------ guards */

static bool field_of(const dw_expr *e, dw_guard *g)
{
    dw_str rev[DW_GUARD_MAX_PATH];
    size_t n = 0;
    while (e && e->kind == DW_E_GETATTR) {
        if (n == DW_GUARD_MAX_PATH) return false;
        rev[n++] = e->u.attr.attr;
        e = e->u.attr.kids0;
    }
    if (!e || e->kind != DW_E_VAR || n == 0 || e->u.var == DW_VAR_ACTION) return false;
    g->var = (int)e->u.var;
    g->npath = n;
    for (size_t k = 0; k < n; k++) g->path[k] = rev[n - 1 - k];
    return true;
}

bool dw_guard_same_field(const dw_guard *a, const dw_guard *b)
{
    if (a->var != b->var || a->npath != b->npath) return false;
    for (size_t k = 0; k < a->npath; k++) if (!dw_str_eq(a->path[k], b->path[k])) return false;
    return true;
}

static bool lit_alt(const dw_expr *e, dw_guard_alt *a)
{
    switch (e->kind) {
    case DW_E_STRING: a->kind = DW_GA_STR; a->s = e->u.str; return true;
    case DW_E_LONG: a->kind = DW_GA_LONG; a->i = e->u.i; return true;
    case DW_E_ENTITY: a->kind = DW_GA_ENT; a->e = &e->u.euid; return true;
    default: return false;
    }
}

static bool add_alt(dw_guard *g, dw_guard_alt a)
{
    if (g->nalt == DW_GUARD_MAX_ALT) return false;
    g->alt[g->nalt++] = a;
    return true;
}

/* One test (no `||`) on a field, read into f (its field and alternatives),
 * then added to g; the field must equal g's when g has one. */
static bool test_of(const dw_expr *e, dw_guard *g)
{
    dw_guard f = { 0 };
    dw_guard_alt a = { 0 };
    if (e->kind == DW_E_EQ) {
        const dw_expr *fe;
        if (lit_alt(e->u.kids[1], &a)) fe = e->u.kids[0];
        else if (lit_alt(e->u.kids[0], &a)) fe = e->u.kids[1];
        else return false;
        a.test = e;
        if (!field_of(fe, &f) || !add_alt(&f, a)) return false;
        f.field = fe;
    } else if (e->kind == DW_E_LIKE) {
        if (!field_of(e->u.like.kids0, &f) || e->u.like.pat.nseg == 0) return false;
        a.kind = DW_GA_LIKE;
        a.pat = &e->u.like.pat;
        a.test = e;
        if (!add_alt(&f, a)) return false;
        f.field = e->u.like.kids0;
    } else if (e->kind == DW_E_METHOD && e->u.call.recv && e->u.call.recv->kind == DW_E_SET && e->u.call.nargs == 1 &&
               dw_str_is(e->u.call.name, "contains")) {
        const dw_expr *set = e->u.call.recv;
        if (!field_of(e->u.call.args[0], &f) || set->u.list.n == 0) return false;
        for (size_t k = 0; k < set->u.list.n; k++) {
            a.lit = set->u.list.v[k];
            if (!lit_alt(set->u.list.v[k], &a) || !add_alt(&f, a)) return false;
        }
        f.field = e->u.call.args[0];
    } else return false;
    if (g->npath == 0) { g->var = f.var; g->npath = f.npath; memcpy(g->path, f.path, sizeof f.path); g->field = f.field; }
    else if (!dw_guard_same_field(g, &f)) return false;
    for (size_t k = 0; k < f.nalt; k++) if (!add_alt(g, f.alt[k])) return false;
    return true;
}

/* `||` chain of tests on one field */
static bool chain_of(const dw_expr *e, dw_guard *g)
{
    if (e->kind == DW_E_OR) return chain_of(e->u.kids[0], g) && chain_of(e->u.kids[1], g);
    return test_of(e, g);
}

static void guards_of(const dw_expr *e, dw_guards *out)
{
    if (out->n == DW_GUARD_MAX) return;
    if (e->kind == DW_E_AND) {
        guards_of(e->u.kids[0], out);
        guards_of(e->u.kids[1], out);
        return;
    }
    dw_guard g = { 0 };
    if (chain_of(e, &g) && g.nalt) out->g[out->n++] = g;
}

void dw_guards_of_policy(const dw_policy *pol, dw_guards *out)
{
    out->n = 0;
    for (size_t k = 0; k < pol->nclauses; k++)
        if (pol->clauses[k].is_when && pol->clauses[k].body) guards_of(pol->clauses[k].body, out);
}

static bool bytes_is(const char *a, size_t na, const char *b, size_t nb) { return na == nb && (na == 0 || memcmp(a, b, na) == 0); }

bool dw_guard_alts_meet(const dw_guard_alt *a, const dw_guard_alt *b)
{
    if (a->kind == DW_GA_LIKE && b->kind == DW_GA_STR) { const dw_guard_alt *t = a; a = b; b = t; }
    bool as = a->kind == DW_GA_STR || a->kind == DW_GA_LIKE, bs = b->kind == DW_GA_STR || b->kind == DW_GA_LIKE;
    if (as != bs) return false;                       /* a String is never a Long or an entity */
    if (!as && a->kind != b->kind) return false;      /* a Long is never an entity */
    switch (a->kind) {
    case DW_GA_LONG: return a->i == b->i;
    case DW_GA_ENT: return dw_str_eq(a->e->type, b->e->type) && dw_str_eq(a->e->id, b->e->id);
    case DW_GA_STR:
        if (b->kind == DW_GA_STR) return dw_str_eq(a->s, b->s);
        return dw_like_match(b->pat, a->s.len ? a->s.s : "", a->s.len);
    default: break;
    }
    /* two patterns: their literal prefixes (and suffixes) must agree */
    const dw_like_pattern *p = a->pat, *q = b->pat;
    if (p->nseg == 1 && q->nseg == 1) return bytes_is(p->seg[0].s, p->seg[0].len, q->seg[0].s, q->seg[0].len);
    if (p->nseg == 1) return dw_like_match(q, p->seg[0].len ? p->seg[0].s : "", p->seg[0].len);
    if (q->nseg == 1) return dw_like_match(p, q->seg[0].len ? q->seg[0].s : "", q->seg[0].len);
    const dw_str *pp = &p->seg[0], *qp = &q->seg[0], *ps = &p->seg[p->nseg - 1], *qs = &q->seg[q->nseg - 1];
    size_t m = pp->len < qp->len ? pp->len : qp->len;
    if (m && memcmp(pp->s, qp->s, m) != 0) return false;
    m = ps->len < qs->len ? ps->len : qs->len;
    if (m && memcmp(ps->s + ps->len - m, qs->s + qs->len - m, m) != 0) return false;
    return true;
}

bool dw_guards_disjoint(const dw_guards *a, const dw_guards *b)
{
    for (size_t x = 0; x < a->n; x++)
        for (size_t y = 0; y < b->n; y++) {
            const dw_guard *g = &a->g[x], *h = &b->g[y];
            if (!dw_guard_same_field(g, h)) continue;
            bool meet = false;
            for (size_t i = 0; i < g->nalt && !meet; i++)
                for (size_t j = 0; j < h->nalt && !meet; j++) meet = dw_guard_alts_meet(&g->alt[i], &h->alt[j]);
            if (!meet) return true;
        }
    return false;
}


const dw_guard *dw_guards_on(const dw_guards *b, const dw_guard *a)
{
    for (size_t k = 0; k < b->n; k++) if (dw_guard_same_field(&b->g[k], a)) return &b->g[k];
    return NULL;
}

/* ------------------------------------------------------------------ the index
 *
 * Every alternative of an indexed rule's guard on the field becomes two
 * entries: its literal prefix (key "\0" + prefix) in `pre` and its reversed
 * literal suffix in `suf`, sorted bytewise; an exact value (a string, a
 * pattern without wildcard, a Long "\1"+8 bytes, an entity "\2"type"\0"id)
 * is its own prefix and suffix, marked exact.  Alternative a of a query and
 * an entry e can meet only if one key is a prefix of the other, and a
 * shorter e must then be a pattern (an exact value shorter than a's prefix
 * cannot start with it) and a longer e needs a a pattern:
 *   e.key == a.key[0..L) for L < |a.key| (e not exact), e.key == a.key, or
 *   e.key extends a.key (a not exact).
 * Each is a contiguous range of the sorted array: a few binary searches. */

typedef struct ix_ent { const uint8_t *key; size_t len; size_t rule; bool exact; } ix_ent;

struct dw_guard_index {
    dw_guard field;              /* var and path of the indexed field */
    ix_ent *pre, *suf;
    size_t n;
    size_t *loose, nloose;       /* indexed rules without a guard on the field: candidates of every query */
    size_t *all, nall;           /* every indexed rule (a query rule without a guard on the field) */
    uint32_t *stamp, gen;        /* per rule of the set: last query that output it */
    size_t nrules_total;
    uint8_t *keys;               /* the keys' bytes */
    size_t nkeys, capkeys;
};

static int key_cmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    size_t m = na < nb ? na : nb;
    int c = m ? memcmp(a, b, m) : 0;
    if (c) return c;
    return na < nb ? -1 : na > nb ? 1 : 0;
}

static int ent_cmp(const void *x, const void *y)
{
    const ix_ent *a = x, *b = y;
    int c = key_cmp(a->key, a->len, b->key, b->len);
    if (c) return c;
    return a->rule < b->rule ? -1 : a->rule > b->rule ? 1 : 0;
}

/* the key of alternative a: (prefix side or suffix side) into buf (cap >= 2 + 2 * DW_STR max used);
 * *exact: a single value.  Returns the length, or SIZE_MAX when it does not fit. */
static size_t alt_key(const dw_guard_alt *a, bool suffix, uint8_t *buf, size_t cap, bool *exact)
{
    const char *s = NULL;
    size_t n = 0;
    *exact = true;
    switch (a->kind) {
    case DW_GA_STR: s = a->s.s; n = a->s.len; break;
    case DW_GA_LIKE:
        if (a->pat->nseg == 1) { s = a->pat->seg[0].s; n = a->pat->seg[0].len; break; }
        *exact = false;
        { const dw_str *g = suffix ? &a->pat->seg[a->pat->nseg - 1] : &a->pat->seg[0]; s = g->s; n = g->len; }
        break;
    case DW_GA_LONG: {
        if (cap < 9) return SIZE_MAX;
        buf[0] = 1;
        uint64_t u = (uint64_t)a->i;
        for (int k = 0; k < 8; k++) buf[1 + k] = (uint8_t)(u >> (56 - 8 * k));
        return 9;
    }
    default: {
        size_t tl = a->e->type.len, il = a->e->id.len;
        if (2 + tl + il > cap) return SIZE_MAX;
        buf[0] = 2;
        if (tl) memcpy(buf + 1, a->e->type.s, tl);
        buf[1 + tl] = 0;
        if (il) memcpy(buf + 2 + tl, a->e->id.s, il);
        return 2 + tl + il;
    }
    }
    if (1 + n > cap) return SIZE_MAX;
    buf[0] = 0;
    for (size_t k = 0; k < n; k++) buf[1 + k] = (uint8_t)(suffix ? s[n - 1 - k] : s[k]);
    return 1 + n;
}

static const uint8_t *keep_key(dw_guard_index *ix, const uint8_t *k, size_t n)
{
    if (ix->nkeys + n > ix->capkeys) return NULL;
    uint8_t *p = ix->keys + ix->nkeys;
    memcpy(p, k, n);
    ix->nkeys += n;
    return p;
}

void dw_guard_index_free(dw_guard_index *ix)
{
    if (!ix) return;
    free(ix->pre);
    free(ix->suf);
    free(ix->loose);
    free(ix->all);
    free(ix->stamp);
    free(ix->keys);
    free(ix);
}

#define KEY_CAP 1024

dw_guard_index *dw_guard_index_new(const dw_guards *g, const size_t *rules, size_t n, size_t nrules_total)
{
    dw_guard_index *ix = calloc(1, sizeof *ix);
    if (!ix) return NULL;
    ix->nrules_total = nrules_total;
    ix->stamp = calloc(nrules_total + 1, sizeof *ix->stamp);
    ix->all = malloc((n + 1) * sizeof *ix->all);
    ix->loose = malloc((n + 1) * sizeof *ix->loose);
    if (!ix->stamp || !ix->all || !ix->loose) { dw_guard_index_free(ix); return NULL; }
    memcpy(ix->all, rules, n * sizeof *rules);
    ix->nall = n;
    /* the field most rules guard (among the first few distinct fields seen) */
    enum { NF = 32 };
    const dw_guard *fields[NF];
    size_t count[NF], nf = 0, best = 0;
    for (size_t r = 0; r < n; r++)
        for (size_t k = 0; k < g[rules[r]].n; k++) {
            const dw_guard *h = &g[rules[r]].g[k];
            size_t f = 0;
            while (f < nf && !dw_guard_same_field(fields[f], h)) f++;
            if (f == nf) { if (nf == NF) continue; fields[nf] = h; count[nf++] = 0; }
            if (++count[f] > count[best]) best = f;
        }
    size_t nent = 0, bytes = 0;
    if (nf) {
        ix->field = *fields[best];
        for (size_t r = 0; r < n; r++) {
            const dw_guard *h = dw_guards_on(&g[rules[r]], &ix->field);
            if (!h) continue;
            nent += h->nalt;
            for (size_t k = 0; k < h->nalt; k++) {
                const dw_guard_alt *a = &h->alt[k];
                size_t l = a->kind == DW_GA_STR ? a->s.len : a->kind == DW_GA_LIKE ? a->pat->seg[0].len + a->pat->seg[a->pat->nseg - 1].len
                         : a->kind == DW_GA_ENT ? a->e->type.len + a->e->id.len : 8;
                bytes += 2 * (l + 2);
            }
        }
    }
    ix->pre = malloc((nent + 1) * sizeof *ix->pre);
    ix->suf = malloc((nent + 1) * sizeof *ix->suf);
    ix->keys = malloc(bytes + 1);
    ix->capkeys = bytes;
    if (!ix->pre || !ix->suf || !ix->keys) { dw_guard_index_free(ix); return NULL; }
    uint8_t buf[KEY_CAP];
    for (size_t r = 0; r < n; r++) {
        const dw_guard *h = nf ? dw_guards_on(&g[rules[r]], &ix->field) : NULL;
        bool ok = h != NULL;
        size_t first = ix->n;
        for (size_t k = 0; ok && k < h->nalt; k++)
            for (int side = 0; side < 2 && ok; side++) {
                bool exact;
                size_t l = alt_key(&h->alt[k], side == 1, buf, sizeof buf, &exact);
                const uint8_t *kp = l == SIZE_MAX ? NULL : keep_key(ix, buf, l);
                if (!kp) { ok = false; break; }
                ix_ent *e = side ? &ix->suf[ix->n] : &ix->pre[ix->n];
                *e = (ix_ent){ kp, l, rules[r], exact };
                if (side) ix->n++;
            }
        /* a key too long to index: the rule is a candidate of every query */
        if (!ok) { ix->n = first; ix->loose[ix->nloose++] = rules[r]; }
    }
    qsort(ix->pre, ix->n, sizeof *ix->pre, ent_cmp);
    qsort(ix->suf, ix->n, sizeof *ix->suf, ent_cmp);
    return ix;
}

/* first entry >= key */
static size_t lower(const ix_ent *v, size_t n, const uint8_t *k, size_t kl)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (key_cmp(v[mid].key, v[mid].len, k, kl) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static bool is_equal(const ix_ent *e, const uint8_t *k, size_t kl) { return key_cmp(e->key, e->len, k, kl) == 0; }
static bool is_extending(const ix_ent *e, const uint8_t *k, size_t kl) { return e->len > kl && memcmp(e->key, k, kl) == 0; }

/* the end of the run of entries from `from` on for which `in` holds (sorted
 * order makes both runs contiguous: the keys equal to k, then those extending it) */
static size_t run_end(const ix_ent *v, size_t n, size_t from, bool (*in)(const ix_ent *, const uint8_t *, size_t),
                      const uint8_t *k, size_t kl)
{
    size_t lo = from, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (in(&v[mid], k, kl)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

typedef struct range { size_t a, b; bool patterns_only; } range;

/* the ranges of v an alternative with key k may meet; their total size */
static size_t ranges_of(const ix_ent *v, size_t n, const uint8_t *k, size_t kl, bool exact, range *out, size_t *nr)
{
    size_t total = 0;
    *nr = 0;
    for (size_t l = 1; l <= kl; l++) {
        size_t a = lower(v, n, k, l), b = run_end(v, n, a, is_equal, k, l);
        if (b > a) { out[(*nr)++] = (range){ a, b, l < kl }; total += b - a; }
        if (l == kl && !exact) {
            size_t c = run_end(v, n, b, is_extending, k, l);
            if (c > b) { out[(*nr)++] = (range){ b, c, false }; total += c - b; }
        }
    }
    return total;
}

static void emit(dw_guard_index *ix, size_t rule, size_t *out, size_t *nout)
{
    if (ix->stamp[rule] == ix->gen) return;
    ix->stamp[rule] = ix->gen;
    out[(*nout)++] = rule;
}

void dw_guard_index_query(dw_guard_index *ix, const dw_guards *gi, size_t *out, size_t *nout)
{
    if (++ix->gen == 0) { memset(ix->stamp, 0, (ix->nrules_total + 1) * sizeof *ix->stamp); ix->gen = 1; }
    const dw_guard *h = ix->n ? dw_guards_on(gi, &ix->field) : NULL;
    if (!h) {
        for (size_t r = 0; r < ix->nall; r++) emit(ix, ix->all[r], out, nout);
        return;
    }
    for (size_t r = 0; r < ix->nloose; r++) emit(ix, ix->loose[r], out, nout);
    uint8_t kp[KEY_CAP], ks[KEY_CAP];
    range rp[KEY_CAP + 1], rs[KEY_CAP + 1];
    for (size_t k = 0; k < h->nalt; k++) {
        bool ep, es;
        size_t lp = alt_key(&h->alt[k], false, kp, sizeof kp, &ep), ls = alt_key(&h->alt[k], true, ks, sizeof ks, &es);
        if (lp == SIZE_MAX || ls == SIZE_MAX) {   /* too long to look up: every indexed rule */
            for (size_t r = 0; r < ix->nall; r++) emit(ix, ix->all[r], out, nout);
            return;
        }
        size_t np_, ns_;
        size_t tp = ranges_of(ix->pre, ix->n, kp, lp, ep, rp, &np_), ts = ranges_of(ix->suf, ix->n, ks, ls, es, rs, &ns_);
        const ix_ent *v = tp <= ts ? ix->pre : ix->suf;
        const range *rr = tp <= ts ? rp : rs;
        size_t nr = tp <= ts ? np_ : ns_;
        for (size_t q = 0; q < nr; q++)
            for (size_t e = rr[q].a; e < rr[q].b; e++)
                if (!rr[q].patterns_only || !v[e].exact) emit(ix, v[e].rule, out, nout);
    }
}
