/* Condition guards (vm/guard.c) must never change an answer: random policy
 * sets made of every guard shape (and of near misses that must stay
 * unguarded), decided with the index (scope buckets + guards) and without it
 * (every policy), must agree on decision, determining policies and errors,
 * for requests whose guarded fields are matching, non-matching, absent, or
 * not Strings at all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/compile.h"
#include "runtime/json_value.h"
#include "vm/vm.h"
#include "unit_compile.h"

static unsigned rng = 2026;
static unsigned next(unsigned n) { rng = rng * 1103515245u + 12345u; return (rng >> 8) % n; }

static const char *lits[] = { "", "a", "ab", "abc", "abd", "b", "x" };
#define NLITS (sizeof lits / sizeof *lits)

/* One condition; shapes 0-7 are guardable, 8-11 must not be (or only partly).  Shapes 5 and 11
 * come with and without a `has` path block (`context has r.g`, one HASPATH). */
static void condition(char *out, size_t cap)
{
    const char *l1 = lits[next(NLITS)], *l2 = lits[next(NLITS)];
    bool path = next(2);
    switch (next(12)) {
    case 0: snprintf(out, cap, "context.f like \"%s*\"", l1); break;
    case 1: snprintf(out, cap, "context.f == \"%s\"", l1); break;
    case 2: snprintf(out, cap, "context.f == \"%s\" || context.f like \"%s*\"", l1, l2); break;
    case 3: snprintf(out, cap, "[\"%s\", \"%s\", 1].contains(context.f)", l1, l2); break;
    case 4: snprintf(out, cap, "context has f && context.f like \"%s*z\"", l1); break;
    case 5: snprintf(out, cap, "%scontext.r.g like \"%s*\"", path ? "context has r.g && " : "", l1); break;
    case 6: snprintf(out, cap, "context.f like \"%s*\" && context.n > 1", l1); break;
    case 7: snprintf(out, cap, "context.f like \"%s\" && context.n + 9223372036854775807 > 0", l1); break;
    case 8: snprintf(out, cap, "context.f like \"*%s\"", l1); break;
    case 9: snprintf(out, cap, "context.n > 1 && context.f like \"%s*\"", l1); break;
    case 10: snprintf(out, cap, "context.f like \"%s*\" || context.n > 2", l1); break;
    default: snprintf(out, cap, "context has %s && context.f == \"%s\"", path ? "r.g" : "r", l1); break;
    }
}

static void request(char *out, size_t cap)
{
    static const char *fs[] = { NULL, "\"\"", "\"a\"", "\"ab\"", "\"abc\"", "\"abcz\"", "\"abd\"", "\"b\"", "\"x\"",
                                "\"az\"", "1", "true", "[\"a\"]" };
    static const char *ns[] = { NULL, "0", "5", "9223372036854775807" };
    static const char *rs[] = { NULL, "{}", "{\"g\":\"abc\"}", "{\"g\":\"b\"}", "{\"g\":2}", "\"s\"" };
    const char *f = fs[next(sizeof fs / sizeof *fs)], *n = ns[next(4)], *r = rs[next(6)];
    char ctx[256] = "";
    size_t w = 0;
    if (f) w += (size_t)snprintf(ctx + w, sizeof ctx - w, "%s\"f\":%s", w ? "," : "", f);
    if (n) w += (size_t)snprintf(ctx + w, sizeof ctx - w, "%s\"n\":%s", w ? "," : "", n);
    if (r) w += (size_t)snprintf(ctx + w, sizeof ctx - w, "%s\"r\":%s", w ? "," : "", r);
    snprintf(out, cap, "{\"principal\":{\"type\":\"User\",\"id\":\"u\"},\"action\":{\"type\":\"Action\",\"id\":\"a\"},"
                       "\"resource\":{\"type\":\"Doc\",\"id\":\"d\"},\"context\":{%s}}", ctx);
}

static bool same_ids(const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb)
{
    if (na != nb) return false;
    for (uint32_t i = 0; i < na; i++) if (a[i] != b[i]) return false;
    return true;
}

static void test_guards_never_change_answers(void **state)
{
    (void)state;
    uint32_t guarded_buckets = 0, sets = 0, decisions = 0, pruned = 0;
    for (int round = 0; round < 60; round++) {
        char *text = malloc(1 << 16);
        size_t w = 0;
        int np = 12 + (int)next(40);
        for (int i = 0; i < np; i++) {
            char cond[256];
            condition(cond, sizeof cond);
            w += (size_t)snprintf(text + w, (1 << 16) - w, "%s (principal, action == Action::\"a\", resource) when { %s };\n",
                                  next(5) ? "permit" : "forbid", cond);
        }
        dw_program *prog = unit_compile("guard.dw", text);
        for (uint32_t b = 0; b < prog->index.nbuckets; b++) guarded_buckets += prog->index.buckets[b].guard != NULL;
        sets++;
        dw_store store;
        unit_empty_store(&store);
        dw_arena a, s1, s2;
        dw_arena_init(&a, 4096);
        dw_arena_init(&s1, 64 * 1024);
        dw_arena_init(&s2, 64 * 1024);
        dw_diags d;
        dw_diags_init(&d);
        for (int k = 0; k < 200; k++) {
            char rq[512];
            request(rq, sizeof rq);
            dw_source rs = { "req.json", rq, strlen(rq) };
            const dw_json *j = dw_json_parse(&a, &rs, &d);
            assert_non_null(j);
            dw_request req;
            dw_buf err = { 0 };
            assert_int_equal(dw_request_from_json(&a, dw_json_get(j, "principal"), dw_json_get(j, "action"),
                                                  dw_json_get(j, "resource"), dw_json_get(j, "context"), NULL, false,
                                                  &req, &err), 0);
            dw_buf_free(&err);
            dw_request_bind(&req, prog, &store);
            dw_response with, without;
            dw_arena_reset(&s1);
            dw_arena_reset(&s2);
            assert_int_equal(dw_authorize(prog, &store, &req, &s1, &with), 0);
            assert_int_equal(dw_authorize_all(prog, &store, &req, &s2, &without), 0);
            if (with.allow != without.allow || !same_ids(with.determining, with.ndetermining, without.determining, without.ndetermining))
                fail_msg("decision differs on %s with\n%s", rq, text);
            assert_int_equal(with.nerrors, without.nerrors);
            for (uint32_t e = 0; e < with.nerrors; e++) {
                assert_int_equal(with.errors[e].policy, without.errors[e].policy);
                assert_int_equal(with.errors[e].status, without.errors[e].status);
            }
            pruned += without.evaluated - with.evaluated;
            decisions++;
        }
        dw_arena_free(&a);
        dw_arena_free(&s1);
        dw_arena_free(&s2);
        dw_store_free(&store);
        dw_program_free(prog);
        dw_diags_free(&d);
        free(text);
    }
    print_message("guards: %u sets, %u guarded buckets, %u decisions agree, %u policy runs pruned\n",
                  sets, guarded_buckets, decisions, pruned);
    assert_true(guarded_buckets > sets / 2);   /* the shapes above do get guards */
    assert_true(pruned > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_guards_never_change_answers) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
