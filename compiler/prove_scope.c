/* prove_scope.c - scope keys of rules and the index over them (prove_scope.h). */
#include "prove_scope.h"
#include <stdlib.h>
#include <string.h>

static bool expr_uses_in(const dw_expr *e)
{
    if (!e) return false;
    if (e->kind == DW_E_IN || (e->kind == DW_E_IS && e->u.is.in)) return true;
    const dw_expr *k;
    for (size_t i = 0; (k = dw_expr_kid_c(e, i)); i++)
        if (expr_uses_in(k)) return true;
    return false;
}

bool dw_scope_cond_uses_in(const dw_policy *pol)
{
    for (size_t k = 0; k < pol->nclauses; k++)
        if (expr_uses_in(pol->clauses[k].body)) return true;
    return false;
}

/* ------------------------------------------------------------------ the set */

/* id 0: no literal `in` target; any: unconstrained or `is T` */
typedef struct slot_t { uint32_t id; dw_str type; bool any; } slot_t;

struct dw_scope_info {
    size_t n;
    slot_t *sp, *sr;          /* per policy: principal, resource */
    bool *uses_in;
};

typedef struct intern { const dw_euid_lit **v; uint32_t *id; size_t cap, n; } intern;

/* A literal's text as compiler/smt.c numbers literals: up to a NUL byte
 * (two ids smt.c would give one number must get one key). */
static dw_str c_str(dw_str s)
{
    const char *z = s.len ? memchr(s.s, 0, s.len) : NULL;
    if (z) s.len = (size_t)(z - s.s);
    return s;
}

static uint64_t lit_hash(const dw_euid_lit *l)
{
    dw_str t = c_str(l->type), d = c_str(l->id);
    uint64_t h = 1469598103934665603ull;
    for (size_t k = 0; k < t.len; k++) h = (h ^ (uint8_t)t.s[k]) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
    for (size_t k = 0; k < d.len; k++) h = (h ^ (uint8_t)d.s[k]) * 1099511628211ull;
    return h;
}

/* the id of literal l (1, 2, ...); 0 on OOM is never asked: cap is fixed ahead */
static uint32_t intern_id(intern *t, const dw_euid_lit *l)
{
    size_t m = t->cap - 1, h = (size_t)lit_hash(l) & m;
    while (t->v[h]) {
        if (dw_str_eq(c_str(t->v[h]->type), c_str(l->type)) && dw_str_eq(c_str(t->v[h]->id), c_str(l->id))) return t->id[h];
        h = (h + 1) & m;
    }
    t->v[h] = l;
    t->id[h] = (uint32_t)++t->n;
    return t->id[h];
}

static slot_t slot_of(intern *t, const dw_scope_con *c)
{
    slot_t s = { 0, { 0 }, c->kind == DW_SC_ANY || c->kind == DW_SC_IS };
    if ((c->kind != DW_SC_IN && c->kind != DW_SC_IS_IN) || c->target_is_slot) return s;
    s.id = intern_id(t, &c->target);
    s.type = c->target.type;
    return s;
}

dw_scope_info *dw_scope_info_new(const dw_policy *pols, size_t n)
{
    dw_scope_info *si = calloc(1, sizeof *si);
    intern t = { 0 };
    t.cap = 16;
    while (t.cap < 4 * n + 16) t.cap *= 2;
    t.v = calloc(t.cap, sizeof *t.v);
    t.id = calloc(t.cap, sizeof *t.id);
    if (si) {
        si->n = n;
        si->sp = calloc(n + 1, sizeof *si->sp);
        si->sr = calloc(n + 1, sizeof *si->sr);
        si->uses_in = calloc(n + 1, sizeof *si->uses_in);
    }
    if (!si || !t.v || !t.id || !si->sp || !si->sr || !si->uses_in) {
        free(t.v);
        free(t.id);
        dw_scope_info_free(si);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        si->sp[i] = slot_of(&t, &pols[i].principal);
        si->sr[i] = slot_of(&t, &pols[i].resource);
        si->uses_in[i] = dw_scope_cond_uses_in(&pols[i]);
    }
    free(t.v);
    free(t.id);
    return si;
}

void dw_scope_info_free(dw_scope_info *si)
{
    if (!si) return;
    free(si->sp);
    free(si->sr);
    free(si->uses_in);
    free(si);
}

/* ------------------------------------------------------------------ one environment */

typedef struct entry { uint64_t key; size_t rule; } entry;

struct dw_scope_env {
    const dw_scope_info *si;
    uint32_t *kp, *kr;        /* per policy of the set */
    entry *ent[2];            /* per effect: the rules sorted by (key, rule) */
    bool *bucket_in[2];       /* [k]: some rule of ent[e][k]'s bucket tests `in` */
    size_t n[2];
};

static int entry_cmp(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->rule < y->rule ? -1 : x->rule > y->rule;
}

static uint64_t key_of(uint32_t kp, uint32_t kr) { return (uint64_t)kp << 32 | kr; }

dw_scope_env *dw_scope_env_new(const dw_scope_info *si, dw_str ptype, dw_str rtype, size_t *const rules[2], const size_t n[2])
{
    dw_scope_env *se = calloc(1, sizeof *se);
    if (!se) return NULL;
    se->si = si;
    se->kp = calloc(si->n + 1, sizeof *se->kp);
    se->kr = calloc(si->n + 1, sizeof *se->kr);
    if (!se->kp || !se->kr) { dw_scope_env_free(se); return NULL; }
    /* a target of the slot's own type: `in` is also `==` there, so no key;
     * and none at all when principal and resource have one type (their
     * `in` terms are then one ancestor function, read at two points that a
     * model may make one) */
    bool same = dw_str_eq(ptype, rtype);
    for (size_t i = 0; i < si->n && !same; i++) {
        se->kp[i] = si->sp[i].id && !dw_str_eq(si->sp[i].type, ptype) ? si->sp[i].id : 0;
        se->kr[i] = si->sr[i].id && !dw_str_eq(si->sr[i].type, rtype) ? si->sr[i].id : 0;
    }
    for (int e = 0; e < 2; e++) {
        se->n[e] = n[e];
        se->ent[e] = calloc(n[e] + 1, sizeof *se->ent[e]);
        se->bucket_in[e] = calloc(n[e] + 1, sizeof *se->bucket_in[e]);
        if (!se->ent[e] || !se->bucket_in[e]) { dw_scope_env_free(se); return NULL; }
        for (size_t k = 0; k < n[e]; k++) {
            size_t j = rules[e][k];
            se->ent[e][k] = (entry){ key_of(se->kp[j], se->kr[j]), j };
        }
        qsort(se->ent[e], n[e], sizeof *se->ent[e], entry_cmp);
        for (size_t a = 0; a < n[e];) {
            size_t b = a;
            bool any = false;
            for (; b < n[e] && se->ent[e][b].key == se->ent[e][a].key; b++)
                if (si->uses_in[se->ent[e][b].rule]) any = true;
            for (size_t k = a; k < b; k++) se->bucket_in[e][k] = any;
            a = b;
        }
    }
    return se;
}

void dw_scope_env_free(dw_scope_env *se)
{
    if (!se) return;
    free(se->kp);
    free(se->kr);
    for (int e = 0; e < 2; e++) { free(se->ent[e]); free(se->bucket_in[e]); }
    free(se);
}

void dw_scope_env_keys(const dw_scope_env *se, size_t i, uint32_t *kp, uint32_t *kr)
{
    *kp = se->kp[i];
    *kr = se->kr[i];
}

/* the entries of effect e with key k: [*lo, *hi) */
static void bucket(const dw_scope_env *se, int e, uint64_t k, size_t *lo, size_t *hi)
{
    size_t a = 0, b = se->n[e];
    while (a < b) { size_t m = a + (b - a) / 2; if (se->ent[e][m].key < k) a = m + 1; else b = m; }
    *lo = a;
    b = se->n[e];
    while (a < b) { size_t m = a + (b - a) / 2; if (se->ent[e][m].key <= k) a = m + 1; else b = m; }
    *hi = a;
}

/* the distinct keys i keeps: (kp, kr), (kp, 0), (0, kr), (0, 0) */
static size_t kept_keys(const dw_scope_env *se, size_t i, uint64_t *k)
{
    uint32_t kp = se->kp[i], kr = se->kr[i];
    size_t n = 0;
    k[n++] = key_of(0, 0);
    if (kp) k[n++] = key_of(kp, 0);
    if (kr) k[n++] = key_of(0, kr);
    if (kp && kr) k[n++] = key_of(kp, kr);
    return n;
}

bool dw_scope_env_usable(const dw_scope_env *se, size_t i, int e)
{
    if (se->si->uses_in[i]) return false;
    uint64_t k[4];
    size_t nk = kept_keys(se, i, k);
    for (size_t q = 0; q < nk; q++) {
        size_t lo, hi;
        bucket(se, e, k[q], &lo, &hi);
        if (lo < hi && se->bucket_in[e][lo]) return false;
    }
    return true;
}

size_t dw_scope_env_count(const dw_scope_env *se, size_t i, int e)
{
    uint64_t k[4];
    size_t nk = kept_keys(se, i, k), n = 0;
    for (size_t q = 0; q < nk; q++) {
        size_t lo, hi;
        bucket(se, e, k[q], &lo, &hi);
        n += hi - lo;
    }
    return n;
}

static int size_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

size_t dw_scope_env_query(const dw_scope_env *se, size_t i, int e, size_t *out)
{
    uint64_t k[4];
    size_t nk = kept_keys(se, i, k), n = 0;
    for (size_t q = 0; q < nk; q++) {
        size_t lo, hi;
        bucket(se, e, k[q], &lo, &hi);
        for (size_t t = lo; t < hi; t++) out[n++] = se->ent[e][t].rule;
    }
    qsort(out, n, sizeof *out, size_cmp);   /* the environment's order, as without the index */
    return n;
}

bool dw_scope_env_is_free(const dw_scope_env *se, size_t i)
{
    const dw_scope_info *si = se->si;
    return !si->uses_in[i] && (si->sp[i].any || se->kp[i]) && (si->sr[i].any || se->kr[i]);
}

/* ------------------------------------------------------------------ pair answers */

typedef struct memo_ent { uint64_t key; int8_t r; bool used; } memo_ent;
struct dw_pair_memo { memo_ent *v; size_t cap, n; };

dw_pair_memo *dw_pair_memo_new(void) { return calloc(1, sizeof(dw_pair_memo)); }

void dw_pair_memo_free(dw_pair_memo *m)
{
    if (!m) return;
    free(m->v);
    free(m);
}

/* term ids are below 2^31 in practice; the kind takes 2 bits of the key */
static uint64_t memo_key(unsigned a, unsigned b, int kind) { return ((uint64_t)a << 33) ^ ((uint64_t)b << 2) ^ (uint64_t)kind; }
static size_t memo_slot(uint64_t k, size_t cap) { return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1); }

static const memo_ent *memo_find(const dw_pair_memo *m, uint64_t k)
{
    if (!m->cap) return NULL;
    for (size_t h = memo_slot(k, m->cap); m->v[h].used; h = (h + 1) & (m->cap - 1))
        if (m->v[h].key == k) return &m->v[h];
    return NULL;
}

int dw_pair_memo_get(const dw_pair_memo *m, unsigned a, unsigned b, int kind)
{
    if (a >= (1u << 31) || b >= (1u << 31)) return -1;
    const memo_ent *e = memo_find(m, memo_key(a, b, kind));
    return e ? e->r : -1;
}

void dw_pair_memo_put(dw_pair_memo *m, unsigned a, unsigned b, int kind, int r)
{
    if (a >= (1u << 31) || b >= (1u << 31) || (r != 0 && r != 1)) return;
    if (2 * (m->n + 1) > m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 1024;
        memo_ent *v = calloc(cap, sizeof *v);
        if (!v) return;
        for (size_t k = 0; k < m->cap; k++) {
            if (!m->v[k].used) continue;
            size_t h = memo_slot(m->v[k].key, cap);
            while (v[h].used) h = (h + 1) & (cap - 1);
            v[h] = m->v[k];
        }
        free(m->v);
        m->v = v;
        m->cap = cap;
    }
    uint64_t k = memo_key(a, b, kind);
    size_t h = memo_slot(k, m->cap);
    while (m->v[h].used) {
        if (m->v[h].key == k) return;
        h = (h + 1) & (m->cap - 1);
    }
    m->v[h] = (memo_ent){ k, (int8_t)r, true };
    m->n++;
}
