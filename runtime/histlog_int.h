/* histlog_int.h - what the history store's files share (histlog.c: appending
 * and checkpoints; histlog_recover.c: open and recovery; histlog_acked.c:
 * the acknowledged-end witness).  Not a public header. */
#ifndef DW_HISTLOG_INT_H
#define DW_HISTLOG_INT_H
#include "histlog.h"
#include "../stdlib/le.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SEG_MAGIC "DWHIST\r\n"
#define CKPT_MAGIC "DWCKPT\r\n"
#define ACK_MAGIC "DWACKD\r\n"
#define SEG_HDR 48u
#define CKPT_HDR 72u
#define ACK_SLOT 64u
#define ACK_SLOT_STRIDE 512u    /* one slot per sector: a torn write spoils one at most */
#define ACK_NAME "ACKED"
#define REC_HDR 32u
#define MAX_HDR 4096u
#define REC_EVENT 0u
#define REC_GAP 1u              /* payload u64 n: seqs [seq, seq + n) were lost (a salvage) */

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
    int spare_fd;               /* seg.tmp, made ahead of a rotation (checkpoint) */
    /* after a rotation until settled (histlog.c, settle): the previous
     * segment, whose records < prev_end may be unsynced, while the new one's
     * header and name may not be durable yet */
    int prev_fd; uint64_t prev_end; bool prev_busy;
    uint64_t *segs; size_t nsegs, segcap;   /* bases of kept segments, ascending */
    bool has_ckpt; uint64_t ckpt_seq;

    /* the ACKED witness (histlog_acked.c); ack_mu serialises its writers */
    pthread_mutex_t ack_mu;
    int ackfd;
    uint64_t ack_end, ack_keep, ack_gen;

    pthread_t flusher; bool has_flusher;
    dw_histlog_stats st;
};

/* Header verdicts. */
enum { HDR_OK, HDR_DAMAGED, HDR_NEWER, HDR_SCHEMA, HDR_OLDER };

void hl_seg_name(char *buf, size_t n, uint64_t base);
void hl_ckpt_name(char *buf, size_t n, uint64_t seq);
void hl_fmt(char *buf, size_t n, const char *f, ...) __attribute__((format(printf, 3, 4)));
int hl_pwrite_all(int fd, const uint8_t *p, size_t n, uint64_t off);
int hl_read_all(int fd, uint8_t *p, size_t n);
/* HDR_OLDER: version 1, whose layout version 2 shares (read when allowed). */
int hl_check_header(const uint8_t *b, size_t size, const char *magic, uint32_t want_len,
                    uint64_t digest, uint32_t *ver_out);
void hl_start_header(uint8_t *h, const char *magic, uint32_t len, uint64_t digest);
void hl_seal_header(uint8_t *h, uint32_t len);
/* A segment header for `base` whose previous record has timestamp prev_ts. */
void hl_seg_header(uint8_t h[SEG_HDR], uint64_t digest, uint64_t base, uint64_t prev_ts);
/* A gap record (REC_GAP) for seqs [seq, seq + n) into r (REC_HDR + 8 bytes). */
void hl_gap_record(uint8_t *r, uint64_t seq, uint64_t n, uint64_t ts);
/* Create segment `base` (temp + fsync + rename + fsync dir) through the
 * file operations; returns its fd, or -1 with errno. */
int hl_create_segment(dw_histlog *log, uint64_t base, uint64_t prev_ts);
int hl_segs_push(dw_histlog *log, uint64_t base);
int hl_retire_segments(dw_histlog *log, uint64_t keep);
void *hl_flusher_main(void *arg);

/* histlog_acked.c.  The file holds two checksummed slots (magic, version,
 * slot length, digest, generation, acknowledged end, keep_from); the newer
 * valid one counts. */
typedef struct hl_acked { uint64_t end, keep, gen; } hl_acked;
/* HDR_* verdict, or -1 if there is no ACKED file; *out on HDR_OK. */
int hl_acked_read(int dirfd, uint64_t digest, hl_acked *out, uint32_t *ver);
/* Create the file afresh (temp + fsync + rename + fsync dir) holding *a; opens log->ackfd. */
int hl_acked_create(dw_histlog *log, const hl_acked *a);
/* Witness that every record < end is durable (end never moves back) and,
 * unless keep is UINT64_MAX, the latest checkpoint's keep_from; pwrite +
 * fdatasync.  0, or -1 with errno. */
int hl_acked_write(dw_histlog *log, uint64_t end, uint64_t keep);

#endif
