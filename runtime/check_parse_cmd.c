/* check_parse_cmd.c - `dwc check-parse` as Cedar's CLI has it: each input
 * given (policies with -p, else from standard input when nothing else is
 * given; an --expression; a schema; entities, read under the schema) must
 * parse.  Exit 0 when all do, 1 otherwise, each failure reported (on
 * stderr: dwc's diagnostics, file:line:col and a caret; Cedar prints its
 * report on stdout).  Policies are parsed, expanded and compiled without a
 * schema (no validation: that is `validate`). */
#include "check_parse_cmd.h"
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "translate_cmd.h"

const char dw_check_parse_usage[] =
    "usage: dwc check-parse [-p POLICIES] [--policy-format cedar|json] [-k LINKS] [--expression E]\n"
    "                       [-s SCHEMA] [--schema-format cedar|json] [--entities FILE]\n"
    "Check that each input given parses (Cedar's command); with none, the policies on standard\n"
    "input.  Exit 0 when all parse, 1 otherwise.\n"
    "  -p, --policies FILE          the policy set\n"
    "      --policy-format F        cedar (default) or json (Cedar's JSON policy format)\n"
    "  -k, --template-linked FILE   template links for the set\n"
    "      --expression E           a Cedar expression\n"
    "  -s, --schema FILE            a schema (Cedar text or JSON)\n"
    "      --schema-format F        accepted for Cedar's CLI; the form is read from the text\n"
    "      --entities FILE          an entities file, read under the schema if one is given\n";

static int expression_parses(const char *text)
{
    dw_source src = { "--expression", text, strlen(text) };
    dw_policy_set owner = { 0 };
    dw_arena_init(&owner.arena, 4096);
    dw_diags d;
    dw_diags_init(&d);
    const dw_expr *e = dw_parse_expr(&owner, &src, &d);
    int rc = e && !d.nerrors ? 0 : 1;
    if (rc && !d.nerrors) fprintf(stderr, "--expression: error: out of memory\n");
    dw_diags_print(&d, stderr);
    dw_diags_free(&d);
    dw_arena_free(&owner.arena);
    return rc;
}

int dw_cmd_check_parse(int argc, char **argv)
{
    const char *pol = NULL, *pf = NULL, *links = NULL, *expr = NULL, *sch = NULL, *sf = NULL, *ent = NULL;
    const dw_cli_opt opts[] = {
        { "policies", 'p', &pol, NULL }, { "policy-format", 0, &pf, NULL }, { "template-linked", 'k', &links, NULL },
        { "expression", 0, &expr, NULL }, { "schema", 's', &sch, NULL }, { "schema-format", 0, &sf, NULL },
        { "entities", 0, &ent, NULL }, { 0 },
    };
    int pr = dw_cli_parse(argc, argv, opts, NULL, dw_check_parse_usage);
    if (pr) return pr > 0 ? 0 : dw_cli_usage_status();
    if (!dw_cli_cedar_form_ok("check-parse", "policy-format", pf) || !dw_cli_cedar_form_ok("check-parse", "schema-format", sf)) return dw_cli_usage_status();
    if (!pol && !sch && !ent && !expr) pol = "-";      /* Cedar's: the policies on standard input */
    int rc = 0;
    dw_session s;
    dw_session_init(&s);
    dw_policy_json pjson = { 0 };
    if (pol) {
        s.links_path = links;
        s.cedar_ids = true;
        if (dw_policy_format_apply(&s, pf, pol, &pjson) || dw_session_load_policies(&s, pol)) rc = 1;
    }
    if (expr && expression_parses(expr)) rc = 1;
    dw_session es;                  /* the schema and entities apart from the policies' session */
    dw_session_init(&es);
    if (sch && dw_session_load_schema(&es, sch)) rc = 1;
    else if (ent && dw_session_load_entities(&es, ent)) rc = 1;
    dw_session_free(&es);
    dw_session_free(&s);
    dw_policy_json_free(&pjson);
    return rc;
}
