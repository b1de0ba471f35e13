/* stdlib/digits.h: dw_i64_text writes exactly what printf's %" PRId64 "
 * writes, for the edges (0, one and two digits, every power of ten and
 * the number below it, INT64_MIN and INT64_MAX) and a million values of
 * every length (seeded). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "stdlib/digits.h"

static void same_as_printf(int64_t v)
{
    char b[DW_I64_TEXT_MAX + 1], want[32];
    size_t n = dw_i64_text(v, b + DW_I64_TEXT_MAX);
    snprintf(want, sizeof want, "%" PRId64, v);
    if (n != strlen(want) || memcmp(b + DW_I64_TEXT_MAX - n, want, n) != 0)
        fail_msg("dw_i64_text(%s) wrote %.*s", want, (int)n, b + DW_I64_TEXT_MAX - n);
}

static void test_edges(void **state)
{
    (void)state;
    same_as_printf(INT64_MIN);
    same_as_printf(INT64_MIN + 1);
    same_as_printf(INT64_MAX);
    int64_t p = 1;
    for (int k = 0; k <= 18; k++) {
        for (int64_t d = -1; d <= 1; d++) {
            same_as_printf(p + d);
            same_as_printf(-(p + d));
        }
        if (k < 18) p *= 10;
    }
}

static void test_every_length(void **state)
{
    (void)state;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 1000000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int64_t v = (int64_t)(x >> (x % 64));
        same_as_printf(x & 1 ? -v : v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_every_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
