/* test_histlog.c - runtime/histlog.c, the durable history store: recovery.
 *
 * Round trip; a torn tail at every byte offset (the longest valid prefix,
 * and the log keeps working); a flipped byte at every offset of a small log
 * (in the last record a torn tail, anywhere else a refusal naming segment,
 * offset and the records that follow; salvage keeps every intact record and
 * the next plain open accepts its gap record); a corrupt middle record and
 * an older segment (refused, salvaged); losses only ACKED shows (a deleted,
 * emptied or cut last segment, a missing middle segment, records missing
 * at the start, ACKED itself gone; damage the checkpoint covers loses
 * nothing; a salvage in front of a dropped last segment reopens plainly); a torn tail under FULL; a reopen with no room to grow a file;
 * version-1 refusal and upgrade; schema-digest mismatch
 * and newer-format refusals; checkpoint + retention + reopen (including a
 * checkpoint torn at every offset and a crash between checkpoint and the new
 * segment).  The append path (threads, durability modes, write errors, the
 * lock, timestamps) is tests/unit/test_histlog_append.c.
 * Everything happens in a mkdtemp directory under /tmp, removed afterwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "runtime/histlog.h"

#include "histlog_fixture.h"


/* ================================================================ tests */

static void test_round_trip(void **state)
{
    (void)state;
    char dir[128];
    subdir(dir, sizeof dir, "rt");
    dw_histlog_recovery rec;
    dw_histlog *log = open_ok(dir, DW_DURABILITY_FULL, NULL, &rec);
    assert_int_equal(rec.next_seq, 0);
    assert_int_equal(rec.records, 0);
    append_n(log, 0, 100);
    assert_int_equal(dw_histlog_next_seq(log), 100);
    assert_int_equal(dw_histlog_close(log), 0);

    collect c = { 0 };
    log = open_ok(dir, DW_DURABILITY_FULL, &c, &rec);
    check_records(&c, 0, 100);
    assert_int_equal(rec.dropped_bytes, 0);
    assert_string_equal(rec.note, "");
    assert_int_equal(rec.next_seq, 100);
    assert_int_equal(rec.first_seq, 0);
    assert_int_equal(rec.last_ts, c.v[99].ts);
    append_n(log, 100, 5);
    assert_int_equal(dw_histlog_close(log), 0);
    collect_free(&c);
    log = open_ok(dir, DW_DURABILITY_FULL, &c, &rec);
    check_records(&c, 0, 105);
    dw_histlog_close(log);
    collect_free(&c);
}

static void test_torn_tail_every_offset(void **state)
{
    (void)state;
    char dir[128], work[128];
    subdir(dir, sizeof dir, "torn");
    subdir(work, sizeof work, "torn-work");
    dw_histlog *log = open_ok(dir, DW_DURABILITY_NONE, NULL, NULL);
    const uint64_t N = 8;
    append_n(log, 0, N);
    assert_int_equal(dw_histlog_close(log), 0);
    snap s;
    snap_take(dir, &s);
    file_t *seg = snap_find(&s, "seg-");
    assert_non_null(seg);
    assert_int_equal(seg->len, rec_end(N - 1));
    for (size_t L = 0; L <= seg->len; L++) {
        snap_restore(work, &s, seg, L, -1);
        collect c = { 0 };
        dw_histlog_recovery rec;
        log = open_ok(work, DW_DURABILITY_NONE, &c, &rec);
        uint64_t k = 0;
        while (k < N && rec_end(k) <= L) k++;
        check_records(&c, 0, k);
        size_t valid = L < 48 ? 0 : (k ? rec_end(k - 1) : 48);
        assert_int_equal(rec.dropped_bytes, L - valid);
        if (L != valid) assert_true(rec.note[0] != 0);
        assert_int_equal(rec.next_seq, k);
        /* the log goes on from the prefix */
        append_n(log, k, 1);
        assert_int_equal(dw_histlog_close(log), 0);
        collect_free(&c);
        log = open_ok(work, DW_DURABILITY_NONE, &c, &rec);
        check_records(&c, 0, k + 1);
        assert_int_equal(rec.dropped_bytes, 0);
        dw_histlog_close(log);
        collect_free(&c);
    }
    snap_free(&s);
}

/* A flipped byte at every offset of a small log: in the last record it is a
 * torn tail (dropped, noted); anywhere else valid records follow it, so the
 * open is refused with the segment, the byte offset and the count of
 * records that follow; salvage then keeps every intact record, records the
 * gap, and the next plain open accepts the log. */
static void test_corrupt_every_offset(void **state)
{
    (void)state;
    char dir[128], work[128], err[1024], want[128];
    subdir(dir, sizeof dir, "flip");
    subdir(work, sizeof work, "flip-work");
    dw_histlog *log = open_ok(dir, DW_DURABILITY_NONE, NULL, NULL);
    const uint64_t N = 6;
    append_n(log, 0, N);
    assert_int_equal(dw_histlog_close(log), 0);
    snap s;
    snap_take(dir, &s);
    file_t *seg = snap_find(&s, "seg-");
    for (size_t off = 0; off < seg->len; off++) {
        snap_restore(work, &s, seg, seg->len, (long)off);
        collect c = { 0 };
        dw_histlog_recovery rec;
        uint64_t j = 0;                          /* the damaged record; N: the header */
        while (j < N && rec_end(j) <= off) j++;
        if (off < 48) j = N;
        if (j == N - 1) {                        /* the last record: a torn tail */
            log = open_ok(work, DW_DURABILITY_NONE, &c, &rec);
            check_records(&c, 0, N - 1);
            assert_has(rec.note, "torn tail");
            assert_false(rec.salvaged);
            append_n(log, N - 1, 1);
            dw_histlog_close(log);
            collect_free(&c);
            continue;
        }
        open_refused(work, DW_DURABILITY_NONE, err);
        assert_has(err, "dogwood history is corrupt");
        assert_has(err, "seg-0000000000000000.log");
        if (j == N) assert_has(err, "header (byte 0)");
        else {
            snprintf(want, sizeof want, "at byte %zu (seq %llu)", j ? rec_end(j - 1) : 48, (unsigned long long)j);
            assert_has(err, want);
        }
        snprintf(want, sizeof want, "%llu acknowledged record(s) follow", (unsigned long long)(j == N ? N : N - j - 1));
        assert_has(err, want);
        assert_has(err, "salvage");
        /* salvage: every intact record stays */
        log = open_salvage(work, DW_DURABILITY_NONE, &c, &rec);
        check_records_but(&c, 0, N, j == N ? UINT64_MAX : j);
        assert_true(rec.salvaged);
        assert_int_equal(rec.lost_records, j == N ? 0 : 1);
        assert_has(rec.note, "SALVAGE");
        assert_int_equal(rec.next_seq, N);
        append_n(log, N, 1);
        dw_histlog_close(log);
        collect_free(&c);
        /* the gap is on disk: a plain open accepts the log and says so */
        log = open_ok(work, DW_DURABILITY_NONE, &c, &rec);
        check_records_but(&c, 0, N + 1, j == N ? UINT64_MAX : j);
        assert_false(rec.salvaged);
        assert_int_equal(rec.gap_records, j == N ? 0 : 1);
        if (j != N) assert_has(rec.note, "earlier salvage");
        dw_histlog_close(log);
        collect_free(&c);
    }
    snap_free(&s);
}

static void test_corrupt_middle_record(void **state)
{
    (void)state;
    char dir[128], err[1024];
    subdir(dir, sizeof dir, "mid");
    dw_histlog *log = open_ok(dir, DW_DURABILITY_FULL, NULL, NULL);
    append_n(log, 0, 18);
    dw_histlog_close(log);
    char p[256];
    snprintf(p, sizeof p, "%s/seg-%016x.log", dir, 0);
    int fd = open(p, O_RDWR);
    assert_true(fd >= 0);
    struct stat sb;
    fstat(fd, &sb);
    off_t at = (off_t)rec_end(4) + 32 + 1;      /* payload of record 5 */
    uint8_t b;
    assert_int_equal(pread(fd, &b, 1, at), 1);
    b ^= 0x01;
    assert_int_equal(pwrite(fd, &b, 1, at), 1);
    close(fd);
    /* refused, twice: the refusal changes nothing */
    for (int k = 0; k < 2; k++) {
        open_refused(dir, DW_DURABILITY_FULL, err);
        assert_has(err, "seg-0000000000000000.log: the record at byte 278 (seq 5) is damaged");
        assert_has(err, "12 acknowledged record(s) follow");
        struct stat now;
        assert_int_equal(stat(p, &now), 0);
        assert_int_equal(now.st_size, sb.st_size);
    }
    collect c = { 0 };
    dw_histlog_recovery rec;
    log = open_salvage(dir, DW_DURABILITY_FULL, &c, &rec);
    check_records_but(&c, 0, 18, 5);
    assert_true(rec.salvaged);
    assert_int_equal(rec.lost_records, 1);
    assert_int_equal(rec.lost_acknowledged, 1);
    assert_int_equal(rec.acked_end, 18);
    assert_has(rec.note, "SALVAGE: seg-0000000000000000.log: the record at byte 278 (seq 5) is damaged, 1 record(s) lost");
    assert_int_equal(dw_histlog_next_seq(log), 18);
    append_n(log, 18, 1);
    dw_histlog_close(log);
    collect_free(&c);
    log = open_ok(dir, DW_DURABILITY_FULL, &c, &rec);
    check_records_but(&c, 0, 19, 5);
    assert_int_equal(rec.gap_records, 1);
    dw_histlog_close(log);
    collect_free(&c);
}

static void patch_version(const char *path, uint32_t hlen, uint32_t version)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    uint8_t h[128];
    assert_int_equal(pread(fd, h, hlen, 0), (ssize_t)hlen);
    for (int i = 0; i < 4; i++) h[8 + i] = (uint8_t)(version >> (8 * i));
    uint64_t x = XXH3_64bits(h, hlen - 8);
    for (int i = 0; i < 8; i++) h[hlen - 8 + i] = (uint8_t)(x >> (8 * i));
    assert_int_equal(pwrite(fd, h, hlen, 0), (ssize_t)hlen);
    close(fd);
}

static void test_schema_and_format_refusals(void **state)
{
    (void)state;
    char dir[128], err[256];
    subdir(dir, sizeof dir, "schema");
    dw_histlog *log = open_ok(dir, DW_DURABILITY_FULL, NULL, NULL);
    append_n(log, 0, 3);
    dw_histlog_close(log);

    dw_histlog_options o = opts(DW_DURABILITY_FULL, NULL);
    o.schema_digest = DIGEST ^ 1;
    assert_null(dw_histlog_open(dir, &o, NULL, err, sizeof err));
    assert_non_null(strstr(err, "dogwood history uses a different event schema"));

    /* nothing was harmed: the right digest still opens everything */
    collect c = { 0 };
    log = open_ok(dir, DW_DURABILITY_FULL, &c, NULL);
    check_records(&c, 0, 3);
    dw_histlog_close(log);
    collect_free(&c);

    /* a segment from a newer format */
    char p[256];
    snprintf(p, sizeof p, "%s/seg-%016x.log", dir, 0);
    patch_version(p, 48, DW_HISTLOG_VERSION + 1);
    o.schema_digest = DIGEST;
    assert_null(dw_histlog_open(dir, &o, NULL, err, sizeof err));
    assert_non_null(strstr(err, "newer format"));
    patch_version(p, 48, DW_HISTLOG_VERSION);
    log = open_ok(dir, DW_DURABILITY_FULL, &c, NULL);
    check_records(&c, 0, 3);
    /* a checkpoint from a newer format, and a checkpoint under another schema */
    assert_int_equal(dw_histlog_checkpoint(log, "st", 2, 0), 0);
    dw_histlog_close(log);
    collect_free(&c);
    snprintf(p, sizeof p, "%s/ckpt-%016x.ckpt", dir, 3);
    patch_version(p, 72, 7);
    assert_null(dw_histlog_open(dir, &o, NULL, err, sizeof err));
    assert_non_null(strstr(err, "newer format"));
    patch_version(p, 72, DW_HISTLOG_VERSION);
    o.schema_digest = DIGEST ^ 2;
    assert_null(dw_histlog_open(dir, &o, NULL, err, sizeof err));
    assert_non_null(strstr(err, "dogwood history uses a different event schema"));
    /* ACKED under another schema, or from a newer format */
    o.schema_digest = DIGEST;
    log = open_ok(dir, DW_DURABILITY_FULL, NULL, NULL);
    dw_histlog_close(log);
    snprintf(p, sizeof p, "%s/ACKED", dir);
    patch_version(p, 64, 9);
    assert_null(dw_histlog_open(dir, &o, NULL, err, sizeof err));
    assert_non_null(strstr(err, "ACKED was written by a newer format"));
}

/* Version 1 (no ACKED, no gap records) is refused with a clear message;
 * salvage reads it once and upgrades the directory (ACKED), after which a
 * plain open reads the version-1 segment. */
static void test_version1_upgrade(void **state)
{
    (void)state;
    char dir[128], p[256], err[1024];
    subdir(dir, sizeof dir, "v1");
    dw_histlog *log = open_ok(dir, DW_DURABILITY_FULL, NULL, NULL);
    append_n(log, 0, 4);
    dw_histlog_close(log);
    snprintf(p, sizeof p, "%s/seg-%016x.log", dir, 0);
    patch_version(p, 48, 1);
    snprintf(p, sizeof p, "%s/ACKED", dir);
    assert_int_equal(unlink(p), 0);
    open_refused(dir, DW_DURABILITY_FULL, err);
    assert_has(err, "format version 1");
    assert_has(err, "salvage");
    collect c = { 0 };
    dw_histlog_recovery rec;
    log = open_salvage(dir, DW_DURABILITY_FULL, &c, &rec);
    check_records(&c, 0, 4);
    assert_has(rec.note, "ACKED missing");
    append_n(log, 4, 1);
    dw_histlog_close(log);
    collect_free(&c);
    log = open_ok(dir, DW_DURABILITY_FULL, &c, &rec);
    check_records(&c, 0, 5);
    assert_string_equal(rec.note, "");
    dw_histlog_close(log);
    collect_free(&c);
}

static void test_checkpoint_retention_reopen(void **state)
{
    (void)state;
    char dir[128];
    subdir(dir, sizeof dir, "ckpt");
    dw_histlog *log = open_ok(dir, DW_DURABILITY_BATCH, NULL, NULL);
    append_n(log, 0, 1000);
    assert_int_equal(dw_histlog_checkpoint(log, "state@1000", 10, 900), 0);
    /* keep_from 900 still needs segment 0 */
    assert_int_equal(count_files(dir, "seg-"), 2);
    append_n(log, 1000, 1000);
    assert_int_equal(dw_histlog_checkpoint(log, "state@2000", 10, 1900), 0);
    assert_int_equal(count_files(dir, "seg-"), 2);          /* seg 0 retired */
    assert_int_equal(count_files(dir, "ckpt-"), 1);
    char p[256];
    snprintf(p, sizeof p, "%s/seg-%016x.log", dir, 0);
    assert_int_equal(access(p, F_OK), -1);
    append_n(log, 2000, 10);
    assert_int_equal(dw_histlog_close(log), 0);

    collect c = { 0 };
    dw_histlog_recovery rec;
    log = reopen_at_ckpt(dir, DW_DURABILITY_FULL, &c, &rec, 2000);
    assert_int_equal(c.ckpt_len, 10);
    assert_memory_equal(c.ckpt, "state@2000", 10);
    assert_true(rec.has_checkpoint);
    check_records(&c, 2000, 10);             /* only what follows the checkpoint */
    assert_int_equal(rec.first_seq, 2000);
    assert_int_equal(rec.next_seq, 2010);
    dw_histlog_close(log);
    collect_free(&c);

    /* the checkpoint torn at every offset, or flipped: never a crash; without a
     * whole checkpoint, every retained record (from 1000) is replayed */
    snap s;
    snap_take(dir, &s);
    file_t *ck = snap_find(&s, "ckpt-");
    assert_non_null(ck);
    char work[128];
    subdir(work, sizeof work, "ckpt-work");
    for (size_t L = 0; L <= ck->len; L++) {
        for (int mode = 0; mode < 2; mode++) {
            if (mode == 1 && L == ck->len) continue;
            if (mode == 0) snap_restore(work, &s, ck, L, -1);
            else snap_restore(work, &s, ck, ck->len, (long)L);
            log = open_ok(work, DW_DURABILITY_NONE, &c, &rec);
            if (mode == 0 && L == ck->len) {
                assert_true(c.have_ckpt);
                check_records(&c, 2000, 10);
            } else {
                assert_false(c.have_ckpt);
                assert_int_equal(rec.checkpoints_rejected, 1);
                check_records(&c, 1000, 1010);
            }
            assert_int_equal(rec.next_seq, 2010);
            dw_histlog_close(log);
            collect_free(&c);
        }
    }
    snap_free(&s);

    /* a crash between the checkpoint and its new segment */
    log = open_ok(dir, DW_DURABILITY_FULL, NULL, NULL);
    assert_int_equal(dw_histlog_checkpoint(log, "state@2010", 10, 2000), 0);
    dw_histlog_close(log);
    snprintf(p, sizeof p, "%s/seg-%016x.log", dir, 2010);
    assert_int_equal(unlink(p), 0);
    log = open_ok(dir, DW_DURABILITY_FULL, &c, &rec);
    assert_true(c.have_ckpt);
    assert_int_equal(c.ckpt_seq, 2010);
    assert_int_equal(c.n, 0);
    assert_int_equal(rec.next_seq, 2010);
    assert_int_equal(rec.dropped_bytes, 0);    /* segment 2000 stays whole */
    assert_int_equal(rec.segments, 1);
    append_n(log, 2010, 3);
    dw_histlog_close(log);
    collect_free(&c);
    log = open_ok(dir, DW_DURABILITY_FULL, &c, &rec);
    assert_int_equal(c.ckpt_seq, 2010);
    check_records(&c, 2010, 3);
    assert_int_equal(rec.dropped_bytes, 0);
    dw_histlog_close(log);
    collect_free(&c);
    /* without the checkpoint, segment 2000 replays whole: 2000..2012 */
    snprintf(p, sizeof p, "%s/ckpt-%016x.ckpt", dir, 2010);
    assert_int_equal(unlink(p), 0);
    log = open_ok(dir, DW_DURABILITY_FULL, &c, &rec);
    assert_false(c.have_ckpt);
    check_records(&c, 2000, 13);
    assert_int_equal(rec.dropped_bytes, 0);
    dw_histlog_close(log);
    collect_free(&c);
}

/* Damage in an older segment (replayed because the checkpoint is gone),
 * followed by a whole later segment: refused; salvage keeps the rest. */
static void test_corrupt_older_segment(void **state)
{
    (void)state;
    char dir[128], p[256], err[1024];
    subdir(dir, sizeof dir, "older");
    dw_histlog *log = open_ok(dir, DW_DURABILITY_NONE, NULL, NULL);
    append_n(log, 0, 10);
    assert_int_equal(dw_histlog_checkpoint(log, "s", 1, 0), 0);
    append_n(log, 10, 10);
    dw_histlog_close(log);
    snprintf(p, sizeof p, "%s/ckpt-%016x.ckpt", dir, 10);
    assert_int_equal(unlink(p), 0);
    snprintf(p, sizeof p, "%s/seg-%016x.log", dir, 0);
    int fd = open(p, O_RDWR);
    uint8_t b = 0x55;
    assert_int_equal(pwrite(fd, &b, 1, (off_t)rec_end(6) + 20), 1);   /* inside record 7 */
    close(fd);
    open_refused(dir, DW_DURABILITY_NONE, err);
    assert_has(err, "(seq 7) is damaged");
    assert_has(err, "12 acknowledged record(s) follow");
    collect c = { 0 };
    dw_histlog_recovery rec;
    log = open_salvage(dir, DW_DURABILITY_NONE, &c, &rec);
    check_records_but(&c, 0, 20, 7);
    assert_int_equal(rec.lost_records, 1);
    assert_int_equal(rec.lost_acknowledged, 1);      /* the checkpoint synced 0..9 */
    assert_int_equal(rec.next_seq, 20);
    append_n(log, 20, 2);
    dw_histlog_close(log);
    collect_free(&c);
    log = open_ok(dir, DW_DURABILITY_NONE, &c, &rec);
    check_records_but(&c, 0, 22, 7);
    assert_int_equal(rec.dropped_bytes, 0);
    dw_histlog_close(log);
    collect_free(&c);
}

/* Losses a segment cannot show by itself, caught by ACKED: a deleted last
 * segment, a zero-length one, the last record cut off, a segment missing in
 * the middle, ACKED itself gone.  Each is refused; salvage keeps the rest,
 * reports the acknowledged records lost and never reuses their seqs. */
static void make_three_segments(const char *dir)
{
    /* seg 0: 0..9, seg a: 10..19, seg 14: 20..25; checkpoint at 20 */
    dw_histlog *log = open_ok(dir, DW_DURABILITY_FULL, NULL, NULL);
    append_n(log, 0, 10);
    assert_int_equal(dw_histlog_checkpoint(log, "c10", 3, 0), 0);
    append_n(log, 10, 10);
    assert_int_equal(dw_histlog_checkpoint(log, "c20", 3, 0), 0);
    append_n(log, 20, 6);
    assert_int_equal(dw_histlog_close(log), 0);
}

static void seg_path(char *p, size_t n, const char *dir, uint64_t base)
{
    snprintf(p, n, "%s/seg-%016llx.log", dir, (unsigned long long)base);
}

/* Salvage of a loss before a last segment that is dropped (a damaged
 * header, no record, its base past ACKED): the salvaged log reaches that
 * base with its gap, so the next plain open accepts it (it found a hole
 * between the two before; fuzz_histlog). */
static void test_salvage_before_dropped_segment(void **state)
{
    (void)state;
    char dir[128], p[256], err[1024];
    subdir(dir, sizeof dir, "salvage-dropped");
    dw_histlog *log = open_ok(dir, DW_DURABILITY_FULL, NULL, NULL);
    append_n(log, 0, 10);
    assert_int_equal(dw_histlog_close(log), 0);             /* ACKED: 10 */
    snprintf(p, sizeof p, "%s/seg-%016x.log", dir, 0);
    assert_int_equal(truncate(p, (off_t)rec_end(8)), 0);     /* record 9, acknowledged, gone */
    snprintf(p, sizeof p, "%s/seg-%016x.log", dir, 20);
    FILE *fp = fopen(p, "wb");
    assert_non_null(fp);
    fputs("not a segment header", fp);
    fclose(fp);
    open_refused(dir, DW_DURABILITY_FULL, err);
    collect c = { 0 };
    dw_histlog_recovery rec;
    log = open_salvage(dir, DW_DURABILITY_FULL, &c, &rec);
    assert_true(rec.salvaged);
    check_records(&c, 0, 9);
    uint64_t next = rec.next_seq;
    assert_true(next >= 10);
    append_n(log, next, 2);
    dw_histlog_close(log);
    collect_free(&c);
    log = open_ok(dir, DW_DURABILITY_FULL, &c, &rec);
    assert_false(rec.salvaged);
    assert_int_equal(rec.next_seq, next + 2);
    assert_int_equal(c.n, 11);
    for (uint64_t i = 0; i < 11; i++) assert_int_equal(c.v[i].seq, i < 9 ? i : next + i - 9);
    dw_histlog_close(log);
    collect_free(&c);
}

static void test_missing_records(void **state)
{
    (void)state;
    char dir[128], p[256], err[1024];
    collect c = { 0 };
    dw_histlog_recovery rec;
    uint8_t buf[64];
    for (int fault = 0; fault < 3; fault++) {
        snprintf(dir, sizeof dir, "%s/missing%d", g_root, fault);
        make_three_segments(dir);
        seg_path(p, sizeof p, dir, 20);
        if (fault == 0) assert_int_equal(unlink(p), 0);                  /* deleted last segment */
        if (fault == 1) assert_int_equal(truncate(p, 0), 0);            /* zero-length */
        if (fault == 2) {                                                /* the last record cut off */
            struct stat sb;
            assert_int_equal(stat(p, &sb), 0);
            assert_int_equal(truncate(p, sb.st_size - 32 - (off_t)payload(25, buf)), 0);
        }
        uint64_t lost = fault == 2 ? 1 : 6;
        open_refused(dir, DW_DURABILITY_FULL, err);
        assert_has(err, "dogwood history is corrupt");
        if (fault == 0) assert_has(err, "seg-000000000000000a.log ends at byte");
        else assert_has(err, "seg-0000000000000014.log");
        if (fault == 1) assert_has(err, "0 bytes long");
        else {
            char want[128];
            snprintf(want, sizeof want, "says 26 record(s) were acknowledged: the last %llu are missing", (unsigned long long)lost);
            assert_has(err, want);
        }
        {
            dw_histlog *log = open_salvage(dir, DW_DURABILITY_FULL, &c, &rec);
            assert_true(c.have_ckpt);
            assert_int_equal(c.ckpt_seq, 20);
            check_records(&c, 20, 6 - lost);
            assert_true(rec.salvaged);
            assert_int_equal(rec.lost_records, lost);
            assert_int_equal(rec.lost_acknowledged, lost);
            assert_int_equal(rec.next_seq, 26);                 /* lost seqs are never reused */
            append_n(log, 26, 1);
            dw_histlog_close(log);
            collect_free(&c);
        }
        dw_histlog *log = open_ok(dir, DW_DURABILITY_FULL, &c, &rec);
        assert_int_equal(c.n, 6 - lost + 1);
        assert_int_equal(c.v[c.n - 1].seq, 26);
        assert_int_equal(rec.gap_records, lost);
        dw_histlog_close(log);
        collect_free(&c);
    }

    /* a segment missing in the middle (the checkpoint gone too, so every
     * segment from keep_from 0 is replayed) */
    subdir(dir, sizeof dir, "missing-mid");
    make_three_segments(dir);
    seg_path(p, sizeof p, dir, 10);
    assert_int_equal(unlink(p), 0);
    snprintf(p, sizeof p, "%s/ckpt-%016x.ckpt", dir, 20);
    assert_int_equal(unlink(p), 0);
    open_refused(dir, DW_DURABILITY_FULL, err);
    assert_has(err, "seg-0000000000000000.log ends at byte");
    assert_has(err, "(seq 10) but the next segment starts at seq 20: 10 record(s) are in no file, 6 acknowledged record(s) follow");
    dw_histlog *log = open_salvage(dir, DW_DURABILITY_FULL, &c, &rec);
    assert_false(c.have_ckpt);
    assert_int_equal(c.n, 16);
    assert_int_equal(c.v[9].seq, 9);
    assert_int_equal(c.v[10].seq, 20);
    assert_int_equal(rec.lost_records, 10);
    dw_histlog_close(log);
    collect_free(&c);
    log = open_ok(dir, DW_DURABILITY_FULL, &c, &rec);
    assert_int_equal(c.n, 16);
    assert_int_equal(rec.gap_records, 10);
    dw_histlog_close(log);
    collect_free(&c);

    /* the checkpoint gone and the segments before it retired: records are missing at the start */
    subdir(dir, sizeof dir, "missing-start");
    log = open_ok(dir, DW_DURABILITY_FULL, NULL, NULL);
    append_n(log, 0, 10);
    assert_int_equal(dw_histlog_checkpoint(log, "c10", 3, 5), 0);
    append_n(log, 10, 10);
    assert_int_equal(dw_histlog_checkpoint(log, "c20", 3, 15), 0);    /* retires seg 0 */
    dw_histlog_close(log);
    snprintf(p, sizeof p, "%s/ckpt-%016x.ckpt", dir, 20);
    assert_int_equal(unlink(p), 0);
    seg_path(p, sizeof p, dir, 10);
    assert_int_equal(unlink(p), 0);
    open_refused(dir, DW_DURABILITY_FULL, err);
    assert_has(err, "seg-0000000000000014.log starts at seq 20 but the history needs records from seq 15");

    /* damage only to records the loaded checkpoint covers loses nothing: the
     * crash came between a checkpoint and its new segment, then seg 0 was
     * emptied, or a byte of record 3 flipped */
    for (int k = 0; k < 2; k++) {
        snprintf(dir, sizeof dir, "%s/covered%d", g_root, k);
        log = open_ok(dir, DW_DURABILITY_FULL, NULL, NULL);
        append_n(log, 0, 10);
        assert_int_equal(dw_histlog_checkpoint(log, "c10", 3, 0), 0);
        dw_histlog_close(log);
        seg_path(p, sizeof p, dir, 10);
        assert_int_equal(unlink(p), 0);
        seg_path(p, sizeof p, dir, 0);
        if (k == 0) assert_int_equal(truncate(p, 0), 0);
        else {
            int fd = open(p, O_RDWR);
            uint8_t x = 0x42;
            assert_int_equal(pwrite(fd, &x, 1, (off_t)rec_end(2) + 20), 1);
            close(fd);
        }
        log = open_ok(dir, DW_DURABILITY_FULL, &c, &rec);
        assert_true(c.have_ckpt);
        assert_int_equal(c.n, 0);
        assert_int_equal(rec.next_seq, 10);
        assert_false(rec.salvaged);
        assert_has(rec.note, "but the checkpoint at seq 10 covers it: nothing lost");
        append_n(log, 10, 2);
        dw_histlog_close(log);
        collect_free(&c);
        log = open_ok(dir, DW_DURABILITY_FULL, &c, &rec);
        check_records(&c, 10, 2);
        dw_histlog_close(log);
        collect_free(&c);
    }

    /* ACKED gone */
    subdir(dir, sizeof dir, "missing-acked");
    make_three_segments(dir);
    snprintf(p, sizeof p, "%s/ACKED", dir);
    assert_int_equal(unlink(p), 0);
    open_refused(dir, DW_DURABILITY_FULL, err);
    assert_has(err, "ACKED is missing");
    log = open_salvage(dir, DW_DURABILITY_FULL, &c, &rec);
    check_records(&c, 20, 6);
    assert_has(rec.note, "ACKED missing");
    dw_histlog_close(log);
    collect_free(&c);
    log = open_ok(dir, DW_DURABILITY_FULL, &c, &rec);
    check_records(&c, 20, 6);
    dw_histlog_close(log);
    collect_free(&c);
}

/* Under FULL, a record being written when the process died is past ACKED's
 * end: a torn tail, cut and noted, never a refusal (and so is a torn write
 * whose later bytes made it to disk: nothing valid follows). */
static void test_torn_tail_full(void **state)
{
    (void)state;
    char dir[128], p[256];
    subdir(dir, sizeof dir, "torn-full");
    dw_histlog *log = open_ok(dir, DW_DURABILITY_FULL, NULL, NULL);
    append_n(log, 0, 5);
    dw_histlog_close(log);
    seg_path(p, sizeof p, dir, 0);
    struct stat sb;
    assert_int_equal(stat(p, &sb), 0);
    int fd = open(p, O_WRONLY | O_APPEND);
    uint8_t junk[50];
    memset(junk, 0, sizeof junk);
    junk[10] = 7;
    assert_int_equal(write(fd, junk, sizeof junk), (ssize_t)sizeof junk);
    close(fd);
    collect c = { 0 };
    dw_histlog_recovery rec;
    log = open_ok(dir, DW_DURABILITY_FULL, &c, &rec);
    check_records(&c, 0, 5);
    assert_has(rec.note, "torn tail at offset");
    assert_int_equal(rec.dropped_bytes, sizeof junk);
    assert_false(rec.salvaged);
    append_n(log, 5, 1);
    dw_histlog_close(log);
    collect_free(&c);
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal((size_t)sb.st_size, rec_end(5));
}

/* Reopening needs no room to write anything but ACKED's slot in place
 * (issue 13 row 18): with every file capped at its current size, the
 * reopen succeeds and replays every record. */
static void test_reopen_on_full_disk(void **state)
{
    (void)state;
    char dir[128];
    subdir(dir, sizeof dir, "reopen-full");
    dw_histlog *log = open_ok(dir, DW_DURABILITY_FULL, NULL, NULL);
    append_n(log, 0, 40);
    dw_histlog_close(log);
    char p[256];
    seg_path(p, sizeof p, dir, 0);
    struct stat sb;
    assert_int_equal(stat(p, &sb), 0);
    assert_true(sb.st_size > 1024);  /* ACKED's size */
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    lim = old;
    lim.rlim_cur = (rlim_t)sb.st_size;
    setrlimit(RLIMIT_FSIZE, &lim);
    collect c = { 0 };
    dw_histlog_recovery rec;
    dw_histlog_options o = opts(DW_DURABILITY_FULL, &c);
    char err[1024];
    log = dw_histlog_open(dir, &o, &rec, err, sizeof err);
    uint64_t seq;
    int app = log ? dw_histlog_append(log, "x", 1, &seq) : 0;
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, prev);
    if (!log) fprintf(stderr, "reopen: %s\n", err);
    assert_non_null(log);
    check_records(&c, 0, 40);
    assert_int_equal(app, -1);      /* the disk is still full: the append fails (deny) */
    dw_histlog_close(log);
    collect_free(&c);
}

/* Reopen cost follows the window: many checkpoints, bounded files. */
static void test_retention_bounds_history(void **state)
{
    (void)state;
    char dir[128];
    subdir(dir, sizeof dir, "bounded");
    dw_histlog *log = open_ok(dir, DW_DURABILITY_NONE, NULL, NULL);
    for (uint64_t round = 0; round < 20; round++) {
        append_n(log, round * 500, 500);
        uint64_t next = (round + 1) * 500;
        assert_int_equal(dw_histlog_checkpoint(log, "s", 1, next > 700 ? next - 700 : 0), 0);
        assert_true(count_files(dir, "seg-") <= 3);
    }
    dw_histlog_close(log);
    collect c = { 0 };
    dw_histlog_recovery rec;
    log = open_ok(dir, DW_DURABILITY_NONE, &c, &rec);
    assert_int_equal(c.ckpt_seq, 10000);
    assert_int_equal(c.n, 0);
    assert_true(rec.segments <= 3);
    dw_histlog_close(log);
    collect_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_torn_tail_every_offset),
        cmocka_unit_test(test_corrupt_every_offset),
        cmocka_unit_test(test_corrupt_middle_record),
        cmocka_unit_test(test_schema_and_format_refusals),
        cmocka_unit_test(test_checkpoint_retention_reopen),
        cmocka_unit_test(test_corrupt_older_segment),
        cmocka_unit_test(test_version1_upgrade),
        cmocka_unit_test(test_missing_records),
        cmocka_unit_test(test_salvage_before_dropped_segment),
        cmocka_unit_test(test_torn_tail_full),
        cmocka_unit_test(test_reopen_on_full_disk),
        cmocka_unit_test(test_retention_bounds_history),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
