/* smt.c - Cedar conditions as Z3 terms (see smt.h and docs/CHECK.md): the context, literal ids, free terms, the request environment, policies and solving; expressions are in smt_expr.c, models read back in smt_model.c. */
#include "smt_int.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "macros.h"
static void z3_err(Z3_context c, Z3_error_code e) { (void)c; (void)e; }

static void model_unref(dw_smt *x, Z3_model m)
{
    if (m && !x->no_dec_ref) Z3_model_dec_ref(x->c, m);
}

void *dw_smt_xalloc(dw_smt *x, size_t n)
{
    void *p = dw_arena_alloc(&x->a, n ? n : 1);
    if (!p) FAIL();
    return p;
}

void dw_smt_grow(dw_smt *x, void **v, size_t n, size_t *cap, size_t size)
{
    if (n < *cap) return;
    size_t nc = *cap ? *cap * 2 : 32;
    void *p = realloc(*v, nc * size);
    if (!p) FAIL();
    *v = p;
    *cap = nc;
}

Z3_context dw_smt_ctx(dw_smt *x) { return x->c; }
const dw_smt_stats *dw_smt_get_stats(const dw_smt *x) { return &x->st; }

Z3_ast dw_smt_bool(dw_smt *x, bool b) { return b ? Z3_mk_true(C) : Z3_mk_false(C); }
bool dw_smt_same_term(dw_smt *x, Z3_ast a, Z3_ast b) { return a && b && Z3_is_eq_ast(C, a, b); }
unsigned dw_smt_term_id(dw_smt *x, Z3_ast a) { return Z3_get_ast_id(C, a); }
bool dw_smt_is_true(dw_smt *x, Z3_ast a) { return Z3_is_eq_ast(C, a, Z3_mk_true(C)); }
bool dw_smt_is_false(dw_smt *x, Z3_ast a) { return Z3_is_eq_ast(C, a, Z3_mk_false(C)); }
Z3_ast dw_smt_and(dw_smt *x, Z3_ast a, Z3_ast b)
{
    if (dw_smt_is_true(x, a)) return b;
    if (dw_smt_is_true(x, b)) return a;
    if (dw_smt_is_false(x, a) || dw_smt_is_false(x, b)) return Z3_mk_false(C);
    Z3_ast v[2] = { a, b };
    return Z3_mk_and(C, 2, v);
}
Z3_ast dw_smt_or(dw_smt *x, Z3_ast a, Z3_ast b)
{
    if (dw_smt_is_false(x, a)) return b;
    if (dw_smt_is_false(x, b)) return a;
    if (dw_smt_is_true(x, a) || dw_smt_is_true(x, b)) return Z3_mk_true(C);
    Z3_ast v[2] = { a, b };
    return Z3_mk_or(C, 2, v);
}
Z3_ast dw_smt_or_n(dw_smt *x, const Z3_ast *v, size_t n)
{
    if (n == 0) return Z3_mk_false(C);
    if (n == 1) return v[0];
    return Z3_mk_or(C, (unsigned)n, v);
}
Z3_ast dw_smt_not(dw_smt *x, Z3_ast a)
{
    if (dw_smt_is_true(x, a)) return Z3_mk_false(C);
    if (dw_smt_is_false(x, a)) return Z3_mk_true(C);
    return Z3_mk_not(C, a);
}

/* ------------------------------------------------------------------ setup */

dw_smt *dw_smt_new(const dw_schema *schema, unsigned timeout_ms)
{
    dw_smt *x = calloc(1, sizeof *x);
    if (!x) return NULL;
    Z3_config cfg = Z3_mk_config();
    Z3_set_param_value(cfg, "model", "true");
    x->c = Z3_mk_context(cfg);
    Z3_del_config(cfg);
    if (!x->c) { free(x); return NULL; }
    Z3_set_error_handler(x->c, z3_err);
    x->s = schema;
    x->timeout_ms = timeout_ms;
    dw_arena_init(&x->a, 1 << 16);
    x->bool_s = Z3_mk_bool_sort(C);
    x->bv_s = Z3_mk_bv_sort(C, 64);
    x->str_s = Z3_mk_string_sort(C);
    x->int_s = Z3_mk_int_sort(C);
    x->opaque_s = Z3_mk_uninterpreted_sort(C, Z3_mk_string_symbol(C, "Opaque"));
    x->re_s = Z3_mk_re_sort(C, x->str_s);
    for (int b = 0x20; b < 0x7f; b++) x->alpha[b] = true;
    const char *mem = getenv("DWC_SOLVER_MEM_MB");
    x->wk = (dw_smt_worker){ .timeout_ms = timeout_ms, .mem_mb = mem ? strtoul(mem, NULL, 10) : 4096, .opaque = x->opaque_s };
    x->in_process = getenv("DWC_SOLVER_INPROCESS") != NULL;
    x->no_dec_ref = getenv("DWC_Z3_NO_DEC_REF") != NULL;
    return x;
}

void dw_smt_allow_bytes(dw_smt *x, const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char b = (unsigned char)text[i];
        if (b >= 0x80 || b == '\t' || b == '\n') x->alpha[b] = true;
    }
}

static void drop_recent(dw_smt *x);

void dw_smt_free(dw_smt *x)
{
    if (!x) return;
    dw_smt_worker_stop(&x->wk);
    model_unref(x, x->model);
    drop_recent(x);
    if (x->sol && !x->no_dec_ref) Z3_solver_dec_ref(C, x->sol);
    for (size_t i = 0; i < x->nlits; i++) { free(x->lits[i].type); free(x->lits[i].id); }
    free(x->lits);
    free(x->lit_slots);
    free(x->ips);
    free(x->ents);
    free(x->leaves);
    free(x->wf);
    dw_arena_free(&x->a);
    Z3_del_context(x->c);
    free(x);
}

static void add_wf(dw_smt *x, Z3_ast a)
{
    dw_smt_grow(x, (void **)&x->wf, x->nwf, &x->capwf, sizeof *x->wf);
    x->wf[x->nwf++] = a;
}

/* ------------------------------------------------------------------ schema helpers */

bool dw_smt_is_action_type(dw_str n)
{
    return dw_str_is(n, "Action") || (n.len > 8 && memcmp(n.s + n.len - 8, "::Action", 8) == 0);
}

const dw_entity_decl *dw_smt_entity(dw_smt *x, dw_str name) { return dw_schema_entity(x->s, name.s, name.len); }

/* May an entity of type `d` have an ancestor of type `a` (memberOf closure)? */
bool dw_smt_type_below(dw_smt *x, dw_str d, dw_str a, int depth)
{
    const dw_entity_decl *e = dw_smt_entity(x, d);
    if (!e || depth > 64) return false;
    for (size_t k = 0; k < e->nmember_of; k++)
        if (dw_str_eq(e->member_of[k], a) || dw_smt_type_below(x, e->member_of[k], a, depth + 1)) return true;
    return false;
}

/* Is action uid `d` (transitively) a member of action group `g`? */
bool dw_smt_action_below(dw_smt *x, const dw_euid_lit *d, const dw_euid_lit *g, int depth)
{
    if (dw_str_eq(d->type, g->type) && dw_str_eq(d->id, g->id)) return true;
    if (depth > 64) return false;
    const dw_action_decl *a = dw_schema_action(x->s, d->type.s, d->type.len, d->id.s, d->id.len);
    if (!a) return false;
    for (size_t k = 0; k < a->nparents; k++)
        if (dw_smt_action_below(x, &a->parents[k], g, depth + 1)) return true;
    return false;
}

/* ------------------------------------------------------------------ literal entity ids */

static uint64_t hash2(const char *a, size_t na, const char *b, size_t nb)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < na; i++) h = (h ^ (unsigned char)a[i]) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
    for (size_t i = 0; i < nb; i++) h = (h ^ (unsigned char)b[i]) * 1099511628211ull;
    return h;
}

static void rehash(dw_smt *x)
{
    size_t ns = x->nslots ? x->nslots * 2 : 256;
    uint32_t *sl = calloc(ns, sizeof *sl);
    if (!sl) FAIL();
    for (size_t i = 0; i < x->nlits; i++) {
        size_t j = hash2(x->lits[i].type, strlen(x->lits[i].type), x->lits[i].id, strlen(x->lits[i].id)) & (ns - 1);
        while (sl[j]) j = (j + 1) & (ns - 1);
        sl[j] = (uint32_t)i + 1;
    }
    free(x->lit_slots);
    x->lit_slots = sl;
    x->nslots = ns;
}

/* The number of entity literal type::id (enum ids: their index; others in
 * order of first use, per type). */
int64_t dw_smt_lit_number(dw_smt *x, dw_str type, dw_str id)
{
    if (x->nslots == 0 || (x->nlits + 1) * 2 > x->nslots) rehash(x);
    size_t j = hash2(type.s, type.len, id.s, id.len) & (x->nslots - 1);
    while (x->lit_slots[j]) {
        lit_ent *l = &x->lits[x->lit_slots[j] - 1];
        if (strlen(l->type) == type.len && memcmp(l->type, type.s, type.len) == 0 && strlen(l->id) == id.len &&
            memcmp(l->id, id.s, id.len) == 0)
            return l->n;
        j = (j + 1) & (x->nslots - 1);
    }
    int64_t n = 0;
    const dw_entity_decl *e = dw_smt_entity(x, type);
    if (e && e->is_enum) {
        n = -1;
        for (size_t k = 0; k < e->nenum; k++) if (dw_str_eq(e->enum_ids[k], id)) n = (int64_t)k;
        if (n < 0) FAIL();   /* not a member of the enum: the validator reports it */
    } else {
        for (size_t i = 0; i < x->nlits; i++)
            if (strlen(x->lits[i].type) == type.len && memcmp(x->lits[i].type, type.s, type.len) == 0) n++;
        n += 1000000;        /* literals far from the small numbers free ids tend to get */
    }
    dw_smt_grow(x, (void **)&x->lits, x->nlits, &x->caplits, sizeof *x->lits);
    lit_ent *l = &x->lits[x->nlits];
    l->type = strndup(type.s, type.len);
    l->id = malloc(id.len + 1);
    if (!l->type || !l->id) { free(l->type); free(l->id); FAIL(); }
    memcpy(l->id, id.s, id.len);
    l->id[id.len] = 0;
    l->n = n;
    x->lit_slots[j] = (uint32_t)x->nlits + 1;
    x->nlits++;
    return n;
}

const char *dw_smt_lit_name(dw_smt *x, const char *type, int64_t n)
{
    for (size_t i = 0; i < x->nlits; i++)
        if (x->lits[i].n == n && strcmp(x->lits[i].type, type) == 0) return x->lits[i].id;
    return NULL;
}

/* ------------------------------------------------------------------ sorts and free terms */

Z3_sort dw_smt_sort_of(dw_smt *x, const dw_type *t)
{
    if (!t) FAIL();
    switch (t->kind) {
    case DW_T_BOOL: return x->bool_s;
    case DW_T_LONG: case DW_T_DECIMAL: case DW_T_DATETIME: case DW_T_DURATION: return x->bv_s;
    case DW_T_STRING: return x->str_s;
    case DW_T_ENTITY: case DW_T_IPADDR: return x->int_s;
    case DW_T_SET: {
        const dw_type *e = t->elem;
        if (!e || e->kind == DW_T_SET || e->kind == DW_T_RECORD) return Z3_mk_set_sort(C, x->opaque_s);
        return Z3_mk_set_sort(C, dw_smt_sort_of(x, e));
    }
    case DW_T_RECORD: FAIL();
    }
    FAIL();
}

bool dw_smt_opaque_set(const dw_type *t) { return t->kind == DW_T_SET && (!t->elem || t->elem->kind == DW_T_SET || t->elem->kind == DW_T_RECORD); }

Z3_ast dw_smt_app(dw_smt *x, const char *name, Z3_sort range, unsigned n, const Z3_ast *args)
{
    Z3_symbol sym = Z3_mk_string_symbol(C, name);
    if (n == 0) return Z3_mk_const(C, sym, range);
    Z3_sort dom[2];
    for (unsigned i = 0; i < n; i++) dom[i] = Z3_get_sort(C, args[i]);
    Z3_func_decl f = Z3_mk_func_decl(C, sym, n, dom, range);
    return Z3_mk_app(C, f, n, args);
}

void dw_smt_note_entity(dw_smt *x, const char *type, Z3_ast id)
{
    unsigned aid = Z3_get_ast_id(C, id);
    for (size_t i = 0; i < x->nents; i++)
        if (Z3_get_ast_id(C, x->ents[i].id) == aid && strcmp(x->ents[i].type, type) == 0) return;
    dw_smt_grow(x, (void **)&x->ents, x->nents, &x->capents, sizeof *x->ents);
    x->ents[x->nents++] = (ent_term){ type, id };
}

const char *dw_smt_tname(dw_smt *x, dw_str s)
{
    char *p = dw_smt_xalloc(x, s.len + 1);
    memcpy(p, s.s, s.len);
    p[s.len] = 0;
    return p;
}

static Z3_ast regex_alpha(dw_smt *x)
{
    if (x->re_alpha) return x->re_alpha;
    Z3_ast parts[257];
    unsigned n = 0;
    parts[n++] = Z3_mk_re_range(C, Z3_mk_lstring(C, 1, " "), Z3_mk_lstring(C, 1, "~"));
    for (int b = 0; b < 256; b++) {
        if (!x->alpha[b] || (b >= 0x20 && b < 0x7f)) continue;
        char ch = (char)b;
        parts[n++] = Z3_mk_seq_to_re(C, Z3_mk_lstring(C, 1, &ch));
    }
    Z3_ast u = n == 1 ? parts[0] : Z3_mk_re_union(C, n, parts);
    x->re_alpha = Z3_mk_re_star(C, u);
    return x->re_alpha;
}

/* A value of type t named `name` (applied to args: an entity id, or none),
 * with its well-formedness recorded. */
sv dw_smt_mk_free(dw_smt *x, const dw_type *t, const char *name, unsigned n, const Z3_ast *args)
{
    sv r = { .t = t, .err = FALSE_ };
    if (!t) FAIL();
    if (t->kind == DW_T_RECORD) {
        srec *rc = dw_smt_xalloc(x, sizeof *rc);
        rc->n = t->nattrs;
        rc->k = dw_smt_xalloc(x, (t->nattrs + 1) * sizeof *rc->k);
        rc->v = dw_smt_xalloc(x, (t->nattrs + 1) * sizeof *rc->v);
        rc->has = dw_smt_xalloc(x, (t->nattrs + 1) * sizeof *rc->has);
        for (size_t i = 0; i < t->nattrs; i++) {
            const dw_attr_decl *ad = &t->attrs[i];
            char *fn = dw_arena_printf(&x->a, "%s.%.*s", name, (int)ad->name.len, ad->name.s);
            if (!fn) FAIL();
            rc->k[i] = ad->name;
            rc->v[i] = dw_smt_mk_free(x, ad->type, fn, n, args);
            if (ad->required) rc->has[i] = TRUE_;
            else {
                char *hn = dw_arena_printf(&x->a, "%s?", fn);
                if (!hn) FAIL();
                rc->has[i] = dw_smt_app(x, hn, x->bool_s, n, args);
            }
        }
        r.rec = rc;
        return r;
    }
    r.v = dw_smt_app(x, name, dw_smt_sort_of(x, t), n, args);
    if (t->kind == DW_T_STRING && x->restrict_strings) add_wf(x, Z3_mk_seq_in_re(C, r.v, regex_alpha(x)));
    if (t->kind == DW_T_ENTITY) {
        const dw_entity_decl *e = dw_smt_entity(x, t->name);
        if (e && e->is_enum) {
            add_wf(x, Z3_mk_ge(C, r.v, Z3_mk_int64(C, 0, x->int_s)));
            add_wf(x, Z3_mk_lt(C, r.v, Z3_mk_int64(C, (int64_t)e->nenum, x->int_s)));
        }
        dw_smt_note_entity(x, dw_smt_tname(x, t->name), r.v);
    }
    return r;
}

/* The text of an expression (keys for approximated terms). */
static const char *expr_text(dw_smt *x, const dw_expr *e)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) FAIL();
    dw_expr_print(f, e);
    fclose(f);
    if (!buf) FAIL();
    char *s = dw_arena_printf(&x->a, "~%s", buf);
    free(buf);
    if (!s) FAIL();
    return s;
}

/* An approximated term: a free value of type t keyed by e's text, erroring
 * when `base_err` holds or (can_err) under a free condition. */
sv dw_smt_approx(dw_smt *x, const dw_expr *e, const dw_type *t, Z3_ast base_err, bool can_err)
{
    x->approx = true;
    const char *k = expr_text(x, e);
    sv r = dw_smt_mk_free(x, t, k, 0, NULL);
    r.err = base_err;
    if (can_err) {
        char *ek = dw_arena_printf(&x->a, "%s!err", k);
        if (!ek) FAIL();
        r.err = OR(base_err, dw_smt_app(x, ek, x->bool_s, 0, NULL));
    }
    return r;
}

/* ------------------------------------------------------------------ environment */

sv dw_smt_entity_value(dw_smt *x, dw_str type, Z3_ast id, const dw_euid_lit *lit)
{
    dw_type *t = dw_smt_xalloc(x, sizeof *t);
    t->kind = DW_T_ENTITY;
    t->name = type;
    sv r = { .t = t, .v = id, .err = FALSE_, .lit = lit };
    return r;
}

Z3_ast dw_smt_exists(dw_smt *x, dw_str type, Z3_ast id)
{
    char *n = dw_arena_printf(&x->a, "%.*s!exists", (int)type.len, type.s);
    if (!n) FAIL();
    return dw_smt_app(x, n, x->bool_s, 1, &id);
}

static void drop_recent(dw_smt *x)
{
    for (size_t i = 0; i < x->nrecent; i++) model_unref(x, x->recent[i]);
    x->nrecent = 0;
}

/* a's value in model m (completed: free symbols take a default) */
static Z3_lbool model_value(dw_smt *x, Z3_model m, Z3_ast a)
{
    Z3_ast r = NULL;
    return Z3_model_eval(C, m, a, true, &r) && r ? Z3_get_bool_value(C, r) : Z3_L_UNDEF;
}
static bool model_true(dw_smt *x, Z3_model m, Z3_ast a) { return model_value(x, m, a) == Z3_L_TRUE; }

/* Make m (NULL: none) the kept model, counting references. */
static void keep_model(dw_smt *x, Z3_model m)
{
    if (m) Z3_model_inc_ref(C, m);
    model_unref(x, x->model);
    x->model = m;
}

bool dw_smt_refuted_by_recent(dw_smt *x, Z3_ast a)
{
    for (size_t i = 0; i < x->nrecent; i++)
        if (model_value(x, x->recent[i], a) == Z3_L_FALSE) return true;
    return false;
}

bool dw_smt_holds_in_model(dw_smt *x, Z3_ast pre, Z3_ast a, dw_smt_model *const *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (m[i] && model_true(x, (Z3_model)m[i], a)) { keep_model(x, (Z3_model)m[i]); return true; }
    for (size_t i = x->nrecent; i-- > 0;)
        if ((!pre || model_true(x, x->recent[i], pre)) && model_true(x, x->recent[i], a)) { keep_model(x, x->recent[i]); return true; }
    return false;
}

dw_smt_model *dw_smt_take_model(dw_smt *x)
{
    Z3_model m = x->model;
    x->model = NULL;
    return (dw_smt_model *)m;
}

void dw_smt_model_free(dw_smt *x, dw_smt_model *m)
{
    model_unref(x, (Z3_model)m);
}

int dw_smt_env_begin(dw_smt *x, const dw_smt_env *env)
{
    dw_smt_worker_stop(&x->wk);
    drop_recent(x);
    keep_model(x, NULL);
    if (x->sol) { if (!x->no_dec_ref) Z3_solver_dec_ref(C, x->sol); x->sol = NULL; }
    x->env = *env;
    x->nents = x->nleaves = x->nwf = x->nwf_asserted = 0;
    if (setjmp(x->fail)) return -1;
    x->sol = Z3_mk_solver(C);
    Z3_solver_inc_ref(C, x->sol);
    if (x->timeout_ms) {
        Z3_params p = Z3_mk_params(C);
        Z3_params_inc_ref(C, p);
        Z3_params_set_uint(C, p, Z3_mk_string_symbol(C, "timeout"), x->timeout_ms);
        Z3_solver_set_params(C, x->sol, p);
        if (!x->no_dec_ref) Z3_params_dec_ref(C, p);
    }
    dw_type *pt = dw_smt_xalloc(x, sizeof *pt), *rt = dw_smt_xalloc(x, sizeof *rt);
    pt->kind = rt->kind = DW_T_ENTITY;
    pt->name = env->P->name;
    rt->name = env->R->name;
    x->principal = dw_smt_mk_free(x, pt, "principal", 0, NULL);
    x->resource = dw_smt_mk_free(x, rt, "resource", 0, NULL);
    /* the request's principal and resource are in the store (docs/CHECK.md) */
    add_wf(x, dw_smt_exists(x, pt->name, x->principal.v));
    add_wf(x, dw_smt_exists(x, rt->name, x->resource.v));
    x->context = dw_smt_mk_free(x, env->A->context, "context", 0, NULL);
    x->action = dw_smt_entity_value(x, env->A->uid.type, Z3_mk_int64(C, dw_smt_lit_number(x, env->A->uid.type, env->A->uid.id), x->int_s), &env->A->uid);
    return 0;
}

/* ------------------------------------------------------------------ policies */

/* A scope constraint on principal/resource: NULL when statically false. */
static Z3_ast scope_con(dw_smt *x, const dw_scope_con *c, const sv *var)
{
    if (c->target_is_slot) FAIL();
    switch (c->kind) {
    case DW_SC_ANY: return TRUE_;
    case DW_SC_EQ: case DW_SC_IN: case DW_SC_IS_IN: {
        if (c->kind == DW_SC_IS_IN && !dw_str_eq(c->is_type, var->t->name)) return NULL;
        if (c->kind == DW_SC_EQ && !dw_str_eq(c->target.type, var->t->name)) return NULL;
        if (c->kind != DW_SC_EQ && !dw_str_eq(c->target.type, var->t->name) && !dw_smt_type_below(x, var->t->name, c->target.type, 0))
            return NULL;
        Z3_ast id = Z3_mk_int64(C, dw_smt_lit_number(x, c->target.type, c->target.id), x->int_s);
        dw_smt_note_entity(x, dw_smt_tname(x, c->target.type), id);
        sv t = dw_smt_entity_value(x, c->target.type, id, &c->target);
        Z3_ast r = c->kind == DW_SC_EQ ? Z3_mk_eq(C, var->v, id) : dw_smt_in_entity(x, var, &t);
        return dw_smt_is_false(x, r) ? NULL : r;
    }
    case DW_SC_IS: return dw_str_eq(c->is_type, var->t->name) ? TRUE_ : NULL;
    default: FAIL();
    }
}

static bool action_scope(dw_smt *x, const dw_scope_con *c)
{
    const dw_euid_lit *a = &x->env.A->uid;
    switch (c->kind) {
    case DW_SC_ANY: return true;
    case DW_SC_EQ: return dw_str_eq(c->target.type, a->type) && dw_str_eq(c->target.id, a->id);
    case DW_SC_IN: return dw_smt_action_below(x, a, &c->target, 0);
    case DW_SC_IN_LIST:
        for (size_t k = 0; k < c->nlist; k++) if (dw_smt_action_below(x, a, &c->list[k], 0)) return true;
        return false;
    default: return false;
    }
}

int dw_smt_encode_policy(dw_smt *x, const dw_policy *p, unsigned tag, dw_smt_policy *out)
{
    memset(out, 0, sizeof *out);
    size_t nwf = x->nwf, nents = x->nents, nleaves = x->nleaves;
    if (setjmp(x->fail)) {
        x->nwf = nwf > x->nwf_asserted ? nwf : x->nwf_asserted;
        x->nents = nents;
        x->nleaves = nleaves;
        return -1;
    }
    if (p->is_template) return -1;
    x->approx = false;
    x->tag = tag;
    x->leaf_k = 0;
    x->z3_error = false;
    out->sat = out->err = FALSE_;
    if (!action_scope(x, &p->action)) return 0;
    Z3_ast ps = scope_con(x, &p->principal, &x->principal);
    if (!ps) return 0;
    Z3_ast rs = scope_con(x, &p->resource, &x->resource);
    if (!rs) return 0;
    out->applies = true;
    Z3_ast v = AND(ps, rs), err = FALSE_, v0 = TRUE_, err0 = FALSE_;   /* v0, err0: without the scope */
    for (size_t k = 0; k < p->nclauses; k++) {
        sv c = dw_smt_enc_bool(x, p->clauses[k].body);
        Z3_ast cv = p->clauses[k].is_when ? c.v : NOT(c.v);
        /* a clause runs only when everything before it held */
        err = OR(err, AND(v, c.err));
        v = AND(v, cv);
        err0 = OR(err0, AND(v0, c.err));
        v0 = AND(v0, cv);
    }
    if (Z3_get_error_code(C) != Z3_OK) FAIL();
    out->err = err;
    out->sat = AND(NOT(err), v);
    out->cond = AND(NOT(err0), v0);
    out->approx = x->approx;
    return 0;
}

Z3_ast dw_smt_encode_test(dw_smt *x, const dw_expr *e)
{
    size_t nwf = x->nwf, nents = x->nents, nleaves = x->nleaves;
    if (setjmp(x->fail)) {
        x->nwf = nwf > x->nwf_asserted ? nwf : x->nwf_asserted;
        x->nents = nents;
        x->nleaves = nleaves;
        return NULL;
    }
    x->z3_error = false;
    x->approx = false;
    sv c = dw_smt_enc_bool(x, e);
    /* an approximated test is not the rule's own term: no split on it */
    if (Z3_get_error_code(C) != Z3_OK || x->nleaves != nleaves || x->approx) FAIL();
    return AND(NOT(c.err), c.v);
}

/* ------------------------------------------------------------------ solving */

/* Z3_solver_check in this process (DWC_SOLVER_INPROCESS): the model, if sat */
static Z3_lbool check_here(dw_smt *x, Z3_ast goal, Z3_model *m)
{
    Z3_solver_push(C, x->sol);
    Z3_solver_assert(C, x->sol, goal);
    Z3_lbool r = Z3_solver_check(C, x->sol);
    *m = NULL;
    if (r == Z3_L_TRUE && (*m = Z3_solver_get_model(C, x->sol))) Z3_model_inc_ref(C, *m);
    if (r == Z3_L_UNDEF) snprintf(x->why, sizeof x->why, "Z3 answered unknown: %s", Z3_solver_get_reason_unknown(C, x->sol));
    Z3_solver_pop(C, x->sol, 1);
    return r;
}

double dw_smt_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

void dw_smt_set_deadline(dw_smt *x, double deadline_ms, double budget_s)
{
    x->deadline_ms = deadline_ms;
    x->budget_s = budget_s;
}

int dw_smt_solve(dw_smt *x, Z3_ast goal)
{
    keep_model(x, NULL);
    x->st.queries++;
    x->why[0] = 0;
    if (dw_smt_is_false(x, goal)) { x->st.unsat++; return 0; }
    if (x->deadline_ms > 0 && dw_smt_now_ms() >= x->deadline_ms) {
        x->st.unknown++;
        x->st.over_budget++;
        snprintf(x->why, sizeof x->why, "not asked: the run's --budget of %g s was spent", x->budget_s);
        return -1;
    }
    for (; x->nwf_asserted < x->nwf; x->nwf_asserted++) Z3_solver_assert(C, x->sol, x->wf[x->nwf_asserted]);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    Z3_model m = NULL;
    int rc;
    if (x->in_process) {
        Z3_lbool r = check_here(x, goal, &m);
        rc = r == Z3_L_TRUE ? 1 : r == Z3_L_FALSE ? 0 : -1;
    } else rc = dw_smt_worker_check(C, x->sol, x->wf, x->nwf, goal, &x->wk, &m, x->why, sizeof x->why);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    x->st.solver_ms += (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (rc == 1) {
        keep_model(x, m);
        model_unref(x, m);
        if (x->model) {
            size_t k = x->nrecent < 8 ? x->nrecent++ : (model_unref(x, x->recent[0]), memmove(x->recent, x->recent + 1, 7 * sizeof *x->recent), 7);
            x->recent[k] = x->model;
            Z3_model_inc_ref(C, x->model);
        } else {
            rc = -1;
            snprintf(x->why, sizeof x->why, "Z3 gave no model");
        }
    }
    if (rc == 1) x->st.sat++;
    else if (rc == 0) x->st.unsat++;
    else x->st.unknown++;
    x->st.worker_failures = x->wk.failures;
    return rc;
}

const char *dw_smt_unknown_reason(const dw_smt *x) { return x->why[0] ? x->why : "Z3 answered unknown"; }
