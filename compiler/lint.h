/* lint.h - `dwc check`: lint rules and structural analysis of a policy set
 * (issue "dwc --check"; box.md §11, dogwood.md §5.8, §16, §20 Q15, D4).
 *
 * dw_lint_run takes the policy text and runs the whole front end itself
 * (parse, macro expansion, temporal well-formedness, temporal validation,
 * strict validation of the lowered set against the augmented schema), turning
 * every diagnostic into a finding with a stable rule id, then adds its own
 * rules and the scope-level analysis (vacuous, shadowed and overridden rules).
 *
 * Rule ids: kebab-case, `dw-…` for Dogwood rules and `box-…` for the rules
 * box.md §11 names.  A Dogwood rule that Box also enforces carries Box's name
 * when the Box profile is on (e.g. `dw-duplicate-id` is reported as
 * `box-duplicate-id`, with Box's severity); `box-…` rules run only in the Box
 * profile.  The rule table in compiler/lint.c lists every rule. */
#ifndef DW_LINT_H
#define DW_LINT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../lang/ast.h"
#include "../lang/diag.h"
#include "../lang/eventschema.h"
#include "../lang/schema.h"

typedef enum dw_lint_sev { DW_LINT_ERROR, DW_LINT_WARNING, DW_LINT_INFO } dw_lint_sev;

typedef struct dw_lint_rule {
    const char *id;           /* Dogwood id ("dw-…"), or the Box id for Box-only rules */
    const char *box_id;       /* id under the Box profile (NULL: same as id) */
    dw_lint_sev sev;          /* default severity */
    dw_lint_sev box_sev;      /* severity under the Box profile */
    bool box_only;            /* runs only with the Box profile */
    const char *summary;      /* one line, for SARIF and the README */
    const char *kind;         /* the JSON `kind` (issue "dwc --check"), e.g. "type-error" */
} dw_lint_rule;

extern const dw_lint_rule dw_lint_rules[];
extern const size_t dw_lint_nrules;

typedef struct dw_finding {
    const char *rule;         /* stable id as reported (profile applied) */
    size_t rule_index;        /* into dw_lint_rules */
    dw_lint_sev sev;
    dw_loc loc;               /* start; loc.end is the end byte offset */
    uint32_t end_line, end_col;
    char *msg;                /* heap, one line */
    char *hint;               /* heap, one line, may be NULL */
    long policy;              /* 0-based index of the rule it is about, or -1 */
    const dw_source *src;     /* the file it points into (NULL: the policy file) */
    /* a concrete request the VM re-ran (proof findings), heap, may be NULL */
    char *cex_request;        /* Cedar request JSON object */
    char *cex_entities;       /* Cedar entities JSON array */
    uint8_t *cex_leaves;      /* temporal leaf values it assumed (NULL: none) */
    uint32_t cex_nleaves;
} dw_finding;

typedef struct dw_findings {
    dw_finding *v;
    size_t n, cap;
    dw_lines lines;           /* line starts of the text findings were last located in */
} dw_findings;

void dw_findings_free(dw_findings *f);
/* Sort by byte offset, then rule id, then message (deterministic output). */
void dw_findings_sort(dw_findings *f);

typedef struct dw_lint_options {
    bool box;                              /* the Box profile (`--schema box`) */
    const char *home;                      /* the operator home (`--home DIR`), may be NULL */
    const dw_schema *schema;               /* may be NULL: no strict validation */
    const dw_event_derivation *dv;         /* may be NULL: default 24h cap, no §9.9 */
    bool refusals_only;                    /* skip the warning-only scope analysis (the loader) */
    const struct dw_providers *providers;  /* provider declarations for dw_lower (NULL: the built-ins) */
    const dw_source *macros;               /* --macros FILE: replaces the standard library (§10.6), NULL: the
                                              standard one; it outlives the findings, which may point into it */
} dw_lint_options;

/* What dw_lint_run's front end built, for a caller that goes on to use it
 * (dwc check's proofs, which would otherwise run the front end again): the
 * expanded set, the macro library its nodes point into and the program its
 * compile stage made.  All NULL when that stage did not run (an error before
 * it, templates) or failed.  The caller frees them (dw_lint_products_free);
 * the set points into src, which must outlive it. */
struct dw_program;
typedef struct dw_lint_products {
    dw_policy_set *ps, *lib;
    struct dw_program *prog;
} dw_lint_products;
void dw_lint_products_free(dw_lint_products *p);

/* Lint the policy text `src`.  Findings are appended to *out (unsorted).
 * Returns 0 when the text parsed (findings may include errors), 1 when it
 * did not parse or a macro could not be expanded (findings `dw-parse` /
 * `dw-macro` describe why; no other rule ran), -1 on out of memory.
 * keep (may be NULL) receives the compiled set, as above. */
int dw_lint_run(const dw_source *src, const dw_lint_options *opt, dw_findings *out, dw_lint_products *keep);

/* The pipeline's DW_FE_PROFILE stage (pipeline.h): the rules over the
 * expanded set fe->ps with options fe->profile (strict validation of the
 * lowered set, the AST rules, the scope analysis), the same code `dwc check`
 * runs.  Every finding is appended to fe->findings; each error finding is
 * also added to diags, its rule id as the diagnostic's code.  0 no error
 * finding, 1 some, -1 out of memory. */
struct dw_front_end;
int dw_lint_profile(struct dw_front_end *fe, dw_diags *diags);
/* dogwood.md §14: the expanded set ps lowered to Cedar, as strict validation
 * sees it: each temporal leaf replaced by `context.policy_<i>__temporal_<k>`
 * (clauses and operators as written), and with opt->schema the schema
 * augmented with each hoisted attribute (a required Bool on the context of
 * every action its rule's scope admits).  Each provider invocation (with its
 * output methods) becomes `context.providers.policy_<i>_p_<k>`, and the
 * context of every action a required `providers` record of their output
 * types (opt->providers' declarations).  The result shares ps's nodes; free
 * it before ps.  0, or -1 out of memory. */
typedef struct dw_lowering {
    dw_policy_set set;                  /* set.policies: the lowered policies */
    dw_schema schema;                   /* the augmented schema, when has_schema */
    bool has_schema;
    const char **fields; size_t *field_policy; size_t nfields;   /* the hoisted attributes, in order */
    const char **provider_fields; size_t nprovider_fields;       /* the hoisted providers.policy_<i>_p_<k> */
    struct L *owner;
} dw_lowering;
int dw_lower(dw_policy_set *ps, const dw_lint_options *opt, dw_lowering *out);
void dw_lowering_free(dw_lowering *lw);
/* Give d->v[from..] (diagnostics of the front-end stage whose findings are
 * reported under rule `stage_rule`, e.g. "dw-temporal") the rule ids `dwc
 * check` reports them under, e.g. box-window-over-cap. */
void dw_lint_tag_diags(dw_diags *d, size_t from, const char *stage_rule, bool box);

const char *dw_lint_sev_name(dw_lint_sev s);

/* The index of rule `id` in dw_lint_rules, or SIZE_MAX. */
size_t dw_lint_rule_index(const char *id);
/* Append a finding of rule `id` (a dw-… id) at [loc.off, loc.end) of src.
 * sev < 0: the rule's default.  Strings are copied.  0, or -1 on OOM or an
 * unknown rule. */
int dw_findings_push(dw_findings *f, const dw_source *src, const char *id, int sev, dw_loc loc, long policy,
                     const char *hint, const char *msg, const char *request, const char *entities,
                     const uint8_t *leaves, uint32_t nleaves);

#endif
