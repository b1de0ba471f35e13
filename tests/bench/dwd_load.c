/* dwd_load.c - a loopback load generator for dwd, the decision service (issue 7).
 *
 * Starts dwd on a fresh state directory (or connects to a running one), opens C client
 * connections, each on its own thread, and sends requests for a fixed time: one outstanding
 * request per client (closed loop), or --pipeline K outstanding (labelled mode=pipelined).
 * Latency is measured per request, from the write of its line to the read of its reply.
 * Prints key=value lines:
 *   mode, pipeline, op, clients, durability, seconds, decisions (or appends), decisions_per_s
 *   (or appends_per_s), p50_us, p99_us, p999_us, max_us, errors, permits, denies,
 *   server_cpu_us_per_op (and its user / sys parts), server_cpu_util (cores), client_cpu_us_per_op,
 *   ops_per_sync, loadavg
 * and with --baseline the one-fsync-per-append bound on the state directory's file system:
 *   fsync_1t_appends_per_s, fsync_p50_us, fsync_p99_us, fsync_p999_us (write(~250 B) +
 *   fdatasync, one thread), fsync_Nt_appends_per_s (the same with C threads on one file), and
 *   vs_fsync_1t (this run's rate / the one-thread baseline).
 *
 *   dwd_load --dwd build/dwd --policy P.dw [--durability full|batch|none] [--tmp DIR]
 *            [--clients C] [--seconds S] [--warmup S] [--pipeline K] [--op decide|record]
 *            [--requests FILE]... [--baseline]
 *   dwd_load --socket PATH ...        (a running dwd; no server CPU figures)
 *   dwd_load --echo ...               (the transport's ceiling: a trivial server of dwd's shape,
 *                                      one thread polling every connection, a fixed reply per line)
 *
 * --requests takes Box example requests.jsonl files (Cedar-shaped requests: the action id and
 * context.input become a decide op; principal and resource are Box's fixed ones); every client
 * cycles through all of them, starting at a different offset.  --op record sends `record` ops
 * (an http:request ::response event with output {"status":200}, the input of the Box
 * example's http requests) to measure durable appends. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/bench/bench_util.h"
#include "tests/dwd/wire.h"

#define MAX_CLIENTS 200
#define MAX_OPS 4096


static void die(const char *f, const char *a)
{
    fprintf(stderr, "dwd_load: ");
    fprintf(stderr, f, a);
    fputc('\n', stderr);
    exit(1);
}

/* ---- latency samples (ns, capped at 4.29 s) ---- */
typedef struct { uint32_t *v; size_t n, cap; } samples;

static void push(samples *s, uint64_t ns)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 65536;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        if (!s->v) die("%s", "out of memory");
    }
    s->v[s->n++] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

static double pct_us(const samples *s, double p) { return s->n ? bench_pct_us_u32(s->v, s->n, p) : 0; }

/* ---- the op lines ---- */
static char *ops[MAX_OPS];
static size_t ops_len[MAX_OPS];
static size_t nops;

/* The value that starts at p (an object, string or scalar), up to its end: JSON strings
 * are skipped so that braces inside them do not count. */
static const char *value_end(const char *p)
{
    int depth = 0;
    for (; *p; p++) {
        if (*p == '"') {
            for (p++; *p && *p != '"'; p++) if (*p == '\\' && p[1]) p++;
            if (!*p) return NULL;
            if (depth == 0) return p + 1;
        } else if (*p == '{' || *p == '[') depth++;
        else if (*p == '}' || *p == ']') { if (--depth == 0) return p + 1; if (depth < 0) return NULL; }
        else if (depth == 0 && (*p == ',')) return p;
    }
    return depth == 0 ? p : NULL;
}

static void add_op(const char *line)
{
    if (nops == MAX_OPS) return;
    size_t n = strlen(line);
    ops[nops] = malloc(n + 2);
    if (!ops[nops]) die("%s", "out of memory");
    memcpy(ops[nops], line, n);
    ops[nops][n] = '\n';
    ops[nops][n + 1] = 0;
    ops_len[nops++] = n + 1;
}

/* requests.jsonl (Box's Cedar-shaped requests) -> decide ops, or record ops from the
 * http:request ones */
static void load_requests(const char *path, int record)
{
    FILE *f = fopen(path, "r");
    if (!f) die("cannot open %s", path);
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        const char *a = strstr(line, "\"action\":{\"type\":\"Box::Action\",\"id\":\"");
        const char *in = strstr(line, "\"input\":");
        if (!a || !in) continue;
        a += strlen("\"action\":{\"type\":\"Box::Action\",\"id\":\"");
        const char *ae = strchr(a, '"');
        in += strlen("\"input\":");
        const char *ie = value_end(in);
        if (!ae || !ie) continue;
        char buf[8192];
        int k;
        if (record) {
            if ((size_t)(ae - a) != strlen("http:request") || strncmp(a, "http:request", 12)) continue;
            k = snprintf(buf, sizeof buf, "{\"op\":\"record\",\"action\":\"http:request\",\"kind\":\"response\",\"input\":%.*s,\"output\":{\"status\":200}}",
                         (int)(ie - in), in);
        } else {
            k = snprintf(buf, sizeof buf, "{\"op\":\"decide\",\"action\":\"%.*s\",\"input\":%.*s}", (int)(ae - a), a, (int)(ie - in), in);
        }
        if (k > 0 && (size_t)k < sizeof buf) add_op(buf);
    }
    free(line);
    fclose(f);
}

/* ---- connections ---- */
static const char *sock_path;

/* one request, one reply line (for stats) */
static int ask(const char *req, char *out, size_t cap)
{
    int fd = wire_connect(sock_path);
    if (fd < 0) return -1;
    size_t len = 0;
    if (wire_send(fd, req, strlen(req)) == 0) {
        while (len + 1 < cap) {
            ssize_t r = read(fd, out + len, cap - 1 - len);
            if (r <= 0) break;
            len += (size_t)r;
            if (memchr(out, '\n', len)) break;
        }
    }
    out[len] = 0;
    close(fd);
    return len ? 0 : -1;
}

static uint64_t stat_field(const char *stats, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(stats, k);
    return p ? strtoull(p + strlen(k), NULL, 10) : 0;
}

/* ---- client threads ---- */
enum { WARMUP, MEASURE, STOP };
static _Atomic int phase;
static int pipeline = 1;

typedef struct {
    int id;
    pthread_t th;
    samples lat;
    uint64_t done, errors, permits, denies;
    int failed;
} client;

static void count_reply(client *c, const char *l, size_t n)
{
    if (n < 10 || memcmp(l, "{\"ok\":true", 10) != 0) { c->errors++; return; }
    const char *v = memmem(l, n, "\"verdict\":\"", 11);
    if (!v) return;
    if (v[11] == 'p') c->permits++; else c->denies++;
}

static void *client_main(void *arg)
{
    client *c = arg;
    int fd = wire_connect(sock_path);
    /* the socket file exists from bind(), a moment before listen() */
    for (int i = 0; fd < 0 && errno == ECONNREFUSED && i < 100; i++) { usleep(10000); fd = wire_connect(sock_path); }
    if (fd < 0) { c->failed = 1; return NULL; }
    uint64_t *sent = calloc((size_t)pipeline, sizeof *sent);   /* FIFO of send times */
    char *buf = malloc(1 << 16);
    if (!sent || !buf) die("%s", "out of memory");
    size_t next = ((size_t)c->id * 7) % nops, head = 0, inflight = 0, have = 0;
    int stopping = 0;
    for (;;) {
        /* top up to `pipeline` requests in flight (one write for all of them) */
        if (!stopping && atomic_load_explicit(&phase, memory_order_relaxed) == STOP) stopping = 1;
        if (!stopping && inflight < (size_t)pipeline) {
            char out[1 << 15];
            size_t ol = 0;
            uint64_t t = bench_now_ns();
            while (inflight < (size_t)pipeline && ol + ops_len[next] <= sizeof out) {
                memcpy(out + ol, ops[next], ops_len[next]);
                ol += ops_len[next];
                sent[(head + inflight) % (size_t)pipeline] = t;
                inflight++;
                next = (next + 1) % nops;
            }
            if (wire_send(fd, out, ol)) { c->failed = 1; break; }
        }
        if (inflight == 0) break;
        ssize_t r = read(fd, buf + have, (1 << 16) - have);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) { c->failed = 1; break; }
        have += (size_t)r;
        uint64_t t = bench_now_ns();
        int measuring = atomic_load_explicit(&phase, memory_order_relaxed) == MEASURE;
        char *p = buf, *end = buf + have, *nl;
        while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
            if (inflight == 0) { c->errors++; p = nl + 1; continue; }
            if (measuring) {
                push(&c->lat, t - sent[head]);
                c->done++;
                count_reply(c, p, (size_t)(nl - p));
            }
            head = (head + 1) % (size_t)pipeline;
            inflight--;
            p = nl + 1;
        }
        have = (size_t)(end - p);
        memmove(buf, p, have);
        if (have == (1 << 16)) { c->failed = 1; break; }   /* a reply longer than the buffer */
    }
    free(sent);
    free(buf);
    close(fd);
    return NULL;
}

/* ---- the server process ---- */
/* --echo: the transport's ceiling.  A forked process with dwd's serving shape (one thread, a
 * poll loop over every connection, read what is ready, reply) that answers every request line
 * with a fixed decide reply and does nothing else: no parsing, no decision, no history. */
static void echo_server(const char *sock)
{
    static const char rep[] = "{\"ok\":true,\"verdict\":\"permit\",\"cause\":\"permitted\",\"rule\":\"echo\",\"determining\":[\"echo\"],\"message\":\"\"}\n";
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", sock);
    int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 128) != 0) _exit(1);
    struct pollfd pfd[MAX_CLIENTS + 8];
    static char in[1 << 16], out[1 << 16];
    int n = 1;
    pfd[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
    for (;;) {
        if (poll(pfd, (nfds_t)n, -1) < 0) { if (errno == EINTR) continue; _exit(1); }
        for (int i = 1; i < n; i++) {
            if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t r = read(pfd[i].fd, in, sizeof in);
            if (r <= 0) { close(pfd[i].fd); pfd[i--] = pfd[--n]; continue; }
            size_t ol = 0;
            for (ssize_t k = 0; k < r; k++)
                if (in[k] == '\n' && ol + sizeof rep <= sizeof out) { memcpy(out + ol, rep, sizeof rep - 1); ol += sizeof rep - 1; }
            if (wire_send(pfd[i].fd, out, ol)) { close(pfd[i].fd); pfd[i--] = pfd[--n]; }
        }
        if ((pfd[0].revents & POLLIN) && n < MAX_CLIENTS + 8) {
            int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
            if (fd >= 0) pfd[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
        }
    }
}

static char tmp_dir[PATH_MAX];
static pid_t server_pid;

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    return remove(p);
}

static void stop_server(void)
{
    if (server_pid > 0) {
        kill(server_pid, SIGTERM);
        int st;
        waitpid(server_pid, &st, 0);
        server_pid = 0;
    }
    if (tmp_dir[0]) nftw(tmp_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void start_server(const char *dwd, const char *policy, const char *durability, char **extra, int nextra)
{
    static char sock[PATH_MAX + 16], state[PATH_MAX + 16], errf[PATH_MAX + 16];
    snprintf(sock, sizeof sock, "%s/sock", tmp_dir);
    snprintf(state, sizeof state, "%s/state", tmp_dir);
    snprintf(errf, sizeof errf, "%s/dwd.err", tmp_dir);
    char *argv[32] = { (char *)dwd, "--policy", (char *)policy, "--schema", "box", "--state", state,
                       "--socket", sock, "--durability", (char *)durability };
    int argc = 11;
    for (int i = 0; i < nextra && argc < 30; i++) argv[argc++] = extra[i];
    argv[argc] = NULL;
    server_pid = fork();
    if (server_pid < 0) die("%s", "fork failed");
    if (server_pid == 0 && !dwd) echo_server(sock);
    if (server_pid == 0) {
        int fd = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) { dup2(fd, 2); close(fd); }
        execv(dwd, argv);
        _exit(127);
    }
    sock_path = sock;
    for (int i = 0; i < 1000; i++) {
        struct stat sb;
        if (stat(sock, &sb) == 0 && S_ISSOCK(sb.st_mode)) return;
        int st;
        if (waitpid(server_pid, &st, WNOHANG) == server_pid) {
            server_pid = 0;
            char msg[512] = "";
            FILE *f = fopen(errf, "r");
            if (f) { size_t n = fread(msg, 1, sizeof msg - 1, f); msg[n] = 0; fclose(f); }
            stop_server();
            die("dwd exited: %s", msg);
        }
        usleep(10000);
    }
    stop_server();
    die("%s", "dwd did not create its socket within 10 s");
}

/* user and system CPU of a process, in ns (from /proc/PID/stat) */
typedef struct { uint64_t user, sys; } cpu_ns;

static cpu_ns proc_cpu(pid_t pid)
{
    cpu_ns c = { 0, 0 };
    char p[64], b[1024];
    snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(p, "r");
    if (!f) return c;
    size_t n = fread(b, 1, sizeof b - 1, f);
    fclose(f);
    b[n] = 0;
    char *q = strrchr(b, ')');
    unsigned long long ut = 0, st = 0;
    /* fields after the comm: 3 state ... 14 utime 15 stime */
    if (!q || sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) return c;
    uint64_t tick = 1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK);
    c.user = ut * tick;
    c.sys = st * tick;
    return c;
}

static uint64_t self_cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
           (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

/* ---- the one-fsync-per-append baseline ---- */
typedef struct { int fd; double seconds; samples lat; pthread_t th; } fsync_arg;

static void *fsync_main(void *arg)
{
    fsync_arg *a = arg;
    char rec[256];
    memset(rec, 'x', sizeof rec);
    rec[sizeof rec - 1] = '\n';
    uint64_t end = bench_now_ns() + (uint64_t)(a->seconds * 1e9);
    for (uint64_t t = bench_now_ns(); t < end; t = bench_now_ns()) {
        if (write(a->fd, rec, sizeof rec) != (ssize_t)sizeof rec || fdatasync(a->fd) != 0) break;
        push(&a->lat, bench_now_ns() - t);
    }
    return NULL;
}

/* nthreads appenders on one O_APPEND file in dir, each paying its own fdatasync */
static double fsync_baseline(const char *dir, int nthreads, double seconds, samples *all)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/fsync-baseline", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) die("cannot create %s", path);
    fsync(fd);
    fsync_arg *a = calloc((size_t)nthreads, sizeof *a);
    if (!a) die("%s", "out of memory");
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < nthreads; i++) {
        a[i].fd = fd;
        a[i].seconds = seconds;
        pthread_create(&a[i].th, NULL, fsync_main, &a[i]);
    }
    size_t n = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(a[i].th, NULL);
        n += a[i].lat.n;
        if (all) for (size_t k = 0; k < a[i].lat.n; k++) push(all, a[i].lat.v[k]);
        free(a[i].lat.v);
    }
    double el = (double)(bench_now_ns() - t0) / 1e9;
    free(a);
    close(fd);
    unlink(path);
    return (double)n / el;
}

static void usage(void)
{
    fprintf(stderr, "usage: dwd_load (--dwd PATH --policy P [--durability full|batch|none] [--tmp DIR] [--dwd-arg X]... | --echo | --socket PATH)\n"
                    "                [--clients C] [--seconds S] [--warmup S] [--pipeline K] [--op decide|record]\n"
                    "                [--requests FILE]... [--baseline]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *dwd = NULL, *policy = NULL, *durability = "full", *tmp = "/tmp", *op = "decide";
    const char *reqs[16];
    char *extra[16];
    int nreqs = 0, nextra = 0, clients = 8, baseline = 0, echo = 0;
    double seconds = 5, warmup = 1;
    enum { O_BASELINE = 256, O_ECHO, O_DWD, O_POLICY, O_DURABILITY, O_TMP, O_SOCKET, O_CLIENTS, O_SECONDS, O_WARMUP,
           O_PIPELINE, O_OP, O_REQUESTS, O_DWD_ARG };
    static const struct option longopts[] = {
        { "baseline", no_argument, NULL, O_BASELINE }, { "echo", no_argument, NULL, O_ECHO },
        { "dwd", required_argument, NULL, O_DWD }, { "policy", required_argument, NULL, O_POLICY },
        { "durability", required_argument, NULL, O_DURABILITY }, { "tmp", required_argument, NULL, O_TMP },
        { "socket", required_argument, NULL, O_SOCKET }, { "clients", required_argument, NULL, O_CLIENTS },
        { "seconds", required_argument, NULL, O_SECONDS }, { "warmup", required_argument, NULL, O_WARMUP },
        { "pipeline", required_argument, NULL, O_PIPELINE }, { "op", required_argument, NULL, O_OP },
        { "requests", required_argument, NULL, O_REQUESTS }, { "dwd-arg", required_argument, NULL, O_DWD_ARG },
        { NULL, 0, NULL, 0 },
    };
    for (int o; (o = getopt_long(argc, argv, "", longopts, NULL)) != -1;) {
        switch (o) {
        case O_BASELINE: baseline = 1; break;
        case O_ECHO: echo = 1; break;
        case O_DWD: dwd = optarg; break;
        case O_POLICY: policy = optarg; break;
        case O_DURABILITY: durability = optarg; break;
        case O_TMP: tmp = optarg; break;
        case O_SOCKET: sock_path = optarg; break;
        case O_CLIENTS: clients = (int)bench_option_number("dwd_load", "clients", optarg, 1, MAX_CLIENTS, true); break;
        case O_SECONDS: seconds = bench_option_number("dwd_load", "seconds", optarg, 0.01, 86400, false); break;
        case O_WARMUP: warmup = bench_option_number("dwd_load", "warmup", optarg, 0, 3600, false); break;
        case O_PIPELINE: pipeline = (int)bench_option_number("dwd_load", "pipeline", optarg, 1, 256, true); break;
        case O_OP: op = optarg; break;
        case O_REQUESTS: if (nreqs == 16) die("%s", "at most 16 --requests files"); reqs[nreqs++] = optarg; break;
        case O_DWD_ARG: if (nextra == 16) die("%s", "at most 16 --dwd-arg words"); extra[nextra++] = optarg; break;
        default: usage();
        }
    }
    if (optind < argc) usage();
    int record = !strcmp(op, "record");
    int spawned = dwd || echo;
    if ((!spawned && !sock_path) || (dwd && !policy) || (dwd && echo) || clients < 1 || clients > MAX_CLIENTS || pipeline < 1 ||
        pipeline > 256 || seconds <= 0 || (!record && strcmp(op, "decide")) || !nreqs)
        usage();
    for (int i = 0; i < nreqs; i++) load_requests(reqs[i], record);
    if (!nops) die("%s", record ? "no http:request requests to record" : "no requests");
    signal(SIGPIPE, SIG_IGN);

    if (spawned) {
        snprintf(tmp_dir, sizeof tmp_dir, "%s/dwd-load.XXXXXX", tmp);
        if (!mkdtemp(tmp_dir)) die("cannot create a directory in %s", tmp);
    }
    /* the baseline first, on the file system the state directory will use */
    double fs1 = 0, fsn = 0;
    samples fl = { 0 };
    if (baseline) {
        const char *dir = spawned ? tmp_dir : tmp;
        fs1 = fsync_baseline(dir, 1, seconds < 3 ? seconds : 3, &fl);
        fsn = fsync_baseline(dir, clients, seconds < 3 ? seconds : 3, NULL);
        qsort(fl.v, fl.n, sizeof *fl.v, bench_cmp_u32);
    }
    if (spawned) start_server(dwd, policy, durability, extra, nextra);

    client *cs = calloc((size_t)clients, sizeof *cs);
    if (!cs) die("%s", "out of memory");
    atomic_store(&phase, WARMUP);
    for (int i = 0; i < clients; i++) {
        cs[i].id = i;
        if (pthread_create(&cs[i].th, NULL, client_main, &cs[i])) die("%s", "pthread_create failed");
    }
    usleep((useconds_t)(warmup * 1e6));
    char st0[4096] = "", st1[4096] = "";
    ask("{\"op\":\"stats\"}\n", st0, sizeof st0);
    cpu_ns s_cpu0 = spawned ? proc_cpu(server_pid) : (cpu_ns){ 0, 0 };
    uint64_t c_cpu0 = self_cpu_ns(), t0 = bench_now_ns();
    atomic_store(&phase, MEASURE);
    usleep((useconds_t)(seconds * 1e6));
    atomic_store(&phase, STOP);
    uint64_t t1 = bench_now_ns(), c_cpu1 = self_cpu_ns();
    cpu_ns s_cpu1 = spawned ? proc_cpu(server_pid) : (cpu_ns){ 0, 0 };
    for (int i = 0; i < clients; i++) pthread_join(cs[i].th, NULL);
    ask("{\"op\":\"stats\"}\n", st1, sizeof st1);
    double la[3] = { 0, 0, 0 };
    getloadavg(la, 3);
    if (spawned) stop_server();

    samples all = { 0 };
    uint64_t done = 0, errors = 0, permits = 0, denies = 0;
    int failed = 0;
    for (int i = 0; i < clients; i++) {
        for (size_t k = 0; k < cs[i].lat.n; k++) push(&all, cs[i].lat.v[k]);
        done += cs[i].done; errors += cs[i].errors; permits += cs[i].permits; denies += cs[i].denies;
        failed += cs[i].failed;
        free(cs[i].lat.v);
    }
    free(cs);
    qsort(all.v, all.n, sizeof *all.v, bench_cmp_u32);
    double el = (double)(t1 - t0) / 1e9;
    double rate = (double)done / el;
    uint64_t appends = stat_field(st1, "log_appends") - stat_field(st0, "log_appends");
    uint64_t syncs = stat_field(st1, "log_syncs") - stat_field(st0, "log_syncs");
    const char *noun = record ? "appends" : "decisions";
    printf("mode=%s\npipeline=%d\nop=%s\nclients=%d\ndurability=%s\nseconds=%.2f\n",
           pipeline > 1 ? "pipelined" : "closed", pipeline, op, clients, echo ? "echo" : dwd ? durability : "?", el);
    printf("%s=%llu\n%s_per_s=%.0f\n", noun, (unsigned long long)done, noun, rate);
    printf("p50_us=%.1f\np99_us=%.1f\np999_us=%.1f\nmax_us=%.1f\n", pct_us(&all, 0.5), pct_us(&all, 0.99),
           pct_us(&all, 0.999), all.n ? (double)all.v[all.n - 1] / 1000.0 : 0);
    printf("errors=%llu\npermits=%llu\ndenies=%llu\nfailed_clients=%d\n", (unsigned long long)errors,
           (unsigned long long)permits, (unsigned long long)denies, failed);
    if (spawned && done) {
        double su = (double)(s_cpu1.user - s_cpu0.user), ss = (double)(s_cpu1.sys - s_cpu0.sys);
        printf("server_cpu_us_per_op=%.2f\nserver_user_us_per_op=%.2f\nserver_sys_us_per_op=%.2f\nserver_cpu_util=%.2f\n",
               (su + ss) / 1e3 / (double)done, su / 1e3 / (double)done, ss / 1e3 / (double)done, (su + ss) / 1e9 / el);
    }
    if (done) printf("client_cpu_us_per_op=%.2f\n", (double)(c_cpu1 - c_cpu0) / 1e3 / (double)done);
    if (syncs) printf("log_syncs=%llu\nops_per_sync=%.1f\n", (unsigned long long)syncs, (double)appends / (double)syncs);
    printf("loadavg=%.2f\n", la[0]);
    if (baseline) {
        printf("fsync_1t_appends_per_s=%.0f\nfsync_p50_us=%.1f\nfsync_p99_us=%.1f\nfsync_p999_us=%.1f\n", fs1,
               pct_us(&fl, 0.5), pct_us(&fl, 0.99), pct_us(&fl, 0.999));
        printf("fsync_%dt_appends_per_s=%.0f\n", clients, fsn);
        if (fs1 > 0) printf("vs_fsync_1t=%.1f\n", rate / fs1);
        free(fl.v);
    }
    free(all.v);
    for (size_t i = 0; i < nops; i++) free(ops[i]);
    return failed || errors ? 1 : 0;
}
