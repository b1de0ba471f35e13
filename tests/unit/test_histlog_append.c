/* test_histlog_append.c - runtime/histlog.c, the durable history store: the
 * append path.
 *
 * 8 threads appending at once; checkpoints taken while they append, and
 * appends that do not wait for the checkpoint file; every durability mode;
 * a write error (RLIMIT_FSIZE as a full disk) fails the append and sticks;
 * the directory lock and the record limits; strictly increasing timestamps
 * across restarts (Q17).  Recovery is tests/unit/test_histlog.c.
 * Everything happens in a mkdtemp directory under /tmp, removed afterwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "runtime/histlog.h"

#include "histlog_fixture.h"


/* ================================================================ tests */

/* ---- 8 threads */
#define NTHREADS 8
#define PER_THREAD 150
typedef struct thr { dw_histlog *log; int id; uint64_t seqs[PER_THREAD]; int fails; } thr;

static void *appender(void *arg)
{
    thr *t = arg;
    for (int i = 0; i < PER_THREAD; i++) {
        char buf[32];
        int n = snprintf(buf, sizeof buf, "t%d:%d", t->id, i);
        if (dw_histlog_append(t->log, buf, (size_t)n, &t->seqs[i]) != 0) t->fails++;
    }
    return NULL;
}

static void test_concurrent_appends(void **state)
{
    (void)state;
    for (int mode = DW_DURABILITY_FULL; mode <= DW_DURABILITY_NONE; mode++) {
        char dir[128];
        snprintf(dir, sizeof dir, "%s/threads%d", g_root, mode);
        dw_histlog *log = open_ok(dir, (dw_durability)mode, NULL, NULL);
        thr t[NTHREADS];
        pthread_t th[NTHREADS];
        for (int i = 0; i < NTHREADS; i++) {
            t[i].log = log; t[i].id = i; t[i].fails = 0;
            assert_int_equal(pthread_create(&th[i], NULL, appender, &t[i]), 0);
        }
        for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
        dw_histlog_stats st;
        dw_histlog_get_stats(log, &st);
        assert_int_equal(st.appends, NTHREADS * PER_THREAD);
        if (mode == DW_DURABILITY_FULL) {
            assert_int_equal(st.synced_records, NTHREADS * PER_THREAD);
            assert_true(st.syncs <= st.appends);
            print_message("    full: %d appends, %llu syncs, up to %llu records per sync\n",
                          NTHREADS * PER_THREAD, (unsigned long long)st.syncs, (unsigned long long)st.max_batch);
        }
        assert_int_equal(dw_histlog_close(log), 0);

        collect c = { 0 };
        log = open_ok(dir, DW_DURABILITY_FULL, &c, NULL);
        assert_int_equal(c.n, NTHREADS * PER_THREAD);
        char *seen = calloc(NTHREADS * PER_THREAD, 1);
        for (int i = 0; i < NTHREADS; i++) {
            assert_int_equal(t[i].fails, 0);
            for (int k = 0; k < PER_THREAD; k++) {
                uint64_t s = t[i].seqs[k];
                if (k) assert_true(s > t[i].seqs[k - 1]);
                assert_true(s < NTHREADS * PER_THREAD);
                assert_false(seen[s]);
                seen[s] = 1;
                char buf[32];
                int n = snprintf(buf, sizeof buf, "t%d:%d", i, k);
                assert_int_equal(c.v[s].seq, s);
                assert_int_equal(c.v[s].len, (size_t)n);
                assert_memory_equal(c.v[s].bytes, buf, (size_t)n);
            }
        }
        for (size_t i = 1; i < c.n; i++) assert_true(c.v[i].ts > c.v[i - 1].ts);
        free(seen);
        dw_histlog_close(log);
        collect_free(&c);
    }
}

/* Checkpoints taken while 4 threads append (leadership hand-over, segment
 * rotation, the BATCH flusher): nothing is lost or duplicated. */
static void test_checkpoint_during_appends(void **state)
{
    (void)state;
    for (int mode = DW_DURABILITY_FULL; mode <= DW_DURABILITY_BATCH; mode++) {
        char dir[128];
        snprintf(dir, sizeof dir, "%s/ckpt-threads%d", g_root, mode);
        dw_histlog_options o = opts((dw_durability)mode, NULL);
        o.batch_ms = 1;
        o.batch_records = 16;
        dw_histlog *log = dw_histlog_open(dir, &o, NULL, NULL, 0);
        assert_non_null(log);
        thr t[4];
        pthread_t th[4];
        for (int i = 0; i < 4; i++) {
            t[i].log = log; t[i].id = i; t[i].fails = 0;
            assert_int_equal(pthread_create(&th[i], NULL, appender, &t[i]), 0);
        }
        uint64_t last = 0;
        for (int k = 0; k < 6; k++) {
            usleep(2000);
            uint64_t n = dw_histlog_next_seq(log);   /* keep everything: keep_from 0 */
            assert_int_equal(dw_histlog_checkpoint(log, &n, sizeof n, 0), 0);
            last = n;
        }
        for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
        assert_int_equal(dw_histlog_close(log), 0);
        (void)last;
        collect c = { 0 };
        dw_histlog_recovery rec;
        log = open_ok(dir, DW_DURABILITY_NONE, &c, &rec);
        assert_true(c.have_ckpt);
        assert_int_equal(rec.next_seq, 4 * PER_THREAD);
        assert_int_equal(c.n, 4 * PER_THREAD - c.ckpt_seq);
        assert_int_equal(rec.dropped_bytes, 0);
        dw_histlog_close(log);
        collect_free(&c);
        /* without checkpoints, every record from 0 replays, in seq order */
        char p[256];
        snprintf(p, sizeof p, "%s/ckpt-%016llx.ckpt", dir, (unsigned long long)rec.checkpoint_seq);
        assert_int_equal(unlink(p), 0);
        log = open_ok(dir, DW_DURABILITY_NONE, &c, &rec);
        assert_int_equal(c.n, 4 * PER_THREAD);
        for (size_t i = 0; i < c.n; i++) assert_int_equal(c.v[i].seq, i);
        for (int i = 0; i < 4; i++) {
            assert_int_equal(t[i].fails, 0);
            for (int k = 0; k < PER_THREAD; k++) {
                char buf[32];
                int n = snprintf(buf, sizeof buf, "t%d:%d", i, k);
                assert_memory_equal(c.v[t[i].seqs[k]].bytes, buf, (size_t)n);
            }
        }
        dw_histlog_close(log);
        collect_free(&c);
    }
}

/* A checkpoint file's syncs and rename are not the appenders' to wait for:
 * while the rename of ckpt.tmp is held (file operations that block it),
 * a batch-mode append is written and returns. */
typedef struct held_ops {
    int dirfd;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool in_rename, release;
} held_ops;

static int held_open(void *ctx, const char *name, int flags)
{
    return openat(((held_ops *)ctx)->dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
}

static int held_rename(void *ctx, const char *from, const char *to)
{
    held_ops *h = ctx;
    if (!strcmp(from, "ckpt.tmp")) {
        pthread_mutex_lock(&h->mu);
        h->in_rename = true;
        pthread_cond_broadcast(&h->cv);
        while (!h->release) pthread_cond_wait(&h->cv, &h->mu);
        pthread_mutex_unlock(&h->mu);
    }
    return renameat(h->dirfd, from, h->dirfd, to);
}

static int held_unlink(void *ctx, const char *name) { return unlinkat(((held_ops *)ctx)->dirfd, name, 0); }

typedef struct ckpt_arg { dw_histlog *log; int rc; } ckpt_arg;

static void *ckpt_main(void *a)
{
    ckpt_arg *c = a;
    uint64_t n = dw_histlog_next_seq(c->log);
    c->rc = dw_histlog_checkpoint(c->log, &n, sizeof n, n);
    return NULL;
}

typedef struct append_arg { dw_histlog *log; held_ops *h; int rc; bool done; } append_arg;

static void *append_main(void *a)
{
    append_arg *x = a;
    uint64_t seq;
    x->rc = dw_histlog_enqueue(x->log, "after", 5, &seq, NULL);
    if (!x->rc) x->rc = dw_histlog_wait(x->log, seq);
    pthread_mutex_lock(&x->h->mu);
    x->done = true;
    pthread_cond_broadcast(&x->h->cv);
    pthread_mutex_unlock(&x->h->mu);
    return NULL;
}

static void test_appends_do_not_wait_for_the_checkpoint_file(void **state)
{
    (void)state;
    char dir[128];
    snprintf(dir, sizeof dir, "%s/ckpt-held", g_root);
    assert_int_equal(mkdir(dir, 0700), 0);
    held_ops h = { .dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) };
    assert_true(h.dirfd >= 0);
    pthread_mutex_init(&h.mu, NULL);
    pthread_cond_init(&h.cv, NULL);
    dw_histlog_fileops ops = { held_open, held_rename, held_unlink, &h };
    dw_histlog_options o = opts(DW_DURABILITY_BATCH, NULL);
    o.fileops = &ops;
    dw_histlog *log = dw_histlog_open(dir, &o, NULL, NULL, 0);
    assert_non_null(log);
    for (int i = 0; i < 10; i++) assert_int_equal(dw_histlog_append(log, "before", 6, NULL), 0);
    ckpt_arg c = { log, -1 };
    pthread_t ct, at;
    assert_int_equal(pthread_create(&ct, NULL, ckpt_main, &c), 0);
    pthread_mutex_lock(&h.mu);
    while (!h.in_rename) pthread_cond_wait(&h.cv, &h.mu);
    pthread_mutex_unlock(&h.mu);
    /* the checkpoint is inside its file's rename: an append must not wait for it */
    append_arg a = { log, &h, -1, false };
    assert_int_equal(pthread_create(&at, NULL, append_main, &a), 0);
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 10;                          /* a loaded machine: seconds, not the forever of a wait behind it */
    pthread_mutex_lock(&h.mu);
    while (!a.done && pthread_cond_timedwait(&h.cv, &h.mu, &dl) == 0) {}
    bool appended = a.done;
    h.release = true;                         /* let the checkpoint finish either way */
    pthread_cond_broadcast(&h.cv);
    pthread_mutex_unlock(&h.mu);
    pthread_join(at, NULL);
    pthread_join(ct, NULL);
    assert_true(appended);
    assert_int_equal(a.rc, 0);
    assert_int_equal(c.rc, 0);
    assert_int_equal(dw_histlog_close(log), 0);
    /* the checkpoint covers the 10 records; the one appended during it replays after it */
    collect col = { 0 };
    dw_histlog_recovery rec;
    log = reopen_at_ckpt(dir, DW_DURABILITY_NONE, &col, &rec, 10);
    assert_int_equal(col.n, 1);
    assert_memory_equal(col.v[0].bytes, "after", 5);
    assert_int_equal(rec.next_seq, 11);
    dw_histlog_close(log);
    collect_free(&col);
    close(h.dirfd);
    pthread_mutex_destroy(&h.mu);
    pthread_cond_destroy(&h.cv);
}

static void test_durability_modes(void **state)
{
    (void)state;
    char dir[128];
    dw_histlog_stats st;
    /* FULL: every returned append is covered by a sync */
    subdir(dir, sizeof dir, "mode-full");
    dw_histlog *log = open_ok(dir, DW_DURABILITY_FULL, NULL, NULL);
    append_n(log, 0, 20);
    dw_histlog_get_stats(log, &st);
    assert_int_equal(st.synced_records, 20);
    assert_int_equal(st.syncs, 20);            /* one thread: one sync each */
    dw_histlog_close(log);

    /* BATCH: returns after write; the flusher syncs within batch_ms */
    subdir(dir, sizeof dir, "mode-batch");
    dw_histlog_options o = opts(DW_DURABILITY_BATCH, NULL);
    /* No timing assertions (a loaded machine stretches every interval): the
     * appends must not each pay a sync, and the flusher must get to them. */
    o.batch_ms = 200;
    o.batch_records = 1000000;
    log = dw_histlog_open(dir, &o, NULL, NULL, 0);
    assert_non_null(log);
    append_n(log, 0, 20);
    for (int i = 0; i < 2000; i++) {
        dw_histlog_get_stats(log, &st);
        if (st.synced_records >= 20) break;
        usleep(5000);
    }
    assert_int_equal(st.synced_records, 20);
    assert_true(st.syncs >= 1 && st.syncs < 20);
    /* ...or once batch_records records are unsynced */
    dw_histlog_close(log);
    o.batch_ms = 60000;
    o.batch_records = 10;
    log = dw_histlog_open(dir, &o, NULL, NULL, 0);
    assert_non_null(log);
    append_n(log, 20, 30);
    for (int i = 0; i < 200; i++) {
        dw_histlog_get_stats(log, &st);
        if (st.synced_records >= 20) break;
        usleep(5000);
    }
    assert_true(st.synced_records >= 20);
    dw_histlog_close(log);

    /* ...and records enqueued that nobody waits for: the flusher writes them
     * itself once no appender has written since it last looked (while one
     * writes, its writes carry them), and syncs them */
    o.batch_ms = 20;
    o.batch_records = 1000000;
    log = dw_histlog_open(dir, &o, NULL, NULL, 0);
    assert_non_null(log);
    uint64_t s0, ts0;
    uint8_t b0[64];
    for (int i = 0; i < 5; i++) {
        size_t len = payload((uint64_t)(50 + i), b0);
        assert_int_equal(dw_histlog_enqueue(log, b0, len, &s0, &ts0), 0);
        assert_int_equal(s0, (uint64_t)(50 + i));
    }
    append_n(log, 55, 1);                      /* a write that waits: it carries the five before it */
    size_t len0 = payload(56, b0);
    assert_int_equal(dw_histlog_enqueue(log, b0, len0, &s0, &ts0), 0);   /* after it: only the flusher writes this one */
    for (int i = 0; i < 2000; i++) {
        dw_histlog_get_stats(log, &st);
        if (st.synced_records >= 7) break;
        usleep(5000);
    }
    assert_int_equal(st.synced_records, 7);
    assert_int_equal(dw_histlog_close(log), 0);
    collect cb = { 0 };
    log = open_ok(dir, DW_DURABILITY_FULL, &cb, NULL);
    check_records(&cb, 0, 57);
    dw_histlog_close(log);
    collect_free(&cb);

    /* NONE: no sync at all, unless asked */
    subdir(dir, sizeof dir, "mode-none");
    log = open_ok(dir, DW_DURABILITY_NONE, NULL, NULL);
    append_n(log, 0, 20);
    dw_histlog_get_stats(log, &st);
    assert_int_equal(st.syncs, 0);
    assert_int_equal(dw_histlog_wait_durable(log, 19), 0);
    dw_histlog_get_stats(log, &st);
    assert_int_equal(st.syncs, 1);
    assert_int_equal(st.synced_records, 20);
    dw_histlog_close(log);

    /* split append: enqueue under a caller's lock, wait outside it */
    subdir(dir, sizeof dir, "mode-split");
    log = open_ok(dir, DW_DURABILITY_FULL, NULL, NULL);
    uint64_t seq[5], ts;
    uint8_t buf[64];
    for (int i = 0; i < 5; i++) {
        size_t len = payload((uint64_t)i, buf);
        assert_int_equal(dw_histlog_enqueue(log, buf, len, &seq[i], &ts), 0);
        assert_int_equal(seq[i], (uint64_t)i);
    }
    assert_int_equal(dw_histlog_wait(log, seq[4]), 0);
    dw_histlog_get_stats(log, &st);
    assert_int_equal(st.syncs, 1);             /* one sync for all five */
    assert_int_equal(st.synced_records, 5);
    assert_int_equal(dw_histlog_wait(log, seq[0]), 0);
    assert_int_equal(dw_histlog_wait(log, 99), -1);   /* never enqueued */
    dw_histlog_close(log);
    collect c = { 0 };
    log = open_ok(dir, DW_DURABILITY_FULL, &c, NULL);
    check_records(&c, 0, 5);
    dw_histlog_close(log);
    collect_free(&c);
}

static void test_write_error_fails_append(void **state)
{
    (void)state;
    char dir[128];
    subdir(dir, sizeof dir, "full");
    dw_histlog *log = open_ok(dir, DW_DURABILITY_FULL, NULL, NULL);
    append_n(log, 0, 5);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    lim = old;
    lim.rlim_cur = rec_end(4) + 100;        /* room for about two more */
    setrlimit(RLIMIT_FSIZE, &lim);
    uint64_t ok = 5;
    uint8_t buf[64];
    int failed = 0;
    for (uint64_t i = 5; i < 20; i++) {
        uint64_t seq;
        size_t len = payload(i, buf);
        if (dw_histlog_append(log, buf, len, &seq) != 0) { failed = 1; break; }
        ok++;
    }
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, prev);
    assert_true(failed);
    assert_non_null(strstr(dw_histlog_error(log), "failed"));
    /* sticky: the disk has room again, but the log stays failed until reopened */
    uint64_t seq;
    assert_int_equal(dw_histlog_append(log, "x", 1, &seq), -1);
    assert_int_equal(dw_histlog_checkpoint(log, "s", 1, 0), -1);
    assert_int_equal(dw_histlog_close(log), -1);
    collect c = { 0 };
    dw_histlog_recovery rec;
    log = open_ok(dir, DW_DURABILITY_FULL, &c, &rec);
    check_records(&c, 0, ok);                  /* every acknowledged record */
    assert_int_equal(rec.next_seq, ok);
    append_n(log, ok, 1);
    dw_histlog_close(log);
    collect_free(&c);
}

static void test_lock_and_limits(void **state)
{
    (void)state;
    char dir[128], err[256];
    subdir(dir, sizeof dir, "lock");
    dw_histlog *log = open_ok(dir, DW_DURABILITY_FULL, NULL, NULL);
    dw_histlog_options o = opts(DW_DURABILITY_FULL, NULL);
    assert_null(dw_histlog_open(dir, &o, NULL, err, sizeof err));
    assert_non_null(strstr(err, "in use"));
    uint64_t seq;
    assert_int_equal(dw_histlog_append(log, "x", (size_t)DW_HISTLOG_MAX_RECORD + 1, &seq), -1);
    assert_int_equal(errno, EMSGSIZE);
    assert_int_equal(dw_histlog_append(log, "x", 1, &seq), 0);   /* not sticky */
    dw_histlog_close(log);
    log = dw_histlog_open(dir, &o, NULL, err, sizeof err);
    assert_non_null(log);
    dw_histlog_close(log);
    o.durability = (dw_durability)7;
    assert_null(dw_histlog_open(dir, &o, NULL, err, sizeof err));
}

static uint64_t fixed_clock(void *ctx) { return *(uint64_t *)ctx; }

static void test_timestamps_strictly_increase(void **state)
{
    (void)state;
    char dir[128];
    subdir(dir, sizeof dir, "ts");
    uint64_t now = 1000;
    dw_histlog_options o = opts(DW_DURABILITY_NONE, NULL);
    o.clock = fixed_clock;
    o.clock_ctx = &now;
    dw_histlog *log = dw_histlog_open(dir, &o, NULL, NULL, 0);
    uint64_t seq, ts;
    assert_int_equal(dw_histlog_append_ts(log, "a", 1, &seq, &ts), 0);
    assert_int_equal(ts, 1000);
    assert_int_equal(dw_histlog_append_ts(log, "b", 1, &seq, &ts), 0);
    assert_int_equal(ts, 1001);                /* the clock did not advance */
    now = 5000;
    assert_int_equal(dw_histlog_append_ts(log, "c", 1, &seq, &ts), 0);
    assert_int_equal(ts, 5000);
    assert_int_equal(dw_histlog_checkpoint(log, "", 0, 3), 0);
    dw_histlog_close(log);
    /* the clock stepped back across the restart (and past a checkpoint) */
    now = 10;
    collect c = { 0 };
    o.on_record = on_rec; o.on_checkpoint = on_ckpt; o.cb_ctx = &c;
    dw_histlog_recovery rec;
    log = dw_histlog_open(dir, &o, &rec, NULL, 0);
    assert_non_null(log);
    assert_int_equal(rec.last_ts, 5000);
    assert_int_equal(c.ckpt_len, 0);
    assert_int_equal(dw_histlog_append_ts(log, "d", 1, &seq, &ts), 0);
    assert_int_equal(seq, 3);
    assert_int_equal(ts, 5001);
    dw_histlog_close(log);
    collect_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_appends),
        cmocka_unit_test(test_checkpoint_during_appends),
        cmocka_unit_test(test_appends_do_not_wait_for_the_checkpoint_file),
        cmocka_unit_test(test_durability_modes),
        cmocka_unit_test(test_write_error_fails_append),
        cmocka_unit_test(test_lock_and_limits),
        cmocka_unit_test(test_timestamps_strictly_increase),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
