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
 * checkpoint, which holds leadership, sets `rotating` and waits for an
 * in-flight flusher sync first. */
#include "histlog.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#define SEG_MAGIC "DWHIST\r\n"
#define CKPT_MAGIC "DWCKPT\r\n"
#define SEG_HDR 48u
#define CKPT_HDR 72u
#define REC_HDR 32u
#define MAX_HDR 4096u

struct dw_histlog {
    int dirfd, lockfd;
    dw_histlog_options opt;
    uint32_t batch_ms, batch_records;

    pthread_mutex_t mu;
    pthread_cond_t cv;          /* progress: written/synced/leader/failed */
    pthread_cond_t flush_cv;    /* wakes the BATCH flusher */
    pthread_mutex_t ckpt_mu;    /* serialises checkpoints */

    uint64_t next_seq, last_ts;
    uint64_t written_end, synced_end, want_sync_end;
    uint8_t *pend; size_t pend_len, pend_cap;
    uint8_t *spare; size_t spare_cap;
    bool leader, rotating, sync_active, stop;
    int failed;                 /* sticky errno, 0 = healthy */
    char errmsg[256];

    int fd;                     /* active segment */
    uint64_t seg_base, file_off;
    uint64_t *segs; size_t nsegs, segcap;   /* bases of kept segments, ascending */
    bool has_ckpt; uint64_t ckpt_seq;

    pthread_t flusher; bool has_flusher;
    dw_histlog_stats st;
};

/* ================================================================ helpers */

static void put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static void put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static uint32_t get32(const uint8_t *p) { uint32_t v = 0; for (int i = 3; i >= 0; i--) v = v << 8 | p[i]; return v; }
static uint64_t get64(const uint8_t *p) { uint64_t v = 0; for (int i = 7; i >= 0; i--) v = v << 8 | p[i]; return v; }

static void seg_name(char *buf, size_t n, uint64_t base) { snprintf(buf, n, "seg-%016" PRIx64 ".log", base); }
static void ckpt_name(char *buf, size_t n, uint64_t seq) { snprintf(buf, n, "ckpt-%016" PRIx64 ".ckpt", seq); }

static uint64_t default_clock(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void fmt(char *buf, size_t n, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *buf, size_t n, const char *f, ...)
{
    if (!buf || !n) return;
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, n, f, ap);
    va_end(ap);
}

static void note(dw_histlog_recovery *rec, const char *f, ...) __attribute__((format(printf, 2, 3)));
static void note(dw_histlog_recovery *rec, const char *f, ...)
{
    size_t used = strlen(rec->note);
    if (used + 3 >= sizeof rec->note) return;
    if (used) { strcpy(rec->note + used, "; "); used += 2; }
    va_list ap;
    va_start(ap, f);
    vsnprintf(rec->note + used, sizeof rec->note - used, f, ap);
    va_end(ap);
}

static int pwrite_all(int fd, const uint8_t *p, size_t n, uint64_t off)
{
    while (n) {
        ssize_t w = pwrite(fd, p, n, (off_t)off);
        if (w < 0) { if (errno == EINTR) continue; return -1; }
        if (w == 0) { errno = ENOSPC; return -1; }
        p += w; n -= (size_t)w; off += (uint64_t)w;
    }
    return 0;
}

static int read_all(int fd, uint8_t *p, size_t n)
{
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0) { if (errno == EINTR) continue; return -1; }
        if (r == 0) { errno = EIO; return -1; }
        p += r; n -= (size_t)r;
    }
    return 0;
}

/* Header verdicts. */
enum { HDR_OK, HDR_DAMAGED, HDR_NEWER, HDR_SCHEMA };

static int check_header(const uint8_t *b, size_t size, const char *magic, uint32_t want_len,
                        uint64_t digest, uint32_t *ver_out)
{
    if (size < 16 || memcmp(b, magic, 8) != 0) return HDR_DAMAGED;
    uint32_t ver = get32(b + 8), hl = get32(b + 12);
    *ver_out = ver;
    if (hl < 24 || hl > MAX_HDR || hl > size) return HDR_DAMAGED;
    if (XXH3_64bits(b, hl - 8) != get64(b + hl - 8)) return HDR_DAMAGED;
    if (ver > DW_HISTLOG_VERSION) return HDR_NEWER;
    if (ver != DW_HISTLOG_VERSION || hl != want_len) return HDR_DAMAGED;
    if (get64(b + 16) != digest) return HDR_SCHEMA;
    return HDR_OK;
}

/* The writing side of check_header: the common prefix (magic, version,
 * header length, schema digest), then the checksum of everything before the
 * header's last 8 bytes, written once the type-specific fields are in. */
static void start_header(uint8_t *h, const char *magic, uint32_t len, uint64_t digest)
{
    memcpy(h, magic, 8);
    put32(h + 8, DW_HISTLOG_VERSION);
    put32(h + 12, len);
    put64(h + 16, digest);
}
static void seal_header(uint8_t *h, uint32_t len) { put64(h + len - 8, XXH3_64bits(h, len - 8)); }

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

/* Create segment `base` (temp + fsync + rename + fsync dir); returns its fd. */
static int create_segment(dw_histlog *log, uint64_t base, uint64_t prev_ts)
{
    uint8_t h[SEG_HDR] = { 0 };
    start_header(h, SEG_MAGIC, SEG_HDR, log->opt.schema_digest);
    put64(h + 24, base);
    put64(h + 32, prev_ts);
    seal_header(h, SEG_HDR);
    char name[64];
    seg_name(name, sizeof name, base);
    int fd = f_open(log, "seg.tmp", O_RDWR | O_CREAT | O_TRUNC);
    if (fd < 0) return -1;
    if (pwrite_all(fd, h, SEG_HDR, 0) != 0 || fsync(fd) != 0 ||
        f_rename(log, "seg.tmp", name) != 0 || fsync_dir(log) != 0) {
        int e = errno;
        close(fd);
        f_unlink(log, "seg.tmp");
        errno = e;
        return -1;
    }
    return fd;
}

static int segs_push(dw_histlog *log, uint64_t base)
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
static int retire_segments(dw_histlog *log, uint64_t keep)
{
    size_t n = 0;
    while (n + 1 < log->nsegs && log->segs[n + 1] <= keep) {
        char name[64];
        seg_name(name, sizeof name, log->segs[n]);
        if (f_unlink(log, name) != 0 && errno != ENOENT) break;
        n++;
    }
    if (!n) return 0;
    memmove(log->segs, log->segs + n, (log->nsegs - n) * sizeof *log->segs);
    log->nsegs -= n;
    return fsync_dir(log);
}

/* ================================================================ recovery */

typedef struct seg_file { uint64_t base; uint64_t size; int hdr; } seg_file;
typedef struct ckpt_file { uint64_t seq; } ckpt_file;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int parse_name(const char *s, const char *pre, const char *suf, uint64_t *out)
{
    size_t pl = strlen(pre), sl = strlen(suf), n = strlen(s);
    if (n != pl + 16 + sl || strncmp(s, pre, pl) != 0 || strcmp(s + pl + 16, suf) != 0) return 0;
    uint64_t v = 0;
    for (size_t i = pl; i < pl + 16; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return 0;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return 1;
}

/* Load checkpoint `seq`: HDR_OK with *state (malloc'd) or a verdict. */
static int load_ckpt(dw_histlog *log, uint64_t seq, uint8_t **state, uint64_t *len,
                     uint64_t *keep, uint64_t *last_ts, uint32_t *ver, int *ioerr)
{
    char name[64];
    ckpt_name(name, sizeof name, seq);
    *state = NULL;
    *ioerr = 0;
    int fd = openat(log->dirfd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) { *ioerr = errno; return HDR_DAMAGED; }
    struct stat sb;
    if (fstat(fd, &sb) != 0) { *ioerr = errno; close(fd); return HDR_DAMAGED; }
    size_t size = (size_t)sb.st_size;
    uint8_t h[MAX_HDR];
    size_t hn = size < MAX_HDR ? size : MAX_HDR;
    if (read_all(fd, h, hn) != 0) { *ioerr = errno; close(fd); return HDR_DAMAGED; }
    int v = check_header(h, hn, CKPT_MAGIC, CKPT_HDR, log->opt.schema_digest, ver);
    if (v != HDR_OK) { close(fd); return v; }
    uint64_t slen = get64(h + 48);
    if (get64(h + 24) != seq || slen != size - CKPT_HDR || get64(h + 32) > seq) { close(fd); return HDR_DAMAGED; }
    uint8_t *buf = malloc(slen ? slen : 1);
    if (!buf) { *ioerr = ENOMEM; close(fd); return HDR_DAMAGED; }
    if (pread(fd, buf, slen, CKPT_HDR) != (ssize_t)slen) { *ioerr = errno ? errno : EIO; free(buf); close(fd); return HDR_DAMAGED; }
    close(fd);
    if (XXH3_64bits(buf, slen) != get64(h + 56)) { free(buf); return HDR_DAMAGED; }
    *state = buf; *len = slen;
    *keep = get64(h + 32);
    *last_ts = get64(h + 40);
    return HDR_OK;
}

typedef struct scan_result {
    uint64_t end;        /* seq after the last valid record */
    uint64_t last_ts;
    uint64_t valid_off;  /* file offset after the last valid record */
    bool damaged;
} scan_result;

/* Scan one segment (header already verified), delivering records >= from. */
static int scan_segment(dw_histlog *log, uint64_t base, const uint8_t *m, uint64_t size,
                        uint64_t from, uint64_t last_ts, dw_histlog_recovery *rec,
                        scan_result *out, char *err, size_t errlen)
{
    uint64_t off = SEG_HDR, seq = base;
    uint64_t pts = get64(m + 32);
    if (pts > last_ts) last_ts = pts;
    for (;;) {
        if (size - off < REC_HDR) break;
        const uint8_t *r = m + off;
        uint32_t len = get32(r + 8);
        if (len > DW_HISTLOG_MAX_RECORD || size - off - REC_HDR < len) break;
        if (XXH3_64bits(r + 8, REC_HDR - 8 + (size_t)len) != get64(r)) break;
        if (get32(r + 12) != 0 || get64(r + 16) != seq) break;
        uint64_t ts = get64(r + 24);
        if (ts <= last_ts) break;        /* timestamps strictly increase (Q17) */
        if (seq >= from) {
            if (log->opt.on_record && log->opt.on_record(log->opt.cb_ctx, seq, ts, r + REC_HDR, len) != 0) {
                fmt(err, errlen, "dogwood history: recovery callback failed at record %" PRIu64, seq);
                return -1;
            }
            if (rec->records == 0) rec->first_seq = seq;
            rec->records++;
        }
        last_ts = ts;
        seq++;
        off += REC_HDR + len;
    }
    out->end = seq;
    out->last_ts = last_ts;
    out->valid_off = off;
    out->damaged = off != size;
    return 0;
}

static void *flusher_main(void *arg);

dw_histlog *dw_histlog_open(const char *dir, const dw_histlog_options *opt,
                            dw_histlog_recovery *rec_out, char *err, size_t errlen)
{
    dw_histlog_recovery rec_local;
    dw_histlog_recovery *rec = rec_out ? rec_out : &rec_local;
    memset(rec, 0, sizeof *rec);
    if (err && errlen) err[0] = 0;
    if (!dir || !opt || opt->durability > DW_DURABILITY_NONE) {
        fmt(err, errlen, "dogwood history: invalid arguments");
        errno = EINVAL;
        return NULL;
    }
    dw_histlog *log = calloc(1, sizeof *log);
    if (!log) { fmt(err, errlen, "dogwood history: out of memory"); return NULL; }
    log->opt = *opt;
    if (!log->opt.clock) log->opt.clock = default_clock;
    log->batch_ms = opt->batch_ms ? opt->batch_ms : 5;
    log->batch_records = opt->batch_records ? opt->batch_records : 256;
    log->fd = log->lockfd = log->dirfd = -1;
    pthread_mutex_init(&log->mu, NULL);
    pthread_mutex_init(&log->ckpt_mu, NULL);
    pthread_cond_init(&log->cv, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&log->flush_cv, &ca);
    pthread_condattr_destroy(&ca);

    seg_file *segs = NULL; size_t nseg = 0, segcap = 0;
    uint64_t *ckpts = NULL; size_t nck = 0, ckcap = 0;
    uint8_t *state = NULL;
    DIR *d = NULL;

    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        fmt(err, errlen, "dogwood history: cannot create %s: %s", dir, strerror(errno));
        goto fail;
    }
    log->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (log->dirfd < 0) { fmt(err, errlen, "dogwood history: cannot open %s: %s", dir, strerror(errno)); goto fail; }
    log->lockfd = openat(log->dirfd, "LOCK", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (log->lockfd < 0) { fmt(err, errlen, "dogwood history: cannot create %s/LOCK: %s", dir, strerror(errno)); goto fail; }
    if (flock(log->lockfd, LOCK_EX | LOCK_NB) != 0) {
        fmt(err, errlen, "dogwood history: %s is in use by another process", dir);
        goto fail;
    }

    /* ---- inventory */
    int dfd = dup(log->dirfd);
    if (dfd < 0 || !(d = fdopendir(dfd))) {
        if (dfd >= 0) close(dfd);
        fmt(err, errlen, "dogwood history: cannot list %s: %s", dir, strerror(errno));
        goto fail;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        uint64_t v;
        size_t nl = strlen(de->d_name);
        if (nl > 4 && strcmp(de->d_name + nl - 4, ".tmp") == 0) {
            unlinkat(log->dirfd, de->d_name, 0);
        } else if (parse_name(de->d_name, "seg-", ".log", &v)) {
            if (nseg == segcap) {
                segcap = segcap ? segcap * 2 : 8;
                seg_file *n = realloc(segs, segcap * sizeof *n);
                if (!n) { fmt(err, errlen, "dogwood history: out of memory"); goto fail; }
                segs = n;
            }
            segs[nseg++] = (seg_file){ v, 0, HDR_DAMAGED };
        } else if (parse_name(de->d_name, "ckpt-", ".ckpt", &v)) {
            if (nck == ckcap) {
                ckcap = ckcap ? ckcap * 2 : 4;
                uint64_t *n = realloc(ckpts, ckcap * sizeof *n);
                if (!n) { fmt(err, errlen, "dogwood history: out of memory"); goto fail; }
                ckpts = n;
            }
            ckpts[nck++] = v;
        }
    }
    closedir(d);
    d = NULL;
    if (nseg) qsort(segs, nseg, sizeof *segs, cmp_u64);   /* base is the first member */
    if (nck) qsort(ckpts, nck, sizeof *ckpts, cmp_u64);

    /* ---- the latest valid checkpoint */
    uint64_t keep_from = 0, replay_from = 0, last_ts = 0;
    uint64_t state_len = 0;
    for (size_t i = nck; i-- > 0;) {
        uint32_t ver = 0;
        int ioerr = 0;
        uint64_t keep = 0, lts = 0, slen = 0;
        int v = load_ckpt(log, ckpts[i], &state, &slen, &keep, &lts, &ver, &ioerr);
        if (v == HDR_NEWER) {
            fmt(err, errlen, "dogwood history: checkpoint %016" PRIx64 " was written by a newer format (version %u; this build reads version %u)",
                ckpts[i], ver, DW_HISTLOG_VERSION);
            goto fail;
        }
        if (v == HDR_SCHEMA) {
            fmt(err, errlen, DW_HISTLOG_SCHEMA_MISMATCH " (checkpoint in %s)", dir);
            goto fail;
        }
        if (ioerr == ENOMEM) { fmt(err, errlen, "dogwood history: out of memory"); goto fail; }
        if (v == HDR_OK) {
            log->has_ckpt = true;
            log->ckpt_seq = ckpts[i];
            keep_from = keep;
            replay_from = ckpts[i];
            last_ts = lts;
            state_len = slen;
            break;
        }
        rec->checkpoints_rejected++;
        note(rec, "checkpoint %016" PRIx64 " is damaged, ignored", ckpts[i]);
    }

    /* ---- segment headers (all of them: a schema change anywhere refuses) */
    for (size_t i = 0; i < nseg; i++) {
        char name[64];
        seg_name(name, sizeof name, segs[i].base);
        int fd = openat(log->dirfd, name, O_RDONLY | O_CLOEXEC);
        struct stat sb;
        if (fd < 0 || fstat(fd, &sb) != 0) {
            fmt(err, errlen, "dogwood history: cannot read %s/%s: %s", dir, name, strerror(errno));
            if (fd >= 0) close(fd);
            goto fail;
        }
        segs[i].size = (uint64_t)sb.st_size;
        uint8_t h[MAX_HDR];
        size_t hn = segs[i].size < MAX_HDR ? (size_t)segs[i].size : MAX_HDR;
        int rr = read_all(fd, h, hn);
        close(fd);
        if (rr != 0) { fmt(err, errlen, "dogwood history: cannot read %s/%s: %s", dir, name, strerror(errno)); goto fail; }
        uint32_t ver = 0;
        segs[i].hdr = check_header(h, hn, SEG_MAGIC, SEG_HDR, log->opt.schema_digest, &ver);
        if (segs[i].hdr == HDR_OK && get64(h + 24) != segs[i].base) segs[i].hdr = HDR_DAMAGED;
        if (segs[i].hdr == HDR_NEWER) {
            fmt(err, errlen, "dogwood history: %s was written by a newer format (version %u; this build reads version %u)",
                name, ver, DW_HISTLOG_VERSION);
            goto fail;
        }
        if (segs[i].hdr == HDR_SCHEMA) {
            fmt(err, errlen, DW_HISTLOG_SCHEMA_MISMATCH " (%s/%s)", dir, name);
            goto fail;
        }
    }

    if (log->has_ckpt) {
        rec->has_checkpoint = true;
        rec->checkpoint_seq = log->ckpt_seq;
        if (log->opt.on_checkpoint &&
            log->opt.on_checkpoint(log->opt.cb_ctx, log->ckpt_seq, last_ts, state, state_len) != 0) {
            fmt(err, errlen, "dogwood history: recovery callback failed at the checkpoint");
            goto fail;
        }
    }
    free(state);
    state = NULL;

    /* ---- replay: from the segment holding replay_from (or the first one) */
    size_t start = 0;
    if (log->has_ckpt)
        while (start + 1 < nseg && segs[start + 1].base <= replay_from) start++;
    uint64_t expect = log->has_ckpt ? replay_from : (nseg ? segs[0].base : 0);
    size_t kept_end = start;          /* segments [start, kept_end) survive */
    bool reuse_last = false;
    uint64_t reuse_off = 0;
    uint64_t seg_ts = 0;
    for (size_t i = start; i < nseg; i++) {
        char name[64];
        seg_name(name, sizeof name, segs[i].base);
        bool bad_link = i == start ? segs[i].base > expect : segs[i].base != expect;
        if (segs[i].hdr != HDR_OK || bad_link) {
            /* consistent prefix: this segment and every later one go */
            for (size_t j = i; j < nseg; j++) {
                seg_name(name, sizeof name, segs[j].base);
                if (unlinkat(log->dirfd, name, 0) != 0) {
                    fmt(err, errlen, "dogwood history: cannot remove %s/%s: %s", dir, name, strerror(errno));
                    goto fail;
                }
                rec->dropped_bytes += segs[j].size;
                rec->dropped_segments++;
            }
            note(rec, "segment %016" PRIx64 " %s: it and %zu later segment(s) dropped (%" PRIu64 " bytes)",
                 segs[i].base, segs[i].hdr != HDR_OK ? "has a damaged header" : "does not continue the history",
                 nseg - i - 1, rec->dropped_bytes);
            fsync_dir(log);
            reuse_last = false;
            break;
        }
        int fd = openat(log->dirfd, name, O_RDWR | O_CLOEXEC);
        if (fd < 0) { fmt(err, errlen, "dogwood history: cannot open %s/%s: %s", dir, name, strerror(errno)); goto fail; }
        void *m = mmap(NULL, segs[i].size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            fmt(err, errlen, "dogwood history: cannot map %s/%s: %s", dir, name, strerror(errno));
            close(fd);
            goto fail;
        }
        scan_result sr;
        /* timestamps must increase within the scanned run of segments; the
         * checkpoint's own last_ts only bounds what is appended next */
        int rc = scan_segment(log, segs[i].base, m, segs[i].size, replay_from, i == start ? 0 : seg_ts,
                              rec, &sr, err, errlen);
        munmap(m, segs[i].size);
        if (rc != 0) { close(fd); goto fail; }
        seg_ts = sr.last_ts;
        if (sr.last_ts > last_ts) last_ts = sr.last_ts;
        expect = sr.end > expect ? sr.end : expect;
        kept_end = i + 1;
        if (sr.damaged) {
            uint64_t drop = segs[i].size - sr.valid_off;
            if (ftruncate(fd, (off_t)sr.valid_off) != 0 || fsync(fd) != 0) {
                fmt(err, errlen, "dogwood history: cannot truncate %s/%s: %s", dir, name, strerror(errno));
                close(fd);
                goto fail;
            }
            rec->dropped_bytes += drop;
            note(rec, "segment %016" PRIx64 ": torn or corrupt tail at offset %" PRIu64 ", %" PRIu64 " bytes dropped",
                 segs[i].base, sr.valid_off, drop);
            segs[i].size = sr.valid_off;
            uint64_t later = 0;
            for (size_t j = i + 1; j < nseg; j++) {
                seg_name(name, sizeof name, segs[j].base);
                if (unlinkat(log->dirfd, name, 0) != 0) {
                    fmt(err, errlen, "dogwood history: cannot remove %s/%s: %s", dir, name, strerror(errno));
                    close(fd);
                    goto fail;
                }
                later += segs[j].size;
                rec->dropped_segments++;
            }
            if (i + 1 < nseg) {
                rec->dropped_bytes += later;
                note(rec, "%zu later segment(s) dropped (%" PRIu64 " bytes)", nseg - i - 1, later);
                fsync_dir(log);
            }
        }
        if (sr.damaged || i + 1 == nseg) {
            if (sr.end == expect) {           /* the tail continues here */
                if (log->fd >= 0) close(log->fd);
                log->fd = fd;
                reuse_last = true;
                reuse_off = sr.valid_off;
                log->seg_base = segs[i].base;
            } else {
                close(fd);
            }
            break;
        }
        close(fd);
    }
    log->next_seq = expect;
    log->last_ts = last_ts;
    log->written_end = log->synced_end = log->want_sync_end = expect;

    for (size_t i = 0; i < kept_end; i++)
        if (segs_push(log, segs[i].base) != 0) { fmt(err, errlen, "dogwood history: out of memory"); goto fail; }
    if (reuse_last) {
        log->file_off = reuse_off;
    } else {
        if (log->fd >= 0) { close(log->fd); log->fd = -1; }
        /* a kept segment may already carry this base (empty, damaged tail) */
        if (log->nsegs && log->segs[log->nsegs - 1] == expect) log->nsegs--;
        log->fd = create_segment(log, expect, last_ts);
        if (log->fd < 0) { fmt(err, errlen, "dogwood history: cannot create a segment in %s: %s", dir, strerror(errno)); goto fail; }
        log->seg_base = expect;
        log->file_off = SEG_HDR;
        if (segs_push(log, expect) != 0) { fmt(err, errlen, "dogwood history: out of memory"); goto fail; }
    }

    /* ---- tidy: older checkpoints, segments below the checkpoint's keep_from */
    for (size_t i = 0; i < nck; i++) {
        if (log->has_ckpt && ckpts[i] == log->ckpt_seq) continue;
        char name[64];
        ckpt_name(name, sizeof name, ckpts[i]);
        unlinkat(log->dirfd, name, 0);
    }
    if (log->has_ckpt) retire_segments(log, keep_from);
    fsync_dir(log);

    rec->next_seq = log->next_seq;
    rec->last_ts = log->last_ts;
    rec->segments = (uint32_t)log->nsegs;
    if (!rec->records) rec->first_seq = log->next_seq;

    if (log->opt.durability == DW_DURABILITY_BATCH) {
        if (pthread_create(&log->flusher, NULL, flusher_main, log) != 0) {
            fmt(err, errlen, "dogwood history: cannot start the flusher thread");
            goto fail;
        }
        log->has_flusher = true;
    }
    free(segs);
    free(ckpts);
    return log;

fail:
    if (d) closedir(d);
    free(state);
    free(segs);
    free(ckpts);
    if (log->fd >= 0) close(log->fd);
    if (log->lockfd >= 0) close(log->lockfd);
    if (log->dirfd >= 0) close(log->dirfd);
    pthread_mutex_destroy(&log->mu);
    pthread_mutex_destroy(&log->ckpt_mu);
    pthread_cond_destroy(&log->cv);
    pthread_cond_destroy(&log->flush_cv);
    free(log->segs);
    free(log);
    if (!errno) errno = EIO;
    return NULL;
}

/* ================================================================ appending */

static void set_failed(dw_histlog *log, int e, const char *what)
{
    if (log->failed) return;
    log->failed = e ? e : EIO;
    fmt(log->errmsg, sizeof log->errmsg, "dogwood history: %s failed: %s (the history is unusable until reopened)",
        what, strerror(log->failed));
}

int dw_histlog_enqueue(dw_histlog *log, const void *bytes, size_t len, uint64_t *seq, uint64_t *ts)
{
    if (len > DW_HISTLOG_MAX_RECORD || (len && !bytes)) {
        pthread_mutex_lock(&log->mu);
        fmt(log->errmsg, sizeof log->errmsg, "dogwood history: record of %zu bytes is too large", len);
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
            fmt(log->errmsg, sizeof log->errmsg, "dogwood history: out of memory");
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
    put32(r + 8, (uint32_t)len);
    put32(r + 12, 0);
    put64(r + 16, s);
    put64(r + 24, t);
    if (len) memcpy(r + REC_HDR, bytes, len);
    put64(r, XXH3_64bits(r + 8, REC_HDR - 8 + len));
    log->pend_len = need;
    log->st.appends++;
    pthread_mutex_unlock(&log->mu);
    if (seq) *seq = s;
    if (ts) *ts = t;
    return 0;
}

/* Be the leader for one batch.  Called and returns with mu held. */
static void lead(dw_histlog *log)
{
    log->leader = true;
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
    if (n) rc = pwrite_all(fd, buf, n, off);
    if (rc == 0 && do_sync) { what = "fdatasync"; rc = fdatasync(fd); }
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

static void *flusher_main(void *arg)
{
    dw_histlog *log = arg;
    pthread_mutex_lock(&log->mu);
    while (!log->stop) {
        struct timespec dl;
        clock_gettime(CLOCK_MONOTONIC, &dl);
        uint64_t ns = (uint64_t)dl.tv_nsec + (uint64_t)log->batch_ms * 1000000u;
        dl.tv_sec += (time_t)(ns / 1000000000u);
        dl.tv_nsec = (long)(ns % 1000000000u);
        while (!log->stop && log->written_end - log->synced_end < log->batch_records &&
               pthread_cond_timedwait(&log->flush_cv, &log->mu, &dl) != ETIMEDOUT) {}
        if (log->stop || log->failed) break;
        if (log->pend_len && !log->leader) lead(log);   /* enqueued but nobody waiting */
        while (log->rotating && !log->stop) pthread_cond_wait(&log->cv, &log->mu);
        if (log->stop || log->failed) break;
        if (log->written_end <= log->synced_end) continue;
        log->sync_active = true;
        uint64_t target = log->written_end, prev = log->synced_end;
        int fd = log->fd;
        pthread_mutex_unlock(&log->mu);
        int rc = fdatasync(fd);
        int e = errno;
        pthread_mutex_lock(&log->mu);
        log->sync_active = false;
        if (rc != 0) {
            set_failed(log, e, "fdatasync");
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
    start_header(h, CKPT_MAGIC, CKPT_HDR, log->opt.schema_digest);
    put64(h + 24, seq);
    put64(h + 32, keep);
    put64(h + 40, last_ts);
    put64(h + 48, len);
    put64(h + 56, XXH3_64bits(state, len));
    seal_header(h, CKPT_HDR);
    char name[64];
    ckpt_name(name, sizeof name, seq);
    int fd = f_open(log, "ckpt.tmp", O_WRONLY | O_CREAT | O_TRUNC);
    if (fd < 0) return -1;
    if (pwrite_all(fd, h, CKPT_HDR, 0) != 0 || pwrite_all(fd, state, len, CKPT_HDR) != 0 ||
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

static int checkpoint(dw_histlog *log, bool at, uint64_t Sc, uint64_t ckpt_ts, const void *state, size_t len,
                      uint64_t keep_from_seq)
{
    if (len && !state) { errno = EINVAL; return -1; }
    pthread_mutex_lock(&log->ckpt_mu);
    pthread_mutex_lock(&log->mu);
    while (log->leader && !log->failed) pthread_cond_wait(&log->cv, &log->mu);
    if (log->failed) {
        int e = log->failed;
        pthread_mutex_unlock(&log->mu);
        pthread_mutex_unlock(&log->ckpt_mu);
        errno = e;
        return -1;
    }
    log->leader = true;
    log->rotating = true;
    while (log->sync_active) pthread_cond_wait(&log->cv, &log->mu);
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
    bool had_ckpt = log->has_ckpt;
    uint64_t old_ckpt = log->ckpt_seq;
    pthread_mutex_unlock(&log->mu);

    /* 1. every record < S durable */
    int rc = n ? pwrite_all(fd, buf, n, off) : 0;
    const char *what = "write";
    if (rc == 0) { what = "fdatasync"; rc = fdatasync(fd); }
    int e = errno;
    pthread_mutex_lock(&log->mu);
    log->spare = buf; log->spare_cap = cap;
    if (rc != 0) {
        set_failed(log, e, what);
        log->leader = log->rotating = false;
        pthread_cond_broadcast(&log->cv);
        pthread_mutex_unlock(&log->mu);
        pthread_mutex_unlock(&log->ckpt_mu);
        errno = e;
        return -1;
    }
    log->file_off = off + n;
    log->written_end = log->synced_end = S;
    if (n) log->st.writes++;
    log->st.syncs++;
    pthread_cond_broadcast(&log->cv);       /* their records are durable */
    pthread_mutex_unlock(&log->mu);

    /* 2. the checkpoint, atomically */
    if (keep_from_seq > Sc) keep_from_seq = Sc;
    int ret = 0;
    int newfd = -1;
    bool written = false;
    if (write_ckpt_file(log, Sc, keep_from_seq, ckpt_ts, state, len) != 0) {
        e = errno;
        pthread_mutex_lock(&log->mu);
        fmt(log->errmsg, sizeof log->errmsg, "dogwood history: checkpoint failed: %s", strerror(e));
        ret = -1;
        goto release;
    }
    written = true;
    /* 3. a new segment starting at S (unless the active one is empty) */
    if (old_base != S) {
        newfd = create_segment(log, S, last_ts);
        if (newfd < 0) e = errno;
    }
    pthread_mutex_lock(&log->mu);
    log->has_ckpt = true;
    log->ckpt_seq = Sc;
    if (old_base != S && newfd < 0) {
        /* the old segment stays active; records >= S simply continue in it */
        fmt(log->errmsg, sizeof log->errmsg, "dogwood history: cannot start a new segment: %s", strerror(e));
        ret = -1;
    } else if (newfd >= 0) {
        if (segs_push(log, S) != 0) {
            close(newfd);
            char name[64];
            seg_name(name, sizeof name, S);
            f_unlink(log, name);
            fmt(log->errmsg, sizeof log->errmsg, "dogwood history: out of memory");
            ret = -1;
        } else {
            log->fd = newfd;
            log->seg_base = S;
            log->file_off = SEG_HDR;
        }
    }
release:
    log->leader = log->rotating = false;
    pthread_cond_broadcast(&log->cv);
    pthread_mutex_unlock(&log->mu);
    if (log->fd != fd) close(fd);
    if (written) {
        /* 4. retention: the older checkpoint, segments wholly before keep_from */
        if (had_ckpt && old_ckpt != Sc) {
            char name[64];
            ckpt_name(name, sizeof name, old_ckpt);
            f_unlink(log, name);
        }
        retire_segments(log, keep_from_seq);
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
    close(log->lockfd);
    close(log->dirfd);
    pthread_mutex_destroy(&log->mu);
    pthread_mutex_destroy(&log->ckpt_mu);
    pthread_cond_destroy(&log->cv);
    pthread_cond_destroy(&log->flush_cv);
    free(log->pend);
    free(log->spare);
    free(log->segs);
    free(log);
    return rc;
}
