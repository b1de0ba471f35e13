/* json_read_cache.h - what a one-pass JSON reader (runtime/json_request.c)
 * has already read, by raw bytes: entity uid objects and record keys.  A
 * host sends the same few principals, actions and enumerated entities, and
 * the same member names (and short strings: an event's action and kind),
 * line after line; a line whose `{"type":"T","id":"I"}`
 * or `"key"` is byte for byte one read before takes that reading (the uid,
 * its hash, its type's hash; the key's copy and dw_key_hash) instead of
 * scanning, validating, copying and hashing again.
 *
 * Exact: a hit compares every raw byte (a uid object from '{' to its '}', a
 * key up to its closing quote), and a reading depends on nothing but those
 * bytes.  Bounded: a fixed table
 * of slots, a pair of slots per key, the one read less recently overwritten
 * by the next object that maps to them (so crafted collisions only cost
 * misses).  Its readings depend on nothing else,
 * so nothing else can make one stale; the schema answers a request reader
 * keeps with them are by the schema's address, so a cache is used with
 * schemas that outlive it (or is initialised again).
 *
 * Lifetime: with lend set, a uid or key read through the cache may be the
 * cache's own (no copy in the reader's arena): it stays valid until the first read
 * through the cache after the next dw_read_cache_next_line.  Set lend only
 * when a line's request is done with before the next line is read (a
 * per-line arena); without it every uid and key is built in the reader's
 * arena as without a cache.  Within one line nothing lent is overwritten, so a caller
 * that never calls dw_read_cache_next_line only stops storing new ones.
 *
 * Shared copies (keep, without lend): the reader's arena outlives the line
 * (an engine's history, which keeps events).  The first copy of a reading
 * made there is remembered with the owner's generation keep_gen, and later
 * lines that read the same bytes point at that copy instead of making their
 * own.  The owner moves keep_gen on whenever such a copy may be gone: its
 * arena reset or replaced, or a line's copies given back (kept_new says a
 * line made one).  A slot written again forgets its copy. */
#ifndef DW_JSON_READ_CACHE_H
#define DW_JSON_READ_CACHE_H
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include "../vm/value.h"

#define DW_READ_CACHE_UID_SLOTS 64     /* at most (dw_read_cache_uid_find takes 6 bits) */
#define DW_READ_CACHE_UID_RAW 104      /* longer objects are read every time */
#define DW_READ_CACHE_UID_MIN 16       /* the key reads two words: {"type":"","id":""} is 19 bytes */

typedef struct dw_read_cache_uid {
    uint64_t key;                 /* dw_read_cache_uid_key of raw; 0: empty */
    uint64_t type_hash;           /* uid's type's dw_type_hash */
    uint32_t lent;                /* the line it was last lent to (dw_read_cache.line) */
    uint32_t used;                /* the line it was last read in (the pair's victim is the older) */
    uint16_t rawlen, toff, ioff;  /* raw's length; the type's and id's offsets in it */
    dw_uid uid;                   /* its type and id: NUL-terminated copies in str */
    const dw_uid *kept;           /* a copy in the keeping arena, valid while kept_gen == keep_gen */
    uint64_t kept_gen;
    uint64_t version;             /* which store this is (dw_read_cache.stores): names one reading */
    /* a request reader's schema answers for this reading as an action
     * (json_request.c), by the schema's address: its declaration, and the
     * principal and resource readings (by version) whose request check passed */
    const void *ad_schema, *ad;
    const void *chk_schema;
    uint64_t chk_p, chk_r;
    bool chk_validate;
    /* dw_read_cache_bind_uid's answer for this reading: the program's
     * canonical uid (NULL: none) and the store's entity, for the program and
     * the sealed store of those serials (0: none kept) */
    uint64_t bind_prog_serial, bind_store_serial;
    const void *bind_canon, *bind_ent;
    char raw[DW_READ_CACHE_UID_RAW];
    char str[DW_READ_CACHE_UID_RAW];
} dw_read_cache_uid;

#define DW_READ_CACHE_KEY_SLOTS DW_READ_CACHE_UID_SLOTS   /* the same mask picks from both */
#define DW_READ_CACHE_KEY_MAX 23       /* longer keys are read every time */
#define DW_READ_CACHE_HEAD_MAX 240     /* a longer line head is read every time */

typedef struct dw_read_cache_key {
    uint64_t word;                /* its first min(len, 8) bytes, the rest 0 (dw_read_cache_key_word) */
    uint32_t khash;               /* dw_key_hash */
    uint32_t lent;                /* as dw_read_cache_uid's */
    uint8_t len;                  /* 0: empty (an empty key is not stored) */
    char s[DW_READ_CACHE_KEY_MAX + 1];   /* NUL-terminated */
    const char *kept;             /* as dw_read_cache_uid's */
    uint64_t kept_gen;
    /* a schema answer for this key as a member of a record type (by the
     * type's address, see above): its declaration there (NULL: none) and how
     * many of the type's attributes are required */
    const void *in_type, *decl;
    size_t type_required;
} dw_read_cache_key;

typedef struct dw_read_cache {
    uint32_t mask;                /* uid slots in use - 1 */
    uint32_t line;                /* dw_read_cache_next_line's count, from 1 */
    bool lend;                    /* uids and keys may be the cache's own (see above) */
    bool keep;                    /* the reader's arena keeps lines: copies are shared (see above) */
    bool kept_new;                /* this line made a shared copy */
    uint64_t keep_gen;            /* the keeping arena's generation, from 1 */
    uint64_t hits, misses;        /* uid objects; misses: read and stored */
    uint64_t stores;              /* uid slots written, ever */
    uint64_t key_hits, key_misses;
    uint64_t head_hits;
    dw_read_cache_uid *last_uid;  /* the slot of dw_json_fast_uid's last reading (NULL: none) */
    /* the request dw_request_json_fast read last (the line it was read in):
     * the slots and readings of its principal, action and resource (NULL:
     * not a slot's), for dw_request_bind_read */
    uint32_t req_line;
    dw_read_cache_uid *req_sl[3];
    uint64_t req_ver[3];
    dw_read_cache_uid slot[DW_READ_CACHE_UID_SLOTS];
    dw_read_cache_key keys[DW_READ_CACHE_KEY_SLOTS];
    /* the request reader's last two line heads (json_request.c): a line's
     * bytes up to its context's value, when principal, action and resource
     * came first, each a lent reading (named by slot and version, so a head
     * is taken only while all three are still there), and the action's
     * declaration for the schema at that address; the most recent first */
    struct dw_read_cache_head {
        uint16_t len;             /* 0: empty */
        const void *schema, *ad;
        dw_read_cache_uid *sl[3];
        uint64_t ver[3];
        char bytes[DW_READ_CACHE_HEAD_MAX];
    } head[2];
} dw_read_cache;

/* Empty, not lending, with nslots slots (a power of 2, at most DW_READ_CACHE_UID_SLOTS; 0: all;
 * fewer only for tests of eviction). */
static inline void dw_read_cache_init(dw_read_cache *c, uint32_t nslots)
{
    if (!nslots || nslots > DW_READ_CACHE_UID_SLOTS || (nslots & (nslots - 1))) nslots = DW_READ_CACHE_UID_SLOTS;
    memset(c, 0, sizeof *c);
    c->mask = nslots - 1;
    c->line = 1;
    c->keep_gen = 1;
}

/* A new line: the uids lent to the last one may now be overwritten. */
static inline void dw_read_cache_next_line(dw_read_cache *c) { c->line++; }

/* The slot key of raw[0..n), n >= DW_READ_CACHE_UID_MIN: three words (the type's
 * start, the middle, the id's end) and the length, mixed.  Never 0. */
static inline uint64_t dw_read_cache_uid_key(const char *raw, size_t n)
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

/* raw[0..n) up to and with its first '}' (room bytes readable): its length, 0 if none. */
static inline size_t dw_read_cache_uid_len(const char *raw, size_t room)
{
    size_t i = 0;
#if defined(__SSE2__)
    const __m128i close = _mm_set1_epi8('}');
    for (; i + 16 <= room; i += 16) {
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(raw + i)), close));
        if (m) return i + (size_t)__builtin_ctz(m) + 1;
    }
#endif
    for (; i < room; i++)
        if (raw[i] == '}') return i + 1;
    return 0;
}

/* key's pair of slots (by its top bits, which the multiplies made depend on
 * every input bit; one slot when there is one): the stored reading of
 * raw[0..rl) in either, else NULL with *victim the one to store it in (the
 * one read less recently; NULL when both are lent to this line). */
static inline dw_read_cache_uid *dw_read_cache_uid_find(dw_read_cache *c, uint64_t key, const char *raw, size_t rl,
                                                        dw_read_cache_uid **victim)
{
    size_t k = (key >> 58) & c->mask;          /* 58: 64 - log2(DW_READ_CACHE_UID_SLOTS) */
    dw_read_cache_uid *x = &c->slot[k], *y = &c->slot[k ^ (c->mask & 1)];
    if (x->key == key && x->rawlen == rl && dw_mem_eq(x->raw, raw, rl)) return x;
    if (y->key == key && y->rawlen == rl && dw_mem_eq(y->raw, raw, rl)) return y;
    if (x->lent == c->line) x = y;
    else if (y->lent != c->line && y->used < x->used) x = y;
    *victim = x->lent == c->line ? NULL : x;
    return NULL;
}

/* The 8 bytes after a key's opening quote (at s, 8 readable) cut to the key
 * when it ends (a '"') among them: that word and *ql, the first quote's
 * place (8: none).  A key with no escape ends at its first quote, so a
 * stored key of length < 8 matches iff the words are equal. */
static inline uint64_t dw_read_cache_key_word(const char *s, size_t *ql)
{
    uint64_t w;
    memcpy(&w, s, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t q = w ^ 0x2222222222222222ull;                       /* '"' bytes become 0 */
    uint64_t z = (q - 0x0101010101010101ull) & ~q & 0x8080808080808080ull;   /* lowest flag exact */
    *ql = z ? (size_t)__builtin_ctzll(z) >> 3 : 8;
    return *ql == 8 ? w : w & ((1ull << (8 * *ql)) - 1);
#else
    size_t i = 0;
    while (i < 8 && s[i] != '"') i++;
    *ql = i;
    uint64_t m = 0;
    memcpy(&m, s, i);
    return m;
#endif
}

static inline dw_read_cache_key *dw_read_cache_key_slot(dw_read_cache *c, uint64_t word, size_t ql)
{
    uint64_t h = (word ^ ql) * 0x9E3779B97F4A7C15ull;
    return &c->keys[(h >> 58) & c->mask];       /* 58: 64 - log2(DW_READ_CACHE_KEY_SLOTS) */
}

#endif
