/* `e has a.b.c` (DW_E_HAS_PATH) compiles to e once and one HASPATH instruction: the code of a
 * path over a parenthesised path k deep grows linearly in k (it was 3^k when each name copied
 * e); each step is HAS and then reads the name (true, false at the first missing name, a type
 * error on a step that is not a record or entity), the same from memory and from an artifact;
 * the verifier refuses a HASPATH whose key list is out of range or names fewer than two. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/artifact_write.h"
#include "runtime/json_value.h"
#include "vm/artifact.h"
#include "vm/vm.h"
#include "unit_compile.h"

static uint32_t count_op(const dw_program *p, dw_opcode op)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->ncode; i++) n += DW_INS_OP(p->code[i]) == op;
    return n;
}

/* The decision on a request with this context (JSON): 1 allow, 0 deny; *nerr its errors.  The
 * program loaded back from its artifact must answer the same. */
static int decide(dw_program *p, const char *context_json, uint32_t *nerr)
{
    dw_arena a;
    dw_arena_init(&a, 4096);
    char rq[512];
    snprintf(rq, sizeof rq, "{\"p\":{\"type\":\"User\",\"id\":\"u\"},\"a\":{\"type\":\"Action\",\"id\":\"a\"},"
                            "\"r\":{\"type\":\"Doc\",\"id\":\"d\"},\"c\":%s}", context_json);
    dw_source rs = { "req.json", rq, strlen(rq) };
    dw_diags d;
    dw_diags_init(&d);
    const dw_json *j = dw_json_parse(&a, &rs, &d);
    assert_non_null(j);
    dw_diags_free(&d);
    dw_request r;
    dw_buf err = { 0 };
    if (dw_request_from_json(&a, dw_json_get(j, "p"), dw_json_get(j, "a"), dw_json_get(j, "r"), dw_json_get(j, "c"), NULL,
                             false, &r, &err))
        fail_msg("request: %s", err.p);
    dw_buf_free(&err);
    dw_store st;
    unit_empty_store(&st);
    dw_buf b = { 0 };
    char msg[256] = "";
    assert_int_equal(dw_artifact_write(p, 0, &b), 0);
    dw_program *q = dw_artifact_load(b.p, b.len, msg, sizeof msg);
    if (!q) fail_msg("artifact refused: %s", msg);
    dw_response x, y;
    assert_int_equal(dw_authorize(p, &st, &r, &a, &x), 0);
    assert_int_equal(dw_authorize(q, &st, &r, &a, &y), 0);
    assert_int_equal(x.allow, y.allow);
    assert_int_equal(x.nerrors, y.nerrors);
    *nerr = x.nerrors;
    int allow = x.allow;
    dw_program_free(q);
    dw_buf_free(&b);
    dw_store_free(&st);
    dw_arena_free(&a);
    return allow;
}

static void test_steps(void **state)
{
    dw_program *p = unit_compile("steps.cedar", "permit (principal, action, resource) when { context has a.b.c };\n");
    assert_int_equal(count_op(p, DW_OP_HASPATH), 1);
    assert_int_equal(count_op(p, DW_OP_HAS) + count_op(p, DW_OP_GETATTR), 0);
    static const struct { const char *ctx; int allow; uint32_t nerr; } cases[] = {
        { "{\"a\":{\"b\":{\"c\":1}}}", 1, 0 },
        { "{\"a\":{\"b\":{\"d\":1}}}", 0, 0 },
        { "{\"a\":{\"x\":1}}", 0, 0 },
        { "{}", 0, 0 },
        { "{\"a\":{\"b\":3}}", 0, 1 },      /* `3 has c`: a type error */
        { "{\"a\":\"s\"}", 0, 1 },
        { "{\"a\":{\"b\":{\"__entity\":{\"type\":\"User\",\"id\":\"nobody\"}}}}", 0, 0 },   /* absent entity: false */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint32_t nerr = 0;
        if (decide(p, cases[i].ctx, &nerr) != cases[i].allow || nerr != cases[i].nerr)
            fail_msg("context %s: wanted allow %d with %u errors", cases[i].ctx, cases[i].allow, cases[i].nerr);
    }
    dw_program_free(p);
}

static char *nested(int k)
{
    size_t cap = 64 + 24 * (size_t)k;
    char *t = malloc(cap);
    size_t w = (size_t)snprintf(t, cap, "permit (principal, action, resource) when { ");
    for (int i = 1; i < k; i++) w += (size_t)snprintf(t + w, cap - w, "(");
    w += (size_t)snprintf(t + w, cap - w, "context has a.b.c");
    for (int i = 1; i < k; i++) w += (size_t)snprintf(t + w, cap - w, ") has a.b.c");
    snprintf(t + w, cap - w, " };\n");
    return t;
}

static void test_nesting_is_linear(void **state)
{
    uint32_t n[3];
    int ks[3] = { 10, 40, 200 };
    for (int i = 0; i < 3; i++) {
        char *t = nested(ks[i]);
        dw_program *p = unit_compile("nested.cedar", t);
        assert_int_equal(count_op(p, DW_OP_VAR), 1);                 /* context, read once */
        assert_int_equal(count_op(p, DW_OP_HASPATH), (uint32_t)ks[i]);
        n[i] = p->ncode;
        uint32_t nerr = 0;
        assert_int_equal(decide(p, "{\"a\":{\"b\":{\"c\":1}}}", &nerr), 0);   /* `true has a`: a type error */
        assert_int_equal(nerr, 1);
        dw_program_free(p);
        free(t);
    }
    /* one instruction per level, whatever the depth */
    assert_int_equal(n[1] - n[0], 30);
    assert_int_equal(n[2] - n[1], 160);
}

static void test_verifier(void **state)
{
    dw_program *p = unit_compile("verify.cedar", "permit (principal, action, resource) when { context has a.b.c };\n");
    uint32_t at = UINT32_MAX;
    for (uint32_t i = 0; i < p->ncode; i++) if (DW_INS_OP(p->code[i]) == DW_OP_HASPATH) at = i;
    assert_int_not_equal(at, UINT32_MAX);
    uint32_t ins = p->code[at], kl = DW_INS_A(ins);
    assert_int_equal(p->keylists[kl].n, 3);
    for (int bad = 0; bad < 2; bad++) {
        if (bad == 0) p->code[at] = DW_INS(DW_OP_HASPATH, p->nkeylists);
        else p->keylists[kl].n = 1;
        dw_buf b = { 0 };
        char msg[256] = "";
        assert_int_equal(dw_artifact_write(p, 0, &b), 0);
        dw_program *q = dw_artifact_load(b.p, b.len, msg, sizeof msg);
        dw_buf_free(&b);
        if (q) { dw_program_free(q); fail_msg("hostile HASPATH loaded"); }
        if (!strstr(msg, "has-path key list")) fail_msg("refused for \"%s\"", msg);
        p->code[at] = ins;
        p->keylists[kl].n = 3;
    }
    dw_program_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps),
        cmocka_unit_test(test_nesting_is_linear),
        cmocka_unit_test(test_verifier),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
