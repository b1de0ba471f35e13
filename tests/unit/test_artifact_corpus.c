/* test_artifact_corpus.c - the hostile-artifact campaign over many
 * artifacts: Cedar's corpus policies and every Box example, mutated as
 * bytes (test_corpus_mutations) and as decoded programs
 * (test_program_mutations).  tests/unit/test_artifact.c holds the mutants
 * of one policy set and of the temporal artifacts. */
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

/* ================================================================ corpus campaign
 * Hostile copies of many artifacts: Cedar's corpus policies (with their
 * schema, entities and requests) and every Box example (temporal rules,
 * replayed through the engine on the example's own trace, or its requests).  Each mutant is a
 * byte flip, a truncation, a splice within the artifact, a splice or an
 * insertion from another artifact, or a crossover (this one's head, another's
 * tail); half are resealed (size and checksum recomputed) so the structural
 * checks and the verifier see them.  Each mutant must be refused, or load
 * and decide without crashing; a verified program must still decide the
 * same with the decision index on and off (the verifier certifies the
 * index); and a mutant that was not resealed can only load if it decides
 * exactly as the original.
 *   DW_MUTATIONS        number of mutants (default 1000; the campaign: 100000)
 *   DW_MUTATION_FILES   corpus test files used (default 40, evenly spaced)
 *   DW_MUTATION_SEED    (default 1)
 *   DW_CORPUS           unpacked corpus (default build/corpus)
 *   DW_SHARED           shared directory with examples/box (default ../shared)
 * Without corpus tests or without Box examples the campaign refuses to run. */

static int strcmp_ptr(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

#define CREQ_MAX 4
#define CTRACE_MAX 64

typedef struct csubject {
    char name[96];
    dw_buf bytes;
    bool box;
    dw_store store;                   /* corpus: entities */
    dw_request reqs[CREQ_MAX]; uint32_t nreqs;
    uint64_t want[CREQ_MAX];          /* response signatures of the original */
    char trace[512];                  /* box: trace.jsonl */
    int verdicts[CTRACE_MAX]; int nv; /* box: the original's verdicts */
} csubject;

typedef struct campaign {
    csubject *s; size_t n, cap;
    dw_arena arena;                   /* request values and their JSON */
    char tmp[64];
} campaign;

static campaign *C;

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13; *x ^= *x >> 7; *x ^= *x << 17;
    return *x;
}

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull + 0x9E3779B97F4A7C15ull; }

static uint64_t response_sig(const dw_response *r)
{
    uint64_t h = mix(1, r->allow);
    for (uint32_t k = 0; k < r->ndetermining; k++) h = mix(h, r->determining[k]);
    h = mix(h, 0xE7);
    for (uint32_t k = 0; k < r->nerrors; k++) h = mix(mix(h, r->errors[k].policy), (uint64_t)r->errors[k].status);
    return h;
}

/* 0 and the signature, or -1 when the authorizer ran out of memory. */
static int sig_of(const dw_program *p, const dw_store *st, const dw_request *rq, bool all, uint64_t *sig)
{
    dw_arena scratch;
    dw_arena_init(&scratch, 4096);
    dw_response r;
    int rc = all ? dw_authorize_all(p, st, rq, &scratch, &r) : dw_authorize(p, st, rq, &scratch, &r);
    if (!rc) *sig = response_sig(&r);
    dw_arena_free(&scratch);
    return rc;
}

static csubject *new_subject(void)
{
    if (C->n == C->cap) {
        C->cap = C->cap ? 2 * C->cap : 64;
        C->s = realloc(C->s, C->cap * sizeof *C->s);
        assert_non_null(C->s);
    }
    csubject *s = &C->s[C->n];
    memset(s, 0, sizeof *s);
    return s;
}

/* One corpus test file: compile its policies, load its schema, entities and
 * first requests.  Test files that do not load are skipped. */
static void add_corpus_test(const char *root, const char *file)
{
    char path[1024], *text = NULL, *ptext = NULL, *stext = NULL, *etext = NULL;
    size_t len;
    dw_diags d;
    dw_diags_init(&d);
    dw_policy_set *ps = NULL;
    dw_program *prog = NULL;
    dw_schema *schema = NULL;
    csubject *s = new_subject();
    dw_store_init(&s->store);
    bool ok = false;
    snprintf(path, sizeof path, "%s/corpus-tests/%s", root, file);
    if (dw_read_file(path, &text, &len)) goto out;
    dw_source *tsrc = dw_arena_alloc(&C->arena, sizeof *tsrc);
    char *tcopy = dw_arena_alloc(&C->arena, len + 1);
    memcpy(tcopy, text, len + 1);
    *tsrc = (dw_source){ "test.json", tcopy, len };
    const dw_json *t = dw_json_parse(&C->arena, tsrc, &d);
    const dw_json *pol = t ? dw_json_get(t, "policies") : NULL, *sch = t ? dw_json_get(t, "schema") : NULL;
    const dw_json *ent = t ? dw_json_get(t, "entities") : NULL, *rqs = t ? dw_json_get(t, "requests") : NULL;
    if (!pol || pol->kind != DW_JSON_STRING || !rqs || rqs->kind != DW_JSON_ARRAY) goto out;
    snprintf(path, sizeof path, "%s/%s", root, pol->u.str.s);
    if (dw_read_file(path, &ptext, &len)) goto out;
    dw_source psrc = { "policy.cedar", ptext, len };
    if (!(ps = dw_parse_policy_set(&psrc, &d)) || d.nerrors || !(prog = dw_compile(ps, NULL, &d))) goto out;
    if (dw_artifact_write(prog, 0, &s->bytes)) goto out;
    dw_source ssrc, esrc;
    if (sch && sch->kind == DW_JSON_STRING) {
        snprintf(path, sizeof path, "%s/%s", root, sch->u.str.s);
        if (dw_read_file(path, &stext, &len)) goto out;
        ssrc = (dw_source){ "schema", stext, len };
        if (!(schema = dw_schema_parse(&ssrc, &d)) || d.nerrors) goto out;
    }
    dw_buf eb = { 0 };
    if (ent && ent->kind == DW_JSON_STRING) {
        snprintf(path, sizeof path, "%s/%s", root, ent->u.str.s);
        if (dw_read_file(path, &etext, &len)) goto out;
        esrc = (dw_source){ "entities.json", etext, len };
        const dw_json *ej = dw_json_parse(&s->store.arena, &esrc, &d);
        int rc = ej ? dw_store_load_json(&s->store, ej, schema, &eb) : -1;
        dw_buf_free(&eb);
        if (rc) goto out;
    } else if (dw_store_seal(&s->store)) goto out;
    for (size_t r = 0; r < rqs->u.arr.n && s->nreqs < CREQ_MAX; r++) {
        const dw_json *rq = rqs->u.arr.v[r];
        dw_request *q = &s->reqs[s->nreqs];
        if (dw_request_from_json(&C->arena, dw_json_get(rq, "principal"), dw_json_get(rq, "action"),
                                 dw_json_get(rq, "resource"), dw_json_get(rq, "context"), schema, false, q, &eb)) continue;
        if (sig_of(prog, &s->store, q, false, &s->want[s->nreqs])) continue;
        s->nreqs++;
    }
    dw_buf_free(&eb);
    snprintf(s->name, sizeof s->name, "%s", file);
    ok = s->nreqs > 0;
out:
    if (!ok) { dw_store_free(&s->store); dw_buf_free(&s->bytes); }
    else C->n++;
    if (schema) dw_schema_free(schema);
    if (prog) dw_program_free(prog);
    if (ps) dw_policy_set_free(ps);
    dw_diags_free(&d);
    free(text); free(ptext); free(stext); free(etext);
}

/* Replay a Box trace through an engine on the artifact at `dwb`: one entry
 * per line (-1 recorded, -2 refused, else allow + 2 * cause); -1 if the
 * engine does not open. */
static int replay_trace(const char *dwb, const char *trace, int *out, int *nout)
{
    dw_engine_config cfg = { .policy_path = dwb, .schema_path = "box", .replay_timestamps = true };
    char err[256];
    FILE *saved = mute_stderr();
    dw_engine *e = dw_engine_open(&cfg, err, sizeof err);
    unmute_stderr(saved);
    if (!e) return -1;
    char *text;
    size_t len;
    assert_int_equal(dw_read_file(trace, &text, &len), 0);
    int n = 0;
    for (char *line = text; line && *line && n < CTRACE_MAX;) {
        char *nl = strchr(line, '\n');
        size_t ll = nl ? (size_t)(nl - line) : strlen(line);
        if (ll > 1) {
            dw_verdict v;
            if (memmem(line, ll, "\"principal\"", 11)) {   /* a Cedar-shaped request (requests.jsonl) */
                assert_int_equal(dw_engine_decide_request_json(e, line, ll, DW_TS_NOW, &v), 0);
                out[n++] = v.allow + 2 * (int)v.cause;
            } else if (memmem(line, ll, "\"kind\":\"request\"", 16)) {
                assert_int_equal(dw_engine_decide_json(e, line, ll, DW_TS_NOW, &v), 0);
                out[n++] = v.allow + 2 * (int)v.cause;
            } else out[n++] = dw_engine_record_json(e, line, ll, DW_TS_NOW, err, sizeof err) ? -2 : -1;
        }
        line = nl ? nl + 1 : NULL;
    }
    *nout = n;
    free(text);
    dw_engine_close(e);
    return 0;
}

static void add_box_examples(const char *shared)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/examples/box", shared);
    DIR *dp = opendir(dir);
    if (!dp) return;
    struct dirent *de;
    char *names[64];
    int nn = 0;
    while ((de = readdir(dp)) && nn < 64)
        if (de->d_name[0] >= '0' && de->d_name[0] <= '9') names[nn++] = strdup(de->d_name);
    closedir(dp);
    qsort(names, (size_t)nn, sizeof *names, strcmp_ptr);
    for (int i = 0; i < nn; i++) {
        char pol[1024];
        csubject *s = new_subject();
        snprintf(pol, sizeof pol, "%s/%s/policy.dw", dir, names[i]);
        snprintf(s->trace, sizeof s->trace, "%s/%s/trace.jsonl", dir, names[i]);
        if (access(s->trace, R_OK)) snprintf(s->trace, sizeof s->trace, "%s/%s/requests.jsonl", dir, names[i]);
        snprintf(s->name, sizeof s->name, "box/%s", names[i]);
        s->box = true;
        dw_session ss;
        dw_session_init(&ss);
        FILE *saved = mute_stderr();
        bool ok = !dw_session_load_schema(&ss, "box") && !dw_session_load_events(&ss, NULL) &&
                  !dw_session_load_policies(&ss, pol) && !dw_artifact_write(ss.prog, 0, &s->bytes);
        unmute_stderr(saved);
        dw_session_free(&ss);
        if (ok) {
            write_file(C->tmp, s->bytes.p, s->bytes.len);
            ok = access(s->trace, R_OK) == 0 && replay_trace(C->tmp, s->trace, s->verdicts, &s->nv) == 0;
        }
        if (ok) C->n++;
        else dw_buf_free(&s->bytes);
        free(names[i]);
    }
}

static int csetup(void **state)
{
    C = calloc(1, sizeof *C);
    dw_arena_init(&C->arena, 1 << 20);
    snprintf(C->tmp, sizeof C->tmp, "/tmp/test_artifact_c%d.dwb", (int)getpid());
    const char *root = getenv("DW_CORPUS") ? getenv("DW_CORPUS") : "build/corpus";
    const char *shared = getenv("DW_SHARED") ? getenv("DW_SHARED") : "../shared";
    long nfiles = getenv("DW_MUTATION_FILES") ? atol(getenv("DW_MUTATION_FILES")) : 40;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/corpus-tests", root);
    DIR *dp = opendir(dir);
    if (dp) {
        char **tests = NULL;
        size_t nt = 0, ct = 0;
        struct dirent *de;
        while ((de = readdir(dp))) {
            size_t l = strlen(de->d_name);
            if (l < 6 || strcmp(de->d_name + l - 5, ".json") || strstr(de->d_name, ".entities.")) continue;
            if (nt == ct) { ct = ct ? 2 * ct : 1024; tests = realloc(tests, ct * sizeof *tests); assert_non_null(tests); }
            tests[nt++] = strdup(de->d_name);
        }
        closedir(dp);
        qsort(tests, nt, sizeof *tests, strcmp_ptr);
        size_t step = nfiles > 0 && (size_t)nfiles < nt ? nt / (size_t)nfiles : 1;
        for (size_t i = 0; i < nt; i += step) add_corpus_test(root, tests[i]);
        for (size_t i = 0; i < nt; i++) free(tests[i]);
        free(tests);
    }
    size_t ncorpus = C->n;
    add_box_examples(shared);
    /* a campaign over fewer artifacts than asked would pass for one over all of them */
    if (!ncorpus) {
        fprintf(stderr, "test_artifact_corpus: no corpus tests under %s (set DW_CORPUS to the unpacked corpus: make build/corpus/.unpacked)\n", dir);
        return -1;
    }
    if (C->n == ncorpus) {
        fprintf(stderr, "test_artifact_corpus: no Box examples under %s (set DW_SHARED to the shared directory holding examples/box)\n", shared);
        return -1;
    }
    *state = C;
    return 0;
}

static int cteardown(void **state)
{
    for (size_t i = 0; i < C->n; i++) {
        dw_buf_free(&C->s[i].bytes);
        if (!C->s[i].box) dw_store_free(&C->s[i].store);
    }
    free(C->s);
    dw_arena_free(&C->arena);
    unlink(C->tmp);
    free(C);
    return 0;
}

/* Mutate m[0..n) (capacity cap) in place; returns the new length. */
static size_t mutate(uint64_t *x, uint8_t *m, size_t n, size_t cap, const uint8_t *donor, size_t dn, int *kind)
{
    *kind = (int)(rnd(x) % 6);
    switch (*kind) {
    case 0: {                                   /* flip 1-8 bytes */
        int flips = 1 + (int)(rnd(x) % 8);
        for (int k = 0; k < flips; k++) m[rnd(x) % n] ^= (uint8_t)(1 + rnd(x) % 255);
        return n;
    }
    case 1: return rnd(x) % n;                  /* truncate */
    case 2: {                                   /* splice a run of itself elsewhere */
        size_t from = rnd(x) % n, to = rnd(x) % n, run = 1 + rnd(x) % 64;
        if (from + run > n) run = n - from;
        if (to + run > n) run = n - to;
        memmove(m + to, m + from, run);
        return n;
    }
    case 3: {                                   /* splice a run of another artifact, often at the same offset */
        size_t from = rnd(x) % dn, run = 1 + rnd(x) % 256;
        size_t to = rnd(x) % 2 ? from : rnd(x) % n;
        if (to >= n) to = n - 1;
        if (from + run > dn) run = dn - from;
        if (to + run > n) run = n - to;
        memcpy(m + to, donor + from, run);
        return n;
    }
    case 4: {                                   /* insert a run of another artifact */
        size_t from = rnd(x) % dn, run = 1 + rnd(x) % 64, at = rnd(x) % n;
        if (from + run > dn) run = dn - from;
        if (n + run > cap) return n;
        memmove(m + at + run, m + at, n - at);
        memcpy(m + at, donor + from, run);
        return n + run;
    }
    default: {                                  /* crossover: this head, the other's tail */
        size_t k = rnd(x) % (n < dn ? n : dn);
        if (dn > cap) return n;
        memcpy(m + k, donor + k, dn - k);
        return dn;
    }
    }
}

/* DW_MUTATION_DUMP=DIR: every failing mutant is written there (for tests/regress/). */
static void dump_mutant(const csubject *s, long it, const uint8_t *m, size_t len)
{
    const char *dir = getenv("DW_MUTATION_DUMP");
    if (!dir) return;
    char path[1024];
    snprintf(path, sizeof path, "%s/%.40s-%ld.dwb", dir, strchr(s->name, '/') ? strchr(s->name, '/') + 1 : s->name, it);
    write_file(path, m, len);
}

/* Run a loaded mutant p (bytes m) of subject s, and free p.  Cedar subjects
 * decide their requests with the index on and off: a difference is a
 * failure (counted in *bad, the mutant dumped).  Box subjects replay their
 * trace through an engine opened on the bytes.  1: answers as the original,
 * 0: differently, -1: the engine refused the artifact. */
static int run_mutant(const csubject *s, dw_program *p, const uint8_t *m, size_t len, long it, const char *what, size_t *bad)
{
    if (s->box) {
        dw_program_free(p);
        write_file(C->tmp, m, len);
        int got[CTRACE_MAX], ng = 0;
        if (replay_trace(C->tmp, s->trace, got, &ng)) return -1;
        return ng == s->nv && memcmp(got, s->verdicts, (size_t)ng * sizeof *got) == 0;
    }
    int same = 1;
    for (uint32_t r = 0; r < s->nreqs; r++) {
        uint64_t on, off;
        if (sig_of(p, &s->store, &s->reqs[r], false, &on) || sig_of(p, &s->store, &s->reqs[r], true, &off)) continue;
        if (on != off) {
            (*bad)++;
            print_message("%s %s %ld, request %u: a verified program decides differently with the index on and off\n",
                          s->name, what, it, r);
            dump_mutant(s, it, m, len);
        }
        if (on != s->want[r]) same = 0;
    }
    dw_program_free(p);
    return same;
}

static void test_corpus_mutations(void **state)
{
    long total = getenv("DW_MUTATIONS") ? atol(getenv("DW_MUTATIONS")) : 1000;
    uint64_t x = getenv("DW_MUTATION_SEED") ? strtoull(getenv("DW_MUTATION_SEED"), NULL, 10) : 1;
    x = x * 0x9E3779B97F4A7C15ull + 1;
    size_t maxlen = 0, nbox = 0;
    for (size_t i = 0; i < C->n; i++) { if (C->s[i].bytes.len > maxlen) maxlen = C->s[i].bytes.len; nbox += C->s[i].box; }
    size_t cap = 2 * maxlen + 64;
    uint8_t *m = malloc(cap);
    assert_non_null(m);
    size_t by_kind[6] = { 0 }, refused_sum = 0, refused_struct = 0, refused_engine = 0, same = 0, differs = 0, unchanged = 0;
    size_t bad = 0, became_donor = 0;
    for (long it = 0; it < total; it++) {
        csubject *s = &C->s[rnd(&x) % C->n];
        const csubject *dn = &C->s[rnd(&x) % C->n];
        bool reseal_it = it % 2;
        int kind;
        size_t len;
        bool identical;
        for (int tries = 0;; tries++) {          /* a splice of equal bytes is no mutation: draw again */
            memcpy(m, s->bytes.p, s->bytes.len);
            len = mutate(&x, m, s->bytes.len, cap, (const uint8_t *)dn->bytes.p, dn->bytes.len, &kind);
            if (reseal_it) reseal(m, len);
            identical = len == s->bytes.len && memcmp(m, s->bytes.p, len) == 0;
            if (!identical || tries == 8) break;
        }
        by_kind[kind]++;
        unchanged += identical;
        /* a crossover at offset 0 (or a splice covering everything) rebuilds
         * the donor itself: a genuine artifact, the original's rule does not apply */
        if (!identical && len == dn->bytes.len && memcmp(m, dn->bytes.p, len) == 0) { became_donor++; continue; }
        char msg[256];
        dw_program *p = dw_artifact_load(m, len, msg, sizeof msg);
        if (!p) {
            if (identical) { bad++; print_message("%s: an unchanged artifact was refused: %s\n", s->name, msg); }
            if (reseal_it) refused_struct++; else refused_sum++;
            continue;
        }
        int answers = run_mutant(s, p, m, len, it, "mutant", &bad);
        if (answers < 0) { refused_engine++; continue; }
        bool same_answers = answers == 1;
        if (same_answers) same++; else differs++;
        if (!reseal_it && !same_answers) {
            bad++;
            print_message("%s mutant %ld: not resealed, loaded, and decides differently\n", s->name, it);
            dump_mutant(s, it, m, len);
        }
    }
    free(m);
    print_message("corpus mutations: %ld mutants of %zu artifacts (%zu corpus, %zu Box examples); "
                  "flip %zu, truncate %zu, self-splice %zu, splice %zu, insert %zu, crossover %zu; "
                  "refused by the checksum %zu, by structure/verifier %zu, by the engine %zu; "
                  "loaded and decided as the original %zu (%zu unchanged), differently (resealed) %zu; rebuilt the donor %zu; failures %zu\n",
                  total, C->n, C->n - nbox, nbox, by_kind[0], by_kind[1], by_kind[2], by_kind[3], by_kind[4], by_kind[5],
                  refused_sum, refused_struct, refused_engine, same, unchanged, differs, became_donor, bad);
    assert_int_equal(refused_sum + refused_struct + refused_engine + same + differs + became_donor, (size_t)total);
    assert_int_equal(bad, 0);
}

/* ================================================================ program mutations
 * Byte mutations rarely get past the checksum and the section checks (98 %
 * stop there), so the verifier's semantic checks see few of them.  These
 * mutate the loaded program instead (an instruction's opcode or operand, two
 * instructions swapped, a constant replaced by another constant or by a new
 * string/Long/Bool, an index entry's field, an index entry dropped, a
 * policy's code range, stack bound or effect, a field of the temporal
 * tables or of a policy's leaf range), 1-3 at a time, and let
 * dw_artifact_write encode and seal the result: a well-formed file with
 * hostile contents.  Each must be refused, or load and decide without
 * crashing with the index on and off identically (Cedar subjects; Box
 * subjects replay their trace through the engine).
 *   DW_PROGRAM_MUTATIONS   number of mutants (default 10000; the campaign: 1000000)
 *   DW_MUTATION_SEED       (default 1) */
static uint32_t pick_operand(uint64_t *x, const dw_program *p, uint32_t a)
{
    uint32_t lim = p->nconsts;
    if (p->nstrs > lim) lim = p->nstrs;
    if (p->ncode > lim) lim = p->ncode;
    switch (rnd(x) % 4) {
    case 0: return a + 1;
    case 1: return a ? a - 1 : 0;
    case 2: return (uint32_t)(rnd(x) % (lim + 2));
    default: return (uint32_t)(rnd(x) % 8);
    }
}

/* One field of the temporal tables (formulas, patterns, terms, term lists,
 * aggregates, leaves) or of a policy's leaf range and scope code. */
static void mutate_temporal(uint64_t *x, dw_program *p)
{
    dw_temporal_tables *t = &p->temporal;
    uint32_t lim = t->ntfs + t->ntterms + p->nstrs + 2;
    uint32_t v = (uint32_t)(rnd(x) % 3 == 0 ? rnd(x) % 4 : rnd(x) % lim);
    int64_t w = rnd(x) % 4 == 0 ? (int64_t)rnd(x) : (int64_t)(rnd(x) % 7200) - 60;
    switch (rnd(x) % 8) {
    case 0: case 1: {
        if (!t->ntfs) return;
        dw_tf *f = &t->tfs[rnd(x) % t->ntfs];
        switch (rnd(x) % 10) {
        case 0: f->kind = (uint8_t)(rnd(x) % 10); break;
        case 1: f->op = (uint8_t)(rnd(x) % 8); break;
        case 2: f->var = (uint16_t)(rnd(x) % 6); break;
        case 3: f->a = v; break;
        case 4: f->b = v; break;
        case 5: f->window = w; break;
        case 6: f->type_str = v; break;
        case 7: f->kind_str = v; break;
        case 8: f->first = v; break;
        default: f->n = v; break;
        }
        return;
    }
    case 2:
        if (!t->ntpatterns) return;
        if (rnd(x) & 1) t->tpatterns[rnd(x) % t->ntpatterns].path_str = v;
        else t->tpatterns[rnd(x) % t->ntpatterns].term = v;
        return;
    case 3: {
        if (!t->ntterms) return;
        dw_tterm *tt = &t->tterms[rnd(x) % t->ntterms];
        switch (rnd(x) % 3) {
        case 0: tt->kind = (uint8_t)(rnd(x) % 10); break;
        case 1: tt->a = v; break;
        default: tt->n = v; break;
        }
        return;
    }
    case 4:
        if (t->ntargs) t->targs[rnd(x) % t->ntargs] = v;
        else if (t->naggvars) t->aggvars[rnd(x) % t->naggvars] = (uint16_t)(rnd(x) % 6);
        return;
    case 5: {
        if (!t->ntaggs) return;
        dw_tagg *g = &t->taggs[rnd(x) % t->ntaggs];
        switch (rnd(x) % 4) {
        case 0: g->body = v; break;
        case 1: g->sum_var = (uint16_t)(rnd(x) % 6); break;
        case 2: g->first_var = v; break;
        default: g->nvars = (uint32_t)(rnd(x) % 4); break;
        }
        return;
    }
    case 6: {
        if (!t->nleaves) return;
        dw_tleaf *l = &t->leaves[rnd(x) % t->nleaves];
        switch (rnd(x) % 3) {
        case 0: l->root = v; break;
        case 1: l->nvars = (uint16_t)(rnd(x) % 6); break;
        default: l->reach = w; break;
        }
        return;
    }
    default: {
        if (!p->npolicies) return;
        dw_policy_code *pc = &p->policies[rnd(x) % p->npolicies];
        int d = (int)(rnd(x) % 5) - 2;
        switch (rnd(x) % 4) {
        case 0: pc->first_leaf = (uint32_t)((int64_t)pc->first_leaf + d); break;
        case 1: pc->nleaves = (uint32_t)((int64_t)pc->nleaves + d); break;
        case 2: pc->scope_entry = (uint32_t)((int64_t)pc->scope_entry + d); break;
        default: pc->scope_end = (uint32_t)((int64_t)pc->scope_end + d); break;
        }
        return;
    }
    }
}

static int mutate_program(uint64_t *x, dw_program *p)
{
    int kind = (int)(rnd(x) % 8);
    if (p->temporal.nleaves && rnd(x) % 2) kind = 8;
    switch (kind) {
    case 8:
        mutate_temporal(x, p);
        return kind;
    case 0: case 1: {                           /* an operand, an opcode */
        if (!p->ncode) return kind;
        uint32_t i = (uint32_t)(rnd(x) % p->ncode), ins = p->code[i];
        p->code[i] = kind == 0 ? DW_INS(DW_INS_OP(ins), pick_operand(x, p, DW_INS_A(ins)))
                               : DW_INS(rnd(x) % DW_OP__COUNT, DW_INS_A(ins));
        return kind;
    }
    case 2: {                                   /* two instructions swapped */
        if (p->ncode < 2) return kind;
        uint32_t i = (uint32_t)(rnd(x) % p->ncode), j = (uint32_t)(rnd(x) % p->ncode), t = p->code[i];
        p->code[i] = p->code[j];
        p->code[j] = t;
        return kind;
    }
    case 3: {                                   /* a constant replaced */
        if (!p->nconsts) return kind;
        uint32_t i = (uint32_t)(rnd(x) % p->nconsts);
        switch (rnd(x) % 4) {
        case 0: p->consts[i] = p->consts[rnd(x) % p->nconsts]; break;
        case 1: p->consts[i] = dw_long((int64_t)rnd(x) >> (rnd(x) % 64)); break;
        case 2: p->consts[i] = dw_bool(rnd(x) & 1); break;
        default: {                              /* a string, sometimes shaped like a dw_value */
            char b[40];
            size_t n = rnd(x) % sizeof b;
            for (size_t k = 0; k < n; k++) b[k] = (char)(rnd(x) % 3 ? 'A' + rnd(x) % 26 : rnd(x) % 8);
            dw_value v;
            if (dw_make_string(&p->arena, b, n, &v)) p->consts[i] = v;
        }
        }
        return kind;
    }
    case 4: {                                   /* an index entry's field */
        if (!p->nixents) return kind;
        dw_index_entry *e = &p->ixents[rnd(x) % p->nixents];
        uint32_t lim = p->nstrs + 1;
        switch (rnd(x) % 7) {
        case 0: e->kind = (uint8_t)(rnd(x) % 5); break;
        case 1: e->var = (uint8_t)(rnd(x) % 4); break;
        case 2: e->policy = (uint32_t)(rnd(x) % (p->npolicies + 1)); break;
        case 3: e->type_str = (uint32_t)(rnd(x) % lim); break;
        case 4: e->id_str = (uint32_t)(rnd(x) % lim); break;
        case 5: e->act_type_str = (uint32_t)(rnd(x) % lim); break;
        default: e->act_id_str = (uint32_t)(rnd(x) % lim); break;
        }
        return kind;
    }
    case 5: {                                   /* an index entry dropped */
        if (!p->nixents) return kind;
        uint32_t i = (uint32_t)(rnd(x) % p->nixents);
        p->ixents[i] = p->ixents[--p->nixents];
        return kind;
    }
    default: {                                  /* a policy's range, stack bound, effect */
        if (!p->npolicies) return kind;
        dw_policy_code *pc = &p->policies[rnd(x) % p->npolicies];
        int d = (int)(rnd(x) % 5) - 2;
        switch (rnd(x) % 4) {
        case 0: pc->entry = (uint32_t)((int64_t)pc->entry + d); break;
        case 1: pc->end = (uint32_t)((int64_t)pc->end + d); break;
        case 2: pc->max_stack = (uint32_t)((int64_t)pc->max_stack + d); break;
        default: pc->effect ^= 1; break;
        }
        return 7;
    }
    }
}

static void test_program_mutations(void **state)
{
    long total = getenv("DW_PROGRAM_MUTATIONS") ? atol(getenv("DW_PROGRAM_MUTATIONS")) : 10000;
    uint64_t x = getenv("DW_MUTATION_SEED") ? strtoull(getenv("DW_MUTATION_SEED"), NULL, 10) : 1;
    x = x * 0xD1B54A32D192ED03ull + 7;
    size_t by_kind[9] = { 0 }, unwritable = 0, refused = 0, refused_engine = 0, same = 0, differs = 0, bad = 0;
    size_t nbox = 0;
    for (size_t i = 0; i < C->n; i++) nbox += C->s[i].box;
    for (long it = 0; it < total; it++) {
        /* one mutant in eight is of a Box example (temporal tables, replayed through the engine) */
        csubject *s = &C->s[rnd(&x) % C->n];
        if (nbox && it % 8 == 7) {
            size_t k = rnd(&x) % nbox;
            for (size_t i = 0; i < C->n; i++) if (C->s[i].box && k-- == 0) { s = &C->s[i]; break; }
        }
        char msg[256];
        dw_program *p = dw_artifact_load(s->bytes.p, s->bytes.len, msg, sizeof msg);
        if (!p) fail_msg("%s: the original was refused: %s", s->name, msg);
        int n = 1 + (int)(rnd(&x) % 3);
        for (int k = 0; k < n; k++) by_kind[mutate_program(&x, p)]++;
        dw_buf b = { 0 };
        int wrc = dw_artifact_write(p, 0, &b);
        dw_program_free(p);
        if (wrc) { unwritable++; dw_buf_free(&b); continue; }
        dw_program *q = dw_artifact_load(b.p, b.len, msg, sizeof msg);
        if (!q) { refused++; dw_buf_free(&b); continue; }
        int answers = run_mutant(s, q, (const uint8_t *)b.p, b.len, it, "program mutant", &bad);
        dw_buf_free(&b);
        if (answers < 0) refused_engine++;
        else if (answers == 1) same++;
        else differs++;
    }
    print_message("program mutations: %ld mutants of %zu artifacts; operand %zu, opcode %zu, swap %zu, constant %zu, "
                  "index field %zu, index drop %zu, policy %zu, temporal %zu; not writable %zu, refused by the loader/verifier %zu, by the engine %zu; "
                  "loaded and decided as the original %zu, differently %zu; failures %zu\n",
                  total, C->n, by_kind[0], by_kind[1], by_kind[2], by_kind[3], by_kind[4], by_kind[5], by_kind[7], by_kind[8],
                  unwritable, refused, refused_engine, same, differs, bad);
    assert_int_equal(unwritable + refused + refused_engine + same + differs, (size_t)total);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest ctests[] = {
        cmocka_unit_test(test_corpus_mutations),
        cmocka_unit_test(test_program_mutations),
    };
    return cmocka_run_group_tests(ctests, csetup, cteardown);
}
