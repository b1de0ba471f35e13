/* engine_explain.c - one decision taken apart for `dwc explain`
 * (runtime/explain.h): called by decide_built (engine.c) with the request
 * the engine just decided, its leaf values and Cedar's response still in
 * the scratch arena and the decision event last in the history. */
#include "engine_int.h"
#include "explain.h"
#include "../vm/tprint.h"
#include "explain_parts.h"

void dw_explanation_init(dw_explanation *x)
{
    memset(x, 0, sizeof *x);
    dw_arena_init(&x->a, 64 * 1024);
}

void dw_explanation_free(dw_explanation *x) { dw_arena_free(&x->a); }

void dw_engine_explain_next(dw_engine *e, dw_explanation *x)
{
    pthread_mutex_lock(&e->mu);
    e->explain = x;
    pthread_mutex_unlock(&e->mu);
}

/* ---- text into the explanation's arena ---- */

typedef struct mtext { char *buf; size_t len; FILE *f; } mtext;

static FILE *mt_open(mtext *m)
{
    m->buf = NULL;
    m->len = 0;
    return m->f = open_memstream(&m->buf, &m->len);
}

static const char *mt_close(mtext *m, dw_arena *a)
{
    if (!m->f) return "?";
    fclose(m->f);
    const char *t = m->buf ? dw_arena_memdup(a, m->buf, m->len + 1) : NULL;
    free(m->buf);
    return t ? t : "?";
}

static void disagree(dw_explanation *x, const char *fmt, const char *a, const char *b)
{
    size_t n = strlen(x->disagree);
    if (n + 2 < sizeof x->disagree) snprintf(x->disagree + n, sizeof x->disagree - n, n ? "; " : "");
    n = strlen(x->disagree);
    if (n + 2 < sizeof x->disagree) snprintf(x->disagree + n, sizeof x->disagree - n, fmt, a, b);
    x->ndisagree++;
}

static const char *time_text(dw_arena *a, int64_t ts, int64_t tps)
{
    int64_t sec = ts / tps, frac = ts % tps;
    if (frac < 0) { sec--; frac += tps; }
    time_t t = (time_t)sec;
    struct tm tm;
    char buf[64];
    if (!gmtime_r(&t, &tm)) return dw_arena_printf(a, "%" PRId64, ts);
    size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    if (frac && tps == 1000000000) snprintf(buf + n, sizeof buf - n, ".%09" PRId64 "Z", frac);
    else snprintf(buf + n, sizeof buf - n, "Z");
    return dw_arena_printf(a, "%s", buf);
}

/* ---- the aggregates a leaf's re-evaluation computes ---- */

/* The slots a Timepoint binds under formula fi (tp(v)): their row values are
 * view positions, i.e. events. */
static uint64_t tp_slots(const dw_temporal_tables *t, uint32_t fi, unsigned depth)
{
    if (fi >= t->ntfs || depth > 64) return 0;
    const dw_tf *f = &t->tfs[fi];
    switch (f->kind) {
    case DW_TF_TP: return f->var < 64 ? (uint64_t)1 << f->var : 0;
    case DW_TF_AND: case DW_TF_SINCE: return tp_slots(t, f->a, depth + 1) | tp_slots(t, f->b, depth + 1);
    case DW_TF_NOT: case DW_TF_FORMERLY: case DW_TF_PREVIOUS: case DW_TF_EXISTS: return tp_slots(t, f->a, depth + 1);
    default: return 0;
    }
}

typedef struct observer {
    dw_explanation *x;
    const dw_program *p;
    const dw_history_view *hv;
    int64_t tps;
    dw_x_leaf *leaf;
    uint32_t cap;
    uint32_t seen[64];           /* aggregates already taken at the decision point */
    uint32_t nseen;
} observer;

static void on_aggregate(void *ctx, uint32_t agg, uint32_t i, uint32_t nrows, const dw_value *const *rows,
                         const uint64_t *masks, const dw_value *value)
{
    observer *o = ctx;
    if (i + 1 != o->hv->n) return;      /* evaluated at an earlier point, inside another operator */
    for (uint32_t k = 0; k < o->nseen; k++) if (o->seen[k] == agg) return;
    if (o->nseen == 64) return;
    o->seen[o->nseen++] = agg;
    dw_arena *a = &o->x->a;
    dw_x_leaf *l = o->leaf;
    if (l->naggs == o->cap) {
        dw_x_agg *n = dw_arena_alloc(a, (o->cap = o->cap ? 2 * o->cap : 4) * sizeof *n);
        if (!n) return;
        if (l->naggs) memcpy(n, l->aggs, l->naggs * sizeof *n);
        l->aggs = n;
    }
    dw_x_agg *g = &l->aggs[l->naggs++];
    memset(g, 0, sizeof *g);
    mtext m;
    if (mt_open(&m)) dw_tagg_print(o->p, agg, m.f);
    g->formula = mt_close(&m, a);
    if (mt_open(&m)) dw_value_print(m.f, value);
    g->value = mt_close(&m, a);
    const dw_temporal_tables *t = &o->p->temporal;
    const dw_tagg *tg = &t->taggs[agg];
    uint64_t tps = tp_slots(t, tg->body, 0);
    g->rows = nrows ? dw_arena_alloc(a, nrows * sizeof *g->rows) : NULL;
    if (nrows && !g->rows) return;
    g->nrows = nrows;
    for (uint32_t r = 0; r < nrows; r++) {
        dw_x_row *xr = &g->rows[r];
        memset(xr, 0, sizeof *xr);
        uint32_t nev = 0;
        for (uint32_t k = 0; k < tg->nvars; k++) nev += (tps >> t->aggvars[tg->first_var + k]) & 1;
        xr->events = nev ? dw_arena_alloc(a, nev * sizeof *xr->events) : NULL;
        if (mt_open(&m))
            for (uint32_t k = 0; k < tg->nvars; k++) {
                uint16_t s = t->aggvars[tg->first_var + k];
                if (!((masks[r] >> s) & 1)) continue;
                if (k) fputs(", ", m.f);
                dw_tslot_print(o->p, l->leaf, s, m.f);
                fputs(" = ", m.f);
                const dw_value *v = &rows[r][s];
                bool is_tp = (tps >> s) & 1 && v->kind == DW_V_LONG && v->u.i >= 0 && (uint64_t)v->u.i < o->hv->n;
                if (!is_tp) { dw_value_print(m.f, v); continue; }
                const dw_event *ev = o->hv->ev[v->u.i];
                fprintf(m.f, "event %" PRId64, v->u.i);
                if (!xr->events) continue;
                dw_x_event *xe = &xr->events[xr->nevents++];
                xe->pos = (uint32_t)v->u.i;
                xe->ts = ev->ts;
                xe->time = time_text(a, ev->ts, o->tps);
                xe->what = dw_arena_printf(a, "%.*s::\"%.*s\"::%.*s", (int)ev->atype.len, ev->atype.s, (int)ev->aid.len, ev->aid.s,
                                           (int)ev->kind.len, ev->kind.s);
                mtext lm;
                if (mt_open(&lm)) dw_value_print(lm.f, &ev->logged);
                xe->logged = mt_close(&lm, a);
            }
        xr->values = mt_close(&m, a);
    }
    /* in the order of the history (the evaluator's is by value) */
    for (uint32_t r = 1; r < g->nrows; r++)
        for (uint32_t q = r; q > 0 && g->rows[q].nevents && g->rows[q - 1].nevents &&
                             g->rows[q].events[0].pos < g->rows[q - 1].events[0].pos; q--) {
            dw_x_row tmp = g->rows[q];
            g->rows[q] = g->rows[q - 1];
            g->rows[q - 1] = tmp;
        }
}

/* Leaf l again, by the reference evaluator over the view the leaf pass gave
 * it, with the observer; checked against the value the decision used. */
static void explain_leaf(dw_engine *e, dw_explanation *x, const dw_request *req, const dw_leaf_env *env,
                         const dw_event **view, uint32_t nv, uint32_t l, dw_x_leaf *xl, const char *policy)
{
    const dw_program *p = e->s.prog;
    mtext m;
    xl->leaf = l;
    if (mt_open(&m)) dw_tleaf_print(p, l, m.f);
    xl->formula = mt_close(&m, &x->a);
    xl->engine = req->leaf_values && l < req->nleaf_values ? req->leaf_values[l] : 2;
    xl->value = DW_X_UNKNOWN;
    if (!view) { xl->error = "out of memory"; return; }
    uint32_t from = dw_leaf_view_from(view, nv, env->since ? env->since[l] : INT64_MIN);
    dw_history_view hv = { view + from, nv - from, env->ticks_per_second };
    dw_tanchor anchor;
    dw_leaf_anchor(req, env, &anchor);
    observer o = { .x = x, .p = p, .hv = &hv, .tps = e->tps, .leaf = xl };
    dw_teval_observer obs = { &o, on_aggregate };
    dw_teval_ctx tc = {
        .t = &p->temporal, .strs = p->strs, .nstrs = p->nstrs, .consts = p->consts, .nconsts = p->nconsts,
        .h = &hv, .anchor = &anchor, .scratch = &e->scratch, .budget = e->work_bound, .obs = &obs,
    };
    bool holds = false;
    if (dw_teval_leaf(&tc, l, &holds)) {
        xl->value = DW_X_ERROR;
        xl->error = tc.err == DW_TEVAL_EBUDGET ? "the work bound ran out" : tc.err == DW_TEVAL_ENOMEM ? "out of memory"
                    : "malformed tables or too deep";
        return;
    }
    xl->value = holds ? DW_X_TRUE : DW_X_FALSE;
    if (xl->engine != 2 && (xl->engine == 1) != holds) {
        char what[300];
        snprintf(what, sizeof what, "temporal leaf %u of %s", l, policy);
        disagree(x, "%s: the decision used %s, the reference evaluator says otherwise", what,
                 xl->engine ? "true (incremental monitor)" : "false (incremental monitor)");
    }
}

/* ---- the decision ---- */

void engine_explain_decision(dw_engine *e, const dw_request *req, const dw_response *resp, const dw_verdict *v)
{
    dw_explanation *x = e->explain;
    e->explain = NULL;               /* one decision */
    const dw_program *p = e->s.prog;
    x->done = true;
    x->v = *v;
    x->history = e->h.n;
    x->conditions = p->cond_marks && p->cond_first;
    x->policies = p->npolicies ? dw_arena_alloc(&x->a, p->npolicies * sizeof *x->policies) : NULL;
    dw_value *stack = dw_arena_alloc_raw(&e->scratch, (p->max_stack + 1) * sizeof *stack);
    dw_cut c;
    if ((p->npolicies && !x->policies) || !stack || dw_cut_init(&c, p, &e->s.store, req, &e->scratch, stack)) {
        disagree(x, "%s%s", "out of memory: the decision could not be taken apart", "");
        return;
    }
    x->npolicies = p->npolicies;
    dw_eval_ctx cx = { .prog = p, .store = &e->s.store, .req = req, .scratch = &e->scratch, .stack = stack };
    dw_leaf_env env;
    bool have_env = p->temporal.nleaves && !engine_leaf_env(e, NULL, &env);
    const dw_event **view = NULL;
    uint32_t nv = 0;
    bool any_forbid = false, any_permit = false, any_error = false;
    for (uint32_t i = 0; i < p->npolicies; i++) {
        const dw_policy_code *pc = &p->policies[i];
        dw_x_policy *xp = &x->policies[i];
        memset(xp, 0, sizeof *xp);
        xp->name = engine_rule_name_locked(e, i);
        xp->forbid = pc->effect == DW_EFFECT_FORBID;
        xp->line = pc->src_line;
        xp->scope = DW_X_UNKNOWN;
        bool r = false;
        dw_eval_status st = dw_eval_policy(&cx, i, &r);
        xp->value = st != DW_EVAL_OK ? DW_X_ERROR : r ? DW_X_TRUE : DW_X_FALSE;
        if (st != DW_EVAL_OK) xp->error = dw_eval_status_name(st);
        if (x->conditions) dw_explain_conditions(&x->a, &c, i, xp);
        else if (pc->nleaves) {
            bool in = false;
            xp->scope = dw_eval_code(&cx, pc->scope_entry, &in) != DW_EVAL_OK ? DW_X_ERROR : in ? DW_X_TRUE : DW_X_FALSE;
        }
        if (xp->value == DW_X_TRUE) { if (xp->forbid) any_forbid = true; else any_permit = true; }
        if (xp->value == DW_X_ERROR) any_error = true;
        /* the parts must make the whole: scope && conditions == the policy's value */
        if (x->conditions && !dw_explain_parts_agree(xp))
            disagree(x, "%s: its scope and conditions give %s, its code the other", xp->name,
                     xp->value == DW_X_TRUE ? "false" : "true");
        if (!pc->nleaves || xp->scope == DW_X_FALSE) continue;   /* the leaf pass skipped it too */
        xp->leaves = dw_arena_alloc(&x->a, pc->nleaves * sizeof *xp->leaves);
        if (!xp->leaves || !have_env) continue;
        xp->nleaves = pc->nleaves;
        if (!view) view = dw_leaf_key_view(&env, &e->scratch, &nv);
        for (uint32_t l = 0; l < pc->nleaves; l++) {
            memset(&xp->leaves[l], 0, sizeof xp->leaves[l]);
            explain_leaf(e, x, req, &env, view, nv, pc->first_leaf + l, &xp->leaves[l], xp->name);
        }
    }
    dw_cut_free(&c);
    /* the policies' values must give the engine's verdict (Box's mapping, box.md §8) */
    for (uint32_t k = 0; k < v->ndetermining; k++)
        if (v->determining[k] < x->npolicies) x->policies[v->determining[k]].determining = true;
    if (!resp) return;               /* the decision faulted before Cedar's: nothing to compare */
    bool allow = !any_forbid && any_permit && !any_error;
    if (allow != v->allow) disagree(x, "the policies' values give %s, the engine decided %s", allow ? "allow" : "deny", v->allow ? "allow" : "deny");
    for (uint32_t i = 0; i < x->npolicies; i++) {
        const dw_x_policy *xp = &x->policies[i];
        bool should = xp->value == DW_X_TRUE && (any_forbid ? xp->forbid : !xp->forbid);
        if (should != xp->determining && v->ndetermining < DW_VERDICT_MAX_RULES)
            disagree(x, "%s: %s by its value, but not so in the engine's verdict", xp->name, should ? "determining" : "not determining");
    }
}
