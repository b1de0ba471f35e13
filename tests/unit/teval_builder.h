/* teval_builder.h - the hand-built IR tables of the temporal-evaluator tests
 * (tests/unit/test_teval.c, §8's semantics case by case, and
 * tests/unit/test_teval_naive.c, the evaluator against a naive transcription
 * of §8.5): small constructors for values, terms, formulas and histories, and
 * the calls that run one leaf over them.  One test's tables at a time (B),
 * made by setup and freed by teardown. */
#ifndef DW_TEST_TEVAL_BUILDER_H
#define DW_TEST_TEVAL_BUILDER_H
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vm/teval.h"
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

static inline void tables_reset(void)
{
    B->ntfs = B->npats = B->nterms = B->ntargs = B->naggs = B->naggvars = B->nstrs = B->nconsts = 0;
    B->nev = 0;
}

static inline int setup(void **state)
{
    B = calloc(1, sizeof *B);
    if (!B) return -1;
    dw_arena_init(&B->a, 0);
    dw_arena_init(&B->scratch, 0);
    B->tps = 1;
    B->budget = 100000000;
    return 0;
}

static inline int teardown(void **state)
{
    dw_arena_free(&B->a);
    dw_arena_free(&B->scratch);
    free(B);
    B = NULL;
    return 0;
}

/* ---- values ---- */
static inline dw_value L(int64_t i) { return dw_long(i); }
static inline dw_value STR(const char *s)
{
    dw_value v;
    assert_true(dw_make_string(&B->a, s, strlen(s), &v));
    return v;
}
static inline dw_value NUL(void) { dw_value v = { .kind = DW_V_NULL }; return v; }
static inline dw_value DEC(int64_t x10k) { dw_value v = { .kind = DW_V_DECIMAL }; v.u.i = x10k; return v; }
static inline dw_value BOOLV(bool b) { return dw_bool(b); }
static inline dw_value ENT(const char *type, const char *id)
{
    dw_value v = { .kind = DW_V_ENTITY };
    v.u.uid = dw_make_uid(&B->a, type, strlen(type), id, strlen(id));
    assert_non_null(v.u.uid);
    return v;
}
static inline dw_value ARR(int n, ...)
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
static inline dw_value REC(int n, ...)
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
static inline uint32_t S(const char *s)
{
    assert_true(B->nstrs < MAXN);
    B->strs[B->nstrs].s = dw_arena_memdup(&B->a, s, strlen(s));
    B->strs[B->nstrs].len = strlen(s);
    return B->nstrs++;
}
static inline uint32_t term(uint8_t kind, uint32_t a, uint32_t n)
{
    assert_true(B->nterms < MAXN);
    B->terms[B->nterms] = (dw_tterm){ .kind = kind, .a = a, .n = n };
    return B->nterms++;
}
static inline uint32_t T_C(dw_value v)
{
    assert_true(B->nconsts < MAXN);
    B->consts[B->nconsts] = v;
    return term(DW_TT_CONST, B->nconsts++, 0);
}
static inline uint32_t T_V(uint32_t slot) { return term(DW_TT_VAR, slot, 0); }
static inline uint32_t T_CTX(const char *path) { return term(DW_TT_CONTEXT, S(path), 0); }
static inline uint32_t T_P(const char *path) { return term(DW_TT_PRINCIPAL, S(path), 0); }
static inline uint32_t T_R(const char *path) { return term(DW_TT_RESOURCE, S(path), 0); }
static inline uint32_t T_W(void) { return term(DW_TT_WILD, 0, 0); }
static inline uint32_t T_ARR(int n, ...)
{
    uint32_t first = B->ntargs;
    va_list ap;
    va_start(ap, n);
    for (int k = 0; k < n; k++) B->targs[B->ntargs++] = va_arg(ap, uint32_t);
    va_end(ap);
    return term(DW_TT_ARRAY, first, (uint32_t)n);
}
static inline uint32_t agg_v(uint8_t kind, uint16_t sum_var, uint32_t body, int n, va_list ap)
{
    uint32_t first = B->naggvars;
    for (int k = 0; k < n; k++) B->aggvars[B->naggvars++] = (uint16_t)va_arg(ap, int);
    B->aggs[B->naggs] = (dw_tagg){ .body = body, .sum_var = sum_var, .first_var = first, .nvars = (uint32_t)n };
    return term(kind, B->naggs++, 0);
}
/* T_COUNT(body, n, slot...) = count for (slots). where body */
static inline uint32_t T_COUNT(uint32_t body, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    uint32_t t = agg_v(DW_TT_COUNT, 0, body, n, ap);
    va_end(ap);
    return t;
}
/* T_SUM(v, body, n, slot...) = sum v for (slots). where body */
static inline uint32_t T_SUM(uint16_t v, uint32_t body, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    uint32_t t = agg_v(DW_TT_SUM, v, body, n, ap);
    va_end(ap);
    return t;
}

/* ---- formulas ---- */
static inline uint32_t form(dw_tf f)
{
    assert_true(B->ntfs < MAXN);
    B->tfs[B->ntfs] = f;
    return B->ntfs++;
}
#define TYPE "T::Action"
/* F_P("act", "request", n, "path", term, ...) */
static inline uint32_t F_P(const char *act, const char *kind, int n, ...)
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
static inline uint32_t F_AND(uint32_t a, uint32_t b) { return form((dw_tf){ .kind = DW_TF_AND, .a = a, .b = b }); }
static inline uint32_t F_NOT(uint32_t a) { return form((dw_tf){ .kind = DW_TF_NOT, .a = a }); }
static inline uint32_t F_FOR(int64_t w, uint32_t a) { return form((dw_tf){ .kind = DW_TF_FORMERLY, .a = a, .window = w }); }
static inline uint32_t F_PREV(int64_t w, uint32_t a) { return form((dw_tf){ .kind = DW_TF_PREVIOUS, .a = a, .window = w }); }
static inline uint32_t F_SINCE(int64_t w, uint32_t l, uint32_t r)
{
    return form((dw_tf){ .kind = DW_TF_SINCE, .a = l, .b = r, .window = w });
}
static inline uint32_t F_EX(uint16_t var, uint32_t a) { return form((dw_tf){ .kind = DW_TF_EXISTS, .var = var, .a = a }); }
static inline uint32_t F_TP(uint16_t var) { return form((dw_tf){ .kind = DW_TF_TP, .var = var }); }
static inline uint32_t F_CMP(dw_tcmp_op op, uint32_t a, uint32_t b)
{
    return form((dw_tf){ .kind = DW_TF_CMP, .op = (uint8_t)op, .a = a, .b = b });
}

/* ---- history ---- */
static inline void EV(int64_t ts, const char *act, const char *kind, dw_value logged)
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
static inline dw_value EMPTY(void) { return REC(0); }

/* ---- running a leaf ---- */
static inline int eval_n(uint32_t root, uint16_t nvars, uint32_t nev, const uint64_t *masks, bool *holds)
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
static inline bool HOLDS_K(uint32_t root, uint16_t nvars, uint32_t k)
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
static inline bool HOLDS(uint32_t root, uint16_t nvars) { return HOLDS_K(root, nvars, B->nev); }


#endif
