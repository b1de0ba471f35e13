/* retention.c - what the engine's history must keep (runtime/retention.h). */
#include "retention.h"
#include "../stdlib/le.h"
#include <stdlib.h>
#include <string.h>

static int rebuild_set(dw_retention *r)
{
    r->generation++;
    dw_retain_set_free(&r->set);
    uint32_t n = r->ncur + r->nold;
    dw_retain_leaf *all = malloc((n + 1) * sizeof *all);
    if (!all) { r->set.keep_all = true; return -1; }
    if (r->ncur) memcpy(all, r->cur, r->ncur * sizeof *all);     /* shallow: the set points into r's ids */
    for (uint32_t i = 0; i < r->nold; i++) all[r->ncur + i] = r->old[i].need;
    int rc = dw_retain_set_build(&r->set, all, n);
    free(all);
    return rc;
}

static void free_cur(dw_retention *r)
{
    for (uint32_t i = 0; i < r->ncur; i++) dw_retain_leaf_free(&r->cur[i]);
    free(r->cur);
    r->cur = NULL;
    r->ncur = 0;
}

static bool has_leaf(const dw_program *p, uint64_t identity);

int dw_retention_install(dw_retention *r, const dw_program *p)
{
    free_cur(r);
    uint32_t w = 0;                  /* p's own leaves are not retired */
    for (uint32_t i = 0; i < r->nold; i++) {
        if (has_leaf(p, r->old[i].need.identity)) { dw_retain_leaf_free(&r->old[i].need); continue; }
        r->old[w++] = r->old[i];
    }
    r->nold = w;
    const dw_temporal_tables *t = &p->temporal;
    int rc = 0;
    r->cur = calloc(t->nleaves + 1, sizeof *r->cur);
    if (!r->cur) rc = -1;
    else {
        r->ncur = t->nleaves;
        for (uint32_t l = 0; l < t->nleaves; l++)
            if (dw_retain_leaf_build(t, p->strs, p->nstrs, p->consts, p->nconsts, l, &r->cur[l])) rc = -1;   /* that leaf keeps all */
    }
    if (rebuild_set(r)) rc = -1;
    if (rc) r->set.keep_all = true;
    return rc;
}

bool dw_retention_needs(const dw_retention *r, const dw_event *ev)
{
    return dw_retain_set_needs(&r->set, ev);
}

int dw_retention_fields(const dw_retention *r, const dw_event *ev, uint64_t ihash, dw_str *paths, uint32_t cap,
                        uint32_t *n, const void **id)
{
    return dw_retain_set_fields(&r->set, ev, ihash, paths, cap, n, id);
}

int64_t dw_retention_reach(const dw_retention *r, const dw_program *p)
{
    return r->set.reach > p->max_reach ? r->set.reach : p->max_reach;
}

static int find_retired(const dw_retention *r, uint64_t identity)
{
    for (uint32_t i = r->nold; i-- > 0;)
        if (r->old[i].need.identity == identity) return (int)i;
    return -1;
}

void dw_retention_match(const dw_retention *r, const dw_program *cur, const int64_t *since, const dw_program *np,
                        int64_t fresh, int64_t *nsince, uint32_t *kept)
{
    const dw_temporal_tables *ot = &cur->temporal, *nt = &np->temporal;
    *kept = 0;
    for (uint32_t l = 0; l < nt->nleaves; l++) {
        uint64_t id = nt->leaves[l].identity;
        uint32_t k = 0;
        while (k < ot->nleaves && ot->leaves[k].identity != id) k++;
        int o = k < ot->nleaves ? -1 : find_retired(r, id);
        nsince[l] = k < ot->nleaves ? since[k] : o >= 0 ? r->old[o].since : fresh;
        *kept += k < ot->nleaves || o >= 0;
    }
}

static bool has_leaf(const dw_program *p, uint64_t identity)
{
    for (uint32_t l = 0; l < p->temporal.nleaves; l++)
        if (p->temporal.leaves[l].identity == identity) return true;
    return false;
}

int dw_retention_commit(dw_retention *r, const dw_program *cur, const int64_t *since, const dw_program *np)
{
    int rc = 0;
    /* the installed program's leaves that np lacks retire, newest last; the oldest go beyond the cap */
    for (uint32_t l = 0; l < r->ncur && l < cur->temporal.nleaves; l++) {
        if (has_leaf(np, r->cur[l].identity) || find_retired(r, r->cur[l].identity) >= 0) continue;
        while (r->nold >= DW_RETIRED_MAX) {
            dw_retain_leaf_free(&r->old[0].need);
            memmove(r->old, r->old + 1, (r->nold - 1) * sizeof *r->old);
            r->nold--;
        }
        dw_retired_leaf *o = realloc(r->old, (r->nold + 1) * sizeof *o);
        if (!o) { rc = -1; break; }
        r->old = o;
        r->old[r->nold].need = r->cur[l];        /* moved: cur[l] no longer owns its ids */
        r->old[r->nold].since = since[l];
        r->cur[l] = (dw_retain_leaf){ 0 };
        r->nold++;
    }
    if (dw_retention_install(r, np)) rc = -1;     /* and np's leaves leave the retired list */
    return rc;
}

bool dw_retention_retired_since(const dw_retention *r, uint64_t identity, int64_t *since)
{
    int o = find_retired(r, identity);
    if (o >= 0) *since = r->old[o].since;
    return o >= 0;
}

/* ---- in checkpoints ---- */

static int put_u32(dw_buf *b, uint32_t x) { uint8_t t[4]; dw_put_le32(t, x); return dw_buf_append(b, t, 4); }
static int put_u64(dw_buf *b, uint64_t x) { uint8_t t[8]; dw_put_le64(t, x); return dw_buf_append(b, t, 8); }
static int put_str(dw_buf *b, dw_str s) { return put_u32(b, (uint32_t)s.len) || dw_buf_append(b, s.s, s.len); }

static int put_leaf(dw_buf *b, const dw_retain_leaf *l, int64_t since)
{
    if (put_u64(b, l->identity) || put_u64(b, (uint64_t)since) || put_u64(b, (uint64_t)l->reach) ||
        dw_buf_append(b, &(uint8_t){ l->keep_all }, 1) || put_u32(b, l->nids))
        return -1;
    for (uint32_t k = 0; k < l->nids; k++)
        if (put_str(b, l->ids[k].atype) || put_str(b, l->ids[k].aid) || put_str(b, l->ids[k].kind)) return -1;
    return 0;
}

int dw_retention_encode(const dw_retention *r, const dw_program *cur, const int64_t *since, const dw_program *np,
                        const int64_t *nsince, dw_buf *out)
{
    const dw_temporal_tables *ot = &cur->temporal, *nt = &np->temporal;
    /* retired after the swap: the old retired ones np lacks, then cur's, the newest DW_RETIRED_MAX */
    uint32_t nret = 0, skip;
    for (uint32_t i = 0; i < r->nold; i++) nret += !has_leaf(np, r->old[i].need.identity);
    for (uint32_t l = 0; l < r->ncur && l < ot->nleaves; l++) nret += !has_leaf(np, r->cur[l].identity);
    skip = nret > DW_RETIRED_MAX ? nret - DW_RETIRED_MAX : 0;
    if (put_u32(out, nt->nleaves + nret - skip)) return -1;
    for (uint32_t l = 0; l < nt->nleaves; l++) {
        dw_retain_leaf tmp;
        const dw_retain_leaf *need = np == cur && l < r->ncur ? &r->cur[l] : NULL;
        if (!need) {
            if (dw_retain_leaf_build(nt, np->strs, np->nstrs, np->consts, np->nconsts, l, &tmp)) return -1;
            need = &tmp;
        }
        int rc = put_leaf(out, need, nsince[l]);
        if (need == &tmp) dw_retain_leaf_free(&tmp);
        if (rc) return -1;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < r->nold; i++)
        if (!has_leaf(np, r->old[i].need.identity) && k++ >= skip && put_leaf(out, &r->old[i].need, r->old[i].since)) return -1;
    for (uint32_t l = 0; l < r->ncur && l < ot->nleaves; l++)
        if (!has_leaf(np, r->cur[l].identity) && k++ >= skip && put_leaf(out, &r->cur[l], since[l])) return -1;
    return 0;
}

typedef struct rd { const uint8_t *p; size_t n, off; bool bad; } rd;

static const uint8_t *take(rd *d, size_t n)
{
    if (d->bad || d->n - d->off < n) { d->bad = true; return NULL; }
    d->off += n;
    return d->p + d->off - n;
}
static uint64_t get_u(rd *d, int bytes)
{
    const uint8_t *p = take(d, (size_t)bytes);
    if (!p) return 0;
    return bytes == 8 ? dw_le64(p) : bytes == 4 ? dw_le32(p) : p[0];
}
static bool get_str(rd *d, dw_arena *a, dw_str *out)
{
    uint32_t n = (uint32_t)get_u(d, 4);
    const uint8_t *s = take(d, n);
    char *c = s ? dw_arena_memdup(a, s, n) : NULL;
    *out = (dw_str){ c, n };
    return c != NULL;
}

long dw_retention_decode(dw_retention *r, const uint8_t *p, size_t n)
{
    rd d = { p, n, 0, false };
    uint32_t cnt = (uint32_t)get_u(&d, 4);
    if (d.bad || cnt > (n - d.off) / 29) return -1;       /* an entry takes at least 29 bytes */
    dw_retired_leaf *old = calloc(cnt + 1, sizeof *old);
    if (!old) return -1;
    uint32_t got = 0;
    for (; got < cnt && !d.bad; got++) {
        dw_retain_leaf *l = &old[got].need;
        l->identity = get_u(&d, 8);
        old[got].since = (int64_t)get_u(&d, 8);
        l->reach = (int64_t)get_u(&d, 8);
        l->keep_all = get_u(&d, 1) != 0;
        l->nids = (uint32_t)get_u(&d, 4);
        if (d.bad || l->nids > (n - d.off) / 12) { d.bad = true; l->nids = 0; break; }
        l->arena = malloc(sizeof *l->arena);
        l->ids = calloc(l->nids + 1, sizeof *l->ids);
        if (!l->arena || !l->ids) { free(l->arena); l->arena = NULL; l->nids = 0; d.bad = true; break; }
        dw_arena_init(l->arena, 1024);
        for (uint32_t k = 0; k < l->nids && !d.bad; k++) {
            dw_retain_id *x = &l->ids[k];
            /* one predicate without patterns: every event of the identity */
            if (!get_str(&d, l->arena, &x->atype) || !get_str(&d, l->arena, &x->aid) || !get_str(&d, l->arena, &x->kind) ||
                !(x->preds = dw_arena_alloc(l->arena, sizeof *x->preds)))
                d.bad = true;
            else {
                x->npreds = 1;
                x->preds->any_field = true;     /* its patterns are not in the checkpoint */
            }
        }
    }
    if (d.bad) {
        for (uint32_t i = 0; i < cnt; i++) dw_retain_leaf_free(&old[i].need);
        free(old);
        return -1;
    }
    for (uint32_t i = 0; i < r->nold; i++) dw_retain_leaf_free(&r->old[i].need);
    free(r->old);
    r->old = old;
    r->nold = cnt;
    rebuild_set(r);            /* the log replayed after this checkpoint keeps what they need */
    return (long)d.off;
}

void dw_retention_free(dw_retention *r)
{
    free_cur(r);
    for (uint32_t i = 0; i < r->nold; i++) dw_retain_leaf_free(&r->old[i].need);
    free(r->old);
    r->old = NULL;
    r->nold = 0;
    dw_retain_set_free(&r->set);
}
