/* dwd_dlog.h - dwd's decision-log writer (docs/DWD.md, "Decision log"). */
#ifndef DW_DWD_DLOG_H
#define DW_DWD_DLOG_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "dwd_protocol.h"

/* The decision log's writer (box.md §10.1: file I/O off the decision path).
 * The serving thread appends each round's lines to a bounded queue (one
 * short critical section) after the round's replies are sent; the writer
 * thread swaps the queue out and writes it.  A full queue drops the round's
 * lines and counts them (the serving thread never waits for the disk). */
typedef struct dwd_dlog {
    int fd;
    pthread_t th;
    bool running;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    dwd_buf q;                 /* queued lines */
    uint64_t qlines;
    size_t cap;                /* bytes */
    bool stop;
    uint64_t written, dropped, write_errors;
} dwd_dlog;

/* Start the writer thread on w->fd (w->cap 0: 64 MiB).  0, or -1. */
int dwd_dlog_start(dwd_dlog *w);
/* Queue lines (never blocks on I/O; drops them, counted, when the queue is
 * full); before dwd_dlog_start, writes them at once. */
void dwd_dlog_push(dwd_dlog *w, const dwd_buf *b, uint64_t lines);
/* Lines written and dropped, failed writes (0s before the thread starts). */
void dwd_dlog_counts(dwd_dlog *w, uint64_t *written, uint64_t *dropped, uint64_t *write_errors);
/* Drain the queue, stop the thread, close w->fd. */
void dwd_dlog_stop(dwd_dlog *w);

#endif
