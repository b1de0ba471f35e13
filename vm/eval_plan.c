/* eval_plan.c - what dw_program_prepare reads off the verified code for the
 * interpreter's fast paths (never serialised: an artifact holds only code).
 *
 * Path memo slots.  `VAR x; GETATTR a; GETATTR b ...` (a maximal run of
 * GETATTRs) reads the same value wherever it occurs in one decision: the
 * request and the store do not change while it runs.  Every run whose path
 * (x, a, b, ...) occurs at two or more pcs gets one of DW_PATH_MEMO_SLOTS
 * slots (the most frequent paths first).  A path that occurs once is not
 * worth storing: each pc runs at most once per decision.
 *
 * VAR plans (superinstructions).  A VAR that starts such a path, or that a
 * test follows (`CONST k; EQ`, `LIKE p`, `HAS s`, after the path or right
 * after the VAR), gets a plan: var_plan[pc of the VAR] = index + 1 into
 * var_plans, 0 everywhere else.  The interpreter then reads the path (from
 * the memo when it can) and applies the test in one step, where the code
 * takes a dispatch per instruction; the instructions stay as they are, so a
 * jump into the middle of the run finds them, and any case off the fast path
 * (a type error, a missing attribute) runs them one by one.
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

/* slot[pc] = memo slot + 1 for every VAR of a path worth memoising, else 0. */
static int memo_slots_find(const dw_program *p, uint8_t *slot)
{
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
    for (uint32_t k = 0; k < ng && k < DW_PATH_MEMO_SLOTS && g[k].n >= 2; k++)
        for (uint32_t i = g[k].first; i < g[k].first + g[k].n; i++) slot[s[i].pc] = (uint8_t)(k + 1);
    free(s);
    free(g);
    return 0;
}

/* The test that follows VAR at pc and its nattr GETATTRs, if it is one the
 * interpreter does in the same step; d->test stays NONE otherwise. */
static void var_test_find(const dw_program *p, uint32_t pc, dw_var_plan *d)
{
    const uint32_t *c = p->code;
    uint32_t t = pc + 1 + d->nattr;
    d->next = t;
    if (t >= p->ncode) return;
    dw_opcode op = DW_INS_OP(c[t]);
    if (op == DW_OP_CONST && t + 1 < p->ncode && DW_INS_OP(c[t + 1]) == DW_OP_EQ) d->test = DW_VT_EQ;
    else if (op == DW_OP_LIKE) d->test = DW_VT_LIKE;
    else if (op == DW_OP_HAS) d->test = DW_VT_HAS;
    else return;
    d->arg = DW_INS_A(c[t]);
    uint32_t n = t + 1 + (d->test == DW_VT_EQ);
    if (n < p->ncode && DW_INS_OP(c[n]) == DW_OP_CHECK_BOOL) n++;   /* the test's value is a Bool */
    d->next = n;
    if (n >= p->ncode) return;
    op = DW_INS_OP(c[n]);
    if (op == DW_OP_RET) d->cont = DW_VC_RET;
    else if (op == DW_OP_AND || op == DW_OP_OR) {
        d->cont = DW_VC_AND_OR;
        d->short_on = op == DW_OP_OR;
        d->target = DW_INS_A(c[n]);
        d->ret_at_target = d->target < p->ncode && DW_INS_OP(c[d->target]) == DW_OP_RET;
    }
}

static int var_plans_build(dw_program *p)
{
    p->var_plan = NULL;
    p->var_plans = NULL;
    const uint32_t *c = p->code;
    uint8_t *slot = p->ncode ? calloc(p->ncode, 1) : NULL;
    if (p->ncode && !slot) return -1;
    if (memo_slots_find(p, slot)) { free(slot); return -1; }
    /* a plan for each VAR whose path has a memo slot or that a test follows */
    uint32_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t pc = 0; pc < p->ncode; pc++) {
            if (DW_INS_OP(c[pc]) != DW_OP_VAR) continue;
            dw_var_plan d = { .slot = slot[pc], .bit = slot[pc] ? 1ull << (slot[pc] - 1) : 0 };
            uint32_t len = 0;
            while (pc + 1 + len < p->ncode && DW_INS_OP(c[pc + 1 + len]) == DW_OP_GETATTR) len++;
            if (len > 255) continue;
            d.nattr = (uint8_t)len;
            var_test_find(p, pc, &d);
            if (!d.slot && d.test == DW_VT_NONE) continue;
            if (pass == 1) {
                p->var_plans[n] = d;
                p->var_plan[pc] = n + 1;
            }
            n++;
        }
        if (pass == 1 || n == 0) break;
        p->var_plan = dw_arena_alloc(&p->arena, p->ncode * sizeof *p->var_plan);
        p->var_plans = p->var_plan ? dw_arena_alloc_raw(&p->arena, n * sizeof *p->var_plans) : NULL;
        if (!p->var_plans) { free(slot); p->var_plan = NULL; return -1; }
        n = 0;
    }
    free(slot);
    return 0;
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
    return var_plans_build(p) || like_plans_build(p) ? -1 : 0;
}
