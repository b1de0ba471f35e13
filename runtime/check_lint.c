/* check_lint.c - the lint part of `dwc check` as one call (check_lint.h). */
#include "check_lint.h"
#include "check_filter.h"

void dw_check_lint_finish(const dw_source *src, const dw_policy_set *ps, const dw_cli_list *disable, dw_findings *f)
{
    dw_policy_set *own = NULL;
    if (!ps) {
        /* the parsed set: each finding's policy and its @suppress */
        dw_diags d;
        dw_diags_init(&d);
        ps = own = dw_parse_policy_set(src, &d);
        dw_diags_free(&d);
    }
    static const dw_cli_list none = { 0 };
    dw_check_attribute(f, ps);
    dw_check_suppress(f, disable ? disable : &none, ps);
    if (own) dw_policy_set_free(own);
}

int dw_check_lint(const dw_source *src, const dw_check_lint_options *o, dw_findings *out)
{
    dw_lint_options opt = { .box = o->box, .home = o->home, .schema = o->schema, .dv = o->dv };
    int rc = dw_lint_run(src, &opt, out, NULL);
    if (rc < 0) return rc;
    dw_check_lint_finish(src, NULL, o->disable, out);
    dw_findings_sort(out);
    return rc;
}
