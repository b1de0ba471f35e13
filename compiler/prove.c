/* prove.c - the proofs of `dwc check` (see prove.h and docs/CHECK.md). */
#include "prove.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "macros.h"
#include "prove_cache.h"
#include "prove_impl.h"
#include "smt.h"
#include "../stdlib/ext.h"
#include "../stdlib/le.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

void dw_prove_cex_free(cex *c) { free(c->req); free(c->ents); free(c->leaves); memset(c, 0, sizeof *c); }

const char *dw_prove_pname(const dw_policy *p, size_t i, char *buf, size_t cap)
{
    for (size_t k = 0; k < p->nannots; k++)
        if (p->annots[k].has_value && p->annots[k].key.len == 2 && memcmp(p->annots[k].key.s, "id", 2) == 0) {
            snprintf(buf, cap, "rule @id(\"%.*s\")", (int)p->annots[k].value.len, p->annots[k].value.s);
            return buf;
        }
    snprintf(buf, cap, "rule policy_%zu", i);       /* Box's name for it (0-based) */
    return buf;
}

/* ------------------------------------------------------------------ counterexamples */

/* The kept model as a request for program `which`, with the leaf values of
 * the policies encoded under that program's tags. */
static int take_cex(P *p, int which, cex *c)
{
    memset(c, 0, sizeof *c);
    dw_buf rq = { 0 }, en = { 0 };
    if (dw_smt_model_request(p->x, &rq, &en) || !rq.p || !en.p) { dw_buf_free(&rq); dw_buf_free(&en); return -1; }
    c->req = rq.p;
    c->ents = en.p;
    const dw_prove_input *in = which == DW_PROVE_SET ? &p->o->set : which == DW_PROVE_OLD ? &p->o->old : &p->o->asserts;
    const dw_program *prog = in->prog;
    c->nleaves = prog->temporal.nleaves;
    c->leaves = calloc(c->nleaves + 1, 1);
    if (!c->leaves) { dw_prove_cex_free(c); return -1; }
    for (uint32_t i = 0; i < prog->npolicies && i < in->ps->npolicies; i++) {
        const dw_policy_code *pc = &prog->policies[i];
        for (uint32_t k = 0; k < pc->nleaves; k++)
            c->leaves[pc->first_leaf + k] = (uint8_t)dw_smt_model_leaf(p->x, (unsigned)(which * 1000000 + i), k);
    }
    return 0;
}

int dw_prove_vm_run_some(P *p, int which, const cex *c, const uint32_t *only, uint32_t nonly, bool *allow, uint8_t **outcome)
{
    const dw_prove_input *in = which == DW_PROVE_SET ? &p->o->set : which == DW_PROVE_OLD ? &p->o->old : &p->o->asserts;
    uint8_t *o = calloc(in->prog->npolicies + 1, 1);
    if (!o) return -1;
    /* the leaf values were taken for this program's tags */
    if (p->o->vm.decide(p->o->vm.ud, which, c->req, c->ents, c->leaves, c->nleaves, only, nonly, allow, o)) { free(o); return -1; }
    *outcome = o;
    return 0;
}

/* Run c on program `which`; outcome has one byte per policy. */
int dw_prove_vm_run(P *p, int which, const cex *c, bool *allow, uint8_t **outcome)
{
    return dw_prove_vm_run_some(p, which, c, NULL, 0, allow, outcome);
}

void dw_prove_add_finding(P *p, const dw_source *src, const char *rule, int sev, dw_loc loc, long policy, const char *hint,
                        const char *msg, const cex *c)
{
    if (dw_findings_push(p->out, src, rule, sev, loc, policy, hint, msg, c ? c->req : NULL, c ? c->ents : NULL,
                         c && c->nleaves ? c->leaves : NULL, c ? c->nleaves : 0))
        fprintf(stderr, "dwc check: error: out of memory\n");
}

/* ------------------------------------------------------------------ per environment */

static Z3_ast allow_of(P *p, const dw_smt_policy *v, size_t n, const dw_policy_set *ps)
{
    Z3_ast perm = dw_smt_bool(p->x, false), forb = dw_smt_bool(p->x, false);
    for (size_t i = 0; i < n; i++) {
        if (!v[i].applies) continue;
        if (ps->policies[i].effect == DW_PERMIT) perm = dw_smt_or(p->x, perm, v[i].sat);
        else forb = dw_smt_or(p->x, forb, v[i].sat);
    }
    return dw_smt_and(p->x, perm, dw_smt_not(p->x, forb));
}

static bool scope_eq_disjoint(const dw_scope_con *a, const dw_scope_con *b)
{
    if (a->kind != DW_SC_EQ || b->kind != DW_SC_EQ || a->target_is_slot || b->target_is_slot) return false;
    return !(dw_str_eq(a->target.type, b->target.type) && dw_str_eq(a->target.id, b->target.id));
}

static bool con_eq(const dw_scope_con *a, const dw_scope_con *b)
{
    if (a->kind != b->kind || a->target_is_slot || b->target_is_slot) return false;
    /* (dw_str_eq: an empty string may have a NULL pointer) */
    bool t = dw_str_eq(a->target.type, b->target.type) && dw_str_eq(a->target.id, b->target.id);
    switch (a->kind) {
    case DW_SC_ANY: return true;
    case DW_SC_IS: return dw_str_eq(a->is_type, b->is_type);
    case DW_SC_IS_IN: return t && dw_str_eq(a->is_type, b->is_type);
    default: return t;
    }
}

static bool same_scope(const dw_policy *a, const dw_policy *b)
{
    return con_eq(&a->principal, &b->principal) && con_eq(&a->resource, &b->resource);
}

static bool disjoint(const dw_policy *a, const dw_policy *b)
{
    return scope_eq_disjoint(&a->principal, &b->principal) || scope_eq_disjoint(&a->resource, &b->resource);
}

/* Encode every policy of one input in the current environment. */
static void encode_all(P *p, int which, const dw_prove_input *in, dw_smt_policy *v)
{
    for (size_t i = 0; i < in->ps->npolicies; i++) {
        /* a rule with an error finding (ill-typed, unguarded optional ...) is left out of the proofs */
        bool excluded = which == DW_PROVE_SET && p->o->has_error_finding && p->o->has_error_finding[i];
        if (excluded || dw_smt_encode_policy(p->x, &in->ps->policies[i], (unsigned)(which * 1000000 + i), &v[i])) {
            /* not encodable: a free Boolean (it may or may not hold, or error) */
            memset(&v[i], 0, sizeof v[i]);
            v[i].applies = true;
            v[i].approx = true;
            v[i].sat = v[i].err = NULL;
            if (which == DW_PROVE_SET) p->ps[i].encodable = false;
        } else if (which == DW_PROVE_SET && v[i].approx) p->ps[i].approx = true;
    }
}

/* A query about policy i answered unknown: nothing is claimed about i.  The
 * first such query is named in its dw-proof-unknown finding: what was asked
 * (`what`, printf-style), in which environment, and why it was not decided. */
static void unknown_of(P *p, size_t i, const char *what, ...) __attribute__((format(printf, 3, 4)));
static void unknown_of(P *p, size_t i, const char *what, ...)
{
    pstate *s = &p->ps[i];
    s->unknown = true;
    if (s->why) return;
    char q[600];
    va_list ap;
    va_start(ap, what);
    vsnprintf(q, sizeof q, what, ap);
    va_end(ap);
    if (asprintf(&s->why, "%s, in environment %s: %s", q, p->env_name, dw_smt_unknown_reason(p->x)) < 0) s->why = NULL;
}

/* "rule A, rule B and 3 more" for the candidates cand[0..n) of a query */
static void name_rules(P *p, const size_t *cand, size_t n, char *out, size_t cap)
{
    char nb[256];
    size_t k = 0;
    out[0] = 0;
    for (size_t c = 0; c < n && c < 3; c++)
        k += (size_t)snprintf(out + k, k < cap ? cap - k : 0, "%s%s", c == 0 ? "" : c + 1 == n ? " and " : ", ",
                              dw_prove_pname(&p->o->set.ps->policies[cand[c]], cand[c], nb, sizeof nb));
    if (n > 3 && k < cap) snprintf(out + k, cap - k, " and %zu more", n - 3);
}

/* Policy i's own model in this environment (a request it matches, asked
 * once): 1 found, 0 it matches nothing here, -1 unknown. */
static int own_model(P *p, size_t i)
{
    pstate *s = &p->ps[i];
    if (s->own_r == 2) {
        s->own_r = dw_smt_holds_in_model(p->x, NULL, p->cur[i].sat, NULL, 0) ? 1 : dw_smt_solve(p->x, p->cur[i].sat);
        if (s->own_r == 1 && !(s->own = dw_smt_take_model(p->x))) s->own_r = -1;
        /* the answer is cached: so is its reason */
        if (s->own_r < 0) unknown_of(p, i, "the query for a request it matches");
    }
    return s->own_r;
}

/* SAT(goal), where goal implies sat of policy i (and of j when j >= 0): a
 * goal is unsatisfiable where i (or j) matches nothing; the own models of i
 * and j and the recent models of the environment answer most satisfiable
 * goals without a query (the one that does is kept, as after a query). */
static int solve_for(P *p, Z3_ast goal, size_t i, long j)
{
    int ri = own_model(p, i), rj = j >= 0 ? own_model(p, (size_t)j) : 1;
    if (ri == 0 || rj == 0) return 0;
    dw_smt_model *m[2] = { ri == 1 ? p->ps[i].own : NULL, j >= 0 && rj == 1 ? p->ps[j].own : NULL };
    if (dw_smt_holds_in_model(p->x, p->cur[i].sat, goal, m, 2)) return 1;
    return dw_smt_solve(p->x, goal);
}

static void forbid_may_error(P *p, size_t i)
{
    pstate *s = &p->ps[i];
    const dw_policy *pol = &p->o->set.ps->policies[i];
    if (pol->effect != DW_FORBID || s->err_found || !p->cur[i].applies || !p->cur[i].sat) return;
    if (p->o->has_error_finding && p->o->has_error_finding[i]) return;
    int r = dw_smt_solve(p->x, p->cur[i].err);
    if (r < 0) { unknown_of(p, i, "the query whether it may error"); return; }
    if (r == 0) return;
    cex c;
    if (take_cex(p, DW_PROVE_SET, &c)) { p->st->vm_rejected++; return; }
    uint8_t *o = NULL;
    uint32_t me = (uint32_t)i;
    if (dw_prove_vm_run_some(p, DW_PROVE_SET, &c, &me, 1, NULL, &o) || o[i] != DW_OUT_ERROR) {
        free(o);
        p->st->vm_rejected++;
        dw_prove_cex_free(&c);
        return;
    }
    free(o);
    p->st->confirmed++;
    s->err_found = true;
    s->err_cex = c;   /* reported once, from the first environment (merge) */
}

/* ------------------------------------------------------------------ one environment's state */

static void pstate_clear(dw_smt *x, pstate *s)
{
    dw_smt_model_free(x, s->own);
    free(s->covers);
    free(s->overlap);
    free(s->f_overlap);
    free(s->equiv);
    free(s->why);
    dw_prove_cex_free(&s->witness);
    dw_prove_cex_free(&s->err_cex);
    memset(s, 0, sizeof *s);
    s->encodable = s->always_all = s->overridden_all = s->shadowed_all = true;
    s->own_r = 2;
}

/* acc[i] &= / |= ps[i]; *b (owned by ps) moves into *a when a has none */
static void and_rows(bool **a, bool **b, size_t n, bool and)
{
    if (!*b) return;
    if (!*a) { *a = *b; *b = NULL; return; }
    for (size_t j = 0; j < n; j++) (*a)[j] = and ? (*a)[j] && (*b)[j] : (*a)[j] || (*b)[j];
}

/* Fold what this environment established about policy i into acc (the
 * result is the same whatever order the environments come in, except which
 * environment's witness and reason are kept: the first). */
static void merge_one(P *p, size_t i)
{
    pstate *a = &p->acc[i], *s = &p->ps[i];
    a->encodable = a->encodable && s->encodable;
    a->approx = a->approx || s->approx;
    a->napplies += s->napplies;
    a->may_match = a->may_match || s->may_match;
    if (s->napplies) a->always_all = a->always_all && s->always_all;
    if (s->unknown) a->unknown = true;
    if (!a->why && s->why) { a->why = s->why; s->why = NULL; }
    if (s->err_found && !a->err_found) {
        a->err_found = true;
        const dw_policy *pol = &p->o->set.ps->policies[i];
        char nb[256], msg[512];
        snprintf(msg, sizeof msg,
                 "forbid %s may error, and Cedar skips an erroring forbid: for the request below its condition raises an error "
                 "(overflow, a missing entity or attribute, or an extension error), so it does not deny",
                 dw_prove_pname(pol, i, nb, sizeof nb));
        dw_prove_add_finding(p, p->o->set.src, "dw-forbid-may-error", -1, pol->effect_loc, (long)i,
                             "guard the failing operation (`has`, a range check before arithmetic, a literal extension argument) so the condition cannot error",
                             msg, &s->err_cex);
    }
    a->overridden_all = a->overridden_all && s->overridden_all;
    a->shadowed_all = a->shadowed_all && s->shadowed_all;
    and_rows(&a->covers, &s->covers, p->np, true);
    and_rows(&a->equiv, &s->equiv, p->np, true);
    and_rows(&a->overlap, &s->overlap, p->np, false);
    and_rows(&a->f_overlap, &s->f_overlap, p->np, false);
    if (s->have_witness && !a->have_witness) { a->witness = s->witness; a->have_witness = true; memset(&s->witness, 0, sizeof s->witness); s->have_witness = false; }
}

/* Is policy i satisfiable here (and keep a VM-confirmed witness)? */
static void match_check(P *p, size_t i)
{
    pstate *s = &p->ps[i];
    if (!p->cur[i].applies || !p->cur[i].sat) return;
    s->napplies++;
    bool matched = s->matched_here;
    s->matched_here = false;
    if (matched) s->may_match = true;
    /* always true here? only for rules with a condition */
    if (s->always_all && p->o->set.ps->policies[i].nclauses > 0 && dw_smt_refuted_by_recent(p->x, p->cur[i].sat))
        s->always_all = false;
    if (s->always_all && p->o->set.ps->policies[i].nclauses > 0) {
        int r = dw_smt_solve(p->x, dw_smt_not(p->x, p->cur[i].sat));
        if (r != 0) s->always_all = false;
        if (r < 0) unknown_of(p, i, "the query whether its condition always holds");
    } else s->always_all = false;
    /* a witness is needed only for a finding about the rule: vacuous, or a proved fact */
    bool permit = p->o->set.ps->policies[i].effect == DW_PERMIT;
    bool need = !matched || (permit && s->overridden_all) || s->shadowed_all || s->always_all;
    if (s->have_witness || !need) return;
    /* a permit's witness is preferably a request the set allows (the decision then shows it) */
    int r = permit ? solve_for(p, dw_smt_and(p->x, p->cur[i].sat, dw_smt_not(p->x, p->forbid_any)), i, -1) : 0;
    if (r != 1) {
        r = own_model(p, i);
        if (r == 1) dw_smt_holds_in_model(p->x, NULL, p->cur[i].sat, &s->own, 1);   /* keep it */
    }
    if (r < 0) unknown_of(p, i, "the query for a request it matches");
    if (r != 1) return;
    s->may_match = true;
    cex c;
    if (take_cex(p, DW_PROVE_SET, &c)) return;
    uint8_t *o = NULL;
    uint32_t me = (uint32_t)i;
    if (!dw_prove_vm_run_some(p, DW_PROVE_SET, &c, &me, 1, NULL, &o) && o[i] == DW_OUT_TRUE) { s->witness = c; s->have_witness = true; }
    else { dw_prove_cex_free(&c); p->st->vm_rejected++; }
    free(o);
}

/* Rules i and j never both match a request: their literal guards on one
 * field accept no common value. */
static bool guard_disjoint(const P *p, size_t i, size_t j)
{
    return p->guards && dw_guards_disjoint(&p->guards[i], &p->guards[j]);
}

/* The rules of `effect` (index e) i's guards may meet in this environment,
 * into p->cand: the guard index's candidates (every rule of the effect that
 * applies here when there is no index). */
static size_t env_candidates(P *p, size_t i, int e)
{
    size_t n = 0;
    if (p->ix[e]) dw_guard_index_query(p->ix[e], &p->guards[i], p->cand, &n);
    else for (size_t k = 0; k < p->nenv[e]; k++) p->cand[n++] = p->env_rules[e][k];
    return n;
}

/* The term "alternative a of i's guard h accepts the field's value": its
 * own test (F == lit, F like p), or F == lit for an element of a contains
 * list.  NULL when it cannot be encoded. */
static Z3_ast alt_term(P *p, const dw_guard *h, const dw_guard_alt *a)
{
    if (a->test) return dw_smt_encode_test(p->x, a->test);
    if (!a->lit || !h->field) return NULL;
    dw_expr eq;
    memset(&eq, 0, sizeof eq);
    eq.kind = DW_E_EQ;
    eq.loc = a->lit->loc;
    eq.u.kids[0] = (dw_expr *)h->field;
    eq.u.kids[1] = (dw_expr *)a->lit;
    return dw_smt_encode_test(p->x, &eq);
}

/* SAT(goal), goal = sat(i) and no rule of uj[0..nu) matches, split by the
 * alternatives of one of i's guards (field F, alternatives a_1..a_k): sat(i)
 * implies that F's value is accepted by some a_t, and a candidate whose guard
 * on F accepts no value a_t accepts is false wherever a_t holds, so
 *   SAT(goal) = OR over t of SAT(sat(i) and a_t and none of U_t matches),
 * U_t the candidates that meet a_t.  An alternative no other rule meets (the
 * `tool<n>` of ["ls", "cat", "tool<n>"].contains(program)) is a small query,
 * asked first; a rule many others overlap on some alternatives no longer
 * costs one query over all of them.  Without such an alternative: one query. */
static int cover_solve(P *p, size_t i, const size_t *uj, size_t nu, Z3_ast goal)
{
    const dw_guard *h = NULL;
    for (size_t k = 0; p->guards && k < p->guards[i].n && !h; k++)
        if (p->guards[i].g[k].nalt >= 2) h = &p->guards[i].g[k];
    if (!h || nu < 2) return solve_for(p, goal, i, -1);
    size_t cnt[DW_GUARD_MAX_ALT] = { 0 }, order[DW_GUARD_MAX_ALT];
    bool *m = p->meet;   /* m[k * DW_GUARD_MAX_ALT + t]: candidate k meets alternative t */
    for (size_t k = 0; k < nu; k++) {
        const dw_guard *hj = dw_guards_on(&p->guards[uj[k]], h);
        for (size_t t = 0; t < h->nalt; t++) {
            bool meet = !hj;
            for (size_t u = 0; hj && u < hj->nalt && !meet; u++) meet = dw_guard_alts_meet(&h->alt[t], &hj->alt[u]);
            m[k * DW_GUARD_MAX_ALT + t] = meet;
            cnt[t] += meet;
        }
    }
    bool helps = false;
    for (size_t t = 0; t < h->nalt; t++) helps = helps || cnt[t] < nu;
    if (!helps) return solve_for(p, goal, i, -1);
    /* a model at hand answers without splitting */
    int ri = own_model(p, i);
    if (ri == 0) return 0;
    dw_smt_model *own[1] = { ri == 1 ? p->ps[i].own : NULL };
    if (dw_smt_holds_in_model(p->x, p->cur[i].sat, goal, own, 1)) return 1;
    for (size_t t = 0; t < h->nalt; t++) {
        size_t q = t;
        while (q > 0 && cnt[order[q - 1]] > cnt[t]) { order[q] = order[q - 1]; q--; }
        order[q] = t;
    }
    bool unknown = false;
    for (size_t o = 0; o < h->nalt; o++) {
        size_t t = order[o], n = 0;
        Z3_ast a = alt_term(p, h, &h->alt[t]);
        if (!a) return solve_for(p, goal, i, -1);
        for (size_t k = 0; k < nu; k++) if (m[k * DW_GUARD_MAX_ALT + t]) p->uv2[n++] = p->cur[uj[k]].sat;
        Z3_ast g = dw_smt_and(p->x, dw_smt_and(p->x, p->cur[i].sat, a), dw_smt_not(p->x, dw_smt_or_n(p->x, p->uv2, n)));
        int r = solve_for(p, g, i, -1);
        if (r == 1) return 1;
        if (r < 0) unknown = true;
    }
    return unknown ? -1 : 0;
}

/* solve_for, its answer kept by the condition terms a, b of a pair of rules
 * of one free scope (`memo`; prove_scope.h) for the environment's other
 * pairs with those conditions */
static int pair_solve(P *p, Z3_ast goal, size_t i, long j, bool memo, unsigned a, unsigned b, int kind)
{
    int r = memo && p->memo ? dw_pair_memo_get(p->memo, a, b, kind) : -1;
    if (r >= 0) { p->st->pairs_memo++; return r; }
    r = solve_for(p, goal, i, j);
    if (memo && p->memo) dw_pair_memo_put(p->memo, a, b, kind, r);
    return r;
}

/* covered: is every request policy i matches also matched by a policy of
 * `effect` (other than i) in this environment?  A candidate disjoint from i
 * by its literal guard cannot cover any request i matches: it is left out of
 * the query (the answer is the same), and the guard index (prove_guard.h)
 * does not even pair most of them with i. */
static void cover_check(P *p, size_t i, dw_effect effect, bool *all)
{
    bool same = effect == p->o->set.ps->policies[i].effect;
    p->ps[i].shadow_here = false;
    if (!*all) return;
    const dw_policy_set *ps = p->o->set.ps;
    int e = effect == DW_PERMIT ? 0 : 1;
    /* candidates before the guards (counted up to 9: "none" and "more than 8" are what matter) */
    size_t ncand = 0;
    for (size_t k = 0; k < p->nenv[e] && ncand <= 8; k++) {
        size_t j = p->env_rules[e][k];
        /* a later rule already found shadowed here does not shadow earlier ones
         * (of two overlapping rules only the later is reported) */
        if (j == i || disjoint(&ps->policies[i], &ps->policies[j]) || (same && p->ps[j].shadow_here)) continue;
        ncand++;
    }
    size_t n_eff = p->neffect[e] - (ps->policies[i].effect == effect);
    if (!ncand) { *all = false; p->st->pairs_pruned += n_eff; return; }
    /* candidates scoped `in` other groups cannot help cover i (prove_scope.h):
     * left out of the query; with more than eight candidates, where the
     * breakdown below takes rules of i's scope only, not even paired */
    bool scoped = p->scope_env && dw_scope_env_usable(p->scope_env, i, e);
    uint32_t kpi = 0, kri = 0;
    if (scoped) dw_scope_env_keys(p->scope_env, i, &kpi, &kri);
    size_t nc, nb = 0, nu = 0, refined = 0, by_scope = 0;
    bool bucketed = scoped && ncand > 8 && dw_scope_env_count(p->scope_env, i, e) < p->nenv[e];
    if (bucketed) {
        nc = dw_scope_env_query(p->scope_env, i, e, p->cand);
        by_scope = p->nenv[e] - nc;
    } else nc = env_candidates(p, i, e);
    for (size_t k = 0; k < nc; k++) {
        size_t j = p->cand[k];
        if (j == i || disjoint(&ps->policies[i], &ps->policies[j])) continue;
        if (guard_disjoint(p, i, j)) { refined++; continue; }
        p->cand[nb++] = j;                  /* for the breakdown below */
        if (same && p->ps[j].shadow_here) continue;
        if (scoped) {
            uint32_t kpj, krj;
            dw_scope_env_keys(p->scope_env, j, &kpj, &krj);
            if (dw_scope_drops(kpi, kri, kpj, krj)) { by_scope++; continue; }
        }
        p->uj[nu] = j;
        p->uv[nu++] = p->cur[j].sat;
    }
    p->st->pairs_solved += nu;
    p->st->pairs_pruned += n_eff - nu;
    p->st->pairs_pruned_scope += by_scope;
    p->st->pairs_pruned_disjoint += (bucketed ? 0 : p->nenv[e] - (nc < p->nenv[e] ? nc : p->nenv[e])) + refined;
    /* --cache: this step read back, unchanged since (prove_cache.h) */
    if (dw_prove_cache_cover(p, i, same, ncand, p->cand, nb, all)) return;
    Z3_ast u = dw_smt_or_n(p->x, p->uv, nu);
    Z3_ast goal = dw_smt_and(p->x, p->cur[i].sat, dw_smt_not(p->x, u));
    /* a candidate with i's very condition covers it: no query; else i's own
     * model or a recent one often satisfies the goal: no query either */
    bool twin = false;
    for (size_t k = 0; k < nu && !twin; k++) twin = dw_smt_same_term(p->x, p->uv[k], p->cur[i].sat);
    int r = twin ? 0 : cover_solve(p, i, p->uj, nu, goal);
    if (r < 0) {
        char who[900];
        name_rules(p, p->cand, nb, who, sizeof who);
        unknown_of(p, i, "the query whether %s %s %s", nb ? who : "no rule", nb == 1 ? "covers" : "cover", same ? "it (shadowing)" : "it (overriding)");
    }
    if (r == 1) p->ps[i].matched_here = true;
    if (r != 0) { *all = false; return; }
    if (same) p->ps[i].shadow_here = true;
    /* which single rules cover it, and which overlap it (for messages and redundancy) */
    pstate *s = &p->ps[i];
    bool **ov = same ? &s->overlap : &s->f_overlap;
    bool first = !*ov;
    if (first) {
        *ov = calloc(p->np + 1, 1);
        if (same) { s->covers = calloc(p->np + 1, 1); s->equiv = calloc(p->np + 1, 1); }
        if (!*ov || (same && (!s->covers || !s->equiv))) { *all = false; return; }
    }
    /* a guard-disjoint j neither overlaps nor covers i unless i matches nothing
     * here (own_model is cached: solve_for above asked it): then every rule of
     * the effect that applies here is asked */
    size_t nj = nb;
    const size_t *js = p->cand;
    if (own_model(p, i) != 1) { nj = p->nenv[e]; js = p->env_rules[e]; }
    /* covers and equiv hold for j only if they hold here: keep the candidates', clear the rest */
    bool *keep_c = same ? p->scratch : NULL, *keep_e = same ? p->scratch + p->np : NULL;
    if (same) {
        for (size_t k = 0; k < nj; k++) { keep_c[js[k]] = s->covers[js[k]]; keep_e[js[k]] = s->equiv[js[k]]; }
        memset(s->covers, 0, p->np);
        memset(s->equiv, 0, p->np);
    }
    for (size_t k = 0; k < nj; k++) {
        size_t j = js[k];
        /* the rule-by-rule breakdown (for messages and redundancy) costs up to three
         * queries per candidate: with many candidates only rules of the same scope */
        bool skip = ncand > 8 && !same_scope(&ps->policies[i], &ps->policies[j]);
        if (j == i || disjoint(&ps->policies[i], &ps->policies[j]) || skip) continue;
        if (own_model(p, i) == 1 && dw_smt_same_term(p->x, p->cur[i].sat, p->cur[j].sat)) {
            /* the same condition: they overlap, and each covers the other (no query) */
            (*ov)[j] = true;
            if (same) { s->covers[j] = first || keep_c[j]; s->equiv[j] = first || keep_e[j]; }
            continue;
        }
        /* two rules of one free scope: the answers are those of their conditions (prove_scope.h) */
        bool memo = p->scope_env && same_scope(&ps->policies[i], &ps->policies[j]) && p->cur[i].cond && p->cur[j].cond &&
                    dw_scope_env_is_free(p->scope_env, i) && dw_scope_env_is_free(p->scope_env, j);
        unsigned ci = memo ? dw_smt_term_id(p->x, p->cur[i].cond) : 0, cj = memo ? dw_smt_term_id(p->x, p->cur[j].cond) : 0;
        Z3_ast both = dw_smt_and(p->x, p->cur[i].sat, p->cur[j].sat);
        if (pair_solve(p, both, i, (long)j, memo, ci < cj ? ci : cj, ci < cj ? cj : ci, 0) == 1) (*ov)[j] = true;
        if (!same) continue;
        Z3_ast inotj = dw_smt_and(p->x, p->cur[i].sat, dw_smt_not(p->x, p->cur[j].sat));
        bool c = pair_solve(p, inotj, i, -1, memo, ci, cj, 1) == 0;
        s->covers[j] = (first || keep_c[j]) && c;
        Z3_ast jnoti = dw_smt_and(p->x, p->cur[j].sat, dw_smt_not(p->x, p->cur[i].sat));
        bool eq = c && (first || keep_e[j]) && pair_solve(p, jnoti, j, -1, memo, cj, ci, 1) == 0;
        s->equiv[j] = eq;
    }
}

/* the environment's rules of each effect that apply here, and their guard indexes */
static void env_index(P *p, const dw_smt_env *env)
{
    const dw_policy_set *ps = p->o->set.ps;
    for (int e = 0; e < 2; e++) {
        dw_guard_index_free(p->ix[e]);
        p->ix[e] = NULL;
        p->nenv[e] = 0;
    }
    for (size_t j = 0; j < p->np; j++) {
        if (!p->cur[j].applies || !p->cur[j].sat) continue;
        int e = ps->policies[j].effect == DW_PERMIT ? 0 : 1;
        p->env_rules[e][p->nenv[e]++] = j;
    }
    for (int e = 0; e < 2 && p->guards; e++) p->ix[e] = dw_guard_index_new(p->guards, p->env_rules[e], p->nenv[e], p->np);
    dw_scope_env_free(p->scope_env);
    p->scope_env = p->scope ? dw_scope_env_new(p->scope, env->P->name, env->R->name, p->env_rules, p->nenv) : NULL;
    dw_pair_memo_free(p->memo);
    p->memo = p->scope_env ? dw_pair_memo_new() : NULL;
}

static void diff_env(P *p, const dw_smt_policy *nv, const dw_smt_policy *ov)
{
    const dw_policy_set *ns = p->o->set.ps, *os = p->o->old.ps;
    for (size_t i = 0; i < ns->npolicies; i++) if (nv[i].applies && !nv[i].sat) p->diff_inexact = true;
    for (size_t i = 0; i < os->npolicies; i++) if (ov[i].applies && !ov[i].sat) p->diff_inexact = true;
    if (p->diff_inexact) return;
    Z3_ast an = allow_of(p, nv, ns->npolicies, ns), ao = allow_of(p, ov, os->npolicies, os);
    for (int d = 0; d < 2; d++) {
        if (p->diff_more == 1 && d == 0) continue;
        if (p->diff_less == 1 && d == 1) continue;
        Z3_ast g = d == 0 ? dw_smt_and(p->x, an, dw_smt_not(p->x, ao)) : dw_smt_and(p->x, ao, dw_smt_not(p->x, an));
        int r = dw_smt_solve(p->x, g);
        int *flag = d == 0 ? &p->diff_more : &p->diff_less;
        if (r < 0) { if (*flag == 0) *flag = -1; continue; }
        if (r == 0) continue;
        cex c, c2;
        if (take_cex(p, DW_PROVE_SET, &c)) { p->st->vm_rejected++; continue; }
        if (take_cex(p, DW_PROVE_OLD, &c2)) { dw_prove_cex_free(&c); p->st->vm_rejected++; continue; }
        bool a1, a2;
        uint8_t *o1 = NULL, *o2 = NULL;
        bool ok = !dw_prove_vm_run(p, DW_PROVE_SET, &c, &a1, &o1) && !dw_prove_vm_run(p, DW_PROVE_OLD, &c2, &a2, &o2) && a1 == (d == 0) && a2 == (d == 1);
        free(o1);
        free(o2);
        if (!ok) { p->st->vm_rejected++; dw_prove_cex_free(&c); dw_prove_cex_free(&c2); if (*flag == 0) *flag = -1; continue; }
        p->st->confirmed++;
        *flag = 1;
        p->diff_cex[d] = c;
        p->diff_old_leaves[d] = c2.leaves;
        c2.leaves = NULL;
        dw_prove_cex_free(&c2);
    }
}

static void assert_env(P *p, const dw_smt_policy *nv, const dw_smt_policy *av)
{
    const dw_policy_set *ns = p->o->set.ps, *as = p->o->asserts.ps;
    bool inexact = false;
    for (size_t i = 0; i < ns->npolicies; i++) if (nv[i].applies && !nv[i].sat) inexact = true;
    Z3_ast an = inexact ? NULL : allow_of(p, nv, ns->npolicies, ns);
    for (size_t k = 0; k < as->npolicies; k++) {
        if (p->as_state[k] == 1 || !av[k].applies) continue;
        if (!av[k].sat || !an) { p->as_state[k] = -1; continue; }
        int r = dw_smt_solve(p->x, dw_smt_and(p->x, an, av[k].sat));
        if (r < 0) { p->as_state[k] = -1; continue; }
        if (r == 0) continue;
        cex c, c2;
        if (take_cex(p, DW_PROVE_SET, &c)) { p->as_state[k] = -1; p->st->vm_rejected++; continue; }
        if (take_cex(p, DW_PROVE_ASSERT, &c2)) { dw_prove_cex_free(&c); p->as_state[k] = -1; p->st->vm_rejected++; continue; }
        bool a1, a2;
        uint8_t *o1 = NULL, *o2 = NULL;
        bool ok = !dw_prove_vm_run(p, DW_PROVE_SET, &c, &a1, &o1) && !dw_prove_vm_run(p, DW_PROVE_ASSERT, &c2, &a2, &o2) && a1 && o2[k] == DW_OUT_TRUE;
        free(o1);
        free(o2);
        dw_prove_cex_free(&c2);
        if (!ok) { dw_prove_cex_free(&c); p->as_state[k] = -1; p->st->vm_rejected++; continue; }
        p->st->confirmed++;
        p->as_state[k] = 1;
        p->as_cex[k] = c;
    }
}

/* The steps of a rule through --cache (prove_cache.h): one read back is not proved */
static void cover_step(P *p, size_t i, dw_effect effect, bool *all)
{
    cover_check(p, i, effect, all);
    dw_prove_cache_done(p, i, all);
}

static void error_step(P *p, size_t i)
{
    if (dw_prove_cache_part(p, i, DW_PROVE_PART_ERR)) return;
    forbid_may_error(p, i);
    dw_prove_cache_done(p, i, NULL);
}

static void match_step(P *p, size_t i)
{
    if (dw_prove_cache_part(p, i, DW_PROVE_PART_MATCH)) return;
    match_check(p, i);
    dw_prove_cache_done(p, i, NULL);
}

/* ------------------------------------------------------------------ environments */

typedef struct env_ref { size_t a, pi, ri; dw_smt_env env; } env_ref;

/* Prove one environment: its result in p->ps, folded into p->acc when
 * `merge` (a parallel environment's process sends it instead).  0, or -1 on
 * a solver error. */
static int prove_env(P *p, const env_ref *e, bool merge)
{
    const dw_action_decl *A = &p->o->schema->actions[e->a];
    const dw_smt_env env = e->env;
    if (dw_smt_env_begin(p->x, &env)) return -1;
    p->st->envs++;
    char env_name[400];
    snprintf(env_name, sizeof env_name, "%.*s, action \"%.*s\", %.*s", (int)A->principals[e->pi].len, A->principals[e->pi].s,
             (int)A->uid.id.len, A->uid.id.s, (int)A->resources[e->ri].len, A->resources[e->ri].s);
    p->env_name = env_name;
    encode_all(p, DW_PROVE_SET, &p->o->set, p->cur);
    env_index(p, &env);
    dw_prove_cache_env_begin(p);
    if (p->o->old.ps) encode_all(p, DW_PROVE_OLD, &p->o->old, p->cur_old);
    if (p->o->asserts.ps) encode_all(p, DW_PROVE_ASSERT, &p->o->asserts, p->cur_as);
    for (size_t i = 0; i < p->np; i++) pstate_clear(p->x, &p->ps[i]);
    for (size_t i = 0; i < p->np; i++) {
        p->ps[i].shadow_here = false;
        if (!p->cur[i].applies || !p->cur[i].sat) continue;
        error_step(p, i);
        if (p->o->set.ps->policies[i].effect == DW_PERMIT) cover_step(p, i, DW_FORBID, &p->ps[i].overridden_all);
    }
    /* later rules first: of two rules that cover each other the later is the shadowed one */
    for (size_t i = p->np; i-- > 0;) {
        if (!p->cur[i].applies || !p->cur[i].sat) continue;
        const dw_policy *pol = &p->o->set.ps->policies[i];
        if (pol->effect != DW_PERMIT || !p->ps[i].overridden_all) cover_step(p, i, pol->effect, &p->ps[i].shadowed_all);
    }
    p->forbid_any = dw_smt_bool(p->x, false);
    for (size_t i = 0; i < p->np; i++)
        if (p->cur[i].applies && p->cur[i].sat && p->o->set.ps->policies[i].effect == DW_FORBID)
            p->forbid_any = dw_smt_or(p->x, p->forbid_any, p->cur[i].sat);
    for (size_t i = 0; i < p->np; i++) match_step(p, i);
    dw_prove_cache_env_end(p);
    if (merge) for (size_t i = 0; i < p->np; i++) merge_one(p, i);
    if (p->o->old.ps) diff_env(p, p->cur, p->cur_old);
    if (p->o->asserts.ps) assert_env(p, p->cur, p->cur_as);
    return 0;
}

/* ---- -j N: environments in parallel processes ----
 * Each environment is proved from a fresh state (prove_env), so it can run in
 * a process forked for it, from the parent's encoder as it was before any
 * environment; the process sends back the rules it covered, its statistics
 * and its result (dw_prove_env_encode), and the parent folds the results in
 * environment order -- the findings are those of one process.  A process that
 * fails (a crash, a short answer) has its environment proved again in the
 * parent. */

typedef struct env_job { int pid, fd; dw_buf out; bool done, ok; } env_job;

enum { NSTAT = 15 };

static void stats_of(P *p, double *v)
{
    const dw_smt_stats *z = dw_smt_get_stats(p->x);
    double w[NSTAT] = { (double)z->queries, (double)z->sat, (double)z->unsat, (double)z->unknown, (double)z->over_budget, z->solver_ms,
                        (double)p->st->pairs_pruned, (double)p->st->pairs_pruned_disjoint, (double)p->st->pairs_solved,
                        (double)p->st->confirmed, (double)p->st->vm_rejected, (double)p->st->envs, (double)p->st->envs_cached, (double)p->st->pairs_pruned_scope, (double)p->st->pairs_memo };
    memcpy(v, w, sizeof w);
}

static void env_child(P *p, const env_ref *e, size_t index, int fd)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* DWC_PROVE_ENV_FAULT=N: the process of environment N (0-based) crashes (tests/check/solver_fault.sh) */
    const char *f = getenv("DWC_PROVE_ENV_FAULT");
    if (f && strtoul(f, NULL, 10) == index) abort();
    double before[NSTAT], after[NSTAT];
    stats_of(p, before);
    if (prove_env(p, e, false)) _exit(2);
    stats_of(p, after);
    dw_buf b = { 0 };
    size_t n = 0;
    for (size_t i = 0; i < p->np; i++) if (p->cur[i].applies) p->cand[n++] = i;
    uint8_t x[8];
    dw_put_le64(x, n);
    dw_buf_append(&b, (const char *)x, 8);
    for (size_t k = 0; k < n; k++) { dw_put_le64(x, p->cand[k]); dw_buf_append(&b, (const char *)x, 8); }
    for (int k = 0; k < NSTAT; k++) {
        uint64_t u;
        double d = after[k] - before[k];
        memcpy(&u, &d, 8);
        dw_put_le64(x, u);
        dw_buf_append(&b, (const char *)x, 8);
    }
    dw_prove_env_encode(p, p->cand, n, &b);
    if (!b.p) _exit(3);
    for (size_t off = 0; off < b.len;) {
        ssize_t k = write(fd, b.p + off, b.len - off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) _exit(4);
        off += (size_t)k;
    }
    _exit(0);
}

/* fold a process's answer into acc: false when it is not one */
static bool env_fold(P *p, const env_job *j, double *stat)
{
    const uint8_t *d = (const uint8_t *)j->out.p;
    size_t len = j->out.len;
    if (!j->ok || len < 8) return false;
    uint64_t n = dw_le64(d);
    if (n > p->np || len < 8 + 8 * n + 8 * NSTAT) return false;
    size_t *list = p->uj;
    for (size_t k = 0; k < n; k++) { list[k] = (size_t)dw_le64(d + 8 + 8 * k); if (list[k] >= p->np) return false; }
    const uint8_t *sv = d + 8 + 8 * n;
    for (size_t i = 0; i < p->np; i++) pstate_clear(p->x, &p->ps[i]);
    if (!dw_prove_env_decode(p, list, n, sv + 8 * NSTAT, len - 8 - 8 * n - 8 * NSTAT)) return false;
    for (int k = 0; k < NSTAT; k++) { uint64_t u = dw_le64(sv + 8 * k); double v; memcpy(&v, &u, 8); stat[k] += v; }
    for (size_t i = 0; i < p->np; i++) merge_one(p, i);
    return true;
}

static int prove_parallel(P *p, const env_ref *envs, size_t n, unsigned jobs)
{
    env_job *j = calloc(n + 1, sizeof *j);
    double stat[NSTAT] = { 0 };
    if (!j) return -1;
    size_t next = 0, folded = 0, running = 0;
    int rc = 0;
    while (folded < n && !rc) {
        while (running < jobs && next < n) {
            int fds[2];
            if (pipe2(fds, O_CLOEXEC)) { j[next].done = true; next++; continue; }   /* proved in the parent */
            int pid = fork();
            if (pid == 0) { close(fds[0]); env_child(p, &envs[next], next, fds[1]); }
            close(fds[1]);
            if (pid < 0) { close(fds[0]); j[next].done = true; next++; continue; }
            j[next].pid = pid;
            j[next].fd = fds[0];
            running++;
            next++;
        }
        struct pollfd pf[64];
        size_t map[64], np_ = 0;
        for (size_t k = folded; k < next && np_ < 64; k++)
            if (!j[k].done) { pf[np_] = (struct pollfd){ j[k].fd, POLLIN, 0 }; map[np_++] = k; }
        if (np_ && poll(pf, (nfds_t)np_, -1) < 0 && errno != EINTR) rc = -1;
        for (size_t q = 0; q < np_; q++) {
            if (!(pf[q].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            env_job *e = &j[map[q]];
            char buf[65536];
            ssize_t k = read(e->fd, buf, sizeof buf);
            if (k > 0) { if (dw_buf_append(&e->out, buf, (size_t)k)) rc = -1; continue; }
            if (k < 0 && errno == EINTR) continue;
            close(e->fd);
            int st = 0;
            while (waitpid(e->pid, &st, 0) < 0 && errno == EINTR) {}
            e->done = true;
            e->ok = k == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
            running--;
        }
        /* in environment order */
        while (folded < n && j[folded].done && !rc) {
            if (!env_fold(p, &j[folded], stat)) rc = prove_env(p, &envs[folded], true);
            dw_buf_free(&j[folded].out);
            folded++;
        }
    }
    for (size_t k = folded; k < next; k++)
        if (!j[k].done) { close(j[k].fd); kill(j[k].pid, SIGKILL); while (waitpid(j[k].pid, NULL, 0) < 0 && errno == EINTR) {} }
    for (size_t k = 0; k < n; k++) dw_buf_free(&j[k].out);
    free(j);
    p->par_stats[0] += stat[0]; p->par_stats[1] += stat[1]; p->par_stats[2] += stat[2]; p->par_stats[3] += stat[3];
    p->par_stats[4] += stat[4]; p->par_stats[5] += stat[5];
    p->st->pairs_pruned += (size_t)stat[6];
    p->st->pairs_pruned_disjoint += (size_t)stat[7];
    p->st->pairs_solved += (size_t)stat[8];
    p->st->confirmed += (size_t)stat[9];
    p->st->vm_rejected += (size_t)stat[10];
    p->st->envs += (size_t)stat[11];
    p->st->envs_cached += (size_t)stat[12];
    p->st->pairs_pruned_scope += (size_t)stat[13];
    p->st->pairs_memo += (size_t)stat[14];
    return rc;
}
/* ------------------------------------------------------------------ driver */

int dw_prove_run(const dw_prove_options *o, dw_findings *out, dw_prove_stats *st)
{
    double t0 = now_ms();
    memset(st, 0, sizeof *st);
    P p = { .o = o, .out = out, .st = st };
    p.np = o->set.ps->npolicies;
    st->policies = p.np;
    p.x = dw_smt_new(o->schema, o->timeout_ms);
    if (!p.x) return -1;
    dw_smt_allow_bytes(p.x, o->set.src->text, o->set.src->len);
    if (o->old.ps) dw_smt_allow_bytes(p.x, o->old.src->text, o->old.src->len);
    if (o->asserts.ps) dw_smt_allow_bytes(p.x, o->asserts.src->text, o->asserts.src->len);
    size_t nold = o->old.ps ? o->old.ps->npolicies : 0, nas = o->asserts.ps ? o->asserts.ps->npolicies : 0;
    p.ps = calloc(p.np + 1, sizeof *p.ps);
    p.acc = calloc(p.np + 1, sizeof *p.acc);
    p.cur = calloc(p.np + 1, sizeof *p.cur);
    p.uv = calloc(p.np + 1, sizeof *p.uv);
    p.cur_old = calloc(nold + 1, sizeof *p.cur_old);
    p.cur_as = calloc(nas + 1, sizeof *p.cur_as);
    p.as_state = calloc(nas + 1, sizeof *p.as_state);
    p.as_cex = calloc(nas + 1, sizeof *p.as_cex);
    int rc = -1;
    if (!p.ps || !p.acc || !p.uv || !p.cur || !p.cur_old || !p.cur_as || !p.as_state || !p.as_cex) goto done;
    /* DWC_CHECK_NO_PRUNE: no literal guards, so no guard pruning, index or
     * split, and no scope keys, so no scope pruning or shared pair answers:
     * the reference the fast path is compared with (tests/check/fast_path.sh) */
    p.guards = getenv("DWC_CHECK_NO_PRUNE") ? NULL : calloc(p.np + 1, sizeof *p.guards);
    for (size_t i = 0; p.guards && i < p.np; i++) dw_guards_of_policy(&o->set.ps->policies[i], &p.guards[i]);
    if (dw_prove_cache_init(&p)) goto done;
    p.scope = getenv("DWC_CHECK_NO_PRUNE") ? NULL : dw_scope_info_new(o->set.ps->policies, p.np);
    p.env_rules[0] = calloc(p.np + 1, sizeof *p.env_rules[0]);
    p.env_rules[1] = calloc(p.np + 1, sizeof *p.env_rules[1]);
    p.cand = calloc(p.np + 1, sizeof *p.cand);
    p.scratch = calloc(2 * p.np + 1, 1);
    p.uj = calloc(p.np + 1, sizeof *p.uj);
    p.uv2 = calloc(p.np + 1, sizeof *p.uv2);
    p.meet = calloc((p.np + 1) * DW_GUARD_MAX_ALT, 1);
    if (!p.env_rules[0] || !p.env_rules[1] || !p.cand || !p.scratch || !p.uj || !p.uv2 || !p.meet) goto done;
    for (size_t i = 0; i < p.np; i++) p.neffect[o->set.ps->policies[i].effect == DW_PERMIT ? 0 : 1]++;
    if (o->budget_s > 0) dw_smt_set_deadline(p.x, dw_smt_now_ms() + o->budget_s * 1e3, o->budget_s);
    for (size_t i = 0; i < p.np; i++) {
        pstate_clear(p.x, &p.ps[i]);
        pstate_clear(p.x, &p.acc[i]);
    }
    const dw_schema *s = o->schema;
    env_ref *envs = calloc(1, sizeof *envs);
    size_t nenvs = 0;
    for (size_t a = 0; envs && a < s->nactions; a++) {
        const dw_action_decl *A = &s->actions[a];
        if (!A->has_applies_to) continue;
        for (size_t pi = 0; envs && pi < A->nprincipals; pi++)
            for (size_t ri = 0; envs && ri < A->nresources; ri++) {
                dw_smt_env env = { dw_schema_entity(s, A->principals[pi].s, A->principals[pi].len),
                                   dw_schema_entity(s, A->resources[ri].s, A->resources[ri].len), A };
                if (!env.P || !env.R) continue;
                env_ref *nv = realloc(envs, (nenvs + 1) * sizeof *nv);
                if (!nv) { free(envs); envs = NULL; break; }
                envs = nv;
                envs[nenvs++] = (env_ref){ a, pi, ri, env };
            }
    }
    if (!envs) goto done;
    unsigned jobs = o->jobs ? o->jobs : 1;
    if (o->old.ps || o->asserts.ps || nenvs < 2) jobs = 1;   /* --against, --assert: one process */
    int er = jobs > 1 ? prove_parallel(&p, envs, nenvs, jobs) : 0;
    for (size_t k = 0; jobs == 1 && k < nenvs && !er; k++) er = prove_env(&p, &envs[k], true);
    free(envs);
    if (er) goto done;
    for (size_t i = 0; i < p.np; i++) {
        if (!p.acc[i].encodable) st->unencodable++;
        else if (p.acc[i].approx) st->approximated++;
        if (o->decided) o->decided[i] = p.acc[i].encodable && !p.acc[i].approx && !p.acc[i].unknown && p.acc[i].napplies > 0;
    }
    dw_prove_report_set(&p);
    if (o->old.ps) dw_prove_report_diff(&p);
    if (o->asserts.ps) dw_prove_report_asserts(&p);
    rc = 0;
done:;
    const dw_smt_stats *zs = dw_smt_get_stats(p.x);
    st->queries = zs->queries + (size_t)p.par_stats[0];
    st->sat = zs->sat + (size_t)p.par_stats[1];
    st->unsat = zs->unsat + (size_t)p.par_stats[2];
    st->unknown = zs->unknown + (size_t)p.par_stats[3];
    st->over_budget = zs->over_budget + (size_t)p.par_stats[4];
    st->solver_ms = zs->solver_ms + p.par_stats[5];
    for (size_t i = 0; p.ps && i < p.np; i++) pstate_clear(p.x, &p.ps[i]);
    for (size_t i = 0; p.acc && i < p.np; i++) pstate_clear(p.x, &p.acc[i]);
    for (size_t k = 0; p.as_cex && k < nas; k++) dw_prove_cex_free(&p.as_cex[k]);
    dw_prove_cex_free(&p.diff_cex[0]);
    dw_prove_cex_free(&p.diff_cex[1]);
    free(p.diff_old_leaves[0]);
    free(p.diff_old_leaves[1]);
    free(p.ps);
    free(p.acc);
    free(p.guards);
    free(p.env_rules[0]);
    free(p.env_rules[1]);
    free(p.cand);
    free(p.scratch);
    free(p.uj);
    free(p.uv2);
    free(p.meet);
    dw_guard_index_free(p.ix[0]);
    dw_guard_index_free(p.ix[1]);
    dw_scope_env_free(p.scope_env);
    dw_pair_memo_free(p.memo);
    dw_scope_info_free(p.scope);
    free(p.uv);
    free(p.cur);
    free(p.cur_old);
    free(p.cur_as);
    free(p.as_state);
    free(p.as_cex);
    dw_prove_cache_free(&p);
    dw_smt_free(p.x);
    st->total_ms = now_ms() - t0;
    return rc;
}
