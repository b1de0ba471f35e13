/* Hostile artifacts: byte flips, truncations and splices of compiled .dwb
 * files (one Cedar policy set here, the temporal artifacts below; the
 * corpus campaign is tests/unit/test_artifact_corpus.c).  Each mutant is
 * refused (checksum, bounds or verifier), or it loads and decides exactly as
 * the original.  Half the mutants get a recomputed checksum so the
 * structural checks and the verifier are exercised too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "compiler/artifact_write.h"
#include "compiler/compile.h"
#include "vm/artifact.h"
#include "vm/artifact_format.h"
#include "stdlib/le.h"
#include "vm/vm.h"
#include "runtime/dogwood.h"
#include "runtime/load.h"
#include <stdio.h>
#include <unistd.h>
#include <dirent.h>
#include "lang/json.h"
#include "runtime/json_value.h"
#include "unit_compile.h"
#include "tests/unit/artifact_mutate.h"

static const char *policies =
    "@id(\"a\") permit (principal == User::\"alice\", action in [Action::\"view\", Action::\"edit\"], resource is Photo in Album::\"x\")\n"
    "  when { context.n + 1 > 3 && context.tags.contains(\"t\") && context.s like \"a*b\\*c\" };\n"
    "forbid (principal, action, resource) when { {a: [1, 2, {b: ip(\"10.0.0.1/8\")}], c: decimal(\"1.5\")} has a }\n"
    "  unless { if context.n == 7 then true else principal.dept == \"x\" };\n"
    "permit (principal, action, resource) when { datetime(\"2024-01-01\").offset(duration(\"1h\")) > datetime(\"2024-01-01\") || resource has owner };\n";

typedef struct fixture {
    dw_program *prog;
    dw_buf bytes;
    dw_store store;
    dw_request reqs[4];
    dw_arena arena;
    bool want_allow[4];
} fixture;

static void decide(const dw_program *p, fixture *f, int r, bool *allow, uint32_t *nerr)
{
    dw_arena scratch;
    dw_arena_init(&scratch, 4096);
    dw_response resp;
    if (dw_authorize(p, &f->store, &f->reqs[r], &scratch, &resp)) { *allow = false; *nerr = 0; }
    else { *allow = resp.allow; *nerr = resp.nerrors; }
    dw_arena_free(&scratch);
}

static dw_value ent(dw_arena *a, const char *t, const char *id)
{
    dw_value v = { .kind = DW_V_ENTITY };
    v.u.uid = dw_make_uid(a, t, strlen(t), id, strlen(id));
    return v;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->prog = unit_compile("t.dw", policies);
    assert_int_equal(dw_artifact_write(f->prog, 0, &f->bytes), 0);
    unit_empty_store(&f->store);
    dw_arena_init(&f->arena, 4096);
    for (int i = 0; i < 4; i++) {
        f->reqs[i].vars[0] = ent(&f->arena, "User", i ? "bob" : "alice");
        f->reqs[i].vars[1] = ent(&f->arena, "Action", i == 2 ? "edit" : "view");
        f->reqs[i].vars[2] = ent(&f->arena, "Photo", "p");
        dw_field *fl = dw_arena_alloc(&f->arena, 3 * sizeof *fl);
        fl[0] = (dw_field){ .key = "n", .klen = 1, .v = dw_long(i * 3) };
        dw_value *t = dw_arena_alloc(&f->arena, sizeof *t);
        dw_make_string(&f->arena, "t", 1, t);
        fl[1] = (dw_field){ .key = "tags", .klen = 4, .v = dw_make_set(t, 1) };
        dw_make_string(&f->arena, "a-b*c", 5, &fl[2].v);
        fl[2].key = "s"; fl[2].klen = 1;
        dw_make_record(fl, 3, &f->reqs[i].vars[3]);
        uint32_t ne;
        decide(f->prog, f, i, &f->want_allow[i], &ne);
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    dw_program_free(f->prog);
    dw_buf_free(&f->bytes);
    dw_store_free(&f->store);
    dw_arena_free(&f->arena);
    free(f);
    return 0;
}

static void test_original_loads(void **state)
{
    fixture *f = *state;
    char msg[256];
    dw_program *p = dw_artifact_load(f->bytes.p, f->bytes.len, msg, sizeof msg);
    assert_non_null(p);
    for (int r = 0; r < 4; r++) {
        bool allow;
        uint32_t ne;
        decide(p, f, r, &allow, &ne);
        assert_int_equal(allow, f->want_allow[r]);
    }
    dw_program_free(p);
    /* determinism: the same program serialises to the same bytes */
    dw_buf again = { 0 };
    assert_int_equal(dw_artifact_write(f->prog, 0, &again), 0);
    assert_int_equal(again.len, f->bytes.len);
    assert_memory_equal(again.p, f->bytes.p, again.len);
    dw_buf_free(&again);
}

/* The instruction-set digest: an artifact written for the same opcode and
 * function lists in another order (as a .dwb compiled before an opcode was
 * inserted mid-list would be) is refused before its code is read. */
static void test_isa_mismatch(void **state)
{
    fixture *f = *state;
    /* the header stamps this build's digest, little-endian at byte 32 */
    assert_int_equal(dw_le64((const uint8_t *)f->bytes.p + 32), dw_isa_digest());
    assert_int_equal(dw_le16((const uint8_t *)f->bytes.p + 4), DW_ARTIFACT_MAJOR);
    /* the list with its first two instructions swapped */
    size_t n = strlen(dw_isa_text);
    char *perm = malloc(n + 1);
    const char *l1 = strchr(dw_isa_text, '\n') + 1, *l2 = strchr(l1, '\n') + 1;
    size_t a = (size_t)(l1 - dw_isa_text), b = (size_t)(l2 - l1);
    assert_true(strncmp(dw_isa_text, "op CONST ", 9) == 0 && strncmp(l1, "op VAR ", 7) == 0);
    memcpy(perm, l1, b);
    memcpy(perm + b, dw_isa_text, a);
    memcpy(perm + a + b, l2, n - a - b + 1);
    uint64_t other = dw_isa_digest_of(perm, n);
    free(perm);
    assert_int_not_equal(other, dw_isa_digest());
    dw_buf w = { 0 };
    char msg[256] = "";
    assert_int_equal(dw_artifact_write_for_isa(f->prog, 0, other, &w), 0);
    dw_program *p = dw_artifact_load(w.p, w.len, msg, sizeof msg);
    if (p) { dw_program_free(p); fail_msg("an artifact for another instruction set loaded"); }
    if (!strstr(msg, "compiled for another instruction set")) fail_msg("refused for \"%s\"", msg);
    /* the same bytes stamped with this build's digest load */
    dw_put_le64((uint8_t *)w.p + 32, dw_isa_digest());
    reseal((uint8_t *)w.p, w.len);
    assert_int_equal(w.len, f->bytes.len);
    assert_memory_equal(w.p, f->bytes.p, w.len);
    p = dw_artifact_load(w.p, w.len, msg, sizeof msg);
    assert_non_null(p);
    dw_program_free(p);
    /* a 2.x file carries no digest: refused by its version */
    dw_put_le16((uint8_t *)w.p + 4, 2);
    dw_put_le16((uint8_t *)w.p + 6, 0);
    reseal((uint8_t *)w.p, w.len);
    assert_null(dw_artifact_load(w.p, w.len, msg, sizeof msg));
    assert_non_null(strstr(msg, "format 2.0 is not supported"));
    dw_buf_free(&w);
}

/* stdlib/le.h writes the same bytes on every host */
static void test_little_endian(void **state)
{
    uint8_t b[8];
    dw_put_le64(b, 0x0807060504030201ull);
    for (int i = 0; i < 8; i++) assert_int_equal(b[i], i + 1);
    assert_int_equal(dw_le64(b), 0x0807060504030201ull);
    assert_int_equal(dw_le32(b + 1), 0x05040302u);
    assert_int_equal(dw_le16(b + 6), 0x0807u);
    dw_put_le32(b, 0xA1B2C3D4u);
    assert_int_equal(b[0], 0xD4);
    assert_int_equal(b[3], 0xA1);
    dw_put_le16(b, 0xBEEF);
    assert_int_equal(b[0], 0xEF);
    assert_int_equal(b[1], 0xBE);
}

static void test_mutations(void **state)
{
    fixture *f = *state;
    size_t n = f->bytes.len;
    uint8_t *m = malloc(n * 2);
    unsigned seed = 12345;
    size_t refused = 0, loaded = 0;
    for (int iter = 0; iter < 1000; iter++) {
        memcpy(m, f->bytes.p, n);
        size_t len = n;
        seed = seed * 1103515245u + 12345u;
        int kind = (int)(seed >> 16) % 3;
        if (kind == 0) {                       /* flip 1-4 bytes */
            int flips = 1 + (int)((seed >> 8) % 4);
            for (int k = 0; k < flips; k++) {
                seed = seed * 1103515245u + 12345u;
                m[(seed >> 8) % n] ^= (uint8_t)(1 + (seed >> 24) % 255);
            }
        } else if (kind == 1) {                /* truncate */
            len = (seed >> 8) % n;
        } else {                               /* splice: copy a run onto another place */
            seed = seed * 1103515245u + 12345u;
            size_t from = (seed >> 8) % n, to = (seed >> 4) % n, run = 1 + (seed >> 20) % 32;
            if (from + run > n) run = n - from;
            if (to + run > n) run = n - to;
            memmove(m + to, m + from, run);
        }
        if (iter % 2) reseal(m, len);
        char msg[256];
        dw_program *p = dw_artifact_load(m, len, msg, sizeof msg);
        if (!p) { refused++; continue; }
        loaded++;
        /* a program that verifies must run without crashing; a mutant that
         * only touched padding or unused bytes decides as the original */
        for (int r = 0; r < 4; r++) {
            bool allow;
            uint32_t ne;
            decide(p, f, r, &allow, &ne);
            /* with the original checksum, only a no-op mutation can load */
            if (iter % 2 == 0) assert_int_equal(allow, f->want_allow[r]);
        }
        dw_program_free(p);
    }
    free(m);
    assert_int_equal(refused + loaded, 1000);
    print_message("artifact mutations: %zu refused, %zu loaded and ran\n", refused, loaded);
}

/* ================================================================ temporal
 * Box's 06-http-request-budget (two counting leaves) and 08-style `since`,
 * compiled with Box's schema, written, loaded, and replayed through the
 * engine against the same events as the source. */
static const char *tpolicy =
    "@id(\"github_hosts\")\n"
    "permit (principal, action == Box::Action::\"http:request\", resource)\n"
    "when { context.input.host == \"api.github.com\" || context.input.host == \"uploads.github.com\" };\n"
    "@id(\"github_budget\")\n"
    "forbid (principal, action == Box::Action::\"http:request\", resource)\n"
    "when { context.input.host == \"api.github.com\" }\n"
    "when temporal {\n"
    "  exists (n: Long). ((count for (t: Timepoint). where (\n"
    "    formerly within 10m ( Box::Action::\"http:request\"::response{ input.host: \"api.github.com\" } && tp(t) )\n"
    "  )) == n && n >= 3)\n"
    "};\n"
    "@id(\"github_burst\")\n"
    "forbid (principal, action == Box::Action::\"http:request\", resource)\n"
    "when { context.input.host == \"api.github.com\" }\n"
    "when temporal {\n"
    "  exists (n: Long). ((count for (t: Timepoint). where (\n"
    "    formerly within 60s ( Box::Action::\"http:request\"::request{ input.host: \"api.github.com\" } && tp(t) )\n"
    "  )) == n && n > 3)\n"
    "};\n";

#define NEV 12
static char tevents[NEV][512];

static void make_events(void)
{
    for (int i = 0; i < NEV; i++) {
        const char *kind = i % 3 == 1 ? "response" : "request";
        const char *host = i % 5 == 4 ? "uploads.github.com" : "api.github.com";
        snprintf(tevents[i], sizeof tevents[i],
                 "{\"time\":\"2025-06-02T12:%02d:%02dZ\",\"action\":\"http:request\",\"kind\":\"%s\","
                 "\"input\":{\"host\":\"%s\",\"port\":443,\"method\":\"GET\",\"path\":\"/x\",\"body_bytes\":0,\"intercepted\":true}%s}",
                 i / 4, (i * 7) % 60, kind, host, i % 3 == 1 ? ",\"output\":{\"status\":200}" : "");
    }
}

typedef struct tfix {
    char src_path[64], dwb_path[64];
    dw_session s;            /* the compiled source program */
    dw_buf bytes;
    int verdicts[NEV];       /* -1 not decided, else allow + 2 * cause */
} tfix;

static tfix *T;

/* Replay the events through an engine on `path`; -1 if it does not open. */
static int run_engine(const char *path, int *out)
{
    dw_engine_config cfg = { .policy_path = path, .schema_path = "box", .replay_timestamps = true };
    char err[256];
    FILE *saved = mute_stderr();
    dw_engine *e = dw_engine_open(&cfg, err, sizeof err);
    unmute_stderr(saved);
    if (!e) return -1;
    for (int i = 0; i < NEV; i++) {
        dw_verdict v;
        if (strstr(tevents[i], "\"response\"")) {
            assert_int_equal(dw_engine_record_json(e, tevents[i], strlen(tevents[i]), DW_TS_NOW, err, sizeof err), 0);
            out[i] = -1;
            continue;
        }
        assert_int_equal(dw_engine_decide_json(e, tevents[i], strlen(tevents[i]), DW_TS_NOW, &v), 0);
        out[i] = v.allow + 2 * (int)v.cause;
    }
    dw_engine_close(e);
    return 0;
}

static int tsetup(void **state)
{
    T = calloc(1, sizeof *T);
    make_events();
    snprintf(T->src_path, sizeof T->src_path, "/tmp/test_artifact_%d.dw", (int)getpid());
    snprintf(T->dwb_path, sizeof T->dwb_path, "/tmp/test_artifact_%d.dwb", (int)getpid());
    write_file(T->src_path, tpolicy, strlen(tpolicy));
    dw_session_init(&T->s);
    assert_int_equal(dw_session_load_schema(&T->s, "box"), 0);
    assert_int_equal(dw_session_load_events(&T->s, NULL), 0);
    assert_int_equal(dw_session_load_policies(&T->s, T->src_path), 0);
    assert_true(T->s.prog->temporal.nleaves >= 2);
    assert_int_equal(dw_artifact_write(T->s.prog, 0, &T->bytes), 0);
    assert_int_equal(run_engine(T->src_path, T->verdicts), 0);
    return 0;
}

static int tteardown(void **state)
{
    unlink(T->src_path);
    unlink(T->dwb_path);
    dw_session_free(&T->s);
    dw_buf_free(&T->bytes);
    free(T);
    return 0;
}

/* dw_request_from_json leaves no stale leaf values or binding: dwc bench
 * handed the VM a realloc'd request whose leaf_values pointer was garbage
 * (SEGV in LEAF, issue 16).  Without the engine's leaf pass every rule with
 * leaves reports the internal error instead of reading memory. */
static void test_request_without_leaves(void **state)
{
    static const char rq[] =
        "{\"principal\":{\"type\":\"Box::Agent\",\"id\":\"self\"},\"action\":{\"type\":\"Box::Action\",\"id\":\"http:request\"},"
        "\"resource\":{\"type\":\"Box::Resource\",\"id\":\"unused\"},\"context\":{\"input\":{\"host\":\"api.github.com\","
        "\"port\":443,\"method\":\"GET\",\"path\":\"/x\",\"body_bytes\":0,\"intercepted\":true}}}";
    const dw_program *p = T->s.prog;
    assert_true(p->temporal.nleaves > 0);
    dw_arena a;
    dw_arena_init(&a, 64 * 1024);
    dw_source src = { "request", rq, sizeof rq - 1 };
    dw_diags d;
    dw_diags_init(&d);
    const dw_json *j = dw_json_parse(&a, &src, &d);
    assert_non_null(j);
    dw_diags_free(&d);
    dw_request req;
    memset(&req, 0xA5, sizeof req);
    dw_buf err = { 0 };
    assert_int_equal(dw_request_from_json(&a, dw_json_get(j, "principal"), dw_json_get(j, "action"), dw_json_get(j, "resource"),
                                          dw_json_get(j, "context"), T->s.schema, true, &req, &err), 0);
    dw_buf_free(&err);
    assert_null(req.leaf_values);
    assert_int_equal(req.nleaf_values, 0);
    assert_null(req.bound_prog);
    dw_store st;
    unit_empty_store(&st);
    dw_response resp;
    assert_int_equal(dw_authorize(p, &st, &req, &a, &resp), 0);
    uint32_t with_leaves = 0;
    for (uint32_t i = 0; i < p->npolicies; i++) with_leaves += p->policies[i].nleaves > 0;
    assert_int_equal(resp.nerrors, with_leaves);
    for (uint32_t i = 0; i < resp.nerrors; i++) assert_int_equal(resp.errors[i].status, DW_ERR_INTERNAL);
    dw_store_free(&st);
    dw_arena_free(&a);
}

static void test_temporal_round_trip(void **state)
{
    char msg[256];
    const dw_program *o = T->s.prog;
    dw_program *p = dw_artifact_load(T->bytes.p, T->bytes.len, msg, sizeof msg);
    if (!p) fail_msg("refused: %s", msg);
    const dw_temporal_tables *a = &o->temporal, *b = &p->temporal;
    assert_int_equal(a->ntfs, b->ntfs);
    assert_int_equal(a->ntterms, b->ntterms);
    assert_int_equal(a->ntpatterns, b->ntpatterns);
    assert_int_equal(a->ntaggs, b->ntaggs);
    assert_int_equal(a->naggvars, b->naggvars);
    assert_int_equal(a->nleaves, b->nleaves);
    for (uint32_t i = 0; i < a->ntfs; i++) {
        const dw_tf *x = &a->tfs[i], *y = &b->tfs[i];
        assert_int_equal(x->kind, y->kind); assert_int_equal(x->op, y->op); assert_int_equal(x->var, y->var);
        assert_int_equal(x->a, y->a); assert_int_equal(x->b, y->b); assert_int_equal(x->window, y->window);
        assert_int_equal(x->type_str, y->type_str); assert_int_equal(x->id_str, y->id_str); assert_int_equal(x->kind_str, y->kind_str);
        assert_int_equal(x->first, y->first); assert_int_equal(x->n, y->n);
    }
    for (uint32_t i = 0; i < a->ntterms; i++) {
        assert_int_equal(a->tterms[i].kind, b->tterms[i].kind);
        if (a->tterms[i].kind == DW_TT_CONST)   /* renumbered: same value */
            assert_int_equal(dw_value_cmp(&o->consts[a->tterms[i].a], &p->consts[b->tterms[i].a]), 0);
        else assert_int_equal(a->tterms[i].a, b->tterms[i].a);
        assert_int_equal(a->tterms[i].n, b->tterms[i].n);
    }
    for (uint32_t i = 0; i < a->nleaves; i++) {
        assert_int_equal(a->leaves[i].root, b->leaves[i].root);
        assert_int_equal(a->leaves[i].policy, b->leaves[i].policy);
        assert_int_equal(a->leaves[i].nvars, b->leaves[i].nvars);
        assert_int_equal(a->leaves[i].reach, b->leaves[i].reach);
        assert_int_equal(a->leaves[i].identity, b->leaves[i].identity);
    }
    assert_int_equal(o->max_reach, p->max_reach);
    for (uint32_t k = 0; k < o->npolicies; k++) {
        assert_int_equal(o->policies[k].nleaves, p->policies[k].nleaves);
        assert_memory_equal(o->policies[k].id.s, p->policies[k].id.s, o->policies[k].id.len);
        if (!o->policies[k].nleaves) continue;
        assert_int_equal(o->policies[k].first_leaf, p->policies[k].first_leaf);
        assert_int_equal(o->policies[k].scope_entry, p->policies[k].scope_entry);
        assert_int_equal(o->policies[k].scope_end, p->policies[k].scope_end);
    }
    dw_program_free(p);
    /* same verdicts through the engine; same bytes twice */
    write_file(T->dwb_path, T->bytes.p, T->bytes.len);
    int got[NEV];
    assert_int_equal(run_engine(T->dwb_path, got), 0);
    assert_memory_equal(got, T->verdicts, sizeof got);
    dw_buf again = { 0 };
    assert_int_equal(dw_artifact_write(T->s.prog, 0, &again), 0);
    assert_int_equal(again.len, T->bytes.len);
    assert_memory_equal(again.p, T->bytes.p, again.len);
    dw_buf_free(&again);
}

static void test_temporal_mutations(void **state)
{
    size_t n = T->bytes.len;
    uint8_t *m = malloc(n);
    unsigned seed = 777;
    size_t refused = 0, loaded = 0;
    for (int iter = 0; iter < 1000; iter++) {
        memcpy(m, T->bytes.p, n);
        size_t len = n;
        seed = seed * 1103515245u + 12345u;
        int kind = (int)(seed >> 16) % 3;
        if (kind == 0) {
            int flips = 1 + (int)((seed >> 8) % 4);
            for (int k = 0; k < flips; k++) {
                seed = seed * 1103515245u + 12345u;
                m[(seed >> 8) % n] ^= (uint8_t)(1 + (seed >> 24) % 255);
            }
        } else if (kind == 1) {
            len = (seed >> 8) % n;
        } else {
            seed = seed * 1103515245u + 12345u;
            size_t from = (seed >> 8) % n, to = (seed >> 4) % n, run = 1 + (seed >> 20) % 32;
            if (from + run > n) run = n - from;
            if (to + run > n) run = n - to;
            memmove(m + to, m + from, run);
        }
        if (iter % 2) reseal(m, len);
        char msg[256];
        dw_program *p = dw_artifact_load(m, len, msg, sizeof msg);
        if (!p) { refused++; continue; }
        dw_program_free(p);
        loaded++;
        /* it verified: the engine must run it without crashing */
        write_file(T->dwb_path, m, len);
        int got[NEV];
        if (run_engine(T->dwb_path, got)) continue;
        if (iter % 2 == 0) assert_memory_equal(got, T->verdicts, sizeof got);
    }
    free(m);
    assert_int_equal(refused + loaded, 1000);
    print_message("temporal artifact mutations: %zu refused, %zu loaded and ran\n", refused, loaded);
}

/* Write a doctored copy of the program and expect the loader to refuse it
 * with a message containing `want`. */
static void expect_refused(const dw_program *p, const char *want)
{
    dw_buf b = { 0 };
    char msg[256] = "";
    assert_int_equal(dw_artifact_write(p, 0, &b), 0);
    dw_program *q = dw_artifact_load(b.p, b.len, msg, sizeof msg);
    dw_buf_free(&b);
    if (q) { dw_program_free(q); fail_msg("hostile artifact loaded (wanted \"%s\")", want); }
    if (!strstr(msg, want)) fail_msg("refused for \"%s\", wanted \"%s\"", msg, want);
}

/* Found by the corpus mutation campaign (1,000,000 mutants, seed 7): a
 * scope constant `action in [false]` raises an error, so the index may not
 * skip the policy on a later conjunct (resource == E): with the index on the
 * error vanished.  The verifier now certifies only conjuncts after
 * error-free ones.  tests/regress/artifact-index-skips-erroring-scope.dwb */
static void test_index_erroring_scope(void **state)
{
    /* filed under its resource (the compiler's choice for this scope, as in the corpus test) */
    const char *text = "permit (principal, action in [Action::\"a\", Action::\"a\"], resource == R::\"x\");\n";
    dw_program *p = unit_compile("scope.cedar", text);
    uint32_t set = UINT32_MAX;
    for (uint32_t i = 0; i < p->nconsts; i++) if (p->consts[i].kind == DW_V_SET) set = i;
    assert_int_not_equal(set, UINT32_MAX);
    dw_value saved = p->consts[set];
    dw_value *el = malloc(2 * sizeof *el);
    el[0] = dw_bool(false);
    el[1] = saved.u.elems[0];
    p->consts[set] = dw_make_set(el, 2);
    expect_refused(p, "index omits policy 0");
    p->consts[set] = saved;
    free(el);
    dw_program_free(p);
}

/* Found by the corpus mutation campaign (1,000,000 mutants, seed 20261129):
 * EQ takes any constant, so a hostile scope can read `action == "…"`; the
 * verifier's pairing of an action conjunct with an entity conjunct took every
 * non-entity constant for a set and read a string's bytes as set elements
 * (UBSan: misaligned dw_value).  Such a conjunct certifies nothing now.
 * tests/regress/artifact-index-action-string.dwb */
static void test_index_action_not_entity(void **state)
{
    /* filed as an (action, principal) pair: only the pairing can certify it */
    const char *text = "permit (principal == User::\"u\", action == Action::\"a\", resource);\n";
    dw_program *p = unit_compile("pair.cedar", text);
    uint32_t act = UINT32_MAX;
    for (uint32_t i = 0; i < p->nconsts; i++)
        if (p->consts[i].kind == DW_V_ENTITY && p->consts[i].u.uid->tlen == 6 && !memcmp(p->consts[i].u.uid->type, "Action", 6)) act = i;
    assert_int_not_equal(act, UINT32_MAX);
    dw_value saved = p->consts[act];
    /* read as a dw_value: kind ENTITY, its uid pointer 0x4141414141414141 */
    static const char str[] = "\x03" "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    dw_value s = { .kind = DW_V_STRING, .n = sizeof str - 1 };
    s.u.s = str;
    p->consts[act] = s;
    expect_refused(p, "index omits policy 0");
    p->consts[act] = saved;
    dw_program_free(p);
}

static void test_temporal_hostile(void **state)
{
    dw_program *p = T->s.prog;
    dw_temporal_tables saved = p->temporal;
    uint32_t nf = saved.ntfs;
    dw_tf *tfs = malloc((nf + 300) * sizeof *tfs);
    memcpy(tfs, saved.tfs, nf * sizeof *tfs);
    p->temporal.tfs = tfs;
    /* 1. a formula referring to itself */
    uint32_t self = UINT32_MAX;
    for (uint32_t i = 0; i < nf; i++) if (tfs[i].kind == DW_TF_AND) { self = i; break; }
    assert_int_not_equal(self, UINT32_MAX);
    tfs[self].b = self;
    expect_refused(p, "not stored before");
    tfs[self] = saved.tfs[self];
    /* a term reaching a later formula through an aggregate body */
    dw_tagg *aggs = malloc(saved.ntaggs * sizeof *aggs);
    memcpy(aggs, saved.taggs, saved.ntaggs * sizeof *aggs);
    p->temporal.taggs = aggs;
    aggs[0].body = nf - 1;
    expect_refused(p, "not stored before");
    p->temporal.taggs = saved.taggs;
    free(aggs);
    /* 2. an out-of-range slot: past the leaf's variables, and past 64 */
    uint32_t tpf = UINT32_MAX;
    for (uint32_t i = 0; i < nf; i++) if (tfs[i].kind == DW_TF_TP) { tpf = i; break; }
    assert_int_not_equal(tpf, UINT32_MAX);
    tfs[tpf].var = 40;
    expect_refused(p, "slot 40 out of range");
    tfs[tpf].var = 64;
    expect_refused(p, "slot 64 out of range");
    tfs[tpf] = saved.tfs[tpf];
    /* 3. a huge depth chain: 300 NOTs over the first leaf's root */
    dw_tleaf *leaves = malloc(saved.nleaves * sizeof *leaves);
    memcpy(leaves, saved.leaves, saved.nleaves * sizeof *leaves);
    p->temporal.leaves = leaves;
    for (uint32_t k = 0; k < 300; k++) {
        dw_tf f = { .kind = DW_TF_NOT, .a = k ? nf + k - 1 : leaves[0].root };
        tfs[nf + k] = f;
    }
    p->temporal.ntfs = nf + 300;
    leaves[0].root = nf + 299;
    expect_refused(p, "nested deeper than 256");
    p->temporal.ntfs = nf;
    leaves[0] = saved.leaves[0];
    /* a negative window; a reach shorter than the windows */
    for (uint32_t i = 0; i < nf; i++) if (tfs[i].kind == DW_TF_FORMERLY) { tfs[i].window = -1; break; }
    expect_refused(p, "negative window");
    memcpy(tfs, saved.tfs, nf * sizeof *tfs);
    leaves[0].reach = 1;
    expect_refused(p, "shorter than its windows");
    leaves[0] = saved.leaves[0];
    /* leaves' owner disagreeing with the policies' ranges */
    p->temporal.leaves = saved.leaves;
    free(leaves);
    p->temporal.tfs = saved.tfs;
    free(tfs);
    /* 4. a LEAF operand out of range, and one naming another policy's leaf */
    uint32_t leaf_pc = UINT32_MAX;
    for (uint32_t i = 0; i < p->ncode; i++) if (DW_INS_OP(p->code[i]) == DW_OP_LEAF) { leaf_pc = i; break; }
    assert_int_not_equal(leaf_pc, UINT32_MAX);
    uint32_t ins = p->code[leaf_pc];
    p->code[leaf_pc] = DW_INS(DW_OP_LEAF, saved.nleaves);
    expect_refused(p, "temporal leaf");
    p->code[leaf_pc] = DW_INS(DW_OP_LEAF, DW_INS_A(ins) ^ 1);
    expect_refused(p, "out of range (policy");
    p->code[leaf_pc] = ins;
    /* 5. an index entry dropped */
    assert_true(p->nixents >= 2);
    uint32_t dropped = p->ixents[1].policy;
    dw_index_entry keep = p->ixents[1];
    memmove(&p->ixents[1], &p->ixents[2], (p->nixents - 2) * sizeof keep);
    p->nixents--;
    char want[64];
    snprintf(want, sizeof want, "index omits policy %u", dropped);
    expect_refused(p, want);
    /* ... or filed under a key its scope does not test */
    p->nixents++;
    memmove(&p->ixents[2], &p->ixents[1], (p->nixents - 2) * sizeof keep);
    p->ixents[1] = keep;
    uint32_t idstr = p->ixents[1].id_str;
    p->ixents[1].id_str = p->ixents[1].type_str;
    expect_refused(p, want);
    p->ixents[1].id_str = idstr;
    /* unchanged again: loads */
    dw_buf b = { 0 };
    char msg[256];
    assert_int_equal(dw_artifact_write(p, 0, &b), 0);
    dw_program *q = dw_artifact_load(b.p, b.len, msg, sizeof msg);
    if (!q) fail_msg("refused: %s", msg);
    dw_program_free(q);
    dw_buf_free(&b);
}


int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_original_loads),
        cmocka_unit_test(test_isa_mismatch),
        cmocka_unit_test(test_little_endian),
        cmocka_unit_test(test_mutations),
    };
    const struct CMUnitTest ttests[] = {
        cmocka_unit_test(test_temporal_round_trip),
        cmocka_unit_test(test_request_without_leaves),
        cmocka_unit_test(test_temporal_hostile),
        cmocka_unit_test(test_index_erroring_scope),
        cmocka_unit_test(test_index_action_not_entity),
        cmocka_unit_test(test_temporal_mutations),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    return rc | cmocka_run_group_tests(ttests, tsetup, tteardown);
}
