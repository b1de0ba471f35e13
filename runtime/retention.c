/* retention.c - what the engine's history must keep (runtime/retention.h). */
#include "retention.h"
#include <stdlib.h>
#include <string.h>

static int rebuild_set(dw_retention *r)
{
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

int dw_retention_install(dw_retention *r, const dw_program *p)
{
    free_cur(r);
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
    /* np's leaves leave the retired list */
    uint32_t w = 0;
    for (uint32_t i = 0; i < r->nold; i++) {
        if (has_leaf(np, r->old[i].need.identity)) { dw_retain_leaf_free(&r->old[i].need); continue; }
        r->old[w++] = r->old[i];
    }
    r->nold = w;
    /* the installed program's leaves that np lacks retire, newest last; the oldest go beyond the cap */
    for (uint32_t l = 0; l < r->ncur && l < cur->temporal.nleaves; l++) {
        if (has_leaf(np, r->cur[l].identity) || find_retired(r, r->cur[l].identity) >= 0) continue;
        if (r->nold == DW_RETIRED_MAX) {
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
    if (dw_retention_install(r, np)) rc = -1;
    return rc;
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
