/* flood.c - hostile and careless clients for tests/dwd/faults.sh (loopback
 * Unix socket only; every loop bounded; alarm(60) stops it regardless).
 *
 *   flood SOCKET hold IDLE HALF WAIT_MS
 *       open IDLE connections that send nothing and HALF that send half a
 *       request line, then time one {"op":"stats"} on a fresh connection;
 *       then watch the held connections for WAIT_MS and count error lines
 *       and closes.  Prints one line:
 *       "opened=N fresh_ms=M half_errors=H half_closed=C idle_closed=I"
 *       (fresh_ms=-1: the fresh client was not served within 10 s).
 *   flood SOCKET pipeline BYTES WAIT_MS
 *       write up to BYTES of stats requests without ever reading the
 *       replies, time a stats request on a fresh connection meanwhile, then
 *       wait up to WAIT_MS for the server to drop the non-reader.  Prints
 *       "written=N fresh_ms=M dropped=0|1".
 * Exits 0 when the fresh client was served, 1 otherwise. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "wire.h"

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* A stats request on a new connection: its reply time in ms, -1 if none within 10 s. */
static long fresh_stats(const char *path)
{
    long t0 = now_ms();
    int fd = wire_connect(path);
    if (fd < 0) return -1;
    static const char rq[] = "{\"op\":\"stats\"}\n";
    struct pollfd p = { fd, POLLIN, 0 };
    char buf[4096];
    long ms = -1;
    if (wire_send(fd, rq, sizeof rq - 1) == 0 && poll(&p, 1, 10000) == 1 && wire_read_line(fd, buf, sizeof buf) == 0 &&
        !strncmp(buf, "{\"ok\":true,", 11))
        ms = now_ms() - t0;
    close(fd);
    return ms;
}

/* What arrived on fd by now without blocking: 1 an error line, 2 closed, 0 nothing yet. */
static int peek_state(int fd)
{
    char buf[512];
    ssize_t n = recv(fd, buf, sizeof buf - 1, MSG_DONTWAIT);
    if (n > 0) { buf[n] = 0; return strstr(buf, "\"ok\":false") ? 1 : 0; }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) return 2;
    return 0;
}

static int hold(const char *path, int nidle, int nhalf, long wait_ms)
{
    int n = nidle + nhalf, opened = 0;
    int *fds = calloc((size_t)n, sizeof *fds);
    int *state = calloc((size_t)n, sizeof *state);   /* bit 1: error line seen, bit 2: closed */
    if (!fds || !state) return 1;
    static const char half[] = "{\"op\":\"sta";
    for (int i = 0; i < n; i++) {
        fds[i] = wire_connect(path);
        if (fds[i] < 0) continue;
        opened++;
        if (i >= nidle) wire_send(fds[i], half, sizeof half - 1);
    }
    long fresh = fresh_stats(path);
    int half_errors = 0, half_closed = 0, idle_closed = 0;
    long end = now_ms() + wait_ms;
    do {
        for (int i = 0; i < n; i++) {
            if (fds[i] < 0 || (state[i] & 2)) continue;
            int st = peek_state(fds[i]);
            if (st == 1) state[i] |= 1;
            if (st == 2) state[i] |= 2;
        }
        usleep(20000);
    } while (now_ms() < end);
    for (int i = 0; i < n; i++) {
        if (fds[i] < 0) continue;
        if (i >= nidle) { half_errors += (state[i] & 1) != 0; half_closed += (state[i] & 2) != 0; }
        else idle_closed += (state[i] & 2) != 0;
        close(fds[i]);
    }
    printf("opened=%d fresh_ms=%ld half_errors=%d half_closed=%d idle_closed=%d\n", opened, fresh, half_errors, half_closed, idle_closed);
    free(fds);
    free(state);
    return fresh >= 0 ? 0 : 1;
}

static int pipeline(const char *path, long bytes, long wait_ms)
{
    int fd = wire_connect(path);
    if (fd < 0) { printf("cannot connect\n"); return 1; }
    static const char rq[] = "{\"op\":\"stats\"}\n";
    long written = 0, t_end = now_ms() + 5000;
    while (written < bytes && now_ms() < t_end) {   /* until the server stops reading us */
        ssize_t w = send(fd, rq, sizeof rq - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w > 0) { written += w; continue; }
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) break;
        struct pollfd p = { fd, POLLOUT, 0 };
        if (poll(&p, 1, 200) == 0) break;          /* blocked: dwd no longer reads this connection */
    }
    long fresh = fresh_stats(path);
    int dropped = 0;
    long end = now_ms() + wait_ms;
    while (!dropped && now_ms() < end) {
        struct pollfd p = { fd, POLLOUT, 0 };
        if (poll(&p, 1, 100) == 1 && (p.revents & (POLLHUP | POLLERR))) dropped = 1;
        else if (send(fd, "", 0, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno == EPIPE) dropped = 1;
    }
    printf("written=%ld fresh_ms=%ld dropped=%d\n", written, fresh, dropped);
    close(fd);
    return fresh >= 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    alarm(60);
    if (argc == 6 && !strcmp(argv[2], "hold")) return hold(argv[1], atoi(argv[3]), atoi(argv[4]), atol(argv[5]));
    if (argc == 5 && !strcmp(argv[2], "pipeline")) return pipeline(argv[1], atol(argv[3]), atol(argv[4]));
    fprintf(stderr, "usage: flood SOCKET hold IDLE HALF WAIT_MS | flood SOCKET pipeline BYTES WAIT_MS\n");
    return 2;
}
