/* Unit tests for values, the entity store and the decision loop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include "vm/store.h"
#include "vm/vm.h"

static dw_value str(dw_arena *a, const char *s)
{
    dw_value v;
    assert_true(dw_make_string(a, s, strlen(s), &v));
    return v;
}

static dw_value ent(dw_arena *a, const char *t, const char *id)
{
    dw_value v = { .kind = DW_V_ENTITY };
    v.u.uid = dw_make_uid(a, t, strlen(t), id, strlen(id));
    return v;
}

static void test_value_order_and_sets(void **state)
{
    (void)state;
    dw_arena a;
    dw_arena_init(&a, 0);
    dw_value e[5] = { str(&a, "b"), dw_long(3), str(&a, "a"), dw_long(3), dw_bool(true) };
    dw_value s = dw_make_set(e, 5);
    assert_int_equal(s.n, 4);                    /* duplicate 3 removed */
    assert_int_equal(s.u.elems[0].kind, DW_V_BOOL);
    dw_value x = str(&a, "a");
    assert_true(dw_set_contains(&s, &x));
    dw_value y = str(&a, "c");
    assert_false(dw_set_contains(&s, &y));
    /* strings with NUL compare by length too */
    dw_value n1, n2;
    assert_true(dw_make_string(&a, "a\0b", 3, &n1));
    assert_true(dw_make_string(&a, "a", 1, &n2));
    assert_false(dw_value_eq(&n1, &n2));
    /* values of different kinds are never equal */
    dw_value one = dw_long(1), t = dw_bool(true);
    assert_false(dw_value_eq(&one, &t));
    /* entity uid ("a","bc") differs from ("ab","c") */
    dw_value u1 = ent(&a, "a", "bc"), u2 = ent(&a, "ab", "c");
    assert_false(dw_value_eq(&u1, &u2));
    dw_arena_free(&a);
}

static void test_records(void **state)
{
    (void)state;
    dw_arena a;
    dw_arena_init(&a, 0);
    dw_field f[3] = { { .key = "z", .klen = 1, .v = dw_long(1) }, { .key = "a", .klen = 1, .v = dw_long(2) }, { .key = "m", .klen = 1, .v = dw_long(3) } };
    dw_value r;
    assert_true(dw_make_record(f, 3, &r));
    const dw_value *v = dw_record_get(&r, "a", 1);
    assert_non_null(v);
    assert_int_equal(v->u.i, 2);
    assert_null(dw_record_get(&r, "b", 1));
    dw_field dup[2] = { { .key = "k", .klen = 1, .v = dw_long(1) }, { .key = "k", .klen = 1, .v = dw_long(2) } };
    assert_false(dw_make_record(dup, 2, &r));
    dw_arena_free(&a);
}

static void test_store_closure_with_cycle(void **state)
{
    (void)state;
    dw_store s;
    dw_store_init(&s);
    const dw_uid *A = dw_make_uid(&s.arena, "G", 1, "a", 1);
    const dw_uid *B = dw_make_uid(&s.arena, "G", 1, "b", 1);
    const dw_uid *C = dw_make_uid(&s.arena, "G", 1, "c", 1);
    const dw_uid *X = dw_make_uid(&s.arena, "G", 1, "missing", 7);
    bool created;
    dw_entity *ea = dw_store_put(&s, A, &created);
    dw_entity *eb = dw_store_put(&s, B, &created);
    dw_store_put(&s, C, &created);
    /* a -> b -> a (cycle), b -> missing (not in the store) */
    ea->parents = dw_arena_alloc(&s.arena, sizeof *ea->parents);
    ea->parents[0] = B; ea->nparents = 1;
    eb->parents = dw_arena_alloc(&s.arena, 2 * sizeof *eb->parents);
    eb->parents[0] = A; eb->parents[1] = X; eb->nparents = 2;
    assert_int_equal(dw_store_seal(&s), 0);
    assert_true(dw_store_in(&s, A, B));
    assert_true(dw_store_in(&s, B, A));
    assert_true(dw_store_in(&s, A, X));          /* absent ancestors still count */
    assert_false(dw_store_in(&s, A, C));
    assert_true(dw_store_in(&s, C, C));
    assert_false(dw_store_in(&s, X, A));         /* an absent entity has no ancestors */
    dw_store_free(&s);
}

static void test_extfn_arity_and_types(void **state)
{
    (void)state;
    dw_arena a;
    dw_arena_init(&a, 0);
    dw_value out, args[2] = { str(&a, "10.0.0.1/8"), str(&a, "x") };
    assert_int_equal(dw_call_extfn(&a, NULL, DW_FN_IP, args, 1, &out), DW_EVAL_OK);
    assert_int_equal(out.kind, DW_V_IPADDR);
    assert_int_equal(dw_call_extfn(&a, NULL, DW_FN_IP, args, 2, &out), DW_ERR_ARITY);
    assert_int_equal(dw_call_extfn(&a, NULL, DW_FN_DECIMAL, &args[1], 1, &out), DW_ERR_EXTENSION);
    dw_value n = dw_long(1);
    assert_int_equal(dw_call_extfn(&a, NULL, DW_FN_IS_EMPTY, &n, 1, &out), DW_ERR_TYPE);
    dw_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_value_order_and_sets),
        cmocka_unit_test(test_records),
        cmocka_unit_test(test_store_closure_with_cycle),
        cmocka_unit_test(test_extfn_arity_and_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
