/* Limits (docs/RELIABILITY.md, "Limits"): hostile sizes on every input
 * surface.  Each must give a clear error (with `file:line:col` and a hint
 * where the input is text) or run in bounded work and memory, never overflow
 * the stack.  The suite runs under ASan+UBSan too, where stack frames are
 * several times larger, so a recursion these inputs could drive would show.
 *   - 10,000 levels of parentheses, `!`, `-`, `if`, `&&`, `||`, `+`, `.a`,
 *     records and sets in policies; `!`, parentheses and `&&` in temporal
 *     bodies; 10,000 levels of arrays/objects in entities, contexts and JSON
 *     schemas; records/sets in human schemas; groups in `.dwschema`; values
 *     in `.log` traces; values in artifacts (a crafted file);
 *   - just under each limit: everything parses, validates, compiles, writes,
 *     loads, verifies and decides;
 *   - MB strings, 100,000-element sets, entity hierarchy cycles and chains,
 *     100,000 policies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>
#include "compiler/artifact_write.h"
#include "compiler/compile.h"
#include "compiler/typecheck.h"
#include "lang/eventschema.h"
#include "lang/json.h"
#include "lang/schema.h"
#include "runtime/json_value.h"
#include "runtime/load.h"
#include "runtime/trace_log.h"
#include "unit_compile.h"
#include "vm/artifact.h"
#include "vm/artifact_format.h"
#include "vm/vm.h"

#define DEEP 10000

/* ---------------------------------------------------------------- text building */

typedef struct sb { char *p; size_t n, cap; } sb;

static void add(sb *b, const char *s, size_t k)
{
    if (b->n + k + 1 > b->cap) {
        b->cap = (b->n + k + 1) * 2;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    memcpy(b->p + b->n, s, k);
    b->n += k;
    b->p[b->n] = 0;
}
static void adds(sb *b, const char *s) { add(b, s, strlen(s)); }
static void rep(sb *b, const char *s, size_t times) { for (size_t i = 0; i < times; i++) adds(b, s); }

/* pre + open*n + mid + close*n + post */
static char *nest(const char *pre, const char *open, size_t n, const char *mid, const char *close, const char *post)
{
    sb b = { 0 };
    adds(&b, pre); rep(&b, open, n); adds(&b, mid); rep(&b, close, n); adds(&b, post);
    return b.p;
}

/* pre + item (sep item)*(n-1) + post */
static char *chain(const char *pre, const char *item, const char *sep, size_t n, const char *post)
{
    sb b = { 0 };
    adds(&b, pre);
    for (size_t i = 0; i < n; i++) { if (i) adds(&b, sep); adds(&b, item); }
    adds(&b, post);
    return b.p;
}

/* ---------------------------------------------------------------- checks */

/* The first error names a position in the text, mentions `want`, has a hint
 * when `hint` is set. */
static void expect_diag(const dw_diags *d, const char *what, const char *want, bool hint)
{
    if (d->nerrors == 0) fail_msg("%s: accepted, wanted an error \"%s\"", what, want);
    const dw_diag *e = NULL;
    for (size_t i = 0; i < d->n && !e; i++) if (d->v[i].sev == DW_SEV_ERROR) e = &d->v[i];
    assert_non_null(e);
    if (!strstr(e->msg, want)) fail_msg("%s: error \"%s\", wanted \"%s\"", what, e->msg, want);
    if (e->loc.line < 1 || e->loc.col < 1) fail_msg("%s: error without a position", what);
    if (hint && !e->hint) fail_msg("%s: error \"%s\" without a hint", what, e->msg);
}

static void policy_refused(const char *what, char *text, const char *want)
{
    dw_source src = { "deep.cedar", text, strlen(text) };
    dw_diags d;
    dw_diags_init(&d);
    dw_policy_set *ps = dw_parse_policy_set(&src, &d);
    expect_diag(&d, what, want, true);
    if (ps) dw_policy_set_free(ps);
    dw_diags_free(&d);
    free(text);
}

static dw_request request(dw_arena *a, const char *context_json)
{
    char text[256];
    snprintf(text, sizeof text, "{\"p\":{\"type\":\"User\",\"id\":\"alice\"},\"a\":{\"type\":\"Action\",\"id\":\"view\"},"
                                "\"r\":{\"type\":\"Photo\",\"id\":\"x\"}}");
    char *copy = dw_arena_alloc(a, strlen(text) + 1);
    memcpy(copy, text, strlen(text) + 1);
    dw_source src = { "req.json", copy, strlen(text) };
    dw_diags d;
    dw_diags_init(&d);
    const dw_json *j = dw_json_parse(a, &src, &d);
    assert_non_null(j);
    const dw_json *c = NULL;
    if (context_json) {
        dw_source cs = { "context.json", context_json, strlen(context_json) };
        c = dw_json_parse(a, &cs, &d);
        assert_non_null(c);
    }
    dw_diags_free(&d);
    dw_request r;
    dw_buf err = { 0 };
    if (dw_request_from_json(a, dw_json_get(j, "p"), dw_json_get(j, "a"), dw_json_get(j, "r"), c, NULL, false, &r, &err))
        fail_msg("request: %s", err.p);
    dw_buf_free(&err);
    return r;
}

/* Parse, compile, write, load (verify) and decide: the in-memory and loaded
 * programs must agree.  Returns the decision. */
static bool decide_text(const char *what, const char *text, const dw_store *st, const char *context_json, uint32_t *nerr)
{
    dw_program *p = unit_compile(what, text);
    dw_buf b = { 0 };
    assert_int_equal(dw_artifact_write(p, 0, &b), 0);
    char msg[256];
    dw_program *q = dw_artifact_load(b.p, b.len, msg, sizeof msg);
    if (!q) fail_msg("%s: its artifact is refused: %s", what, msg);
    dw_arena a;
    dw_arena_init(&a, 4096);
    dw_request r = request(&a, context_json);
    dw_response x, y;
    assert_int_equal(dw_authorize(p, st, &r, &a, &x), 0);
    assert_int_equal(dw_authorize(q, st, &r, &a, &y), 0);
    assert_int_equal(x.allow, y.allow);
    assert_int_equal(x.ndetermining, y.ndetermining);
    assert_int_equal(x.nerrors, y.nerrors);
    bool allow = x.allow;
    if (nerr) *nerr = x.nerrors;
    dw_arena_free(&a);
    dw_program_free(q);
    dw_buf_free(&b);
    dw_program_free(p);
    return allow;
}

static dw_store *empty_store(void)
{
    static dw_store st;
    static bool ready;
    if (!ready) { unit_empty_store(&st); ready = true; }
    return &st;
}

#define POL "permit (principal, action, resource) when { "
#define END " };\n"

/* ---------------------------------------------------------------- policies */

static void test_policy_nesting(void **state)
{
    policy_refused("parentheses", nest(POL, "(", DEEP, "true", ")", END), "nested too deeply");
    policy_refused("!", nest(POL, "!", DEEP, "true", "", END), "too many occurrences of `!`");
    policy_refused("-", nest(POL, "-", DEEP, "1", "", " == 1" END), "too many occurrences of `-`");
    policy_refused("!(", nest(POL, "!(", DEEP, "true", ")", END), "nested too deeply");
    policy_refused("-(", nest(POL, "-(", DEEP, "1", ")", " == 1" END), "nested too deeply");
    policy_refused("if", nest(POL, "if true then ", DEEP, "true", " else false", END), "nested too deeply");
    policy_refused("if in condition", nest(POL, "if (", DEEP, "true", ") then true else false", END), "nested too deeply");
    policy_refused("&&", chain(POL, "true", " && ", DEEP, END), "nested too deeply");
    policy_refused("||", chain(POL, "true", " || ", DEEP, END), "nested too deeply");
    policy_refused("+", chain(POL, "1", " + ", DEEP, " == 1" END), "nested too deeply");
    policy_refused("*", chain(POL, "1", " * ", DEEP, " == 1" END), "nested too deeply");
    policy_refused(".a", nest(POL "context", ".a", DEEP, "", "", " == 1" END), "nested too deeply");
    policy_refused("has", nest(POL "context has a", ".a", DEEP, "", "", END), "nested too deeply");
    policy_refused("records", nest(POL, "{a: ", DEEP, "1", "}", " == {}" END), "nested too deeply");
    policy_refused("sets", nest(POL, "[", DEEP, "1", "]", " == []" END), "nested too deeply");
    policy_refused("method calls", nest(POL, "[1].contains(", DEEP, "1", ")", END), "nested too deeply");
    policy_refused("like", nest(POL, "(", DEEP, "\"a\" like \"*\"", ")", END), "nested too deeply");
    policy_refused("ip()", nest(POL, "ip(", DEEP, "\"1.2.3.4\"", ")", ".isIpv4()" END), "nested too deeply");
    policy_refused("in", chain(POL "User::\"a\"", " in User::\"a\"", "", DEEP, END), "");
    /* temporal bodies have their own parser (lang/temporal.c) */
#define TPOL "forbid (principal, action, resource) when temporal { "
#define PRED "Box::Action::\"http:request\"::request{}"
    policy_refused("temporal parentheses", nest(TPOL, "(", DEEP, PRED, ")", END), "temporal body nested too deeply");
    policy_refused("temporal !", nest(TPOL, "!", DEEP, PRED, "", END), "temporal body nested too deeply");
    policy_refused("temporal !(", nest(TPOL, "!(", DEEP, PRED, ")", END), "temporal body nested too deeply");
    policy_refused("temporal &&", chain(TPOL, PRED, " && ", DEEP, END), "temporal body nested too deeply");
    policy_refused("temporal formerly", nest(TPOL, "formerly within 1h (", DEEP, PRED, ")", END), "temporal body nested too deeply");
}

/* Temporal rules near the limit go through the whole front end (macros,
 * well-formedness, lowering to tables) and the artifact verifier. */
static void test_temporal_near_limit(void **state)
{
    char *texts[] = { chain(TPOL, PRED, " && ", 240, END), nest(TPOL, "!", 240, PRED, "", END),
                      nest(TPOL, "formerly within 1h (", 120, PRED, ")", END) };
    for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
        char path[64];
        snprintf(path, sizeof path, "/tmp/test_limits_%d.dw", (int)getpid());
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(texts[k], f);
        fclose(f);
        dw_session s;
        dw_session_init(&s);
        assert_int_equal(dw_session_load_schema(&s, "box"), 0);
        assert_int_equal(dw_session_load_events(&s, NULL), 0);
        if (dw_session_load_policies(&s, path)) fail_msg("temporal text %zu refused", k);
        dw_buf b = { 0 };
        assert_int_equal(dw_artifact_write(s.prog, 0, &b), 0);
        char msg[256];
        dw_program *q = dw_artifact_load(b.p, b.len, msg, sizeof msg);
        if (!q) fail_msg("temporal text %zu: artifact refused: %s", k, msg);
        dw_program_free(q);
        dw_buf_free(&b);
        dw_session_free(&s);
        unlink(path);
        free(texts[k]);
    }
}

/* Just under the limit every pass runs: type checker, compiler, writer,
 * loader, verifier and interpreter see ~250 levels. */
static void test_policy_near_limit(void **state)
{
    const size_t n = 240;
    char *t;
    t = nest(POL, "(", n, "true", ")", END); assert_true(decide_text("parentheses", t, empty_store(), NULL, NULL)); free(t);
    t = nest(POL, "!(", n, "true", ")", END); assert_true(decide_text("!(", t, empty_store(), NULL, NULL)); free(t);
    t = nest(POL, "-(", n, "1", ")", " == 1" END); assert_true(decide_text("-(", t, empty_store(), NULL, NULL)); free(t);
    t = nest(POL, "if true then ", n, "true", " else false", END); assert_true(decide_text("if", t, empty_store(), NULL, NULL)); free(t);
    t = chain(POL, "true", " && ", n, END); assert_true(decide_text("&&", t, empty_store(), NULL, NULL)); free(t);
    t = chain(POL, "false", " || ", n, " || true" END); assert_true(decide_text("||", t, empty_store(), NULL, NULL)); free(t);
    t = chain(POL, "1", " + ", n, " == 240" END); assert_true(decide_text("+", t, empty_store(), NULL, NULL)); free(t);
    /* equal nested values: the comparison recurses through every level */
    sb b = { 0 };
    char *r1 = nest("", "{a: ", n / 2 - 4, "1", "}", ""), *s1 = nest("", "[", n / 2 - 4, "1", "]", "");
    adds(&b, POL); adds(&b, r1); adds(&b, " == "); adds(&b, r1); adds(&b, " && "); adds(&b, s1); adds(&b, " == "); adds(&b, s1); adds(&b, END);
    assert_true(decide_text("records and sets", b.p, empty_store(), NULL, NULL));
    free(b.p); free(r1); free(s1);
    /* a nested context attribute, 120 levels, read 120 levels deep */
    char *ctx = nest("{\"x\": ", "{\"a\": ", 120, "7", "}", "}");
    t = nest(POL "context.x", ".a", 120, "", "", " == 7" END);
    assert_true(decide_text("context path", t, empty_store(), ctx, NULL));
    free(t); free(ctx);
}

/* `e has a.b.c` holds e once (DW_E_HAS_PATH, one HASPATH instruction): a path over a
 * parenthesised path, k deep, is k nodes (it was 3^k when each name copied e, refused from k = 12).
 * k = 40 decides as Cedar does (a Bool has no attributes: the policy errs, so deny); past the depth
 * bound (§19) it is refused like any nesting */
static void test_has_path_nesting(void **state)
{
    uint32_t nerr = 0;
    char *t = nest(POL, "(", 39, "context has a.b.c", ") has a.b.c", END);
    assert_false(decide_text("nested has paths", t, empty_store(), NULL, &nerr));
    assert_int_equal(nerr, 1);
    free(t);
    /* every step true, 100 names */
    char *ctx = nest("", "{\"a\": ", 100, "1", "}", "");
    t = nest(POL "context has a", ".a", 99, "", "", END);
    assert_true(decide_text("a long has path", t, empty_store(), ctx, NULL));
    free(t); free(ctx);
    policy_refused("nested has paths past the depth bound", nest(POL, "(", DEEP, "context has a.b.c", ") has a.b.c", END),
                   "nested too deeply");
}

/* ---------------------------------------------------------------- JSON, schemas, event schemas, traces */

static void json_refused(const char *what, char *text)
{
    dw_source src = { "deep.json", text, strlen(text) };
    dw_diags d;
    dw_diags_init(&d);
    dw_arena a;
    dw_arena_init(&a, 4096);
    assert_null(dw_json_parse(&a, &src, &d));
    expect_diag(&d, what, "nested too deeply", false);
    dw_arena_free(&a);
    dw_diags_free(&d);
    free(text);
}

static void test_json_nesting(void **state)
{
    json_refused("entity attribute arrays",
                 nest("[{\"uid\":{\"type\":\"A\",\"id\":\"a\"},\"attrs\":{\"x\":", "[", DEEP, "1", "]", "},\"parents\":[]}]"));
    json_refused("entity attribute records",
                 nest("[{\"uid\":{\"type\":\"A\",\"id\":\"a\"},\"attrs\":{\"x\":", "{\"a\":", DEEP, "1", "}", "},\"parents\":[]}]"));
    json_refused("request context", nest("", "{\"a\":", DEEP, "1", "}", ""));
    json_refused("__extn arguments", nest("", "{\"__extn\":{\"fn\":\"ip\",\"arg\":", DEEP, "\"1.2.3.4\"", "}}", ""));
    char *s = nest("{\"\":{\"entityTypes\":{\"A\":{\"shape\":", "{\"type\":\"Record\",\"attributes\":{\"a\":", DEEP,
                   "{\"type\":\"Long\"}", "}}", "}},\"actions\":{}}}");
    dw_source src = { "deep.cedarschema.json", s, strlen(s) };
    dw_diags d;
    dw_diags_init(&d);
    assert_null(dw_schema_parse(&src, &d));
    expect_diag(&d, "JSON schema records", "nested too deeply", false);
    dw_diags_free(&d);
    free(s);
    /* 120 levels load into the store and compare */
    char *ent = nest("[{\"uid\":{\"type\":\"A\",\"id\":\"a\"},\"attrs\":{\"x\":", "[", 120, "1", "]", "},\"parents\":[]}]");
    dw_source es = { "ok.json", ent, strlen(ent) };
    dw_diags_init(&d);
    dw_store st;
    dw_store_init(&st);
    const dw_json *j = dw_json_parse(&st.arena, &es, &d);
    assert_non_null(j);
    dw_buf err = { 0 };
    assert_int_equal(dw_store_load_json(&st, j, NULL, &err), 0);
    dw_buf_free(&err);
    dw_store_free(&st);
    dw_diags_free(&d);
    free(ent);
}

static void test_schema_nesting(void **state)
{
    const char *kinds[][3] = { { "entity A { a: ", "{a: ", "}" }, { "entity A { a: ", "Set<", ">" } };
    for (int k = 0; k < 2; k++) {
        char *s = nest(kinds[k][0], kinds[k][1], DEEP, "Long", kinds[k][2], " };");
        dw_source src = { "deep.cedarschema", s, strlen(s) };
        dw_diags d;
        dw_diags_init(&d);
        assert_null(dw_schema_parse(&src, &d));
        expect_diag(&d, "human schema", "nested too deeply", false);
        dw_diags_free(&d);
        free(s);
    }
    /* common types referring to each other in a long chain resolve or are refused, never recurse unboundedly */
    sb b = { 0 };
    for (int i = 0; i < DEEP; i++) { char line[64]; snprintf(line, sizeof line, "type T%d = T%d;\n", i, i + 1); adds(&b, line); }
    adds(&b, "type T10000 = Long;\nentity A { a: T0 };\n");
    dw_source src = { "chain.cedarschema", b.p, b.n };
    dw_diags d;
    dw_diags_init(&d);
    dw_schema *sc = dw_schema_parse(&src, &d);
    if (sc) dw_schema_free(sc);
    dw_diags_free(&d);
    free(b.p);
}

static void test_eventschema_nesting(void **state)
{
    char *s = nest("decision event <A>::request {\n  ", "g: { ", DEEP, "x: String", " }", "\n}\n");
    dw_source src = { "deep.dwschema", s, strlen(s) };
    dw_diags d;
    dw_diags_init(&d);
    assert_null(dw_event_schema_parse(&src, &d));
    expect_diag(&d, ".dwschema groups", "nested too deeply", false);
    dw_diags_free(&d);
    free(s);
}

static void test_trace_nesting(void **state)
{
    const char *opens[] = { "[", "{ a: " }, *closes[] = { "]", " }" };
    for (int k = 0; k < 2; k++) {
        char *s = nest("@0 scope(principal: A::\"a\", resource: A::\"b\") Ns::Action::\"x\"::request(v: ", opens[k], DEEP, "1",
                       closes[k], ")\n");
        dw_source src = { "deep.log", s, strlen(s) };
        dw_diags d;
        dw_diags_init(&d);
        dw_arena a;
        dw_arena_init(&a, 4096);
        dw_tlog log;
        assert_int_not_equal(dw_tlog_parse(&a, &src, &d, &log), 0);
        expect_diag(&d, ".log values", "nested deeper than", false);
        dw_tlog_free(&log);
        dw_arena_free(&a);
        dw_diags_free(&d);
        free(s);
    }
}

/* ---------------------------------------------------------------- artifacts: deep values */

typedef struct section { uint32_t id, size; const uint8_t *p; } section;

/* A crafted artifact: two chains of one-element sets, `depth` levels deep
 * over the Longs 1 and 2, and a set holding both tops (building it compares
 * the chains to the bottom); every Set constant is pointed at it. */
static void deep_value_artifact(const dw_buf *orig, uint32_t depth, dw_buf *out)
{
    const uint8_t *b = (const uint8_t *)orig->p;
    uint32_t nsec;
    memcpy(&nsec, b + 8, 4);
    section sec[64];
    assert_true(nsec < 64);
    size_t off = DW_ARTIFACT_HEADER + 8 * (size_t)nsec;
    for (uint32_t i = 0; i < nsec; i++) {
        memcpy(&sec[i].id, b + DW_ARTIFACT_HEADER + 8 * i, 4);
        memcpy(&sec[i].size, b + DW_ARTIFACT_HEADER + 8 * i + 4, 4);
        sec[i].p = b + off;
        off += sec[i].size;
    }
    section *vs = NULL, *fs = NULL, *cs = NULL;
    for (uint32_t i = 0; i < nsec; i++) {
        if (sec[i].id == DW_SEC_VALUES) vs = &sec[i];
        if (sec[i].id == DW_SEC_FIELDS) fs = &sec[i];
        if (sec[i].id == DW_SEC_CONSTS) cs = &sec[i];
    }
    assert_non_null(vs); assert_non_null(fs); assert_non_null(cs);
    uint32_t nv = vs->size / 16, nf = fs->size / 8, one = UINT32_MAX, two = UINT32_MAX;
    for (uint32_t i = 0; i < nv; i++) {
        int64_t x;
        memcpy(&x, vs->p + 16 * i + 8, 8);
        if (vs->p[16 * i] == DW_V_LONG && x == 1) one = i;
        if (vs->p[16 * i] == DW_V_LONG && x == 2) two = i;
    }
    assert_int_not_equal(one, UINT32_MAX);
    assert_int_not_equal(two, UINT32_MAX);
    size_t add_v = 2 * (size_t)depth + 1, add_f = 2 * (size_t)depth + 2;
    uint8_t *nvp = malloc(vs->size + 16 * add_v), *nfp = malloc(fs->size + 8 * add_f), *ncp = malloc(cs->size);
    memcpy(nvp, vs->p, vs->size);
    memcpy(nfp, fs->p, fs->size);
    memcpy(ncp, cs->p, cs->size);
    uint32_t v = nv, f = nf, top[2] = { one, two };
    for (uint32_t lvl = 0; lvl < depth; lvl++)
        for (int c = 0; c < 2; c++) {
            uint32_t key = 0xFFFFFFFFu, n = 1;
            uint64_t first = f;
            memcpy(nfp + 8 * f, &key, 4); memcpy(nfp + 8 * f + 4, &top[c], 4); f++;
            memset(nvp + 16 * v, 0, 16);
            nvp[16 * v] = DW_V_SET;
            memcpy(nvp + 16 * v + 4, &n, 4); memcpy(nvp + 16 * v + 8, &first, 8);
            top[c] = v++;
        }
    uint32_t key = 0xFFFFFFFFu, n = 2;
    uint64_t first = f;
    for (int c = 0; c < 2; c++) { memcpy(nfp + 8 * f, &key, 4); memcpy(nfp + 8 * f + 4, &top[c], 4); f++; }
    memset(nvp + 16 * v, 0, 16);
    nvp[16 * v] = DW_V_SET;
    memcpy(nvp + 16 * v + 4, &n, 4); memcpy(nvp + 16 * v + 8, &first, 8);
    uint32_t both = v++;
    for (uint32_t i = 0; i < cs->size / 4; i++) {
        uint32_t vi;
        memcpy(&vi, ncp + 4 * i, 4);
        if (vi < nv && vs->p[16 * vi] == DW_V_SET) memcpy(ncp + 4 * i, &both, 4);
    }
    /* reassemble: same header, new sizes, sections in table order */
    *out = (dw_buf){ 0 };
    dw_buf_append(out, b, DW_ARTIFACT_HEADER);
    for (uint32_t i = 0; i < nsec; i++) {
        uint32_t size = &sec[i] == vs ? 16 * v : &sec[i] == fs ? 8 * f : sec[i].size;
        dw_buf_append(out, &sec[i].id, 4);
        dw_buf_append(out, &size, 4);
    }
    for (uint32_t i = 0; i < nsec; i++) {
        if (&sec[i] == vs) dw_buf_append(out, nvp, 16 * (size_t)v);
        else if (&sec[i] == fs) dw_buf_append(out, nfp, 8 * (size_t)f);
        else if (&sec[i] == cs) dw_buf_append(out, ncp, cs->size);
        else dw_buf_append(out, sec[i].p, sec[i].size);
    }
    uint8_t *o = (uint8_t *)out->p;
    uint64_t sz = out->len;
    memcpy(o + 16, &sz, 8);
    uint64_t sum = XXH3_64bits_withSeed(o + 32, out->len - 32, XXH3_64bits(o, 16));
    memcpy(o + 24, &sum, 8);
    free(nvp); free(nfp); free(ncp);
}

static void test_artifact_deep_values(void **state)
{
    const char *text = POL "[1, 2].contains(context.x)" END;
    dw_program *p = unit_compile("set.cedar", text);
    dw_buf orig = { 0 };
    assert_int_equal(dw_artifact_write(p, 0, &orig), 0);
    const uint32_t depths[] = { 100, DW_ARTIFACT_MAX_VALUE_DEPTH - 1, DW_ARTIFACT_MAX_VALUE_DEPTH, 100000 };
    for (size_t k = 0; k < sizeof depths / sizeof *depths; k++) {
        dw_buf crafted;
        deep_value_artifact(&orig, depths[k], &crafted);
        char msg[256] = "";
        dw_program *q = dw_artifact_load(crafted.p, crafted.len, msg, sizeof msg);
        /* depth counts the outer set too */
        if (depths[k] + 1 <= DW_ARTIFACT_MAX_VALUE_DEPTH) {
            if (!q) fail_msg("depth %u refused: %s", depths[k], msg);
            dw_arena a;
            dw_arena_init(&a, 4096);
            dw_request r = request(&a, "{\"x\": 3}");
            dw_response x;
            assert_int_equal(dw_authorize(q, empty_store(), &r, &a, &x), 0);
            assert_false(x.allow);
            dw_arena_free(&a);
            dw_program_free(q);
        } else {
            if (q) { dw_program_free(q); fail_msg("a value nested %u deep loaded", depths[k] + 1); }
            if (!strstr(msg, "nested deeper than")) fail_msg("refused for \"%s\"", msg);
        }
        dw_buf_free(&crafted);
    }
    dw_buf_free(&orig);
    dw_program_free(p);
}

/* ---------------------------------------------------------------- sizes */

static void test_huge_strings(void **state)
{
    const size_t mb4 = 4u << 20;
    sb b = { 0 };
    adds(&b, POL "context.s == \"");
    rep(&b, "a", mb4);
    adds(&b, "\" && context.s like \"*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*\"" END);
    sb c = { 0 };
    adds(&c, "{\"s\": \"");
    rep(&c, "a", mb4);
    adds(&c, "\"}");
    assert_true(decide_text("4 MB string literal and context", b.p, empty_store(), c.p, NULL));
    free(b.p); free(c.p);
    /* `like` with 20,000 wildcards against 1 MB that never matches: linear, not backtracking */
    b = (sb){ 0 };
    adds(&b, POL "\"");
    rep(&b, "a", 1u << 20);
    adds(&b, "\" like \"");
    rep(&b, "*a", 20000);
    adds(&b, "*b\"" END);
    assert_false(decide_text("like: 20,000 wildcards over 1 MB", b.p, empty_store(), NULL, NULL));
    free(b.p);
    /* a 4 MB attribute in the entities JSON */
    b = (sb){ 0 };
    adds(&b, "[{\"uid\":{\"type\":\"User\",\"id\":\"alice\"},\"attrs\":{\"bio\":\"");
    rep(&b, "\\u00e9", mb4 / 6);
    adds(&b, "\"},\"parents\":[]}]");
    dw_store st;
    dw_store_init(&st);
    dw_diags d;
    dw_diags_init(&d);
    dw_source es = { "big.json", b.p, b.n };
    const dw_json *j = dw_json_parse(&st.arena, &es, &d);
    assert_non_null(j);
    dw_buf err = { 0 };
    assert_int_equal(dw_store_load_json(&st, j, NULL, &err), 0);
    assert_true(decide_text("4 MB attribute", POL "principal.bio like \"*\\u{e9}\"" END, &st, NULL, NULL));
    dw_buf_free(&err);
    dw_store_free(&st);
    dw_diags_free(&d);
    free(b.p);
}

static void test_huge_sets(void **state)
{
    const size_t n = 100000;
    sb b = { 0 }, c = { 0 };
    adds(&b, POL "[");
    adds(&c, "{\"xs\": [");
    for (size_t i = 0; i < n; i++) {
        char num[32];
        snprintf(num, sizeof num, "%s%zu", i ? "," : "", i);
        adds(&b, num);
        adds(&c, num);
    }
    adds(&b, "].contains(99999) && context.xs.containsAll([0, 50000, 99999]) && context.xs.contains(77777)" END);
    adds(&c, "]}");
    assert_true(decide_text("100,000-element sets", b.p, empty_store(), c.p, NULL));
    free(b.p); free(c.p);
    /* 100,000 duplicates collapse to one element */
    b = (sb){ 0 };
    adds(&b, POL);
    adds(&b, "[");
    for (size_t i = 0; i < n; i++) adds(&b, i ? ",\"x\"" : "\"x\"");
    adds(&b, "] == [\"x\"]" END);
    assert_true(decide_text("100,000 duplicates", b.p, empty_store(), NULL, NULL));
    free(b.p);
}

static int load_entities(dw_store *st, const char *text, dw_buf *err)
{
    dw_diags d;
    dw_diags_init(&d);
    dw_source src = { "entities.json", text, strlen(text) };
    const dw_json *j = dw_json_parse(&st->arena, &src, &d);
    assert_non_null(j);
    dw_diags_free(&d);
    return dw_store_load_json(st, j, NULL, err);
}

/* n entities User::"u<i>"; parent of i is (i + 1) % n when ring, i + 1 when chain */
static char *hierarchy(size_t n, bool ring)
{
    sb b = { 0 };
    adds(&b, "[");
    for (size_t i = 0; i < n; i++) {
        char e[160];
        if (i + 1 < n || ring)
            snprintf(e, sizeof e, "%s{\"uid\":{\"type\":\"User\",\"id\":\"u%zu\"},\"attrs\":{},\"parents\":[{\"type\":\"User\",\"id\":\"u%zu\"}]}",
                     i ? "," : "", i, (i + 1) % n);
        else snprintf(e, sizeof e, ",{\"uid\":{\"type\":\"User\",\"id\":\"u%zu\"},\"attrs\":{},\"parents\":[]}", i);
        adds(&b, e);
    }
    adds(&b, "]");
    return b.p;
}

static void test_hierarchy_cycles(void **state)
{
    dw_buf err = { 0 };
    /* self-parent, a 2-cycle, a 1,000-ring: `in` terminates and is true along the cycle */
    const char *small =
        "[{\"uid\":{\"type\":\"User\",\"id\":\"alice\"},\"attrs\":{},\"parents\":[{\"type\":\"User\",\"id\":\"alice\"},{\"type\":\"G\",\"id\":\"a\"}]},"
        " {\"uid\":{\"type\":\"G\",\"id\":\"a\"},\"attrs\":{},\"parents\":[{\"type\":\"G\",\"id\":\"b\"}]},"
        " {\"uid\":{\"type\":\"G\",\"id\":\"b\"},\"attrs\":{},\"parents\":[{\"type\":\"G\",\"id\":\"a\"}]}]";
    dw_store st;
    dw_store_init(&st);
    assert_int_equal(load_entities(&st, small, &err), 0);
    assert_true(decide_text("cycles", POL "principal in G::\"b\" && principal in principal" END, &st, NULL, NULL));
    dw_store_free(&st);
    char *ring = hierarchy(1000, true);
    dw_store_init(&st);
    assert_int_equal(load_entities(&st, ring, &err), 0);
    dw_uid u = { .type = "User", .tlen = 4, .id = "u0", .idlen = 2 };
    u.hash = dw_uid_hash(u.type, u.tlen, u.id, u.idlen);
    const dw_entity *e = dw_store_get(&st, &u);
    assert_non_null(e);
    assert_int_equal(e->nanc, 999);    /* the rest of the ring (`in` covers itself) */
    dw_store_free(&st);
    free(ring);
    /* a chain of 2,000 is fine (2 million links); one of 6,000 (18 million) is refused, clearly */
    char *ch = hierarchy(2000, false);
    dw_store_init(&st);
    assert_int_equal(load_entities(&st, ch, &err), 0);
    dw_store_free(&st);
    free(ch);
    ch = hierarchy(6000, false);
    dw_store_init(&st);
    assert_int_not_equal(load_entities(&st, ch, &err), 0);
    assert_non_null(err.p);
    if (!strstr(err.p, "entity hierarchy is too large")) fail_msg("refused for \"%s\"", err.p);
    dw_store_free(&st);
    free(ch);
    dw_buf_free(&err);
}

static void test_many_policies(void **state)
{
    const size_t n = 100000;
    sb b = { 0 };
    for (size_t i = 0; i < n; i++) {
        char line[160];
        snprintf(line, sizeof line, "permit (principal == User::\"u%zu\", action, resource) when { context.k == %zu };\n", i, i);
        adds(&b, line);
    }
    adds(&b, "forbid (principal == User::\"alice\", action, resource) unless { context.k == 3 };\n");
    uint32_t nerr;
    assert_false(decide_text("100,000 policies", b.p, empty_store(), "{\"k\": 2}", &nerr));
    assert_int_equal(nerr, 0);
    free(b.p);
}

/* Found by fuzz_structured: a scope naming one key twice filed the policy
 * twice in one index bucket, so it was a reason twice. */
static void test_duplicate_index_key(void **state)
{
    const char *text =
        "permit (principal, action in [Action::\"view\", Action::\"view\"], resource);\n"
        "forbid (principal, action == Action::\"edit\", resource);\n"
        "permit (principal == User::\"bob\", action, resource);\n";
    dw_program *p = unit_compile("dup.cedar", text);
    dw_arena a;
    dw_arena_init(&a, 4096);
    dw_request r = request(&a, NULL);
    dw_response x;
    assert_int_equal(dw_authorize(p, empty_store(), &r, &a, &x), 0);
    assert_true(x.allow);
    assert_int_equal(x.ndetermining, 1);
    dw_arena_free(&a);
    dw_program_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_nesting),
        cmocka_unit_test(test_policy_near_limit),
        cmocka_unit_test(test_temporal_near_limit),
        cmocka_unit_test(test_has_path_nesting),
        cmocka_unit_test(test_json_nesting),
        cmocka_unit_test(test_schema_nesting),
        cmocka_unit_test(test_eventschema_nesting),
        cmocka_unit_test(test_trace_nesting),
        cmocka_unit_test(test_artifact_deep_values),
        cmocka_unit_test(test_huge_strings),
        cmocka_unit_test(test_huge_sets),
        cmocka_unit_test(test_hierarchy_cycles),
        cmocka_unit_test(test_many_policies),
        cmocka_unit_test(test_duplicate_index_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
