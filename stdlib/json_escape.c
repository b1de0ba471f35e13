/* json_escape.c - the one JSON string writer (json_escape.h). */
#include "json_escape.h"
#include "utf8.h"

int dw_json_escape(dw_json_sink put, void *ctx, const char *s, size_t n, dw_json_utf8 mode)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    if (put(ctx, "\"", 1)) return -1;
    size_t run = 0, i = 0;      /* s[run..i) is the pending stretch that needs no escape */
    while (i < n) {
        unsigned c = u[i];
        size_t len = 1;
        if (c >= 0x80) {
            len = dw_utf8_len(u + i, n - i);
            if (len) { i += len; continue; }
            if (mode != DW_JSON_REPLACE) return -2;
            len = 1;            /* one U+FFFD per byte that starts no sequence */
        } else if (c >= 0x20 && c != '"' && c != '\\' && (c != 0x7f || mode == DW_JSON_SERDE)) { i++; continue; }
        if (put(ctx, s + run, i - run)) return -1;
        char e[6] = { '\\', (char)c, 0, 0, 0, 0 };
        size_t elen = 2;
        if (c >= 0x80) { e[0] = (char)0xEF; e[1] = (char)0xBF; e[2] = (char)0xBD; elen = 3; }
        else if (c == '\n') e[1] = 'n';
        else if (c == '\r') e[1] = 'r';
        else if (c == '\t') e[1] = 't';
        else if (mode == DW_JSON_SERDE && c == '\b') e[1] = 'b';
        else if (mode == DW_JSON_SERDE && c == '\f') e[1] = 'f';
        else if (c < 0x20 || c == 0x7f) {
            e[1] = 'u'; e[2] = '0'; e[3] = '0'; e[4] = hex[c >> 4]; e[5] = hex[c & 15]; elen = 6;
        }
        if (put(ctx, e, elen)) return -1;
        i += len;
        run = i;
    }
    if (put(ctx, s + run, n - run) || put(ctx, "\"", 1)) return -1;
    return 0;
}

static int buf_sink(void *ctx, const char *p, size_t n) { return dw_buf_append(ctx, p, n); }
static int file_sink(void *ctx, const char *p, size_t n) { return n && fwrite(p, 1, n, ctx) != n; }

int dw_json_escape_buf(dw_buf *b, const char *s, size_t n, dw_json_utf8 mode)
{
    return dw_json_escape(buf_sink, b, s, n, mode);
}

int dw_json_escape_file(FILE *f, const char *s, size_t n, dw_json_utf8 mode)
{
    return dw_json_escape(file_sink, f, s, n, mode);
}
