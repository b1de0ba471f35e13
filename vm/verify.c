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

static int verify_range(const dw_program *p, uint32_t k, uint32_t entry, uint32_t end, uint32_t leaf_lo, uint32_t leaf_hi,
                        int *depth_at, char *msg, size_t cap);

static int verify_policy(const dw_program *p, uint32_t k, int *depth_at, char *msg, size_t cap)
{
    const dw_policy_code *pc = &p->policies[k];
    if (pc->max_stack > p->max_stack)
        return bad(msg, cap, "policy %u: max_stack %u exceeds the program's %u", k, pc->max_stack, p->max_stack);
    if (pc->effect > DW_EFFECT_FORBID) return bad(msg, cap, "policy %u: bad effect %u", k, pc->effect);
    if (pc->first_leaf > p->temporal.nleaves || pc->nleaves > p->temporal.nleaves - pc->first_leaf)
        return bad(msg, cap, "policy %u: temporal leaves out of range", k);
    for (uint32_t l = pc->first_leaf; l < pc->first_leaf + pc->nleaves; l++)
        if (p->temporal.leaves[l].policy != k) return bad(msg, cap, "policy %u: temporal leaf %u belongs to policy %u", k, l, p->temporal.leaves[l].policy);
    /* the policy's code may read only its own leaves; its scope code none
     * (the engine runs the scope before evaluating any leaf) */
    if (dw_provider_verify_policy(p, k, msg, cap)) return -1;
    if (verify_range(p, k, pc->entry, pc->end, pc->first_leaf, pc->first_leaf + pc->nleaves, depth_at, msg, cap)) return -1;
    if (pc->nleaves || pc->npcalls) return verify_range(p, k, pc->scope_entry, pc->scope_end, 0, 0, depth_at, msg, cap);
    return 0;
}

/* One straight-line, forward-jumping code range ending in RET. */
static int verify_range(const dw_program *p, uint32_t k, uint32_t entry, uint32_t end, uint32_t leaf_lo, uint32_t leaf_hi,
                        int *depth_at, char *msg, size_t cap)
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
        case DW_OPK_PATH:   /* a `has` path of one name is HAS */
            if (A >= p->nkeylists || p->keylists[A].n < 2) return bad(msg, cap, "pc %u: has-path key list %u out of range or shorter than 2", at, A);
            break;
        case DW_OPK_LEAF:
            if (A >= p->temporal.nleaves || A < leaf_lo || A >= leaf_hi)
                return bad(msg, cap, "pc %u: temporal leaf %u out of range (policy %u owns [%u, %u))", at, A, k, leaf_lo, leaf_hi);
            break;
        case DW_OPK_PROV:   /* only the policy's own call sites, and not from its scope-only code */
            if (entry != pc->entry || A < pc->first_pcall || A - pc->first_pcall >= pc->npcalls)
                return bad(msg, cap, "pc %u: provider call %u out of range (policy %u owns [%u, %u))", at, A, k,
                           pc->first_pcall, pc->first_pcall + pc->npcalls);
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

/* ---------------------------------------------------------------- temporal tables
 *
 * One linear pass proves what vm/teval.c relies on:
 *  - every index in range (formulas, patterns, terms, targs, aggregates,
 *    aggvars, strings, constants) and every kind/op known;
 *  - children before parents: a formula's sub-formulas have smaller indices,
 *    an array's element terms too, and every formula a formula's terms reach
 *    (through aggregate bodies) is smaller than the formula.  So no cycles;
 *  - nesting depth (formula and term nodes along any path) <= DW_VERIFY_MAX_TDEPTH;
 *  - windows >= 0; every slot < its leaf's nvars <= DW_TEMPORAL_MAX_VARS;
 *  - each leaf's reach covers the windows under it (history retention).
 * Terms are visited in order of the largest formula they reach, interleaved
 * with the formulas, so each node is finished before any parent reads it. */
#define DW_VERIFY_MAX_TDEPTH 256
#define NONE_F UINT32_MAX

typedef struct tnode { uint32_t depth; uint32_t need; int64_t reach; } tnode;   /* need: highest slot + 1 */

static int64_t sat_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }
static void fold(tnode *x, const tnode *c)
{
    if (c->depth + 1 > x->depth) x->depth = c->depth + 1;
    if (c->need > x->need) x->need = c->need;
    if (c->reach > x->reach) x->reach = c->reach;
}

typedef struct tver {
    const dw_program *p;
    const dw_temporal_tables *t;
    tnode *fn, *tn;
    uint32_t *mf;            /* per term: largest formula it reaches, NONE_F if none */
    char *msg; size_t cap;
} tver;

static int slot_need(tver *V, uint32_t slot, tnode *x, const char *what, uint32_t i)
{
    if (slot >= DW_TEMPORAL_MAX_VARS) return bad(V->msg, V->cap, "temporal %s %u: slot %u out of range", what, i, slot);
    if (slot + 1 > x->need) x->need = slot + 1;
    return 0;
}

static int check_term(tver *V, uint32_t ti)
{
    const dw_temporal_tables *t = V->t;
    const dw_tterm *tt = &t->tterms[ti];
    tnode x = { 1, 0, 0 };
    switch ((dw_tt_kind)tt->kind) {
    case DW_TT_CONST: if (tt->a >= V->p->nconsts) return bad(V->msg, V->cap, "temporal term %u: constant %u out of range", ti, tt->a); break;
    case DW_TT_VAR: if (slot_need(V, tt->a, &x, "term", ti)) return -1; break;
    case DW_TT_CONTEXT: case DW_TT_PRINCIPAL: case DW_TT_RESOURCE:
        if (tt->a >= V->p->nstrs) return bad(V->msg, V->cap, "temporal term %u: string %u out of range", ti, tt->a);
        break;
    case DW_TT_WILD: break;
    case DW_TT_ARRAY:
        for (uint32_t k = 0; k < tt->n; k++) fold(&x, &V->tn[t->targs[tt->a + k]]);
        break;
    case DW_TT_COUNT: case DW_TT_SUM: {
        const dw_tagg *g = &t->taggs[tt->a];
        fold(&x, &V->fn[g->body]);
        for (uint32_t k = 0; k < g->nvars; k++) if (slot_need(V, t->aggvars[g->first_var + k], &x, "aggregate", tt->a)) return -1;
        if (tt->kind == DW_TT_SUM && slot_need(V, g->sum_var, &x, "aggregate", tt->a)) return -1;
        break;
    }
    default: return bad(V->msg, V->cap, "temporal term %u: unknown kind %u", ti, tt->kind);
    }
    if (x.depth > DW_VERIFY_MAX_TDEPTH) return bad(V->msg, V->cap, "temporal term %u nested deeper than %u", ti, DW_VERIFY_MAX_TDEPTH);
    V->tn[ti] = x;
    return 0;
}

static int term_before(tver *V, uint32_t fi, uint32_t ti, tnode *x)
{
    if (ti >= V->t->ntterms) return bad(V->msg, V->cap, "temporal formula %u: term %u out of range", fi, ti);
    if (V->mf[ti] != NONE_F && V->mf[ti] >= fi) return bad(V->msg, V->cap, "temporal formula %u: term %u reaches formula %u, not stored before it", fi, ti, V->mf[ti]);
    fold(x, &V->tn[ti]);
    return 0;
}

static int child_before(tver *V, uint32_t fi, uint32_t c, tnode *x)
{
    if (c >= fi) return bad(V->msg, V->cap, "temporal formula %u: sub-formula %u is not stored before it", fi, c);
    fold(x, &V->fn[c]);
    return 0;
}

static int check_formula(tver *V, uint32_t fi)
{
    const dw_temporal_tables *t = V->t;
    const dw_program *p = V->p;
    const dw_tf *f = &t->tfs[fi];
    tnode x = { 1, 0, 0 };
    switch ((dw_tf_kind)f->kind) {
    case DW_TF_PRED:
        if (f->type_str >= p->nstrs || f->id_str >= p->nstrs || f->kind_str >= p->nstrs)
            return bad(V->msg, V->cap, "temporal formula %u: string out of range", fi);
        if (f->n > t->ntpatterns || f->first > t->ntpatterns - f->n) return bad(V->msg, V->cap, "temporal formula %u: patterns out of range", fi);
        for (uint32_t k = 0; k < f->n; k++) {
            const dw_tpattern *pt = &t->tpatterns[f->first + k];
            if (pt->path_str >= p->nstrs) return bad(V->msg, V->cap, "temporal formula %u: path string out of range", fi);
            if (term_before(V, fi, pt->term, &x)) return -1;
        }
        break;
    case DW_TF_AND: case DW_TF_SINCE:
        if (child_before(V, fi, f->a, &x) || child_before(V, fi, f->b, &x)) return -1;
        break;
    case DW_TF_NOT: case DW_TF_FORMERLY: case DW_TF_PREVIOUS: case DW_TF_EXISTS:
        if (child_before(V, fi, f->a, &x)) return -1;
        if (f->kind == DW_TF_EXISTS && slot_need(V, f->var, &x, "formula", fi)) return -1;
        break;
    case DW_TF_TP:
        if (slot_need(V, f->var, &x, "formula", fi)) return -1;
        break;
    case DW_TF_CMP:
        if (f->op > DW_TC_OP_GE) return bad(V->msg, V->cap, "temporal formula %u: unknown comparison %u", fi, f->op);
        if (term_before(V, fi, f->a, &x) || term_before(V, fi, f->b, &x)) return -1;
        break;
    default: return bad(V->msg, V->cap, "temporal formula %u: unknown kind %u", fi, f->kind);
    }
    if (f->kind == DW_TF_FORMERLY || f->kind == DW_TF_PREVIOUS || f->kind == DW_TF_SINCE) {
        if (f->window < 0) return bad(V->msg, V->cap, "temporal formula %u: negative window", fi);
        x.reach = sat_add(x.reach, f->window);
    }
    if (x.depth > DW_VERIFY_MAX_TDEPTH) return bad(V->msg, V->cap, "temporal formula %u nested deeper than %u", fi, DW_VERIFY_MAX_TDEPTH);
    V->fn[fi] = x;
    return 0;
}

static int verify_temporal(const dw_program *p, char *msg, size_t cap)
{
    const dw_temporal_tables *t = &p->temporal;
    if (!t->ntfs && !t->ntterms && !t->nleaves && !t->ntaggs && !t->ntpatterns && !t->ntargs && !t->naggvars) return 0;
    if ((t->ntfs && !t->tfs) || (t->ntterms && !t->tterms) || (t->nleaves && !t->leaves) || (t->ntaggs && !t->taggs) ||
        (t->ntpatterns && !t->tpatterns) || (t->ntargs && !t->targs) || (t->naggvars && !t->aggvars))
        return bad(msg, cap, "temporal tables missing");
    tver V = { .p = p, .t = t, .msg = msg, .cap = cap };
    /* aggregates: ranges */
    for (uint32_t g = 0; g < t->ntaggs; g++) {
        const dw_tagg *a = &t->taggs[g];
        if (a->body >= t->ntfs) return bad(msg, cap, "temporal aggregate %u: body %u out of range", g, a->body);
        if (a->nvars > t->naggvars || a->first_var > t->naggvars - a->nvars) return bad(msg, cap, "temporal aggregate %u: variables out of range", g);
    }
    int rc = -1;
    size_t nt = t->ntterms, nf = t->ntfs;
    V.fn = malloc((nf + 1) * sizeof *V.fn);
    V.tn = malloc((nt + 1) * sizeof *V.tn);
    V.mf = malloc((nt + 1) * sizeof *V.mf);
    uint32_t *bstart = calloc(nf + 2, sizeof *bstart), *order = malloc((nt + 1) * sizeof *order);
    if (!V.fn || !V.tn || !V.mf || !bstart || !order) { bad(msg, cap, "out of memory"); goto out; }
    /* terms: structure, and the largest formula each reaches */
    for (uint32_t ti = 0; ti < nt; ti++) {
        const dw_tterm *tt = &t->tterms[ti];
        uint32_t m = NONE_F;
        if (tt->kind == DW_TT_ARRAY) {
            if (tt->n > t->ntargs || tt->a > t->ntargs - tt->n) { bad(msg, cap, "temporal term %u: elements out of range", ti); goto out; }
            for (uint32_t k = 0; k < tt->n; k++) {
                uint32_t c = t->targs[tt->a + k];
                if (c >= ti) { bad(msg, cap, "temporal term %u: element %u is not stored before it", ti, c); goto out; }
                if (V.mf[c] != NONE_F && (m == NONE_F || V.mf[c] > m)) m = V.mf[c];
            }
        } else if (tt->kind == DW_TT_COUNT || tt->kind == DW_TT_SUM) {
            if (tt->a >= t->ntaggs) { bad(msg, cap, "temporal term %u: aggregate %u out of range", ti, tt->a); goto out; }
            m = t->taggs[tt->a].body;    /* everything under the body is smaller still */
        }
        V.mf[ti] = m;
        bstart[(m == NONE_F ? 0 : (size_t)m + 1) + 1]++;
    }
    /* bucket terms by mf + 1 (0: reach no formula), index order within a bucket */
    for (size_t b = 1; b <= nf + 1; b++) bstart[b] += bstart[b - 1];
    for (uint32_t ti = 0; ti < nt; ti++) {
        size_t b = V.mf[ti] == NONE_F ? 0 : (size_t)V.mf[ti] + 1;
        order[bstart[b]++] = ti;
    }
    /* bstart[b] is now the end of bucket b */
    uint32_t done = 0;
    for (; done < (nf + 1 > 0 ? bstart[0] : 0); done++) if (check_term(&V, order[done])) goto out;
    for (uint32_t fi = 0; fi < nf; fi++) {
        if (check_formula(&V, fi)) goto out;
        for (; done < bstart[(size_t)fi + 1]; done++) if (check_term(&V, order[done])) goto out;
    }
    /* leaves */
    for (uint32_t l = 0; l < t->nleaves; l++) {
        const dw_tleaf *lf = &t->leaves[l];
        if (lf->root >= nf) { bad(msg, cap, "temporal leaf %u: root %u out of range", l, lf->root); goto out; }
        if (lf->policy >= p->npolicies) { bad(msg, cap, "temporal leaf %u: policy %u out of range", l, lf->policy); goto out; }
        if (lf->nvars > DW_TEMPORAL_MAX_VARS) { bad(msg, cap, "temporal leaf %u: %u variables", l, lf->nvars); goto out; }
        if (V.fn[lf->root].need > lf->nvars) { bad(msg, cap, "temporal leaf %u: slot %u out of range (%u variables)", l, V.fn[lf->root].need - 1, lf->nvars); goto out; }
        if (lf->reach < V.fn[lf->root].reach) { bad(msg, cap, "temporal leaf %u: reach %lld is shorter than its windows", l, (long long)lf->reach); goto out; }
        if (lf->reach > p->max_reach) { bad(msg, cap, "temporal leaf %u: reach exceeds the program's", l); goto out; }
    }
    rc = 0;
out:
    free(V.fn); free(V.tn); free(V.mf); free(bstart); free(order);
    return rc;
}

/* ---------------------------------------------------------------- index dominance
 *
 * The index may skip a policy only where its scope is false.  A policy's
 * scope code (compiler/compile.c, compile_scope) is a run of conjuncts, each
 *   VAR v; CONST uid; EQ|IN        (v ==/in E)
 *   VAR v; CONST set; IN           (action in [A, B, ...])
 *   VAR v; IS s                    (v is T)
 * followed by AND jumping to a RET (false ends the policy) or by the RET
 * itself.  A conjunct certifies the policy's entries when every key it needs
 * is filed for the policy: ENTITY(v, E) for an entity test, one ENTITY(v, A)
 * per element of a set (none for the empty set: that scope matches nothing),
 * TYPE(v, T) for `is`.  An ALWAYS entry certifies anything.  Only conjuncts
 * after error-free ones count: the index may skip a false scope, not an
 * erroring one (errors are reported). */
static bool bytes_eq(dw_str a, const char *s, size_t n) { return a.len == n && (n == 0 || memcmp(a.s, s, n) == 0); }

static bool has_entry(const dw_program *p, const dw_index_entry *es, uint32_t n, uint8_t kind, uint8_t var,
                      const char *type, size_t tlen, const char *id, size_t idlen)
{
    for (uint32_t i = 0; i < n; i++) {
        const dw_index_entry *e = &es[i];
        if (e->kind != kind || e->var != var || e->type_str >= p->nstrs || !bytes_eq(p->strs[e->type_str], type, tlen)) continue;
        if (kind == DW_IX_TYPE) return true;
        if (e->id_str < p->nstrs && bytes_eq(p->strs[e->id_str], id, idlen)) return true;
    }
    return false;
}

static bool entity_filed(const dw_program *p, const dw_index_entry *es, uint32_t n, uint8_t var, const dw_value *v)
{
    return v->kind == DW_V_ENTITY && has_entry(p, es, n, DW_IX_ENTITY, var, v->u.uid->type, v->u.uid->tlen, v->u.uid->id, v->u.uid->idlen);
}

static bool pair_filed(const dw_program *p, const dw_index_entry *es, uint32_t n, uint8_t var,
                       const dw_uid *a, const dw_uid *x)
{
    for (uint32_t i = 0; i < n; i++) {
        const dw_index_entry *e = &es[i];
        if (e->kind != DW_IX_PAIR || e->var != var || e->type_str >= p->nstrs || e->id_str >= p->nstrs ||
            e->act_type_str >= p->nstrs || e->act_id_str >= p->nstrs) continue;
        if (bytes_eq(p->strs[e->type_str], x->type, x->tlen) && bytes_eq(p->strs[e->id_str], x->id, x->idlen) &&
            bytes_eq(p->strs[e->act_type_str], a->type, a->tlen) && bytes_eq(p->strs[e->act_id_str], a->id, a->idlen))
            return true;
    }
    return false;
}

/* One scope conjunct as the verifier reads it back from the code. */
typedef struct conjunct { uint8_t var; bool is_type; uint32_t type_str; const dw_value *v; } conjunct;

static bool policy_certified(const dw_program *p, uint32_t k, const dw_index_entry *es, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) if (es[i].kind == DW_IX_ALWAYS) return true;
    const dw_policy_code *pc = &p->policies[k];
    uint32_t at = pc->entry, end = pc->end;
    conjunct cj[8];
    uint32_t nc = 0;
    while (at + 2 <= end && nc < 8) {
        uint32_t i0 = p->code[at], i1 = p->code[at + 1];
        if (DW_INS_OP(i0) != DW_OP_VAR || DW_INS_A(i0) > 2) break;
        conjunct c = { (uint8_t)DW_INS_A(i0), false, 0, NULL };
        uint32_t next;
        if (DW_INS_OP(i1) == DW_OP_IS) {
            if (DW_INS_A(i1) >= p->nstrs) return false;
            c.is_type = true;
            c.type_str = DW_INS_A(i1);
            next = at + 2;
        } else if (DW_INS_OP(i1) == DW_OP_CONST && at + 3 <= end) {
            uint32_t ci = DW_INS_A(i1), op = DW_INS_OP(p->code[at + 2]);
            if (ci >= p->nconsts) return false;
            c.v = &p->consts[ci];
            if (!(op == DW_OP_EQ || (op == DW_OP_IN && (c.v->kind == DW_V_ENTITY || c.v->kind == DW_V_SET)))) break;
            next = at + 3;
        } else break;
        if (next >= end) break;
        uint32_t after = p->code[next];
        bool conj = DW_INS_OP(after) == DW_OP_RET ||
                    (DW_INS_OP(after) == DW_OP_AND && DW_INS_A(after) < end && DW_INS_OP(p->code[DW_INS_A(after)]) == DW_OP_RET);
        if (!conj) break;
        cj[nc++] = c;
        if (DW_INS_OP(after) == DW_OP_RET) break;
        /* `v in [.., x, ..]` with a non-entity x raises an error instead of
         * being false (the compiler never writes one; a hostile file can):
         * a later conjunct cannot certify, the index would skip an error */
        bool may_err = false;
        if (c.v && c.v->kind == DW_V_SET)
            for (uint32_t e = 0; e < c.v->n; e++) may_err |= c.v->u.elems[e].kind != DW_V_ENTITY;
        if (may_err) break;
        at = next + 1;
    }
    /* a conjunct filed on its own certifies the policy */
    for (uint32_t i = 0; i < nc; i++) {
        const conjunct *c = &cj[i];
        bool filed;
        if (c->is_type) filed = has_entry(p, es, n, DW_IX_TYPE, c->var, p->strs[c->type_str].s, p->strs[c->type_str].len, NULL, 0);
        else if (c->v->kind == DW_V_SET) {
            filed = true;
            for (uint32_t e = 0; e < c->v->n && filed; e++) filed = entity_filed(p, es, n, c->var, &c->v->u.elems[e]);
        } else filed = entity_filed(p, es, n, c->var, c->v);
        if (filed) return true;
    }
    /* so does an action conjunct paired, element by element, with an entity conjunct */
    for (uint32_t i = 0; i < nc; i++) {
        const conjunct *a = &cj[i];
        if (a->var != 1 || a->is_type) continue;
        for (uint32_t j = 0; j < nc; j++) {
            const conjunct *x = &cj[j];
            if (x->var == 1 || x->is_type || x->v->kind != DW_V_ENTITY) continue;
            bool filed = true;
            /* `action == "s"` (EQ takes any constant; a hostile file can hold one) is neither */
            if (a->v->kind == DW_V_ENTITY) filed = pair_filed(p, es, n, x->var, a->v->u.uid, x->v->u.uid);
            else if (a->v->kind != DW_V_SET) filed = false;
            else for (uint32_t e = 0; e < a->v->n && filed; e++)
                filed = a->v->u.elems[e].kind == DW_V_ENTITY && pair_filed(p, es, n, x->var, a->v->u.elems[e].u.uid, x->v->u.uid);
            if (filed) return true;
        }
    }
    return false;
}

static int verify_index(const dw_program *p, char *msg, size_t cap)
{
    uint32_t np = p->npolicies;
    uint32_t *start = calloc((size_t)np + 2, sizeof *start);
    dw_index_entry *by = malloc(((size_t)p->nixents + 1) * sizeof *by);
    int rc = -1;
    if (!start || !by) { bad(msg, cap, "out of memory"); goto out; }
    for (uint32_t i = 0; i < p->nixents; i++) {
        const dw_index_entry *e = &p->ixents[i];
        if (e->policy >= np) { bad(msg, cap, "index entry %u names policy %u, which does not exist", i, e->policy); goto out; }
        start[e->policy + 1]++;
    }
    for (uint32_t k = 0; k < np; k++) start[k + 1] += start[k];
    for (uint32_t i = 0; i < p->nixents; i++) by[start[p->ixents[i].policy]++] = p->ixents[i];
    /* start[k] is now the end of policy k's run */
    for (uint32_t k = 0; k < np; k++) {
        uint32_t first = k ? start[k - 1] : 0;
        if (!policy_certified(p, k, by + first, start[k] - first)) { bad(msg, cap, "index omits policy %u", k); goto out; }
    }
    rc = 0;
out:
    free(start); free(by);
    return rc;
}

/* ---------------------------------------------------------------- provider tables
 * (vm/provider.h): every index in range; types refer only to earlier types,
 * so the conformance check of a result (vm/provider.c) always terminates. */
static bool run_ok(uint32_t first, uint32_t n, uint32_t total) { return first <= total && n <= total - first; }

int dw_provider_verify(const dw_program *p, char *msg, size_t cap)
{
    const dw_provider_tables *t = &p->provider;
    for (uint32_t i = 0; i < t->ntypes; i++) {
        const dw_ptype *y = &t->types[i];
        switch (y->kind) {
        case DW_V_BOOL: case DW_V_LONG: case DW_V_STRING: case DW_V_DECIMAL: break;
        case DW_V_SET: if (y->elem >= i) return bad(msg, cap, "provider type %u: element type %u not before it", i, y->elem); break;
        case DW_V_RECORD:
            if (!run_ok(y->first_field, y->nfields, t->nfields)) return bad(msg, cap, "provider type %u: fields out of range", i);
            for (uint32_t f = 0; f < y->nfields; f++) {
                const dw_pfield *d = &t->fields[y->first_field + f];
                if (d->name >= p->nstrs || d->type >= i || d->required > 1)
                    return bad(msg, cap, "provider type %u: field %u malformed (name, type before it, flag)", i, f);
            }
            break;
        default: return bad(msg, cap, "provider type %u: unknown kind %u", i, y->kind);
        }
    }
    for (uint32_t i = 0; i < t->nsegs; i++)
        if (t->segs[i] >= p->nstrs) return bad(msg, cap, "provider path segment %u: string out of range", i);
    for (uint32_t i = 0; i < t->nargs; i++) {
        const dw_parg *g = &t->args[i];
        if (g->kind > DW_PARG_RESOURCE) return bad(msg, cap, "provider argument %u: unknown kind %u", i, g->kind);
        if (g->kind == DW_PARG_CONST ? g->a >= p->nconsts || g->n : !run_ok(g->a, g->n, t->nsegs) || (g->kind == DW_PARG_CONTEXT && !g->n))
            return bad(msg, cap, "provider argument %u: operand out of range", i);
    }
    for (uint32_t i = 0; i < t->nsteps; i++) {
        const dw_pstep *s = &t->steps[i];
        if (s->name >= p->nstrs || !run_ok(s->first_arg, s->nargs, t->nargs) || s->out >= t->ntypes)
            return bad(msg, cap, "provider step %u: operand out of range", i);
    }
    uint64_t owned = 0;
    for (uint32_t i = 0; i < t->ncalls; i++) {
        const dw_pcall *c = &t->calls[i];
        if (c->policy >= p->npolicies || (i && c->policy < t->calls[i - 1].policy))
            return bad(msg, cap, "provider call %u: policy %u out of order or range", i, c->policy);
        if (!c->nsteps || !run_ok(c->first_step, c->nsteps, t->nsteps)) return bad(msg, cap, "provider call %u: steps out of range", i);
    }
    for (uint32_t k = 0; k < p->npolicies; k++) owned += p->policies[k].npcalls;
    if (owned != t->ncalls) return bad(msg, cap, "provider calls not owned by exactly one policy");
    return 0;
}

int dw_provider_verify_policy(const dw_program *p, uint32_t k, char *msg, size_t cap)
{
    const dw_policy_code *pc = &p->policies[k];
    const dw_provider_tables *t = &p->provider;
    if (!run_ok(pc->first_pcall, pc->npcalls, t->ncalls)) return bad(msg, cap, "policy %u: provider calls out of range", k);
    for (uint32_t i = pc->first_pcall; i < pc->first_pcall + pc->npcalls; i++)
        if (t->calls[i].policy != k) return bad(msg, cap, "policy %u: provider call %u belongs to policy %u", k, i, t->calls[i].policy);
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
        if ((pc->nleaves || pc->npcalls) && pc->scope_entry < pc->scope_end && pc->scope_end <= p->ncode &&
            pc->scope_end - pc->scope_entry > longest) longest = pc->scope_end - pc->scope_entry;
    }
    int *depth_at = malloc(((size_t)longest + 1) * sizeof *depth_at);
    if (!depth_at) return bad(msg, cap, "out of memory");
    int rc = 0;
    uint64_t owned = 0;
    for (uint32_t k = 0; k < p->npolicies && rc == 0; k++) {
        rc = verify_policy(p, k, depth_at, msg, cap);
        owned += p->policies[k].nleaves;
    }
    free(depth_at);
    if (rc) return rc;
    if (owned != p->temporal.nleaves) return bad(msg, cap, "temporal leaves not owned by exactly one policy");
    if (verify_temporal(p, msg, cap)) return -1;
    if (dw_provider_verify(p, msg, cap)) return -1;
    return verify_index(p, msg, cap);
}
