/* tjoin.c - the join index of vm/tjoin.h.
 *
 * Entries are numbered in view order, so a stable sort by key alone leaves
 * them ordered by (key, position): the latest position <= i of one key is
 * then the entry just before the first one greater than (probe, i). */
#include "tjoin.h"
#include "../stdlib/bytes.h"
#include "teval.h"
#include <string.h>

struct dw_tjoin {
    uint32_t n, nkey;
    uint32_t *pos;              /* view position of entry e */
    const dw_value **key;       /* key[e * nkey + k] */
    uint32_t *ord;              /* entries sorted by (key, position) */
};

static int take(uint64_t *budget, uint64_t n)
{
    if (*budget < n) { *budget = 0; return DW_TJOIN_EBUDGET; }
    *budget -= n;
    return DW_TJOIN_OK;
}

/* The event's key into key[0 .. nkey), or false if p's identity differs or a
 * path is absent (such an event never matches p). */
static bool event_key(const dw_temporal_tables *t, const dw_str *strs, const dw_tf *p, const dw_event *e,
                      const dw_value **key)
{
    if (!dw_str_eq(e->atype, strs[p->type_str]) || !dw_str_eq(e->aid, strs[p->id_str]) || !dw_str_eq(e->kind, strs[p->kind_str]))
        return false;
    uint32_t c = 0;
    for (uint32_t k = 0; k < p->n; k++) {
        const dw_tpattern *fp = &t->tpatterns[p->first + k];
        dw_str path = strs[fp->path_str];
        const dw_value *v = dw_record_path(&e->logged, path.s, path.len);
        if (!v) return false;
        if (t->tterms[fp->term].kind != DW_TT_WILD) key[c++] = v;
    }
    return true;
}

static int key_cmp(const dw_value *const *a, const dw_value *const *b, uint32_t nkey)
{
    for (uint32_t k = 0; k < nkey; k++) {
        int c = dw_tval_cmp(a[k], b[k]);
        if (c) return c;
    }
    return 0;
}

/* Stable bottom-up merge sort of ord by key (scratch buffer, no qsort). */
static int sort_entries(dw_tjoin *x, dw_arena *a, uint64_t *budget)
{
    uint32_t n = x->n;
    if (n < 2) return DW_TJOIN_OK;
    uint32_t *src = x->ord, *dst = dw_arena_alloc_raw(a, (size_t)n * sizeof *dst);
    if (!dst) return DW_TJOIN_ENOMEM;
    for (uint32_t w = 1; w < n; w = w > n / 2 ? n : 2 * w) {
        if (take(budget, n)) return DW_TJOIN_EBUDGET;
        for (uint32_t lo = 0; lo < n; lo += 2 * w) {
            uint32_t mid = lo + w < n ? lo + w : n, hi = mid + w < n ? mid + w : n;
            uint32_t l = lo, r = mid, o = lo;
            while (l < mid && r < hi)
                dst[o++] = key_cmp(&x->key[(size_t)src[r] * x->nkey], &x->key[(size_t)src[l] * x->nkey], x->nkey) < 0
                               ? src[r++] : src[l++];
            while (l < mid) dst[o++] = src[l++];
            while (r < hi) dst[o++] = src[r++];
        }
        uint32_t *tmp = src; src = dst; dst = tmp;
    }
    x->ord = src;
    return DW_TJOIN_OK;
}

int dw_tjoin_build(const dw_temporal_tables *t, const dw_str *strs, const dw_history_view *h, const dw_tf *p,
                   dw_arena *a, uint64_t *budget, dw_tjoin **out)
{
    *out = NULL;
    dw_tjoin *x = dw_arena_alloc(a, sizeof *x);
    if (!x) return DW_TJOIN_ENOMEM;
    for (uint32_t k = 0; k < p->n; k++)
        if (t->tterms[t->tpatterns[p->first + k].term].kind != DW_TT_WILD) x->nkey++;
    /* pass 1: count (the identity test is cheap; memory follows the matches) */
    const dw_value **kbuf = dw_arena_alloc_raw(a, ((size_t)x->nkey + 1) * sizeof *kbuf);
    if (!kbuf) return DW_TJOIN_ENOMEM;
    uint32_t n = 0;
    for (uint32_t j = 0; j < h->n; j++) {
        if (take(budget, 1)) return DW_TJOIN_EBUDGET;
        if (event_key(t, strs, p, h->ev[j], kbuf)) n++;
    }
    x->pos = dw_arena_alloc_raw(a, ((size_t)n + 1) * sizeof *x->pos);
    x->ord = dw_arena_alloc_raw(a, ((size_t)n + 1) * sizeof *x->ord);
    x->key = dw_arena_alloc_raw(a, ((size_t)n * x->nkey + 1) * sizeof *x->key);
    if (!x->pos || !x->ord || !x->key) return DW_TJOIN_ENOMEM;
    /* pass 2: fill, in view order */
    for (uint32_t j = 0; j < h->n && x->n < n; j++) {
        if (take(budget, 1)) return DW_TJOIN_EBUDGET;
        if (!event_key(t, strs, p, h->ev[j], &x->key[(size_t)x->n * x->nkey])) continue;
        x->pos[x->n] = j;
        x->ord[x->n] = x->n;
        x->n++;
    }
    int rc = sort_entries(x, a, budget);
    if (rc) return rc;
    *out = x;
    return DW_TJOIN_OK;
}

uint32_t dw_tjoin_nkey(const dw_tjoin *x) { return x->nkey; }

int dw_tjoin_latest(const dw_tjoin *x, const dw_value *probe, uint32_t i, uint64_t *budget, uint32_t *pos)
{
    *pos = UINT32_MAX;
    /* first entry greater than (probe, i) */
    uint32_t lo = 0, hi = x->n;
    while (lo < hi) {
        if (take(budget, 1)) return DW_TJOIN_EBUDGET;
        uint32_t mid = lo + (hi - lo) / 2, e = x->ord[mid];
        int c = 0;
        for (uint32_t k = 0; k < x->nkey && !c; k++) c = dw_tval_cmp(x->key[(size_t)e * x->nkey + k], &probe[k]);
        if (c < 0 || (c == 0 && x->pos[e] <= i)) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return DW_TJOIN_OK;
    uint32_t e = x->ord[lo - 1];
    for (uint32_t k = 0; k < x->nkey; k++)
        if (dw_tval_cmp(x->key[(size_t)e * x->nkey + k], &probe[k]) != 0) return DW_TJOIN_OK;
    *pos = x->pos[e];
    return DW_TJOIN_OK;
}
