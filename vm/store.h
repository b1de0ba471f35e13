/* store.h - the entity store (dogwood.md §4.2): uid -> attributes, tags and
 * the transitive closure of its parents, computed once when the store is
 * sealed so `x in y` is a binary search. */
#ifndef DW_STORE_H
#define DW_STORE_H
#include "value.h"

typedef struct dw_entity {
    const dw_uid *uid;
    dw_value attrs;                 /* RECORD */
    dw_value tags;                  /* RECORD; n == 0 when none */
    const dw_uid **parents;  uint32_t nparents;   /* direct, as given */
    const dw_uid **ancestors; uint32_t nanc;      /* transitive, sorted by hash */
    uint32_t mark;                  /* scratch for closure computation */
} dw_entity;

typedef struct dw_store {
    dw_arena arena;                 /* owns every entity and value in the store */
    dw_entity **slots;              /* open addressing on uid hash */
    size_t cap, n;
    dw_entity **order;              /* insertion order, for iteration */
    size_t norder, order_cap;
    uint32_t gen;
    uint64_t serial;                /* dw_serial_next of the last dw_store_seal; 0 since a dw_store_put (or never sealed) */
} dw_store;

void dw_store_init(dw_store *s);
void dw_store_free(dw_store *s);
/* Find or create the entity with this uid (the uid must live in s->arena or
 * outlive the store).  *created tells which.  NULL on OOM. */
dw_entity *dw_store_put(dw_store *s, const dw_uid *uid, bool *created);
const dw_entity *dw_store_get(const dw_store *s, const dw_uid *uid);
/* Compute every entity's ancestor closure.  Cycles are tolerated.  The
 * closures are materialised (quadratic in a chain's length), so their total
 * size is bounded: 0, -1 on OOM, DW_STORE_TOO_DEEP when the entities would
 * have more than DW_STORE_MAX_ANCESTORS ancestor links in all (a chain of
 * about 5,800 entities; docs/RELIABILITY.md). */
#define DW_STORE_MAX_ANCESTORS (1u << 24)
#define DW_STORE_TOO_DEEP (-2)
int dw_store_seal(dw_store *s);
/* y is a transitive ancestor of e (binary search). */
bool dw_entity_has_ancestor(const dw_entity *e, const dw_uid *y);
/* x in y for entities: x == y, or y is a transitive ancestor of x. */
bool dw_store_in(const dw_store *s, const dw_uid *x, const dw_uid *y);

#endif
