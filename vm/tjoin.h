/* tjoin.h - an index of a history view by the values at a predicate's field
 * paths, for the reference evaluator's joins (vm/teval.c).
 *
 * `formerly within W P` with every variable of P bound by an enclosing
 * operator, as in `P0{f: x} && formerly within W P{g: x}`, is asked once per
 * outer timepoint; scanning back each time costs O(n^2) per decision.  Its
 * answer depends only on the values at P's non-wildcard field paths, so the
 * view's events of P's identity with every path present are sorted once by
 * those values (domain equality, dw_tval_cmp) and then by position, and each
 * question becomes a binary search for the latest such event at or before i.
 *
 * Both calls take work from *budget (1 per event visited, per merge-pass
 * element and per search step), the evaluator's per-decision work bound. */
#ifndef DW_TJOIN_H
#define DW_TJOIN_H
#include <stdint.h>
#include "temporal.h"

typedef struct dw_tjoin dw_tjoin;

enum { DW_TJOIN_OK = 0, DW_TJOIN_EBUDGET = -1, DW_TJOIN_ENOMEM = -2 };

/* Index the events of h matching p's identity with every field path of p
 * present.  The key of an event is the values at p's non-wildcard paths, in
 * pattern order.  p's string indices must be valid (the caller checked).
 * DW_TJOIN_OK with *out (allocated in a), DW_TJOIN_EBUDGET, DW_TJOIN_ENOMEM. */
int dw_tjoin_build(const dw_temporal_tables *t, const dw_str *strs, const dw_history_view *h, const dw_tf *p,
                   dw_arena *a, uint64_t *budget, dw_tjoin **out);

/* The number of key components (p's non-wildcard patterns). */
uint32_t dw_tjoin_nkey(const dw_tjoin *x);

/* The latest indexed position <= i whose key is ≐ probe[0 .. nkey), or
 * UINT32_MAX in *pos.  DW_TJOIN_OK or DW_TJOIN_EBUDGET. */
int dw_tjoin_latest(const dw_tjoin *x, const dw_value *probe, uint32_t i, uint64_t *budget, uint32_t *pos);

#endif
