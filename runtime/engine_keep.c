/* engine_keep.c - what a kept event holds: its time, its identity and the
 * fields some leaf can read (vm/retain.h's dw_retain_set_fields), not the
 * rest of its logged record.  A count budget's events keep no field at all.
 *
 * Why that loses nothing a leaf could read: a leaf reads an event only
 * through its predicates' patterns (and a key-local schema's key fields,
 * vm/leaves.c), and the leaves that can ever read a kept event are the ones
 * retention already answers for (runtime/retention.h): the installed
 * program's and those a reload retired; a leaf a reload adds reads only
 * events after its install position (box.md §7).  A retired leaf restored
 * from a checkpoint has unknown patterns: its identities keep whole records
 * (any_field).  The durable log always holds the whole event; checkpoints
 * hold the kept parts.  dw_engine_open_printing's engines (dwc explain and
 * dwc test --explain show a witness event's record) keep whole records. */
#include "engine_int.h"

/* ev's identity as the copy kept events share, by its entry d in the
 * retention set (the few most recent ones; the table is forgotten when the
 * set is rebuilt, as its entries may then move): false on OOM. */
static bool share_identity(dw_engine *e, const void *d, dw_event *ev)
{
    history *h = &e->h;
    if (h->ids_generation != e->ret.generation) {
        engine_keep_reset(h);
        h->ids_generation = e->ret.generation;
    }
    for (uint32_t k = 0; k < KEPT_IDS; k++)
        if (h->ids[k].of == d) {
            ev->atype = h->ids[k].atype;
            ev->aid = h->ids[k].aid;
            ev->kind = h->ids[k].kind;
            h->last_share = &h->ids[k];
            return true;
        }
    char *t = dw_arena_memdup(&h->arena, ev->atype.s, ev->atype.len), *i = dw_arena_memdup(&h->arena, ev->aid.s, ev->aid.len),
         *k = dw_arena_memdup(&h->arena, ev->kind.s, ev->kind.len);
    if (!t || !i || !k) return false;
    struct kept_identity *c = &h->ids[h->ids_next++ % KEPT_IDS];
    *c = (struct kept_identity){ d, { t, ev->atype.len }, { i, ev->aid.len }, { k, ev->kind.len } };
    ev->atype = c->atype;
    ev->aid = c->aid;
    ev->kind = c->kind;
    h->last_share = c;
    return true;
}

int engine_keep_part(dw_engine *e, const dw_event *ev, dw_event *cut, uint64_t *ihash)
{
    history *h = &e->h;
    /* the identity the last kept event had, remembered with its hash: no
     * hash, no lookup (the set's generation); asked once, for both paths */
    const void *same = h->last_gen == e->ret.generation && !e->whole_events ? dw_retain_set_same(h->last_id, ev) : NULL;
    /* The last kept event's identity again, when it keeps no field and the
     * history no key (a count budget's events): its time and the shared
     * identity copy, as the general path below gives them (test_retain.c
     * test_keep_fast_path), without asking the set. */
    if (same && h->last_fieldless && h->ids_generation == e->ret.generation && h->last_share && h->last_share->of == same) {
        const struct kept_identity *c = h->last_share;
        *ihash = h->last_hash;
        *cut = *ev;
        cut->atype = c->atype;
        cut->aid = c->aid;
        cut->kind = c->kind;
        cut->logged = (dw_value){ .kind = DW_V_RECORD };
        return DW_RETAIN_FIELDS;
    }
    *ihash = 0;
    if (!dw_retention_keeps_any(&e->ret)) return DW_RETAIN_NONE;
    const dw_event_schema *es = e->s.es;
    uint32_t nkey = es ? (uint32_t)es->nkey : 0, n;
    if (e->whole_events || nkey >= DW_RETAIN_PATHS_MAX) return dw_retention_needs(&e->ret, ev) ? DW_RETAIN_WHOLE : DW_RETAIN_NONE;
    dw_str paths[DW_RETAIN_PATHS_MAX];
    const void *d = same;
    int need;
    if (d) {
        *ihash = h->last_hash;                    /* the monitors look it up by the same (engine.c history_put) */
        need = dw_retain_entry_fields(d, ev, paths, DW_RETAIN_PATHS_MAX - nkey, &n);
    } else {
        *ihash = dw_retain_ident_hash(ev);
        need = dw_retention_fields(&e->ret, ev, *ihash, paths, DW_RETAIN_PATHS_MAX - nkey, &n, &d);
        if (d) {
            h->last_id = d, h->last_hash = *ihash, h->last_gen = e->ret.generation;
            h->last_fieldless = !nkey && dw_retain_entry_is_fieldless(d);
        }
    }
    if (need != DW_RETAIN_FIELDS) return need;
    *cut = *ev;
    if (nkey || n) {
        for (uint32_t q = 0; q < nkey; q++) paths[n++] = es->key[q].path;   /* the partition's fields */
        if (!dw_retain_project(&e->h.arena, &ev->logged, paths, n, &cut->logged)) return -1;
    } else cut->logged = (dw_value){ .kind = DW_V_RECORD };   /* identity and time only */
    return share_identity(e, d, cut) ? DW_RETAIN_FIELDS : -1;
}

void engine_keep_reset(history *h)
{
    memset(h->ids, 0, sizeof h->ids);
    h->ids_next = 0;
    h->last_share = NULL;
}
