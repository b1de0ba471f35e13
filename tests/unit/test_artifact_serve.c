/* test_artifact_serve.c - the serving context an artifact carries (section
 * SERVE, vm/artifact_format.h) and the engine's open-from-artifact path
 * (runtime/engine_open.h), which dwd uses without a front end: the rebuilt
 * schemas equal the parsed ones, verdicts equal the source path's on every
 * Box example, and a damaged or hostile section is refused, never used. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>
#include "compiler/artifact_serve.h"
#include "compiler/artifact_write.h"
#include "runtime/artifact_serve.h"
#include "runtime/engine_open.h"
#include "runtime/engine_int.h"   /* the event reader's line heads (uids.head_hits) */
#include "runtime/json_request.h"   /* the slot bind memo rule (dw_read_cache_bind_is_current) */
#include "runtime/load.h"
#include "stdlib/le.h"
#include "vm/artifact.h"
#include "vm/artifact_format.h"

static const char *shared(void)
{
    const char *s = getenv("DW_SHARED");
    return s && *s ? s : "../shared";
}

static char ex06[4096];

/* What `dwc compile -s SCHEMA [--events E]` writes; serve: attach the SERVE section. */
static void compile_artifact(const char *policy, const char *schema, const char *events, bool serve, dw_buf *out)
{
    dw_session s;
    dw_session_init(&s);
    s.quiet = true;
    assert_int_equal(dw_session_load_schema(&s, schema), 0);
    assert_int_equal(dw_session_load_events(&s, events), 0);
    if (dw_session_load_policies(&s, policy)) fail_msg("%s: %s", policy, s.first_error);
    if (serve) assert_int_equal(dw_artifact_attach_serve(s.prog, s.schema, s.es, dw_session_events_digest(&s)), 0);
    assert_int_equal(dw_artifact_write(s.prog, dw_session_schema_digest(&s), out), 0);
    dw_session_free(&s);
}

/* Where the SERVE section's bytes are in an artifact. */
static size_t serve_offset(const uint8_t *b, size_t *size)
{
    uint32_t nsec = dw_le32(b + 8);
    size_t off = DW_ARTIFACT_HEADER + 8 * (size_t)nsec;
    for (uint32_t i = 0; i < nsec; i++) {
        uint32_t id = dw_le32(b + DW_ARTIFACT_HEADER + 8 * i), sz = dw_le32(b + DW_ARTIFACT_HEADER + 8 * i + 4);
        if (id == DW_SEC_SERVE) { *size = sz; return off; }
        off += sz;
    }
    fail_msg("no SERVE section");
    return 0;
}

/* A hostile writer's file: the checksum made right again. */
static void reseal(uint8_t *b, size_t n)
{
    dw_put_le64(b + 16, n);
    dw_put_le64(b + 24, XXH3_64bits_withSeed(b + 32, n - 32, XXH3_64bits(b, 16)));
}

static dw_engine *open_art(const dw_buf *a, const char *schema, const char *events, char *err, size_t cap)
{
    dw_engine_config cfg = { .policy_path = "t.dwb", .schema_path = schema, .events_path = events, .replay_timestamps = true };
    return dw_engine_open_artifact(&cfg, a->p, a->len, err, cap);
}

static char *print_schema(const dw_schema *s)
{
    char *p = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&p, &n);
    dw_schema_print(f, s);
    fclose(f);
    return p;
}

/* The rebuilt schemas are the parsed ones: the whole action schema prints
 * the same, and the event schema has the same kinds, keys and window. */
static void test_serve_round_trip(void **state)
{
    (void)state;
    const char *events[] = { "box", "default", "session-pinned", "unpinned" };
    for (size_t k = 0; k < sizeof events / sizeof *events; k++) {
        dw_session s;
        dw_session_init(&s);
        s.quiet = true;
        assert_int_equal(dw_session_load_schema(&s, "box"), 0);
        assert_int_equal(dw_session_load_events(&s, events[k]), 0);
        dw_program p = { 0 };
        dw_arena_init(&p.arena, 4096);
        assert_int_equal(dw_artifact_attach_serve(&p, s.schema, s.es, dw_session_events_digest(&s)), 0);
        dw_serve_ctx c;
        char msg[512];
        assert_int_equal(dw_serve_decode(p.serve, p.serve_len, &c, msg, sizeof msg), 0);
        char *want = print_schema(s.schema), *got = print_schema(c.schema);
        assert_string_equal(got, want);
        free(want);
        free(got);
        assert_int_equal(c.events_digest, XXH3_64bits(dw_event_schema_builtin_text(events[k]), strlen(dw_event_schema_builtin_text(events[k]))));
        assert_int_equal(c.es->max_window, s.es->max_window);
        assert_int_equal(c.es->ndecision_kinds, s.es->ndecision_kinds);
        for (size_t i = 0; i < c.es->ndecision_kinds; i++)
            assert_true(dw_event_schema_is_decision_kind(c.es, s.es->decision_kinds[i].s, s.es->decision_kinds[i].len));
        assert_int_equal(c.es->nkey, s.es->nkey);
        for (size_t i = 0; i < c.es->nkey; i++)
            assert_memory_equal(c.es->key[i].path.s, s.es->key[i].path.s, s.es->key[i].path.len);
        dw_serve_ctx_free(&c);
        dw_arena_free(&p.arena);
        dw_session_free(&s);
    }
}

/* Each line of path decided by both engines (requests: Cedar's request
 * form, else Box's event form): the same verdicts.  The number of lines. */
static int same_verdicts(dw_engine *ea, dw_engine *es, const char *path, bool requests)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[65536];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        size_t len = strcspn(line, "\n");
        dw_verdict va, vs;
        int ra = requests ? dw_engine_decide_request_json(ea, line, len, DW_TS_NOW, &va) : dw_engine_decide_json(ea, line, len, DW_TS_NOW, &va);
        int rs = requests ? dw_engine_decide_request_json(es, line, len, DW_TS_NOW, &vs) : dw_engine_decide_json(es, line, len, DW_TS_NOW, &vs);
        assert_int_equal(ra, rs);
        assert_int_equal(va.decided, vs.decided);
        assert_int_equal(va.allow, vs.allow);
        assert_int_equal(va.cause, vs.cause);
        assert_int_equal(va.ndetermining, vs.ndetermining);
        for (uint32_t i = 0; i < va.ndetermining; i++)
            assert_string_equal(dw_engine_rule_name(ea, va.determining[i]), dw_engine_rule_name(es, vs.determining[i]));
        assert_string_equal(va.message, vs.message);
        n++;
    }
    fclose(f);
    return n;
}

/* Verdicts from the artifact path equal the source path's, line by line,
 * on every Box example's requests and trace. */
static void test_verdicts_equal_source(void **state)
{
    (void)state;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/examples/box", shared());
    DIR *d = opendir(dir);
    if (!d) fail_msg("no Box examples under %s (set DW_SHARED to the shared directory)", dir);   /* never a silent skip */
    struct dirent *de;
    int examples = 0, lines = 0;
    while ((de = readdir(d))) {
        char pol[8192], rq[8192], tr[8192];
        snprintf(pol, sizeof pol, "%s/%s/policy.dw", dir, de->d_name);
        snprintf(rq, sizeof rq, "%s/%s/requests.jsonl", dir, de->d_name);
        snprintf(tr, sizeof tr, "%s/%s/trace.jsonl", dir, de->d_name);
        FILE *f = fopen(pol, "r");
        if (!f) continue;
        fclose(f);
        dw_buf a = { 0 };
        compile_artifact(pol, "box", NULL, true, &a);
        char err[512];
        for (int pass = 0; pass < 2; pass++) {   /* each stream on fresh engines */
            dw_engine *ea = open_art(&a, "box", NULL, err, sizeof err);
            if (!ea) fail_msg("%s: %s", pol, err);
            dw_engine_config cfg = { .policy_path = pol, .schema_path = "box", .replay_timestamps = true };
            dw_engine *es = dw_engine_open(&cfg, err, sizeof err);
            if (!es) fail_msg("%s: %s", pol, err);
            lines += same_verdicts(ea, es, pass ? tr : rq, !pass);
            dw_engine_close(ea);
            dw_engine_close(es);
        }
        dw_buf_free(&a);
        examples++;
    }
    closedir(d);
    assert_true(examples >= 8);
    assert_true(lines >= 40);
}

/* Every bit of the section flipped: refused by the checksum (the file is corrupt). */
static void test_damage_refused(void **state)
{
    (void)state;
    dw_buf a = { 0 };
    compile_artifact(ex06, "box", NULL, true, &a);
    size_t size, off = serve_offset((const uint8_t *)a.p, &size);
    assert_true(size > 100);
    char err[512];
    for (size_t i = 0; i < size; i++) {
        for (int bit = 0; bit < 8; bit += 3) {
            a.p[off + i] ^= (char)(1 << bit);
            dw_engine *e = open_art(&a, "box", NULL, err, sizeof err);
            if (e) fail_msg("byte %zu bit %d of SERVE flipped: the artifact was served", i, bit);
            assert_non_null(strstr(err, "t.dwb: error: artifact refused: artifact checksum mismatch"));
            a.p[off + i] ^= (char)(1 << bit);
        }
    }
    dw_engine *e = open_art(&a, "box", NULL, err, sizeof err);
    assert_non_null(e);
    dw_engine_close(e);
    dw_buf_free(&a);
}

/* A hostile writer (checksum right): structural damage is refused by the
 * decoder with its reason; any flip either opens or is refused, never
 * crashes (ASan build). */
static void test_hostile_refused(void **state)
{
    (void)state;
    dw_buf a = { 0 };
    compile_artifact(ex06, "box", NULL, true, &a);
    size_t size, off = serve_offset((const uint8_t *)a.p, &size);
    uint8_t *b = (uint8_t *)a.p;
    char err[512];
    /* the decision-kind count (after two u64s and a flag) made huge */
    uint8_t keep[4];
    memcpy(keep, b + off + 17, 4);
    dw_put_le32(b + off + 17, 0xFFFFFFFFu);
    reseal(b, a.len);
    assert_null(open_art(&a, "box", NULL, err, sizeof err));
    assert_non_null(strstr(err, "artifact refused: serving context (SERVE section) is malformed at byte 21: a count of 4294967295 exceeds the bytes left"));
    memcpy(b + off + 17, keep, 4);
    /* the has_max_window flag not 0 or 1 */
    b[off + 16] = 7;
    reseal(b, a.len);
    assert_null(open_art(&a, "box", NULL, err, sizeof err));
    assert_non_null(strstr(err, "is malformed at byte 17: a flag is 7, not 0 or 1"));
    b[off + 16] = 0;
    reseal(b, a.len);
    dw_engine *e = open_art(&a, "box", NULL, err, sizeof err);
    if (!e) fail_msg("restored: %s", err);
    dw_engine_close(e);
    /* the decoder on every prefix of the section: each refused */
    dw_serve_ctx c;
    for (size_t n = 0; n < size; n++) {
        assert_int_equal(dw_serve_decode(b + off, n, &c, err, sizeof err), -1);
        assert_non_null(strstr(err, "serving context (SERVE section) is malformed"));
    }
    /* one byte too many */
    uint8_t *more = malloc(size + 1);
    memcpy(more, b + off, size);
    more[size] = 0;
    assert_int_equal(dw_serve_decode(more, size + 1, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "1 bytes follow the last action"));
    /* every byte of it replaced, resealed: opened or refused, never a crash or a leak */
    int refused = 0;
    for (size_t i = 0; i < size; i++) {
        uint8_t was = b[off + i];
        b[off + i] = (uint8_t)(was ^ 0x80);
        reseal(b, a.len);
        e = open_art(&a, "box", NULL, err, sizeof err);
        if (e) dw_engine_close(e);
        else { refused++; assert_non_null(strstr(err, "t.dwb: error: artifact refused: ")); }
        b[off + i] = was;
    }
    assert_true(refused > 0);
    free(more);
    dw_buf_free(&a);
}

/* What the configuration names must be what the artifact was compiled for;
 * a file compiled with a schema but without a serving context is refused. */
static void test_configuration_checked(void **state)
{
    (void)state;
    char err[512];
    dw_buf a = { 0 }, old = { 0 }, plain = { 0 };
    compile_artifact(ex06, "box", NULL, true, &a);
    assert_null(open_art(&a, "box", "default", err, sizeof err));
    assert_non_null(strstr(err, "t.dwb: error: artifact refused: compiled with another event schema than default"));
    dw_engine *e = open_art(&a, "box", "box", err, sizeof err);
    assert_non_null(e);
    dw_engine_close(e);
    e = open_art(&a, NULL, NULL, err, sizeof err);    /* no schema named: the artifact's own gate */
    assert_non_null(e);
    dw_verdict v;
    const char *undeclared = "{\"action\":\"no:such\",\"kind\":\"request\",\"input\":{}}";
    dw_engine_decide_json(e, undeclared, strlen(undeclared), 1, &v);
    assert_false(v.allow);
    assert_non_null(strstr(v.message, "is not declared in the schema"));
    dw_engine_close(e);
    compile_artifact(ex06, "box", NULL, false, &old);
    assert_null(open_art(&old, "box", NULL, err, sizeof err));
    assert_non_null(strstr(err, "artifact refused: it carries no serving context"));
    dw_session s;
    dw_session_init(&s);
    assert_int_equal(dw_session_load_policies(&s, ex06), 0);
    assert_int_equal(dw_artifact_write(s.prog, 0, &plain), 0);
    dw_session_free(&s);
    assert_null(open_art(&plain, "box", NULL, err, sizeof err));
    assert_non_null(strstr(err, "artifact refused: not checked against the Box profile"));
    const char text[] = "permit(principal, action, resource);";
    dw_buf t = { (char *)text, sizeof text - 1, 0 };
    assert_null(open_art(&t, "box", NULL, err, sizeof err));
    assert_non_null(strstr(err, "t.dwb: error: not a compiled policy artifact"));
    dw_buf_free(&a);
    dw_buf_free(&old);
    dw_buf_free(&plain);
}

/* A reload checks the new artifact's serving context: damaged (resealed) or
 * compiled with another event schema, it is refused and the old set stays. */
static void test_reload_checks_serve(void **state)
{
    (void)state;
    char err[512];
    dw_buf a = { 0 }, other = { 0 };
    compile_artifact(ex06, "box", NULL, true, &a);
    compile_artifact(ex06, "box", "default", true, &other);
    dw_engine *e = open_art(&a, "box", NULL, err, sizeof err);
    assert_non_null(e);
    /* engines from an artifact know their event schema even when not durable */
    assert_int_equal(dw_engine_reload(e, other.p, other.len, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "artifact refused: compiled with another event schema than this engine's"));
    size_t size, off = serve_offset((const uint8_t *)a.p, &size);
    dw_buf bad = { 0 };
    dw_buf_append(&bad, a.p, a.len);
    dw_put_le32(bad.p + off + 17, 0xFFFFFFFFu);
    reseal((uint8_t *)bad.p, bad.len);
    assert_int_equal(dw_engine_reload(e, bad.p, bad.len, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "artifact refused: serving context (SERVE section) is malformed"));
    dw_reload_info info;
    assert_int_equal(dw_engine_reload(e, a.p, a.len, &info, err, sizeof err), 0);
    assert_int_equal(info.generation, 1);
    dw_engine_close(e);
    dw_buf_free(&a);
    dw_buf_free(&other);
    dw_buf_free(&bad);
}

/* A reload between two decisions of the same event line: the event
 * reader's line head (engine_event.c), the action's memo and its bind
 * (bind_request) were read under the old program; the decision after the
 * reload must be the new program's (a stale bind or head would keep the
 * old answer), and back again after reloading the first. */
static void test_reload_not_stale(void **state)
{
    (void)state;
    char ex01[4096], deny[] = "/tmp/dw-reload-XXXXXX", err[512];
    snprintf(ex01, sizeof ex01, "%s/examples/box/01-project-read/policy.dw", shared());
    FILE *in = fopen(ex01, "r");
    int fd = mkstemp(deny);
    assert_non_null(in);
    assert_true(fd >= 0);
    FILE *out = fdopen(fd, "w");
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, in)) > 0) fwrite(chunk, 1, n, out);
    fclose(in);
    fputs("\n@id(\"no_reads\")\n@description(\"No reads at all\")\nforbid (principal, action == Box::Action::\"fs:read\", resource);\n", out);
    fclose(out);
    dw_buf a = { 0 }, b = { 0 };
    compile_artifact(ex01, "box", NULL, true, &a);
    compile_artifact(deny, "box", NULL, true, &b);
    unlink(deny);
    dw_engine *e = open_art(&a, "box", NULL, err, sizeof err);
    assert_non_null(e);
    const char *line = "{\"action\":\"fs:read\",\"kind\":\"request\",\"input\":{\"path\":\"~/project/src/main.c\",\"operation\":{\"__entity\":{\"type\":\"Box::FsReadOperation\",\"id\":\"read_content\"}}}}";
    const dw_buf *set[] = { &a, &b, &a, &b };
    dw_verdict v;
    int64_t ts = 1;
    uint64_t heads = e->uids.head_hits;
    for (int r = 0; r < 4; r++) {
        if (r) assert_int_equal(dw_engine_reload(e, set[r]->p, set[r]->len, NULL, err, sizeof err), 0);
        for (int k = 0; k < 3; k++) {   /* the first after a reload reads the line; the others take its head */
            dw_engine_decide_json(e, line, strlen(line), ts++, &v);
            assert_true(v.decided);
            if (set[r] == &a) assert_true(v.allow);
            else {
                assert_false(v.allow);
                assert_int_equal(v.cause, DW_CAUSE_FORBIDDEN);
            }
        }
        assert_true(e->uids.head_hits >= heads + 2);
        heads = e->uids.head_hits;
    }
    dw_engine_close(e);
    dw_buf_free(&a);
    dw_buf_free(&b);
}

/* text in a temporary file: its path in path[] (the caller unlinks it) */
static void temp_policy(char path[32], const char *text)
{
    strcpy(path, "/tmp/dw-bind-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
}

/* Explicit principals and resources (a schema other than Box's fixed
 * scope): the event reader's cache keeps each reading's bind (the program's
 * canonical uid and the store's entity, engine_event.c bind_request) for the
 * program and reload generation it was made under.  After each reload the
 * decisions are the new program's (a stale bind would point into the freed
 * one: ASan's run), and the binds are kept again. */
static void test_reload_scope_bind(void **state)
{
    (void)state;
    char schema[4096], pa[32], pb[32], err[512];
    snprintf(schema, sizeof schema, "%s/spec/box/actions.cedarschema", shared());
    temp_policy(pa, "permit (principal == Box::Agent::\"other\", action == Box::Action::\"fs:read\", resource == Box::Resource::\"unused\");\n");
    temp_policy(pb, "forbid (principal == Box::Agent::\"other\", action, resource);\n"
                    "permit (principal == Box::Agent::\"self\", action == Box::Action::\"fs:read\", resource == Box::Resource::\"unused\");\n");
    dw_buf a = { 0 }, b = { 0 };
    compile_artifact(pa, schema, NULL, true, &a);
    compile_artifact(pb, schema, NULL, true, &b);
    unlink(pa);
    unlink(pb);
    dw_engine *e = open_art(&a, schema, NULL, err, sizeof err);
    if (!e) fail_msg("%s", err);
    static const char *const who[2] = { "other", "self" };
    char line[2][512];
    for (int w = 0; w < 2; w++)
        snprintf(line[w], sizeof line[w], "{\"action\":\"fs:read\",\"kind\":\"request\",\"principal\":{\"type\":\"Box::Agent\",\"id\":\"%s\"},"
                 "\"resource\":{\"type\":\"Box::Resource\",\"id\":\"unused\"},\"input\":{\"path\":\"~/p\",\"operation\":{\"__entity\":{\"type\":\"Box::FsReadOperation\",\"id\":\"read_content\"}}}}", who[w]);
    const dw_buf *set[] = { &a, &b, &a, &b };
    int64_t ts = 1;
    for (int r = 0; r < 4; r++) {
        if (r) assert_int_equal(dw_engine_reload(e, set[r]->p, set[r]->len, NULL, err, sizeof err), 0);
        for (int k = 0; k < 3; k++)
            for (int w = 0; w < 2; w++) {
                dw_verdict v;
                dw_engine_decide_json(e, line[w], strlen(line[w]), ts++, &v);
                if (!v.decided) fail_msg("round %d: %s", r, v.message);
                assert_int_equal(v.allow, (set[r] == &a) == (w == 0));
            }
        int kept = 0;   /* the readings whose bind is this program's */
        for (size_t k = 0; k < DW_READ_CACHE_UID_SLOTS; k++)
            kept += dw_read_cache_bind_is_current(&e->uids.slot[k], e->s.prog->serial, e->s.store.serial);
        assert_true(kept >= 3);   /* both principals and the resource */
    }
    dw_engine_close(e);
    dw_buf_free(&a);
    dw_buf_free(&b);
}

int main(void)
{
    snprintf(ex06, sizeof ex06, "%s/examples/box/06-http-request-budget/policy.dw", shared());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_serve_round_trip),
        cmocka_unit_test(test_verdicts_equal_source),
        cmocka_unit_test(test_damage_refused),
        cmocka_unit_test(test_hostile_refused),
        cmocka_unit_test(test_configuration_checked),
        cmocka_unit_test(test_reload_checks_serve),
        cmocka_unit_test(test_reload_not_stale),
        cmocka_unit_test(test_reload_scope_bind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
