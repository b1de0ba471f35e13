/* prove.c - the proofs of `dwc check` (see prove.h and docs/CHECK.md). */
#include "prove.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "macros.h"
#include "prove_guard.h"
#include "smt.h"
#include "../stdlib/ext.h"

typedef struct cex { char *req, *ents; uint8_t *leaves; uint32_t nleaves; } cex;

/* per policy of the set, accumulated over environments */
typedef struct pstate {
    bool encodable, approx;
    size_t napplies;              /* environments whose scope admits the policy */
    bool may_match;               /* sat somewhere */
    bool always_all;              /* never false in every environment it applies to */
    bool unknown;                 /* some query of it timed out */
    char *why;                    /* the first such query's reason (dw_smt_unknown_reason) */
    bool err_found;               /* forbid-may-error reported */
    bool overridden_all, shadowed_all;
    bool *covers;                 /* [j]: policy j alone covers this one in every env (or NULL) */
    bool *overlap;                /* [j]: j (same effect) and this policy both match some request */
    bool *f_overlap;              /* [j]: forbid j and this permit both match some request */
    bool *equiv;                  /* [j]: j matches exactly the requests this one matches, in every env */
    bool shadow_here;             /* covered by other rules in the current environment */
    cex witness;                  /* a request the policy matches (VM-confirmed) */
    bool have_witness;
    bool matched_here;            /* a query of this environment found a request it matches */
    int own_r;                    /* this environment: 1 `own` is a request it matches, 0 none, -1 unknown, 2 not asked */
    dw_smt_model *own;
} pstate;


typedef struct P {
    const dw_prove_options *o;
    dw_smt *x;
    dw_findings *out;
    dw_prove_stats *st;
    size_t np;
    pstate *ps;
    dw_guards *guards;            /* per policy of the set (NULL: none computed) */
    size_t *env_rules[2], nenv[2];  /* this environment's rules that apply, permits [0] and forbids [1] */
    size_t neffect[2];            /* the set's permits and forbids */
    dw_guard_index *ix[2];        /* the guard index of env_rules[e] (NULL: none) */
    size_t *cand;                 /* scratch: candidates of a rule */
    size_t *uj;                   /* scratch: the rules of a cover query */
    Z3_ast *uv2;                  /* scratch: the terms of one alternative's cover query */
    bool *meet;                   /* scratch: np x DW_GUARD_MAX_ALT */
    bool *scratch;                /* scratch: 2 x np */
    const char *env_name;         /* the current environment, for messages */
    Z3_ast *uv;                   /* scratch: the candidates of a cover query */
    dw_smt_policy *cur;           /* set policies in the current environment */
    dw_smt_policy *cur_old, *cur_as;
    Z3_ast forbid_any;            /* some forbid of the set holds (current environment) */
    bool *vm_err;                 /* scratch outcome buffer owner */
    /* --against, --assert */
    int diff_more, diff_less;     /* 0 none, 1 confirmed, -1 unknown */
    cex diff_cex[2];
    uint8_t *diff_old_leaves[2];  /* the old set's leaf values in diff_cex[d] */
    int *as_state;                /* per assertion: 0 proved so far, 1 refuted, -1 unknown */
    cex *as_cex;
    bool diff_inexact;
} P;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void cex_free(cex *c) { free(c->req); free(c->ents); free(c->leaves); memset(c, 0, sizeof *c); }

static const char *pname(const dw_policy *p, size_t i, char *buf, size_t cap)
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
    if (!c->leaves) { cex_free(c); return -1; }
    for (uint32_t i = 0; i < prog->npolicies && i < in->ps->npolicies; i++) {
        const dw_policy_code *pc = &prog->policies[i];
        for (uint32_t k = 0; k < pc->nleaves; k++)
            c->leaves[pc->first_leaf + k] = (uint8_t)dw_smt_model_leaf(p->x, (unsigned)(which * 1000000 + i), k);
    }
    return 0;
}

/* Run c on program `which`; outcome has one byte per policy. */
static int vm_run(P *p, int which, const cex *c, bool *allow, uint8_t **outcome)
{
    const dw_prove_input *in = which == DW_PROVE_SET ? &p->o->set : which == DW_PROVE_OLD ? &p->o->old : &p->o->asserts;
    uint8_t *o = calloc(in->prog->npolicies + 1, 1);
    if (!o) return -1;
    /* the leaf values were taken for this program's tags */
    if (p->o->vm.decide(p->o->vm.ud, which, c->req, c->ents, c->leaves, c->nleaves, allow, o)) { free(o); return -1; }
    *outcome = o;
    return 0;
}

static void add_finding(P *p, const dw_source *src, const char *rule, int sev, dw_loc loc, long policy, const char *hint,
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
    /* (s_eq: an empty string may have a NULL pointer) */
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
                              pname(&p->o->set.ps->policies[cand[c]], cand[c], nb, sizeof nb));
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
    bool allow;
    uint8_t *o = NULL;
    if (vm_run(p, DW_PROVE_SET, &c, &allow, &o) || o[i] != DW_OUT_ERROR) {
        free(o);
        p->st->vm_rejected++;
        cex_free(&c);
        return;
    }
    free(o);
    p->st->confirmed++;
    s->err_found = true;
    char nb[256], msg[512];
    snprintf(msg, sizeof msg,
             "forbid %s may error, and Cedar skips an erroring forbid: for the request below its condition raises an error "
             "(overflow, a missing entity or attribute, or an extension error), so it does not deny",
             pname(pol, i, nb, sizeof nb));
    add_finding(p, p->o->set.src, "dw-forbid-may-error", -1, pol->effect_loc, (long)i,
                "guard the failing operation (`has`, a range check before arithmetic, a literal extension argument) so the condition cannot error",
                msg, &c);
    cex_free(&c);
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
    bool allow;
    uint8_t *o = NULL;
    if (!vm_run(p, DW_PROVE_SET, &c, &allow, &o) && o[i] == DW_OUT_TRUE) { s->witness = c; s->have_witness = true; }
    else { cex_free(&c); p->st->vm_rejected++; }
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
    size_t nc = env_candidates(p, i, e), nb = 0, nu = 0, refined = 0;
    for (size_t k = 0; k < nc; k++) {
        size_t j = p->cand[k];
        if (j == i || disjoint(&ps->policies[i], &ps->policies[j])) continue;
        if (guard_disjoint(p, i, j)) { refined++; continue; }
        p->cand[nb++] = j;                  /* for the breakdown below */
        if (same && p->ps[j].shadow_here) continue;
        p->uj[nu] = j;
        p->uv[nu++] = p->cur[j].sat;
    }
    p->st->pairs_solved += nu;
    p->st->pairs_pruned += n_eff - nu;
    p->st->pairs_pruned_disjoint += p->nenv[e] - (nc < p->nenv[e] ? nc : p->nenv[e]) + refined;
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
        Z3_ast both = dw_smt_and(p->x, p->cur[i].sat, p->cur[j].sat);
        if (solve_for(p, both, i, (long)j) == 1) (*ov)[j] = true;
        if (!same) continue;
        Z3_ast inotj = dw_smt_and(p->x, p->cur[i].sat, dw_smt_not(p->x, p->cur[j].sat));
        bool c = solve_for(p, inotj, i, -1) == 0;
        s->covers[j] = (first || keep_c[j]) && c;
        Z3_ast jnoti = dw_smt_and(p->x, p->cur[j].sat, dw_smt_not(p->x, p->cur[i].sat));
        bool eq = c && (first || keep_e[j]) && solve_for(p, jnoti, j, -1) == 0;
        s->equiv[j] = eq;
    }
}

/* the environment's rules of each effect that apply here, and their guard indexes */
static void env_index(P *p)
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
        if (take_cex(p, DW_PROVE_OLD, &c2)) { cex_free(&c); p->st->vm_rejected++; continue; }
        bool a1, a2;
        uint8_t *o1 = NULL, *o2 = NULL;
        bool ok = !vm_run(p, DW_PROVE_SET, &c, &a1, &o1) && !vm_run(p, DW_PROVE_OLD, &c2, &a2, &o2) && a1 == (d == 0) && a2 == (d == 1);
        free(o1);
        free(o2);
        if (!ok) { p->st->vm_rejected++; cex_free(&c); cex_free(&c2); if (*flag == 0) *flag = -1; continue; }
        p->st->confirmed++;
        *flag = 1;
        p->diff_cex[d] = c;
        p->diff_old_leaves[d] = c2.leaves;
        c2.leaves = NULL;
        cex_free(&c2);
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
        if (take_cex(p, DW_PROVE_ASSERT, &c2)) { cex_free(&c); p->as_state[k] = -1; p->st->vm_rejected++; continue; }
        bool a1, a2;
        uint8_t *o1 = NULL, *o2 = NULL;
        bool ok = !vm_run(p, DW_PROVE_SET, &c, &a1, &o1) && !vm_run(p, DW_PROVE_ASSERT, &c2, &a2, &o2) && a1 && o2[k] == DW_OUT_TRUE;
        free(o1);
        free(o2);
        cex_free(&c2);
        if (!ok) { cex_free(&c); p->as_state[k] = -1; p->st->vm_rejected++; continue; }
        p->st->confirmed++;
        p->as_state[k] = 1;
        p->as_cex[k] = c;
    }
}

/* ------------------------------------------------------------------ reports */

static char *list_rules(P *p, const bool *who, size_t skip)
{
    dw_buf b = { 0 };
    size_t n = 0, k = 0;
    for (size_t j = 0; j < p->np; j++) if (who[j] && j != skip) n++;
    char nb[256];
    for (size_t j = 0; j < p->np; j++) {
        if (!who[j] || j == skip) continue;
        dw_buf_printf(&b, "%s%s", k == 0 ? "" : k + 1 == n ? " and " : ", ", pname(&p->o->set.ps->policies[j], j, nb, sizeof nb));
        k++;
    }
    if (!b.p) return strdup("other rules");
    return b.p;
}

/* The witness must show the fact on the VM: the rule matches it and the
 * decision (or the covering rule) is as proved. */
static bool witness_agrees(P *p, size_t i, int kind, long other)
{
    pstate *s = &p->ps[i];
    if (!s->have_witness) return false;
    bool allow;
    uint8_t *o = NULL;
    if (vm_run(p, DW_PROVE_SET, &s->witness, &allow, &o)) return false;
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
    if (ok) p->st->confirmed++;
    else p->st->vm_rejected++;
    return ok;
}

static void report_set(P *p)
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
        pstate *sj = &p->ps[j];
        if (!sj->shadowed_all || !sj->covers) continue;
        for (size_t i = 0; i < j; i++) {
            /* equivalent wherever j applies, and i applies nowhere else */
            if (!sj->equiv || !sj->equiv[i] || ps->policies[i].effect != ps->policies[j].effect) continue;
            if (p->ps[i].napplies != sj->napplies) continue;
            twin_later[j] = true;
            twin_earlier[i] = true;
            twin_of[j] = (long)i;
            break;
        }
    }
    for (size_t i = 0; i < p->np; i++) {
        const dw_policy *pol = &ps->policies[i];
        pstate *s = &p->ps[i];
        const char *eff = pol->effect == DW_PERMIT ? "permit" : "forbid";
        free(msg);
        msg = NULL;
        if (!s->encodable || pol->is_template) continue;
        if (s->unknown && !s->err_found) {
            if (asprintf(&msg, "%s %s: a proof was not decided (%s); nothing is claimed about it", eff, pname(pol, i, nb, sizeof nb),
                         s->why ? s->why : "Z3 answered unknown") < 0) msg = NULL;
            else add_finding(p, src, "dw-proof-unknown", -1, pol->effect_loc, (long)i, "raise --timeout or --budget, or split the rule", msg, NULL);
            continue;
        }
        if (!s->napplies) continue;   /* no environment: the validator reports it */
        if (!s->may_match) {
            if (p->o->impossible_reported && p->o->impossible_reported[i]) continue;
            if (asprintf(&msg, "%s %s is vacuous: it matches no request valid under the schema (proved in %zu environment%s)", eff,
                         pname(pol, i, nb, sizeof nb), s->napplies, s->napplies == 1 ? "" : "s") < 0) msg = NULL;
            else add_finding(p, src, "dw-vacuous", -1, pol->effect_loc, (long)i, "remove the rule, or fix the condition that can never hold", msg, NULL);
            continue;
        }
        if (!s->have_witness) continue;   /* the VM never matched it: claim nothing */
        if (s->always_all && !s->approx && !(p->o->always_reported && p->o->always_reported[i])) {
            if (witness_agrees(p, i, -1, -1) &&
                asprintf(&msg, "%s %s is vacuous: its condition holds for every request its scope admits (proved in %zu environment%s)",
                         eff, pname(pol, i, nb, sizeof nb), s->napplies, s->napplies == 1 ? "" : "s") >= 0)
                add_finding(p, src, "dw-vacuous", DW_LINT_INFO, pol->effect_loc, (long)i, "drop the condition, or fix it to test what was meant", msg, NULL);
            else msg = NULL;
        }
        if (pol->effect == DW_PERMIT && s->overridden_all && s->f_overlap) {
            if (!witness_agrees(p, i, 0, -1)) continue;
            char *who = list_rules(p, s->f_overlap, i);
            if (asprintf(&msg, "permit %s never takes effect: every request it allows is denied by %s (proved in %zu environment%s)",
                         pname(pol, i, nb, sizeof nb), who, s->napplies, s->napplies == 1 ? "" : "s") < 0) msg = NULL;
            else add_finding(p, src, "dw-overridden-permit", -1, pol->effect_loc, (long)i, "remove the permit, or narrow the forbid", msg, &s->witness);
            free(who);
            continue;
        }
        if (twin_later[i]) {
            long t = twin_of[i];
            if (!witness_agrees(p, i, 2, t)) continue;
            if (asprintf(&msg, "%s %s is redundant: it is equivalent to %s (they match exactly the same requests)", eff,
                         pname(pol, i, nb, sizeof nb), pname(&ps->policies[t], (size_t)t, nb2, sizeof nb2)) < 0) msg = NULL;
            else add_finding(p, src, "dw-redundant", -1, pol->effect_loc, (long)i, "remove one of the two rules", msg, &s->witness);
            continue;
        }
        if (twin_earlier[i]) continue;
        if (s->shadowed_all && s->overlap) {
            if (!witness_agrees(p, i, 1, -1)) continue;
            bool single = false;
            for (size_t j = 0; s->covers && j < p->np; j++) single = single || s->covers[j];
            char *who = list_rules(p, single ? s->covers : s->overlap, i);
            if (asprintf(&msg, "%s %s is shadowed: every request it %s is also %s by %s (proved in %zu environment%s)", eff,
                         pname(pol, i, nb, sizeof nb), pol->effect == DW_PERMIT ? "allows" : "denies",
                         pol->effect == DW_PERMIT ? "allowed" : "denied", who, s->napplies, s->napplies == 1 ? "" : "s") < 0) msg = NULL;
            else add_finding(p, src, pol->effect == DW_PERMIT ? "dw-shadowed-permit" : "dw-shadowed-forbid", -1, pol->effect_loc, (long)i,
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
                          side ? "old" : "new", txt ? txt : "?", pname(&in->ps->policies[r->policy], r->policy, nb, sizeof nb),
                          r->e->loc.line, vals ? (vals[r->index] ? " true" : " false") : "", vals ? " here" : "");
            free(txt);
        }
    }
}

static void report_diff(P *p)
{
    const char *old = p->o->old.src->name;
    dw_loc at = { 1, 1, 0, 0 };
    char *msg = NULL;
    if (p->diff_inexact) {
        if (asprintf(&msg, "the comparison with %s is unknown: a rule could not be encoded", old) >= 0)
            add_finding(p, p->o->set.src, "dw-diff", DW_LINT_INFO, at, -1, "see docs/CHECK.md for what the encoder supports", msg, NULL);
        free(msg);
        return;
    }
    if (p->diff_more != 1 && p->diff_less != 1) {
        bool unknown = p->diff_more < 0 || p->diff_less < 0;
        if (asprintf(&msg, unknown ? "the comparison with %s is unknown: a query timed out or a candidate was not confirmed by the VM"
                                   : "the set is equivalent to %s: it allows exactly the same requests (proved in every environment)", old) >= 0)
            add_finding(p, p->o->set.src, "dw-diff", DW_LINT_INFO, at, -1, NULL, msg, NULL);
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
        add_finding(p, p->o->set.src, "dw-diff", d == 0 ? DW_LINT_WARNING : DW_LINT_INFO, first ? first->e->loc : at,
                    first ? (long)first->policy : -1,
                    d == 0 ? "check that the new requests are meant to be allowed" : "check that the requests are meant to be denied now", msg,
                    &p->diff_cex[d]);
        free(msg);
    }
    free(nl.v);
    free(ol.v);
}

static void report_asserts(P *p)
{
    const dw_policy_set *as = p->o->asserts.ps;
    char nb[256];
    for (size_t k = 0; k < as->npolicies; k++) {
        const dw_policy *a = &as->policies[k];
        char *msg = NULL;
        if (a->effect != DW_FORBID) {
            if (asprintf(&msg, "assertion %s is a permit: assertions are forbid-shaped (\"the set never allows ...\")", pname(a, k, nb, sizeof nb)) >= 0)
                add_finding(p, p->o->asserts.src, "dw-assertion-refuted", DW_LINT_ERROR, a->effect_loc, (long)k, "write the assertion as a forbid", msg, NULL);
        } else if (p->as_state[k] == 1) {
            if (asprintf(&msg, "assertion %s is refuted: the set allows the request below, which the assertion says it never allows", pname(a, k, nb, sizeof nb)) >= 0)
                add_finding(p, p->o->asserts.src, "dw-assertion-refuted", -1, a->effect_loc, (long)k, "add a forbid for these requests, or narrow the permits that allow them", msg, &p->as_cex[k]);
        } else if (p->as_state[k] < 0) {
            if (asprintf(&msg, "assertion %s is unknown: a query timed out, a rule could not be encoded, or a candidate was not confirmed by the VM", pname(a, k, nb, sizeof nb)) >= 0)
                add_finding(p, p->o->asserts.src, "dw-proof-unknown", DW_LINT_INFO, a->effect_loc, (long)k, NULL, msg, NULL);
        } else if (asprintf(&msg, "assertion %s is proved: the set never allows a request it matches", pname(a, k, nb, sizeof nb)) >= 0)
            add_finding(p, p->o->asserts.src, "dw-assertion-proved", -1, a->effect_loc, (long)k, NULL, msg, NULL);
        free(msg);
    }
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
    p.cur = calloc(p.np + 1, sizeof *p.cur);
    p.uv = calloc(p.np + 1, sizeof *p.uv);
    p.cur_old = calloc(nold + 1, sizeof *p.cur_old);
    p.cur_as = calloc(nas + 1, sizeof *p.cur_as);
    p.as_state = calloc(nas + 1, sizeof *p.as_state);
    p.as_cex = calloc(nas + 1, sizeof *p.as_cex);
    int rc = -1;
    if (!p.ps || !p.uv || !p.cur || !p.cur_old || !p.cur_as || !p.as_state || !p.as_cex) goto done;
    /* DWC_CHECK_NO_PRUNE: no literal guards, so no guard pruning, index or
     * split: the reference the fast path is compared with (tests/check/fast_path.sh) */
    p.guards = getenv("DWC_CHECK_NO_PRUNE") ? NULL : calloc(p.np + 1, sizeof *p.guards);
    for (size_t i = 0; p.guards && i < p.np; i++) dw_guards_of_policy(&o->set.ps->policies[i], &p.guards[i]);
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
        p.ps[i].encodable = true;
        p.ps[i].always_all = true;
        p.ps[i].overridden_all = p.ps[i].shadowed_all = true;
    }
    const dw_schema *s = o->schema;
    for (size_t a = 0; a < s->nactions; a++) {
        const dw_action_decl *A = &s->actions[a];
        if (!A->has_applies_to) continue;
        for (size_t pi = 0; pi < A->nprincipals; pi++)
            for (size_t ri = 0; ri < A->nresources; ri++) {
                dw_smt_env env = { dw_schema_entity(s, A->principals[pi].s, A->principals[pi].len),
                                   dw_schema_entity(s, A->resources[ri].s, A->resources[ri].len), A };
                if (!env.P || !env.R) continue;
                /* prune: skip an environment no rule's scope admits */
                if (dw_smt_env_begin(p.x, &env)) goto done;
                st->envs++;
                char env_name[400];
                snprintf(env_name, sizeof env_name, "%.*s, action \"%.*s\", %.*s", (int)A->principals[pi].len, A->principals[pi].s,
                         (int)A->uid.id.len, A->uid.id.s, (int)A->resources[ri].len, A->resources[ri].s);
                p.env_name = env_name;
                encode_all(&p, DW_PROVE_SET, &o->set, p.cur);
                env_index(&p);
                if (o->old.ps) encode_all(&p, DW_PROVE_OLD, &o->old, p.cur_old);
                if (o->asserts.ps) encode_all(&p, DW_PROVE_ASSERT, &o->asserts, p.cur_as);
                for (size_t i = 0; i < p.np; i++) {
                    dw_smt_model_free(p.x, p.ps[i].own);
                    p.ps[i].own = NULL;
                    p.ps[i].own_r = 2;
                }
                for (size_t i = 0; i < p.np; i++) {
                    p.ps[i].shadow_here = false;
                    if (!p.cur[i].applies || !p.cur[i].sat) continue;
                    forbid_may_error(&p, i);
                    if (o->set.ps->policies[i].effect == DW_PERMIT) cover_check(&p, i, DW_FORBID, &p.ps[i].overridden_all);
                }
                /* later rules first: of two rules that cover each other the later is the shadowed one */
                for (size_t i = p.np; i-- > 0;) {
                    if (!p.cur[i].applies || !p.cur[i].sat) continue;
                    const dw_policy *pol = &o->set.ps->policies[i];
                    if (pol->effect != DW_PERMIT || !p.ps[i].overridden_all) cover_check(&p, i, pol->effect, &p.ps[i].shadowed_all);
                }
                p.forbid_any = dw_smt_bool(p.x, false);
                for (size_t i = 0; i < p.np; i++)
                    if (p.cur[i].applies && p.cur[i].sat && o->set.ps->policies[i].effect == DW_FORBID)
                        p.forbid_any = dw_smt_or(p.x, p.forbid_any, p.cur[i].sat);
                for (size_t i = 0; i < p.np; i++) match_check(&p, i);
                if (o->old.ps) diff_env(&p, p.cur, p.cur_old);
                if (o->asserts.ps) assert_env(&p, p.cur, p.cur_as);
            }
    }
    for (size_t i = 0; i < p.np; i++) {
        if (!p.ps[i].encodable) st->unencodable++;
        else if (p.ps[i].approx) st->approximated++;
        if (o->decided) o->decided[i] = p.ps[i].encodable && !p.ps[i].approx && !p.ps[i].unknown && p.ps[i].napplies > 0;
    }
    report_set(&p);
    if (o->old.ps) report_diff(&p);
    if (o->asserts.ps) report_asserts(&p);
    rc = 0;
done:;
    const dw_smt_stats *zs = dw_smt_get_stats(p.x);
    st->queries = zs->queries;
    st->sat = zs->sat;
    st->unsat = zs->unsat;
    st->unknown = zs->unknown;
    st->over_budget = zs->over_budget;
    st->solver_ms = zs->solver_ms;
    for (size_t i = 0; p.ps && i < p.np; i++) { dw_smt_model_free(p.x, p.ps[i].own); free(p.ps[i].covers); free(p.ps[i].overlap); free(p.ps[i].f_overlap); free(p.ps[i].equiv); free(p.ps[i].why); cex_free(&p.ps[i].witness); }
    for (size_t k = 0; p.as_cex && k < nas; k++) cex_free(&p.as_cex[k]);
    cex_free(&p.diff_cex[0]);
    cex_free(&p.diff_cex[1]);
    free(p.diff_old_leaves[0]);
    free(p.diff_old_leaves[1]);
    free(p.ps);
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
    free(p.uv);
    free(p.cur);
    free(p.cur_old);
    free(p.cur_as);
    free(p.as_state);
    free(p.as_cex);
    dw_smt_free(p.x);
    st->total_ms = now_ms() - t0;
    return rc;
}
