/* compile.h - lowering a parsed policy set to VM bytecode (dw_program). */
#ifndef DW_COMPILE_H
#define DW_COMPILE_H
#include "../lang/ast.h"
#include "../vm/program.h"

struct dw_event_derivation;

typedef struct dw_compile_options {
    const char *id_prefix;     /* policy ids are <prefix><index>; default "policy" */
    /* The derived event schema: pins are injected into temporal predicates
     * from it (dogwood.md §8.9).  NULL: no pins. */
    const struct dw_event_derivation *events;
    int64_t max_window;        /* seconds; 0 = the default 24h (§9.7) */
    /* Provider declarations (lang/providers.h): the output types call sites
     * are checked against.  NULL: the built-ins alone. */
    const struct dw_providers *providers;
} dw_compile_options;

/* Compile every policy of `ps`.  NULL on error, with diagnostics.  Macro
 * definitions are skipped; templates and macro calls are reported as errors
 * by this stage; temporal leaves and provider calls are lowered (LEAF, PROV). */
dw_program *dw_compile(const dw_policy_set *ps, const dw_compile_options *opt, dw_diags *diags);

#endif
