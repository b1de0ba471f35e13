/* smt.h - Cedar conditions as SMT terms (Z3's C API), for the proofs of
 * `dwc check` (compiler/prove.c; docs/CHECK.md describes every encoding and
 * approximation).
 *
 * One request environment at a time (principal type x action x resource type
 * of the schema).  In an environment the principal and resource are entity
 * ids (Z3 Int) of fixed types, the action is a known uid, the context a record
 * of free terms.  A policy encodes to two Booleans: `err` (its evaluation
 * raises an error) and `sat` (it evaluates to true without error).
 *
 *   Bool -> Bool; Long, decimal (x 10^4), datetime, duration (ms) -> 64-bit
 *   bit-vectors with overflow checks; String -> Z3 String (bytes), `like` ->
 *   regular membership; entity -> Int id per type (literals and enum ids are
 *   fixed numbers), attribute -> uninterpreted function of the id (optional
 *   ones with a `has` function, entity existence with an `exists` function);
 *   record -> its fields; Set<T> -> Z3 set (array T -> Bool); ipaddr -> Int
 *   (literals numbered, predicates approximated); hierarchy `in` -> a free
 *   ancestor relation per (descendant type, ancestor type) the schema's
 *   memberOf allows.  Terms Z3 cannot express exactly (ip predicates,
 *   datetime calendar functions, extension constructors on non-literals,
 *   `in` over a set-valued attribute with ancestors) become free values keyed
 *   by their text, with a free error where the term can error.  Temporal
 *   leaves become free Booleans.  All of these over-approximate: an UNSAT
 *   answer is a proof, a SAT answer is only a candidate that prove.c re-runs
 *   on the VM. */
#ifndef DW_SMT_H
#define DW_SMT_H
#include <stdbool.h>
#include <stdint.h>
#include <z3.h>
#include "../lang/ast.h"
#include "../lang/schema.h"
#include "../stdlib/arena.h"

typedef struct dw_smt dw_smt;

typedef struct dw_smt_env {
    const dw_entity_decl *P, *R;     /* principal and resource entity types */
    const dw_action_decl *A;         /* the action */
} dw_smt_env;

typedef struct dw_smt_stats {
    unsigned long queries, sat, unsat, unknown;
    unsigned long worker_failures;   /* solver workers that crashed, hung or ran out of memory */
    unsigned long over_budget;       /* of unknown: not asked, the --budget was spent */
    double solver_ms;
} dw_smt_stats;

/* timeout_ms: per query (0: none).  alphabet: extra bytes strings may hold
 * (besides printable ASCII), e.g. the bytes of the policy texts. */
dw_smt *dw_smt_new(const dw_schema *schema, unsigned timeout_ms);
void dw_smt_free(dw_smt *x);
void dw_smt_allow_bytes(dw_smt *x, const char *text, size_t len);
Z3_context dw_smt_ctx(dw_smt *x);
const dw_smt_stats *dw_smt_get_stats(const dw_smt *x);

/* Start an environment (a fresh solver).  0, or -1 on a solver error. */
int dw_smt_env_begin(dw_smt *x, const dw_smt_env *env);

typedef struct dw_smt_policy {
    bool applies;      /* false: the scope excludes the environment (no SMT term) */
    bool approx;       /* some term was over-approximated */
    Z3_ast sat, err;
    Z3_ast cond;       /* sat with an unconstrained principal and resource scope: the conditions alone */
} dw_smt_policy;

/* Encode policy p in the current environment.  `tag` names its temporal
 * leaves (dw_smt_model_leaf).  0, or -1 when the policy cannot be encoded
 * (a template, a macro or provider call, an ill-typed term). */
int dw_smt_encode_policy(dw_smt *x, const dw_policy *p, unsigned tag, dw_smt_policy *out);

/* A Boolean test without temporal leaves (one alternative of a rule's literal
 * guard, prove_guard.h) in the current environment: the term "e evaluates to
 * true without error", built as dw_smt_encode_policy builds a condition, so
 * a rule's condition implies the tests of its guard.  NULL when e cannot be
 * encoded. */
Z3_ast dw_smt_encode_test(dw_smt *x, const dw_expr *e);

/* Does `goal` hold for some schema-valid request of the environment?
 * 1 sat (the model is kept for the dw_smt_model_* calls), 0 unsat,
 * -1 unknown (timeout, or the solver worker crashed, hung or ran out of
 * memory: compiler/smt_worker.h).  Each query runs in a forked worker
 * process unless DWC_SOLVER_INPROCESS is set. */
int dw_smt_solve(dw_smt *x, Z3_ast goal);
/* Bound the whole run: once the monotonic clock passes deadline_ms
 * (dw_smt_now_ms; 0: no bound) every query answers -1 unasked, its reason
 * naming the budget (`budget_s`, for the message).  A query in flight
 * finishes (within its own timeout). */
void dw_smt_set_deadline(dw_smt *x, double deadline_ms, double budget_s);
double dw_smt_now_ms(void);
/* Why the last dw_smt_solve answered -1 (text for a dw-proof-unknown finding). */
const char *dw_smt_unknown_reason(const dw_smt *x);

/* Is `a` false in one of the environment's recent models (so `a` is not
 * valid there, without a query)? */
bool dw_smt_refuted_by_recent(dw_smt *x, Z3_ast a);
/* A model of the current environment's solver (a schema-valid request and
 * store), kept by the caller. */
typedef struct dw_smt_model dw_smt_model;
/* Is `a` true in one of m[0..n) (NULL entries are skipped) or in one of the
 * environment's recent models (so `a` is satisfiable, without a query)?
 * `pre` (may be NULL): a small term `a` implies, tried first on the recent
 * models (a cheaper miss).  When `a` holds, that model becomes the kept
 * model, as after a sat answer of dw_smt_solve. */
bool dw_smt_holds_in_model(dw_smt *x, Z3_ast pre, Z3_ast a, dw_smt_model *const *m, size_t n);
/* The kept model (after a sat answer), now owned by the caller; NULL if none. */
dw_smt_model *dw_smt_take_model(dw_smt *x);
void dw_smt_model_free(dw_smt *x, dw_smt_model *m);

/* The kept model as a Cedar request (JSON object) and entity store (JSON
 * array).  0, or -1 when a value cannot be written (the model uses a value
 * no JSON spells, e.g. an infinite set). */
int dw_smt_model_request(dw_smt *x, dw_buf *request, dw_buf *entities);
/* Value of temporal leaf k of the policy encoded with `tag`: 0 or 1. */
int dw_smt_model_leaf(dw_smt *x, unsigned tag, unsigned k);
/* Number of temporal leaves the encoder created for `tag` in this environment. */
unsigned dw_smt_leaf_count(dw_smt *x, unsigned tag);

/* Z3 helpers */
/* Are a and b the same term (Z3 shares equal terms: rules with the same
 * condition encode to the same term), so that each holds exactly when the
 * other does, without a query? */
bool dw_smt_same_term(dw_smt *x, Z3_ast a, Z3_ast b);
/* a number for term a, the same for equal terms (Z3 shares them) */
unsigned dw_smt_term_id(dw_smt *x, Z3_ast a);
Z3_ast dw_smt_and(dw_smt *x, Z3_ast a, Z3_ast b);
Z3_ast dw_smt_or(dw_smt *x, Z3_ast a, Z3_ast b);
/* v[0] or ... or v[n-1] (false when n is 0) */
Z3_ast dw_smt_or_n(dw_smt *x, const Z3_ast *v, size_t n);
Z3_ast dw_smt_not(dw_smt *x, Z3_ast a);
Z3_ast dw_smt_bool(dw_smt *x, bool b);

#endif
