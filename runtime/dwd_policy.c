/* dwd_policy.c - the artifact dwd serves (runtime/dwd_policy.h). */
#include "dwd_policy.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../lang/diag.h"       /* dw_read_file */
#include "../vm/artifact.h"     /* dw_is_artifact */

#define MAX_ARTIFACT (256u << 20)   /* as a reload's */

/* The dwc to run: --dwc, $DWC, the one beside this executable, else "dwc" (PATH). */
static const char *find_dwc(const char *given, char *buf, size_t cap)
{
    if (given && *given) return given;
    const char *env = getenv("DWC");
    if (env && *env) return env;
    ssize_t n = readlink("/proc/self/exe", buf, cap - 5);
    if (n > 0) {
        buf[n] = 0;
        char *slash = strrchr(buf, '/');
        if (slash) {
            strcpy(slash + 1, "dwc");
            if (access(buf, X_OK) == 0) return buf;
        }
    }
    return "dwc";
}

typedef struct sink { char *p; size_t n, cap; bool over; } sink;

/* Read what fd has (non-blocking); false at end of file or error. */
static bool drain(int fd, sink *s, size_t max)
{
    char tmp[65536];
    ssize_t r = read(fd, tmp, sizeof tmp);
    if (r < 0) return errno == EINTR || errno == EAGAIN;
    if (r == 0) return false;
    if (s->n + (size_t)r > max) { s->over = true; return true; }   /* keep reading, so the child ends */
    if (s->n + (size_t)r > s->cap) {
        size_t cap = s->cap ? s->cap : 65536;
        while (cap < s->n + (size_t)r) cap *= 2;
        char *p = realloc(s->p, cap);
        if (!p) { s->over = true; return true; }
        s->p = p;
        s->cap = cap;
    }
    memcpy(s->p + s->n, tmp, (size_t)r);
    s->n += (size_t)r;
    return true;
}

/* dwc compile PATH -s SCHEMA [--events E] --quiet -o -: the artifact on its
 * stdout, its first error on its stderr. */
static int compile_in_child(const char *path, const char *schema, const char *events, const char *dwc_given,
                            void **data, size_t *len)
{
    char exe[4096];
    const char *dwc = find_dwc(dwc_given, exe, sizeof exe);
    const char *argv[12];
    int k = 0;
    argv[k++] = dwc; argv[k++] = "compile"; argv[k++] = path;
    argv[k++] = "--schema"; argv[k++] = schema;
    if (events) { argv[k++] = "--events"; argv[k++] = events; }
    argv[k++] = "--quiet"; argv[k++] = "-o"; argv[k++] = "-";
    argv[k] = NULL;
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC)) { fprintf(stderr, "dwd: pipe: %s\n", strerror(errno)); return 1; }
    if (pipe2(err, O_CLOEXEC)) { fprintf(stderr, "dwd: pipe: %s\n", strerror(errno)); close(out[0]); close(out[1]); return 1; }
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "dwd: fork: %s\n", strerror(errno));
        close(out[0]); close(out[1]); close(err[0]); close(err[1]);
        return 1;
    }
    if (pid == 0) {
        if (dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0) _exit(127);
        if (strchr(dwc, '/')) execv(dwc, (char *const *)argv);
        else execvp(dwc, (char *const *)argv);
        dprintf(2, "%s: error: cannot run %s to compile it: %s (dwd --dwc PATH names it)\n", path, dwc, strerror(errno));
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    sink art = { 0 }, msg = { 0 };
    bool open_out = true, open_err = true;
    while (open_out || open_err) {   /* both at once: a long stderr must not stall the artifact */
        struct pollfd pf[2] = { { open_out ? out[0] : -1, POLLIN, 0 }, { open_err ? err[0] : -1, POLLIN, 0 } };
        if (poll(pf, 2, -1) < 0 && errno != EINTR) break;
        if (open_out && pf[0].revents) open_out = drain(out[0], &art, MAX_ARTIFACT);
        if (open_err && pf[1].revents) open_err = drain(err[0], &msg, 1u << 20);
    }
    close(out[0]);
    close(err[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0 && !art.over && art.n;
    for (size_t i = 0; i < msg.n;) {      /* dwc's lines, each as dwd's */
        char *nl = memchr(msg.p + i, '\n', msg.n - i);
        size_t e = nl ? (size_t)(nl - msg.p) : msg.n;
        fprintf(stderr, "dwd: %.*s\n", (int)(e - i), msg.p + i);
        i = e + 1;
    }
    if (!ok && !msg.n) {
        if (art.over) fprintf(stderr, "dwd: %s: error: the compiled artifact is over %u MiB\n", path, MAX_ARTIFACT >> 20);
        else if (WIFSIGNALED(st)) fprintf(stderr, "dwd: %s: error: %s compile was killed by signal %d\n", path, dwc, WTERMSIG(st));
        else fprintf(stderr, "dwd: %s: error: %s compile failed (exit %d)\n", path, dwc, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
    free(msg.p);
    if (!ok) { free(art.p); return 1; }
    *data = art.p;
    *len = art.n;
    return 0;
}

int dwd_policy_artifact(const char *path, const char *schema, const char *events, const char *dwc, void **data, size_t *len)
{
    char *text;
    size_t n;
    if (dw_read_file(path, &text, &n)) { fprintf(stderr, "dwd: %s: error: cannot read: %s\n", path, strerror(errno)); return 1; }
    if (dw_is_artifact(text, n)) {
        *data = text;
        *len = n;
        return 0;
    }
    free(text);
    return compile_in_child(path, schema, events, dwc, data, len);
}
