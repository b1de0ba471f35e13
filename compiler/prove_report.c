/* prove_report.c - the findings of `dwc check`'s proofs from what the
 * environments established (prove.h, docs/CHECK.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "macros.h"
#include "prove_impl.h"
#include "../stdlib/arena.h"

/* ------------------------------------------------------------------ reports */

static char *list_rules(P *p, const bool *who, size_t skip)
{
    dw_buf b = { 0 };
    size_t n = 0, k = 0;
    for (size_t j = 0; j < p->np; j++) if (who[j] && j != skip) n++;
    char nb[256];
    for (size_t j = 0; j < p->np; j++) {
        if (!who[j] || j == skip) continue;
        dw_buf_printf(&b, "%s%s", k == 0 ? "" : k + 1 == n ? " and " : ", ", dw_prove_pname(&p->o->set.ps->policies[j], j, nb, sizeof nb));
        k++;
    }
    if (!b.p) return strdup("other rules");
    return b.p;
}

/* Does the witness show the fact, run for the rules only[0..nonly) (NULL:
 * every rule)? */
static bool witness_shows(P *p, size_t i, int kind, long other, const uint32_t *only, uint32_t nonly)
{
    bool allow = false;
    uint8_t *o = NULL;
    if (dw_prove_vm_run_some(p, DW_PROVE_SET, &p->acc[i].witness, only, nonly, kind == 0 ? &allow : NULL, &o)) return false;
    bool ok = o[i] == DW_OUT_TRUE;
    if (kind == 0) ok = ok && !allow;                         /* overridden: denied */
    if (kind == 1) {                                          /* shadowed: another rule of the effect matches */
        bool any = false;
        for (size_t j = 0; j < p->np; j++)
            if (j != i && o[j] == DW_OUT_TRUE && p->o->set.ps->policies[j].effect == p->o->set.ps->policies[i].effect) any = true;
        ok = ok && any;
    }
    if (kind == 2) ok = ok && other >= 0 && o[other] == DW_OUT_TRUE;   /* redundant: the twin matches too */
    free(o);
    return ok;
}

/* The witness must show the fact on the VM: the rule matches it and the
 * decision (or the covering rule) is as proved.  It is run for the rules the
 * fact names first -- the rule, its twin, the rules found covering or
 * overlapping it -- and for every rule only when those do not show it (a
 * shadowing rule the breakdown did not pair with it). */
static bool witness_agrees(P *p, size_t i, int kind, long other)
{
    pstate *s = &p->acc[i];
    if (!s->have_witness) return false;
    uint32_t *only = calloc(p->np + 1, sizeof *only), n = 0;
    bool ok = false;
    if (only) {
        only[n++] = (uint32_t)i;
        if (kind == 2 && other >= 0) only[n++] = (uint32_t)other;
        for (size_t j = 0; kind == 1 && j < p->np; j++)
            if (j != i && ((s->covers && s->covers[j]) || (s->overlap && s->overlap[j])) &&
                p->o->set.ps->policies[j].effect == p->o->set.ps->policies[i].effect)
                only[n++] = (uint32_t)j;
        ok = witness_shows(p, i, kind, other, only, n);
    }
    if (!ok && (kind == 1 || !only)) ok = witness_shows(p, i, kind, other, NULL, 0);
    free(only);
    if (ok) p->st->confirmed++;
    else p->st->vm_rejected++;
    return ok;
}

void dw_prove_report_set(P *p)
{
    const dw_policy_set *ps = p->o->set.ps;
    const dw_source *src = p->o->set.src;
    char nb[256], nb2[256];
    char *msg = NULL;
    /* redundant pairs: i < j, each covers the other */
    bool *twin_later = calloc(p->np + 1, 1), *twin_earlier = calloc(p->np + 1, 1);
    long *twin_of = calloc(p->np + 1, sizeof *twin_of);
    if (!twin_later || !twin_earlier || !twin_of) goto out;
    for (size_t j = 0; j < p->np; j++) {
        twin_of[j] = -1;
        pstate *sj = &p->acc[j];
        if (!sj->shadowed_all || !sj->covers) continue;
        for (size_t i = 0; i < j; i++) {
            /* equivalent wherever j applies, and i applies nowhere else */
            if (!sj->equiv || !sj->equiv[i] || ps->policies[i].effect != ps->policies[j].effect) continue;
            if (p->acc[i].napplies != sj->napplies) continue;
            twin_later[j] = true;
            twin_earlier[i] = true;
            twin_of[j] = (long)i;
            break;
        }
    }
    for (size_t i = 0; i < p->np; i++) {
        const dw_policy *pol = &ps->policies[i];
        pstate *s = &p->acc[i];
        const char *eff = pol->effect == DW_PERMIT ? "permit" : "forbid";
        free(msg);
        msg = NULL;
        if (!s->encodable || pol->is_template) continue;
        if (s->unknown && !s->err_found) {
            if (asprintf(&msg, "%s %s: a proof was not decided (%s); nothing is claimed about it", eff, dw_prove_pname(pol, i, nb, sizeof nb),
                         s->why ? s->why : "Z3 answered unknown") < 0) msg = NULL;
            else dw_prove_add_finding(p, src, "dw-proof-unknown", -1, pol->effect_loc, (long)i, "raise --timeout or --budget, or split the rule", msg, NULL);
            continue;
        }
        if (!s->napplies) continue;   /* no environment: the validator reports it */
        if (!s->may_match) {
            if (p->o->impossible_reported && p->o->impossible_reported[i]) continue;
            if (asprintf(&msg, "%s %s is vacuous: it matches no request valid under the schema (proved in %zu environment%s)", eff,
                         dw_prove_pname(pol, i, nb, sizeof nb), s->napplies, s->napplies == 1 ? "" : "s") < 0) msg = NULL;
            else dw_prove_add_finding(p, src, "dw-vacuous", -1, pol->effect_loc, (long)i, "remove the rule, or fix the condition that can never hold", msg, NULL);
            continue;
        }
        if (!s->have_witness) continue;   /* the VM never matched it: claim nothing */
        if (s->always_all && !s->approx && !(p->o->always_reported && p->o->always_reported[i])) {
            if (witness_agrees(p, i, -1, -1) &&
                asprintf(&msg, "%s %s is vacuous: its condition holds for every request its scope admits (proved in %zu environment%s)",
                         eff, dw_prove_pname(pol, i, nb, sizeof nb), s->napplies, s->napplies == 1 ? "" : "s") >= 0)
                dw_prove_add_finding(p, src, "dw-vacuous", DW_LINT_INFO, pol->effect_loc, (long)i, "drop the condition, or fix it to test what was meant", msg, NULL);
            else msg = NULL;
        }
        if (pol->effect == DW_PERMIT && s->overridden_all && s->f_overlap) {
            if (!witness_agrees(p, i, 0, -1)) continue;
            char *who = list_rules(p, s->f_overlap, i);
            if (asprintf(&msg, "permit %s never takes effect: every request it allows is denied by %s (proved in %zu environment%s)",
                         dw_prove_pname(pol, i, nb, sizeof nb), who, s->napplies, s->napplies == 1 ? "" : "s") < 0) msg = NULL;
            else dw_prove_add_finding(p, src, "dw-overridden-permit", -1, pol->effect_loc, (long)i, "remove the permit, or narrow the forbid", msg, &s->witness);
            free(who);
            continue;
        }
        if (twin_later[i]) {
            long t = twin_of[i];
            if (!witness_agrees(p, i, 2, t)) continue;
            if (asprintf(&msg, "%s %s is redundant: it is equivalent to %s (they match exactly the same requests)", eff,
                         dw_prove_pname(pol, i, nb, sizeof nb), dw_prove_pname(&ps->policies[t], (size_t)t, nb2, sizeof nb2)) < 0) msg = NULL;
            else dw_prove_add_finding(p, src, "dw-redundant", -1, pol->effect_loc, (long)i, "remove one of the two rules", msg, &s->witness);
            continue;
        }
        if (twin_earlier[i]) continue;
        if (s->shadowed_all && s->overlap) {
            if (!witness_agrees(p, i, 1, -1)) continue;
            bool single = false;
            for (size_t j = 0; s->covers && j < p->np; j++) single = single || s->covers[j];
            char *who = list_rules(p, single ? s->covers : s->overlap, i);
            if (asprintf(&msg, "%s %s is shadowed: every request it %s is also %s by %s (proved in %zu environment%s)", eff,
                         dw_prove_pname(pol, i, nb, sizeof nb), pol->effect == DW_PERMIT ? "allows" : "denies",
                         pol->effect == DW_PERMIT ? "allowed" : "denied", who, s->napplies, s->napplies == 1 ? "" : "s") < 0) msg = NULL;
            else dw_prove_add_finding(p, src, pol->effect == DW_PERMIT ? "dw-shadowed-permit" : "dw-shadowed-forbid", -1, pol->effect_loc, (long)i,
                             pol->effect == DW_PERMIT ? "remove the redundant permit, or narrow the broader one" : "remove the redundant forbid",
                             msg, &s->witness);
            free(who);
        }
    }
out:
    free(msg);
    free(twin_later);
    free(twin_earlier);
    free(twin_of);
}

/* ---- --against: the leaves one version has and the other lacks ----
 * Leaves are one variable per identity on both sides (smt.c), so an
 * unchanged leaf never explains a difference; one that is in only one
 * version (an edited window, a changed pattern) is named in the finding,
 * with its value in the counterexample. */

typedef struct leaf_ref { const dw_expr *e; size_t policy; uint32_t index; uint64_t id; } leaf_ref;
typedef struct leaf_list { leaf_ref *v; size_t n, cap; bool oom; } leaf_list;

static void collect_leaves(const dw_expr *e, size_t pi, uint32_t *j, leaf_list *l)
{
    if (!e) return;
    if (e->kind == DW_E_TEMPORAL && e->u.temporal) {
        if (l->n == l->cap) {
            leaf_ref *nv = realloc(l->v, (l->cap = l->cap ? 2 * l->cap : 16) * sizeof *nv);
            if (!nv) { l->oom = true; return; }
            l->v = nv;
        }
        l->v[l->n++] = (leaf_ref){ e, pi, (*j)++, dw_temporal_leaf_identity(e->u.temporal) };
        return;
    }
    dw_expr **k;
    for (size_t i = 0; (k = dw_expr_kid((dw_expr *)e, i)); i++) collect_leaves(*k, pi, j, l);
}

/* every leaf of the set, in program order (policy by policy, clauses in order, left to right) */
static void set_leaves(const dw_prove_input *in, leaf_list *l)
{
    for (size_t i = 0; i < in->ps->npolicies && i < in->prog->npolicies; i++) {
        uint32_t j = in->prog->policies[i].first_leaf;
        for (size_t k = 0; k < in->ps->policies[i].nclauses; k++) collect_leaves(in->ps->policies[i].clauses[k].body, i, &j, l);
    }
}

static bool has_leaf(const leaf_list *l, uint64_t id)
{
    for (size_t i = 0; i < l->n; i++) if (l->v[i].id == id) return true;
    return false;
}

/* "; temporal leaves in only one version: ..." for difference d, into b;
 * *first: the first leaf only the new set has (NULL if none) */
static void leaf_changes(P *p, int d, dw_buf *b, const leaf_ref **first, leaf_list *nl, leaf_list *ol)
{
    *first = NULL;
    size_t shown = 0;
    char nb[256];
    for (int side = 0; side < 2; side++) {
        const leaf_list *mine = side ? ol : nl, *theirs = side ? nl : ol;
        const dw_prove_input *in = side ? &p->o->old : &p->o->set;
        const uint8_t *vals = side ? p->diff_old_leaves[d] : p->diff_cex[d].leaves;
        for (size_t i = 0; i < mine->n; i++) {
            const leaf_ref *r = &mine->v[i];
            if (has_leaf(theirs, r->id)) continue;
            if (!side && !*first) *first = r;
            char *txt = dw_temporal_canon_text(r->e->u.temporal, false, NULL);
            dw_buf_printf(b, "%s%s `%s` (%s, line %u)%s%s", shown++ ? "; " : "; temporal leaves in only one version: ",
                          side ? "old" : "new", txt ? txt : "?", dw_prove_pname(&in->ps->policies[r->policy], r->policy, nb, sizeof nb),
                          r->e->loc.line, vals ? (vals[r->index] ? " true" : " false") : "", vals ? " here" : "");
            free(txt);
        }
    }
}

void dw_prove_report_diff(P *p)
{
    const char *old = p->o->old.src->name;
    dw_loc at = { 1, 1, 0, 0 };
    char *msg = NULL;
    if (p->diff_inexact) {
        if (asprintf(&msg, "the comparison with %s is unknown: a rule could not be encoded", old) >= 0)
            dw_prove_add_finding(p, p->o->set.src, "dw-diff", DW_LINT_INFO, at, -1, "see docs/CHECK.md for what the encoder supports", msg, NULL);
        free(msg);
        return;
    }
    if (p->diff_more != 1 && p->diff_less != 1) {
        bool unknown = p->diff_more < 0 || p->diff_less < 0;
        if (asprintf(&msg, unknown ? "the comparison with %s is unknown: a query timed out or a candidate was not confirmed by the VM"
                                   : "the set is equivalent to %s: it allows exactly the same requests (proved in every environment)", old) >= 0)
            dw_prove_add_finding(p, p->o->set.src, "dw-diff", DW_LINT_INFO, at, -1, NULL, msg, NULL);
        free(msg);
        return;
    }
    bool both = p->diff_more == 1 && p->diff_less == 1;
    leaf_list nl = { 0 }, ol = { 0 };
    set_leaves(&p->o->set, &nl);
    set_leaves(&p->o->old, &ol);
    for (int d = 0; d < 2; d++) {
        if ((d == 0 ? p->diff_more : p->diff_less) != 1) continue;
        dw_buf leaves = { 0 };
        const leaf_ref *first = NULL;
        if (!nl.oom && !ol.oom) leaf_changes(p, d, &leaves, &first, &nl, &ol);
        if (asprintf(&msg, "the set is %s than %s%s: it %s the request below, which %s %s%s", d == 0 ? "more permissive" : "less permissive",
                     old, both ? " (incomparable: it is both more and less permissive)" : "", d == 0 ? "allows" : "denies",
                     old, d == 0 ? "denies" : "allows", leaves.p ? leaves.p : "") < 0) { dw_buf_free(&leaves); continue; }
        dw_buf_free(&leaves);
        dw_prove_add_finding(p, p->o->set.src, "dw-diff", d == 0 ? DW_LINT_WARNING : DW_LINT_INFO, first ? first->e->loc : at,
                    first ? (long)first->policy : -1,
                    d == 0 ? "check that the new requests are meant to be allowed" : "check that the requests are meant to be denied now", msg,
                    &p->diff_cex[d]);
        free(msg);
    }
    free(nl.v);
    free(ol.v);
}

void dw_prove_report_asserts(P *p)
{
    const dw_policy_set *as = p->o->asserts.ps;
    char nb[256];
    for (size_t k = 0; k < as->npolicies; k++) {
        const dw_policy *a = &as->policies[k];
        char *msg = NULL;
        if (a->effect != DW_FORBID) {
            if (asprintf(&msg, "assertion %s is a permit: assertions are forbid-shaped (\"the set never allows ...\")", dw_prove_pname(a, k, nb, sizeof nb)) >= 0)
                dw_prove_add_finding(p, p->o->asserts.src, "dw-assertion-refuted", DW_LINT_ERROR, a->effect_loc, (long)k, "write the assertion as a forbid", msg, NULL);
        } else if (p->as_state[k] == 1) {
            if (asprintf(&msg, "assertion %s is refuted: the set allows the request below, which the assertion says it never allows", dw_prove_pname(a, k, nb, sizeof nb)) >= 0)
                dw_prove_add_finding(p, p->o->asserts.src, "dw-assertion-refuted", -1, a->effect_loc, (long)k, "add a forbid for these requests, or narrow the permits that allow them", msg, &p->as_cex[k]);
        } else if (p->as_state[k] < 0) {
            if (asprintf(&msg, "assertion %s is unknown: a query timed out, a rule could not be encoded, or a candidate was not confirmed by the VM", dw_prove_pname(a, k, nb, sizeof nb)) >= 0)
                dw_prove_add_finding(p, p->o->asserts.src, "dw-proof-unknown", DW_LINT_INFO, a->effect_loc, (long)k, NULL, msg, NULL);
        } else if (asprintf(&msg, "assertion %s is proved: the set never allows a request it matches", dw_prove_pname(a, k, nb, sizeof nb)) >= 0)
            dw_prove_add_finding(p, p->o->asserts.src, "dw-assertion-proved", -1, a->effect_loc, (long)k, NULL, msg, NULL);
        free(msg);
    }
}

