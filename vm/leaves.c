/* leaves.c - see leaves.h. */
#include "leaves.h"
#include <string.h>
#include "teval.h"

/* The teval fallback's history: every retained event, or with key-local
 * histories (§8.9) only those of the decision event's key.  Built once per
 * decision, at the first leaf without a monitor: an all-idiom decision costs
 * O(1) in the window (vm/monitor.h). */
const dw_event **dw_leaf_key_view(const dw_leaf_env *env, dw_arena *scratch, uint32_t *nv)
{
    const dw_event **view = dw_arena_alloc_raw(scratch, (env->nhist + 1) * sizeof *view);
    if (!view) return NULL;
    const dw_event *cur = &env->hist[env->nhist - 1];
    uint32_t n = 0;
    for (uint32_t i = 0; i < env->nhist; i++) {
        const dw_event *ev = &env->hist[i];
        bool same_key = true;
        for (uint32_t q = 0; q < env->nkey && same_key; q++) {
            const dw_value *a = dw_record_get(&ev->logged, env->key[q].s, env->key[q].len);
            const dw_value *b = dw_record_get(&cur->logged, env->key[q].s, env->key[q].len);
            same_key = (!a && !b) || (a && b && dw_value_eq(a, b));
        }
        if (same_key) view[n++] = ev;
    }
    *nv = n;
    return view;
}

/* A leaf installed by a reload reads only the events from its install
 * position on (box.md §7): the first index of the view at or after since. */
uint32_t dw_leaf_view_from(const dw_event *const *view, uint32_t nv, int64_t since)
{
    if (since == INT64_MIN) return 0;
    uint32_t lo = 0, hi = nv;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (view[mid]->ts < since) lo = mid + 1;
        else hi = mid;
    }
    return lo < nv || !nv ? lo : nv - 1;   /* the decision event itself is never before it */
}

void dw_leaf_anchor(const dw_request *req, const dw_leaf_env *env, dw_tanchor *anchor)
{
    *anchor = (dw_tanchor){ 0 };
    anchor->context = env->anchor_context ? *env->anchor_context : req->vars[DW_VAR_C];
    anchor->principal = req->vars[DW_VAR_P];
    anchor->resource = req->vars[DW_VAR_R];
    anchor->principal_attrs.kind = DW_V_RECORD;
    anchor->resource_attrs.kind = DW_V_RECORD;
    if (req->ent[0]) anchor->principal_attrs = req->ent[0]->attrs;
    if (req->ent[2]) anchor->resource_attrs = req->ent[2]->attrs;
}

static int fail(dw_leaf_fault *f, dw_leaf_err err, uint32_t policy, int teval_err)
{
    *f = (dw_leaf_fault){ err, policy, teval_err };
    return -1;
}

int dw_eval_leaves(const dw_program *p, const dw_store *store, dw_request *req, const dw_leaf_env *env,
                   dw_arena *scratch, dw_candidates *c, dw_leaf_fault *fault)
{
    *fault = (dw_leaf_fault){ 0 };
    uint32_t nl = p->temporal.nleaves;
    req->leaf_values = NULL;
    req->nleaf_values = 0;
    if (!nl) return 0;
    uint8_t *vals = dw_arena_alloc_raw(scratch, nl);
    if (!vals) return fail(fault, DW_LEAF_ENOMEM, 0, 0);
    memset(vals, 2, nl);
    req->leaf_values = vals;
    req->nleaf_values = nl;
    if (!env->nhist) return fail(fault, DW_LEAF_ETEVAL, 0, DW_TEVAL_EMALFORMED);   /* no decision event */
    if (!c->v) {                 /* no index: every policy is a candidate */
        uint32_t *all = dw_arena_alloc_raw(scratch, (p->npolicies + 1) * sizeof *all);
        if (!all) return fail(fault, DW_LEAF_ENOMEM, 0, 0);
        for (uint32_t i = 0; i < p->npolicies; i++) all[i] = i << 1;
        c->v = all;
        c->n = p->npolicies;
    }

    const dw_event *cur = &env->hist[env->nhist - 1];
    dw_tanchor anchor;
    dw_leaf_anchor(req, env, &anchor);

    dw_value *stack = NULL;
    dw_eval_ctx cx = { .prog = p, .store = store, .req = req, .scratch = scratch };
    const dw_event **view = NULL;
    uint32_t nv = 0, w = 0;
    uint64_t budget = env->work_bound;   /* shared by every leaf of the decision */
    for (uint32_t k = 0; k < c->n; k++) {
        uint32_t pi = DW_IX_POLICY(c->v[k]);
        const dw_policy_code *pc = &p->policies[pi];
        c->v[w++] = c->v[k];
        if (!pc->nleaves) continue;
        bool in_scope = (c->v[k] & DW_IX_IMPLIED) != 0;   /* the index showed the scope true */
        if (!in_scope) {         /* the stack only for a scope the index left open */
            if (!stack) {
                if (!(stack = dw_arena_alloc_raw(scratch, (p->max_stack + 1) * sizeof *stack))) return fail(fault, DW_LEAF_ENOMEM, pi, 0);
                cx.stack = stack;
            }
            if (dw_eval_code(&cx, pc->scope_entry, &in_scope) != DW_EVAL_OK) return fail(fault, DW_LEAF_ESCOPE, pi, 0);
        }
        if (!in_scope) { w--; continue; }   /* its code would be false: the decision skips it */
        for (uint32_t l = pc->first_leaf; l < pc->first_leaf + pc->nleaves; l++) {
            bool holds = false;
            if (env->mon && dw_monitors_eval(env->mon, p, l, &anchor, cur, &holds) == 0) { vals[l] = holds; continue; }
            if (!view && !(view = dw_leaf_key_view(env, scratch, &nv))) return fail(fault, DW_LEAF_ENOMEM, pi, 0);
            uint32_t from = dw_leaf_view_from(view, nv, env->since ? env->since[l] : INT64_MIN);
            dw_history_view hv = { view + from, nv - from, env->ticks_per_second };
            dw_teval_ctx tc = {
                .t = &p->temporal, .strs = p->strs, .nstrs = p->nstrs, .consts = p->consts, .nconsts = p->nconsts,
                .h = &hv, .anchor = &anchor, .scratch = scratch, .budget = budget,
            };
            int trc = dw_teval_leaf(&tc, l, &holds);
            budget = tc.budget;
            if (trc) return fail(fault, DW_LEAF_ETEVAL, pi, tc.err);
            vals[l] = holds;
        }
    }
    c->n = w;
    return 0;
}

int dw_authorize_leaves(const dw_program *p, const dw_store *store, dw_request *req, const dw_leaf_env *env,
                        dw_arena *scratch, dw_response *resp, dw_leaf_fault *fault)
{
    *fault = (dw_leaf_fault){ 0 };
    if (req->bound_prog != p || req->bound_store != store) dw_request_bind(req, p, store);
    dw_candidates c;
    if (dw_index_candidates(p, store, req, scratch, &c)) return fail(fault, DW_LEAF_EDECIDE, 0, 0);
    if (dw_eval_leaves(p, store, req, env, scratch, &c, fault)) return -1;
    if (dw_authorize_candidates(p, store, req, scratch, &c, resp)) return fail(fault, DW_LEAF_EDECIDE, 0, 0);
    return 0;
}
