/* test_parts.c - events given by their parts (dw_engine_decide_event): the
 * event values become Cedar values under the schema without a JSON round
 * trip (runtime/value_conform.h, dogwood.md §15.1 steps 5 and 7):
 *   * a string where the context declares a decimal is parsed, Null is "",
 *     a Null entity attribute is dropped;
 *   * a value that does not conform is a deny whose message names the rule
 *     broken, with no byte offset (there is no JSON text to point into);
 *   * an entity attribute of the wrong type is refused the same way. */
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

static const char schema_text[] =
    "namespace A {\n"
    "  entity U { level: Long, note?: String };\n"
    "  entity Q;\n"
    "  action read appliesTo { principal: U, resource: Q, context: { amount: decimal, tag: String } };\n"
    "}\n";
static const char policy_text[] =
    "permit (principal, action == A::Action::\"read\", resource)\n"
    "when { context.amount.greaterThan(decimal(\"1.5\")) && context.tag == \"\" && principal.level > 2 };\n";

static dw_arena A;
static char spath[64], ppath[64];

static void write_file(char *path, size_t cap, const char *ext, const char *text)
{
    snprintf(path, cap, "/tmp/dw_test_parts_%d.%s", (int)getpid(), ext);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static dw_engine *open_engine(void)
{
    write_file(spath, sizeof spath, "cedarschema", schema_text);
    write_file(ppath, sizeof ppath, "cedar", policy_text);
    dw_engine_config cfg = { .policy_path = ppath, .schema_path = spath, .ticks_per_second = 1 };
    char err[256];
    dw_engine *e = dw_engine_open(&cfg, err, sizeof err);
    unlink(spath);
    unlink(ppath);
    if (!e) fail_msg("open: %s", err);
    return e;
}

static dw_value str(const char *s) { dw_value v = { .kind = DW_V_STRING, .n = (uint32_t)strlen(s) }; v.u.s = s; return v; }
static dw_value null(void) { dw_value v = { .kind = DW_V_NULL }; return v; }

static dw_value record2(const char *k1, dw_value v1, const char *k2, dw_value v2)
{
    dw_field *f = dw_arena_alloc(&A, 2 * sizeof *f);
    assert_non_null(f);
    f[0] = (dw_field){ .key = k1, .klen = (uint32_t)strlen(k1), .v = v1 };
    f[1] = (dw_field){ .key = k2, .klen = (uint32_t)strlen(k2), .v = v2 };
    dw_value r;
    assert_true(dw_make_record(f, 2, &r));
    return r;
}

static dw_verdict decide(dw_engine *e, dw_value ctx, dw_value level, int64_t ts)
{
    const dw_uid *alice = dw_make_uid(&A, "A::U", 4, "alice", 5), *q = dw_make_uid(&A, "A::Q", 4, "x", 1);
    assert_non_null(alice);
    assert_non_null(q);
    dw_value *attrs = dw_arena_alloc(&A, sizeof *attrs);
    assert_non_null(attrs);
    *attrs = record2("level", level, "note", null());
    dw_value *c = dw_arena_alloc(&A, sizeof *c);
    assert_non_null(c);
    *c = ctx;
    dw_event_entity *ent = dw_arena_alloc(&A, sizeof *ent);
    assert_non_null(ent);
    *ent = (dw_event_entity){ .uid = alice, .attrs = attrs };
    dw_event_input in = { .atype = "A::Action", .atype_len = 9, .aid = "read", .aid_len = 4, .kind = "request", .kind_len = 7,
                          .ts = ts, .principal = alice, .resource = q, .context = c, .entities = ent, .nentities = 1 };
    dw_verdict v;
    assert_int_equal(dw_engine_decide_event(e, &in, &v), 0);
    assert_true(v.decided);
    return v;
}

static void test_event_values_conform(void **state)
{
    (void)state;
    dw_arena_init(&A, 4096);
    dw_engine *e = open_engine();
    dw_verdict v = decide(e, record2("amount", str("2.0"), "tag", null()), dw_long(3), 1);
    if (!v.allow) fail_msg("expected allow: %s", v.message);
    v = decide(e, record2("amount", str("1.0"), "tag", null()), dw_long(3), 2);
    assert_false(v.allow);
    assert_int_equal(v.cause, DW_CAUSE_NO_MATCH);

    v = decide(e, record2("amount", str("two"), "tag", null()), dw_long(3), 3);
    assert_false(v.allow);
    assert_int_equal(v.cause, DW_CAUSE_INTERNAL_FAULT);
    assert_string_equal(v.message, "request does not conform to the schema: context: invalid extension value \"two\"");

    v = decide(e, record2("amount", str("2.0"), "tag", dw_long(1)), dw_long(3), 4);
    assert_int_equal(v.cause, DW_CAUSE_INTERNAL_FAULT);
    assert_string_equal(v.message, "request does not conform to the schema: context: type mismatch: the schema expects String");

    v = decide(e, record2("amount", str("2.0"), "tag", null()), str("three"), 5);
    assert_int_equal(v.cause, DW_CAUSE_INTERNAL_FAULT);
    assert_string_equal(v.message, "entities: type mismatch: the schema expects Long");
    dw_engine_close(e);
    dw_arena_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_event_values_conform),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
