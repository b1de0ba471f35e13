/* test_event_fast.c - Box's event lines in one pass (runtime/engine_event.c
 * event_fast, through runtime/json_request.h's reader) decide and record
 * exactly as the general path (JSON tree, schema-directed reader) does.
 *
 * Each Box example's trace (and the engine benchmark's events) is fed to two
 * engines: one gets every line as it is (the one-pass reader takes the common
 * shape), the other the same line behind an escaped member name the one-pass
 * reader never takes on and the general path ignores.  Verdicts, rules,
 * causes, messages and the exported state (the history's logged records,
 * byte for byte) must agree.  Variants of one line cover what the pass hands
 * back (escapes, floats, null, a member twice, input before action, a
 * namespace after input, a principal, request_id, output); real lines are
 * cut at every byte, changed at every byte and edited at random. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/dogwood.h"
#include "tests/unit/event_pair.h"

static const char *shared(void)
{
    const char *s = getenv("DW_SHARED");
    return s && *s ? s : "../shared";
}

static dw_engine *open_engine(const char *policy)
{
    dw_engine_config cfg = { .policy_path = policy, .schema_path = "box", .ticks_per_second = 1000000000 };
    char err[512];
    dw_engine *e = dw_engine_open(&cfg, err, sizeof err);
    if (!e) fail_msg("open %s: %s", policy, err);
    return e;
}

/* Decide (or record) line on both engines, the second through the general path. */
static void both(dw_engine *a, dw_engine *b, const char *line, size_t len, int64_t ts, const char *where)
{
    char slow[8192];
    size_t n = event_pair_general_line(line, len, slow, sizeof slow);
    if (!n) fail_msg("%s: not an object line", where);
    dw_verdict va, vb;
    int ra = dw_engine_decide_json(a, line, len, ts, &va), rb = dw_engine_decide_json(b, slow, (size_t)n, ts, &vb);
    if (!event_pair_same_answer(ra, &va, rb, &vb) || !event_pair_same_message(va.message, vb.message))
        fail_msg("%s: one pass (%d, %s, %s) and general path (%d, %s, %s) differ on %.*s", where, ra,
                 va.allow ? "allow" : "deny", va.message, rb, vb.allow ? "allow" : "deny", vb.message, (int)len, line);
}

static void same_state(dw_engine *a, dw_engine *b, const char *where)
{
    void *sa = NULL, *sb = NULL;
    size_t la = 0, lb = 0;
    assert_int_equal(dw_engine_export_state(a, &sa, &la), 0);
    assert_int_equal(dw_engine_export_state(b, &sb, &lb), 0);
    if (la != lb || memcmp(sa, sb, la) != 0) fail_msg("%s: the exported states differ (%zu and %zu bytes)", where, la, lb);
    dw_free(sa);
    dw_free(sb);
    assert_int_equal(dw_engine_history_length(a), dw_engine_history_length(b));
}

static int run_file(const char *policy, const char *events)
{
    FILE *f = fopen(events, "r");
    if (!f) return 0;
    dw_engine *a = open_engine(policy), *b = open_engine(policy);
    char line[8192];
    int n = 0;
    int64_t ts = 1748865600LL * 1000000000LL;
    while (fgets(line, sizeof line, f)) {
        size_t len = strcspn(line, "\r\n");
        if (!len) continue;
        char where[600];
        snprintf(where, sizeof where, "%s:%d", events, n + 1);
        /* with the line's own time where it has one (every other line), else the caller's: the clock would differ */
        bool timed = strstr(line, "\"time\"") != NULL;
        both(a, b, line, len, timed && n % 2 ? DW_TS_NOW : (ts += 1000000), where);
        n++;
    }
    fclose(f);
    same_state(a, b, events);
    dw_engine_close(a);
    dw_engine_close(b);
    return n;
}

static void test_examples(void **state)
{
    (void)state;
    char pol[512], ev[512];
    int lines = 0;
    for (int k = 1; k <= 8; k++) {
        static const char *const ex[] = { NULL, "01-project-read", "02-no-deletes", "03-model-egress", "04-shell-allowlist",
                                          "05-tests-before-release", "06-http-request-budget", "07-upload-byte-budget",
                                          "08-push-after-test" };
        snprintf(pol, sizeof pol, "%s/examples/box/%s/policy.dw", shared(), ex[k]);
        snprintf(ev, sizeof ev, "%s/examples/box/%s/trace.jsonl", shared(), ex[k]);
        lines += run_file(pol, ev);
    }
    snprintf(pol, sizeof pol, "%s/examples/box/01-project-read/policy.dw", shared());
    lines += run_file(pol, "tests/bench/engine/project-read.events.jsonl");
    assert_true(lines > 20);
}

/* One line in many shapes: each decides the same both ways, twice (the
 * second time from the line head the first one left, engine_event.c), under
 * a set whose leaves keep events (06) and one without leaves (01). */
static void test_variants(void **state)
{
    (void)state;
    char pol[512];
    static const char *const v[] = {
        "{\"action\":\"http:request\",\"kind\":\"request\",\"input\":{\"host\":\"api.github.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true}}",
        "{\"input\":{\"host\":\"api.github.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true},\"action\":\"http:request\",\"kind\":\"request\"}",
        "{\"action\":\"http:request\",\"kind\":\"request\",\"input\":{\"host\":\"api.github.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true},\"namespace\":\"Box\"}",
        "{\"namespace\":\"Box\",\"action\":\"http:request\",\"kind\":\"request\",\"request_id\":\"r-1\",\"input\":{\"host\":\"api.github.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true}}",
        "{\"action\":\"http:request\",\"kind\":\"response\",\"input\":{\"host\":\"api.github.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true},\"output\":{\"status\":200}}",
        "{\"action\":\"http:request\",\"kind\":\"response\",\"input\":{\"host\":\"api.github.com\"},\"output\":{\"status\":\"x\"}}",
        "{\"action\":\"http:request\",\"kind\":\"request\",\"input\":{\"host\":\"a\\u0000b\",\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true}}",
        "{\"action\":\"http:request\",\"kind\":\"request\",\"input\":{\"host\":\"api.github.com\",\"port\":443.5,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true}}",
        "{\"action\":\"http:request\",\"kind\":\"request\",\"input\":{\"host\":null,\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true}}",
        "{\"action\":\"http:request\",\"action\":\"fs:read\",\"kind\":\"request\",\"input\":{\"path\":\"/r\",\"operation\":\"read_content\"}}",
        "{\"action\":\"http:request\",\"kind\":\"request\",\"input\":{\"host\":\"api.github.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0}}",
        "{\"action\":\"http:request\",\"kind\":\"request\",\"principal\":{\"type\":\"Box::Agent\",\"id\":\"other\"},\"input\":{\"host\":\"api.github.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true}}",
        "{\"action\":\"http:request\",\"kind\":\"request\",\"resource\":{\"__entity\":{\"type\":\"Box::Resource\",\"id\":\"unused\"}},\"input\":{\"host\":\"api.github.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true}}",
        "{\"action\":\"fs:read\",\"kind\":\"request\",\"input\":{\"path\":\"~/p\",\"operation\":{\"__entity\":{\"type\":\"Box::FsReadOperation\",\"id\":\"read_content\"}}}}",
        "{\"action\":\"fs:read\",\"kind\":\"request\",\"input\":{\"path\":\"~/p\",\"operation\":\"read_content\"}}",
        "{\"action\":\"fs:read\",\"kind\":\"request\",\"input\":{\"path\":\"~/p\",\"operation\":{\"__entity\":{\"type\":\"Box::FsReadOperation\",\"id\":\"nope\"}}}}",
        "{\"action\":\"nope:nope\",\"kind\":\"request\",\"input\":{}}",
        "{\"action\":\"http:request\",\"kind\":\"request\",\"time\":\"2025-06-02T12:00:00Z\",\"input\":{\"host\":\"api.github.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true}}",
        "{\"action\":\"http:request\",\"kind\":\"request\",\"time\":\"yesterday\",\"input\":{}}",
        "{\"action\":\"http:request\",\"kind\":\"request\",\"expect\":\"allow\",\"rules\":[\"a\",\"b\"],\"note\":{\"n\":1},\"input\":{\"host\":\"api.github.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true}}",
        "{\"action\":\"http:request\",\"kind\":\"request\",\"input\":{\"host\":\"api.github.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true}} x",
        "{}",
        "{\"namespace\":\"Box\",\"action\":\"http:request\",\"kind\":\"request\",\"input\":{\"host\":\"api.github.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true}}",
        "{\"namespace\":\"Box\",\"action\":\"http:request\",\"kind\":\"request\",\"input\":{\"host\":\"api.github.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true},\"namespace\":\"Box\"}",
        "{ \"action\" : \"http:request\" , \"kind\":\"response\",\"output\":{\"status\":200},\"input\":{\"host\":\"api.github.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true}}",
        "{\"action\":\"http:request\",\"kind\":\"request\",\"input\":{\"host\":\"api.github.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true},\"kind\":\"request\"}",
        "{\"action\":\"http:request\",\"kind\":\"request\",\"input\":{\"host\":\"api.github.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true},\"input\":{}}",
    };
    for (int set = 0; set < 2; set++) {
        snprintf(pol, sizeof pol, "%s/examples/box/%s/policy.dw", shared(), set ? "01-project-read" : "06-http-request-budget");
        dw_engine *a = open_engine(pol), *b = open_engine(pol);
        int64_t ts = 1748865600LL * 1000000000LL;
        for (int twice = 0; twice < 2; twice++)
            for (size_t k = 0; k < sizeof v / sizeof *v; k++) {
                char where[64];
                snprintf(where, sizeof where, "%s variant %zu", set ? "01" : "06", k);
                both(a, b, v[k], strlen(v[k]), (ts += 1000000), where);
                both(a, b, v[k], strlen(v[k]), (ts += 1000000), where);
            }
        same_state(a, b, "variants");
        dw_engine_close(a);
        dw_engine_close(b);
    }
}

/* A leaf that keeps some events of an identity and not others (a pattern),
 * events of other identities in between, lines long enough that the
 * history's carve moves on to new blocks, and a window that slides (the
 * history compacts): the one pass reads each line into the history's carve
 * and gives back what is not kept, so a kept record must come out of the
 * exported state byte for byte as the general path copied it, and every
 * verdict must agree. */
static void test_kept_and_given_back(void **state)
{
    (void)state;
    char pol[512];
    snprintf(pol, sizeof pol, "%s/examples/box/05-tests-before-release/policy.dw", shared());
    dw_engine *a = open_engine(pol), *b = open_engine(pol);
    int64_t ts = 1748865600LL * 1000000000LL;
    char line[1024], where[64], pad[300];
    for (int i = 0; i < 3000; i++) {
        int w = 20 + (i * 37) % 250;       /* strings of varying length */
        for (int k = 0; k < w; k++) pad[k] = (char)('a' + (i + k) % 26);
        pad[w] = 0;
        switch (i % 5) {
        case 0: case 3:                   /* kept: python3, status 0 */
            snprintf(line, sizeof line, "{\"action\":\"shell:exec\",\"kind\":\"response\",\"request_id\":\"r%d-%s\",\"input\":{\"command\":\"python3 %s\",\"program\":\"python3\",\"arg1\":\"%s\",\"arg_count\":1,\"cwd\":\"~/project\"},\"output\":{\"status\":0}}", i, pad, pad, pad);
            break;
        case 1:                           /* same identity, not kept: status 1 */
            snprintf(line, sizeof line, "{\"action\":\"shell:exec\",\"kind\":\"response\",\"input\":{\"command\":\"python3 %s\",\"program\":\"python3\",\"arg1\":\"%s\",\"arg_count\":1,\"cwd\":\"~/project\"},\"output\":{\"status\":1}}", pad, pad);
            break;
        case 2:                           /* a decision no leaf keeps */
            snprintf(line, sizeof line, "{\"action\":\"fs:write\",\"kind\":\"request\",\"input\":{\"path\":\"~/project/%s/RELEASE.md\",\"operation\":{\"__entity\":{\"type\":\"Box::FsWriteOperation\",\"id\":\"write_content\"}}}}", pad);
            break;
        default:                          /* a gate failure, and a line the pass hands back */
            snprintf(line, sizeof line, i % 2 ? "{\"action\":\"fs:write\",\"kind\":\"request\",\"input\":{\"path\":\"%s\"}}"
                                              : "{\"action\":\"shell:exec\",\"kind\":\"response\",\"input\":{\"command\":\"p\\u0079 %s\",\"program\":\"python3\",\"arg1\":\"x\",\"arg_count\":1,\"cwd\":\"~\"},\"output\":{\"status\":0}}", pad);
            break;
        }
        snprintf(where, sizeof where, "event %d", i);
        both(a, b, line, strlen(line), (ts += 5LL * 1000000000LL), where);   /* 3000 x 5 s: the 1 h window slides */
        if (i % 500 == 499) same_state(a, b, where);
    }
    same_state(a, b, "kept and given back");
    assert_true(dw_engine_history_length(a) > 100);
    dw_engine_close(a);
    dw_engine_close(b);
}

/* Real event lines cut at every byte, changed at every byte to one that
 * matters to JSON, and edited at random (seeded): every one decides (or is
 * refused) the same both ways, and the engines' states stay equal.  (A line
 * whose '{' is followed by '}' or white space is left out: both()'s member
 * put in front would not leave it as it is.) */
static void both_edited(dw_engine *a, dw_engine *b, const char *line, size_t len, int64_t ts, const char *where)
{
    if (len < 3 || line[1] == '}' || line[1] == ' ' || line[1] == '\t' || line[1] == '\n' || line[1] == '\r') return;
    both(a, b, line, len, ts, where);
}

static void test_prefixes_and_edits(void **state)
{
    (void)state;
    static const char *const lines[] = {
        "{\"action\":\"fs:read\",\"kind\":\"request\",\"input\":{\"path\":\"~/project/src/main.c\",\"operation\":{\"__entity\":{\"type\":\"Box::FsReadOperation\",\"id\":\"read_content\"}}}}",
        "{\"namespace\":\"Box\",\"action\":\"http:request\",\"kind\":\"request\",\"request_id\":\"r-1\",\"input\":{\"host\":\"api.github.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true}}",
        "{\"action\":\"http:request\",\"kind\":\"response\",\"input\":{\"host\":\"api.github.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/r\",\"body_bytes\":0,\"intercepted\":true},\"output\":{\"status\":200}}",
        "{\"action\":\"fs:read\",\"kind\":\"request\",\"principal\":{\"type\":\"Box::Agent\",\"id\":\"self\"},\"input\":{\"operation\":\"enumerate\",\"path\":\"~/project\"}}",
    };
    static const char bytes[] = "\"\\{}[],: 0-1.etfnu\x01\x80\xc3";
    char pol[512];
    snprintf(pol, sizeof pol, "%s/examples/box/06-http-request-budget/policy.dw", shared());
    dw_engine *a = open_engine(pol), *b = open_engine(pol);
    int64_t ts = 1748865600LL * 1000000000LL;
    char buf[1024], where[64];
    unsigned long n = 0;
    uint64_t x = 0x9E3779B97F4A7C15ull;
#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
    for (size_t l = 0; l < sizeof lines / sizeof *lines; l++) {
        const char *line = lines[l];
        size_t len = strlen(line);
        snprintf(where, sizeof where, "line %zu", l);
        for (size_t cut = 1; cut <= len; cut++, n++) both_edited(a, b, line, cut, (ts += 1000000), where);
        for (size_t at = 1; at < len; at++)
            for (size_t k = 0; k < sizeof bytes - 1; k++, n++) {
                memcpy(buf, line, len);
                buf[at] = bytes[k];
                both_edited(a, b, buf, len, (ts += 1000000), where);
            }
        for (int t = 0; t < 1500; t++, n++) {
            size_t bl = len;
            memcpy(buf, line, len);
            for (unsigned e = 0, ne = 1 + (unsigned)(RND() % 3); e < ne && bl > 1; e++) {
                size_t at = 1 + (size_t)(RND() % (bl - 1));
                switch (RND() % 3) {
                case 0: buf[at] = bytes[RND() % (sizeof bytes - 1)]; break;
                case 1: buf[at] = (char)(RND() & 0xff); break;
                default: memmove(buf + at, buf + at + 1, bl - at - 1); bl--; break;
                }
            }
            both_edited(a, b, buf, bl, (ts += 1000000), where);
        }
        same_state(a, b, where);
    }
#undef RND
    printf("%lu edited event lines decided both ways\n", n);
    dw_engine_close(a);
    dw_engine_close(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_examples),
        cmocka_unit_test(test_variants),
        cmocka_unit_test(test_kept_and_given_back),
        cmocka_unit_test(test_prefixes_and_edits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
