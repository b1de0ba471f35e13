/* compiler/prove_scope.c: which candidates `dwc check` leaves out of a
 * rule's cover query by their `in` scopes, and the pair-answer memo.  Each
 * rule has a pair that must be dropped and near misses that must not be:
 * the same group, an unscoped candidate, a target of the slot's own type
 * (`in` is also `==` there), a condition testing `in`, and principal and
 * resource of one type.  (End to end: tests/check/scope_near_miss.dw and
 * tests/check/fast_path.sh.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/prove_scope.h"
#include "lang/ast.h"

static const char *SET =
    /* 0 */ "permit (principal in Role::\"r1\", action, resource in Folder::\"f1\") when { context.a };\n"
    /* 1 */ "permit (principal in Role::\"r1\", action, resource in Folder::\"f1\") when { context.b };\n"
    /* 2 */ "permit (principal in Role::\"r2\", action, resource in Folder::\"f1\") when { context.a };\n"
    /* 3 */ "permit (principal in Role::\"r1\", action, resource in Folder::\"f2\");\n"
    /* 4 */ "permit (principal, action, resource);\n"
    /* 5 */ "permit (principal == User::\"u\", action, resource in Folder::\"f1\");\n"
    /* 6 */ "permit (principal in User::\"boss\", action, resource);\n"
    /* 7 */ "permit (principal is User in Role::\"r2\", action, resource is Doc);\n"
    /* 8 */ "forbid (principal in Role::\"r1\", action, resource) when { principal in Role::\"r2\" };\n"
    /* 9 */ "forbid (principal in Role::\"r3\", action, resource);\n"
    /*10 */ "forbid (principal, action, resource) when { resource is Doc in Folder::\"f9\" };\n";

typedef struct fx { dw_policy_set *ps; dw_scope_info *si; dw_diags d; } fx;

static void fx_open(fx *f)
{
    dw_source src = { "scope", SET, strlen(SET) };
    dw_diags_init(&f->d);
    f->ps = dw_parse_policy_set(&src, &f->d);
    assert_non_null(f->ps);
    assert_int_equal(f->d.nerrors, 0);
    assert_int_equal(f->ps->npolicies, 11);
    f->si = dw_scope_info_new(f->ps->policies, f->ps->npolicies);
    assert_non_null(f->si);
}

static void fx_close(fx *f)
{
    dw_scope_info_free(f->si);
    dw_policy_set_free(f->ps);
    dw_diags_free(&f->d);
}

static dw_str S(const char *s) { return (dw_str){ s, strlen(s) }; }

/* the environment (ptype, rtype) over every rule: permits 0-7, forbids 8-10 */
static dw_scope_env *env_of(fx *f, const char *ptype, const char *rtype)
{
    static size_t perm[8], forb[3];
    for (size_t k = 0; k < 8; k++) perm[k] = k;
    for (size_t k = 0; k < 3; k++) forb[k] = 8 + k;
    size_t *rules[2] = { perm, forb };
    size_t n[2] = { 8, 3 };
    dw_scope_env *se = dw_scope_env_new(f->si, S(ptype), S(rtype), rules, n);
    assert_non_null(se);
    return se;
}

static bool drops(dw_scope_env *se, size_t i, size_t j)
{
    uint32_t a, b, c, d;
    dw_scope_env_keys(se, i, &a, &b);
    dw_scope_env_keys(se, j, &c, &d);
    return dw_scope_drops(a, b, c, d);
}

static void test_uses_in(void **state)
{
    (void)state;
    fx f;
    fx_open(&f);
    for (size_t i = 0; i < 11; i++) assert_int_equal(dw_scope_cond_uses_in(&f.ps->policies[i]), i == 8 || i == 10);
    fx_close(&f);
}

static void test_drops(void **state)
{
    (void)state;
    fx f;
    fx_open(&f);
    dw_scope_env *se = env_of(&f, "User", "Doc");
    /* dropped: another Role on the principal, another Folder on the resource */
    assert_true(drops(se, 0, 2));
    assert_true(drops(se, 0, 3));
    assert_true(drops(se, 0, 7));          /* is User in Role::"r2" */
    /* an unscoped rule cannot be covered by scoped ones: they drop */
    assert_true(drops(se, 4, 0));
    assert_true(drops(se, 5, 2));          /* principal == User::"u": no key; r2 drops */
    /* kept: the same group, an unscoped candidate, `in` a target of the slot's own type */
    assert_false(drops(se, 0, 1));
    assert_false(drops(se, 0, 4));
    assert_false(drops(se, 0, 5));         /* == on principal (no key), f1 on the resource */
    assert_false(drops(se, 0, 6));         /* in User::"boss": `in` is also `==` */
    assert_false(drops(se, 6, 4));
    /* counts and the query agree with the pairwise rule */
    size_t out[16];
    for (size_t i = 0; i < 8; i++) {
        size_t n = dw_scope_env_query(se, i, 0, out), want = 0;
        for (size_t j = 0; j < 8; j++) want += !drops(se, i, j);
        assert_int_equal(n, want);
        assert_int_equal(dw_scope_env_count(se, i, 0), n);
        for (size_t k = 0; k < n; k++) {
            assert_false(drops(se, i, out[k]));
            if (k) assert_true(out[k - 1] < out[k]);   /* ascending, each once */
        }
    }
    dw_scope_env_free(se);
    fx_close(&f);
}

static void test_usable(void **state)
{
    (void)state;
    fx f;
    fx_open(&f);
    dw_scope_env *se = env_of(&f, "User", "Doc");
    /* a rule whose condition tests `in` keeps every candidate */
    assert_false(dw_scope_env_usable(se, 8, 0));
    /* a kept forbid tests `in` (rule 8 in Role::"r1", and the unscoped rule 10) */
    assert_false(dw_scope_env_usable(se, 0, 1));
    assert_false(dw_scope_env_usable(se, 4, 1));
    /* permits: nothing tests `in` */
    assert_true(dw_scope_env_usable(se, 0, 0));
    assert_true(dw_scope_env_usable(se, 4, 0));
    /* free scopes: any / is / keyed on both slots, no `in` in the conditions */
    assert_true(dw_scope_env_is_free(se, 0));
    assert_true(dw_scope_env_is_free(se, 4));
    assert_true(dw_scope_env_is_free(se, 7));
    assert_false(dw_scope_env_is_free(se, 5));   /* principal == User::"u" */
    assert_false(dw_scope_env_is_free(se, 6));   /* in User::"boss" */
    assert_false(dw_scope_env_is_free(se, 8));   /* tests `in` */
    dw_scope_env_free(se);
    fx_close(&f);
}

static void test_one_type(void **state)
{
    (void)state;
    fx f;
    fx_open(&f);
    /* principal and resource of one type: one ancestor function for both slots, no keys */
    dw_scope_env *se = env_of(&f, "User", "User");
    for (size_t i = 0; i < 8; i++)
        for (size_t j = 0; j < 8; j++) assert_false(drops(se, i, j));
    assert_false(dw_scope_env_is_free(se, 0));
    assert_true(dw_scope_env_is_free(se, 4));
    dw_scope_env_free(se);
    /* an environment whose principal type is Role: Role::"r1" targets are `==` there */
    se = env_of(&f, "Role", "Doc");
    assert_false(drops(se, 0, 2));
    assert_true(drops(se, 0, 3));          /* still another Folder */
    dw_scope_env_free(se);
    fx_close(&f);
}

static void test_memo(void **state)
{
    (void)state;
    dw_pair_memo *m = dw_pair_memo_new();
    assert_non_null(m);
    assert_int_equal(dw_pair_memo_get(m, 1, 2, 0), -1);
    dw_pair_memo_put(m, 1, 2, 0, 1);
    dw_pair_memo_put(m, 1, 2, 1, 0);
    dw_pair_memo_put(m, 3, 4, 1, -1);      /* unknown is never kept */
    assert_int_equal(dw_pair_memo_get(m, 1, 2, 0), 1);
    assert_int_equal(dw_pair_memo_get(m, 1, 2, 1), 0);
    assert_int_equal(dw_pair_memo_get(m, 2, 1, 1), -1);   /* ordered pairs */
    assert_int_equal(dw_pair_memo_get(m, 3, 4, 1), -1);
    for (unsigned k = 0; k < 5000; k++) dw_pair_memo_put(m, k, k + 7, 1, (int)(k & 1));   /* grows */
    for (unsigned k = 0; k < 5000; k++) assert_int_equal(dw_pair_memo_get(m, k, k + 7, 1), (int)(k & 1));
    assert_int_equal(dw_pair_memo_get(m, 1, 2, 0), 1);
    assert_int_equal(dw_pair_memo_get(m, 1u << 31, 2, 0), -1);
    dw_pair_memo_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uses_in), cmocka_unit_test(test_drops), cmocka_unit_test(test_usable),
        cmocka_unit_test(test_one_type), cmocka_unit_test(test_memo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
