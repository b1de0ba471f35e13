/* lint_lower.c - the policy set lowered for strict validation (temporal leaves and provider invocations hoisted into context attributes, the schema augmented to match): `dw_lower` and the profile's validation, separate from the rules that read the result. */
#include "lint.h"
#include "lint_impl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "macros.h"
#include "pipeline.h"
#include "tcheck.h"
#include "provcheck.h"
#include "typecheck.h"
#include "../lang/tast.h"

/* ------------------------------------------------------------------ lowering for strict validation */

typedef struct hoist { size_t policy; const char *name; } hoist;
/* providers: also hoist provider invocations (the `lower` command; strict
 * validation keeps the calls, compiler/provcheck.c types them) */
typedef struct phoist { const char *name; const dw_type *type; } phoist;
typedef struct lower_st {
    hoist *v; size_t n, cap; size_t k;
    bool providers; const dw_providers *decls;
    phoist *pv; size_t pn, pcap;
} lower_st;

/* The declared output type of invocation e (its last output method's), or NULL. */
static const dw_type *provider_out(const lower_st *st, const dw_expr *e)
{
    const dw_expr *chain[64];
    size_t n = 0;
    while (e->kind == DW_E_METHOD && n < 64) { chain[n++] = e; e = e->u.call.recv; }
    if (e->kind != DW_E_CALL) return NULL;
    const dw_provider_decl *d = dw_providers_find(st->decls, e->u.call.name.s, e->u.call.name.len);
    const dw_type *t = d ? d->out : NULL;
    for (size_t i = n; t && i-- > 0;) {
        const dw_provider_method *m = dw_provider_method_find(d, chain[i]->u.call.name.s, chain[i]->u.call.name.len);
        t = m ? m->out : NULL;
    }
    return t;
}

/* `context.<a>` or `context.<a>.<b>` (b may be NULL) */
static dw_expr *ctx_attr(L *l, dw_loc loc, const char *a, const char *b)
{
    dw_expr *ctx = alloc(l, sizeof *ctx);
    memset(ctx, 0, sizeof *ctx);
    ctx->kind = DW_E_VAR;
    ctx->u.var = DW_VAR_CONTEXT;
    ctx->loc = loc;
    ctx->depth = 1;
    dw_expr *g = ctx;
    for (int i = 0; i < 2; i++) {
        const char *name = i ? b : a;
        if (!name) break;
        dw_expr *n = alloc(l, sizeof *n);
        memset(n, 0, sizeof *n);
        n->kind = DW_E_GETATTR;
        n->loc = loc;
        n->u.attr.kids0 = g;
        n->u.attr.attr = (dw_str){ name, strlen(name) };
        n->depth = g->depth + 1;
        g = n;
    }
    return g;
}

/* v (n used of *cap elements of size sz) with room for one more, in l's arena */
static void *room(L *l, void *v, size_t n, size_t *cap, size_t sz)
{
    if (n < *cap) return v;
    *cap = *cap ? *cap * 2 : 8;
    void *w = alloc(l, *cap * sz);
    if (n) memcpy(w, v, n * sz);
    return w;
}

static dw_expr *lower(L *l, size_t pi, dw_expr *e, lower_st *st)
{
    if (!e) return e;
    if (e->kind == DW_E_TEMPORAL) {
        const char *name = fmt(l, "policy_%zu__temporal_%zu", pi, st->k++);
        st->v = room(l, st->v, st->n, &st->cap, sizeof *st->v);
        st->v[st->n++] = (hoist){ pi, name };
        return ctx_attr(l, e->loc, name, NULL);
    }
    if (st->providers && dw_is_provider_chain(e)) {              /* context.providers.policy_<i>_p_<k> (§14.3) */
        const dw_type *t = provider_out(st, e);
        if (t) {
            const char *name = fmt(l, "policy_%zu_p_%zu", pi, st->k++);
            st->pv = room(l, st->pv, st->pn, &st->pcap, sizeof *st->pv);
            st->pv[st->pn++] = (phoist){ name, t };
            return ctx_attr(l, e->loc, "providers", name);
        }
    }
    if (e->kind == DW_E_CALL && e->u.call.nsegs >= 2) st->k++;   /* provider leaves share the ordinal */
    dw_expr tmp = *e;
    bool changed = false;
#define LOW(slot) do { dw_expr *o_ = (slot), *n_ = lower(l, pi, o_, st); if (n_ != o_) { (slot) = n_; changed = true; } } while (0)
    switch (e->kind) {
    case DW_E_IF: LOW(tmp.u.kids[0]); LOW(tmp.u.kids[1]); LOW(tmp.u.kids[2]); break;
    case DW_E_AND: case DW_E_OR:
    case DW_E_EQ: case DW_E_NE: case DW_E_LT: case DW_E_LE: case DW_E_GT: case DW_E_GE: case DW_E_IN:
    case DW_E_ADD: case DW_E_SUB: case DW_E_MUL:
        LOW(tmp.u.kids[0]); LOW(tmp.u.kids[1]); break;
    case DW_E_NOT: case DW_E_NEG: LOW(tmp.u.kids[0]); break;
    case DW_E_HAS: case DW_E_GETATTR: LOW(tmp.u.attr.kids0); break;
    case DW_E_HAS_PATH: LOW(tmp.u.path.kids0); break;
    case DW_E_LIKE: LOW(tmp.u.like.kids0); break;
    case DW_E_IS: LOW(tmp.u.is.kids0); LOW(tmp.u.is.in); break;
    case DW_E_SET: {
        dw_expr **v = alloc(l, (e->u.list.n + 1) * sizeof *v);
        for (size_t k = 0; k < e->u.list.n; k++) { v[k] = e->u.list.v[k]; LOW(v[k]); }
        tmp.u.list.v = v;
        break;
    }
    case DW_E_RECORD: {
        dw_record_entry *v = alloc(l, (e->u.rec.n + 1) * sizeof *v);
        for (size_t k = 0; k < e->u.rec.n; k++) { v[k] = e->u.rec.v[k]; LOW(v[k].value); }
        tmp.u.rec.v = v;
        break;
    }
    case DW_E_METHOD: case DW_E_CALL: {
        LOW(tmp.u.call.recv);
        dw_expr **v = alloc(l, (e->u.call.nargs + 1) * sizeof *v);
        for (size_t k = 0; k < e->u.call.nargs; k++) { v[k] = e->u.call.args[k]; LOW(v[k]); }
        tmp.u.call.args = v;
        break;
    }
    default: break;
    }
#undef LOW
    if (!changed) return e;
    dw_expr *c = alloc(l, sizeof *c);
    *c = tmp;
    c->depth = dw_expr_compute_depth(c);
    return c;
}

static int attr_cmp(const void *a, const void *b)
{
    const dw_attr_decl *x = a, *y = b;
    size_t n = x->name.len < y->name.len ? x->name.len : y->name.len;
    int c = n ? memcmp(x->name.s, y->name.s, n) : 0;
    if (c) return c;
    return x->name.len < y->name.len ? -1 : x->name.len > y->name.len ? 1 : 0;
}

/* §14.4: if any provider leaf exists, the context of every action gains a
 * required record `providers` with one required attribute per leaf, of its
 * output type; an existing `providers` record is extended. */
static dw_action_decl *provider_contexts(L *l, const dw_schema *s, const lower_st *st)
{
    dw_action_decl *acts = alloc(l, (s->nactions + 1) * sizeof *acts);
    memcpy(acts, s->actions, s->nactions * sizeof *acts);
    for (size_t x = 0; x < s->nactions; x++) {
        const dw_type *old = acts[x].context;
        if (!old || old->kind != DW_T_RECORD) continue;
        const dw_attr_decl *have = NULL;
        for (size_t i = 0; i < old->nattrs; i++) if (dw_str_is(old->attrs[i].name, "providers")) have = &old->attrs[i];
        const dw_type *prev = have && have->type && have->type->kind == DW_T_RECORD ? have->type : NULL;
        dw_type *rec = alloc(l, sizeof *rec);
        memset(rec, 0, sizeof *rec);
        rec->kind = DW_T_RECORD;
        size_t np = prev ? prev->nattrs : 0;
        rec->attrs = alloc(l, (np + st->pn) * sizeof *rec->attrs);
        if (np) memcpy(rec->attrs, prev->attrs, np * sizeof *rec->attrs);
        for (size_t h = 0; h < st->pn; h++)
            rec->attrs[np + h] = (dw_attr_decl){ .name = { st->pv[h].name, strlen(st->pv[h].name) }, .type = (dw_type *)st->pv[h].type, .required = true };
        rec->nattrs = np + st->pn;
        qsort(rec->attrs, rec->nattrs, sizeof *rec->attrs, attr_cmp);
        dw_type *t = alloc(l, sizeof *t);
        *t = *old;
        t->attrs = alloc(l, (old->nattrs + 1) * sizeof *t->attrs);
        if (old->nattrs) memcpy(t->attrs, old->attrs, old->nattrs * sizeof *t->attrs);
        dw_attr_decl pa = { .name = { "providers", 9 }, .type = rec, .required = true };
        if (have) t->attrs[have - old->attrs] = pa;
        else { t->attrs[t->nattrs++] = pa; qsort(t->attrs, t->nattrs, sizeof *t->attrs, attr_cmp); }
        acts[x].context = t;
    }
    return acts;
}

/* The set lowered as §14 says (temporal leaves hoisted into the context)
 * and, with a schema, the schema augmented with the hoisted attributes. */
static void lowered_set(L *l, dw_policy_set *out, dw_schema *aug_out, lower_st *hoisted, bool providers)
{
    const dw_schema *s = l->opt->schema;
    dw_policy_set lowered = *l->ps;
    lowered.policies = alloc(l, (l->ps->npolicies + 1) * sizeof *lowered.policies);
    lower_st st = { .providers = providers, .decls = l->opt->providers };
    for (size_t i = 0; i < l->ps->npolicies; i++) {
        dw_policy p = l->ps->policies[i];
        st.k = 0;
        dw_clause *cl = alloc(l, (p.nclauses + 1) * sizeof *cl);
        for (size_t c = 0; c < p.nclauses; c++) { cl[c] = p.clauses[c]; cl[c].body = lower(l, i, cl[c].body, &st); }
        p.clauses = cl;
        lowered.policies[i] = p;
    }
    *out = lowered;
    *hoisted = st;
    if (!s) return;
    /* the augmented schema (§14.4): each hoisted name becomes a required Bool
     * on the context of every action its rule's scope admits */
    dw_schema aug = *s;
    if (st.n) {
        static dw_type bool_t = { .kind = DW_T_BOOL };
        dw_action_decl *acts = alloc(l, (s->nactions + 1) * sizeof *acts);
        memcpy(acts, s->actions, s->nactions * sizeof *acts);
        for (size_t x = 0; x < s->nactions; x++) {
            size_t extra = 0;
            for (size_t h = 0; h < st.n; h++) if (l->pi[st.v[h].policy].acts[x]) extra++;
            if (!extra || !acts[x].context || acts[x].context->kind != DW_T_RECORD) continue;
            const dw_type *old = acts[x].context;
            dw_type *t = alloc(l, sizeof *t);
            *t = *old;
            t->attrs = alloc(l, (old->nattrs + extra) * sizeof *t->attrs);
            memcpy(t->attrs, old->attrs, old->nattrs * sizeof *t->attrs);
            size_t n = old->nattrs;
            for (size_t h = 0; h < st.n; h++) {
                if (!l->pi[st.v[h].policy].acts[x]) continue;
                dw_attr_decl *a = &t->attrs[n++];
                memset(a, 0, sizeof *a);
                a->name = (dw_str){ st.v[h].name, strlen(st.v[h].name) };
                a->type = &bool_t;
                a->required = true;
            }
            t->nattrs = n;
            qsort(t->attrs, n, sizeof *t->attrs, attr_cmp);
            acts[x].context = t;
        }
        aug.actions = acts;
    }
    if (st.pn) aug.actions = provider_contexts(l, &aug, &st);
    *aug_out = aug;
}

void dw_lint_run_validation(L *l, dw_diags *d)
{
    dw_policy_set lowered;
    dw_schema aug;
    lower_st st;
    lowered_set(l, &lowered, &aug, &st, false);
    dw_validate_with_providers(&lowered, &aug, l->opt->providers, d);   /* --providers FILE's declarations, as dwc compile */
}

int dw_lower(dw_policy_set *ps, const dw_lint_options *opt, dw_lowering *out)
{
    memset(out, 0, sizeof *out);
    L *l = dw_lint_new(ps->src, opt, NULL);
    if (!l) return -1;
    l->ps = ps;
    if (setjmp(l->oom)) { dw_lint_free(l); memset(out, 0, sizeof *out); return -1; }
    dw_lint_find_ids(l);
    dw_lint_build_universe(l);
    for (size_t i = 0; i < l->np; i++) dw_lint_compute_acts(l, i);
    lower_st st;
    lowered_set(l, &out->set, &out->schema, &st, true);
    out->has_schema = opt->schema != NULL;
    out->fields = alloc(l, (st.n + 1) * sizeof *out->fields);
    out->field_policy = alloc(l, (st.n + 1) * sizeof *out->field_policy);
    for (size_t i = 0; i < st.n; i++) { out->fields[i] = st.v[i].name; out->field_policy[i] = st.v[i].policy; }
    out->nfields = st.n;
    out->provider_fields = alloc(l, (st.pn + 1) * sizeof *out->provider_fields);
    for (size_t i = 0; i < st.pn; i++) out->provider_fields[i] = st.pv[i].name;
    out->nprovider_fields = st.pn;
    out->owner = l;
    return 0;
}

void dw_lowering_free(dw_lowering *lw)
{
    if (lw->owner) dw_lint_free(lw->owner);
    memset(lw, 0, sizeof *lw);
}
