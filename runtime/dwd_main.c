/* dwd_main.c - dwd, the Dogwood decision service (docs/DWD.md).
 *
 *   dwd --artifact P.dwb|--policy P.dw|P.dwb --schema box|FILE [--events E]
 *       --state DIR --socket PATH [--decision-log FILE]
 *       [--durability full|batch|none] [--checkpoint-every N] [--checkpoint-interval S]
 *       [--log-include deny,permit,trace,kernel] [--box-name N] [--box-source box|agent] [--run-id R]
 *       [--max-connections N] [--max-request B] [--max-pending B] [--idle-timeout S] [--request-timeout S]
 *   (all of them in usage_text below, dwd --help)
 *
 * One engine with its durable history (dw_engine_open_durable: the log in
 * --state DIR, checkpoints, recovery), one Unix stream socket speaking JSON
 * lines (runtime/dwd_protocol.h).  The serving thread runs an epoll loop: it
 * reads the ready requests, decides or records them (each connection up to
 * its share of the round, ROUND_SHARE_NS; the engine appends
 * every event to its log before it enters the history), waits once for the
 * log (durable under --durability full), and only then sends the replies:
 * one sync covers every request of a round (group commit).  Requests are
 * read with MSG_PEEK and taken off the socket after their replies are sent,
 * in batches (runtime/dwd_conn.h says why).  Checkpoints run
 * on the engine's own thread, decision-log lines are written by a writer
 * thread, and file operations in the state directory (and opening a
 * reloaded artifact) go through the state keeper (runtime/keeper.h), a child
 * forked before the process confines itself with a seccomp allow-list
 * (runtime/seccomp.h) that refuses opening any path.  The socket is claimed
 * by runtime/dwd_socket.h, decision-log lines written by runtime/dwd_dlog.h. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "dogwood.h"
#include "dwd_conn.h"
#include "dwd_dlog.h"
#include "dwd_policy.h"
#include "dwd_protocol.h"
#include "dwd_socket.h"
#include "engine_open.h"
#include "histlog.h"
#include "keeper.h"
#include "seccomp.h"
#include "../stdlib/hot.h"

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

/* A connection's share of a round: its buffered requests are answered
 * until they have taken this long (at least one), the rest wait for the
 * next round, so a client pipelining slow decisions (each up to the
 * temporal work bound) delays the others by about one of them, not by its
 * whole backlog. */
#define ROUND_SHARE_NS 2000000

/* Connection limits (docs/DWD.md, "Connections"), each an option: no
 * client, idle, slow or flooding, holds a slot or memory for long. */
typedef struct conn_limits {
    uint32_t max_conns;        /* --max-connections; at the cap the longest-idle connection makes room */
    size_t max_request;        /* --max-request: bytes per request line, and so of the input buffer */
    size_t max_pending;        /* --max-pending: unsent reply bytes at which dwd stops reading a connection */
    int64_t idle_ms;           /* --idle-timeout: nothing pending this long: closed (0: never) */
    int64_t request_ms;        /* --request-timeout: a begun line must end, queued replies must drain, in this */
} conn_limits;

typedef dwd_conn conn;

/* --log-include: what the decision log receives (box.md §10.2's include words) */
enum { LOG_DENY = 1, LOG_PERMIT = 2, LOG_TRACE = 4, LOG_KERNEL = 8 };

typedef struct server {
    dw_engine *e;
    dw_keeper *keeper;
    bool trust_time;
    dwd_dlog dl;               /* dl.fd < 0: no decision log */
    dwd_buf dlog;              /* decision-log lines of this round */
    dwd_buf msg;               /* handle_decide's denial message */
    uint64_t dlog_round_lines;
    const char *box_name, *run_id, *box_source;
    unsigned log_include;      /* LOG_* bits */
    uint64_t ids[32];          /* trace and span ids from getrandom, used from the end */
    unsigned nids;
    conn_limits lim;
    /* this round */
    uint64_t round_ticket;     /* the last log position appended this round (0: none) */
    /* stats */
    uint64_t decisions, permits, denies, faults, records, errors, accepted, refused_peers, reloads;
    uint64_t evicted, idle_closed, timed_out, overlong;
    uint32_t fault_notes;      /* internal-fault lines stderr may still take this second (note_fault) */
    uint64_t faults_unshown;   /* internal faults not written to stderr this second */
    int64_t fault_second;      /* monotonic ms: the second began */
    uint64_t ckpt_failures_seen;   /* background checkpoint failures already reported */
    int64_t ckpt_checked;          /* monotonic ms of the last look */
    conn **conns;              /* lim.max_conns slots */
    int epfd;                  /* the listening socket (level-triggered) and every connection (edge-triggered) */
    int nconns;
} server;

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig) { (void)sig; stop_flag = 1; }

/* Trace and span ids (box.md §10.2; W3C trace context asks for random
 * ids): getrandom(2) bytes, a block at a time.  The first block is drawn
 * before confinement (a failure there stops dwd); the seccomp allow-list
 * keeps getrandom for the refills.  A refill that fails anyway stirs the
 * last block (ids stay distinct, no longer unpredictable) and says so once. */
static int ids_fill(server *s)
{
    size_t got = 0;
    while (got < sizeof s->ids) {
        ssize_t r = getrandom((char *)s->ids + got, sizeof s->ids - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    s->nids = sizeof s->ids / sizeof *s->ids;
    return 0;
}

static uint64_t id_next(server *s)
{
    if (!s->nids && ids_fill(s)) {
        static bool told;
        if (!told) fprintf(stderr, "dwd: getrandom failed (%s); trace ids are derived from earlier random ones\n", strerror(errno));
        told = true;
        for (unsigned i = 0; i < sizeof s->ids / sizeof *s->ids; i++) {   /* splitmix64 over the old block */
            uint64_t z = s->ids[i] += 0x9E3779B97F4A7C15ULL * (i + 1);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
            s->ids[i] = z ^ (z >> 31);
        }
        s->nids = sizeof s->ids / sizeof *s->ids;
    }
    return s->ids[--s->nids];
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void control_record(server *s, const char *op, const char *const *kv, size_t nkv)
{
    if (s->dl.fd < 0) return;
    dwd_buf b = { 0 };
    dwd_log_info li = { s->box_name, s->run_id, now_ns(), 0, 0, 0 };
    dwd_log_control(&b, &li, op, kv, nkv);
    dwd_dlog_push(&s->dl, &b, 1);
    dwd_buf_free(&b);
}

/* Internal faults on stderr: FAULT_NOTES lines a second, the rest counted
 * and summed up when the second is over.  Each one is a deny and counted in
 * stats; a client sending bad requests must not make every one a write(2) to
 * stderr on the serving thread (a slow reader of stderr would stall it). */
#define FAULT_NOTES 20

static void note_fault(server *s, const char *msg)
{
    if (s->fault_notes) {
        s->fault_notes--;
        fprintf(stderr, "dwd: internal fault: %s\n", msg);
    } else s->faults_unshown++;
}

static void fault_second(server *s, int64_t now)
{
    if (now - s->fault_second < 1000) return;
    if (s->faults_unshown)
        fprintf(stderr, "dwd: %" PRIu64 " more internal fault(s) not shown (stderr takes at most %d a second; stats counts every one)\n",
                s->faults_unshown, FAULT_NOTES);
    s->faults_unshown = 0;
    s->fault_notes = FAULT_NOTES;
    s->fault_second = now;
}

/* ---- requests ---- */

DW_HOT static void handle_decide(server *s, const dwd_request *rq, dwd_buf *out)
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
    /* descriptions go only into a denial's message and the decision log */
    bool want_desc = !(v.allow && v.cause == DW_CAUSE_PERMITTED) || s->dl.fd >= 0;
    for (uint32_t i = 0; i < n; i++) {
        ids[i] = dw_engine_rule_name(s->e, v.determining[i]);
        descs[i] = want_desc && dw_engine_rule_description(s->e, v.determining[i], descbuf[i], sizeof descbuf[i]) ? descbuf[i] : NULL;
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
        if (v.message[0]) note_fault(s, v.message);
    }
    dwd_buf *mb = &s->msg;       /* kept from one decision to the next */
    mb->len = 0;
    dwd_denial_message(mb, rq->subject.p ? rq->subject.p : "", &d);
    const char *msg = mb->len && !mb->oom ? mb->p : "";
    dwd_reply_decision(out, &d, msg);
    if (s->dl.fd >= 0 && (s->log_include & ((d.allow ? LOG_PERMIT : LOG_DENY) | LOG_TRACE))) {
        /* one record and its zero-length span share the trace and span ids (box.md §10.2) */
        dwd_log_info li = { s->box_name, s->run_id, v.timestamp, id_next(s), id_next(s), id_next(s) };
        if (rq->has_trace_id) li.trace_hi = rq->trace_hi, li.trace_lo = rq->trace_lo;
        if (!li.span) li.span = 1;
        if (!li.trace_hi && !li.trace_lo) li.trace_lo = 1;
        if (s->log_include & (d.allow ? LOG_PERMIT : LOG_DENY)) {
            dwd_log_line(&s->dlog, &li, rq, &d, msg);
            s->dlog_round_lines++;
        }
        if (s->log_include & LOG_TRACE) {
            dwd_span_line(&s->dlog, &li, rq, &d);
            s->dlog_round_lines++;
        }
    }
    if (mb->oom || mb->cap > (16u << 10)) dwd_buf_free(mb);
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
    dwd_dlog_counts(&s->dl, &dw, &dd, &de);
    dwd_buf_printf(out, ",\"decision_log_written\":%" PRIu64 ",\"decision_log_dropped\":%" PRIu64
                   ",\"decision_log_write_errors\":%" PRIu64, dw, dd, de);
    dwd_buf_puts(out, ",\"checkpoint_error\":");
    dwd_buf_json_string(out, st.checkpoint_error, strlen(st.checkpoint_error));
    dwd_buf_printf(out, ",\"connections\":%d,\"accepted\":%" PRIu64 ",\"refused_peers\":%" PRIu64
                   ",\"evicted\":%" PRIu64 ",\"idle_closed\":%" PRIu64 ",\"timed_out\":%" PRIu64 ",\"overlong\":%" PRIu64 "}\n",
                   s->nconns, s->accepted, s->refused_peers, s->evicted, s->idle_closed, s->timed_out, s->overlong);
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

DW_HOT static void handle_line(server *s, const char *line, size_t len, dwd_buf *out)
{
    char err[512];
    dwd_request rq;
    if (len && line[len - 1] == '\r') len--;
    unsigned flags = (s->trust_time ? DWD_REQ_ALLOW_TIME : 0) | (s->dl.fd >= 0 ? DWD_REQ_LOG_ATTRS : 0);
    if (dwd_parse_request(line, len, flags, &rq, err, sizeof err)) {
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

static size_t pending_out(const conn *c) { return dwd_conn_pending(c); }

/* At the cap: the connection idle longest goes (closing ones first: they
 * are leaving anyway), so a new client is served at once.  An idle one is
 * closed without a line, one mid-request gets an error line. */
static void evict_one(server *s, int64_t now)
{
    int victim = 0;
    for (int i = 1; i < s->nconns; i++) {
        conn *a = s->conns[i], *b = s->conns[victim];
        if (a->closing != b->closing ? a->closing : a->last_active < b->last_active) victim = i;
    }
    conn *c = s->conns[victim];
    if (!c->closing) {
        s->evicted++;
        dwd_conn_close_with(c, c->in.len ? "too many connections (--max-connections): closing the longest-idle one" : NULL);
    }
    dwd_conn_flush(s->epfd, c, now);
    dwd_conn_free(s->epfd, c);
    s->conns[victim] = s->conns[--s->nconns];
}

static void accept_all(server *s, int lfd, int64_t now)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && (errno == EMFILE || errno == ENFILE) && s->nconns) {
            evict_one(s, now);        /* out of descriptors: the longest-idle client makes room */
            continue;
        }
        if (fd < 0) return;
        struct ucred cr;
        socklen_t cl = sizeof cr;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0 || cr.uid != geteuid()) {
            s->refused_peers++;
            close(fd);
            continue;
        }
        if ((uint32_t)s->nconns >= s->lim.max_conns) evict_one(s, now);
        conn *c = dwd_conn_new(s->epfd, fd, now);
        if (!c) {
            static const char oom[] = "{\"ok\":false,\"error\":\"out of memory: connection refused\"}\n";
            (void)!send(fd, oom, sizeof oom - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
            close(fd);
            continue;
        }
        s->conns[s->nconns++] = c;
        s->accepted++;
    }
}

/* Answer the complete lines buffered, while the unsent replies stay under
 * --max-pending (the rest wait for the client to read) and within the
 * connection's share of the round (ROUND_SHARE_NS); replies stay queued
 * until the round's history wait. */
DW_HOT static void conn_serve(server *s, conn *c, int64_t now)
{
    size_t start = 0;
    struct timespec t0 = { 0, 0 }, t1;
    while (pending_out(c) < s->lim.max_pending) {
        size_t from = c->scanned > start ? c->scanned : start;
        char *nl = c->in.len > from ? memchr(c->in.p + from, '\n', c->in.len - from) : NULL;
        if (!nl) { c->scanned = c->in.len; break; }
        /* the clock only where a line is to be answered: most connections of
         * a round have none, a closed-loop client one */
        if (!c->round_lines) clock_gettime(CLOCK_MONOTONIC, &t0);
        else {
            clock_gettime(CLOCK_MONOTONIC, &t1);
            if ((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec) > ROUND_SHARE_NS)
                break;           /* the share is used: the rest in the next round (conn_ready) */
        }
        size_t ll = (size_t)(nl - (c->in.p + start));
        if (!pending_out(c)) c->out_since = now;
        handle_line(s, c->in.p + start, ll, &c->out);   /* ll <= max_request: conn_fill's cap */
        c->round_lines++;
        c->last_active = now;
        start += ll + 1;
        c->scanned = start;
    }
    if (start) {
        memmove(c->in.p, c->in.p + start, c->in.len - start);
        c->in.len -= start;
        c->scanned -= start;
        c->line_since = now;     /* what is left arrived with the lines just answered */
    }
    if (!c->in.len && c->in.cap > (64u << 10)) dwd_buf_free(&c->in);
    if (c->scanned == c->in.len && c->in.len > s->lim.max_request) {   /* full, and no line end in sight */
        char m[160];
        snprintf(m, sizeof m, "request line longer than %zu bytes (--max-request); closing the connection", s->lim.max_request);
        s->overlong++;
        s->errors++;
        c->round_lines++;
        dwd_conn_close_with(c, m);
    } else if (c->eof && c->scanned == c->in.len) {   /* answered all there is */
        if (c->in.len) {
            s->errors++;
            c->round_lines++;
            dwd_conn_close_with(c, "the connection ended inside a request line (no newline); closing the connection");
        } else c->closing = true;
    }
    if (c->out.oom) { c->out.len = c->out_off = 0; c->out.oom = false; c->closing = true; }
}

/* True when c has buffered lines it can answer now (no need to wait for input). */
static bool conn_ready(const server *s, const conn *c)
{
    return !c->closing && c->scanned < c->in.len && pending_out(c) < s->lim.max_pending;
}

/* True when c may take more input (dwd_conn_fill), within the limits. */
static bool want_in(const server *s, const conn *c)
{
    return !c->closing && !c->eof && c->in.len <= s->lim.max_request && pending_out(c) < s->lim.max_pending;
}

/* The timeouts: replies the client does not read, a line begun and never
 * ended (each --request-timeout), nothing at all (--idle-timeout). */
static void conn_timeouts(server *s, conn *c, int64_t now)
{
    int64_t rq = s->lim.request_ms;   /* at least 1 s */
    if (pending_out(c)) {
        if (now - c->out_since >= rq) {   /* it does not read: no line would arrive either */
            s->timed_out++;
            c->out.len = c->out_off = 0;
            c->closing = true;
        }
    } else if (c->closing) return;        /* leaving anyway */
    else if (c->in.len) {
        if (now - c->line_since >= rq) {
            char m[160];
            snprintf(m, sizeof m, "request incomplete after %" PRId64 " s (--request-timeout); closing the connection", rq / 1000);
            s->timed_out++;
            s->errors++;
            dwd_conn_close_with(c, m);
        }
    } else if (s->lim.idle_ms && now - c->last_active >= s->lim.idle_ms) {
        s->idle_closed++;
        c->closing = true;
    }
}

/* Background checkpoint failures (the engine's own thread): each new one is
 * reported on stderr and as a decision-log control record; `stats` carries
 * the last message. */
static void watch_checkpoints(server *s, int64_t now)
{
    if (now - s->ckpt_checked < 1000) return;
    s->ckpt_checked = now;
    dw_engine_stats st;
    dw_engine_get_stats(s->e, &st);
    if (st.checkpoint_failures <= s->ckpt_failures_seen) return;
    s->ckpt_failures_seen = st.checkpoint_failures;
    fprintf(stderr, "dwd: background checkpoint failed (%" PRIu64 " so far): %s\n", st.checkpoint_failures, st.checkpoint_error);
    char n[24];
    snprintf(n, sizeof n, "%" PRIu64, st.checkpoint_failures);
    const char *kv[] = { "strands.box.history.checkpoint_failures", n, "error.message", st.checkpoint_error };
    control_record(s, "checkpoint_failed", kv, 4);
}

/* ---- main ---- */

static const char usage_text[] =
    "usage: dwd --artifact P.dwb|--policy P.dw|P.dwb [--schema box|FILE] [--events E] --state DIR --socket PATH\n"
    "           [--decision-log FILE] [--durability full|batch|none]\n"
    "           [--checkpoint-every N] [--checkpoint-interval SECONDS] [--temporal-work-bound STEPS]\n"
    "           [--log-include deny,permit,trace,kernel] [--box-name NAME] [--box-source box|agent] [--run-id ID]\n"
    "           [--max-connections N] [--max-request BYTES] [--max-pending BYTES]\n"
    "           [--idle-timeout SECONDS] [--request-timeout SECONDS] [--salvage] [--no-providers]\n"
    "       dwd --version | --help\n"
    "Options take their value as the next word or after '=' (--socket=PATH).\n"
    "  --artifact, --policy P   the policy: a compiled artifact (.dwb) or policy source (.dw),\n"
    "                           which dwd compiles with `dwc compile` before serving\n"
    "  --dwc PATH               the dwc that compiles policy source (default: $DWC, else the\n"
    "                           dwc beside dwd, else dwc on PATH)\n"
    "  --schema box|FILE        the action schema (default box: Box's built-in vocabulary)\n"
    "  --events E               the event schema (.dwschema or a built-in name)\n"
    "  --no-providers           refuse a set that calls an information provider (dogwood.md §13.6;\n"
    "                           always so with --schema box); dwd runs the built-in providers only\n"
    "  --state DIR              the history log and checkpoints (locked: one dwd per directory)\n"
    "  --socket PATH            the Unix socket to serve on (mode 0600; PATH.lock is held while serving)\n"
    "  --decision-log FILE      append OTLP-JSON decision records (box.md §10)\n"
    "  --durability MODE        full (fsync before each reply, default), batch, none\n"
    "  --checkpoint-every N     checkpoint after N events (default 10000; 0: never by count)\n"
    "  --checkpoint-interval S  also checkpoint S seconds after the last one (0: never by time, default)\n"
    "  --temporal-work-bound N  steps one decision's temporal evaluation may take (0: the engine's default)\n"
    "  --log-include WORDS      what the decision log receives (default deny,permit)\n"
    "  --box-name, --box-source, --run-id   the decision log's resource attributes\n"
    "  --max-connections N      open connections (default 256); at the cap the longest-idle one is closed\n"
    "  --max-request BYTES      longest request line (default and maximum 1048576)\n"
    "  --max-pending BYTES      unsent replies at which dwd stops reading a connection (default 1048576)\n"
    "  --idle-timeout S         close a connection idle this long (default 300; 0: never)\n"
    "  --request-timeout S      a begun request line must end, and queued replies be read, within S (default 10)\n"
    "  --salvage                open a corrupt history anyway: keep every intact record, report what was lost\n"
    "  --version                the release\n"
    "  -h, --help               this text\n";

static void usage(FILE *f) { fputs(usage_text, f); }

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

/* A numeric option's value within [lo, hi], or exit-worthy false with a message. */
static bool number_opt(const char *name, const char *text, uint64_t lo, uint64_t hi, const char *unit, uint64_t *out)
{
    if (parse_u64(text, out) && *out >= lo && *out <= hi) return true;
    fprintf(stderr, "dwd: --%s takes %s from %" PRIu64 " to %" PRIu64 "\n", name, unit, lo, hi);
    return false;
}

/* The long options: one line each, codes in the same order (OPT_* below). */
enum {
    OPT_ARTIFACT = 256, OPT_POLICY, OPT_SCHEMA, OPT_EVENTS, OPT_STATE, OPT_SOCKET, OPT_DECISION_LOG,
    OPT_DURABILITY, OPT_CHECKPOINT_EVERY, OPT_CHECKPOINT_INTERVAL, OPT_TEMPORAL_WORK_BOUND, OPT_LOG_INCLUDE, OPT_BOX_NAME,
    OPT_BOX_SOURCE, OPT_RUN_ID, OPT_MAX_CONNECTIONS, OPT_MAX_REQUEST, OPT_MAX_PENDING, OPT_IDLE_TIMEOUT,
    OPT_REQUEST_TIMEOUT, OPT_SALVAGE, OPT_TRUST_CLIENT_TIME, OPT_NO_CONFINE, OPT_SELFTEST_SECCOMP, OPT_SELFTEST_KEEPER,
    OPT_VERSION, OPT_DWC, OPT_NO_PROVIDERS,
};
static const struct option long_options[] = {
    { "artifact", required_argument, NULL, OPT_ARTIFACT },
    { "policy", required_argument, NULL, OPT_POLICY },
    { "schema", required_argument, NULL, OPT_SCHEMA },
    { "events", required_argument, NULL, OPT_EVENTS },
    { "state", required_argument, NULL, OPT_STATE },
    { "socket", required_argument, NULL, OPT_SOCKET },
    { "decision-log", required_argument, NULL, OPT_DECISION_LOG },
    { "durability", required_argument, NULL, OPT_DURABILITY },
    { "checkpoint-every", required_argument, NULL, OPT_CHECKPOINT_EVERY },
    { "checkpoint-interval", required_argument, NULL, OPT_CHECKPOINT_INTERVAL },
    { "temporal-work-bound", required_argument, NULL, OPT_TEMPORAL_WORK_BOUND },
    { "log-include", required_argument, NULL, OPT_LOG_INCLUDE },
    { "box-name", required_argument, NULL, OPT_BOX_NAME },
    { "box-source", required_argument, NULL, OPT_BOX_SOURCE },
    { "run-id", required_argument, NULL, OPT_RUN_ID },
    { "max-connections", required_argument, NULL, OPT_MAX_CONNECTIONS },
    { "max-request", required_argument, NULL, OPT_MAX_REQUEST },
    { "max-pending", required_argument, NULL, OPT_MAX_PENDING },
    { "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
    { "request-timeout", required_argument, NULL, OPT_REQUEST_TIMEOUT },
    { "salvage", no_argument, NULL, OPT_SALVAGE },
    { "trust-client-time", no_argument, NULL, OPT_TRUST_CLIENT_TIME },      /* tests only */
    { "no-providers", no_argument, NULL, OPT_NO_PROVIDERS },
    { "no-confine", no_argument, NULL, OPT_NO_CONFINE },                    /* debugging only */
    { "selftest-seccomp", no_argument, NULL, OPT_SELFTEST_SECCOMP },        /* tests only */
    { "selftest-keeper", required_argument, NULL, OPT_SELFTEST_KEEPER },    /* tests only: DIR */
    { "version", no_argument, NULL, OPT_VERSION },
    { "dwc", required_argument, NULL, OPT_DWC },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

/* Each connection is a descriptor, and the log, checkpoints, decision log
 * and keeper need a few more (64): raise the soft limit as far as needed,
 * the hard limit allowing; else serve fewer connections than the default,
 * or refuse an explicit --max-connections the limit cannot hold. */
static int fd_room(uint32_t *max_conns, bool given)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)*max_conns + 64;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want) return 0;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want ? want : rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0 && getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
    if (rl.rlim_cur >= want) return 0;
    if (!given && rl.rlim_cur > 64 + 16) {
        *max_conns = (uint32_t)(rl.rlim_cur - 64);
        fprintf(stderr, "dwd: serving at most %u connections (ulimit -n %llu)\n", *max_conns, (unsigned long long)rl.rlim_cur);
        return 0;
    }
    fprintf(stderr, "dwd: --max-connections %u needs %llu file descriptors; the limit is %llu (ulimit -n)\n",
            *max_conns, (unsigned long long)want, (unsigned long long)rl.rlim_cur);
    return -1;
}

/* A policy file of 0 bytes would start dwd denying everything: a truncated
 * or mistyped file, never a policy. */
static int check_policy_file(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0) { fprintf(stderr, "dwd: %s: %s\n", path, strerror(errno)); return -1; }
    if (S_ISREG(sb.st_mode) && sb.st_size == 0) {
        fprintf(stderr, "dwd: %s: the policy file is empty (0 bytes): it would deny every request; refusing to start\n", path);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *policy = NULL, *schema = NULL, *events = NULL, *state = NULL, *sock = NULL, *dlog = NULL;
    const char *durability = "full", *include = "deny,permit", *dwc = NULL;
    uint64_t every = 10000, interval = 0, max_conns = 256, max_request = DWD_MAX_LINE, max_pending = 1u << 20;
    uint64_t idle_s = 300, request_s = 10, bound = 0;
    bool trust_time = false, no_confine = false, max_conns_given = false, salvage = false, no_providers = false;
    server s;
    memset(&s, 0, sizeof s);
    s.dl.fd = -1;
    s.epfd = -1;
    s.box_name = "dwd";
    s.run_id = "run-0001";
    s.box_source = "box";
    s.fault_notes = FAULT_NOTES;
    int opt;
    while ((opt = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
        switch (opt) {
        case OPT_ARTIFACT: case OPT_POLICY: policy = optarg; break;
        case OPT_SCHEMA: schema = optarg; break;
        case OPT_DWC: dwc = optarg; break;
        case OPT_EVENTS: events = optarg; break;
        case OPT_STATE: state = optarg; break;
        case OPT_SOCKET: sock = optarg; break;
        case OPT_DECISION_LOG: dlog = optarg; break;
        case OPT_DURABILITY: durability = optarg; break;
        case OPT_CHECKPOINT_EVERY: if (!number_opt("checkpoint-every", optarg, 0, INT64_MAX, "a number of events (0: never)", &every)) return 2; break;
        case OPT_CHECKPOINT_INTERVAL: if (!number_opt("checkpoint-interval", optarg, 0, 86400 * 365, "seconds (0: never)", &interval)) return 2; break;
        case OPT_TEMPORAL_WORK_BOUND: if (!number_opt("temporal-work-bound", optarg, 0, UINT64_MAX, "a number of steps (0: the default)", &bound)) return 2; break;
        case OPT_LOG_INCLUDE: include = optarg; break;
        case OPT_BOX_NAME: s.box_name = optarg; break;
        case OPT_BOX_SOURCE: s.box_source = optarg; break;
        case OPT_RUN_ID: s.run_id = optarg; break;
        case OPT_MAX_CONNECTIONS: max_conns_given = true; if (!number_opt("max-connections", optarg, 1, 65536, "a number of connections", &max_conns)) return 2; break;
        case OPT_MAX_REQUEST: if (!number_opt("max-request", optarg, 256, DWD_MAX_LINE, "bytes", &max_request)) return 2; break;
        case OPT_MAX_PENDING: if (!number_opt("max-pending", optarg, 4096, 1u << 30, "bytes", &max_pending)) return 2; break;
        case OPT_IDLE_TIMEOUT: if (!number_opt("idle-timeout", optarg, 0, 86400 * 365, "seconds (0: never)", &idle_s)) return 2; break;
        case OPT_REQUEST_TIMEOUT: if (!number_opt("request-timeout", optarg, 1, 86400, "seconds", &request_s)) return 2; break;
        case OPT_SALVAGE: salvage = true; break;
        case OPT_TRUST_CLIENT_TIME: trust_time = true; break;
        case OPT_NO_PROVIDERS: no_providers = true; break;
        case OPT_NO_CONFINE: no_confine = true; break;
        case OPT_SELFTEST_SECCOMP: return dw_confine_selftest();
        case OPT_SELFTEST_KEEPER: return dw_keeper_selftest(optarg);
        case OPT_VERSION: printf("dwd %s\n", dw_version()); return 0;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;   /* getopt_long named the option */
        }
    }
    if (optind < argc) { fprintf(stderr, "dwd: unexpected argument '%s'\n", argv[optind]); usage(stderr); return 2; }
    if (!schema) schema = "box";          /* dwd serves Box: its built-in vocabulary unless told otherwise */
    if (!policy || !state || !sock) { usage(stderr); return 2; }
    dw_engine_durable dd = { .state_dir = state };
    if (!strcmp(durability, "full")) dd.durability = DW_DURABILITY_FULL;
    else if (!strcmp(durability, "batch")) dd.durability = DW_DURABILITY_BATCH;
    else if (!strcmp(durability, "none")) dd.durability = DW_DURABILITY_NONE;
    else { fprintf(stderr, "dwd: --durability must be full, batch or none\n"); return 2; }
    if (salvage) dd.durability |= DW_DURABLE_SALVAGE;
    dd.checkpoint_every = every ? (int64_t)every : -1;
    dd.checkpoint_interval_ms = (uint32_t)(interval * 1000);
    s.trust_time = trust_time;
    s.lim = (conn_limits){ (uint32_t)max_conns, max_request, max_pending, (int64_t)idle_s * 1000, (int64_t)request_s * 1000 };
    if (parse_include(include, &s.log_include)) {
        fprintf(stderr, "dwd: --log-include takes a comma list of deny, permit, trace, kernel (each at most once)\n");
        return 2;
    }
    if (strcmp(s.box_source, "box") && strcmp(s.box_source, "agent")) {
        fprintf(stderr, "dwd: --box-source must be box or agent\n");
        return 2;
    }
    dwd_log_set_box_source(s.box_source);
    if (check_policy_file(policy)) return 1;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);

    if (fd_room(&s.lim.max_conns, max_conns_given)) return 1;
    char err[512];
    /* the socket before anything else: a path another process serves is never taken over */
    int sock_lock = dwd_socket_claim(sock, err, sizeof err);
    if (sock_lock < 0) { fprintf(stderr, "dwd: %s\n", err); return 1; }
    s.conns = calloc(s.lim.max_conns, sizeof *s.conns);
    if (!s.conns || ids_fill(&s)) {
        fprintf(stderr, "dwd: %s\n", !s.conns ? "out of memory" : "getrandom failed: no random trace ids");
        free(s.conns); close(sock_lock);
        return 1;
    }
    /* the artifact (policy text compiled by dwc in a child) before the
     * keeper: the keeper is forked with no other descriptors */
    void *art = NULL;
    size_t art_len = 0;
    if (dwd_policy_artifact(policy, schema, events, dwc, &art, &art_len)) { free(s.conns); close(sock_lock); return 1; }
    /* the keeper first: a small process with no other descriptors and no threads */
    s.keeper = dw_keeper_start(state, err, sizeof err);
    if (!s.keeper) { fprintf(stderr, "dwd: %s\n", err); free(art); free(s.conns); close(sock_lock); return 1; }
    dw_histlog_fileops fops;
    dw_keeper_fileops(s.keeper, &fops);
    dd.fileops = &fops;
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    dw_engine_config cfg = { .policy_path = policy, .schema_path = schema, .events_path = events, .temporal_work_bound = bound,
                             .no_providers = no_providers };
    dw_engine_recovery rec;
    int lfd = -1;
    s.e = dw_engine_open_artifact_durable(&cfg, art, art_len, &dd, &rec, err, sizeof err);
    free(art);
    if (!s.e) {
        /* a diagnostic in the policy already starts with its path */
        size_t pl = strlen(policy);
        if (strncmp(err, policy, pl) == 0 && err[pl] == ':') fprintf(stderr, "dwd: %s\n", err);
        else fprintf(stderr, "dwd: %s: %s\n", policy, err);
        goto fail;
    }
    if (!strncmp(rec.note, "SALVAGED: ", 10))
        fprintf(stderr, "dwd: SALVAGED A CORRUPT HISTORY (verdicts no longer count what was lost): %s\n", rec.note + 10);
    else if (rec.note[0]) fprintf(stderr, "dwd: history recovery: %s\n", rec.note);
    if (dlog) {
        s.dl.fd = open(dlog, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (s.dl.fd < 0) { fprintf(stderr, "dwd: %s: %s\n", dlog, strerror(errno)); goto fail; }
    }
    lfd = dwd_socket_listen(sock, 128, err, sizeof err);
    if (lfd < 0) { fprintf(stderr, "dwd: %s\n", err); goto fail; }
    s.epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event lev = { .events = EPOLLIN, .data.ptr = NULL };
    if (s.epfd < 0 || epoll_ctl(s.epfd, EPOLL_CTL_ADD, lfd, &lev) != 0) { fprintf(stderr, "dwd: epoll: %s\n", strerror(errno)); goto fail; }
    {
        dw_engine_stats st;
        dw_engine_get_stats(s.e, &st);
        s.ckpt_failures_seen = st.checkpoint_failures;
        char restored[24], cwd[1024];
        snprintf(restored, sizeof restored, "%" PRIu64, st.restored);
        if (!getcwd(cwd, sizeof cwd)) snprintf(cwd, sizeof cwd, "?");
        const char *kv1[] = { "strands.box.history.restored", restored, "process.working_directory", cwd };
        control_record(&s, "box_started", kv1, 4);
        const char *kv2[] = { "strands.box.policy.source", policy, "strands.box.policy.generation", "0" };
        control_record(&s, "policy_installed", kv2, 4);
    }
    if (s.dl.fd >= 0 && dwd_dlog_start(&s.dl)) { fprintf(stderr, "dwd: cannot start the decision-log writer\n"); goto fail; }
#ifdef DWD_LSAN
    if (!no_confine) __lsan_do_leak_check();
#endif
    if (!no_confine && dw_confine_serving(err, sizeof err)) { fprintf(stderr, "dwd: %s\n", err); goto fail; }
    fprintf(stderr, "dwd: serving %s on %s (history: %" PRIu64 " events restored, %" PRIu64 " replayed%s in %.3f s; durability %s%s)\n",
            policy, sock, rec.events, rec.replayed, rec.checkpoint ? " after a checkpoint" : "", rec.seconds, durability,
            no_confine ? "; NOT confined" : "; confined");

    struct epoll_event evs[256];
    while (!stop_flag) {
        bool ready = false, unconsumed = false;   /* ready: lines or input to take now, do not wait */
        for (int i = 0; i < s.nconns; i++) {
            conn *c = s.conns[i];
            ready |= conn_ready(&s, c) || (c->readable && want_in(&s, c));
            unconsumed |= c->unconsumed != 0;
        }
        /* at least once a second: timeouts, checkpoints; sooner when requests
         * answered are still on a socket (dwd_conn.h: consumed when idle) */
        int timeout = ready ? 0 : unconsumed ? DWD_IDLE_MS : 1000;
        int ne = epoll_wait(s.epfd, evs, (int)(sizeof evs / sizeof *evs), timeout);
        if (ne < 0) { if (errno == EINTR) continue; fprintf(stderr, "dwd: epoll_wait: %s\n", strerror(errno)); break; }
        int64_t now = mono_ms();
        bool accepting = false;
        for (int k = 0; k < ne; k++) {
            if (!evs[k].data.ptr) accepting = true;
            else if (evs[k].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
                conn *c = evs[k].data.ptr;
                c->readable = true;
                if (evs[k].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) c->hup = true;
            }
        }
        if (!ne && timeout)      /* nothing came: nobody waits for a reply, so consuming wakes nobody early */
            for (int i = 0; i < s.nconns; i++) dwd_conn_consume(s.conns[i]);
        s.round_ticket = 0;
        for (int i = 0; i < s.nconns; i++) { s.conns[i]->round_mark = s.conns[i]->out.len; s.conns[i]->round_lines = 0; }
        for (int i = 0; i < s.nconns; i++) {
            conn *c = s.conns[i];
            if (c->closing) continue;
            if (c->readable && want_in(&s, c)) dwd_conn_fill(c, s.lim.max_request + 1, now);
            if (!c->closing) conn_serve(&s, c, now);
        }
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
        for (int i = 0; i < s.nconns; i++) {
            dwd_conn_flush(s.epfd, s.conns[i], now);
            conn_timeouts(&s, s.conns[i], now);
        }
        dwd_dlog_push(&s.dl, &s.dlog, s.dlog_round_lines);   /* the writer thread does the I/O */
        s.dlog.len = 0;
        s.dlog_round_lines = 0;
        if (s.dlog.oom) dwd_buf_free(&s.dlog);
        for (int i = 0; i < s.nconns;) {
            conn *c = s.conns[i];
            if (c->closing && !pending_out(c)) {
                dwd_conn_free(s.epfd, c);
                s.conns[i] = s.conns[--s.nconns];
            } else i++;
        }
        if (accepting) accept_all(&s, lfd, now);
        watch_checkpoints(&s, now);
        fault_second(&s, now);
    }
    for (int i = 0; i < s.nconns; i++) dwd_conn_free(s.epfd, s.conns[i]);
    close(lfd);
    close(s.epfd);
    int rc = 0;
    {
        dw_engine_stats st;
        dw_engine_get_stats(s.e, &st);
        char n[24];
        snprintf(n, sizeof n, "%" PRIu64, st.next_seq);
        const char *kv[] = { "strands.box.history.events", n };
        control_record(&s, "box_stopped", kv, 2);
    }
    /* stops the checkpointer, flushes and closes the log: a failure means
     * acknowledged events may not be durable, so the exit status says so */
    if (dw_engine_close(s.e)) {
        fprintf(stderr, "dwd: the history log's final flush failed: exiting with status 1\n");
        rc = 1;
    }
    dwd_dlog_stop(&s.dl);
    dwd_buf_free(&s.dlog);
    dwd_buf_free(&s.msg);
    dw_keeper_stop(s.keeper);
    free(s.conns);
    close(sock_lock);
    fprintf(stderr, "dwd: stopped\n");
    return rc;

fail:
    if (lfd >= 0) close(lfd);
    if (s.epfd >= 0) close(s.epfd);
    dw_engine_close(s.e);
    dwd_dlog_stop(&s.dl);
    dwd_buf_free(&s.dlog);
    dw_keeper_stop(s.keeper);
    free(s.conns);
    close(sock_lock);
    return 1;
}
