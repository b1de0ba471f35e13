/* interp.c - the dispatch loop.  One switch, read top to bottom; every
 * operand was checked by the verifier or produced by the compiler, so the
 * loop checks only value types (Cedar's dynamic type errors). */
#include "vm.h"
#include <string.h>
#include "ext_spelling.h"
#include "../stdlib/bytes.h"
#include "../stdlib/like_find.h"
#include "../stdlib/hot.h"

const char *dw_eval_status_name(dw_eval_status s)
{
    switch (s) {
    case DW_EVAL_OK: return "ok";
    case DW_ERR_TYPE: return "type error";
    case DW_ERR_ARITY: return "wrong number of arguments";
    case DW_ERR_MISSING_ATTR: return "missing attribute";
    case DW_ERR_NO_ENTITY: return "entity does not exist";
    case DW_ERR_MISSING_TAG: return "missing tag";
    case DW_ERR_OVERFLOW: return "integer overflow";
    case DW_ERR_EXTENSION: return "extension error";
    case DW_ERR_OOM: return "out of memory";
    case DW_ERR_INTERNAL: return "internal error";
    }
    return "?";
}

#define FAIL(st, detail) do { cx->err_pc = pc - 1; cx->err_detail = (detail); cx->err_depth = (uint32_t)(sp - cx->stack); return (st); } while (0)

static bool is_kind(const dw_value *v, dw_vkind k) { return v->kind == k; }

/* ---- extension calls ---- */
dw_eval_status dw_call_extfn(dw_arena *scratch, const dw_store *store, dw_extfn fn,
                             const dw_value *args, uint32_t argc, dw_value *out)
{
    if ((int)argc != dw_fninfo_table[fn].arity) return DW_ERR_ARITY;
    const dw_value *a = &args[0], *b = argc > 1 ? &args[1] : NULL;
    int64_t r;
    switch (fn) {
    case DW_FN_DECIMAL: case DW_FN_DATETIME: case DW_FN_DURATION: case DW_FN_IP:
        if (!is_kind(a, DW_V_STRING)) return DW_ERR_TYPE;
        if (fn == DW_FN_IP) {
            dw_ipaddr *ip = dw_arena_alloc(scratch, sizeof *ip);
            if (!ip) return DW_ERR_OOM;
            if (!dw_ip_parse(a->u.s, a->n, ip)) return DW_ERR_EXTENSION;
            out->kind = DW_V_IPADDR;
            out->n = dw_ext_spelling(DW_V_IPADDR, a->u.s, a->n);
            out->u.ip = ip;
            return DW_EVAL_OK;
        }
        if (!(fn == DW_FN_DECIMAL ? dw_decimal_parse(a->u.s, a->n, &r)
              : fn == DW_FN_DATETIME ? dw_datetime_parse(a->u.s, a->n, &r)
              : dw_duration_parse(a->u.s, a->n, &r)))
            return DW_ERR_EXTENSION;
        out->kind = fn == DW_FN_DECIMAL ? DW_V_DECIMAL : fn == DW_FN_DATETIME ? DW_V_DATETIME : DW_V_DURATION;
        out->n = dw_ext_spelling(out->kind, a->u.s, a->n);
        out->u.i = r;
        return DW_EVAL_OK;
    case DW_FN_LESS_THAN: case DW_FN_LESS_THAN_OR_EQUAL:
    case DW_FN_GREATER_THAN: case DW_FN_GREATER_THAN_OR_EQUAL:
        if (!is_kind(a, DW_V_DECIMAL) || !is_kind(b, DW_V_DECIMAL)) return DW_ERR_TYPE;
        *out = dw_bool(fn == DW_FN_LESS_THAN ? a->u.i < b->u.i
                       : fn == DW_FN_LESS_THAN_OR_EQUAL ? a->u.i <= b->u.i
                       : fn == DW_FN_GREATER_THAN ? a->u.i > b->u.i : a->u.i >= b->u.i);
        return DW_EVAL_OK;
    case DW_FN_IS_IPV4: case DW_FN_IS_IPV6: case DW_FN_IS_LOOPBACK: case DW_FN_IS_MULTICAST:
        if (!is_kind(a, DW_V_IPADDR)) return DW_ERR_TYPE;
        *out = dw_bool(fn == DW_FN_IS_IPV4 ? !a->u.ip->v6 : fn == DW_FN_IS_IPV6 ? a->u.ip->v6
                       : fn == DW_FN_IS_LOOPBACK ? dw_ip_is_loopback(a->u.ip) : dw_ip_is_multicast(a->u.ip));
        return DW_EVAL_OK;
    case DW_FN_IS_IN_RANGE:
        if (!is_kind(a, DW_V_IPADDR) || !is_kind(b, DW_V_IPADDR)) return DW_ERR_TYPE;
        *out = dw_bool(dw_ip_in_range(a->u.ip, b->u.ip));
        return DW_EVAL_OK;
    case DW_FN_OFFSET:
        if (!is_kind(a, DW_V_DATETIME) || !is_kind(b, DW_V_DURATION)) return DW_ERR_TYPE;
        if (!dw_datetime_offset(a->u.i, b->u.i, &r)) return DW_ERR_OVERFLOW;
        out->kind = DW_V_DATETIME; out->n = DW_SPELL_COMPUTED; out->u.i = r;
        return DW_EVAL_OK;
    case DW_FN_DURATION_SINCE:
        if (!is_kind(a, DW_V_DATETIME) || !is_kind(b, DW_V_DATETIME)) return DW_ERR_TYPE;
        if (!dw_datetime_duration_since(a->u.i, b->u.i, &r)) return DW_ERR_OVERFLOW;
        out->kind = DW_V_DURATION; out->n = DW_SPELL_COMPUTED; out->u.i = r;
        return DW_EVAL_OK;
    case DW_FN_TO_DATE:
        if (!is_kind(a, DW_V_DATETIME)) return DW_ERR_TYPE;
        if (!dw_datetime_to_date(a->u.i, &r)) return DW_ERR_OVERFLOW;
        out->kind = DW_V_DATETIME; out->n = DW_SPELL_COMPUTED; out->u.i = r;
        return DW_EVAL_OK;
    case DW_FN_TO_TIME:
        if (!is_kind(a, DW_V_DATETIME)) return DW_ERR_TYPE;
        out->kind = DW_V_DURATION; out->n = DW_SPELL_COMPUTED; out->u.i = dw_datetime_to_time(a->u.i);
        return DW_EVAL_OK;
    case DW_FN_TO_MILLISECONDS: case DW_FN_TO_SECONDS: case DW_FN_TO_MINUTES:
    case DW_FN_TO_HOURS: case DW_FN_TO_DAYS: {
        if (!is_kind(a, DW_V_DURATION)) return DW_ERR_TYPE;
        static const int64_t unit[] = { 1, 1000, 60000, 3600000, 86400000 };
        *out = dw_long(dw_duration_to(a->u.i, unit[fn - DW_FN_TO_MILLISECONDS]));
        return DW_EVAL_OK;
    }
    case DW_FN_CONTAINS:
        if (!is_kind(a, DW_V_SET)) return DW_ERR_TYPE;
        *out = dw_bool(dw_set_contains(a, b));
        return DW_EVAL_OK;
    case DW_FN_CONTAINS_ALL: case DW_FN_CONTAINS_ANY: {
        if (!is_kind(a, DW_V_SET) || !is_kind(b, DW_V_SET)) return DW_ERR_TYPE;
        bool all = true, any = false;
        for (uint32_t i = 0; i < b->n; i++) {
            if (dw_set_contains(a, &b->u.elems[i])) any = true; else all = false;
        }
        *out = dw_bool(fn == DW_FN_CONTAINS_ALL ? all : any);
        return DW_EVAL_OK;
    }
    case DW_FN_IS_EMPTY:
        if (!is_kind(a, DW_V_SET)) return DW_ERR_TYPE;
        *out = dw_bool(a->n == 0);
        return DW_EVAL_OK;
    case DW_FN_GET_TAG: case DW_FN_HAS_TAG: {
        if (!is_kind(a, DW_V_ENTITY) || !is_kind(b, DW_V_STRING)) return DW_ERR_TYPE;
        const dw_entity *e = dw_store_get(store, a->u.uid);
        const dw_value *t = e ? dw_record_get(&e->tags, b->u.s, b->n) : NULL;
        if (fn == DW_FN_HAS_TAG) { *out = dw_bool(t != NULL); return DW_EVAL_OK; }
        if (!e) return DW_ERR_NO_ENTITY;
        if (!t) return DW_ERR_MISSING_TAG;
        *out = *t;
        return DW_EVAL_OK;
    }
    default:
        return DW_ERR_INTERNAL;
    }
}

/* The store entry of uid u: the request's scope entities were resolved once. */
static inline const dw_entity *entity_of(const dw_eval_ctx *cx, const dw_uid *u)
{
    for (int i = 0; i < 3; i++)
        if (cx->req->vars[i].u.uid == u && cx->req->vars[i].kind == DW_V_ENTITY) return cx->req->ent[i];
    return dw_store_get(cx->store, u);
}

/* x in y for entities, with x's store entry already known */
static bool entity_in(const dw_entity *ex, const dw_uid *x, const dw_uid *y)
{
    if (dw_uid_eq(x, y)) return true;
    return ex && dw_entity_has_ancestor(ex, y);
}

/* `x in y`: y an entity, or a set whose elements must all be entities. */
static dw_eval_status op_in(dw_eval_ctx *cx, const dw_value *x, const dw_value *y, bool *r)
{
    if (!is_kind(x, DW_V_ENTITY)) return DW_ERR_TYPE;
    const dw_entity *ex = entity_of(cx, x->u.uid);
    if (is_kind(y, DW_V_ENTITY)) { *r = entity_in(ex, x->u.uid, y->u.uid); return DW_EVAL_OK; }
    if (!is_kind(y, DW_V_SET)) return DW_ERR_TYPE;
    for (uint32_t i = 0; i < y->n; i++)
        if (!is_kind(&y->u.elems[i], DW_V_ENTITY)) return DW_ERR_TYPE;
    *r = false;
    for (uint32_t i = 0; i < y->n; i++)
        if (entity_in(ex, x->u.uid, y->u.elems[i].u.uid)) { *r = true; break; }
    return DW_EVAL_OK;
}

static dw_eval_status op_compare(dw_opcode op, const dw_value *a, const dw_value *b, bool *r)
{
    if (a->kind != b->kind) return DW_ERR_TYPE;
    if (a->kind != DW_V_LONG && a->kind != DW_V_DATETIME && a->kind != DW_V_DURATION) return DW_ERR_TYPE;
    int64_t x = a->u.i, y = b->u.i;
    *r = op == DW_OP_LT ? x < y : op == DW_OP_LE ? x <= y : op == DW_OP_GT ? x > y : x >= y;
    return DW_EVAL_OK;
}

static dw_eval_status op_arith(dw_opcode op, const dw_value *a, const dw_value *b, dw_value *out)
{
    if (a->kind != DW_V_LONG || b->kind != DW_V_LONG) return DW_ERR_TYPE;
    int64_t r;
    bool of = op == DW_OP_ADD ? __builtin_add_overflow(a->u.i, b->u.i, &r)
            : op == DW_OP_SUB ? __builtin_sub_overflow(a->u.i, b->u.i, &r)
            : __builtin_mul_overflow(a->u.i, b->u.i, &r);
    if (of) return DW_ERR_OVERFLOW;
    *out = dw_long(r);
    return DW_EVAL_OK;
}

/* Dispatch, Lua style: a plain switch, or with GNU C a jump table generated
 * from opcode_list.h ("threaded code": one indirect jump per instruction). */
#define vmfetch() (ins = code[pc++], A = DW_INS_A(ins))
#if defined(__GNUC__) && !defined(DW_NO_JUMP_TABLE)
#define vmdispatch(o) goto *dispatch_table[o];
#define vmcase(l) L_##l:
#define vmbreak do { vmfetch(); goto *dispatch_table[DW_INS_OP(ins)]; } while (0)
#define vmdefault L_bad
#else
#define vmdispatch(o) switch (o)
#define vmcase(l) case l:
#define vmbreak break
#define vmdefault default
#endif

/* An attribute lookup: records are short, so scan comparing the key hash. */
static inline const dw_value *record_find(const dw_value *rec, const char *ks, uint32_t klen, uint32_t khash)
{
    if (rec->n > 12) return dw_record_get(rec, ks, klen);
    for (uint32_t i = 0; i < rec->n; i++) {
        const dw_field *f = &rec->u.fields[i];
        if (f->khash == khash && f->klen == klen && dw_mem_eq(f->key, ks, klen)) return &f->v;
    }
    return NULL;
}

/* `like` with one star (prefix, suffix, or both) inline, with two through
 * the middle segment's rarest byte found at load (vm/eval_plan.c); the rest
 * in stdlib/like.c. */
static inline __attribute__((always_inline)) bool like_match(const dw_program *P, uint32_t i, const char *s, size_t n)
{
    const dw_like_pattern *p = &P->pats[i];
    if (p->nseg != 2) return p->nseg == 3 && P->like_rare ? dw_like_match_mid_inline(p, P->like_rare[i], s, n) : dw_like_match(p, s, n);
    const dw_str *a = &p->seg[0], *b = &p->seg[1];
    if (!s) s = "";      /* an empty string may carry no pointer */
    return a->len + b->len <= n && dw_mem_eq(s, a->s, a->len) && dw_mem_eq(s + (n - b->len), b->s, b->len);
}

/* Equality with the common kinds inline: strings by length then bytes,
 * entities by pointer first (request scope uids and constants are interned). */
static inline bool value_eq(const dw_value *a, const dw_value *b)
{
    if (a->kind != b->kind) return false;
    if (a->kind == DW_V_STRING) return a->n == b->n && dw_mem_eq(a->u.s, b->u.s, a->n);
    if (a->kind == DW_V_ENTITY) return a->u.uid == b->u.uid || dw_uid_eq(a->u.uid, b->u.uid);
    return dw_value_eq(a, b);
}

dw_eval_status dw_eval_policy(dw_eval_ctx *cx, uint32_t index, bool *result)
{
    return dw_eval_code(cx, cx->prog->policies[index].entry, result);
}

dw_eval_status dw_eval_value(dw_eval_ctx *cx, uint32_t entry, dw_value *out)
{
    bool unused;
    cx->ret_value = out;
    dw_eval_status st = dw_eval_code(cx, entry, &unused);
    cx->ret_value = NULL;
    return st;
}

/* Where batch candidate B->k starts (B->pol set to its policy), from
 * starts[] (built with the plans by dw_program_prepare, which every program
 * that runs has passed): one cache line for what policies[], index.body and
 * var_plan hold apart. */
static inline __attribute__((always_inline)) const dw_policy_start *batch_entry(const dw_program *P, dw_eval_batch *B, uint32_t *k)
{
    uint32_t w = B->which ? B->which[B->k] & B->keep : B->k << 1, i = DW_IX_POLICY(w);
    B->pol = i;
    *k = (w & DW_IX_IMPLIED) != 0;
    return &P->starts[i];
}

/* What plan_chain returns besides the successors RET, PUSH and AT (a chain
 * never ends at a PLAN): */
#define PLAN_PLAIN DW_VS(DW_VS_PLAN, 0, 0)   /* off the fast path at *dp: run its instructions */
#define PLAN_VALUE DW_VS(DW_VS_PLAN, 1, 0)   /* a path with no test: push *vp, go on at (*dp)->next */

/* Run the plan *dp (vm/eval_plan.c) and the plans its successors lead to:
 * each reads its path (from the memo when it can) and applies its test, as
 * the instructions would do them.  Returns where the code goes on. */
static inline __attribute__((always_inline)) uint32_t plan_chain(const dw_eval_ctx *cx, const dw_var_plan *vplans,
                                                                 const dw_var_plan **dp, const dw_value **vp)
{
    const dw_program *P = cx->prog;
    dw_attr_memo *memo = cx->memo;
    const dw_var_plan *d = *dp;
    for (;;) {
        const dw_value *v;
        bool r;
        if (memo->valid >> d->slot & 1) v = memo->val[d->slot - 1];
        else if ((v = &cx->req->vars[d->var]), d->nattr) {
            for (uint32_t i = 1; i <= d->nattr; i++) {
                const dw_value *rec = v;
                if (v->kind == DW_V_ENTITY) {
                    const dw_entity *e = entity_of(cx, v->u.uid);
                    if (!e) goto plain;
                    rec = &e->attrs;
                } else if (v->kind != DW_V_RECORD) goto plain;
                const dw_plan_key *key = &d->keys[i - 1];
                if (!(v = record_find(rec, key->s, key->len, key->hash))) goto plain;
            }
            if (d->slot) {
                memo->val[d->slot - 1] = v;
                memo->valid |= 1ull << d->slot;
            }
        }
        /* an if chain, not a switch: its conditional branches predict better
         * than one indirect jump shared by every plan */
        uint8_t form = d->form;
        if (form == DW_VF_EQ_STR)      /* == a String: no other kind is equal */
            r = v->kind == DW_V_STRING && v->n == d->litlen && dw_mem_eq(v->u.s, d->lit, d->litlen);
        else if (form == DW_VF_EQ) r = value_eq(v, &d->in.konst);
        else if (form >= DW_VF_LIKE && form <= DW_VF_MID) {
            if (v->kind != DW_V_STRING) goto plain;
            /* `lit*`, `*lit`, `*lit*`: lit is at least a byte, so a match has a pointer */
            if (form == DW_VF_SUFFIX) r = v->n >= d->litlen && dw_mem_eq(v->u.s + (v->n - d->litlen), d->lit, d->litlen);
            else if (form == DW_VF_PREFIX) r = v->n >= d->litlen && dw_mem_eq(v->u.s, d->lit, d->litlen);
            else if (form == DW_VF_MID) r = v->n >= d->litlen && dw_like_find(v->u.s, v->n, d->lit, d->litlen, d->rare) != NULL;
            else r = like_match(P, d->arg, v->u.s, v->n);
        } else if (form == DW_VF_HAS) {
            const dw_value *rec = v;
            if (v->kind == DW_V_ENTITY) {
                const dw_entity *e = entity_of(cx, v->u.uid);
                rec = e ? &e->attrs : NULL;
            } else if (v->kind != DW_V_RECORD) goto plain;
            r = rec && record_find(rec, P->strs[d->arg].s, (uint32_t)P->strs[d->arg].len, P->str_hash[d->arg]);
        } else {                       /* DW_VF_NONE: the path's value, pushed */
            *dp = d;
            *vp = v;
            return PLAN_VALUE;
        }
        uint32_t s = d->succ[r];
        if (DW_VS_KIND(s) != DW_VS_PLAN) return s;
        d = &vplans[DW_VS_X(s) + 1];
    }
plain:
    *dp = d;
    return PLAN_PLAIN;
}

/* Run the code at entry to its RET; pushed: a value on the stack first
 * (where a plan chain left the code with one), or NULL. */
DW_HOT static dw_eval_status run(dw_eval_ctx *cx, uint32_t entry, const dw_value *pushed, bool *result)
{
    const dw_program *P = cx->prog;
    const uint32_t *code = P->code;
    dw_value *sp = cx->stack;          /* next free slot */
    if (pushed) *sp++ = *pushed;
    uint32_t pc = entry;
    dw_eval_status st;
    bool r;
    const dw_value *cur = NULL;             /* a GETATTR chain's value so far */
    const uint32_t *vplan = cx->memo && !cx->ret_value ? P->var_plan : NULL;   /* RET of a plan takes a Bool */
    const dw_var_plan *vplans = vplan ? P->var_plans - 1 : NULL;   /* var_plan holds index + 1 */

    uint32_t ins, A;
#if defined(__GNUC__) && !defined(DW_NO_JUMP_TABLE)
    /* opcodes >= DW_OP__COUNT cannot reach here: the verifier refused them;
     * the table still maps every byte value, to L_bad */
    static const void *const dispatch_table[256] = {
#define OP(name, kind, pops, pushes) [DW_OP_##name] = &&L_DW_OP_##name,
#include "opcode_list.h"
#undef OP
        [DW_OP__COUNT ... 255] = &&L_bad,
    };
#endif
    for (;;) {
        vmfetch();
        vmdispatch (DW_INS_OP(ins)) {
        /* CONST and VAR look at the next instruction: `CONST k; EQ` compares
         * in place, and `VAR x; GETATTR a ...` reads the attributes off the
         * request without pushing x first.  Both do exactly what the two
         * instructions do in turn (a jump to the second still finds it). */
        vmcase(DW_OP_CONST)
            if (DW_INS_OP(code[pc]) == DW_OP_EQ) {
                pc++;
                r = value_eq(&sp[-1], &P->consts[A]);
                goto bool_result;
            }
            *sp++ = P->consts[A];
            vmbreak;
        vmcase(DW_OP_VAR)
            if (vplan && vplan[pc - 1]) {
                /* the VAR's plan chain: on to the policy's result or the code;
                 * anything off the fast path runs the instructions */
                const dw_var_plan *d = &vplans[vplan[pc - 1]];
                uint32_t s = plan_chain(cx, vplans, &d, &cur);
                if (s == PLAN_VALUE) {
                    *sp++ = *cur;
                    pc = d->next;
                    vmbreak;
                }
                if (s != PLAN_PLAIN) {
                    r = DW_VS_BOOL(s);
                    if (DW_VS_KIND(s) == DW_VS_RET) goto ret_bool;
                    pc = DW_VS_X(s);
                    if (DW_VS_KIND(s) == DW_VS_PUSH) *sp++ = dw_bool(r);
                    vmbreak;
                }
                pc = d->pc + 1;
                A = d->var;
            }
        /* VAR without a plan, or its plan off the fast path */
            if (DW_INS_OP(code[pc]) == DW_OP_GETATTR) {
                sp++;
                cur = &cx->req->vars[A];
                vmfetch();
                goto getattr;
            }
            *sp++ = cx->req->vars[A];
            vmbreak;
        vmcase(DW_OP_AND)
            if (sp[-1].kind != DW_V_BOOL) FAIL(DW_ERR_TYPE, "`&&` operand is not a Bool");
            if (!sp[-1].u.b) pc = A; else sp--;
            vmbreak;
        vmcase(DW_OP_OR)
            if (sp[-1].kind != DW_V_BOOL) FAIL(DW_ERR_TYPE, "`||` operand is not a Bool");
            if (sp[-1].u.b) pc = A; else sp--;
            vmbreak;
        vmcase(DW_OP_JUMP_IF_NOT)
            sp--;
            if (sp->kind != DW_V_BOOL) FAIL(DW_ERR_TYPE, "`if` condition is not a Bool");
            if (!sp->u.b) pc = A;
            vmbreak;
        vmcase(DW_OP_JUMP) pc = A; vmbreak;
        vmcase(DW_OP_CHECK_BOOL)
            if (sp[-1].kind != DW_V_BOOL) FAIL(DW_ERR_TYPE, "operand is not a Bool");
            vmbreak;
        vmcase(DW_OP_NOT)
            if (sp[-1].kind != DW_V_BOOL) FAIL(DW_ERR_TYPE, "`!` operand is not a Bool");
            sp[-1].u.b = !sp[-1].u.b;
            vmbreak;
        vmcase(DW_OP_NEG)
            if (sp[-1].kind != DW_V_LONG) FAIL(DW_ERR_TYPE, "`-` operand is not a Long");
            if (sp[-1].u.i == INT64_MIN) FAIL(DW_ERR_OVERFLOW, "negation overflows");
            sp[-1].u.i = -sp[-1].u.i;
            vmbreak;
        vmcase(DW_OP_EQ) sp--; r = value_eq(&sp[-1], sp); goto bool_result;
        vmcase(DW_OP_NE) sp--; r = !value_eq(&sp[-1], sp); goto bool_result;
        vmcase(DW_OP_LT) vmcase(DW_OP_LE) vmcase(DW_OP_GT) vmcase(DW_OP_GE)
            sp--;
            if ((st = op_compare(DW_INS_OP(ins), &sp[-1], sp, &r))) FAIL(st, "comparison needs two Longs, datetimes or durations");
            goto bool_result;
        vmcase(DW_OP_ADD) vmcase(DW_OP_SUB) vmcase(DW_OP_MUL)
            sp--;
            if ((st = op_arith(DW_INS_OP(ins), &sp[-1], sp, &sp[-1]))) FAIL(st, "arithmetic on Longs");
            vmbreak;
        vmcase(DW_OP_IN)
            sp--;
            if ((st = op_in(cx, &sp[-1], sp, &r))) FAIL(st, "`in` needs an entity and an entity or set of entities");
            goto bool_result;
        vmcase(DW_OP_GETATTR)
            cur = &sp[-1];
        getattr:
            /* a run of GETATTRs walks the records, the stack slot written once;
             * a failure leaves the failing instruction's operand there */
            for (;;) {
                const dw_value *rec;
                if (cur->kind == DW_V_RECORD) rec = cur;
                else if (cur->kind == DW_V_ENTITY) {
                    const dw_entity *e = entity_of(cx, cur->u.uid);
                    if (!e) { sp[-1] = *cur; FAIL(DW_ERR_NO_ENTITY, "entity does not exist"); }
                    rec = &e->attrs;
                } else { sp[-1] = *cur; FAIL(DW_ERR_TYPE, "attribute access on a value that is not a record or entity"); }
                const dw_value *f = record_find(rec, P->strs[A].s, (uint32_t)P->strs[A].len, P->str_hash[A]);
                if (!f) { sp[-1] = *cur; FAIL(DW_ERR_MISSING_ATTR, "attribute not found"); }
                cur = f;
                if (DW_INS_OP(code[pc]) != DW_OP_GETATTR) break;
                vmfetch();
            }
            sp[-1] = *cur;
            vmbreak;
        vmcase(DW_OP_HAS) {
            const dw_str *key = &P->strs[A];
            dw_value *v = &sp[-1];
            const dw_value *rec;
            if (v->kind == DW_V_RECORD) rec = v;
            else if (v->kind == DW_V_ENTITY) {
                const dw_entity *e = entity_of(cx, v->u.uid);
                if (!e) { *v = dw_bool(false); vmbreak; }
                rec = &e->attrs;
            } else FAIL(DW_ERR_TYPE, "attribute access on a value that is not a record or entity");
            r = record_find(rec, key->s, (uint32_t)key->len, P->str_hash[A]) != NULL;
            goto bool_result;
        }
        vmcase(DW_OP_HASPATH) {
            /* each step is HAS, and reads the name it found for the next; a failure
             * leaves the value that is not a record or entity on top, as HAS does */
            const dw_keylist *kl = &P->keylists[A];
            const dw_value *v = &sp[-1];
            for (uint32_t i = 0; v && i < kl->n; i++) {
                const dw_value *rec;
                if (v->kind == DW_V_RECORD) rec = v;
                else if (v->kind == DW_V_ENTITY) {
                    const dw_entity *e = entity_of(cx, v->u.uid);
                    if (!e) { v = NULL; break; }
                    rec = &e->attrs;
                } else { sp[-1] = *v; FAIL(DW_ERR_TYPE, "attribute access on a value that is not a record or entity"); }
                uint32_t k = P->keyidx[kl->first + i];
                v = record_find(rec, P->strs[k].s, (uint32_t)P->strs[k].len, P->str_hash[k]);
            }
            r = v != NULL;
            goto bool_result;
        }
        vmcase(DW_OP_LIKE)
            if (sp[-1].kind != DW_V_STRING) FAIL(DW_ERR_TYPE, "`like` operand is not a String");
            r = like_match(P, A, sp[-1].u.s, sp[-1].n);
            goto bool_result;
        vmcase(DW_OP_IS) {
            if (sp[-1].kind != DW_V_ENTITY) FAIL(DW_ERR_TYPE, "`is` operand is not an entity");
            const dw_str *t = &P->strs[A];
            const dw_uid *u = sp[-1].u.uid;
            r = u->tlen == t->len && memcmp(u->type, t->s, t->len) == 0;
            goto bool_result;
        }
        vmcase(DW_OP_MKSET) {
            dw_value *elems = A ? dw_arena_alloc(cx->scratch, A * sizeof *elems) : NULL;
            if (A && !elems) FAIL(DW_ERR_OOM, "out of memory");
            sp -= A;
            if (A) memcpy(elems, sp, A * sizeof *elems);
            *sp++ = dw_make_set(elems, A);
            vmbreak;
        }
        vmcase(DW_OP_MKRECORD) {
            const dw_keylist *kl = &P->keylists[A];
            dw_field *f = kl->n ? dw_arena_alloc(cx->scratch, kl->n * sizeof *f) : NULL;
            if (kl->n && !f) FAIL(DW_ERR_OOM, "out of memory");
            sp -= kl->n;
            for (uint32_t i = 0; i < kl->n; i++) {
                const dw_str *k = &P->strs[P->keyidx[kl->first + i]];
                f[i].key = k->s;
                f[i].klen = (uint32_t)k->len;
                f[i].v = sp[i];
            }
            if (!dw_make_record(f, kl->n, sp)) FAIL(DW_ERR_INTERNAL, "duplicate record key");
            sp++;
            vmbreak;
        }
        vmcase(DW_OP_CALL) {
            uint32_t argc = DW_CALL_ARGC(A);
            sp -= argc;
            dw_value out;
            if ((st = dw_call_extfn(cx->scratch, cx->store, (dw_extfn)DW_CALL_FN(A), sp, argc, &out))) FAIL(st, dw_fninfo_table[DW_CALL_FN(A)].name);
            *sp++ = out;
            vmbreak;
        }
        vmcase(DW_OP_PROV)
            /* likewise the engine evaluated the call site (dogwood.md §15.1 step 4) */
            if (!cx->req->prov_values || A >= cx->req->nprov_values || cx->req->prov_values[A].kind == DW_V_NULL)
                FAIL(DW_ERR_INTERNAL, "provider call was not evaluated");
            *sp++ = cx->req->prov_values[A];
            vmbreak;
        vmcase(DW_OP_LEAF)
            /* the engine evaluated the leaf before running the policy; a leaf it
             * did not evaluate can only mean an engine bug: fail, never guess */
            if (!cx->req->leaf_values || A >= cx->req->nleaf_values || cx->req->leaf_values[A] > 1)
                FAIL(DW_ERR_INTERNAL, "temporal leaf was not evaluated");
            *sp++ = dw_bool(cx->req->leaf_values[A] == 1);
            vmbreak;
        vmcase(DW_OP_RET)
            sp--;
            if (cx->ret_value) { *cx->ret_value = *sp; return DW_EVAL_OK; }
            if (sp->kind != DW_V_BOOL) FAIL(DW_ERR_TYPE, "policy condition is not a Bool");
            r = sp->u.b;
        ret_bool:
            *result = r;
            return DW_EVAL_OK;
        vmdefault:
            FAIL(DW_ERR_INTERNAL, "bad opcode");
        }
        continue;          /* the switch dispatch's `break`: the next instruction */
    bool_result:
        /* r, a Bool, replaces sp[-1].  A CHECK_BOOL after it has nothing to
         * check, and the OR, AND or RET that usually follows is done here
         * as it would do it, without a dispatch of its own. */
        ins = code[pc];
        if (DW_INS_OP(ins) == DW_OP_CHECK_BOOL) ins = code[++pc];
        if (DW_INS_OP(ins) == DW_OP_OR || DW_INS_OP(ins) == DW_OP_AND) {
            if (r == (DW_INS_OP(ins) == DW_OP_OR)) {
                pc = DW_INS_A(ins);                /* short circuit: r is the value */
                if (DW_INS_OP(code[pc]) == DW_OP_RET && !cx->ret_value) { sp--; goto ret_bool; }
                sp[-1] = dw_bool(r);
            } else { sp--; pc++; }
            continue;
        }
        if (DW_INS_OP(ins) == DW_OP_RET && !cx->ret_value) { sp--; goto ret_bool; }
        sp[-1] = dw_bool(r);
        continue;
    }
}

dw_eval_status dw_eval_code(dw_eval_ctx *cx, uint32_t entry, bool *result)
{
    return run(cx, entry, NULL, result);
}

/* The batch loop: a candidate whose plan chain decides it never enters the
 * interpreter (the loop's few live values stay in registers); the rest run
 * from where the chain left the code. */
DW_HOT dw_eval_status dw_eval_candidates(dw_eval_ctx *cx, dw_eval_batch *B)
{
    const dw_program *P = cx->prog;
    bool plans = cx->memo && P->var_plans;   /* batches never return values */
    const dw_var_plan *vplans = plans ? P->var_plans - 1 : NULL;
    for (; B->k < B->n; B->k++) {
        uint32_t k;
        const dw_policy_start *start = batch_entry(P, B, &k);
        uint32_t pc = start->pc[k], plan = start->plan[k];
        bool r;
        dw_eval_status st;
        if (plans && plan) {
            const dw_var_plan *d = &vplans[plan];
            const dw_value *v = NULL;
            uint32_t s = plan_chain(cx, vplans, &d, &v);
            if (DW_VS_KIND(s) == DW_VS_RET) r = DW_VS_BOOL(s);
            else {
                dw_value b;
                if (s == PLAN_PLAIN) pc = d->pc;
                else if (s == PLAN_VALUE) pc = d->next;
                else {
                    pc = DW_VS_X(s);
                    v = DW_VS_KIND(s) == DW_VS_PUSH ? (b = dw_bool(DW_VS_BOOL(s)), &b) : NULL;
                }
                if ((st = run(cx, pc, v, &r))) return st;
            }
        } else if ((st = run(cx, pc, NULL, &r))) return st;
        if (r) {
            if (start->effect == DW_EFFECT_FORBID) B->forbids[B->nf++] = B->pol;
            else B->permits[B->np++] = B->pol;
        }
    }
    return DW_EVAL_OK;
}
