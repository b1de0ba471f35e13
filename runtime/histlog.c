/* histlog.c - the durable event history (histlog.h for the format and the
 * guarantees).
 *
 * Concurrency.  One mutex `mu` guards the counters and the pending buffer;
 * it is never held across I/O.  Records are encoded into `pend` in seq
 * order under `mu` (enqueue).  Exactly one thread at a time is the leader
 * (`leader`): it swaps `pend` for the spare buffer, drops `mu`, writes the
 * batch with pwrite at the end of the active segment and, if anyone waits
 * for durability, fdatasyncs, then retakes `mu`, publishes written_end /
 * synced_end and broadcasts.  Waiters whose record is not yet covered become
 * the next leader; so while one sync runs, every record enqueued meanwhile
 * queues in `pend` and the next leader covers them all with one sync.
 *
 *   [0, synced_end)    durable
 *   [0, written_end)   in the file (page cache)
 *   [0, next_seq)      enqueued (the rest is in pend / the leader's batch)
 *
 * Under DW_DURABILITY_BATCH a flusher thread syncs every batch_ms (or when
 * signalled after batch_records unsynced records) without leadership, so
 * appenders never wait for it; the active segment's fd only changes in a
 * checkpoint's rotation, which holds leadership and sets `rotating` only to
 * write the records before the switch, the new segment's header (its file,
 * seg.tmp, made beforehand) and rename it: no sync.  The syncs that make
 * the switch durable (settle: old segment, new segment, directory, ACKED)
 * follow outside the leadership, before anything witnesses a record past
 * the switch; a flusher sync in flight on the old segment keeps it open. */
#include "histlog_int.h"
#include "../stdlib/hot.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

/* ================================================================ helpers */

void hl_seg_name(char *buf, size_t n, uint64_t base) { snprintf(buf, n, "seg-%016" PRIx64 ".log", base); }
void hl_ckpt_name(char *buf, size_t n, uint64_t seq) { snprintf(buf, n, "ckpt-%016" PRIx64 ".ckpt", seq); }

void hl_fmt(char *buf, size_t n, const char *f, ...)
{
    if (!buf || !n) return;
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, n, f, ap);
    va_end(ap);
}

int hl_pwrite_all(int fd, const uint8_t *p, size_t n, uint64_t off)
{
    while (n) {
        ssize_t w = pwrite(fd, p, n, (off_t)off);
        if (w < 0) { if (errno == EINTR) continue; return -1; }
        if (w == 0) { errno = ENOSPC; return -1; }
        p += w; n -= (size_t)w; off += (uint64_t)w;
    }
    return 0;
}

int hl_read_all(int fd, uint8_t *p, size_t n)
{
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0) { if (errno == EINTR) continue; return -1; }
        if (r == 0) { errno = EIO; return -1; }
        p += r; n -= (size_t)r;
    }
    return 0;
}

int hl_check_header(const uint8_t *b, size_t size, const char *magic, uint32_t want_len,
                    uint64_t digest, uint32_t *ver_out)
{
    if (size < 16 || memcmp(b, magic, 8) != 0) return HDR_DAMAGED;
    uint32_t ver = dw_le32(b + 8), hl = dw_le32(b + 12);
    *ver_out = ver;
    if (hl < 24 || hl > MAX_HDR || hl > size) return HDR_DAMAGED;
    if (XXH3_64bits(b, hl - 8) != dw_le64(b + hl - 8)) return HDR_DAMAGED;
    if (ver > DW_HISTLOG_VERSION) return HDR_NEWER;
    if (ver < DW_HISTLOG_MIN_VERSION || hl != want_len) return HDR_DAMAGED;
    if (dw_le64(b + 16) != digest) return HDR_SCHEMA;
    return ver == DW_HISTLOG_VERSION ? HDR_OK : HDR_OLDER;
}

/* The writing side of hl_check_header: the common prefix (magic, version,
 * header length, schema digest), then the checksum of everything before the
 * header's last 8 bytes, written once the type-specific fields are in. */
void hl_start_header(uint8_t *h, const char *magic, uint32_t len, uint64_t digest)
{
    memcpy(h, magic, 8);
    dw_put_le32(h + 8, DW_HISTLOG_VERSION);
    dw_put_le32(h + 12, len);
    dw_put_le64(h + 16, digest);
}
void hl_seal_header(uint8_t *h, uint32_t len) { dw_put_le64(h + len - 8, XXH3_64bits(h, len - 8)); }

static int fsync_dir(dw_histlog *log) { return fsync(log->dirfd); }

/* Mutations of the directory after open: through the caller's file
 * operations when it set some (a confined process, runtime/keeper.h), else
 * directly on dirfd. */
static int f_open(dw_histlog *log, const char *name, int flags)
{
    const dw_histlog_fileops *o = log->opt.fileops;
    if (o && o->open) return o->open(o->ctx, name, flags);
    return openat(log->dirfd, name, flags | O_CLOEXEC | O_NOFOLLOW, 0600);
}
static int f_rename(dw_histlog *log, const char *from, const char *to)
{
    const dw_histlog_fileops *o = log->opt.fileops;
    if (o && o->rename) return o->rename(o->ctx, from, to);
    return renameat(log->dirfd, from, log->dirfd, to);
}
static int f_unlink(dw_histlog *log, const char *name)
{
    const dw_histlog_fileops *o = log->opt.fileops;
    if (o && o->unlink) return o->unlink(o->ctx, name);
    return unlinkat(log->dirfd, name, 0);
}

void hl_seg_header(uint8_t h[SEG_HDR], uint64_t digest, uint64_t base, uint64_t prev_ts)
{
    memset(h, 0, SEG_HDR);
    hl_start_header(h, SEG_MAGIC, SEG_HDR, digest);
    dw_put_le64(h + 24, base);
    dw_put_le64(h + 32, prev_ts);
    hl_seal_header(h, SEG_HDR);
}

void hl_gap_record(uint8_t *r, uint64_t seq, uint64_t n, uint64_t ts)
{
    dw_put_le32(r + 8, 8);
    dw_put_le32(r + 12, REC_GAP);
    dw_put_le64(r + 16, seq);
    dw_put_le64(r + 24, ts);
    dw_put_le64(r + REC_HDR, n);
    dw_put_le64(r, XXH3_64bits(r + 8, REC_HDR - 8 + 8));
}

int hl_create_segment(dw_histlog *log, uint64_t base, uint64_t prev_ts)
{
    uint8_t h[SEG_HDR];
    hl_seg_header(h, log->opt.schema_digest, base, prev_ts);
    char name[64];
    hl_seg_name(name, sizeof name, base);
    int fd = f_open(log, "seg.tmp", O_RDWR | O_CREAT | O_TRUNC);
    if (fd < 0) return -1;
    if (hl_pwrite_all(fd, h, SEG_HDR, 0) != 0 || fsync(fd) != 0 ||
        f_rename(log, "seg.tmp", name) != 0 || fsync_dir(log) != 0) {
        int e = errno;
        close(fd);
        f_unlink(log, "seg.tmp");
        errno = e;
        return -1;
    }
    return fd;
}

int hl_segs_push(dw_histlog *log, uint64_t base)
{
    if (log->nsegs == log->segcap) {
        size_t nc = log->segcap ? log->segcap * 2 : 8;
        uint64_t *n = realloc(log->segs, nc * sizeof *n);
        if (!n) return -1;
        log->segs = n; log->segcap = nc;
    }
    log->segs[log->nsegs++] = base;
    return 0;
}

/* Remove segments all of whose records are < keep (the next segment starts
 * at or before keep), oldest first so the survivors stay contiguous. */
int hl_retire_segments(dw_histlog *log, uint64_t keep)
{
    size_t n = 0;
    while (n + 1 < log->nsegs && log->segs[n + 1] <= keep) {
        char name[64];
        hl_seg_name(name, sizeof name, log->segs[n]);
        if (f_unlink(log, name) != 0 && errno != ENOENT) break;
        n++;
    }
    if (!n) return 0;
    memmove(log->segs, log->segs + n, (log->nsegs - n) * sizeof *log->segs);
    log->nsegs -= n;
    return fsync_dir(log);
}

/* ================================================================ appending */

static void set_failed(dw_histlog *log, int e, const char *what)
{
    if (log->failed) return;
    log->failed = e ? e : EIO;
    hl_fmt(log->errmsg, sizeof log->errmsg, "dogwood history: %s failed: %s (the history is unusable until reopened)",
        what, strerror(log->failed));
}

DW_HOT int dw_histlog_enqueue(dw_histlog *log, const void *bytes, size_t len, uint64_t *seq, uint64_t *ts)
{
    if (len > DW_HISTLOG_MAX_RECORD || (len && !bytes)) {
        pthread_mutex_lock(&log->mu);
        hl_fmt(log->errmsg, sizeof log->errmsg, "dogwood history: record of %zu bytes is too large", len);
        pthread_mutex_unlock(&log->mu);
        errno = EMSGSIZE;
        return -1;
    }
    pthread_mutex_lock(&log->mu);
    if (log->failed) { int e = log->failed; pthread_mutex_unlock(&log->mu); errno = e; return -1; }
    size_t need = log->pend_len + REC_HDR + len;
    if (need > log->pend_cap) {
        size_t nc = log->pend_cap ? log->pend_cap : 64 * 1024;
        while (nc < need) nc *= 2;
        uint8_t *n = realloc(log->pend, nc);
        if (!n) {
            hl_fmt(log->errmsg, sizeof log->errmsg, "dogwood history: out of memory");
            pthread_mutex_unlock(&log->mu);
            errno = ENOMEM;
            return -1;
        }
        log->pend = n; log->pend_cap = nc;
    }
    uint64_t t = log->opt.clock(log->opt.clock_ctx);
    if (t <= log->last_ts) t = log->last_ts + 1;
    uint64_t s = log->next_seq++;
    log->last_ts = t;
    uint8_t *r = log->pend + log->pend_len;
    dw_put_le32(r + 8, (uint32_t)len);
    dw_put_le32(r + 12, 0);
    dw_put_le64(r + 16, s);
    dw_put_le64(r + 24, t);
    if (len) memcpy(r + REC_HDR, bytes, len);
    dw_put_le64(r, XXH3_64bits(r + 8, REC_HDR - 8 + len));
    log->pend_len = need;
    log->st.appends++;
    pthread_mutex_unlock(&log->mu);
    if (seq) *seq = s;
    if (ts) *ts = t;
    return 0;
}

/* Settle a rotation (checkpoint): sync the previous segment (records <
 * prev_end), the new one (its header) and the directory (its name), then
 * witness prev_end in ACKED.  A rotation only writes and renames under the
 * leadership; this runs after it, on whichever thread first needs a
 * witness past the switch (the checkpointer itself, the BATCH flusher, a
 * FULL leader), the others waiting for it.  Until it is done a crash can
 * leave the previous segment's tail torn while the new one holds records;
 * recovery (histlog_recover.c, drop_torn_rotation) handles that.  Called and
 * returns with mu held; 0, or -1 with the log failed. */
static int settle(dw_histlog *log)
{
    while (log->prev_fd >= 0) {
        if (log->failed) { errno = log->failed; return -1; }
        /* a flusher sync in flight may still use prev_fd (it started before the switch) */
        if (log->prev_busy || log->sync_active) { pthread_cond_wait(&log->cv, &log->mu); continue; }
        int pfd = log->prev_fd, nfd = log->fd;
        uint64_t end = log->prev_end;
        log->prev_busy = true;
        pthread_mutex_unlock(&log->mu);
        const char *what = "fdatasync";
        int rc = fdatasync(pfd);
        if (rc == 0) rc = fdatasync(nfd);
        if (rc == 0) { what = "the directory's fsync"; rc = fsync_dir(log); }
        if (rc == 0) { what = "the " ACK_NAME " write"; rc = hl_acked_write(log, end, UINT64_MAX); }
        int e = errno;
        pthread_mutex_lock(&log->mu);
        log->prev_busy = false;
        pthread_cond_broadcast(&log->cv);
        if (rc != 0) { set_failed(log, e, what); errno = log->failed; return -1; }
        close(pfd);
        log->prev_fd = -1;
        log->st.syncs++;
        if (end > log->synced_end) {
            log->st.synced_records += end - log->synced_end;
            log->synced_end = end;
        }
    }
    return 0;
}

/* Be the leader for one batch.  Called and returns with mu held. */
static void lead(dw_histlog *log)
{
    log->leader = true;
    if (log->prev_fd >= 0 && log->want_sync_end > log->synced_end && settle(log) != 0) {
        log->leader = false;
        pthread_cond_broadcast(&log->cv);
        return;
    }
    uint8_t *buf = log->pend;
    size_t n = log->pend_len, cap = log->pend_cap;
    log->pend = log->spare; log->pend_cap = log->spare_cap; log->pend_len = 0;
    log->spare = NULL; log->spare_cap = 0;
    uint64_t batch_end = log->next_seq, prev_synced = log->synced_end;
    bool do_sync = log->want_sync_end > log->synced_end;
    int fd = log->fd;
    uint64_t off = log->file_off;
    pthread_mutex_unlock(&log->mu);

    int rc = 0, e = 0;
    const char *what = "write";
    if (n) rc = hl_pwrite_all(fd, buf, n, off);
    if (rc == 0 && do_sync) { what = "fdatasync"; rc = fdatasync(fd); }
    /* the witness before anyone is told: an acknowledged record is always < ACKED's end */
    if (rc == 0 && do_sync) { what = "the " ACK_NAME " write"; rc = hl_acked_write(log, batch_end, UINT64_MAX); }
    if (rc != 0) {
        e = errno;
        if (ftruncate(fd, (off_t)off) != 0) { /* best effort; recovery truncates anyway */ }
    }

    pthread_mutex_lock(&log->mu);
    if (cap > 4u << 20) { free(buf); buf = NULL; cap = 0; }   /* don't hoard a burst's buffer */
    log->spare = buf; log->spare_cap = cap;
    if (rc != 0) {
        set_failed(log, e, what);
    } else {
        log->file_off = off + n;
        log->written_end = batch_end;
        if (n) log->st.writes++;
        if (do_sync) {
            if (batch_end > log->synced_end) log->synced_end = batch_end;
            log->st.syncs++;
            uint64_t covered = batch_end - prev_synced;
            log->st.synced_records += covered;
            if (covered > log->st.max_batch) log->st.max_batch = covered;
        }
    }
    log->leader = false;
    pthread_cond_broadcast(&log->cv);
    if (log->opt.durability == DW_DURABILITY_BATCH &&
        log->written_end - log->synced_end >= log->batch_records)
        pthread_cond_signal(&log->flush_cv);
}

static int drive(dw_histlog *log, uint64_t seq, bool durable)
{
    pthread_mutex_lock(&log->mu);
    if (seq >= log->next_seq) { pthread_mutex_unlock(&log->mu); errno = EINVAL; return -1; }
    if (durable && log->want_sync_end < seq + 1) log->want_sync_end = seq + 1;
    for (;;) {
        if (durable ? log->synced_end > seq : log->written_end > seq) break;
        if (log->failed) { int e = log->failed; pthread_mutex_unlock(&log->mu); errno = e; return -1; }
        if (!log->leader) { lead(log); continue; }
        pthread_cond_wait(&log->cv, &log->mu);
    }
    pthread_mutex_unlock(&log->mu);
    return 0;
}

int dw_histlog_wait(dw_histlog *log, uint64_t seq)
{
    return drive(log, seq, log->opt.durability == DW_DURABILITY_FULL);
}

int dw_histlog_wait_durable(dw_histlog *log, uint64_t seq) { return drive(log, seq, true); }

int dw_histlog_append_ts(dw_histlog *log, const void *bytes, size_t len, uint64_t *seq, uint64_t *ts)
{
    uint64_t s;
    if (dw_histlog_enqueue(log, bytes, len, &s, ts) != 0) return -1;
    if (dw_histlog_wait(log, s) != 0) return -1;
    if (seq) *seq = s;
    return 0;
}

int dw_histlog_append(dw_histlog *log, const void *bytes, size_t len, uint64_t *seq)
{
    return dw_histlog_append_ts(log, bytes, len, seq, NULL);
}

int dw_histlog_sync(dw_histlog *log)
{
    pthread_mutex_lock(&log->mu);
    uint64_t n = log->next_seq, synced = log->synced_end;
    int failed = log->failed;
    pthread_mutex_unlock(&log->mu);
    if (failed) { errno = failed; return -1; }
    if (n == 0 || synced >= n) return 0;
    return drive(log, n - 1, true);
}

void *hl_flusher_main(void *arg)
{
    dw_histlog *log = arg;
    pthread_mutex_lock(&log->mu);
    uint64_t seen_end = log->written_end;   /* written_end when this loop last looked */
    while (!log->stop) {
        struct timespec dl;
        clock_gettime(CLOCK_MONOTONIC, &dl);
        uint64_t ns = (uint64_t)dl.tv_nsec + (uint64_t)log->batch_ms * 1000000u;
        dl.tv_sec += (time_t)(ns / 1000000000u);
        dl.tv_nsec = (long)(ns % 1000000000u);
        while (!log->stop && log->written_end - log->synced_end < log->batch_records &&
               pthread_cond_timedwait(&log->flush_cv, &log->mu, &dl) != ETIMEDOUT) {}
        if (log->stop || log->failed) break;
        /* Records enqueued that nobody wrote since the flusher last looked:
         * their appender does not wait (or not yet), so write them here.
         * While appenders write their own (dwd writes every round), leading
         * here would only make the next wait wait for this thread, which
         * may be off the CPU holding the leadership. */
        if (log->pend_len && !log->leader && log->written_end == seen_end) lead(log);
        seen_end = log->written_end;
        /* a rotation's settling comes first (its witness before ours); it
         * may wait, and a next rotation may start meanwhile */
        for (;;) {
            while (log->rotating && !log->stop) pthread_cond_wait(&log->cv, &log->mu);
            if (log->stop || log->failed || log->prev_fd < 0 || settle(log) != 0) break;
        }
        if (log->stop || log->failed) break;
        if (log->written_end <= log->synced_end) continue;
        log->sync_active = true;
        uint64_t target = log->written_end, prev = log->synced_end;
        int fd = log->fd;
        pthread_mutex_unlock(&log->mu);
        int rc = fdatasync(fd);
        const char *what = "fdatasync";
        if (rc == 0) { what = "the " ACK_NAME " write"; rc = hl_acked_write(log, target, UINT64_MAX); }
        int e = errno;
        pthread_mutex_lock(&log->mu);
        log->sync_active = false;
        if (rc != 0) {
            set_failed(log, e, what);
        } else {
            if (target > log->synced_end) {
                log->st.synced_records += target - log->synced_end;
                if (target - prev > log->st.max_batch) log->st.max_batch = target - prev;
                log->synced_end = target;
            }
            log->st.syncs++;
        }
        pthread_cond_broadcast(&log->cv);
    }
    pthread_mutex_unlock(&log->mu);
    return NULL;
}

/* ================================================================ checkpoints */

static int write_ckpt_file(dw_histlog *log, uint64_t seq, uint64_t keep, uint64_t last_ts,
                           const void *state, size_t len)
{
    uint8_t h[CKPT_HDR] = { 0 };
    hl_start_header(h, CKPT_MAGIC, CKPT_HDR, log->opt.schema_digest);
    dw_put_le64(h + 24, seq);
    dw_put_le64(h + 32, keep);
    dw_put_le64(h + 40, last_ts);
    dw_put_le64(h + 48, len);
    dw_put_le64(h + 56, XXH3_64bits(state, len));
    hl_seal_header(h, CKPT_HDR);
    char name[64];
    hl_ckpt_name(name, sizeof name, seq);
    int fd = f_open(log, "ckpt.tmp", O_WRONLY | O_CREAT | O_TRUNC);
    if (fd < 0) return -1;
    if (hl_pwrite_all(fd, h, CKPT_HDR, 0) != 0 || hl_pwrite_all(fd, state, len, CKPT_HDR) != 0 ||
        fsync(fd) != 0) {
        int e = errno;
        close(fd);
        f_unlink(log, "ckpt.tmp");
        errno = e;
        return -1;
    }
    close(fd);
    if (f_rename(log, "ckpt.tmp", name) != 0 || fsync_dir(log) != 0) {
        int e = errno;
        f_unlink(log, "ckpt.tmp");
        errno = e;
        return -1;
    }
    return 0;
}

/* The next segment's file, made ahead of a rotation and off the leadership
 * (through the keeper when confined: a round trip and a sync appenders no
 * longer wait behind), with room for its base in segs; its header is
 * written at the switch, once the base is known.  A crash leaves seg.tmp,
 * which the next open removes.  0, or -1 with errno. */
static int make_spare(dw_histlog *log)
{
    if (log->nsegs == log->segcap && hl_segs_push(log, 0) == 0) log->nsegs--;
    if (log->nsegs == log->segcap) { errno = ENOMEM; return -1; }
    if (log->spare_fd >= 0) return 0;
    int fd = f_open(log, "seg.tmp", O_RDWR | O_CREAT | O_TRUNC);
    if (fd < 0) return -1;
    if (fsync(fd) != 0) {
        int e = errno;
        close(fd);
        f_unlink(log, "seg.tmp");
        errno = e;
        return -1;
    }
    log->spare_fd = fd;
    return 0;
}

static void drop_spare(dw_histlog *log)
{
    if (log->spare_fd < 0) return;
    close(log->spare_fd);
    log->spare_fd = -1;
    f_unlink(log, "seg.tmp");
}

static int checkpoint(dw_histlog *log, bool at, uint64_t Sc, uint64_t ckpt_ts, const void *state, size_t len,
                      uint64_t keep_from_seq)
{
    if (len && !state) { errno = EINVAL; return -1; }
    pthread_mutex_lock(&log->ckpt_mu);
    /* spare_fd and segs change only here and at open (ckpt_mu) */
    int e = 0, ret = 0;
    bool spare = make_spare(log) == 0;
    if (!spare) e = errno;
    pthread_mutex_lock(&log->mu);
    while (log->leader && !log->failed) pthread_cond_wait(&log->cv, &log->mu);
    if (log->failed) {
        e = log->failed;
        pthread_mutex_unlock(&log->mu);
        pthread_mutex_unlock(&log->ckpt_mu);
        errno = e;
        return -1;
    }
    log->leader = true;
    log->rotating = true;
    uint64_t S = log->next_seq, last_ts = log->last_ts;   /* S: where the new segment starts */
    if (!at) { Sc = S; ckpt_ts = last_ts; }
    if (Sc > S) {
        log->leader = log->rotating = false;
        pthread_cond_broadcast(&log->cv);
        pthread_mutex_unlock(&log->mu);
        pthread_mutex_unlock(&log->ckpt_mu);
        errno = EINVAL;
        return -1;
    }
    uint8_t *buf = log->pend;
    size_t n = log->pend_len, cap = log->pend_cap;
    log->pend = log->spare; log->pend_cap = log->spare_cap; log->pend_len = 0;
    log->spare = NULL; log->spare_cap = 0;
    int fd = log->fd;
    uint64_t off = log->file_off, old_base = log->seg_base;
    bool had_ckpt = log->has_ckpt, rotate = old_base != S;   /* unless the active segment is empty */
    uint64_t old_ckpt = log->ckpt_seq;
    pthread_mutex_unlock(&log->mu);

    /* 1. as the leader, what the switch needs and nothing more: the
     * records < S written to the old segment, the new one's header written
     * and its name given (no record >= S may reach the old one); the syncs
     * come after (settle), while appends go on */
    int rc = n ? hl_pwrite_all(fd, buf, n, off) : 0;
    int we = errno;
    bool switched = false;
    if (rc == 0 && rotate && spare) {
        uint8_t h[SEG_HDR];
        char name[64];
        hl_seg_header(h, log->opt.schema_digest, S, last_ts);
        hl_seg_name(name, sizeof name, S);
        switched = hl_pwrite_all(log->spare_fd, h, SEG_HDR, 0) == 0 && f_rename(log, "seg.tmp", name) == 0;
        if (!switched) e = errno;
    }
    pthread_mutex_lock(&log->mu);
    log->spare = buf; log->spare_cap = cap;
    if (rc != 0) {
        set_failed(log, we, "write");
        log->leader = log->rotating = false;
        pthread_cond_broadcast(&log->cv);
        pthread_mutex_unlock(&log->mu);
        pthread_mutex_unlock(&log->ckpt_mu);
        errno = we;
        return -1;
    }
    log->file_off = off + n;
    log->written_end = S;
    if (n) log->st.writes++;
    if (switched) {
        log->segs[log->nsegs++] = S;       /* room made by make_spare */
        log->prev_fd = fd;
        log->prev_end = S;
        log->fd = log->spare_fd;
        log->spare_fd = -1;
        log->seg_base = S;
        log->file_off = SEG_HDR;
    } else if (rotate) {
        /* the old segment stays active; records >= S simply continue in it */
        hl_fmt(log->errmsg, sizeof log->errmsg, "dogwood history: cannot start a new segment: %s", strerror(e));
        ret = -1;
    }
    log->leader = log->rotating = false;
    pthread_cond_broadcast(&log->cv);
    /* 2. every record < S durable before the checkpoint claims them: the
     * switch settled (unless a flusher or a leader did it meanwhile), or,
     * with no switch, a sync of the active segment */
    rc = switched ? settle(log) : 0;
    pthread_mutex_unlock(&log->mu);
    if (!switched) {
        if (log->spare_fd >= 0 && rotate) drop_spare(log);   /* a failed header write or rename */
        if (S && dw_histlog_wait_durable(log, S - 1) != 0) rc = -1;
    }
    if (rc != 0) {
        pthread_mutex_unlock(&log->ckpt_mu);
        return -1;                          /* the log failed (errno, errmsg) */
    }

    /* 3. the checkpoint, atomically (also when no new segment could be
     * started): records < S are durable, and a crash before it leaves the
     * previous checkpoint and every segment */
    if (keep_from_seq > Sc) keep_from_seq = Sc;
    bool written = false;
    if (write_ckpt_file(log, Sc, keep_from_seq, ckpt_ts, state, len) != 0) {
        e = errno;
        pthread_mutex_lock(&log->mu);
        hl_fmt(log->errmsg, sizeof log->errmsg, "dogwood history: checkpoint failed: %s", strerror(e));
        pthread_mutex_unlock(&log->mu);
        ret = -1;
    } else {
        written = true;
        pthread_mutex_lock(&log->mu);
        log->has_ckpt = true;
        log->ckpt_seq = Sc;
        pthread_mutex_unlock(&log->mu);
    }
    if (written && hl_acked_write(log, 0, keep_from_seq) != 0) {
        /* retiring segments the witness does not know are retired would
         * look like a loss at the next open: keep them */
        e = errno;
        pthread_mutex_lock(&log->mu);
        set_failed(log, e, "the " ACK_NAME " write");
        pthread_mutex_unlock(&log->mu);
        ret = -1;
        written = false;
    }
    if (written) {
        /* 4. retention: the older checkpoint, segments wholly before keep_from */
        if (had_ckpt && old_ckpt != Sc) {
            char name[64];
            hl_ckpt_name(name, sizeof name, old_ckpt);
            f_unlink(log, name);
        }
        hl_retire_segments(log, keep_from_seq);
    }
    pthread_mutex_unlock(&log->ckpt_mu);
    if (ret) errno = e;
    return ret;
}

int dw_histlog_checkpoint(dw_histlog *log, const void *state, size_t len, uint64_t keep_from_seq)
{
    return checkpoint(log, false, 0, 0, state, len, keep_from_seq);
}

int dw_histlog_checkpoint_at(dw_histlog *log, uint64_t seq, uint64_t last_ts, const void *state, size_t len,
                             uint64_t keep_from_seq)
{
    return checkpoint(log, true, seq, last_ts, state, len, keep_from_seq);
}

/* ================================================================ misc */

uint64_t dw_histlog_next_seq(dw_histlog *log)
{
    pthread_mutex_lock(&log->mu);
    uint64_t n = log->next_seq;
    pthread_mutex_unlock(&log->mu);
    return n;
}

uint64_t dw_histlog_durable_end(dw_histlog *log)
{
    pthread_mutex_lock(&log->mu);
    uint64_t n = log->synced_end;
    pthread_mutex_unlock(&log->mu);
    return n;
}

const char *dw_histlog_error(dw_histlog *log) { return log->errmsg; }

bool dw_histlog_failed(dw_histlog *log)
{
    pthread_mutex_lock(&log->mu);
    bool f = log->failed != 0;
    pthread_mutex_unlock(&log->mu);
    return f;
}

void dw_histlog_get_stats(dw_histlog *log, dw_histlog_stats *st)
{
    pthread_mutex_lock(&log->mu);
    *st = log->st;
    pthread_mutex_unlock(&log->mu);
}

int dw_histlog_close(dw_histlog *log)
{
    if (!log) return 0;
    if (log->has_flusher) {
        pthread_mutex_lock(&log->mu);
        log->stop = true;
        pthread_cond_signal(&log->flush_cv);
        pthread_cond_broadcast(&log->cv);
        pthread_mutex_unlock(&log->mu);
        pthread_join(log->flusher, NULL);
    }
    int rc = 0;
    pthread_mutex_lock(&log->mu);
    uint64_t n = log->next_seq;
    bool failed = log->failed != 0;
    pthread_mutex_unlock(&log->mu);
    if (failed) rc = -1;
    else if (n) rc = drive(log, n - 1, log->opt.durability != DW_DURABILITY_NONE);
    if (log->fd >= 0) close(log->fd);
    if (log->prev_fd >= 0) close(log->prev_fd);    /* a settle that failed */
    if (log->spare_fd >= 0) close(log->spare_fd);
    if (log->ackfd >= 0) close(log->ackfd);
    close(log->lockfd);
    close(log->dirfd);
    pthread_mutex_destroy(&log->mu);
    pthread_mutex_destroy(&log->ckpt_mu);
    pthread_mutex_destroy(&log->ack_mu);
    pthread_cond_destroy(&log->cv);
    pthread_cond_destroy(&log->flush_cv);
    free(log->pend);
    free(log->spare);
    free(log->segs);
    free(log);
    return rc;
}
