/* prove.h - the proof half of `dwc check` (docs/CHECK.md): per request
 * environment of the schema, SMT queries (compiler/smt.h) for
 *   forbid-may-error, permit-overridden, permit-shadowed, forbid-shadowed,
 *   redundant, vacuous, diff (--against) and assertion-proved/-refuted
 *   (--assert).
 * Every counterexample (and every witness of a proved fact) is a concrete
 * request and entity store that the caller's VM hook decides; a finding is
 * kept only when the VM agrees. */
#ifndef DW_PROVE_H
#define DW_PROVE_H
#include <stdbool.h>
#include <stdint.h>
#include "lint.h"
#include "../lang/ast.h"
#include "../lang/schema.h"
#include "../vm/program.h"

enum { DW_PROVE_SET = 0, DW_PROVE_OLD = 1, DW_PROVE_ASSERT = 2 };
enum { DW_OUT_FALSE = 0, DW_OUT_TRUE = 1, DW_OUT_ERROR = 2 };

/* The VM, supplied by the runtime (compiler/ never parses request JSON).
 * decide: run `request` (Cedar request JSON) with `entities` (Cedar entities
 * JSON) on program `which` with the given temporal leaf values; set *allow
 * (unless allow is NULL) and outcome[i] (DW_OUT_*) for every policy of that
 * program, or, when `only` is not NULL, for the policies only[0..nonly)
 * alone (the others' bytes are left DW_OUT_FALSE: not run).  0, or -1 when
 * the request or the store is refused. */
typedef struct dw_prove_vm {
    void *ud;
    int (*decide)(void *ud, int which, const char *request, const char *entities, const uint8_t *leaves,
                  uint32_t nleaves, const uint32_t *only, uint32_t nonly, bool *allow, uint8_t *outcome);
} dw_prove_vm;

typedef struct dw_prove_input {
    const dw_source *src;          /* where findings point */
    const dw_policy_set *ps;       /* expanded, compiled as prog */
    const dw_program *prog;
} dw_prove_input;

typedef struct dw_prove_options {
    const dw_schema *schema;
    dw_prove_input set, old, asserts;   /* old/asserts: ps NULL when not given */
    const bool *has_error_finding;      /* per policy of set: lint already reported an error (may be NULL) */
    const bool *impossible_reported;    /* per policy of set: lint reported it impossible (may be NULL) */
    const bool *always_reported;        /* per policy of set: lint reported it always true (may be NULL) */
    unsigned timeout_ms;
    double budget_s;                    /* --budget: once spent, every query left answers unknown (0: none) */
    unsigned jobs;                      /* -j: environments proved at once, each in its own process (0, 1: one) */
    const char *cache_dir;              /* --cache DIR (NULL: none; not with --against or --assert) */
    const char *cache_salt;             /* the release, ISA and schema digest, for the cache keys */
    dw_prove_vm vm;
    bool *decided;                      /* out, per policy of set (may be NULL): the proofs decided
                                           its shadowing and overriding exactly (encoded without
                                           approximation in every environment, no timeout) */
} dw_prove_options;

typedef struct dw_prove_stats {
    size_t envs, policies, unencodable, approximated;
    size_t envs_cached;                 /* of envs: read back from --cache */
    size_t pairs_pruned, pairs_solved;
    size_t pairs_pruned_disjoint;       /* of pairs_pruned: by their literal guards (docs/CHECK.md) */
    size_t pairs_pruned_scope;          /* of pairs_pruned: scoped `in` other groups (prove_scope.h) */
    size_t pairs_memo;                  /* pair queries answered by another pair's conditions (prove_scope.h) */
    size_t queries, sat, unsat, unknown;
    size_t over_budget;                 /* of unknown: not asked, the budget was spent */
    size_t confirmed, vm_rejected;      /* candidates the VM agreed with / did not */
    double solver_ms, total_ms;
} dw_prove_stats;

/* Append the proof findings to *out.  0, or -1 on a tool error (Z3 could not
 * start, out of memory). */
int dw_prove_run(const dw_prove_options *o, dw_findings *out, dw_prove_stats *st);

#endif
