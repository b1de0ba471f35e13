/* prove_guard.h - literal guards of rules and an index over them, so that
 * `dwc check`'s proofs (prove.c) pair only rules that can both match one
 * request, before any solver call (docs/CHECK.md, Speed).
 *
 * A rule's guard is a conjunct on the top-level `&&` spine of one of its
 * `when` clauses that tests one request field -- a GETATTR chain on
 * principal, resource or context -- against literals,
 *
 *     F == "lit" | "lit" == F | F like "pat" | ["a", "b"].contains(F)
 *     | F == Long or entity literal | `||` chains of these on the same F;
 *
 * the rule is true without error only when F holds a value one of the
 * alternatives accepts.  Two rules with guards on the same field whose
 * alternatives accept no common value never both match one request. */
#ifndef DW_PROVE_GUARD_H
#define DW_PROVE_GUARD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../lang/ast.h"

#define DW_GUARD_MAX 4          /* guards kept per rule */
#define DW_GUARD_MAX_ALT 16     /* alternatives of one guard */
#define DW_GUARD_MAX_PATH 4     /* attributes of a field path */

enum { DW_GA_STR, DW_GA_LIKE, DW_GA_LONG, DW_GA_ENT };

typedef struct dw_guard_alt {
    int kind;
    dw_str s;                    /* DW_GA_STR: the string */
    const dw_like_pattern *pat;  /* DW_GA_LIKE */
    int64_t i;                   /* DW_GA_LONG */
    const dw_euid_lit *e;        /* DW_GA_ENT */
    const dw_expr *test;         /* the test that is this alternative alone (F == lit, F like p), or NULL */
    const dw_expr *lit;          /* its literal (an element of a contains list), or NULL */
} dw_guard_alt;

typedef struct dw_guard {
    int var;
    size_t npath;
    dw_str path[DW_GUARD_MAX_PATH];
    const dw_expr *field;        /* the field's expression (of the first test) */
    size_t nalt;
    dw_guard_alt alt[DW_GUARD_MAX_ALT];
} dw_guard;

typedef struct dw_guards { size_t n; dw_guard g[DW_GUARD_MAX]; } dw_guards;

void dw_guards_of_policy(const dw_policy *pol, dw_guards *out);
bool dw_guard_same_field(const dw_guard *a, const dw_guard *b);
/* Can some value satisfy both alternatives?  (true when unsure) */
bool dw_guard_alts_meet(const dw_guard_alt *a, const dw_guard_alt *b);
/* Do the two rules' guards on some common field accept no common value? */
bool dw_guards_disjoint(const dw_guards *a, const dw_guards *b);
/* rule b's guard on a's field (NULL: none) */
const dw_guard *dw_guards_on(const dw_guards *b, const dw_guard *a);

/* An index of rules by their guard on one field: for a rule, the indexed
 * rules its guards may meet (a superset of those dw_guards_disjoint does not
 * separate from it), without looking at every indexed rule: alternatives are
 * kept sorted by their literal prefix and by their reversed literal suffix,
 * and a query takes whichever side finds fewer. */
typedef struct dw_guard_index dw_guard_index;
/* Index rules[0..n) (guards g[rule]) on the field most of them guard.  NULL on OOM. */
dw_guard_index *dw_guard_index_new(const dw_guards *g, const size_t *rules, size_t n, size_t nrules_total);
/* The candidates for a rule with guards gi, appended to out[*nout...]
 * (room for every indexed rule; each at most once). */
void dw_guard_index_query(dw_guard_index *ix, const dw_guards *gi, size_t *out, size_t *nout);
void dw_guard_index_free(dw_guard_index *ix);

#endif
