/* prove_impl.h - what the proofs' files share (prove.c: the queries per
 * environment; prove_report.c: the findings; prove_cache.c: environment
 * results kept between runs).  Not an API. */
#ifndef DW_PROVE_IMPL_H
#define DW_PROVE_IMPL_H
#include "prove.h"
#include "prove_guard.h"
#include "prove_scope.h"
#include "smt.h"

typedef struct cex { char *req, *ents; uint8_t *leaves; uint32_t nleaves; } cex;

/* per policy of the set: what one environment established (P.ps, from a
 * fresh state each environment), and the same accumulated over the
 * environments (P.acc, prove.c merge_one) */
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
    cex err_cex;                  /* with err_found: the request that makes it error */
} pstate;


typedef struct P {
    const dw_prove_options *o;
    dw_smt *x;
    dw_findings *out;
    dw_prove_stats *st;
    size_t np;
    pstate *ps;                   /* this environment */
    pstate *acc;                  /* every environment so far */
    double par_stats[6];          /* solver statistics of the parallel environments' processes */
    dw_guards *guards;            /* per policy of the set (NULL: none computed) */
    size_t *env_rules[2], nenv[2];  /* this environment's rules that apply, permits [0] and forbids [1] */
    size_t neffect[2];            /* the set's permits and forbids */
    dw_guard_index *ix[2];        /* the guard index of env_rules[e] (NULL: none) */
    dw_scope_info *scope;         /* the set's scope targets (NULL: no scope pruning) */
    dw_scope_env *scope_env;      /* this environment's scope keys and index (NULL: none) */
    dw_pair_memo *memo;           /* this environment's answers of pair queries by their conditions */
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
    struct dw_prove_cache *cache; /* --cache (prove_cache.h; NULL: none) */
} P;

void dw_prove_cex_free(cex *c);
/* "rule @id(\"x\")" or "rule policy_<i>" */
const char *dw_prove_pname(const dw_policy *p, size_t i, char *buf, size_t cap);
/* Run c on program `which`; *outcome (heap): one byte per policy. */
int dw_prove_vm_run(P *p, int which, const cex *c, bool *allow, uint8_t **outcome);
/* The same for the policies only[0..nonly) (the other bytes DW_OUT_FALSE),
 * and the decision only when allow is not NULL: a witness is re-run for the
 * few rules its fact names, not for every rule of a large set. */
int dw_prove_vm_run_some(P *p, int which, const cex *c, const uint32_t *only, uint32_t nonly, bool *allow, uint8_t **outcome);
void dw_prove_add_finding(P *p, const dw_source *src, const char *rule, int sev, dw_loc loc, long policy, const char *hint,
                          const char *msg, const cex *c);
void dw_prove_report_set(P *p);
void dw_prove_report_diff(P *p);
void dw_prove_report_asserts(P *p);

#endif
