/* compile.h - lowering a parsed policy set to VM bytecode (dw_program). */
#ifndef DW_COMPILE_H
#define DW_COMPILE_H
#include "../lang/ast.h"
#include "../vm/program.h"

typedef struct dw_compile_options {
    const char *id_prefix;     /* policy ids are <prefix><index>; default "policy" */
} dw_compile_options;

/* Compile every policy of `ps`.  NULL on error, with diagnostics.  Macro
 * definitions are skipped; templates, macro calls, temporal leaves and
 * provider calls are reported as errors by this stage. */
dw_program *dw_compile(const dw_policy_set *ps, const dw_compile_options *opt, dw_diags *diags);

#endif
