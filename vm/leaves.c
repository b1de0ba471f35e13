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

/* Every field is written (no zeroing first: it is built once per decision). */
static inline void leaf_anchor(const dw_request *req, const dw_leaf_env *env, dw_tanchor *anchor)
{
    anchor->context = env->anchor_context ? *env->anchor_context : req->vars[DW_VAR_C];
    anchor->principal = req->vars[DW_VAR_P];
    anchor->resource = req->vars[DW_VAR_R];
    anchor->principal_attrs = req->ent[0] ? req->ent[0]->attrs : (dw_value){ .kind = DW_V_RECORD };
    anchor->resource_attrs = req->ent[2] ? req->ent[2]->attrs : (dw_value){ .kind = DW_V_RECORD };
}

void dw_leaf_anchor(const dw_request *req, const dw_leaf_env *env, dw_tanchor *anchor) { leaf_anchor(req, env, anchor); }

static int fail(dw_leaf_fault *f, dw_leaf_err err, uint32_t policy, int teval_err)
{
    *f = (dw_leaf_fault){ err, policy, teval_err };
    return -1;
}

/* One decision's leaf pass, its parts made at first use: the values (none
 * is read unless a policy with leaves is in scope), the anchor, the scope
 * tests' stack, the teval view. */
typedef struct pass {
    const dw_program *p; const dw_store *store; dw_request *req; const dw_leaf_env *env;
    dw_arena *scratch; dw_leaf_fault *fault;
    uint8_t *vals;
    dw_value *stack;
    const dw_event **view; uint32_t nv;
    uint64_t budget;             /* shared by every leaf of the decision */
    bool anchored;
    dw_tanchor anchor;           /* not zeroed: leaf_anchor writes all of it */
} pass;

/* Policy pi's scope when the index left it open: 1 true, 0 false, -1 with the fault. */
static __attribute__((noinline)) int scope_holds(pass *s, uint32_t pi)
{
    const dw_program *p = s->p;
    if (!s->stack && !(s->stack = dw_arena_alloc_raw(s->scratch, (p->max_stack + 1) * sizeof *s->stack)))
        return fail(s->fault, DW_LEAF_ENOMEM, pi, 0);
    dw_eval_ctx cx = { .prog = p, .store = s->store, .req = s->req, .scratch = s->scratch, .stack = s->stack };
    bool in_scope = false;
    if (dw_eval_code(&cx, p->policies[pi].scope_entry, &in_scope) != DW_EVAL_OK) return fail(s->fault, DW_LEAF_ESCOPE, pi, 0);
    return in_scope;
}

/* Leaf l of policy pi through teval over the retained history (no monitor answers it). */
static __attribute__((noinline)) int teval_leaf(pass *s, uint32_t pi, uint32_t l, bool *holds)
{
    const dw_program *p = s->p;
    const dw_leaf_env *env = s->env;
    if (!s->view && !(s->view = dw_leaf_key_view(env, s->scratch, &s->nv))) return fail(s->fault, DW_LEAF_ENOMEM, pi, 0);
    uint32_t from = dw_leaf_view_from(s->view, s->nv, env->since ? env->since[l] : INT64_MIN);
    dw_history_view hv = { s->view + from, s->nv - from, env->ticks_per_second };
    dw_teval_ctx tc = {
        .t = &p->temporal, .strs = p->strs, .nstrs = p->nstrs, .consts = p->consts, .nconsts = p->nconsts,
        .h = &hv, .anchor = &s->anchor, .scratch = s->scratch, .budget = s->budget,
    };
    int trc = dw_teval_leaf(&tc, l, holds);
    s->budget = tc.budget;
    return trc ? fail(s->fault, DW_LEAF_ETEVAL, pi, tc.err) : 0;
}

/* Policy pi's leaves when its scope admits the request: 0 (in scope,
 * evaluated), 1 (out of scope: the decision skips it), -1 with the fault.
 * Out of line, its rarer parts too: the walk over the candidates and the
 * common case (the index implies the scope, the monitors answer) stay small. */
static __attribute__((noinline)) int policy_leaves(pass *s, uint32_t pi, uint32_t post)
{
    const dw_program *p = s->p;
    const dw_leaf_env *env = s->env;
    if (!(post & DW_IX_IMPLIED)) {   /* else the index showed the scope true */
        int r = scope_holds(s, pi);
        if (r <= 0) return r < 0 ? -1 : 1;
    }
    if (!s->vals) {
        /* a whole number of 16-byte units: the common count (<= 16 leaves) in one store */
        uint32_t nl = p->temporal.nleaves, units = (nl + 15) / 16;
        if (!(s->vals = dw_arena_alloc_raw(s->scratch, units * 16))) return fail(s->fault, DW_LEAF_ENOMEM, pi, 0);
        static const uint8_t unevaluated[16] = { 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2 };
        if (units == 1) memcpy(s->vals, unevaluated, 16);
        else memset(s->vals, 2, nl);
        s->req->leaf_values = s->vals;
        s->req->nleaf_values = nl;
    }
    if (!s->anchored) leaf_anchor(s->req, env, &s->anchor), s->anchored = true;
    const dw_policy_code *pc = &p->policies[pi];
    const dw_event *cur = &env->hist[env->nhist - 1];
    for (uint32_t l = pc->first_leaf; l < pc->first_leaf + pc->nleaves; l++) {
        bool holds = false;
        if (!(env->mon && dw_monitors_eval(env->mon, p, l, &s->anchor, cur, &holds) == 0) && teval_leaf(s, pi, l, &holds))
            return -1;
        s->vals[l] = holds;
    }
    return 0;
}

static inline uint32_t posting(const dw_postings *c, uint32_t k) { return c->v ? c->v[k] & c->keep : k << 1; }

/* A dropped candidate's list from k on: the owned one in place, else a copy of postings [0, k). */
static uint32_t *rewritten(const dw_postings *c, uint32_t k, dw_arena *scratch)
{
    if (c->owned) return (uint32_t *)c->v;
    uint32_t *out = dw_arena_alloc_raw(scratch, (c->n + 1) * sizeof *out);
    for (uint32_t i = 0; out && i < k; i++) out[i] = posting(c, i);
    return out;
}

/* Every candidate, each with leaves through policy_leaves. */
static int walk_candidates(pass *s, dw_postings *c)
{
    const dw_policy_code *pol = s->p->policies;
    uint32_t n = c->n, w = 0;
    uint32_t *out = NULL;        /* the list without the dropped ones, from the first drop on */
    for (uint32_t k = 0; k < n; k++) {
        uint32_t post = posting(c, k);
        if (pol[DW_IX_POLICY(post)].nleaves) {
            int r = policy_leaves(s, DW_IX_POLICY(post), post);
            if (r < 0) return -1;
            if (r) {             /* dropped: its code would be false, the decision skips it */
                if (!out && !(out = rewritten(c, k, s->scratch))) return fail(s->fault, DW_LEAF_ENOMEM, DW_IX_POLICY(post), 0);
                continue;
            }
        }
        if (out) out[w] = post;
        w++;
    }
    if (out) *c = (dw_postings){ .v = out, .n = w, .keep = ~0u, .owned = true };
    return 0;
}

/* The same answer when fewer policies have leaves than there are
 * candidates: each of them looked up among the candidates (both ascending:
 * each search starts past the last one found; without an index policy i is
 * candidate i). */
static int find_leaf_policies(pass *s, dw_postings *c, const uint32_t *lp, uint32_t nlp)
{
    const uint32_t *v = c->v;
    uint32_t n = c->n, keep = c->keep, lo = 0;
    uint32_t *out = NULL;        /* from the first drop on, a writable list: dropped ones are marked */
    for (uint32_t j = 0; j < nlp; j++) {
        uint32_t want = lp[j], post;
        if (v) {
            if (n - lo > 8) {    /* a long list: binary search */
                uint32_t hi = n;
                while (lo < hi) {
                    uint32_t mid = lo + (hi - lo) / 2;
                    if (DW_IX_POLICY(v[mid] & keep) < want) lo = mid + 1;
                    else hi = mid;
                }
            } else while (lo < n && DW_IX_POLICY(v[lo] & keep) < want) lo++;
            if (lo == n) break;
            post = out ? out[lo] : v[lo] & keep;
            if (DW_IX_POLICY(post) != want) continue;
        } else {
            if (want >= n) break;
            lo = want;
            post = out ? out[lo] : lo << 1;
        }
        int r = policy_leaves(s, want, post);
        if (r < 0) return -1;
        if (r) {                 /* dropped: marked, the list is compacted below */
            if (!out && !(out = rewritten(c, n, s->scratch))) return fail(s->fault, DW_LEAF_ENOMEM, want, 0);
            out[lo] = UINT32_MAX;   /* only positions before lo are marked: the searches stay sorted */
        }
        lo++;
    }
    if (out) {
        uint32_t w = 0;
        for (uint32_t i = 0; i < n; i++)
            if (out[i] != UINT32_MAX) out[w++] = out[i];
        *c = (dw_postings){ .v = out, .n = w, .keep = ~0u, .owned = true };
    }
    return 0;
}

/* The pass proper over s's request (its fields but the parts set). */
static int leaf_pass(void *ctx, dw_postings *c)
{
    pass *s = ctx;
    const dw_program *p = s->p;
    const dw_leaf_env *env = s->env;
    *s->fault = (dw_leaf_fault){ 0 };
    s->req->leaf_values = NULL;
    s->req->nleaf_values = 0;
    if (!p->temporal.nleaves) return 0;
    if (!env->nhist) return fail(s->fault, DW_LEAF_ETEVAL, 0, DW_TEVAL_EMALFORMED);   /* no decision event */
    s->vals = NULL, s->stack = NULL, s->view = NULL, s->nv = 0, s->budget = env->work_bound, s->anchored = false;
    if (env->leaf_policies && env->nleaf_policies < c->n) return find_leaf_policies(s, c, env->leaf_policies, env->nleaf_policies);
    return walk_candidates(s, c);
}

int dw_eval_leaves(const dw_program *p, const dw_store *store, dw_request *req, const dw_leaf_env *env,
                   dw_arena *scratch, dw_postings *c, dw_leaf_fault *fault)
{
    pass s;
    s.p = p, s.store = store, s.req = req, s.env = env, s.scratch = scratch, s.fault = fault;
    return leaf_pass(&s, c);
}

int dw_authorize_leaves(const dw_program *p, const dw_store *store, dw_request *req, const dw_leaf_env *env,
                        dw_arena *scratch, dw_response *resp, dw_leaf_fault *fault)
{
    if (req->bound_prog != p || req->bound_store != store) dw_request_bind(req, p, store);
    pass s;
    s.p = p, s.store = store, s.req = req, s.env = env, s.scratch = scratch, s.fault = fault;
    *fault = (dw_leaf_fault){ 0 };
    int rc = dw_authorize_pass(p, store, req, scratch, resp, leaf_pass, &s);
    if (rc < 0) return fail(fault, DW_LEAF_EDECIDE, 0, 0);   /* the index's or the decision's memory */
    return rc ? -1 : 0;          /* the leaf pass's fault is in *fault */
}
