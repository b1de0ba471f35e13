/* test_regex.c - stdlib/regex.c, the built-in providers' matcher
 * (dogwood.md §13.5): POSIX ERE syntax, leftmost-longest spans, UTF-8, and
 * the time bound: a pathological pattern for backtracking matchers, (a*)*b
 * on "a" x 30 (and x 100,000), costs steps linear in the text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <inttypes.h>

#include "stdlib/regex.h"

/* 1 match (span in *s, *e), 0 none, -2 compile error */
static int find(const char *pat, const char *text, size_t *s, size_t *e)
{
    char err[128];
    dw_regex *re = dw_regex_compile(pat, strlen(pat), err, sizeof err);
    if (!re) return -2;
    uint64_t budget = 100000000;
    int rc = dw_regex_search(re, text, strlen(text), 0, s, e, &budget);
    dw_regex_free(re);
    return rc;
}

static void expect_span(const char *pat, const char *text, long ws, long we)
{
    size_t s = 0, e = 0;
    int rc = find(pat, text, &s, &e);
    if (ws < 0) {
        if (rc != 0) fail_msg("/%s/ on \"%s\": expected no match, got %d [%zu,%zu)", pat, text, rc, s, e);
        return;
    }
    if (rc != 1 || (long)s != ws || (long)e != we)
        fail_msg("/%s/ on \"%s\": expected [%ld,%ld), got rc %d [%zu,%zu)", pat, text, ws, we, rc, s, e);
}

static void test_syntax(void **st)
{
    (void)st;
    expect_span("^[A-Z]+$", "HELLO", 0, 5);
    expect_span("^[A-Z]+$", "HeLLO", -1, -1);
    expect_span("[0-9]+", "ab123cd45", 2, 5);
    expect_span("a|ab", "xab", 1, 3);              /* leftmost-longest, not leftmost-first */
    expect_span("(a|ab)(c|bcd)", "abcd", 0, 4);
    expect_span("abcd|c", "abcd", 0, 4);
    expect_span("colou?r", "my color", 3, 8);
    expect_span("a{2,3}", "aaaa", 0, 3);
    expect_span("a{2}", "a", -1, -1);
    expect_span("x{0}y", "y", 0, 1);
    expect_span("[[:digit:]]{3}-[[:digit:]]{4}", "call 555-1234 now", 5, 13);
    expect_span("[^a-z ]+", "abc DEF", 4, 7);
    expect_span("\\.com$", "example.com", 7, 11);
    expect_span("\\d+", "x42", 1, 3);
    expect_span("^$", "", 0, 0);
    expect_span("", "abc", 0, 0);
    expect_span("b*", "abc", 0, 0);
    expect_span("h.llo", "h\xc3\xa9llo", 0, 6);    /* `.` is one scalar value */
    expect_span("[\xc3\xa9]", "caf\xc3\xa9", 3, 5);
    expect_span("(foo|bar)+baz", "xxfoobarfoobaz", 2, 14);
    size_t s, e;
    const char *bad[] = { "(", "a)", "[a-", "*a", "a{3,2}", "a{300}", "[[:nope:]]", "\\", "(((((a{255}){255}){255})))" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (find(bad[i], "a", &s, &e) != -2) fail_msg("/%s/ should not compile", bad[i]);
}

/* Every pattern's steps grow linearly with the text: the pathological
 * backtracking case stays a few microseconds. */
static void test_linear_time(void **st)
{
    (void)st;
    char err[128];
    const char *pat = "(a*)*b";
    dw_regex *re = dw_regex_compile(pat, strlen(pat), err, sizeof err);
    assert_non_null(re);
    static char text[100001];
    memset(text, 'a', 30);
    text[30] = 0;
    size_t s, e;
    uint64_t b30 = UINT64_MAX;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(dw_regex_search(re, text, 30, 0, &s, &e, &b30), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double us30 = (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3;
    uint64_t steps30 = UINT64_MAX - b30;
    memset(text, 'a', 100000);
    text[100000] = 0;
    uint64_t b = UINT64_MAX;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(dw_regex_search(re, text, 100000, 0, &s, &e, &b), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    uint64_t steps = UINT64_MAX - b;
    printf("(a*)*b on 'a'x30: %" PRIu64 " steps, %.1f us; on 'a'x100000: %" PRIu64 " steps, %.1f ms\n",
           steps30, us30, steps, ms);
    /* linear: the steps per character do not grow with the text */
    assert_true(steps / 100000 <= steps30 / 30 + 2);
    /* a budget stops a search: -1, never a partial answer */
    uint64_t small = 1000;
    assert_int_equal(dw_regex_search(re, text, 100000, 0, &s, &e, &small), -1);
    dw_regex_free(re);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syntax),
        cmocka_unit_test(test_linear_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
