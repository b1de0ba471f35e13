/* demo_client.c - the scripted agent session of `make demo` (build/dwd-demo).
 *   dwd-demo SOCKET [DECISION_LOG] < SESSION
 * SESSION is JSON lines of dwd ops; a line starting with '#' is narration, printed as a
 * heading.  Each op is sent on one connection and its reply printed readably: for a decide,
 * the action and its subject, the verdict, the governing rule and cause, the denial text, and
 * (with DECISION_LOG) the OTLP line dwd wrote for it.  Exits 1 if any reply is not ok:true or
 * missing, 2 if it cannot connect. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <signal.h>

#include "wire.h"

/* the string value of "key" in a JSON line (first occurrence; escapes kept as written) */
static const char *str_of(const char *json, const char *key, char *out, size_t cap)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":\"", key);
    const char *p = strstr(json, k);
    out[0] = 0;
    if (!p) return out;
    p += strlen(k);
    size_t n = 0;
    for (; *p && *p != '"' && n + 1 < cap; p++) {
        if (*p == '\\' && p[1]) out[n++] = *p++;
        if (n + 1 < cap) out[n++] = *p;
    }
    out[n] = 0;
    return out;
}

/* the next decision record of the decision log after *off (dwd's writer thread writes it just
 * after the reply; wait up to 2 s).  Control records (box_started, policy_installed, ...) and
 * span lines are skipped. */
static int next_log_line(const char *path, long *off, char **line, size_t *cap)
{
    for (int i = 0; i < 200; i++) {
        FILE *f = fopen(path, "r");
        if (f) {
            fseek(f, *off, SEEK_SET);
            ssize_t n;
            while ((n = getline(line, cap, f)) > 0 && (*line)[n - 1] == '\n') {
                (*line)[n - 1] = 0;
                *off += n;
                if (strstr(*line, "\"eventName\":\"strands.box.policy.decision\"")) { fclose(f); return 0; }
            }
            fclose(f);
        }
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    return -1;
}

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: dwd-demo SOCKET [DECISION_LOG] < SESSION\n"); return 2; }
    const char *dlog = argc > 2 ? argv[2] : NULL;
    signal(SIGPIPE, SIG_IGN);
    int fd = wire_connect(argv[1]);
    if (fd < 0) { perror("connect"); return 2; }
    static char reply[1 << 20];
    char *line = NULL, *logl = NULL;
    size_t cap = 0, logcap = 0;
    long off = 0;
    int bad = 0, n = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) > 0) {
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (!len) continue;
        if (line[0] == '#') { printf("\n%s\n", line); continue; }
        line[len] = '\n';
        if (wire_send(fd, line, (size_t)len + 1) || wire_read_line(fd, reply, sizeof reply)) {
            printf("  dwd closed the connection\n");
            bad++;
            break;
        }
        line[len] = 0;
        char op[32], action[64], kind[32], subj[512], verdict[16], rule[128], cause[32], msg[4200];
        str_of(line, "op", op, sizeof op);
        str_of(line, "action", action, sizeof action);
        if (strncmp(reply, "{\"ok\":true", 10) != 0) { printf("  %s %s: %s\n", op, action, reply); bad++; continue; }
        if (!strcmp(op, "stats")) { printf("\nstats: %s\n", reply); continue; }
        if (!strncmp(action, "http:", 5)) {
            char host[200], path[256];
            snprintf(subj, sizeof subj, "%s%s", str_of(line, "host", host, sizeof host), str_of(line, "path", path, sizeof path));
        } else if (!str_of(line, "path", subj, sizeof subj)[0]) {
            str_of(line, "command", subj, sizeof subj);
        }
        if (!strcmp(op, "record")) {
            str_of(line, "kind", kind, sizeof kind);
            printf("  recorded  %s::%s %s\n", action, kind, subj);
            continue;
        }
        n++;
        str_of(reply, "verdict", verdict, sizeof verdict);
        str_of(reply, "rule", rule, sizeof rule);
        str_of(reply, "cause", cause, sizeof cause);
        str_of(reply, "message", msg, sizeof msg);
        printf("  %2d %-12s %-34s %-6s rule %s (%s)\n", n, action, subj, !strcmp(verdict, "permit") ? "PERMIT" : "DENY",
               rule, cause);
        if (msg[0]) printf("     message: %s\n", msg);
        if (dlog) {
            if (next_log_line(dlog, &off, &logl, &logcap) == 0) printf("     log: %s\n", logl);
            else { printf("     log: (no decision-log line)\n"); bad++; }
        }
    }
    free(line);
    free(logl);
    close(fd);
    return bad ? 1 : 0;
}
