/* keeper.c - dwd's state keeper (see keeper.h). */
#include "keeper.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { K_OPEN = 1, K_RENAME, K_UNLINK, K_ARTIFACT };

typedef struct kreq { uint32_t op; int32_t flags; char a[4096]; char b[64]; } kreq;
typedef struct krep { int32_t rc; int32_t err; } krep;

struct dw_keeper {
    int sock;
    pid_t pid;
    pthread_mutex_t mu;
};

/* ---- names the keeper accepts (runtime/histlog.h's directory layout) ---- */

static bool hex16(const char *s)
{
    for (int i = 0; i < 16; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return true;
}

/* 1: a segment name, 2: a checkpoint name, 0: neither */
static int final_kind(const char *n)
{
    size_t l = strlen(n);
    if (l == 4 + 16 + 4 && !strncmp(n, "seg-", 4) && hex16(n + 4) && !strcmp(n + 20, ".log")) return 1;
    if (l == 5 + 16 + 5 && !strncmp(n, "ckpt-", 5) && hex16(n + 5) && !strcmp(n + 21, ".ckpt")) return 2;
    return 0;
}

static int tmp_kind(const char *n)
{
    if (!strcmp(n, "seg.tmp")) return 1;
    if (!strcmp(n, "ckpt.tmp")) return 2;
    return 0;
}

/* ---- the keeper process ---- */

static const char *const keeper_allowed[] = {
    "recvmsg", "recvfrom", "sendmsg", "sendto", "read", "write",
    "openat", "open", "renameat", "renameat2", "unlinkat", "fstat", "newfstatat", "statx", "close",
    "brk", "mmap", "munmap", "mprotect", "madvise", "futex", "rt_sigreturn", "rt_sigprocmask", "exit", "exit_group",
    "sigaltstack", "getpid", "gettid", "sched_yield", "clock_gettime",   /* sanitizer runtimes */
};

static int keeper_confine(void)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
    if (!ctx) return -1;
    for (size_t i = 0; i < sizeof keeper_allowed / sizeof *keeper_allowed; i++) {
        int nr = seccomp_syscall_resolve_name(keeper_allowed[i]);
        if (nr == __NR_SCMP_ERROR) continue;
        if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0)) { seccomp_release(ctx); return -1; }
    }
    int rc = seccomp_load(ctx);
    seccomp_release(ctx);
    return rc ? -1 : 0;
}

static void reply(int sock, int rc, int err, int fd)
{
    krep r = { rc, err };
    struct iovec iov = { &r, sizeof r };
    struct msghdr mh;
    memset(&mh, 0, sizeof mh);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } c;
    if (fd >= 0) {
        memset(&c, 0, sizeof c);
        mh.msg_control = c.buf;
        mh.msg_controllen = sizeof c.buf;
        struct cmsghdr *h = CMSG_FIRSTHDR(&mh);
        h->cmsg_level = SOL_SOCKET;
        h->cmsg_type = SCM_RIGHTS;
        h->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(h), &fd, sizeof fd);
    }
    while (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 && errno == EINTR) {}
}

static void serve(int sock, int dirfd)
{
    kreq rq;
    for (;;) {
        ssize_t n = recv(sock, &rq, sizeof rq, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n != (ssize_t)sizeof rq) return;          /* closed (or garbage): exit */
        rq.a[sizeof rq.a - 1] = 0;
        rq.b[sizeof rq.b - 1] = 0;
        int fd = -1, rc = -1, err = EPERM;
        switch (rq.op) {
        case K_OPEN: {
            int acc = rq.flags & ~(O_CLOEXEC | O_NOFOLLOW);
            if (tmp_kind(rq.a) && (acc == (O_RDWR | O_CREAT | O_TRUNC) || acc == (O_WRONLY | O_CREAT | O_TRUNC))) {
                fd = openat(dirfd, rq.a, acc | O_CLOEXEC | O_NOFOLLOW, 0600);
                rc = fd;
                err = errno;
            }
            break;
        }
        case K_RENAME:
            if (tmp_kind(rq.a) && tmp_kind(rq.a) == final_kind(rq.b)) {
                rc = renameat(dirfd, rq.a, dirfd, rq.b);
                err = errno;
            }
            break;
        case K_UNLINK:
            if (tmp_kind(rq.a) || final_kind(rq.a)) {
                rc = unlinkat(dirfd, rq.a, 0);
                err = errno;
            }
            break;
        case K_ARTIFACT: {
            fd = open(rq.a, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
            err = errno;
            struct stat sb;
            if (fd >= 0 && (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))) {
                close(fd);
                fd = -1;
                err = EINVAL;
            }
            rc = fd;
            break;
        }
        default:
            err = EINVAL;
        }
        reply(sock, rc < 0 ? -1 : rc, rc < 0 ? err : 0, fd);
        if (fd >= 0) close(fd);
    }
}

dw_keeper *dw_keeper_start(const char *dir, char *err, size_t errcap)
{
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errcap, "cannot create %s: %s", dir, strerror(errno));
        return NULL;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(err, errcap, "keeper: socketpair: %s", strerror(errno));
        return NULL;
    }
    dw_keeper *k = calloc(1, sizeof *k);
    if (!k) { close(sv[0]); close(sv[1]); snprintf(err, errcap, "out of memory"); return NULL; }
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errcap, "keeper: fork: %s", strerror(errno));
        close(sv[0]); close(sv[1]); free(k);
        return NULL;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(0);
        signal(SIGINT, SIG_IGN);                 /* the server decides when to stop */
        signal(SIGTERM, SIG_DFL);
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) { fprintf(stderr, "dwd keeper: cannot open %s: %s\n", dir, strerror(errno)); _exit(1); }
        /* keep only stdio, the socket and the directory */
        for (int fd = 3; fd < 4096; fd++) if (fd != sv[1] && fd != dfd) close(fd);
        if (keeper_confine()) { fprintf(stderr, "dwd keeper: cannot confine itself\n"); _exit(1); }
        serve(sv[1], dfd);
        _exit(0);                                /* no atexit handlers: they would need more syscalls */
    }
    close(sv[1]);
    k->sock = sv[0];
    k->pid = pid;
    pthread_mutex_init(&k->mu, NULL);
    return k;
}

static int call(dw_keeper *k, uint32_t op, int flags, const char *a, const char *b, bool want_fd)
{
    kreq rq;
    memset(&rq, 0, sizeof rq);
    if (!k || strlen(a) >= sizeof rq.a || (b && strlen(b) >= sizeof rq.b)) { errno = k ? ENAMETOOLONG : EBADF; return -1; }
    rq.op = op;
    rq.flags = flags;
    strcpy(rq.a, a);
    if (b) strcpy(rq.b, b);
    krep r;
    struct iovec iov = { &r, sizeof r };
    struct msghdr mh;
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } c;
    memset(&mh, 0, sizeof mh);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = c.buf;
    mh.msg_controllen = sizeof c.buf;
    pthread_mutex_lock(&k->mu);
    ssize_t n;
    while ((n = send(k->sock, &rq, sizeof rq, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
    if (n == (ssize_t)sizeof rq)
        while ((n = recvmsg(k->sock, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {}
    pthread_mutex_unlock(&k->mu);
    if (n != (ssize_t)sizeof r) { errno = EPIPE; return -1; }   /* the keeper is gone */
    int fd = -1;
    for (struct cmsghdr *h = CMSG_FIRSTHDR(&mh); h; h = CMSG_NXTHDR(&mh, h))
        if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS && h->cmsg_len == CMSG_LEN(sizeof(int)))
            memcpy(&fd, CMSG_DATA(h), sizeof fd);
    if (r.rc < 0) {
        if (fd >= 0) close(fd);
        errno = r.err ? r.err : EIO;
        return -1;
    }
    if (want_fd && fd < 0) { errno = EIO; return -1; }
    if (!want_fd && fd >= 0) close(fd);
    return want_fd ? fd : 0;
}

int dw_keeper_open(dw_keeper *k, const char *name, int flags) { return call(k, K_OPEN, flags, name, NULL, true); }
int dw_keeper_rename(dw_keeper *k, const char *from, const char *to) { return call(k, K_RENAME, 0, from, to, false); }
int dw_keeper_unlink(dw_keeper *k, const char *name) { return call(k, K_UNLINK, 0, name, NULL, false); }
int dw_keeper_open_artifact(dw_keeper *k, const char *path) { return call(k, K_ARTIFACT, 0, path, NULL, true); }

static int op_open(void *ctx, const char *name, int flags) { return dw_keeper_open(ctx, name, flags); }
static int op_rename(void *ctx, const char *from, const char *to) { return dw_keeper_rename(ctx, from, to); }
static int op_unlink(void *ctx, const char *name) { return dw_keeper_unlink(ctx, name); }

void dw_keeper_fileops(dw_keeper *k, dw_histlog_fileops *ops)
{
    *ops = (dw_histlog_fileops){ op_open, op_rename, op_unlink, k };
}

pid_t dw_keeper_pid(const dw_keeper *k) { return k ? k->pid : -1; }

void dw_keeper_stop(dw_keeper *k)
{
    if (!k) return;
    close(k->sock);
    int st;
    while (waitpid(k->pid, &st, 0) < 0 && errno == EINTR) {}
    pthread_mutex_destroy(&k->mu);
    free(k);
}

/* ---- self test ---- */

static int last_errno;     /* errno right after the call under test (TRY) */

static int expect(const char *what, int rc, int want_errno)
{
    int e = last_errno;
    bool ok = want_errno ? (rc < 0 && e == want_errno) : rc >= 0;
    if (rc < 0) printf("%s: refused (%s)%s\n", what, strerror(e), ok ? "" : "  <-- UNEXPECTED");
    else printf("%s: allowed%s\n", what, ok ? "" : "  <-- UNEXPECTED");
    return ok ? 0 : 1;
}

static int filter_child(void)
{
    if (keeper_confine()) { printf("keeper filter: cannot load\n"); fflush(stdout); return 1; }
    int bad = 0, r;
    errno = 0;
    r = socket(AF_UNIX, SOCK_STREAM, 0);
    last_errno = errno;
    bad |= expect("keeper filter: socket", r, EPERM);
    if (r >= 0) close(r);
    errno = 0;
    char *const argv[] = { (char *)"/bin/true", NULL }, *const envp[] = { NULL };
    r = execve("/bin/true", argv, envp);
    last_errno = errno;
    bad |= expect("keeper filter: execve", r, EPERM);
    errno = 0;
    r = (int)fork();
    if (r == 0) _exit(0);
    last_errno = errno;
    bad |= expect("keeper filter: fork", r, EPERM);
    fflush(stdout);
    return bad;
}

int dw_keeper_selftest(const char *dir)
{
    int bad = 0;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) { printf("fork: %s\n", strerror(errno)); return 1; }
    if (pid == 0) _exit(filter_child());
    int st;
    while (waitpid(pid, &st, 0) < 0) if (errno != EINTR) return 1;
    bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;

    char err[256];
    dw_keeper *k = dw_keeper_start(dir, err, sizeof err);
    if (!k) { printf("keeper: %s\n", err); return 1; }
    char path[4200];
    /* a symlink where a temp file would go, and an artifact to open */
    snprintf(path, sizeof path, "%s/ckpt.tmp", dir);
    unlink(path);
    if (symlink("/etc/passwd", path) != 0) { printf("symlink: %s\n", strerror(errno)); bad = 1; }
    snprintf(path, sizeof path, "%s/probe.dwb", dir);
    FILE *f = fopen(path, "w");
    if (f) fclose(f);
    int fd;
#define TRY(call) (errno = 0, fd = (call), last_errno = errno, fd)
    bad |= expect("create seg.tmp", TRY(dw_keeper_open(k, "seg.tmp", O_RDWR | O_CREAT | O_TRUNC)), 0);
    if (fd >= 0) close(fd);
    bad |= expect("rename seg.tmp -> seg-00000000000000ab.log", TRY(dw_keeper_rename(k, "seg.tmp", "seg-00000000000000ab.log")), 0);
    bad |= expect("unlink seg-00000000000000ab.log", TRY(dw_keeper_unlink(k, "seg-00000000000000ab.log")), 0);
    bad |= expect("create ../escape.tmp", TRY(dw_keeper_open(k, "../escape.tmp", O_RDWR | O_CREAT | O_TRUNC)), EPERM);
    bad |= expect("open LOCK", TRY(dw_keeper_open(k, "LOCK", O_RDWR | O_CREAT | O_TRUNC)), EPERM);
    bad |= expect("open seg.tmp read-only (not a create)", TRY(dw_keeper_open(k, "seg.tmp", O_RDONLY)), EPERM);
    bad |= expect("create ckpt.tmp through a symlink", TRY(dw_keeper_open(k, "ckpt.tmp", O_WRONLY | O_CREAT | O_TRUNC)), ELOOP);
    bad |= expect("rename ckpt.tmp -> seg-0000000000000001.log (wrong kind)",
                  TRY(dw_keeper_rename(k, "ckpt.tmp", "seg-0000000000000001.log")), EPERM);
    bad |= expect("rename seg.tmp -> policy.dwb", TRY(dw_keeper_rename(k, "seg.tmp", "policy.dwb")), EPERM);
    bad |= expect("unlink LOCK", TRY(dw_keeper_unlink(k, "LOCK")), EPERM);
    bad |= expect("unlink probe.dwb", TRY(dw_keeper_unlink(k, "probe.dwb")), EPERM);
    bad |= expect("open artifact probe.dwb read-only", TRY(dw_keeper_open_artifact(k, path)), 0);
    if (fd >= 0) {
        int afd = fd;
        bad |= expect("  ... and the fd is read-only (write)", TRY((int)write(afd, "x", 1)), EBADF);
        close(afd);
    }
    bad |= expect("open artifact /dev/null (not a regular file)", TRY(dw_keeper_open_artifact(k, "/dev/null")), EINVAL);
    bad |= expect("open artifact DIR (a directory)", TRY(dw_keeper_open_artifact(k, dir)), EINVAL);
#undef TRY
    dw_keeper_stop(k);
    unlink(path);
    snprintf(path, sizeof path, "%s/ckpt.tmp", dir);
    unlink(path);
    printf("%s\n", bad ? "keeper selftest: FAILED" : "keeper selftest: ok");
    fflush(stdout);
    return bad;
}
