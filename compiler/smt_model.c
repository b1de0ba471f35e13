/* smt_model.c - a Z3 model read back as a Cedar request and entities (JSON) and as leaf values: the witness side, separate from the encoding. */
#include "smt_int.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../stdlib/json_escape.h"

/* ------------------------------------------------------------------ models as JSON */

static Z3_ast mev(dw_smt *x, Z3_ast t)
{
    Z3_ast r = NULL;
    if (!Z3_model_eval(C, x->model, t, true, &r) || !r) FAIL();
    return r;
}

static bool mbool(dw_smt *x, Z3_ast t) { return Z3_get_bool_value(C, mev(x, t)) == Z3_L_TRUE; }

static int64_t mint(dw_smt *x, Z3_ast t)
{
    Z3_ast v = mev(x, t);
    if (Z3_get_sort_kind(C, Z3_get_sort(C, v)) == Z3_BV_SORT) {
        uint64_t u = 0;
        if (!Z3_get_numeral_uint64(C, v, &u)) FAIL();
        return (int64_t)u;
    }
    int64_t i = 0;
    if (!Z3_get_numeral_int64(C, v, &i)) FAIL();
    return i;
}

/* The counterexample is parsed back and run on the VM: its strings must be
 * exact, so text that is not UTF-8 fails the model rather than changing. */
static void json_string(dw_smt *x, dw_buf *b, const char *s, size_t n)
{
    if (dw_json_escape_buf(b, s, n, DW_JSON_EXACT)) FAIL();
}

/* the id text of entity number n of `type` */
static void entity_id(dw_smt *x, const char *type, int64_t n, dw_buf *b)
{
    const char *lit = dw_smt_lit_name(x, type, n);
    if (lit) { json_string(x, b, lit, strlen(lit)); return; }
    const dw_entity_decl *e = dw_smt_entity(x, (dw_str){ type, strlen(type) });
    if (e && e->is_enum) {
        if (n < 0 || (size_t)n >= e->nenum) FAIL();
        json_string(x, b, e->enum_ids[n].s, e->enum_ids[n].len);
        return;
    }
    char name[64];
    snprintf(name, sizeof name, n < 0 ? "e_%lld" : "e%lld", (long long)(n < 0 ? -n : n));
    /* never the spelling of a literal id of the type */
    for (;;) {
        bool taken = false;
        for (size_t i = 0; i < x->nlits && !taken; i++) taken = strcmp(x->lits[i].type, type) == 0 && strcmp(x->lits[i].id, name) == 0;
        if (!taken || strlen(name) + 2 > sizeof name) break;
        strcat(name, "_");
    }
    json_string(x, b, name, strlen(name));
}

static void uid_json(dw_smt *x, const char *type, int64_t n, dw_buf *b)
{
    dw_buf_printf(b, "{\"type\": ");
    json_string(x, b, type, strlen(type));
    dw_buf_printf(b, ", \"id\": ");
    entity_id(x, type, n, b);
    dw_buf_putc(b, '}');
}

static void value_json(dw_smt *x, const sv *v, dw_buf *b);

/* the members of a set value in the model */
static void set_members(dw_smt *x, Z3_ast s, Z3_ast **out, size_t *n)
{
    Z3_ast cur = mev(x, s);
    size_t cap = 0;
    Z3_ast *seen = NULL;
    size_t nseen = 0;
    *out = NULL;
    *n = 0;
    for (int guard = 0; guard < 100000; guard++) {
        if (Z3_is_as_array(C, cur)) {
            Z3_func_decl f = Z3_get_as_array_func_decl(C, cur);
            Z3_func_interp fi = Z3_model_get_func_interp(C, x->model, f);
            if (!fi) FAIL();
            Z3_func_interp_inc_ref(C, fi);
            unsigned ne = Z3_func_interp_get_num_entries(C, fi);
            for (unsigned i = 0; i < ne; i++) {
                Z3_func_entry en = Z3_func_interp_get_entry(C, fi, i);
                Z3_ast arg = Z3_func_entry_get_arg(C, en, 0), val = Z3_func_entry_get_value(C, en);
                if (Z3_get_bool_value(C, val) == Z3_L_TRUE) {
                    if (*n == cap) { cap = cap ? cap * 2 : 8; Z3_ast *p = dw_smt_xalloc(x, cap * sizeof *p); if (*n) memcpy(p, *out, *n * sizeof *p); *out = p; }
                    (*out)[(*n)++] = arg;
                }
            }
            Z3_ast el = Z3_func_interp_get_else(C, fi);
            bool inf = Z3_get_bool_value(C, el) != Z3_L_FALSE;
            Z3_func_interp_dec_ref(C, fi);
            if (inf) FAIL();
            return;
        }
        if (Z3_get_ast_kind(C, cur) != Z3_APP_AST) FAIL();
        Z3_app ap = Z3_to_app(C, cur);
        Z3_decl_kind k = Z3_get_decl_kind(C, Z3_get_app_decl(C, ap));
        if (k == Z3_OP_CONST_ARRAY) {
            if (Z3_get_bool_value(C, Z3_get_app_arg(C, ap, 0)) != Z3_L_FALSE) FAIL();
            return;
        }
        if (k != Z3_OP_STORE) FAIL();
        Z3_ast idx = Z3_get_app_arg(C, ap, 1), val = Z3_get_app_arg(C, ap, 2);
        bool dup = false;
        for (size_t i = 0; i < nseen && !dup; i++) dup = Z3_is_eq_ast(C, seen[i], idx);
        if (!dup) {
            Z3_ast *p = dw_smt_xalloc(x, (nseen + 1) * sizeof *p);
            if (nseen) memcpy(p, seen, nseen * sizeof *p);
            p[nseen++] = idx;
            seen = p;
            if (Z3_get_bool_value(C, val) == Z3_L_TRUE) {
                if (*n == cap) { cap = cap ? cap * 2 : 8; Z3_ast *q = dw_smt_xalloc(x, cap * sizeof *q); if (*n) memcpy(q, *out, *n * sizeof *q); *out = q; }
                (*out)[(*n)++] = idx;
            }
        }
        cur = Z3_get_app_arg(C, ap, 0);
    }
    FAIL();
}

static void ext_json(dw_smt *x, dw_buf *b, const char *fn, const char *arg)
{
    dw_buf_printf(b, "{\"__extn\": {\"fn\": \"%s\", \"arg\": ", fn);
    json_string(x, b, arg, strlen(arg));
    dw_buf_printf(b, "}}");
}

static void value_json(dw_smt *x, const sv *v, dw_buf *b)
{
    const dw_type *t = v->t;
    char tmp[64];
    switch (t->kind) {
    case DW_T_BOOL: dw_buf_printf(b, mbool(x, v->v) ? "true" : "false"); return;
    case DW_T_LONG: dw_buf_printf(b, "%lld", (long long)mint(x, v->v)); return;
    case DW_T_DECIMAL: dw_decimal_format(mint(x, v->v), tmp, sizeof tmp); ext_json(x, b, "decimal", tmp); return;
    case DW_T_DATETIME: dw_datetime_format(mint(x, v->v), tmp, sizeof tmp); ext_json(x, b, "datetime", tmp); return;
    case DW_T_DURATION: dw_duration_format(mint(x, v->v), tmp, sizeof tmp); ext_json(x, b, "duration", tmp); return;
    case DW_T_IPADDR: {
        int64_t n = mint(x, v->v);
        if (n >= 1000000 && (size_t)(n - 1000000) < x->nips) dw_ip_format(&x->ips[n - 1000000].ip, tmp, sizeof tmp);
        else snprintf(tmp, sizeof tmp, "10.%u.%u.%u", (unsigned)((uint64_t)n >> 16) & 255, (unsigned)((uint64_t)n >> 8) & 255, (unsigned)n & 255);
        ext_json(x, b, "ip", tmp);
        return;
    }
    case DW_T_STRING: {
        Z3_ast s = mev(x, v->v);
        if (!Z3_is_string(C, s)) FAIL();
        unsigned len = 0;
        Z3_char_ptr p = Z3_get_lstring(C, s, &len);
        if (!p) FAIL();
        json_string(x, b, p, len);
        return;
    }
    case DW_T_ENTITY: {
        const char *type = dw_smt_tname(x, t->name);
        int64_t n = mint(x, v->v);
        dw_smt_note_entity(x, type, Z3_mk_int64(C, n, x->int_s));
        dw_buf_printf(b, "{\"__entity\": ");
        uid_json(x, type, n, b);
        dw_buf_putc(b, '}');
        return;
    }
    case DW_T_SET: {
        if (dw_smt_opaque_set(t)) FAIL();
        Z3_ast *m;
        size_t n;
        set_members(x, v->v, &m, &n);
        dw_buf_putc(b, '[');
        for (size_t i = 0; i < n; i++) {
            sv e = { .t = t->elem, .v = m[i], .err = FALSE_ };
            if (i) dw_buf_printf(b, ", ");
            value_json(x, &e, b);
        }
        dw_buf_putc(b, ']');
        return;
    }
    case DW_T_RECORD: {
        dw_buf_putc(b, '{');
        bool first = true;
        for (size_t i = 0; i < v->rec->n; i++) {
            if (!mbool(x, v->rec->has[i])) continue;
            if (!first) dw_buf_printf(b, ", ");
            first = false;
            json_string(x, b, v->rec->k[i].s, v->rec->k[i].len);
            dw_buf_printf(b, ": ");
            value_json(x, &v->rec->v[i], b);
        }
        dw_buf_putc(b, '}');
        return;
    }
    }
}

int dw_smt_model_request(dw_smt *x, dw_buf *request, dw_buf *entities)
{
    if (!x->model) return -1;
    if (setjmp(x->fail)) return -1;
    dw_buf *b = request;
    dw_buf_printf(b, "{\"principal\": ");
    uid_json(x, dw_smt_tname(x, x->env.P->name), mint(x, x->principal.v), b);
    dw_buf_printf(b, ", \"action\": ");
    uid_json(x, dw_smt_tname(x, x->env.A->uid.type), dw_smt_lit_number(x, x->env.A->uid.type, x->env.A->uid.id), b);
    dw_buf_printf(b, ", \"resource\": ");
    uid_json(x, dw_smt_tname(x, x->env.R->name), mint(x, x->resource.v), b);
    dw_buf_printf(b, ", \"context\": ");
    value_json(x, &x->context, b);
    dw_buf_putc(b, '}');
    /* the store: every entity term of the environment that exists in the
     * model, with its attributes and the parents the model gives it (entity
     * values printed above are added to the terms as they are met) */
    b = entities;
    dw_buf_putc(b, '[');
    size_t nout = 0;
    typedef struct done_t { const char *type; int64_t n; } done_t;
    size_t capdone = x->nents + 16;
    done_t *done = dw_smt_xalloc(x, capdone * sizeof *done);
    size_t ndone = 0;
    for (size_t i = 0; i < x->nents; i++) {
        const char *type = x->ents[i].type;
        int64_t n = mint(x, x->ents[i].id);
        bool dup = false;
        for (size_t k = 0; k < ndone && !dup; k++) dup = done[k].n == n && strcmp(done[k].type, type) == 0;
        if (dup) continue;
        if (ndone == capdone) {
            done_t *d2 = dw_smt_xalloc(x, 2 * capdone * sizeof *d2);
            memcpy(d2, done, ndone * sizeof *d2);
            done = d2;
            capdone *= 2;
        }
        done[ndone++] = (done_t){ type, n };
        dw_str ts = { type, strlen(type) };
        const dw_entity_decl *d = dw_smt_entity(x, ts);
        Z3_ast id = Z3_mk_int64(C, n, x->int_s);
        if (!d || !mbool(x, dw_smt_exists(x, ts, id))) continue;
        dw_buf_printf(b, nout++ ? ", {\"uid\": " : "{\"uid\": ");
        uid_json(x, type, n, b);
        dw_buf_printf(b, ", \"attrs\": ");
        sv rec = dw_smt_mk_free(x, d->shape, type, 1, &id);
        value_json(x, &rec, b);
        dw_buf_printf(b, ", \"parents\": [");
        /* parents: entity terms of an ancestor type the model puts above this one */
        size_t np = 0;
        for (size_t k = 0; k < x->nents; k++) {
            const char *pt = x->ents[k].type;
            dw_str ps = { pt, strlen(pt) };
            if (!dw_smt_type_below(x, ts, ps, 0)) continue;
            int64_t pn = mint(x, x->ents[k].id);
            bool pdup = false;
            for (size_t q = 0; q < k && !pdup; q++) pdup = strcmp(x->ents[q].type, pt) == 0 && mint(x, x->ents[q].id) == pn;
            if (pdup) continue;
            char *rn = dw_arena_printf(&x->a, "%s!in!%s", type, pt);
            if (!rn) FAIL();
            Z3_ast args[2] = { id, Z3_mk_int64(C, pn, x->int_s) };
            if (!mbool(x, dw_smt_app(x, rn, x->bool_s, 2, args))) continue;
            if (np++) dw_buf_printf(b, ", ");
            uid_json(x, pt, pn, b);
        }
        dw_buf_printf(b, "]");
        if (d->tags) dw_buf_printf(b, ", \"tags\": {}");
        dw_buf_putc(b, '}');
    }
    dw_buf_putc(b, ']');
    return 0;
}

int dw_smt_model_leaf(dw_smt *x, unsigned tag, unsigned k)
{
    if (!x->model) return 0;
    if (setjmp(x->fail)) return 0;
    for (size_t i = 0; i < x->nleaves; i++)
        if (x->leaves[i].tag == tag && x->leaves[i].k == k) return mbool(x, x->leaves[i].v) ? 1 : 0;
    return 0;
}

unsigned dw_smt_leaf_count(dw_smt *x, unsigned tag)
{
    unsigned n = 0;
    for (size_t i = 0; i < x->nleaves; i++) if (x->leaves[i].tag == tag && x->leaves[i].k + 1 > n) n = x->leaves[i].k + 1;
    return n;
}
