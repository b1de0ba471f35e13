/* smt_worker.c - one Z3 query in a forked worker process (smt_worker.h).
 *
 * Why a process: Z3 4.8.12 has been seen to crash inside Z3_solver_check on
 * large Box sets under a timeout (issue 22); a signal, an endless loop or an
 * allocation storm in the solver must cost one query, never the run.  The
 * worker's answer comes over a socket pair as `LENGTH\n` and LENGTH bytes:
 *
 *   S\n\n<model text>   sat (smt_wire.c)
 *   U\n                 unsat
 *   K\n<reason>\n       unknown (Z3's reason: timeout, canceled, incomplete ...)
 *
 * Anything else -- a signal, no answer before the watchdog (twice Z3's
 * timeout plus a second), a short message -- is unknown with the reason the
 * parent saw.  DWC_SOLVER_FAULT=crash:N,
 * hang:N or oom:N makes the worker of the Nth query crash, hang or exhaust
 * its memory (tests/check/solver_fault.sh). */
#include "smt_worker.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* check goal on s (the parent's solver: the schema's well-formedness
 * asserted, never checked) in a scope: the answer.  A worker per query, not
 * one per environment: Z3 4.8.12 on a solver or context that has answered a
 * few hundred queries slows down until queries time out (the 999-rule Box set
 * of issue 21: over 8 minutes and 246 unknowns in one process, about 10 s and
 * none with a fresh worker per query; a persistent worker fed the queries as
 * SMT-LIB text timed out the same way). */
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
    } else if (r == Z3_L_FALSE) dw_buf_printf(b, "U\n");
    else {
        const char *why = Z3_solver_get_reason_unknown(c, s);
        dw_buf_printf(b, "K\nZ3 answered unknown: %s\n", why && *why ? why : "no reason given");
    }
    if (!b->p) _exit(4);
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

int dw_smt_worker_check(Z3_context c, Z3_solver s, Z3_ast goal, dw_smt_worker *w, Z3_model *model, char *reason, size_t cap)
{
    *model = NULL;
    reason[0] = 0;
    w->nqueries++;
    double allowed = w->timeout_ms ? 2.0 * w->timeout_ms + 1000 : -1;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) { snprintf(reason, cap, "no solver worker (socketpair: %s)", strerror(errno)); return -1; }
    double t0 = now_ms();
    int pid = fork();
    if (pid < 0) {
        snprintf(reason, cap, "no solver worker (fork: %s)", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    if (pid == 0) {
        close(sv[0]);
        limit_memory(w->mem_mb);
        do_fault(fault_for(w->nqueries));
        dw_buf b = { 0 };
        answer(c, s, goal, &b);
        reply(sv[1], &b);
        _exit(0);
    }
    close(sv[1]);
    dw_buf b = { 0 };
    size_t body = 0;
    int r = recv_msg(sv[0], allowed >= 0 ? t0 + allowed : -1, &b, &body);
    close(sv[0]);
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
