/* ast.c - AST constructors, deep copy, and the debug printers used by the
 * golden tests (a fully parenthesised S-expression-like text). */
#include "ast.h"
#include "strlit.h"
#include "tast.h"
#include <stdlib.h>
#include <string.h>

dw_expr *dw_expr_new(dw_arena *a, dw_expr_kind kind, dw_loc loc)
{
    dw_expr *e = dw_arena_alloc(a, sizeof *e);
    if (!e) return NULL;
    e->kind = kind;
    e->loc = loc;
    e->depth = 1;
    return e;
}

static int nkids(dw_expr_kind k)
{
    switch (k) {
    case DW_E_IF: return 3;
    case DW_E_AND: case DW_E_OR:
    case DW_E_EQ: case DW_E_NE: case DW_E_LT: case DW_E_LE: case DW_E_GT: case DW_E_GE: case DW_E_IN:
    case DW_E_ADD: case DW_E_SUB: case DW_E_MUL: return 2;
    case DW_E_NOT: case DW_E_NEG: return 1;
    default: return 0;
    }
}

dw_expr **dw_expr_kid(dw_expr *e, size_t i)
{
    switch (e->kind) {
    case DW_E_IF: return i < 3 ? &e->u.kids[i] : NULL;
    case DW_E_AND: case DW_E_OR: case DW_E_EQ: case DW_E_NE: case DW_E_LT: case DW_E_LE:
    case DW_E_GT: case DW_E_GE: case DW_E_IN: case DW_E_ADD: case DW_E_SUB: case DW_E_MUL:
        return i < 2 ? &e->u.kids[i] : NULL;
    case DW_E_NOT: case DW_E_NEG: return i < 1 ? &e->u.kids[0] : NULL;
    case DW_E_HAS: case DW_E_GETATTR: return i < 1 ? &e->u.attr.kids0 : NULL;
    case DW_E_HAS_PATH: return i < 1 ? &e->u.path.kids0 : NULL;
    case DW_E_LIKE: return i < 1 ? &e->u.like.kids0 : NULL;
    case DW_E_IS:
        if (i == 0) return &e->u.is.kids0;
        return i == 1 && e->u.is.in ? &e->u.is.in : NULL;
    case DW_E_SET: return i < e->u.list.n ? &e->u.list.v[i] : NULL;
    case DW_E_RECORD: return i < e->u.rec.n ? &e->u.rec.v[i].value : NULL;
    case DW_E_METHOD:
        if (i == 0) return &e->u.call.recv;
        return i - 1 < e->u.call.nargs ? &e->u.call.args[i - 1] : NULL;
    case DW_E_CALL: return i < e->u.call.nargs ? &e->u.call.args[i] : NULL;
    default: return NULL;
    }
}

static uint32_t dmax(uint32_t m, const dw_expr *e) { return e && e->depth > m ? e->depth : m; }

uint32_t dw_expr_compute_depth(const dw_expr *e)
{
    uint32_t m = 0;
    const dw_expr *k;
    for (size_t i = 0; (k = dw_expr_kid_c(e, i)); i++) m = dmax(m, k);
    return m + 1;
}

bool dw_expr_eq(const dw_expr *a, const dw_expr *b, dw_temporal_eq_fn temporal_eq, void *ctx)
{
#define EQ(x, y) dw_expr_eq((x), (y), temporal_eq, ctx)
    if (a == b) return true;
    if (!a || !b || a->kind != b->kind) return false;
    switch (a->kind) {
    case DW_E_BOOL: return a->u.b == b->u.b;
    case DW_E_LONG: return a->u.i == b->u.i;
    case DW_E_STRING: return dw_str_eq(a->u.str, b->u.str);
    case DW_E_ENTITY: return dw_str_eq(a->u.euid.type, b->u.euid.type) && dw_str_eq(a->u.euid.id, b->u.euid.id);
    case DW_E_VAR: return a->u.var == b->u.var;
    case DW_E_SLOT: case DW_E_BINDER: return dw_str_eq(a->u.name, b->u.name);
    case DW_E_IF: return EQ(a->u.kids[0], b->u.kids[0]) && EQ(a->u.kids[1], b->u.kids[1]) && EQ(a->u.kids[2], b->u.kids[2]);
    case DW_E_NOT: case DW_E_NEG: return EQ(a->u.kids[0], b->u.kids[0]);
    case DW_E_AND: case DW_E_OR: case DW_E_EQ: case DW_E_NE: case DW_E_LT: case DW_E_LE: case DW_E_GT:
    case DW_E_GE: case DW_E_IN: case DW_E_ADD: case DW_E_SUB: case DW_E_MUL:
        return EQ(a->u.kids[0], b->u.kids[0]) && EQ(a->u.kids[1], b->u.kids[1]);
    case DW_E_HAS: case DW_E_GETATTR: return dw_str_eq(a->u.attr.attr, b->u.attr.attr) && EQ(a->u.attr.kids0, b->u.attr.kids0);
    case DW_E_HAS_PATH:
        if (a->u.path.n != b->u.path.n) return false;
        for (size_t i = 0; i < a->u.path.n; i++)
            if (!dw_str_eq(a->u.path.attrs[i], b->u.path.attrs[i])) return false;
        return EQ(a->u.path.kids0, b->u.path.kids0);
    case DW_E_LIKE: return dw_str_eq(a->u.like.raw, b->u.like.raw) && EQ(a->u.like.kids0, b->u.like.kids0);
    case DW_E_IS: return dw_str_eq(a->u.is.type, b->u.is.type) && EQ(a->u.is.kids0, b->u.is.kids0) && EQ(a->u.is.in, b->u.is.in);
    case DW_E_SET:
        if (a->u.list.n != b->u.list.n) return false;
        for (size_t i = 0; i < a->u.list.n; i++)
            if (!EQ(a->u.list.v[i], b->u.list.v[i])) return false;
        return true;
    case DW_E_RECORD:
        if (a->u.rec.n != b->u.rec.n) return false;
        for (size_t i = 0; i < a->u.rec.n; i++)
            if (!dw_str_eq(a->u.rec.v[i].key, b->u.rec.v[i].key) || !EQ(a->u.rec.v[i].value, b->u.rec.v[i].value)) return false;
        return true;
    case DW_E_METHOD: case DW_E_CALL:
        if (!dw_str_eq(a->u.call.name, b->u.call.name) || a->u.call.nargs != b->u.call.nargs || !EQ(a->u.call.recv, b->u.call.recv))
            return false;
        for (size_t i = 0; i < a->u.call.nargs; i++)
            if (!EQ(a->u.call.args[i], b->u.call.args[i])) return false;
        return true;
    case DW_E_TEMPORAL: return temporal_eq && temporal_eq(ctx, a->u.temporal, b->u.temporal);
    }
    return false;
#undef EQ
}

dw_expr *dw_expr_clone(dw_arena *a, const dw_expr *e)
{
    if (!e) return NULL;
    dw_expr *c = dw_arena_alloc(a, sizeof *c);
    if (!c) return NULL;
    *c = *e;
    int n = nkids(e->kind);
    for (int i = 0; i < n; i++)
        if (!(c->u.kids[i] = dw_expr_clone(a, e->u.kids[i]))) return NULL;
    switch (e->kind) {
    case DW_E_HAS: case DW_E_GETATTR:
        if (!(c->u.attr.kids0 = dw_expr_clone(a, e->u.attr.kids0))) return NULL;
        break;
    case DW_E_HAS_PATH:
        if (!(c->u.path.kids0 = dw_expr_clone(a, e->u.path.kids0))) return NULL;
        break;
    case DW_E_LIKE:
        if (!(c->u.like.kids0 = dw_expr_clone(a, e->u.like.kids0))) return NULL;
        break;
    case DW_E_IS:
        if (!(c->u.is.kids0 = dw_expr_clone(a, e->u.is.kids0))) return NULL;
        if (e->u.is.in && !(c->u.is.in = dw_expr_clone(a, e->u.is.in))) return NULL;
        break;
    case DW_E_SET:
        if (e->u.list.n) {
            if (!(c->u.list.v = dw_arena_alloc(a, e->u.list.n * sizeof *c->u.list.v))) return NULL;
            for (size_t i = 0; i < e->u.list.n; i++)
                if (!(c->u.list.v[i] = dw_expr_clone(a, e->u.list.v[i]))) return NULL;
        }
        break;
    case DW_E_RECORD:
        if (e->u.rec.n) {
            if (!(c->u.rec.v = dw_arena_alloc(a, e->u.rec.n * sizeof *c->u.rec.v))) return NULL;
            for (size_t i = 0; i < e->u.rec.n; i++) {
                c->u.rec.v[i] = e->u.rec.v[i];
                if (!(c->u.rec.v[i].value = dw_expr_clone(a, e->u.rec.v[i].value))) return NULL;
            }
        }
        break;
    case DW_E_METHOD: case DW_E_CALL:
        if (e->u.call.recv && !(c->u.call.recv = dw_expr_clone(a, e->u.call.recv))) return NULL;
        if (e->u.call.nargs) {
            if (!(c->u.call.args = dw_arena_alloc(a, e->u.call.nargs * sizeof *c->u.call.args))) return NULL;
            for (size_t i = 0; i < e->u.call.nargs; i++)
                if (!(c->u.call.args[i] = dw_expr_clone(a, e->u.call.args[i]))) return NULL;
        }
        break;
    default: break;
    }
    return c;
}

bool dw_is_cedar_method(const char *name, size_t len, int *builtin_arity)
{
    static const struct { const char *n; int arity; } tab[] = {
        {"contains", 1}, {"containsAll", 1}, {"containsAny", 1}, {"getTag", 1}, {"hasTag", 1},
        {"isEmpty", 0},
        {"isIpv4", -1}, {"isIpv6", -1}, {"isLoopback", -1}, {"isMulticast", -1}, {"toDate", -1},
        {"toTime", -1}, {"toMilliseconds", -1}, {"toSeconds", -1}, {"toMinutes", -1},
        {"toHours", -1}, {"toDays", -1}, {"isInRange", -1}, {"offset", -1}, {"durationSince", -1},
        {"lessThan", -1}, {"lessThanOrEqual", -1}, {"greaterThan", -1}, {"greaterThanOrEqual", -1},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (strlen(tab[i].n) == len && memcmp(tab[i].n, name, len) == 0) {
            if (builtin_arity) *builtin_arity = tab[i].arity;
            return true;
        }
    return false;
}

void dw_policy_set_free(dw_policy_set *ps)
{
    if (!ps) return;
    dw_arena_free(&ps->arena);
    free(ps);
}

/* ---- printing ---- */

static const char *op_name(dw_expr_kind k)
{
    switch (k) {
    case DW_E_AND: return "&&"; case DW_E_OR: return "||";
    case DW_E_NOT: return "!"; case DW_E_NEG: return "neg";
    case DW_E_EQ: return "=="; case DW_E_NE: return "!="; case DW_E_LT: return "<";
    case DW_E_LE: return "<="; case DW_E_GT: return ">"; case DW_E_GE: return ">=";
    case DW_E_IN: return "in"; case DW_E_ADD: return "+"; case DW_E_SUB: return "-";
    case DW_E_MUL: return "*"; case DW_E_IF: return "if";
    default: return "?";
    }
}

static void print_euid(FILE *out, const dw_euid_lit *u)
{
    fprintf(out, "%.*s::", (int)u->type.len, u->type.s);
    dw_str_print_quoted(out, u->id.s, u->id.len);
}

static void print_args(FILE *out, dw_expr *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fputc(' ', out);
        dw_expr_print(out, v[i]);
    }
}

void dw_expr_print(FILE *out, const dw_expr *e)
{
    if (!e) { fputs("<null>", out); return; }
    /* Children are shallower than their parent, so this bounds recursion. */
    if (e->depth > DW_MAX_EXPR_DEPTH) { fputs("<too deep>", out); return; }
    int n = nkids(e->kind);
    if (n) {
        fprintf(out, "(%s", op_name(e->kind));
        print_args(out, e->u.kids, (size_t)n);
        fputc(')', out);
        return;
    }
    switch (e->kind) {
    case DW_E_BOOL: fputs(e->u.b ? "true" : "false", out); break;
    case DW_E_LONG: fprintf(out, "%lld", (long long)e->u.i); break;
    case DW_E_STRING: dw_str_print_quoted(out, e->u.str.s, e->u.str.len); break;
    case DW_E_ENTITY: print_euid(out, &e->u.euid); break;
    case DW_E_VAR: {
        static const char *v[] = {"principal", "action", "resource", "context"};
        fputs(v[e->u.var], out);
        break;
    }
    case DW_E_SLOT: fprintf(out, "?%.*s", (int)e->u.name.len, e->u.name.s); break;
    case DW_E_BINDER: fprintf(out, "$%.*s", (int)e->u.name.len, e->u.name.s); break;
    case DW_E_HAS: case DW_E_GETATTR:
        fputs(e->kind == DW_E_HAS ? "(has " : "(. ", out);
        dw_expr_print(out, e->u.attr.kids0);
        fputc(' ', out);
        dw_str_print_quoted(out, e->u.attr.attr.s, e->u.attr.attr.len);
        fputc(')', out);
        break;
    case DW_E_HAS_PATH:
        fputs("(has ", out);
        dw_expr_print(out, e->u.path.kids0);
        for (size_t i = 0; i < e->u.path.n; i++) {
            fputc(' ', out);
            dw_str_print_quoted(out, e->u.path.attrs[i].s, e->u.path.attrs[i].len);
        }
        fputc(')', out);
        break;
    case DW_E_LIKE:
        fputs("(like ", out);
        dw_expr_print(out, e->u.like.kids0);
        fputc(' ', out);
        dw_like_print(out, &e->u.like.pat);
        fputc(')', out);
        break;
    case DW_E_IS:
        fputs("(is ", out);
        dw_expr_print(out, e->u.is.kids0);
        fprintf(out, " %.*s", (int)e->u.is.type.len, e->u.is.type.s);
        if (e->u.is.in) {
            fputc(' ', out);
            dw_expr_print(out, e->u.is.in);
        }
        fputc(')', out);
        break;
    case DW_E_SET:
        fputs("(set", out);
        print_args(out, e->u.list.v, e->u.list.n);
        fputc(')', out);
        break;
    case DW_E_RECORD:
        fputs("(record", out);
        for (size_t i = 0; i < e->u.rec.n; i++) {
            fputs(" (", out);
            dw_str_print_quoted(out, e->u.rec.v[i].key.s, e->u.rec.v[i].key.len);
            fputc(' ', out);
            dw_expr_print(out, e->u.rec.v[i].value);
            fputc(')', out);
        }
        fputc(')', out);
        break;
    case DW_E_METHOD:
        fprintf(out, "(.%.*s() ", (int)e->u.call.name.len, e->u.call.name.s);
        dw_expr_print(out, e->u.call.recv);
        print_args(out, e->u.call.args, e->u.call.nargs);
        fputc(')', out);
        break;
    case DW_E_CALL:
        fprintf(out, "(call %.*s", (int)e->u.call.name.len, e->u.call.name.s);
        print_args(out, e->u.call.args, e->u.call.nargs);
        fputc(')', out);
        break;
    case DW_E_TEMPORAL:
        if (e->u.temporal) dw_temporal_print(out, e->u.temporal);
        else fputs("(temporal <null>)", out);
        break;
    default: fputs("<?>", out); break;
    }
}

static void print_scope(FILE *out, const char *var, const dw_scope_con *c)
{
    fprintf(out, "  %s", var);
    switch (c->kind) {
    case DW_SC_ANY: break;
    case DW_SC_EQ: fputs(" ==", out); break;
    case DW_SC_IN: case DW_SC_IN_LIST: fputs(" in", out); break;
    case DW_SC_IS: case DW_SC_IS_IN: fprintf(out, " is %.*s", (int)c->is_type.len, c->is_type.s); break;
    }
    if (c->kind == DW_SC_IS_IN) fputs(" in", out);
    if (c->kind == DW_SC_EQ || c->kind == DW_SC_IN || c->kind == DW_SC_IS_IN) {
        fputc(' ', out);
        if (c->target_is_slot) fprintf(out, "?%.*s", (int)c->slot.len, c->slot.s);
        else print_euid(out, &c->target);
    }
    if (c->kind == DW_SC_IN_LIST) {
        fputs(" [", out);
        for (size_t i = 0; i < c->nlist; i++) {
            if (i) fputs(", ", out);
            print_euid(out, &c->list[i]);
        }
        fputc(']', out);
    }
    fputc('\n', out);
}

void dw_policy_print(FILE *out, const dw_policy *p)
{
    fputs(p->effect == DW_PERMIT ? "permit" : "forbid", out);
    if (p->is_template) fputs(" template", out);
    fputc('\n', out);
    for (size_t i = 0; i < p->nannots; i++) {
        const dw_annotation *a = &p->annots[i];
        fprintf(out, "  @%.*s", (int)a->key.len, a->key.s);
        if (a->has_value) {
            fputc(' ', out);
            dw_str_print_quoted(out, a->value.s, a->value.len);
        }
        fputc('\n', out);
    }
    print_scope(out, "principal", &p->principal);
    print_scope(out, "action", &p->action);
    print_scope(out, "resource", &p->resource);
    for (size_t i = 0; i < p->nclauses; i++) {
        const dw_clause *c = &p->clauses[i];
        fprintf(out, "  %s%s ", c->is_when ? "when" : "unless", c->guardrails ? " guardrails" : "");
        dw_expr_print(out, c->body);
        fputc('\n', out);
    }
}

void dw_macro_print(FILE *out, const dw_macro_def *m)
{
    fprintf(out, "def %s %.*s(", m->kind == DW_MACRO_CEDAR ? "cedar" : "temporal", (int)m->name.len, m->name.s);
    for (size_t i = 0; i < m->nparams; i++)
        fprintf(out, "%s?%.*s", i ? ", " : "", (int)m->params[i].len, m->params[i].s);
    fputs(")\n  ", out);
    if (m->kind == DW_MACRO_CEDAR) dw_expr_print(out, m->cedar_body);
    else if (m->temporal_body) dw_temporal_print(out, m->temporal_body);
    fputc('\n', out);
}

void dw_policy_set_print(FILE *out, const dw_policy_set *ps)
{
    for (size_t i = 0; i < ps->nmacros; i++) dw_macro_print(out, &ps->macros[i]);
    for (size_t i = 0; i < ps->npolicies; i++) {
        fprintf(out, "policy%zu: ", i);
        dw_policy_print(out, &ps->policies[i]);
    }
}
