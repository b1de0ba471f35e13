/* leaves.h - the LEAF protocol (dogwood.md §15.1 step 3, §20 D3): before a
 * decision runs any condition, the temporal leaves of every rule whose scope
 * admits the request are evaluated (by the incremental monitors, else by
 * teval over the history) into req->leaf_values, which the LEAF instruction
 * reads and trusts.  The rules come from the decision index's candidates, and
 * a candidate whose scope turns out false is dropped from them, so no scope
 * runs twice and the decision runs only what can still apply. */
#ifndef DW_LEAVES_H
#define DW_LEAVES_H
#include "vm.h"
#include "monitor.h"

/* What the leaves read besides the request. */
typedef struct dw_leaf_env {
    const dw_event *hist; uint32_t nhist;   /* the retained history, oldest first; hist[nhist - 1]
                                               is the decision's own event (nhist >= 1) */
    int64_t ticks_per_second;
    const dw_str *key; uint32_t nkey;       /* key-local histories (§8.9): the event schema's key
                                               paths; a teval leaf reads the events of this key only */
    const int64_t *since;                   /* per leaf: its install position (ticks), INT64_MIN for
                                               all history (box.md §7); NULL: all history */
    dw_monitors *mon;                       /* incremental monitors; NULL: every leaf through teval */
    uint64_t work_bound;                    /* temporal steps for all leaves of the decision */
    const dw_value *anchor_context;         /* the leaves' ρ0 context when it is not the request's
                                               (the parts API: event values, §8.1); NULL: req's */
    const uint32_t *leaf_policies;          /* the policies with leaves, ascending (nleaf_policies), to find
                                               among the candidates; NULL: each candidate's code says */
    uint32_t nleaf_policies;
} dw_leaf_env;

typedef enum dw_leaf_err {
    DW_LEAF_OK = 0,
    DW_LEAF_ESCOPE,          /* a scope test failed to evaluate */
    DW_LEAF_ENOMEM,          /* out of scratch for the leaf pass */
    DW_LEAF_ETEVAL,          /* a leaf of `policy` failed: teval_err says how (DW_TEVAL_*) */
    DW_LEAF_EDECIDE,         /* the decision after the leaves ran out of memory */
} dw_leaf_err;

typedef struct dw_leaf_fault { dw_leaf_err err; uint32_t policy; int teval_err; } dw_leaf_fault;

/* The leaf pass over the candidates c of a bound request (vm.h's postings):
 * fills req->leaf_values (0 false, 1 true, 2 not evaluated; NULL when no
 * policy with leaves is in scope, which reads as 2) and drops from c every
 * policy with leaves whose scope excludes the request (c then owns a
 * rewritten list in scratch, or the owned one rewritten in place).  0, or -1
 * with *fault. */
int dw_eval_leaves(const dw_program *p, const dw_store *store, dw_request *req, const dw_leaf_env *env,
                   dw_arena *scratch, dw_postings *c, dw_leaf_fault *fault);

/* The pass's parts, for a re-evaluation that must see what it saw (dwc
 * explain): the anchor ρ0 of a bound request, the teval view (the key's
 * events, in scratch) and the first view position a leaf installed at
 * `since` reads. */
void dw_leaf_anchor(const dw_request *req, const dw_leaf_env *env, dw_tanchor *anchor);
const dw_event **dw_leaf_key_view(const dw_leaf_env *env, dw_arena *scratch, uint32_t *nv);
uint32_t dw_leaf_view_from(const dw_event *const *view, uint32_t nv, int64_t since);

/* Cedar's decision with the leaf pass first: dw_authorize for a program with
 * temporal leaves.  req is bound here if it is not yet.  0, or -1 with *fault
 * (the caller denies). */
int dw_authorize_leaves(const dw_program *p, const dw_store *store, dw_request *req, const dw_leaf_env *env,
                        dw_arena *scratch, dw_response *resp, dw_leaf_fault *fault);

#endif
