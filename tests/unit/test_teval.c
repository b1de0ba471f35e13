/* test_teval.c - unit tests for vm/teval.c, the reference evaluator of
 * temporal leaves (dogwood.md §7.4, §8, §20 Q2/Q8/Q12/Q17).
 *
 * IR tables are built by hand with the small constructors below; every
 * expectation follows §8.5's relational table.  The last test compares
 * dw_teval_leaf with a deliberately naive transcription of §8.5 (explicit
 * row lists, duplicates kept, no boolean shortcuts) on random histories and
 * random (also ill-formed) formulas. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm/teval.h"
#include "runtime/alloc_count.h"
#include "runtime/dogwood.h"

/* ================================================================ builder */

#define MAXN 4096
#define MAXEV 64

typedef struct tb {
    dw_arena a;                 /* values and strings of the test */
    dw_arena scratch;           /* the evaluator's */
    dw_tf tfs[MAXN];            uint32_t ntfs;
    dw_tpattern pats[MAXN];     uint32_t npats;
    dw_tterm terms[MAXN];       uint32_t nterms;
    uint32_t targs[MAXN];       uint32_t ntargs;
    dw_tagg aggs[MAXN];         uint32_t naggs;
    uint16_t aggvars[MAXN];     uint32_t naggvars;
    dw_tleaf leaves[1];
    dw_str strs[MAXN];        uint32_t nstrs;
    dw_value consts[MAXN];      uint32_t nconsts;
    dw_temporal_tables t;
    dw_event evs[MAXEV];
    const dw_event *evp[MAXEV]; uint32_t nev;
    dw_tanchor anchor;
    int64_t tps;
    uint64_t budget;
    int err;
} tb;

static tb *B;

static void tables_reset(void)
{
    B->ntfs = B->npats = B->nterms = B->ntargs = B->naggs = B->naggvars = B->nstrs = B->nconsts = 0;
    B->nev = 0;
}

static int setup(void **state)
{
    B = calloc(1, sizeof *B);
    if (!B) return -1;
    dw_arena_init(&B->a, 0);
    dw_arena_init(&B->scratch, 0);
    B->tps = 1;
    B->budget = 100000000;
    return 0;
}

static int teardown(void **state)
{
    dw_arena_free(&B->a);
    dw_arena_free(&B->scratch);
    free(B);
    B = NULL;
    return 0;
}

/* ---- values ---- */
static dw_value L(int64_t i) { return dw_long(i); }
static dw_value STR(const char *s)
{
    dw_value v;
    assert_true(dw_make_string(&B->a, s, strlen(s), &v));
    return v;
}
static dw_value NUL(void) { dw_value v = { .kind = DW_V_NULL }; return v; }
static dw_value DEC(int64_t x10k) { dw_value v = { .kind = DW_V_DECIMAL }; v.u.i = x10k; return v; }
static dw_value BOOLV(bool b) { return dw_bool(b); }
static dw_value ENT(const char *type, const char *id)
{
    dw_value v = { .kind = DW_V_ENTITY };
    v.u.uid = dw_make_uid(&B->a, type, strlen(type), id, strlen(id));
    assert_non_null(v.u.uid);
    return v;
}
static dw_value ARR(int n, ...)
{
    dw_value *el = dw_arena_alloc(&B->a, (size_t)(n ? n : 1) * sizeof *el);
    va_list ap;
    va_start(ap, n);
    for (int k = 0; k < n; k++) el[k] = va_arg(ap, dw_value);
    va_end(ap);
    dw_value v = { .kind = DW_V_ARRAY, .n = (uint32_t)n };
    v.u.elems = el;
    return v;
}
/* REC(n, "k1", v1, "k2", v2, ...) */
static dw_value REC(int n, ...)
{
    dw_field *f = dw_arena_alloc(&B->a, (size_t)(n ? n : 1) * sizeof *f);
    va_list ap;
    va_start(ap, n);
    for (int k = 0; k < n; k++) {
        const char *key = va_arg(ap, const char *);
        f[k].key = dw_arena_memdup(&B->a, key, strlen(key));
        f[k].klen = (uint32_t)strlen(key);
        f[k].v = va_arg(ap, dw_value);
    }
    va_end(ap);
    dw_value v;
    assert_true(dw_make_record(f, (size_t)n, &v));
    return v;
}

/* ---- strings, terms ---- */
static uint32_t S(const char *s)
{
    assert_true(B->nstrs < MAXN);
    B->strs[B->nstrs].s = dw_arena_memdup(&B->a, s, strlen(s));
    B->strs[B->nstrs].len = strlen(s);
    return B->nstrs++;
}
static uint32_t term(uint8_t kind, uint32_t a, uint32_t n)
{
    assert_true(B->nterms < MAXN);
    B->terms[B->nterms] = (dw_tterm){ .kind = kind, .a = a, .n = n };
    return B->nterms++;
}
static uint32_t T_C(dw_value v)
{
    assert_true(B->nconsts < MAXN);
    B->consts[B->nconsts] = v;
    return term(DW_TT_CONST, B->nconsts++, 0);
}
static uint32_t T_V(uint32_t slot) { return term(DW_TT_VAR, slot, 0); }
static uint32_t T_CTX(const char *path) { return term(DW_TT_CONTEXT, S(path), 0); }
static uint32_t T_P(const char *path) { return term(DW_TT_PRINCIPAL, S(path), 0); }
static uint32_t T_R(const char *path) { return term(DW_TT_RESOURCE, S(path), 0); }
static uint32_t T_W(void) { return term(DW_TT_WILD, 0, 0); }
static uint32_t T_ARR(int n, ...)
{
    uint32_t first = B->ntargs;
    va_list ap;
    va_start(ap, n);
    for (int k = 0; k < n; k++) B->targs[B->ntargs++] = va_arg(ap, uint32_t);
    va_end(ap);
    return term(DW_TT_ARRAY, first, (uint32_t)n);
}
static uint32_t agg_v(uint8_t kind, uint16_t sum_var, uint32_t body, int n, va_list ap)
{
    uint32_t first = B->naggvars;
    for (int k = 0; k < n; k++) B->aggvars[B->naggvars++] = (uint16_t)va_arg(ap, int);
    B->aggs[B->naggs] = (dw_tagg){ .body = body, .sum_var = sum_var, .first_var = first, .nvars = (uint32_t)n };
    return term(kind, B->naggs++, 0);
}
/* T_COUNT(body, n, slot...) = count for (slots). where body */
static uint32_t T_COUNT(uint32_t body, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    uint32_t t = agg_v(DW_TT_COUNT, 0, body, n, ap);
    va_end(ap);
    return t;
}
/* T_SUM(v, body, n, slot...) = sum v for (slots). where body */
static uint32_t T_SUM(uint16_t v, uint32_t body, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    uint32_t t = agg_v(DW_TT_SUM, v, body, n, ap);
    va_end(ap);
    return t;
}

/* ---- formulas ---- */
static uint32_t form(dw_tf f)
{
    assert_true(B->ntfs < MAXN);
    B->tfs[B->ntfs] = f;
    return B->ntfs++;
}
#define TYPE "T::Action"
/* F_P("act", "request", n, "path", term, ...) */
static uint32_t F_P(const char *act, const char *kind, int n, ...)
{
    uint32_t first = B->npats;
    va_list ap;
    va_start(ap, n);
    for (int k = 0; k < n; k++) {
        const char *path = va_arg(ap, const char *);
        uint32_t t = va_arg(ap, uint32_t);
        B->pats[B->npats++] = (dw_tpattern){ .path_str = S(path), .term = t };
    }
    va_end(ap);
    return form((dw_tf){ .kind = DW_TF_PRED, .type_str = S(TYPE), .id_str = S(act), .kind_str = S(kind),
                         .first = first, .n = (uint32_t)n });
}
static uint32_t F_AND(uint32_t a, uint32_t b) { return form((dw_tf){ .kind = DW_TF_AND, .a = a, .b = b }); }
static uint32_t F_NOT(uint32_t a) { return form((dw_tf){ .kind = DW_TF_NOT, .a = a }); }
static uint32_t F_FOR(int64_t w, uint32_t a) { return form((dw_tf){ .kind = DW_TF_FORMERLY, .a = a, .window = w }); }
static uint32_t F_PREV(int64_t w, uint32_t a) { return form((dw_tf){ .kind = DW_TF_PREVIOUS, .a = a, .window = w }); }
static uint32_t F_SINCE(int64_t w, uint32_t l, uint32_t r)
{
    return form((dw_tf){ .kind = DW_TF_SINCE, .a = l, .b = r, .window = w });
}
static uint32_t F_EX(uint16_t var, uint32_t a) { return form((dw_tf){ .kind = DW_TF_EXISTS, .var = var, .a = a }); }
static uint32_t F_TP(uint16_t var) { return form((dw_tf){ .kind = DW_TF_TP, .var = var }); }
static uint32_t F_CMP(dw_tcmp_op op, uint32_t a, uint32_t b)
{
    return form((dw_tf){ .kind = DW_TF_CMP, .op = (uint8_t)op, .a = a, .b = b });
}

/* ---- history ---- */
static void EV(int64_t ts, const char *act, const char *kind, dw_value logged)
{
    assert_true(B->nev < MAXEV);
    dw_event *e = &B->evs[B->nev];
    e->ts = ts;
    e->atype = (dw_str){ TYPE, strlen(TYPE) };
    e->aid = (dw_str){ dw_arena_memdup(&B->a, act, strlen(act)), strlen(act) };
    e->kind = (dw_str){ dw_arena_memdup(&B->a, kind, strlen(kind)), strlen(kind) };
    e->logged = logged;
    B->evp[B->nev] = e;
    B->nev++;
}
static dw_value EMPTY(void) { return REC(0); }

/* ---- running a leaf ---- */
static int eval_n(uint32_t root, uint16_t nvars, uint32_t nev, const uint64_t *masks, bool *holds)
{
    B->t = (dw_temporal_tables){
        .tfs = B->tfs, .ntfs = B->ntfs, .tpatterns = B->pats, .ntpatterns = B->npats,
        .tterms = B->terms, .ntterms = B->nterms, .targs = B->targs, .ntargs = B->ntargs,
        .taggs = B->aggs, .ntaggs = B->naggs, .aggvars = B->aggvars, .naggvars = B->naggvars,
        .leaves = B->leaves, .nleaves = 1,
    };
    B->leaves[0] = (dw_tleaf){ .root = root, .nvars = nvars };
    dw_history_view h = { .ev = B->evp, .n = nev, .ticks_per_second = B->tps };
    dw_teval_ctx cx = {
        .t = &B->t, .strs = B->strs, .nstrs = B->nstrs, .consts = B->consts, .nconsts = B->nconsts,
        .h = &h, .anchor = &B->anchor, .scratch = &B->scratch, .budget = B->budget, .masks = masks,
    };
    int rc = dw_teval_leaf(&cx, 0, holds);
    B->err = cx.err;
    dw_arena_reset(&B->scratch);
    return rc;
}
/* holds at the last event / after the first k events */
static bool HOLDS_K(uint32_t root, uint16_t nvars, uint32_t k)
{
    bool h = true;
    int rc = eval_n(root, nvars, k, NULL, &h);
    if (rc) fail_msg("dw_teval_leaf failed, err %d", B->err);
    /* the precomputed masks must not change the answer */
    const uint64_t *m;
    assert_int_equal(dw_teval_masks(&B->t, &B->a, &m), 0);
    bool h2 = !h;
    assert_int_equal(eval_n(root, nvars, k, m, &h2), 0);
    assert_int_equal(h, h2);
    return h;
}
static bool HOLDS(uint32_t root, uint16_t nvars) { return HOLDS_K(root, nvars, B->nev); }

/* ================================================================ predicates (§8.4) */

static void test_pred_identity(void **state)
{
    EV(0, "read", "request", EMPTY());
    assert_true(HOLDS(F_P("read", "request", 0), 0));
    assert_false(HOLDS(F_P("read", "response", 0), 0));
    assert_false(HOLDS(F_P("write", "request", 0), 0));
    /* a different action type */
    uint32_t p = F_P("read", "request", 0);
    B->tfs[p].type_str = S("Other::Action");
    assert_false(HOLDS(p, 0));
}

static void test_pred_bare_is_current_only(void **state)
{
    EV(0, "read", "request", EMPTY());
    EV(1, "write", "request", EMPTY());
    assert_false(HOLDS(F_P("read", "request", 0), 0));   /* history only via past operators */
    assert_true(HOLDS(F_P("write", "request", 0), 0));
}

static void test_pred_fields_const(void **state)
{
    EV(0, "http", "request", REC(1, "input", REC(2, "host", STR("api.github.com"), "port", L(443))));
    assert_true(HOLDS(F_P("http", "request", 1, "input.host", T_C(STR("api.github.com"))), 0));
    assert_true(HOLDS(F_P("http", "request", 2, "input.host", T_C(STR("api.github.com")),
                          "input.port", T_C(L(443))), 0));
    assert_false(HOLDS(F_P("http", "request", 1, "input.host", T_C(STR("evil.com"))), 0));
    assert_false(HOLDS(F_P("http", "request", 1, "input.port", T_C(STR("443"))), 0));   /* Long vs String */
    /* a group path matches the whole object */
    assert_true(HOLDS(F_P("http", "request", 1, "input",
                          T_C(REC(2, "port", L(443), "host", STR("api.github.com")))), 0));
}

static void test_pred_absent_fails_even_wildcard(void **state)
{
    EV(0, "a", "request", REC(1, "input", REC(1, "x", L(1))));
    assert_true(HOLDS(F_P("a", "request", 1, "input.x", T_W()), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "input.y", T_W()), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "input.x.deeper", T_W()), 0));   /* through a non-record */
    assert_false(HOLDS(F_P("a", "request", 1, "output", T_W()), 0));
    /* an unbound variable cannot bind an absent field either */
    assert_false(HOLDS(F_EX(0, F_P("a", "request", 1, "input.y", T_V(0))), 1));
}

static void test_pred_null_present(void **state)
{
    EV(0, "a", "request", REC(1, "x", NUL()));
    assert_true(HOLDS(F_P("a", "request", 1, "x", T_W()), 0));          /* present, Null */
    assert_true(HOLDS(F_P("a", "request", 1, "x", T_C(NUL())), 0));     /* Null ≐ Null */
    assert_false(HOLDS(F_P("a", "request", 1, "x", T_C(STR(""))), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "x", T_C(L(0))), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "x", T_C(BOOLV(false))), 0));
}

static void test_pred_variables(void **state)
{
    EV(0, "a", "request", REC(2, "x", L(1), "y", L(1)));
    EV(1, "a", "request", REC(2, "x", L(1), "y", L(2)));
    /* a variable used twice in one predicate must agree with itself */
    uint32_t same = F_EX(0, F_P("a", "request", 2, "x", T_V(0), "y", T_V(0)));
    assert_false(HOLDS(same, 1));
    assert_true(HOLDS_K(same, 1, 1));
    /* bound by an earlier conjunct: accept iff equal */
    uint32_t corr = F_EX(0, F_AND(F_FOR(10, F_P("a", "request", 1, "y", T_V(0))),
                                  F_P("a", "request", 1, "x", T_V(0))));
    assert_true(HOLDS(corr, 1));   /* event 0's y = 1 = current x */
    uint32_t corr2 = F_EX(0, F_AND(F_P("a", "request", 1, "y", T_V(0)),
                                   F_FOR(10, F_P("a", "request", 1, "x", T_V(0)))));
    assert_false(HOLDS(corr2, 1));   /* current y = 2, no x = 2 */
}

static void test_pred_domain_equality(void **state)
{
    EV(0, "a", "request",
       REC(6, "d", DEC(15000), "i", L(1), "arr", ARR(2, L(1), L(2)), "obj", REC(2, "k", L(1), "m", STR("v")),
           "e", ENT("Box::User", "alice"), "n", NUL()));
    /* decimals by value: 1.5 ≐ 1.50 (both 15000 x10^-4) */
    assert_true(HOLDS(F_P("a", "request", 1, "d", T_C(DEC(15000))), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "d", T_C(L(1))), 0));
    /* Int 1 is not Decimal 1.0 */
    assert_false(HOLDS(F_P("a", "request", 1, "i", T_C(DEC(10000))), 0));
    /* arrays in order */
    assert_true(HOLDS(F_P("a", "request", 1, "arr", T_C(ARR(2, L(1), L(2)))), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "arr", T_C(ARR(2, L(2), L(1)))), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "arr", T_C(ARR(1, L(1)))), 0));
    assert_true(HOLDS(F_P("a", "request", 1, "arr", T_ARR(2, T_C(L(1)), T_C(L(2)))), 0));
    /* objects key- and value-wise, whatever the construction order */
    assert_true(HOLDS(F_P("a", "request", 1, "obj", T_C(REC(2, "m", STR("v"), "k", L(1)))), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "obj", T_C(REC(2, "m", STR("v"), "k", L(2)))), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "obj", T_C(REC(1, "k", L(1)))), 0));
    /* entities by type and id */
    assert_true(HOLDS(F_P("a", "request", 1, "e", T_C(ENT("Box::User", "alice"))), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "e", T_C(ENT("Box::Group", "alice"))), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "e", T_C(ENT("Box::User", "bob"))), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "e", T_C(STR("alice"))), 0));
    /* Null only equals Null */
    assert_false(HOLDS(F_P("a", "request", 1, "n", T_C(ARR(0))), 0));
}

static void test_tval_cmp(void **state)
{
    dw_value a = ARR(2, L(1), NUL()), b = ARR(2, L(1), NUL()), c = ARR(2, NUL(), L(1));
    assert_int_equal(dw_tval_cmp(&a, &b), 0);
    assert_int_not_equal(dw_tval_cmp(&a, &c), 0);
    assert_int_equal(dw_tval_cmp(&a, &c), -dw_tval_cmp(&c, &a));
    dw_value n1 = NUL(), n2 = NUL(), s = STR("");
    assert_true(dw_tval_eq(&n1, &n2));
    assert_false(dw_tval_eq(&n1, &s));
    /* a request Set is read as an array in its stored order */
    dw_value *el = dw_arena_alloc(&B->a, 2 * sizeof *el);
    el[0] = L(2); el[1] = L(1);
    dw_value set = dw_make_set(el, 2), arr = ARR(2, L(1), L(2));
    assert_true(dw_tval_eq(&set, &arr));
    dw_value r1 = REC(1, "k", ARR(1, NUL())), r2 = REC(1, "k", ARR(1, NUL())), r3 = REC(1, "k", ARR(1, L(0)));
    assert_true(dw_tval_eq(&r1, &r2));
    assert_false(dw_tval_eq(&r1, &r3));
}

/* ================================================================ terms (§8.1, §8.2) */

static void test_term_context(void **state)
{
    B->anchor.context = REC(1, "input", REC(2, "host", STR("h"), "n", L(3)));
    EV(0, "a", "request", REC(1, "input", REC(1, "host", STR("h"))));
    EV(1, "b", "request", REC(1, "input", REC(1, "host", STR("other"))));
    assert_true(HOLDS(F_FOR(10, F_P("a", "request", 1, "input.host", T_CTX("input.host"))), 0));
    /* context terms are request-anchored: the current event's, even in the past */
    assert_false(HOLDS(F_FOR(10, F_P("b", "request", 1, "input.host", T_CTX("nope"))), 0));   /* unresolved */
    assert_true(HOLDS(F_AND(F_P("b", "request", 0), F_CMP(DW_TC_OP_EQ, T_CTX("input.n"), T_C(L(3)))), 0));
    assert_true(HOLDS(F_AND(F_P("b", "request", 0),
                            F_CMP(DW_TC_OP_EQ, T_CTX("input"), T_C(REC(2, "n", L(3), "host", STR("h"))))), 0));
    B->anchor.context = (dw_value){ 0 };   /* no context at all */
    assert_false(HOLDS(F_AND(F_P("b", "request", 0), F_CMP(DW_TC_OP_EQ, T_CTX("input.n"), T_C(L(3)))), 0));
}

static void test_term_principal_resource(void **state)
{
    B->anchor.principal = ENT("Box::User", "alice");
    B->anchor.principal_attrs = REC(1, "dept", REC(1, "name", STR("eng")));
    B->anchor.resource = ENT("Box::Doc", "d1");
    B->anchor.resource_attrs = REC(1, "id", STR("custom-id"));   /* an attribute named id wins */
    EV(0, "a", "request", REC(5, "callerPrincipal", ENT("Box::User", "alice"), "pid", STR("alice"),
                              "ptype", STR("Box::User"), "dept", STR("eng"), "rid", STR("custom-id")));
    assert_true(HOLDS(F_P("a", "request", 1, "callerPrincipal", T_P("")), 0));
    assert_true(HOLDS(F_P("a", "request", 1, "pid", T_P("id")), 0));
    assert_true(HOLDS(F_P("a", "request", 1, "ptype", T_P("type")), 0));
    assert_true(HOLDS(F_P("a", "request", 1, "dept", T_P("dept.name")), 0));
    assert_true(HOLDS(F_P("a", "request", 1, "rid", T_R("id")), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "pid", T_P("missing")), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "callerPrincipal", T_R("")), 0));
    /* no principal: `principal` and principal.id are unresolved */
    B->anchor.principal = (dw_value){ .kind = DW_V_BOOL };
    B->anchor.principal_attrs = (dw_value){ .kind = DW_V_RECORD };
    assert_false(HOLDS(F_P("a", "request", 1, "callerPrincipal", T_P("")), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "pid", T_P("id")), 0));
}

static void test_term_array_unresolved(void **state)
{
    EV(0, "a", "request", REC(1, "arr", ARR(2, L(1), L(2))));
    /* [1, x] with x unbound is unresolved, so the pattern fails */
    assert_false(HOLDS(F_EX(0, F_P("a", "request", 1, "arr", T_ARR(2, T_C(L(1)), T_V(0)))), 1));
    /* ...but resolves once x is bound to its left */
    uint32_t f = F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(2))),
                               F_P("a", "request", 1, "arr", T_ARR(2, T_C(L(1)), T_V(0)))));
    assert_true(HOLDS(f, 1));
    /* a wildcard inside an array is unresolved too */
    assert_false(HOLDS(F_P("a", "request", 1, "arr", T_ARR(2, T_C(L(1)), T_W())), 0));
    /* nested arrays */
    EV(1, "b", "request", REC(1, "arr", ARR(2, ARR(1, L(1)), ARR(0))));
    assert_true(HOLDS(F_P("b", "request", 1, "arr", T_ARR(2, T_ARR(1, T_C(L(1))), T_ARR(0))), 0));
}

/* ================================================================ windows (§8.3, Q8, Q17) */

static void test_window_edges(void **state)
{
    EV(100, "a", "request", EMPTY());
    EV(400, "b", "request", EMPTY());
    uint32_t in = F_FOR(300, F_P("a", "request", 0));    /* exactly W back: in */
    uint32_t out = F_FOR(299, F_P("a", "request", 0));   /* W+1 ticks back: out */
    assert_true(HOLDS(in, 0));
    assert_false(HOLDS(out, 0));
}

static void test_window_current_and_zero(void **state)
{
    EV(5, "a", "request", EMPTY());
    EV(7, "a", "request", EMPTY());
    assert_true(HOLDS(F_FOR(0, F_P("a", "request", 0)), 0));   /* the current event is in every window */
    assert_true(HOLDS(F_FOR(3600, F_P("a", "request", 0)), 0));
    /* within 0s sees only events with the same timestamp */
    uint32_t cnt = T_COUNT(F_FOR(0, F_AND(F_P("a", "request", 0), F_TP(0))), 1, 0);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, cnt, T_C(L(1))), 1));
}

static void test_window_repeated_timestamps(void **state)
{
    EV(10, "a", "request", EMPTY());
    EV(10, "a", "request", EMPTY());
    EV(10, "b", "request", EMPTY());
    uint32_t cnt = T_COUNT(F_FOR(0, F_AND(F_P("a", "request", 0), F_TP(0))), 1, 0);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, cnt, T_C(L(2))), 1));
    assert_true(HOLDS(F_PREV(0, F_P("a", "request", 0)), 0));
}

static void test_window_backward_timestamps(void **state)
{
    EV(50, "a", "request", EMPTY());     /* 0 */
    EV(100, "c", "request", EMPTY());    /* 1: later in time than the current event */
    EV(60, "b", "request", EMPTY());     /* 2: current, timestamp went backwards */
    assert_true(HOLDS(F_FOR(10, F_P("a", "request", 0)), 0));    /* 60 - 50 = 10 */
    assert_false(HOLDS(F_FOR(1000, F_P("c", "request", 0)), 0)); /* 60 - 100 < 0: out of every window */
    assert_false(HOLDS(F_PREV(1000, F_P("c", "request", 0)), 0));
    /* no sorting: the count is by index, not by timestamp */
    uint32_t cnt = T_COUNT(F_FOR(1000, F_TP(0)), 1, 0);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, cnt, T_C(L(2))), 1));
}

static void test_window_saturation_and_ticks(void **state)
{
    EV(INT64_MIN, "a", "request", EMPTY());
    EV(INT64_MAX, "b", "request", EMPTY());
    /* INT64_MAX - INT64_MIN saturates to INT64_MAX, inside only an "infinite" window */
    assert_false(HOLDS(F_FOR(86400, F_P("a", "request", 0)), 0));
    assert_true(HOLDS(F_FOR(INT64_MAX, F_P("a", "request", 0)), 0));   /* W·tps saturates too */
    tables_reset();
    B->tps = 1000000000;   /* the runtime: nanoseconds */
    EV(0, "a", "request", EMPTY());
    EV(3600LL * 1000000000, "b", "request", EMPTY());
    assert_true(HOLDS(F_FOR(3600, F_P("a", "request", 0)), 0));
    assert_false(HOLDS(F_FOR(3599, F_P("a", "request", 0)), 0));
    B->evs[1].ts += 1;
    assert_false(HOLDS(F_FOR(3600, F_P("a", "request", 0)), 0));
}

static void test_window_negative(void **state)
{
    EV(0, "a", "request", EMPTY());
    /* rejected at compile time (Q8); if it reaches the evaluator it holds nothing */
    assert_false(HOLDS(F_FOR(-1, F_P("a", "request", 0)), 0));
    assert_false(HOLDS(F_SINCE(-1, F_P("a", "request", 0), F_P("a", "request", 0)), 0));
}

/* ================================================================ operators (§8.5) */

static void test_formerly(void **state)
{
    EV(0, "a", "request", REC(1, "x", L(1)));
    EV(1, "b", "request", EMPTY());
    EV(2, "c", "request", EMPTY());
    assert_true(HOLDS(F_FOR(10, F_P("a", "request", 1, "x", T_C(L(1)))), 0));
    assert_false(HOLDS(F_FOR(10, F_P("a", "request", 1, "x", T_C(L(2)))), 0));
    assert_false(HOLDS(F_FOR(10, F_P("a", "response", 0)), 0));
    /* nesting reaches further back: formerly 1 (formerly 1 a) at ts 2 */
    assert_true(HOLDS(F_FOR(1, F_FOR(1, F_P("a", "request", 0))), 0));
    assert_false(HOLDS(F_FOR(1, F_P("a", "request", 0)), 0));
}

static void test_previous(void **state)
{
    EV(0, "a", "request", EMPTY());
    EV(1, "b", "request", EMPTY());
    EV(5, "c", "request", EMPTY());
    assert_true(HOLDS_K(F_PREV(10, F_P("a", "request", 0)), 0, 2));
    assert_false(HOLDS_K(F_PREV(10, F_P("a", "request", 0)), 0, 1));   /* i = 0: no previous */
    /* index-based: only i-1, whatever its identity */
    assert_false(HOLDS(F_PREV(10, F_P("a", "request", 0)), 0));
    assert_true(HOLDS(F_PREV(10, F_P("b", "request", 0)), 0));
    assert_true(HOLDS(F_PREV(4, F_P("b", "request", 0)), 0));
    assert_false(HOLDS(F_PREV(3, F_P("b", "request", 0)), 0));   /* i-1 out of the window */
    /* previous (previous) */
    assert_true(HOLDS(F_PREV(10, F_PREV(10, F_P("a", "request", 0))), 0));
}

static void test_since_basic(void **state)
{
    /* B since A: some A in the window, B at every event after it */
    EV(0, "a", "request", EMPTY());
    EV(1, "b", "request", EMPTY());
    EV(2, "b", "request", EMPTY());
    uint32_t f = F_SINCE(10, F_P("b", "request", 0), F_P("a", "request", 0));
    assert_true(HOLDS(f, 0));
    EV(3, "c", "request", EMPTY());
    assert_false(HOLDS(f, 0));
    /* the anchor may be the current event (the L condition is vacuous) */
    EV(4, "a", "request", EMPTY());
    assert_true(HOLDS(f, 0));
    /* anchor out of the window */
    assert_true(HOLDS_K(F_SINCE(2, F_P("b", "request", 0), F_P("a", "request", 0)), 0, 3));
    assert_false(HOLDS_K(F_SINCE(1, F_P("b", "request", 0), F_P("a", "request", 0)), 0, 3));
}

static void test_since_negated_left(void **state)
{
    /* !Logout since within 10m Login: an open session */
    uint32_t f = F_SINCE(600, F_NOT(F_P("logout", "request", 0)), F_P("login", "request", 0));
    EV(0, "login", "request", EMPTY());
    EV(10, "work", "request", EMPTY());
    EV(20, "work", "request", EMPTY());
    assert_true(HOLDS(f, 0));
    EV(30, "logout", "request", EMPTY());
    assert_false(HOLDS(f, 0));          /* the logout itself is at k = i */
    EV(40, "work", "request", EMPTY());
    assert_false(HOLDS(f, 0));
    EV(50, "login", "request", EMPTY());
    EV(60, "work", "request", EMPTY());
    assert_true(HOLDS(f, 0));           /* a fresh anchor */
    EV(700, "work", "request", EMPTY());
    assert_false(HOLDS(f, 0));          /* 700 - 50 > 600 */
}

static void test_since_k_outside_window(void **state)
{
    /* k ranges over every index in (j, i], even ones whose timestamps fall outside the window */
    EV(100, "a", "request", EMPTY());
    EV(0, "x", "request", EMPTY());     /* far back in time, but after the anchor */
    EV(100, "b", "request", EMPTY());
    assert_false(HOLDS(F_SINCE(10, F_P("b", "request", 0), F_P("a", "request", 0)), 0));
    assert_true(HOLDS(F_SINCE(10, F_NOT(F_P("c", "request", 0)), F_P("a", "request", 0)), 0));
}

static void test_since_correlated(void **state)
{
    /* exists u. (!logout{user: u} since within 1h login{user: u}) */
    uint32_t f = F_EX(0, F_SINCE(3600, F_NOT(F_P("logout", "request", 1, "user", T_V(0))),
                                 F_P("login", "request", 1, "user", T_V(0))));
    EV(0, "login", "request", REC(1, "user", STR("alice")));
    EV(1, "login", "request", REC(1, "user", STR("bob")));
    EV(2, "logout", "request", REC(1, "user", STR("alice")));
    assert_true(HOLDS(f, 1));           /* bob's session is still open */
    EV(3, "logout", "request", REC(1, "user", STR("bob")));
    assert_false(HOLDS(f, 1));
    /* the anchor's rows flow out: (exists u. ... since ...) correlated with the current user */
    tables_reset();
    uint32_t g = F_EX(0, F_AND(F_P("read", "request", 1, "user", T_V(0)),
                               F_SINCE(3600, F_NOT(F_P("logout", "request", 1, "user", T_V(0))),
                                       F_P("login", "request", 1, "user", T_V(0)))));
    uint32_t h2 = F_EX(0, F_AND(F_SINCE(3600, F_NOT(F_P("logout", "request", 1, "user", T_V(0))),
                                        F_P("login", "request", 1, "user", T_V(0))),
                                F_P("read", "request", 1, "user", T_V(0))));
    EV(0, "login", "request", REC(1, "user", STR("alice")));
    EV(1, "login", "request", REC(1, "user", STR("bob")));
    EV(2, "logout", "request", REC(1, "user", STR("alice")));
    EV(3, "read", "request", REC(1, "user", STR("alice")));
    assert_false(HOLDS(g, 1));
    assert_false(HOLDS(h2, 1));
    B->evs[3].logged = REC(1, "user", STR("bob"));
    assert_true(HOLDS(g, 1));
    assert_true(HOLDS(h2, 1));
}

static void test_tp(void **state)
{
    EV(0, "a", "request", EMPTY());
    EV(1, "a", "request", EMPTY());
    EV(2, "b", "request", EMPTY());
    assert_true(HOLDS(F_EX(0, F_TP(0)), 1));
    assert_true(HOLDS(F_EX(0, F_AND(F_TP(0), F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(2))))), 1));
    assert_false(HOLDS(F_EX(0, F_AND(F_TP(0), F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(1))))), 1));
    /* bound first: tp(t) filters on it */
    assert_true(HOLDS(F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(1))), F_FOR(10, F_TP(0)))), 1));
    assert_false(HOLDS(F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(1))), F_TP(0))), 1));
    assert_false(HOLDS(F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(STR("2"))), F_TP(0))), 1));
    /* the timepoint of an earlier a, at distance exactly one from the current */
    assert_true(HOLDS(F_EX(0, F_AND(F_FOR(10, F_AND(F_P("a", "request", 0), F_TP(0))),
                                     F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(1))))), 1));
}

static void test_binding_equality(void **state)
{
    EV(0, "a", "request", REC(1, "x", L(7)));
    assert_true(HOLDS(F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(5))),
                                     F_CMP(DW_TC_OP_GT, T_V(0), T_C(L(3))))), 1));
    assert_true(HOLDS(F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_C(L(5)), T_V(0)),       /* mirror */
                                     F_CMP(DW_TC_OP_LT, T_V(0), T_C(L(6))))), 1));
    assert_false(HOLDS(F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(5))),
                                      F_CMP(DW_TC_OP_GT, T_V(0), T_C(L(5))))), 1));
    /* x == * binds nothing: the wildcard does not resolve */
    assert_false(HOLDS(F_EX(0, F_CMP(DW_TC_OP_EQ, T_V(0), T_W())), 1));
    /* x == y, both unbound: not exactly one side */
    assert_false(HOLDS(F_EX(0, F_EX(1, F_CMP(DW_TC_OP_EQ, T_V(0), T_V(1)))), 2));
    /* != never binds (Q2) */
    assert_false(HOLDS(F_EX(0, F_CMP(DW_TC_OP_NE, T_V(0), T_C(L(5)))), 1));
    /* binds to an unresolved context value: no row */
    assert_false(HOLDS(F_EX(0, F_CMP(DW_TC_OP_EQ, T_V(0), T_CTX("missing"))), 1));
    /* a bound variable compares: the predicate binds x = 7, then x == 7 is a filter */
    assert_true(HOLDS(F_EX(0, F_AND(F_P("a", "request", 1, "x", T_V(0)),
                                     F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(7))))), 1));
    assert_false(HOLDS(F_EX(0, F_AND(F_P("a", "request", 1, "x", T_V(0)),
                                      F_CMP(DW_TC_OP_EQ, T_C(L(8)), T_V(0)))), 1));
    /* the bound value then drives a later predicate */
    assert_true(HOLDS(F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(7))),
                                     F_P("a", "request", 1, "x", T_V(0)))), 1));
}

static void test_comparisons(void **state)
{
    EV(0, "a", "request", EMPTY());
    uint32_t p = F_P("a", "request", 0);
#define CMPH(op, x, y) HOLDS(F_AND(p, F_CMP(op, T_C(x), T_C(y))), 0)
    assert_true(CMPH(DW_TC_OP_LT, L(1), L(2)));
    assert_false(CMPH(DW_TC_OP_LT, L(2), L(2)));
    assert_true(CMPH(DW_TC_OP_LE, L(2), L(2)));
    assert_true(CMPH(DW_TC_OP_GT, L(3), L(2)));
    assert_false(CMPH(DW_TC_OP_GT, L(2), L(2)));
    assert_true(CMPH(DW_TC_OP_GE, L(-2), L(-2)));
    assert_true(CMPH(DW_TC_OP_LT, L(INT64_MIN), L(INT64_MAX)));
    /* ordering only on Longs: decimals, strings, mixed -> false */
    assert_false(CMPH(DW_TC_OP_LT, DEC(10000), DEC(20000)));
    assert_false(CMPH(DW_TC_OP_GE, DEC(20000), DEC(20000)));
    assert_false(CMPH(DW_TC_OP_LT, STR("a"), STR("b")));
    assert_false(CMPH(DW_TC_OP_LT, L(1), DEC(20000)));
    /* == / != by domain equality (Q2) */
    assert_true(CMPH(DW_TC_OP_EQ, STR("a"), STR("a")));
    assert_true(CMPH(DW_TC_OP_NE, STR("a"), STR("b")));
    assert_false(CMPH(DW_TC_OP_NE, DEC(15000), DEC(15000)));
    assert_true(CMPH(DW_TC_OP_NE, L(1), DEC(10000)));
    assert_true(CMPH(DW_TC_OP_EQ, NUL(), NUL()));
    assert_true(CMPH(DW_TC_OP_NE, NUL(), STR("")));
#undef CMPH
    /* unresolved -> false, for != as well */
    assert_false(HOLDS(F_AND(p, F_CMP(DW_TC_OP_NE, T_CTX("nope"), T_C(L(1)))), 0));
    assert_false(HOLDS(F_AND(p, F_CMP(DW_TC_OP_EQ, T_W(), T_W())), 0));
    assert_false(HOLDS(F_AND(p, F_CMP(DW_TC_OP_NE, T_W(), T_C(L(1)))), 0));
}

static void test_not(void **state)
{
    EV(0, "a", "request", EMPTY());
    EV(1, "b", "request", EMPTY());
    assert_true(HOLDS(F_NOT(F_P("a", "request", 0)), 0));   /* tested at the current event */
    assert_false(HOLDS(F_NOT(F_P("b", "request", 0)), 0));
    assert_false(HOLDS(F_NOT(F_FOR(10, F_P("a", "request", 0))), 0));
    assert_true(HOLDS(F_AND(F_FOR(10, F_P("a", "request", 0)), F_NOT(F_P("a", "request", 0))), 0));
    assert_true(HOLDS(F_NOT(F_NOT(F_P("b", "request", 0))), 0));
    /* anti-join: exists u. (formerly a{u} && !formerly c{u}) */
    tables_reset();
    EV(0, "a", "request", REC(1, "u", L(1)));
    EV(1, "a", "request", REC(1, "u", L(2)));
    EV(2, "c", "request", REC(1, "u", L(1)));
    uint32_t f = F_EX(0, F_AND(F_FOR(10, F_P("a", "request", 1, "u", T_V(0))),
                               F_NOT(F_FOR(10, F_P("c", "request", 1, "u", T_V(0))))));
    assert_true(HOLDS(f, 1));
    EV(3, "c", "request", REC(1, "u", L(2)));
    assert_false(HOLDS(f, 1));
}

static void test_exists_shadowing(void **state)
{
    EV(0, "a", "request", REC(1, "x", L(1)));
    EV(1, "b", "request", REC(1, "x", L(2)));
    /* exists x. (x == 2 && exists x. formerly a{x: x}): the inner x is fresh */
    uint32_t f = F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(2))),
                               F_EX(0, F_FOR(10, F_P("a", "request", 1, "x", T_V(0))))));
    assert_true(HOLDS(f, 1));
    /* and the outer binding is restored after it */
    uint32_t g = F_EX(0, F_AND(F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(2))),
                                     F_EX(0, F_FOR(10, F_P("a", "request", 1, "x", T_V(0))))),
                               F_P("b", "request", 1, "x", T_V(0))));
    assert_true(HOLDS(g, 1));
    /* right-nested, so ρ's own slot (not a row) is read after the inner binder */
    uint32_t r = F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(2))),
                               F_AND(F_EX(0, F_FOR(10, F_P("a", "request", 1, "x", T_V(0)))),
                                     F_P("b", "request", 1, "x", T_V(0)))));
    assert_true(HOLDS(r, 1));
    uint32_t cnt = T_COUNT(F_FOR(10, F_P("a", "request", 1, "x", T_V(0))), 1, 0);
    uint32_t q = F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(2))),
                               F_AND(F_CMP(DW_TC_OP_EQ, cnt, T_C(L(1))),
                                     F_P("b", "request", 1, "x", T_V(0)))));
    assert_true(HOLDS(q, 1));
}

/* ================================================================ aggregates (§8.7) */

/* exists (n: Long). ((count for (t: Timepoint). where (formerly within 1h (P && tp(t)))) == n && n > 3) */
static uint32_t rate_limit(uint32_t pred, int64_t gt)
{
    uint32_t cnt = T_COUNT(F_FOR(3600, F_AND(pred, F_TP(1))), 1, 1);
    return F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, cnt, T_V(0)), F_CMP(DW_TC_OP_GT, T_V(0), T_C(L(gt)))));
}

static void test_count_rate_limit(void **state)
{
    uint32_t f = rate_limit(F_P("call", "request", 0), 3);
    uint32_t exact = T_COUNT(F_FOR(3600, F_AND(F_P("call", "request", 0), F_TP(1))), 1, 1);
    EV(0, "call", "request", EMPTY());
    EV(10, "other", "request", EMPTY());
    EV(20, "call", "request", EMPTY());
    EV(30, "call", "request", EMPTY());
    assert_false(HOLDS(f, 2));          /* 3 calls, the current included */
    EV(40, "call", "request", EMPTY());
    assert_true(HOLDS(f, 2));           /* 4 > 3 */
    EV(3621, "call", "request", EMPTY());
    assert_false(HOLDS(f, 2));          /* window [21, 3621]: 30, 40, 3621 */
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, exact, T_C(L(3))), 2));
    EV(3620, "call", "request", EMPTY());   /* backwards: window [20, 3620], 3621 is in its future */
    assert_true(HOLDS(f, 2));
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, exact, T_C(L(4))), 2));
}

static void test_count_distinct_vs_occurrences(void **state)
{
    EV(0, "get", "request", REC(1, "user", STR("a")));
    EV(1, "get", "request", REC(1, "user", STR("b")));
    EV(2, "get", "request", REC(1, "user", STR("a")));
    uint32_t distinct = T_COUNT(F_FOR(10, F_P("get", "request", 1, "user", T_V(0))), 1, 0);
    uint32_t occ = T_COUNT(F_FOR(10, F_AND(F_P("get", "request", 1, "user", T_V(0)), F_TP(1))), 1, 1);
    uint32_t pairs = T_COUNT(F_FOR(10, F_AND(F_P("get", "request", 1, "user", T_V(0)), F_TP(1))), 2, 0, 1);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, distinct, T_C(L(2))), 2));
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, occ, T_C(L(3))), 2));
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, pairs, T_C(L(3))), 2));
    /* not under a past operator: only the current timepoint (0 or 1) */
    uint32_t bare = T_COUNT(F_AND(F_P("get", "request", 0), F_TP(1)), 1, 1);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, bare, T_C(L(1))), 2));
    uint32_t none = T_COUNT(F_AND(F_P("put", "request", 0), F_TP(1)), 1, 1);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, none, T_C(L(0))), 2));   /* empty rows: count 0 */
    /* a bare aggregate comparison needs no exists */
    assert_true(HOLDS(F_CMP(DW_TC_OP_GT, occ, T_C(L(2))), 2));
    assert_false(HOLDS(F_CMP(DW_TC_OP_GT, T_C(L(2)), distinct), 2));
}

static void test_count_exists_projection(void **state)
{
    /* count for (t). where (formerly (exists u. (get{user: u} && tp(t)))): u is projected away */
    EV(0, "get", "request", REC(1, "user", STR("a")));
    EV(1, "get", "request", REC(1, "user", STR("a")));
    uint32_t c = T_COUNT(F_FOR(10, F_EX(0, F_AND(F_P("get", "request", 1, "user", T_V(0)), F_TP(1)))), 1, 1);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, c, T_C(L(2))), 2));
    uint32_t c2 = T_COUNT(F_EX(1, F_FOR(10, F_AND(F_P("get", "request", 1, "user", T_V(0)), F_TP(1)))), 1, 0);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, c2, T_C(L(1))), 2));
}

static void test_count_shadowing_and_correlation(void **state)
{
    EV(0, "get", "request", REC(1, "user", STR("a")));
    EV(1, "get", "request", REC(1, "user", STR("b")));
    EV(2, "get", "request", REC(1, "user", STR("a")));
    /* the `for` list shadows an outer t: exists t. (tp(t) && count for (t). where formerly tp(t)) == 3) */
    uint32_t shadow = F_EX(1, F_AND(F_TP(1), F_CMP(DW_TC_OP_EQ, T_COUNT(F_FOR(10, F_TP(1)), 1, 1), T_C(L(3)))));
    assert_true(HOLDS(shadow, 2));
    /* other outer bindings flow in: per-current-user count */
    uint32_t cnt = T_COUNT(F_FOR(10, F_AND(F_P("get", "request", 1, "user", T_V(0)), F_TP(1))), 1, 1);
    uint32_t per_user = F_EX(0, F_AND(F_P("get", "request", 1, "user", T_V(0)), F_CMP(DW_TC_OP_EQ, cnt, T_C(L(2)))));
    assert_true(HOLDS(per_user, 2));
    assert_false(HOLDS_K(per_user, 2, 2));   /* at event 1, b has 1 */
}

/* exists (s: Long). ((sum a for (a: Long), (t: Timepoint). where (formerly within 1d (Transfer{input.amount: a} && tp(t)))) == s && s <= 50) */
static void test_sum_worked_example(void **state)
{
    uint32_t sum = T_SUM(1, F_FOR(86400, F_AND(F_P("transfer", "request", 1, "input.amount", T_V(1)), F_TP(2))),
                         2, 1, 2);
    uint32_t f = F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, sum, T_V(0)), F_CMP(DW_TC_OP_LE, T_V(0), T_C(L(50)))));
    for (int k = 0; k < 3; k++) EV(k * 60, "transfer", "request", REC(1, "input", REC(1, "amount", L(20))));
    assert_true(HOLDS_K(f, 3, 1));
    assert_true(HOLDS_K(f, 3, 2));
    assert_false(HOLDS_K(f, 3, 3));     /* the third is itself summed: 60 > 50 */
    /* without the timepoint column equal amounts collapse */
    uint32_t collapsed = T_SUM(1, F_FOR(86400, F_P("transfer", "request", 1, "input.amount", T_V(1))), 1, 1);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, collapsed, T_C(L(20))), 3));
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, sum, T_C(L(60))), 3));
}

static void test_sum_skips_non_integers(void **state)
{
    EV(0, "t", "request", REC(1, "amt", L(5)));
    EV(1, "t", "request", REC(1, "amt", STR("7")));
    EV(2, "t", "request", REC(1, "amt", DEC(70000)));
    EV(3, "t", "request", REC(1, "amt", NUL()));
    EV(4, "t", "request", REC(1, "amt", L(-2)));
    uint32_t sum = T_SUM(0, F_FOR(10, F_AND(F_P("t", "request", 1, "amt", T_V(0)), F_TP(1))), 2, 0, 1);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, sum, T_C(L(3))), 2));
    uint32_t none = T_SUM(0, F_FOR(10, F_AND(F_P("zzz", "request", 1, "amt", T_V(0)), F_TP(1))), 2, 0, 1);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, none, T_C(L(0))), 2));
}

static void test_sum_clamps_once(void **state)
{
    EV(0, "t", "request", REC(1, "amt", L(INT64_MAX)));
    EV(1, "t", "request", REC(1, "amt", L(INT64_MAX)));
    EV(2, "t", "request", REC(1, "amt", L(-INT64_MAX)));
    uint32_t body = F_FOR(10, F_AND(F_P("t", "request", 1, "amt", T_V(0)), F_TP(1)));
    uint32_t sum = T_SUM(0, body, 2, 0, 1);
    /* exact: MAX + MAX - MAX = MAX, no intermediate clamping */
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, sum, T_C(L(INT64_MAX))), 2));
    assert_true(HOLDS_K(F_CMP(DW_TC_OP_EQ, sum, T_C(L(INT64_MAX))), 2, 2));   /* 2·MAX clamps */
    tables_reset();
    EV(0, "t", "request", REC(1, "amt", L(INT64_MIN)));
    EV(1, "t", "request", REC(1, "amt", L(INT64_MIN)));
    EV(2, "t", "request", REC(1, "amt", L(5)));
    body = F_FOR(10, F_AND(F_P("t", "request", 1, "amt", T_V(0)), F_TP(1)));
    sum = T_SUM(0, body, 2, 0, 1);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, sum, T_C(L(INT64_MIN))), 2));
    assert_true(HOLDS(F_CMP(DW_TC_OP_LT, sum, T_C(L(0))), 2));
}

static void test_count_worked_example(void **state)
{
    /* count … n < 3 over ::request events: Allow, Allow, Deny */
    uint32_t cnt = T_COUNT(F_FOR(86400, F_AND(F_P("x", "request", 0), F_TP(1))), 1, 1);
    uint32_t f = F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, cnt, T_V(0)), F_CMP(DW_TC_OP_LT, T_V(0), T_C(L(3)))));
    for (int k = 0; k < 3; k++) EV(k, "x", "request", EMPTY());
    assert_true(HOLDS_K(f, 2, 1));
    assert_true(HOLDS_K(f, 2, 2));
    assert_false(HOLDS_K(f, 2, 3));
}

/* ================================================================ robustness */

static void test_budget(void **state)
{
    for (int k = 0; k < 20; k++) EV(k, "a", "request", EMPTY());
    uint32_t f = F_FOR(100, F_FOR(100, F_P("b", "request", 0)));
    B->budget = 50;
    bool h = true;
    assert_int_equal(eval_n(f, 0, B->nev, NULL, &h), -1);
    assert_int_equal(B->err, DW_TEVAL_EBUDGET);
    assert_false(h);
    B->budget = 0;
    assert_int_equal(eval_n(F_P("a", "request", 0), 0, B->nev, NULL, &h), -1);
    B->budget = 100000;
    assert_int_equal(eval_n(f, 0, B->nev, NULL, &h), 0);
    assert_false(h);
}

static void test_malformed(void **state)
{
    bool h = true;
    /* no events at all */
    assert_int_equal(eval_n(F_P("a", "request", 0), 0, 0, NULL, &h), -1);
    assert_int_equal(B->err, DW_TEVAL_EMALFORMED);
    EV(0, "a", "request", REC(1, "x", L(1)));
    /* formula index out of range */
    assert_int_equal(eval_n(9999, 0, 1, NULL, &h), -1);
    assert_false(h);
    /* a cycle: f = f && f */
    uint32_t c = form((dw_tf){ .kind = DW_TF_AND });
    B->tfs[c].a = B->tfs[c].b = c;
    assert_int_equal(eval_n(c, 0, 1, NULL, &h), -1);
    const uint64_t *m;
    B->t.ntfs = B->ntfs;
    assert_int_equal(dw_teval_masks(&B->t, &B->a, &m), -1);
    tables_reset();
    EV(0, "a", "request", REC(1, "x", L(1)));
    /* slot >= nvars; slot >= 64 */
    assert_int_equal(eval_n(F_EX(3, F_P("a", "request", 1, "x", T_V(3))), 2, 1, NULL, &h), -1);
    assert_int_equal(eval_n(F_EX(70, F_TP(70)), 2, 1, NULL, &h), -1);
    /* unknown kinds, bad string, const and term indices */
    assert_int_equal(eval_n(form((dw_tf){ .kind = 200 }), 0, 1, NULL, &h), -1);
    uint32_t p = F_P("a", "request", 0);
    B->tfs[p].kind_str = 12345;
    assert_int_equal(eval_n(p, 0, 1, NULL, &h), -1);
    uint32_t k = T_C(L(1));
    B->terms[k].a = 9999;
    assert_int_equal(eval_n(F_CMP(DW_TC_OP_EQ, k, k), 0, 1, NULL, &h), -1);
    assert_int_equal(eval_n(F_CMP(DW_TC_OP_EQ, 9999, 0), 0, 1, NULL, &h), -1);
    uint32_t q = F_P("a", "request", 1, "x", T_W());
    B->tfs[q].n = 100000;
    assert_int_equal(eval_n(q, 0, 1, NULL, &h), -1);
    uint32_t arr = T_ARR(0);
    B->terms[arr].n = 0xffffffffu;
    assert_int_equal(eval_n(F_CMP(DW_TC_OP_EQ, arr, arr), 0, 1, NULL, &h), -1);
    uint32_t agg = T_COUNT(F_TP(0), 1, 0);
    B->aggs[B->terms[agg].a].nvars = 0xfffffff0u;
    assert_int_equal(eval_n(F_CMP(DW_TC_OP_EQ, agg, agg), 1, 1, NULL, &h), -1);
    /* a sum whose summed slot is not a `for` slot sums nothing (§9.4 rejects it) */
    tables_reset();
    EV(0, "a", "request", REC(1, "x", L(1)));
    uint32_t s = T_SUM(1, F_AND(F_P("a", "request", 1, "x", T_V(0)), F_CMP(DW_TC_OP_EQ, T_V(1), T_C(L(4)))), 1, 0);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, s, T_C(L(0))), 2));
}

static void test_depth(void **state)
{
    EV(0, "a", "request", EMPTY());
    uint32_t f = F_P("a", "request", 0);
    for (int k = 0; k < 300; k++) f = F_NOT(f);   /* the parser's bound is 256 */
    assert_true(HOLDS(f, 0));
    for (int k = 0; k < 2000; k++) f = F_NOT(f);
    bool h = true;
    assert_int_equal(eval_n(f, 0, 1, NULL, &h), -1);
    assert_int_equal(B->err, DW_TEVAL_EDEPTH);
    /* a DAG of shared subformulas: bounded by the budget, not exponential */
    tables_reset();
    for (int k = 0; k < 40; k++) EV(k, "a", "request", EMPTY());
    uint32_t g = F_P("b", "request", 0);
    for (int k = 0; k < 60; k++) g = F_AND(F_NOT(g), F_NOT(g));
    B->budget = 1000000;
    assert_int_equal(eval_n(F_FOR(100, g), 0, B->nev, NULL, &h), -1);
    assert_int_equal(B->err, DW_TEVAL_EBUDGET);
}

static void test_no_malloc(void **state)
{
    if (!dw_alloc_counting()) skip();
    for (int k = 0; k < 30; k++) EV(k, "t", "request", REC(1, "amt", L(k)));
    uint32_t sum = T_SUM(1, F_FOR(86400, F_AND(F_P("t", "request", 1, "amt", T_V(1)), F_TP(2))), 2, 1, 2);
    uint32_t f = F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, sum, T_V(0)), F_CMP(DW_TC_OP_GT, T_V(0), T_C(L(10)))));
    bool h;
    dw_arena_free(&B->scratch);
    dw_arena_init(&B->scratch, 1 << 20);
    assert_int_equal(eval_n(f, 3, B->nev, NULL, &h), 0);   /* warms the scratch block */
    uint64_t before = dw_alloc_count();
    assert_int_equal(eval_n(f, 3, B->nev, NULL, &h), 0);
    assert_int_equal(dw_alloc_count(), before);
    assert_true(h);
}

/* ================================================================ the naive transcription of §8.5 */

/* Everything below re-derives §8 from the text with no cleverness: rows are
 * explicit lists (duplicates kept), holds is "rel is non-empty" everywhere,
 * and equality is written out again.  Variables are slots < NV. */
#define NV 8
typedef struct nrow { uint64_t m; dw_value v[NV]; } nrow;
typedef struct nlist { nrow *r; size_t n, cap; } nlist;

static dw_arena NA;             /* the naive evaluator's memory, freed per case */
static size_t n_rows_made;      /* aborts a case whose duplicate rows explode */
static bool n_blown;
#define N_ROW_CAP 400000

static void nl_push(nlist *l, const nrow *r)
{
    if (++n_rows_made > N_ROW_CAP) { n_blown = true; return; }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 4;
        nrow *p = dw_arena_alloc_raw(&NA, cap * sizeof *p);
        assert_non_null(p);
        if (l->n) memcpy(p, l->r, l->n * sizeof *p);
        l->r = p;
        l->cap = cap;
    }
    l->r[l->n++] = *r;
}

static bool n_eq(const dw_value *a, const dw_value *b)
{
    int ka = a->kind == DW_V_SET ? DW_V_ARRAY : a->kind, kb = b->kind == DW_V_SET ? DW_V_ARRAY : b->kind;
    if (ka != kb) return false;
    switch (ka) {
    case DW_V_BOOL: return a->u.b == b->u.b;
    case DW_V_LONG: case DW_V_DECIMAL: return a->u.i == b->u.i;
    case DW_V_STRING: return a->n == b->n && memcmp(a->u.s, b->u.s, a->n) == 0;
    case DW_V_ENTITY:
        return a->u.uid->tlen == b->u.uid->tlen && a->u.uid->idlen == b->u.uid->idlen &&
               memcmp(a->u.uid->type, b->u.uid->type, a->u.uid->tlen) == 0 &&
               memcmp(a->u.uid->id, b->u.uid->id, a->u.uid->idlen) == 0;
    case DW_V_RECORD:
        if (a->n != b->n) return false;
        for (uint32_t k = 0; k < a->n; k++) {
            bool found = false;
            for (uint32_t q = 0; q < b->n && !found; q++)
                if (a->u.fields[k].klen == b->u.fields[q].klen &&
                    memcmp(a->u.fields[k].key, b->u.fields[q].key, a->u.fields[k].klen) == 0) {
                    if (!n_eq(&a->u.fields[k].v, &b->u.fields[q].v)) return false;
                    found = true;
                }
            if (!found) return false;
        }
        return true;
    default:
        if (ka == DW_V_NULL) return true;
        if (ka == DW_V_ARRAY) {
            if (a->n != b->n) return false;
            for (uint32_t k = 0; k < a->n; k++)
                if (!n_eq(&a->u.elems[k], &b->u.elems[k])) return false;
            return true;
        }
        return false;
    }
}

static const dw_value *n_lookup(const dw_value *rec, const char *path)
{
    char seg[64];
    const dw_value *v = rec;
    while (*path) {
        size_t n = strcspn(path, ".");
        memcpy(seg, path, n);
        seg[n] = 0;
        if (v->kind != DW_V_RECORD) return NULL;
        const dw_value *next = NULL;
        for (uint32_t k = 0; k < v->n; k++)
            if (v->u.fields[k].klen == n && memcmp(v->u.fields[k].key, seg, n) == 0) next = &v->u.fields[k].v;
        if (!next) return NULL;
        v = next;
        path += n;
        if (*path == '.') path++;
    }
    return v;
}

static const char *n_str(uint32_t k) { return B->strs[k].s; }

static bool n_inwin(uint32_t i, uint32_t j, int64_t w)
{
    __int128 d = (__int128)B->evp[i]->ts - B->evp[j]->ts;
    if (d > INT64_MAX) d = INT64_MAX;
    if (d < INT64_MIN) d = INT64_MIN;
    __int128 W = (__int128)w * B->tps;
    if (W > INT64_MAX) W = INT64_MAX;
    return 0 <= d && d <= W;
}

static nlist n_rel(uint32_t i, const nrow *rho, uint32_t f);
static bool n_holds(uint32_t i, const nrow *rho, uint32_t f) { return n_rel(i, rho, f).n > 0; }

static bool n_row_eq(const nrow *a, const nrow *b)
{
    if (a->m != b->m) return false;
    for (int k = 0; k < NV; k++)
        if ((a->m >> k) & 1 && !n_eq(&a->v[k], &b->v[k])) return false;
    return true;
}

static void n_push_unique(nlist *l, const nrow *r)
{
    for (size_t k = 0; k < l->n; k++)
        if (n_row_eq(&l->r[k], r)) return;
    nl_push(l, r);
}

static bool n_resolve(uint32_t i, const nrow *rho, uint32_t t, dw_value *out)
{
    const dw_tterm *tt = &B->terms[t];
    switch (tt->kind) {
    case DW_TT_CONST: *out = B->consts[tt->a]; return true;
    case DW_TT_VAR: if (!((rho->m >> tt->a) & 1)) return false; *out = rho->v[tt->a]; return true;
    case DW_TT_CONTEXT: {
        const dw_value *v = n_lookup(&B->anchor.context, n_str(tt->a));
        if (!v) return false;
        *out = *v;
        return true;
    }
    case DW_TT_WILD: return false;
    case DW_TT_ARRAY: {
        dw_value *el = dw_arena_alloc(&NA, (tt->n + 1) * sizeof *el);
        for (uint32_t k = 0; k < tt->n; k++)
            if (!n_resolve(i, rho, B->targs[tt->a + k], &el[k])) return false;
        out->kind = DW_V_ARRAY;
        out->n = tt->n;
        out->u.elems = el;
        return true;
    }
    case DW_TT_COUNT: case DW_TT_SUM: {
        const dw_tagg *g = &B->aggs[tt->a];
        uint64_t fm = 0;
        for (uint32_t k = 0; k < g->nvars; k++) fm |= (uint64_t)1 << B->aggvars[g->first_var + k];
        nrow rp = *rho;
        rp.m &= ~fm;                                   /* 1. ρ' */
        nlist rows = n_rel(i, &rp, g->body);           /* 2. rows, projected, deduplicated */
        nlist tuples = { 0 };
        for (size_t k = 0; k < rows.n; k++) {
            nrow p = rows.r[k];
            p.m &= fm;
            n_push_unique(&tuples, &p);
        }
        if (tt->kind == DW_TT_COUNT) { *out = dw_long((int64_t)tuples.n); return true; }
        __int128 acc = 0;                              /* 3. exact sum, clamped once */
        for (size_t k = 0; k < tuples.n; k++)
            if ((tuples.r[k].m >> g->sum_var) & 1 && tuples.r[k].v[g->sum_var].kind == DW_V_LONG)
                acc += tuples.r[k].v[g->sum_var].u.i;
        if (acc > INT64_MAX) acc = INT64_MAX;
        if (acc < INT64_MIN) acc = INT64_MIN;
        *out = dw_long((int64_t)acc);
        return true;
    }
    default: return false;   /* principal/resource: not generated */
    }
}

static nlist n_rel(uint32_t i, const nrow *rho, uint32_t fi)
{
    nlist out = { 0 };
    if (n_blown) return out;
    const dw_tf *f = &B->tfs[fi];
    switch (f->kind) {
    case DW_TF_PRED: {
        const dw_event *e = B->evp[i];
        if (strcmp(e->atype.s, n_str(f->type_str)) || strlen(n_str(f->id_str)) != e->aid.len ||
            memcmp(e->aid.s, n_str(f->id_str), e->aid.len) || strlen(n_str(f->kind_str)) != e->kind.len ||
            memcmp(e->kind.s, n_str(f->kind_str), e->kind.len))
            return out;
        nrow env = *rho, nb = { 0 };
        for (uint32_t k = 0; k < f->n; k++) {
            const dw_tpattern *p = &B->pats[f->first + k];
            const dw_value *v = n_lookup(&e->logged, n_str(p->path_str));
            if (!v) return out;
            const dw_tterm *tt = &B->terms[p->term];
            if (tt->kind == DW_TT_WILD) continue;
            if (tt->kind == DW_TT_VAR && (env.m >> tt->a) & 1) {
                if (!n_eq(&env.v[tt->a], v)) return out;
            } else if (tt->kind == DW_TT_VAR) {
                env.m |= (uint64_t)1 << tt->a; env.v[tt->a] = *v;
                nb.m |= (uint64_t)1 << tt->a; nb.v[tt->a] = *v;
            } else {
                dw_value r;
                if (!n_resolve(i, &env, p->term, &r) || !n_eq(&r, v)) return out;
            }
        }
        nl_push(&out, &nb);
        return out;
    }
    case DW_TF_AND: {
        nlist ra = n_rel(i, rho, f->a);
        for (size_t k = 0; k < ra.n; k++) {
            nrow ext = *rho;
            for (int q = 0; q < NV; q++)
                if ((ra.r[k].m >> q) & 1) { ext.m |= (uint64_t)1 << q; ext.v[q] = ra.r[k].v[q]; }
            nlist rb = n_rel(i, &ext, f->b);
            for (size_t q = 0; q < rb.n; q++) {
                nrow u = ra.r[k];
                bool agree = true;
                for (int x = 0; x < NV; x++) {
                    if (!((rb.r[q].m >> x) & 1)) continue;
                    if ((u.m >> x) & 1) { if (!n_eq(&u.v[x], &rb.r[q].v[x])) agree = false; }
                    else { u.m |= (uint64_t)1 << x; u.v[x] = rb.r[q].v[x]; }
                }
                if (agree) nl_push(&out, &u);
            }
        }
        return out;
    }
    case DW_TF_FORMERLY:
        for (uint32_t j = 0; j <= i; j++)
            if (n_inwin(i, j, f->window)) {
                nlist rj = n_rel(j, rho, f->a);
                for (size_t k = 0; k < rj.n; k++) nl_push(&out, &rj.r[k]);
            }
        return out;
    case DW_TF_PREVIOUS:
        if (i > 0 && n_inwin(i, i - 1, f->window)) return n_rel(i - 1, rho, f->a);
        return out;
    case DW_TF_SINCE:
        for (uint32_t j = 0; j <= i; j++) {
            if (!n_inwin(i, j, f->window)) continue;
            nlist rj = n_rel(j, rho, f->b);
            for (size_t k = 0; k < rj.n; k++) {
                nrow ext = *rho;
                for (int q = 0; q < NV; q++)
                    if ((rj.r[k].m >> q) & 1) { ext.m |= (uint64_t)1 << q; ext.v[q] = rj.r[k].v[q]; }
                bool all = true;
                for (uint32_t kk = j + 1; kk <= i && all; kk++) all = n_holds(kk, &ext, f->a);
                if (all) n_push_unique(&out, &rj.r[k]);
            }
        }
        return out;
    case DW_TF_TP: {
        nrow r = { 0 };
        if (!((rho->m >> f->var) & 1)) {
            r.m = (uint64_t)1 << f->var;
            r.v[f->var] = dw_long(i);
            nl_push(&out, &r);
        } else {
            dw_value ti = dw_long(i);
            if (n_eq(&rho->v[f->var], &ti)) nl_push(&out, &r);
        }
        return out;
    }
    case DW_TF_EXISTS: {
        nrow rp = *rho;
        rp.m &= ~((uint64_t)1 << f->var);
        nlist ra = n_rel(i, &rp, f->a);
        for (size_t k = 0; k < ra.n; k++) {
            nrow r = ra.r[k];
            r.m &= ~((uint64_t)1 << f->var);
            n_push_unique(&out, &r);
        }
        return out;
    }
    case DW_TF_NOT: {
        nrow r = { 0 };
        if (n_rel(i, rho, f->a).n == 0) nl_push(&out, &r);
        return out;
    }
    case DW_TF_CMP: {
        const dw_tterm *ta = &B->terms[f->a], *tb = &B->terms[f->b];
        bool ua = ta->kind == DW_TT_VAR && !((rho->m >> ta->a) & 1);
        bool ub = tb->kind == DW_TT_VAR && !((rho->m >> tb->a) & 1);
        dw_value va, vb;
        nrow r = { 0 };
        if (f->op == DW_TC_OP_EQ && ua && !ub && n_resolve(i, rho, f->b, &vb)) {
            r.m = (uint64_t)1 << ta->a; r.v[ta->a] = vb;
            nl_push(&out, &r);
            return out;
        }
        if (f->op == DW_TC_OP_EQ && ub && !ua && n_resolve(i, rho, f->a, &va)) {
            r.m = (uint64_t)1 << tb->a; r.v[tb->a] = va;
            nl_push(&out, &r);
            return out;
        }
        bool t = false;
        if (n_resolve(i, rho, f->a, &va) && n_resolve(i, rho, f->b, &vb)) {
            switch (f->op) {
            case DW_TC_OP_EQ: t = n_eq(&va, &vb); break;
            case DW_TC_OP_NE: t = !n_eq(&va, &vb); break;
            default:
                if (va.kind == DW_V_LONG && vb.kind == DW_V_LONG) {
                    int64_t x = va.u.i, y = vb.u.i;
                    t = f->op == DW_TC_OP_LT ? x < y : f->op == DW_TC_OP_LE ? x <= y
                      : f->op == DW_TC_OP_GT ? x > y : x >= y;
                }
            }
        }
        if (t) nl_push(&out, &r);
        return out;
    }
    }
    return out;
}

/* ---- random cases ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

#define RV 3                    /* slots used by random formulas (few, so they collide) */

static dw_value rand_value(void)
{
    switch (rnd(8)) {
    case 0: case 1: case 2: return L(rnd(3));
    case 3: return STR(rnd(2) ? "a" : "b");
    case 4: return NUL();
    case 5: { int64_t x = rnd(2), y = rnd(2); return ARR(2, L(x), L(y)); }
    case 6: return DEC(10000 * (int64_t)rnd(2));
    default: return L(rnd(2) ? 1 : -1);
    }
}

static const char *rand_path(void)
{
    static const char *paths[] = { "x", "y", "o.p", "z", "o" };
    return paths[rnd(5)];
}

static uint32_t rand_formula(int depth);

static uint32_t rand_term(int depth, bool agg)
{
    switch (rnd(agg && depth > 0 ? 12 : 10)) {
    case 0: case 1: case 2: return T_C(rand_value());
    case 3: case 4: case 5: case 6: return T_V(rnd(RV));
    case 7: return T_W();
    case 8: return T_CTX(rnd(2) ? "x" : "none");
    case 9: {
        if (rnd(2)) return T_ARR(0);
        uint32_t e0 = T_C(L(rnd(2)));
        uint32_t e1 = rnd(2) ? T_V(rnd(RV)) : T_C(L(1));
        return T_ARR(2, e0, e1);
    }
    default: {
        uint32_t body = rand_formula(depth - 1);
        int n = 1 + (int)rnd(2);
        int a = (int)rnd(RV), b = (int)rnd(RV);
        if (rnd(2)) return n == 1 ? T_COUNT(body, 1, a) : T_COUNT(body, 2, a, b);
        uint16_t sv = rnd(4) ? (uint16_t)a : (uint16_t)rnd(RV);
        return n == 1 ? T_SUM(sv, body, 1, a) : T_SUM(sv, body, 2, a, b);
    }
    }
}

static uint32_t rand_formula(int depth)
{
    uint32_t k = depth <= 0 ? rnd(3) : rnd(12);
    switch (k) {
    case 0: {
        const char *act = rnd(2) ? "a" : "b";
        int n = (int)rnd(3);
        if (n == 0) return F_P(act, "request", 0);
        if (n == 1) {
            const char *p1 = rand_path();
            uint32_t t1 = rand_term(depth, rnd(8) == 0);
            return F_P(act, "request", 1, p1, t1);
        }
        const char *p1 = rand_path();
        uint32_t t1 = rand_term(depth, false);
        const char *p2 = rand_path();
        uint32_t t2 = rand_term(depth, false);
        return F_P(act, "request", 2, p1, t1, p2, t2);
    }
    case 1: return F_TP((uint16_t)rnd(RV));
    case 2: {
        dw_tcmp_op op = (dw_tcmp_op)rnd(6);
        uint32_t a = rand_term(depth, true);
        return F_CMP(op, a, rand_term(depth, true));
    }
    case 3: case 4: {
        uint32_t a = rand_formula(depth - 1);
        return F_AND(a, rand_formula(depth - 1));
    }
    case 5: return F_NOT(rand_formula(depth - 1));
    case 6: case 7: {
        int64_t w = (int64_t)rnd(6);
        if (rnd(10) == 0) w = -1;
        return F_FOR(w, rand_formula(depth - 1));
    }
    case 8: {
        int64_t w = (int64_t)rnd(6);
        return F_PREV(w, rand_formula(depth - 1));
    }
    case 9: {
        int64_t w = (int64_t)rnd(8);
        uint32_t l = rand_formula(depth - 1);
        return F_SINCE(w, l, rand_formula(depth - 1));
    }
    default: {
        uint16_t x = (uint16_t)rnd(RV);
        return F_EX(x, rand_formula(depth - 1));
    }
    }
}

static void random_case_begin(void)
{
    tables_reset();
    dw_arena_init(&NA, 0);
    n_rows_made = 0;
    n_blown = false;
    B->tps = 1;
    B->anchor.context = REC(1, "x", L(1));
}

static void test_random_vs_naive(void **state)
{
    int cases = 0, agree = 0, skipped = 0, true_cases = 0;
    const int N = 20000;
    for (int c = 0; c < N; c++) {
        random_case_begin();
        /* a history with repeated and backward timestamps */
        uint32_t nev = 1 + rnd(8);
        int64_t ts = 100;
        for (uint32_t k = 0; k < nev; k++) {
            ts += (int64_t)rnd(7) - 2;
            uint32_t shape = rnd(4);
            dw_value x = rand_value(), y = rand_value(), p = rand_value();
            dw_value rec = shape == 0 ? REC(1, "x", x)
                         : shape == 1 ? REC(2, "x", x, "y", y)
                         : REC(3, "x", x, "y", y, "o", REC(1, "p", p));
            EV(ts, rnd(2) ? "a" : "b", "request", rec);
        }
        uint32_t root = rand_formula(1 + (int)rnd(4));
        /* rows, not only truth: count and sum over every slot */
        nrow rho0 = { 0 };
        nlist rows = n_rel(nev - 1, &rho0, root);
        bool nh = rows.n > 0;
        dw_value ncount, nsum;
        uint32_t cnt = T_COUNT(root, RV, 0, 1, 2), sum = T_SUM(0, root, RV, 0, 1, 2);
        bool ok1 = n_resolve(nev - 1, &rho0, cnt, &ncount), ok2 = n_resolve(nev - 1, &rho0, sum, &nsum);
        if (n_blown || !ok1 || !ok2) {
            skipped++;
            dw_arena_free(&NA);
            continue;
        }
        cases++;
        bool h1 = !nh, h2 = false, h3 = false;
        int rc1 = eval_n(root, RV, nev, NULL, &h1);
        int rc2 = eval_n(F_CMP(DW_TC_OP_EQ, cnt, T_C(ncount)), RV, nev, NULL, &h2);
        int rc3 = eval_n(F_CMP(DW_TC_OP_EQ, sum, T_C(nsum)), RV, nev, NULL, &h3);
        const uint64_t *m;
        B->t.ntfs = B->ntfs;
        bool h4 = !nh;
        int rc4 = dw_teval_masks(&B->t, &B->a, &m);
        if (!rc4) rc4 = eval_n(root, RV, nev, m, &h4);
        if (!rc1 && !rc2 && !rc3 && !rc4 && h1 == nh && h2 && h3 && h4 == nh) agree++;
        else
            print_message("case %d: naive %d (count %lld, sum %lld); teval rc %d/%d/%d/%d holds %d, count ok %d, sum ok %d, masks %d err %d\n",
                          c, nh, (long long)ncount.u.i, (long long)nsum.u.i, rc1, rc2, rc3, rc4, h1, h2, h3, h4, B->err);
        true_cases += nh;
        dw_arena_free(&NA);
    }
    print_message("random self-check: %d/%d cases agree (%d held, %d skipped for naive row blow-up)\n",
                  agree, cases, true_cases, skipped);
    assert_int_equal(agree, cases);
    assert_true(cases >= 1000);
}

/* ================================================================ joins (vm/tjoin.h) */

/* A `formerly` over a predicate whose variables an enclosing operator bound,
 * and the negated left of a `since` that reads its anchor's bindings, are
 * answered from an index after their first questions: random joins must
 * agree with the naive transcription, rows included.  Most histories have
 * non-decreasing timestamps (repeats included), the index's condition for
 * `formerly`; the rest go back in time. */
static uint32_t rand_join_pattern_term(uint16_t x)
{
    switch (rnd(6)) {
    case 0: case 1: return T_V(x);
    case 2: return T_V((uint16_t)rnd(RV));
    case 3: return T_W();
    case 4: return rand_term(0, false);
    default: return T_ARR(2, T_V(x), T_C(L(rnd(2))));
    }
}

static uint32_t rand_join(void)
{
    uint16_t x = (uint16_t)rnd(RV);
    uint32_t outer = rnd(2) ? F_P("a", "request", 1, rand_path(), T_V(x))
                            : F_P("a", "request", 2, rand_path(), T_V(x), rand_path(), rand_term(0, false));
    uint32_t inner = rnd(2) ? F_P("b", "request", 1, rand_path(), rand_join_pattern_term(x))
                            : F_P(rnd(2) ? "b" : "a", "request", 2, rand_path(), rand_join_pattern_term(x), rand_path(),
                                  rand_join_pattern_term(x));
    int64_t w1 = (int64_t)rnd(12) - 1, w2 = (int64_t)rnd(12) - 1;
    uint32_t joined = rnd(3) ? F_AND(outer, F_FOR(w2, inner)) : F_AND(F_FOR(w2, inner), outer);
    switch (rnd(6)) {
    case 0: return F_EX(x, F_FOR(w1, joined));
    case 1: return F_FOR(w1, F_AND(joined, F_TP((uint16_t)((x + 1) % RV))));
    case 2: return F_EX(x, F_AND(F_FOR(w1, outer), F_FOR(w2, inner)));
    case 3: return F_FOR(w1, F_AND(outer, F_NOT(F_FOR(w2, inner))));
    case 4: return F_EX(x, F_SINCE(w1, F_NOT(inner), outer));      /* L reads what the anchor binds */
    default: return F_SINCE(w1, F_NOT(inner), F_AND(outer, F_TP((uint16_t)((x + 1) % RV))));
    }
}

static void test_join_index_vs_naive(void **state)
{
    int cases = 0, agree = 0, held = 0;
    for (int c = 0; c < 4000; c++) {
        random_case_begin();
        uint32_t nev = 4 + rnd(40);
        int64_t ts = 100;
        bool back = rnd(5) == 0;
        for (uint32_t k = 0; k < nev; k++) {
            ts += (int64_t)rnd(3) - (back ? 1 : 0);
            dw_value x = rand_value(), y = rand_value(), p = rand_value();
            dw_value rec = rnd(4) ? REC(3, "x", x, "y", y, "o", REC(1, "p", p)) : REC(1, "x", x);
            EV(ts, rnd(2) ? "a" : "b", "request", rec);
        }
        uint32_t root = rand_join();
        nrow rho0 = { 0 };
        nlist rows = n_rel(nev - 1, &rho0, root);
        bool nh = rows.n > 0;
        dw_value ncount;
        uint32_t cnt = T_COUNT(root, RV, 0, 1, 2);
        bool ok = n_resolve(nev - 1, &rho0, cnt, &ncount);
        dw_arena_free(&NA);
        if (n_blown || !ok) continue;
        cases++;
        bool h1 = !nh, h2 = false;
        int rc1 = eval_n(root, RV, nev, NULL, &h1);
        int rc2 = eval_n(F_CMP(DW_TC_OP_EQ, cnt, T_C(ncount)), RV, nev, NULL, &h2);
        if (!rc1 && !rc2 && h1 == nh && h2) agree++;
        else print_message("join case %d: naive %d (count %lld); teval rc %d/%d holds %d count ok %d err %d\n", c, nh,
                           (long long)ncount.u.i, rc1, rc2, h1, h2, B->err);
        held += nh;
    }
    print_message("join self-check: %d/%d cases agree (%d held)\n", agree, cases, held);
    assert_int_equal(agree, cases);
    assert_true(cases >= 3000 && held >= 300);
}

/* Issue 13 row 14: exists (p). formerly (w{path: p} && formerly d{path: p})
 * over 20,000 events took O(n^2) steps (2e8: past any sane work bound).  It
 * is decided exactly within DW_TEMPORAL_WORK_BOUND_DEFAULT, and a join the index cannot
 * answer stops at the bound with EBUDGET. */
#define JOIN_N 20000
static int eval_join(uint32_t root, dw_event *ev, const dw_event **evp, uint32_t n, uint64_t *used, bool *holds)
{
    B->t = (dw_temporal_tables){
        .tfs = B->tfs, .ntfs = B->ntfs, .tpatterns = B->pats, .ntpatterns = B->npats,
        .tterms = B->terms, .ntterms = B->nterms, .targs = B->targs, .ntargs = B->ntargs,
        .taggs = B->aggs, .ntaggs = B->naggs, .aggvars = B->aggvars, .naggvars = B->naggvars,
        .leaves = B->leaves, .nleaves = 1,
    };
    B->leaves[0] = (dw_tleaf){ .root = root, .nvars = 1 };
    for (uint32_t k = 0; k < n; k++) evp[k] = &ev[k];
    dw_history_view h = { .ev = evp, .n = n, .ticks_per_second = 1 };
    dw_teval_ctx cx = {
        .t = &B->t, .strs = B->strs, .nstrs = B->nstrs, .consts = B->consts, .nconsts = B->nconsts, .h = &h,
        .anchor = &B->anchor, .scratch = &B->scratch, .budget = DW_TEMPORAL_WORK_BOUND_DEFAULT,
    };
    int rc = dw_teval_leaf(&cx, 0, holds);
    *used = DW_TEMPORAL_WORK_BOUND_DEFAULT - cx.budget;
    B->err = cx.err;
    dw_arena_reset(&B->scratch);
    return rc;
}

static void test_join_large_window(void **state)
{
    dw_event *ev = calloc(JOIN_N + 2, sizeof *ev);
    const dw_event **evp = calloc(JOIN_N + 2, sizeof *evp);
    assert_non_null(ev);
    assert_non_null(evp);
    /* w{path: "f<k>"} at ts k; one d{path: "f15000"} at ts 10000, after w "f10000" */
    uint32_t n = 0;
    char name[32];
    for (int k = 0; k < JOIN_N; k++) {
        snprintf(name, sizeof name, "f%d", k);
        ev[n++] = (dw_event){ .ts = k, .atype = { TYPE, strlen(TYPE) }, .aid = { "w", 1 }, .kind = { "request", 7 },
                              .logged = REC(1, "path", STR(name)) };
        if (k == 10000)
            ev[n++] = (dw_event){ .ts = k, .atype = { TYPE, strlen(TYPE) }, .aid = { "d", 1 }, .kind = { "request", 7 },
                                  .logged = REC(1, "path", STR("f15000")) };
    }
    uint32_t w = F_P("w", "request", 1, "path", T_V(0)), d = F_P("d", "request", 1, "path", T_V(0));
    uint32_t wide = F_EX(0, F_FOR(30000, F_AND(w, F_FOR(6000, d))));     /* d is 5000 before w "f15000" */
    uint32_t narrow = F_EX(0, F_FOR(30000, F_AND(w, F_FOR(4000, d))));   /* out of the inner window */
    uint32_t before = F_EX(0, F_FOR(30000, F_AND(d, F_FOR(30000, w))));  /* w "f15000" comes after d */
    uint32_t m = F_P("m", "request", 1, "path", T_V(0));
    uint32_t unindexed = F_EX(0, F_FOR(30000, F_AND(w, F_FOR(6000, F_AND(d, F_NOT(m))))));
    uint64_t used;
    bool h;
    assert_int_equal(eval_join(wide, ev, evp, n, &used, &h), 0);
    assert_true(h);
    print_message("join over %u events: %llu steps\n", n, (unsigned long long)used);
    assert_true(used < DW_TEMPORAL_WORK_BOUND_DEFAULT / 4);   /* O(n log n): about 0.9M, not 2e8 */
    assert_int_equal(eval_join(narrow, ev, evp, n, &used, &h), 0);
    assert_false(h);
    assert_int_equal(eval_join(before, ev, evp, n, &used, &h), 0);
    assert_false(h);
    h = true;
    assert_int_equal(eval_join(unindexed, ev, evp, n, &used, &h), -1);
    assert_int_equal(B->err, DW_TEVAL_EBUDGET);
    assert_int_equal(used, DW_TEMPORAL_WORK_BOUND_DEFAULT);
    assert_false(h);
    /* backward timestamps: the index does not apply, the scan decides (and stops at the bound) */
    ev[5].ts = -1;
    assert_int_equal(eval_join(wide, ev, evp, n, &used, &h), -1);
    assert_int_equal(B->err, DW_TEVAL_EBUDGET);
    /* exists (p). !d{path: p} since w{path: p}, with a d after every w: each of
     * the 10,000 anchors is refuted by its own d (a scan: 5e7 steps) */
    n = 0;
    for (int k = 0; k < JOIN_N / 2; k++) {
        snprintf(name, sizeof name, "f%d", k);
        dw_value rec = REC(1, "path", STR(name));
        ev[n++] = (dw_event){ .ts = 2 * k, .atype = { TYPE, strlen(TYPE) }, .aid = { "w", 1 }, .kind = { "request", 7 }, .logged = rec };
        ev[n++] = (dw_event){ .ts = 2 * k + 1, .atype = { TYPE, strlen(TYPE) }, .aid = { "d", 1 }, .kind = { "request", 7 }, .logged = rec };
    }
    ev[n++] = (dw_event){ .ts = JOIN_N, .atype = { TYPE, strlen(TYPE) }, .aid = { "x", 1 }, .kind = { "request", 7 }, .logged = REC(0) };
    uint32_t open = F_EX(0, F_SINCE(30000, F_NOT(d), w));
    h = true;
    assert_int_equal(eval_join(open, ev, evp, n, &used, &h), 0);
    assert_false(h);
    print_message("since over %u events: %llu steps\n", n, (unsigned long long)used);
    assert_true(used < DW_TEMPORAL_WORK_BOUND_DEFAULT / 4);
    ev[n - 2].logged = REC(1, "path", STR("other"));   /* the last w is open now */
    assert_int_equal(eval_join(open, ev, evp, n, &used, &h), 0);
    assert_true(h);
    free(ev);
    free(evp);
}

/* Deduplicating rows is work too: sorting R rows is counted as R steps per
 * merge pass, so a leaf that builds many rows reaches the bound as early as
 * its real work says (before, a 4,000-row sort cost nothing). */
static void test_budget_counts_sorting(void **state)
{
    enum { R = 4096 };
    dw_event *ev = calloc(R, sizeof *ev);
    const dw_event **evp = calloc(R, sizeof *evp);
    assert_non_null(ev);
    assert_non_null(evp);
    for (int k = 0; k < R; k++)
        ev[k] = (dw_event){ .ts = k, .atype = { TYPE, strlen(TYPE) }, .aid = { "b", 1 }, .kind = { "request", 7 },
                            .logged = REC(1, "y", L(R - k)) };   /* descending: the sort has work to do */
    uint32_t cnt = T_COUNT(F_FOR(100000, F_P("b", "request", 1, "y", T_V(0))), 1, 0);
    uint32_t f = F_CMP(DW_TC_OP_EQ, cnt, T_C(L(R)));
    uint64_t used;
    bool h;
    assert_int_equal(eval_join(f, ev, evp, R, &used, &h), 0);
    assert_true(h);
    assert_true(used >= (uint64_t)R * 12);   /* 12 merge passes over 4,096 rows */
    free(ev);
    free(evp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
        T(test_pred_identity),
        T(test_pred_bare_is_current_only),
        T(test_pred_fields_const),
        T(test_pred_absent_fails_even_wildcard),
        T(test_pred_null_present),
        T(test_pred_variables),
        T(test_pred_domain_equality),
        T(test_tval_cmp),
        T(test_term_context),
        T(test_term_principal_resource),
        T(test_term_array_unresolved),
        T(test_window_edges),
        T(test_window_current_and_zero),
        T(test_window_repeated_timestamps),
        T(test_window_backward_timestamps),
        T(test_window_saturation_and_ticks),
        T(test_window_negative),
        T(test_formerly),
        T(test_previous),
        T(test_since_basic),
        T(test_since_negated_left),
        T(test_since_k_outside_window),
        T(test_since_correlated),
        T(test_tp),
        T(test_binding_equality),
        T(test_comparisons),
        T(test_not),
        T(test_exists_shadowing),
        T(test_count_rate_limit),
        T(test_count_distinct_vs_occurrences),
        T(test_count_exists_projection),
        T(test_count_shadowing_and_correlation),
        T(test_sum_worked_example),
        T(test_sum_skips_non_integers),
        T(test_sum_clamps_once),
        T(test_count_worked_example),
        T(test_budget),
        T(test_malformed),
        T(test_depth),
        T(test_no_malloc),
        T(test_random_vs_naive),
        T(test_join_index_vs_naive),
        T(test_join_large_window),
        T(test_budget_counts_sorting),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
