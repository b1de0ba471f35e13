/* seccomp.c - dwd's system-call allow-list (see seccomp.h). */
#include "seccomp.h"
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* What serving needs: the epoll loop, accepted connections, SO_PEERCRED, the
 * history log's append path (pwrite + fdatasync, ftruncate on a failed
 * write) and its batch flusher thread, malloc, clocks, signals, exit. */
static const char *const allowed[] = {
    "accept4", "accept", "read", "readv", "recvfrom", "recvmsg", "write", "writev", "sendto", "sendmsg",
    "close", "poll", "ppoll", "epoll_wait", "epoll_pwait", "epoll_ctl",
    "getsockopt", "shutdown",
    "fdatasync", "fsync", "pwrite64", "pwritev", "ftruncate", "lseek", "fstat", "newfstatat", "statx",
    "futex", "clock_gettime", "gettimeofday", "clock_nanosleep", "nanosleep", "sched_yield",
    "mmap", "munmap", "mremap", "brk", "madvise", "mprotect",
    "rt_sigreturn", "rt_sigprocmask", "rt_sigaction", "restart_syscall",
    "exit", "exit_group", "getpid", "gettid", "getuid", "geteuid", "sched_getaffinity",
    "rseq", "set_robust_list", "sigaltstack",   /* threads started just before the filter (the batch
                                                   flusher) register these; sanitizers use sigaltstack */
    "getrandom",                                /* trace and span ids, hash seeds: no file, no path */
};

int dw_confine_serving(char *err, size_t errcap)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
    if (!ctx) { snprintf(err, errcap, "seccomp_init failed"); return -1; }
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
    if (rc) { snprintf(err, errcap, "seccomp: cannot synchronise threads: %s", strerror(-rc)); seccomp_release(ctx); return -1; }
    for (size_t i = 0; i < sizeof allowed / sizeof *allowed; i++) {
        int nr = seccomp_syscall_resolve_name(allowed[i]);
        if (nr == __NR_SCMP_ERROR) continue;          /* not on this architecture */
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
        if (rc) { snprintf(err, errcap, "seccomp: cannot allow %s: %s", allowed[i], strerror(-rc)); seccomp_release(ctx); return -1; }
    }
    /* setsockopt for one option only: SO_PEEK_OFF on an accepted connection (runtime/dwd_conn.h) */
    const struct scmp_arg_cmp peek_off[] = { { .arg = 1, .op = SCMP_CMP_EQ, .datum_a = SOL_SOCKET, .datum_b = 0 },
                                             { .arg = 2, .op = SCMP_CMP_EQ, .datum_a = SO_PEEK_OFF, .datum_b = 0 } };
    rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(setsockopt), 2, peek_off);
    if (rc) { snprintf(err, errcap, "seccomp: cannot allow setsockopt: %s", strerror(-rc)); seccomp_release(ctx); return -1; }
    rc = seccomp_load(ctx);
    seccomp_release(ctx);
    if (rc) { snprintf(err, errcap, "seccomp: cannot load the filter: %s", strerror(-rc)); return -1; }
    return 0;
}

static int report(const char *what, int ret, int e)
{
    if (ret < 0 && e == EPERM) { printf("%s: refused (EPERM)\n", what); return 0; }
    if (ret < 0) printf("%s: failed with %s, not EPERM\n", what, strerror(e));
    else printf("%s: ALLOWED\n", what);
    return 1;
}

/* In a child, so the caller stays unconfined (and a sanitizer's exit-time
 * leak check, which needs clone and ptrace, still works in the parent). */
static int selftest_child(void)
{
    char err[256];
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0) { printf("socketpair: %s\n", strerror(errno)); return 1; }
    if (dw_confine_serving(err, sizeof err)) { printf("confine: %s\n", err); fflush(stdout); return 1; }
    printf("confined\n");
    int bad = 0, r;
    errno = 0;
    r = socket(AF_UNIX, SOCK_STREAM, 0);
    bad |= report("socket", r, errno);
    if (r >= 0) close(r);
    errno = 0;
    r = openat(AT_FDCWD, "/etc/hostname", O_RDONLY | O_CLOEXEC);
    bad |= report("openat", r, errno);
    if (r >= 0) close(r);
    errno = 0;
    char *const argv[] = { (char *)"/bin/true", NULL }, *const envp[] = { NULL };
    r = execve("/bin/true", argv, envp);
    bad |= report("execve", r, errno);
    int v = 0;   /* setsockopt: SO_PEEK_OFF only (runtime/dwd_conn.c) */
    errno = 0;
    r = setsockopt(sp[0], SOL_SOCKET, SO_PEEK_OFF, &v, sizeof v);
    if (r == 0) printf("setsockopt SO_PEEK_OFF: allowed\n");
    else { printf("setsockopt SO_PEEK_OFF: failed (%s)\n", strerror(errno)); bad = 1; }
    v = 4096;
    errno = 0;
    r = setsockopt(sp[0], SOL_SOCKET, SO_RCVBUF, &v, sizeof v);
    bad |= report("setsockopt SO_RCVBUF", r, errno);
    close(sp[0]);
    close(sp[1]);
    unsigned char rnd[16];
    errno = 0;
    ssize_t g = getrandom(rnd, sizeof rnd, 0);
    if (g == (ssize_t)sizeof rnd) printf("getrandom: allowed\n");
    else { printf("getrandom: failed (%s)\n", strerror(errno)); bad = 1; }
    fflush(stdout);
    return bad;
}

int dw_confine_selftest(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) { printf("fork: %s\n", strerror(errno)); return 1; }
    if (pid == 0) _exit(selftest_child());
    int st;
    while (waitpid(pid, &st, 0) < 0) if (errno != EINTR) { printf("waitpid: %s\n", strerror(errno)); return 1; }
    if (!WIFEXITED(st)) { printf("selftest child died (signal %d)\n", WIFSIGNALED(st) ? WTERMSIG(st) : 0); return 1; }
    return WEXITSTATUS(st) ? 1 : 0;
}
