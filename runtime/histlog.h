/* histlog.h - the durable event history of one engine (box.md §7, dogwood.md
 * §7.3, §20 Q17): an append-only, checksummed, group-committed log in a state
 * directory, with atomic checkpoints and window-based retention.
 *
 * Payloads are opaque bytes (the engine serialises its events).  The store
 * assigns every record its sequence number (= its timepoint, 0-based, never
 * reused) and its timestamp (nanoseconds; strictly increasing, previous + 1
 * when the clock does not advance, persisted so it also holds across
 * restarts: Q17).
 *
 * State directory:
 *   LOCK                     flock(2)ed while open (one process per log)
 *   seg-<base seq, hex>.log  log segments; records base, base+1, ...
 *   ckpt-<seq, hex>.ckpt     the latest checkpoint (state covering seq < S)
 *   ACKED                    the acknowledged end (histlog_acked.c)
 *   *.tmp                    leftovers of an interrupted create; removed
 *
 * On-disk format (all integers little-endian; version 2; version 1, which
 * had no ACKED file and no gap records, is read only together with an
 * ACKED file or under salvage):
 *   segment header, 48 bytes:
 *     0  magic "DWHIST\r\n"   8  u32 version   12 u32 header length (48)
 *     16 u64 event-schema digest   24 u64 base seq
 *     32 u64 timestamp of the record before base (0 if none)
 *     40 u64 XXH3-64 of bytes [0, 40)
 *   record, 32 + len bytes:
 *     0  u64 XXH3-64 of bytes [8, 32 + len)   8 u32 len   12 u32 flags
 *     16 u64 seq   24 u64 timestamp   32 payload
 *     flags 0: an event; 1: a gap left by a salvage, payload u64 n: the
 *     records [seq, seq + n) were lost (timestamp: the previous record's)
 *   ACKED, 1024 bytes: two 64-byte slots at offsets 0 and 512:
 *     0  magic "DWACKD\r\n"   8 u32 version   12 u32 slot length (64)
 *     16 u64 digest   24 u64 generation   32 u64 acknowledged end A
 *     40 u64 keep_from of the latest checkpoint   48 u64 0
 *     56 u64 XXH3-64 of bytes [0, 56); the valid slot with the higher
 *     generation counts
 *   checkpoint, 72-byte header + state:
 *     0  magic "DWCKPT\r\n"   8 u32 version   12 u32 header length (72)
 *     16 u64 digest   24 u64 seq S (state covers records < S)
 *     32 u64 keep_from   40 u64 timestamp of record S-1   48 u64 state length
 *     56 u64 XXH3-64 of the state   64 u64 XXH3-64 of bytes [0, 64)
 * Every version keeps magic, version and header length at the same offsets
 * and the header checksum in the header's last 8 bytes, so a file from a
 * newer format is recognised (and refused) rather than mistaken for damage.
 *
 * Durability (box.md §7): under DW_DURABILITY_FULL dw_histlog_append returns
 * only once its record is on disk.  Concurrent appenders share syncs (group
 * commit, leader/follower): the first waiter becomes the leader, writes every
 * record queued so far with one pwrite and covers them all with one
 * fdatasync, while new appenders queue behind it; no lock is held across the
 * write or the sync.  An engine must assign the sequence number under its own
 * lock (dw_histlog_enqueue) and wait for durability after releasing it
 * (dw_histlog_wait), or every decision pays a sync of its own.
 *
 * The acknowledged end A (ACKED) is written and synced after the records'
 * fdatasync and before any waiter is woken, so under FULL every record an
 * append acknowledged is < A; under BATCH and NONE, A is where the last sync
 * reached (records acknowledged after it are not witnessed).
 *
 * Errors are sticky: after a failed write or sync every later append fails
 * (the caller denies) until the log is closed and reopened.
 *
 * Recovery rules.  A torn tail, damage in the last segment after which no
 * valid record follows and that starts at or past A (a write the crash cut
 * short, never acknowledged), is cut off and noted.  So is a rotation a
 * crash cut short before its syncs: the segment before the last one ending
 * short of the last one's base (at or inside a record, nothing valid after
 * it in that segment) or the last one's header damaged, with everything
 * lost at or past A; the last segment (records written before the previous
 * one's were synced, none acknowledged) is removed.  Everything else that
 * loses a record is corruption and refuses to open with a message naming
 * the segment file, the byte offset and how many acknowledged records
 * follow: damage followed by a valid record (a flipped byte mid-log), a
 * damaged segment header, a segment missing between two others, segments
 * ending before A (a deleted or zero-length last segment, records cut off
 * the end), segments starting after the checkpoint (or, with no readable
 * checkpoint, after its keep_from), a missing or unreadable ACKED file.
 * With opt.salvage the open goes on instead: it keeps every intact record,
 * writes a gap record where records were lost (so the next open, without
 * salvage, accepts the log and notes the gap), and reports every loss in
 * rec (salvaged, lost_records, lost_acknowledged, note).  Segments that
 * overlap, a different schema digest, a newer format and I/O errors refuse
 * even then. */
#ifndef DW_HISTLOG_H
#define DW_HISTLOG_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DW_HISTLOG_VERSION 2u
#define DW_HISTLOG_MIN_VERSION 1u
#define DW_HISTLOG_MAX_RECORD (64u << 20)   /* payload bytes */
#define DW_HISTLOG_SCHEMA_MISMATCH "dogwood history uses a different event schema"
#define DW_HISTLOG_CORRUPT "dogwood history is corrupt"

typedef enum dw_durability {
    DW_DURABILITY_FULL = 0,  /* append returns once its record is synced */
    DW_DURABILITY_BATCH,     /* returns after write(2); a flusher thread syncs
                                every batch_ms, or sooner once batch_records
                                records are unsynced (soft bound); records
                                enqueued that nobody waits for it writes
                                itself, within two batch_ms */
    DW_DURABILITY_NONE       /* returns after write(2); never syncs records
                                (checkpoints are still synced) */
} dw_durability;

typedef struct dw_histlog dw_histlog;

/* Recovery callbacks, called during dw_histlog_open in order: the latest
 * valid checkpoint (if any), then every surviving record after it.  A
 * non-zero return aborts the open (error "recovery callback failed"). */
typedef int (*dw_histlog_ckpt_fn)(void *ctx, uint64_t seq, uint64_t last_ts,
                                  const void *state, size_t len);
typedef int (*dw_histlog_record_fn)(void *ctx, uint64_t seq, uint64_t ts,
                                    const void *payload, size_t len);

/* File operations for the directory's mutations after open (creating a
 * temp file, renaming it into place, removing retired files), for a process
 * that may not open paths itself (dwd's seccomp confinement delegates them
 * to a keeper process, runtime/keeper.h).  Names are bare file names in the
 * state directory: "seg.tmp", "ckpt.tmp", "seg-<16 hex>.log",
 * "ckpt-<16 hex>.ckpt".  open returns an fd (flags: O_RDWR or O_WRONLY with
 * O_CREAT | O_TRUNC; mode 0600, O_NOFOLLOW | O_CLOEXEC implied) or -1 with
 * errno; rename and unlink return 0 or -1 with errno.  The log fsyncs the
 * directory itself through the fd it opened. */
typedef struct dw_histlog_fileops {
    int (*open)(void *ctx, const char *name, int flags);
    int (*rename)(void *ctx, const char *from, const char *to);
    int (*unlink)(void *ctx, const char *name);
    void *ctx;
} dw_histlog_fileops;

typedef struct dw_histlog_options {
    uint64_t schema_digest;          /* event-schema digest; must match */
    dw_durability durability;
    uint32_t batch_ms;               /* BATCH: 0 = 5 ms */
    uint32_t batch_records;          /* BATCH: 0 = 256 */
    uint64_t (*clock)(void *ctx);    /* ns since the epoch; NULL = CLOCK_REALTIME */
    void *clock_ctx;
    dw_histlog_ckpt_fn on_checkpoint;    /* may be NULL */
    dw_histlog_record_fn on_record;      /* may be NULL */
    void *cb_ctx;
    const dw_histlog_fileops *fileops;   /* NULL: direct *at(2) calls; must outlive the log */
    bool salvage;                    /* open a corrupt log anyway (recovery rules above) */
} dw_histlog_options;

typedef struct dw_histlog_recovery {
    bool has_checkpoint;
    uint64_t checkpoint_seq;         /* records < this are in the checkpoint */
    uint32_t checkpoints_rejected;   /* damaged checkpoints skipped */
    uint64_t first_seq;              /* first record handed to on_record */
    uint64_t records;                /* records handed to on_record */
    uint64_t next_seq;               /* the next append gets this seq */
    uint64_t last_ts;
    uint64_t dropped_bytes;          /* torn / damaged bytes removed */
    uint32_t dropped_segments;       /* whole segment files removed as damaged */
    uint32_t segments;               /* segment files kept */
    uint64_t acked_end;              /* ACKED's end at open (0: none) */
    bool salvaged;                   /* opt.salvage kept a corrupt log */
    uint64_t lost_records;           /* seqs lost by this salvage */
    uint64_t lost_acknowledged;      /* of them, < acked_end */
    uint64_t gap_records;            /* seqs lost by earlier salvages (gap records replayed) */
    char note[512];                  /* what was dropped or lost and why; "" if nothing */
} dw_histlog_recovery;

typedef struct dw_histlog_stats {
    uint64_t appends, syncs, writes, synced_records;
    uint64_t max_batch;              /* most records covered by one sync */
} dw_histlog_stats;

/* Open (creating the directory and a fresh log if needed) and recover.
 * Returns NULL with a message in err on refusal or I/O error. */
dw_histlog *dw_histlog_open(const char *dir, const dw_histlog_options *opt,
                            dw_histlog_recovery *rec, char *err, size_t errlen);

/* Append one record and wait as the durability mode says.  0 on success with
 * *seq (and *ts) set; -1 on failure (errno set; dw_histlog_error explains):
 * the caller must treat the event as not recorded and deny. */
int dw_histlog_append(dw_histlog *log, const void *bytes, size_t len, uint64_t *seq);
int dw_histlog_append_ts(dw_histlog *log, const void *bytes, size_t len,
                         uint64_t *seq, uint64_t *ts);

/* Split append: enqueue assigns seq and timestamp and returns at once (cheap,
 * for use under the engine's lock; never touches the disk); wait blocks until
 * record `seq` is written (BATCH, NONE) or durable (FULL).  Records reach the
 * file in seq order.  dw_histlog_wait_durable forces a sync in any mode. */
int dw_histlog_enqueue(dw_histlog *log, const void *bytes, size_t len,
                       uint64_t *seq, uint64_t *ts);
int dw_histlog_wait(dw_histlog *log, uint64_t seq);
int dw_histlog_wait_durable(dw_histlog *log, uint64_t seq);
/* Make every record enqueued so far durable. */
int dw_histlog_sync(dw_histlog *log);

/* Write a checkpoint of the caller's state, which must cover every record
 * enqueued before the call (seq < dw_histlog_next_seq at the call: hold the
 * engine lock), atomically (temp + fsync + rename + fsync dir), start a new
 * segment (as the log's leader only the switch: the records before it
 * written, the new segment's header written and its file, made beforehand,
 * renamed into place; then, while appends go on, the syncs of both segments,
 * the directory and ACKED, and the checkpoint file) and
 * retire segments whose records are all < keep_from_seq (the
 * oldest record any window can still reach; clamped to the checkpoint).
 * Reopening then loads this state and replays only later records; should the
 * checkpoint ever be unreadable, the records from keep_from_seq on are
 * replayed instead.  Returns 0, or -1 with dw_histlog_error set (a failure to
 * write the checkpoint leaves the log usable). */
int dw_histlog_checkpoint(dw_histlog *log, const void *state, size_t len,
                          uint64_t keep_from_seq);

/* The same for a state that covers exactly the records < seq (seq <= next
 * seq; last_ts: the timestamp of record seq-1, 0 if seq == 0), so an engine
 * can export its state under its own lock and write it after releasing it
 * while appends go on.  The new segment starts at the next seq at the time
 * of the call; records in [seq, that) stay in the older segment, which is
 * kept (recovery replays from seq). */
int dw_histlog_checkpoint_at(dw_histlog *log, uint64_t seq, uint64_t last_ts, const void *state, size_t len,
                             uint64_t keep_from_seq);

uint64_t dw_histlog_next_seq(dw_histlog *log);
/* Every record with seq < this is known durable (synced). */
uint64_t dw_histlog_durable_end(dw_histlog *log);
const char *dw_histlog_error(dw_histlog *log);
/* True once a write or sync failed (sticky: dw_histlog_error says why). */
bool dw_histlog_failed(dw_histlog *log);
void dw_histlog_get_stats(dw_histlog *log, dw_histlog_stats *st);

/* Write and (unless DW_DURABILITY_NONE) sync what is queued, then free.
 * Returns -1 if that final flush failed. */
int dw_histlog_close(dw_histlog *log);

#endif
