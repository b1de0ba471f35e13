/* smt.c - Cedar conditions as Z3 terms (see smt.h and docs/CHECK.md). */
#include "smt.h"
#include "smt_worker.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "macros.h"
#include "../stdlib/json_escape.h"

/* ------------------------------------------------------------------ state */

typedef struct sv sv;
typedef struct srec { size_t n; dw_str *k; sv *v; Z3_ast *has; } srec;
/* A symbolic value: its Cedar type, its term (records: their fields), and
 * the condition under which computing it raised an error. */
struct sv {
    const dw_type *t;
    Z3_ast v;
    Z3_ast err;
    srec *rec;                  /* RECORD */
    const dw_euid_lit *lit;     /* ENTITY: the uid when statically known (literals, the action) */
};

typedef struct lit_ent { char *type, *id; int64_t n; } lit_ent;
typedef struct ent_term { const char *type; Z3_ast id; } ent_term;
typedef struct leaf_t { unsigned tag, k; Z3_ast v; } leaf_t;
typedef struct ip_lit { dw_ipaddr ip; } ip_lit;

struct dw_smt {
    Z3_context c;
    const dw_schema *s;
    unsigned timeout_ms;
    dw_arena a;                 /* types of literal records/sets, names */
    jmp_buf fail;               /* encoding failure: unwinds to dw_smt_encode_policy */
    bool z3_error;
    Z3_sort bool_s, bv_s, str_s, int_s, opaque_s, re_s;
    Z3_ast re_alpha;            /* the alphabet free strings range over */
    bool alpha[256];
    /* literal entity ids: (type, id) -> number; enum ids are their index */
    lit_ent *lits; size_t nlits, caplits;
    uint32_t *lit_slots; size_t nslots;
    ip_lit *ips; size_t nips, capips;
    /* the environment */
    dw_smt_env env;
    Z3_solver sol;
    Z3_model model;
    sv principal, resource, context, action;
    ent_term *ents; size_t nents, capents;
    leaf_t *leaves; size_t nleaves, capleaves;
    Z3_ast *wf; size_t nwf, capwf, nwf_asserted;
    bool approx;                /* the current policy used an approximation */
    bool restrict_strings;      /* constrain free strings to the alphabet */
    Z3_model recent[8];         /* the last models of this environment (cheap refutations) */
    size_t nrecent;
    unsigned tag;
    unsigned leaf_k;
    dw_smt_stats st;
    dw_smt_worker wk;           /* queries run in a forked worker (smt_worker.h) */
    bool in_process;            /* DWC_SOLVER_INPROCESS: Z3_solver_check here (no isolation; measurements) */
    bool no_dec_ref;            /* DWC_Z3_NO_DEC_REF: never release a model or solver (reference-count debugging) */
    char why[256];              /* the reason of the last unknown answer */
    double deadline_ms, budget_s;   /* --budget (dw_smt_set_deadline; 0: none) */
};

static const dw_type TY_BOOL = { .kind = DW_T_BOOL };
static const dw_type TY_LONG = { .kind = DW_T_LONG };
static const dw_type TY_STRING = { .kind = DW_T_STRING };
static const dw_type TY_DECIMAL = { .kind = DW_T_DECIMAL };
static const dw_type TY_IPADDR = { .kind = DW_T_IPADDR };
static const dw_type TY_DATETIME = { .kind = DW_T_DATETIME };
static const dw_type TY_DURATION = { .kind = DW_T_DURATION };

static void z3_err(Z3_context c, Z3_error_code e) { (void)c; (void)e; }

static void model_unref(dw_smt *x, Z3_model m)
{
    if (m && !x->no_dec_ref) Z3_model_dec_ref(x->c, m);
}

#define C (x->c)
#define FAIL() longjmp(x->fail, 1)

static void *xalloc(dw_smt *x, size_t n)
{
    void *p = dw_arena_alloc(&x->a, n ? n : 1);
    if (!p) FAIL();
    return p;
}

static void grow(dw_smt *x, void **v, size_t n, size_t *cap, size_t size)
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
static bool is_true(dw_smt *x, Z3_ast a) { return Z3_is_eq_ast(C, a, Z3_mk_true(C)); }
static bool is_false(dw_smt *x, Z3_ast a) { return Z3_is_eq_ast(C, a, Z3_mk_false(C)); }
Z3_ast dw_smt_and(dw_smt *x, Z3_ast a, Z3_ast b)
{
    if (is_true(x, a)) return b;
    if (is_true(x, b)) return a;
    if (is_false(x, a) || is_false(x, b)) return Z3_mk_false(C);
    Z3_ast v[2] = { a, b };
    return Z3_mk_and(C, 2, v);
}
Z3_ast dw_smt_or(dw_smt *x, Z3_ast a, Z3_ast b)
{
    if (is_false(x, a)) return b;
    if (is_false(x, b)) return a;
    if (is_true(x, a) || is_true(x, b)) return Z3_mk_true(C);
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
    if (is_true(x, a)) return Z3_mk_false(C);
    if (is_false(x, a)) return Z3_mk_true(C);
    return Z3_mk_not(C, a);
}
#define AND(a, b) dw_smt_and(x, (a), (b))
#define OR(a, b) dw_smt_or(x, (a), (b))
#define NOT(a) dw_smt_not(x, (a))
#define TRUE_ Z3_mk_true(C)
#define FALSE_ Z3_mk_false(C)

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
    grow(x, (void **)&x->wf, x->nwf, &x->capwf, sizeof *x->wf);
    x->wf[x->nwf++] = a;
}

/* ------------------------------------------------------------------ schema helpers */

static bool is_action_type(dw_str n)
{
    return dw_str_is(n, "Action") || (n.len > 8 && memcmp(n.s + n.len - 8, "::Action", 8) == 0);
}

static const dw_entity_decl *entity(dw_smt *x, dw_str name) { return dw_schema_entity(x->s, name.s, name.len); }

/* May an entity of type `d` have an ancestor of type `a` (memberOf closure)? */
static bool type_below(dw_smt *x, dw_str d, dw_str a, int depth)
{
    const dw_entity_decl *e = entity(x, d);
    if (!e || depth > 64) return false;
    for (size_t k = 0; k < e->nmember_of; k++)
        if (dw_str_eq(e->member_of[k], a) || type_below(x, e->member_of[k], a, depth + 1)) return true;
    return false;
}

/* Is action uid `d` (transitively) a member of action group `g`? */
static bool action_below(dw_smt *x, const dw_euid_lit *d, const dw_euid_lit *g, int depth)
{
    if (dw_str_eq(d->type, g->type) && dw_str_eq(d->id, g->id)) return true;
    if (depth > 64) return false;
    const dw_action_decl *a = dw_schema_action(x->s, d->type.s, d->type.len, d->id.s, d->id.len);
    if (!a) return false;
    for (size_t k = 0; k < a->nparents; k++)
        if (action_below(x, &a->parents[k], g, depth + 1)) return true;
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
static int64_t lit_number(dw_smt *x, dw_str type, dw_str id)
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
    const dw_entity_decl *e = entity(x, type);
    if (e && e->is_enum) {
        n = -1;
        for (size_t k = 0; k < e->nenum; k++) if (dw_str_eq(e->enum_ids[k], id)) n = (int64_t)k;
        if (n < 0) FAIL();   /* not a member of the enum: the validator reports it */
    } else {
        for (size_t i = 0; i < x->nlits; i++)
            if (strlen(x->lits[i].type) == type.len && memcmp(x->lits[i].type, type.s, type.len) == 0) n++;
        n += 1000000;        /* literals far from the small numbers free ids tend to get */
    }
    grow(x, (void **)&x->lits, x->nlits, &x->caplits, sizeof *x->lits);
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

static const char *lit_name(dw_smt *x, const char *type, int64_t n)
{
    for (size_t i = 0; i < x->nlits; i++)
        if (x->lits[i].n == n && strcmp(x->lits[i].type, type) == 0) return x->lits[i].id;
    return NULL;
}

/* ------------------------------------------------------------------ sorts and free terms */


static Z3_sort sort_of(dw_smt *x, const dw_type *t)
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
        return Z3_mk_set_sort(C, sort_of(x, e));
    }
    case DW_T_RECORD: FAIL();
    }
    FAIL();
}

static bool opaque_set(const dw_type *t) { return t->kind == DW_T_SET && (!t->elem || t->elem->kind == DW_T_SET || t->elem->kind == DW_T_RECORD); }

static Z3_ast app(dw_smt *x, const char *name, Z3_sort range, unsigned n, const Z3_ast *args)
{
    Z3_symbol sym = Z3_mk_string_symbol(C, name);
    if (n == 0) return Z3_mk_const(C, sym, range);
    Z3_sort dom[2];
    for (unsigned i = 0; i < n; i++) dom[i] = Z3_get_sort(C, args[i]);
    Z3_func_decl f = Z3_mk_func_decl(C, sym, n, dom, range);
    return Z3_mk_app(C, f, n, args);
}

static void note_entity(dw_smt *x, const char *type, Z3_ast id)
{
    unsigned aid = Z3_get_ast_id(C, id);
    for (size_t i = 0; i < x->nents; i++)
        if (Z3_get_ast_id(C, x->ents[i].id) == aid && strcmp(x->ents[i].type, type) == 0) return;
    grow(x, (void **)&x->ents, x->nents, &x->capents, sizeof *x->ents);
    x->ents[x->nents++] = (ent_term){ type, id };
}

static const char *tname(dw_smt *x, dw_str s)
{
    char *p = xalloc(x, s.len + 1);
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
static sv mk_free(dw_smt *x, const dw_type *t, const char *name, unsigned n, const Z3_ast *args)
{
    sv r = { .t = t, .err = FALSE_ };
    if (!t) FAIL();
    if (t->kind == DW_T_RECORD) {
        srec *rc = xalloc(x, sizeof *rc);
        rc->n = t->nattrs;
        rc->k = xalloc(x, (t->nattrs + 1) * sizeof *rc->k);
        rc->v = xalloc(x, (t->nattrs + 1) * sizeof *rc->v);
        rc->has = xalloc(x, (t->nattrs + 1) * sizeof *rc->has);
        for (size_t i = 0; i < t->nattrs; i++) {
            const dw_attr_decl *ad = &t->attrs[i];
            char *fn = dw_arena_printf(&x->a, "%s.%.*s", name, (int)ad->name.len, ad->name.s);
            if (!fn) FAIL();
            rc->k[i] = ad->name;
            rc->v[i] = mk_free(x, ad->type, fn, n, args);
            if (ad->required) rc->has[i] = TRUE_;
            else {
                char *hn = dw_arena_printf(&x->a, "%s?", fn);
                if (!hn) FAIL();
                rc->has[i] = app(x, hn, x->bool_s, n, args);
            }
        }
        r.rec = rc;
        return r;
    }
    r.v = app(x, name, sort_of(x, t), n, args);
    if (t->kind == DW_T_STRING && x->restrict_strings) add_wf(x, Z3_mk_seq_in_re(C, r.v, regex_alpha(x)));
    if (t->kind == DW_T_ENTITY) {
        const dw_entity_decl *e = entity(x, t->name);
        if (e && e->is_enum) {
            add_wf(x, Z3_mk_ge(C, r.v, Z3_mk_int64(C, 0, x->int_s)));
            add_wf(x, Z3_mk_lt(C, r.v, Z3_mk_int64(C, (int64_t)e->nenum, x->int_s)));
        }
        note_entity(x, tname(x, t->name), r.v);
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
static sv approx(dw_smt *x, const dw_expr *e, const dw_type *t, Z3_ast base_err, bool can_err)
{
    x->approx = true;
    const char *k = expr_text(x, e);
    sv r = mk_free(x, t, k, 0, NULL);
    r.err = base_err;
    if (can_err) {
        char *ek = dw_arena_printf(&x->a, "%s!err", k);
        if (!ek) FAIL();
        r.err = OR(base_err, app(x, ek, x->bool_s, 0, NULL));
    }
    return r;
}

/* ------------------------------------------------------------------ environment */

static sv entity_value(dw_smt *x, dw_str type, Z3_ast id, const dw_euid_lit *lit)
{
    dw_type *t = xalloc(x, sizeof *t);
    t->kind = DW_T_ENTITY;
    t->name = type;
    sv r = { .t = t, .v = id, .err = FALSE_, .lit = lit };
    return r;
}

static Z3_ast exists(dw_smt *x, dw_str type, Z3_ast id)
{
    char *n = dw_arena_printf(&x->a, "%.*s!exists", (int)type.len, type.s);
    if (!n) FAIL();
    return app(x, n, x->bool_s, 1, &id);
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
    dw_type *pt = xalloc(x, sizeof *pt), *rt = xalloc(x, sizeof *rt);
    pt->kind = rt->kind = DW_T_ENTITY;
    pt->name = env->P->name;
    rt->name = env->R->name;
    x->principal = mk_free(x, pt, "principal", 0, NULL);
    x->resource = mk_free(x, rt, "resource", 0, NULL);
    /* the request's principal and resource are in the store (docs/CHECK.md) */
    add_wf(x, exists(x, pt->name, x->principal.v));
    add_wf(x, exists(x, rt->name, x->resource.v));
    x->context = mk_free(x, env->A->context, "context", 0, NULL);
    x->action = entity_value(x, env->A->uid.type, Z3_mk_int64(C, lit_number(x, env->A->uid.type, env->A->uid.id), x->int_s), &env->A->uid);
    return 0;
}

/* ------------------------------------------------------------------ operations */

static sv bool_sv(Z3_ast v, Z3_ast err) { sv r = { .t = &TY_BOOL, .v = v, .err = err }; return r; }

static bool bv_type(const dw_type *t)
{
    return t && (t->kind == DW_T_LONG || t->kind == DW_T_DECIMAL || t->kind == DW_T_DATETIME || t->kind == DW_T_DURATION);
}

static Z3_ast eq_val(dw_smt *x, const sv *a, const sv *b);

static Z3_ast rec_eq(dw_smt *x, const srec *a, const srec *b)
{
    Z3_ast r = TRUE_;
    for (size_t i = 0; i < a->n; i++) {
        size_t j = 0;
        while (j < b->n && !dw_str_eq(a->k[i], b->k[j])) j++;
        if (j == b->n) { r = AND(r, NOT(a->has[i])); continue; }
        Z3_ast both = AND(a->has[i], b->has[j]);
        r = AND(r, Z3_mk_eq(C, a->has[i], b->has[j]));
        r = AND(r, Z3_mk_implies(C, both, eq_val(x, &a->v[i], &b->v[j])));
    }
    for (size_t j = 0; j < b->n; j++) {
        size_t i = 0;
        while (i < a->n && !dw_str_eq(a->k[i], b->k[j])) i++;
        if (i == a->n) r = AND(r, NOT(b->has[j]));
    }
    return r;
}

/* a == b as Cedar decides it (different types are unequal, never an error) */
static Z3_ast eq_val(dw_smt *x, const sv *a, const sv *b)
{
    const dw_type *s = a->t, *t = b->t;
    if (!s || !t) FAIL();
    if (s->kind == DW_T_RECORD || t->kind == DW_T_RECORD) {
        if (s->kind != t->kind) return FALSE_;
        return rec_eq(x, a->rec, b->rec);
    }
    if (s->kind == DW_T_ENTITY || t->kind == DW_T_ENTITY) {
        if (s->kind != t->kind || !dw_str_eq(s->name, t->name)) return FALSE_;
        return Z3_mk_eq(C, a->v, b->v);
    }
    if (s->kind != t->kind) return FALSE_;
    if (!Z3_is_eq_sort(C, Z3_get_sort(C, a->v), Z3_get_sort(C, b->v))) return FALSE_;
    if (s->kind == DW_T_SET && (opaque_set(s) || opaque_set(t))) FAIL();
    return Z3_mk_eq(C, a->v, b->v);
}

/* x in y for entities: x == y, or x exists and y is among its ancestors */
static Z3_ast in_entity(dw_smt *x, const sv *a, const sv *b)
{
    dw_str ta = a->t->name, tb = b->t->name;
    if (a->lit && b->lit && is_action_type(ta) && is_action_type(tb)) return dw_smt_bool(x, action_below(x, a->lit, b->lit, 0));
    Z3_ast r = dw_str_eq(ta, tb) ? Z3_mk_eq(C, a->v, b->v) : FALSE_;
    if (is_action_type(ta)) return r;
    if (type_below(x, ta, tb, 0)) {
        char *n = dw_arena_printf(&x->a, "%.*s!in!%.*s", (int)ta.len, ta.s, (int)tb.len, tb.s);
        if (!n) FAIL();
        Z3_ast args[2] = { a->v, b->v };
        r = OR(r, AND(exists(x, ta, a->v), app(x, n, x->bool_s, 2, args)));
    }
    return r;
}

static Z3_ast bv_const(dw_smt *x, int64_t v) { return Z3_mk_int64(C, v, x->bv_s); }

/* ------------------------------------------------------------------ expressions */

static sv enc(dw_smt *x, const dw_expr *e);

static sv enc_bool(dw_smt *x, const dw_expr *e)
{
    sv r = enc(x, e);
    if (!r.t || r.t->kind != DW_T_BOOL) FAIL();
    return r;
}

static const dw_type *mk_set_type(dw_smt *x, const dw_type *elem)
{
    dw_type *t = xalloc(x, sizeof *t);
    t->kind = DW_T_SET;
    t->elem = (dw_type *)elem;
    return t;
}

static sv attr_of(dw_smt *x, const sv *o, dw_str attr, bool has)
{
    if (!o->t) FAIL();
    if (o->t->kind == DW_T_RECORD) {
        for (size_t i = 0; i < o->rec->n; i++) {
            if (!dw_str_eq(o->rec->k[i], attr)) continue;
            if (has) return bool_sv(o->rec->has[i], o->err);
            sv r = o->rec->v[i];
            r.err = OR(o->err, NOT(o->rec->has[i]));
            return r;
        }
        if (has) return bool_sv(FALSE_, o->err);
        FAIL();
    }
    if (o->t->kind != DW_T_ENTITY || is_action_type(o->t->name)) FAIL();
    const dw_entity_decl *d = entity(x, o->t->name);
    if (!d || !d->shape) FAIL();
    Z3_ast ex = exists(x, o->t->name, o->v);
    for (size_t i = 0; i < d->shape->nattrs; i++) {
        const dw_attr_decl *ad = &d->shape->attrs[i];
        if (!dw_str_eq(ad->name, attr)) continue;
        char *fn = dw_arena_printf(&x->a, "%.*s.%.*s", (int)o->t->name.len, o->t->name.s, (int)attr.len, attr.s);
        if (!fn) FAIL();
        Z3_ast h = TRUE_;
        if (!ad->required) {
            char *hn = dw_arena_printf(&x->a, "%s?", fn);
            if (!hn) FAIL();
            h = app(x, hn, x->bool_s, 1, &o->v);
        }
        if (has) return bool_sv(AND(ex, h), o->err);
        sv r = mk_free(x, ad->type, fn, 1, &o->v);
        r.err = OR(o->err, OR(NOT(ex), NOT(h)));
        return r;
    }
    if (has) return bool_sv(FALSE_, o->err);
    FAIL();
}

static sv tag_of(dw_smt *x, const sv *o, const sv *key, bool has)
{
    if (!o->t || o->t->kind != DW_T_ENTITY || !key->t || key->t->kind != DW_T_STRING) FAIL();
    const dw_entity_decl *d = entity(x, o->t->name);
    Z3_ast err = OR(o->err, key->err);
    if (!d || !d->tags) {
        if (has) return bool_sv(FALSE_, err);
        sv r = bool_sv(FALSE_, TRUE_);   /* no tags: getTag always errors */
        return r;
    }
    Z3_ast args[2] = { o->v, key->v };
    char *fn = dw_arena_printf(&x->a, "%.*s#tag", (int)o->t->name.len, o->t->name.s);
    char *hn = dw_arena_printf(&x->a, "%.*s#tag?", (int)o->t->name.len, o->t->name.s);
    if (!fn || !hn) FAIL();
    Z3_ast h = AND(exists(x, o->t->name, o->v), app(x, hn, x->bool_s, 2, args));
    if (has) return bool_sv(h, err);
    if (d->tags->kind == DW_T_RECORD) FAIL();
    sv r = mk_free(x, d->tags, fn, 2, args);
    r.err = OR(err, NOT(h));
    return r;
}

static sv arith(dw_smt *x, const dw_expr *e)
{
    sv a = enc(x, e->u.kids[0]), b = enc(x, e->u.kids[1]);
    if (!a.t || !b.t || a.t->kind != DW_T_LONG || b.t->kind != DW_T_LONG) FAIL();
    Z3_ast v, ok;
    switch (e->kind) {
    case DW_E_ADD: v = Z3_mk_bvadd(C, a.v, b.v); ok = AND(Z3_mk_bvadd_no_overflow(C, a.v, b.v, true), Z3_mk_bvadd_no_underflow(C, a.v, b.v)); break;
    case DW_E_SUB: v = Z3_mk_bvsub(C, a.v, b.v); ok = AND(Z3_mk_bvsub_no_overflow(C, a.v, b.v), Z3_mk_bvsub_no_underflow(C, a.v, b.v, true)); break;
    default: v = Z3_mk_bvmul(C, a.v, b.v); ok = AND(Z3_mk_bvmul_no_overflow(C, a.v, b.v, true), Z3_mk_bvmul_no_underflow(C, a.v, b.v)); break;
    }
    sv r = { .t = &TY_LONG, .v = v, .err = OR(OR(a.err, b.err), NOT(ok)) };
    return r;
}

static sv compare(dw_smt *x, const dw_expr *e)
{
    sv a = enc(x, e->u.kids[0]), b = enc(x, e->u.kids[1]);
    if (!bv_type(a.t) || !bv_type(b.t) || a.t->kind != b.t->kind) FAIL();
    Z3_ast v;
    switch (e->kind) {
    case DW_E_LT: v = Z3_mk_bvslt(C, a.v, b.v); break;
    case DW_E_LE: v = Z3_mk_bvsle(C, a.v, b.v); break;
    case DW_E_GT: v = Z3_mk_bvsgt(C, a.v, b.v); break;
    default: v = Z3_mk_bvsge(C, a.v, b.v); break;
    }
    return bool_sv(v, OR(a.err, b.err));
}

static sv enc_in(dw_smt *x, const dw_expr *e)
{
    sv a = enc(x, e->u.kids[0]);
    if (!a.t || a.t->kind != DW_T_ENTITY) FAIL();
    const dw_expr *rhs = e->u.kids[1];
    if (rhs->kind == DW_E_SET) {
        Z3_ast v = FALSE_, err = a.err;
        for (size_t k = 0; k < rhs->u.list.n; k++) {
            sv b = enc(x, rhs->u.list.v[k]);
            if (!b.t || b.t->kind != DW_T_ENTITY) FAIL();
            err = OR(err, b.err);
            v = OR(v, in_entity(x, &a, &b));
        }
        return bool_sv(v, err);
    }
    sv b = enc(x, rhs);
    if (!b.t) FAIL();
    if (b.t->kind == DW_T_ENTITY) return bool_sv(in_entity(x, &a, &b), OR(a.err, b.err));
    if (b.t->kind != DW_T_SET || !b.t->elem || b.t->elem->kind != DW_T_ENTITY) FAIL();
    dw_str ta = a.t->name, tb = b.t->elem->name;
    Z3_ast direct = dw_str_eq(ta, tb) ? Z3_mk_set_member(C, a.v, b.v) : FALSE_;
    if (!type_below(x, ta, tb, 0) || is_action_type(ta)) return bool_sv(direct, OR(a.err, b.err));
    /* an ancestor among a set's members: a free Boolean (implied by direct membership) */
    sv f = approx(x, e, &TY_BOOL, FALSE_, false);
    return bool_sv(OR(direct, f.v), OR(a.err, b.err));
}

static sv set_lit(dw_smt *x, const dw_expr *e)
{
    if (e->u.list.n == 0) FAIL();
    sv first = enc(x, e->u.list.v[0]);
    if (!first.t || first.t->kind == DW_T_RECORD || first.t->kind == DW_T_SET) FAIL();
    const dw_type *et = first.t;
    Z3_ast s = Z3_mk_empty_set(C, sort_of(x, et)), err = FALSE_;
    for (size_t k = 0; k < e->u.list.n; k++) {
        sv v = k ? enc(x, e->u.list.v[k]) : first;
        if (!v.t || v.t->kind != et->kind || (et->kind == DW_T_ENTITY && !dw_str_eq(et->name, v.t->name))) FAIL();
        err = OR(err, v.err);
        s = Z3_mk_set_add(C, s, v.v);
    }
    sv r = { .t = mk_set_type(x, et), .v = s, .err = err };
    return r;
}

static sv rec_lit(dw_smt *x, const dw_expr *e)
{
    size_t n = e->u.rec.n;
    dw_type *t = xalloc(x, sizeof *t);
    t->kind = DW_T_RECORD;
    t->attrs = xalloc(x, (n + 1) * sizeof *t->attrs);
    t->nattrs = n;
    srec *rc = xalloc(x, sizeof *rc);
    rc->n = n;
    rc->k = xalloc(x, (n + 1) * sizeof *rc->k);
    rc->v = xalloc(x, (n + 1) * sizeof *rc->v);
    rc->has = xalloc(x, (n + 1) * sizeof *rc->has);
    Z3_ast err = FALSE_;
    for (size_t i = 0; i < n; i++) {
        sv v = enc(x, e->u.rec.v[i].value);
        err = OR(err, v.err);
        v.err = FALSE_;
        rc->k[i] = e->u.rec.v[i].key;
        rc->v[i] = v;
        rc->has[i] = TRUE_;
        t->attrs[i].name = rc->k[i];
        t->attrs[i].type = (dw_type *)v.t;
        t->attrs[i].required = true;
    }
    sv r = { .t = t, .err = err, .rec = rc };
    return r;
}

/* an extension constructor: folded on a literal, else approximated */
static sv ext_ctor(dw_smt *x, const dw_expr *e, const dw_type *t)
{
    if (e->u.call.nargs != 1) return (sv){ .t = t, .v = t == &TY_IPADDR ? Z3_mk_int64(C, 0, x->int_s) : bv_const(x, 0), .err = TRUE_ };
    const dw_expr *a = e->u.call.args[0];
    if (a->kind == DW_E_STRING) {
        const char *s = a->u.str.s;
        size_t n = a->u.str.len;
        int64_t v = 0;
        bool ok;
        if (t == &TY_IPADDR) {
            dw_ipaddr ip;
            ok = dw_ip_parse(s, n, &ip);
            if (ok) {
                size_t k = 0;
                while (k < x->nips && !(dw_ip_equal(&x->ips[k].ip, &ip) && x->ips[k].ip.prefix == ip.prefix)) k++;
                if (k == x->nips) {
                    grow(x, (void **)&x->ips, x->nips, &x->capips, sizeof *x->ips);
                    x->ips[x->nips++].ip = ip;
                }
                return (sv){ .t = t, .v = Z3_mk_int64(C, 1000000 + (int64_t)k, x->int_s), .err = FALSE_ };
            }
        } else if (t == &TY_DECIMAL) ok = dw_decimal_parse(s, n, &v);
        else if (t == &TY_DATETIME) ok = dw_datetime_parse(s, n, &v);
        else ok = dw_duration_parse(s, n, &v);
        if (ok) return (sv){ .t = t, .v = bv_const(x, v), .err = FALSE_ };
        return (sv){ .t = t, .v = t == &TY_IPADDR ? Z3_mk_int64(C, 0, x->int_s) : bv_const(x, 0), .err = TRUE_ };
    }
    sv arg = enc(x, a);
    if (!arg.t || arg.t->kind != DW_T_STRING) FAIL();
    if (t == &TY_DECIMAL) {
        /* decimal(s) errors exactly when s is not -?[0-9]+.[0-9]{1,4} (or is out
         * of range: that part stays a free error); the value is free */
        Z3_ast digit = Z3_mk_re_range(C, Z3_mk_lstring(C, 1, "0"), Z3_mk_lstring(C, 1, "9"));
        Z3_ast parts[4] = { Z3_mk_re_option(C, Z3_mk_seq_to_re(C, Z3_mk_lstring(C, 1, "-"))), Z3_mk_re_plus(C, digit),
                            Z3_mk_seq_to_re(C, Z3_mk_lstring(C, 1, ".")), Z3_mk_re_loop(C, digit, 1, 4) };
        Z3_ast ok = Z3_mk_seq_in_re(C, arg.v, Z3_mk_re_concat(C, 4, parts));
        sv r = approx(x, e, t, arg.err, true);
        r.err = OR(arg.err, NOT(ok));
        return r;
    }
    return approx(x, e, t, arg.err, true);
}

/* [l1, ..., ln].contains(a) on a set literal: l1 == a || ... || ln == a.
 * Z3 4.8.12 decides a disjunction of string equalities at once, but times
 * out on cover queries over a hundred such sets as store chains (the shell
 * allowlists of the Box-shaped set, issue 22). */
static sv contains_lit(dw_smt *x, const dw_expr *e)
{
    const dw_expr *set = e->u.call.recv;
    sv first = enc(x, set->u.list.v[0]);
    if (!first.t || first.t->kind == DW_T_RECORD || first.t->kind == DW_T_SET) FAIL();
    Z3_ast err = FALSE_;
    sv *el = xalloc(x, set->u.list.n * sizeof *el);
    for (size_t k = 0; k < set->u.list.n; k++) {
        el[k] = k ? enc(x, set->u.list.v[k]) : first;
        const dw_type *t = el[k].t;
        if (!t || t->kind != first.t->kind || (t->kind == DW_T_ENTITY && !dw_str_eq(t->name, first.t->name))) FAIL();
        err = OR(err, el[k].err);
    }
    sv a = enc(x, e->u.call.args[0]);
    err = OR(err, a.err);
    const dw_type *et = first.t;
    if (!a.t || a.t->kind != et->kind || (et->kind == DW_T_ENTITY && !dw_str_eq(et->name, a.t->name))) return bool_sv(FALSE_, err);
    Z3_ast v = FALSE_;
    for (size_t k = 0; k < set->u.list.n; k++) v = OR(v, Z3_mk_eq(C, el[k].v, a.v));
    return bool_sv(v, err);
}

static sv method(dw_smt *x, const dw_expr *e)
{
    dw_str m = e->u.call.name;
    size_t na = e->u.call.nargs;
    if (dw_str_is(m, "contains") && na == 1 && e->u.call.recv && e->u.call.recv->kind == DW_E_SET && e->u.call.recv->u.list.n > 0)
        return contains_lit(x, e);
    sv r0 = enc(x, e->u.call.recv);
    if (!r0.t) FAIL();
    sv a1 = { 0 };
    if (na >= 1) a1 = enc(x, e->u.call.args[0]);
    Z3_ast err = na >= 1 ? OR(r0.err, a1.err) : r0.err;
    if (dw_str_is(m, "contains") && na == 1 && r0.t->kind == DW_T_SET) {
        if (opaque_set(r0.t)) return approx(x, e, &TY_BOOL, err, false);
        const dw_type *et = r0.t->elem;
        if (!a1.t || a1.t->kind != et->kind || (et->kind == DW_T_ENTITY && !dw_str_eq(et->name, a1.t->name))) return bool_sv(FALSE_, err);
        return bool_sv(Z3_mk_set_member(C, a1.v, r0.v), err);
    }
    if ((dw_str_is(m, "containsAll") || dw_str_is(m, "containsAny")) && na == 1 && r0.t->kind == DW_T_SET) {
        if (!a1.t || a1.t->kind != DW_T_SET) FAIL();
        if (opaque_set(r0.t) || opaque_set(a1.t)) return approx(x, e, &TY_BOOL, err, false);
        if (!Z3_is_eq_sort(C, Z3_get_sort(C, r0.v), Z3_get_sort(C, a1.v))) FAIL();
        if (dw_str_is(m, "containsAll")) return bool_sv(Z3_mk_set_subset(C, a1.v, r0.v), err);
        Z3_ast both[2] = { r0.v, a1.v };
        Z3_ast in = Z3_mk_set_intersect(C, 2, both);
        return bool_sv(NOT(Z3_mk_eq(C, in, Z3_mk_empty_set(C, Z3_get_array_sort_domain(C, Z3_get_sort(C, r0.v))))), err);
    }
    if (dw_str_is(m, "isEmpty") && na == 0 && r0.t->kind == DW_T_SET) {
        if (opaque_set(r0.t)) return approx(x, e, &TY_BOOL, err, false);
        return bool_sv(Z3_mk_eq(C, r0.v, Z3_mk_empty_set(C, sort_of(x, r0.t->elem))), err);
    }
    if ((dw_str_is(m, "getTag") || dw_str_is(m, "hasTag")) && na == 1) return tag_of(x, &r0, &a1, dw_str_is(m, "hasTag"));
    if (na == 1 && bv_type(r0.t) && a1.t && r0.t->kind == a1.t->kind && r0.t->kind == DW_T_DECIMAL) {
        if (dw_str_is(m, "lessThan")) return bool_sv(Z3_mk_bvslt(C, r0.v, a1.v), err);
        if (dw_str_is(m, "lessThanOrEqual")) return bool_sv(Z3_mk_bvsle(C, r0.v, a1.v), err);
        if (dw_str_is(m, "greaterThan")) return bool_sv(Z3_mk_bvsgt(C, r0.v, a1.v), err);
        if (dw_str_is(m, "greaterThanOrEqual")) return bool_sv(Z3_mk_bvsge(C, r0.v, a1.v), err);
    }
    if (r0.t->kind == DW_T_IPADDR && (dw_str_is(m, "isIpv4") || dw_str_is(m, "isIpv6") || dw_str_is(m, "isLoopback") ||
                                      dw_str_is(m, "isMulticast") || dw_str_is(m, "isInRange")))
        return approx(x, e, &TY_BOOL, err, false);
    if (r0.t->kind == DW_T_DATETIME && dw_str_is(m, "offset") && na == 1 && a1.t && a1.t->kind == DW_T_DURATION) {
        Z3_ast ok = AND(Z3_mk_bvadd_no_overflow(C, r0.v, a1.v, true), Z3_mk_bvadd_no_underflow(C, r0.v, a1.v));
        return (sv){ .t = &TY_DATETIME, .v = Z3_mk_bvadd(C, r0.v, a1.v), .err = OR(err, NOT(ok)) };
    }
    if (r0.t->kind == DW_T_DATETIME && dw_str_is(m, "durationSince") && na == 1 && a1.t && a1.t->kind == DW_T_DATETIME) {
        Z3_ast ok = AND(Z3_mk_bvsub_no_overflow(C, r0.v, a1.v), Z3_mk_bvsub_no_underflow(C, r0.v, a1.v, true));
        return (sv){ .t = &TY_DURATION, .v = Z3_mk_bvsub(C, r0.v, a1.v), .err = OR(err, NOT(ok)) };
    }
    if (r0.t->kind == DW_T_DATETIME && dw_str_is(m, "toDate") && na == 0) return approx(x, e, &TY_DATETIME, err, true);
    if (r0.t->kind == DW_T_DATETIME && dw_str_is(m, "toTime") && na == 0) return approx(x, e, &TY_DURATION, err, false);
    if (r0.t->kind == DW_T_DURATION && na == 0) {
        static const struct { const char *n; int64_t ms; } U[] = {
            { "toMilliseconds", 1 }, { "toSeconds", 1000 }, { "toMinutes", 60000 }, { "toHours", 3600000 }, { "toDays", 86400000 },
        };
        for (size_t k = 0; k < sizeof U / sizeof *U; k++)
            if (dw_str_is(m, U[k].n))
                return (sv){ .t = &TY_LONG, .v = U[k].ms == 1 ? r0.v : Z3_mk_bvsdiv(C, r0.v, bv_const(x, U[k].ms)), .err = err };
    }
    FAIL();
}

/* `like` with at most two wildcards, as equality, prefix, suffix and
 * containment (cheaper for the string solver than a regular expression) */
static Z3_ast like_fast(dw_smt *x, Z3_ast s, const dw_like_pattern *p)
{
    const dw_str *g = p->seg;
    if (p->nseg == 1) return Z3_mk_eq(C, s, Z3_mk_lstring(C, (unsigned)g[0].len, g[0].s));
    if (p->nseg == 2) {
        Z3_ast pre = Z3_mk_lstring(C, (unsigned)g[0].len, g[0].s), suf = Z3_mk_lstring(C, (unsigned)g[1].len, g[1].s);
        Z3_ast r = TRUE_;
        if (g[0].len) r = AND(r, Z3_mk_seq_prefix(C, pre, s));
        if (g[1].len) r = AND(r, Z3_mk_seq_suffix(C, suf, s));
        if (g[0].len && g[1].len)
            r = AND(r, Z3_mk_ge(C, Z3_mk_seq_length(C, s), Z3_mk_int64(C, (int64_t)(g[0].len + g[1].len), x->int_s)));
        return r;
    }
    if (p->nseg == 3 && g[0].len == 0 && g[2].len == 0)
        return Z3_mk_seq_contains(C, s, Z3_mk_lstring(C, (unsigned)g[1].len, g[1].s));
    return NULL;
}

static sv enc(dw_smt *x, const dw_expr *e)
{
    if (!e) FAIL();
    switch (e->kind) {
    case DW_E_BOOL: return bool_sv(dw_smt_bool(x, e->u.b), FALSE_);
    case DW_E_LONG: return (sv){ .t = &TY_LONG, .v = bv_const(x, e->u.i), .err = FALSE_ };
    case DW_E_STRING: return (sv){ .t = &TY_STRING, .v = Z3_mk_lstring(C, (unsigned)e->u.str.len, e->u.str.s), .err = FALSE_ };
    case DW_E_ENTITY: {
        Z3_ast id = Z3_mk_int64(C, lit_number(x, e->u.euid.type, e->u.euid.id), x->int_s);
        if (!is_action_type(e->u.euid.type)) note_entity(x, tname(x, e->u.euid.type), id);
        return entity_value(x, e->u.euid.type, id, &e->u.euid);
    }
    case DW_E_VAR:
        switch (e->u.var) {
        case DW_VAR_PRINCIPAL: return x->principal;
        case DW_VAR_RESOURCE: return x->resource;
        case DW_VAR_ACTION: return x->action;
        default: return x->context;
        }
    case DW_E_IF: {
        sv c = enc_bool(x, e->u.kids[0]), a = enc(x, e->u.kids[1]), b = enc(x, e->u.kids[2]);
        if (!a.t || !b.t || a.t->kind != b.t->kind || a.t->kind == DW_T_RECORD) FAIL();
        if (a.t->kind == DW_T_ENTITY && !dw_str_eq(a.t->name, b.t->name)) FAIL();
        if (!Z3_is_eq_sort(C, Z3_get_sort(C, a.v), Z3_get_sort(C, b.v))) FAIL();
        sv r = a;
        r.lit = NULL;
        r.v = Z3_mk_ite(C, c.v, a.v, b.v);
        r.err = OR(c.err, Z3_mk_ite(C, c.v, a.err, b.err));
        return r;
    }
    case DW_E_AND: {
        /* a constant left operand decides without the right one (which Cedar's
         * validator then does not type either) */
        sv a = enc_bool(x, e->u.kids[0]);
        if (is_false(x, a.v) && is_false(x, a.err)) return a;
        sv b = enc_bool(x, e->u.kids[1]);
        return bool_sv(AND(a.v, b.v), OR(a.err, AND(a.v, b.err)));
    }
    case DW_E_OR: {
        sv a = enc_bool(x, e->u.kids[0]);
        if (is_true(x, a.v) && is_false(x, a.err)) return a;
        sv b = enc_bool(x, e->u.kids[1]);
        return bool_sv(OR(a.v, b.v), OR(a.err, AND(NOT(a.v), b.err)));
    }
    case DW_E_NOT: { sv a = enc_bool(x, e->u.kids[0]); return bool_sv(NOT(a.v), a.err); }
    case DW_E_NEG: {
        sv a = enc(x, e->u.kids[0]);
        if (!a.t || a.t->kind != DW_T_LONG) FAIL();
        return (sv){ .t = &TY_LONG, .v = Z3_mk_bvneg(C, a.v), .err = OR(a.err, NOT(Z3_mk_bvneg_no_overflow(C, a.v))) };
    }
    case DW_E_EQ: case DW_E_NE: {
        sv a = enc(x, e->u.kids[0]), b = enc(x, e->u.kids[1]);
        Z3_ast v = eq_val(x, &a, &b);
        return bool_sv(e->kind == DW_E_EQ ? v : NOT(v), OR(a.err, b.err));
    }
    case DW_E_LT: case DW_E_LE: case DW_E_GT: case DW_E_GE: return compare(x, e);
    case DW_E_IN: return enc_in(x, e);
    case DW_E_ADD: case DW_E_SUB: case DW_E_MUL: return arith(x, e);
    case DW_E_HAS: case DW_E_GETATTR: {
        sv o = enc(x, e->u.attr.kids0);
        return attr_of(x, &o, e->u.attr.attr, e->kind == DW_E_HAS);
    }
    case DW_E_LIKE: {
        sv s = enc(x, e->u.like.kids0);
        if (!s.t || s.t->kind != DW_T_STRING) FAIL();
        const dw_like_pattern *p = &e->u.like.pat;
        Z3_ast fast = like_fast(x, s.v, p);
        if (fast) return bool_sv(fast, s.err);
        size_t n = p->nseg * 2;
        Z3_ast *parts = xalloc(x, (n + 1) * sizeof *parts);
        size_t k = 0;
        for (size_t i = 0; i < p->nseg; i++) {
            if (i) parts[k++] = Z3_mk_re_full(C, x->re_s);
            if (p->seg[i].len) parts[k++] = Z3_mk_seq_to_re(C, Z3_mk_lstring(C, (unsigned)p->seg[i].len, p->seg[i].s));
        }
        Z3_ast re = k == 0 ? Z3_mk_seq_to_re(C, Z3_mk_lstring(C, 0, "")) : k == 1 ? parts[0] : Z3_mk_re_concat(C, (unsigned)k, parts);
        return bool_sv(Z3_mk_seq_in_re(C, s.v, re), s.err);
    }
    case DW_E_IS: {
        sv o = enc(x, e->u.is.kids0);
        if (!o.t || o.t->kind != DW_T_ENTITY) FAIL();
        bool same = dw_str_eq(o.t->name, e->u.is.type);
        if (!e->u.is.in) return bool_sv(dw_smt_bool(x, same), o.err);
        Z3_ast err = o.err, v = FALSE_;
        const dw_expr *rhs = e->u.is.in;
        if (rhs->kind == DW_E_SET) {
            for (size_t k = 0; k < rhs->u.list.n; k++) {
                sv b = enc(x, rhs->u.list.v[k]);
                if (!b.t || b.t->kind != DW_T_ENTITY) FAIL();
                err = OR(err, b.err);
                v = OR(v, in_entity(x, &o, &b));
            }
        } else {
            sv b = enc(x, rhs);
            if (!b.t || b.t->kind != DW_T_ENTITY) FAIL();
            err = OR(err, b.err);
            v = in_entity(x, &o, &b);
        }
        return bool_sv(same ? v : FALSE_, err);
    }
    case DW_E_SET: return set_lit(x, e);
    case DW_E_RECORD: return rec_lit(x, e);
    case DW_E_METHOD: return method(x, e);
    case DW_E_CALL:
        if (e->u.call.nsegs != 1) FAIL();
        if (dw_str_is(e->u.call.name, "decimal")) return ext_ctor(x, e, &TY_DECIMAL);
        if (dw_str_is(e->u.call.name, "ip")) return ext_ctor(x, e, &TY_IPADDR);
        if (dw_str_is(e->u.call.name, "datetime")) return ext_ctor(x, e, &TY_DATETIME);
        if (dw_str_is(e->u.call.name, "duration")) return ext_ctor(x, e, &TY_DURATION);
        FAIL();
    case DW_E_TEMPORAL: {
        /* A leaf is a free boolean named by its identity (dogwood.md D8):
         * the same leaf text is one variable wherever it occurs, in this set
         * and in the one it is compared with (--against), since on one
         * history and request it has one value. */
        x->approx = true;
        char *n = dw_arena_printf(&x->a, "leaf!%016llx", (unsigned long long)dw_temporal_leaf_identity(e->u.temporal));
        if (!n) FAIL();
        Z3_ast v = app(x, n, x->bool_s, 0, NULL);
        grow(x, (void **)&x->leaves, x->nleaves, &x->capleaves, sizeof *x->leaves);
        x->leaves[x->nleaves++] = (leaf_t){ x->tag, x->leaf_k++, v };
        return bool_sv(v, FALSE_);
    }
    default: FAIL();
    }
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
        if (c->kind != DW_SC_EQ && !dw_str_eq(c->target.type, var->t->name) && !type_below(x, var->t->name, c->target.type, 0))
            return NULL;
        Z3_ast id = Z3_mk_int64(C, lit_number(x, c->target.type, c->target.id), x->int_s);
        note_entity(x, tname(x, c->target.type), id);
        sv t = entity_value(x, c->target.type, id, &c->target);
        Z3_ast r = c->kind == DW_SC_EQ ? Z3_mk_eq(C, var->v, id) : in_entity(x, var, &t);
        return is_false(x, r) ? NULL : r;
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
    case DW_SC_IN: return action_below(x, a, &c->target, 0);
    case DW_SC_IN_LIST:
        for (size_t k = 0; k < c->nlist; k++) if (action_below(x, a, &c->list[k], 0)) return true;
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
        sv c = enc_bool(x, p->clauses[k].body);
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
    sv c = enc_bool(x, e);
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
    if (is_false(x, goal)) { x->st.unsat++; return 0; }
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
    const char *lit = lit_name(x, type, n);
    if (lit) { json_string(x, b, lit, strlen(lit)); return; }
    const dw_entity_decl *e = entity(x, (dw_str){ type, strlen(type) });
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
                    if (*n == cap) { cap = cap ? cap * 2 : 8; Z3_ast *p = xalloc(x, cap * sizeof *p); if (*n) memcpy(p, *out, *n * sizeof *p); *out = p; }
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
            Z3_ast *p = xalloc(x, (nseen + 1) * sizeof *p);
            if (nseen) memcpy(p, seen, nseen * sizeof *p);
            p[nseen++] = idx;
            seen = p;
            if (Z3_get_bool_value(C, val) == Z3_L_TRUE) {
                if (*n == cap) { cap = cap ? cap * 2 : 8; Z3_ast *q = xalloc(x, cap * sizeof *q); if (*n) memcpy(q, *out, *n * sizeof *q); *out = q; }
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
        const char *type = tname(x, t->name);
        int64_t n = mint(x, v->v);
        note_entity(x, type, Z3_mk_int64(C, n, x->int_s));
        dw_buf_printf(b, "{\"__entity\": ");
        uid_json(x, type, n, b);
        dw_buf_putc(b, '}');
        return;
    }
    case DW_T_SET: {
        if (opaque_set(t)) FAIL();
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
    uid_json(x, tname(x, x->env.P->name), mint(x, x->principal.v), b);
    dw_buf_printf(b, ", \"action\": ");
    uid_json(x, tname(x, x->env.A->uid.type), lit_number(x, x->env.A->uid.type, x->env.A->uid.id), b);
    dw_buf_printf(b, ", \"resource\": ");
    uid_json(x, tname(x, x->env.R->name), mint(x, x->resource.v), b);
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
    done_t *done = xalloc(x, capdone * sizeof *done);
    size_t ndone = 0;
    for (size_t i = 0; i < x->nents; i++) {
        const char *type = x->ents[i].type;
        int64_t n = mint(x, x->ents[i].id);
        bool dup = false;
        for (size_t k = 0; k < ndone && !dup; k++) dup = done[k].n == n && strcmp(done[k].type, type) == 0;
        if (dup) continue;
        if (ndone == capdone) {
            done_t *d2 = xalloc(x, 2 * capdone * sizeof *d2);
            memcpy(d2, done, ndone * sizeof *d2);
            done = d2;
            capdone *= 2;
        }
        done[ndone++] = (done_t){ type, n };
        dw_str ts = { type, strlen(type) };
        const dw_entity_decl *d = entity(x, ts);
        Z3_ast id = Z3_mk_int64(C, n, x->int_s);
        if (!d || !mbool(x, exists(x, ts, id))) continue;
        dw_buf_printf(b, nout++ ? ", {\"uid\": " : "{\"uid\": ");
        uid_json(x, type, n, b);
        dw_buf_printf(b, ", \"attrs\": ");
        sv rec = mk_free(x, d->shape, type, 1, &id);
        value_json(x, &rec, b);
        dw_buf_printf(b, ", \"parents\": [");
        /* parents: entity terms of an ancestor type the model puts above this one */
        size_t np = 0;
        for (size_t k = 0; k < x->nents; k++) {
            const char *pt = x->ents[k].type;
            dw_str ps = { pt, strlen(pt) };
            if (!type_below(x, ts, ps, 0)) continue;
            int64_t pn = mint(x, x->ents[k].id);
            bool pdup = false;
            for (size_t q = 0; q < k && !pdup; q++) pdup = strcmp(x->ents[q].type, pt) == 0 && mint(x, x->ents[q].id) == pn;
            if (pdup) continue;
            char *rn = dw_arena_printf(&x->a, "%s!in!%s", type, pt);
            if (!rn) FAIL();
            Z3_ast args[2] = { id, Z3_mk_int64(C, pn, x->int_s) };
            if (!mbool(x, app(x, rn, x->bool_s, 2, args))) continue;
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
