/* validate_files.c - see validate_files.h. */
#include "validate_files.h"
#include <stdio.h>

int dw_validate_files(dw_session *s, const char *pol, const char *sch, const char *events,
                      dw_fe_stage *fatal, dw_validate_result *r)
{
    size_t len;
    *fatal = DW_FE_NONE;
    *r = (dw_validate_result){ 0, 0 };
    if (s->policy_given) s->policy_src = *s->policy_given;      /* --policy-format json */
    else if (dw_read_file(pol, &s->policy_text, &len)) { fprintf(stderr, "%s: error: cannot read\n", pol); return 1; }
    else s->policy_src = (dw_source){ pol, s->policy_text, len };
    if (dw_session_load_schema(s, sch) || dw_session_load_events(s, events)) return 2;
    /* §16's order: macros, temporal acceptance rules, then the Cedar side and
     * the temporal dialect against the schemas */
    dw_front_end fe = { .src = &s->policy_src, .schema = s->schema, .dv = s->dv, .providers = s->providers,
                        .macros = dw_session_macros(s) };
    *fatal = dw_front_end_run(&fe, DW_FE_STRUCTURE, &s->diags, NULL);
    s->ps = fe.ps;               /* freed with the session */
    s->macro_lib = fe.lib;
    if (*fatal) return 0;
    /* the temporal checks against the schemas are findings, counted with the Cedar side's */
    size_t before = s->diags.nerrors;
    dw_front_end_step(&fe, &s->diags);
    size_t terr = s->diags.nerrors - before;
    *r = dw_validate_with_providers(s->ps, s->schema, s->providers, &s->diags);
    r->nerrors += terr;
    return 0;
}
