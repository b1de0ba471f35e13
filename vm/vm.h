/* vm.h - evaluating compiled policies (dogwood.md §4, §15.2). */
#ifndef DW_VM_H
#define DW_VM_H
#include "program.h"
#include "store.h"

typedef enum dw_eval_status {
    DW_EVAL_OK = 0,
    DW_ERR_TYPE,          /* operand of the wrong type */
    DW_ERR_ARITY,         /* extension function called with the wrong count */
    DW_ERR_MISSING_ATTR,  /* record or entity lacks the attribute */
    DW_ERR_NO_ENTITY,     /* attribute access on an entity not in the store */
    DW_ERR_MISSING_TAG,
    DW_ERR_OVERFLOW,
    DW_ERR_EXTENSION,     /* bad extension constructor argument */
    DW_ERR_OOM,
    DW_ERR_INTERNAL,      /* a verified program can never reach this */
} dw_eval_status;

const char *dw_eval_status_name(dw_eval_status s);

enum { DW_VAR_P = 0, DW_VAR_A = 1, DW_VAR_R = 2, DW_VAR_C = 3 };

typedef struct dw_request {
    dw_value vars[4];          /* principal, action, resource (entities), context (record) */
    /* Filled by dw_request_bind: the scope entities resolved once per request
     * (their uids replaced by the program's interned ones, so scope tests
     * compare pointers) and their store entries. */
    const dw_program *bound_prog;
    const dw_store *bound_store;
    const dw_entity *ent[3];
    /* Temporal leaf values for this decision, by leaf index: 0 false, 1 true,
     * 2 not evaluated (the LEAF instruction then errors). */
    const uint8_t *leaf_values;
    uint32_t nleaf_values;
    /* Provider call site values, by site index (vm/provider.h); a Null is
     * "not evaluated" (the PROV instruction then errors). */
    const dw_value *prov_values;
    uint32_t nprov_values;
} dw_request;

/* Resolve the request against a program and store (cheap; dw_authorize does
 * it on a copy when the caller has not). */
void dw_request_bind(dw_request *req, const dw_program *prog, const dw_store *store);
/* One scope variable's part of it: an entity var's uid replaced by the
 * program's interned one (returned; NULL: the program has none) and *ent its
 * store entry (NULL: none). */
const dw_uid *dw_bind_uid(const dw_program *prog, const dw_store *store, dw_value *var, const dw_entity **ent);

/* Condition guards (vm/guard.c): the request's value of the guarded field
 * (NULL when absent or not a String: the whole bucket must run), and the
 * runs of policies that can still be true for that value. */
const dw_value *dw_guard_field(const dw_guard_table *t, const dw_request *req);
typedef int (*dw_guard_run_fn)(void *ctx, const uint32_t *run, uint32_t n);
int dw_guard_runs(const dw_guard_table *t, const dw_value *field, dw_guard_run_fn add, void *ctx);
void dw_guard_print(const dw_guard_table *t, const dw_program *p, FILE *out);

/* Request attribute paths already read in this decision (`context.input.path`
 * in policy after policy): the value of each memo slot (vm/eval_plan.c: a
 * path `VAR x; GETATTR a ...` that occurs at several pcs), valid when its bit
 * is set (in the request or the store, unchanged while the decision runs).
 * Slot s (1 ..) is bit s of `valid` and val[s - 1]; bit 0 is never set, so
 * a plan without a slot (0) tests a clear bit.  Only successful reads are
 * kept; an error is met again by running the code.  A decision clears
 * `valid` alone. */
#define DW_PATH_MEMO_SLOTS 63
typedef struct dw_attr_memo { uint64_t valid; const dw_value *val[DW_PATH_MEMO_SLOTS]; } dw_attr_memo;

typedef struct dw_eval_ctx {
    const dw_program *prog;
    const dw_store *store;
    const dw_request *req;
    dw_arena *scratch;         /* per-decision allocations (sets, records built at run time) */
    dw_value *stack;           /* at least prog->max_stack slots */
    /* detail of the last error, for messages */
    uint32_t err_pc;
    const char *err_detail;    /* static text */
    uint32_t err_depth;        /* stack depth at the failure: the failing instruction's
                                  operands are still in stack[] around it (dwc evaluate) */
    dw_value *ret_value;       /* set by dw_eval_value: RET hands back any value */
    dw_attr_memo *memo;        /* NULL, or one decision's memo (cleared for each request) */
} dw_eval_ctx;

/* Evaluate policy `index`'s scope and condition.  DW_EVAL_OK with *result set,
 * or an error status (the policy is then "erroring"). */
dw_eval_status dw_eval_policy(dw_eval_ctx *cx, uint32_t index, bool *result);
/* Run the code at [entry, ...) to its RET (used for a policy's scope-only code). */
dw_eval_status dw_eval_code(dw_eval_ctx *cx, uint32_t entry, bool *result);
/* The same, returning the value RET finds whatever its type (an expression
 * compiled as a policy's one condition: `dwc evaluate`).  Values built at
 * run time live in cx->scratch. */
dw_eval_status dw_eval_value(dw_eval_ctx *cx, uint32_t entry, dw_value *out);

/* The candidates of one decision run in one interpreter loop: postings
 * which[k] & keep for k in [k, n) (which NULL: policies k .. n-1, none
 * implied), started at index.body[policy] when DW_IX_IMPLIED; each true one
 * is appended to forbids or permits by its effect.  Stops at the end
 * (DW_EVAL_OK) or at a candidate that errors (its status; k is that
 * candidate, pol its policy, cx's err_* set), which the caller records
 * before it resumes from k + 1. */
typedef struct dw_eval_batch {
    const uint32_t *which; uint32_t keep, n, k, pol;
    uint32_t *permits, *forbids; uint32_t np, nf;
} dw_eval_batch;
dw_eval_status dw_eval_candidates(dw_eval_ctx *cx, dw_eval_batch *b);

/* Apply an extension function or built-in method to already evaluated
 * arguments (methods take the receiver first).  Shared by OP_CALL and the
 * JSON reader's `__extn` values. */
dw_eval_status dw_call_extfn(dw_arena *scratch, const dw_store *store, dw_extfn fn,
                             const dw_value *args, uint32_t argc, dw_value *out);

/* ---- the Cedar decision (§15.2) ---- */
typedef struct dw_policy_error { uint32_t policy; dw_eval_status status; const char *detail; } dw_policy_error;

typedef struct dw_response {
    bool allow;
    const uint32_t *determining; uint32_t ndetermining;   /* ascending policy indices (in scratch or prog) */
    dw_policy_error *errors; uint32_t nerrors;       /* ascending policy indices (NULL when none) */
    uint32_t evaluated;                              /* policies whose code ran */
} dw_response;

/* Authorize `req` against every policy of `prog`.  Result arrays live in
 * `scratch`.  Returns 0, or -1 on OOM (the caller must deny). */
int dw_authorize(const dw_program *prog, const dw_store *store, const dw_request *req,
                 dw_arena *scratch, dw_response *resp);
/* The two halves of dw_authorize, for a pass that runs between them (the
 * temporal leaves, vm/leaves.h): the index's candidates of a bound request
 * (ascending, distinct, in scratch; v NULL: every policy, the program has no
 * index), and the decision over them.  Each v[k] is a posting: policy
 * DW_IX_POLICY(v[k]), and DW_IX_IMPLIED set when the index showed its scope
 * prefix true (the decision then starts it at index.body[policy]). */
typedef struct dw_candidates { uint32_t *v; uint32_t n; } dw_candidates;
int dw_index_candidates(const dw_program *prog, const dw_store *store, const dw_request *req,
                        dw_arena *scratch, dw_candidates *out);
int dw_authorize_candidates(const dw_program *prog, const dw_store *store, const dw_request *req,
                            dw_arena *scratch, const dw_candidates *c, dw_response *resp);
/* dw_authorize of a bound request with a pass over the candidates before
 * the decision (the temporal leaves, vm/leaves.h), copying nothing: the
 * postings v[k] & keep (v NULL: policies 0 .. n-1, none implied), v borrowed
 * from the index or, when owned, a merged list (keep ~0u) the pass may
 * rewrite; the pass may also point c at a list of its own in scratch.
 * 0; -1 on OOM; 1 when the pass failed (non-zero). */
typedef struct dw_postings { const uint32_t *v; uint32_t n, keep; bool owned; } dw_postings;
typedef int (*dw_postings_pass)(void *ctx, dw_postings *c);
int dw_authorize_pass(const dw_program *prog, const dw_store *store, const dw_request *req, dw_arena *scratch,
                      dw_response *resp, dw_postings_pass pass, void *ctx);
/* The same with the decision index switched off: every policy runs.  Used to
 * check the index's soundness (decisions must be identical). */
int dw_authorize_all(const dw_program *prog, const dw_store *store, const dw_request *req,
                     dw_arena *scratch, dw_response *resp);

#endif
