/* est_write.c - a parsed policy set as Cedar's JSON policy format (est.h).
 * The shapes and member order are Cedar 4.x's, checked against cedar-wasm's
 * policyToJson over the corpus (tests/diff/est.js). */
#include <stdlib.h>
#include "est.h"
#include "../lang/tast.h"
#include "../stdlib/utf8.h"

typedef struct est_w { dw_buf *b; const dw_policy_set *ps; dw_diags *diags; int err; } est_w;

static void put(est_w *w, const char *s) { if (!w->err && dw_buf_append(w->b, s, strlen(s))) w->err = -1; }
static void str(est_w *w, const char *s, size_t n)
{
    if (w->err) return;
    int r = dw_json_escape_buf(w->b, s, n, DW_JSON_SERDE);
    if (r == -1) w->err = -1;
    else if (r == -2) { dw_error(w->diags, w->ps->src, (dw_loc){ 0 }, "a string is not UTF-8; Cedar's JSON cannot hold it"); w->err = 1; }
}
static void key(est_w *w, const char *k) { str(w, k, strlen(k)); put(w, ":"); }

static void euid(est_w *w, const dw_euid_lit *u)
{
    put(w, "{\"type\":"); str(w, u->type.s, u->type.len);
    put(w, ",\"id\":"); str(w, u->id.s, u->id.len); put(w, "}");
}

static void refuse(est_w *w, dw_loc loc, const char *what)
{
    if (w->err) return;
    dw_diag_add(w->diags, DW_SEV_ERROR, w->ps->src, loc, "Cedar's JSON policy format holds Cedar policies only: temporal rules, macros and provider calls are Dogwood's",
                "%s has no form in Cedar's JSON policy format", what);
    w->err = 1;
}

static void expr(est_w *w, const dw_expr *e);

static void bin(est_w *w, const char *op, const dw_expr *l, const dw_expr *r)
{
    put(w, "{"); key(w, op); put(w, "{\"left\":"); expr(w, l); put(w, ",\"right\":"); expr(w, r); put(w, "}}");
}
static void un(est_w *w, const char *op, const dw_expr *a)
{
    put(w, "{"); key(w, op); put(w, "{\"arg\":"); expr(w, a); put(w, "}}");
}

/* `e has a.b.c`: Cedar writes the path as one node, its names in a list. */
static void has_path(est_w *w, const dw_expr *e)
{
    put(w, "{\"has\":{\"left\":"); expr(w, e->u.path.kids0); put(w, ",\"attr\":[");
    for (size_t i = 0; i < e->u.path.n; i++) {
        if (i) put(w, ",");
        str(w, e->u.path.attrs[i].s, e->u.path.attrs[i].len);
    }
    put(w, "]}}");
}

static int rec_cmp(const void *a, const void *b)
{
    return dw_str_cmp((*(const dw_record_entry *const *)a)->key, (*(const dw_record_entry *const *)b)->key);
}

static void record(est_w *w, const dw_expr *e)
{
    size_t n = e->u.rec.n;
    const dw_record_entry **v = n ? malloc(n * sizeof *v) : NULL;
    if (n && !v) { w->err = -1; return; }
    for (size_t i = 0; i < n; i++) v[i] = &e->u.rec.v[i];
    if (n > 1) qsort(v, n, sizeof *v, rec_cmp);        /* Cedar's record is a sorted map */
    put(w, "{\"Record\":{");
    for (size_t i = 0; i < n; i++) {
        if (i) put(w, ",");
        str(w, v[i]->key.s, v[i]->key.len); put(w, ":"); expr(w, v[i]->value);
    }
    put(w, "}}");
    free(v);
}

static void like(est_w *w, const dw_expr *e)
{
    put(w, "{\"like\":{\"left\":"); expr(w, e->u.like.kids0); put(w, ",\"pattern\":[");
    const dw_like_pattern *p = &e->u.like.pat;
    bool first = true;
    for (size_t k = 0; k < p->nseg; k++) {
        if (k) { put(w, first ? "\"Wildcard\"" : ",\"Wildcard\""); first = false; }
        const char *s = p->seg[k].s;
        size_t len = p->seg[k].len;
        for (size_t i = 0; i < len;) {          /* one Literal per character, as Cedar */
            size_t cl = dw_utf8_len((const unsigned char *)s + i, len - i);
            if (!cl) cl = 1;
            put(w, first ? "{\"Literal\":" : ",{\"Literal\":"); first = false;
            str(w, s + i, cl); put(w, "}");
            i += cl;
        }
    }
    put(w, "]}}");
}

static const char *builtin_binary_method(dw_str m)
{
    static const char *const two[] = { "contains", "containsAll", "containsAny", "getTag", "hasTag" };
    for (size_t i = 0; i < sizeof two / sizeof *two; i++) if (dw_str_is(m, two[i])) return two[i];
    return NULL;
}

static void call(est_w *w, const dw_expr *e)
{
    const char *name = e->u.call.name.s;
    if (e->kind == DW_E_METHOD) {
        const char *b = builtin_binary_method(e->u.call.name);
        if (b && e->u.call.nargs == 1) { bin(w, b, e->u.call.recv, e->u.call.args[0]); return; }
        if (dw_str_is(e->u.call.name, "isEmpty") && e->u.call.nargs == 0) { un(w, "isEmpty", e->u.call.recv); return; }
    } else {
        static const char *const ctors[] = { "decimal", "ip", "datetime", "duration" };
        bool ext = false;
        for (size_t i = 0; i < sizeof ctors / sizeof *ctors; i++) ext |= dw_str_is(e->u.call.name, ctors[i]);
        if (!ext) { refuse(w, e->loc, e->u.call.nsegs > 1 ? "an information provider call" : "a macro call"); return; }
    }
    put(w, "{"); str(w, name, e->u.call.name.len); put(w, ":[");
    bool first = true;
    if (e->kind == DW_E_METHOD) { expr(w, e->u.call.recv); first = false; }
    for (size_t i = 0; i < e->u.call.nargs; i++) { if (!first) put(w, ","); expr(w, e->u.call.args[i]); first = false; }
    put(w, "]}");
}

static void expr(est_w *w, const dw_expr *e)
{
    if (w->err) return;
    static const char *const rel[] = {
        [DW_E_EQ] = "==", [DW_E_NE] = "!=", [DW_E_LT] = "<", [DW_E_LE] = "<=", [DW_E_GT] = ">", [DW_E_GE] = ">=",
        [DW_E_IN] = "in", [DW_E_ADD] = "+", [DW_E_SUB] = "-", [DW_E_MUL] = "*", [DW_E_AND] = "&&", [DW_E_OR] = "||",
    };
    static const char *const vars[] = { "principal", "action", "resource", "context" };
    switch (e->kind) {
    case DW_E_BOOL: put(w, e->u.b ? "{\"Value\":true}" : "{\"Value\":false}"); return;
    case DW_E_LONG: {
        char n[32];
        snprintf(n, sizeof n, "{\"Value\":%lld}", (long long)e->u.i);
        put(w, n);
        return;
    }
    case DW_E_STRING: put(w, "{\"Value\":"); str(w, e->u.str.s, e->u.str.len); put(w, "}"); return;
    case DW_E_ENTITY: put(w, "{\"Value\":{\"__entity\":"); euid(w, &e->u.euid); put(w, "}}"); return;
    case DW_E_VAR: put(w, "{\"Var\":\""); put(w, vars[e->u.var]); put(w, "\"}"); return;
    case DW_E_SLOT:
        if (!dw_str_is(e->u.name, "principal") && !dw_str_is(e->u.name, "resource")) { refuse(w, e->loc, "a macro parameter"); return; }
        put(w, "{\"Slot\":\"?"); put(w, e->u.name.s); put(w, "\"}");
        return;
    case DW_E_BINDER: refuse(w, e->loc, "a temporal binder"); return;
    case DW_E_TEMPORAL: refuse(w, e->loc, "a temporal condition"); return;
    case DW_E_IF:
        put(w, "{\"if-then-else\":{\"if\":"); expr(w, e->u.kids[0]); put(w, ",\"then\":"); expr(w, e->u.kids[1]);
        put(w, ",\"else\":"); expr(w, e->u.kids[2]); put(w, "}}");
        return;
    case DW_E_AND: case DW_E_OR: case DW_E_EQ: case DW_E_NE: case DW_E_LT: case DW_E_LE: case DW_E_GT: case DW_E_GE:
    case DW_E_IN: case DW_E_ADD: case DW_E_SUB: case DW_E_MUL:
        bin(w, rel[e->kind], e->u.kids[0], e->u.kids[1]);
        return;
    case DW_E_NOT: un(w, "!", e->u.kids[0]); return;
    case DW_E_NEG: un(w, "neg", e->u.kids[0]); return;
    case DW_E_HAS: case DW_E_GETATTR:
        put(w, e->kind == DW_E_HAS ? "{\"has\":{\"left\":" : "{\".\":{\"left\":"); expr(w, e->u.attr.kids0);
        put(w, ",\"attr\":"); str(w, e->u.attr.attr.s, e->u.attr.attr.len); put(w, "}}");
        return;
    case DW_E_HAS_PATH: has_path(w, e); return;
    case DW_E_LIKE: like(w, e); return;
    case DW_E_IS:
        put(w, "{\"is\":{\"left\":"); expr(w, e->u.is.kids0); put(w, ",\"entity_type\":"); str(w, e->u.is.type.s, e->u.is.type.len);
        if (e->u.is.in) { put(w, ",\"in\":"); expr(w, e->u.is.in); }
        put(w, "}}");
        return;
    case DW_E_SET:
        put(w, "{\"Set\":[");
        for (size_t i = 0; i < e->u.list.n; i++) { if (i) put(w, ","); expr(w, e->u.list.v[i]); }
        put(w, "]}");
        return;
    case DW_E_RECORD: record(w, e); return;
    case DW_E_METHOD: case DW_E_CALL: call(w, e); return;
    }
    refuse(w, e->loc, "this expression");
}

static void scope(est_w *w, const char *var, const dw_scope_con *c)
{
    key(w, var);
    switch (c->kind) {
    case DW_SC_ANY: put(w, "{\"op\":\"All\"}"); return;
    case DW_SC_EQ: case DW_SC_IN:
        put(w, c->kind == DW_SC_EQ ? "{\"op\":\"==\"," : "{\"op\":\"in\",");
        if (c->target_is_slot) { put(w, "\"slot\":\"?"); put(w, c->slot.s); put(w, "\"}"); }
        else { put(w, "\"entity\":"); euid(w, &c->target); put(w, "}"); }
        return;
    case DW_SC_IS: case DW_SC_IS_IN:
        put(w, "{\"op\":\"is\",\"entity_type\":"); str(w, c->is_type.s, c->is_type.len);
        if (c->kind == DW_SC_IS_IN) {
            if (c->target_is_slot) { put(w, ",\"in\":{\"slot\":\"?"); put(w, c->slot.s); put(w, "\"}"); }
            else { put(w, ",\"in\":{\"entity\":"); euid(w, &c->target); put(w, "}"); }
        }
        put(w, "}");
        return;
    case DW_SC_IN_LIST:
        /* Cedar keeps a one-action list as the action itself */
        if (c->nlist == 1) { put(w, "{\"op\":\"in\",\"entity\":"); euid(w, &c->list[0]); put(w, "}"); return; }
        put(w, "{\"op\":\"in\",\"entities\":[");
        for (size_t i = 0; i < c->nlist; i++) { if (i) put(w, ","); euid(w, &c->list[i]); }
        put(w, "]}");
        return;
    }
}

static int annot_cmp(const void *a, const void *b)
{
    return dw_str_cmp((*(const dw_annotation *const *)a)->key, (*(const dw_annotation *const *)b)->key);
}

static void policy(est_w *w, const dw_policy *p)
{
    put(w, p->effect == DW_PERMIT ? "{\"effect\":\"permit\"," : "{\"effect\":\"forbid\",");
    scope(w, "principal", &p->principal); put(w, ",");
    scope(w, "action", &p->action); put(w, ",");
    scope(w, "resource", &p->resource);
    put(w, ",\"conditions\":[");
    for (size_t i = 0; i < p->nclauses; i++) {
        const dw_clause *c = &p->clauses[i];
        if (i) put(w, ",");
        put(w, c->is_when ? "{\"kind\":\"when\",\"body\":" : "{\"kind\":\"unless\",\"body\":");
        expr(w, c->body);
        put(w, "}");
    }
    put(w, "]");
    if (p->nannots) {                 /* a sorted map in Cedar; absent when empty */
        const dw_annotation **v = malloc(p->nannots * sizeof *v);
        if (!v) { w->err = -1; return; }
        for (size_t i = 0; i < p->nannots; i++) v[i] = &p->annots[i];
        qsort(v, p->nannots, sizeof *v, annot_cmp);
        put(w, ",\"annotations\":{");
        for (size_t i = 0; i < p->nannots; i++) {
            if (i) put(w, ",");
            str(w, v[i]->key.s, v[i]->key.len); put(w, ":");
            if (v[i]->has_value) str(w, v[i]->value.s, v[i]->value.len);
            else put(w, "null");
        }
        put(w, "}");
        free(v);
    }
    put(w, "}");
}

static void policy_map(est_w *w, const dw_policy *v, size_t n)
{
    put(w, "{");
    for (size_t i = 0; i < n; i++) {
        if (i) put(w, ",");
        str(w, v[i].id.s, v[i].id.len); put(w, ":"); policy(w, &v[i]);
    }
    put(w, "}");
}

int dw_est_write_set(dw_buf *out, const dw_policy_set *ps, dw_diags *diags)
{
    est_w w = { out, ps, diags, 0 };
    if (ps->nmacros) { refuse(&w, ps->macros[0].loc, "a macro definition"); return w.err; }
    put(&w, "{\"templates\":");
    policy_map(&w, ps->templates, ps->ntemplates);
    put(&w, ",\"staticPolicies\":");
    policy_map(&w, ps->policies, ps->npolicies);
    put(&w, ",\"templateLinks\":[]}");
    return w.err;
}
