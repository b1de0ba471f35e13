/* dw_eval_value (vm/vm.h): an expression compiled as a policy's one
 * condition hands back whatever value it leaves (`dwc evaluate`), the same
 * code under dw_eval_code still refuses a non-Bool condition, a failure
 * records the depth its operands sit at, and an extension value keeps its
 * spelling (vm/ext_spelling.h) without it taking part in equality. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "unit_compile.h"
#include "vm/vm.h"
#include "vm/ext_spelling.h"

typedef struct run { dw_program *p; dw_store st; dw_arena a; dw_request req; dw_value stack[64]; dw_eval_ctx cx; } run;

static void start(run *r, const char *cond)
{
    char text[512];
    snprintf(text, sizeof text, "permit (principal, action, resource) when { %s };", cond);
    r->p = unit_compile("eval", text);
    assert_true(r->p->max_stack < 64);
    unit_empty_store(&r->st);
    dw_arena_init(&r->a, 0);
    memset(&r->req, 0, sizeof r->req);
    for (int i = 0; i < 3; i++) {
        r->req.vars[i].kind = DW_V_ENTITY;
        r->req.vars[i].u.uid = dw_make_uid(&r->a, "User", 4, "a", 1);
    }
    r->req.vars[DW_VAR_C].kind = DW_V_RECORD;
    dw_request_bind(&r->req, r->p, &r->st);
    r->cx = (dw_eval_ctx){ .prog = r->p, .store = &r->st, .req = &r->req, .scratch = &r->a, .stack = r->stack };
}

static void stop(run *r)
{
    dw_program_free(r->p);
    dw_store_free(&r->st);
    dw_arena_free(&r->a);
}

static void test_any_value(void **state)
{
    (void)state;
    run r;
    start(&r, "{a: [2, 1], b: \"x\"}");
    dw_value v;
    assert_int_equal(dw_eval_value(&r.cx, r.p->policies[0].entry, &v), DW_EVAL_OK);
    assert_int_equal(v.kind, DW_V_RECORD);
    assert_int_equal(v.n, 2);
    assert_int_equal(v.u.fields[0].v.kind, DW_V_SET);
    assert_int_equal(v.u.fields[0].v.u.elems[0].u.i, 1);
    /* the same program as a policy: a record is no condition */
    bool sat;
    assert_int_equal(dw_eval_policy(&r.cx, 0, &sat), DW_ERR_TYPE);
    stop(&r);
}

static void test_failure_depth(void **state)
{
    (void)state;
    run r;
    start(&r, "[1, 9223372036854775807 + 1]");
    dw_value v;
    assert_int_equal(dw_eval_value(&r.cx, r.p->policies[0].entry, &v), DW_ERR_OVERFLOW);
    /* `+` popped its right operand: the left one at depth - 1, the right at depth */
    uint32_t d = r.cx.err_depth;
    assert_true(d >= 2);
    assert_int_equal(r.stack[d - 1].u.i, INT64_MAX);
    assert_int_equal(r.stack[d].u.i, 1);
    assert_int_equal(r.stack[d - 2].u.i, 1);   /* the set's first element, still below */
    stop(&r);
}

static void test_spelling(void **state)
{
    (void)state;
    run r;
    start(&r, "[decimal(\"1.50\"), decimal(\"1.5\"), datetime(\"2024-01-01\").offset(duration(\"1h\")), duration(\"90m\")]");
    dw_value v;
    assert_int_equal(dw_eval_value(&r.cx, r.p->policies[0].entry, &v), DW_EVAL_OK);
    /* 1.50 and 1.5 are one value: the set keeps one of them */
    assert_int_equal(v.n, 3);
    for (uint32_t i = 0; i < v.n; i++) {
        const dw_value *e = &v.u.elems[i];
        if (e->kind == DW_V_DECIMAL) assert_int_equal(dw_spell_decimal_digits(e->n) == 2 || dw_spell_decimal_digits(e->n) == 1, 1);
        if (e->kind == DW_V_DATETIME) assert_int_equal(e->n, DW_SPELL_COMPUTED);
        if (e->kind == DW_V_DURATION) assert_int_equal(dw_spell_duration_units(e->n), 4);   /* m */
    }
    stop(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_any_value),
        cmocka_unit_test(test_failure_depth),
        cmocka_unit_test(test_spelling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
