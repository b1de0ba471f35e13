/* strlit.c - string-literal and like-pattern decoding (dogwood.md §2.5).
 * Exactly Cedar's (Rust's) escape set; anything else is an error. */
#include "strlit.h"
#include <string.h>
#include "../stdlib/utf8.h"
#include "../stdlib/cedar_quote.h"

static const char dw_esc_hint[] =
    "valid escapes are \\n \\r \\t \\\\ \\0 \\' \\\" \\xHH (at most \\x7F) and \\u{H...} (1 to 6 hex digits)";

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int put_utf8(dw_buf *b, uint32_t cp)
{
    char t[4];
    return dw_buf_append(b, t, dw_utf8_put(t, cp));
}

static bool fail(dw_strlit_err *err, const char *msg, const char *hint, size_t off, size_t len)
{
    err->msg = msg;
    err->hint = hint;
    err->off = off;
    err->len = len;
    return false;
}

/* Shared decoder.  With `cuts` non-NULL (like mode) \* is a literal star and
 * every wildcard's byte position in the output is recorded in cuts. */
static bool decode(const char *raw, size_t n, dw_buf *b, dw_buf *cuts, dw_strlit_err *err)
{
    const unsigned char *s = (const unsigned char *)raw;
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c >= 0x80) {
            size_t k = dw_utf8_len(s + i, n - i);
            if (!k) return fail(err, "invalid UTF-8 in string literal", NULL, i, 1);
            if (dw_buf_append(b, s + i, k)) goto oom;
            i += k;
            continue;
        }
        if (c != '\\') {
            if (c == '*' && cuts) {
                size_t at = b->len;
                if (dw_buf_append(cuts, &at, sizeof at)) goto oom;
            } else if (dw_buf_putc(b, (char)c)) goto oom;
            i++;
            continue;
        }
        size_t start = i;
        if (i + 1 >= n) return fail(err, "invalid escape `%.*s` at the end of a string literal", dw_esc_hint, start, 1);
        unsigned char e = s[i + 1];
        i += 2;
        char lit = 0;
        switch (e) {
        case 'n': lit = '\n'; break;
        case 'r': lit = '\r'; break;
        case 't': lit = '\t'; break;
        case '\\': lit = '\\'; break;
        case '0': lit = '\0'; break;
        case '\'': lit = '\''; break;
        case '"': lit = '"'; break;
        case '*':
            if (!cuts) return fail(err, "invalid escape `%.*s` (`\\*` is only valid in a `like` pattern)", dw_esc_hint, start, 2);
            lit = '*';
            break;
        case 'x': {
            int h1 = i < n ? hexval(s[i]) : -1, h2 = i + 1 < n ? hexval(s[i + 1]) : -1;
            if (h1 < 0 || h2 < 0)
                return fail(err, "invalid escape `%.*s`: `\\x` needs two hex digits", dw_esc_hint, start, i < n ? 3 : 2);
            int v = h1 * 16 + h2;
            i += 2;
            if (v > 0x7F)
                return fail(err, "invalid escape `%.*s`: `\\x` escapes must be at most `\\x7F`", "use `\\u{...}` for characters above U+007F", start, 4);
            /* an escaped `*` is still a wildcard (§2.5) */
            if (v == '*' && cuts) {
                size_t at = b->len;
                if (dw_buf_append(cuts, &at, sizeof at)) goto oom;
                continue;
            }
            if (dw_buf_putc(b, (char)v)) goto oom;
            continue;
        }
        case 'u': {
            if (i >= n || s[i] != '{')
                return fail(err, "invalid escape `%.*s`: expected `\\u{...}`", dw_esc_hint, start, 2);
            i++;
            uint32_t v = 0;
            int digits = 0;
            bool over = false;
            while (i < n && s[i] != '}') {
                if (s[i] == '_' && digits > 0) { i++; continue; }
                int h = hexval(s[i]);
                if (h < 0) break;
                if (++digits > 6) over = true;
                else v = v * 16 + (uint32_t)h;
                i++;
            }
            if (i >= n || s[i] != '}') {
                size_t l = (i < n ? i + 1 : n) - start;
                return fail(err, "invalid escape `%.*s`: expected 1 to 6 hex digits and `}`", dw_esc_hint, start, l);
            }
            i++;
            if (digits == 0)
                return fail(err, "invalid escape `%.*s`: expected 1 to 6 hex digits", dw_esc_hint, start, i - start);
            if (over)
                return fail(err, "invalid escape `%.*s`: more than 6 hex digits", dw_esc_hint, start, i - start);
            if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
                return fail(err, "invalid escape `%.*s`: not a Unicode scalar value", "the value must be at most U+10FFFF and not a surrogate (D800-DFFF)", start, i - start);
            if (v == '*' && cuts) {
                size_t at = b->len;
                if (dw_buf_append(cuts, &at, sizeof at)) goto oom;
                continue;
            }
            if (put_utf8(b, v)) goto oom;
            continue;
        }
        default: {
            size_t l = 2;
            if (e >= 0x80) { size_t k = dw_utf8_len(s + i - 1, n - i + 1); l = 1 + (k ? k : 1); }
            return fail(err, "invalid escape `%.*s`", dw_esc_hint, start, l);
        }
        }
        if (dw_buf_putc(b, lit)) goto oom;
    }
    return true;
oom:
    return fail(err, "out of memory", NULL, 0, 0);
}

bool dw_strlit_decode(dw_arena *a, const char *raw, size_t n, dw_str *out, dw_strlit_err *err)
{
    dw_buf b = {0};
    bool ok = decode(raw, n, &b, NULL, err);
    if (ok) {
        char *p = dw_arena_memdup(a, b.p ? b.p : "", b.len);
        if (!p) ok = fail(err, "out of memory", NULL, 0, 0);
        else { out->s = p; out->len = b.len; }
    }
    dw_buf_free(&b);
    return ok;
}

bool dw_like_decode(dw_arena *a, const char *raw, size_t n, dw_like_pattern *out, dw_strlit_err *err)
{
    dw_buf b = {0}, cuts = {0};
    bool ok = decode(raw, n, &b, &cuts, err);
    if (ok) {
        size_t ncut = cuts.len / sizeof(size_t);
        const size_t *cut = (const size_t *)(void *)cuts.p;
        char *p = dw_arena_memdup(a, b.p ? b.p : "", b.len);
        dw_str *seg = dw_arena_alloc(a, (ncut + 1) * sizeof *seg);
        if (!p || !seg) ok = fail(err, "out of memory", NULL, 0, 0);
        else {
            size_t prev = 0;
            for (size_t k = 0; k < ncut; k++) {
                seg[k].s = p + prev;
                seg[k].len = cut[k] - prev;
                prev = cut[k];
            }
            seg[ncut].s = p + prev;
            seg[ncut].len = b.len - prev;
            out->nseg = ncut + 1;
            out->seg = seg;
        }
    }
    dw_buf_free(&b);
    dw_buf_free(&cuts);
    return ok;
}

static int file_sink(void *ctx, const char *p, size_t n) { return n && fwrite(p, 1, n, ctx) != n; }

void dw_str_print_quoted(FILE *out, const char *s, size_t n)
{
    dw_cedar_quote_file(out, s, n);
}

void dw_like_print(FILE *out, const dw_like_pattern *p)
{
    fputc('"', out);
    for (size_t k = 0; k < p->nseg; k++) {
        if (k) fputc('*', out);
        dw_cedar_escape(file_sink, out, p->seg[k].s, p->seg[k].len, true);
    }
    fputc('"', out);
}
