/* The interpreter's fast paths (vm/interp.c) answer as the plain steps do:
 * `like` with one star inline (prefix, suffix, both; multi-byte characters,
 * escaped stars, overlapping ends), `CONST k; EQ` compared in place, a Bool
 * result taking the CHECK_BOOL, OR, AND or RET after it (random `&&`, `||`,
 * `!`, `if` trees over true, false, non-Bool and erroring leaves, against a
 * reference evaluator of Cedar's rules, in a decision and alone), and
 * `VAR x; GETATTR a; GETATTR b` chains with the decision's attribute memo
 * (each policy of a decision against the same policy run alone, without the
 * memo: same value, same error). */
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

typedef struct fixture { dw_program *prog; dw_store st; dw_arena a, s; } fixture;

static void start(fixture *f, const char *policies, const char *entities)
{
    f->prog = unit_compile("fast.cedar", policies);
    dw_arena_init(&f->a, 4096);
    dw_arena_init(&f->s, 64 * 1024);
    unit_store_json(&f->st, entities);
}

static void stop(fixture *f)
{
    dw_arena_free(&f->a);
    dw_arena_free(&f->s);
    dw_store_free(&f->st);
    dw_program_free(f->prog);
}

static void request(fixture *f, const char *principal, const char *ctx, dw_request *req)
{
    char rq[1024];
    snprintf(rq, sizeof rq, "{\"principal\":%s,\"action\":{\"type\":\"Action\",\"id\":\"a\"},"
                            "\"resource\":{\"type\":\"Doc\",\"id\":\"d\"},\"context\":%s}", principal, ctx);
    unit_request_json(&f->a, f->prog, &f->st, rq, req);
}

/* pattern in Cedar's spelling, subject as JSON string contents */
typedef struct like_case { const char *pattern, *subject; bool match; } like_case;

static const like_case LIKES[] = {
    { "ab*", "ab", true }, { "ab*", "abc", true }, { "ab*", "a", false }, { "ab*", "", false }, { "ab*", "xab", false },
    { "*ab", "ab", true }, { "*ab", "xxab", true }, { "*ab", "abx", false }, { "*ab", "b", false },
    { "a*b", "ab", true }, { "a*b", "axxb", true }, { "a*b", "a", false }, { "a*b", "b", false }, { "a*b", "ba", false },
    { "ab*ba", "aba", false }, { "ab*ba", "abba", true }, { "ab*ba", "abxba", true },   /* the ends must not overlap */
    { "*", "", true }, { "*", "anything", true }, { "**", "", true },
    { "", "", true }, { "", "a", false }, { "abc", "abc", true }, { "abc", "abcd", false },
    /* multi-byte: a star matches whole characters, a literal matches its bytes */
    { "\xc3\xa9*", "\xc3\xa9", true }, { "\xc3\xa9*", "\xc3\xa9t\xc3\xa9", true }, { "\xc3\xa9*", "e", false },
    { "*\xc3\xa9", "caf\xc3\xa9", true }, { "*\xc3\xa9", "cafe", false }, { "caf*\xc3\xa9", "caf\xc3\xa9", true },
    { "\xe2\x82\xac*\xe2\x82\xac", "\xe2\x82\xac", false }, { "\xe2\x82\xac*\xe2\x82\xac", "\xe2\x82\xac\xe2\x82\xac", true },
    { "*\xc3\xa9*", "a\xc3\xa9z", true }, { "*\xc3\xa9*", "aez", false },
    { "\\u{1F600}*", "\xf0\x9f\x98\x80!", true }, { "*\\u{1F600}", "\xf0\x9f\x98\x80", true },
    /* escaped stars are literal */
    { "a\\*b", "a*b", true }, { "a\\*b", "axb", false }, { "a\\**", "a*x", true }, { "a\\**", "ax", false },
    { "*\\*", "x*", true }, { "*\\*", "x", false }, { "\\**\\*", "*", false }, { "\\**\\*", "**", true },
    /* the general matcher's shapes, for contrast */
    { "*/.env.*", "~/p/.env.local", true }, { "*/.env.*", "~/p/.env", false }, { "a*b*c", "abc", true }, { "a*b*c", "acb", false },
    /* a middle segment is searched by its rarest byte: false starts before and after it */
    { "*/.env.*", "v/.env/.env.x", true }, { "*/.env.*", "/.envv.env.", false }, { "*/.env.*", "/.env.", true },
    { "*xyz*", "xyxyz", true }, { "*xyz*", "xyxy", false }, { "a*bc*d", "abcbcd", true }, { "a*bc*d", "abd", false },
    { "*vw*", "v", false }, { "*vw*", "wvvw", true }, { "*\xc3\xa9v*", "\xc3\xa9\xc3\xa9v", true },
    /* the plans' special forms (vm/eval_plan.c: lit*, *lit, *lit*) at their edges */
    { "abc*", "ab", false }, { "*abc", "bc", false }, { "*abc*", "abc", true }, { "*abc*", "ab", false },
    { "*a*", "a", true }, { "*a*", "", false }, { "*a", "", false }, { "a*", "a", true },
    { "*0123456789abcdef*", "x0123456789abcdefx", true }, { "*0123456789abcdefg*", "0123456789abcdefg", true },
};

static void test_like_shapes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof LIKES / sizeof *LIKES; i++) {
        const like_case *c = &LIKES[i];
        char pol[256], ctx[256];
        snprintf(pol, sizeof pol, "permit (principal, action, resource) when { context.s like \"%s\" };", c->pattern);
        snprintf(ctx, sizeof ctx, "{\"s\":\"%s\"}", c->subject);
        fixture f;
        start(&f, pol, "[]");
        dw_request req;
        request(&f, "{\"type\":\"User\",\"id\":\"u\"}", ctx, &req);
        dw_response resp;
        assert_int_equal(dw_authorize(f.prog, &f.st, &req, &f.s, &resp), 0);
        assert_int_equal(resp.nerrors, 0);
        if (resp.allow != c->match) fail_msg("\"%s\" like \"%s\": got %d", c->subject, c->pattern, resp.allow);
        stop(&f);
    }
}

static const char *MEMO_POLICIES =
    "permit (principal, action, resource) when { context.a.b == 1 };\n"
    "permit (principal, action, resource) when { context.a.b == 2 || context.a.c == 3 };\n"
    "permit (principal, action, resource) when { context.a.b like \"x*\" };\n"
    "permit (principal, action, resource) when { principal.info.level > 2 };\n"
    "permit (principal, action, resource) when { context.a.b.c == 1 };\n"
    "permit (principal, action, resource) when { context has a && context.a has b && context.a.b == \"xy\" };\n"
    "permit (principal, action, resource) when { principal.info.level == 3 && context.a.c == 3 };\n"
    "permit (principal, action, resource) when { context.a == {\"b\": 1} };\n"
    "permit (principal, action, resource) when { context.a.b like \"*y\" || context.a.b like \"*y*\" };\n"
    "permit (principal, action, resource) when { context.a.b == \"x\" || context.a.b like \"*\" };\n";
#define MEMO_NPOL 10

static const char *MEMO_ENTITIES =
    "[{\"uid\":{\"type\":\"User\",\"id\":\"u\"},\"attrs\":{\"info\":{\"level\":3}},\"parents\":[]},"
    " {\"uid\":{\"type\":\"User\",\"id\":\"w\"},\"attrs\":{\"info\":\"flat\"},\"parents\":[]},"
    " {\"uid\":{\"type\":\"User\",\"id\":\"x\"},\"attrs\":{},\"parents\":[]}]";

static void test_memo_same_answers(void **state)
{
    (void)state;
    fixture f;
    start(&f, MEMO_POLICIES, MEMO_ENTITIES);
    const char *principals[] = { "{\"type\":\"User\",\"id\":\"u\"}", "{\"type\":\"User\",\"id\":\"w\"}",
                                 "{\"type\":\"User\",\"id\":\"x\"}", "{\"type\":\"User\",\"id\":\"nobody\"}" };
    const char *contexts[] = { "{}", "{\"a\":1}", "{\"a\":{\"b\":1}}", "{\"a\":{\"b\":2,\"c\":3}}", "{\"a\":{\"b\":\"xy\"}}",
                               "{\"a\":{\"b\":{\"c\":1}}}", "{\"a\":{\"c\":3}}", "{\"a\":{\"b\":\"x\",\"c\":4}}" };
    dw_value stack[64];
    assert_true(f.prog->max_stack < 64);
    uint32_t errors = 0, trues = 0;
    for (size_t p = 0; p < 4; p++)
        for (size_t c = 0; c < sizeof contexts / sizeof *contexts; c++) {
            dw_request req;
            request(&f, principals[p], contexts[c], &req);
            dw_response resp;
            dw_arena_reset(&f.s);
            assert_int_equal(dw_authorize(f.prog, &f.st, &req, &f.s, &resp), 0);
            uint32_t d = 0, e = 0;
            bool any = false;
            for (uint32_t i = 0; i < MEMO_NPOL; i++) {
                dw_eval_ctx cx = { .prog = f.prog, .store = &f.st, .req = &req, .scratch = &f.s, .stack = stack };
                bool sat = false;
                dw_eval_status st = dw_eval_policy(&cx, i, &sat);
                if (st != DW_EVAL_OK) {
                    errors++;
                    if (e >= resp.nerrors || resp.errors[e].policy != i || resp.errors[e].status != st)
                        fail_msg("policy %u on %s %s: alone %s, in the decision otherwise", i, principals[p], contexts[c],
                                 dw_eval_status_name(st));
                    e++;
                    continue;
                }
                if (!sat) continue;
                trues++;
                any = true;
                if (d >= resp.ndetermining || resp.determining[d] != i)
                    fail_msg("policy %u on %s %s: true alone, not in the decision", i, principals[p], contexts[c]);
                d++;
            }
            assert_int_equal(e, resp.nerrors);
            assert_int_equal(d, resp.ndetermining);
            assert_int_equal(resp.allow, any);
        }
    assert_true(errors > 0 && trues > 0);
    stop(&f);
}

/* ---- the Bool fold: random condition trees against a reference ---- */

enum { R_FALSE, R_TRUE, R_LONG, R_ERR };     /* what an expression gives: a Bool, a non-Bool, an error */
typedef struct leaf { const char *text; int r; } leaf;
static const leaf LEAVES[] = {
    { "context.t", R_TRUE }, { "context.f", R_FALSE }, { "context.a == 1", R_TRUE }, { "context.a == 2", R_FALSE },
    { "context.s like \"x*\"", R_TRUE }, { "context.s like \"z*\"", R_FALSE }, { "context.a", R_LONG },
    { "context.nope == 1", R_ERR }, { "context has s", R_TRUE }, { "context has q", R_FALSE }, { "context.a < 2", R_TRUE },
    { "context.a > 5", R_FALSE }, { "context.s", R_LONG }, { "context.s like \"*y\"", R_TRUE }, { "(context.a + 1 == 2)", R_TRUE },
    { "context.s < 1", R_ERR }, { "principal == User::\"u\"", R_TRUE }, { "principal in User::\"v\"", R_FALSE },
};
#define NLEAVES (sizeof LEAVES / sizeof *LEAVES)

static uint32_t fold_rng = 99;
static uint32_t fold_rnd(uint32_t n)
{
    fold_rng ^= fold_rng << 13; fold_rng ^= fold_rng >> 17; fold_rng ^= fold_rng << 5;
    return fold_rng % n;
}

/* Cedar's rules: && and || short-circuit and need Bools, ! and if's condition need a Bool. */
static int random_tree(char *out, size_t cap, int depth)
{
    uint32_t k = depth <= 0 ? 4 : fold_rnd(5);
    if (k >= 4) {
        const leaf *l = &LEAVES[fold_rnd(NLEAVES)];
        snprintf(out, cap, "%s", l->text);
        return l->r;
    }
    char a[2048], b[2048], c[2048];
    int ra = random_tree(a, sizeof a, depth - 1);
    if (k == 2) {
        snprintf(out, cap, "!(%s)", a);
        return ra == R_ERR || ra == R_LONG ? R_ERR : ra == R_TRUE ? R_FALSE : R_TRUE;
    }
    int rb = random_tree(b, sizeof b, depth - 1);
    if (k == 3) {
        int rc = random_tree(c, sizeof c, depth - 1);
        snprintf(out, cap, "(if %s then %s else %s)", a, b, c);
        return ra == R_ERR || ra == R_LONG ? R_ERR : ra == R_TRUE ? rb : rc;
    }
    bool is_and = k == 0;
    snprintf(out, cap, "(%s %s %s)", a, is_and ? "&&" : "||", b);
    if (ra == R_ERR || ra == R_LONG) return R_ERR;
    if (ra == (is_and ? R_FALSE : R_TRUE)) return ra;
    return rb == R_LONG ? R_ERR : rb;
}

#define NFOLD 40

static void test_bool_fold_random(void **state)
{
    (void)state;
    static char text[NFOLD * 8192];
    for (int set = 0; set < 25; set++) {
        int want[NFOLD];
        size_t tn = 0;
        for (int i = 0; i < NFOLD; i++) {
            char e[8192];
            int r = random_tree(e, sizeof e, 1 + (int)fold_rnd(4));
            want[i] = r == R_LONG ? R_ERR : r;     /* a policy's condition must be a Bool */
            tn += (size_t)snprintf(text + tn, sizeof text - tn, "%s (principal, action, resource) when { %s };\n",
                                   fold_rnd(4) ? "permit" : "forbid", e);
        }
        fixture f;
        start(&f, text, "[]");
        dw_request req;
        request(&f, "{\"type\":\"User\",\"id\":\"u\"}", "{\"a\":1,\"s\":\"xy\",\"t\":true,\"f\":false}", &req);
        dw_response resp;
        assert_int_equal(dw_authorize(f.prog, &f.st, &req, &f.s, &resp), 0);
        dw_value stack[64];
        assert_true(f.prog->max_stack < 64);
        uint32_t e = 0, d = 0;
        bool forbid_true = false;
        for (uint32_t i = 0; i < NFOLD; i++) if (want[i] == R_TRUE && f.prog->policies[i].effect == DW_EFFECT_FORBID) forbid_true = true;
        for (uint32_t i = 0; i < NFOLD; i++) {
            dw_eval_ctx cx = { .prog = f.prog, .store = &f.st, .req = &req, .scratch = &f.s, .stack = stack };
            bool sat = false;
            dw_eval_status st = dw_eval_policy(&cx, i, &sat);
            int alone = st != DW_EVAL_OK ? R_ERR : sat ? R_TRUE : R_FALSE;
            if (alone != want[i]) fail_msg("set %d policy %u alone: %d, want %d", set, i, alone, want[i]);
            bool in_errors = e < resp.nerrors && resp.errors[e].policy == i;
            e += in_errors;
            if (in_errors != (want[i] == R_ERR)) fail_msg("set %d policy %u: error in the decision %d, want %d", set, i, in_errors, want[i]);
            bool determining = want[i] == R_TRUE && (f.prog->policies[i].effect == DW_EFFECT_FORBID) == forbid_true;
            bool in_det = d < resp.ndetermining && resp.determining[d] == i;
            d += in_det;
            if (in_det != determining) fail_msg("set %d policy %u: determining %d, want %d", set, i, in_det, determining);
        }
        assert_int_equal(e, resp.nerrors);
        assert_int_equal(d, resp.ndetermining);
        stop(&f);
    }
}

/* The determining list whatever its length and wherever it lives (vm/authorize.c
 * keeps short lists on the C stack: none or one policy point into the program,
 * two or more are copied to scratch; a long candidate list is in scratch from
 * the start): every true permit, in order, or every true forbid. */
static void test_determining_lists(void **state)
{
    (void)state;
    for (uint32_t npol = 3; npol <= 45; npol += 42) {
        for (uint32_t mask = 0; mask < 16; mask++) {
            static char text[64 * 96];
            size_t len = 0;
            /* policy i is true when context.a == i % 4 is one of mask's bits; policy 1 is a forbid */
            for (uint32_t i = 0; i < npol; i++)
                len += (size_t)snprintf(text + len, sizeof text - len, "%s(principal, action, resource) when { context.b.contains(%u) };\n",
                                        i == 1 ? "forbid" : "permit", i % 4);
            fixture f;
            start(&f, text, "[]");
            char ctx[128];
            snprintf(ctx, sizeof ctx, "{\"b\":[%s%s%s%s 99]}", mask & 1 ? "0," : "", mask & 2 ? "1," : "", mask & 4 ? "2," : "", mask & 8 ? "3," : "");
            dw_request req;
            request(&f, "{\"type\":\"User\",\"id\":\"u\"}", ctx, &req);
            dw_response resp;
            dw_arena_reset(&f.s);
            assert_int_equal(dw_authorize(f.prog, &f.st, &req, &f.s, &resp), 0);
            bool forbid = (mask & 2) != 0;
            uint32_t want[64], nw = 0;
            for (uint32_t i = 0; i < npol; i++)
                if ((mask >> (i % 4) & 1) && (i == 1) == forbid) want[nw++] = i;
            assert_int_equal(resp.ndetermining, nw);
            assert_non_null(resp.determining);
            for (uint32_t k = 0; k < nw; k++) assert_int_equal(resp.determining[k], want[k]);
            assert_int_equal(resp.allow, !forbid && nw > 0);
            assert_int_equal(resp.nerrors, 0);
            stop(&f);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_like_shapes),
        cmocka_unit_test(test_memo_same_answers),
        cmocka_unit_test(test_bool_fold_random),
        cmocka_unit_test(test_determining_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
