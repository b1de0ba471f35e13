/* dwd_main.c - dwd, the Dogwood decision service (docs/DWD.md).
 *
 *   dwd --policy P.dw|P.dwb --schema box|FILE [--events E] --state DIR
 *       --socket PATH [--decision-log FILE] [--durability full|batch|none]
 *
 * One engine, one durable history (runtime/histlog.h in --state DIR), one
 * Unix stream socket speaking JSON lines (runtime/dwd_protocol.h).  Single
 * threaded: a poll loop reads every ready request, decides or records each
 * (every event is enqueued to the history log before it enters the engine's
 * history), waits once for the log (durable under --durability full), and
 * only then sends the replies: one sync covers every request of a round
 * (group commit).  After setup the process confines itself with a seccomp
 * allow-list (runtime/seccomp.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>
#include "dogwood.h"
#include "dwd_protocol.h"
#include "histlog.h"
#include "seccomp.h"
#include "../lang/diag.h"
#include "../lang/eventschema.h"

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

typedef struct server {
    dw_engine *e;
    dw_histlog *log;
    bool trust_time;
    int dlog_fd;               /* decision log, -1 if none */
    dwd_buf dlog;              /* decision-log lines queued this round */
    const char *box_name, *run_id;
    uint64_t rng;
    /* this round */
    bool round_appended;
    uint64_t round_last_seq;
    const char *hook_event; size_t hook_len;
    /* stats */
    uint64_t decisions, permits, denies, faults, records, errors, accepted, refused_peers, restored;
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

/* ---- the history log ---- */

/* Payload: "<ts>\n<event JSON>" (ts = the engine's timestamp, ns). */
static int append_hook(void *ctx, int64_t ts)
{
    server *s = ctx;
    char head[32];
    int hn = snprintf(head, sizeof head, "%" PRId64 "\n", ts);
    size_t len = (size_t)hn + s->hook_len;
    char *p = malloc(len);
    if (!p) return -1;
    memcpy(p, head, (size_t)hn);
    memcpy(p + hn, s->hook_event, s->hook_len);
    uint64_t seq;
    int rc = dw_histlog_enqueue(s->log, p, len, &seq, NULL);
    free(p);
    if (rc) return -1;
    s->round_appended = true;
    s->round_last_seq = seq;
    return 0;
}

typedef struct restore_ctx { server *s; char err[512]; } restore_ctx;

static int restore_record(void *ctx, uint64_t seq, uint64_t ts_log, const void *payload, size_t len)
{
    restore_ctx *rc = ctx;
    const char *p = payload, *nl = memchr(p, '\n', len);
    char num[32];
    if (!nl || nl == p || (size_t)(nl - p) >= sizeof num) {
        snprintf(rc->err, sizeof rc->err, "history record %" PRIu64 " is not a dwd event", seq);
        return -1;
    }
    memcpy(num, p, (size_t)(nl - p));
    num[nl - p] = 0;
    char *end;
    errno = 0;
    long long ts = strtoll(num, &end, 10);
    if (errno || *end || ts <= 0) { snprintf(rc->err, sizeof rc->err, "history record %" PRIu64 " has a bad timestamp", seq); return -1; }
    dw_verdict v;
    int r = dw_engine_observe_json(rc->s->e, nl + 1, len - (size_t)(nl + 1 - p), ts, DW_OBSERVE_RESTORE, NULL, NULL, &v);
    if (r != 1) {
        snprintf(rc->err, sizeof rc->err, "history record %" PRIu64 " cannot be restored: %s", seq, v.message);
        return -1;
    }
    if (v.timestamp != ts) {
        snprintf(rc->err, sizeof rc->err, "history record %" PRIu64 " is out of time order", seq);
        return -1;
    }
    rc->s->restored++;
    return 0;
}

static int restore_checkpoint(void *ctx, uint64_t seq, uint64_t last_ts, const void *state, size_t len)
{
    restore_ctx *rc = ctx;
    snprintf(rc->err, sizeof rc->err, "the history has a checkpoint, which this dwd cannot read");
    return -1;
}

/* The schema digest: XXH3-64 of the event schema's text (built-in or file). */
static int event_schema_digest(const char *events, const char *schema, uint64_t *out, char *err, size_t cap)
{
    const char *name = events ? events : (strcmp(schema, "box") == 0 ? "box" : "default");
    const char *text = dw_event_schema_builtin_text(name);
    if (text) { *out = XXH3_64bits(text, strlen(text)); return 0; }
    char *t;
    size_t n;
    if (dw_read_file(name, &t, &n)) { snprintf(err, cap, "cannot read %s: %s", name, strerror(errno)); return -1; }
    *out = XXH3_64bits(t, n);
    free(t);
    return 0;
}

/* ---- requests ---- */

static void handle_decide(server *s, const dwd_request *rq, dwd_buf *out)
{
    dw_verdict v;
    s->hook_event = rq->event.p;
    s->hook_len = rq->event.len;
    int rc = dw_engine_observe_json(s->e, rq->event.p, rq->event.len, 0, DW_OBSERVE_DECIDE, append_hook, s, &v);
    if (rc < 0) {
        memset(&v, 0, sizeof v);
        v.cause = DW_CAUSE_INTERNAL_FAULT;
    }
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
    if (d.allow) s->permits++;
    else s->denies++;
    if (!strcmp(d.cause, "internal_fault")) {
        s->faults++;
        if (v.message[0]) fprintf(stderr, "dwd: internal fault: %s\n", v.message);
    }
    dwd_buf msg = { 0 };
    dwd_denial_message(&msg, rq->subject.p ? rq->subject.p : "", &d);
    dwd_reply_decision(out, &d, msg.p ? msg.p : "");
    if (s->dlog_fd >= 0) {
        dwd_log_info li = { s->box_name, s->run_id, v.timestamp, rng_next(s), rng_next(s), rng_next(s) };
        dwd_log_line(&s->dlog, &li, rq, &d, msg.p ? msg.p : "");
    }
    dwd_buf_free(&msg);
}

static void handle_stats(server *s, dwd_buf *out)
{
    dw_histlog_stats st;
    dw_histlog_get_stats(s->log, &st);
    dwd_buf_printf(out, "{\"ok\":true,\"decisions\":%" PRIu64 ",\"permits\":%" PRIu64 ",\"denies\":%" PRIu64
                   ",\"internal_faults\":%" PRIu64 ",\"records\":%" PRIu64 ",\"errors\":%" PRIu64,
                   s->decisions, s->permits, s->denies, s->faults, s->records, s->errors);
    dwd_buf_printf(out, ",\"restored\":%" PRIu64 ",\"history_events\":%u,\"log_next_seq\":%" PRIu64
                   ",\"log_appends\":%" PRIu64 ",\"log_syncs\":%" PRIu64 ",\"log_max_batch\":%" PRIu64
                   ",\"connections\":%d,\"accepted\":%" PRIu64 ",\"refused_peers\":%" PRIu64 "}\n",
                   s->restored, dw_engine_history_length(s->e), dw_histlog_next_seq(s->log),
                   st.appends, st.syncs, st.max_batch, s->nconns, s->accepted, s->refused_peers);
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
        s->hook_event = rq.event.p;
        s->hook_len = rq.event.len;
        int rc = dw_engine_observe_json(s->e, rq.event.p, rq.event.len, 0, DW_OBSERVE_RECORD, append_hook, s, &v);
        if (rc == 1) { s->records++; dwd_reply_ok(out); }
        else { s->errors++; dwd_reply_error(out, rc < 0 ? "the engine is unusable" : v.message); }
        break;
    }
    case DWD_OP_STATS: handle_stats(s, out); break;
    case DWD_OP_RELOAD: s->errors++; dwd_reply_error(out, "reload is not supported yet"); break;
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

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) { if (errno == EINTR) continue; fprintf(stderr, "dwd: decision log write failed: %s\n", strerror(errno)); return; }
        p += w;
        n -= (size_t)w;
    }
}

/* ---- main ---- */

static void usage(void)
{
    fprintf(stderr, "usage: dwd --policy P.dw|P.dwb --schema box|FILE [--events E] --state DIR --socket PATH\n"
                    "           [--decision-log FILE] [--durability full|batch|none]\n");
}

int main(int argc, char **argv)
{
    const char *policy = NULL, *schema = NULL, *events = NULL, *state = NULL, *sock = NULL, *dlog = NULL;
    const char *durability = "full";
    bool trust_time = false, no_confine = false;
    server s;
    memset(&s, 0, sizeof s);
    s.dlog_fd = -1;
    s.box_name = "dwd";
    s.run_id = "run-0001";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = NULL;
        if (!strcmp(a, "--selftest-seccomp")) return dw_confine_selftest();
        if (!strcmp(a, "--trust-client-time")) { trust_time = true; continue; }   /* tests only */
        if (!strcmp(a, "--no-confine")) { no_confine = true; continue; }          /* debugging only */
        if (!strcmp(a, "--policy")) slot = &policy;
        else if (!strcmp(a, "--schema")) slot = &schema;
        else if (!strcmp(a, "--events")) slot = &events;
        else if (!strcmp(a, "--state")) slot = &state;
        else if (!strcmp(a, "--socket")) slot = &sock;
        else if (!strcmp(a, "--decision-log")) slot = &dlog;
        else if (!strcmp(a, "--durability")) slot = &durability;
        else if (!strcmp(a, "--box-name")) slot = &s.box_name;
        else if (!strcmp(a, "--run-id")) slot = &s.run_id;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(); return 0; }
        if (!slot || i + 1 >= argc) { fprintf(stderr, "dwd: %s %s\n", slot ? "missing value for" : "unknown option", a); usage(); return 2; }
        *slot = argv[++i];
    }
    if (!policy || !schema || !state || !sock) { usage(); return 2; }
    dw_durability dur;
    if (!strcmp(durability, "full")) dur = DW_DURABILITY_FULL;
    else if (!strcmp(durability, "batch")) dur = DW_DURABILITY_BATCH;
    else if (!strcmp(durability, "none")) dur = DW_DURABILITY_NONE;
    else { fprintf(stderr, "dwd: --durability must be full, batch or none\n"); return 2; }
    s.trust_time = trust_time;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    char err[512];
    dw_engine_config cfg = { .policy_path = policy, .schema_path = schema, .events_path = events };
    s.e = dw_engine_open(&cfg, err, sizeof err);
    if (!s.e) { fprintf(stderr, "dwd: %s: %s\n", policy, err); return 1; }
    dw_histlog_options opt = { .durability = dur, .on_record = restore_record, .on_checkpoint = restore_checkpoint };
    if (event_schema_digest(events, schema, &opt.schema_digest, err, sizeof err)) { fprintf(stderr, "dwd: %s\n", err); dw_engine_close(s.e); return 1; }
    restore_ctx rctx = { .s = &s };
    opt.cb_ctx = &rctx;
    dw_histlog_recovery rec;
    s.log = dw_histlog_open(state, &opt, &rec, err, sizeof err);
    if (!s.log) {
        fprintf(stderr, "dwd: policy history failure: %s%s%s\n", err, rctx.err[0] ? ": " : "", rctx.err);
        dw_engine_close(s.e);
        return 1;
    }
    if (rec.note[0]) fprintf(stderr, "dwd: history recovery: %s\n", rec.note);
    if (dlog) {
        s.dlog_fd = open(dlog, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (s.dlog_fd < 0) { fprintf(stderr, "dwd: %s: %s\n", dlog, strerror(errno)); goto fail; }
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
    int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (lfd < 0) { fprintf(stderr, "dwd: socket: %s\n", strerror(errno)); goto fail; }
    mode_t old = umask(0077);
    int brc = bind(lfd, (struct sockaddr *)&addr, sizeof addr);
    umask(old);
    if (brc != 0 || listen(lfd, 128) != 0) { fprintf(stderr, "dwd: %s: %s\n", sock, strerror(errno)); close(lfd); goto fail; }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    s.rng = ((uint64_t)now.tv_nsec << 20) ^ (uint64_t)now.tv_sec ^ ((uint64_t)getpid() << 40) ^ 0x9E3779B97F4A7C15ULL;
#ifdef DWD_LSAN
    if (!no_confine) __lsan_do_leak_check();
#endif
    if (!no_confine && dw_confine_serving(err, sizeof err)) { fprintf(stderr, "dwd: %s\n", err); close(lfd); goto fail; }
    fprintf(stderr, "dwd: serving %s on %s (history: %" PRIu64 " events restored; durability %s%s)\n",
            policy, sock, s.restored, durability, no_confine ? "; NOT confined" : "; confined");

    struct pollfd pfd[MAX_CONNS + 1];
    while (!stop_flag) {
        pfd[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
        for (int i = 0; i < s.nconns; i++)
            pfd[i + 1] = (struct pollfd){ .fd = s.conns[i]->fd,   /* a closing connection only drains its replies */
                                          .events = (short)((s.conns[i]->closing ? 0 : POLLIN) | (s.conns[i]->out.len ? POLLOUT : 0)) };
        int nfds = s.nconns + 1;
        int pr = poll(pfd, (nfds_t)nfds, -1);
        if (pr < 0) { if (errno == EINTR) continue; fprintf(stderr, "dwd: poll: %s\n", strerror(errno)); break; }
        s.round_appended = false;
        for (int i = 0; i < s.nconns; i++) { s.conns[i]->round_mark = s.conns[i]->out.len; s.conns[i]->round_lines = 0; }
        for (int i = 0; i < s.nconns; i++)
            if (!s.conns[i]->closing && (pfd[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) conn_read(&s, s.conns[i]);
        /* one wait covers the round: durable (full) or written (batch, none) before any reply */
        if (s.round_appended && dw_histlog_wait(s.log, s.round_last_seq) != 0) {
            const char *why = dw_histlog_error(s.log);
            fprintf(stderr, "dwd: %s\n", why);
            for (int i = 0; i < s.nconns; i++) {
                conn *c = s.conns[i];
                if (c->round_mark > c->out.len) continue;
                c->out.len = c->round_mark;
                for (uint32_t k = 0; k < c->round_lines; k++) dwd_reply_error(&c->out, "policy history failure: the event is not durable; treat as denied");
            }
            s.dlog.len = 0;
        }
        for (int i = 0; i < s.nconns; i++) conn_flush(s.conns[i]);
        if (s.dlog.len) { write_all(s.dlog_fd, s.dlog.p, s.dlog.len); s.dlog.len = 0; }
        if (s.dlog.oom) { dwd_buf_free(&s.dlog); }
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
    int rc = dw_histlog_close(s.log) ? 1 : 0;
    if (s.dlog_fd >= 0) close(s.dlog_fd);
    dwd_buf_free(&s.dlog);
    dw_engine_close(s.e);
    fprintf(stderr, "dwd: stopped\n");
    return rc;

fail:
    dw_histlog_close(s.log);
    if (s.dlog_fd >= 0) close(s.dlog_fd);
    dw_engine_close(s.e);
    return 1;
}
