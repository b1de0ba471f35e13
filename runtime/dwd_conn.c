/* dwd_conn.c - a dwd connection's socket I/O (see dwd_conn.h). */
#include "dwd_conn.h"
#include "../stdlib/hot.h"
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define IN_EVENTS (EPOLLIN | EPOLLRDHUP | EPOLLET)

dwd_conn *dwd_conn_new(int epfd, int fd, int64_t now)
{
    dwd_conn *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->fd = fd;
    c->last_active = c->out_since = now;
    int zero = 0;   /* without it every peek starts at the first unconsumed byte */
    c->peek_off = setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &zero, sizeof zero) == 0;
    struct epoll_event ev = { .events = IN_EVENTS, .data.ptr = c };
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) { free(c); return NULL; }
    c->readable = true;   /* a request may have come with the connection */
    return c;
}

size_t dwd_conn_pending(const dwd_conn *c) { return c->out.len - c->out_off; }

void dwd_conn_consume(dwd_conn *c)
{
    static char sink[65536];   /* the serving thread's; the bytes are dropped */
    while (c->unconsumed) {
        ssize_t n = recv(c->fd, sink, c->unconsumed < sizeof sink ? c->unconsumed : sizeof sink, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {            /* they were queued: the socket is broken */
            c->unconsumed = 0;
            c->out_off = c->out.len = 0;
            c->closing = true;
            return;
        }
        c->unconsumed -= (size_t)n < c->unconsumed ? (size_t)n : c->unconsumed;
    }
}

void dwd_conn_free(int epfd, dwd_conn *c)
{
    dwd_conn_consume(c);   /* unread bytes would turn the client's EOF into ECONNRESET */
    /* out of the set before the close: were the descriptor shared, the close
     * alone would leave it there, reporting events for a freed connection */
    epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    dwd_buf_free(&c->in);
    dwd_buf_free(&c->out);
    free(c);
}

void dwd_conn_close_with(dwd_conn *c, const char *why)
{
    if (why) {
        if (!dwd_conn_pending(c)) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            c->out_since = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
        }
        dwd_reply_error(&c->out, why);
    }
    c->closing = true;
    c->in.len = c->scanned = 0;
}

DW_HOT void dwd_conn_fill(dwd_conn *c, size_t cap, int64_t now)
{
    char buf[65536];
    if (!c->peek_off) dwd_conn_consume(c);   /* a peek would read them again */
    if (!c->in.len) c->line_since = now;
    while (c->in.len < cap && !c->closing) {
        size_t want = cap - c->in.len < sizeof buf ? cap - c->in.len : sizeof buf;
        ssize_t n = recv(c->fd, buf, want, MSG_DONTWAIT | MSG_PEEK);
        if (n == 0) { c->eof = true; c->readable = false; break; }
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) c->closing = true;
            c->readable = false;
            break;
        }
        dwd_buf_put(&c->in, buf, (size_t)n);
        if (!c->unconsumed) c->unconsumed_since = now;
        c->unconsumed += (size_t)n;
        if (c->in.oom) { dwd_conn_close_with(c, "out of memory: closing the connection"); break; }
        if ((size_t)n < want && !c->hup) { c->readable = false; break; }   /* read to the end: the next bytes bring an event */
        if (!c->peek_off) dwd_conn_consume(c);
    }
}

/* EPOLLOUT only while replies wait: in the set for good, every reply the
 * client reads would wake the server. */
static void watch_out(int epfd, dwd_conn *c, bool on)
{
    if (c->watch_out == on) return;
    struct epoll_event ev = { .events = IN_EVENTS | (on ? EPOLLOUT : 0), .data.ptr = c };
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0) c->watch_out = on;
    else if (on) { c->out_off = c->out.len = 0; c->closing = true; }   /* could never be told when to send */
}

DW_HOT void dwd_conn_flush(int epfd, dwd_conn *c, int64_t now)
{
    bool waiting = false;
    while (c->out_off < c->out.len) {
        ssize_t n = send(c->fd, c->out.p + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) { c->out_off = c->out.len = 0; c->closing = true; }
            else waiting = true;
            break;
        }
        c->out_off += (size_t)n;
        c->out_since = now;
    }
    watch_out(epfd, c, waiting);
    /* the replies are out: consuming now wakes nobody who has no answer */
    if (c->unconsumed && (!c->peek_off || c->closing || c->unconsumed >= DWD_CONSUME_BYTES ||
                          now - c->unconsumed_since >= DWD_CONSUME_MS))
        dwd_conn_consume(c);
    if (waiting) return;
    c->out.len = c->out_off = 0;
    if (c->out.cap > (64u << 10)) dwd_buf_free(&c->out);   /* a burst's buffer is not kept */
    if (c->closing) shutdown(c->fd, SHUT_WR);
}
