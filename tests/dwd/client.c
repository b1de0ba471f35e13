/* client.c - a tiny dwd client for tests/dwd/run.sh.
 *   client SOCKET            send each stdin line, print each reply line
 *   client SOCKET --raw N    send stdin verbatim, then print N reply lines
 *   client SOCKET --sndbuf B as the first form with SO_SNDBUF B, and at the end half-close
 *                            and read to the server's EOF (exit 4 on a reset instead)
 * Exits 2 if it cannot connect, 3 if the server closed before replying. */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <signal.h>

static int read_reply(int fd, FILE *out)
{
    char c;
    for (;;) {
        ssize_t n = read(fd, &c, 1);
        if (n <= 0) return -1;
        fputc(c, out);
        if (c == '\n') { fflush(out); return 0; }
    }
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: client SOCKET [--raw N]\n"); return 1; }
    signal(SIGPIPE, SIG_IGN);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", argv[1]);
    int eof_check = argc >= 4 && !strcmp(argv[2], "--sndbuf");
    if (eof_check) {
        int sb = atoi(argv[3]);
        if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sb, sizeof sb) != 0) { perror("SO_SNDBUF"); return 1; }
    }
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { perror("connect"); return 2; }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    if (argc >= 4 && !strcmp(argv[2], "--raw")) {
        int want = atoi(argv[3]);
        while ((n = getline(&line, &cap, stdin)) > 0) if (send_all(fd, line, (size_t)n)) break;
        for (int i = 0; i < want; i++) if (read_reply(fd, stdout)) { free(line); return 3; }
        free(line);
        close(fd);
        return 0;
    }
    while ((n = getline(&line, &cap, stdin)) > 0) {
        if (line[n - 1] != '\n') line[n++] = '\n';   /* getline leaves room for the NUL */
        if (send_all(fd, line, (size_t)n) || read_reply(fd, stdout)) { free(line); return 3; }
    }
    free(line);
    if (eof_check) {
        char c;
        shutdown(fd, SHUT_WR);
        ssize_t r = read(fd, &c, 1);
        if (r != 0) { fprintf(stderr, "client: %s after the last reply, not EOF\n", r < 0 ? strerror(errno) : "a byte"); return 4; }
    }
    close(fd);
    return 0;
}
