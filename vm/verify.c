/* verify.c - abstract interpretation of stack depth over each policy's code.
 * The compiler only emits forward jumps, and the verifier insists on it, so
 * one pass in pc order visits every instruction after all its predecessors
 * and every program terminates. */
#include "verify.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(char *msg, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
    return -1;
}

#define UNSEEN (-1)

static int verify_range(const dw_program *p, uint32_t k, uint32_t entry, uint32_t end, int *depth_at, char *msg, size_t cap);

static int verify_policy(const dw_program *p, uint32_t k, int *depth_at, char *msg, size_t cap)
{
    const dw_policy_code *pc = &p->policies[k];
    if (pc->max_stack > p->max_stack)
        return bad(msg, cap, "policy %u: max_stack %u exceeds the program's %u", k, pc->max_stack, p->max_stack);
    if (pc->effect > DW_EFFECT_FORBID) return bad(msg, cap, "policy %u: bad effect %u", k, pc->effect);
    if (pc->first_leaf > p->temporal.nleaves || pc->nleaves > p->temporal.nleaves - pc->first_leaf)
        return bad(msg, cap, "policy %u: temporal leaves out of range", k);
    if (verify_range(p, k, pc->entry, pc->end, depth_at, msg, cap)) return -1;
    if (pc->nleaves) return verify_range(p, k, pc->scope_entry, pc->scope_end, depth_at, msg, cap);
    return 0;
}

/* One straight-line, forward-jumping code range ending in RET. */
static int verify_range(const dw_program *p, uint32_t k, uint32_t entry, uint32_t end, int *depth_at, char *msg, size_t cap)
{
    const dw_policy_code *pc = &p->policies[k];
    if (entry >= end || end > p->ncode)
        return bad(msg, cap, "policy %u: code range [%u, %u) outside the code section (%u)", k, entry, end, p->ncode);
    uint32_t n = end - entry;
    for (uint32_t i = 0; i < n; i++) depth_at[i] = UNSEEN;
    depth_at[0] = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t at = entry + i;
        int d = depth_at[i];
        if (d == UNSEEN) continue;                  /* unreachable: never executed */
        uint32_t ins = p->code[at];
        unsigned op = DW_INS_OP(ins);
        uint32_t A = DW_INS_A(ins);
        if (op >= DW_OP__COUNT) return bad(msg, cap, "pc %u: unknown opcode %u", at, op);
        const dw_opinfo *oi = &dw_opinfo_table[op];
        int pops = oi->pops;
        switch (oi->kind) {
        case DW_OPK_NONE: if (A) return bad(msg, cap, "pc %u: %s takes no operand", at, oi->name); break;
        case DW_OPK_K: if (A >= p->nconsts) return bad(msg, cap, "pc %u: constant %u out of range", at, A); break;
        case DW_OPK_VAR: if (A > 3) return bad(msg, cap, "pc %u: variable %u out of range", at, A); break;
        case DW_OPK_JUMP: case DW_OPK_JUMPK:
            if (A <= at || A >= end) return bad(msg, cap, "pc %u: jump to %u leaves the policy or goes backwards", at, A);
            break;
        case DW_OPK_STR: if (A >= p->nstrs) return bad(msg, cap, "pc %u: string %u out of range", at, A); break;
        case DW_OPK_PAT: if (A >= p->npats) return bad(msg, cap, "pc %u: pattern %u out of range", at, A); break;
        case DW_OPK_COUNT: pops = (int)A; break;
        case DW_OPK_KEYS:
            if (A >= p->nkeylists) return bad(msg, cap, "pc %u: key list %u out of range", at, A);
            pops = (int)p->keylists[A].n;
            break;
        case DW_OPK_LEAF:
            if (A >= p->temporal.nleaves) return bad(msg, cap, "pc %u: temporal leaf %u out of range", at, A);
            break;
        case DW_OPK_CALL:
            if (DW_CALL_FN(A) >= DW_FN__COUNT) return bad(msg, cap, "pc %u: unknown function %u", at, DW_CALL_FN(A));
            if (DW_CALL_ARGC(A) == 0) return bad(msg, cap, "pc %u: call without arguments", at);
            pops = (int)DW_CALL_ARGC(A);
            break;
        }
        if (d < pops) return bad(msg, cap, "pc %u: %s needs %d values, stack has %d", at, oi->name, pops, d);
        int after = d - pops + oi->pushes;
        if (after > (int)pc->max_stack || d > (int)pc->max_stack)
            return bad(msg, cap, "pc %u: stack depth %d exceeds max_stack %u", at, after, pc->max_stack);
        /* successors */
        if (oi->kind == DW_OPK_JUMP || oi->kind == DW_OPK_JUMPK) {
            int taken = oi->kind == DW_OPK_JUMPK ? d : after;
            uint32_t t = A - entry;
            if (depth_at[t] != UNSEEN && depth_at[t] != taken)
                return bad(msg, cap, "pc %u: stack depth %d at jump target %u disagrees with %d", at, taken, A, depth_at[t]);
            depth_at[t] = taken;
        }
        if (op == DW_OP_RET) {
            if (d != 1) return bad(msg, cap, "pc %u: RET with stack depth %d (expected 1)", at, d);
            continue;
        }
        if (op == DW_OP_JUMP) continue;
        if (i + 1 >= n) return bad(msg, cap, "pc %u: code falls off the end of policy %u", at, k);
        if (depth_at[i + 1] != UNSEEN && depth_at[i + 1] != after)
            return bad(msg, cap, "pc %u: stack depth %d disagrees with %d at the next instruction", at, after, depth_at[i + 1]);
        depth_at[i + 1] = after;
    }
    return 0;
}

int dw_program_verify(const dw_program *p, char *msg, size_t cap)
{
    if (p->ncode && !p->code) return bad(msg, cap, "missing code section");
    for (uint32_t i = 0; i < p->nkeylists; i++) {
        const dw_keylist *kl = &p->keylists[i];
        if (kl->first > p->nkeyidx || kl->n > p->nkeyidx - kl->first) return bad(msg, cap, "key list %u out of range", i);
        for (uint32_t j = 0; j < kl->n; j++)
            if (p->keyidx[kl->first + j] >= p->nstrs) return bad(msg, cap, "key list %u names string out of range", i);
    }
    uint32_t longest = 0;
    for (uint32_t k = 0; k < p->npolicies; k++) {
        const dw_policy_code *pc = &p->policies[k];
        /* ranges are checked in verify_policy; size the scratch from valid ones only */
        if (pc->entry < pc->end && pc->end <= p->ncode && pc->end - pc->entry > longest) longest = pc->end - pc->entry;
        if (pc->nleaves && pc->scope_entry < pc->scope_end && pc->scope_end <= p->ncode &&
            pc->scope_end - pc->scope_entry > longest) longest = pc->scope_end - pc->scope_entry;
    }
    int *depth_at = malloc(((size_t)longest + 1) * sizeof *depth_at);
    if (!depth_at) return bad(msg, cap, "out of memory");
    int rc = 0;
    for (uint32_t k = 0; k < p->npolicies && rc == 0; k++) rc = verify_policy(p, k, depth_at, msg, cap);
    free(depth_at);
    return rc;
}
