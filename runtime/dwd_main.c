/* dwd_main.c - dwd, the Dogwood decision service (docs/DWD.md).
 *
 *   dwd --artifact P.dwb|--policy P.dw|P.dwb --schema box|FILE [--events E]
 *       --state DIR --socket PATH [--decision-log FILE]
 *       [--durability full|batch|none] [--checkpoint-every N] [--checkpoint-interval S]
 *       [--log-include deny,permit,trace,kernel] [--box-name N] [--box-source box|agent] [--run-id R]
 *
 * One engine with its durable history (dw_engine_open_durable: the log in
 * --state DIR, checkpoints, recovery), one Unix stream socket speaking JSON
 * lines (runtime/dwd_protocol.h).  The serving thread runs a poll loop: it
 * reads every ready request, decides or records each (the engine appends
 * every event to its log before it enters the history), waits once for the
 * log (durable under --durability full), and only then sends the replies:
 * one sync covers every request of a round (group commit).  Checkpoints run
 * on the engine's own thread, decision-log lines are written by a writer
 * thread, and file operations in the state directory (and opening a
 * reloaded artifact) go through the state keeper (runtime/keeper.h), a child
 * forked before the process confines itself with a seccomp allow-list
 * (runtime/seccomp.h) that refuses opening any path. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "dogwood.h"
#include "dwd_protocol.h"
#include "histlog.h"
#include "keeper.h"
#include "seccomp.h"

/* A sanitizer's exit-time leak check needs clone, ptrace and /proc, which
 * the confinement refuses: check for leaks just before confining instead. */
#if defined(__SANITIZE_ADDRESS__)
#define DWD_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DWD_LSAN 1
#endif
#endif
#ifdef DWD_LSAN
#include <sanitizer/lsan_interface.h>
#endif

#define MAX_CONNS 256
#define MAX_OUT (16u << 20)    /* a client that does not read its replies is dropped */

typedef struct conn {
    int fd;
    dwd_buf in, out;
    size_t out_off;
    size_t round_mark;         /* out.len when this round began */
    uint32_t round_lines;      /* requests answered this round */
    bool closing;              /* close once out is flushed */
} conn;

/* The decision log's writer (box.md §10.1: file I/O off the decision path).
 * The serving thread appends each round's lines to a bounded queue (one
 * short critical section) after the round's replies are sent; the writer
 * thread swaps the queue out and writes it.  A full queue drops the round's
 * lines and counts them (the serving thread never waits for the disk). */
typedef struct dlog_writer {
    int fd;
    pthread_t th;
    bool running;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    dwd_buf q;                 /* queued lines */
    uint64_t qlines;
    size_t cap;                /* bytes */
    bool stop;
    uint64_t written, dropped, write_errors;
} dlog_writer;

/* --log-include: what the decision log receives (box.md §10.2's include words) */
enum { LOG_DENY = 1, LOG_PERMIT = 2, LOG_TRACE = 4, LOG_KERNEL = 8 };

typedef struct server {
    dw_engine *e;
    dw_keeper *keeper;
    bool trust_time;
    dlog_writer dl;            /* dl.fd < 0: no decision log */
    dwd_buf dlog;              /* decision-log lines of this round */
    uint64_t dlog_round_lines;
    const char *box_name, *run_id, *box_source;
    unsigned log_include;      /* LOG_* bits */
    uint64_t rng;
    /* this round */
    uint64_t round_ticket;     /* the last log position appended this round (0: none) */
    /* stats */
    uint64_t decisions, permits, denies, faults, records, errors, accepted, refused_peers, reloads;
    conn *conns[MAX_CONNS];
    int nconns;
} server;

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig) { (void)sig; stop_flag = 1; }

static uint64_t rng_next(server *s)
{
    uint64_t x = s->rng;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    s->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- the decision-log writer ---- */

static void write_all(dlog_writer *w, const char *p, size_t n)
{
    while (n) {
        ssize_t r = write(w->fd, p, n);
        if (r < 0) {
            if (errno == EINTR) continue;
            fprintf(stderr, "dwd: decision log write failed: %s\n", strerror(errno));
            w->write_errors++;
            return;
        }
        p += r;
        n -= (size_t)r;
    }
}

static void *dlog_main(void *arg)
{
    dlog_writer *w = arg;
    dwd_buf mine = { 0 };
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->stop && !w->q.len) pthread_cond_wait(&w->cv, &w->mu);
        if (!w->q.len && w->stop) break;
        dwd_buf t = w->q;          /* swap: the queue keeps the empty buffer */
        w->q = mine;
        w->q.len = 0;
        uint64_t lines = w->qlines;
        w->qlines = 0;
        pthread_mutex_unlock(&w->mu);
        write_all(w, t.p, t.len);
        mine = t;
        if (mine.cap > (4u << 20)) dwd_buf_free(&mine);   /* don't hoard a burst's buffer */
        pthread_mutex_lock(&w->mu);
        w->written += lines;
    }
    pthread_mutex_unlock(&w->mu);
    dwd_buf_free(&mine);
    return NULL;
}

static int dlog_start(dlog_writer *w)
{
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (!w->cap) w->cap = 64u << 20;
    if (pthread_create(&w->th, NULL, dlog_main, w) != 0) return -1;
    w->running = true;
    return 0;
}

/* Queue lines (never blocks on I/O; drops them, counted, when the queue is full). */
static void dlog_push(dlog_writer *w, const dwd_buf *b, uint64_t lines)
{
    if (w->fd < 0 || !b->len) return;
    if (!w->running) { write_all(w, b->p, b->len); w->written += lines; return; }   /* before the thread starts */
    pthread_mutex_lock(&w->mu);
    if (b->oom || w->q.len + b->len > w->cap) w->dropped += lines;
    else {
        dwd_buf_put(&w->q, b->p, b->len);
        if (w->q.oom) { w->q.oom = false; w->q.len = 0; w->dropped += lines + w->qlines; w->qlines = 0; }
        else w->qlines += lines;
    }
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static void dlog_stop(dlog_writer *w)
{
    if (w->running) {
        pthread_mutex_lock(&w->mu);
        w->stop = true;
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->mu);
        pthread_join(w->th, NULL);
        w->running = false;
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
    }
    dwd_buf_free(&w->q);
    if (w->fd >= 0) close(w->fd);
    w->fd = -1;
}

static void control_record(server *s, const char *op, const char *const *kv, size_t nkv)
{
    if (s->dl.fd < 0) return;
    dwd_buf b = { 0 };
    dwd_log_info li = { s->box_name, s->run_id, now_ns(), 0, 0, 0 };
    dwd_log_control(&b, &li, op, kv, nkv);
    dlog_push(&s->dl, &b, 1);
    dwd_buf_free(&b);
}

/* ---- requests ---- */

static void handle_decide(server *s, const dwd_request *rq, dwd_buf *out)
{
    dw_verdict v;
    uint64_t ticket = 0;
    int rc = dw_engine_submit_json(s->e, rq->event.p, rq->event.len, DW_TS_NOW, DW_OBSERVE_DECIDE, &v, &ticket);
    if (rc < 0) {
        memset(&v, 0, sizeof v);
        v.cause = DW_CAUSE_INTERNAL_FAULT;
    }
    if (ticket) s->round_ticket = ticket;
    s->decisions++;
    const char *ids[DW_VERDICT_MAX_RULES];
    const char *descs[DW_VERDICT_MAX_RULES];
    char descbuf[DW_VERDICT_MAX_RULES][512];
    uint32_t n = v.ndetermining;
    for (uint32_t i = 0; i < n; i++) {
        ids[i] = dw_engine_rule_name(s->e, v.determining[i]);
        descs[i] = dw_engine_rule_description(s->e, v.determining[i], descbuf[i], sizeof descbuf[i]) ? descbuf[i] : NULL;
    }
    dwd_decision d = {
        .allow = v.allow && v.cause == DW_CAUSE_PERMITTED,
        .cause = dw_cause_name(v.allow ? v.cause : v.cause == DW_CAUSE_PERMITTED ? DW_CAUSE_INTERNAL_FAULT : v.cause),
        .rule = n ? ids[0] : "<default-deny>",
        .description = n ? descs[0] : NULL,
        .ndetermining = n, .ids = ids, .descs = descs,
    };
    /* box.md §2.3, §8: in the per-tool MCP gate no match is Allow (only an
     * explicit forbid or a fault denies).  The cause stays no_match (no rule
     * determined it); the rule is the sentinel <default-allow>. */
    if (rq->per_tool && rc >= 0 && !v.allow && v.cause == DW_CAUSE_NO_MATCH && !v.nerrors && !n) {
        d.allow = true;
        d.rule = "<default-allow>";
    }
    if (d.allow) s->permits++;
    else s->denies++;
    if (!strcmp(d.cause, "internal_fault")) {
        s->faults++;
        if (v.message[0]) fprintf(stderr, "dwd: internal fault: %s\n", v.message);
    }
    dwd_buf msg = { 0 };
    dwd_denial_message(&msg, rq->subject.p ? rq->subject.p : "", &d);
    dwd_reply_decision(out, &d, msg.p ? msg.p : "");
    if (s->dl.fd >= 0 && (s->log_include & ((d.allow ? LOG_PERMIT : LOG_DENY) | LOG_TRACE))) {
        /* one record and its zero-length span share the trace and span ids (box.md §10.2) */
        dwd_log_info li = { s->box_name, s->run_id, v.timestamp, rng_next(s), rng_next(s), rng_next(s) };
        if (rq->has_trace_id) li.trace_hi = rq->trace_hi, li.trace_lo = rq->trace_lo;
        if (!li.span) li.span = 1;
        if (!li.trace_hi && !li.trace_lo) li.trace_lo = 1;
        if (s->log_include & (d.allow ? LOG_PERMIT : LOG_DENY)) {
            dwd_log_line(&s->dlog, &li, rq, &d, msg.p ? msg.p : "");
            s->dlog_round_lines++;
        }
        if (s->log_include & LOG_TRACE) {
            dwd_span_line(&s->dlog, &li, rq, &d);
            s->dlog_round_lines++;
        }
    }
    dwd_buf_free(&msg);
}

static void handle_stats(server *s, dwd_buf *out)
{
    dw_engine_stats st;
    dw_engine_get_stats(s->e, &st);
    dwd_buf_printf(out, "{\"ok\":true,\"decisions\":%" PRIu64 ",\"permits\":%" PRIu64 ",\"denies\":%" PRIu64
                   ",\"internal_faults\":%" PRIu64 ",\"records\":%" PRIu64 ",\"errors\":%" PRIu64,
                   s->decisions, s->permits, s->denies, s->faults, s->records, s->errors);
    dwd_buf_printf(out, ",\"restored\":%" PRIu64 ",\"history_events\":%u,\"log_next_seq\":%" PRIu64
                   ",\"log_appends\":%" PRIu64 ",\"log_syncs\":%" PRIu64 ",\"log_max_batch\":%" PRIu64,
                   st.restored, st.history_events, st.log_next_seq, st.log_appends, st.log_syncs, st.log_max_batch);
    dwd_buf_printf(out, ",\"replayed\":%" PRIu64 ",\"checkpoints\":%" PRIu64 ",\"checkpoint_failures\":%" PRIu64
                   ",\"reloads\":%" PRIu64 ",\"policy_generation\":%u", st.replayed, st.checkpoints, st.checkpoint_failures,
                   s->reloads, st.generation);
    uint64_t dw = 0, dd = 0, de = 0;
    if (s->dl.running) {
        pthread_mutex_lock(&s->dl.mu);
        dw = s->dl.written; dd = s->dl.dropped; de = s->dl.write_errors;
        pthread_mutex_unlock(&s->dl.mu);
    }
    dwd_buf_printf(out, ",\"decision_log_written\":%" PRIu64 ",\"decision_log_dropped\":%" PRIu64
                   ",\"decision_log_write_errors\":%" PRIu64, dw, dd, de);
    dwd_buf_printf(out, ",\"connections\":%d,\"accepted\":%" PRIu64 ",\"refused_peers\":%" PRIu64 "}\n",
                   s->nconns, s->accepted, s->refused_peers);
}

/* {"op":"reload","artifact":PATH}: the keeper opens PATH read-only (the
 * confined server cannot), the engine swaps atomically (box.md §7). */
static void handle_reload(server *s, const dwd_request *rq, dwd_buf *out)
{
    const char *path = rq->artifact.p;
    char err[512];
    int fd = s->keeper ? dw_keeper_open_artifact(s->keeper, path) : -1;
    void *data = NULL;
    size_t len = 0;
    struct stat sb;
    if (fd < 0) snprintf(err, sizeof err, "reload: cannot open %s: %s", path, strerror(errno));
    else if (fstat(fd, &sb) != 0 || sb.st_size <= 0 || sb.st_size > (256 << 20)) {
        snprintf(err, sizeof err, "reload: %s: not a readable artifact of at most 256 MiB", path);
        close(fd);
        fd = -1;
    } else if (!(data = malloc((size_t)sb.st_size))) {
        snprintf(err, sizeof err, "reload: out of memory");
        close(fd);
        fd = -1;
    } else {
        while (len < (size_t)sb.st_size) {
            ssize_t r = read(fd, (char *)data + len, (size_t)sb.st_size - len);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            len += (size_t)r;
        }
        close(fd);
        if (len != (size_t)sb.st_size) { snprintf(err, sizeof err, "reload: %s: short read", path); fd = -1; }
    }
    dw_reload_info info;
    if (fd >= 0 && dw_engine_reload(s->e, data, len, &info, err, sizeof err) == 0) {
        s->reloads++;
        dwd_buf_printf(out, "{\"ok\":true,\"policy_generation\":%u,\"leaves\":%u,\"kept\":%u,\"fresh\":%u}\n",
                       info.generation, info.leaves, info.kept, info.fresh);
        char g[16], l[16], k[16], f[16];
        snprintf(g, sizeof g, "%u", info.generation);
        snprintf(l, sizeof l, "%u", info.leaves);
        snprintf(k, sizeof k, "%u", info.kept);
        snprintf(f, sizeof f, "%u", info.fresh);
        const char *kv[] = { "strands.box.policy.source", path, "strands.box.policy.generation", g,
                             "strands.box.policy.temporal_leaves", l, "strands.box.policy.temporal_leaves_kept", k,
                             "strands.box.policy.temporal_leaves_fresh", f };
        control_record(s, "policy_installed", kv, sizeof kv / sizeof *kv);
        fprintf(stderr, "dwd: reloaded %s (generation %u: %u temporal leaves, %u kept, %u start empty)\n",
                path, info.generation, info.leaves, info.kept, info.fresh);
    } else {
        s->errors++;
        dwd_reply_error(out, err);
        const char *kv[] = { "strands.box.policy.source", path, "strands.box.policy.reason", err };
        control_record(s, "policy_refused", kv, 4);
    }
    free(data);
}

static void handle_line(server *s, const char *line, size_t len, dwd_buf *out)
{
    char err[512];
    dwd_request rq;
    if (len && line[len - 1] == '\r') len--;
    if (dwd_parse_request(line, len, s->trust_time, &rq, err, sizeof err)) {
        s->errors++;
        dwd_reply_error(out, err);
        dwd_request_free(&rq);
        return;
    }
    switch (rq.op) {
    case DWD_OP_DECIDE: handle_decide(s, &rq, out); break;
    case DWD_OP_RECORD: {
        dw_verdict v;
        uint64_t ticket = 0;
        int rc = dw_engine_submit_json(s->e, rq.event.p, rq.event.len, DW_TS_NOW, DW_OBSERVE_RECORD, &v, &ticket);
        if (ticket) s->round_ticket = ticket;
        if (rc == 1) { s->records++; dwd_reply_ok(out); }
        else { s->errors++; dwd_reply_error(out, rc < 0 ? "the engine is unusable" : v.message); }
        break;
    }
    case DWD_OP_STATS: handle_stats(s, out); break;
    case DWD_OP_RELOAD: handle_reload(s, &rq, out); break;
    }
    dwd_request_free(&rq);
}

/* ---- connections ---- */

static void conn_free(conn *c)
{
    close(c->fd);
    dwd_buf_free(&c->in);
    dwd_buf_free(&c->out);
    free(c);
}

static void accept_all(server *s, int lfd)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        struct ucred cr;
        socklen_t cl = sizeof cr;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0 || cr.uid != geteuid()) {
            s->refused_peers++;
            close(fd);
            continue;
        }
        conn *c = s->nconns < MAX_CONNS ? calloc(1, sizeof *c) : NULL;
        if (!c) { close(fd); continue; }
        c->fd = fd;
        s->conns[s->nconns++] = c;
        s->accepted++;
    }
}

/* Read what is there and answer every complete line (replies stay queued
 * until the round's history wait). */
static void conn_read(server *s, conn *c)
{
    char buf[65536];
    for (;;) {
        ssize_t n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n == 0) { c->closing = true; break; }
        if (n < 0) { if (errno == EINTR) continue; if (errno != EAGAIN && errno != EWOULDBLOCK) c->closing = true; break; }
        dwd_buf_put(&c->in, buf, (size_t)n);
        if (c->in.oom) { c->closing = true; break; }
        if ((size_t)n < sizeof buf) break;
    }
    size_t start = 0;
    for (;;) {
        char *nl = c->in.len > start ? memchr(c->in.p + start, '\n', c->in.len - start) : NULL;
        if (!nl) break;
        size_t ll = (size_t)(nl - (c->in.p + start));
        handle_line(s, c->in.p + start, ll, &c->out);
        c->round_lines++;
        start += ll + 1;
    }
    if (start) {
        memmove(c->in.p, c->in.p + start, c->in.len - start);
        c->in.len -= start;
    }
    if (c->in.len > DWD_MAX_LINE) {
        dwd_reply_error(&c->out, "request line too long; closing the connection");
        c->round_lines++;
        c->in.len = 0;
        c->closing = true;
    }
    if (c->out.oom || c->out.len > MAX_OUT) { c->out.len = c->out_off = 0; c->closing = true; }
}

static void conn_flush(conn *c)
{
    while (c->out_off < c->out.len) {
        ssize_t n = send(c->fd, c->out.p + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) { c->out_off = c->out.len = 0; c->closing = true; }
            return;
        }
        c->out_off += (size_t)n;
    }
    c->out.len = c->out_off = 0;
}

/* ---- main ---- */

static void usage(void)
{
    fprintf(stderr, "usage: dwd --artifact P.dwb|--policy P.dw|P.dwb --schema box|FILE [--events E] --state DIR --socket PATH\n"
                    "           [--decision-log FILE] [--durability full|batch|none]\n"
                    "           [--checkpoint-every N] [--checkpoint-interval SECONDS] [--temporal-work-bound STEPS]\n"
                    "           [--log-include deny,permit,trace,kernel] [--box-name NAME] [--box-source box|agent] [--run-id ID]\n"
                    "       dwd --version\n");
}

/* --log-include: a comma list of deny, permit, trace, kernel; each word at
 * most once (box.md §10.2).  0 on success. */
static int parse_include(const char *t, unsigned *out)
{
    static const char *words[] = { "deny", "permit", "trace", "kernel" };
    unsigned bits = 0;
    if (!*t) return -1;
    for (const char *p = t;;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        int w = -1;
        for (int k = 0; k < 4; k++)
            if (strlen(words[k]) == n && !memcmp(words[k], p, n)) w = k;
        if (w < 0 || bits & (1u << w)) return -1;
        bits |= 1u << w;
        if (!e) break;
        p = e + 1;
    }
    *out = bits;
    return 0;
}

static bool parse_u64(const char *t, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(t, &end, 10);
    if (errno || end == t || *end || t[0] == '-') return false;
    *out = v;
    return true;
}

int main(int argc, char **argv)
{
    const char *policy = NULL, *schema = NULL, *events = NULL, *state = NULL, *sock = NULL, *dlog = NULL;
    const char *durability = "full", *ck_every = "10000", *ck_interval = "0", *include = "deny,permit";
    const char *work_bound = "0";
    bool trust_time = false, no_confine = false;
    server s;
    memset(&s, 0, sizeof s);
    s.dl.fd = -1;
    s.box_name = "dwd";
    s.run_id = "run-0001";
    s.box_source = "box";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = NULL;
        if (!strcmp(a, "--version")) { printf("dwd %s\n", dw_version()); return 0; }
        if (!strcmp(a, "--selftest-seccomp")) return dw_confine_selftest();
        if (!strcmp(a, "--selftest-keeper")) {            /* tests only: --selftest-keeper DIR */
            if (i + 1 >= argc) { usage(); return 2; }
            return dw_keeper_selftest(argv[i + 1]);
        }
        if (!strcmp(a, "--trust-client-time")) { trust_time = true; continue; }   /* tests only */
        if (!strcmp(a, "--no-confine")) { no_confine = true; continue; }          /* debugging only */
        if (!strcmp(a, "--policy") || !strcmp(a, "--artifact")) slot = &policy;
        else if (!strcmp(a, "--schema")) slot = &schema;
        else if (!strcmp(a, "--events")) slot = &events;
        else if (!strcmp(a, "--state")) slot = &state;
        else if (!strcmp(a, "--socket")) slot = &sock;
        else if (!strcmp(a, "--decision-log")) slot = &dlog;
        else if (!strcmp(a, "--durability")) slot = &durability;
        else if (!strcmp(a, "--checkpoint-every")) slot = &ck_every;
        else if (!strcmp(a, "--checkpoint-interval")) slot = &ck_interval;
        else if (!strcmp(a, "--temporal-work-bound")) slot = &work_bound;
        else if (!strcmp(a, "--box-name")) slot = &s.box_name;
        else if (!strcmp(a, "--run-id")) slot = &s.run_id;
        else if (!strcmp(a, "--box-source")) slot = &s.box_source;
        else if (!strcmp(a, "--log-include")) slot = &include;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(); return 0; }
        if (!slot || i + 1 >= argc) { fprintf(stderr, "dwd: %s %s\n", slot ? "missing value for" : "unknown option", a); usage(); return 2; }
        *slot = argv[++i];
    }
    if (!schema) schema = "box";          /* dwd serves Box: its built-in vocabulary unless told otherwise */
    if (!policy || !state || !sock) { usage(); return 2; }
    dw_engine_durable dd = { .state_dir = state };
    if (!strcmp(durability, "full")) dd.durability = DW_DURABILITY_FULL;
    else if (!strcmp(durability, "batch")) dd.durability = DW_DURABILITY_BATCH;
    else if (!strcmp(durability, "none")) dd.durability = DW_DURABILITY_NONE;
    else { fprintf(stderr, "dwd: --durability must be full, batch or none\n"); return 2; }
    uint64_t every, interval;
    if (!parse_u64(ck_every, &every) || every > INT64_MAX) { fprintf(stderr, "dwd: --checkpoint-every takes a number of events (0: never)\n"); return 2; }
    if (!parse_u64(ck_interval, &interval) || interval > 86400 * 365) { fprintf(stderr, "dwd: --checkpoint-interval takes seconds (0: never)\n"); return 2; }
    dd.checkpoint_every = every ? (int64_t)every : -1;
    uint64_t bound;
    if (!parse_u64(work_bound, &bound)) { fprintf(stderr, "dwd: --temporal-work-bound takes a number of steps (0: the default)\n"); return 2; }
    dd.checkpoint_interval_ms = (uint32_t)(interval * 1000);
    s.trust_time = trust_time;
    if (parse_include(include, &s.log_include)) {
        fprintf(stderr, "dwd: --log-include takes a comma list of deny, permit, trace, kernel (each at most once)\n");
        return 2;
    }
    if (strcmp(s.box_source, "box") && strcmp(s.box_source, "agent")) {
        fprintf(stderr, "dwd: --box-source must be box or agent\n");
        return 2;
    }
    dwd_log_set_box_source(s.box_source);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);

    char err[512];
    /* the keeper first: a small process with no other descriptors and no threads */
    s.keeper = dw_keeper_start(state, err, sizeof err);
    if (!s.keeper) { fprintf(stderr, "dwd: %s\n", err); return 1; }
    dw_histlog_fileops fops;
    dw_keeper_fileops(s.keeper, &fops);
    dd.fileops = &fops;
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    dw_engine_config cfg = { .policy_path = policy, .schema_path = schema, .events_path = events, .temporal_work_bound = bound };
    dw_engine_recovery rec;
    s.e = dw_engine_open_durable(&cfg, &dd, &rec, err, sizeof err);
    if (!s.e) {
        fprintf(stderr, "dwd: %s: %s\n", policy, err);
        dw_keeper_stop(s.keeper);
        return 1;
    }
    if (rec.note[0]) fprintf(stderr, "dwd: history recovery: %s\n", rec.note);
    int lfd = -1;
    if (dlog) {
        s.dl.fd = open(dlog, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (s.dl.fd < 0) { fprintf(stderr, "dwd: %s: %s\n", dlog, strerror(errno)); goto fail; }
    }
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (strlen(sock) >= sizeof addr.sun_path) { fprintf(stderr, "dwd: socket path too long\n"); goto fail; }
    strcpy(addr.sun_path, sock);
    struct stat sb;
    if (lstat(sock, &sb) == 0) {
        if (!S_ISSOCK(sb.st_mode)) { fprintf(stderr, "dwd: %s exists and is not a socket\n", sock); goto fail; }
        unlink(sock);   /* stale: the state directory's lock says no other dwd serves this history */
    }
    lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (lfd < 0) { fprintf(stderr, "dwd: socket: %s\n", strerror(errno)); goto fail; }
    mode_t old = umask(0077);
    int brc = bind(lfd, (struct sockaddr *)&addr, sizeof addr);
    umask(old);
    if (brc != 0 || listen(lfd, 128) != 0) { fprintf(stderr, "dwd: %s: %s\n", sock, strerror(errno)); goto fail; }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    s.rng = ((uint64_t)now.tv_nsec << 20) ^ (uint64_t)now.tv_sec ^ ((uint64_t)getpid() << 40) ^ 0x9E3779B97F4A7C15ULL;
    {
        dw_engine_stats st;
        dw_engine_get_stats(s.e, &st);
        char restored[24], cwd[1024];
        snprintf(restored, sizeof restored, "%" PRIu64, st.restored);
        if (!getcwd(cwd, sizeof cwd)) snprintf(cwd, sizeof cwd, "?");
        const char *kv1[] = { "strands.box.history.restored", restored, "process.working_directory", cwd };
        control_record(&s, "box_started", kv1, 4);
        const char *kv2[] = { "strands.box.policy.source", policy, "strands.box.policy.generation", "0" };
        control_record(&s, "policy_installed", kv2, 4);
    }
    if (s.dl.fd >= 0 && dlog_start(&s.dl)) { fprintf(stderr, "dwd: cannot start the decision-log writer\n"); goto fail; }
#ifdef DWD_LSAN
    if (!no_confine) __lsan_do_leak_check();
#endif
    if (!no_confine && dw_confine_serving(err, sizeof err)) { fprintf(stderr, "dwd: %s\n", err); goto fail; }
    fprintf(stderr, "dwd: serving %s on %s (history: %" PRIu64 " events restored, %" PRIu64 " replayed%s in %.3f s; durability %s%s)\n",
            policy, sock, rec.events, rec.replayed, rec.checkpoint ? " after a checkpoint" : "", rec.seconds, durability,
            no_confine ? "; NOT confined" : "; confined");

    struct pollfd pfd[MAX_CONNS + 1];
    while (!stop_flag) {
        pfd[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
        for (int i = 0; i < s.nconns; i++)
            pfd[i + 1] = (struct pollfd){ .fd = s.conns[i]->fd,   /* a closing connection only drains its replies */
                                          .events = (short)((s.conns[i]->closing ? 0 : POLLIN) | (s.conns[i]->out.len ? POLLOUT : 0)) };
        int nfds = s.nconns + 1;
        int pr = poll(pfd, (nfds_t)nfds, -1);
        if (pr < 0) { if (errno == EINTR) continue; fprintf(stderr, "dwd: poll: %s\n", strerror(errno)); break; }
        s.round_ticket = 0;
        for (int i = 0; i < s.nconns; i++) { s.conns[i]->round_mark = s.conns[i]->out.len; s.conns[i]->round_lines = 0; }
        for (int i = 0; i < s.nconns; i++)
            if (!s.conns[i]->closing && (pfd[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) conn_read(&s, s.conns[i]);
        /* one wait covers the round: durable (full) or written (batch, none) before any reply */
        if (s.round_ticket && dw_engine_wait(s.e, s.round_ticket) != 0) {
            fprintf(stderr, "dwd: %s\n", dw_engine_history_error(s.e));
            for (int i = 0; i < s.nconns; i++) {
                conn *c = s.conns[i];
                if (c->round_mark > c->out.len) continue;
                c->out.len = c->round_mark;
                for (uint32_t k = 0; k < c->round_lines; k++) dwd_reply_error(&c->out, "policy history failure: the event is not durable; treat as denied");
            }
            s.dlog.len = 0;
            s.dlog_round_lines = 0;
        }
        for (int i = 0; i < s.nconns; i++) conn_flush(s.conns[i]);
        dlog_push(&s.dl, &s.dlog, s.dlog_round_lines);   /* the writer thread does the I/O */
        s.dlog.len = 0;
        s.dlog_round_lines = 0;
        if (s.dlog.oom) dwd_buf_free(&s.dlog);
        for (int i = 0; i < s.nconns;) {
            conn *c = s.conns[i];
            if (c->closing && (c->out.len == 0 || c->out_off >= c->out.len)) {
                conn_free(c);
                s.conns[i] = s.conns[--s.nconns];
            } else i++;
        }
        if (pfd[0].revents & POLLIN) accept_all(&s, lfd);
    }
    for (int i = 0; i < s.nconns; i++) conn_free(s.conns[i]);
    close(lfd);
    int rc = 0;
    {
        dw_engine_stats st;
        dw_engine_get_stats(s.e, &st);
        char n[24];
        snprintf(n, sizeof n, "%" PRIu64, st.next_seq);
        const char *kv[] = { "strands.box.history.events", n };
        control_record(&s, "box_stopped", kv, 2);
    }
    dw_engine_close(s.e);      /* stops the checkpointer, flushes and closes the log */
    dlog_stop(&s.dl);
    dwd_buf_free(&s.dlog);
    dw_keeper_stop(s.keeper);
    fprintf(stderr, "dwd: stopped\n");
    return rc;

fail:
    if (lfd >= 0) close(lfd);
    dw_engine_close(s.e);
    dlog_stop(&s.dl);
    dwd_buf_free(&s.dlog);
    dw_keeper_stop(s.keeper);
    return 1;
}
