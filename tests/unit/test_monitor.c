/* test_monitor.c - vm/monitor.c, the incremental monitors of Box's temporal
 * idioms, against the reference evaluator (vm/teval.c).
 *
 * 1. The shapes of box.md §13 and dogwood.md §8.8, compiled from policy
 *    text, are classified as the idioms they are (and others are not).
 * 2. Randomized agreement: random traces (repeated timestamps, gaps of
 *    exactly the window, random request/response/error events over three
 *    actions with random field values, optional key-local partitions) and
 *    random instances of every idiom (random windows, constants, anchored
 *    terms, operators, thresholds, operand orders); at every event,
 *    dw_monitors_eval must equal dw_teval_leaf over the same history view.
 * 3. Timestamp regressions disable the monitors (fallback), reset revives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm/monitor.h"
#include "vm/teval.h"
#include "compiler/compile.h"

/* ================================================================ compiled shapes */

static dw_program *compile_text(const char *text)
{
    dw_source src = { "t.dw", text, strlen(text) };
    dw_diags d;
    dw_diags_init(&d);
    dw_policy_set *ps = dw_parse_policy_set(&src, &d);
    dw_program *p = ps && d.nerrors == 0 ? dw_compile(ps, NULL, &d) : NULL;
    if (!p) dw_diags_print(&d, stderr);
    if (ps) dw_policy_set_free(ps);
    dw_diags_free(&d);
    return p;
}

static void test_compiled_shapes(void **state)
{
    (void)state;
    static const struct { const char *leaf; int kind; } cases[] = {
        { "exists (total: Long). ((count for (t: Timepoint). where (formerly within 60s "
          "(Box::Action::\"fs:write\"::response{ input.path: _, input.operation: Box::FsWriteOperation::\"write_content\" } && tp(t)))) "
          "== total && total >= 6)", DW_MON_KIND_COUNT },
        { "exists (total: Long). ((sum b for (b: Long), (t: Timepoint). where (formerly within 60s "
          "(Box::Action::\"http:request\"::response{ input.host: _, input.body_bytes: b } && tp(t)))) == total && total < 100)",
          DW_MON_KIND_SUM },
        { "formerly within 1h Box::Action::\"shell:spawn\"::response{ input.program: \"cargo\", input.arg1: \"test\", output.status: 0 }",
          DW_MON_KIND_FORMERLY },
        { "formerly within 1h Box::Action::\"shell:spawn\"::response{ input.program: context.input.program, output.status: -1 }",
          DW_MON_KIND_FORMERLY },
        { "!Box::Action::\"shell:spawn\"::response{ input.program: \"git\", input.arg1: \"commit\" } since within 10m "
          "Box::Action::\"shell:spawn\"::response{ input.program: \"npm\", input.arg1: \"test\", output.status: 0 }",
          DW_MON_KIND_SINCE_NEG },
        { "(count for (t: Timepoint). where (formerly within 1h (Box::Action::\"fs:read\"::request{} && tp(t)))) > 2",
          DW_MON_KIND_COUNT },
        { "3 <= (count for (t: Timepoint). where (formerly within 1h (tp(t) && Box::Action::\"fs:read\"::request{})))",
          DW_MON_KIND_COUNT },
        { "previous within 5m Box::Action::\"fs:read\"::response{ input.path: context.input.path }", DW_MON_KIND_PREVIOUS },
        /* not idioms: teval */
        { "formerly within 1h (Box::Action::\"fs:read\"::request{} && !Box::Action::\"fs:write\"::request{})", DW_MON_KIND_NONE },
        { "exists (u: String). formerly within 1h Box::Action::\"fs:read\"::request{ input.path: u }", DW_MON_KIND_NONE },
        { "(count for (u: String). where (formerly within 1h Box::Action::\"fs:read\"::request{ input.path: u })) > 2",
          DW_MON_KIND_NONE },
        { "Box::Action::\"shell:spawn\"::response{ input.program: \"git\" } since within 10m "
          "Box::Action::\"shell:spawn\"::response{ input.program: \"npm\" }", DW_MON_KIND_NONE },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[2048];
        snprintf(text, sizeof text, "forbid (principal, action, resource) when temporal { %s };\n", cases[i].leaf);
        dw_program *p = compile_text(text);
        assert_non_null(p);
        assert_int_equal(p->temporal.nleaves, 1);
        dw_monitors *m = dw_monitors_new(p, 1000000000);
        assert_non_null(m);
        if (dw_monitors_leaf_kind(m, 0) != cases[i].kind)
            fprintf(stderr, "case %zu: got %s, want %s\n", i, dw_monitors_kind_name(dw_monitors_leaf_kind(m, 0)),
                    dw_monitors_kind_name(cases[i].kind));
        assert_int_equal(dw_monitors_leaf_kind(m, 0), cases[i].kind);
        dw_monitors_free(m);
        dw_program_free(p);
    }
}

/* ================================================================ random tables */

#define MAXN 4096
#define MAXEV 96
#define MAXLEAVES 24

typedef struct tb {
    dw_arena a;                 /* values of the current trace */
    dw_arena scratch;
    dw_tf tfs[MAXN];            uint32_t ntfs;
    dw_tpattern pats[MAXN];     uint32_t npats;
    dw_tterm terms[MAXN];       uint32_t nterms;
    uint32_t targs[MAXN];       uint32_t ntargs;
    dw_tagg aggs[MAXN];         uint32_t naggs;
    uint16_t aggvars[MAXN];     uint32_t naggvars;
    dw_tleaf leaves[MAXLEAVES]; uint32_t nleaves;
    dw_str strs[MAXN];        uint32_t nstrs;
    dw_value consts[MAXN];      uint32_t nconsts;
    dw_program prog;
    dw_event evs[MAXEV];        uint32_t nev;
    dw_tanchor anchors[MAXEV];
    uint64_t rng;
    bool unanchored;            /* no anchored terms, constant Long thresholds, no partition */
} tb;

static tb *B;

static uint32_t rnd(uint32_t n)
{
    B->rng ^= B->rng << 13; B->rng ^= B->rng >> 7; B->rng ^= B->rng << 17;
    return n ? (uint32_t)(B->rng % n) : 0;
}

static uint32_t S(const char *s)
{
    for (uint32_t i = 0; i < B->nstrs; i++)
        if (B->strs[i].len == strlen(s) && memcmp(B->strs[i].s, s, B->strs[i].len) == 0) return i;
    B->strs[B->nstrs] = (dw_str){ s, strlen(s) };   /* string literals: static storage */
    return B->nstrs++;
}

static dw_value STR(const char *s) { dw_value v; assert_true(dw_make_string(&B->a, s, strlen(s), &v)); return v; }

static dw_value ENT(const char *t, const char *id)
{
    dw_value v = { .kind = DW_V_ENTITY };
    v.u.uid = dw_make_uid(&B->a, t, strlen(t), id, strlen(id));
    return v;
}

static dw_value REC(int n, const char **keys, const dw_value *vals)
{
    dw_field *f = dw_arena_alloc(&B->a, (size_t)(n ? n : 1) * sizeof *f);
    for (int k = 0; k < n; k++) { f[k].key = keys[k]; f[k].klen = (uint32_t)strlen(keys[k]); f[k].v = vals[k]; }
    dw_value v;
    assert_true(dw_make_record(f, (size_t)n, &v));
    return v;
}

/* A random field value from a small domain (so matches are frequent). */
static dw_value rval(bool amount)
{
    uint32_t r = rnd(amount ? 14 : 10);
    switch (r) {
    case 0: case 1: case 2: return dw_long((int64_t)rnd(3));
    case 3: return STR(rnd(2) ? "s0" : "s1");
    case 4: return dw_long(-1);
    case 5: { dw_value v = { .kind = DW_V_NULL }; return v; }
    case 6: {
        dw_value *el = dw_arena_alloc(&B->a, 2 * sizeof *el);
        el[0] = dw_long(1); el[1] = STR("s0");
        dw_value v = { .kind = rnd(3) ? DW_V_ARRAY : DW_V_SET, .n = rnd(3) };   /* a set reads as an array (§7.2) */
        v.u.elems = el;
        return v;
    }
    case 7: { dw_value v = { .kind = DW_V_DECIMAL }; v.u.i = 10000 * (int64_t)rnd(2); return v; }
    case 8: return ENT("U", rnd(2) ? "alice" : "bob");
    case 9: return dw_bool(rnd(2));
    case 10: return dw_long(INT64_MAX - (int64_t)rnd(3));
    case 11: return dw_long(INT64_MIN + (int64_t)rnd(3));
    default: return dw_long((int64_t)rnd(1000) - 200);
    }
}

static const char *ACTS[] = { "a", "b", "c" };
static const char *KINDS[] = { "request", "response", "error" };

/* logged = { input: {x, y, amt, arr}, output: {status}, sess }, fields sometimes absent */
static void make_event(dw_event *e, int64_t ts)
{
    e->ts = ts;
    const char *a = ACTS[rnd(3)], *k = KINDS[rnd(3)];
    e->atype = (dw_str){ "Ns::Action", 10 };
    e->aid = (dw_str){ a, strlen(a) };
    e->kind = (dw_str){ k, strlen(k) };
    const char *ik[4]; dw_value iv[4]; int ni = 0;
    if (rnd(8)) { ik[ni] = "amt"; iv[ni++] = rval(true); }
    if (rnd(6)) { ik[ni] = "x"; iv[ni++] = rval(false); }
    if (rnd(6)) { ik[ni] = "y"; iv[ni++] = rval(false); }
    const char *lk[3]; dw_value lv[3]; int nl = 0;
    lk[nl] = "input"; lv[nl++] = REC(ni, ik, iv);
    if (rnd(3)) { const char *ok[1] = { "status" }; dw_value ov[1] = { rnd(4) ? dw_long((int64_t)rnd(2)) : STR("s0") }; lk[nl] = "output"; lv[nl++] = REC(1, ok, ov); }
    if (rnd(5)) { lk[nl] = "sess"; lv[nl++] = rnd(8) ? (rnd(2) ? STR("s0") : STR("s1")) : rval(false); }
    e->logged = REC(nl, lk, lv);
}

/* ρ0: context.input is the event's own input (as Box fills it) or random. */
static void make_anchor(dw_tanchor *an, const dw_event *e)
{
    memset(an, 0, sizeof *an);
    const dw_value *in = dw_record_get(&e->logged, "input", 5);
    dw_value input;
    if (in && rnd(4)) input = *in;
    else {
        const char *ik[2] = { "x", "y" };
        dw_value iv[2] = { rval(false), rval(false) };
        input = REC(2, ik, iv);
    }
    const char *ck[1] = { "input" };
    an->context = REC(1, ck, &input);
    an->principal = rnd(6) ? ENT("U", rnd(2) ? "alice" : "bob") : (dw_value){ .kind = DW_V_BOOL };
    an->resource = ENT("R", "r");
    const char *pk[1] = { "dept" };
    dw_value pv[1] = { rnd(2) ? dw_long(1) : STR("s0") };
    an->principal_attrs = rnd(2) ? REC(1, pk, pv) : (dw_value){ .kind = DW_V_RECORD };
    an->resource_attrs = (dw_value){ .kind = DW_V_RECORD };
}

/* ---- table constructors ---- */
static uint32_t term(uint8_t kind, uint32_t a, uint32_t n)
{
    B->terms[B->nterms] = (dw_tterm){ .kind = kind, .a = a, .n = n };
    return B->nterms++;
}
static uint32_t T_C(dw_value v) { B->consts[B->nconsts] = v; return term(DW_TT_CONST, B->nconsts++, 0); }
static uint32_t tf(dw_tf f) { B->tfs[B->ntfs] = f; return B->ntfs++; }

static const char *PATHS[] = { "input.x", "input.y", "output.status", "input.amt", "input.z", "sess" };

/* A random pattern term: wildcard, constant or anchored (possibly unresolvable). */
static uint32_t rand_term(void)
{
    switch (B->unanchored ? rnd(5) : rnd(9)) {
    case 0: case 1: return term(DW_TT_WILD, 0, 0);
    case 2: case 3: case 4: return T_C(rval(false));
    case 5: return term(DW_TT_CONTEXT, S(rnd(4) ? (rnd(2) ? "input.x" : "input.y") : "input.q"), 0);
    case 6: return term(DW_TT_PRINCIPAL, S(rnd(3) == 0 ? "" : rnd(2) ? "id" : "dept"), 0);
    case 7: return term(DW_TT_RESOURCE, S(rnd(2) ? "" : "id"), 0);
    default: {                  /* [1, context.input.x] or [] */
        uint32_t n = rnd(3), first = B->ntargs;
        for (uint32_t k = 0; k < n; k++) B->targs[B->ntargs++] = 0;
        for (uint32_t k = 0; k < n; k++)
            B->targs[first + k] = k == 0 ? T_C(dw_long(1)) : term(DW_TT_CONTEXT, S("input.x"), 0);
        return term(DW_TT_ARRAY, first, n);
    }
    }
}

/* P with 0..3 random patterns; sum_slot >= 0: one of them (input.amt) binds it. */
static uint32_t rand_pred(int sum_slot)
{
    uint32_t n = rnd(4), terms[5];
    const char *paths[5];
    for (uint32_t k = 0; k < n; k++) { terms[k] = rand_term(); paths[k] = PATHS[rnd(6)]; }
    if (sum_slot >= 0) {
        uint32_t at = rnd(n + 1);
        for (uint32_t k = n; k > at; k--) { terms[k] = terms[k - 1]; paths[k] = paths[k - 1]; }
        terms[at] = term(DW_TT_VAR, (uint32_t)sum_slot, 0);
        paths[at] = "input.amt";
        n++;
    }
    uint32_t first = B->npats;
    for (uint32_t k = 0; k < n; k++) B->pats[B->npats++] = (dw_tpattern){ S(paths[k]), terms[k] };
    const char *k = KINDS[rnd(3)];
    return tf((dw_tf){ .kind = DW_TF_PRED, .type_str = S(rnd(20) ? "Ns::Action" : "Other::Action"), .id_str = S(ACTS[rnd(3)]),
                       .kind_str = S(k), .first = first, .n = n });
}

static int64_t rand_window(void)
{
    static const int64_t w[] = { 0, 1, 2, 3, 5, 8, 13, -1 };
    return w[rnd(rnd(30) ? 7 : 8)];
}

/* K: a Long constant mostly, sometimes another kind or an anchored term. */
static uint32_t rand_k(bool sum)
{
    switch (B->unanchored ? 2 + rnd(10) : rnd(12)) {
    case 0: return T_C(STR("s0"));
    case 1: return term(DW_TT_CONTEXT, S(rnd(2) ? "input.x" : "input.q"), 0);
    case 2: return T_C(dw_long(rnd(2) ? INT64_MAX : INT64_MIN));
    default: return T_C(dw_long(sum ? (int64_t)rnd(600) - 100 : (int64_t)rnd(6)));
    }
}

/* count/sum for (t[, b]). where formerly within W (P && tp(t)), slots t=0, b=1 */
static uint32_t rand_agg(bool sum)
{
    uint32_t p = rand_pred(sum ? 1 : -1), tp = tf((dw_tf){ .kind = DW_TF_TP, .var = 0 });
    uint32_t and_ = rnd(4) ? tf((dw_tf){ .kind = DW_TF_AND, .a = p, .b = tp }) : tf((dw_tf){ .kind = DW_TF_AND, .a = tp, .b = p });
    uint32_t fo = tf((dw_tf){ .kind = DW_TF_FORMERLY, .window = rand_window(), .a = and_ });
    uint32_t fv = B->naggvars;
    if (sum) {
        if (rnd(2)) { B->aggvars[B->naggvars++] = 1; B->aggvars[B->naggvars++] = 0; }
        else { B->aggvars[B->naggvars++] = 0; B->aggvars[B->naggvars++] = 1; }
    } else B->aggvars[B->naggvars++] = 0;
    B->aggs[B->naggs] = (dw_tagg){ .body = fo, .sum_var = sum ? 1 : 0, .first_var = fv, .nvars = sum ? 2 : 1 };
    return term(sum ? DW_TT_SUM : DW_TT_COUNT, B->naggs++, 0);
}

/* One random leaf; *want is the kind the classifier must give it. */
static uint32_t rand_leaf(int *want)
{
    int64_t w = rand_window();
    uint8_t op = (uint8_t)rnd(6);
    switch (rnd(8)) {
    case 0: *want = DW_MON_KIND_FORMERLY; return tf((dw_tf){ .kind = DW_TF_FORMERLY, .window = w, .a = rand_pred(-1) });
    case 1: *want = DW_MON_KIND_PREVIOUS; return tf((dw_tf){ .kind = DW_TF_PREVIOUS, .window = w, .a = rand_pred(-1) });
    case 2: {
        *want = DW_MON_KIND_SINCE_NEG;
        uint32_t q = rand_pred(-1), p = rand_pred(-1);
        if (rnd(3) == 0) p = q;             /* !Q since Q */
        uint32_t nq = tf((dw_tf){ .kind = DW_TF_NOT, .a = q });
        return tf((dw_tf){ .kind = DW_TF_SINCE, .window = w, .a = nq, .b = p });
    }
    case 3: case 4: {           /* exists (n). ((agg) == n && n op K), slot n = 2 */
        bool sum = rnd(2);
        *want = sum ? DW_MON_KIND_SUM : DW_MON_KIND_COUNT;
        uint32_t agg = rand_agg(sum), n = term(DW_TT_VAR, 2, 0), k = rand_k(sum);
        uint32_t x = rnd(2) ? tf((dw_tf){ .kind = DW_TF_CMP, .op = DW_TC_OP_EQ, .a = agg, .b = n })
                            : tf((dw_tf){ .kind = DW_TF_CMP, .op = DW_TC_OP_EQ, .a = n, .b = agg });
        uint32_t y = rnd(2) ? tf((dw_tf){ .kind = DW_TF_CMP, .op = op, .a = n, .b = k })
                            : tf((dw_tf){ .kind = DW_TF_CMP, .op = op, .a = k, .b = n });
        uint32_t an = tf((dw_tf){ .kind = DW_TF_AND, .a = x, .b = y });
        return tf((dw_tf){ .kind = DW_TF_EXISTS, .var = 2, .a = an });
    }
    case 5: case 6: {           /* bare (agg) op K */
        bool sum = rnd(2);
        *want = sum ? DW_MON_KIND_SUM : DW_MON_KIND_COUNT;
        uint32_t agg = rand_agg(sum), k = rand_k(sum);
        return rnd(2) ? tf((dw_tf){ .kind = DW_TF_CMP, .op = op, .a = agg, .b = k })
                      : tf((dw_tf){ .kind = DW_TF_CMP, .op = op, .a = k, .b = agg });
    }
    default: {                  /* not an idiom: formerly (P && !Q) */
        *want = DW_MON_KIND_NONE;
        uint32_t q = tf((dw_tf){ .kind = DW_TF_NOT, .a = rand_pred(-1) });
        uint32_t an = tf((dw_tf){ .kind = DW_TF_AND, .a = rand_pred(-1), .b = q });
        return tf((dw_tf){ .kind = DW_TF_FORMERLY, .window = w, .a = an });
    }
    }
}

static void build_program(uint32_t nleaves, int *want)
{
    B->ntfs = B->npats = B->nterms = B->ntargs = B->naggs = B->naggvars = B->nstrs = B->nconsts = 0;
    for (uint32_t l = 0; l < nleaves; l++)
        B->leaves[l] = (dw_tleaf){ .root = rand_leaf(&want[l]), .policy = l, .nvars = 3, .reach = 20 };
    B->nleaves = nleaves;
    dw_program *p = &B->prog;
    memset(p, 0, sizeof *p);
    p->strs = B->strs; p->nstrs = B->nstrs;
    p->consts = B->consts; p->nconsts = B->nconsts;
    p->temporal = (dw_temporal_tables){ B->tfs, B->ntfs, B->pats, B->npats, B->terms, B->nterms, B->targs, B->ntargs,
                                        B->aggs, B->naggs, B->aggvars, B->naggvars, B->leaves, nleaves };
}

/* The engine's key-local view (runtime/engine.c evaluate_leaves). */
static uint32_t key_view(const dw_event **view, uint32_t upto, bool keyed)
{
    uint32_t nv = 0;
    const dw_event *cur = &B->evs[upto];
    for (uint32_t i = 0; i <= upto; i++) {
        const dw_event *ev = &B->evs[i];
        bool same = true;
        if (keyed) {
            const dw_value *a = dw_record_get(&ev->logged, "sess", 4), *b = dw_record_get(&cur->logged, "sess", 4);
            same = (!a && !b) || (a && b && dw_value_eq(a, b));
        }
        if (same) view[nv++] = ev;
    }
    return nv;
}

typedef struct stats { uint64_t traces, evals, agree, disagree, fallback, holds_true, per_kind[DW_MON_KIND__COUNT]; } stats;

static void run_trace(stats *st, bool regress)
{
    int want[MAXLEAVES];
    uint32_t nleaves = 4 + rnd(8);
    dw_arena_reset(&B->a);
    build_program(nleaves, want);
    int64_t tps = rnd(5) ? 1 : 1000;
    dw_monitors *m = dw_monitors_new(&B->prog, tps);
    assert_non_null(m);
    for (uint32_t l = 0; l < nleaves; l++) assert_int_equal(dw_monitors_leaf_kind(m, l), want[l]);
    bool keyed = !B->unanchored && rnd(3) == 0;
    if (keyed) {
        dw_str kp[1] = { { "sess", 4 } };
        assert_int_equal(dw_monitors_set_partition(m, kp, 1), 0);
    }
    uint32_t nev = 10 + rnd(MAXEV - 10);
    int64_t ts = (int64_t)rnd(3) * tps;
    bool regressed = false;
    for (uint32_t i = 0; i < nev; i++) {
        /* gaps: repeats, single ticks, exactly a window, window + 1 */
        static const int64_t gaps[] = { 0, 0, 0, 1, 1, 2, 3, 5, 8, 9, 13, 14 };
        int64_t gap = gaps[rnd(12)] * tps;
        if (tps > 1 && gap > 0 && rnd(4) == 0) gap += (int64_t)rnd(3) - 1;
        if (regress && i > 3 && rnd(8) == 0) { gap = -(int64_t)(1 + rnd(3)) * tps; regressed = true; }
        ts += gap;
        if (gap < 0 || (i > 0 && ts < B->evs[i - 1].ts)) regressed = true;
        make_event(&B->evs[i], ts);
        make_anchor(&B->anchors[i], &B->evs[i]);
        dw_monitors_observe(m, &B->prog, &B->evs[i]);
        const dw_event *view[MAXEV];
        dw_history_view hv = { view, key_view(view, i, keyed), tps };
        for (uint32_t l = 0; l < nleaves; l++) {
            if (rnd(3) == 0) continue;   /* not every leaf decides at every event (lazy expiry) */
            bool mh = false, th = false;
            int rc = dw_monitors_eval(m, &B->prog, l, &B->anchors[i], &B->evs[i], &mh);
            dw_arena_reset(&B->scratch);
            dw_teval_ctx cx = { .t = &B->prog.temporal, .strs = B->strs, .nstrs = B->nstrs, .consts = B->consts,
                                .nconsts = B->nconsts, .h = &hv, .anchor = &B->anchors[i], .scratch = &B->scratch,
                                .budget = 100000000 };
            assert_int_equal(dw_teval_leaf(&cx, l, &th), 0);
            st->evals++;
            if (rc == DW_MON_FALLBACK) {
                st->fallback++;
                /* only non-idioms, or everything once timestamps went backwards */
                assert_true(want[l] == DW_MON_KIND_NONE || regressed);
                continue;
            }
            assert_int_equal(rc, 0);
            st->per_kind[want[l]]++;
            if (th) st->holds_true++;
            if (mh == th) st->agree++;
            else {
                st->disagree++;
                if (st->disagree <= 5)
                    fprintf(stderr, "DISAGREE trace %llu event %u leaf %u (%s): monitor %d teval %d\n",
                            (unsigned long long)st->traces, i, l, dw_monitors_kind_name(want[l]), mh, th);
            }
        }
    }
    assert_true(dw_monitors_memory(m) > 0);
    dw_monitors_free(m);
    st->traces++;
}

static void test_random_agreement(void **state)
{
    (void)state;
    stats st = { 0 };
    B->rng = 0x9E3779B97F4A7C15ull;
    for (int t = 0; t < 3000; t++) run_trace(&st, false);
    printf("monitor agreement: %llu traces, %llu evals (%llu incremental: formerly %llu, count %llu, sum %llu, "
           "since-neg %llu, previous %llu; %llu true), %llu agree, %llu disagree, %llu teval fallbacks\n",
           (unsigned long long)st.traces, (unsigned long long)st.evals,
           (unsigned long long)(st.agree + st.disagree), (unsigned long long)st.per_kind[DW_MON_KIND_FORMERLY],
           (unsigned long long)st.per_kind[DW_MON_KIND_COUNT], (unsigned long long)st.per_kind[DW_MON_KIND_SUM],
           (unsigned long long)st.per_kind[DW_MON_KIND_SINCE_NEG], (unsigned long long)st.per_kind[DW_MON_KIND_PREVIOUS],
           (unsigned long long)st.holds_true, (unsigned long long)st.agree, (unsigned long long)st.disagree,
           (unsigned long long)st.fallback);
    assert_int_equal(st.disagree, 0);
    assert_true(st.traces >= 1000);
}

/* The budget shape (box.md §13): predicates without anchored terms (so
 * every match is filed under the one empty tuple, which observe and eval
 * reach without encoding it), Long constant thresholds (decided as an
 * interval fixed at classification), no partition; with lazy expiry.  The
 * monitors' short cuts for it must answer what teval answers. */
static void test_unanchored_agreement(void **state)
{
    (void)state;
    stats st = { 0 };
    B->rng = 0xD1B54A32D192ED03ull;
    B->unanchored = true;
    for (int t = 0; t < 1500; t++) run_trace(&st, false);
    B->unanchored = false;
    printf("unanchored agreement: %llu traces, %llu incremental evals (count %llu, sum %llu; %llu true), %llu disagree\n",
           (unsigned long long)st.traces, (unsigned long long)(st.agree + st.disagree),
           (unsigned long long)st.per_kind[DW_MON_KIND_COUNT], (unsigned long long)st.per_kind[DW_MON_KIND_SUM],
           (unsigned long long)st.holds_true, (unsigned long long)st.disagree);
    assert_int_equal(st.disagree, 0);
    assert_true(st.per_kind[DW_MON_KIND_COUNT] > 10000 && st.holds_true > 10000);
}

/* Timestamp regressions (replay, §20 Q17): monitors step aside, never disagree. */
static void test_regression_fallback(void **state)
{
    (void)state;
    stats st = { 0 };
    B->rng = 0x1234567ull;
    for (int t = 0; t < 300; t++) run_trace(&st, true);
    printf("with regressions: %llu traces, %llu agree, %llu disagree, %llu fallbacks\n", (unsigned long long)st.traces,
           (unsigned long long)st.agree, (unsigned long long)st.disagree, (unsigned long long)st.fallback);
    assert_int_equal(st.disagree, 0);

    /* reset revives them */
    int want[MAXLEAVES];
    dw_arena_reset(&B->a);
    build_program(1, want);
    dw_monitors *m = dw_monitors_new(&B->prog, 1);
    make_event(&B->evs[0], 10);
    make_event(&B->evs[1], 5);
    make_anchor(&B->anchors[0], &B->evs[0]);
    bool h;
    dw_monitors_observe(m, &B->prog, &B->evs[0]);
    if (want[0] != DW_MON_KIND_NONE) {
        assert_true(dw_monitors_active(m));
        assert_int_equal(dw_monitors_observe(m, &B->prog, &B->evs[1]), -1);
        assert_false(dw_monitors_active(m));
        assert_int_equal(dw_monitors_eval(m, &B->prog, 0, &B->anchors[0], &B->evs[1], &h), DW_MON_FALLBACK);
        dw_monitors_reset(m);
        assert_true(dw_monitors_active(m));
        dw_monitors_observe(m, &B->prog, &B->evs[1]);
        assert_int_equal(dw_monitors_eval(m, &B->prog, 0, &B->anchors[0], &B->evs[1], &h), 0);
    }
    dw_monitors_free(m);
}


/* ================================================================ benchmark
 * DW_MONITOR_BENCH=1 build/tests/test_monitor: ns per decision of Box's count
 * budget over a 1h window (runtime ticks: ns) holding 10, 10,000 and
 * 1,000,000 events, monitors (observe + eval) vs teval (eval over the view). */

#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void test_bench(void **state)
{
    (void)state;
    if (!getenv("DW_MONITOR_BENCH")) skip();
    dw_program *p = compile_text(
        "forbid (principal, action == Box::Action::\"http:request\", resource) when temporal {\n"
        "  exists (n: Long). ((count for (t: Timepoint). where (formerly within 1h\n"
        "    (Box::Action::\"http:request\"::response{ input.host: \"api.github.com\" } && tp(t)))) == n && n >= 5) };\n");
    assert_non_null(p);
    const int64_t tps = 1000000000, hour = 3600 * tps;
    static const uint32_t sizes[] = { 10, 10000, 1000000 };
    dw_arena a;
    dw_arena_init(&a, 0);
    dw_value host_yes, host_no;
    assert_true(dw_make_string(&a, "api.github.com", 14, &host_yes));
    assert_true(dw_make_string(&a, "example.com", 11, &host_no));
    const char *ik[1] = { "host" }, *lk[1] = { "input" };
    dw_field *f = dw_arena_alloc(&a, 4 * sizeof *f);
    f[0] = (dw_field){ .key = ik[0], .klen = 4, .v = host_yes };
    f[1] = (dw_field){ .key = ik[0], .klen = 4, .v = host_no };
    dw_value in_yes, in_no, lg_yes, lg_no;
    assert_true(dw_make_record(&f[0], 1, &in_yes));
    assert_true(dw_make_record(&f[1], 1, &in_no));
    f[2] = (dw_field){ .key = lk[0], .klen = 5, .v = in_yes };
    f[3] = (dw_field){ .key = lk[0], .klen = 5, .v = in_no };
    assert_true(dw_make_record(&f[2], 1, &lg_yes));
    assert_true(dw_make_record(&f[3], 1, &lg_no));
    dw_tanchor an = { .context = { .kind = DW_V_RECORD }, .principal_attrs = { .kind = DW_V_RECORD }, .resource_attrs = { .kind = DW_V_RECORD } };
    const uint32_t ndec = 1000;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        uint32_t n = sizes[si], total = n + ndec;
        dw_event *ev = calloc(total, sizeof *ev);
        const dw_event **view = calloc(total, sizeof *view);
        assert_non_null(ev);
        assert_non_null(view);
        int64_t step = (hour / 2) / total;   /* everything stays inside the 1h window */
        for (uint32_t k = 0; k < total; k++) {
            bool dec = k >= n;
            ev[k].ts = 1000 * (int64_t)tps + (int64_t)k * (step ? step : 1);
            ev[k].atype = (dw_str){ "Box::Action", 11 };
            ev[k].aid = (dw_str){ "http:request", 12 };
            ev[k].kind = dec ? (dw_str){ "request", 7 } : (dw_str){ "response", 8 };
            ev[k].logged = k % 2 ? lg_no : lg_yes;
            view[k] = &ev[k];
        }
        dw_monitors *m = dw_monitors_new(p, tps);
        assert_int_equal(dw_monitors_leaf_kind(m, 0), DW_MON_KIND_COUNT);
        double t0 = now_ns();
        for (uint32_t k = 0; k < n; k++) dw_monitors_observe(m, p, &ev[k]);
        double t_fill = now_ns() - t0;
        /* monitors: every decision observes its own event and evaluates */
        bool mh[1000];
        t0 = now_ns();
        for (uint32_t d = 0; d < ndec; d++) {
            dw_monitors_observe(m, p, &ev[n + d]);
            assert_int_equal(dw_monitors_eval(m, p, 0, &an, &ev[n + d], &mh[d]), 0);
        }
        double t_mon = (now_ns() - t0) / ndec;
        /* teval over the same views (fewer decisions for big windows) */
        uint32_t nt = n >= 1000000 ? 5 : n >= 10000 ? 200 : ndec;
        dw_arena scratch;
        dw_arena_init(&scratch, 0);
        double t_tev = 0;
        for (uint32_t d = 0; d < nt; d++) {
            dw_history_view hv = { view, n + d + 1, tps };
            dw_arena_reset(&scratch);
            dw_teval_ctx cx = { .t = &p->temporal, .strs = p->strs, .nstrs = p->nstrs, .consts = p->consts,
                                .nconsts = p->nconsts, .h = &hv, .anchor = &an, .scratch = &scratch, .budget = UINT64_MAX };
            bool th;
            t0 = now_ns();
            assert_int_equal(dw_teval_leaf(&cx, 0, &th), 0);
            t_tev += now_ns() - t0;
            assert_int_equal(th, mh[d]);
        }
        t_tev /= nt;
        printf("bench count budget, 1h window, %7u events: monitors %8.0f ns/decision (fill %.0f ns/event, %zu KiB state), "
               "teval %12.0f ns/decision (%u decisions), speed-up %.0fx\n",
               n, t_mon, n ? t_fill / n : 0, dw_monitors_memory(m) / 1024, t_tev, nt, t_tev / t_mon);
        dw_arena_free(&scratch);
        dw_monitors_free(m);
        free(ev);
        free(view);
    }
    dw_arena_free(&a);
    dw_program_free(p);
}

/* ================================================================ hash flooding */

/* The hash monitor.c used before issue 13 row 16 (unseeded, FNV-style). */
static uint64_t old_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    for (; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    h ^= h >> 32;
    return h * 0x9E3779B97F4A7C15ull;
}

/* An agent that knows the monitors' hash chooses values whose keys share a
 * bucket: 2,000 paths whose encodings (monitor.c's enc_value of a String:
 * kind byte, u32 length, bytes) agree in the low 11 bits of the old hash
 * (the table holds 2,048 buckets at 2,000 keys).  Under the old hash every
 * insert and lookup walked one chain: about 4,000,000 probes for 2,000
 * events and 2,000 decisions.  With the seeded XXH3 the same flood costs
 * about one probe per operation. */
static void test_hash_flood(void **state)
{
    (void)state;
    dw_program *p = compile_text("forbid (principal, action, resource) when temporal {\n"
                                 "  formerly within 1h Box::Action::\"fs:read\"::request{ input.path: context.input.path } };\n");
    assert_non_null(p);
    enum { N = 2000 };
    dw_arena a;
    dw_arena_init(&a, 0);
    dw_value *paths = dw_arena_alloc(&a, N * sizeof *paths);
    char name[32];
    uint8_t enc[64];
    uint32_t found = 0;
    for (uint64_t k = 0; found < N; k++) {
        int len = snprintf(name, sizeof name, "~/f%llu", (unsigned long long)k);
        uint32_t l32 = (uint32_t)len;
        enc[0] = DW_V_STRING;
        memcpy(enc + 1, &l32, 4);
        memcpy(enc + 5, name, (size_t)len);
        if (old_hash(enc, 5 + (size_t)len) & 0x7ff) continue;
        assert_true(dw_make_string(&a, name, (size_t)len, &paths[found]));
        found++;
    }
    /* {input: {path: v}} for events and request contexts alike */
    dw_value *recs = dw_arena_alloc(&a, (N + 1) * sizeof *recs);
    dw_value other;
    assert_true(dw_make_string(&a, "~/not-written", 13, &other));
    for (uint32_t k = 0; k <= N; k++) {
        dw_field *f = dw_arena_alloc(&a, 2 * sizeof *f);
        f[0] = (dw_field){ .key = "path", .klen = 4, .v = k < N ? paths[k] : other };
        dw_value in;
        assert_true(dw_make_record(&f[0], 1, &in));
        f[1] = (dw_field){ .key = "input", .klen = 5, .v = in };
        assert_true(dw_make_record(&f[1], 1, &recs[k]));
    }
    dw_monitors *m = dw_monitors_new(p, 1);
    assert_non_null(m);
    assert_int_equal(dw_monitors_leaf_kind(m, 0), DW_MON_KIND_FORMERLY);
    dw_event ev = { .atype = { "Box::Action", 11 }, .aid = { "fs:read", 7 }, .kind = { "request", 7 } };
    for (uint32_t k = 0; k < N; k++) {
        ev.ts = k;
        ev.logged = recs[k];
        assert_int_equal(dw_monitors_observe(m, p, &ev), 0);
    }
    dw_tanchor an = { .principal_attrs = { .kind = DW_V_RECORD }, .resource_attrs = { .kind = DW_V_RECORD } };
    for (uint32_t k = 0; k <= N; k++) {
        bool h = k == N;
        an.context = recs[k];
        assert_int_equal(dw_monitors_eval(m, p, 0, &an, &ev, &h), 0);
        assert_int_equal(h, k < N);   /* every written path, and not the other */
    }
    uint64_t probes = dw_monitors_probes(m);
    print_message("hash flood: %d keys colliding under the old hash, %llu probes for %d operations\n", N,
                  (unsigned long long)probes, 2 * N + 1);
    assert_true(probes < 8 * (2 * N + 1));
    dw_monitors_free(m);
    dw_arena_free(&a);
    dw_program_free(p);
}

static int setup(void **state)
{
    (void)state;
    B = calloc(1, sizeof *B);
    if (!B) return -1;
    dw_arena_init(&B->a, 0);
    dw_arena_init(&B->scratch, 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    dw_arena_free(&B->a);
    dw_arena_free(&B->scratch);
    free(B);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compiled_shapes),
        cmocka_unit_test(test_random_agreement),
        cmocka_unit_test(test_unanchored_agreement),
        cmocka_unit_test(test_regression_fallback),
        cmocka_unit_test(test_hash_flood),
        cmocka_unit_test(test_bench),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
