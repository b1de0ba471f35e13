/* retention.h - what the engine's history must keep (dogwood.md §7.3).
 *
 * The engine keeps an event while some leaf may still read it: within the
 * largest reach of the leaves, and only if some leaf needs its identity
 * (vm/retain.h: events no predicate can match are dropped after the
 * decision that appends them, when that provably changes no verdict).
 * "Some leaf" is every leaf of the installed program and the leaves of
 * earlier programs a reload retired (the last DW_RETIRED_MAX of them):
 * a leaf whose identity comes back — a reload to it, or a restart on the
 * original artifact after a crash around a reload — resumes with its
 * install position and the events it needs (issue 13, row 5). */
#ifndef DW_RETENTION_H
#define DW_RETENTION_H
#include "../vm/program.h"
#include "../vm/retain.h"

#define DW_RETIRED_MAX 64

typedef struct dw_retired_leaf { dw_retain_leaf need; int64_t since; } dw_retired_leaf;

typedef struct dw_retention {
    dw_retain_leaf *cur; uint32_t ncur;       /* per leaf of the installed program */
    dw_retired_leaf *old; uint32_t nold;      /* retired leaves, oldest first */
    dw_retain_set set;                        /* the union of both */
    uint64_t generation;                      /* moves on whenever set is rebuilt (its ids may move) */
} dw_retention;

/* The needs of p's leaves (retired leaves kept).  0, or -1 on OOM (then
 * everything is kept: r stays usable). */
int dw_retention_install(dw_retention *r, const dw_program *p);
/* May some leaf need some event (false: every event is dropped after its decision)? */
static inline bool dw_retention_keeps_any(const dw_retention *r) { return r->set.keep_all || r->set.nslots; }
/* Does some leaf need events like ev? */
bool dw_retention_needs(const dw_retention *r, const dw_event *ev);
/* What of ev some leaf can read (vm/retain.h's dw_retain_set_fields). */
int dw_retention_fields(const dw_retention *r, const dw_event *ev, uint64_t ihash, dw_str *paths, uint32_t cap,
                        uint32_t *n, const void **id);
/* Seconds of history the leaves reach back. */
int64_t dw_retention_reach(const dw_retention *r, const dw_program *p);

/* A reload from the installed program (install positions `since`) to np:
 * fills nsince (np's positions: a leaf of the installed program or a
 * retired one keeps its position, others get `fresh`), and *kept.  Nothing
 * changes in r until dw_retention_commit. */
void dw_retention_match(const dw_retention *r, const dw_program *cur, const int64_t *since, const dw_program *np,
                        int64_t fresh, int64_t *nsince, uint32_t *kept);
/* Make np installed: the installed program's leaves that np lacks retire
 * (with their positions), np's leaves leave the retired list.  0, or -1 on
 * OOM (r is then keep-everything, still consistent). */
int dw_retention_commit(dw_retention *r, const dw_program *cur, const int64_t *since, const dw_program *np);

/* The install position of a retired leaf of this identity, if any. */
bool dw_retention_retired_since(const dw_retention *r, uint64_t identity, int64_t *since);

/* Checkpoints carry the needs of every leaf a restart may meet again
 * (np's own leaves, and those the swap from cur to np retires, newest
 * DW_RETIRED_MAX), so a restart on either artifact finds them: appended to
 * out as  u32 n { u64 identity  i64 since  i64 reach  u8 keep_all
 * u32 nids { str atype  str aid  str kind } }  (str = u32 length + bytes;
 * identities only: after a restart a retired leaf keeps every event of
 * its identities).  np == cur for a checkpoint without a reload.  0, or -1
 * on OOM. */
int dw_retention_encode(const dw_retention *r, const dw_program *cur, const int64_t *since, const dw_program *np,
                        const int64_t *nsince, dw_buf *out);
/* Replace r's retired leaves by the encoded ones (then dw_retention_install
 * drops those the program has).  Bytes used, or -1 if damaged or OOM. */
long dw_retention_decode(dw_retention *r, const uint8_t *p, size_t n);

void dw_retention_free(dw_retention *r);

#endif
