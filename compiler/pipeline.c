#include "pipeline.h"
#include "macros.h"
#include "tcheck.h"
#include "link.h"

const dw_policy_set *dw_front_end_library(dw_front_end *fe, dw_diags *diags)
{
    if (!fe->lib && !fe->lib_tried) {
        fe->lib_tried = true;
        dw_source std = { "<standard macro library>", dw_stdlib_macros_text, dw_stdlib_macros_len };
        fe->lib = dw_macro_library_parse(fe->macros ? fe->macros : &std, diags);
    }
    return fe->lib;
}

int dw_front_end_step(dw_front_end *fe, dw_diags *diags)
{
    size_t before = diags->nerrors, first = diags->n;
    size_t found = 0;
    switch (fe->reached) {
    case DW_FE_NONE:
        fe->reached = DW_FE_PARSE;
        fe->ps = dw_parse_policy_set(fe->src, diags);
        if (!fe->ps) return diags->nerrors > before ? 1 : -1;
        break;
    case DW_FE_PARSE:
        fe->reached = DW_FE_EXPAND;
        if (!dw_front_end_library(fe, diags) || dw_expand_macros(fe->ps, fe->lib, diags)) found = 1;
        break;
    case DW_FE_EXPAND:
        fe->reached = DW_FE_STRUCTURE;
        found = dw_tcheck_structure(fe->ps, diags);
        break;
    case DW_FE_STRUCTURE:
        fe->reached = DW_FE_SCHEMA;
        if (fe->schema || fe->schema_checks_without_schema) found = dw_tcheck_schema(fe->ps, fe->schema, fe->dv, diags);
        if (fe->profile) dw_lint_tag_diags(diags, first, "dw-temporal", fe->profile->box);
        break;
    case DW_FE_SCHEMA: {
        fe->reached = DW_FE_PROFILE;
        int r = dw_lint_profile(fe, diags);
        if (r < 0) return -1;
        found = (size_t)r;
        break;
    }
    case DW_FE_PROFILE: {
        fe->reached = DW_FE_COMPILE;
        int lr = dw_link_templates(fe->ps, fe->links, fe->nlinks, fe->links_src, fe->cedar_ids, diags);
        if (lr < 0) return -1;
        if (lr) { found = 1; break; }
        dw_compile_options opt = { .events = fe->dv, .max_window = fe->max_window, .providers = fe->providers };
        fe->prog = dw_compile(fe->ps, &opt, diags);
        if (!fe->prog) found = 1;
        break;
    }
    case DW_FE_COMPILE:
        return 0;
    }
    return found || diags->nerrors > before ? 1 : 0;
}

dw_fe_stage dw_front_end_run(dw_front_end *fe, dw_fe_stage last, dw_diags *diags, int *rc)
{
    if (rc) *rc = 0;
    while (fe->reached < last) {
        int r = dw_front_end_step(fe, diags);
        if (r) {
            if (rc) *rc = r;
            return fe->reached;
        }
    }
    return DW_FE_NONE;
}

void dw_front_end_free(dw_front_end *fe)
{
    if (fe->prog) dw_program_free(fe->prog);
    if (fe->ps) dw_policy_set_free(fe->ps);
    if (fe->lib) dw_policy_set_free(fe->lib);
    dw_findings_free(&fe->findings);
    fe->prog = NULL;
    fe->ps = NULL;
    fe->lib = NULL;
}
