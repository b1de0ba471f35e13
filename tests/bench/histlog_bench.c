/* histlog_bench.c - what runtime/histlog.c costs on this machine.
 *
 * 1. The physical bound: latency of write(100 B) + fdatasync and of
 *    write + fsync on a file in the bench directory.
 * 2. For each durability mode and 1, 4, 16 threads: appends/s, latency of
 *    the append call (p50/p99), and append-to-durable latency (p50/p99; a
 *    monitor thread polls dw_histlog_durable_end every 20 us), and records
 *    covered per sync.
 * 3. The engine patterns at 4 and 16 threads: "sync under lock" (today's
 *    engine: one global lock held across append + sync) against "enqueue
 *    under lock, wait outside" (what the engine should do).
 * 4. Reopen cost after 2,000 / 20,000 appends, with and without
 *    checkpoints + retention (NFR-06's shape).
 *
 *   make benchbins
 *   build/bench/histlog_bench [dir] [seconds-per-run]     (default /tmp, 0.6)
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "runtime/histlog.h"
#include "tests/bench/bench_util.h"

#define PAYLOAD 200
#define MAXREC 2000000


static void rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

/* ---------------------------------------------------------------- raw sync */
static void raw_sync(const char *root, int datasync, int n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/raw.bin", root);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) { perror(path); exit(1); }
    uint64_t *lat = malloc(sizeof *lat * (size_t)n);
    char buf[100];
    memset(buf, 'x', sizeof buf);
    for (int i = 0; i < n; i++) {
        uint64_t t0 = bench_now_ns();
        if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf) { perror("write"); exit(1); }
        if ((datasync ? fdatasync(fd) : fsync(fd)) != 0) { perror("sync"); exit(1); }
        lat[i] = bench_now_ns() - t0;
    }
    close(fd);
    unlink(path);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += (double)lat[i];
    qsort(lat, (size_t)n, sizeof *lat, bench_cmp_u64);
    printf("| write(100 B) + %-9s | %5d | %8.1f | %8.1f | %8.1f | %8.0f |\n", datasync ? "fdatasync" : "fsync", n,
           bench_pct_us_u64(lat, (size_t)n, 0.5), bench_pct_us_u64(lat, (size_t)n, 0.99), sum / n / 1000.0, 1e9 / (sum / n));
    free(lat);
}

/* ---------------------------------------------------------------- appends */
enum pattern { PLAIN, LOCKED_SYNC, LOCKED_ENQUEUE };

typedef struct run {
    dw_histlog *log;
    enum pattern pat;
    pthread_mutex_t engine_lock;
    atomic_int stop;
    uint64_t *t_start;          /* by seq: when the append began */
    uint64_t *t_durable;        /* by seq: when the monitor saw it durable */
    uint64_t *call_lat;         /* per thread slices */
    size_t per_thread_cap;
} run;

typedef struct worker { run *r; int id; size_t n; int fails; } worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    run *r = w->r;
    uint8_t buf[PAYLOAD];
    memset(buf, 'e', sizeof buf);
    uint64_t *lat = r->call_lat + (size_t)w->id * r->per_thread_cap;
    while (!atomic_load_explicit(&r->stop, memory_order_relaxed) && w->n < r->per_thread_cap) {
        uint64_t seq = 0, t0 = bench_now_ns();
        int rc;
        if (r->pat == PLAIN) {
            rc = dw_histlog_append(r->log, buf, sizeof buf, &seq);
        } else if (r->pat == LOCKED_SYNC) {
            pthread_mutex_lock(&r->engine_lock);
            rc = dw_histlog_append(r->log, buf, sizeof buf, &seq);
            pthread_mutex_unlock(&r->engine_lock);
        } else {
            pthread_mutex_lock(&r->engine_lock);
            rc = dw_histlog_enqueue(r->log, buf, sizeof buf, &seq, NULL);
            pthread_mutex_unlock(&r->engine_lock);
            if (rc == 0) rc = dw_histlog_wait(r->log, seq);
        }
        uint64_t t1 = bench_now_ns();
        if (rc != 0) { w->fails++; break; }
        if (seq < MAXREC) r->t_start[seq] = t0;
        lat[w->n++] = t1 - t0;
    }
    return NULL;
}

typedef struct monitor { run *r; atomic_int stop; } monitor;

static void *monitor_main(void *arg)
{
    monitor *m = arg;
    uint64_t seen = 0;
    while (!atomic_load(&m->stop)) {
        uint64_t d = dw_histlog_durable_end(m->r->log), t = bench_now_ns();
        for (; seen < d && seen < MAXREC; seen++) m->r->t_durable[seen] = t;
        struct timespec ts = { 0, 20000 };
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static const char *mode_name(dw_durability m)
{
    return m == DW_DURABILITY_FULL ? "full" : m == DW_DURABILITY_BATCH ? "batch" : "none";
}

static void bench(const char *root, dw_durability mode, enum pattern pat, int nthreads, double secs)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/histlog-bench-%d", root, (int)getpid());
    rm_dir(dir);
    dw_histlog_options o;
    memset(&o, 0, sizeof o);
    o.schema_digest = 42;
    o.durability = mode;
    o.batch_ms = 5;
    o.batch_records = 256;
    char err[256];
    run r;
    memset(&r, 0, sizeof r);
    r.log = dw_histlog_open(dir, &o, NULL, err, sizeof err);
    if (!r.log) { fprintf(stderr, "%s\n", err); exit(1); }
    r.pat = pat;
    pthread_mutex_init(&r.engine_lock, NULL);
    r.per_thread_cap = MAXREC / (size_t)nthreads;
    r.t_start = calloc(MAXREC, sizeof *r.t_start);
    r.t_durable = calloc(MAXREC, sizeof *r.t_durable);
    r.call_lat = calloc(MAXREC, sizeof *r.call_lat);
    worker w[64];
    pthread_t th[64], mt;
    monitor mon = { &r, 0 };
    pthread_create(&mt, NULL, monitor_main, &mon);
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < nthreads; i++) {
        w[i] = (worker){ &r, i, 0, 0 };
        pthread_create(&th[i], NULL, worker_main, &w[i]);
    }
    struct timespec sl = { (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };
    nanosleep(&sl, NULL);
    atomic_store(&r.stop, 1);
    for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
    uint64_t t1 = bench_now_ns();
    if (mode != DW_DURABILITY_NONE) dw_histlog_sync(r.log);
    usleep(2000);
    atomic_store(&mon.stop, 1);
    pthread_join(mt, NULL);
    dw_histlog_stats st;
    dw_histlog_get_stats(r.log, &st);
    dw_histlog_close(r.log);
    rm_dir(dir);

    size_t total = 0;
    int fails = 0;
    for (int i = 0; i < nthreads; i++) total += w[i].n, fails += w[i].fails;
    uint64_t *calls = malloc(sizeof *calls * (total ? total : 1));
    size_t k = 0;
    for (int i = 0; i < nthreads; i++) {
        memcpy(calls + k, r.call_lat + (size_t)i * r.per_thread_cap, w[i].n * sizeof *calls);
        k += w[i].n;
    }
    qsort(calls, total, sizeof *calls, bench_cmp_u64);
    /* append-to-durable, for records that became durable while measured */
    uint64_t *dur = malloc(sizeof *dur * (total ? total : 1));
    size_t nd = 0;
    if (mode != DW_DURABILITY_NONE)
        for (size_t s = 0; s < total && s < MAXREC; s++)
            if (r.t_durable[s] && r.t_start[s]) dur[nd++] = r.t_durable[s] > r.t_start[s] ? r.t_durable[s] - r.t_start[s] : 0;
    qsort(dur, nd, sizeof *dur, bench_cmp_u64);
    double el = (double)(t1 - t0) / 1e9;
    const char *pname = pat == PLAIN ? "" : pat == LOCKED_SYNC ? " (sync under lock)" : " (enqueue under lock)";
    char label[64];
    snprintf(label, sizeof label, "%s%s", mode_name(mode), pname);
    if (mode == DW_DURABILITY_NONE)
        printf("| %-27s | %2d | %9.0f | %8.1f | %8.1f | %8s | %8s | %7s |%s\n", label, nthreads, (double)total / el,
               bench_pct_us_u64(calls, total, 0.5), bench_pct_us_u64(calls, total, 0.99), "never", "never", "-", fails ? " FAILURES" : "");
    else
        printf("| %-27s | %2d | %9.0f | %8.1f | %8.1f | %8.1f | %8.1f | %7.1f |%s\n", label, nthreads, (double)total / el,
               bench_pct_us_u64(calls, total, 0.5), bench_pct_us_u64(calls, total, 0.99), bench_pct_us_u64(dur, nd, 0.5), bench_pct_us_u64(dur, nd, 0.99),
               st.syncs ? (double)st.synced_records / (double)st.syncs : 0.0, fails ? " FAILURES" : "");
    fflush(stdout);
    free(calls); free(dur);
    free(r.t_start); free(r.t_durable); free(r.call_lat);
    pthread_mutex_destroy(&r.engine_lock);
}

/* ---------------------------------------------------------------- reopen */
static int count_cb(void *ctx, uint64_t seq, uint64_t ts, const void *p, size_t len)
{
    (*(uint64_t *)ctx)++;
    return 0;
}

/* NFR-06 shape: `total` appends, a checkpoint every `every` records keeping
 * the last `window` records; then the directory size and reopen time. */
static void reopen_cost(const char *root, uint64_t total, uint64_t every, uint64_t window)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/histlog-reopen-%d", root, (int)getpid());
    rm_dir(dir);
    dw_histlog_options o;
    memset(&o, 0, sizeof o);
    o.schema_digest = 42;
    o.durability = DW_DURABILITY_NONE;
    char err[256];
    dw_histlog *log = dw_histlog_open(dir, &o, NULL, err, sizeof err);
    if (!log) { fprintf(stderr, "%s\n", err); exit(1); }
    uint8_t buf[PAYLOAD];
    memset(buf, 'e', sizeof buf);
    uint8_t state[4096];
    memset(state, 's', sizeof state);
    for (uint64_t i = 0; i < total; i++) {
        uint64_t seq;
        dw_histlog_append(log, buf, sizeof buf, &seq);
        if (every && (i + 1) % every == 0)
            dw_histlog_checkpoint(log, state, sizeof state, i + 1 > window ? i + 1 - window : 0);
    }
    dw_histlog_close(log);
    uint64_t bytes = 0;
    DIR *d = opendir(dir);
    struct dirent *de;
    while ((de = readdir(d))) {
        char p[2048];
        struct stat sb;
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        if (de->d_name[0] != '.' && stat(p, &sb) == 0) bytes += (uint64_t)sb.st_size;
    }
    closedir(d);
    uint64_t n = 0;
    o.on_record = count_cb;
    o.cb_ctx = &n;
    dw_histlog_recovery rec;
    uint64_t t0 = bench_now_ns();
    log = dw_histlog_open(dir, &o, &rec, err, sizeof err);
    uint64_t t1 = bench_now_ns();
    dw_histlog_close(log);
    rm_dir(dir);
    printf("| %6llu | %s | %8llu | %5u | %8llu | %8.2f |\n", (unsigned long long)total,
           every ? "every 1000, keep 1000" : "none                 ", (unsigned long long)bytes, rec.segments,
           (unsigned long long)n, (double)(t1 - t0) / 1e6);
}

int main(int argc, char **argv)
{
    const char *root = argc > 1 ? argv[1] : "/tmp";
    double secs = argc > 2 ? atof(argv[2]) : 0.6;
    printf("bench directory %s, %d-byte payloads, %.1f s per run\n\n", root, PAYLOAD, secs);
    printf("| raw sync                   |     n | p50 (us) | p99 (us) | mean (us) | syncs/s |\n");
    printf("|---|---|---|---|---|---|\n");
    raw_sync(root, 1, 300);
    raw_sync(root, 0, 300);
    printf("\n| mode                        | thr | appends/s | call p50 | call p99 | durable p50 | durable p99 | rec/sync |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    static const int thr[] = { 1, 4, 16 };
    dw_durability modes[] = { DW_DURABILITY_FULL, DW_DURABILITY_BATCH, DW_DURABILITY_NONE };
    for (int m = 0; m < 3; m++)
        for (int t = 0; t < 3; t++) bench(root, modes[m], PLAIN, thr[t], secs);
    for (int t = 1; t < 3; t++) {
        bench(root, DW_DURABILITY_FULL, LOCKED_SYNC, thr[t], secs);
        bench(root, DW_DURABILITY_FULL, LOCKED_ENQUEUE, thr[t], secs);
    }
    printf("\n| events | checkpoints | dir bytes | segs | replayed | reopen ms |\n|---|---|---|---|---|---|\n");
    reopen_cost(root, 2000, 0, 0);
    reopen_cost(root, 20000, 0, 0);
    reopen_cost(root, 2000, 1000, 1000);
    reopen_cost(root, 20000, 1000, 1000);
    printf("\n(latencies in microseconds; \"call\" = until dw_histlog_append returns, "
           "\"durable\" = until dw_histlog_durable_end covers the record, polled every 20 us)\n");
    return 0;
}
