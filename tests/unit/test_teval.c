/* test_teval.c - unit tests for vm/teval.c, the reference evaluator of
 * temporal leaves (dogwood.md §7.4, §8, §20 Q2/Q8/Q12/Q17), case by case.
 *
 * IR tables are built by hand with tests/unit/teval_builder.h's
 * constructors; every expectation follows §8.5's relational table.
 * tests/unit/test_teval_naive.c compares the evaluator with a naive
 * transcription of §8.5 on random histories and formulas. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm/teval.h"
#include "runtime/alloc_count.h"
#include "runtime/dogwood.h"
#include "tests/unit/teval_builder.h"

/* ================================================================ predicates (§8.4) */

static void test_pred_identity(void **state)
{
    EV(0, "read", "request", EMPTY());
    assert_true(HOLDS(F_P("read", "request", 0), 0));
    assert_false(HOLDS(F_P("read", "response", 0), 0));
    assert_false(HOLDS(F_P("write", "request", 0), 0));
    /* a different action type */
    uint32_t p = F_P("read", "request", 0);
    B->tfs[p].type_str = S("Other::Action");
    assert_false(HOLDS(p, 0));
}

static void test_pred_bare_is_current_only(void **state)
{
    EV(0, "read", "request", EMPTY());
    EV(1, "write", "request", EMPTY());
    assert_false(HOLDS(F_P("read", "request", 0), 0));   /* history only via past operators */
    assert_true(HOLDS(F_P("write", "request", 0), 0));
}

static void test_pred_fields_const(void **state)
{
    EV(0, "http", "request", REC(1, "input", REC(2, "host", STR("api.github.com"), "port", L(443))));
    assert_true(HOLDS(F_P("http", "request", 1, "input.host", T_C(STR("api.github.com"))), 0));
    assert_true(HOLDS(F_P("http", "request", 2, "input.host", T_C(STR("api.github.com")),
                          "input.port", T_C(L(443))), 0));
    assert_false(HOLDS(F_P("http", "request", 1, "input.host", T_C(STR("evil.com"))), 0));
    assert_false(HOLDS(F_P("http", "request", 1, "input.port", T_C(STR("443"))), 0));   /* Long vs String */
    /* a group path matches the whole object */
    assert_true(HOLDS(F_P("http", "request", 1, "input",
                          T_C(REC(2, "port", L(443), "host", STR("api.github.com")))), 0));
}

static void test_pred_absent_fails_even_wildcard(void **state)
{
    EV(0, "a", "request", REC(1, "input", REC(1, "x", L(1))));
    assert_true(HOLDS(F_P("a", "request", 1, "input.x", T_W()), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "input.y", T_W()), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "input.x.deeper", T_W()), 0));   /* through a non-record */
    assert_false(HOLDS(F_P("a", "request", 1, "output", T_W()), 0));
    /* an unbound variable cannot bind an absent field either */
    assert_false(HOLDS(F_EX(0, F_P("a", "request", 1, "input.y", T_V(0))), 1));
}

static void test_pred_null_present(void **state)
{
    EV(0, "a", "request", REC(1, "x", NUL()));
    assert_true(HOLDS(F_P("a", "request", 1, "x", T_W()), 0));          /* present, Null */
    assert_true(HOLDS(F_P("a", "request", 1, "x", T_C(NUL())), 0));     /* Null ≐ Null */
    assert_false(HOLDS(F_P("a", "request", 1, "x", T_C(STR(""))), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "x", T_C(L(0))), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "x", T_C(BOOLV(false))), 0));
}

static void test_pred_variables(void **state)
{
    EV(0, "a", "request", REC(2, "x", L(1), "y", L(1)));
    EV(1, "a", "request", REC(2, "x", L(1), "y", L(2)));
    /* a variable used twice in one predicate must agree with itself */
    uint32_t same = F_EX(0, F_P("a", "request", 2, "x", T_V(0), "y", T_V(0)));
    assert_false(HOLDS(same, 1));
    assert_true(HOLDS_K(same, 1, 1));
    /* bound by an earlier conjunct: accept iff equal */
    uint32_t corr = F_EX(0, F_AND(F_FOR(10, F_P("a", "request", 1, "y", T_V(0))),
                                  F_P("a", "request", 1, "x", T_V(0))));
    assert_true(HOLDS(corr, 1));   /* event 0's y = 1 = current x */
    uint32_t corr2 = F_EX(0, F_AND(F_P("a", "request", 1, "y", T_V(0)),
                                   F_FOR(10, F_P("a", "request", 1, "x", T_V(0)))));
    assert_false(HOLDS(corr2, 1));   /* current y = 2, no x = 2 */
}

static void test_pred_domain_equality(void **state)
{
    EV(0, "a", "request",
       REC(6, "d", DEC(15000), "i", L(1), "arr", ARR(2, L(1), L(2)), "obj", REC(2, "k", L(1), "m", STR("v")),
           "e", ENT("Box::User", "alice"), "n", NUL()));
    /* decimals by value: 1.5 ≐ 1.50 (both 15000 x10^-4) */
    assert_true(HOLDS(F_P("a", "request", 1, "d", T_C(DEC(15000))), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "d", T_C(L(1))), 0));
    /* Int 1 is not Decimal 1.0 */
    assert_false(HOLDS(F_P("a", "request", 1, "i", T_C(DEC(10000))), 0));
    /* arrays in order */
    assert_true(HOLDS(F_P("a", "request", 1, "arr", T_C(ARR(2, L(1), L(2)))), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "arr", T_C(ARR(2, L(2), L(1)))), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "arr", T_C(ARR(1, L(1)))), 0));
    assert_true(HOLDS(F_P("a", "request", 1, "arr", T_ARR(2, T_C(L(1)), T_C(L(2)))), 0));
    /* objects key- and value-wise, whatever the construction order */
    assert_true(HOLDS(F_P("a", "request", 1, "obj", T_C(REC(2, "m", STR("v"), "k", L(1)))), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "obj", T_C(REC(2, "m", STR("v"), "k", L(2)))), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "obj", T_C(REC(1, "k", L(1)))), 0));
    /* entities by type and id */
    assert_true(HOLDS(F_P("a", "request", 1, "e", T_C(ENT("Box::User", "alice"))), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "e", T_C(ENT("Box::Group", "alice"))), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "e", T_C(ENT("Box::User", "bob"))), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "e", T_C(STR("alice"))), 0));
    /* Null only equals Null */
    assert_false(HOLDS(F_P("a", "request", 1, "n", T_C(ARR(0))), 0));
}

static void test_tval_cmp(void **state)
{
    dw_value a = ARR(2, L(1), NUL()), b = ARR(2, L(1), NUL()), c = ARR(2, NUL(), L(1));
    assert_int_equal(dw_tval_cmp(&a, &b), 0);
    assert_int_not_equal(dw_tval_cmp(&a, &c), 0);
    assert_int_equal(dw_tval_cmp(&a, &c), -dw_tval_cmp(&c, &a));
    dw_value n1 = NUL(), n2 = NUL(), s = STR("");
    assert_true(dw_tval_eq(&n1, &n2));
    assert_false(dw_tval_eq(&n1, &s));
    /* a request Set is read as an array in its stored order */
    dw_value *el = dw_arena_alloc(&B->a, 2 * sizeof *el);
    el[0] = L(2); el[1] = L(1);
    dw_value set = dw_make_set(el, 2), arr = ARR(2, L(1), L(2));
    assert_true(dw_tval_eq(&set, &arr));
    dw_value r1 = REC(1, "k", ARR(1, NUL())), r2 = REC(1, "k", ARR(1, NUL())), r3 = REC(1, "k", ARR(1, L(0)));
    assert_true(dw_tval_eq(&r1, &r2));
    assert_false(dw_tval_eq(&r1, &r3));
}

/* ================================================================ terms (§8.1, §8.2) */

static void test_term_context(void **state)
{
    B->anchor.context = REC(1, "input", REC(2, "host", STR("h"), "n", L(3)));
    EV(0, "a", "request", REC(1, "input", REC(1, "host", STR("h"))));
    EV(1, "b", "request", REC(1, "input", REC(1, "host", STR("other"))));
    assert_true(HOLDS(F_FOR(10, F_P("a", "request", 1, "input.host", T_CTX("input.host"))), 0));
    /* context terms are request-anchored: the current event's, even in the past */
    assert_false(HOLDS(F_FOR(10, F_P("b", "request", 1, "input.host", T_CTX("nope"))), 0));   /* unresolved */
    assert_true(HOLDS(F_AND(F_P("b", "request", 0), F_CMP(DW_TC_OP_EQ, T_CTX("input.n"), T_C(L(3)))), 0));
    assert_true(HOLDS(F_AND(F_P("b", "request", 0),
                            F_CMP(DW_TC_OP_EQ, T_CTX("input"), T_C(REC(2, "n", L(3), "host", STR("h"))))), 0));
    B->anchor.context = (dw_value){ 0 };   /* no context at all */
    assert_false(HOLDS(F_AND(F_P("b", "request", 0), F_CMP(DW_TC_OP_EQ, T_CTX("input.n"), T_C(L(3)))), 0));
}

static void test_term_principal_resource(void **state)
{
    B->anchor.principal = ENT("Box::User", "alice");
    B->anchor.principal_attrs = REC(1, "dept", REC(1, "name", STR("eng")));
    B->anchor.resource = ENT("Box::Doc", "d1");
    B->anchor.resource_attrs = REC(1, "id", STR("custom-id"));   /* an attribute named id wins */
    EV(0, "a", "request", REC(5, "callerPrincipal", ENT("Box::User", "alice"), "pid", STR("alice"),
                              "ptype", STR("Box::User"), "dept", STR("eng"), "rid", STR("custom-id")));
    assert_true(HOLDS(F_P("a", "request", 1, "callerPrincipal", T_P("")), 0));
    assert_true(HOLDS(F_P("a", "request", 1, "pid", T_P("id")), 0));
    assert_true(HOLDS(F_P("a", "request", 1, "ptype", T_P("type")), 0));
    assert_true(HOLDS(F_P("a", "request", 1, "dept", T_P("dept.name")), 0));
    assert_true(HOLDS(F_P("a", "request", 1, "rid", T_R("id")), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "pid", T_P("missing")), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "callerPrincipal", T_R("")), 0));
    /* no principal: `principal` and principal.id are unresolved */
    B->anchor.principal = (dw_value){ .kind = DW_V_BOOL };
    B->anchor.principal_attrs = (dw_value){ .kind = DW_V_RECORD };
    assert_false(HOLDS(F_P("a", "request", 1, "callerPrincipal", T_P("")), 0));
    assert_false(HOLDS(F_P("a", "request", 1, "pid", T_P("id")), 0));
}

static void test_term_array_unresolved(void **state)
{
    EV(0, "a", "request", REC(1, "arr", ARR(2, L(1), L(2))));
    /* [1, x] with x unbound is unresolved, so the pattern fails */
    assert_false(HOLDS(F_EX(0, F_P("a", "request", 1, "arr", T_ARR(2, T_C(L(1)), T_V(0)))), 1));
    /* ...but resolves once x is bound to its left */
    uint32_t f = F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(2))),
                               F_P("a", "request", 1, "arr", T_ARR(2, T_C(L(1)), T_V(0)))));
    assert_true(HOLDS(f, 1));
    /* a wildcard inside an array is unresolved too */
    assert_false(HOLDS(F_P("a", "request", 1, "arr", T_ARR(2, T_C(L(1)), T_W())), 0));
    /* nested arrays */
    EV(1, "b", "request", REC(1, "arr", ARR(2, ARR(1, L(1)), ARR(0))));
    assert_true(HOLDS(F_P("b", "request", 1, "arr", T_ARR(2, T_ARR(1, T_C(L(1))), T_ARR(0))), 0));
}

/* ================================================================ windows (§8.3, Q8, Q17) */

static void test_window_edges(void **state)
{
    EV(100, "a", "request", EMPTY());
    EV(400, "b", "request", EMPTY());
    uint32_t in = F_FOR(300, F_P("a", "request", 0));    /* exactly W back: in */
    uint32_t out = F_FOR(299, F_P("a", "request", 0));   /* W+1 ticks back: out */
    assert_true(HOLDS(in, 0));
    assert_false(HOLDS(out, 0));
}

static void test_window_current_and_zero(void **state)
{
    EV(5, "a", "request", EMPTY());
    EV(7, "a", "request", EMPTY());
    assert_true(HOLDS(F_FOR(0, F_P("a", "request", 0)), 0));   /* the current event is in every window */
    assert_true(HOLDS(F_FOR(3600, F_P("a", "request", 0)), 0));
    /* within 0s sees only events with the same timestamp */
    uint32_t cnt = T_COUNT(F_FOR(0, F_AND(F_P("a", "request", 0), F_TP(0))), 1, 0);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, cnt, T_C(L(1))), 1));
}

static void test_window_repeated_timestamps(void **state)
{
    EV(10, "a", "request", EMPTY());
    EV(10, "a", "request", EMPTY());
    EV(10, "b", "request", EMPTY());
    uint32_t cnt = T_COUNT(F_FOR(0, F_AND(F_P("a", "request", 0), F_TP(0))), 1, 0);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, cnt, T_C(L(2))), 1));
    assert_true(HOLDS(F_PREV(0, F_P("a", "request", 0)), 0));
}

static void test_window_backward_timestamps(void **state)
{
    EV(50, "a", "request", EMPTY());     /* 0 */
    EV(100, "c", "request", EMPTY());    /* 1: later in time than the current event */
    EV(60, "b", "request", EMPTY());     /* 2: current, timestamp went backwards */
    assert_true(HOLDS(F_FOR(10, F_P("a", "request", 0)), 0));    /* 60 - 50 = 10 */
    assert_false(HOLDS(F_FOR(1000, F_P("c", "request", 0)), 0)); /* 60 - 100 < 0: out of every window */
    assert_false(HOLDS(F_PREV(1000, F_P("c", "request", 0)), 0));
    /* no sorting: the count is by index, not by timestamp */
    uint32_t cnt = T_COUNT(F_FOR(1000, F_TP(0)), 1, 0);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, cnt, T_C(L(2))), 1));
}

static void test_window_saturation_and_ticks(void **state)
{
    EV(INT64_MIN, "a", "request", EMPTY());
    EV(INT64_MAX, "b", "request", EMPTY());
    /* INT64_MAX - INT64_MIN saturates to INT64_MAX, inside only an "infinite" window */
    assert_false(HOLDS(F_FOR(86400, F_P("a", "request", 0)), 0));
    assert_true(HOLDS(F_FOR(INT64_MAX, F_P("a", "request", 0)), 0));   /* W·tps saturates too */
    tables_reset();
    B->tps = 1000000000;   /* the runtime: nanoseconds */
    EV(0, "a", "request", EMPTY());
    EV(3600LL * 1000000000, "b", "request", EMPTY());
    assert_true(HOLDS(F_FOR(3600, F_P("a", "request", 0)), 0));
    assert_false(HOLDS(F_FOR(3599, F_P("a", "request", 0)), 0));
    B->evs[1].ts += 1;
    assert_false(HOLDS(F_FOR(3600, F_P("a", "request", 0)), 0));
}

static void test_window_negative(void **state)
{
    EV(0, "a", "request", EMPTY());
    /* rejected at compile time (Q8); if it reaches the evaluator it holds nothing */
    assert_false(HOLDS(F_FOR(-1, F_P("a", "request", 0)), 0));
    assert_false(HOLDS(F_SINCE(-1, F_P("a", "request", 0), F_P("a", "request", 0)), 0));
}

/* ================================================================ operators (§8.5) */

static void test_formerly(void **state)
{
    EV(0, "a", "request", REC(1, "x", L(1)));
    EV(1, "b", "request", EMPTY());
    EV(2, "c", "request", EMPTY());
    assert_true(HOLDS(F_FOR(10, F_P("a", "request", 1, "x", T_C(L(1)))), 0));
    assert_false(HOLDS(F_FOR(10, F_P("a", "request", 1, "x", T_C(L(2)))), 0));
    assert_false(HOLDS(F_FOR(10, F_P("a", "response", 0)), 0));
    /* nesting reaches further back: formerly 1 (formerly 1 a) at ts 2 */
    assert_true(HOLDS(F_FOR(1, F_FOR(1, F_P("a", "request", 0))), 0));
    assert_false(HOLDS(F_FOR(1, F_P("a", "request", 0)), 0));
}

static void test_previous(void **state)
{
    EV(0, "a", "request", EMPTY());
    EV(1, "b", "request", EMPTY());
    EV(5, "c", "request", EMPTY());
    assert_true(HOLDS_K(F_PREV(10, F_P("a", "request", 0)), 0, 2));
    assert_false(HOLDS_K(F_PREV(10, F_P("a", "request", 0)), 0, 1));   /* i = 0: no previous */
    /* index-based: only i-1, whatever its identity */
    assert_false(HOLDS(F_PREV(10, F_P("a", "request", 0)), 0));
    assert_true(HOLDS(F_PREV(10, F_P("b", "request", 0)), 0));
    assert_true(HOLDS(F_PREV(4, F_P("b", "request", 0)), 0));
    assert_false(HOLDS(F_PREV(3, F_P("b", "request", 0)), 0));   /* i-1 out of the window */
    /* previous (previous) */
    assert_true(HOLDS(F_PREV(10, F_PREV(10, F_P("a", "request", 0))), 0));
}

static void test_since_basic(void **state)
{
    /* B since A: some A in the window, B at every event after it */
    EV(0, "a", "request", EMPTY());
    EV(1, "b", "request", EMPTY());
    EV(2, "b", "request", EMPTY());
    uint32_t f = F_SINCE(10, F_P("b", "request", 0), F_P("a", "request", 0));
    assert_true(HOLDS(f, 0));
    EV(3, "c", "request", EMPTY());
    assert_false(HOLDS(f, 0));
    /* the anchor may be the current event (the L condition is vacuous) */
    EV(4, "a", "request", EMPTY());
    assert_true(HOLDS(f, 0));
    /* anchor out of the window */
    assert_true(HOLDS_K(F_SINCE(2, F_P("b", "request", 0), F_P("a", "request", 0)), 0, 3));
    assert_false(HOLDS_K(F_SINCE(1, F_P("b", "request", 0), F_P("a", "request", 0)), 0, 3));
}

static void test_since_negated_left(void **state)
{
    /* !Logout since within 10m Login: an open session */
    uint32_t f = F_SINCE(600, F_NOT(F_P("logout", "request", 0)), F_P("login", "request", 0));
    EV(0, "login", "request", EMPTY());
    EV(10, "work", "request", EMPTY());
    EV(20, "work", "request", EMPTY());
    assert_true(HOLDS(f, 0));
    EV(30, "logout", "request", EMPTY());
    assert_false(HOLDS(f, 0));          /* the logout itself is at k = i */
    EV(40, "work", "request", EMPTY());
    assert_false(HOLDS(f, 0));
    EV(50, "login", "request", EMPTY());
    EV(60, "work", "request", EMPTY());
    assert_true(HOLDS(f, 0));           /* a fresh anchor */
    EV(700, "work", "request", EMPTY());
    assert_false(HOLDS(f, 0));          /* 700 - 50 > 600 */
}

static void test_since_k_outside_window(void **state)
{
    /* k ranges over every index in (j, i], even ones whose timestamps fall outside the window */
    EV(100, "a", "request", EMPTY());
    EV(0, "x", "request", EMPTY());     /* far back in time, but after the anchor */
    EV(100, "b", "request", EMPTY());
    assert_false(HOLDS(F_SINCE(10, F_P("b", "request", 0), F_P("a", "request", 0)), 0));
    assert_true(HOLDS(F_SINCE(10, F_NOT(F_P("c", "request", 0)), F_P("a", "request", 0)), 0));
}

static void test_since_correlated(void **state)
{
    /* exists u. (!logout{user: u} since within 1h login{user: u}) */
    uint32_t f = F_EX(0, F_SINCE(3600, F_NOT(F_P("logout", "request", 1, "user", T_V(0))),
                                 F_P("login", "request", 1, "user", T_V(0))));
    EV(0, "login", "request", REC(1, "user", STR("alice")));
    EV(1, "login", "request", REC(1, "user", STR("bob")));
    EV(2, "logout", "request", REC(1, "user", STR("alice")));
    assert_true(HOLDS(f, 1));           /* bob's session is still open */
    EV(3, "logout", "request", REC(1, "user", STR("bob")));
    assert_false(HOLDS(f, 1));
    /* the anchor's rows flow out: (exists u. ... since ...) correlated with the current user */
    tables_reset();
    uint32_t g = F_EX(0, F_AND(F_P("read", "request", 1, "user", T_V(0)),
                               F_SINCE(3600, F_NOT(F_P("logout", "request", 1, "user", T_V(0))),
                                       F_P("login", "request", 1, "user", T_V(0)))));
    uint32_t h2 = F_EX(0, F_AND(F_SINCE(3600, F_NOT(F_P("logout", "request", 1, "user", T_V(0))),
                                        F_P("login", "request", 1, "user", T_V(0))),
                                F_P("read", "request", 1, "user", T_V(0))));
    EV(0, "login", "request", REC(1, "user", STR("alice")));
    EV(1, "login", "request", REC(1, "user", STR("bob")));
    EV(2, "logout", "request", REC(1, "user", STR("alice")));
    EV(3, "read", "request", REC(1, "user", STR("alice")));
    assert_false(HOLDS(g, 1));
    assert_false(HOLDS(h2, 1));
    B->evs[3].logged = REC(1, "user", STR("bob"));
    assert_true(HOLDS(g, 1));
    assert_true(HOLDS(h2, 1));
}

static void test_tp(void **state)
{
    EV(0, "a", "request", EMPTY());
    EV(1, "a", "request", EMPTY());
    EV(2, "b", "request", EMPTY());
    assert_true(HOLDS(F_EX(0, F_TP(0)), 1));
    assert_true(HOLDS(F_EX(0, F_AND(F_TP(0), F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(2))))), 1));
    assert_false(HOLDS(F_EX(0, F_AND(F_TP(0), F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(1))))), 1));
    /* bound first: tp(t) filters on it */
    assert_true(HOLDS(F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(1))), F_FOR(10, F_TP(0)))), 1));
    assert_false(HOLDS(F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(1))), F_TP(0))), 1));
    assert_false(HOLDS(F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(STR("2"))), F_TP(0))), 1));
    /* the timepoint of an earlier a, at distance exactly one from the current */
    assert_true(HOLDS(F_EX(0, F_AND(F_FOR(10, F_AND(F_P("a", "request", 0), F_TP(0))),
                                     F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(1))))), 1));
}

static void test_binding_equality(void **state)
{
    EV(0, "a", "request", REC(1, "x", L(7)));
    assert_true(HOLDS(F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(5))),
                                     F_CMP(DW_TC_OP_GT, T_V(0), T_C(L(3))))), 1));
    assert_true(HOLDS(F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_C(L(5)), T_V(0)),       /* mirror */
                                     F_CMP(DW_TC_OP_LT, T_V(0), T_C(L(6))))), 1));
    assert_false(HOLDS(F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(5))),
                                      F_CMP(DW_TC_OP_GT, T_V(0), T_C(L(5))))), 1));
    /* x == * binds nothing: the wildcard does not resolve */
    assert_false(HOLDS(F_EX(0, F_CMP(DW_TC_OP_EQ, T_V(0), T_W())), 1));
    /* x == y, both unbound: not exactly one side */
    assert_false(HOLDS(F_EX(0, F_EX(1, F_CMP(DW_TC_OP_EQ, T_V(0), T_V(1)))), 2));
    /* != never binds (Q2) */
    assert_false(HOLDS(F_EX(0, F_CMP(DW_TC_OP_NE, T_V(0), T_C(L(5)))), 1));
    /* binds to an unresolved context value: no row */
    assert_false(HOLDS(F_EX(0, F_CMP(DW_TC_OP_EQ, T_V(0), T_CTX("missing"))), 1));
    /* a bound variable compares: the predicate binds x = 7, then x == 7 is a filter */
    assert_true(HOLDS(F_EX(0, F_AND(F_P("a", "request", 1, "x", T_V(0)),
                                     F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(7))))), 1));
    assert_false(HOLDS(F_EX(0, F_AND(F_P("a", "request", 1, "x", T_V(0)),
                                      F_CMP(DW_TC_OP_EQ, T_C(L(8)), T_V(0)))), 1));
    /* the bound value then drives a later predicate */
    assert_true(HOLDS(F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(7))),
                                     F_P("a", "request", 1, "x", T_V(0)))), 1));
}

static void test_comparisons(void **state)
{
    EV(0, "a", "request", EMPTY());
    uint32_t p = F_P("a", "request", 0);
#define CMPH(op, x, y) HOLDS(F_AND(p, F_CMP(op, T_C(x), T_C(y))), 0)
    assert_true(CMPH(DW_TC_OP_LT, L(1), L(2)));
    assert_false(CMPH(DW_TC_OP_LT, L(2), L(2)));
    assert_true(CMPH(DW_TC_OP_LE, L(2), L(2)));
    assert_true(CMPH(DW_TC_OP_GT, L(3), L(2)));
    assert_false(CMPH(DW_TC_OP_GT, L(2), L(2)));
    assert_true(CMPH(DW_TC_OP_GE, L(-2), L(-2)));
    assert_true(CMPH(DW_TC_OP_LT, L(INT64_MIN), L(INT64_MAX)));
    /* ordering only on Longs: decimals, strings, mixed -> false */
    assert_false(CMPH(DW_TC_OP_LT, DEC(10000), DEC(20000)));
    assert_false(CMPH(DW_TC_OP_GE, DEC(20000), DEC(20000)));
    assert_false(CMPH(DW_TC_OP_LT, STR("a"), STR("b")));
    assert_false(CMPH(DW_TC_OP_LT, L(1), DEC(20000)));
    /* == / != by domain equality (Q2) */
    assert_true(CMPH(DW_TC_OP_EQ, STR("a"), STR("a")));
    assert_true(CMPH(DW_TC_OP_NE, STR("a"), STR("b")));
    assert_false(CMPH(DW_TC_OP_NE, DEC(15000), DEC(15000)));
    assert_true(CMPH(DW_TC_OP_NE, L(1), DEC(10000)));
    assert_true(CMPH(DW_TC_OP_EQ, NUL(), NUL()));
    assert_true(CMPH(DW_TC_OP_NE, NUL(), STR("")));
#undef CMPH
    /* unresolved -> false, for != as well */
    assert_false(HOLDS(F_AND(p, F_CMP(DW_TC_OP_NE, T_CTX("nope"), T_C(L(1)))), 0));
    assert_false(HOLDS(F_AND(p, F_CMP(DW_TC_OP_EQ, T_W(), T_W())), 0));
    assert_false(HOLDS(F_AND(p, F_CMP(DW_TC_OP_NE, T_W(), T_C(L(1)))), 0));
}

static void test_not(void **state)
{
    EV(0, "a", "request", EMPTY());
    EV(1, "b", "request", EMPTY());
    assert_true(HOLDS(F_NOT(F_P("a", "request", 0)), 0));   /* tested at the current event */
    assert_false(HOLDS(F_NOT(F_P("b", "request", 0)), 0));
    assert_false(HOLDS(F_NOT(F_FOR(10, F_P("a", "request", 0))), 0));
    assert_true(HOLDS(F_AND(F_FOR(10, F_P("a", "request", 0)), F_NOT(F_P("a", "request", 0))), 0));
    assert_true(HOLDS(F_NOT(F_NOT(F_P("b", "request", 0))), 0));
    /* anti-join: exists u. (formerly a{u} && !formerly c{u}) */
    tables_reset();
    EV(0, "a", "request", REC(1, "u", L(1)));
    EV(1, "a", "request", REC(1, "u", L(2)));
    EV(2, "c", "request", REC(1, "u", L(1)));
    uint32_t f = F_EX(0, F_AND(F_FOR(10, F_P("a", "request", 1, "u", T_V(0))),
                               F_NOT(F_FOR(10, F_P("c", "request", 1, "u", T_V(0))))));
    assert_true(HOLDS(f, 1));
    EV(3, "c", "request", REC(1, "u", L(2)));
    assert_false(HOLDS(f, 1));
}

static void test_exists_shadowing(void **state)
{
    EV(0, "a", "request", REC(1, "x", L(1)));
    EV(1, "b", "request", REC(1, "x", L(2)));
    /* exists x. (x == 2 && exists x. formerly a{x: x}): the inner x is fresh */
    uint32_t f = F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(2))),
                               F_EX(0, F_FOR(10, F_P("a", "request", 1, "x", T_V(0))))));
    assert_true(HOLDS(f, 1));
    /* and the outer binding is restored after it */
    uint32_t g = F_EX(0, F_AND(F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(2))),
                                     F_EX(0, F_FOR(10, F_P("a", "request", 1, "x", T_V(0))))),
                               F_P("b", "request", 1, "x", T_V(0))));
    assert_true(HOLDS(g, 1));
    /* right-nested, so ρ's own slot (not a row) is read after the inner binder */
    uint32_t r = F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(2))),
                               F_AND(F_EX(0, F_FOR(10, F_P("a", "request", 1, "x", T_V(0)))),
                                     F_P("b", "request", 1, "x", T_V(0)))));
    assert_true(HOLDS(r, 1));
    uint32_t cnt = T_COUNT(F_FOR(10, F_P("a", "request", 1, "x", T_V(0))), 1, 0);
    uint32_t q = F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, T_V(0), T_C(L(2))),
                               F_AND(F_CMP(DW_TC_OP_EQ, cnt, T_C(L(1))),
                                     F_P("b", "request", 1, "x", T_V(0)))));
    assert_true(HOLDS(q, 1));
}

/* ================================================================ aggregates (§8.7) */

/* exists (n: Long). ((count for (t: Timepoint). where (formerly within 1h (P && tp(t)))) == n && n > 3) */
static uint32_t rate_limit(uint32_t pred, int64_t gt)
{
    uint32_t cnt = T_COUNT(F_FOR(3600, F_AND(pred, F_TP(1))), 1, 1);
    return F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, cnt, T_V(0)), F_CMP(DW_TC_OP_GT, T_V(0), T_C(L(gt)))));
}

static void test_count_rate_limit(void **state)
{
    uint32_t f = rate_limit(F_P("call", "request", 0), 3);
    uint32_t exact = T_COUNT(F_FOR(3600, F_AND(F_P("call", "request", 0), F_TP(1))), 1, 1);
    EV(0, "call", "request", EMPTY());
    EV(10, "other", "request", EMPTY());
    EV(20, "call", "request", EMPTY());
    EV(30, "call", "request", EMPTY());
    assert_false(HOLDS(f, 2));          /* 3 calls, the current included */
    EV(40, "call", "request", EMPTY());
    assert_true(HOLDS(f, 2));           /* 4 > 3 */
    EV(3621, "call", "request", EMPTY());
    assert_false(HOLDS(f, 2));          /* window [21, 3621]: 30, 40, 3621 */
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, exact, T_C(L(3))), 2));
    EV(3620, "call", "request", EMPTY());   /* backwards: window [20, 3620], 3621 is in its future */
    assert_true(HOLDS(f, 2));
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, exact, T_C(L(4))), 2));
}

static void test_count_distinct_vs_occurrences(void **state)
{
    EV(0, "get", "request", REC(1, "user", STR("a")));
    EV(1, "get", "request", REC(1, "user", STR("b")));
    EV(2, "get", "request", REC(1, "user", STR("a")));
    uint32_t distinct = T_COUNT(F_FOR(10, F_P("get", "request", 1, "user", T_V(0))), 1, 0);
    uint32_t occ = T_COUNT(F_FOR(10, F_AND(F_P("get", "request", 1, "user", T_V(0)), F_TP(1))), 1, 1);
    uint32_t pairs = T_COUNT(F_FOR(10, F_AND(F_P("get", "request", 1, "user", T_V(0)), F_TP(1))), 2, 0, 1);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, distinct, T_C(L(2))), 2));
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, occ, T_C(L(3))), 2));
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, pairs, T_C(L(3))), 2));
    /* not under a past operator: only the current timepoint (0 or 1) */
    uint32_t bare = T_COUNT(F_AND(F_P("get", "request", 0), F_TP(1)), 1, 1);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, bare, T_C(L(1))), 2));
    uint32_t none = T_COUNT(F_AND(F_P("put", "request", 0), F_TP(1)), 1, 1);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, none, T_C(L(0))), 2));   /* empty rows: count 0 */
    /* a bare aggregate comparison needs no exists */
    assert_true(HOLDS(F_CMP(DW_TC_OP_GT, occ, T_C(L(2))), 2));
    assert_false(HOLDS(F_CMP(DW_TC_OP_GT, T_C(L(2)), distinct), 2));
}

static void test_count_exists_projection(void **state)
{
    /* count for (t). where (formerly (exists u. (get{user: u} && tp(t)))): u is projected away */
    EV(0, "get", "request", REC(1, "user", STR("a")));
    EV(1, "get", "request", REC(1, "user", STR("a")));
    uint32_t c = T_COUNT(F_FOR(10, F_EX(0, F_AND(F_P("get", "request", 1, "user", T_V(0)), F_TP(1)))), 1, 1);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, c, T_C(L(2))), 2));
    uint32_t c2 = T_COUNT(F_EX(1, F_FOR(10, F_AND(F_P("get", "request", 1, "user", T_V(0)), F_TP(1)))), 1, 0);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, c2, T_C(L(1))), 2));
}

static void test_count_shadowing_and_correlation(void **state)
{
    EV(0, "get", "request", REC(1, "user", STR("a")));
    EV(1, "get", "request", REC(1, "user", STR("b")));
    EV(2, "get", "request", REC(1, "user", STR("a")));
    /* the `for` list shadows an outer t: exists t. (tp(t) && count for (t). where formerly tp(t)) == 3) */
    uint32_t shadow = F_EX(1, F_AND(F_TP(1), F_CMP(DW_TC_OP_EQ, T_COUNT(F_FOR(10, F_TP(1)), 1, 1), T_C(L(3)))));
    assert_true(HOLDS(shadow, 2));
    /* other outer bindings flow in: per-current-user count */
    uint32_t cnt = T_COUNT(F_FOR(10, F_AND(F_P("get", "request", 1, "user", T_V(0)), F_TP(1))), 1, 1);
    uint32_t per_user = F_EX(0, F_AND(F_P("get", "request", 1, "user", T_V(0)), F_CMP(DW_TC_OP_EQ, cnt, T_C(L(2)))));
    assert_true(HOLDS(per_user, 2));
    assert_false(HOLDS_K(per_user, 2, 2));   /* at event 1, b has 1 */
}

/* exists (s: Long). ((sum a for (a: Long), (t: Timepoint). where (formerly within 1d (Transfer{input.amount: a} && tp(t)))) == s && s <= 50) */
static void test_sum_worked_example(void **state)
{
    uint32_t sum = T_SUM(1, F_FOR(86400, F_AND(F_P("transfer", "request", 1, "input.amount", T_V(1)), F_TP(2))),
                         2, 1, 2);
    uint32_t f = F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, sum, T_V(0)), F_CMP(DW_TC_OP_LE, T_V(0), T_C(L(50)))));
    for (int k = 0; k < 3; k++) EV(k * 60, "transfer", "request", REC(1, "input", REC(1, "amount", L(20))));
    assert_true(HOLDS_K(f, 3, 1));
    assert_true(HOLDS_K(f, 3, 2));
    assert_false(HOLDS_K(f, 3, 3));     /* the third is itself summed: 60 > 50 */
    /* without the timepoint column equal amounts collapse */
    uint32_t collapsed = T_SUM(1, F_FOR(86400, F_P("transfer", "request", 1, "input.amount", T_V(1))), 1, 1);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, collapsed, T_C(L(20))), 3));
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, sum, T_C(L(60))), 3));
}

static void test_sum_skips_non_integers(void **state)
{
    EV(0, "t", "request", REC(1, "amt", L(5)));
    EV(1, "t", "request", REC(1, "amt", STR("7")));
    EV(2, "t", "request", REC(1, "amt", DEC(70000)));
    EV(3, "t", "request", REC(1, "amt", NUL()));
    EV(4, "t", "request", REC(1, "amt", L(-2)));
    uint32_t sum = T_SUM(0, F_FOR(10, F_AND(F_P("t", "request", 1, "amt", T_V(0)), F_TP(1))), 2, 0, 1);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, sum, T_C(L(3))), 2));
    uint32_t none = T_SUM(0, F_FOR(10, F_AND(F_P("zzz", "request", 1, "amt", T_V(0)), F_TP(1))), 2, 0, 1);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, none, T_C(L(0))), 2));
}

static void test_sum_clamps_once(void **state)
{
    EV(0, "t", "request", REC(1, "amt", L(INT64_MAX)));
    EV(1, "t", "request", REC(1, "amt", L(INT64_MAX)));
    EV(2, "t", "request", REC(1, "amt", L(-INT64_MAX)));
    uint32_t body = F_FOR(10, F_AND(F_P("t", "request", 1, "amt", T_V(0)), F_TP(1)));
    uint32_t sum = T_SUM(0, body, 2, 0, 1);
    /* exact: MAX + MAX - MAX = MAX, no intermediate clamping */
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, sum, T_C(L(INT64_MAX))), 2));
    assert_true(HOLDS_K(F_CMP(DW_TC_OP_EQ, sum, T_C(L(INT64_MAX))), 2, 2));   /* 2·MAX clamps */
    tables_reset();
    EV(0, "t", "request", REC(1, "amt", L(INT64_MIN)));
    EV(1, "t", "request", REC(1, "amt", L(INT64_MIN)));
    EV(2, "t", "request", REC(1, "amt", L(5)));
    body = F_FOR(10, F_AND(F_P("t", "request", 1, "amt", T_V(0)), F_TP(1)));
    sum = T_SUM(0, body, 2, 0, 1);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, sum, T_C(L(INT64_MIN))), 2));
    assert_true(HOLDS(F_CMP(DW_TC_OP_LT, sum, T_C(L(0))), 2));
}

static void test_count_worked_example(void **state)
{
    /* count … n < 3 over ::request events: Allow, Allow, Deny */
    uint32_t cnt = T_COUNT(F_FOR(86400, F_AND(F_P("x", "request", 0), F_TP(1))), 1, 1);
    uint32_t f = F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, cnt, T_V(0)), F_CMP(DW_TC_OP_LT, T_V(0), T_C(L(3)))));
    for (int k = 0; k < 3; k++) EV(k, "x", "request", EMPTY());
    assert_true(HOLDS_K(f, 2, 1));
    assert_true(HOLDS_K(f, 2, 2));
    assert_false(HOLDS_K(f, 2, 3));
}

/* ================================================================ robustness */

static void test_budget(void **state)
{
    for (int k = 0; k < 20; k++) EV(k, "a", "request", EMPTY());
    uint32_t f = F_FOR(100, F_FOR(100, F_P("b", "request", 0)));
    B->budget = 50;
    bool h = true;
    assert_int_equal(eval_n(f, 0, B->nev, NULL, &h), -1);
    assert_int_equal(B->err, DW_TEVAL_EBUDGET);
    assert_false(h);
    B->budget = 0;
    assert_int_equal(eval_n(F_P("a", "request", 0), 0, B->nev, NULL, &h), -1);
    B->budget = 100000;
    assert_int_equal(eval_n(f, 0, B->nev, NULL, &h), 0);
    assert_false(h);
}

static void test_malformed(void **state)
{
    bool h = true;
    /* no events at all */
    assert_int_equal(eval_n(F_P("a", "request", 0), 0, 0, NULL, &h), -1);
    assert_int_equal(B->err, DW_TEVAL_EMALFORMED);
    EV(0, "a", "request", REC(1, "x", L(1)));
    /* formula index out of range */
    assert_int_equal(eval_n(9999, 0, 1, NULL, &h), -1);
    assert_false(h);
    /* a cycle: f = f && f */
    uint32_t c = form((dw_tf){ .kind = DW_TF_AND });
    B->tfs[c].a = B->tfs[c].b = c;
    assert_int_equal(eval_n(c, 0, 1, NULL, &h), -1);
    const uint64_t *m;
    B->t.ntfs = B->ntfs;
    assert_int_equal(dw_teval_masks(&B->t, &B->a, &m), -1);
    tables_reset();
    EV(0, "a", "request", REC(1, "x", L(1)));
    /* slot >= nvars; slot >= 64 */
    assert_int_equal(eval_n(F_EX(3, F_P("a", "request", 1, "x", T_V(3))), 2, 1, NULL, &h), -1);
    assert_int_equal(eval_n(F_EX(70, F_TP(70)), 2, 1, NULL, &h), -1);
    /* unknown kinds, bad string, const and term indices */
    assert_int_equal(eval_n(form((dw_tf){ .kind = 200 }), 0, 1, NULL, &h), -1);
    uint32_t p = F_P("a", "request", 0);
    B->tfs[p].kind_str = 12345;
    assert_int_equal(eval_n(p, 0, 1, NULL, &h), -1);
    uint32_t k = T_C(L(1));
    B->terms[k].a = 9999;
    assert_int_equal(eval_n(F_CMP(DW_TC_OP_EQ, k, k), 0, 1, NULL, &h), -1);
    assert_int_equal(eval_n(F_CMP(DW_TC_OP_EQ, 9999, 0), 0, 1, NULL, &h), -1);
    uint32_t q = F_P("a", "request", 1, "x", T_W());
    B->tfs[q].n = 100000;
    assert_int_equal(eval_n(q, 0, 1, NULL, &h), -1);
    uint32_t arr = T_ARR(0);
    B->terms[arr].n = 0xffffffffu;
    assert_int_equal(eval_n(F_CMP(DW_TC_OP_EQ, arr, arr), 0, 1, NULL, &h), -1);
    uint32_t agg = T_COUNT(F_TP(0), 1, 0);
    B->aggs[B->terms[agg].a].nvars = 0xfffffff0u;
    assert_int_equal(eval_n(F_CMP(DW_TC_OP_EQ, agg, agg), 1, 1, NULL, &h), -1);
    /* a sum whose summed slot is not a `for` slot sums nothing (§9.4 rejects it) */
    tables_reset();
    EV(0, "a", "request", REC(1, "x", L(1)));
    uint32_t s = T_SUM(1, F_AND(F_P("a", "request", 1, "x", T_V(0)), F_CMP(DW_TC_OP_EQ, T_V(1), T_C(L(4)))), 1, 0);
    assert_true(HOLDS(F_CMP(DW_TC_OP_EQ, s, T_C(L(0))), 2));
}

static void test_depth(void **state)
{
    EV(0, "a", "request", EMPTY());
    uint32_t f = F_P("a", "request", 0);
    for (int k = 0; k < 300; k++) f = F_NOT(f);   /* the parser's bound is 256 */
    assert_true(HOLDS(f, 0));
    for (int k = 0; k < 2000; k++) f = F_NOT(f);
    bool h = true;
    assert_int_equal(eval_n(f, 0, 1, NULL, &h), -1);
    assert_int_equal(B->err, DW_TEVAL_EDEPTH);
    /* a DAG of shared subformulas: bounded by the budget, not exponential */
    tables_reset();
    for (int k = 0; k < 40; k++) EV(k, "a", "request", EMPTY());
    uint32_t g = F_P("b", "request", 0);
    for (int k = 0; k < 60; k++) g = F_AND(F_NOT(g), F_NOT(g));
    B->budget = 1000000;
    assert_int_equal(eval_n(F_FOR(100, g), 0, B->nev, NULL, &h), -1);
    assert_int_equal(B->err, DW_TEVAL_EBUDGET);
}

static void test_no_malloc(void **state)
{
    if (!dw_alloc_counting()) skip();
    for (int k = 0; k < 30; k++) EV(k, "t", "request", REC(1, "amt", L(k)));
    uint32_t sum = T_SUM(1, F_FOR(86400, F_AND(F_P("t", "request", 1, "amt", T_V(1)), F_TP(2))), 2, 1, 2);
    uint32_t f = F_EX(0, F_AND(F_CMP(DW_TC_OP_EQ, sum, T_V(0)), F_CMP(DW_TC_OP_GT, T_V(0), T_C(L(10)))));
    bool h;
    dw_arena_free(&B->scratch);
    dw_arena_init(&B->scratch, 1 << 20);
    assert_int_equal(eval_n(f, 3, B->nev, NULL, &h), 0);   /* warms the scratch block */
    uint64_t before = dw_alloc_count();
    assert_int_equal(eval_n(f, 3, B->nev, NULL, &h), 0);
    assert_int_equal(dw_alloc_count(), before);
    assert_true(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
        T(test_pred_identity),
        T(test_pred_bare_is_current_only),
        T(test_pred_fields_const),
        T(test_pred_absent_fails_even_wildcard),
        T(test_pred_null_present),
        T(test_pred_variables),
        T(test_pred_domain_equality),
        T(test_tval_cmp),
        T(test_term_context),
        T(test_term_principal_resource),
        T(test_term_array_unresolved),
        T(test_window_edges),
        T(test_window_current_and_zero),
        T(test_window_repeated_timestamps),
        T(test_window_backward_timestamps),
        T(test_window_saturation_and_ticks),
        T(test_window_negative),
        T(test_formerly),
        T(test_previous),
        T(test_since_basic),
        T(test_since_negated_left),
        T(test_since_k_outside_window),
        T(test_since_correlated),
        T(test_tp),
        T(test_binding_equality),
        T(test_comparisons),
        T(test_not),
        T(test_exists_shadowing),
        T(test_count_rate_limit),
        T(test_count_distinct_vs_occurrences),
        T(test_count_exists_projection),
        T(test_count_shadowing_and_correlation),
        T(test_sum_worked_example),
        T(test_sum_skips_non_integers),
        T(test_sum_clamps_once),
        T(test_count_worked_example),
        T(test_budget),
        T(test_malformed),
        T(test_depth),
        T(test_no_malloc),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
