/* prove_scope.h - rules that an `in` scope makes irrelevant to another
 * rule's cover query, and an index by those scopes, so that `dwc check`'s
 * proofs (prove.c) do not pair a rule with rules scoped to other groups
 * (docs/CHECK.md, Speed).
 *
 * `principal in Role::"r1"` and `principal in Role::"r2"` are not disjoint
 * (an entity may be in both), but the second cannot help cover a request
 * the first matches: the encoding (compiler/smt.c) makes the scope the
 * conjunct P!in!Role(principal, r2) of the rule's term, a free value of the
 * ancestor function at a point no other term of the query reads when no
 * rule of the query tests `in` in its condition.  A model of
 *   sat(i) and none of the kept candidates matches
 * stays one with that value set to false, and then every rule scoped
 * `in Role::"r2"` is false too: dropping those candidates from the cover
 * query (shadowed, overridden) cannot change its answer.
 *
 * A rule's *key* on a slot (principal, resource) is the interned literal of
 * its `in` / `is T in` target when the target's type is not the slot's own
 * type in the environment (there `in` also means `==`, which the principal
 * may be forced to), else 0.  Candidate j is dropped for rule i when j's key
 * on some slot is not 0 and differs from i's key there. */
#ifndef DW_PROVE_SCOPE_H
#define DW_PROVE_SCOPE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../lang/ast.h"

/* Does the policy test `in` (or `is T in`) anywhere in its conditions? */
bool dw_scope_cond_uses_in(const dw_policy *pol);

/* Is candidate j (keys kpj, krj) irrelevant to i's cover query (keys kpi, kri)? */
static inline bool dw_scope_drops(uint32_t kpi, uint32_t kri, uint32_t kpj, uint32_t krj)
{
    return (kpj && kpj != kpi) || (krj && krj != kri);
}

/* The set's scope targets (interned) and which rules test `in`. */
typedef struct dw_scope_info dw_scope_info;
dw_scope_info *dw_scope_info_new(const dw_policy *pols, size_t n);
void dw_scope_info_free(dw_scope_info *si);

/* One environment (principal type ptype, resource type rtype): the keys of
 * every rule, and the rules of each effect rules[e][0..n[e]) grouped by
 * their keys.  NULL on OOM. */
typedef struct dw_scope_env dw_scope_env;
dw_scope_env *dw_scope_env_new(const dw_scope_info *si, dw_str ptype, dw_str rtype, size_t *const rules[2],
                               const size_t n[2]);
void dw_scope_env_free(dw_scope_env *se);
/* rule i's keys in this environment */
void dw_scope_env_keys(const dw_scope_env *se, size_t i, uint32_t *kp, uint32_t *kr);
/* May i's cover query against effect e drop candidates by their keys?  Not
 * when i or a rule it keeps tests `in` in a condition (that term could read
 * the ancestor function where a dropped scope does). */
bool dw_scope_env_usable(const dw_scope_env *se, size_t i, int e);
/* How many rules of effect e are kept for i (those not dropped). */
size_t dw_scope_env_count(const dw_scope_env *se, size_t i, int e);
/* The kept rules of effect e for i, in ascending order, into out (returns
 * how many). */
size_t dw_scope_env_query(const dw_scope_env *se, size_t i, int e, size_t *out);

/* Is rule i's scope *free* here: each of principal and resource
 * unconstrained, `is T`, or keyed (above), and its conditions without `in`?
 * Then its term is S and cond (smt.h), S a conjunction of `exists` (the
 * request's entities exist) and ancestor values no condition term reads:
 * for two rules with one free scope S, every query S and B(cond_i, cond_j)
 * has the answer of B(cond_i, cond_j) alone, the same for every group of
 * rules of that environment with those two conditions. */
bool dw_scope_env_is_free(const dw_scope_env *se, size_t i);

/* Answers of such pair queries by (condition term ids, kind), for one
 * environment. */
typedef struct dw_pair_memo dw_pair_memo;
dw_pair_memo *dw_pair_memo_new(void);
void dw_pair_memo_free(dw_pair_memo *m);
/* the answer kept (0 unsat, 1 sat), or -1 none */
int dw_pair_memo_get(const dw_pair_memo *m, unsigned a, unsigned b, int kind);
/* keep answer r (0 or 1; OOM only forgets) */
void dw_pair_memo_put(dw_pair_memo *m, unsigned a, unsigned b, int kind, int r);

#endif
