/* check_lint.h - the lint part of `dwc check` (everything but the Z3
 * proofs), as one call: for `dwc check --lint-only` and for editors, whose
 * diagnostics cannot wait for proofs (issue 21).  Linked into dwc (it reads
 * ICU's tables through compiler/lint_run.c), not into libdogwood.so. */
#ifndef DW_CHECK_LINT_H
#define DW_CHECK_LINT_H
#include <stdbool.h>
#include "cli.h"
#include "../compiler/lint.h"

typedef struct dw_check_lint_options {
    const dw_schema *schema;             /* may be NULL: only the schema-free rules */
    const dw_event_derivation *dv;       /* may be NULL: the default window cap */
    bool box;                            /* the Box profile (`--schema box`) */
    const char *home;                    /* `--home DIR`, may be NULL */
    const dw_cli_list *disable;          /* `--disable` lists (may be NULL); @suppress always applies */
} dw_check_lint_options;

/* Lint src (one policy text) as `dwc check --lint-only` does: every
 * front-end, validation and lint finding, each attributed to its policy,
 * @suppress and `disable` applied, sorted by position then rule id.  The
 * findings are appended to *out and point into src (finding.src NULL), so
 * src must outlive them.  Returns dw_lint_run's value: 0 the text parsed,
 * 1 it did not parse or a macro could not be expanded (the findings say
 * why), -1 out of memory. */
int dw_check_lint(const dw_source *src, const dw_check_lint_options *o, dw_findings *out);

/* The steps after the rules ran (attribution, suppression; not sorting),
 * which `dwc check` also runs on the proofs' findings: ps is the parsed set
 * of src, parsed here when NULL. */
void dw_check_lint_finish(const dw_source *src, const dw_policy_set *ps, const dw_cli_list *disable, dw_findings *f);

#endif
