/* The load-time plans of vm/eval_plan.c against the general paths, on many
 * random inputs:
 * - dw_like_match_mid (two-star patterns, the middle segment searched by a
 *   byte found at load) against dw_like_match and a plain backtracking
 *   matcher, with every offset a plan could name; then `like` policies with
 *   escaped stars and multi-byte characters decided with and without the
 *   plans (a copy of the program whose like_rare and var_plan are NULL);
 * - the path memo: policies sharing attribute paths of several lengths
 *   (prefixes of one another, entity attributes, missing attributes, more
 *   repeated paths than there are slots), decided with the memo against
 *   the same decision without plans and against each policy run alone.
 * A fast path broken on purpose (a wrong run length, a slot never cleared, a
 * suffix not checked) fails here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/compile.h"
#include "vm/vm.h"
#include "unit_compile.h"
#include "unit_request.h"

static uint32_t rng = 12345;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5;
    return rng % n;
}

/* ---- like: the matcher itself ---- */

/* glob over bytes: '*' in pat is the wildcard (segments joined by it) */
static bool ref_match(const char *pat, size_t pn, const char *s, size_t n)
{
    if (pn == 0) return n == 0;
    if (pat[0] == 0x01) {      /* the wildcard, spelt 0x01 so a literal '*' stays a byte */
        for (size_t k = 0; k <= n; k++)
            if (ref_match(pat + 1, pn - 1, s + k, n - k)) return true;
        return false;
    }
    return n > 0 && pat[0] == s[0] && ref_match(pat + 1, pn - 1, s + 1, n - 1);
}

/* pieces that make up segments and subjects: multi-byte characters, a
 * literal star, the bytes paths are made of */
static const char *const PIECES[] = { "a", "v", "/", ".", "e", "*", "\xc3\xa9", "\xe2\x82\xac", "ve", "/." };
#define NPIECES (sizeof PIECES / sizeof *PIECES)

static size_t random_text(char *out, size_t max_pieces)
{
    size_t n = 0, k = rnd((uint32_t)max_pieces + 1);
    for (size_t i = 0; i < k; i++) {
        const char *p = PIECES[rnd(NPIECES)];
        memcpy(out + n, p, strlen(p));
        n += strlen(p);
    }
    return n;
}

static void test_like_mid_random(void **state)
{
    (void)state;
    char segbuf[3][64], subj[128], ref[200];
    dw_str seg[3];
    uint32_t matches = 0, total = 0;
    for (int round = 0; round < 20000; round++) {
        size_t rn = 0;
        for (int i = 0; i < 3; i++) {
            seg[i].s = segbuf[i];
            seg[i].len = random_text(segbuf[i], i == 1 ? 4 : 2);
            memcpy(ref + rn, segbuf[i], seg[i].len);
            rn += seg[i].len;
            if (i < 2) ref[rn++] = 0x01;
        }
        if (round % 7 == 0) seg[1].len = 0;     /* "a**b" */
        if (round % 7 == 0) { rn = 0; memcpy(ref, segbuf[0], seg[0].len); rn = seg[0].len; ref[rn++] = 1; ref[rn++] = 1;
                              memcpy(ref + rn, segbuf[2], seg[2].len); rn += seg[2].len; }
        dw_like_pattern p = { 3, seg };
        size_t n = random_text(subj, 8);
        if (rnd(3) == 0 && seg[1].len && n + seg[1].len < sizeof subj) {   /* plant the middle */
            size_t at = rnd((uint32_t)n + 1);
            memmove(subj + at + seg[1].len, subj + at, n - at);
            memcpy(subj + at, seg[1].s, seg[1].len);
            n += seg[1].len;
        }
        bool want = ref_match(ref, rn, subj, n);
        assert_int_equal(dw_like_match(&p, subj, n), want);
        size_t rare = dw_like_rare_offset(seg[1].s, seg[1].len);
        assert_true(seg[1].len == 0 || rare < seg[1].len);
        assert_int_equal(dw_like_match_mid(&p, rare, subj, n), want);
        /* any offset inside the segment must give the same answer */
        for (size_t k = 0; k < seg[1].len; k++)
            if (dw_like_match_mid(&p, k, subj, n) != want)
                fail_msg("offset %zu of a %zu-byte middle segment: %d, want %d", k, seg[1].len, !want, want);
        matches += want;
        total++;
    }
    assert_true(matches > total / 20 && matches < total - total / 20);   /* both answers well covered */
    /* an empty subject may come as NULL */
    dw_str e[3] = { { "", 0 }, { "", 0 }, { "", 0 } };
    dw_like_pattern pe = { 3, e };
    assert_true(dw_like_match_mid(&pe, 0, NULL, 0));
}

/* ---- like: through the interpreter, with and without the plans ---- */

/* a random Cedar pattern (wildcards, escaped stars, multi-byte) and its reference form */
static void random_pattern(char *cedar, char *ref, size_t *rn)
{
    size_t c = 0;
    *rn = 0;
    int nstar = 0;
    for (int i = 0, k = 1 + (int)rnd(6); i < k; i++) {
        uint32_t r = rnd(8);
        if (r < 2 && nstar < 3) { cedar[c++] = '*'; ref[(*rn)++] = 0x01; nstar++; continue; }
        if (r == 2) { cedar[c++] = '\\'; cedar[c++] = '*'; ref[(*rn)++] = '*'; continue; }
        const char *p = PIECES[rnd(NPIECES)];
        if (!strcmp(p, "*")) p = "a";
        memcpy(cedar + c, p, strlen(p)); c += strlen(p);
        memcpy(ref + *rn, p, strlen(p)); *rn += strlen(p);
    }
    cedar[c] = 0;
}

#define NLIKE 48

/* requests in a, the two decisions' scratch in s1 and s2 */
static void arenas_init(dw_arena *a, dw_arena *s1, dw_arena *s2)
{
    dw_arena_init(a, 4096);
    dw_arena_init(s1, 64 * 1024);
    dw_arena_init(s2, 64 * 1024);
}

static void decide_both(dw_program *prog, const dw_store *st, dw_arena *a, dw_arena *s1, dw_arena *s2,
                        const char *rq, dw_response *fast, dw_response *general)
{
    dw_program plain = *prog;
    plain.var_plan = NULL;
    plain.like_rare = NULL;
    dw_request req;
    unit_request_json(a, prog, st, rq, &req);
    dw_arena_reset(s1);
    dw_arena_reset(s2);
    assert_int_equal(dw_authorize(prog, st, &req, s1, fast), 0);
    assert_int_equal(dw_authorize(&plain, st, &req, s2, general), 0);
    assert_int_equal(fast->allow, general->allow);
    assert_int_equal(fast->ndetermining, general->ndetermining);
    for (uint32_t i = 0; i < fast->ndetermining; i++) assert_int_equal(fast->determining[i], general->determining[i]);
    assert_int_equal(fast->nerrors, general->nerrors);
    for (uint32_t i = 0; i < fast->nerrors; i++) {
        assert_int_equal(fast->errors[i].policy, general->errors[i].policy);
        assert_int_equal(fast->errors[i].status, general->errors[i].status);
    }
}

static void test_like_plans_random(void **state)
{
    (void)state;
    for (int set = 0; set < 6; set++) {
        static char text[NLIKE * 160], refs[NLIKE][64];
        size_t rlen[NLIKE], tn = 0;
        for (int i = 0; i < NLIKE; i++) {
            char cedar[64];
            random_pattern(cedar, refs[i], &rlen[i]);
            tn += (size_t)snprintf(text + tn, sizeof text - tn, "permit (principal, action, resource) when { context.s like \"%s\" };\n", cedar);
        }
        dw_program *prog = unit_compile("like.cedar", text);
        assert_non_null(prog->like_rare);
        dw_store st;
        unit_empty_store(&st);
        dw_arena a, s1, s2;
        arenas_init(&a, &s1, &s2);
        for (int r = 0; r < 300; r++) {
            char subj[128], rq[512];
            size_t n = random_text(subj, 8);
            subj[n] = 0;
            snprintf(rq, sizeof rq, "{\"principal\":{\"type\":\"U\",\"id\":\"u\"},\"action\":{\"type\":\"Action\",\"id\":\"a\"},"
                                    "\"resource\":{\"type\":\"D\",\"id\":\"d\"},\"context\":{\"s\":\"%s\"}}", subj);
            dw_response fast, general;
            dw_arena_reset(&a);
            decide_both(prog, &st, &a, &s1, &s2, rq, &fast, &general);
            uint32_t d = 0;
            for (uint32_t i = 0; i < NLIKE; i++) {
                bool want = ref_match(refs[i], rlen[i], subj, n);
                bool got = d < fast.ndetermining && fast.determining[d] == i;
                d += got;
                if (got != want) fail_msg("policy %u on \"%s\": %d, want %d", i, subj, got, want);
            }
        }
        dw_arena_free(&a);
        dw_arena_free(&s1);
        dw_arena_free(&s2);
        dw_store_free(&st);
        dw_program_free(prog);
    }
}

/* ---- the path memo ---- */

static const char *const PATHS[] = {
    "context.a", "context.a.b", "context.a.b.c", "context.a.c", "context.b", "context.b.b",
    "principal.info", "principal.info.level", "resource.owner.info.level", "context.a.b.c.d",
};
#define NPATHS (sizeof PATHS / sizeof *PATHS)

static const char *const TESTS[] = { " == 1", " == 2", " == \"x\"", " has b", " like \"x*\"", " > 1", " == {\"c\": 1}" };

static const char *MEMO_ENTITIES =
    "[{\"uid\":{\"type\":\"User\",\"id\":\"u\"},\"attrs\":{\"info\":{\"level\":3},\"owner\":{\"__entity\":{\"type\":\"User\",\"id\":\"w\"}}},\"parents\":[]},"
    " {\"uid\":{\"type\":\"User\",\"id\":\"w\"},\"attrs\":{\"info\":{\"level\":1},\"owner\":{\"__entity\":{\"type\":\"User\",\"id\":\"x\"}}},\"parents\":[]},"
    " {\"uid\":{\"type\":\"User\",\"id\":\"x\"},\"attrs\":{\"info\":\"flat\"},\"parents\":[]}]";

static const char *const CONTEXTS[] = {
    "{}", "{\"a\":1}", "{\"a\":{\"b\":1}}", "{\"a\":{\"b\":2,\"c\":3},\"b\":{\"b\":1}}", "{\"a\":{\"b\":\"xy\"}}",
    "{\"a\":{\"b\":{\"c\":1}}}", "{\"a\":{\"b\":{\"c\":{\"d\":2}}},\"b\":\"x\"}", "{\"a\":{\"c\":1}}", "{\"b\":{\"b\":2}}",
};
static const char *const USERS[] = { "u", "w", "x", "nobody" };

static void check_memo_set(const char *text, uint32_t npol, bool want_sites, const char *extra_context)
{
    dw_program *prog = unit_compile("memo.cedar", text);
    if (want_sites) assert_non_null(prog->var_plan);
    dw_store st;
    unit_store_json(&st, MEMO_ENTITIES);
    dw_arena a, s1, s2;
    arenas_init(&a, &s1, &s2);
    dw_value *stack = calloc(prog->max_stack + 1, sizeof *stack);
    uint32_t errors = 0, trues = 0;
    for (size_t u = 0; u < sizeof USERS / sizeof *USERS; u++)
        for (size_t r = 0; r < sizeof USERS / sizeof *USERS; r++)
            for (size_t c = 0; c <= sizeof CONTEXTS / sizeof *CONTEXTS; c++) {
                const char *ctx = c < sizeof CONTEXTS / sizeof *CONTEXTS ? CONTEXTS[c] : extra_context;
                if (!ctx) continue;
                char rq[4096];
                snprintf(rq, sizeof rq, "{\"principal\":{\"type\":\"User\",\"id\":\"%s\"},\"action\":{\"type\":\"Action\",\"id\":\"a\"},"
                                        "\"resource\":{\"type\":\"User\",\"id\":\"%s\"},\"context\":%s}", USERS[u], USERS[r], ctx);
                dw_response fast, general;
                dw_arena_reset(&a);
                decide_both(prog, &st, &a, &s1, &s2, rq, &fast, &general);
                /* and each policy alone (no memo) */
                dw_request req;
                unit_request_json(&a, prog, &st, rq, &req);
                uint32_t d = 0, e = 0;
                for (uint32_t i = 0; i < npol; i++) {
                    dw_eval_ctx cx = { .prog = prog, .store = &st, .req = &req, .scratch = &a, .stack = stack };
                    bool sat = false;
                    dw_eval_status stt = dw_eval_policy(&cx, i, &sat);
                    if (stt != DW_EVAL_OK) {
                        errors++;
                        if (e >= fast.nerrors || fast.errors[e].policy != i || fast.errors[e].status != stt)
                            fail_msg("policy %u on %s: alone %s, not so in the decision", i, rq, dw_eval_status_name(stt));
                        e++;
                        continue;
                    }
                    if (!sat) continue;
                    trues++;
                    if (d >= fast.ndetermining || fast.determining[d] != i) fail_msg("policy %u on %s: true alone only", i, rq);
                    d++;
                }
                assert_int_equal(e, fast.nerrors);
                assert_int_equal(d, fast.ndetermining);
            }
    assert_true(errors > 0 && trues > 0);
    free(stack);
    dw_arena_free(&a);
    dw_arena_free(&s1);
    dw_arena_free(&s2);
    dw_store_free(&st);
    dw_program_free(prog);
}

static void test_memo_random(void **state)
{
    (void)state;
    static char text[64 * 1024];
    for (int set = 0; set < 8; set++) {
        size_t tn = 0;
        uint32_t npol = 30 + rnd(30);
        for (uint32_t i = 0; i < npol; i++) {
            const char *p1 = PATHS[rnd(NPATHS)], *p2 = PATHS[rnd(NPATHS)];
            const char *op = rnd(2) ? "&&" : "||";
            tn += (size_t)snprintf(text + tn, sizeof text - tn, "permit (principal, action, resource) when { %s%s %s %s%s };\n",
                                   p1, TESTS[rnd(sizeof TESTS / sizeof *TESTS)], op, p2, TESTS[rnd(sizeof TESTS / sizeof *TESTS)]);
        }
        check_memo_set(text, npol, true, NULL);
    }
}

/* ---- VAR plans chained by their tests' successors ---- */

/* a random condition: tests (a path and a test, a scope variable compared or
 * tested with has) joined by &&, ||, !, if-then-else, and inside expressions
 * that take their Bool as a value (a set, an equality) */
static size_t random_cond(char *out, size_t cap, int depth)
{
    static const char *const LEAVES[] = { "principal == User::\"u\"", "resource == User::\"w\"", "context has a", "principal has info",
                                          "context.a has b", "principal.info has level", "resource in User::\"w\"",
                                          "principal in [User::\"x\", User::\"u\"]", "context.a in User::\"u\"",
                                          "resource.owner in [User::\"x\"]" };
    uint32_t k = depth <= 0 ? 0 : rnd(8);
    char x[1024], y[1024], z[1024];
    switch (k) {
    case 0:
    case 1:
        if (rnd(4) == 0) return (size_t)snprintf(out, cap, "%s", LEAVES[rnd(sizeof LEAVES / sizeof *LEAVES)]);
        return (size_t)snprintf(out, cap, "%s%s", PATHS[rnd(NPATHS)], TESTS[rnd(sizeof TESTS / sizeof *TESTS)]);
    case 2: random_cond(x, sizeof x, depth - 1); random_cond(y, sizeof y, depth - 1); return (size_t)snprintf(out, cap, "(%s && %s)", x, y);
    case 3: random_cond(x, sizeof x, depth - 1); random_cond(y, sizeof y, depth - 1); return (size_t)snprintf(out, cap, "(%s || %s)", x, y);
    case 4: random_cond(x, sizeof x, depth - 1); return (size_t)snprintf(out, cap, "!(%s)", x);
    case 5:
        random_cond(x, sizeof x, depth - 1); random_cond(y, sizeof y, depth - 1); random_cond(z, sizeof z, depth - 1);
        return (size_t)snprintf(out, cap, "(if %s then %s else %s)", x, y, z);
    case 6: random_cond(x, sizeof x, depth - 1); random_cond(y, sizeof y, depth - 1); return (size_t)snprintf(out, cap, "[%s, %s].contains(true)", x, y);
    default: random_cond(x, sizeof x, depth - 1); random_cond(y, sizeof y, depth - 1); return (size_t)snprintf(out, cap, "((%s) == (%s))", x, y);
    }
}

static void test_plan_chains_random(void **state)
{
    (void)state;
    static char text[256 * 1024];
    for (int set = 0; set < 12; set++) {
        size_t tn = 0;
        uint32_t npol = 20 + rnd(20);
        for (uint32_t i = 0; i < npol; i++) {
            char w[1024], u[1024];
            random_cond(w, sizeof w, 1 + (int)rnd(3));
            tn += (size_t)snprintf(text + tn, sizeof text - tn, "permit (principal, action, resource) when { %s }", w);
            if (rnd(3) == 0) {
                random_cond(u, sizeof u, (int)rnd(3));
                tn += (size_t)snprintf(text + tn, sizeof text - tn, " unless { %s }", u);
            }
            tn += (size_t)snprintf(text + tn, sizeof text - tn, ";\n");
        }
        check_memo_set(text, npol, true, NULL);
    }
}

/* More repeated paths than memo slots: those past the last slot run plainly. */
static void test_memo_more_paths_than_slots(void **state)
{
    (void)state;
    static char text[128 * 1024], ctx[2048];
    size_t tn = 0, cn = 0;
    uint32_t npol = 0, nk = DW_PATH_MEMO_SLOTS + 20;
    cn += (size_t)snprintf(ctx + cn, sizeof ctx - cn, "{\"a\":{\"b\":1}");
    for (uint32_t k = 0; k < nk; k++) {
        if (k % 5) cn += (size_t)snprintf(ctx + cn, sizeof ctx - cn, ",\"k%u\":%u", k, k % 2);   /* some missing: errors */
        for (int rep = 0; rep < 2; rep++, npol += 2)
            tn += (size_t)snprintf(text + tn, sizeof text - tn,
                                   "permit (principal, action, resource) when { context.k%u == %d };\n"
                                   "permit (principal, action, resource) when { context.a.b == %u };\n", k, rep, k % 3);
    }
    snprintf(ctx + cn, sizeof ctx - cn, "}");
    check_memo_set(text, npol, true, ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_like_mid_random),
        cmocka_unit_test(test_like_plans_random),
        cmocka_unit_test(test_memo_random),
        cmocka_unit_test(test_memo_more_paths_than_slots),
        cmocka_unit_test(test_plan_chains_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
