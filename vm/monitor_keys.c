/* monitor_keys.c - the monitors' keyed state (vm/monitor_keys.h): hash
 * map, last-touch order and expiry, and the count/sum window FIFO. */
#include "monitor.h"
#include "monitor_keys.h"
#include "ident_hash.h"
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
/* inlined: the hashes of short keys and uids on every decision, without a call through the PLT (same values) */
#define XXH_INLINE_ALL
#include <xxhash.h>

/* Keys are agent-controlled event values: with a known hash, keys chosen to
 * share a bucket make every lookup walk one chain (hash flooding, O(n) per
 * event).  XXH3 with a secret per-process seed; nothing persisted depends
 * on it (monitor state is rebuilt from the history at every open). */
static uint64_t hash_seed;
static pthread_once_t hash_seed_once = PTHREAD_ONCE_INIT;

static void hash_seed_init(void)
{
    uint64_t s = 0;
    ssize_t r;
    do r = getrandom(&s, sizeof s, 0);
    while (r < 0 && errno == EINTR);
    if (r != (ssize_t)sizeof s) {   /* no getrandom (old kernel, or confined): still per process */
        struct { struct timespec mono, real; pid_t pid; const void *addr; } w = { .pid = getpid(), .addr = &s };
        clock_gettime(CLOCK_MONOTONIC, &w.mono);
        clock_gettime(CLOCK_REALTIME, &w.real);
        s = XXH3_64bits(&w, sizeof w);
    }
    hash_seed = s;
}

void dw_monitors_seed(void) { pthread_once(&hash_seed_once, hash_seed_init); }

uint64_t dw_km_hash(const uint8_t *p, size_t n) { return XXH3_64bits_withSeed(p, n, hash_seed); }

/* Event identities: only the dispatch table's own (program-defined) are in
 * it and a hit is checked by match_event, so the plain hash serves. */
uint64_t dw_km_ident_hash(dw_str type, dw_str id, dw_str kind) { return dw_ident_hash(type, id, kind); }

/* ---------------------------------------------------------------- keyed map */

knode *dw_km_find(kmap *m, uint64_t h, const uint8_t *key, uint32_t klen)
{
    if (!m->cap) return NULL;
    for (knode *x = m->tab[h & (m->cap - 1)]; x; x = x->hnext) {
        m->probes++;
        if (x->h == h && x->klen == klen && (klen == 0 || memcmp(x->key, key, klen) == 0)) return x;
    }
    return NULL;
}

knode *dw_km_get_miss(kmap *m, const uint8_t *key, uint32_t klen, bool insert)
{
    knode *x;
    uint64_t h = dw_km_hash(key, klen);
    if (!(x = dw_km_find(m, h, key, klen)) && insert) x = dw_km_insert(m, h, key, klen);
    if (x) m->hot = x;
    return x;
}

static void lru_unlink(kmap *m, knode *x)
{
    if (x->prev) x->prev->next = x->next; else m->head = x->next;
    if (x->next) x->next->prev = x->prev; else m->tail = x->prev;
    x->prev = x->next = NULL;
}

static void lru_append(kmap *m, knode *x)
{
    x->prev = m->tail;
    x->next = NULL;
    if (m->tail) m->tail->next = x; else m->head = x;
    m->tail = x;
}

knode *dw_km_insert(kmap *m, uint64_t h, const uint8_t *key, uint32_t klen)
{
    if (m->n + 1 > m->cap) {     /* load factor <= 1 */
        uint32_t cap = m->cap ? m->cap * 2 : 16;
        if (cap < m->cap) return NULL;
        knode **t = calloc(cap, sizeof *t);
        if (!t) return NULL;
        for (uint32_t i = 0; i < m->cap; i++)
            for (knode *x = m->tab[i], *nx; x; x = nx) {
                nx = x->hnext;
                x->hnext = t[x->h & (cap - 1)];
                t[x->h & (cap - 1)] = x;
            }
        free(m->tab);
        m->bytes += (size_t)(cap - m->cap) * sizeof *t;
        m->tab = t;
        m->cap = cap;
    }
    knode *x = calloc(1, sizeof *x + klen);
    if (!x) return NULL;
    x->h = h;
    x->klen = klen;
    if (klen) memcpy(x->key, key, klen);
    x->hnext = m->tab[h & (m->cap - 1)];
    m->tab[h & (m->cap - 1)] = x;
    lru_append(m, x);
    m->n++;
    m->bytes += sizeof *x + klen;
    return x;
}

static void node_free(kmap *m, knode *x)
{
    m->bytes -= sizeof *x + x->klen + x->cur.cap + x->prv.cap;
    free(x->cur.v);
    free(x->prv.v);
    free(x);
}

void dw_km_remove(kmap *m, knode *x)
{
    knode **pp = &m->tab[x->h & (m->cap - 1)];
    while (*pp != x) pp = &(*pp)->hnext;
    *pp = x->hnext;
    lru_unlink(m, x);
    m->n--;
    if (m->hot == x) m->hot = NULL;
    node_free(m, x);
}

void dw_km_touch(kmap *m, knode *x, int64_t ts)
{
    x->ts = ts;
    if (m->tail != x) { lru_unlink(m, x); lru_append(m, x); }
}

/* Drop the nodes last touched more than wt ticks before now. */
void dw_km_expire(kmap *m, int64_t now, int64_t wt)
{
    while (m->head && sat_sub(now, m->head->ts) > wt) dw_km_remove(m, m->head);
}

void dw_km_clear(kmap *m)
{
    for (knode *x = m->head, *nx; x; x = nx) { nx = x->next; node_free(m, x); }
    free(m->tab);
    memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------- window FIFO */

/* Double a full FIFO's capacity (false: out of memory, f unchanged). */
bool dw_fifo_grow(fifo *f)
{
    size_t cap = f->cap ? f->cap * 2 : 64;
    fent *e = malloc(cap * sizeof *e);
    if (!e) return false;
    for (size_t i = 0; i < f->n; i++) e[i] = f->e[(f->head + i) & (f->cap - 1)];
    free(f->e);
    f->e = e;
    f->cap = cap;
    f->head = 0;
    return true;
}
