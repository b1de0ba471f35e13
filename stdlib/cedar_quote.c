/* cedar_quote.c - the one Cedar string-literal writer (cedar_quote.h). */
#include "cedar_quote.h"
#include <string.h>

int dw_cedar_escape(dw_json_sink put, void *ctx, const char *s, size_t n, bool like)
{
    static const char hex[] = "0123456789abcdef";
    size_t run = 0;             /* s[run..i) is the pending stretch that needs no escape */
    for (size_t i = 0; i < n; i++) {
        unsigned c = (unsigned char)s[i];
        if (c >= 0x20 && c != 0x7f && c != '"' && c != '\\' && (c != '*' || !like)) continue;
        if (put(ctx, s + run, i - run)) return -1;
        char e[DW_CEDAR_ESCAPE_MAX] = { '\\', (char)c };
        size_t elen = 2;
        if (c == '\n') e[1] = 'n';
        else if (c == '\r') e[1] = 'r';
        else if (c == '\t') e[1] = 't';
        else if (c == '\0') e[1] = '0';
        else if (c < 0x20 || c == 0x7f) {
            e[1] = 'u'; e[2] = '{';
            elen = 3;
            if (c >= 0x10) e[elen++] = hex[c >> 4];
            e[elen++] = hex[c & 15];
            e[elen++] = '}';
        }
        if (put(ctx, e, elen)) return -1;
        run = i + 1;
    }
    return put(ctx, s + run, n - run);
}

static int mem_sink(void *ctx, const char *p, size_t n)
{
    char **w = ctx;
    if (n) memcpy(*w, p, n);
    *w += n;
    return 0;
}
static int buf_sink(void *ctx, const char *p, size_t n) { return dw_buf_append(ctx, p, n); }
static int file_sink(void *ctx, const char *p, size_t n) { return n && fwrite(p, 1, n, ctx) != n; }

size_t dw_cedar_escape_mem(char *out, const char *s, size_t n)
{
    char *w = out;
    dw_cedar_escape(mem_sink, &w, s, n, false);
    return (size_t)(w - out);
}

int dw_cedar_quote_buf(dw_buf *b, const char *s, size_t n)
{
    return buf_sink(b, "\"", 1) || dw_cedar_escape(buf_sink, b, s, n, false) || buf_sink(b, "\"", 1) ? -1 : 0;
}

int dw_cedar_quote_file(FILE *f, const char *s, size_t n)
{
    return file_sink(f, "\"", 1) || dw_cedar_escape(file_sink, f, s, n, false) || file_sink(f, "\"", 1) ? -1 : 0;
}
