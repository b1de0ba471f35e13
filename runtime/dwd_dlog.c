/* dwd_dlog.c - dwd's decision-log writer (see dwd_dlog.h). */
#include "dwd_dlog.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void write_all(dwd_dlog *w, const char *p, size_t n)
{
    while (n) {
        ssize_t r = write(w->fd, p, n);
        if (r < 0) {
            if (errno == EINTR) continue;
            fprintf(stderr, "dwd: decision log write failed: %s\n", strerror(errno));
            w->write_errors++;
            return;
        }
        p += r;
        n -= (size_t)r;
    }
}

static void *dlog_main(void *arg)
{
    dwd_dlog *w = arg;
    dwd_buf mine = { 0 };
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->stop && !w->q.len) pthread_cond_wait(&w->cv, &w->mu);
        if (!w->q.len && w->stop) break;
        dwd_buf t = w->q;          /* swap: the queue keeps the empty buffer */
        w->q = mine;
        w->q.len = 0;
        uint64_t lines = w->qlines;
        w->qlines = 0;
        pthread_mutex_unlock(&w->mu);
        write_all(w, t.p, t.len);
        mine = t;
        if (mine.cap > (4u << 20)) dwd_buf_free(&mine);   /* don't hoard a burst's buffer */
        pthread_mutex_lock(&w->mu);
        w->written += lines;
    }
    pthread_mutex_unlock(&w->mu);
    dwd_buf_free(&mine);
    return NULL;
}

int dwd_dlog_start(dwd_dlog *w)
{
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (!w->cap) w->cap = 64u << 20;
    if (pthread_create(&w->th, NULL, dlog_main, w) != 0) return -1;
    w->running = true;
    return 0;
}

void dwd_dlog_push(dwd_dlog *w, const dwd_buf *b, uint64_t lines)
{
    if (w->fd < 0 || !b->len) return;
    if (!w->running) { write_all(w, b->p, b->len); w->written += lines; return; }   /* before the thread starts */
    pthread_mutex_lock(&w->mu);
    if (b->oom || w->q.len + b->len > w->cap) w->dropped += lines;
    else {
        dwd_buf_put(&w->q, b->p, b->len);
        if (w->q.oom) { w->q.oom = false; w->q.len = 0; w->dropped += lines + w->qlines; w->qlines = 0; }
        else w->qlines += lines;
    }
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void dwd_dlog_stop(dwd_dlog *w)
{
    if (w->running) {
        pthread_mutex_lock(&w->mu);
        w->stop = true;
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->mu);
        pthread_join(w->th, NULL);
        w->running = false;
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
    }
    dwd_buf_free(&w->q);
    if (w->fd >= 0) close(w->fd);
    w->fd = -1;
}


void dwd_dlog_counts(dwd_dlog *w, uint64_t *written, uint64_t *dropped, uint64_t *write_errors)
{
    *written = *dropped = *write_errors = 0;
    if (!w->running) return;
    pthread_mutex_lock(&w->mu);
    *written = w->written;
    *dropped = w->dropped;
    *write_errors = w->write_errors;
    pthread_mutex_unlock(&w->mu);
}
