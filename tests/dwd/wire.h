/* wire.h - the client side of dwd's socket, for the test and bench programs
 * (tests/dwd/demo_client.c, tests/bench/dwd_load.c): connect, write all, read one line. */
#ifndef DWD_TEST_WIRE_H
#define DWD_TEST_WIRE_H
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

/* a connected socket to dwd at path, or -1 */
static inline int wire_connect(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

static inline int wire_send(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* one reply line without its LF into buf (truncated to cap - 1); -1 at EOF or error */
static inline int wire_read_line(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    for (;;) {
        char c;
        ssize_t r = read(fd, &c, 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        if (c == '\n') { buf[n] = 0; return 0; }
        if (n + 1 < cap) buf[n++] = c;
    }
}
#endif
