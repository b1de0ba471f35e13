/* The one Cedar string-literal writer (stdlib/cedar_quote.h) and the one
 * UTF-8 codec (stdlib/utf8.h): each byte class escaped exactly, the buffer,
 * memory and file forms agreeing, every ASCII byte and multi-byte UTF-8 read
 * back by lang/strlit.c's decoder as what was written, a like-pattern's
 * literal star kept apart from its wildcard; every code point encoded,
 * measured and decoded back, and each kind of invalid sequence refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include <string.h>
#include "lang/strlit.h"
#include "stdlib/cedar_quote.h"
#include "stdlib/utf8.h"

/* quote s[0..n) three ways; all must be exactly want */
static void expect(const char *s, size_t n, const char *want)
{
    dw_buf b = { 0 };
    assert_int_equal(dw_cedar_quote_buf(&b, s, n), 0);
    assert_non_null(b.p);
    assert_int_equal(b.len, strlen(want));
    assert_memory_equal(b.p, want, b.len);
    char *m = malloc(n * DW_CEDAR_ESCAPE_MAX + 1);
    size_t ml = dw_cedar_escape_mem(m, s, n);
    assert_int_equal(ml + 2, b.len);
    assert_memory_equal(m, want + 1, ml);
    char *f = NULL;
    size_t fl = 0;
    FILE *fp = open_memstream(&f, &fl);
    assert_int_equal(dw_cedar_quote_file(fp, s, n), 0);
    fclose(fp);
    assert_int_equal(fl, b.len);
    assert_memory_equal(f, b.p, fl);
    free(f);
    free(m);
    dw_buf_free(&b);
}
#define Q(lit, want) expect(lit, sizeof lit - 1, want)

static void test_each_byte_class(void **st)
{
    Q("", "\"\"");
    Q("plain ~ / * text", "\"plain ~ / * text\"");
    Q("a\"b\\c", "\"a\\\"b\\\\c\"");
    Q("\n\r\t", "\"\\n\\r\\t\"");
    Q("a\0b", "\"a\\0b\"");
    Q("\x01\x1b\x1f\x7f", "\"\\u{1}\\u{1b}\\u{1f}\\u{7f}\"");
    Q("caf\xc3\xa9 \xf0\x9f\x8c\xb2", "\"caf\xc3\xa9 \xf0\x9f\x8c\xb2\"");
}

/* what the writer wrote (quotes stripped), the decoder reads back exactly */
static void round_trip(const char *s, size_t n)
{
    dw_buf b = { 0 };
    assert_int_equal(dw_cedar_quote_buf(&b, s, n), 0);
    dw_arena a;
    dw_arena_init(&a, 0);
    dw_str out;
    dw_strlit_err err;
    assert_true(dw_strlit_decode(&a, b.p + 1, b.len - 2, &out, &err));
    assert_int_equal(out.len, n);
    if (n) assert_memory_equal(out.s, s, n);
    dw_arena_free(&a);
    dw_buf_free(&b);
}

static void test_every_ascii_byte_reads_back(void **st)
{
    char all[128];
    for (int c = 0; c < 128; c++) {
        char one = (char)c;
        round_trip(&one, 1);
        all[c] = (char)c;
    }
    round_trip(all, sizeof all);
    round_trip("\xc3\xa9\xe2\x82\xac\xf4\x8f\xbf\xbf", 9);
}

static void test_like_star_escaped(void **st)
{
    dw_arena a;
    dw_arena_init(&a, 0);
    dw_like_pattern p;
    dw_strlit_err err;
    const char *raw = "a\\*b*c\\\"";    /* literal star, wildcard, quote */
    assert_true(dw_like_decode(&a, raw, strlen(raw), &p, &err));
    char *f = NULL;
    size_t fl = 0;
    FILE *fp = open_memstream(&f, &fl);
    dw_like_print(fp, &p);
    fclose(fp);
    assert_string_equal(f, "\"a\\*b*c\\\"\"");
    free(f);
    dw_arena_free(&a);
}

static void test_utf8_every_code_point(void **st)
{
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF) continue;
        unsigned char o[4];
        size_t n = dw_utf8_put((char *)o, cp);
        assert_int_equal(n, cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4);
        assert_int_equal(dw_utf8_len(o, n), n);
        assert_int_equal(dw_utf8_get(o, n), cp);
        if (n > 1) assert_int_equal(dw_utf8_len(o, n - 1), 0);   /* cut short */
    }
}

static void test_utf8_invalid_refused(void **st)
{
    static const char *bad[] = {
        "\x80", "\xbf", "\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xe0\x9f\xbf",
        "\xed\xa0\x80", "\xed\xbf\xbf", "\xf0\x80\x80\x80", "\xf0\x8f\xbf\xbf",
        "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xff", "\xc3\x28", "\xe2\x82\x28",
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
        assert_int_equal(dw_utf8_len((const unsigned char *)bad[k], strlen(bad[k])), 0);
    /* the column counters' test: exactly 0x80..0xBF continue a sequence */
    for (unsigned c = 0; c < 256; c++) assert_int_equal(dw_utf8_is_cont((unsigned char)c), c >= 0x80 && c < 0xC0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_byte_class),
        cmocka_unit_test(test_every_ascii_byte_reads_back),
        cmocka_unit_test(test_like_star_escaped),
        cmocka_unit_test(test_utf8_every_code_point),
        cmocka_unit_test(test_utf8_invalid_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
