/* test_work_bound.c - the per-decision work bound of temporal evaluation
 * (issue 13 row 14; runtime/dogwood.h, temporal_work_bound).
 *
 * A nested `formerly` joined on a variable over 20,000 events used to take
 * O(n^2) steps (seconds of the engine's lock, so every other client of dwd
 * stalled) and then deny.  Now:
 *   * that join is decided, exactly, well within the default bound (the
 *     evaluator's join index, vm/tjoin.h);
 *   * a join the index cannot answer stops at the bound: a deny with cause
 *     internal_fault naming the bound, after a bounded number of steps;
 *   * the bound is the engine config's, and one bound covers every leaf of a
 *     decision;
 *   * small cases under the bound decide exactly as before. */
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
#include "tests/bench/join_policies.h"

static const char indexed_policy[] = DW_JOIN_INDEXED;
static const char unindexed_policy[] = DW_JOIN_UNINDEXED;
/* the unindexed leaf twice: each alone fits a bound the two together exceed */
static const char two_leaves_policy[] =
    DW_JOIN_UNINDEXED
    "@id(\"again\")\n"
    "forbid (principal, action == Box::Action::\"fs:read\", resource)\n"
    "when temporal {\n"
    "  exists (q: String). formerly within 2h (Box::Action::\"fs:write\"::response{ input.path: q } &&\n"
    "    formerly within 2h (Box::Action::\"fs:delete\"::response{ input.path: q } &&\n"
    "                        !Box::Action::\"fs:move\"::response{ input.path: q }))\n};\n";

static char path[64];
static int64_t ts;

static dw_engine *open_engine(const char *text, uint64_t bound)
{
    snprintf(path, sizeof path, "/tmp/dw_work_bound_%d.dw", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    dw_engine_config cfg = { .policy_path = path, .schema_path = "box", .ticks_per_second = 1000000000,
                             .temporal_work_bound = bound };
    char err[256];
    dw_engine *e = dw_engine_open(&cfg, err, sizeof err);
    if (!e) fail_msg("open: %s", err);
    unlink(path);
    ts = 1748854800LL * 1000000000LL;
    return e;
}

static void record(dw_engine *e, const char *action, const char *file)
{
    char line[512], err[256];
    const char *op = !strcmp(action, "fs:write") ? "write_content" : !strcmp(action, "fs:delete") ? "remove_file" : "rename";
    int len = snprintf(line, sizeof line,
                       "{\"action\":\"%s\",\"kind\":\"response\",\"input\":{\"path\":\"%s\",\"operation\":\"%s\"},\"output\":{}}",
                       action, file, op);
    if (dw_engine_record_json(e, line, (size_t)len, (ts += 1000000), err, sizeof err)) fail_msg("record: %s", err);
}

/* n writes of distinct paths ~/f0 .. ~/f<n-1> */
static void writes(dw_engine *e, int from, int n)
{
    char file[32];
    for (int k = from; k < from + n; k++) {
        snprintf(file, sizeof file, "~/f%d", k);
        record(e, "fs:write", file);
    }
}

static dw_verdict decide(dw_engine *e)
{
    static const char req[] = "{\"action\":\"fs:read\",\"kind\":\"request\",\"input\":{\"path\":\"~/a\",\"operation\":\"read_content\"}}";
    dw_verdict v;
    assert_int_equal(dw_engine_decide_json(e, req, strlen(req), (ts += 1000000), &v), 0);
    assert_true(v.decided);
    return v;
}

/* The verdict of one fs:read after n writes, on a fresh engine. */
static dw_verdict after_writes(const char *policy, uint64_t bound, int n)
{
    dw_engine *e = open_engine(policy, bound);
    writes(e, 0, n);
    dw_verdict v = decide(e);
    dw_engine_close(e);
    return v;
}

static void assert_bound_deny(const dw_verdict *v, uint64_t bound)
{
    char want[96];
    snprintf(want, sizeof want, "work bound of %llu steps", (unsigned long long)bound);
    assert_false(v->allow);
    assert_int_equal(v->cause, DW_CAUSE_INTERNAL_FAULT);
    if (!strstr(v->message, want)) fail_msg("message \"%s\" does not name the bound", v->message);
}

static void test_join_decides_within_default_bound(void **state)
{
    dw_engine *e = open_engine(indexed_policy, 0);
    writes(e, 0, 10000);
    record(e, "fs:delete", "~/f15000");
    writes(e, 10000, 10000);
    dw_verdict v = decide(e);   /* w "~/f15000" after its delete: forbidden */
    assert_false(v.allow);
    assert_int_equal(v.cause, DW_CAUSE_FORBIDDEN);
    dw_engine_close(e);

    e = open_engine(indexed_policy, 0);
    record(e, "fs:delete", "~/f15000");
    writes(e, 0, 20000);
    record(e, "fs:delete", "~/f5");   /* after its write: not a rewrite */
    v = decide(e);
    assert_false(v.allow);        /* f15000 again */
    dw_engine_close(e);

    e = open_engine(indexed_policy, 0);
    writes(e, 0, 20000);
    record(e, "fs:delete", "~/f5");
    v = decide(e);
    assert_true(v.allow);
    assert_int_equal(v.cause, DW_CAUSE_PERMITTED);
    dw_engine_close(e);
}

static void test_unindexed_join_stops_at_the_bound(void **state)
{
    dw_verdict v = after_writes(unindexed_policy, 0, 20000);
    assert_bound_deny(&v, DW_TEMPORAL_WORK_BOUND_DEFAULT);
    /* the config's bound, not the default */
    v = after_writes(unindexed_policy, 100000, 300);
    assert_bound_deny(&v, 100000);
    dw_engine *e = open_engine(unindexed_policy, 2000000);
    writes(e, 0, 300);
    record(e, "fs:delete", "~/f7");
    record(e, "fs:write", "~/f7");
    v = decide(e);
    assert_false(v.allow);
    assert_int_equal(v.cause, DW_CAUSE_FORBIDDEN);
    dw_engine_close(e);
}

static void test_bound_covers_the_decision(void **state)
{
    /* 300 writes: one leaf takes about 140,000 steps, the two together
     * about 280,000 */
    assert_true(after_writes(unindexed_policy, 200000, 300).allow);
    dw_verdict v = after_writes(two_leaves_policy, 200000, 300);
    assert_bound_deny(&v, 200000);
}

/* Under the bound nothing changed: each verdict of a short scripted run. */
static void test_small_cases_unchanged(void **state)
{
    static const char *policies[] = { indexed_policy, unindexed_policy };
    for (int k = 0; k < 2; k++) {
        dw_engine *e = open_engine(policies[k], 0);
        dw_verdict v = decide(e);
        assert_true(v.allow);
        record(e, "fs:write", "~/a");
        record(e, "fs:delete", "~/b");
        assert_true(decide(e).allow);
        record(e, "fs:write", "~/b");   /* b: deleted, then written */
        v = decide(e);
        assert_false(v.allow);
        assert_int_equal(v.cause, DW_CAUSE_FORBIDDEN);
        dw_engine_close(e);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_join_decides_within_default_bound),
        cmocka_unit_test(test_unindexed_join_stops_at_the_bound),
        cmocka_unit_test(test_bound_covers_the_decision),
        cmocka_unit_test(test_small_cases_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
