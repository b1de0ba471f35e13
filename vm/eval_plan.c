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
 * takes a dispatch per instruction, and goes where the code would take the
 * test's Bool: through the AND / OR / NOT / RET after it, often straight to
 * the next test's plan or to the policy's result.  A policy of tests joined
 * by && and || thus runs as a chain of plans without a dispatch.  The
 * instructions stay as they are, so a jump into the middle of a run finds
 * them, and any case off the fast path (a type error, a missing attribute)
 * runs them one by one from the plan's VAR.
 *
 * Like plans.  A pattern with two stars (prefix * middle * suffix) is
 * matched by dw_like_match_mid with its middle segment's rarest byte found
 * here, once. */
#include "vm.h"
#include <stdlib.h>
#include <string.h>
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

/* The GETATTRs after the VAR at pc (at most 255), or -1 when the VAR is not
 * one to plan.  The verifier checked only the code a policy can reach, so
 * every operand read here is checked first: a damaged artifact's unreachable
 * code must not be read out of bounds (its plans are never run). */
static int path_len(const dw_program *p, uint32_t pc)
{
    const uint32_t *c = p->code;
    if (DW_INS_OP(c[pc]) != DW_OP_VAR || DW_INS_A(c[pc]) > DW_VAR_C) return -1;
    int len = 0;
    while (pc + 1 + len < p->ncode && DW_INS_OP(c[pc + 1 + len]) == DW_OP_GETATTR) {
        if (DW_INS_A(c[pc + 1 + len]) >= p->nstrs || len == 255) return -1;
        len++;
    }
    return len;
}

/* slot[pc] = memo slot + 1 for every VAR of a path worth memoising, else 0. */
static int memo_slots_find(const dw_program *p, uint8_t *slot)
{
    uint32_t n = 0;
    for (uint32_t pc = 0; pc < p->ncode; pc++) n += path_len(p, pc) > 0;
    if (n < 2) return 0;
    site *s = malloc(n * sizeof *s);
    group *g = malloc(n * sizeof *g);
    if (!s || !g) { free(s); free(g); return -1; }
    n = 0;
    for (uint32_t pc = 0; pc < p->ncode; pc++) {
        int len = path_len(p, pc);
        if (len > 0) s[n++] = (site){ p, pc, (uint32_t)len };
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

/* d's form: the general test, or one of its special cases (program.h). */
static void var_form_find(const dw_program *p, dw_var_plan *d)
{
    d->form = d->test == DW_VT_EQ ? DW_VF_EQ : d->test == DW_VT_LIKE ? DW_VF_LIKE : DW_VF_HAS;
    if (d->test == DW_VT_EQ && p->consts[d->arg].kind == DW_V_STRING && p->consts[d->arg].n > 0) {
        d->form = DW_VF_EQ_STR;
        d->lit = p->consts[d->arg].u.s;
        d->litlen = p->consts[d->arg].n;
    } else if (d->test == DW_VT_LIKE) {
        const dw_like_pattern *pt = &p->pats[d->arg];
        const dw_str *seg = pt->seg;
        if (pt->nseg == 2 && seg[0].len && !seg[1].len) d->form = DW_VF_PREFIX, d->lit = seg[0].s, d->litlen = (uint32_t)seg[0].len;
        else if (pt->nseg == 2 && !seg[0].len && seg[1].len) d->form = DW_VF_SUFFIX, d->lit = seg[1].s, d->litlen = (uint32_t)seg[1].len;
        else if (pt->nseg == 3 && !seg[0].len && !seg[2].len && seg[1].len && seg[1].len <= 16) {
            d->form = DW_VF_MID;
            d->lit = seg[1].s;
            d->litlen = (uint32_t)seg[1].len;
            d->rare = (uint8_t)dw_like_rare_offset(seg[1].s, seg[1].len);
        }
    }
}

/* The test that follows VAR at pc and its nattr GETATTRs, if it is one the
 * interpreter does in the same step; d->test stays NONE otherwise.  Returns
 * the pc after the test. */
static uint32_t var_test_find(const dw_program *p, uint32_t pc, dw_var_plan *d)
{
    const uint32_t *c = p->code;
    uint32_t t = pc + 1 + d->nattr;
    d->next = t;
    if (t >= p->ncode) return t;
    dw_opcode op = DW_INS_OP(c[t]);
    if (op == DW_OP_CONST && t + 1 < p->ncode && DW_INS_OP(c[t + 1]) == DW_OP_EQ) d->test = DW_VT_EQ;
    else if (op == DW_OP_LIKE) d->test = DW_VT_LIKE;
    else if (op == DW_OP_HAS) d->test = DW_VT_HAS;
    else return t;
    d->arg = DW_INS_A(c[t]);
    if (d->arg >= (d->test == DW_VT_EQ ? p->nconsts : d->test == DW_VT_LIKE ? p->npats : p->nstrs)) {
        d->test = DW_VT_NONE;       /* unverified code (path_len): no test */
        return t;
    }
    var_form_find(p, d);
    return t + 1 + (d->test == DW_VT_EQ);
}

/* Where the code goes from pc with the Bool r on top of the stack: through
 * CHECK_BOOL, NOT, the AND / OR / JUMP_IF_NOT that take r and the JUMPs
 * after, to the RET that returns it, or to a VAR with a test plan once r is
 * popped; anywhere else that point itself (exact at every step). */
static uint32_t succ_find(const dw_program *p, uint32_t pc, bool r)
{
    const uint32_t *c = p->code;
    bool on_stack = true;
    for (int step = 0; step < 64 && pc < p->ncode; step++) {
        dw_opcode op = DW_INS_OP(c[pc]);
        uint32_t A = DW_INS_A(c[pc]);
        if (op == DW_OP_JUMP) { pc = A; continue; }
        if (!on_stack) {
            uint32_t k = p->var_plan[pc];
            if (op == DW_OP_VAR && k && p->var_plans[k - 1].test != DW_VT_NONE) return DW_VS(DW_VS_PLAN, 0, k - 1);
            break;
        }
        if (op == DW_OP_CHECK_BOOL) pc++;
        else if (op == DW_OP_NOT) { r = !r; pc++; }
        else if (op == DW_OP_AND || op == DW_OP_OR) {
            if (r == (op == DW_OP_OR)) pc = A;       /* short circuit: r stays */
            else { on_stack = false; pc++; }
        } else if (op == DW_OP_JUMP_IF_NOT) { on_stack = false; pc = r ? pc + 1 : A; }
        else if (op == DW_OP_RET) return DW_VS(DW_VS_RET, r, 0);
        else break;
    }
    return on_stack ? DW_VS(DW_VS_PUSH, r, pc) : DW_VS(DW_VS_AT, 0, pc);
}

static int var_plans_build(dw_program *p)
{
    p->var_plan = NULL;
    p->var_plans = NULL;
    if (p->ncode > DW_VS_X(~0u)) return 0;     /* successors hold pcs in 28 bits */
    const uint32_t *c = p->code;
    uint8_t *slot = p->ncode ? calloc(p->ncode, 1) : NULL;
    if (p->ncode && !slot) return -1;
    if (memo_slots_find(p, slot)) { free(slot); return -1; }
    /* a plan for each VAR whose path has a memo slot or that a test follows */
    uint32_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t pc = 0; pc < p->ncode; pc++) {
            int len = path_len(p, pc);
            if (len < 0) continue;
            dw_var_plan d = { .slot = slot[pc], .pc = pc, .var = (uint8_t)DW_INS_A(c[pc]) };
            d.nattr = (uint8_t)len;
            d.succ[0] = d.succ[1] = var_test_find(p, pc, &d);   /* the pc after the test, for now */
            if (!d.slot && d.test == DW_VT_NONE) continue;
            if (pass == 1) {
                p->var_plans[n] = d;
                p->var_plan[pc] = n + 1;
            }
            n++;
        }
        if (pass == 1 || n == 0) break;
        p->var_plan = dw_arena_alloc(&p->arena, p->ncode * sizeof *p->var_plan);
        /* aligned to a cache line: a plan is one (program.h) */
        char *raw = p->var_plan ? dw_arena_alloc_raw(&p->arena, n * sizeof *p->var_plans + 63) : NULL;
        if (!raw) { free(slot); p->var_plan = NULL; return -1; }
        p->var_plans = (dw_var_plan *)(raw + (-(uintptr_t)raw & 63));
        n = 0;
    }
    free(slot);
    /* every plan known: its path's names, where each test's false and true lead */
    for (uint32_t i = 0; i < n; i++) {
        dw_var_plan *d = &p->var_plans[i];
        dw_plan_key *k = d->nattr ? dw_arena_alloc_raw(&p->arena, d->nattr * sizeof *k) : NULL;
        if (d->nattr && !k) return -1;
        for (uint32_t a = 0; a < d->nattr; a++) {
            uint32_t x = DW_INS_A(c[d->pc + 1 + a]);
            k[a] = (dw_plan_key){ p->strs[x].s, (uint32_t)p->strs[x].len, p->str_hash[x] };
        }
        d->keys = k;
        if (d->form == DW_VF_EQ) d->in.konst = p->consts[d->arg];
        else if (d->lit && d->litlen <= sizeof d->in.ilit) {
            memcpy(d->in.ilit, d->lit, d->litlen);
            d->lit = d->in.ilit;
        }
        if (d->test == DW_VT_NONE) continue;
        uint32_t t = d->succ[0];
        d->succ[0] = succ_find(p, t, false);
        d->succ[1] = succ_find(p, t, true);
    }
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

/* After var_plans_build and dw_index_build (index.body). */
static int starts_build(dw_program *p)
{
    p->starts = p->npolicies ? dw_arena_alloc_raw(&p->arena, p->npolicies * sizeof *p->starts) : NULL;
    if (p->npolicies && !p->starts) return -1;
    for (uint32_t i = 0; i < p->npolicies; i++) {
        dw_policy_start *st = &p->starts[i];
        memset(st, 0, sizeof *st);
        st->pc[0] = p->policies[i].entry;
        st->pc[1] = p->index.body ? p->index.body[i] : st->pc[0];
        for (int k = 0; k < 2; k++) st->plan[k] = p->var_plan && st->pc[k] < p->ncode ? p->var_plan[st->pc[k]] : 0;
        st->effect = p->policies[i].effect;
    }
    return 0;
}

int dw_eval_plan_build(dw_program *p)
{
    return var_plans_build(p) || starts_build(p) || like_plans_build(p) ? -1 : 0;
}
