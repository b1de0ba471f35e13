/* test_lsp.c - the language server's byte-stream machine (runtime/lsp.h)
 * driven from memory: a body over the limit is refused and skipped as it
 * streams by (never buffered), Content-Length headers that disagree are
 * refused, ids that are neither integers nor strings are invalid requests,
 * the lifecycle drops what comes before `initialize` and after `exit`,
 * incremental edits splice the text, and protocol positions (UTF-16 code
 * units, or UTF-8 bytes) map to byte offsets and back at every edge, and
 * file uris map to paths and back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/lsp_int.h"

typedef struct sink { dw_buf b; } sink;

static int to_sink(void *ctx, const char *p, size_t n) { return dw_buf_append(&((sink *)ctx)->b, p, n); }

static void feed(dw_lsp *s, const char *text) { assert_int_equal(dw_lsp_feed(s, text, strlen(text), 0), 0); }

static void send(dw_lsp *s, const char *body)
{
    char head[64];
    snprintf(head, sizeof head, "Content-Length: %zu\r\n\r\n", strlen(body));
    feed(s, head);
    feed(s, body);
}

/* The bodies of the frames written so far (each a NUL-terminated copy in
 * out[], freed by frames_free); returns how many. */
static size_t frames(sink *k, char **out, size_t cap)
{
    size_t n = 0, i = 0;
    while (i < k->b.len && n < cap) {
        unsigned len;
        assert_int_equal(sscanf(k->b.p + i, "Content-Length: %u\r\n\r\n", &len), 1);
        const char *body = strstr(k->b.p + i, "\r\n\r\n");
        assert_non_null(body);
        body += 4;
        out[n] = strndup(body, len);
        assert_non_null(out[n]);
        n++;
        i = (size_t)(body - k->b.p) + len;
    }
    return n;
}

static void frames_free(char **f, size_t n) { for (size_t i = 0; i < n; i++) free(f[i]); }

static bool has(const char *body, const char *what) { return strstr(body, what) != NULL; }

static dw_lsp *server(sink *k)
{
    memset(k, 0, sizeof *k);
    dw_lsp *s = dw_lsp_new(to_sink, k);
    assert_non_null(s);
    return s;
}

static void test_body_over_limit(void **state)
{
    sink k;
    dw_lsp *s = server(&k);
    size_t big = DW_LSP_MAX_BODY + 12345;
    char head[64];
    snprintf(head, sizeof head, "Content-Length: %zu\r\n\r\n", big);
    feed(s, head);
    char *chunk = malloc(65536);
    assert_non_null(chunk);
    memset(chunk, '{', 65536);
    for (size_t left = big; left;) {
        size_t n = left < 65536 ? left : 65536;
        assert_int_equal(dw_lsp_feed(s, chunk, n, 0), 0);
        left -= n;
        assert_true(s->in.cap < (1u << 20));   /* dropped, not kept */
    }
    free(chunk);
    send(s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"textDocument/hover\",\"params\":{}}");
    char *f[8];
    size_t n = frames(&k, f, 8);
    assert_int_equal(n, 2);
    assert_true(has(f[0], "\"id\":null") && has(f[0], "-32700") && has(f[0], "over the limit"));
    assert_true(has(f[1], "\"id\":5") && has(f[1], "-32002"));
    frames_free(f, n);
    dw_lsp_free(s);
    dw_buf_free(&k.b);
}

static void test_headers(void **state)
{
    sink k;
    dw_lsp *s = server(&k);
    const char *req = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}";
    char m[256];
    /* two lengths that disagree: refused; the same length twice, any case, bare \n: fine */
    snprintf(m, sizeof m, "Content-Length: %zu\r\nContent-Length: 3\r\n\r\n", strlen(req));
    feed(s, m);
    snprintf(m, sizeof m, "content-length: %zu\ncontent-LENGTH:  %zu \n\n%s", strlen(req), strlen(req), req);
    feed(s, m);
    feed(s, "Content-Length: 99999999999999999999999\r\n\r\n");
    char *f[8];
    size_t n = frames(&k, f, 8);
    assert_int_equal(n, 3);
    assert_true(has(f[0], "-32700") && has(f[0], "\"id\":null"));
    assert_true(has(f[1], "\"id\":1") && has(f[1], "-32002"));
    assert_true(has(f[2], "-32700"));
    frames_free(f, n);
    dw_lsp_free(s);
    dw_buf_free(&k.b);
}

static void test_ids_and_responses(void **state)
{
    sink k;
    dw_lsp *s = server(&k);
    send(s, "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"initialize\",\"params\":{}}");
    send(s, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"initialize\",\"params\":{}}");
    send(s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":null}");        /* a response: nothing waits for it */
    send(s, "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"method\":\"initialize\",\"params\":{\"capabilities\":{}}}");
    send(s, "{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"shutdown\"}");
    char *f[8];
    size_t n = frames(&k, f, 8);
    assert_int_equal(n, 4);
    assert_true(has(f[0], "-32600") && has(f[0], "\"id\":null"));
    assert_true(has(f[1], "-32600"));
    assert_true(has(f[2], "\"id\":\"a\\\"b\"") && has(f[2], "\"capabilities\""));
    assert_true(has(f[3], "-32600"));
    frames_free(f, n);
    dw_lsp_free(s);
    dw_buf_free(&k.b);
}

static void test_lifecycle(void **state)
{
    sink k;
    dw_lsp *s = server(&k);
    /* before initialize a notification is dropped: no document, no diagnostics */
    send(s, "{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didOpen\",\"params\":{\"textDocument\":{\"uri\":\"file:///a.dw\",\"text\":\"x\"}}}");
    assert_int_equal(s->ndocs, 0);
    send(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"capabilities\":{}}}");
    send(s, "{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didOpen\",\"params\":{\"textDocument\":{\"uri\":\"file:///a.dw\",\"text\":\"permit (principal, action, resource);\"}}}");
    assert_int_equal(s->ndocs, 1);
    assert_int_equal(dw_lsp_due_in(s, 0), 0);
    assert_int_equal(dw_lsp_run_due(s, 0), 0);
    assert_int_equal(dw_lsp_due_in(s, 0), -1);
    send(s, "{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}");
    int status = -1;
    assert_true(dw_lsp_exited(s, &status));
    assert_int_equal(status, 1);           /* no shutdown first */
    size_t before = k.b.len;
    send(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"shutdown\"}");
    assert_int_equal(k.b.len, before);     /* nothing after exit */
    char *f[8];
    size_t n = frames(&k, f, 8);
    assert_int_equal(n, 2);
    assert_true(has(f[1], "publishDiagnostics") && has(f[1], "file:///a.dw"));
    frames_free(f, n);
    dw_lsp_free(s);
    dw_buf_free(&k.b);
}

static dw_lsp_doc *open_doc(dw_lsp *s, const char *text_json)
{
    char m[512];
    send(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"capabilities\":{}}}");
    snprintf(m, sizeof m, "{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didOpen\",\"params\":{\"textDocument\":{\"uri\":\"file:///p.dw\",\"version\":1,\"text\":%s}}}", text_json);
    send(s, m);
    assert_int_equal(s->ndocs, 1);
    return s->docs[0];
}

static void change(dw_lsp *s, int l0, int c0, int l1, int c1, const char *text_json)
{
    char m[512];
    snprintf(m, sizeof m, "{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didChange\",\"params\":{\"textDocument\":{\"uri\":\"file:///p.dw\",\"version\":2},"
             "\"contentChanges\":[{\"range\":{\"start\":{\"line\":%d,\"character\":%d},\"end\":{\"line\":%d,\"character\":%d}},\"text\":%s}]}}",
             l0, c0, l1, c1, text_json);
    send(s, m);
}

static void test_incremental_edits(void **state)
{
    sink k;
    dw_lsp *s = server(&k);
    dw_lsp_doc *d = open_doc(s, "\"ab\\ncd\\nef\"");
    change(s, 0, 1, 0, 1, "\"X\"");              /* insert */
    assert_string_equal(d->text, "aXb\ncd\nef");
    change(s, 0, 2, 2, 1, "\"\"");               /* delete across lines */
    assert_string_equal(d->text, "aXf");
    change(s, 0, 3, 0, 0, "\"<\"");              /* end before start: an insert at the start */
    assert_string_equal(d->text, "aXf<");
    change(s, 9, 9, 9, 9, "\"!\\n\"");           /* past the end: appended */
    assert_string_equal(d->text, "aXf<!\n");
    assert_int_equal(d->version, 2);
    assert_int_equal(dw_lsp_due_in(s, 0), s->cfg.debounce_ms);   /* debounced */
    dw_lsp_free(s);
    dw_buf_free(&k.b);
}

static void test_positions(void **state)
{
    sink k;
    dw_lsp *s = server(&k);
    /* a, U+1F600 (4 bytes, 2 UTF-16 units), b, newline, é (2 bytes, 1 unit), z */
    dw_lsp_doc *d = open_doc(s, "\"a\\ud83d\\ude00b\\n\\u00e9z\"");
    assert_int_equal(d->len, 10);
    assert_int_equal(dw_lsp_offset(s, d, 0, 1), 1);
    assert_int_equal(dw_lsp_offset(s, d, 0, 2), 1);    /* inside the pair: its start */
    assert_int_equal(dw_lsp_offset(s, d, 0, 3), 5);
    assert_int_equal(dw_lsp_offset(s, d, 0, 99), 6);   /* past the line: its end */
    assert_int_equal(dw_lsp_offset(s, d, 1, 1), 9);
    assert_int_equal(dw_lsp_offset(s, d, 7, 0), 10);   /* past the text: its end */
    uint32_t l, c;
    dw_lsp_position(s, d, 5, &l, &c);
    assert_int_equal(l, 0); assert_int_equal(c, 3);
    dw_lsp_position(s, d, 3, &l, &c);                  /* inside the character: before it */
    assert_int_equal(l, 0); assert_int_equal(c, 1);
    dw_lsp_position(s, d, 10, &l, &c);
    assert_int_equal(l, 1); assert_int_equal(c, 2);
    s->utf8 = true;
    assert_int_equal(dw_lsp_offset(s, d, 0, 3), 1);    /* bytes now: inside the character */
    assert_int_equal(dw_lsp_offset(s, d, 0, 5), 5);
    dw_lsp_position(s, d, 9, &l, &c);
    assert_int_equal(l, 1); assert_int_equal(c, 2);
    dw_lsp_free(s);
    dw_buf_free(&k.b);
}

static void test_uris(void **state)
{
    static const struct { const char *uri, *path; } cases[] = {
        { "file:///a%20b%23c.dw", "/a b#c.dw" },      /* escapes decoded, an escaped # is a name */
        { "file://localhost/x/y.dw", "/x/y.dw" },
        { "FILE:///p.cedar", "/p.cedar" },
        { "file:///x.dw?query", NULL },                /* a query or fragment: not a file */
        { "file:///x.dw#frag", NULL },
        { "file:///a%00b", NULL },                     /* NUL */
        { "file://host/x", NULL },
        { "untitled:Untitled-1", NULL },
        { "file://", NULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *p = dw_lsp_uri_path(cases[i].uri, strlen(cases[i].uri));
        if (cases[i].path) { assert_non_null(p); assert_string_equal(p, cases[i].path); }
        else assert_null(p);
        free(p);
    }
    dw_jw w = { 0 };
    dw_jw_uri(&w, "/a b/é.dw");
    assert_int_equal(dw_buf_putc(&w.b, 0), 0);
    assert_string_equal(w.b.p, "\"file:///a%20b/%C3%A9.dw\"");
    dw_buf_free(&w.b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_body_over_limit),
        cmocka_unit_test(test_headers),
        cmocka_unit_test(test_ids_and_responses),
        cmocka_unit_test(test_lifecycle),
        cmocka_unit_test(test_incremental_edits),
        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_uris),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
