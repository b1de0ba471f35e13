/* lsp_frame.c - the base protocol's framing: a header block of
 * `Name: value` lines ended by an empty line, then Content-Length bytes of
 * JSON.  A frame without a usable Content-Length, a header block over
 * DW_LSP_MAX_HEADER bytes or a body over DW_LSP_MAX_BODY is answered with
 * a parse error (id null) and skipped; the stream goes on. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lsp_int.h"

static void frame_error(dw_lsp *s, const char *msg)
{
    dw_jw w = { 0 };
    dw_jw_printf(&w, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":%d,\"message\":", DW_RPC_PARSE_ERROR);
    dw_jw_strz(&w, msg);
    dw_jw_raw(&w, "}}");
    if (w.oom) dw_lsp_fail(s);
    else dw_lsp_send(s, w.b.p, w.b.len);
    dw_buf_free(&w.b);
}

/* Content-Length's value: digits only (optional blanks around), at most
 * 20 of them; false otherwise. */
static bool parse_length(const char *p, size_t n, uint64_t *out)
{
    while (n && (*p == ' ' || *p == '\t')) { p++; n--; }
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
    if (!n || n > 20) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return false;
        if (v > (UINT64_MAX - 9) / 10) return false;
        v = v * 10 + (uint64_t)(p[i] - '0');
    }
    *out = v;
    return true;
}

/* The header block at p[0..n): its length up to and including the empty
 * line, or 0 while it is incomplete.  Lines end in \r\n (a bare \n is
 * accepted too). */
static size_t header_end(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '\n') continue;
        if (i == 0) return 1;
        if (p[i - 1] == '\n') return i + 1;
        if (p[i - 1] == '\r' && (i == 1 || p[i - 2] == '\n')) return i + 1;
    }
    return 0;
}

/* Read the header block's Content-Length: 1 found, 0 missing, -1 malformed
 * or repeated with another value. */
static int header_length(const char *p, size_t n, uint64_t *len)
{
    int found = 0;
    for (size_t i = 0; i < n;) {
        size_t e = i;
        while (e < n && p[e] != '\n') e++;
        size_t le = e;
        if (le > i && p[le - 1] == '\r') le--;
        const char *colon = memchr(p + i, ':', le - i);
        static const char name[] = "content-length";
        if (colon && (size_t)(colon - (p + i)) == sizeof name - 1 && strncasecmp(p + i, name, sizeof name - 1) == 0) {
            uint64_t v;
            if (!parse_length(colon + 1, (size_t)(p + le - colon - 1), &v)) return -1;
            if (found && v != *len) return -1;
            *len = v;
            found = 1;
        }
        i = e + 1;
    }
    return found;
}

int dw_lsp_feed(dw_lsp *s, const char *p, size_t n, int64_t now_ms)
{
    s->now_ms = now_ms;
    if (s->dead) return -1;
    /* a refused body is dropped as it streams by, never buffered */
    if (s->discard) {
        size_t k = s->discard < n ? (size_t)s->discard : n;
        s->discard -= k;
        p += k;
        n -= k;
    }
    if (n && dw_buf_append(&s->in, p, n)) { dw_lsp_fail(s); return -1; }
    while (!s->dead && s->state != DW_LSP_EXITED && s->in_at < s->in.len) {
        const char *at = s->in.p + s->in_at;
        size_t left = s->in.len - s->in_at;
        if (s->discard) {
            size_t k = s->discard < left ? (size_t)s->discard : left;
            s->discard -= k;
            s->in_at += k;
            continue;
        }
        size_t he = header_end(at, left < DW_LSP_MAX_HEADER ? left : DW_LSP_MAX_HEADER);
        if (!he) {
            if (left < DW_LSP_MAX_HEADER) break;   /* wait for more */
            frame_error(s, "the message header is longer than 8192 bytes");
            /* resynchronise on the next empty line */
            size_t k = DW_LSP_MAX_HEADER;
            size_t e = header_end(at + k - 1, left - k + 1);
            s->in_at += e ? k - 1 + e : left;
            continue;
        }
        uint64_t len = 0;
        int hl = header_length(at, he, &len);
        if (hl <= 0) {
            frame_error(s, hl < 0 ? "the Content-Length header is not a byte count" : "the message has no Content-Length header");
            s->in_at += he;
            continue;
        }
        if (len > DW_LSP_MAX_BODY) {
            char m[128];
            snprintf(m, sizeof m, "the message body of %llu bytes is over the limit of %u", (unsigned long long)len, DW_LSP_MAX_BODY);
            frame_error(s, m);
            s->in_at += he;
            s->discard = len;
            continue;
        }
        if (left - he < len) break;                /* the body is still coming */
        s->in_at += he + (size_t)len;
        dw_lsp_dispatch(s, at + he, (size_t)len);
    }
    /* drop what was consumed */
    if (s->in_at) {
        memmove(s->in.p, s->in.p + s->in_at, s->in.len - s->in_at);
        s->in.len -= s->in_at;
        s->in_at = 0;
    }
    return s->dead ? -1 : 0;
}

int dw_lsp_send(dw_lsp *s, const char *body, size_t n)
{
    if (s->dead) return -1;
    char head[64];
    int hn = snprintf(head, sizeof head, "Content-Length: %zu\r\n\r\n", n);
    if (s->out(s->out_ctx, head, (size_t)hn) || s->out(s->out_ctx, body, n)) { s->dead = true; return -1; }
    return 0;
}
