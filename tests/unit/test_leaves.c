/* test_leaves.c - the leaf pass before a decision (vm/leaves.h, dogwood.md
 * §15.1 step 3 and §20 D3), through the engine:
 *   * the leaves of a rule whose scope admits the request are evaluated and
 *     its condition reads them;
 *   * a rule the index offers but whose scope excludes the request is
 *     dropped by the leaf pass: its scope runs once, its code never
 *     (policies_evaluated counts only what the decision ran);
 *   * a rule the index does not offer is neither scope-tested nor run;
 *   * the parts API (dw_engine_decide_event) decides over its per-event
 *     store without touching the engine's own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/dogwood.h"
#include "runtime/dogwood_parts.h"
#include "vm/value.h"

/* t1 is filed under principal U::"alice" by the index; its `resource is Q`
 * is left to the scope test.  t2 is filed under principal U::"bob". */
static const char policies[] =
    "@id(\"t1\")\n"
    "forbid (principal == U::\"alice\", action, resource is Q)\n"
    "when temporal { formerly within 1h A::Action::\"write\"::request{} };\n"
    "@id(\"t2\")\n"
    "forbid (principal == U::\"bob\", action, resource)\n"
    "when temporal { formerly within 1h A::Action::\"write\"::request{} };\n"
    "@id(\"p1\")\n"
    "permit (principal, action, resource);\n";

static int64_t ts = 1748854800LL * 1000000000LL;

static dw_engine *open_engine(void)
{
    char path[64], err[256];
    snprintf(path, sizeof path, "/tmp/dw_test_leaves_%d.dw", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(policies, f);
    fclose(f);
    dw_engine_config cfg = { .policy_path = path, .ticks_per_second = 1000000000 };
    dw_engine *e = dw_engine_open(&cfg, err, sizeof err);
    unlink(path);
    if (!e) fail_msg("open: %s", err);
    return e;
}

static dw_verdict decide(dw_engine *e, const char *action, const char *principal, const char *rtype, uint64_t *evaluated)
{
    char line[512];
    int len = snprintf(line, sizeof line,
                       "{\"action\":\"%s\",\"namespace\":\"A\",\"kind\":\"request\",\"principal\":{\"type\":\"U\",\"id\":\"%s\"},"
                       "\"resource\":{\"type\":\"%s\",\"id\":\"x\"},\"input\":{}}", action, principal, rtype);
    dw_engine_stats before, after;
    dw_engine_get_stats(e, &before);
    dw_verdict v;
    assert_int_equal(dw_engine_decide_json(e, line, (size_t)len, (ts += 1000000), &v), 0);
    dw_engine_get_stats(e, &after);
    *evaluated = after.policies_evaluated - before.policies_evaluated;
    return v;
}

static void test_scope_runs_once(void **state)
{
    (void)state;
    dw_engine *e = open_engine();
    uint64_t n;
    dw_verdict v = decide(e, "read", "alice", "Q", &n);      /* no write yet: t1's leaf is false */
    assert_true(v.decided);
    assert_true(v.allow);
    assert_int_equal(n, 2);                                  /* t1 (in scope) and p1 */
    v = decide(e, "write", "carol", "R", &n);                /* only p1 is a candidate */
    assert_true(v.allow);
    assert_int_equal(n, 1);
    v = decide(e, "read", "alice", "Q", &n);                 /* t1's leaf holds now */
    assert_false(v.allow);
    assert_int_equal(v.cause, DW_CAUSE_FORBIDDEN);
    assert_int_equal(v.ndetermining, 1);
    assert_string_equal(dw_engine_rule_name(e, v.determining[0]), "t1");
    v = decide(e, "read", "alice", "R", &n);                 /* t1 offered, scope false: dropped, not run */
    assert_true(v.allow);
    assert_int_equal(n, 1);
    v = decide(e, "read", "bob", "R", &n);                   /* t2 in scope, its leaf holds */
    assert_false(v.allow);
    assert_string_equal(dw_engine_rule_name(e, v.determining[0]), "t2");
    assert_int_equal(n, 2);
    dw_engine_close(e);
}

static void test_parts_api_store(void **state)
{
    (void)state;
    dw_engine *e = open_engine();
    dw_arena a;
    dw_arena_init(&a, 4096);
    const dw_uid *alice = dw_make_uid(&a, "U", 1, "alice", 5), *q = dw_make_uid(&a, "Q", 1, "x", 1);
    const dw_uid *r = dw_make_uid(&a, "R", 1, "x", 1);
    assert_non_null(alice);
    assert_non_null(q);
    assert_non_null(r);
    dw_value empty = { .kind = DW_V_RECORD };
    dw_event_input in = { .atype = "A::Action", .atype_len = 9, .aid = "write", .aid_len = 5, .kind = "request", .kind_len = 7,
                          .ts = ts += 1000000, .principal = alice, .resource = r, .logged = &empty, .context = &empty };
    dw_verdict v;
    assert_int_equal(dw_engine_decide_event(e, &in, &v), 0);
    assert_true(v.allow);                                     /* t1's scope excludes resource R */
    in.aid = "read", in.aid_len = 4, in.ts = ts += 1000000, in.resource = q;
    assert_int_equal(dw_engine_decide_event(e, &in, &v), 0);
    assert_false(v.allow);                                    /* t1: a write within the hour */
    assert_int_equal(v.cause, DW_CAUSE_FORBIDDEN);
    /* the engine's own store is untouched: a JSON decision still decides */
    uint64_t n;
    v = decide(e, "read", "alice", "Q", &n);
    assert_false(v.allow);
    dw_engine_close(e);
    dw_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scope_runs_once),
        cmocka_unit_test(test_parts_api_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
