/* ext_check.h - the parse checks tests/unit/test_ext.c (decimal) and
 * tests/unit/test_ext_time.c (datetime, duration) share: an extension's text
 * parsed to its int64 value, or refused with the output left untouched.
 * Include after cmocka.h. */
#ifndef DW_TEST_EXT_CHECK_H
#define DW_TEST_EXT_CHECK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TEXT(lit) (lit), (sizeof(lit) - 1) /* keeps embedded NULs */

typedef bool (*ext_parse_fn)(const char *s, size_t n, int64_t *out);

/* fn("s") parses to expected (untouched: the value *out holds before the call) */
static inline void ext_check_ok(const char *fn, ext_parse_fn parse, int64_t untouched, const char *s, size_t n,
                                int64_t expected, int line)
{
    int64_t v = untouched;
    if (!parse(s, n, &v))
        fail_msg("line %d: %s(\"%.*s\") rejected", line, fn, (int)n, s);
    if (v != expected)
        fail_msg("line %d: %s(\"%.*s\") = %lld, expected %lld", line, fn, (int)n, s, (long long)v, (long long)expected);
}

/* fn("s") is refused, and *out keeps its value */
static inline void ext_check_bad(const char *fn, ext_parse_fn parse, int64_t untouched, const char *s, size_t n, int line)
{
    int64_t v = untouched;
    if (parse(s, n, &v))
        fail_msg("line %d: %s(\"%.*s\") accepted as %lld", line, fn, (int)n, s, (long long)v);
    assert_int_equal(v, untouched);
}

#endif
