/* unit_compile.h - setup shared by the unit suites that start from policy
 * text: parse and compile with no schema, failing the test (diagnostics
 * printed) when either step refuses.  The program keeps nothing of the
 * parse, so one dw_program_free releases it.  Include after <cmocka.h>. */
#ifndef DW_UNIT_COMPILE_H
#define DW_UNIT_COMPILE_H
#include <stdio.h>
#include <string.h>
#include "compiler/compile.h"

static inline dw_program *unit_compile(const char *what, const char *text)
{
    dw_source src = { what, text, strlen(text) };
    dw_diags d;
    dw_diags_init(&d);
    dw_policy_set *ps = dw_parse_policy_set(&src, &d);
    if (!ps || d.nerrors) { dw_diags_print(&d, stderr); fail_msg("%s: refused", what); }
    dw_program *p = dw_compile(ps, NULL, &d);
    if (!p) { dw_diags_print(&d, stderr); fail_msg("%s: does not compile", what); }
    dw_policy_set_free(ps);
    dw_diags_free(&d);
    return p;
}

/* An empty, sealed entity store. */
static inline void unit_empty_store(dw_store *st)
{
    dw_store_init(st);
    assert_int_equal(dw_store_seal(st), 0);
}

#endif
