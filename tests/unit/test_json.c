/* The JSON reader's string scanner (lang/json_scan.h) reads 16 (SSE2) or 8 bytes at a
 * time; these cases put every kind of byte it must stop at (the closing
 * quote, a backslash, a control byte, UTF-8 lead and continuation bytes, a
 * NUL from \u0000) at every offset of a block and at the end of the input,
 * and compare the result with a byte-at-a-time reference decoder: the same
 * decoded bytes, or the same error at the same byte offset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include <string.h>
#include "lang/json.h"

/* reference: one byte at a time; returns the decoded length, or -1 with
 * *err_off the offset the reader must report */
static int hexv(int c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; }
static long hex4(const unsigned char *s, size_t i, size_t n)
{
    if (i + 4 > n) return -1;
    long v = 0;
    for (int k = 0; k < 4; k++) { int h = hexv(s[i + k]); if (h < 0) return -1; v = v * 16 + h; }
    return v;
}
static long ref_decode(const unsigned char *s, size_t n, char *out, size_t *err_off, size_t *end)
{
    size_t i = 1, k = 0, scan = 1;
    while (scan < n && s[scan] != '"') { if (s[scan] == '\\') scan++; scan++; }
    if (scan >= n) { *err_off = 0; return -1; }
    while (i < n) {
        unsigned c = s[i];
        if (c == '"') { *end = i; return (long)k; }
        if (c < 0x20) { *err_off = i; return -1; }
        if (c == '\\') {
            size_t esc = i++;
            unsigned e = s[i++];
            const char *m = strchr("\"\\/bfnrt", (int)e);
            if (e && m) { out[k++] = "\"\\/\b\f\n\r\t"[m - "\"\\/bfnrt"]; continue; }
            if (e != 'u') { *err_off = esc; return -1; }
            long cp = hex4(s, i, n);
            if (cp < 0) { *err_off = esc; return -1; }
            i += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                long lo = i + 2 <= n && s[i] == '\\' && s[i + 1] == 'u' ? hex4(s, i + 2, n) : -1;
                if (lo < 0xDC00 || lo > 0xDFFF) { *err_off = esc; return -1; }
                i += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) { *err_off = esc; return -1; }
            if (cp < 0x80) out[k++] = (char)cp;
            else if (cp < 0x800) { out[k++] = (char)(0xC0 | (cp >> 6)); out[k++] = (char)(0x80 | (cp & 0x3F)); }
            else if (cp < 0x10000) { out[k++] = (char)(0xE0 | (cp >> 12)); out[k++] = (char)(0x80 | ((cp >> 6) & 0x3F)); out[k++] = (char)(0x80 | (cp & 0x3F)); }
            else { out[k++] = (char)(0xF0 | (cp >> 18)); out[k++] = (char)(0x80 | ((cp >> 12) & 0x3F)); out[k++] = (char)(0x80 | ((cp >> 6) & 0x3F)); out[k++] = (char)(0x80 | (cp & 0x3F)); }
            continue;
        }
        if (c < 0x80) { out[k++] = (char)c; i++; continue; }
        size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        if (!len || i + len > n) { *err_off = i; return -1; }
        unsigned long cp = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
        for (size_t q = 1; q < len; q++) {
            if ((s[i + q] & 0xC0) != 0x80) { *err_off = i; return -1; }
            cp = cp << 6 | (s[i + q] & 0x3F);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF)) {
            *err_off = i;
            return -1;
        }
        memcpy(out + k, s + i, len);
        k += len;
        i += len;
    }
    *err_off = 0;
    return -1;
}

/* the reader's result for the string literal lit: 0 and the decoded bytes,
 * or -1 and the error's byte offset */
static int reader(const char *lit, size_t n, dw_str *out, size_t *err_off)
{
    dw_arena a;
    dw_arena_init(&a, 4096);
    dw_diags d;
    dw_diags_init(&d);
    dw_source src = { "t.json", lit, n };
    const dw_json *j = dw_json_parse(&a, &src, &d);
    int rc = 0;
    if (j) {
        assert_int_equal(j->kind, DW_JSON_STRING);
        assert_int_equal(j->u.str.s[j->u.str.len], 0);      /* NUL-terminated copies */
        char *c = malloc(j->u.str.len + 1);
        memcpy(c, j->u.str.s, j->u.str.len);
        *out = (dw_str){ c, j->u.str.len };
    } else {
        assert_true(d.n > 0);
        *err_off = d.v[0].loc.off;
        rc = -1;
    }
    dw_diags_free(&d);
    dw_arena_free(&a);
    return rc;
}

static void check(const char *lit, size_t n)
{
    char ref[512];
    size_t ref_off = 0, got_off = 0, end = 0;
    long want = ref_decode((const unsigned char *)lit, n, ref, &ref_off, &end);
    dw_str got = { 0 };
    int rc = reader(lit, n, &got, &got_off);
    if (want >= 0 && end == n - 1) {
        assert_int_equal(rc, 0);
        assert_int_equal(got.len, (size_t)want);
        assert_memory_equal(got.s, ref, (size_t)want);
    } else if (want >= 0) {                 /* bytes after the closing quote (and blanks) */
        size_t t = end + 1;
        while (t < n && lit[t] == ' ') t++;
        assert_int_equal(rc, t < n ? -1 : 0);
        if (t < n) assert_int_equal(got_off, t);
    } else {
        assert_int_equal(rc, -1);
        assert_int_equal(got_off, ref_off);
    }
    free((void *)got.s);
}

static void test_every_offset(void **state)
{
    (void)state;
    static const char *const specials[] = {
        "\"", "\\\"", "\\\\", "\\n", "\\u0000", "\\u00e9", "\\ud83d\\ude00", "\\ud83d", "\\udc00", "\\x", "\\u12",
        "\x01", "\x1f", "\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xc3", "\x80", "\xc0\xaf",
        "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff", "\\", "\xe2\x82",
    };
    char buf[128];
    size_t ns = sizeof specials / sizeof *specials;
    for (size_t a = 0; a < ns; a++)
        for (size_t pre = 0; pre < 36; pre++)   /* every offset of two 16-byte blocks */
            for (size_t post = 0; post < 12; post++)
                for (int closed = 0; closed < 2; closed++) {
                    size_t n = 0;
                    buf[n++] = '"';
                    for (size_t k = 0; k < pre; k++) buf[n++] = (char)('a' + k % 26);
                    size_t sl = strlen(specials[a]);
                    memcpy(buf + n, specials[a], sl);
                    n += sl;
                    for (size_t k = 0; k < post; k++) buf[n++] = (char)('A' + k % 26);
                    if (closed) buf[n++] = '"';
                    check(buf, n);
                }
}

static void test_random_strings(void **state)
{
    (void)state;
    static const char alphabet[] = "ab\"\\nu0dD8\x01\xc3\xa9\xe2\x82\xac\xf0\x9f\x80\xff ";
    char buf[80];
    srand(16);
    for (int t = 0; t < 200000; t++) {
        size_t n = 0, len = (size_t)(rand() % 40);
        buf[n++] = '"';
        for (size_t k = 0; k < len; k++) buf[n++] = alphabet[rand() % (int)(sizeof alphabet - 1)];
        buf[n++] = '"';
        check(buf, n);
    }
}

/* keys and values with embedded NULs and exact integers survive (the
 * reader's documented exactness) */
static void test_exactness(void **state)
{
    (void)state;
    const char *doc = "{\"k\\u0000ey\":\"a\\u0000b\",\"i\":-9223372036854775808,\"j\":9223372036854775807}";
    dw_arena a;
    dw_arena_init(&a, 4096);
    dw_diags d;
    dw_diags_init(&d);
    dw_source src = { "t.json", doc, strlen(doc) };
    const dw_json *j = dw_json_parse(&a, &src, &d);
    assert_non_null(j);
    assert_int_equal(j->u.obj.v[0].key.len, 4);
    assert_memory_equal(j->u.obj.v[0].key.s, "k\0ey", 4);
    assert_int_equal(j->u.obj.v[0].value->u.str.len, 3);
    assert_memory_equal(j->u.obj.v[0].value->u.str.s, "a\0b", 3);
    assert_int_equal(j->u.obj.v[0].value->off, 13);
    assert_true(dw_json_get(j, "i")->u.i == INT64_MIN);
    assert_true(dw_json_get(j, "j")->u.i == INT64_MAX);
    dw_diags_free(&d);
    dw_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_offset),
        cmocka_unit_test(test_random_strings),
        cmocka_unit_test(test_exactness),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
