/* eval_error.c - see eval_error.h.  Each failing instruction left its
 * operands where it found them: a unary one at stack[depth - 1], a binary
 * one's at stack[depth - 1] and stack[depth], a call's arguments from
 * stack[depth] on, an `if` condition at stack[depth]. */
#include "eval_error.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "cedar_value.h"
#include "ext_error.h"

static int put(dw_buf *b, const char *s) { return dw_buf_append(b, s, strlen(s)); }
static int val(dw_buf *b, const dw_value *v) { return dw_cedar_value_text(b, v); }
static int ty(dw_buf *b, const dw_value *v) { return dw_cedar_type_text(b, v); }

static int type_error(dw_buf *b, const char *expected, const dw_value *got)
{
    return put(b, "type error: expected ") || put(b, expected) || put(b, ", got ") || ty(b, got) ? -1 : 0;
}

static bool is(const dw_value *v, dw_vkind k) { return v->kind == k; }

static bool orderable(const dw_value *v) { return is(v, DW_V_DATETIME) || is(v, DW_V_DURATION); }

/* `<` and friends take two Longs or two datetimes or durations; Cedar names
 * the operand it rejects in this order of cases. */
static int compare_error(dw_buf *b, const dw_value *x, const dw_value *y)
{
    if (is(x, DW_V_LONG)) return type_error(b, "long", y);
    if (is(y, DW_V_LONG)) return type_error(b, "long", x);
    if (orderable(x)) return type_error(b, dw_vkind_name((dw_vkind)x->kind), y);
    if (orderable(y)) return type_error(b, dw_vkind_name((dw_vkind)y->kind), x);
    return type_error(b, "one of [long, datetime, duration]", x);
}

/* A datetime as Cedar writes one it computed, and a duration's own text. */
static int dt_expr(dw_buf *b, int64_t ms)
{
    char t[96];
    snprintf(t, sizeof t, "datetime(\"1970-01-01\").offset(duration(\"%lldms\"))", (long long)ms);
    return put(b, t);
}

static int ext_overflow(dw_buf *b, dw_extfn fn, const dw_value *args)
{
    char t[48];
    switch (fn) {
    case DW_FN_OFFSET:
        snprintf(t, sizeof t, "+(%lldms)", (long long)args[1].u.i);
        return put(b, "overflows when adding an offset: ") || dt_expr(b, args[0].u.i) || put(b, t) ? -1 : 0;
    case DW_FN_DURATION_SINCE:
        return put(b, "overflows when computing the duration between ") || dt_expr(b, args[0].u.i) || put(b, " and ") ||
               dt_expr(b, args[1].u.i) ? -1 : 0;
    default:
        return put(b, "overflows when computing the date of ") || dt_expr(b, args[0].u.i) ? -1 : 0;
    }
}

static int attr_missing(dw_buf *b, dw_buf *help, const dw_value *on, const dw_str *key, const dw_value *rec, const char *what)
{
    int rc;
    if (is(on, DW_V_RECORD)) rc = put(b, "record does not have the ") || put(b, what) || put(b, " `");
    else rc = put(b, "`") || val(b, on) || put(b, "` does not have the ") || put(b, what) || put(b, " `");
    if (rc || dw_buf_append(b, key->s, key->len) || put(b, "`")) return -1;
    if (!rec) return 0;
    if (!rec->n) {
        if (is(on, DW_V_RECORD)) return put(help, "record does not have any attributes");
        return put(help, "`") || val(help, on) || put(help, is(on, DW_V_RECORD) ? "" : "` does not have any ") ||
               put(help, what) || put(help, "s") ? -1 : 0;
    }
    if (put(help, "available ") || put(help, what) || put(help, "s: [")) return -1;
    for (uint32_t i = 0; i < rec->n; i++)
        if ((i && put(help, ", ")) || dw_buf_append(help, rec->u.fields[i].key, rec->u.fields[i].klen)) return -1;
    return put(help, "]");
}

static int overflow(dw_buf *b, const char *op, const dw_value *x, const dw_value *y)
{
    if (!y) return put(b, "integer overflow while attempting to ") || put(b, op) || put(b, " the value `") || val(b, x) || put(b, "`") ? -1 : 0;
    return put(b, "integer overflow while attempting to ") || put(b, op) || put(b, " the values `") || val(b, x) ||
           put(b, "` and `") || val(b, y) || put(b, "`") ? -1 : 0;
}

/* What a call's arguments must be, position by position. */
static const char *call_arg_type(dw_extfn fn, uint32_t i, dw_vkind *want)
{
    switch (fn) {
    case DW_FN_DECIMAL: case DW_FN_DATETIME: case DW_FN_DURATION: case DW_FN_IP: *want = DW_V_STRING; return "string";
    case DW_FN_LESS_THAN: case DW_FN_LESS_THAN_OR_EQUAL: case DW_FN_GREATER_THAN: case DW_FN_GREATER_THAN_OR_EQUAL:
        *want = DW_V_DECIMAL; return "decimal";
    case DW_FN_IS_IPV4: case DW_FN_IS_IPV6: case DW_FN_IS_LOOPBACK: case DW_FN_IS_MULTICAST: case DW_FN_IS_IN_RANGE:
        *want = DW_V_IPADDR; return "ipaddr";
    case DW_FN_OFFSET: *want = i ? DW_V_DURATION : DW_V_DATETIME; return i ? "duration" : "datetime";
    case DW_FN_DURATION_SINCE: case DW_FN_TO_DATE: case DW_FN_TO_TIME: *want = DW_V_DATETIME; return "datetime";
    case DW_FN_TO_MILLISECONDS: case DW_FN_TO_SECONDS: case DW_FN_TO_MINUTES: case DW_FN_TO_HOURS: case DW_FN_TO_DAYS:
        *want = DW_V_DURATION; return "duration";
    case DW_FN_CONTAINS: *want = DW_V_SET; return i ? NULL : "set";
    case DW_FN_CONTAINS_ALL: case DW_FN_CONTAINS_ANY: case DW_FN_IS_EMPTY: *want = DW_V_SET; return "set";
    case DW_FN_GET_TAG: case DW_FN_HAS_TAG: *want = i ? DW_V_STRING : DW_V_ENTITY; return i ? "string" : "(entity of type `any_entity_type`)";
    default: return NULL;
    }
}

static int call_error(dw_buf *b, dw_buf *help, const dw_program *p, const dw_value *args, uint32_t argc, dw_extfn fn,
                      dw_eval_status st, const dw_eval_ctx *cx)
{
    const char *name = dw_fninfo_table[fn].name;
    if (st == DW_ERR_ARITY) {
        char t[160];
        snprintf(t, sizeof t, "wrong number of arguments provided to extension function `%s`: expected %d, got %u", name,
                 dw_fninfo_table[fn].arity, argc);
        return put(b, t);
    }
    if (st == DW_ERR_TYPE) {
        for (uint32_t i = 0; i < argc; i++) {
            dw_vkind want;
            const char *t = call_arg_type(fn, i, &want);
            if (t && !is(&args[i], want)) return type_error(b, t, &args[i]);
        }
        return put(b, "type error in a call of `") || put(b, name) || put(b, "`") ? -1 : 0;
    }
    if (st == DW_ERR_EXTENSION || st == DW_ERR_OVERFLOW) {
        if (put(b, "error while evaluating `") || put(b, fn == DW_FN_IP ? "ipaddr" : name) || put(b, "` extension function: "))
            return -1;
        return st == DW_ERR_EXTENSION ? dw_ext_parse_error(b, fn, args[0].u.s, args[0].n) : ext_overflow(b, fn, args);
    }
    if (st == DW_ERR_NO_ENTITY) return put(b, "entity `") || val(b, &args[0]) || put(b, "` does not exist") ? -1 : 0;
    if (st == DW_ERR_MISSING_TAG) {
        const dw_entity *e = dw_store_get(cx->store, args[0].u.uid);
        dw_str key = { args[1].u.s, args[1].n };
        return attr_missing(b, help, &args[0], &key, e ? &e->tags : NULL, "tag");
    }
    (void)p;
    return put(b, dw_eval_status_name(st));
}

int dw_eval_error_text(dw_buf *b, dw_buf *help, const dw_program *p, const dw_eval_ctx *cx, dw_eval_status st)
{
    uint32_t ins = p->code[cx->err_pc], A = DW_INS_A(ins), d = cx->err_depth;
    const dw_value *s = cx->stack;
    int rc;
    if (st == DW_ERR_OOM) rc = put(b, "out of memory");
    else switch (DW_INS_OP(ins)) {
    case DW_OP_AND: case DW_OP_OR: case DW_OP_CHECK_BOOL: case DW_OP_NOT: rc = type_error(b, "bool", &s[d - 1]); break;
    case DW_OP_JUMP_IF_NOT: rc = type_error(b, "bool", &s[d]); break;
    case DW_OP_NEG:
        rc = st == DW_ERR_OVERFLOW ? overflow(b, "negate", &s[d - 1], NULL) : type_error(b, "long", &s[d - 1]);
        break;
    case DW_OP_ADD: case DW_OP_SUB: case DW_OP_MUL: {
        static const char *const verb[] = { "add", "subtract", "multiply" };
        const char *op = verb[DW_INS_OP(ins) - DW_OP_ADD];
        if (st == DW_ERR_OVERFLOW) rc = overflow(b, op, &s[d - 1], &s[d]);
        else rc = type_error(b, "long", is(&s[d - 1], DW_V_LONG) ? &s[d] : &s[d - 1]);
        break;
    }
    case DW_OP_LT: case DW_OP_LE: case DW_OP_GT: case DW_OP_GE: rc = compare_error(b, &s[d - 1], &s[d]); break;
    case DW_OP_IN:
        if (!is(&s[d - 1], DW_V_ENTITY)) rc = type_error(b, "(entity of type `any_entity_type`)", &s[d - 1]);
        else if (!is(&s[d], DW_V_SET)) rc = type_error(b, "one of [set, (entity of type `any_entity_type`)]", &s[d]);
        else {
            const dw_value *x = &s[d];
            for (uint32_t i = 0; i < s[d].n; i++) if (!is(&s[d].u.elems[i], DW_V_ENTITY)) { x = &s[d].u.elems[i]; break; }
            rc = type_error(b, "(entity of type `any_entity_type`)", x);
        }
        break;
    case DW_OP_HAS: case DW_OP_GETATTR: case DW_OP_HASPATH: {
        const dw_value *on = &s[d - 1];
        if (st == DW_ERR_TYPE) rc = type_error(b, "one of [record, (entity of type `any_entity_type`)]", on);
        else if (st == DW_ERR_NO_ENTITY) rc = put(b, "entity `") || val(b, on) || put(b, "` does not exist") ? -1 : 0;
        else {
            const dw_entity *e = is(on, DW_V_ENTITY) ? dw_store_get(cx->store, on->u.uid) : NULL;
            rc = attr_missing(b, help, on, &p->strs[A], is(on, DW_V_RECORD) ? on : e ? &e->attrs : NULL, "attribute");
        }
        break;
    }
    case DW_OP_LIKE: rc = type_error(b, "string", &s[d - 1]); break;
    case DW_OP_IS: rc = type_error(b, "(entity of type `any_entity_type`)", &s[d - 1]); break;
    case DW_OP_CALL: rc = call_error(b, help, p, &s[d], DW_CALL_ARGC(A), (dw_extfn)DW_CALL_FN(A), st, cx); break;
    default: rc = put(b, cx->err_detail ? cx->err_detail : dw_eval_status_name(st)); break;
    }
    if (rc || dw_buf_append(b, "", 1) || dw_buf_append(help, "", 1)) return -1;
    b->len--;
    help->len--;
    return 0;
}
