/* The one JSON string writer (stdlib/json_escape.h): each byte class
 * escaped exactly (quote, backslash, the short forms, other control bytes,
 * NUL in the middle, DEL, valid UTF-8 of every length, each kind of invalid
 * UTF-8 replaced or refused), a failing sink reported, and every byte value
 * read back by the JSON reader as what was written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include <string.h>
#include "lang/json.h"
#include "stdlib/json_escape.h"

/* escape s[0..n) in mode; expect rc and, when rc is 0, exactly want */
static void expect(const char *s, size_t n, dw_json_utf8 mode, int rc, const char *want)
{
    dw_buf b = { 0 };
    assert_int_equal(dw_json_escape_buf(&b, s, n, mode), rc);
    if (rc == 0) {
        assert_non_null(b.p);
        assert_int_equal(b.len, strlen(want));
        assert_memory_equal(b.p, want, b.len);
    }
    dw_buf_free(&b);
}
#define BOTH(lit, want) do { expect(lit, sizeof lit - 1, DW_JSON_REPLACE, 0, want); \
                             expect(lit, sizeof lit - 1, DW_JSON_EXACT, 0, want); } while (0)

static void test_ascii_and_specials(void **st)
{
    BOTH("", "\"\"");
    BOTH("plain text ~ /", "\"plain text ~ /\"");
    BOTH("a\"b\\c", "\"a\\\"b\\\\c\"");
    BOTH("\n\r\t", "\"\\n\\r\\t\"");
    BOTH("\x01\x08\x0c\x1f", "\"\\u0001\\u0008\\u000c\\u001f\"");
    BOTH("\x7f", "\"\\u007f\"");
    BOTH(" ", "\" \"");
}

static void test_nul_does_not_end_the_string(void **st)
{
    BOTH("a\0b", "\"a\\u0000b\"");
    BOTH("\0", "\"\\u0000\"");
    BOTH("x\0", "\"x\\u0000\"");
}

static void test_valid_utf8_passes(void **st)
{
    BOTH("\xc3\xa9", "\"\xc3\xa9\"");                           /* 2 bytes */
    BOTH("\xe2\x82\xac", "\"\xe2\x82\xac\"");                   /* 3 bytes */
    BOTH("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");           /* 4 bytes */
    BOTH("\xef\xbf\xbd", "\"\xef\xbf\xbd\"");                   /* U+FFFD itself */
    BOTH("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");           /* U+10FFFF */
}

#define FFFD "\xef\xbf\xbd"
static void test_invalid_utf8_replaced_or_refused(void **st)
{
    static const struct { const char *in; size_t n; const char *rep; } c[] = {
        { "\x80", 1, "\"" FFFD "\"" },                          /* stray continuation */
        { "a\xbf" "b", 3, "\"a" FFFD "b\"" },
        { "\xc0\xaf", 2, "\"" FFFD FFFD "\"" },                 /* overlong */
        { "\xc1\x81", 2, "\"" FFFD FFFD "\"" },
        { "\xe0\x80\xaf", 3, "\"" FFFD FFFD FFFD "\"" },
        { "\xed\xa0\x80", 3, "\"" FFFD FFFD FFFD "\"" },        /* surrogate */
        { "\xf4\x90\x80\x80", 4, "\"" FFFD FFFD FFFD FFFD "\"" }, /* above U+10FFFF */
        { "\xf5", 1, "\"" FFFD "\"" },
        { "\xff", 1, "\"" FFFD "\"" },
        { "\xe2\x82", 2, "\"" FFFD FFFD "\"" },                 /* cut short */
        { "\xe2\x82" "a", 3, "\"" FFFD FFFD "a\"" },
        { "\xc3\xa9\xc3", 3, "\"\xc3\xa9" FFFD "\"" },
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        expect(c[i].in, c[i].n, DW_JSON_REPLACE, 0, c[i].rep);
        expect(c[i].in, c[i].n, DW_JSON_EXACT, -2, NULL);
    }
}

static int failing_sink(void *ctx, const char *p, size_t n)
{
    int *left = ctx;
    return (*left)-- <= 0;
}

static void test_sink_failure_reported(void **st)
{
    for (int k = 0; k < 6; k++) {
        int left = k;
        assert_int_equal(dw_json_escape(failing_sink, &left, "a\nb\"c", 5, DW_JSON_REPLACE), -1);
    }
}

/* every byte value alone and between letters: what the reader gets back is
 * the byte (ASCII) or U+FFFD (a lone byte >= 0x80 is never UTF-8) */
static void test_every_byte_reads_back(void **st)
{
    for (int c = 0; c < 256; c++) {
        char in[3] = { 'a', (char)c, 'b' };
        dw_buf b = { 0 };
        assert_int_equal(dw_json_escape_buf(&b, in, 3, DW_JSON_REPLACE), 0);
        dw_arena a;
        dw_arena_init(&a, 4096);
        dw_diags d;
        dw_diags_init(&d);
        dw_source src = { "t.json", b.p, b.len };
        const dw_json *j = dw_json_parse(&a, &src, &d);
        assert_non_null(j);
        assert_int_equal(j->kind, DW_JSON_STRING);
        if (c < 0x80) {
            assert_int_equal(j->u.str.len, 3);
            assert_memory_equal(j->u.str.s, in, 3);
        } else {
            assert_int_equal(j->u.str.len, 5);
            assert_memory_equal(j->u.str.s, "a" FFFD "b", 5);
        }
        dw_diags_free(&d);
        dw_arena_free(&a);
        dw_buf_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ascii_and_specials),
        cmocka_unit_test(test_nul_does_not_end_the_string),
        cmocka_unit_test(test_valid_utf8_passes),
        cmocka_unit_test(test_invalid_utf8_replaced_or_refused),
        cmocka_unit_test(test_sink_failure_reported),
        cmocka_unit_test(test_every_byte_reads_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
