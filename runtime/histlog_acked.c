/* histlog_acked.c - the ACKED file: the durable witness of how far the log
 * reaches (histlog.h, "Recovery rules").
 *
 * A segment can say where it starts but not where it should end, so a
 * deleted last segment, a zero-length one or a record cut off the end look
 * like a shorter, healthy history.  ACKED holds the acknowledged end A: every
 * record < A was durable before any appender was told so (group commit
 * writes it after the records' fdatasync and before it wakes them; the BATCH
 * flusher and checkpoints after theirs), and the keep_from of the latest
 * checkpoint (where the segments must start should the checkpoint be
 * unreadable).  It is rewritten in place (no allocation, so a full disk
 * does not stop it) in one of two slots, alternately, each checksummed, so a
 * torn write leaves the other, older slot. */
#include "histlog_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* slot: 0 magic  8 u32 version  12 u32 length (64)  16 u64 digest
 *       24 u64 generation  32 u64 acknowledged end  40 u64 keep_from
 *       48 u64 0  56 u64 XXH3-64 of bytes [0, 56) */
static void slot_encode(uint8_t s[ACK_SLOT], uint64_t digest, const hl_acked *a)
{
    memset(s, 0, ACK_SLOT);
    hl_start_header(s, ACK_MAGIC, ACK_SLOT, digest);
    dw_put_le64(s + 24, a->gen);
    dw_put_le64(s + 32, a->end);
    dw_put_le64(s + 40, a->keep);
    hl_seal_header(s, ACK_SLOT);
}

int hl_acked_read(int dirfd, uint64_t digest, hl_acked *out, uint32_t *ver)
{
    int fd = openat(dirfd, ACK_NAME, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return errno == ENOENT ? -1 : HDR_DAMAGED;
    uint8_t b[ACK_SLOT_STRIDE + ACK_SLOT];
    ssize_t n = pread(fd, b, sizeof b, 0);
    close(fd);
    if (n < 0) return HDR_DAMAGED;
    int best = HDR_DAMAGED;
    for (int k = 0; k < 2; k++) {
        size_t at = (size_t)k * ACK_SLOT_STRIDE;
        if ((size_t)n < at + ACK_SLOT) break;
        uint32_t v = 0;
        int r = hl_check_header(b + at, ACK_SLOT, ACK_MAGIC, ACK_SLOT, digest, &v);
        if (r == HDR_NEWER || r == HDR_SCHEMA) { *ver = v; return r; }
        if (r != HDR_OK) continue;
        hl_acked a = { dw_le64(b + at + 32), dw_le64(b + at + 40), dw_le64(b + at + 24) };
        if (best != HDR_OK || a.gen > out->gen) *out = a;
        best = HDR_OK;
        *ver = v;
    }
    return best;
}

int hl_acked_create(dw_histlog *log, const hl_acked *a)
{
    uint8_t b[ACK_SLOT_STRIDE + ACK_SLOT];
    memset(b, 0, sizeof b);
    slot_encode(b, log->opt.schema_digest, a);
    memcpy(b + ACK_SLOT_STRIDE, b, ACK_SLOT);
    int fd = openat(log->dirfd, "acked.tmp", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return -1;
    if (hl_pwrite_all(fd, b, sizeof b, 0) != 0 || fsync(fd) != 0 ||
        renameat(log->dirfd, "acked.tmp", log->dirfd, ACK_NAME) != 0 || fsync(log->dirfd) != 0) {
        int e = errno;
        close(fd);
        unlinkat(log->dirfd, "acked.tmp", 0);
        errno = e;
        return -1;
    }
    if (log->ackfd >= 0) close(log->ackfd);
    log->ackfd = fd;
    log->ack_end = a->end;
    log->ack_keep = a->keep;
    log->ack_gen = a->gen;
    return 0;
}

int hl_acked_write(dw_histlog *log, uint64_t end, uint64_t keep)
{
    pthread_mutex_lock(&log->ack_mu);
    int rc = 0;
    bool more = end > log->ack_end, rekeep = keep != UINT64_MAX && keep != log->ack_keep;
    if (more || rekeep) {
        hl_acked a = { more ? end : log->ack_end, keep != UINT64_MAX ? keep : log->ack_keep, log->ack_gen + 1 };
        uint8_t s[ACK_SLOT];
        slot_encode(s, log->opt.schema_digest, &a);
        rc = hl_pwrite_all(log->ackfd, s, ACK_SLOT, (a.gen & 1) * ACK_SLOT_STRIDE);
        if (rc == 0) rc = fdatasync(log->ackfd);
        if (rc == 0) {
            log->ack_end = a.end;
            log->ack_keep = a.keep;
            log->ack_gen = a.gen;
        }
    }
    pthread_mutex_unlock(&log->ack_mu);
    return rc;
}
