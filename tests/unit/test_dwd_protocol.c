/* dwd's wire protocol (runtime/dwd_protocol.h) where its per-request work
 * was cut: a reply string written with one copy is byte for byte what the
 * one JSON string writer gives, for every byte class; a request's buffers
 * reused by the next request carry nothing of it over; the subject
 * attributes are built only when the decision log asks for them; "time"
 * only with DWD_REQ_ALLOW_TIME; a denial message written into a reused
 * buffer is whole; the one-pass reader of the common decide line gives
 * what the general path gives (result or error) on assorted lines, every
 * prefix of them, every one-byte change and random edits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include <string.h>
#include "runtime/dwd_protocol.h"
#include "tests/unit/dwd_request_pair.h"
#include "stdlib/json_escape.h"

/* dwd_buf_json_string(s) == dw_json_escape(s, REPLACE), appended after a prefix */
static void same_as_escape(const char *s, size_t n)
{
    dwd_buf b = { 0 };
    dwd_buf_puts(&b, "x:");
    dwd_buf_json_string(&b, s, n);
    dw_buf w = { 0 };
    dw_buf_append(&w, "x:", 2);
    assert_int_equal(dw_json_escape_buf(&w, s, n, DW_JSON_REPLACE), 0);
    assert_int_equal(b.len, w.len);
    assert_memory_equal(b.p, w.p, w.len);
    assert_int_equal(b.p[b.len], 0);   /* NUL-terminated */
    dwd_buf_free(&b);
    dw_buf_free(&w);
}

static void test_reply_strings(void **st)
{
    (void)st;
    static const char *const cases[] = {
        "", "a", "github_hosts", "policy denied this operation on '~/x' [default-deny]: No permit policy matched this request.",
        "a\"b", "back\\slash", "tab\there", "nl\n", "\x01", "del\x7f", "\x7f", "caf\xc3\xa9", "\xe2\x82\xac euro",
        "\xf0\x9f\x98\x80", "bad \xff byte", "\xc3", "cut \xe2\x82", "0123456789abcdef0123456789abcdef\"",
        "0123456789abcdef0123456789abcde\x7f", "0123456789abcdef0123456789abcdef0123456789abcdef",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) same_as_escape(cases[i], strlen(cases[i]));
    same_as_escape("nul\0inside", 10);
    /* every single byte, and each byte at every position of a 40-byte run */
    char one[1], run[40];
    for (int c = 0; c < 256; c++) {
        one[0] = (char)c;
        same_as_escape(one, 1);
        for (size_t at = 0; at < sizeof run; at += 7) {
            memset(run, 'a', sizeof run);
            run[at] = (char)c;
            same_as_escape(run, sizeof run);
        }
    }
}

static const char big[] =
    "{\"op\":\"decide\",\"action\":\"shell:exec\",\"request_id\":\"r-1\",\"jsonrpc_id\":7,"
    "\"principal\":{\"type\":\"Box::Agent\",\"id\":\"self\"},"
    "\"input\":{\"program\":\"git\",\"arg1\":\"status\",\"arg2\":\"--porcelain\",\"cwd\":\"/home/project/with/a/long/path\"}}";
static const char small[] = "{\"op\":\"decide\",\"action\":\"fs:read\",\"input\":{\"path\":\"~/a\",\"operation\":\"read_content\"}}";

static void parse(const char *line, unsigned flags, dwd_request *rq)
{
    char err[512];
    if (dwd_parse_request(line, strlen(line), flags, rq, err, sizeof err)) fail_msg("refused: %s", err);
}

static void test_buffers_reused_whole(void **st)
{
    (void)st;
    dwd_request rq;
    for (int round = 0; round < 3; round++) {   /* the second and third take the first's buffers */
        parse(big, DWD_REQ_LOG_ATTRS, &rq);
        assert_string_equal(rq.subject.p, "git");
        assert_string_equal(rq.request_id.p, "r-1");
        assert_string_equal(rq.jsonrpc_id.p, "7");
        assert_string_equal(rq.principal.p, "Box::Agent::\"self\"");
        assert_string_equal(rq.category, "shell");
        assert_non_null(strstr(rq.attrs.p, "process.working_directory"));
        dwd_request_free(&rq);
        parse(small, DWD_REQ_LOG_ATTRS, &rq);
        assert_string_equal(rq.subject.p, "~/a");
        assert_int_equal(rq.request_id.len, 0);
        assert_int_equal(rq.jsonrpc_id.len, 0);
        assert_int_equal(rq.principal.len, 0);
        assert_string_equal(rq.category, "fs");
        assert_string_equal(rq.attrs.p, "{\"key\":\"file.path\",\"value\":{\"stringValue\":\"~/a\"}}");
        assert_string_equal(rq.event.p, "{\"action\":\"fs:read\",\"kind\":\"request\",\"input\":{\"path\":\"~/a\",\"operation\":\"read_content\"}}");
        dwd_request_free(&rq);
    }
}

static void test_attrs_only_for_the_log(void **st)
{
    (void)st;
    dwd_request rq;
    parse(big, 0, &rq);
    assert_int_equal(rq.attrs.len, 0);
    assert_string_equal(rq.subject.p, "git");      /* the denial message still has its subject */
    dwd_request_free(&rq);
    const char *http = "{\"op\":\"decide\",\"action\":\"http:request\",\"input\":{\"host\":\"h\",\"port\":-8443,\"method\":\"GET\",\"path\":\"p\"}}";
    parse(http, 0, &rq);
    assert_string_equal(rq.subject.p, "h:-8443/p");
    assert_int_equal(rq.attrs.len, 0);
    dwd_request_free(&rq);
    parse(http, DWD_REQ_LOG_ATTRS, &rq);
    assert_non_null(strstr(rq.attrs.p, "{\"key\":\"server.port\",\"value\":{\"intValue\":\"-8443\"}}"));
    dwd_request_free(&rq);
}

static void test_time_needs_the_flag(void **st)
{
    (void)st;
    const char *t = "{\"op\":\"decide\",\"action\":\"fs:read\",\"time\":\"2025-01-01T00:00:00Z\",\"input\":{\"path\":\"a\"}}";
    dwd_request rq;
    char err[512];
    assert_int_equal(dwd_parse_request(t, strlen(t), DWD_REQ_LOG_ATTRS, &rq, err, sizeof err), -1);
    assert_non_null(strstr(err, "\"time\" is not accepted"));
    dwd_request_free(&rq);
    assert_int_equal(dwd_parse_request(t, strlen(t), DWD_REQ_ALLOW_TIME, &rq, err, sizeof err), 0);
    dwd_request_free(&rq);
}

static void test_denial_messages_whole(void **st)
{
    (void)st;
    const char *ids[2] = { "a", "b" };
    const char *descs[2] = { "First reason.", NULL };
    dwd_decision forbid = { .allow = false, .cause = "forbidden", .rule = "a", .ndetermining = 2, .ids = ids, .descs = descs };
    dwd_decision none = { .allow = false, .cause = "no_match", .rule = "<default-deny>" };
    dwd_buf m = { 0 };
    for (int round = 0; round < 2; round++) {   /* the second reuses the message's scratch buffer */
        m.len = 0;
        dwd_denial_message(&m, "~/x", &forbid);
        assert_string_equal(m.p, "policy denied this operation on '~/x' [policy: a]: First reason; [policy: b].");
        m.len = 0;
        dwd_denial_message(&m, "y", &none);
        assert_string_equal(m.p, "policy denied this operation on 'y' [default-deny]: No permit policy matched this request.");
    }
    dwd_buf_free(&m);
}

/* ---- the one-pass reader of the common decide line agrees with the general path ---- */

/* line parsed with and without the one-pass reader: the same result, the same error */
static void agree(const char *line, size_t len)
{
    char why[1200];
    for (unsigned fl = 0; fl < 4; fl++)
        if (!dwd_parse_agrees(line, len, fl, why, sizeof why)) fail_msg("%.*s: %s", (int)len, line, why);
}

static const char *const lines[] = {
    "{\"op\":\"decide\",\"action\":\"fs:read\",\"input\":{\"path\":\"~/project/src/main.c\",\"operation\":\"read_content\"}}",
    "{\"op\":\"decide\",\"action\":\"fs:write\",\"input\":{\"path\":\"/tmp/x\",\"operation\":\"write\",\"bytes\":-12}}",
    "{\"op\":\"decide\",\"action\":\"http:request\",\"input\":{\"host\":\"api.github.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/repos\",\"body_bytes\":0,\"intercepted\":true}}",
    "{\"op\":\"decide\",\"action\":\"http:request\",\"input\":{\"host\":\"h\",\"port\":\"443\",\"path\":\"nolead\",\"method\":7}}",
    "{\"op\":\"decide\",\"action\":\"net:connect\",\"input\":{\"host\":\"10.0.0.1\",\"port\":0,\"proto\":\"tcp\"}}",
    "{\"op\":\"decide\",\"action\":\"shell:exec\",\"request_id\":\"req-9\",\"input\":{\"program\":\"git\",\"arg1\":\"status\",\"arg2\":\"-s\",\"cwd\":\"/w\",\"env\":{\"A\":[1,2,{\"b\":null}],\"c\":false}}}",
    "{\"op\":\"decide\",\"action\":\"shell:spawn\",\"input\":{\"program_path\":\"/bin/sh\",\"program\":\"sh\",\"arg2\":\"x\"}}",
    "{\"op\":\"decide\",\"action\":\"mcp:call\",\"input\":{\"server\":\"s\",\"tool\":\"t\"}}",
    "{\"op\":\"decide\",\"action\":\"mcp:read\",\"input\":{\"uri\":\"file:///a\"}}",
    "{\"op\":\"decide\",\"action\":\"mcp:list\",\"input\":{}}",
    " { \"input\" : { \"path\" : \"a\" , \"path\" : 7 } , \"action\" : \"fs:read\" ,\t\"op\" : \"decide\" }\r\n ",
    "{\"op\":\"decide\",\"action\":\"fs:read\",\"input\":{\"path\":7,\"path\":\"second\"}}",
    "{\"action\":\"fs:read\",\"input\":{\"path\":\"a\"},\"request_id\":\"\",\"op\":\"decide\"}",
    "{\"op\":\"decide\",\"action\":\"fs:read\",\"input\":{\"path\":\"caf\\u00e9\",\"n\":1.5}}",
    "{\"op\":\"decide\",\"action\":\"fs:read\",\"input\":{\"path\":\"esc\\\"aped\"}}",
    "{\"op\":\"decide\",\"action\":\"fs:read\",\"input\":{\"path\":\"caf\xc3\xa9\"}}",
    "{\"op\":\"decide\",\"action\":\"fs:read\",\"input\":{\"n\":123456789012345678901}}",
    "{\"op\":\"decide\",\"action\":\"fs:read\",\"input\":{\"n\":-9223372036854775808,\"m\":1e3}}",
    "{\"op\":\"decide\",\"action\":\"fs:read\",\"namespace\":\"Box\",\"input\":{\"path\":\"a\"}}",
    "{\"op\":\"record\",\"action\":\"http:request\",\"kind\":\"response\",\"input\":{\"host\":\"h\"},\"output\":{\"status\":200}}",
    "{\"op\":\"stats\"}",
    "{\"op\":\"decide\",\"op\":\"decide\",\"action\":\"fs:read\",\"input\":{}}",
    "{\"op\":\"decide\",\"action\":\"\",\"input\":{}}",
    "{\"op\":\"decide\",\"action\":\"fs:read\",\"input\":[]}",
    "{\"op\":\"decide\",\"action\":\"fs:read\"}",
    "{\"op\":\"decide\",\"action\":\"fs:read\",\"input\":{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}",
};

static void test_fast_path_agrees(void **st)
{
    (void)st;
    static const char subst[] = { '"', '\\', '{', '}', '[', ']', ',', ':', ' ', '0', '-', 'a', 'e', '.', 't', (char)0x80, 0x01, 0x7f };
    char buf[512];
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        const char *l = lines[i];
        size_t n = strlen(l);
        assert_true(n < sizeof buf);
        agree(l, n);
        for (size_t k = 0; k < n; k++) agree(l, k);                 /* every prefix */
        for (size_t k = 0; k < n; k++)                              /* one byte changed */
            for (size_t c = 0; c < sizeof subst; c++) {
                memcpy(buf, l, n);
                buf[k] = subst[c];
                agree(buf, n);
            }
    }
    /* 20,000 lines with 1-4 random edits (a byte replaced, inserted or removed) */
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int it = 0; it < 20000; it++) {
        const char *l = lines[it % (sizeof lines / sizeof *lines)];
        size_t n = strlen(l);
        memcpy(buf, l, n);
        for (int e = 0, ne = 1 + it % 4; e < ne; e++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            size_t at = n ? (size_t)(x % n) : 0;
            char c = (x >> 32) & 1 ? subst[(x >> 40) % sizeof subst] : (char)(x >> 48);
            switch ((x >> 56) % 3) {
            case 0: if (n) buf[at] = c; break;
            case 1: if (n + 1 < sizeof buf) { memmove(buf + at + 1, buf + at, n - at); buf[at] = c; n++; } break;
            default: if (n) { memmove(buf + at, buf + at + 1, n - at - 1); n--; } break;
            }
        }
        agree(buf, n);
    }
    /* 64 input members are read in one pass, 65 go the general way: both agree */
    char wide[2048];
    for (int m = 60; m <= 66; m++) {
        size_t o = (size_t)snprintf(wide, sizeof wide, "{\"op\":\"decide\",\"action\":\"fs:read\",\"input\":{");
        for (int k = 0; k < m; k++) o += (size_t)snprintf(wide + o, sizeof wide - o, "%s\"%c%c\":%d", k ? "," : "", 'a' + k / 26, 'a' + k % 26, k);
        o += (size_t)snprintf(wide + o, sizeof wide - o, ",\"path\":\"p\"}}");
        assert_true(o < sizeof wide);
        agree(wide, o);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reply_strings),
        cmocka_unit_test(test_buffers_reused_whole),
        cmocka_unit_test(test_attrs_only_for_the_log),
        cmocka_unit_test(test_time_needs_the_flag),
        cmocka_unit_test(test_denial_messages_whole),
        cmocka_unit_test(test_fast_path_agrees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
