/* scope_prefix.c - which index postings may start a policy after its scope.
 *
 * A policy's code opens with its scope tests, each one of
 *
 *     VAR v; CONST K; EQ|IN; AND -> ...      (v principal, action or resource)
 *     VAR v; IS "T"; AND -> ...
 *
 * When such a test is true, the AND pops it and falls through, so running
 * the code from just after the last of them, with an empty stack, gives the
 * same result as running it whole.  A bucket probed with the request's own
 * uid (dw_authorize's candidates: never through an ancestor) tells that the
 * variable's uid is the bucket's key, and that makes a test true when
 *
 *     EQ  K is that entity;
 *     IN  K is that entity, or a set of entities holding it (an `in` against
 *         another entity depends on the store's ancestors: not implied);
 *     IS  T is the key's type.
 *
 * A posting is marked DW_IX_IMPLIED only when its bucket implies every test
 * of the prefix (index.body[policy] is the pc after them) and, for a policy
 * with scope-only code (temporal leaves, provider calls), all of that code:
 * the leaf pass (vm/leaves.c) then takes the scope as true without running it.  Like the guards,
 * this is read off verified code at load time, never from an artifact. */
#include "vm.h"
#include "../stdlib/bytes.h"

static bool str_is(const dw_str *a, const char *s, size_t n)
{
    return a->len == n && dw_mem_eq(a->s, s, n);
}

static bool uid_is_key(const dw_uid *u, const dw_str *type, const dw_str *id)
{
    return str_is(type, u->type, u->tlen) && str_is(id, u->id, u->idlen);
}

/* One scope test at pc ending in `last` (AND; RET in scope-only code): its
 * length in instructions (0: not one). */
static uint32_t test_len_to(const dw_program *p, uint32_t pc, uint32_t end, dw_opcode last)
{
    const uint32_t *c = p->code;
    if (pc + 3 > end || DW_INS_OP(c[pc]) != DW_OP_VAR || DW_INS_A(c[pc]) > DW_VAR_R) return 0;
    if (DW_INS_OP(c[pc + 1]) == DW_OP_IS && DW_INS_OP(c[pc + 2]) == last) return 3;
    if (pc + 4 > end || DW_INS_OP(c[pc + 1]) != DW_OP_CONST) return 0;
    dw_opcode op = DW_INS_OP(c[pc + 2]);
    return (op == DW_OP_EQ || op == DW_OP_IN) && DW_INS_OP(c[pc + 3]) == last ? 4 : 0;
}

static uint32_t test_len(const dw_program *p, uint32_t pc, uint32_t end)
{
    return test_len_to(p, pc, end, DW_OP_AND);
}

uint32_t dw_scope_prefix_end(const dw_program *p, uint32_t policy)
{
    const dw_policy_code *pc = &p->policies[policy];
    uint32_t at = pc->entry, n;
    while ((n = test_len(p, at, pc->end)) != 0) at += n;
    return at;
}

/* Does bucket b, probed exactly, make the test at pc true? */
static bool test_implied(const dw_program *p, uint32_t pc, const dw_index_bucket *b)
{
    const uint32_t *c = p->code;
    uint32_t var = DW_INS_A(c[pc]);
    const dw_str *type, *id = NULL;      /* the key's uid for var (id NULL: only its type) */
    if (b->kind == DW_IX_PAIR && var == DW_VAR_A) type = &b->atype, id = &b->aid;
    else if (b->kind == DW_IX_ENTITY && b->var == var) type = &b->type, id = &b->id;
    else if (b->kind == DW_IX_PAIR && b->var == var) type = &b->type, id = &b->id;
    else if (b->kind == DW_IX_TYPE && b->var == var) type = &b->type;
    else return false;
    if (DW_INS_OP(c[pc + 1]) == DW_OP_IS) {
        const dw_str *t = &p->strs[DW_INS_A(c[pc + 1])];
        return str_is(type, t->s, t->len);
    }
    if (!id) return false;
    const dw_value *k = &p->consts[DW_INS_A(c[pc + 1])];
    if (k->kind == DW_V_ENTITY) return uid_is_key(k->u.uid, type, id);
    if (k->kind != DW_V_SET || DW_INS_OP(c[pc + 2]) != DW_OP_IN) return false;
    bool found = false;
    for (uint32_t i = 0; i < k->n; i++) {
        if (k->u.elems[i].kind != DW_V_ENTITY) return false;     /* IN would be a type error */
        if (uid_is_key(k->u.elems[i].u.uid, type, id)) found = true;
    }
    return found;
}

/* The scope-only code of a policy with temporal leaves or provider calls
 * ([scope_entry, scope_end): the tests, the last ending in RET, or
 * `CONST true; RET`) is true whenever bucket b implies all of it. */
static bool scope_code_implied(const dw_program *p, const dw_policy_code *pc, const dw_index_bucket *b)
{
    uint32_t at = pc->scope_entry, end = pc->scope_end, n;
    while ((n = test_len(p, at, end)) != 0) {
        if (!test_implied(p, at, b)) return false;
        at += n;
    }
    if ((n = test_len_to(p, at, end, DW_OP_RET)) != 0) return at + n == end && test_implied(p, at, b);
    if (at + 2 != end || DW_INS_OP(p->code[at]) != DW_OP_CONST || DW_INS_OP(p->code[at + 1]) != DW_OP_RET) return false;
    const dw_value *k = &p->consts[DW_INS_A(p->code[at])];
    return k->kind == DW_V_BOOL && k->u.b;
}

bool dw_scope_prefix_implied(const dw_program *p, uint32_t policy, const dw_index_bucket *b)
{
    const dw_policy_code *pc = &p->policies[policy];
    uint32_t at = pc->entry, n;
    while ((n = test_len(p, at, pc->end)) != 0) {
        if (!test_implied(p, at, b)) return false;
        at += n;
    }
    return !(pc->nleaves || pc->npcalls) || scope_code_implied(p, pc, b);
}
