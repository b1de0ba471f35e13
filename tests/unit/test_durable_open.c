/* test_durable_open.c - dw_engine_open_durable under faults (issue 13).
 *
 *   * row 18: a restart on a disk with no room for a checkpoint (every
 *     create of ckpt.tmp fails with ENOSPC, through the engine's file
 *     operations) still opens and decides; the failed checkpoint is in the
 *     stats.  Only a changed install table must be checkpointed first.
 *   * rows 1-2 through the engine: a flipped byte in a middle record refuses
 *     the open with the segment, offset and acknowledged records that
 *     follow; durable.salvage opens it and reports the loss; a deleted ACKED
 *     witness refuses too.
 * Everything happens in a mkdtemp directory, removed afterwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/dogwood.h"
#include "runtime/histlog.h"
#include "unit_tmpdir.h"

static char root[256], policy[300];

static const char policy_text[] =
    "@id(\"hosts\")\n"
    "permit (principal, action == Box::Action::\"http:request\", resource);\n"
    "@id(\"budget\")\n"
    "forbid (principal, action == Box::Action::\"http:request\", resource)\n"
    "when temporal {\n"
    "  exists (n: Long). (\n"
    "    (count for (t: Timepoint). where (\n"
    "      formerly within 1h ( Box::Action::\"http:request\"::response{ input.host: context.input.host } && tp(t) )\n"
    "    )) == n && n > 2\n"
    "  )\n"
    "};\n";

/* File operations whose creates of ckpt.tmp fail as on a full disk. */
static int g_dirfd = -1;
static int full_open(void *ctx, const char *name, int flags)
{
    (void)ctx;
    if (!strcmp(name, "ckpt.tmp")) { errno = ENOSPC; return -1; }
    return openat(g_dirfd, name, flags | O_CLOEXEC | O_NOFOLLOW, 0600);
}
static int full_rename(void *ctx, const char *from, const char *to) { (void)ctx; return renameat(g_dirfd, from, g_dirfd, to); }
static int full_unlink(void *ctx, const char *name) { (void)ctx; return unlinkat(g_dirfd, name, 0); }
static const dw_histlog_fileops full_disk = { full_open, full_rename, full_unlink, NULL };

static dw_engine *open_dir(const char *dir, int64_t every, const dw_histlog_fileops *ops, bool salvage,
                           dw_engine_recovery *rec, char *err)
{
    dw_engine_config cfg = { .policy_path = policy, .schema_path = "box" };
    dw_engine_durable d = { .state_dir = dir, .durability = salvage ? DW_DURABLE_SALVAGE : 0, .checkpoint_every = every,
                            .fileops = ops };
    return dw_engine_open_durable(&cfg, &d, rec, err, 1024);
}

static void record(dw_engine *e, const char *kind, int64_t ts)
{
    char buf[400];
    snprintf(buf, sizeof buf,
             "{\"action\":\"http:request\",\"kind\":\"%s\",\"input\":{\"host\":\"api.example.com\",\"port\":443,"
             "\"method\":\"GET\",\"path\":\"/x\",\"body_bytes\":0,\"intercepted\":true}%s}",
             kind, !strcmp(kind, "response") ? ",\"output\":{\"status\":200}" : "");
    dw_verdict v;
    if (!strcmp(kind, "request")) assert_int_equal(dw_engine_decide_json(e, buf, strlen(buf), ts, &v), 0);
    else assert_int_equal(dw_engine_observe_json(e, buf, strlen(buf), ts, DW_OBSERVE_RECORD, NULL, NULL, &v), 1);
}

static bool decide_allows(dw_engine *e, int64_t ts)
{
    char buf[400];
    snprintf(buf, sizeof buf,
             "{\"action\":\"http:request\",\"kind\":\"request\",\"input\":{\"host\":\"api.example.com\",\"port\":443,"
             "\"method\":\"GET\",\"path\":\"/x\",\"body_bytes\":0,\"intercepted\":true}}");
    dw_verdict v;
    assert_int_equal(dw_engine_decide_json(e, buf, strlen(buf), ts, &v), 0);
    return v.allow;
}

static void test_restart_without_room_for_a_checkpoint(void **state)
{
    (void)state;
    char dir[300], err[1024];
    snprintf(dir, sizeof dir, "%s/full", root);
    dw_engine_recovery rec;
    /* a first open writes the install table (that checkpoint is required) */
    dw_engine *e = open_dir(dir, 4, NULL, false, &rec, err);
    assert_non_null(e);
    dw_engine_close(e);
    g_dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(g_dirfd >= 0);
    /* the disk fills: checkpoints fail in the background, decisions go on */
    e = open_dir(dir, 4, &full_disk, false, &rec, err);
    assert_non_null(e);
    for (int i = 0; i < 10; i++) record(e, "request", 1000000000 + i * 1000000);
    dw_engine_stats st;
    dw_engine_get_stats(e, &st);
    dw_engine_close(e);
    /* the restart replays 10 records (>= checkpoint_every): its checkpoint
     * fails, the open does not */
    e = open_dir(dir, 4, &full_disk, false, &rec, err);
    if (!e) fprintf(stderr, "reopen on a full disk: %s\n", err);
    assert_non_null(e);
    assert_int_equal(rec.events, 10);
    dw_engine_get_stats(e, &st);
    assert_true(st.checkpoint_failures >= 1);
    assert_non_null(strstr(st.checkpoint_error, "No space left on device"));
    assert_true(decide_allows(e, 2000000000));
    dw_engine_close(e);
    /* room again: the next restart checkpoints */
    e = open_dir(dir, 4, NULL, false, &rec, err);
    assert_non_null(e);
    assert_int_equal(rec.events, 11);
    dw_engine_get_stats(e, &st);
    assert_int_equal(st.checkpoint_failures, 0);
    dw_engine_close(e);
    close(g_dirfd);
    g_dirfd = -1;
}

/* Offset of record k of a segment file (48-byte header, 32 + len each). */
static long record_offset(const char *path, int k)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    long off = 48;
    for (int i = 0; i < k; i++) {
        unsigned char h[12];
        assert_int_equal(fseek(f, off, SEEK_SET), 0);
        assert_int_equal(fread(h, 1, 12, f), 12);
        off += 32 + (long)(h[8] | h[9] << 8 | h[10] << 16 | (unsigned long)h[11] << 24);
    }
    fclose(f);
    return off;
}

static void test_corrupt_history_refused_or_salvaged(void **state)
{
    (void)state;
    char dir[300], err[1024], seg[400], want[200];
    snprintf(dir, sizeof dir, "%s/corrupt", root);
    dw_engine_recovery rec;
    dw_engine *e = open_dir(dir, -1, NULL, false, &rec, err);
    assert_non_null(e);
    int64_t t = 1000000000;
    for (int i = 0; i < 3; i++) { record(e, "request", t += 1000000); record(e, "response", t += 1000000); }
    assert_false(decide_allows(e, t += 1000000));     /* 3 responses: over budget */
    dw_engine_close(e);
    /* one flipped byte in the second response (record 3) */
    snprintf(seg, sizeof seg, "%s/seg-0000000000000000.log", dir);
    long at = record_offset(seg, 3);
    int fd = open(seg, O_RDWR);
    unsigned char b;
    assert_int_equal(pread(fd, &b, 1, at + 40), 1);
    b ^= 0x20;
    assert_int_equal(pwrite(fd, &b, 1, at + 40), 1);
    close(fd);
    assert_null(open_dir(dir, -1, NULL, false, &rec, err));
    assert_non_null(strstr(err, "dogwood history is corrupt"));
    snprintf(want, sizeof want, "seg-0000000000000000.log: the record at byte %ld (seq 3) is damaged", at);
    assert_non_null(strstr(err, want));
    assert_non_null(strstr(err, "3 acknowledged record(s) follow"));
    /* salvage keeps the rest: the budget now counts 2 responses */
    e = open_dir(dir, -1, NULL, true, &rec, err);
    assert_non_null(e);
    assert_int_equal(strncmp(rec.note, "SALVAGED: 1 record(s) lost, 1 of them acknowledged; SALVAGE: seg-0000000000000000.log", 85), 0);
    assert_int_equal(rec.events, 7);
    assert_int_equal(rec.replayed, 6);
    assert_true(decide_allows(e, t += 1000000));
    dw_engine_close(e);
    /* the witness gone: refused too */
    snprintf(seg, sizeof seg, "%s/ACKED", dir);
    assert_int_equal(unlink(seg), 0);
    assert_null(open_dir(dir, -1, NULL, false, &rec, err));
    assert_non_null(strstr(err, "ACKED is missing"));
}

static int setup(void **state)
{
    (void)state;
    return unit_tmpdir_with_policy(root, sizeof root, policy, sizeof policy, "dw-durable-open", policy_text);
}

static int teardown(void **state)
{
    (void)state;
    return unit_tmpdir_remove(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_restart_without_room_for_a_checkpoint),
        cmocka_unit_test(test_corrupt_history_refused_or_salvaged),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
