/* smt_worker.c - Z3 queries in forked worker processes (smt_worker.h).
 *
 * Why a process: Z3 4.8.12 has been seen to crash inside Z3_solver_check on
 * large Box sets under a timeout (issue 22); a signal, an endless loop or an
 * allocation storm in the solver must cost one query, never the run.  Over a
 * socket pair every message is `LENGTH\n` and LENGTH bytes:
 *
 *   parent:  Q ORDINAL\n<SMT-LIB: new well-formedness assertions, the goal last>
 *            (not for a worker's first query: it inherits the goal)
 *   worker:  S\n\n<model text>   sat (smt_wire.c)
 *            U\n                 unsat
 *            K\n<reason>\n       unknown (Z3's reason: timeout, canceled, incomplete ...)
 *
 * Anything else -- a signal, no answer before the watchdog (twice Z3's
 * timeout plus a second), a short message -- is a failure with the reason
 * the parent saw.  DWC_SOLVER_FAULT=crash:N, hang:N or oom:N makes the
 * worker of the Nth query crash, hang or exhaust its memory
 * (tests/check/solver_fault.sh). */
#include "smt_worker.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* the fault DWC_SOLVER_FAULT asks of query n: 'c', 'h', 'o' or 0 */
static int fault_for(unsigned long n)
{
    const char *f = getenv("DWC_SOLVER_FAULT");
    if (!f) return 0;
    const char *colon = strchr(f, ':');
    if (!colon || strtoul(colon + 1, NULL, 10) != n) return 0;
    if (!strncmp(f, "crash:", 6)) return 'c';
    if (!strncmp(f, "hang:", 5)) return 'h';
    if (!strncmp(f, "oom:", 4)) return 'o';
    return 0;
}

static void limit_memory(unsigned long mem_mb)
{
    /* a crashed worker's core dump would take seconds and help no user */
    struct rlimit core = { 0, 0 };
    setrlimit(RLIMIT_CORE, &core);
    if (!mem_mb) return;
    /* the worker starts with the parent's address space: allow that plus mem_mb */
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1) pages = 0;
        fclose(f);
    }
    struct rlimit r;
    r.rlim_cur = r.rlim_max = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)mem_mb << 20);
    setrlimit(RLIMIT_AS, &r);
}


/* ------------------------------------------------------------------ worker side */

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) _exit(3);
        p += k;
        n -= (size_t)k;
    }
}

static void reply(int fd, const dw_buf *b)
{
    char h[32];
    int n = snprintf(h, sizeof h, "%zu\n", b->len);
    write_all(fd, h, (size_t)n);
    write_all(fd, b->p, b->len);
}

static void do_fault(int f)
{
    switch (f) {
    case 'c': abort();
    case 'h': for (;;) pause();
    case 'o':
        for (;;) {
            char *p = malloc(1 << 20);
            if (!p) abort();   /* what an allocation failure inside Z3 ends in */
            memset(p, 1, 1 << 20);
        }
    default: break;
    }
}

/* check goal on s in a scope: the answer */
static void answer(Z3_context c, Z3_solver s, Z3_ast goal, dw_buf *b)
{
    Z3_solver_push(c, s);
    Z3_solver_assert(c, s, goal);
    Z3_lbool r = Z3_solver_check(c, s);
    if (r == Z3_L_TRUE) {
        Z3_model m = Z3_solver_get_model(c, s);
        dw_buf t = { 0 };
        if (m) Z3_model_inc_ref(c, m);
        if (m && dw_smt_model_write(c, m, &t) == 0 && t.p) dw_buf_printf(b, "S\n\n%s", t.p);
        else dw_buf_printf(b, "K\nthe model has a value SMT-LIB cannot spell (a value of an uninterpreted sort)\n");
        dw_buf_free(&t);
        if (m) Z3_model_dec_ref(c, m);
    } else if (r == Z3_L_FALSE) dw_buf_printf(b, "U\n");
    else {
        const char *why = Z3_solver_get_reason_unknown(c, s);
        dw_buf_printf(b, "K\nZ3 answered unknown: %s\n", why && *why ? why : "no reason given");
    }
    Z3_solver_pop(c, s, 1);
    if (!b->p) _exit(4);
}

static bool read_exact(int fd, char *p, size_t n)
{
    while (n) {
        ssize_t k = read(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

/* the environment's worker: answer queries on s until the parent closes */
static void serve(int fd, Z3_context c, Z3_solver s)
{
    for (;;) {
        char h[32];
        size_t n = 0;
        while (n + 1 < sizeof h && read_exact(fd, h + n, 1) && h[n] != '\n') n++;
        if (n == 0 || h[n] != '\n') _exit(0);
        h[n] = 0;
        size_t len = strtoul(h, NULL, 10);
        char *q = malloc(len + 1);
        if (!q || !read_exact(fd, q, len)) _exit(0);
        q[len] = 0;
        char *text = strchr(q, '\n');
        if (strncmp(q, "Q ", 2) || !text) _exit(5);
        do_fault(fault_for(strtoul(q + 2, NULL, 10)));
        Z3_ast_vector v = Z3_parse_smtlib2_string(c, text + 1, 0, NULL, NULL, 0, NULL, NULL);
        dw_buf b = { 0 };
        unsigned nv = v && Z3_get_error_code(c) == Z3_OK ? Z3_ast_vector_size(c, v) : 0;
        if (nv == 0) dw_buf_printf(&b, "K\nthe query has a symbol SMT-LIB cannot spell\n");
        else {
            Z3_ast_vector_inc_ref(c, v);
            for (unsigned i = 0; i + 1 < nv; i++) Z3_solver_assert(c, s, Z3_ast_vector_get(c, v, i));
            answer(c, s, Z3_ast_vector_get(c, v, nv - 1), &b);
            Z3_ast_vector_dec_ref(c, v);
        }
        if (!b.p) _exit(4);
        reply(fd, &b);
        dw_buf_free(&b);
        free(q);
    }
}

/* ------------------------------------------------------------------ parent side */

/* wait for fd to be ready for `events` until the deadline (< 0: none): 1 ready, 0 late, -1 error */
static int wait_fd(int fd, short events, double deadline)
{
    for (;;) {
        int wait = -1;
        if (deadline >= 0) {
            double left = deadline - now_ms();
            if (left <= 0) return 0;
            wait = (int)left + 1;
        }
        struct pollfd p = { fd, events, 0 };
        int k = poll(&p, 1, wait);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        if (k > 0) return 1;
    }
}

/* send all of p: 0, 1 late, -1 the worker is gone */
static int send_all(int fd, const char *p, size_t n, double deadline)
{
    while (n) {
        int r = wait_fd(fd, POLLOUT, deadline);
        if (r <= 0) return r == 0 ? 1 : -1;
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* one message (LENGTH\n and the bytes): 0, 1 late, -1 the worker is gone */
static int recv_msg(int fd, double deadline, dw_buf *b, size_t *body)
{
    size_t want = (size_t)-1;
    for (;;) {
        if (want == (size_t)-1) {
            char *nl = b->len ? memchr(b->p, '\n', b->len) : NULL;
            if (nl) {
                *body = (size_t)(nl - b->p) + 1;
                want = *body + strtoul(b->p, NULL, 10);
            }
        }
        if (want != (size_t)-1 && b->len >= want) return 0;
        int r = wait_fd(fd, POLLIN, deadline);
        if (r <= 0) return r == 0 ? 1 : -1;
        char buf[65536];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        if (dw_buf_append(b, buf, (size_t)n)) return -1;
    }
}

/* reap a worker; its fate as a reason (late: the watchdog stopped it) */
static void reap(int pid, bool late, double allowed, char *reason, size_t cap)
{
    if (late) kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (late) snprintf(reason, cap, "the solver worker gave no answer within %.0f ms and was killed", allowed);
    else if (WIFSIGNALED(st)) snprintf(reason, cap, "the solver worker crashed (signal %d, %s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else snprintf(reason, cap, "the solver worker failed (exit status %d)", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/* the answer in b[body...] as a result */
static int decode(Z3_context c, const dw_buf *b, size_t body, dw_smt_worker *w, Z3_model *model, char *reason, size_t cap)
{
    const char *p = b->p + body;
    size_t n = b->len - body;
    if (n >= 2 && !memcmp(p, "U\n", 2)) return 0;
    if (n >= 2 && !memcmp(p, "K\n", 2)) {
        size_t k = n - 2;
        while (k && p[2 + k - 1] == '\n') k--;
        snprintf(reason, cap, "%.*s", (int)k, p + 2);
        return -1;
    }
    if (n >= 3 && !memcmp(p, "S\n\n", 3)) {
        char *text = strndup(p + 3, n - 3);
        *model = text ? dw_smt_model_read(c, text, w->opaque, reason, cap) : NULL;
        free(text);
        return *model ? 1 : -1;
    }
    snprintf(reason, cap, "the solver worker's answer was not understood");
    return -1;
}

/* fork a worker: it answers `goal` (inherited: nothing to parse) on s, then,
 * when `serving`, the environment's next queries; *fd: the parent's end */
static int fork_worker(Z3_context c, Z3_solver s, Z3_ast goal, const dw_smt_worker *w, bool serving, int *fd, char *reason, size_t cap)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) { snprintf(reason, cap, "no solver worker (socketpair: %s)", strerror(errno)); return -1; }
    int parent = (int)getpid(), pid = fork();
    if (pid < 0) {
        snprintf(reason, cap, "no solver worker (fork: %s)", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    if (pid == 0) {
        /* a worker never outlives dwc check (killed mid-run, say) */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if ((int)getppid() != parent) _exit(0);
        close(sv[0]);
        limit_memory(w->mem_mb);
        do_fault(fault_for(w->nqueries));
        dw_buf b = { 0 };
        answer(c, s, goal, &b);
        reply(sv[1], &b);
        if (serving) serve(sv[1], c, s);
        _exit(0);
    }
    close(sv[1]);
    *fd = sv[0];
    return pid;
}

void dw_smt_worker_stop(dw_smt_worker *w)
{
    if (w->pid) {
        close(w->fd);
        kill(w->pid, SIGKILL);
        while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR) {}
    }
    w->pid = 0;
    w->per_query = false;
}

/* a worker forked for this one query, from the environment's solver as the
 * parent holds it (never checked) */
static int check_once(Z3_context c, Z3_solver s, Z3_ast goal, dw_smt_worker *w, Z3_model *model, char *reason, size_t cap)
{
    double allowed = w->timeout_ms ? 2.0 * w->timeout_ms + 1000 : -1;
    double t0 = now_ms();
    int fd, pid = fork_worker(c, s, goal, w, false, &fd, reason, cap);
    if (pid < 0) return -1;
    dw_buf b = { 0 };
    size_t body = 0;
    int r = recv_msg(fd, allowed >= 0 ? t0 + allowed : -1, &b, &body);
    close(fd);
    int rc = -1;
    if (r != 0) {
        reap(pid, r > 0, allowed, reason, cap);
        w->failures++;
    } else {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
        rc = decode(c, &b, body, w, model, reason, cap);
    }
    dw_buf_free(&b);
    return rc;
}

int dw_smt_worker_check(Z3_context c, Z3_solver s, const Z3_ast *wf, size_t nwf, Z3_ast goal, dw_smt_worker *w,
                        Z3_model *model, char *reason, size_t cap)
{
    *model = NULL;
    reason[0] = 0;
    w->nqueries++;
    if (w->per_query) return check_once(c, s, goal, w, model, reason, cap);
    double allowed = w->timeout_ms ? 2.0 * w->timeout_ms + 1000 : -1;
    double deadline = allowed >= 0 ? now_ms() + allowed : -1;
    dw_buf b = { 0 };
    size_t body = 0;
    int r;
    if (!w->pid) {
        int pid = fork_worker(c, s, goal, w, true, &w->fd, reason, cap);
        if (pid < 0) return -1;
        w->pid = pid;
    } else {
        const char *text = Z3_benchmark_to_smtlib_string(c, "", "", "unknown", "", (unsigned)(nwf - w->nwf_known), wf + w->nwf_known, goal);
        dw_buf q = { 0 };
        size_t tl = text ? strlen(text) : 0;
        char h[64];
        int hl = snprintf(h, sizeof h, "Q %lu\n", w->nqueries);
        if (!text || dw_buf_printf(&q, "%zu\n%s", (size_t)hl + tl, h) || dw_buf_append(&q, text, tl)) {
            dw_buf_free(&q);
            snprintf(reason, cap, "out of memory");
            return -1;
        }
        r = send_all(w->fd, q.p, q.len, deadline);
        dw_buf_free(&q);
        if (r != 0) goto failed;
    }
    w->nwf_known = nwf;
    r = recv_msg(w->fd, deadline, &b, &body);
    if (r == 0) {
        int rc = decode(c, &b, body, w, model, reason, cap);
        dw_buf_free(&b);
        if (rc >= 0) return rc;
        /* unknown (a timeout, mostly): its solver's state may be to blame */
    }
failed:
    dw_buf_free(&b);
    /* the environment's worker failed or timed out: the rest of the
     * environment is asked of a worker per query, from the parent's solver,
     * which has never answered anything (fresh state; costs a fork each) */
    dw_smt_worker_stop(w);
    w->per_query = true;
    return check_once(c, s, goal, w, model, reason, cap);
}
