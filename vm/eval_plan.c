/* eval_plan.c - what dw_program_prepare reads off the verified code for the
 * interpreter's fast paths (never serialised: an artifact holds only code).
 *
 * Path memo sites.  `VAR x; GETATTR a; GETATTR b ...` (a maximal run of
 * GETATTRs) reads the same value wherever it occurs in one decision: the
 * request and the store do not change while it runs.  Every run whose path
 * (x, a, b, ...) occurs at two or more pcs gets one of DW_PATH_MEMO_SLOTS
 * slots (the most frequent paths first); memo_site[pc of the VAR] is then
 * (slot + 1) | run length << 8, and 0 everywhere else.  A path that occurs
 * once is not worth storing: each pc runs at most once per decision.
 *
 * Like plans.  A pattern with two stars (prefix * middle * suffix) is
 * matched by dw_like_match_mid with its middle segment's rarest byte found
 * here, once. */
#include "vm.h"
#include <stdlib.h>
#include "../stdlib/bytes.h"

typedef struct site { const dw_program *p; uint32_t pc, len; } site;

/* path order: variable, run length, then the attribute names' bytes */
static int path_cmp(const site *a, const site *b)
{
    const uint32_t *c = a->p->code;
    if (DW_INS_A(c[a->pc]) != DW_INS_A(c[b->pc])) return DW_INS_A(c[a->pc]) < DW_INS_A(c[b->pc]) ? -1 : 1;
    if (a->len != b->len) return a->len < b->len ? -1 : 1;
    for (uint32_t i = 1; i <= a->len; i++) {
        int r = dw_str_cmp(a->p->strs[DW_INS_A(c[a->pc + i])], a->p->strs[DW_INS_A(c[b->pc + i])]);
        if (r) return r;
    }
    return 0;
}

static int site_cmp(const void *x, const void *y)
{
    const site *a = x, *b = y;
    int r = path_cmp(a, b);
    return r ? r : a->pc < b->pc ? -1 : a->pc > b->pc;
}

typedef struct group { uint32_t first, n, pc; } group;   /* a run of equal paths in the sorted sites */

static int group_cmp(const void *x, const void *y)
{
    const group *a = x, *b = y;
    if (a->n != b->n) return a->n > b->n ? -1 : 1;
    return a->pc < b->pc ? -1 : a->pc > b->pc;
}

static int memo_sites_build(dw_program *p)
{
    p->memo_site = NULL;
    uint32_t n = 0;
    const uint32_t *c = p->code;
    for (uint32_t pc = 0; pc + 1 < p->ncode; pc++)
        if (DW_INS_OP(c[pc]) == DW_OP_VAR && DW_INS_OP(c[pc + 1]) == DW_OP_GETATTR) n++;
    if (n < 2) return 0;
    site *s = malloc(n * sizeof *s);
    group *g = malloc(n * sizeof *g);
    if (!s || !g) { free(s); free(g); return -1; }
    n = 0;
    for (uint32_t pc = 0; pc + 1 < p->ncode; pc++) {
        if (DW_INS_OP(c[pc]) != DW_OP_VAR || DW_INS_OP(c[pc + 1]) != DW_OP_GETATTR) continue;
        uint32_t len = 0;
        while (pc + 1 + len < p->ncode && DW_INS_OP(c[pc + 1 + len]) == DW_OP_GETATTR) len++;
        if (len <= 255) s[n++] = (site){ p, pc, len };
    }
    qsort(s, n, sizeof *s, site_cmp);
    uint32_t ng = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (ng && path_cmp(&s[i], &s[g[ng - 1].first]) == 0) { g[ng - 1].n++; continue; }
        g[ng++] = (group){ i, 1, s[i].pc };
    }
    qsort(g, ng, sizeof *g, group_cmp);
    int rc = 0;
    if (ng && g[0].n >= 2) {
        if (!(p->memo_site = dw_arena_alloc(&p->arena, p->ncode * sizeof *p->memo_site))) rc = -1;
        for (uint32_t k = 0; rc == 0 && k < ng && k < DW_PATH_MEMO_SLOTS && g[k].n >= 2; k++)
            for (uint32_t i = g[k].first; i < g[k].first + g[k].n; i++)
                p->memo_site[s[i].pc] = (uint16_t)((k + 1) | s[i].len << 8);
    }
    free(s);
    free(g);
    return rc;
}

static int like_plans_build(dw_program *p)
{
    p->like_rare = p->npats ? dw_arena_alloc(&p->arena, p->npats * sizeof *p->like_rare) : NULL;
    if (p->npats && !p->like_rare) return -1;
    for (uint32_t i = 0; i < p->npats; i++) {
        const dw_like_pattern *pt = &p->pats[i];
        if (pt->nseg == 3) p->like_rare[i] = (uint8_t)(pt->seg[1].len <= 16 ? dw_like_rare_offset(pt->seg[1].s, pt->seg[1].len) : 0);
    }
    return 0;
}

int dw_eval_plan_build(dw_program *p)
{
    return memo_sites_build(p) || like_plans_build(p) ? -1 : 0;
}
