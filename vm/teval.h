/* teval.h - the general (reference) evaluator of temporal leaves (dogwood.md §8).
 *
 * dw_teval_leaf decides whether rel(i, ρ0, φ) is non-empty at the decision
 * event i = h->n - 1 (the last event of the view).  It allocates only from
 * cx->scratch, bounds its work by cx->budget and its recursion by
 * DW_TEVAL_MAX_DEPTH, and fails (returns -1, caller denies) rather than
 * guessing on ill-formed tables.  Joins (a `formerly` over a predicate whose
 * variables are bound, the negated left of a correlated `since`) are
 * answered from an index of the view (vm/tjoin.h) after their second
 * question, so they cost O(n log n) per leaf rather than O(n^2). */
#ifndef DW_TEVAL_H
#define DW_TEVAL_H
#include <stdbool.h>
#include <stdint.h>
#include "temporal.h"

/* Nesting of formulas, terms and aggregates (the parser stops at 256). */
#define DW_TEVAL_MAX_DEPTH 1024

typedef enum dw_teval_err {
    DW_TEVAL_OK = 0,
    DW_TEVAL_EBUDGET,     /* cx->budget exhausted */
    DW_TEVAL_ENOMEM,      /* scratch arena allocation failed */
    DW_TEVAL_EMALFORMED,  /* index out of range, unknown kind, cycle, slot >= nvars, empty view */
    DW_TEVAL_EDEPTH,      /* nesting deeper than DW_TEVAL_MAX_DEPTH */
} dw_teval_err;

/* Optional (dwc explain): told every aggregate the evaluator computes, with
 * its rows (each row's `for` slots in rows[k], those set in masks[k]; a
 * Timepoint slot holds the view position of its event) and its value. */
typedef struct dw_teval_observer {
    void *ctx;
    void (*aggregate)(void *ctx, uint32_t agg, uint32_t i, uint32_t nrows, const dw_value *const *rows,
                      const uint64_t *masks, const dw_value *value);
} dw_teval_observer;

typedef struct dw_teval_ctx {
    const dw_temporal_tables *t;
    const dw_str *strs; uint32_t nstrs;
    const dw_value *consts; uint32_t nconsts;
    const dw_history_view *h;      /* events 0..n-1; the decision event is h->ev[n-1] */
    const dw_tanchor *anchor;      /* ρ0 */
    dw_arena *scratch;
    /* Remaining work: every formula node evaluated, event visited, row
     * produced and index search or sort step costs 1; running out is an
     * error (fail closed).  Decremented in place, so one budget spans the
     * leaves of a decision (the engine's temporal_work_bound). */
    uint64_t budget;
    /* Optional: dw_teval_masks() of t, computed once per program.  NULL: the
     * evaluator derives what it needs per call, in scratch. */
    const uint64_t *masks;
    int err;                       /* out: dw_teval_err of the last failure */
    const dw_teval_observer *obs;  /* NULL but for dwc explain */
} dw_teval_ctx;

/* 0 with *holds set, or -1 on error (cx->err says which; *holds is false). */
int dw_teval_leaf(dw_teval_ctx *cx, uint32_t leaf, bool *holds);

/* Per-formula variable masks, 2 words per formula: [2f] the slots f may bind
 * in its rows, [2f+1] the slots f (or anything under it) mentions.  They let
 * the evaluator take §8.6's boolean shortcuts exactly where no bindings flow.
 * 0 with *out (allocated in a), or -1 if the tables are malformed (bad index,
 * slot >= DW_TEMPORAL_MAX_VARS, cycle, too deep). */
int dw_teval_masks(const dw_temporal_tables *t, dw_arena *a, const uint64_t **out);

/* Domain equality ≐ (§7.4) as a total order: 0 iff a ≐ b.  Kinds first (a
 * DW_V_SET counts as a DW_V_ARRAY); arrays in order; records key/value-wise;
 * decimals by value (they are fixed-point); Null equals only Null; entities
 * by type and id. */
int dw_tval_cmp(const dw_value *a, const dw_value *b);
static inline bool dw_tval_eq(const dw_value *a, const dw_value *b) { return dw_tval_cmp(a, b) == 0; }

#endif
