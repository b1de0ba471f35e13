/* prove_cache.h - `dwc check --cache DIR`: what the proofs established
 * about each rule, kept between runs per environment and per step, each
 * under a hash of everything the step read, so a re-run re-proves only the
 * steps a change touched: the pairs the changed rule is in.
 *
 * The steps (parts) of rule i in an environment, and what their keys hash
 * besides the environment and the salt (dwc release, ISA, schema digest,
 * Z3's version) and i's content (text and expanded form without the
 * annotations, which no proof reads; effect, temporal leaves, lint flags):
 *   overridden (a permit): the content of every forbid the cover query and
 *     the rule-by-rule breakdown pair i with, in order, and how many rules
 *     of scope not disjoint from i there are (up to 9);
 *   shadowed: the same over the rules of i's effect, with whether each was
 *     found shadowed here already (a later rule found shadowed shadows no
 *     earlier one);
 *   may-error (a forbid): nothing more;
 *   match (the witness, vacuity, always-true): what the steps before found.
 * Rows over the environment's whole effect (a rule that matches nothing
 * here) carry a digest of those rules and are read back only while it holds.
 * A file damaged, cut short, of another format or another salt is reported
 * on stderr and ignored (never trusted); a step during which a query
 * answered unknown is not kept.  Counterexamples read back are re-run on the
 * VM with the findings (prove_report.c). */
#ifndef DW_PROVE_CACHE_H
#define DW_PROVE_CACHE_H
#include <stdbool.h>
#include <stdint.h>
#include "prove_impl.h"

enum { DW_PROVE_PART_ERR = 3, DW_PROVE_PART_MATCH = 4 };

/* With --cache (and neither --against nor --assert): every rule's content
 * hashed, into p->cache.  0, or -1 out of memory. */
int dw_prove_cache_init(P *p);
void dw_prove_cache_free(P *p);
/* The current environment's file read back (p->env_name, p->cur and the
 * environment's index set); written again at its end. */
void dw_prove_cache_env_begin(P *p);
void dw_prove_cache_env_end(P *p);
/* In cover_check, once the candidates cand[0..nb) are known (ncand: rules
 * of scope not disjoint, up to 9): true when the step was read back (*all,
 * shadow_here, matched_here and the rows set), else it is pending. */
bool dw_prove_cache_cover(P *p, size_t i, bool same, size_t ncand, const size_t *cand, size_t nb, bool *all);
/* Before forbid_may_error / match_check (part DW_PROVE_PART_*): true when
 * the step was read back, else it is pending. */
bool dw_prove_cache_part(P *p, size_t i, int part);
/* After the step: a pending step of rule i is kept (all: the cover step's
 * result, NULL for the others). */
void dw_prove_cache_done(P *p, size_t i, const bool *all);

/* What one environment established about rules list[0..n) (p->ps), as
 * bytes (how a parallel environment's process sends its result, prove.c),
 * and back into p->ps (cleared): false when the bytes are not exactly such a
 * result. */
void dw_prove_env_encode(P *p, const size_t *list, size_t n, dw_buf *b);
bool dw_prove_env_decode(P *p, const size_t *list, size_t n, const uint8_t *data, size_t len);

#endif
