/* lint_scope.c - lint's scope analysis (lint_impl.h's dw_lint_scope_analysis):
 * vacuous and always-true rules, and rules shadowed or overridden by others
 * by conjunct inclusion; a temporal permit beside another permit for the
 * same action; a rule naming only the reserved fs:other.
 *
 * Pairs are found through an index, not by comparing every rule with every
 * other (minutes for 100,000 rules): rule j can cover rule i only if every
 * key j requires is one i offers -- each of j's conjuncts that is not always
 * true appears among i's (compared by a structural hash first), and j's
 * principal and resource constraints admit i's (the entity or type they
 * name).  j is filed under the key of its own that the fewest rules offer,
 * and i is compared only with the rules filed under a key i offers (plus
 * those that require nothing) that share an action with it.  The findings
 * are those of the pairwise scan (DWC_LINT_PAIRWISE=1 runs it:
 * tests/check/lint_index.sh). */
#include <stdlib.h>
#include <string.h>
#include "lint_impl.h"

static bool euid_eq(const dw_euid_lit *a, const dw_euid_lit *b) { return dw_str_eq(a->type, b->type) && dw_str_eq(a->id, b->id); }

/* does principal/resource constraint a admit everything b admits? (syntactic) */
static bool scope_sup(const dw_scope_con *a, const dw_scope_con *b)
{
    if (a->kind == DW_SC_ANY) return true;
    if (a->target_is_slot || b->target_is_slot) return false;
    switch (a->kind) {
    case DW_SC_EQ: return b->kind == DW_SC_EQ && euid_eq(&a->target, &b->target);
    case DW_SC_IN:
        return (b->kind == DW_SC_EQ || b->kind == DW_SC_IN || b->kind == DW_SC_IS_IN) && euid_eq(&a->target, &b->target);
    case DW_SC_IS:
        if (b->kind == DW_SC_IS || b->kind == DW_SC_IS_IN) return dw_str_eq(a->is_type, b->is_type);
        return b->kind == DW_SC_EQ && dw_str_eq(a->is_type, b->target.type);
    case DW_SC_IS_IN:
        if (b->kind == DW_SC_IS_IN) return dw_str_eq(a->is_type, b->is_type) && euid_eq(&a->target, &b->target);
        return b->kind == DW_SC_EQ && dw_str_eq(a->is_type, b->target.type) && euid_eq(&a->target, &b->target);
    default: return false;
    }
}

/* The conjuncts of a rule's condition: the `&&` operands of every `when`
 * clause, and every `unless` clause as a whole (negated). */
typedef struct conj { const dw_expr *e; bool neg; } conj;

static size_t conjuncts(const dw_expr *e, bool neg, conj *v, size_t n, size_t cap)
{
    if (!neg && e && e->kind == DW_E_AND) {
        n = conjuncts(e->u.kids[0], false, v, n, cap);
        return conjuncts(e->u.kids[1], false, v, n, cap);
    }
    if (n < cap) v[n] = (conj){ e, neg };
    return n + 1;
}

static size_t policy_conjuncts(L *l, const dw_policy *p, conj **out)
{
    size_t n = 0;
    for (size_t c = 0; c < p->nclauses; c++) n = conjuncts(p->clauses[c].body, !p->clauses[c].is_when, NULL, n, 0);
    conj *v = alloc(l, (n + 1) * sizeof *v);
    size_t k = 0;
    for (size_t c = 0; c < p->nclauses; c++) k = conjuncts(p->clauses[c].body, !p->clauses[c].is_when, v, k, n);
    *out = v;
    return n;
}

static void need_conjuncts(L *l, size_t i)
{
    pinfo *f = &l->pi[i];
    if (!f->cj_done) { f->ncj = policy_conjuncts(l, &l->ps->policies[i], &f->cj); f->cj_done = true; }
}

/* a conjunct that is always true (it constrains nothing) */
static bool trivial(const conj *c)
{
    int v = dw_lint_fold(c->e);
    return c->neg ? v == F_F : v == F_T;
}

/* Does rule a's condition hold whenever rule b's does (ignoring the action)?
 * Sound cases: a's principal and resource constraints admit b's, and every
 * conjunct of a is always true or appears verbatim among b's conjuncts (when
 * b holds, each of its conjuncts evaluated to true without error). */
static bool covers(L *l, size_t ai, size_t bi)
{
    const dw_policy *a = &l->ps->policies[ai], *b = &l->ps->policies[bi];
    if (!scope_sup(&a->principal, &b->principal) || !scope_sup(&a->resource, &b->resource)) return false;
    need_conjuncts(l, ai);
    need_conjuncts(l, bi);
    const conj *ca = l->pi[ai].cj, *cb = l->pi[bi].cj;
    size_t na = l->pi[ai].ncj, nb = l->pi[bi].ncj;
    for (size_t i = 0; i < na; i++) {
        if (trivial(&ca[i])) continue;
        bool found = false;
        for (size_t j = 0; j < nb && !found; j++) found = ca[i].neg == cb[j].neg && dw_lint_expr_eq(l, ca[i].e, cb[j].e);
        if (!found) return false;
    }
    return true;
}

static bool analysable(L *l, size_t i)
{
    const dw_policy *p = &l->ps->policies[i];
    return !p->is_template && l->pi[i].cond != C_NEVER && l->pi[i].nacts > 0;
}

/* ------------------------------------------------------------------ the index */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

static uint64_t str_hash(uint64_t h, dw_str s)
{
    h = mix(h, s.len);
    for (size_t i = 0; i < s.len; i++) h = mix(h, (unsigned char)s.s[i]);
    return h;
}

/* A hash of e that dw_lint_expr_eq respects: equal expressions hash alike
 * (temporal leaves by their kind only; a collision only adds a candidate). */
static uint64_t expr_hash(const dw_expr *e)
{
    if (!e) return 1;
    uint64_t h = mix(2, (uint64_t)e->kind);
    switch (e->kind) {
    case DW_E_BOOL: return mix(h, e->u.b);
    case DW_E_LONG: return mix(h, (uint64_t)e->u.i);
    case DW_E_STRING: return str_hash(h, e->u.str);
    case DW_E_ENTITY: return str_hash(str_hash(h, e->u.euid.type), e->u.euid.id);
    case DW_E_VAR: return mix(h, (uint64_t)e->u.var);
    case DW_E_SLOT: case DW_E_BINDER: return str_hash(h, e->u.name);
    case DW_E_IF: return mix(mix(mix(h, expr_hash(e->u.kids[0])), expr_hash(e->u.kids[1])), expr_hash(e->u.kids[2]));
    case DW_E_NOT: case DW_E_NEG: return mix(h, expr_hash(e->u.kids[0]));
    case DW_E_AND: case DW_E_OR: case DW_E_EQ: case DW_E_NE: case DW_E_LT: case DW_E_LE: case DW_E_GT:
    case DW_E_GE: case DW_E_IN: case DW_E_ADD: case DW_E_SUB: case DW_E_MUL:
        return mix(mix(h, expr_hash(e->u.kids[0])), expr_hash(e->u.kids[1]));
    case DW_E_HAS: case DW_E_GETATTR: return mix(str_hash(h, e->u.attr.attr), expr_hash(e->u.attr.kids0));
    case DW_E_HAS_PATH:
        for (size_t i = 0; i < e->u.path.n; i++) h = str_hash(h, e->u.path.attrs[i]);
        return mix(h, expr_hash(e->u.path.kids0));
    case DW_E_LIKE: return mix(str_hash(h, e->u.like.raw), expr_hash(e->u.like.kids0));
    case DW_E_IS: return mix(mix(str_hash(h, e->u.is.type), expr_hash(e->u.is.kids0)), expr_hash(e->u.is.in));
    case DW_E_SET:
        h = mix(h, e->u.list.n);
        for (size_t i = 0; i < e->u.list.n; i++) h = mix(h, expr_hash(e->u.list.v[i]));
        return h;
    case DW_E_RECORD:
        h = mix(h, e->u.rec.n);
        for (size_t i = 0; i < e->u.rec.n; i++) h = mix(str_hash(h, e->u.rec.v[i].key), expr_hash(e->u.rec.v[i].value));
        return h;
    case DW_E_METHOD: case DW_E_CALL:
        h = mix(str_hash(h, e->u.call.name), expr_hash(e->u.call.recv));
        h = mix(h, e->u.call.nargs);
        for (size_t i = 0; i < e->u.call.nargs; i++) h = mix(h, expr_hash(e->u.call.args[i]));
        return h;
    case DW_E_TEMPORAL: return h;
    }
    return h;
}

enum { K_CONJ = 1, K_UID = 2, K_TYPE = 3 };

static uint64_t conj_key(const conj *c) { return mix(mix(K_CONJ, c->neg), expr_hash(c->e)); }
static uint64_t uid_key(int side, const dw_euid_lit *u) { return str_hash(str_hash(mix(K_UID, (uint64_t)side), u->type), u->id); }
static uint64_t type_key(int side, dw_str t) { return str_hash(mix(K_TYPE, (uint64_t)side), t); }

/* The keys constraint b (of the rule a rule may cover) offers: every
 * non-ANY constraint a with scope_sup(a, b) requires one of them. */
static size_t offered(int side, const dw_scope_con *b, uint64_t *k)
{
    if (b->kind == DW_SC_ANY || b->target_is_slot) return 0;
    switch (b->kind) {
    case DW_SC_EQ: k[0] = uid_key(side, &b->target); k[1] = type_key(side, b->target.type); return 2;
    case DW_SC_IN: k[0] = uid_key(side, &b->target); return 1;
    case DW_SC_IS: k[0] = type_key(side, b->is_type); return 1;
    case DW_SC_IS_IN: k[0] = uid_key(side, &b->target); k[1] = type_key(side, b->is_type); return 2;
    default: return 0;
    }
}

/* The key constraint a (of a covering rule) requires: 0 none (ANY), 1 one
 * in *k, -1 it admits nothing's constraint (a slot: it covers nothing). */
static int required(int side, const dw_scope_con *a, uint64_t *k)
{
    if (a->kind == DW_SC_ANY) return 0;
    if (a->target_is_slot) return -1;
    switch (a->kind) {
    case DW_SC_EQ: case DW_SC_IN: case DW_SC_IS_IN: *k = uid_key(side, &a->target); return 1;
    case DW_SC_IS: *k = type_key(side, a->is_type); return 1;
    default: return -1;
    }
}

/* key -> slot, open addressing */
typedef struct kmap { uint64_t *key; uint32_t *slot; size_t cap, n; } kmap;

static uint32_t kmap_get(L *l, kmap *m, uint64_t key, bool add)
{
    if (add && 2 * (m->n + 1) > m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 1024;
        uint64_t *nk = alloc(l, cap * sizeof *nk);
        uint32_t *ns = alloc(l, cap * sizeof *ns);
        memset(ns, 0xff, cap * sizeof *ns);
        for (size_t i = 0; i < m->cap; i++) {
            if (m->slot[i] == UINT32_MAX) continue;
            size_t at = (size_t)(m->key[i] * 0x9e3779b97f4a7c15ull >> 7) & (cap - 1);
            while (ns[at] != UINT32_MAX) at = (at + 1) & (cap - 1);
            nk[at] = m->key[i];
            ns[at] = m->slot[i];
        }
        m->key = nk;
        m->slot = ns;
        m->cap = cap;
    }
    if (!m->cap) return UINT32_MAX;
    size_t at = (size_t)(key * 0x9e3779b97f4a7c15ull >> 7) & (m->cap - 1);
    while (m->slot[at] != UINT32_MAX) {
        if (m->key[at] == key) return m->slot[at];
        at = (at + 1) & (m->cap - 1);
    }
    if (!add) return UINT32_MAX;
    m->key[at] = key;
    m->slot[at] = (uint32_t)m->n++;
    return m->slot[at];
}

typedef struct scope_ix {
    kmap m;
    size_t *count;              /* per slot: rules offering the key */
    size_t **rules, *nrules;    /* per slot: rules filed under it */
    size_t *wild, nwild;        /* rules that require no key */
    uint64_t **offers;          /* per rule: the keys it offers */
    size_t *noffers;
    uint64_t **reqs;            /* per rule: the keys it requires (filed) */
    size_t *nreqs;
    bool pairwise;              /* DWC_LINT_PAIRWISE: every rule a candidate (the reference) */
} scope_ix;

static size_t rule_offers(L *l, size_t i, uint64_t *k)
{
    const dw_policy *p = &l->ps->policies[i];
    size_t n = offered(0, &p->principal, k);
    n += offered(1, &p->resource, k + n);
    for (size_t c = 0; c < l->pi[i].ncj; c++) k[n++] = conj_key(&l->pi[i].cj[c]);
    return n;
}

static void build_index(L *l, scope_ix *x)
{
    size_t np = l->np;
    memset(x, 0, sizeof *x);
    x->offers = alloc(l, (np + 1) * sizeof *x->offers);
    x->noffers = alloc(l, (np + 1) * sizeof *x->noffers);
    memset(x->noffers, 0, (np + 1) * sizeof *x->noffers);
    /* the keys each rule offers, and how many rules offer each */
    for (size_t i = 0; i < np; i++) {
        x->offers[i] = NULL;
        if (!analysable(l, i)) continue;
        need_conjuncts(l, i);
        uint64_t *k = alloc(l, (l->pi[i].ncj + 4) * sizeof *k);
        size_t n = rule_offers(l, i, k), u = 0;
        for (size_t a = 0; a < n; a++) {   /* once each (a rule offering a key twice counts once) */
            bool dup = false;
            for (size_t b = 0; b < u && !dup && u < 64; b++) dup = k[b] == k[a];
            if (!dup) k[u++] = k[a];
        }
        x->offers[i] = k;
        x->noffers[i] = u;
        for (size_t a = 0; a < u; a++) kmap_get(l, &x->m, k[a], true);
    }
    size_t ns = x->m.n;
    x->count = alloc(l, (ns + 1) * sizeof *x->count);
    x->nrules = alloc(l, (ns + 1) * sizeof *x->nrules);
    x->rules = alloc(l, (ns + 1) * sizeof *x->rules);
    memset(x->count, 0, (ns + 1) * sizeof *x->count);
    memset(x->nrules, 0, (ns + 1) * sizeof *x->nrules);
    for (size_t i = 0; i < np; i++)
        for (size_t a = 0; a < x->noffers[i]; a++) x->count[kmap_get(l, &x->m, x->offers[i][a], false)]++;
    /* each rule under the key it requires that the fewest rules offer */
    uint32_t *at = alloc(l, (np + 1) * sizeof *at);
    x->wild = alloc(l, (np + 1) * sizeof *x->wild);
    x->reqs = alloc(l, (np + 1) * sizeof *x->reqs);
    x->nreqs = alloc(l, (np + 1) * sizeof *x->nreqs);
    for (size_t j = 0; j < np; j++) {
        at[j] = UINT32_MAX - 1;                 /* not filed: it covers no rule */
        x->nreqs[j] = 0;
        if (!analysable(l, j)) continue;
        const dw_policy *p = &l->ps->policies[j];
        uint64_t k, *req = x->reqs[j] = alloc(l, (l->pi[j].ncj + 2) * sizeof *req);
        bool any = false, none = false;
        size_t best = SIZE_MAX;
        uint32_t slot = UINT32_MAX;
        for (int side = 0; side < 2 && !none; side++) {
            int r = required(side, side ? &p->resource : &p->principal, &k);
            if (r < 0) none = true;
            if (r <= 0) continue;
            any = true;
            req[x->nreqs[j]++] = k;
            uint32_t s = kmap_get(l, &x->m, k, false);
            size_t c = s == UINT32_MAX ? 0 : x->count[s];
            if (c < best) { best = c; slot = s; }
        }
        for (size_t c = 0; c < l->pi[j].ncj && !none; c++) {
            if (trivial(&l->pi[j].cj[c])) continue;
            any = true;
            k = req[x->nreqs[j]++] = conj_key(&l->pi[j].cj[c]);
            uint32_t s = kmap_get(l, &x->m, k, false);
            size_t n = s == UINT32_MAX ? 0 : x->count[s];
            if (n < best) { best = n; slot = s; }
        }
        if (none || (any && slot == UINT32_MAX)) continue;   /* a key no rule offers */
        if (!any) { x->wild[x->nwild++] = j; continue; }
        at[j] = slot;
        x->nrules[slot]++;
    }
    for (size_t s = 0; s < ns; s++) { x->rules[s] = alloc(l, (x->nrules[s] + 1) * sizeof **x->rules); x->nrules[s] = 0; }
    for (size_t j = 0; j < np; j++) if (at[j] < UINT32_MAX - 1) x->rules[at[j]][x->nrules[at[j]]++] = j;
}

static bool share_action(L *l, size_t i, size_t j)
{
    for (size_t x = 0; x < l->nu; x++) if (l->pi[i].acts[x] && l->pi[j].acts[x]) return true;
    return false;
}

static int size_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* does i offer every key j requires? */
static bool offers_all(const scope_ix *x, size_t i, size_t j)
{
    for (size_t a = 0; a < x->nreqs[j]; a++) {
        bool found = false;
        for (size_t b = 0; b < x->noffers[i] && !found; b++) found = x->offers[i][b] == x->reqs[j][a];
        if (!found) return false;
    }
    return true;
}

/* The rules that may cover i (analysable, sharing an action, requiring only
 * keys i offers), ascending, into out; mark is all false before and after. */
static size_t candidates(L *l, const scope_ix *x, size_t i, size_t *out, bool *mark)
{
    size_t n = 0;
    if (x->pairwise) {
        for (size_t j = 0; j < l->np; j++) if (j != i && analysable(l, j) && share_action(l, i, j)) out[n++] = j;
        return n;
    }
    for (size_t a = 0; a <= x->noffers[i]; a++) {
        const size_t *v = x->wild;
        size_t nv = x->nwild;
        if (a < x->noffers[i]) {
            uint32_t s = kmap_get(l, (kmap *)&x->m, x->offers[i][a], false);
            if (s == UINT32_MAX) continue;
            v = x->rules[s];
            nv = x->nrules[s];
        }
        for (size_t k = 0; k < nv; k++) {
            size_t j = v[k];
            if (j == i || mark[j] || !offers_all(x, i, j) || !share_action(l, i, j)) continue;
            mark[j] = true;
            out[n++] = j;
        }
    }
    for (size_t k = 0; k < n; k++) mark[out[k]] = false;
    qsort(out, n, sizeof *out, size_cmp);
    return n;
}

/* ------------------------------------------------------------------ the findings */

/* Is every action of rule i covered by some rule of `effect` among cand[0..n)
 * (marked in who)? */
static bool covered_by(L *l, size_t i, dw_effect effect, bool *who, const bool *cov, const bool *rev, const size_t *cand, size_t n)
{
    const pinfo *f = &l->pi[i];
    for (size_t x = 0; x < l->nu; x++) {
        if (!f->acts[x]) continue;
        bool ok = false;
        for (size_t k = 0; k < n; k++) {
            size_t j = cand[k];
            if (!cov[j] || !l->pi[j].acts[x] || l->ps->policies[j].effect != effect) continue;
            /* two rules equivalent on this action: only the later one is redundant */
            if (rev && rev[j] && j > i) {
                bool narrower = true;   /* acts(j) within acts(i): j is the redundant one */
                for (size_t y = 0; y < l->nu; y++) if (l->pi[j].acts[y] && !l->pi[i].acts[y]) narrower = false;
                if (narrower) continue;
            }
            ok = true;
            who[j] = true;
        }
        if (!ok) return false;
    }
    return true;
}

/* the rules marked in who (all among cand[0..n), ascending), as a list */
static const char *rule_list(L *l, const bool *who, const size_t *cand, size_t n)
{
    const char *s = "";
    size_t k = 0, m = 0;
    for (size_t c = 0; c < n; c++) if (who[cand[c]]) m++;
    for (size_t c = 0; c < n; c++) {
        if (!who[cand[c]]) continue;
        s = fmt(l, "%s%s%s", s, k == 0 ? "" : k + 1 == m ? " and " : ", ", dw_lint_rname(l, cand[c]));
        k++;
    }
    return s;
}

static void clear(bool *v, const size_t *cand, size_t n) { for (size_t k = 0; k < n; k++) v[cand[k]] = false; }

static void shadowing(L *l)
{
    size_t np = l->np;
    bool *cov = alloc(l, np + 1), *rev = alloc(l, np + 1), *who = alloc(l, np + 1), *mark = alloc(l, np + 1);
    memset(cov, 0, np + 1);
    memset(rev, 0, np + 1);
    memset(who, 0, np + 1);
    memset(mark, 0, np + 1);
    size_t *cand = alloc(l, (np + 1) * sizeof *cand);
    scope_ix x;
    memset(&x, 0, sizeof x);
    if (!l->opt->refusals_only) build_index(l, &x);
    /* DWC_LINT_PAIRWISE: no index, every pair compared (tests/check/lint_index.sh) */
    x.pairwise = getenv("DWC_LINT_PAIRWISE") != NULL;
    /* vacuous, shadowed and overridden rules are warnings: not at load */
    for (size_t i = 0; i < np && !l->opt->refusals_only; i++) {
        const dw_policy *p = &l->ps->policies[i];
        pinfo *f = &l->pi[i];
        dw_loc at = p->effect_loc;
        const char *eff = p->effect == DW_PERMIT ? "permit" : "forbid";
        /* vacuous */
        if (!p->is_template) {
            bool empty_scope = p->action.kind == DW_SC_IN_LIST && p->action.nlist == 0;
            if (!f->impossible_reported && (f->cond == C_NEVER || (!l->opt->schema && empty_scope))) {
                f->impossible_reported = true;
                add(l, R_IMPOSSIBLE, -1, at, "remove the rule, or fix the condition that can never hold",
                    "policy is impossible: %s %s matches no request (%s)", eff, dw_lint_rname(l, i),
                    f->cond == C_NEVER ? "a clause can never be satisfied" : "its action scope is empty");
            }
            if (f->cond == C_ALWAYS && f->all_acts && p->principal.kind == DW_SC_ANY && p->resource.kind == DW_SC_ANY)
                add(l, R_ALWAYS, -1, at,
                    p->effect == DW_PERMIT ? "constrain the scope or add a condition" : "constrain the scope or add a condition (a deny-all is better written as no policy at all)",
                    "%s %s matches every request: its scope is unconstrained and its condition is always true%s",
                    eff, dw_lint_rname(l, i), p->effect == DW_PERMIT ? ", so it allows everything no forbid denies" : ", so it denies everything");
        }
        if (!analysable(l, i)) continue;
        size_t n = candidates(l, &x, i, cand, mark);
        for (size_t k = 0; k < n; k++) {
            size_t j = cand[k];
            cov[j] = covers(l, j, i);
            rev[j] = cov[j] && covers(l, i, j);
        }
        if (p->effect == DW_PERMIT && covered_by(l, i, DW_FORBID, who, cov, NULL, cand, n)) {
            add(l, R_OVERRIDDEN, -1, at, "remove the permit, or narrow the forbid",
                "permit %s never takes effect: every request it allows is denied by %s", dw_lint_rname(l, i), rule_list(l, who, cand, n));
        } else {
            clear(who, cand, n);
            if (covered_by(l, i, p->effect, who, cov, rev, cand, n))
                add(l, p->effect == DW_PERMIT ? R_SHADOW_PERMIT : R_SHADOW_FORBID, -1, at,
                    p->effect == DW_PERMIT ? "remove the redundant permit, or narrow the broader one" : "remove the redundant forbid",
                    "%s %s is shadowed: every request it %s is also %s by %s", eff, dw_lint_rname(l, i),
                    p->effect == DW_PERMIT ? "allows" : "denies", p->effect == DW_PERMIT ? "allowed" : "denied", rule_list(l, who, cand, n));
        }
        clear(who, cand, n);
        clear(cov, cand, n);
        clear(rev, cand, n);
    }
}

/* A temporal permit beside another permit for the same action: the first
 * such permit without a condition (a hard one), else the first with one.
 * Per action, the permits of each kind in order: the first of them other
 * than the rule itself, over the rule's actions. */
static void permit_caps(L *l)
{
    size_t np = l->np, nu = l->nu;
    size_t *cnt[2], **by[2];
    for (int h = 0; h < 2; h++) {
        cnt[h] = alloc(l, (nu + 1) * sizeof *cnt[h]);
        by[h] = alloc(l, (nu + 1) * sizeof *by[h]);
        memset(cnt[h], 0, (nu + 1) * sizeof *cnt[h]);
    }
    bool any_temporal = false;
    for (size_t i = 0; i < np; i++)
        any_temporal = any_temporal || (l->ps->policies[i].effect == DW_PERMIT && l->pi[i].temporal && !l->ps->policies[i].is_template);
    if (!any_temporal) return;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t j = 0; j < np; j++) {
            if (l->ps->policies[j].effect != DW_PERMIT || l->pi[j].cond == C_NEVER) continue;
            int h = l->pi[j].cond == C_ALWAYS && !l->pi[j].temporal ? 0 : 1;
            for (size_t x = 0; x < nu; x++) {
                if (!l->pi[j].acts[x]) continue;
                if (pass) by[h][x][cnt[h][x]++] = j;
                else cnt[h][x]++;
            }
        }
        for (int h = 0; h < 2 && !pass; h++)
            for (size_t x = 0; x < nu; x++) { by[h][x] = alloc(l, (cnt[h][x] + 1) * sizeof **by[h]); cnt[h][x] = 0; }
    }
    for (size_t i = 0; i < np; i++) {
        const dw_policy *p = &l->ps->policies[i];
        if (p->effect != DW_PERMIT || !l->pi[i].temporal || p->is_template) continue;
        long first[2] = { -1, -1 };   /* [0] hard, [1] soft */
        for (int h = 0; h < 2; h++)
            for (size_t x = 0; x < nu; x++) {
                if (!l->pi[i].acts[x]) continue;
                size_t k = 0;
                if (k < cnt[h][x] && by[h][x][k] == i) k++;
                if (k < cnt[h][x] && (first[h] < 0 || (long)by[h][x][k] < first[h])) first[h] = (long)by[h][x][k];
            }
        long hard = first[0], soft = first[1];
        if (hard < 0 && soft < 0) continue;
        dw_loc at = p->effect_loc;
        for (size_t c = 0; c < p->nclauses; c++) if (dw_lint_has_temporal(p->clauses[c].body)) { at = p->clauses[c].loc; break; }
        size_t j = (size_t)(hard >= 0 ? hard : soft);
        add(l, R_TPERMIT_CAP, hard >= 0 ? DW_LINT_ERROR : DW_LINT_WARNING, at,
            "write the cap as a `forbid` (with the temporal condition that should deny), or make this the only permit for its actions",
            "policy writes a cap as a permit: %s carries a temporal clause beside %s, which permits the same action %s",
            dw_lint_rname(l, i), dw_lint_rname(l, j), hard >= 0 ? "without a condition, so the cap never denies anything" : "under its own conditions, so the cap does not bound those requests");
    }
}

void dw_lint_scope_analysis(L *l)
{
    shadowing(l);
    permit_caps(l);
    /* Box: a rule that names only the reserved fs:other */
    for (size_t i = 0; i < l->np; i++) {
        const pinfo *f = &l->pi[i];
        if (!f->nacts || f->all_acts) continue;
        bool only = true;
        for (size_t x = 0; x < l->nu; x++) if (f->acts[x] && !l->u_fsother[x]) only = false;
        if (only)
            add(l, R_RESERVED_ACTION, -1, l->ps->policies[i].action.loc,
                "name the fs:* action the rule is meant for (fs:read, fs:write, fs:delete or fs:move)",
                "policy names only a reserved action: %s applies only to Box::Action::\"fs:other\", which Box never raises",
                dw_lint_rname(l, i));
    }
}
