/* test_retain.c - history retention by event identity (vm/retain.c,
 * runtime/retention.c; issue 13 rows 10-13).
 *
 * 1. Randomized differential: random leaves over every temporal operator
 *    (predicates on four identities, &&, !, formerly, previous, since,
 *    count aggregates with tp, exists) and random traces over those
 *    identities and ones no predicate names.  At every event i, the
 *    leaf evaluated by the reference evaluator over the whole history
 *    [0, i] must equal it over the history a retaining engine holds: the
 *    events before i the leaf needs (dw_retain_leaf_needs), then i.  The
 *    test also checks it dropped something (the filter is not "keep all").
 * 2. Shapes: the needs of typical leaves (Box's count idiom keeps only its
 *    predicate's identity; `previous`, `formerly !P` and a positive
 *    `since` left keep everything; `!B since A` keeps A and B).
 * 3. The engine: 20,000 events no predicate matches leave the history at
 *    a handful of events, matched ones stay; verdicts equal an engine that
 *    was never sent the unmatched ones; replay with a time floor retains
 *    by time as the runtime does.
 * 4. Reloads: 300 reloads of one artifact leave one live program
 *    (dw_program_live) and rule names handed out before stay valid; a
 *    reload under 8 deciding threads with a checkpoint every 64 events
 *    completes (bounded: alarm).
 * 5. A leaf replaced by a reload resumes with its state when it comes back:
 *    after a restart on the original artifact (the reload's checkpoint
 *    carries it) and after a live reload back; a restart on the new
 *    artifact keeps the new leaf's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vm/retain.h"
#include "vm/teval.h"
#include "vm/program.h"
#include "compiler/artifact_write.h"
#include "runtime/dogwood.h"
#include "runtime/dogwood_parts.h"
#include "runtime/engine_int.h"   /* test_keep_fast_path reads the kept events */
#include "runtime/load.h"

/* ================================================================ random tables */

#define MAXN 2048
#define MAXEV 80

typedef struct tb {
    dw_arena a, scratch;
    dw_tf tfs[MAXN];            uint32_t ntfs;
    dw_tpattern pats[MAXN];     uint32_t npats;
    dw_tterm terms[MAXN];       uint32_t nterms;
    dw_tagg aggs[MAXN];         uint32_t naggs;
    uint16_t aggvars[4];
    dw_tleaf leaves[1];
    dw_str strs[MAXN];        uint32_t nstrs;
    dw_value consts[MAXN];      uint32_t nconsts;
    dw_temporal_tables t;
    dw_event evs[MAXEV];
    uint64_t rng;
} tb;

static tb *B;

/* splitmix64 */
static uint32_t rnd(uint32_t n)
{
    uint64_t z = (B->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return n ? (uint32_t)((z ^ (z >> 31)) % n) : 0;
}

/* A string of the tables (no sharing: equal identities must compare by content). */
static uint32_t S(const char *s)
{
    assert_true(B->nstrs < sizeof B->strs / sizeof *B->strs);
    B->strs[B->nstrs] = (dw_str){ s, strlen(s) };
    return B->nstrs++;
}

/* identities: predicates name a/b request/response; traces also carry c and u (never named) */
static const char *ACTS[] = { "a", "b", "c", "u" };
static const char *KINDS[] = { "request", "response" };

static uint32_t tf(dw_tf f)
{
    assert_true(B->ntfs < MAXN);
    B->tfs[B->ntfs] = f;
    return B->ntfs++;
}

static uint32_t term(uint8_t kind, uint32_t a)
{
    B->terms[B->nterms] = (dw_tterm){ kind, a, 0 };
    return B->nterms++;
}

static uint32_t pred(void)
{
    dw_tf f = { .kind = DW_TF_PRED, .type_str = S("Ns::Action"), .id_str = S(ACTS[rnd(2)]), .kind_str = S(KINDS[rnd(2)]) };
    if (rnd(2)) {                 /* input.x: a constant 0 or 1 */
        B->consts[B->nconsts] = dw_long((int64_t)rnd(2));
        B->pats[B->npats] = (dw_tpattern){ S("input.x"), term(DW_TT_CONST, B->nconsts++) };
        f.first = B->npats++;
        f.n = 1;
    }
    return tf(f);
}

static int64_t win(void) { static const int64_t w[] = { 0, 1, 2, 3, 5, 8 }; return w[rnd(6)]; }

/* A random formula binding nothing visible (slot 0 is an aggregate's own). */
static uint32_t gen(int depth)
{
    uint32_t r = depth <= 0 ? 0 : rnd(10);
    switch (r) {
    case 0: case 1: return pred();
    case 2: { uint32_t a = gen(depth - 1), b = gen(depth - 1); return tf((dw_tf){ .kind = DW_TF_AND, .a = a, .b = b }); }
    case 3: return tf((dw_tf){ .kind = DW_TF_NOT, .a = gen(depth - 1) });
    case 4: case 5: return tf((dw_tf){ .kind = DW_TF_FORMERLY, .window = win(), .a = gen(depth - 1) });
    case 6: return tf((dw_tf){ .kind = DW_TF_PREVIOUS, .window = win(), .a = gen(depth - 1) });
    case 7: {                     /* L since R; L is often !P (the "no B since A" idiom) */
        uint32_t l = rnd(2) ? tf((dw_tf){ .kind = DW_TF_NOT, .a = pred() }) : gen(depth - 1);
        uint32_t rr = gen(depth - 1);
        return tf((dw_tf){ .kind = DW_TF_SINCE, .window = win(), .a = l, .b = rr });
    }
    case 8: {                     /* (count for (t). where formerly (φ && tp(t))) > k */
        uint32_t tp = tf((dw_tf){ .kind = DW_TF_TP, .var = 0 });
        uint32_t body = tf((dw_tf){ .kind = DW_TF_AND, .a = gen(depth - 1), .b = tp });
        if (rnd(3)) body = tf((dw_tf){ .kind = DW_TF_FORMERLY, .window = win(), .a = body });
        B->aggs[B->naggs] = (dw_tagg){ .body = body, .first_var = 0, .nvars = 1 };
        uint32_t agg = term(DW_TT_COUNT, B->naggs++);
        B->consts[B->nconsts] = dw_long((int64_t)rnd(3));
        uint32_t k = term(DW_TT_CONST, B->nconsts++);
        return tf((dw_tf){ .kind = DW_TF_CMP, .op = DW_TC_OP_GT, .a = agg, .b = k });
    }
    default: return tf((dw_tf){ .kind = DW_TF_EXISTS, .var = 0, .a = gen(depth - 1) });
    }
}

static void build_leaf(void)
{
    B->ntfs = B->npats = B->nterms = B->naggs = B->nconsts = B->nstrs = 0;
    B->aggvars[0] = 0;
    uint32_t root = gen(1 + (int)rnd(3));
    /* mostly under a past operator, as real leaves are */
    if (rnd(4)) root = tf((dw_tf){ .kind = DW_TF_FORMERLY, .window = win(), .a = root });
    B->leaves[0] = (dw_tleaf){ .root = root, .nvars = 1, .reach = 100, .identity = 1 };
    B->t = (dw_temporal_tables){ .tfs = B->tfs, .ntfs = B->ntfs, .tpatterns = B->pats, .ntpatterns = B->npats,
                                 .tterms = B->terms, .ntterms = B->nterms, .taggs = B->aggs, .ntaggs = B->naggs,
                                 .aggvars = B->aggvars, .naggvars = 1, .leaves = B->leaves, .nleaves = 1 };
}

static void make_event(dw_event *e, int64_t ts)
{
    e->ts = ts;
    const char *a = ACTS[rnd(4)], *k = KINDS[rnd(2)];
    e->atype = (dw_str){ "Ns::Action", 10 };
    e->aid = (dw_str){ a, strlen(a) };
    e->kind = (dw_str){ k, strlen(k) };
    /* input.x is what predicates read; input.y and z no predicate names (a kept event need not hold them) */
    dw_field *in = dw_arena_alloc(&B->a, 2 * sizeof *in), *lf = dw_arena_alloc(&B->a, 2 * sizeof *lf);
    in[0].key = "x"; in[0].klen = 1; in[0].v = dw_long((int64_t)rnd(2));
    in[1].key = "y"; in[1].klen = 1; in[1].v = dw_long(7);
    lf[0].key = "input"; lf[0].klen = 5;
    lf[1].key = "z"; lf[1].klen = 1; lf[1].v = dw_long(8);
    assert_true(dw_make_record(in, 2, &lf[0].v));
    assert_true(dw_make_record(lf, 2, &e->logged));
}

static bool eval_at(const dw_event **view, uint32_t n)
{
    dw_history_view hv = { view, n, 1 };
    dw_tanchor an = { 0 };
    an.context.kind = an.principal_attrs.kind = an.resource_attrs.kind = DW_V_RECORD;
    dw_arena_reset(&B->scratch);
    dw_teval_ctx cx = { .t = &B->t, .strs = B->strs, .nstrs = B->nstrs, .consts = B->consts, .nconsts = B->nconsts,
                        .h = &hv, .anchor = &an, .scratch = &B->scratch, .budget = 100000000 };
    bool h = false;
    assert_int_equal(dw_teval_leaf(&cx, 0, &h), 0);
    return h;
}

static void test_random_differential(void **state)
{
    (void)state;
    uint64_t leaves = 0, filtering = 0, evals = 0, dropped = 0, held = 0, cut = 0, bare = 0, same_hits = 0;
    static dw_event parts[MAXEV];        /* what the engine keeps of each (dw_retain_set_fields, dw_retain_project) */
    for (int trial = 0; trial < 3000; trial++) {
        dw_arena_reset(&B->a);
        build_leaf();
        dw_retain_leaf need;
        assert_int_equal(dw_retain_leaf_build(&B->t, B->strs, B->nstrs, B->consts, B->nconsts, 0, &need), 0);
        dw_retain_set set, twice;            /* twice: the leaf's needs as two leaves' (one entry per identity) */
        assert_int_equal(dw_retain_set_build(&set, &need, 1), 0);
        dw_retain_leaf two[2] = { need, need };
        assert_int_equal(dw_retain_set_build(&twice, two, 2), 0);
        leaves++;
        filtering += !need.keep_all;
        uint32_t nev = 10 + rnd(MAXEV - 10);
        int64_t ts = 0;
        const dw_event *full[MAXEV], *kept[MAXEV], *kparts[MAXEV];
        uint32_t nk = 0;
        const void *last = NULL;             /* an identity of this trial's set */
        for (uint32_t i = 0; i < nev; i++) {
            ts += (int64_t)rnd(4);
            make_event(&B->evs[i], ts);
            full[i] = &B->evs[i];
            kept[nk] = kparts[nk] = &B->evs[i];      /* the event being decided is always in the history */
            bool want = eval_at(full, i + 1), got = eval_at(kept, nk + 1), gotp = eval_at(kparts, nk + 1);
            if (want != got || want != gotp) {
                fprintf(stderr, "trial %d event %u: full history %d, retained %d, retained parts %d (keep_all %d, %u ids)\n",
                        trial, i, want, got, gotp, need.keep_all, need.nids);
                fail();
            }
            evals++;
            held += want;
            /* after its decision, the engine keeps it only if the leaf needs it, and of it what the leaf reads */
            bool needed = dw_retain_leaf_needs(&need, &B->evs[i]);
            dw_str paths[DW_RETAIN_PATHS_MAX];
            uint32_t np;
            const void *id;
            int f = dw_retain_set_fields(&set, &B->evs[i], dw_retain_ident_hash(&B->evs[i]), paths, DW_RETAIN_PATHS_MAX, &np, &id);
            assert_int_equal(dw_retain_set_needs(&set, &B->evs[i]), needed);
            assert_int_equal(dw_retain_set_needs(&twice, &B->evs[i]), needed);
            dw_str paths2[DW_RETAIN_PATHS_MAX];
            uint32_t np2;
            const void *id2;
            assert_int_equal(dw_retain_set_fields(&twice, &B->evs[i], dw_retain_ident_hash(&B->evs[i]), paths2, DW_RETAIN_PATHS_MAX,
                                                  &np2, &id2), f);
            assert_int_equal(np2, np);
            /* from a remembered identity (engine_keep.c's last one): the same answer without the lookup */
            const void *same = dw_retain_set_same(f != DW_RETAIN_NONE ? id : last, &B->evs[i]);
            if (same) {
                assert_int_equal(dw_retain_entry_fields(same, &B->evs[i], paths2, DW_RETAIN_PATHS_MAX, &np2), f);
                assert_int_equal(np2, np);
                same_hits++;
            }
            if (id) last = id;
            assert_int_equal(f != DW_RETAIN_NONE, needed);
            assert_true(f != DW_RETAIN_FIELDS || id);
            parts[i] = B->evs[i];
            if (f == DW_RETAIN_FIELDS) {
                assert_true(dw_retain_project(&B->a, &B->evs[i].logged, paths, np, &parts[i].logged));
                assert_null(dw_record_path(&parts[i].logged, "z", 1));           /* never read: not kept */
                assert_null(dw_record_path(&parts[i].logged, "input.y", 7));
                cut++;
                bare += parts[i].logged.n == 0;
            }
            if (needed) kparts[nk] = &parts[i], kept[nk++] = &B->evs[i];
            else dropped++;
        }
        dw_retain_set_free(&set);
        dw_retain_set_free(&twice);
        dw_retain_leaf_free(&need);
    }
    printf("retain differential: %llu leaves (%llu filter), %llu evaluations (%llu hold), %llu events dropped, %llu kept in part "
           "(%llu identity only)\n",
           (unsigned long long)leaves, (unsigned long long)filtering, (unsigned long long)evals,
           (unsigned long long)held, (unsigned long long)dropped, (unsigned long long)cut, (unsigned long long)bare);
    assert_true(filtering > leaves / 4);
    assert_true(dropped > evals / 10);
    assert_true(cut > 1000 && bare > 0 && bare < cut);   /* most random leaves keep everything */
    assert_true(same_hits > 1000);
    assert_true(held > evals / 20 && held < evals - evals / 20);
}

/* ================================================================ shapes (compiled) */

static dw_program *compile_box(const char *text, dw_session *s, char *path, size_t cap)
{
    snprintf(path, cap, "/tmp/test_retain_%d.dw", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    dw_session_init(s);
    assert_int_equal(dw_session_load_schema(s, "box"), 0);
    assert_int_equal(dw_session_load_events(s, NULL), 0);
    assert_int_equal(dw_session_load_policies(s, path), 0);
    return s->prog;
}

#define FORBID "forbid (principal, action == Box::Action::\"http:request\", resource) when temporal { "
static const char *REQ = "Box::Action::\"http:request\"::request{ input.host: \"h\" }";

static void expect_needs(const char *leaf, bool keep_all, const char *const *ids, int nids)
{
    char text[2048], path[128];
    snprintf(text, sizeof text, FORBID "%s };\n", leaf);
    dw_session s;
    dw_program *p = compile_box(text, &s, path, sizeof path);
    assert_int_equal(p->temporal.nleaves, 1);
    dw_retain_leaf n;
    assert_int_equal(dw_retain_leaf_build(&p->temporal, p->strs, p->nstrs, p->consts, p->nconsts, 0, &n), 0);
    if (n.keep_all != keep_all || (!keep_all && (int)n.nids != nids)) {
        fprintf(stderr, "%s: keep_all %d, %u ids\n", leaf, n.keep_all, n.nids);
        fail();
    }
    for (int k = 0; !keep_all && k < nids; k++) {
        bool found = false;
        for (uint32_t q = 0; q < n.nids; q++) found |= !strcmp(n.ids[q].aid.s, "http:request") && !strcmp(n.ids[q].kind.s, ids[k]);
        assert_true(found);
    }
    dw_retain_leaf_free(&n);
    dw_session_free(&s);
    unlink(path);
}

static void test_shapes(void **state)
{
    (void)state;
    static const char *req[] = { "request" }, *both[] = { "request", "response" };
    static const struct { const char *fmt; bool keep_all; const char *const *ids; int nids; } cases[] = {
        { "exists (n: Long). ((count for (t: Timepoint). where (formerly within 10m (%s && tp(t)))) == n && n >= 3)", false, req, 1 },
        { "formerly within 1h %s", false, req, 1 },
        { "previous within 1h %s", true, NULL, 0 },
        { "formerly within 1h (!%s)", true, NULL, 0 },
        { "!Box::Action::\"http:request\"::response{} since within 1h %s", false, both, 2 },
        { "Box::Action::\"http:request\"::response{} since within 1h %s", true, NULL, 0 },
        /* nested: an event no predicate names can still be the outer witness */
        { "formerly within 1h (formerly within 10m %s)", true, NULL, 0 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char buf[1024];
        snprintf(buf, sizeof buf, cases[k].fmt, REQ);
        expect_needs(buf, cases[k].keep_all, cases[k].ids, cases[k].nids);
    }
}

/* ================================================================ the engine */

static char pol_path[128], dir[128];

/* Box example 06's budget: a 10-minute count of api.github.com responses. */
static const char budget_text[] =
    "@id(\"hosts\") permit (principal, action == Box::Action::\"http:request\", resource) when { context.input.host like \"*\" };\n"
    "@id(\"budget\") forbid (principal, action == Box::Action::\"http:request\", resource) when { context.input.host == \"api.github.com\" }\n"
    "  when temporal { exists (n: Long). ((count for (t: Timepoint). where (formerly within 10m\n"
    "    (Box::Action::\"http:request\"::response{ input.host: \"api.github.com\" } && tp(t)))) == n && n >= 3) };\n";

static void write_policy(const char *text)
{
    snprintf(pol_path, sizeof pol_path, "/tmp/test_retain_pol_%d.dw", (int)getpid());
    FILE *f = fopen(pol_path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static dw_engine *open_engine(bool replay)
{
    dw_engine_config cfg = { .policy_path = pol_path, .schema_path = "box", .replay_timestamps = replay };
    char err[256];
    dw_engine *e = dw_engine_open(&cfg, err, sizeof err);
    if (!e) fprintf(stderr, "open: %s\n", err);
    assert_non_null(e);
    return e;
}

static void ev_json(char *buf, size_t cap, const char *kind, const char *host, const char *action)
{
    snprintf(buf, cap,
             "{\"action\":\"%s\",\"kind\":\"%s\",\"input\":{\"host\":\"%s\",\"port\":443,\"method\":\"GET\",\"path\":\"/x\","
             "\"body_bytes\":0,\"intercepted\":true}%s}",
             action, kind, host, !strcmp(kind, "response") ? ",\"output\":{\"status\":200}" : "");
}

static int64_t SEC = 1000000000;

static void test_unmatched_not_retained(void **state)
{
    (void)state;
    write_policy(budget_text);
    dw_engine *e = open_engine(false), *ref = open_engine(false);
    char buf[512], err[256];
    int64_t t0 = 1700000000 * SEC;
    uint32_t maxlen = 0;
    int decided = 0;
    for (int i = 0; i < 20000; i++) {
        int64_t ts = t0 + (int64_t)i * SEC / 100;      /* 100 per second: all inside one 10-minute window */
        bool matched = i % 97 == 0;
        ev_json(buf, sizeof buf, "response", matched ? "api.github.com" : "example.com", "http:request");
        assert_int_equal(dw_engine_record_json(e, buf, strlen(buf), ts, err, sizeof err), 0);
        if (matched) assert_int_equal(dw_engine_record_json(ref, buf, strlen(buf), ts, err, sizeof err), 0);
        if (i % 50 == 49) {      /* unmatched requests are decided (and then dropped) too */
            ev_json(buf, sizeof buf, "request", i % 100 == 49 ? "api.github.com" : "example.com", "http:request");
            dw_verdict v, w;
            assert_int_equal(dw_engine_decide_json(e, buf, strlen(buf), ts + 1, &v), 0);
            assert_int_equal(dw_engine_decide_json(ref, buf, strlen(buf), ts + 1, &w), 0);
            assert_int_equal(v.allow, w.allow);
            assert_int_equal(v.cause, w.cause);
            decided++;
        }
        uint32_t n = dw_engine_history_length(e);
        if (n > maxlen) maxlen = n;
    }
    /* ~206 matched responses in the window; nothing else */
    printf("unmatched: history at most %u events (of 20,400), %d decisions agree\n", maxlen, decided);
    assert_true(maxlen <= 20000 / 97 + 2);
    assert_int_equal(dw_engine_history_length(e), dw_engine_history_length(ref));
    dw_engine_close(e);
    dw_engine_close(ref);
}

static void test_replay_floor(void **state)
{
    (void)state;
    write_policy(budget_text);
    dw_engine *e = open_engine(true), *nofloor = open_engine(true), *clock = open_engine(false);
    char buf[512], err[256];
    int64_t t0 = 1700000000 * SEC;
    uint32_t most = 0;
    for (int i = 0; i < 6000; i++) {
        int64_t ts = t0 + (int64_t)i * SEC;            /* 1 s apart: 100 minutes */
        dw_engine_set_time_floor(e, ts);
        ev_json(buf, sizeof buf, "response", "api.github.com", "http:request");
        assert_int_equal(dw_engine_record_json(e, buf, strlen(buf), ts, err, sizeof err), 0);
        assert_int_equal(dw_engine_record_json(nofloor, buf, strlen(buf), ts, err, sizeof err), 0);
        assert_int_equal(dw_engine_record_json(clock, buf, strlen(buf), ts, err, sizeof err), 0);
        if (i > 1200) {          /* past two windows: the engine's own times drop by time too */
            uint32_t n = dw_engine_history_length(clock);
            if (n > most) most = n;
        }
    }
    printf("replay: %u events retained with a floor, %u without; the runtime's at most %u\n", dw_engine_history_length(e),
           dw_engine_history_length(nofloor), most);
    assert_true(dw_engine_history_length(e) <= 2 * 601 + 1024);
    assert_true(most <= 2 * 601 + 1024);
    dw_engine_close(clock);
    assert_int_equal(dw_engine_history_length(nofloor), 6000);
    dw_engine_close(e);
    dw_engine_close(nofloor);
}

static void artifact_of(const char *text, dw_buf *out)
{
    char path[128];
    dw_session s;
    dw_program *p = compile_box(text, &s, path, sizeof path);
    assert_int_equal(dw_artifact_write(p, dw_session_schema_digest(&s), out), 0);   /* reload checks the schema */
    dw_session_free(&s);
    unlink(path);
}

static void test_reload_frees(void **state)
{
    (void)state;
    write_policy(budget_text);
    long base = dw_program_live();
    dw_engine *e = open_engine(false);
    assert_int_equal(dw_program_live(), base + 1);
    dw_buf art = { 0 };
    artifact_of(budget_text, &art);
    const char *name = dw_engine_rule_name(e, 1);
    assert_string_equal(name, "budget");
    char err[256];
    for (int i = 0; i < 300; i++) {
        dw_reload_info info;
        assert_int_equal(dw_engine_reload(e, art.p, art.len, &info, err, sizeof err), 0);
        assert_int_equal(info.kept, 1);
        assert_int_equal(dw_program_live(), base + 1);
        assert_ptr_equal(dw_engine_rule_name(e, 1), name);     /* interned: one copy */
    }
    assert_string_equal(name, "budget");
    dw_engine_close(e);
    assert_int_equal(dw_program_live(), base);
    dw_buf_free(&art);
}

/* ---- reload under load ---- */

typedef struct rworker { dw_engine *e; int id; volatile int *stop; int faults; } rworker;

static void *decide_loop(void *arg)
{
    rworker *w = arg;
    char buf[512];
    for (int i = 0; !*w->stop; i++) {
        ev_json(buf, sizeof buf, i % 3 ? "request" : "response", i % 2 ? "api.github.com" : "example.com", "http:request");
        dw_verdict v;
        if (i % 3) { if (dw_engine_decide_json(w->e, buf, strlen(buf), 0, &v) || v.cause == DW_CAUSE_INTERNAL_FAULT) w->faults++; }
        else if (dw_engine_observe_json(w->e, buf, strlen(buf), 0, DW_OBSERVE_RECORD, NULL, NULL, &v) != 1) w->faults++;
    }
    return NULL;
}

static void on_alarm(int sig) { (void)sig; static const char m[] = "reload starved: no progress within the bound\n"; write(2, m, sizeof m - 1); _exit(1); }

static void test_reload_under_checkpoints(void **state)
{
    (void)state;
    write_policy(budget_text);
    snprintf(dir, sizeof dir, "/tmp/test_retain_state_%d", (int)getpid());
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    dw_engine_config cfg = { .policy_path = pol_path, .schema_path = "box" };
    dw_engine_durable d = { .state_dir = dir, .durability = 2, .checkpoint_every = 64 };
    char err[512];
    dw_engine *e = dw_engine_open_durable(&cfg, &d, NULL, err, sizeof err);
    if (!e) fprintf(stderr, "%s\n", err);
    assert_non_null(e);
    dw_buf art = { 0 };
    artifact_of(budget_text, &art);
    signal(SIGALRM, on_alarm);
    alarm(20);                   /* the whole test; a starved reload never returns */
    volatile int stop = 0;
    rworker w[8];
    pthread_t th[8];
    for (int k = 0; k < 8; k++) {
        w[k] = (rworker){ e, k, &stop, 0 };
        assert_int_equal(pthread_create(&th[k], NULL, decide_loop, &w[k]), 0);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double worst = 0;
    for (int i = 0; i < 20; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        dw_reload_info info;
        assert_int_equal(dw_engine_reload(e, art.p, art.len, &info, err, sizeof err), 0);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
        if (s > worst) worst = s;
        usleep(20000);
    }
    stop = 1;
    for (int k = 0; k < 8; k++) pthread_join(th[k], NULL);
    alarm(0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    dw_engine_stats st;
    dw_engine_get_stats(e, &st);
    printf("reload under 8 threads: 20 reloads in %.2f s (worst %.3f s), %llu checkpoints, %u generations\n",
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, worst,
           (unsigned long long)st.checkpoints, st.generation);
    assert_int_equal(st.generation, 20);
    assert_true(st.checkpoints > 20);
    for (int k = 0; k < 8; k++) assert_int_equal(w[k].faults, 0);
    dw_engine_close(e);
    dw_buf_free(&art);
    assert_int_equal(system(cmd), 0);
}

static tb tables;

/* ---- a leaf keeps its state across reloads and restarts (row 5) ---- */

static void record_at(dw_engine *e, int64_t ts, const char *kind)
{
    char buf[512], err[256];
    ev_json(buf, sizeof buf, kind, "api.github.com", "http:request");
    if (dw_engine_record_json(e, buf, strlen(buf), ts, err, sizeof err)) fail_msg("record: %s", err);
}

static bool decide_at(dw_engine *e, int64_t ts)
{
    char buf[512];
    ev_json(buf, sizeof buf, "request", "api.github.com", "http:request");
    dw_verdict v;
    assert_int_equal(dw_engine_decide_json(e, buf, strlen(buf), ts, &v), 0);
    return v.allow;
}

static dw_engine *open_durable_on(const char *text)
{
    write_policy(text);
    dw_engine_config cfg = { .policy_path = pol_path, .schema_path = "box" };
    dw_engine_durable d = { .state_dir = dir, .durability = 2, .checkpoint_every = -1 };
    char err[512];
    dw_engine *e = dw_engine_open_durable(&cfg, &d, NULL, err, sizeof err);
    if (!e) fprintf(stderr, "%s\n", err);
    assert_non_null(e);
    return e;
}

/* The artifacts of texts a and b, and the state directory with the command that empties it. */
static void two_artifacts(const char *a, const char *b, dw_buf *x, dw_buf *y, char *cmd, size_t cap)
{
    artifact_of(a, x);
    artifact_of(b, y);
    snprintf(dir, sizeof dir, "/tmp/test_retain_state_%d", (int)getpid());
    snprintf(cmd, cap, "rm -rf %s", dir);
}

static void test_reload_restart(void **state)
{
    (void)state;
    /* B: the budget leaf changed (11 minutes): a new identity */
    char btext[sizeof budget_text + 8];
    snprintf(btext, sizeof btext, "%s", budget_text);
    char *w = strstr(btext, "within 10m");
    assert_non_null(w);
    memcpy(w, "within 11m", 10);
    dw_buf artA = { 0 }, artB = { 0 };
    char cmd[300], err[256];
    two_artifacts(budget_text, btext, &artA, &artB, cmd, sizeof cmd);
    int64_t t0 = 1700000000 * SEC;
    for (int restart_on = 0; restart_on < 3; restart_on++) {   /* 0: A, 1: B, 2: a live reload back to A */
        assert_int_equal(system(cmd), 0);
        dw_engine *e = open_durable_on(budget_text);
        for (int i = 0; i < 3; i++) record_at(e, t0 + i * SEC, "response");
        assert_false(decide_at(e, t0 + 3 * SEC));          /* 3 responses in 10 minutes */
        dw_reload_info info;
        assert_int_equal(dw_engine_reload(e, artB.p, artB.len, &info, err, sizeof err), 0);
        assert_int_equal(info.fresh, 1);
        assert_true(decide_at(e, t0 + 4 * SEC));           /* B's budget starts empty */
        if (restart_on == 2) {
            assert_int_equal(dw_engine_reload(e, artA.p, artA.len, &info, err, sizeof err), 0);
            assert_int_equal(info.kept, 1);                /* the retired leaf resumes */
        } else {
            dw_engine_close(e);                            /* a crash after the reload's checkpoint */
            e = open_durable_on(restart_on ? btext : budget_text);
        }
        /* A counts the 3 responses (as if it had never been replaced); B still none */
        assert_int_equal(decide_at(e, t0 + 5 * SEC), restart_on == 1);
        dw_engine_close(e);
    }
    assert_int_equal(system(cmd), 0);
    dw_buf_free(&artA);
    dw_buf_free(&artB);
}

/* ---- a kept event holds what a leaf can read (runtime/engine_keep.c) ---- */

/* C: a budget of any 5 http responses in 10 minutes: its predicate names no field */
static const char count_all_text[] =
    "@id(\"hosts\") permit (principal, action == Box::Action::\"http:request\", resource) when { context.input.host like \"*\" };\n"
    "@id(\"all\") forbid (principal, action == Box::Action::\"http:request\", resource)\n"
    "  when temporal { exists (n: Long). ((count for (t: Timepoint). where (formerly within 10m\n"
    "    (Box::Action::\"http:request\"::response{} && tp(t)))) == n && n >= 5) };\n";

static void record_host(dw_engine *e, int64_t ts, const char *host)
{
    char buf[512], err[256];
    ev_json(buf, sizeof buf, "response", host, "http:request");
    if (dw_engine_record_json(e, buf, strlen(buf), ts, err, sizeof err)) fail_msg("record: %s", err);
}

/* The state of C's history holds each response's identity and time, not its
 * fields: far smaller than a whole-record engine's (dw_engine_open_printing's, as dwc explain opens), and
 * the verdicts are the same. */
static void test_kept_parts_state(void **state)
{
    (void)state;
    write_policy(count_all_text);
    dw_engine_config cfg = { .policy_path = pol_path, .schema_path = "box" };
    char err[256];
    dw_engine *e = dw_engine_open(&cfg, err, sizeof err), *whole = dw_engine_open_printing(&cfg, err, sizeof err);
    assert_non_null(e);
    assert_non_null(whole);
    int64_t t0 = 1700000000 * SEC;
    for (int i = 0; i < 200; i++) {
        record_host(e, t0 + i * SEC, i % 2 ? "api.github.com" : "example.com");
        record_host(whole, t0 + i * SEC, i % 2 ? "api.github.com" : "example.com");
        assert_int_equal(decide_at(e, t0 + i * SEC + 1), decide_at(whole, t0 + i * SEC + 1));
    }
    assert_int_equal(dw_engine_history_length(e), dw_engine_history_length(whole));
    void *a, *b;
    size_t na, nb;
    assert_int_equal(dw_engine_export_state(e, &a, &na), 0);
    assert_int_equal(dw_engine_export_state(whole, &b, &nb), 0);
    printf("kept parts: state of 200 responses %zu bytes, whole records %zu\n", na, nb);
    assert_true(na * 3 < nb);
    assert_null(memmem(a, na, "api.github.com", 14));      /* no field of a response is kept */
    assert_non_null(memmem(b, nb, "api.github.com", 14));
    free(a);
    free(b);
    dw_engine_close(e);
    dw_engine_close(whole);
}

/* engine_keep.c's fast path (the last kept identity again, keeping no field)
 * gives what the general path gives.  E sees responses (a fieldless count)
 * back to back: all but the first through the fast path.  F sees the same
 * with a kept request (a field-reading leaf's) between them: every response
 * through the general path.  Each response's kept part, the identity copies
 * and the verdicts are the same. */
static const char keep_fast_text[] =
    "@id(\"hosts\") permit (principal, action == Box::Action::\"http:request\", resource) when { context.input.host like \"*\" };\n"
    "@id(\"all\") forbid (principal, action == Box::Action::\"http:request\", resource)\n"
    "  when temporal { exists (n: Long). ((count for (t: Timepoint). where (formerly within 10m\n"
    "    (Box::Action::\"http:request\"::response{} && tp(t)))) == n && n >= 5) };\n"
    "@id(\"x\") permit (principal, action == Box::Action::\"http:request\", resource)\n"
    "  when temporal { formerly within 10m Box::Action::\"http:request\"::request{ input.host: \"api.github.com\" } };\n";

static void same_kept(const dw_event *a, const dw_event *b)
{
    assert_true(dw_str_eq(a->atype, b->atype) && dw_str_eq(a->aid, b->aid) && dw_str_eq(a->kind, b->kind));
    assert_int_equal(a->ts, b->ts);
    assert_int_equal(a->logged.kind, DW_V_RECORD);
    assert_int_equal(b->logged.kind, DW_V_RECORD);
    assert_int_equal(a->logged.n, 0);
    assert_int_equal(b->logged.n, 0);
}

static void state_lacks(dw_engine *e, const char *text)
{
    void *x;
    size_t n;
    assert_int_equal(dw_engine_export_state(e, &x, &n), 0);
    assert_null(memmem(x, n, text, strlen(text)));
    free(x);
}

static void test_keep_fast_path(void **state)
{
    (void)state;
    write_policy(keep_fast_text);
    dw_engine *e = open_engine(false), *f = open_engine(false);
    int64_t t0 = 1700000000 * SEC;
    for (int i = 0; i < 12; i++) {
        int64_t ts = t0 + i * 10 * SEC;
        const char *host = i % 3 ? "api.github.com" : "example.com";
        record_host(e, ts, host);
        record_host(e, ts + 2 * SEC, host);      /* the same identity again: the fast path */
        record_host(f, ts, host);
        (void)decide_at(f, ts + SEC);            /* a kept request (x reads its input.host) between them */
        record_host(f, ts + 2 * SEC, host);      /* so this response asks the set */
        bool ve = decide_at(e, ts + 3 * SEC), vf = decide_at(f, ts + 3 * SEC);
        assert_int_equal(ve, vf);
        assert_int_equal(ve, 2 * (i + 1) < 5);  /* the count saw every response: the monitors had the same hash */
    }
    uint32_t ne = 0, nf = 0;
    const dw_event *re[24], *rf[24];
    for (uint32_t k = 0; k < e->h.n; k++) if (e->h.ev[k].kind.len == 8 && ne < 24) re[ne++] = &e->h.ev[k];
    for (uint32_t k = 0; k < f->h.n; k++) if (f->h.ev[k].kind.len == 8 && nf < 24) rf[nf++] = &f->h.ev[k];
    assert_int_equal(ne, 24);
    assert_int_equal(nf, 24);
    for (uint32_t k = 0; k < 24; k++) {
        same_kept(re[k], rf[k]);
        assert_ptr_equal(re[k]->aid.s, re[0]->aid.s);   /* one shared identity copy, fast path or not */
        assert_ptr_equal(rf[k]->aid.s, rf[0]->aid.s);
    }
    state_lacks(e, "example.com");       /* no field of a response is kept */
    state_lacks(f, "example.com");
    dw_engine_close(e);
    dw_engine_close(f);
}

/* A leaf a reload retires still reads its fields when it comes back: A's
 * leaf (responses with input.host "api.github.com") is replaced by C's,
 * which names no field; responses recorded under C keep input.host for A's
 * retired leaf, in memory, in C's checkpoint, and after a restart on C
 * (whose checkpoint names A's identities only: they keep whole records). */
static void test_kept_parts_reload(void **state)
{
    (void)state;
    dw_buf artA = { 0 }, artC = { 0 };
    char cmd[300], err[256];
    two_artifacts(budget_text, count_all_text, &artA, &artC, cmd, sizeof cmd);
    int64_t t0 = 1700000000 * SEC;
    for (int way = 0; way < 3; way++) {      /* back to A: 0 a live reload, 1 a restart on A, 2 a restart on C, then a reload */
        assert_int_equal(system(cmd), 0);
        dw_engine *e = open_durable_on(budget_text);
        record_host(e, t0, "api.github.com");
        assert_true(decide_at(e, t0 + SEC));               /* 1 of A's 3 */
        dw_reload_info info;
        assert_int_equal(dw_engine_reload(e, artC.p, artC.len, &info, err, sizeof err), 0);
        record_host(e, t0 + 2 * SEC, "api.github.com");
        record_host(e, t0 + 3 * SEC, "example.com");
        if (way < 2) record_host(e, t0 + 4 * SEC, "api.github.com");
        assert_true(decide_at(e, t0 + 5 * SEC));           /* C counts 2 or 3 of its 5 */
        assert_int_equal(dw_engine_checkpoint(e), 0);      /* the kept parts go into the checkpoint */
        if (way) {
            dw_engine_close(e);
            e = open_durable_on(way == 1 ? budget_text : count_all_text);
        }
        if (way == 2) {
            record_host(e, t0 + 6 * SEC, "api.github.com");   /* read by A's restored retired leaf only */
            assert_int_equal(dw_engine_reload(e, artA.p, artA.len, &info, err, sizeof err), 0);
            assert_int_equal(info.kept, 1);
        } else if (way == 0) {
            assert_int_equal(dw_engine_reload(e, artA.p, artA.len, &info, err, sizeof err), 0);
            assert_int_equal(info.kept, 1);
        }
        /* A's leaf counts its 3 github responses, those recorded under C included */
        assert_false(decide_at(e, t0 + 7 * SEC));
        dw_engine_close(e);
    }
    assert_int_equal(system(cmd), 0);
    dw_buf_free(&artA);
    dw_buf_free(&artC);
}

static int setup(void **state)
{
    (void)state;
    B = &tables;
    dw_arena_init(&B->a, 64 * 1024);
    dw_arena_init(&B->scratch, 256 * 1024);
    B->rng = 0x9e3779b97f4a7c15ull;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    dw_arena_free(&tables.a);
    dw_arena_free(&tables.scratch);
    unlink(pol_path);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_differential),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_unmatched_not_retained),
        cmocka_unit_test(test_replay_floor),
        cmocka_unit_test(test_reload_frees),
        cmocka_unit_test(test_reload_under_checkpoints),
        cmocka_unit_test(test_reload_restart),
        cmocka_unit_test(test_kept_parts_state),
        cmocka_unit_test(test_kept_parts_reload),
        cmocka_unit_test(test_keep_fast_path),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
