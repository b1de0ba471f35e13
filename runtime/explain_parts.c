/* explain_parts.c - a policy's scope and conditions, each evaluated by the
 * policy's own bytecode cut at the compiler's marks (dw_program.cond_marks):
 * a copy of the code with the instruction after the part replaced by RET.
 * See explain_parts.h. */
#include "explain_parts.h"
#include <stdlib.h>
#include <string.h>


int dw_cut_init(dw_cut *c, const dw_program *p, const dw_store *store, const dw_request *req, dw_arena *scratch, dw_value *stack)
{
    c->p = p;
    c->copy = *p;
    c->code = malloc((p->ncode + 1) * sizeof *c->code);
    if (!c->code) return -1;
    memcpy(c->code, p->code, p->ncode * sizeof *c->code);
    c->copy.code = c->code;
    c->cx = (dw_eval_ctx){ .prog = &c->copy, .store = store, .req = req, .scratch = scratch, .stack = stack };
    return 0;
}

void dw_cut_free(dw_cut *c) { free(c->code); c->code = NULL; }

/* The code from entry up to (not including) the instruction at stop, its
 * value as the policy computes it: the instruction is replaced by RET. */
static dw_xval run_cut(dw_cut *c, uint32_t entry, uint32_t stop, const char **err)
{
    uint32_t saved = c->code[stop];
    c->code[stop] = DW_INS(DW_OP_RET, 0);
    bool r = false;
    dw_eval_status st = dw_eval_code(&c->cx, entry, &r);
    c->code[stop] = saved;
    if (st != DW_EVAL_OK) { *err = dw_eval_status_name(st); return DW_X_ERROR; }
    return r ? DW_X_TRUE : DW_X_FALSE;
}

void dw_explain_conditions(dw_arena *a, dw_cut *c, uint32_t i, dw_x_policy *xp)
{
    const dw_program *p = c->p;
    const dw_policy_code *pc = &p->policies[i];
    const uint32_t *mk = p->cond_marks + p->cond_first[i];
    uint32_t nm = p->cond_first[i + 1] - p->cond_first[i];
    if (!nm) return;
    /* the scope: its tests end with an AND (or, alone, with the RET) just before mark 0 */
    const char *err = NULL;
    xp->scope = mk[0] == pc->entry ? DW_X_TRUE : run_cut(c, pc->entry, mk[0] - 1, &err);
    if (xp->scope == DW_X_ERROR) xp->error = err;
    xp->nconds = (nm - 1) / 2;
    xp->conds = xp->nconds ? dw_arena_alloc(a, xp->nconds * sizeof *xp->conds) : NULL;
    if (xp->nconds && !xp->conds) { xp->nconds = 0; return; }
    bool reached = xp->scope == DW_X_TRUE;
    for (uint32_t k = 0; k < xp->nconds; k++) {
        uint32_t start = mk[1 + 2 * k], term = mk[2 + 2 * k];
        dw_x_cond *xc = &xp->conds[k];
        xc->unless = term < p->ncode && DW_INS_OP(p->code[term]) == DW_OP_NOT;
        xc->error = NULL;
        xc->leaf = -1;
        for (uint32_t q = start; q < term && q < p->ncode && xc->leaf < 0; q++)
            if (DW_INS_OP(p->code[q]) == DW_OP_LEAF) xc->leaf = (int32_t)DW_INS_A(p->code[q]);
        if (!reached) { xc->value = DW_X_NOT_REACHED; continue; }   /* Cedar's && stops before it */
        xc->value = run_cut(c, start, term, &xc->error);
        /* a condition holds when its when-body is true or its unless-body false */
        reached = xc->value == (xc->unless ? DW_X_FALSE : DW_X_TRUE);
    }
}

bool dw_explain_parts_agree(const dw_x_policy *xp)
{
    if (xp->value == DW_X_ERROR) return true;      /* an error stops the conjunction where it is */
    bool all = xp->scope == DW_X_TRUE;
    for (uint32_t k = 0; k < xp->nconds && all; k++) all = xp->conds[k].value == (xp->conds[k].unless ? DW_X_FALSE : DW_X_TRUE);
    return all == (xp->value == DW_X_TRUE);
}
