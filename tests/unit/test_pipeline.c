/* The shared front end (compiler/pipeline.h): stages in order, a chosen last
 * stage, a stop at the first stage with errors (dw_front_end_run), and
 * stepping on past one (dw_front_end_step, as the linter does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include "compiler/pipeline.h"

/* a plain set; a standard-library macro whose argument leaves a variable
 * free after expansion (§9.1); a syntax error */
static const char plain[] =
    "permit (principal == User::\"alice\", action, resource) when { context.n > 1 };\n";
static const char free_var[] =
    "permit (principal, action == Box::Action::\"http:request\", resource) when temporal {\n"
    "  bind(n, count_within(1h, Box::Action::\"http:request\"::response{ input.host: h }), n > 2)\n"
    "};\n";
static const char bad_syntax[] = "permit (principal, action, resource) when { 1 + };\n";

static dw_front_end fe_of(const dw_source *src)
{
    return (dw_front_end){ .src = src };
}

static void test_stop_after_stage(void **state)
{
    dw_source src = { "plain.cedar", plain, sizeof plain - 1 };
    dw_diags d;
    dw_diags_init(&d);
    dw_front_end fe = fe_of(&src);
    assert_int_equal(dw_front_end_run(&fe, DW_FE_EXPAND, &d, NULL), DW_FE_NONE);
    assert_int_equal(fe.reached, DW_FE_EXPAND);
    assert_non_null(fe.ps);
    assert_non_null(fe.lib);
    assert_null(fe.prog);
    /* and on from there to the end */
    assert_int_equal(dw_front_end_run(&fe, DW_FE_COMPILE, &d, NULL), DW_FE_NONE);
    assert_int_equal(fe.reached, DW_FE_COMPILE);
    assert_non_null(fe.prog);
    assert_int_equal(fe.prog->npolicies, 1);
    assert_int_equal(d.nerrors, 0);
    /* a caller takes what it keeps; the rest is freed */
    dw_program *p = fe.prog;
    fe.prog = NULL;
    dw_front_end_free(&fe);
    assert_null(fe.ps);
    dw_program_free(p);
    dw_diags_free(&d);
}

static void test_stops_at_first_error(void **state)
{
    dw_source src = { "free.dw", free_var, sizeof free_var - 1 };
    dw_diags d;
    dw_diags_init(&d);
    dw_front_end fe = fe_of(&src);
    int rc = 0;
    assert_int_equal(dw_front_end_run(&fe, DW_FE_COMPILE, &d, &rc), DW_FE_STRUCTURE);
    assert_int_equal(rc, 1);
    assert_true(d.nerrors > 0);
    assert_null(fe.prog);
    /* stepping goes on regardless (the linter reports every stage) */
    assert_int_equal(fe.reached, DW_FE_STRUCTURE);
    dw_front_end_step(&fe, &d);
    assert_int_equal(fe.reached, DW_FE_SCHEMA);
    dw_front_end_free(&fe);
    dw_diags_free(&d);

    dw_source bad = { "bad.cedar", bad_syntax, sizeof bad_syntax - 1 };
    dw_diags_init(&d);
    fe = fe_of(&bad);
    assert_int_equal(dw_front_end_run(&fe, DW_FE_COMPILE, &d, &rc), DW_FE_PARSE);
    assert_int_equal(rc, 1);
    assert_null(fe.lib);               /* expansion never ran */
    dw_front_end_free(&fe);
    dw_diags_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stop_after_stage),
        cmocka_unit_test(test_stops_at_first_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
