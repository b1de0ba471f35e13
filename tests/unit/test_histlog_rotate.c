/* test_histlog_rotate.c - the log's rotation (runtime/histlog.c, checkpoint)
 * and what recovery makes of a crash at each point of it.
 *
 * A rotation makes seg.tmp ahead (off the leadership), then as the leader
 * writes the records before the switch to the old segment, the new one's
 * header, and renames it; the syncs (old segment, new segment, directory,
 * ACKED) come after, while appends go on.  File operations that take a
 * snapshot of the directory at the rename of seg.tmp (before and after it)
 * and at the checkpoint file's rename (settled) give the files of each
 * point; a crash may also lose what was not yet synced, so every state is
 * composed from them with the unsynced parts cut or damaged at every offset:
 * the previous segment's tail, the new segment's header and records.  Each
 * must open without salvage, keep every record below ACKED's end and the
 * longest intact prefix, and remove a new segment that follows a torn
 * previous one; damage to acknowledged records is still refused.  Then
 * failing file operations (no seg.tmp, a failed rename: the old segment
 * goes on, the checkpoint is still written), and processes killed at random
 * points of appends with a checkpoint every 5 records (FULL and BATCH): each
 * restart recovers every record the process had acknowledged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "runtime/histlog.h"
#include "histlog_fixture.h"

/* ================================================================ snapshots at the rotation's points */

typedef struct shot_ops {
    int dirfd;
    char dir[128];
    snap before_switch, after_switch, settled;
    bool fail_open, fail_rename;
} shot_ops;

static int shot_open(void *ctx, const char *name, int flags)
{
    shot_ops *o = ctx;
    if (o->fail_open && !strcmp(name, "seg.tmp")) { errno = EIO; return -1; }
    return openat(o->dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
}

/* the latest rename's snapshots count (the open's own segment is renamed too) */
static void retake(shot_ops *o, snap *s)
{
    snap_free(s);
    snap_take(o->dir, s);
}

static int shot_rename(void *ctx, const char *from, const char *to)
{
    shot_ops *o = ctx;
    if (!strcmp(from, "seg.tmp")) {
        if (o->fail_rename) { errno = EIO; return -1; }
        retake(o, &o->before_switch);
        int rc = renameat(o->dirfd, from, o->dirfd, to);
        retake(o, &o->after_switch);
        return rc;
    }
    if (!strcmp(from, "ckpt.tmp")) retake(o, &o->settled);
    return renameat(o->dirfd, from, o->dirfd, to);
}

static int shot_unlink(void *ctx, const char *name) { return unlinkat(((shot_ops *)ctx)->dirfd, name, 0); }

static void shot_init(shot_ops *o, const char *dir)
{
    memset(o, 0, sizeof *o);
    snprintf(o->dir, sizeof o->dir, "%s", dir);
    o->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(o->dirfd >= 0);
}

static void shot_free(shot_ops *o)
{
    snap_free(&o->before_switch);
    snap_free(&o->after_switch);
    snap_free(&o->settled);
    close(o->dirfd);
}

static void put_file(const char *dir, const char *name, const uint8_t *data, size_t len, long flip)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *fp = fopen(p, "wb");
    assert_non_null(fp);
    for (size_t i = 0; i < len; i++) fputc(data[i] ^ ((long)i == flip ? 0xff : 0), fp);
    fclose(fp);
}

static bool exists(const char *dir, const char *name)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

/* Records whose end is within the first len bytes of segment 0. */
static uint64_t whole_records(size_t len, uint64_t n)
{
    uint64_t k = 0;
    while (k < n && rec_end(k) <= len) k++;
    return k;
}

/* The new segment in a composed state. */
typedef struct seg_variant { const char *what; const uint8_t *data; size_t len; long flip; } seg_variant;

/* Compose a crash state in work: ACKED from ack, segment 0 (p) cut to plen
 * bytes, the new segment (lname) as v (data NULL: not there), seg.tmp if tmp. */
static void compose(const char *work, const file_t *ack, const file_t *p, size_t plen, const char *lname,
                    const seg_variant *v, const file_t *tmp)
{
    rm_rf(work);
    assert_int_equal(mkdir(work, 0700), 0);
    put_file(work, "ACKED", ack->data, ack->len, -1);
    put_file(work, p->name, p->data, plen, -1);
    if (v->data) put_file(work, lname, v->data, v->len, v->flip);
    if (tmp) put_file(work, tmp->name, tmp->data, tmp->len, -1);
}

static void test_rotation_crash_states(void **state)
{
    (void)state;
    char dir[128], work[128];
    subdir(dir, sizeof dir, "rot");
    /* the composed states on tmpfs when there is one: some thousand opens, each syncing */
    bool shm = access("/dev/shm", W_OK) == 0;
    if (shm) {
        strcpy(work, "/dev/shm/dw-histlog-rot-XXXXXX");
        assert_non_null(mkdtemp(work));
        assert_int_equal(rmdir(work), 0);
    } else subdir(work, sizeof work, "rot-work");
    assert_int_equal(mkdir(dir, 0700), 0);
    shot_ops o;
    shot_init(&o, dir);
    dw_histlog_fileops ops = { shot_open, shot_rename, shot_unlink, &o };
    dw_histlog_options opt = opts(DW_DURABILITY_BATCH, NULL);
    opt.fileops = &ops;
    opt.batch_ms = 600000;                   /* no flusher sync of its own during the test */
    opt.batch_records = 1u << 30;
    char err[1024];
    dw_histlog *log = dw_histlog_open(dir, &opt, NULL, err, sizeof err);
    assert_non_null(log);
    append_n(log, 0, 10);
    assert_int_equal(dw_histlog_sync(log), 0);    /* ACKED: 10 */
    append_n(log, 10, 5);                         /* written, not synced */
    uint64_t st = 15;
    assert_int_equal(dw_histlog_checkpoint(log, &st, sizeof st, 0), 0);
    append_n(log, 15, 5);                         /* in the new segment, not synced */
    snap fin;
    snap_take(dir, &fin);                         /* ACKED: 15 (the settled switch) */
    assert_int_equal(dw_histlog_close(log), 0);

    /* the points' files */
    const char *lname = "seg-000000000000000f.log";
    file_t *tmp_a = snap_find(&o.before_switch, "seg.tmp");
    file_t *ack_a = snap_find(&o.after_switch, "ACKED");
    file_t *l_hdr = snap_find(&o.after_switch, lname);
    file_t *p_fin = snap_find(&fin, "seg-0000000000000000.log");
    file_t *l_fin = snap_find(&fin, lname);
    file_t *ack_c = snap_find(&fin, "ACKED");
    assert_non_null(tmp_a); assert_non_null(ack_a); assert_non_null(l_hdr);
    assert_non_null(p_fin); assert_non_null(l_fin); assert_non_null(ack_c);
    assert_int_equal(tmp_a->len, 48);             /* the header, written before the rename */
    assert_int_equal(l_hdr->len, 48);
    assert_int_equal(p_fin->len, rec_end(14));
    assert_int_equal(l_fin->len, rec_end(19) - rec_end(14) + 48);
    assert_null(snap_find(&o.after_switch, "seg.tmp"));
    assert_non_null(snap_find(&o.settled, "ckpt.tmp"));
    assert_null(snap_find(&o.settled, "ckpt-"));

    /* before the switch is settled: ACKED 10; segment 0's tail (records
     * 10-14) cut anywhere, the new segment absent (seg.tmp instead), header
     * only, whole, damaged, empty, cut in its first record */
    const seg_variant vs[] = {
        { "absent", NULL, 0, -1 },
        { "header only", l_hdr->data, l_hdr->len, -1 },
        { "5 records", l_fin->data, l_fin->len, -1 },
        { "damaged header", l_fin->data, l_fin->len, 3 },
        { "empty", l_fin->data, 0, -1 },
        { "cut in its first record", l_fin->data, 48 + 20, -1 },
    };
    const uint64_t l_records[] = { 0, 0, 5, 0, 0, 0 };
    const bool l_valid[] = { false, true, true, false, false, true };
    for (size_t plen = rec_end(9); plen <= p_fin->len; plen++) {
        uint64_t k = whole_records(plen, 15);
        bool boundary = k && rec_end(k - 1) == plen;
        for (size_t vi = 0; vi < sizeof vs / sizeof *vs; vi++) {
            const seg_variant *v = &vs[vi];
            /* every byte for the states with records after the cut, the rest at and around record ends */
            bool near = boundary || (k < 15 && rec_end(k) - plen <= 1) || (k && plen - rec_end(k - 1) == 1);
            if (vi != 2 && !near) continue;
            compose(work, ack_a, p_fin, plen, lname, v, vi == 0 ? tmp_a : NULL);
            collect c = { 0 };
            dw_histlog_recovery rec;
            dw_histlog_options po = opts(DW_DURABILITY_FULL, &c);
            log = dw_histlog_open(work, &po, &rec, err, sizeof err);
            if (!log) fprintf(stderr, "segment 0 cut to %zu, new segment %s: %s\n", plen, v->what, err);
            assert_non_null(log);
            bool whole = plen == p_fin->len;
            uint64_t want = k + (whole && l_valid[vi] ? l_records[vi] : 0);
            check_records(&c, 0, want);
            assert_int_equal(rec.next_seq, want);
            assert_false(rec.salvaged);
            assert_int_equal(rec.acked_end, 10);
            bool dropped = v->data && (!whole || !l_valid[vi]);
            assert_int_equal(rec.dropped_segments, dropped ? 1 : 0);
            if (dropped && !whole) assert_has(rec.note, "none acknowledged");
            assert_false(exists(work, "seg.tmp"));
            assert_int_equal(count_files(work, "seg-"), whole && l_valid[vi] ? 2 : 1);
            if (boundary || whole) {
                /* the log goes on from there, and the next plain open accepts it */
                append_n(log, want, 2);
                assert_int_equal(dw_histlog_close(log), 0);
                collect_free(&c);
                log = open_ok(work, DW_DURABILITY_FULL, &c, &rec);
                check_records(&c, 0, want + 2);
                assert_int_equal(rec.dropped_segments, 0);
                assert_int_equal(rec.dropped_bytes, 0);
            }
            dw_histlog_close(log);
            collect_free(&c);
        }
    }

    /* settled: ACKED 15, segment 0 whole; the new segment cut anywhere
     * (with and without the checkpoint file the rotation then writes) */
    size_t cuts[40], ncut = 0;
    const size_t head[] = { 0, 1, 47, 48, 49 };
    for (size_t i = 0; i < 5; i++) cuts[ncut++] = head[i];
    for (uint64_t r = 15; r < 20; r++) {           /* each record: its middle, its end and a byte either side */
        size_t end = 48 + rec_end(r) - rec_end(14), start = 48 + rec_end(r - 1) - rec_end(14);
        cuts[ncut++] = (start + end) / 2;
        cuts[ncut++] = end - 1;
        cuts[ncut++] = end;
        if (end < l_fin->len) cuts[ncut++] = end + 1;
    }
    for (size_t ci = 0; ci < ncut; ci++) {
        size_t llen = cuts[ci];
        seg_variant v = { "cut", l_fin->data, llen, -1 };
        compose(work, ack_c, p_fin, p_fin->len, lname, &v, NULL);
        bool with_ckpt = ci % 3 == 0;
        if (with_ckpt) {
            file_t *ck = snap_find(&fin, "ckpt-");
            assert_non_null(ck);
            put_file(work, ck->name, ck->data, ck->len, -1);
        }
        uint64_t lk = 0;
        while (lk < 5 && 48 + rec_end(15 + lk) - rec_end(14) <= llen) lk++;
        collect c = { 0 };
        dw_histlog_recovery rec;
        log = open_ok(work, DW_DURABILITY_FULL, &c, &rec);
        if (with_ckpt) check_records(&c, 15, lk);
        else check_records(&c, 0, 15 + lk);
        assert_int_equal(rec.next_seq, 15 + lk);
        assert_false(rec.salvaged);
        dw_histlog_close(log);
        collect_free(&c);
    }

    /* what loses acknowledged records is still refused */
    const seg_variant whole_l = { "5 records", l_fin->data, l_fin->len, -1 };
    compose(work, ack_a, p_fin, rec_end(8), lname, &whole_l, NULL);       /* record 9 < ACKED's 10 */
    open_refused(work, DW_DURABILITY_FULL, err);
    assert_has(err, "acknowledged");
    compose(work, ack_a, p_fin, rec_end(8) + 5, lname, &vs[0], NULL);
    open_refused(work, DW_DURABILITY_FULL, err);
    compose(work, ack_c, p_fin, rec_end(13), lname, &whole_l, NULL);      /* record 14 < ACKED's 15 */
    open_refused(work, DW_DURABILITY_FULL, err);
    assert_has(err, "acknowledged");
    /* damage in segment 0 followed by its own valid records: no tear, refused
     * (record 5, acknowledged; record 12, past ACKED but not at the end) */
    for (int r = 0; r < 2; r++) {
        uint64_t at = r ? 12 : 5;
        compose(work, ack_a, p_fin, p_fin->len, lname, &whole_l, NULL);
        put_file(work, p_fin->name, p_fin->data, p_fin->len, (long)rec_end(at - 1) + 20);
        open_refused(work, DW_DURABILITY_FULL, err);
        assert_has(err, "is damaged");
    }

    snap_free(&fin);
    shot_free(&o);
    rm_rf(work);
}

/* ================================================================ failing file operations */

static void test_rotation_file_faults(void **state)
{
    (void)state;
    for (int f = 0; f < 2; f++) {
        char dir[128];
        subdir(dir, sizeof dir, f ? "rot-rename" : "rot-open");
        assert_int_equal(mkdir(dir, 0700), 0);
        shot_ops o;
        shot_init(&o, dir);
        dw_histlog_fileops ops = { shot_open, shot_rename, shot_unlink, &o };
        dw_histlog_options opt = opts(f ? DW_DURABILITY_BATCH : DW_DURABILITY_FULL, NULL);
        opt.fileops = &ops;
        dw_histlog *log = dw_histlog_open(dir, &opt, NULL, NULL, 0);
        assert_non_null(log);
        append_n(log, 0, 8);
        o.fail_open = !f;
        o.fail_rename = f;
        uint64_t st = 8;
        /* no new segment: the checkpoint says so, but is written, and the old segment goes on */
        assert_int_equal(dw_histlog_checkpoint(log, &st, sizeof st, 0), -1);
        assert_has(dw_histlog_error(log), "cannot start a new segment");
        assert_false(dw_histlog_failed(log));
        assert_int_equal(count_files(dir, "ckpt-"), 1);
        assert_int_equal(count_files(dir, "seg-"), 1);
        assert_false(exists(dir, "seg.tmp"));
        append_n(log, 8, 4);
        /* the next checkpoint, with working file operations, rotates */
        o.fail_open = o.fail_rename = false;
        st = 12;
        assert_int_equal(dw_histlog_checkpoint(log, &st, sizeof st, 8), 0);
        assert_int_equal(count_files(dir, "seg-"), 2);    /* segment 0 (0-11) still holds keep_from 8 */
        append_n(log, 12, 3);
        assert_int_equal(dw_histlog_close(log), 0);
        collect c = { 0 };
        dw_histlog_recovery rec;
        log = reopen_at_ckpt(dir, DW_DURABILITY_FULL, &c, &rec, 12);
        check_records(&c, 12, 3);
        assert_int_equal(rec.dropped_bytes, 0);
        dw_histlog_close(log);
        collect_free(&c);
        shot_free(&o);
    }
}

/* ================================================================ killed processes */

/* The child: append from where recovery left off, a checkpoint (state: its
 * seq) every 5 records, each acknowledged seq written to fd; never returns. */
static void kill_child(const char *dir, dw_durability mode, int fd)
{
    dw_histlog_options o = opts(mode, NULL);
    o.batch_ms = 1;
    o.batch_records = 3;
    dw_histlog_recovery rec;
    dw_histlog *log = dw_histlog_open(dir, &o, &rec, NULL, 0);
    if (!log) _exit(3);
    uint8_t buf[64];
    for (uint64_t i = rec.next_seq;; i++) {
        uint64_t seq;
        size_t len = payload(i, buf);
        if (dw_histlog_append(log, buf, len, &seq) != 0 || seq != i) _exit(4);
        if (write(fd, &seq, sizeof seq) != (ssize_t)sizeof seq) _exit(5);
        if (i % 5 == 4) {
            uint64_t n = i + 1;
            if (dw_histlog_checkpoint(log, &n, sizeof n, n > 7 ? n - 7 : 0) != 0) _exit(6);
        }
    }
}

static void test_rotation_killed(void **state)
{
    (void)state;
    char dir[128];
    subdir(dir, sizeof dir, "rot-kill");
    unsigned seed = (unsigned)time(NULL);
    srand(seed);
    uint64_t acked = 0, prev_next = 0;
    bool any = false;
    for (int t = 0; t < 24; t++) {
        dw_durability mode = t % 2 ? DW_DURABILITY_BATCH : DW_DURABILITY_FULL;
        int pfd[2];
        assert_int_equal(pipe(pfd), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(pfd[0]);
            kill_child(dir, mode, pfd[1]);
        }
        close(pfd[1]);
        struct timespec d = { 0, (long)(2 + rand() % 40) * 1000000L };
        nanosleep(&d, NULL);
        kill(pid, SIGKILL);
        int ws;
        assert_int_equal(waitpid(pid, &ws, 0), pid);
        if (!WIFSIGNALED(ws)) fprintf(stderr, "child exited %d (seed %u)\n", WEXITSTATUS(ws), seed);
        assert_true(WIFSIGNALED(ws));
        uint64_t s;
        while (read(pfd[0], &s, sizeof s) == (ssize_t)sizeof s) { acked = s + 1; any = true; }
        close(pfd[0]);
        /* every acknowledged record is back (a killed process loses no
         * written page), after the checkpoint's state, in order */
        collect c = { 0 };
        dw_histlog_recovery rec;
        dw_histlog_options o = opts(DW_DURABILITY_FULL, &c);
        char err[1024];
        dw_histlog *log = dw_histlog_open(dir, &o, &rec, err, sizeof err);
        if (!log) fprintf(stderr, "trial %d (seed %u): %s\n", t, seed, err);
        assert_non_null(log);
        assert_false(rec.salvaged);
        assert_true(rec.next_seq >= acked);
        assert_true(rec.next_seq >= prev_next);
        uint64_t from = 0;
        if (c.have_ckpt) {
            uint64_t v;
            memcpy(&v, c.ckpt, sizeof v);
            assert_int_equal(v, c.ckpt_seq);
            from = c.ckpt_seq;
        }
        check_records(&c, from, rec.next_seq - from);
        prev_next = rec.next_seq;
        assert_int_equal(dw_histlog_close(log), 0);
        collect_free(&c);
    }
    assert_true(any);
    assert_true(prev_next > 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rotation_crash_states),
        cmocka_unit_test(test_rotation_file_faults),
        cmocka_unit_test(test_rotation_killed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
