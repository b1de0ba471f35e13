/* No heap allocation per decision: after the first decision has sized the
 * scratch arena, deciding again (index probes, set and record literals,
 * extension calls, errors) must not call malloc at all.  Uses the counting
 * allocator of runtime/alloc_count.c (skipped under ASan, which owns malloc). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include "compiler/compile.h"
#include "runtime/alloc_count.h"
#include "runtime/dogwood.h"
#include "runtime/json_value.h"
#include "unit_compile.h"

static const char *policies =
    "permit (principal == User::\"alice\", action in [Action::\"view\", Action::\"edit\"], resource)\n"
    "  when { context.path like \"~/project/*\" && [1, 2, context.n].contains(2) && {a: 1}.a == 1 };\n"
    "forbid (principal, action, resource is Photo) when { ip(\"10.0.0.1\").isInRange(ip(\"10.0.0.0/8\")) && context.n > 100 };\n"
    "permit (principal, action == Action::\"view\", resource) when { principal.missing == 1 };\n";

static const char *request_json =
    "{\"principal\":{\"type\":\"User\",\"id\":\"alice\"},\"action\":{\"type\":\"Action\",\"id\":\"view\"},"
    "\"resource\":{\"type\":\"Photo\",\"id\":\"p\"},\"context\":{\"path\":\"~/project/a.c\",\"n\":150}}";

static void test_decisions_do_not_allocate(void **state)
{
    (void)state;
    if (!dw_alloc_counting()) skip();
    dw_program *prog = unit_compile("t.dw", policies);
    dw_store store;
    unit_empty_store(&store);
    dw_diags d;
    dw_diags_init(&d);
    dw_arena a, scratch;
    dw_arena_init(&a, 4096);
    dw_arena_init(&scratch, 64 * 1024);
    dw_source rs = { "req.json", request_json, strlen(request_json) };
    const dw_json *j = dw_json_parse(&a, &rs, &d);
    assert_non_null(j);
    dw_request req;
    dw_buf err = { 0 };
    assert_int_equal(dw_request_from_json(&a, dw_json_get(j, "principal"), dw_json_get(j, "action"),
                                          dw_json_get(j, "resource"), dw_json_get(j, "context"), NULL, false, &req, &err), 0);
    dw_request_bind(&req, prog, &store);
    dw_response resp;
    assert_int_equal(dw_authorize(prog, &store, &req, &scratch, &resp), 0);   /* sizes the arena */
    assert_false(resp.allow);                      /* the forbid holds */
    assert_int_equal(resp.nerrors, 1);             /* principal.missing: entity does not exist */
    uint64_t before = dw_alloc_count();
    for (int i = 0; i < 10000; i++) {
        dw_arena_reset(&scratch);
        assert_int_equal(dw_authorize(prog, &store, &req, &scratch, &resp), 0);
    }
    uint64_t after = dw_alloc_count();
    assert_int_equal(after - before, 0);
    dw_buf_free(&err);
    dw_arena_free(&a);
    dw_arena_free(&scratch);
    dw_store_free(&store);
    dw_program_free(prog);
    dw_diags_free(&d);
}

/* The stateful engine's Box path (dw_engine_decide_json: parse, gate,
 * history append, verdict) on a plain set: the history keeps none of the
 * events (no leaf needs them), so after the first decisions have sized the
 * arenas a decision allocates nothing.  (The event used to be cloned into
 * the history arena before retention dropped it, and the dropped bytes made
 * the arena grow and be rebuilt every 1,024 decisions.) */
static void test_engine_decisions_do_not_allocate(void **state)
{
    (void)state;
    if (!dw_alloc_counting()) skip();
    char path[] = "/tmp/dw-noalloc-XXXXXX.dw";
    int fd = mkstemps(path, 3);
    assert_true(fd >= 0);
    const char *pol = "@id(\"project_read\")\n"
                      "permit (principal, action == Box::Action::\"fs:read\", resource)\n"
                      "when { context.input.path like \"~/project/*\" };\n";
    assert_int_equal(write(fd, pol, strlen(pol)), (ssize_t)strlen(pol));
    close(fd);
    dw_engine_config cfg = { .policy_path = path, .schema_path = "box" };
    char err[256];
    dw_engine *e = dw_engine_open(&cfg, err, sizeof err);
    unlink(path);
    assert_non_null(e);
    const char *ev[] = {
        "{\"action\":\"fs:read\",\"kind\":\"request\",\"input\":{\"path\":\"~/project/a.c\",\"operation\":\"read_content\"}}",
        "{\"action\":\"fs:read\",\"kind\":\"request\",\"input\":{\"path\":\"/etc/passwd\",\"operation\":\"read_content\"}}",
    };
    dw_verdict v;
    for (int i = 0; i < 4000; i++) dw_engine_decide_json(e, ev[i & 1], strlen(ev[i & 1]), DW_TS_NOW, &v);
    uint64_t before = dw_alloc_count();
    for (int i = 0; i < 20000; i++) {
        assert_int_equal(dw_engine_decide_json(e, ev[i & 1], strlen(ev[i & 1]), DW_TS_NOW, &v), 0);
        assert_int_equal(v.allow, !(i & 1));
    }
    assert_int_equal(dw_alloc_count() - before, 0);
    assert_int_equal(dw_engine_history_length(e), 0);
    dw_engine_close(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decisions_do_not_allocate),
        cmocka_unit_test(test_engine_decisions_do_not_allocate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
