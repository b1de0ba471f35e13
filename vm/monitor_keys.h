/* monitor_keys.h - the monitors' keyed state (vm/monitor_keys.c): a hash
 * map of nodes keyed by canonical value encodings, kept in last-touch order
 * for window expiry, and the FIFO of a count/sum window.  Private to
 * vm/monitor.c. */
#ifndef DW_MONITOR_KEYS_H
#define DW_MONITOR_KEYS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "value.h"
#include "../stdlib/bytes.h"

typedef struct prevrec { bool present, matched; int64_t ts; uint8_t *v; uint32_t n, cap; } prevrec;

typedef struct knode {
    struct knode *hnext, *prev, *next;   /* hash chain; time order (oldest first) */
    uint64_t h;
    int64_t ts;              /* last touch (FORMERLY, SINCE_NEG, PREVIOUS) */
    uint64_t seq;            /* SINCE_NEG: sequence number of the latest match */
    uint64_t count;          /* COUNT/SUM */
    __int128 sum;
    prevrec cur, prv;        /* PREVIOUS */
    uint32_t klen;
    uint8_t key[];
} knode;

typedef struct kmap {
    knode **tab; uint32_t cap, n;   /* cap a power of two (0: empty) */
    knode *head, *tail;
    size_t bytes;
    uint64_t probes;         /* chain links visited by lookups (dw_monitors_probes) */
    knode *hot;              /* the node dw_km_get last returned (NULL once removed) */
} kmap;

typedef struct fent { int64_t ts; knode *node; int64_t amt; } fent;

typedef struct fifo { fent *e; size_t cap, head, n; } fifo;   /* cap a power of two */

static inline int64_t sat_sub(int64_t a, int64_t b)
{
    int64_t d;
    if (__builtin_sub_overflow(a, b, &d)) d = a < b ? INT64_MIN : INT64_MAX;
    return d;
}

knode *dw_km_find(kmap *m, uint64_t h, const uint8_t *key, uint32_t klen);
knode *dw_km_insert(kmap *m, uint64_t h, const uint8_t *key, uint32_t klen);
/* The node of key (inserted when absent and insert is set; NULL if absent or
 * out of memory).  A decision looks up the key its own event just touched:
 * the node last returned is compared first, without hashing. */
knode *dw_km_get_miss(kmap *m, const uint8_t *key, uint32_t klen, bool insert);   /* past the hot node */
/* Inline: the hot node (a keyless monitor's only one) costs no call. */
static inline knode *dw_km_get(kmap *m, const uint8_t *key, uint32_t klen, bool insert)
{
    knode *x = m->hot;
    if (x && x->klen == klen && dw_mem_eq(x->key, key, klen)) return x;
    return dw_km_get_miss(m, key, klen, insert);
}
void dw_km_remove(kmap *m, knode *x);
void dw_km_touch(kmap *m, knode *x, int64_t ts);
void dw_km_expire(kmap *m, int64_t now, int64_t wt);
void dw_km_clear(kmap *m);
bool dw_fifo_grow(fifo *f);
/* Append x (false: out of memory, nothing appended). */
static inline bool dw_fifo_push(fifo *f, fent x)
{
    if (f->n == f->cap && !dw_fifo_grow(f)) return false;
    f->e[(f->head + f->n) & (f->cap - 1)] = x;
    f->n++;
    return true;
}
uint64_t dw_km_hash(const uint8_t *p, size_t n);
uint64_t dw_km_ident_hash(dw_str type, dw_str id, dw_str kind);   /* never 0 */

#endif
