/* dwd_conn.h - one client connection of dwd: its buffers and its socket I/O
 * (docs/DWD.md, "Durability" and "Connections").
 *
 * Requests are read with MSG_PEEK and taken off the socket only after their
 * replies are sent: a Unix socket wakes a client blocked in read() when the
 * server consumes what it sent, and consumed before the reply exists the
 * client would wake for nothing.  With SO_PEEK_OFF each peek reads only
 * what is new, so the consuming is deferred and batched: after a flush,
 * once DWD_CONSUME_BYTES are waiting or the oldest has waited
 * DWD_CONSUME_MS, before the connection is closed, and (the caller's job,
 * dwd_conn_consume) when the server has had no input for DWD_IDLE_MS.
 * Readiness comes from an edge-triggered epoll set: `readable` remembers
 * input not yet read to its end (a full buffer, or reading paused by the
 * limits); a short read ends it, unless the event said the peer shut down
 * (`hup`): bytes and EOF can come in one event, and no other follows. */
#ifndef DW_DWD_CONN_H
#define DW_DWD_CONN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "dwd_protocol.h"

/* Consumed requests wake their client when it sleeps in read(): consuming
 * right after a reply is harmless, but a client that already sent its next
 * request and sleeps again would wake for nothing, so bytes are consumed in
 * batches.  The bound keeps what a client's send buffer holds unconsumed
 * small (each queued send is charged to the client until consumed). */
#define DWD_CONSUME_BYTES 4096
#define DWD_CONSUME_MS 10
/* A client whose send buffer is that small blocks in write() until then: when
 * nothing comes for this long, every connection's bytes are consumed. */
#define DWD_IDLE_MS 2

typedef struct dwd_conn {
    int fd;
    dwd_buf in, out;
    size_t out_off;
    size_t scanned;            /* in.p[0, scanned) holds no newline */
    size_t unconsumed;         /* bytes peeked (buffered in `in` or answered) still queued on the socket */
    size_t round_mark;         /* out.len when this round began */
    uint32_t round_lines;      /* requests answered this round */
    bool peek_off;             /* SO_PEEK_OFF is set: a peek starts after what was peeked before */
    bool readable;             /* input reported and not read to its end */
    bool hup;                  /* the peer shut down or failed (EPOLLRDHUP, EPOLLHUP, EPOLLERR): read to EOF */
    bool watch_out;            /* EPOLLOUT is in the epoll set (replies wait for the client) */
    bool eof;                  /* the client sent its last byte */
    bool closing;              /* close once out is flushed */
    int64_t last_active;       /* monotonic ms: accepted, or its last complete request */
    int64_t line_since;        /* the buffered partial line began at this time */
    int64_t out_since;         /* replies queued (or last sent) at this time */
    int64_t unconsumed_since;  /* monotonic ms: the oldest unconsumed byte was peeked */
} dwd_conn;

/* A connection on an accepted descriptor, in epfd's set (edge-triggered
 * input), or NULL (out of memory, or epoll refused it: fd is not closed). */
dwd_conn *dwd_conn_new(int epfd, int fd, int64_t now);
/* Consumes what is left (the client reads its replies, then EOF), closes. */
void dwd_conn_free(int epfd, dwd_conn *c);
size_t dwd_conn_pending(const dwd_conn *c);
/* Stop serving c: queue a last error line (why, if not NULL), close once it is sent. */
void dwd_conn_close_with(dwd_conn *c, const char *why);
/* Read what is there, at most up to cap bytes buffered (peeked, not consumed). */
void dwd_conn_fill(dwd_conn *c, size_t cap, int64_t now);
/* Send what is queued (EPOLLOUT in the set while some must wait), then
 * consume the answered requests when a batch is due or c is closing. */
void dwd_conn_flush(int epfd, dwd_conn *c, int64_t now);
/* Take every peeked byte off the socket now. */
void dwd_conn_consume(dwd_conn *c);

#endif
