/* retain.h - which events a temporal leaf can ever need (history retention,
 * dogwood.md §7.3 and §8).
 *
 * A runtime keeps the events some leaf may still read.  Time bounds that by
 * the leaf's reach; identity bounds it further: an event that no predicate
 * of a leaf names is invisible to most formulas (every predicate is false
 * there), so dropping it from the history changes no verdict.  Not always:
 * `previous` reads the event just before, whatever it is; `formerly !P`
 * holds at any event that is not P; a `since` whose left side can fail at
 * an event is broken by it.  dw_retain_leaf decides, per event identity,
 * whether the leaf's verdicts are provably the same with those events
 * dropped (after the decision that appends them), and keeps them otherwise.
 *
 * The proof is an abstract evaluation at a dropped event of identity X:
 * never(φ) (φ holds there under no environment), always(φ) (it holds
 * there under every one) and insensitive(φ) (its rows at every kept event
 * are the same with and without the dropped ones, timepoints renumbered in
 * order, as retention by time already renumbers them).  formerly A needs
 * never(A); L since R needs never(R) and always(L); previous is never
 * insensitive.  Anything unknown is "keep". */
#ifndef DW_RETAIN_H
#define DW_RETAIN_H
#include <stdbool.h>
#include <stdint.h>
#include "temporal.h"
#include "../stdlib/bytes.h"

/* What a predicate asks of an event's logged record: each path present
 * and, where the pattern is a constant, equal to it (dw_tval_eq). */
typedef struct dw_retain_pat { dw_str path; const dw_value *value; /* NULL: any value */ } dw_retain_pat;
typedef struct dw_retain_pred {
    dw_retain_pat *pats; uint32_t npats;
    bool any_field;          /* its patterns are not known (a leaf restored from a checkpoint):
                                it may read any field of the events it matches */
} dw_retain_pred;

/* An identity whose events the leaf needs when one of its predicates can
 * match them (events that none can match are dropped: a predicate that
 * cannot match is as false as one naming another identity). */
typedef struct dw_retain_id { dw_str atype, aid, kind; dw_retain_pred *preds; uint32_t npreds; } dw_retain_id;

typedef struct dw_retain_leaf {
    uint64_t identity;       /* the leaf's (dw_tleaf.identity) */
    int64_t reach;           /* seconds */
    bool keep_all;           /* events no predicate matches matter too */
    dw_retain_id *ids;
    uint32_t nids;
    dw_arena *arena;         /* owns ids and everything under them (not the program) */
} dw_retain_leaf;

/* The needs of leaf `leaf` of t (strings strs[0..nstrs), constants
 * consts[0..nconsts) of the program; copied).  0, or -1 on OOM (*out is
 * then keep_all, which is always safe). */
int dw_retain_leaf_build(const dw_temporal_tables *t, const dw_str *strs, uint32_t nstrs, const dw_value *consts,
                         uint32_t nconsts, uint32_t leaf, dw_retain_leaf *out);
/* Does the leaf need this event once it has been decided? */
bool dw_retain_leaf_needs(const dw_retain_leaf *l, const dw_event *ev);
void dw_retain_leaf_free(dw_retain_leaf *l);

/* The union of several leaves' needs, for a per-event test in O(1) of the
 * program's size: one entry per identity with every leaf's needs of it.  It
 * points into the leaves, so it is rebuilt whenever they change. */
typedef struct dw_retain_entry {
    const dw_retain_id *key;             /* NULL: an empty slot */
    const dw_retain_id **ids; uint32_t nids;
    bool fieldless;          /* no predicate of them reads a field: each matches every event of the identity */
} dw_retain_entry;

typedef struct dw_retain_set {
    bool keep_all;
    int64_t reach;           /* seconds: the largest reach of its leaves */
    dw_retain_entry *slot; uint32_t nslots;   /* open addressing by identity, load <= 1/2 */
    const dw_retain_id **ids;                 /* the entries' ids */
} dw_retain_set;

/* 0, or -1 on OOM (*s is then keep_all). */
int dw_retain_set_build(dw_retain_set *s, const dw_retain_leaf *leaves, uint32_t n);
bool dw_retain_set_needs(const dw_retain_set *s, const dw_event *ev);
void dw_retain_set_free(dw_retain_set *s);
/* The hash the set (and vm/monitor.c's table) looks ev's identity up by (vm/ident_hash.h). */
uint64_t dw_retain_ident_hash(const dw_event *ev);

/* What of a needed event a leaf can read (a kept event need not hold the
 * rest).  A predicate reads an event's identity and the values at its
 * patterns' paths, nothing else (vm/teval.c match, vm/monitor.c, vm/tjoin.c);
 * one that cannot match the event matches none of its parts either.  So:
 * DW_RETAIN_FIELDS with paths[0..*n) the distinct paths of the predicates
 * that can match ev (none: its identity and time suffice), DW_RETAIN_WHOLE
 * when every field may be read (keep_all, a predicate with any_field, more
 * than cap paths), DW_RETAIN_NONE when no leaf needs ev (dw_retain_set_needs
 * false).  The paths point into the set's leaves: valid until they change. */
enum { DW_RETAIN_NONE = 0, DW_RETAIN_FIELDS = 1, DW_RETAIN_WHOLE = 2 };
#define DW_RETAIN_PATHS_MAX 32   /* dw_retain_project's most paths */
int dw_retain_set_fields(const dw_retain_set *s, const dw_event *ev, uint64_t ihash, dw_str *paths, uint32_t cap,
                         uint32_t *n, const void **id);   /* ihash: dw_retain_ident_hash(ev); *id: ev's identity in s */
/* The same for an identity *id gave (valid while its set is), without the
 * lookup: dw_retain_set_same is id when ev has that identity, else NULL.
 * Inline: the engine asks both of every event it keeps (runtime/engine_keep.c). */
static inline const void *dw_retain_set_same(const void *id, const dw_event *ev)
{
    const dw_retain_entry *en = id;
    if (!en) return NULL;
    const dw_retain_id *d = en->key;   /* the action id first: the field events of one type differ in most */
    return d->aid.len == ev->aid.len && d->kind.len == ev->kind.len && d->atype.len == ev->atype.len &&
           dw_mem_eq(d->aid.s, ev->aid.s, d->aid.len) && dw_mem_eq(d->kind.s, ev->kind.s, d->kind.len) &&
           dw_mem_eq(d->atype.s, ev->atype.s, d->atype.len) ? en : NULL;
}
/* Whether no predicate of identity id reads a field (its events keep time and identity only). */
static inline bool dw_retain_entry_is_fieldless(const void *id) { return ((const dw_retain_entry *)id)->fieldless; }
int dw_retain_entry_fields_read(const void *id, const dw_event *ev, dw_str *paths, uint32_t cap, uint32_t *n);
static inline int dw_retain_entry_fields(const void *id, const dw_event *ev, dw_str *paths, uint32_t cap, uint32_t *n)
{
    const dw_retain_entry *en = id;
    if (en->fieldless) { *n = 0; return DW_RETAIN_FIELDS; }   /* every predicate matches it by its identity alone */
    return dw_retain_entry_fields_read(id, ev, paths, cap, n);
}

/* The part of record rec that paths[0..n) reach (dw_record_path), copied
 * into a: a field a path names is copied whole, a record a longer path goes
 * through is cut down the same way, other fields are left out; so
 * dw_record_path(out, p) equals dw_record_path(rec, p) for each path p.
 * False on OOM or more than DW_RETAIN_PATHS_MAX paths. */
bool dw_retain_project(dw_arena *a, const dw_value *rec, const dw_str *paths, uint32_t n, dw_value *out);

#endif
