/* pipeline.h - the front end, once: parse -> standard macro library ->
 * expansion (dogwood.md §10) -> temporal acceptance rules (§9.1-§9.5) ->
 * temporal validation against the schemas (§9.6-§9.9) -> a profile's lint
 * rules (the Box profile's load refusals, box.md §11) -> compile.  Every tool
 * that turns policy text into something (dwc's loader and `validate`,
 * `dwc check`'s lint and proofs, the goldens) runs these stages through here,
 * so a new pass is added in one place.
 *
 * Stages run in order.  dw_front_end_run runs them through a chosen last stage
 * and stops after the first that reports an error (the loader and compiler);
 * dw_front_end_step runs just the next one whatever came before (a linter
 * that reports every stage's findings, or does its own work between stages). */
#ifndef DW_PIPELINE_H
#define DW_PIPELINE_H
#include <stdbool.h>
#include "compile.h"
#include "lint.h"
#include "../lang/eventschema.h"
#include "../lang/schema.h"

typedef enum dw_fe_stage {
    DW_FE_NONE,        /* nothing run yet */
    DW_FE_PARSE,       /* policy text -> dw_policy_set */
    DW_FE_EXPAND,      /* the standard macro library, then macro expansion */
    DW_FE_STRUCTURE,   /* temporal acceptance rules (fatal, need no schema) */
    DW_FE_SCHEMA,      /* temporal validation against the action and event schemas */
    DW_FE_PROFILE,     /* the lint rules of a profile (lint.h: strict validation of the lowered
                          set, box.md §11's rules); its errors are refusals.  No-op without one. */
    DW_FE_COMPILE,     /* AST -> dw_program */
} dw_fe_stage;

typedef struct dw_front_end {
    /* ---- inputs, set before the first stage ---- */
    const dw_source *src;               /* the policy text */
    const dw_schema *schema;            /* action schema, or NULL */
    const dw_event_derivation *dv;      /* event schema derived against it, or NULL */
    int64_t max_window;                 /* the event schema's window cap, 0 for the default */
    /* DW_FE_SCHEMA runs only with a schema unless this is set (a linter
     * reports the window caps of §9.7 against the default even without one) */
    bool schema_checks_without_schema;
    /* template links (link.h), applied before DW_FE_COMPILE; cedar_ids names
     * policies by their @id annotation as Cedar's CLI does */
    const struct dw_template_link *links; size_t nlinks;
    const dw_source *links_src;
    bool cedar_ids;
    /* the lint rules to run at DW_FE_PROFILE (the Box profile at load: every
     * error finding is a refusal, reported with its rule id as `dwc check`
     * does, "error[box-duplicate-id]: ..."); NULL: none.  With a profile,
     * DW_FE_SCHEMA's diagnostics carry their rule ids too (box-window-over-cap). */
    const dw_lint_options *profile;
    const struct dw_providers *providers;   /* provider declarations (lang/providers.h), NULL: the built-ins */
    /* a macro library that replaces the standard one (dogwood.md §10.6,
     * `--macros FILE`); NULL: the standard library.  It must outlive lib. */
    const dw_source *macros;
    /* ---- outputs, owned by the front end until a caller takes them (sets
     * the field to NULL); dw_front_end_free frees the rest ---- */
    dw_policy_set *ps;
    dw_policy_set *lib;                 /* the macro library: expanded policies point into it.
                                           A caller may set its own before DW_FE_EXPAND. */
    dw_program *prog;
    dw_findings findings;               /* every finding of DW_FE_PROFILE, all severities */
    dw_fe_stage reached;                /* the last stage run */
    bool lib_tried;                     /* the library was parsed (or failed to) once */
} dw_front_end;

/* Run the next stage.  0 clean; 1 the stage reported errors (in diags);
 * -1 out of memory with nothing reported. */
int dw_front_end_step(dw_front_end *fe, dw_diags *diags);

/* Run the stages after fe->reached through `last`, stopping after the first
 * one that is not clean.  Returns that stage, or DW_FE_NONE when all were
 * clean; *rc (may be NULL) gets its dw_front_end_step result. */
dw_fe_stage dw_front_end_run(dw_front_end *fe, dw_fe_stage last, dw_diags *diags, int *rc);

/* The macro library (parsed on first use; DW_FE_EXPAND uses the same), for
 * a linter's checks of macro calls before expansion.  NULL on failure, with
 * diagnostics. */
const dw_policy_set *dw_front_end_library(dw_front_end *fe, dw_diags *diags);

void dw_front_end_free(dw_front_end *fe);

#endif
