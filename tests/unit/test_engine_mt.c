/* test_engine_mt.c - the engine under concurrency, with a durable history.
 *
 * 8 threads decide and record on one durable engine (dw_engine_open_durable,
 * --durability full, a checkpoint every 64 events on the engine's own
 * thread).  Afterwards:
 *   * every event got a distinct, strictly increasing timestamp, and the
 *     log holds exactly one record per event;
 *   * replaying the same events, in timestamp order, through a fresh
 *     single-threaded in-memory engine gives every decision the same
 *     verdict (concurrent decisions are serialisable in timestamp order);
 *   * concurrent deciders shared syncs (group commit: fewer fsyncs than
 *     events, some sync covering several);
 *   * reopening restores every event, replays only the records after the
 *     latest checkpoint, and decides the next event like the serial engine;
 *   * an exported state imported into a fresh engine decides like it.
 * Run under the ASan build too (make test builds build/asan). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/dogwood.h"
#include "unit_tmpdir.h"

#define THREADS 8
#define PER_THREAD 120

static char root[256], dir[300];
static char policy[300];

/* A per-host burst budget (a monitor idiom) and a nested formula (the
 * general evaluator): verdicts depend on the order of events. */
static const char policy_text[] =
    "@id(\"hosts\")\n"
    "permit (principal, action == Box::Action::\"http:request\", resource)\n"
    "when { context.input.host like \"*.example.com\" };\n"
    "@id(\"burst\")\n"
    "forbid (principal, action == Box::Action::\"http:request\", resource)\n"
    "when temporal {\n"
    "  exists (n: Long). (\n"
    "    (count for (t: Timepoint). where (\n"
    "      formerly within 1s ( Box::Action::\"http:request\"::request{ input.host: context.input.host } && tp(t) )\n"
    "    )) == n && n > 12\n"
    "  )\n"
    "};\n"
    "@id(\"after_error\")\n"
    "forbid (principal, action == Box::Action::\"http:request\", resource)\n"
    "when temporal {\n"
    "  formerly within 2s ( Box::Action::\"http:request\"::error{ input.host: context.input.host } &&\n"
    "                       formerly within 1s Box::Action::\"http:request\"::response{ input.host: context.input.host } )\n"
    "};\n";

typedef struct op { int64_t ts; int kind; int host; bool allow; int cause; } op;   /* kind 0 decide, 1 response, 2 error */
typedef struct worker { dw_engine *e; int id; op ops[PER_THREAD * 3]; int n; int faults; } worker;

static void event_json(char *buf, size_t cap, int kind, int host)
{
    static const char *kinds[] = { "request", "response", "error" };
    snprintf(buf, cap,
             "{\"action\":\"http:request\",\"kind\":\"%s\",\"input\":{\"host\":\"h%d.example.com\",\"port\":443,"
             "\"method\":\"GET\",\"path\":\"/x\",\"body_bytes\":0,\"intercepted\":true}%s}",
             kinds[kind], host, kind == 1 ? ",\"output\":{\"status\":200}" : "");
}

static void *work(void *arg)
{
    worker *w = arg;
    unsigned seed = 1234u + (unsigned)w->id * 7919u;
    char buf[512];
    for (int i = 0; i < PER_THREAD; i++) {
        int host = (int)(rand_r(&seed) % 3);
        event_json(buf, sizeof buf, 0, host);
        dw_verdict v;
        int rc = dw_engine_decide_json(w->e, buf, strlen(buf), DW_TS_NOW, &v);
        if (rc != 0 || !v.decided || v.cause == DW_CAUSE_INTERNAL_FAULT) w->faults++;
        w->ops[w->n++] = (op){ v.timestamp, 0, host, v.allow, v.cause };
        int r = (int)(rand_r(&seed) % 10);
        if (r < 4) {
            int kind = r == 0 ? 2 : 1;
            event_json(buf, sizeof buf, kind, host);
            rc = dw_engine_observe_json(w->e, buf, strlen(buf), DW_TS_NOW, DW_OBSERVE_RECORD, NULL, NULL, &v);
            if (rc != 1) w->faults++;
            w->ops[w->n++] = (op){ v.timestamp, kind, host, false, 0 };
        }
    }
    return NULL;
}

static int cmp_ts(const void *a, const void *b)
{
    const op *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static dw_engine *open_durable(int64_t every, dw_engine_recovery *rec)
{
    dw_engine_config cfg = { .policy_path = policy, .schema_path = "box" };
    dw_engine_durable d = { .state_dir = dir, .durability = 0, .checkpoint_every = every };
    char err[512];
    dw_engine *e = dw_engine_open_durable(&cfg, &d, rec, err, sizeof err);
    if (!e) fprintf(stderr, "open_durable: %s\n", err);
    return e;
}

static dw_engine *open_memory(void)
{
    dw_engine_config cfg = { .policy_path = policy, .schema_path = "box" };
    char err[512];
    dw_engine *e = dw_engine_open(&cfg, err, sizeof err);
    if (!e) fprintf(stderr, "open: %s\n", err);
    return e;
}

/* Feed op to a serial engine with the op's own timestamp. */
static void serial(dw_engine *e, const op *o, dw_verdict *v)
{
    char buf[512];
    event_json(buf, sizeof buf, o->kind, o->host);
    if (o->kind == 0) assert_int_equal(dw_engine_decide_json(e, buf, strlen(buf), o->ts, v), 0);
    else {
        assert_int_equal(dw_engine_observe_json(e, buf, strlen(buf), o->ts, DW_OBSERVE_RECORD, NULL, NULL, v), 1);
    }
    assert_int_equal(v->timestamp, o->ts);
}

static void test_concurrent_decisions(void **state)
{
    (void)state;
    dw_engine_recovery rec;
    dw_engine *e = open_durable(64, &rec);
    assert_non_null(e);
    static worker w[THREADS];
    pthread_t th[THREADS];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < THREADS; i++) {
        w[i].e = e;
        w[i].id = i;
        w[i].n = 0;
        w[i].faults = 0;
        assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

    static op all[THREADS * PER_THREAD * 3];
    int n = 0, faults = 0;
    for (int i = 0; i < THREADS; i++) {
        memcpy(all + n, w[i].ops, (size_t)w[i].n * sizeof *all);
        n += w[i].n;
        faults += w[i].faults;
    }
    assert_int_equal(faults, 0);
    qsort(all, (size_t)n, sizeof *all, cmp_ts);
    for (int i = 1; i < n; i++) assert_true(all[i].ts > all[i - 1].ts);   /* distinct, strictly increasing */

    dw_engine_stats st;
    dw_engine_get_stats(e, &st);
    /* the checkpointer is a background thread: on a loaded machine its first checkpoint can
     * finish after the workers; wait for it (up to 20 s) rather than race it */
    for (int k = 0; k < 2000 && st.checkpoints == 0; k++) {
        nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
        dw_engine_get_stats(e, &st);
    }
    assert_int_equal(st.next_seq, (uint64_t)n);
    assert_int_equal(st.log_next_seq, (uint64_t)n);
    assert_true(st.log_syncs < (uint64_t)n);           /* group commit */
    assert_true(st.log_max_batch > 1);
    assert_true(st.checkpoints >= 1);
    assert_int_equal(st.checkpoint_failures, 0);
    printf("  %d threads: %d events (durable, full) in %.3f s = %.0f appends/s; %llu fsyncs (max %llu events per sync); %llu checkpoints\n",
           THREADS, n, secs, n / secs, (unsigned long long)st.log_syncs, (unsigned long long)st.log_max_batch,
           (unsigned long long)st.checkpoints);

    /* serialisable: a single-threaded replay in timestamp order agrees */
    dw_engine *s = open_memory();
    assert_non_null(s);
    int denies = 0, permits = 0;
    for (int i = 0; i < n; i++) {
        dw_verdict v;
        serial(s, &all[i], &v);
        if (all[i].kind) continue;
        assert_int_equal(v.allow, all[i].allow);
        assert_int_equal((int)v.cause, all[i].cause);
        if (v.allow) permits++;
        else denies++;
    }
    assert_true(permits > 0 && denies > 0);           /* the history matters */
    int64_t last = all[n - 1].ts;
    dw_engine_close(e);

    /* reopen: every event restored, only the tail after the checkpoint replayed */
    e = open_durable(64, &rec);
    assert_non_null(e);
    assert_int_equal(rec.events, (uint64_t)n);
    assert_true(rec.checkpoint);
    assert_true(rec.replayed < 64);
    assert_string_equal(rec.note, "");
    for (int k = 0; k < 3; k++) {
        op next = { last + 1000 * (k + 1), 0, k, false, 0 };
        char buf[512];
        event_json(buf, sizeof buf, 0, k);
        dw_verdict a, b;
        assert_int_equal(dw_engine_decide_json(e, buf, strlen(buf), next.ts, &a), 0);
        serial(s, &next, &b);
        assert_int_equal(a.allow, b.allow);
        assert_int_equal(a.cause, b.cause);
        assert_int_equal(a.ndetermining, b.ndetermining);
    }

    /* export / import: a fresh engine given the state decides alike */
    void *blob;
    size_t len;
    assert_int_equal(dw_engine_export_state(e, &blob, &len), 0);
    dw_engine *c = open_memory();
    assert_non_null(c);
    char err[256];
    assert_int_equal(dw_engine_import_state(c, blob, len, err, sizeof err), 0);
    free(blob);
    for (int k = 0; k < 6; k++) {
        op next = { last + 100000 + 1000 * k, k % 3 == 2 ? 2 : 0, k % 3, false, 0 };
        dw_verdict a, b;
        serial(c, &next, &a);
        serial(s, &next, &b);
        assert_int_equal(a.allow, b.allow);
        assert_int_equal(a.cause, b.cause);
    }
    dw_engine_close(c);
    dw_engine_close(s);
    dw_engine_close(e);
}

/* A damaged state is refused, and the engine stays empty and usable. */
static void test_import_refuses_damage(void **state)
{
    (void)state;
    dw_engine *e = open_memory();
    assert_non_null(e);
    char buf[512];
    event_json(buf, sizeof buf, 0, 1);
    dw_verdict v;
    assert_int_equal(dw_engine_decide_json(e, buf, strlen(buf), 1000000000, &v), 0);
    void *blob;
    size_t len;
    assert_int_equal(dw_engine_export_state(e, &blob, &len), 0);
    dw_engine *c = open_memory();
    char err[256];
    assert_int_not_equal(dw_engine_import_state(c, blob, len - 3, err, sizeof err), 0);
    assert_int_equal(dw_engine_history_length(c), 0);
    ((char *)blob)[0] ^= 1;
    assert_int_not_equal(dw_engine_import_state(c, blob, len, err, sizeof err), 0);
    free(blob);
    assert_int_equal(dw_engine_decide_json(c, buf, strlen(buf), 2000000000, &v), 0);
    assert_true(v.allow);
    dw_engine_close(c);
    dw_engine_close(e);
}

static int setup(void **state)
{
    (void)state;
    if (unit_tmpdir_with_policy(root, sizeof root, policy, sizeof policy, "dw-engine-mt", policy_text)) return -1;
    snprintf(dir, sizeof dir, "%s/state", root);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return unit_tmpdir_remove(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_decisions),
        cmocka_unit_test(test_import_refuses_damage),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
