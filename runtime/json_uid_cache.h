/* json_uid_cache.h - entity uid objects a one-pass JSON reader has already
 * read (runtime/json_request.c), by their raw bytes.  A host sends the same
 * few principals, actions and enumerated entities line after line; a line
 * whose `{"type":"T","id":"I"}` is byte for byte one read before takes that
 * reading (the uid, its hash, its type's hash) instead of scanning,
 * validating, copying and hashing again.
 *
 * Exact: a hit compares every raw byte of the object (from '{' to its '}'),
 * and a reading depends on nothing but those bytes.  Bounded: a fixed table
 * of slots, a slot overwritten by the next object that maps to it (so
 * crafted collisions only cost misses).  It holds nothing schema- or
 * program-specific, so nothing else can make an entry stale.
 *
 * Lifetime: with lend set, a uid read through the cache may be the cache's
 * own (no copy in the reader's arena): it stays valid until the first read
 * through the cache after the next dw_uid_cache_next_line.  Set lend only
 * when a line's request is done with before the next line is read (a
 * per-line arena); without it every uid is built in the reader's arena as
 * without a cache.  Within one line no lent uid is overwritten, so a caller
 * that never calls dw_uid_cache_next_line only stops storing new ones. */
#ifndef DW_JSON_UID_CACHE_H
#define DW_JSON_UID_CACHE_H
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "../vm/value.h"

#define DW_UID_CACHE_SLOTS 64     /* at most (dw_uid_cache_slot_of takes 6 bits) */
#define DW_UID_CACHE_RAW 104      /* longer objects are read every time */
#define DW_UID_CACHE_MIN 16       /* the key reads two words: {"type":"","id":""} is 19 bytes */

typedef struct dw_uid_cache_slot {
    uint64_t key;                 /* dw_uid_cache_key of raw; 0: empty */
    uint64_t type_hash;           /* uid's type's dw_type_hash */
    uint32_t lent;                /* the line it was last lent to (dw_uid_cache.line) */
    uint16_t rawlen, toff, ioff;  /* raw's length; the type's and id's offsets in it */
    dw_uid uid;                   /* its type and id: NUL-terminated copies in str */
    char raw[DW_UID_CACHE_RAW];
    char str[DW_UID_CACHE_RAW];
} dw_uid_cache_slot;

typedef struct dw_uid_cache {
    uint32_t mask;                /* slots in use - 1 */
    uint32_t line;                /* dw_uid_cache_next_line's count, from 1 */
    bool lend;                    /* uids may be the cache's own (see above) */
    uint64_t hits, misses;        /* misses: objects read and stored */
    dw_uid_cache_slot slot[DW_UID_CACHE_SLOTS];
} dw_uid_cache;

/* Empty, not lending, with nslots slots (a power of 2, at most DW_UID_CACHE_SLOTS; 0: all;
 * fewer only for tests of eviction). */
static inline void dw_uid_cache_init(dw_uid_cache *c, uint32_t nslots)
{
    if (!nslots || nslots > DW_UID_CACHE_SLOTS || (nslots & (nslots - 1))) nslots = DW_UID_CACHE_SLOTS;
    memset(c, 0, sizeof *c);
    c->mask = nslots - 1;
    c->line = 1;
}

/* A new line: the uids lent to the last one may now be overwritten. */
static inline void dw_uid_cache_next_line(dw_uid_cache *c) { c->line++; }

/* The slot key of raw[0..n), n >= DW_UID_CACHE_MIN: three words (the type's
 * start, the middle, the id's end) and the length, mixed.  Never 0. */
static inline uint64_t dw_uid_cache_key(const char *raw, size_t n)
{
    uint64_t a, m, b;
    memcpy(&a, raw + 8, 8);
    memcpy(&m, raw + n / 2 - 4, 8);
    memcpy(&b, raw + n - 8, 8);
    uint64_t h = (a ^ (uint64_t)n) * 0x9E3779B97F4A7C15ull;
    h = (h ^ (h >> 29) ^ m) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 31) ^ b) * 0x94D049BB133111EBull;
    h ^= h >> 32;
    return h ? h : 1;
}

/* key's slot: by its top bits, which the multiplies made depend on every input bit */
static inline dw_uid_cache_slot *dw_uid_cache_slot_of(dw_uid_cache *c, uint64_t key)
{
    return &c->slot[(key >> 58) & c->mask];   /* 58: 64 - log2(DW_UID_CACHE_SLOTS) */
}

#endif
