/* histlog_recover.c - dw_histlog_open: the directory's inventory, the latest
 * valid checkpoint, a scan of every segment the history needs (resynchronising
 * past damage to find what follows it), the recovery rules of histlog.h
 * (torn tail, corruption, salvage) and the start of a usable log.
 *
 * The scan validates first and delivers afterwards: nothing reaches the
 * caller's callbacks from a log that is then refused, and a salvage rewrites
 * files only once every record it keeps has been delivered. */
#include "histlog_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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

static uint64_t default_clock(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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

/* Load checkpoint `seq`: HDR_OK / HDR_OLDER with *state (malloc'd), or a verdict. */
static int load_ckpt(dw_histlog *log, uint64_t seq, uint8_t **state, uint64_t *len,
                     uint64_t *keep, uint64_t *last_ts, uint32_t *ver, int *ioerr)
{
    char name[64];
    hl_ckpt_name(name, sizeof name, seq);
    *state = NULL;
    *ioerr = 0;
    int fd = openat(log->dirfd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) { *ioerr = errno; return HDR_DAMAGED; }
    struct stat sb;
    if (fstat(fd, &sb) != 0) { *ioerr = errno; close(fd); return HDR_DAMAGED; }
    size_t size = (size_t)sb.st_size;
    uint8_t h[MAX_HDR];
    size_t hn = size < MAX_HDR ? size : MAX_HDR;
    if (hl_read_all(fd, h, hn) != 0) { *ioerr = errno; close(fd); return HDR_DAMAGED; }
    int v = hl_check_header(h, hn, CKPT_MAGIC, CKPT_HDR, log->opt.schema_digest, ver);
    if (v != HDR_OK && v != HDR_OLDER) { close(fd); return v; }
    uint64_t slen = dw_le64(h + 48);
    if (dw_le64(h + 24) != seq || slen != size - CKPT_HDR || dw_le64(h + 32) > seq) { close(fd); return HDR_DAMAGED; }
    uint8_t *buf = malloc(slen ? slen : 1);
    if (!buf) { *ioerr = ENOMEM; close(fd); return HDR_DAMAGED; }
    if (pread(fd, buf, slen, CKPT_HDR) != (ssize_t)slen) { *ioerr = errno ? errno : EIO; free(buf); close(fd); return HDR_DAMAGED; }
    close(fd);
    if (XXH3_64bits(buf, slen) != dw_le64(h + 56)) { free(buf); return HDR_DAMAGED; }
    *state = buf; *len = slen;
    *keep = dw_le64(h + 32);
    *last_ts = dw_le64(h + 40);
    return v;
}

/* ================================================================ the scan */

/* Bytes [off, end) of a segment hold valid records for seqs [seq, next)
 * (gap records included); lts: the timestamp of its last event. */
typedef struct run { uint64_t off, end, seq, next, lts; } run;

typedef struct seg_scan {
    uint64_t base, size;
    int hdr;                    /* header verdict */
    const uint8_t *m;           /* read-only mapping of maplen bytes, NULL if size is 0 */
    uint64_t maplen;
    uint64_t prev_ts;           /* the header's (valid header) */
    run *runs; size_t nruns, runcap;
    uint64_t end;               /* seq after the last valid record */
    uint64_t last_ts;
    uint64_t valid_off;         /* offset after the last valid record (or the header) */
    bool trail;                 /* bytes from valid_off on are no record */
    uint64_t gaps;              /* seqs covered by gap records */
    bool dropped;               /* a damaged, empty last segment: replaced */
} seg_scan;

enum { F_RECORD, F_HEADER, F_MISSING, F_TAIL, F_START, F_OVERLAP };
typedef struct fault { int kind; size_t seg; uint64_t off, seq, lost; } fault;

typedef struct scan {
    seg_scan *s; size_t n;
    fault *f; size_t nf, fcap;
    bool oom;
    seg_scan cut; bool has_cut;     /* a segment an unsettled rotation left (drop_torn_rotation) */
} scan;

static void add_fault(scan *sc, int kind, size_t seg, uint64_t off, uint64_t seq, uint64_t lost)
{
    if (sc->nf == sc->fcap) {
        size_t nc = sc->fcap ? sc->fcap * 2 : 8;
        fault *n = realloc(sc->f, nc * sizeof *n);
        if (!n) { sc->oom = true; return; }
        sc->f = n; sc->fcap = nc;
    }
    sc->f[sc->nf++] = (fault){ kind, seg, off, seq, lost };
}

/* A valid record at off with seq in [lo, hi] after an event timed last_ts:
 * 1 with *len (payload bytes), *next (seq after it), *ts; else 0. */
static int rec_at(const seg_scan *g, uint64_t off, uint64_t lo, uint64_t hi, uint64_t last_ts,
                  uint32_t *len, uint64_t *next, uint64_t *ts)
{
    if (g->size - off < REC_HDR) return 0;
    const uint8_t *r = g->m + off;
    uint32_t flags = dw_le32(r + 12), l = dw_le32(r + 8);
    uint64_t s = dw_le64(r + 16), t = dw_le64(r + 24);
    if (flags > REC_GAP || s < lo || s > hi) return 0;
    if (l > DW_HISTLOG_MAX_RECORD || g->size - off - REC_HDR < l) return 0;
    /* timestamps strictly increase (Q17); a gap keeps the previous one */
    if (flags == REC_EVENT ? t <= last_ts : (l != 8 || t < last_ts)) return 0;
    if (XXH3_64bits(r + 8, REC_HDR - 8 + (size_t)l) != dw_le64(r)) return 0;
    uint64_t n = flags == REC_GAP ? dw_le64(r + REC_HDR) : 1;
    if (n == 0 || n > UINT64_MAX - s) return 0;
    *len = l; *next = s + n; *ts = flags == REC_GAP ? last_ts : t;
    return 1;
}

static int push_run(seg_scan *g, run r)
{
    if (r.off == r.end) return 0;
    if (g->nruns == g->runcap) {
        size_t nc = g->runcap ? g->runcap * 2 : 4;
        run *n = realloc(g->runs, nc * sizeof *n);
        if (!n) return -1;
        g->runs = n; g->runcap = nc;
    }
    g->runs[g->nruns++] = r;
    return 0;
}

/* Scan segment g (index gi) from its header on; past damage, search byte by
 * byte for the next valid record (its seq at least the one expected, its
 * timestamp later): damage followed by one is a fault here, damage with
 * nothing valid after it is a trail, judged by classify(). */
static int scan_segment(scan *sc, size_t gi, uint64_t last_ts)
{
    seg_scan *g = &sc->s[gi];
    bool hdr_ok = g->hdr == HDR_OK || g->hdr == HDR_OLDER;
    uint64_t off = hdr_ok ? SEG_HDR : 0, seq = g->base;
    if (hdr_ok && g->prev_ts > last_ts) last_ts = g->prev_ts;
    run cur = { off, off, seq, seq, last_ts };
    bool resync = !hdr_ok;
    uint64_t damage_off = 0;
    for (;;) {
        uint32_t len; uint64_t next, ts;
        if (!resync) {
            if (rec_at(g, off, seq, seq, last_ts, &len, &next, &ts)) {
                if (dw_le32(g->m + off + 12) == REC_GAP) g->gaps += next - seq;
                off += REC_HDR + len; seq = next; last_ts = ts;
                cur.end = off; cur.next = seq; cur.lts = ts;
                continue;
            }
            if (off == g->size) break;
            damage_off = off;
            resync = true;
        }
        if (push_run(g, cur)) return -1;
        uint64_t p = damage_off + (hdr_ok || damage_off ? 1 : 0), hi = seq + (g->size - damage_off) / REC_HDR;
        bool found = false;
        for (; g->size >= REC_HDR && p <= g->size - REC_HDR; p++)
            if (rec_at(g, p, seq, hi, last_ts, &len, &next, &ts)) { found = true; break; }
        if (!found) {
            g->trail = true;
            off = damage_off;
            break;
        }
        uint64_t s2 = dw_le64(g->m + p + 16);
        add_fault(sc, hdr_ok || damage_off ? F_RECORD : F_HEADER, gi, damage_off, seq, s2 - seq);
        hdr_ok = true;
        off = p; seq = s2;
        cur = (run){ p, p, s2, s2, last_ts };
        resync = false;
    }
    if (!resync && push_run(g, cur)) return -1;
    g->end = seq;
    g->last_ts = last_ts;
    g->valid_off = g->trail ? damage_off : off;
    if (g->hdr != HDR_OK && g->hdr != HDR_OLDER && !g->nruns) { g->trail = true; g->valid_off = 0; }
    return 0;
}

/* The recovery rules (histlog.h) over the scanned segments: faults for what
 * loses records; the torn tail, if any, in *torn.  expect0: where the
 * history must start; acked: ACKED's end.  Returns the seq after the last
 * record kept (before any salvage). */
static uint64_t classify(scan *sc, uint64_t expect0, uint64_t acked, bool *torn)
{
    *torn = false;
    for (size_t j = 0; j < sc->n; j++) {
        seg_scan *g = &sc->s[j];
        bool hdr_ok = g->hdr == HDR_OK || g->hdr == HDR_OLDER;
        if (j == 0 && g->base > expect0) add_fault(sc, F_START, 0, 0, expect0, g->base - expect0);
        if (j > 0) {
            const seg_scan *p = &sc->s[j - 1];
            if (g->base < p->end) add_fault(sc, F_OVERLAP, j, 0, g->base, 0);
            else if (g->base > p->end && !p->trail) add_fault(sc, F_MISSING, j - 1, p->valid_off, p->end, g->base - p->end);
        }
        if (!g->trail) continue;
        bool last = j + 1 == sc->n;
        if (last && g->end >= acked) {
            *torn = true;
            if (!hdr_ok && !g->nruns) g->dropped = true;
            continue;
        }
        if (last && (hdr_ok || g->valid_off)) continue;     /* records missing at the end: F_TAIL below */
        uint64_t to = last ? acked : sc->s[j + 1].base;
        add_fault(sc, hdr_ok || g->valid_off ? F_RECORD : F_HEADER, j, g->valid_off, g->end,
                  to > g->end ? to - g->end : 0);
    }
    uint64_t end = sc->n ? sc->s[sc->n - 1].end : expect0;
    if (sc->n && sc->s[sc->n - 1].dropped) end = sc->s[sc->n - 1].base;
    const seg_scan *l = sc->n ? &sc->s[sc->n - 1] : NULL;
    bool header_fault = l && l->trail && !*torn && l->hdr != HDR_OK && l->hdr != HDR_OLDER && !l->valid_off;   /* above */
    if (end < acked && !header_fault)
        add_fault(sc, F_TAIL, sc->n ? sc->n - 1 : SIZE_MAX, sc->n ? sc->s[sc->n - 1].valid_off : 0, end, acked - end);
    return end;
}

/* A rotation (histlog.c, checkpoint) writes records to the new segment
 * before it has synced the previous one's tail and the new one's header,
 * so a crash before it settled can leave the previous segment ending short
 * of the new one's base (at a record boundary or inside a record) or the
 * new one's header damaged.  Nothing lost that way was acknowledged: the
 * new segment starts at or past ACKED's end and the previous one still
 * reaches it; settling writes ACKED past the switch only once both are
 * synced.  The new segment is then set aside (removed once the open is sure
 * to succeed, noted) and the previous one's tail judged as the log's torn
 * tail.  Damage inside the previous segment followed by a valid record of
 * its own is no tear and stays a fault. */
static void drop_torn_rotation(scan *sc, uint64_t acked)
{
    if (sc->n < 2) return;
    size_t li = sc->n - 1;
    const seg_scan *p = &sc->s[li - 1], *l = &sc->s[li];
    bool l_hdr = l->hdr == HDR_OK || l->hdr == HDR_OLDER;
    if (l->base < acked || p->end < acked || p->end > l->base) return;
    if (!p->trail && p->end == l->base && l_hdr) return;        /* no tear at the switch */
    for (size_t k = 0; k < sc->nf; k++)
        if (sc->f[k].seg == li - 1) return;
    size_t kept = 0;
    for (size_t k = 0; k < sc->nf; k++)
        if (sc->f[k].seg != li) sc->f[kept++] = sc->f[k];
    sc->nf = kept;
    sc->cut = *l;
    sc->has_cut = true;
    sc->n--;
}

/* Records at or past the fault that exist or were acknowledged, less what
 * later faults lost. */
static uint64_t follow(const scan *sc, size_t k, uint64_t top)
{
    const fault *f = &sc->f[k];
    uint64_t from = f->seq + f->lost, n = top > from ? top - from : 0;
    for (size_t i = k + 1; i < sc->nf; i++) n -= sc->f[i].lost < n ? sc->f[i].lost : n;
    return n;
}

static void describe(char *buf, size_t cap, const scan *sc, size_t k, uint64_t top, uint64_t acked)
{
    const fault *f = &sc->f[k];
    char name[64] = "no segment";
    if (f->seg != SIZE_MAX) hl_seg_name(name, sizeof name, sc->s[f->seg].base);
    uint64_t fol = follow(sc, k, top);
    switch (f->kind) {
    case F_RECORD:
        hl_fmt(buf, cap, "%s: the record at byte %" PRIu64 " (seq %" PRIu64 ") is damaged, %" PRIu64 " record(s) lost there, %" PRIu64
               " acknowledged record(s) follow", name, f->off, f->seq, f->lost, fol);
        break;
    case F_HEADER:
        if (sc->s[f->seg].size < SEG_HDR)
            hl_fmt(buf, cap, "%s is %" PRIu64 " bytes long, shorter than its header: %" PRIu64 " record(s) lost there, %" PRIu64
                   " acknowledged record(s) follow", name, sc->s[f->seg].size, f->lost, fol);
        else
            hl_fmt(buf, cap, "%s: its header (byte 0) is damaged, %" PRIu64 " record(s) lost there, %" PRIu64
                   " acknowledged record(s) follow", name, f->lost, fol);
        break;
    case F_MISSING:
        hl_fmt(buf, cap, "%s ends at byte %" PRIu64 " (seq %" PRIu64 ") but the next segment starts at seq %" PRIu64
               ": %" PRIu64 " record(s) are in no file, %" PRIu64 " acknowledged record(s) follow",
               name, f->off, f->seq, f->seq + f->lost, f->lost, fol);
        break;
    case F_TAIL:
        if (f->seg == SIZE_MAX) {
            hl_fmt(buf, cap, "no segment holds the records from seq %" PRIu64 " on, but " ACK_NAME " says %" PRIu64
                   " record(s) were acknowledged: %" PRIu64 " are missing (deleted segments)", f->seq, acked, f->lost);
            break;
        }
        hl_fmt(buf, cap, "%s ends at byte %" PRIu64 " (seq %" PRIu64 ")%s but " ACK_NAME " says %" PRIu64
               " record(s) were acknowledged: the last %" PRIu64 " are missing (a deleted, emptied or cut segment)",
               name, f->off, f->seq, sc->s[f->seg].trail ? " in a damaged or partial record" : "", acked, f->lost);
        break;
    case F_START:
        hl_fmt(buf, cap, "%s starts at seq %" PRIu64 " but the history needs records from seq %" PRIu64
               ": %" PRIu64 " record(s) are in no file, %" PRIu64 " acknowledged record(s) follow",
               name, f->seq + f->lost, f->seq, f->lost, fol);
        break;
    default:
        hl_fmt(buf, cap, "%s starts at seq %" PRIu64 ", inside the previous segment's records (segments overlap)", name, f->seq);
    }
}

/* ================================================================ salvage */

typedef struct obuf { uint8_t *p; size_t n, cap; bool oom; } obuf;

static void ob_put(obuf *b, const void *p, size_t n)
{
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t nc = b->cap ? b->cap : 4096;
        while (nc < b->n + n) nc *= 2;
        uint8_t *q = realloc(b->p, nc);
        if (!q) { b->oom = true; return; }
        b->p = q; b->cap = nc;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void ob_gap(obuf *b, uint64_t seq, uint64_t n, uint64_t ts)
{
    uint8_t r[REC_HDR + 8];
    hl_gap_record(r, seq, n, ts);
    ob_put(b, r, sizeof r);
}

/* Rewrite scanned segment j as its intact records with gap records where
 * records were lost, so that it covers [base, to); base may move down (a
 * start fault).  Through seg.tmp + fsync + rename + fsync dir. */
static int rewrite_segment(dw_histlog *log, seg_scan *g, uint64_t base, uint64_t to, uint64_t lts)
{
    obuf b = { 0 };
    uint8_t h[SEG_HDR];
    bool hdr_ok = g->hdr == HDR_OK || g->hdr == HDR_OLDER;
    uint64_t prev_ts = hdr_ok && g->prev_ts > lts ? g->prev_ts : lts;
    hl_seg_header(h, log->opt.schema_digest, base, prev_ts);
    ob_put(&b, h, SEG_HDR);
    uint64_t cur = base;
    lts = prev_ts;
    for (size_t r = 0; r < g->nruns; r++) {
        const run *u = &g->runs[r];
        if (u->seq > cur) ob_gap(&b, cur, u->seq - cur, lts);
        ob_put(&b, g->m + u->off, u->end - u->off);
        cur = u->next;
        lts = u->lts;
    }
    if (to > cur) ob_gap(&b, cur, to - cur, lts);
    if (b.oom) { free(b.p); errno = ENOMEM; return -1; }
    char name[64];
    hl_seg_name(name, sizeof name, base);
    int fd = openat(log->dirfd, "seg.tmp", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    int rc = fd < 0 ? -1 : 0;
    if (!rc) rc = hl_pwrite_all(fd, b.p, b.n, 0) || fsync(fd) || renameat(log->dirfd, "seg.tmp", log->dirfd, name);
    int e = errno;
    if (fd >= 0) close(fd);
    free(b.p);
    if (rc) { unlinkat(log->dirfd, "seg.tmp", 0); errno = e; return -1; }
    if (base != g->base) {
        hl_seg_name(name, sizeof name, g->base);
        if (unlinkat(log->dirfd, name, 0) != 0) return -1;
    }
    g->base = base;
    g->end = to > cur ? to : cur;
    g->size = g->valid_off = b.n;
    g->trail = false;
    return fsync(log->dirfd);
}

/* Apply a salvage: every scanned segment with a fault in or after it is
 * rewritten, the last one up to `to` (at least ACKED's end); with no
 * segment left, one holding only the gap up to `to` is made (sc->s has room
 * for it).  last_ts: the checkpoint's. */
static int salvage(dw_histlog *log, scan *sc, uint64_t expect0, uint64_t acked, uint64_t to, uint64_t last_ts)
{
    if (!sc->n) {
        sc->s[0] = (seg_scan){ .base = expect0, .hdr = HDR_OK, .prev_ts = last_ts };
        sc->n = 1;
        return rewrite_segment(log, &sc->s[0], expect0, to, last_ts);
    }
    for (size_t j = 0; j < sc->n; j++) {
        seg_scan *g = &sc->s[j];
        bool last = j + 1 == sc->n, touched = false;
        for (size_t k = 0; k < sc->nf; k++)
            if (sc->f[k].seg == j || (sc->f[k].kind == F_START && j == 0)) touched = true;
        if (!touched) continue;
        uint64_t base = j == 0 && g->base > expect0 ? expect0 : g->base;
        /* the last kept one reaches `to`, which may be a dropped segment's base past ACKED */
        uint64_t upto = last ? (to > g->end ? to : g->end) : sc->s[j + 1].base;
        if (rewrite_segment(log, g, base, upto, j ? sc->s[j - 1].last_ts : 0) != 0) return -1;
    }
    return 0;
}

/* Hand every event record >= from of the scanned segments to on_record. */
static int deliver(dw_histlog *log, const scan *sc, uint64_t from, dw_histlog_recovery *rec, char *err, size_t errlen)
{
    for (size_t j = 0; j < sc->n; j++) {
        const seg_scan *g = &sc->s[j];
        for (size_t r = 0; r < g->nruns; r++) {
            for (uint64_t off = g->runs[r].off; off < g->runs[r].end;) {
                const uint8_t *p = g->m + off;
                uint32_t len = dw_le32(p + 8);
                uint64_t seq = dw_le64(p + 16);
                off += REC_HDR + len;
                if (dw_le32(p + 12) != REC_EVENT || seq < from) continue;
                if (log->opt.on_record &&
                    log->opt.on_record(log->opt.cb_ctx, seq, dw_le64(p + 24), p + REC_HDR, len) != 0) {
                    hl_fmt(err, errlen, "dogwood history: recovery callback failed at record %" PRIu64, seq);
                    return -1;
                }
                if (rec->records == 0) rec->first_seq = seq;
                rec->records++;
            }
        }
    }
    return 0;
}

static void scan_free(scan *sc)
{
    if (sc->has_cut) {
        if (sc->cut.m) munmap((void *)sc->cut.m, sc->cut.maplen);
        free(sc->cut.runs);
    }
    for (size_t j = 0; j < sc->n; j++) {
        if (sc->s[j].m) munmap((void *)sc->s[j].m, sc->s[j].maplen);
        free(sc->s[j].runs);
    }
    free(sc->s);
    free(sc->f);
}

/* ================================================================ open */

typedef struct seg_file { uint64_t base; uint64_t size; int hdr; uint64_t prev_ts; } seg_file;

dw_histlog *dw_histlog_open(const char *dir, const dw_histlog_options *opt,
                            dw_histlog_recovery *rec_out, char *err, size_t errlen)
{
    dw_histlog_recovery rec_local;
    dw_histlog_recovery *rec = rec_out ? rec_out : &rec_local;
    memset(rec, 0, sizeof *rec);
    if (err && errlen) err[0] = 0;
    if (!dir || !opt || opt->durability > DW_DURABILITY_NONE) {
        hl_fmt(err, errlen, "dogwood history: invalid arguments");
        errno = EINVAL;
        return NULL;
    }
    dw_histlog *log = calloc(1, sizeof *log);
    if (!log) { hl_fmt(err, errlen, "dogwood history: out of memory"); return NULL; }
    log->opt = *opt;
    if (!log->opt.clock) log->opt.clock = default_clock;
    log->batch_ms = opt->batch_ms ? opt->batch_ms : 5;
    log->batch_records = opt->batch_records ? opt->batch_records : 256;
    log->fd = log->lockfd = log->dirfd = log->ackfd = log->spare_fd = log->prev_fd = -1;
    pthread_mutex_init(&log->mu, NULL);
    pthread_mutex_init(&log->ckpt_mu, NULL);
    pthread_mutex_init(&log->ack_mu, NULL);
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
    scan sc = { 0 };
    const uint64_t digest = opt->schema_digest;

    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        hl_fmt(err, errlen, "dogwood history: cannot create %s: %s", dir, strerror(errno));
        goto fail;
    }
    log->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (log->dirfd < 0) { hl_fmt(err, errlen, "dogwood history: cannot open %s: %s", dir, strerror(errno)); goto fail; }
    log->lockfd = openat(log->dirfd, "LOCK", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (log->lockfd < 0) { hl_fmt(err, errlen, "dogwood history: cannot create %s/LOCK: %s", dir, strerror(errno)); goto fail; }
    if (flock(log->lockfd, LOCK_EX | LOCK_NB) != 0) {
        hl_fmt(err, errlen, "dogwood history: %s is in use by another process", dir);
        goto fail;
    }

    /* ---- inventory */
    int dfd = dup(log->dirfd);
    if (dfd < 0 || !(d = fdopendir(dfd))) {
        if (dfd >= 0) close(dfd);
        hl_fmt(err, errlen, "dogwood history: cannot list %s: %s", dir, strerror(errno));
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
                if (!n) { hl_fmt(err, errlen, "dogwood history: out of memory"); goto fail; }
                segs = n;
            }
            segs[nseg++] = (seg_file){ v, 0, HDR_DAMAGED, 0 };
        } else if (parse_name(de->d_name, "ckpt-", ".ckpt", &v)) {
            if (nck == ckcap) {
                ckcap = ckcap ? ckcap * 2 : 4;
                uint64_t *n = realloc(ckpts, ckcap * sizeof *n);
                if (!n) { hl_fmt(err, errlen, "dogwood history: out of memory"); goto fail; }
                ckpts = n;
            }
            ckpts[nck++] = v;
        }
    }
    closedir(d);
    d = NULL;
    if (nseg) qsort(segs, nseg, sizeof *segs, cmp_u64);   /* base is the first member */
    if (nck) qsort(ckpts, nck, sizeof *ckpts, cmp_u64);

    /* ---- the acknowledged end */
    hl_acked mark = { 0, 0, 0 };
    uint32_t mver = 0;
    int mv = hl_acked_read(log->dirfd, digest, &mark, &mver);
    if (mv == HDR_NEWER) {
        hl_fmt(err, errlen, "dogwood history: %s/" ACK_NAME " was written by a newer format (version %u; this build reads version %u)",
               dir, mver, DW_HISTLOG_VERSION);
        goto fail;
    }
    if (mv == HDR_SCHEMA) { hl_fmt(err, errlen, DW_HISTLOG_SCHEMA_MISMATCH " (%s/" ACK_NAME ")", dir); goto fail; }
    bool have_mark = mv == HDR_OK, fresh = !have_mark && !nseg && !nck;
    bool allow_old = have_mark || opt->salvage;
    uint64_t acked = have_mark ? mark.end : 0;
    rec->acked_end = acked;

    /* ---- segment headers (all of them: a schema change anywhere refuses) */
    bool any_old = false;
    for (size_t i = 0; i < nseg; i++) {
        char name[64];
        hl_seg_name(name, sizeof name, segs[i].base);
        int fd = openat(log->dirfd, name, O_RDONLY | O_CLOEXEC);
        struct stat sb;
        if (fd < 0 || fstat(fd, &sb) != 0) {
            hl_fmt(err, errlen, "dogwood history: cannot read %s/%s: %s", dir, name, strerror(errno));
            if (fd >= 0) close(fd);
            goto fail;
        }
        segs[i].size = (uint64_t)sb.st_size;
        uint8_t h[MAX_HDR];
        size_t hn = segs[i].size < MAX_HDR ? (size_t)segs[i].size : MAX_HDR;
        int rr = hl_read_all(fd, h, hn);
        close(fd);
        if (rr != 0) { hl_fmt(err, errlen, "dogwood history: cannot read %s/%s: %s", dir, name, strerror(errno)); goto fail; }
        uint32_t ver = 0;
        segs[i].hdr = hl_check_header(h, hn, SEG_MAGIC, SEG_HDR, digest, &ver);
        if ((segs[i].hdr == HDR_OK || segs[i].hdr == HDR_OLDER) && dw_le64(h + 24) != segs[i].base) segs[i].hdr = HDR_DAMAGED;
        if (segs[i].hdr == HDR_OK || segs[i].hdr == HDR_OLDER) segs[i].prev_ts = dw_le64(h + 32);
        if (segs[i].hdr == HDR_NEWER) {
            hl_fmt(err, errlen, "dogwood history: %s was written by a newer format (version %u; this build reads version %u)",
                   name, ver, DW_HISTLOG_VERSION);
            goto fail;
        }
        if (segs[i].hdr == HDR_SCHEMA) {
            hl_fmt(err, errlen, DW_HISTLOG_SCHEMA_MISMATCH " (%s/%s)", dir, name);
            goto fail;
        }
        any_old |= segs[i].hdr == HDR_OLDER;
    }

    /* ---- the latest valid checkpoint */
    uint64_t keep_from = 0, replay_from = 0, last_ts = 0, state_len = 0;
    for (size_t i = nck; i-- > 0;) {
        uint32_t ver = 0;
        int ioerr = 0;
        uint64_t keep = 0, lts = 0, slen = 0;
        int v = load_ckpt(log, ckpts[i], &state, &slen, &keep, &lts, &ver, &ioerr);
        if (v == HDR_NEWER) {
            hl_fmt(err, errlen, "dogwood history: checkpoint %016" PRIx64 " was written by a newer format (version %u; this build reads version %u)",
                   ckpts[i], ver, DW_HISTLOG_VERSION);
            goto fail;
        }
        if (v == HDR_SCHEMA) {
            hl_fmt(err, errlen, DW_HISTLOG_SCHEMA_MISMATCH " (checkpoint in %s)", dir);
            goto fail;
        }
        if (ioerr == ENOMEM) { hl_fmt(err, errlen, "dogwood history: out of memory"); goto fail; }
        any_old |= v == HDR_OLDER;
        if (v == HDR_OK || v == HDR_OLDER) {
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
    if (any_old && !allow_old) {
        hl_fmt(err, errlen, "dogwood history: %s was written by format version 1, which cannot tell how many records it "
               "acknowledged (this build writes version %u): open it once with salvage (dwd --salvage) to upgrade it",
               dir, DW_HISTLOG_VERSION);
        goto fail;
    }
    if (!have_mark && !fresh && !opt->salvage) {
        hl_fmt(err, errlen, DW_HISTLOG_CORRUPT " in %s: " ACK_NAME " is %s, so the log cannot tell how many records it acknowledged. "
               "Refusing to open: restore the directory from a backup, or open it with salvage (dwd --salvage) "
               "to keep the records the segments hold", dir, mv < 0 ? "missing" : "damaged");
        goto fail;
    }
    if (!have_mark && !fresh)
        note(rec, "SALVAGE: " ACK_NAME " %s: rebuilt from the segments (records lost at the end cannot be detected)",
             mv < 0 ? "missing" : "damaged");

    /* ---- scan: from the segment holding replay_from (or the first one) */
    size_t start = 0;
    if (log->has_ckpt)
        while (start + 1 < nseg && segs[start + 1].base <= replay_from) start++;
    /* without a checkpoint the segments must reach back to the one the
     * witness names (a damaged checkpoint's keep_from) */
    uint64_t expect0 = log->has_ckpt ? replay_from : (have_mark ? mark.keep : 0);
    {
        sc.s = calloc(nseg - start + 1, sizeof *sc.s);   /* + room for a salvage's gap segment */
        if (!sc.s) { hl_fmt(err, errlen, "dogwood history: out of memory"); goto fail; }
    }
    for (size_t i = start; i < nseg; i++) {
        seg_scan *g = &sc.s[sc.n++];
        *g = (seg_scan){ .base = segs[i].base, .size = segs[i].size, .hdr = segs[i].hdr, .prev_ts = segs[i].prev_ts };
        char name[64];
        hl_seg_name(name, sizeof name, g->base);
        if (g->size) {
            int fd = openat(log->dirfd, name, O_RDONLY | O_CLOEXEC);
            void *m = fd < 0 ? MAP_FAILED : mmap(NULL, g->size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (fd >= 0) close(fd);
            if (m == MAP_FAILED) { hl_fmt(err, errlen, "dogwood history: cannot map %s/%s: %s", dir, name, strerror(errno)); goto fail; }
            g->m = m;
            g->maplen = g->size;
        }
        /* timestamps must increase within the scanned run of segments; the
         * checkpoint's own last_ts only bounds what is appended next */
        if (scan_segment(&sc, sc.n - 1, sc.n > 1 ? sc.s[sc.n - 2].last_ts : 0) != 0 || sc.oom) {
            hl_fmt(err, errlen, "dogwood history: out of memory");
            goto fail;
        }
    }
    bool torn;
    drop_torn_rotation(&sc, acked);
    uint64_t end = classify(&sc, expect0, acked, &torn);
    if (sc.oom) { hl_fmt(err, errlen, "dogwood history: out of memory"); goto fail; }
    uint64_t top = end > acked ? end : acked;
    /* records below the loaded checkpoint are in its state: damage there
     * (kept only for a checkpoint that might become unreadable) loses nothing */
    uint64_t need_from = log->has_ckpt ? replay_from : 0;
    size_t kept = 0;
    for (size_t k = 0; k < sc.nf; k++) {
        fault f = sc.f[k];
        if (f.kind != F_OVERLAP && f.seq < need_from) {
            uint64_t cut = need_from - f.seq < f.lost ? need_from - f.seq : f.lost;
            if (cut == f.lost) {
                char what[400];
                describe(what, sizeof what, &sc, k, top, acked);
                note(rec, "%s, but the checkpoint at seq %" PRIu64 " covers it: nothing lost", what, need_from);
                continue;
            }
            f.seq += cut;
            f.lost -= cut;
        }
        sc.f[kept++] = f;
    }
    sc.nf = kept;
    if (end < need_from) end = need_from;
    for (size_t k = 0; k < sc.nf; k++) {
        if (sc.f[k].kind == F_OVERLAP || !opt->salvage) {
            char what[400], more[48] = "";
            describe(what, sizeof what, &sc, k, top, acked);
            if (sc.nf > 1) snprintf(more, sizeof more, " (and %zu more fault(s))", sc.nf - 1);
            hl_fmt(err, errlen, DW_HISTLOG_CORRUPT " in %s: %s%s. Refusing to open%s", dir, what, more,
                   sc.f[k].kind == F_OVERLAP ? " (salvage cannot choose between overlapping segments: remove one)"
                   : ": restore the directory from a backup, or open it with salvage (dwd --salvage) to keep every "
                     "intact record and drop the damaged ones");
            goto fail;
        }
    }
    for (size_t k = 0; k < sc.nf; k++) {
        char what[400];
        describe(what, sizeof what, &sc, k, top, acked);
        note(rec, "SALVAGE: %s", what);
        uint64_t a = sc.f[k].seq < acked ? (acked - sc.f[k].seq < sc.f[k].lost ? acked - sc.f[k].seq : sc.f[k].lost) : 0;
        rec->lost_records += sc.f[k].lost;
        rec->lost_acknowledged += a;
        rec->salvaged = true;
    }

    /* ---- the caller's state: the checkpoint, then every record after it */
    if (log->has_ckpt) {
        rec->has_checkpoint = true;
        rec->checkpoint_seq = log->ckpt_seq;
        if (log->opt.on_checkpoint &&
            log->opt.on_checkpoint(log->opt.cb_ctx, log->ckpt_seq, last_ts, state, state_len) != 0) {
            hl_fmt(err, errlen, "dogwood history: recovery callback failed at the checkpoint");
            goto fail;
        }
    }
    free(state);
    state = NULL;
    if (deliver(log, &sc, replay_from, rec, err, errlen) != 0) goto fail;
    for (size_t j = 0; j < sc.n; j++) {
        rec->gap_records += sc.s[j].gaps;
        if (sc.s[j].last_ts > last_ts) last_ts = sc.s[j].last_ts;
    }
    if (rec->gap_records)
        note(rec, "%" PRIu64 " record(s) were lost by an earlier salvage (gap records in the log)", rec->gap_records);

    /* ---- make the directory say what was recovered */
    uint64_t next = end;
    if (sc.has_cut) {
        char name[64];
        hl_seg_name(name, sizeof name, sc.cut.base);
        if (unlinkat(log->dirfd, name, 0) != 0) {
            hl_fmt(err, errlen, "dogwood history: cannot remove %s/%s: %s", dir, name, strerror(errno));
            goto fail;
        }
        rec->dropped_segments++;
        rec->dropped_bytes += sc.cut.size;
        note(rec, "segment %016" PRIx64 " was started by a checkpoint that a crash cut short, before the records "
             "before it were synced (the previous segment ends at seq %" PRIu64 "): removed, %" PRIu64 " bytes, %" PRIu64
             " record(s), none acknowledged", sc.cut.base, sc.s[sc.n - 1].end, sc.cut.size, sc.cut.end - sc.cut.base);
    }
    if (torn) {
        seg_scan *g = &sc.s[sc.n - 1];
        char name[64];
        hl_seg_name(name, sizeof name, g->base);
        uint64_t drop = g->size - g->valid_off;
        if (g->dropped) {
            if (unlinkat(log->dirfd, name, 0) != 0) {
                hl_fmt(err, errlen, "dogwood history: cannot remove %s/%s: %s", dir, name, strerror(errno));
                goto fail;
            }
            rec->dropped_segments++;
            note(rec, "segment %016" PRIx64 " has a damaged header and no acknowledged record: replaced (%" PRIu64 " bytes)",
                 g->base, g->size);
            if (g->m) munmap((void *)g->m, g->maplen);
            free(g->runs);
            sc.n--;
        } else {
            int fd = openat(log->dirfd, name, O_RDWR | O_CLOEXEC);
            if (fd < 0 || ftruncate(fd, (off_t)g->valid_off) != 0 || fsync(fd) != 0) {
                hl_fmt(err, errlen, "dogwood history: cannot truncate %s/%s: %s", dir, name, strerror(errno));
                if (fd >= 0) close(fd);
                goto fail;
            }
            close(fd);
            note(rec, "segment %016" PRIx64 ": torn tail at offset %" PRIu64 ", %" PRIu64 " bytes dropped (never acknowledged)",
                 g->base, g->valid_off, drop);
            g->size = g->valid_off;
        }
        rec->dropped_bytes += drop;
    }
    if (rec->salvaged) {
        if (acked > next) next = acked;
        if (salvage(log, &sc, expect0, acked, next, last_ts) != 0) {
            hl_fmt(err, errlen, "dogwood history: salvage cannot rewrite a segment in %s: %s", dir, strerror(errno));
            goto fail;
        }
        if (sc.s[sc.n - 1].end > next) next = sc.s[sc.n - 1].end;
    }
    log->next_seq = next;
    log->last_ts = last_ts;
    log->written_end = log->synced_end = log->want_sync_end = next;

    /* ---- the active segment: the last one if it ends at next, else a new one */
    for (size_t i = 0; i < start; i++)
        if (hl_segs_push(log, segs[i].base) != 0) { hl_fmt(err, errlen, "dogwood history: out of memory"); goto fail; }
    for (size_t j = 0; j < sc.n; j++)
        if (hl_segs_push(log, sc.s[j].base) != 0) { hl_fmt(err, errlen, "dogwood history: out of memory"); goto fail; }
    if (sc.n) {
        seg_scan *g = &sc.s[sc.n - 1];
        char name[64];
        hl_seg_name(name, sizeof name, g->base);
        int fd = openat(log->dirfd, name, O_RDWR | O_CLOEXEC);
        /* what the witness will claim must be on disk first (BATCH, NONE) */
        if (fd < 0 || fdatasync(fd) != 0) {
            hl_fmt(err, errlen, "dogwood history: cannot sync %s/%s: %s", dir, name, strerror(errno));
            if (fd >= 0) close(fd);
            goto fail;
        }
        if (g->end == next) {
            log->fd = fd;
            log->seg_base = g->base;
            log->file_off = g->size;
        } else close(fd);
    }
    /* a fresh directory's witness before its first segment: a crash
     * between the two must not leave a segment without ACKED (refused) */
    if (fresh) {
        hl_acked a = { 0, 0, 0 };
        if (hl_acked_create(log, &a) != 0) {
            hl_fmt(err, errlen, "dogwood history: cannot write %s/" ACK_NAME ": %s", dir, strerror(errno));
            goto fail;
        }
    }
    if (log->fd < 0) {
        /* a kept segment may already carry this base (empty) */
        if (log->nsegs && log->segs[log->nsegs - 1] == next) log->nsegs--;
        log->fd = hl_create_segment(log, next, last_ts);
        if (log->fd < 0) { hl_fmt(err, errlen, "dogwood history: cannot create a segment in %s: %s", dir, strerror(errno)); goto fail; }
        log->seg_base = next;
        log->file_off = SEG_HDR;
        if (hl_segs_push(log, next) != 0) { hl_fmt(err, errlen, "dogwood history: out of memory"); goto fail; }
    }

    /* ---- the witness: everything recovered is now acknowledged */
    uint64_t keep = log->has_ckpt ? keep_from : (have_mark ? mark.keep : 0);
    if (!log->has_ckpt && log->nsegs && log->segs[0] > keep) keep = log->segs[0];
    int arc;
    if (have_mark) {
        log->ackfd = openat(log->dirfd, ACK_NAME, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        log->ack_end = mark.end; log->ack_keep = mark.keep; log->ack_gen = mark.gen;
        arc = log->ackfd < 0 ? -1 : hl_acked_write(log, next, keep);
    } else if (fresh) {
        arc = hl_acked_write(log, next, keep);
    } else {
        hl_acked a = { next, keep, 0 };
        arc = hl_acked_create(log, &a);
    }
    if (arc != 0) { hl_fmt(err, errlen, "dogwood history: cannot write %s/" ACK_NAME ": %s", dir, strerror(errno)); goto fail; }

    /* ---- tidy: older checkpoints, segments below the checkpoint's keep_from */
    for (size_t i = 0; i < nck; i++) {
        if (log->has_ckpt && ckpts[i] == log->ckpt_seq) continue;
        char name[64];
        hl_ckpt_name(name, sizeof name, ckpts[i]);
        unlinkat(log->dirfd, name, 0);
    }
    if (log->has_ckpt) hl_retire_segments(log, keep_from);
    fsync(log->dirfd);

    rec->next_seq = log->next_seq;
    rec->last_ts = log->last_ts;
    rec->segments = (uint32_t)log->nsegs;
    if (!rec->records) rec->first_seq = log->next_seq;

    if (log->opt.durability == DW_DURABILITY_BATCH) {
        if (pthread_create(&log->flusher, NULL, hl_flusher_main, log) != 0) {
            hl_fmt(err, errlen, "dogwood history: cannot start the flusher thread");
            goto fail;
        }
        log->has_flusher = true;
    }
    scan_free(&sc);
    free(segs);
    free(ckpts);
    return log;

fail:
    if (d) closedir(d);
    scan_free(&sc);
    free(state);
    free(segs);
    free(ckpts);
    if (log->fd >= 0) close(log->fd);
    if (log->ackfd >= 0) close(log->ackfd);
    if (log->lockfd >= 0) close(log->lockfd);
    if (log->dirfd >= 0) close(log->dirfd);
    pthread_mutex_destroy(&log->mu);
    pthread_mutex_destroy(&log->ckpt_mu);
    pthread_mutex_destroy(&log->ack_mu);
    pthread_cond_destroy(&log->cv);
    pthread_cond_destroy(&log->flush_cv);
    free(log->segs);
    free(log);
    if (!errno) errno = EIO;
    return NULL;
}
