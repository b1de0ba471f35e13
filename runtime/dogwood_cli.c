/* dogwood_cli.c - `dwc dogwood validate|replay`: the reference's commands
 * (dogwood.md §18).  Exit codes are the reference's: 0 success, 1 an I/O
 * error, 2 rejected input or a usage error (§20 Q5).  replay is the
 * compatibility replay: it does not validate (§16) and takes each request
 * unchecked against the schema, as the reference does (dwc replay
 * --validate false --request-validation false).  lower is in
 * dogwood_lower.c; `schema providers|action|event|mcp` dogwood_schema.c's.
 * --macros FILE replaces the standard macro library (§10.6) in every POLICY
 * command. */

#include "dogwood_cli.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "dogwood_lower.h"
#include "dogwood_schema.h"
#include "replay.h"
#include "validate_files.h"
#include "../lang/eventschema.h"
#include "../lang/json.h"
#include "../lang/providers.h"

const char dw_dogwood_usage[] =
    "usage: dwc dogwood check-parse POLICY [--format human|json]\n"
    "       dwc dogwood validate POLICY --policy-schema FILE [--event-schema FILE] [--format human|json]\n"
    "       dwc dogwood replay POLICY --policy-schema FILE --trace FILE [--event-schema FILE] [--format human|json]\n"
    "       dwc dogwood lower POLICY --policy-schema FILE [--emit WHAT] [--event-schema FILE] [--format human|json]\n"
    "       dwc dogwood schema providers|action|event FILE [--format human|json]\n"
    "       dwc dogwood schema mcp --manifest FILE [-o FILE] [--namespace NS] [--number decimal]\n"
    "Every POLICY command also takes --providers FILE (provider declarations, dogwood.md §13.2)\n"
    "and --macros FILE (a macro library that replaces the standard one, §10.6).\n"
    "The Dogwood reference's commands (dogwood.md §18), outputs and exit codes: 0 success, 1 an I/O\n"
    "error, 2 rejected input or a usage error.  POLICY may be `-` (standard input).\n"
    "  check-parse  parse and macro-expand; per policy its temporal leaves and provider calls, and\n"
    "            `warning: undeclared provider Ns::Fn` for each not declared (nor a built-in);\n"
    "            --format json: {\"policy_count\",\"policies\":[{\"temporal_count\",\"uses_temporal\",\n"
    "            \"provider_invocations\",\"undeclared_providers\"}]}\n"
    "  validate  parse, lower, validate: `OK: validation passed with no errors or warnings.` or each\n"
    "            finding with its source line; exit 0 when there are no errors (warnings allowed).\n"
    "            --format json: {\"passed\",\"passed_without_warnings\",\"errors\":[{\"message\",\"labels\"}],\"warnings\"}\n"
    "  replay    feed a .log trace (§17) to a fresh authorizer, without validating (§16) and with\n"
    "            requests unchecked against the schema, as the reference: one line per decision,\n"
    "            `@<ts> (time point <n>): ALLOW|DENY[  [rules: i, j]]`, or {\"verdicts\":[...]};\n"
    "            verdicts do not affect the exit code.\n"
    "  lower     validate, then print the Cedar policies the set lowers to (§14: one per rule, clauses\n"
    "            folded, temporal leaves as context.policy_<i>__temporal_<k>, provider invocations as\n"
    "            context.providers.policy_<i>_p_<k>) and the augmented schema;\n"
    "            --emit cedar-policies|cedar-schema|cedar-json|both (default both); --format json:\n"
    "            {\"cedar_policies\",\"cedar_schema\",\"cedar_schema_json\",\"self_contained\",\"temporal_fields\",\n"
    "            \"provider_fields\",\"decision_kinds\"}; a note on stderr when the set is not self-contained.\n"
    "  schema providers  check a provider declaration file: its findings with file:line:col, then\n"
    "            `OK: N provider(s) declared` ({\"kind\":\"providers\",\"ok\",\"warnings\"} with --format json)\n"
    "  schema action|event  check a Cedar schema / parse-check an event schema, in the same form\n"
    "  schema mcp  an action schema from an MCP tool manifest (§11.3; `dwc dogwood schema` for more)\n"
    ;

typedef struct dogwood_args {
    const char *pol, *sch, *ev, *trace, *fmt, *providers, *macros, *emit;
} dogwood_args;

/* 0 parsed; otherwise the exit code (usage errors are 2, as §20 Q5). */
static int parse_args(int argc, char **argv, dogwood_args *a)
{
    *a = (dogwood_args){ .fmt = "human", .emit = "both" };
    const dw_cli_opt opts[] = {
        { "policy-schema", 0, &a->sch, NULL }, { "event-schema", 0, &a->ev, NULL }, { "trace", 0, &a->trace, NULL },
        { "format", 0, &a->fmt, NULL }, { "providers", 0, &a->providers, NULL }, { "macros", 0, &a->macros, NULL },
        { "emit", 0, &a->emit, NULL }, { 0 },
    };
    int pr = dw_cli_parse(argc, argv, opts, &a->pol, dw_dogwood_usage);
    if (pr) return pr > 0 ? -1 : 2;
    const char *missing = !a->pol ? "POLICY" : !a->sch && strcmp(argv[0], "check-parse") ? "--policy-schema FILE" : NULL;
    if (missing) { fprintf(stderr, "dwc dogwood %s: error: missing %s\n", argv[0], missing); return 2; }
    if (strcmp(a->fmt, "human") && strcmp(a->fmt, "json")) {
        fprintf(stderr, "dwc dogwood %s: error: --format must be human or json, not `%s`\n", argv[0], a->fmt);
        return 2;
    }
    /* I/O errors first (exit 1), then rejected input (exit 2) */
    const char *files[6] = { a->pol, a->sch, a->ev && !dw_event_schema_builtin_text(a->ev) ? a->ev : NULL, a->trace, a->providers,
                             a->macros };
    for (int k = 0; k < 6; k++) {
        if (!files[k] || !strcmp(files[k], "-")) continue;
        FILE *f = fopen(files[k], "rb");
        if (!f) { fprintf(stderr, "dwc dogwood %s: %s: %s\n", argv[0], files[k], strerror(errno)); return 1; }
        fclose(f);
    }
    return 0;
}

void dw_dogwood_json_findings(const dw_diags *d, dw_severity sev)
{
    printf("[");
    bool first = true;
    for (size_t i = 0; i < d->n; i++) {
        const dw_diag *g = &d->v[i];
        if (g->sev != sev) continue;
        printf("%s{\"message\":", first ? "" : ",");
        dw_json_escape_file(stdout, g->msg, strlen(g->msg), DW_JSON_REPLACE);
        printf(",\"labels\":[");
        if (g->src) printf("[%u,%u]", g->loc.off, g->loc.end);
        printf("]}");
        first = false;
    }
    printf("]");
}

static int dogwood_validate(int argc, char **argv)
{
    dogwood_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    bool json = !strcmp(a.fmt, "json");
    dw_session s;
    dw_session_init(&s);
    dw_fe_stage fatal;
    dw_validate_result r;
    rc = a.providers ? dw_session_load_providers(&s, a.providers) : 0;
    if (!rc && a.macros) rc = dw_session_load_macros(&s, a.macros);
    if (!rc) rc = dw_validate_files(&s, a.pol, a.sch, a.ev, &fatal, &r);
    if (rc) { dw_session_free(&s); return rc; }
    size_t nerr = fatal ? s.diags.nerrors + !s.diags.nerrors : r.nerrors, nwarn = fatal ? 0 : r.nwarnings;
    if (json) {
        printf("{\"passed\":%s,\"passed_without_warnings\":%s,\"errors\":", nerr ? "false" : "true", nerr || nwarn ? "false" : "true");
        dw_dogwood_json_findings(&s.diags, DW_SEV_ERROR);
        printf(",\"warnings\":");
        dw_dogwood_json_findings(&s.diags, DW_SEV_WARNING);
        printf("}\n");
    } else {
        dw_diags_print(&s.diags, stdout);
        if (nerr) printf("validation failed: %zu error(s), %zu warning(s)\n", nerr, nwarn);
        else if (nwarn) printf("validation passed with %zu warning(s)\n", nwarn);
        else printf("OK: validation passed with no errors or warnings.\n");
    }
    dw_session_free(&s);
    return nerr ? 2 : 0;
}

static int dogwood_replay(int argc, char **argv)
{
    dogwood_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    if (!a.trace) { fprintf(stderr, "dwc dogwood replay: error: missing --trace FILE\n"); return 2; }
    char *rv[24];      /* every option below at once: 19 words and the NULL */
    int n = 0;
    rv[n++] = "replay";
    rv[n++] = "-p"; rv[n++] = (char *)a.pol;
    rv[n++] = "-s"; rv[n++] = (char *)a.sch;
    if (a.ev) { rv[n++] = "--events"; rv[n++] = (char *)a.ev; }
    if (a.providers) { rv[n++] = "--providers"; rv[n++] = (char *)a.providers; }
    if (a.macros) { rv[n++] = "--macros"; rv[n++] = (char *)a.macros; }
    rv[n++] = "--format"; rv[n++] = (char *)a.fmt;
    rv[n++] = "--request-validation"; rv[n++] = "false";
    rv[n++] = "--validate"; rv[n++] = "false";
    rv[n++] = "--";
    rv[n++] = (char *)a.trace;
    rv[n] = NULL;
    rc = dw_cmd_replay(n, rv);
    return rc == 3 ? 2 : rc;     /* 3 (an expectation failed) is Box's JSON lines only, refused above */
}

/* ---- check-parse ---- */

typedef struct parse_counts {
    size_t temporal;
    const dw_expr **calls; size_t ncalls, cap;   /* provider calls, in source order */
} parse_counts;

static bool count_expr(parse_counts *c, const dw_expr *e, int depth)
{
    if (!e || depth > 4096) return true;
    if (e->kind == DW_E_TEMPORAL) { c->temporal++; return true; }
    if (e->kind == DW_E_CALL && e->u.call.nsegs >= 2) {      /* two or more segments: a provider (ast.h) */
        if (c->ncalls == c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 8;
            const dw_expr **v = realloc(c->calls, cap * sizeof *v);
            if (!v) return false;
            c->calls = v;
            c->cap = cap;
        }
        c->calls[c->ncalls++] = e;
    }
    const dw_expr *k;
    for (size_t i = 0; (k = dw_expr_kid_c(e, i)); i++)
        if (!count_expr(c, k, depth + 1)) return false;
    return true;
}

static int dogwood_check_parse(int argc, char **argv)
{
    dogwood_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    bool json = !strcmp(a.fmt, "json");
    char *text;
    size_t len;
    if (dw_read_file(a.pol, &text, &len)) { fprintf(stderr, "dwc dogwood check-parse: %s: %s\n", a.pol, strerror(errno)); return 1; }
    dw_source src = { a.pol, text, len };
    dw_diags d;
    dw_diags_init(&d);
    dw_front_end fe = { .src = &src };
    dw_source psrc = { a.providers, NULL, 0 }, msrc = { a.macros, NULL, 0 };
    char *ptext = NULL, *mtext = NULL;
    dw_providers *decls = NULL;
    rc = 0;
    if (a.providers) {
        if (dw_read_file(a.providers, &ptext, &psrc.len)) { fprintf(stderr, "dwc dogwood check-parse: %s: %s\n", a.providers, strerror(errno)); rc = 1; goto out; }
        psrc.text = ptext;
        decls = dw_providers_parse(&psrc, &d);
        if (!decls || d.nerrors) { dw_diags_print(&d, stderr); rc = 2; goto out; }
    }
    if (a.macros) {
        if (dw_read_file(a.macros, &mtext, &msrc.len)) { fprintf(stderr, "dwc dogwood check-parse: %s: %s\n", a.macros, strerror(errno)); rc = 1; goto out; }
        msrc.text = mtext;
        fe.macros = &msrc;
    }
    if (dw_front_end_run(&fe, DW_FE_EXPAND, &d, NULL)) {
        dw_diags_print(&d, stderr);
        if (!d.nerrors) fprintf(stderr, "dwc dogwood check-parse: out of memory\n");
        rc = 2;
        goto out;
    }
    if (json) printf("{\"policy_count\":%zu,\"policies\":[", fe.ps->npolicies);
    for (size_t i = 0; i < fe.ps->npolicies; i++) {
        const dw_policy *p = &fe.ps->policies[i];
        parse_counts c = { 0 };
        bool ok = true;
        for (size_t k = 0; k < p->nclauses && ok; k++) ok = count_expr(&c, p->clauses[k].body, 0);
        size_t nundecl = 0;      /* the declared ones (and the built-ins) out of c.calls */
        for (size_t k = 0; k < c.ncalls; k++)
            if (!dw_providers_find(decls, c.calls[k]->u.call.name.s, c.calls[k]->u.call.name.len)) c.calls[nundecl++] = c.calls[k];
        if (!ok) { free(c.calls); fprintf(stderr, "dwc dogwood check-parse: out of memory\n"); rc = 2; goto out; }
        if (json) {
            printf("%s{\"temporal_count\":%zu,\"uses_temporal\":%s,\"provider_invocations\":%zu,\"undeclared_providers\":[",
                   i ? "," : "", c.temporal, c.temporal ? "true" : "false", c.ncalls);
            for (size_t k = 0; k < nundecl; k++) {
                if (k) printf(",");
                dw_json_escape_file(stdout, c.calls[k]->u.call.name.s, c.calls[k]->u.call.name.len, DW_JSON_REPLACE);
            }
            printf("]}");
        } else {
            printf("policy %zu: %zu temporal leaf(s), %zu provider invocation(s)\n", i, c.temporal, c.ncalls);
            for (size_t k = 0; k < nundecl; k++)
                printf("warning: undeclared provider %.*s\n", (int)c.calls[k]->u.call.name.len, c.calls[k]->u.call.name.s);
        }
        free(c.calls);
    }
    if (json) printf("]}\n");
out:
    dw_diags_free(&d);
    dw_front_end_free(&fe);
    dw_providers_free(decls);
    free(ptext);
    free(mtext);
    free(text);
    return rc;
}

int dw_cmd_dogwood(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(dw_dogwood_usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "validate")) return dogwood_validate(argc - 1, argv + 1);
    if (!strcmp(argv[1], "replay")) return dogwood_replay(argc - 1, argv + 1);
    if (!strcmp(argv[1], "check-parse")) return dogwood_check_parse(argc - 1, argv + 1);
    if (!strcmp(argv[1], "lower")) {
        dogwood_args a;
        int rc = parse_args(argc - 1, argv + 1, &a);
        return rc ? (rc < 0 ? 0 : rc) : dw_dogwood_lower(a.pol, a.sch, a.ev, a.providers, a.macros, a.emit, !strcmp(a.fmt, "json"));
    }
    if (!strcmp(argv[1], "schema")) return dw_dogwood_schema(argc - 1, argv + 1);
    fprintf(stderr, "dwc dogwood: error: unknown command `%s`\n%s", argv[1], dw_dogwood_usage);
    return 2;
}
