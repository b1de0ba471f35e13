/* dwc - the Dogwood policy compiler and toolchain driver.
 * Each subcommand is one function; `dwc help` lists them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "load.h"
#include "bench.h"
#include "replay.h"
#include "dwtest.h"
#include "explain_cmd.h"
#include "validate_files.h"
#include "dogwood_cli.h"
#include "check.h"
#include "lsp.h"
#include "cli.h"
#include "dogwood_parts.h"
#include "../compiler/artifact_serve.h"
#include "../compiler/artifact_write.h"
#include "../compiler/typecheck.h"
#include "../compiler/pipeline.h"
#include "../compiler/provcheck.h"
#include "links.h"
#include "link_cmd.h"
#include "format_cmd.h"
#include "translate_cmd.h"
#include "check_parse_cmd.h"
#include "evaluate_cmd.h"
#include "new_cmd.h"
#include "../vm/artifact.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    const char *usage;
} command;

static const command *find_command(const char *name);

/* ---- dwc authorize ---- */
static const char authorize_usage[] =
    "usage: dwc authorize -p POLICIES [-s SCHEMA] [--entities FILE]\n"
    "                     (--request-json FILE | -l PRINCIPAL -a ACTION -r RESOURCE [-c CONTEXT])\n"
    "                     [-v] [--providers FILE] [--macros FILE]\n"
    "       dwc authorize -p POLICIES [-s SCHEMA] [--entities FILE] --requests FILE.jsonl\n"
    "Decide one request.  Prints ALLOW or DENY; with -v also the determining and\n"
    "erroring policies.  Exit 0 allow, 2 deny, 1 on any error (like Cedar's CLI).\n"
    "  -p, --policies FILE      policy set (.dw or .cedar)\n"
    "  -s, --schema FILE        Cedar schema (.cedarschema or JSON); strings in entities and\n"
    "                           context become extension values where the schema says so\n"
    "      --entities FILE      entities JSON (array of {uid, attrs, parents, tags})\n"
    "      --request-json FILE  {\"principal\":..., \"action\":..., \"resource\":..., \"context\":{...}}\n"
    "                           uids as Type::\"id\" strings or {\"type\",\"id\"} objects\n"
    "  -l, --principal UID      e.g. 'User::\"alice\"'\n"
    "  -a, --action UID         e.g. 'Action::\"view\"'\n"
    "  -r, --resource UID\n"
    "  -c, --context FILE       context JSON object\n"
    "      --requests FILE      one request JSON per line; prints one line per request:\n"
    "                           `N: ALLOW|DENY [determining ids] [errors: ids]`; a request that\n"
    "                           fails the schema gate is DENY with `invalid: reason`\n"
    "  -k, --template-linked FILE  Cedar's template links: a JSON array of {\"template_id\",\n"
    "                           \"link_id\", \"args\": {\"?principal\": UID, \"?resource\": UID}}; a linked\n"
    "                           policy is named by its link id, unlinked templates are ignored\n"
    "                           (a template is named by its @id, else policyN by position)\n"
    "  -v, --verbose            print determining and erroring policy ids\n"
    "  -t, --timing             print the decision's time first, as Cedar's CLI does\n"
    "      --request-validation true|false  false: the request is not checked against the\n"
    "                           schema's appliesTo (its context is still parsed with it)\n"
    "      --schema-format cedar|json  accepted for Cedar's CLI; the form is read from the text\n"
    "Run as `cedar` (a link named cedar), the output is Cedar's CLI's: a blank line, the\n"
    "decision, the errors, and with -v Cedar's note listing the policies by @id.\n";

/* Turn a uid given as text into the JSON object form the request loader reads. */
static const dw_json *uid_json(dw_arena *a, const char *text, const char *what)
{
    const dw_uid *u = dw_uid_from_text(a, text, strlen(text));
    if (!u) {
        fprintf(stderr, "dwc authorize: error: %s `%s` is not an entity uid\n  hint: write it as Type::\"id\", e.g. User::\"alice\"\n", what, text);
        return NULL;
    }
    return dw_uid_json(a, u);
}

/* A request-JSON uid may be a Type::"id" string or an object. */
static const dw_json *request_uid(dw_arena *a, const dw_json *j, const char *what)
{
    if (j && j->kind == DW_JSON_STRING) return uid_json(a, j->u.str.s, what);
    return j;
}

static const dw_json *parse_json_file(dw_session *s, const char *path, dw_source *src, char **text)
{
    size_t len;
    if (dw_read_file(path, text, &len)) { perror(path); return NULL; }
    src->name = path;
    src->text = *text;
    src->len = len;
    const dw_json *j = dw_json_parse(&s->scratch, src, &s->diags);
    if (!j) dw_diags_print(&s->diags, stderr);
    return j;
}

static void print_ids(const dw_program *prog, const uint32_t *idx, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        const dw_policy_code *pc = &prog->policies[idx[i]];
        printf("%s%.*s", i ? "," : "", (int)pc->id.len, pc->id.s);
    }
}

/* Invoked as `cedar` (dwc on PATH under Cedar's name): authorize prints
 * Cedar's CLI shape (cedar-policy-cli's authorize): a blank line first, the
 * decision, each erroring policy's error after a blank line, and with -v the
 * note and the determining policies' ids (@id-aware). */
static bool as_cedar;

static void print_cedar_answer(const dw_program *prog, const dw_response *resp, bool verbose)
{
    if (resp->nerrors) putchar('\n');
    for (uint32_t i = 0; i < resp->nerrors; i++) {
        const dw_policy_code *pc = &prog->policies[resp->errors[i].policy];
        printf("error while evaluating policy `%.*s`: %s\n", (int)pc->id.len, pc->id.s,
               resp->errors[i].detail ? resp->errors[i].detail : dw_eval_status_name(resp->errors[i].status));
    }
    if (!verbose) return;
    putchar('\n');
    if (!resp->ndetermining) { puts("note: no policies applied to this request"); return; }
    puts("note: this decision was due to the following policies:");
    for (uint32_t i = 0; i < resp->ndetermining; i++) {
        const dw_policy_code *pc = &prog->policies[resp->determining[i]];
        printf("  %.*s\n", (int)pc->id.len, pc->id.s);
    }
    putchar('\n');
}

/* Batch mode: each line of a JSON-lines file is one request. */
static int authorize_lines(dw_session *s, const char *path, bool validate_request)
{
    char *text;
    size_t len;
    if (dw_read_file(path, &text, &len)) { perror(path); return 1; }
    int rc = 0;
    size_t lineno = 0;
    for (char *line = text; line && *line; ) {
        char *nl = strchr(line, '\n');
        size_t ll = nl ? (size_t)(nl - line) : strlen(line);
        lineno++;
        dw_source src = { path, line, ll };
        bool blank = true;
        for (size_t i = 0; i < ll; i++) if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r') blank = false;
        if (!blank) {
            dw_arena_reset(&s->scratch);
            const dw_json *r = dw_json_parse(&s->scratch, &src, &s->diags);
            dw_request req;
            dw_buf err = { 0 };
            dw_response resp;
            if (!r) {
                printf("%zu: DENY invalid: not a JSON request\n", lineno);
                dw_diags_free(&s->diags);
                dw_diags_init(&s->diags);
            } else if (dw_request_from_json(&s->scratch, request_uid(&s->scratch, dw_json_get(r, "principal"), "principal"),
                                            request_uid(&s->scratch, dw_json_get(r, "action"), "action"),
                                            request_uid(&s->scratch, dw_json_get(r, "resource"), "resource"),
                                            dw_json_get(r, "context"), s->schema, s->schema && validate_request, &req, &err)) {
                printf("%zu: DENY invalid: %s\n", lineno, err.p ? err.p : "?");
            } else if (dw_authorize(s->prog, &s->store, &req, &s->scratch, &resp)) {
                printf("%zu: DENY internal: out of memory\n", lineno);
                rc = 1;
            } else {
                printf("%zu: %s [", lineno, resp.allow ? "ALLOW" : "DENY");
                print_ids(s->prog, resp.determining, resp.ndetermining);
                printf("]");
                if (resp.nerrors) {
                    uint32_t *e = dw_arena_alloc(&s->scratch, resp.nerrors * sizeof *e);
                    for (uint32_t i = 0; e && i < resp.nerrors; i++) e[i] = resp.errors[i].policy;
                    printf(" errors: [");
                    if (e) print_ids(s->prog, e, resp.nerrors);
                    printf("]");
                }
                printf("\n");
            }
            dw_buf_free(&err);
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    return rc;
}

/* Box's requests.jsonl for a temporal policy (box.md §15.1): each request is
 * decided alone on a fresh history holding only itself, at 2025-01-01T00:00:00Z. */
static const int64_t engine_t0 = 1735689600LL * 1000000000LL;

static const char *authorize_providers;   /* --providers FILE (dogwood.md §13.2) */
static const char *authorize_macros;      /* --macros FILE (§10.6) */

static dw_engine *open_authorizer(const char *pol, const char *sch, const char *events)
{
    dw_engine_config cfg = { .policy_path = pol, .schema_path = sch, .events_path = events, .ticks_per_second = 1000000000,
                             .providers_path = authorize_providers };
    char err[256];
    dw_engine_cli_options eo = { .macros_path = authorize_macros };
    dw_engine *e = dw_engine_open_cli(&cfg, &eo, err, sizeof err);
    if (!e) fprintf(stderr, "dwc authorize: error: %s\n", err);
    return e;
}

/* One request (--request-json) against a temporal set, the same way: the VM
 * alone cannot evaluate the temporal leaves, and a rule whose leaf errors
 * would be skipped (a forbid that should deny would not). */
static int authorize_one_engine(const dw_program *prog, const char *pol, const char *sch, const char *events,
                                const char *path, bool verbose)
{
    char *text;
    size_t len;
    if (dw_read_file(path, &text, &len)) { perror(path); return 1; }
    dw_engine *e = open_authorizer(pol, sch, events);
    if (!e) { free(text); return 1; }
    dw_verdict v;
    dw_engine_decide_request_json(e, text, len, engine_t0, &v);
    free(text);
    dw_engine_close(e);
    if (v.cause == DW_CAUSE_INTERNAL_FAULT && !v.ndetermining && !v.nerrors) {
        fprintf(stderr, "dwc authorize: error: invalid request: %s\n", v.message);
        return 1;
    }
    puts(v.allow ? "ALLOW" : "DENY");
    if (verbose) {
        printf("determining: ");
        print_ids(prog, v.determining, v.ndetermining);
        printf("\nerrors: %u%s%s\n", v.nerrors, v.nerrors && v.message[0] ? " " : "", v.nerrors ? v.message : "");
    }
    return v.allow ? 0 : 2;
}

static int authorize_lines_engine(const char *pol, const char *sch, const char *events, const char *path)
{
    dw_engine *e = open_authorizer(pol, sch, events);
    if (!e) return 2;
    char *text;
    size_t len;
    if (dw_read_file(path, &text, &len)) { perror(path); dw_engine_close(e); return 1; }
    size_t lineno = 0;
    const int64_t t0 = engine_t0;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        size_t ll = nl ? (size_t)(nl - line) : strlen(line);
        lineno++;
        bool blank = true;
        for (size_t i = 0; i < ll; i++) if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r') blank = false;
        if (!blank) {
            dw_engine_reset_history(e);
            dw_verdict v;
            dw_engine_decide_request_json(e, line, ll, t0, &v);
            if (v.cause == DW_CAUSE_INTERNAL_FAULT && !v.ndetermining && !v.nerrors)
                printf("%zu: DENY invalid: %s\n", lineno, v.message);
            else {
                printf("%zu: %s [", lineno, v.allow ? "ALLOW" : "DENY");
                for (uint32_t k = 0; k < v.ndetermining; k++) printf("%spolicy%u", k ? "," : "", v.determining[k]);
                printf("]%s\n", v.nerrors ? " errors: [...]" : "");
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    dw_engine_close(e);
    return 0;
}

static int cmd_authorize(int argc, char **argv)
{
    const char *lines = NULL, *events = NULL, *links = NULL, *schema_format = NULL, *reqval = "true", *policy_format = NULL;
    const char *pol = NULL, *sch = NULL, *ent = NULL, *rq = NULL, *pl = NULL, *ac = NULL, *rs = NULL, *cx = NULL;
    bool verbose = false, timing = false;
    const dw_cli_opt opts[] = {
        { "schema-format", 0, &schema_format, NULL }, { "request-validation", 0, &reqval, NULL }, { "timing", 't', NULL, &timing },
        { "policies", 'p', &pol, NULL }, { "schema", 's', &sch, NULL }, { "entities", 0, &ent, NULL },
        { "request-json", 0, &rq, NULL }, { "principal", 'l', &pl, NULL }, { "action", 'a', &ac, NULL },
        { "resource", 'r', &rs, NULL }, { "context", 'c', &cx, NULL }, { "verbose", 'v', NULL, &verbose },
        { "requests", 0, &lines, NULL }, { "events", 0, &events, NULL }, { "template-linked", 'k', &links, NULL },
        { "policy-format", 0, &policy_format, NULL },
        { "providers", 0, &authorize_providers, NULL }, { "macros", 0, &authorize_macros, NULL }, { 0 },
    };
    int pr = dw_cli_parse(argc, argv, opts, NULL, authorize_usage);
    if (pr) return pr > 0 ? 0 : dw_cli_usage_status();
    if (!pol && as_cedar) pol = "-";           /* Cedar's: the policies on standard input */
    if (!pol || (!rq && !lines && (!pl || !ac || !rs))) {
        fprintf(stderr, "dwc authorize: error: %s\n", !pol ? "missing -p POLICIES" : "give --request-json FILE or all of -l, -a, -r");
        fputs(authorize_usage, stderr);
        return 1;
    }
    if (!dw_cli_cedar_form_ok("authorize", "schema-format", schema_format) || !dw_cli_cedar_form_ok("authorize", "policy-format", policy_format))
        return dw_cli_usage_status();
    if (strcmp(reqval, "true") && strcmp(reqval, "false")) {
        fprintf(stderr, "dwc authorize: error: --request-validation must be true or false, not `%s`\n", reqval);
        return dw_cli_usage_status();
    }
    bool validate_request = strcmp(reqval, "true") == 0;
    dw_session s;
    dw_session_init(&s);
    dw_policy_json pjson = { 0 };
    int rc = 1;
    char *rq_text = NULL, *cx_text = NULL;
    dw_source rq_src, cx_src;
    if (sch && dw_session_load_schema(&s, sch)) goto out;
    if (sch && dw_session_load_events(&s, events)) goto out;
    s.links_path = links;
    s.cedar_ids = as_cedar;     /* dwc names statics by position, Cedar by @id; templates by @id for -k (link.h) */
    if (authorize_providers && dw_session_load_providers(&s, authorize_providers)) goto out;
    if (authorize_macros && dw_session_load_macros(&s, authorize_macros)) goto out;
    if (dw_policy_format_apply(&s, policy_format, pol, &pjson)) goto out;
    if (dw_session_load_policies(&s, pol)) goto out;
    /* temporal leaves and provider calls are evaluated by the stateful engine (§15.1 steps 3-4) */
    const bool stateful = s.prog->temporal.nleaves || s.prog->provider.ncalls;
    if (!validate_request && stateful) {
        fprintf(stderr, "dwc authorize: error: --request-validation false is not supported for a set with temporal rules\n");
        goto out;
    }
    if (links && stateful) {
        fprintf(stderr, "dwc authorize: error: -k links a set with temporal rules: not supported (the stateful engine reads the policy file alone)\n");
        goto out;
    }
    if (lines && stateful) {
        /* temporal rules need the stateful authorizer: each line alone on a fresh history */
        rc = authorize_lines_engine(pol, sch, events, lines);
        goto out;
    }
    if (stateful) {
        if (rq) rc = authorize_one_engine(s.prog, pol, sch, events, rq, verbose);
        else fprintf(stderr, "dwc authorize: error: %s has temporal rules: give the request as --request-json FILE or"
                             " --requests FILE.jsonl (decided through the stateful engine on a history holding only it)\n", pol);
        goto out;
    }
    if (dw_session_load_entities(&s, ent)) goto out;
    if (lines) { rc = authorize_lines(&s, lines, validate_request); goto out; }
    const dw_json *P, *A, *R, *C = NULL;
    if (rq) {
        const dw_json *r = parse_json_file(&s, rq, &rq_src, &rq_text);
        if (!r) goto out;
        P = request_uid(&s.scratch, dw_json_get(r, "principal"), "principal");
        A = request_uid(&s.scratch, dw_json_get(r, "action"), "action");
        R = request_uid(&s.scratch, dw_json_get(r, "resource"), "resource");
        C = dw_json_get(r, "context");
    } else {
        P = uid_json(&s.scratch, pl, "principal");
        A = uid_json(&s.scratch, ac, "action");
        R = uid_json(&s.scratch, rs, "resource");
        if (cx && !(C = parse_json_file(&s, cx, &cx_src, &cx_text))) goto out;
    }
    if (!P || !A || !R) goto out;
    dw_request req;
    dw_buf err = { 0 };
    if (dw_request_from_json(&s.scratch, P, A, R, C, s.schema, s.schema && validate_request, &req, &err)) {
        fprintf(stderr, "dwc authorize: error: invalid request: %s\n", err.p ? err.p : "?");
        dw_buf_free(&err);
        goto out;
    }
    dw_buf_free(&err);
    dw_response resp;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int ar = dw_authorize(s.prog, &s.store, &req, &s.scratch, &resp);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (ar) {
        fprintf(stderr, "dwc authorize: error: out of memory (decision: DENY)\n");
        goto out;
    }
    if (as_cedar) putchar('\n');
    if (timing)     /* Cedar's line, before the decision */
        printf("Authorization Time (micro seconds) : %lld\n",
               (long long)((t1.tv_sec - t0.tv_sec) * 1000000LL + (t1.tv_nsec - t0.tv_nsec) / 1000));
    puts(resp.allow ? "ALLOW" : "DENY");
    if (as_cedar) print_cedar_answer(s.prog, &resp, verbose);
    else if (verbose) {
        printf("determining: ");
        print_ids(s.prog, resp.determining, resp.ndetermining);
        printf("\nerrors:");
        for (uint32_t i = 0; i < resp.nerrors; i++) {
            const dw_policy_code *pc = &s.prog->policies[resp.errors[i].policy];
            printf(" %.*s (%s: %s)", (int)pc->id.len, pc->id.s, dw_eval_status_name(resp.errors[i].status),
                   resp.errors[i].detail ? resp.errors[i].detail : "");
        }
        printf("\n");
    }
    rc = resp.allow ? 0 : 2;
out:
    free(rq_text);
    free(cx_text);
    dw_session_free(&s);
    dw_policy_json_free(&pjson);
    return rc;
}

/* ---- dwc disasm ---- */
static const char disasm_usage[] =
    "usage: dwc disasm [-p] POLICIES\n"
    "Compile the policy set (or load the .dwb) and print its bytecode, one block per policy.\n"
    "  -p, --policies FILE   the policy set; also accepted as a bare argument\n";

static int cmd_disasm(int argc, char **argv)
{
    const char *pol = NULL;
    const dw_cli_opt opts[] = { { "policies", 'p', &pol, NULL }, { 0 } };
    int pr = dw_cli_parse(argc, argv, opts, &pol, disasm_usage);
    if (pr) return pr > 0 ? 0 : 1;
    if (!pol) { fputs(disasm_usage, stderr); return 1; }
    dw_session s;
    dw_session_init(&s);
    int rc = dw_session_load_policies(&s, pol);
    if (rc == 0) { dw_program_disasm(s.prog, stdout); dw_index_print(s.prog, stdout); }
    dw_session_free(&s);
    return rc;
}

/* ---- dwc compile ---- */
static const char compile_usage[] =
    "usage: dwc compile [-p] POLICY [-s SCHEMA|box] [--events E] [--providers FILE] [--macros FILE] [-o OUT.dwb|-]\n"
    "Compile a policy set to a verified bytecode artifact (default: POLICY with .dwb).\n"
    "With a schema the set must pass strict validation first (dogwood.md D13); with\n"
    "`box`, every load check of the Box profile (box.md §11: dwc check --schema box's\n"
    "errors), and the artifact records it (dwd --schema box serves no other).\n"
    "The output is deterministic: the same input gives the same bytes.  Every dwc\n"
    "command that takes -p POLICIES accepts the .dwb in place of the source.\n"
    "  -p, --policies FILE   the policy set; also accepted as a bare argument\n"
    "  -k, --template-linked FILE  Cedar's template links: the artifact holds each linked\n"
    "                        policy under its link id (templates themselves decide nothing)\n"
    "  -s, --schema FILE     Cedar schema, or `box`; the artifact carries its request gate\n"
    "                        and the event schema (dwd serves it without parsing either)\n"
    "      --events E        the event schema (.dwschema or a built-in name; default: the\n"
    "                        schema's, `box` for box); needs -s\n"
    "  -o, --output FILE     where to write the artifact (`-`: standard output)\n"
    "      --macros FILE     a macro library (only `def`s) that replaces the standard one\n"
    "                        (dogwood.md §10.6); the policy file's own definitions win\n"
    "      --quiet           on failure print only the first error, on one line (dwd --policy)\n";

static int cmd_compile(int argc, char **argv)
{
    const char *pol = NULL, *outp = NULL, *sch = NULL, *links = NULL, *events = NULL, *providers = NULL, *macros = NULL;
    bool quiet = false;
    const dw_cli_opt opts[] = { { "policies", 'p', &pol, NULL }, { "schema", 's', &sch, NULL }, { "output", 'o', &outp, NULL },
                                { "template-linked", 'k', &links, NULL }, { "events", 0, &events, NULL },
                                { "providers", 0, &providers, NULL }, { "macros", 0, &macros, NULL },
                                { "quiet", 0, NULL, &quiet }, { 0 } };
    int pr = dw_cli_parse(argc, argv, opts, &pol, compile_usage);
    if (pr) return pr > 0 ? 0 : 1;
    if (!pol) { fputs(compile_usage, stderr); return 1; }
    char defout[4096];
    if (!outp) {
        const char *dot = strrchr(pol, '.');
        size_t stem = dot && !strchr(dot, '/') ? (size_t)(dot - pol) : strlen(pol);
        snprintf(defout, sizeof defout, "%.*s.dwb", (int)stem, pol);
        outp = defout;
    }
    dw_session s;
    dw_session_init(&s);
    s.quiet = quiet;             /* the first error is kept in s.first_error, printed below */
    /* the schema first: the temporal checks against it run while loading, and
     * with `box` the Box profile's load checks (box.md §11), whose refusals
     * write no artifact; one written records that it passed them */
    if (events && !sch) { fprintf(stderr, "dwc compile: error: --events needs a schema (-s)\n"); return 1; }
    int rc = sch ? dw_session_load_schema(&s, sch) : 0;
    if (rc == 0 && sch) rc = dw_session_load_events(&s, events);
    s.links_path = links;
    if (rc == 0 && providers) rc = dw_session_load_providers(&s, providers);
    if (rc == 0 && macros) rc = dw_session_load_macros(&s, macros);
    if (rc == 0) rc = dw_session_load_policies(&s, pol);
    if (rc == 2 && s.box && !quiet) fprintf(stderr, "dwc compile: %s is refused under the Box schema; no artifact written\n", pol);
    if (rc == 0 && sch && !s.box && s.ps) {
        dw_validate_result r = dw_validate_with_providers(s.ps, s.schema, s.providers, &s.diags);
        dw_policy_set templates = *s.ps;     /* linking moved them out of the set: validated too */
        templates.policies = s.ps->templates;
        templates.npolicies = s.ps->ntemplates;
        r.nerrors += dw_validate_with_providers(&templates, s.schema, s.providers, &s.diags).nerrors;
        for (size_t i = 0; quiet && i < s.diags.n && !s.first_error[0]; i++)
            if (s.diags.v[i].sev == DW_SEV_ERROR) dw_diag_format(&s.diags.v[i], s.first_error, sizeof s.first_error);
        if (!quiet) dw_diags_print(&s.diags, stderr);
        if (r.nerrors) rc = 3;
        if (r.nerrors && !quiet) fprintf(stderr, "dwc compile: %zu validation error(s); no artifact written\n", r.nerrors);
    }
    if (rc == 0) {
        dw_buf b = { 0 };
        char msg[256];
        /* with a schema, what a service needs to serve it without a front end (compiler/artifact_serve.h) */
        if ((s.schema && dw_artifact_attach_serve(s.prog, s.schema, s.es, dw_session_events_digest(&s))) ||
            dw_artifact_write(s.prog, dw_session_schema_digest(&s), &b)) { fprintf(stderr, "dwc compile: error: out of memory\n"); rc = 1; }
        else {
            /* verify what we are about to ship */
            dw_program *check = dw_artifact_load(b.p, b.len, msg, sizeof msg);
            if (!check) { fprintf(stderr, "dwc compile: internal error: artifact does not verify: %s\n", msg); rc = 1; }
            dw_program_free(check);
            bool to_stdout = strcmp(outp, "-") == 0;
            FILE *f = rc ? NULL : to_stdout ? stdout : fopen(outp, "wb");
            if (!rc && (!f || fwrite(b.p, 1, b.len, f) != b.len || (to_stdout ? fflush(f) : fclose(f)))) {
                fprintf(stderr, "dwc compile: error: cannot write %s\n", outp);
                rc = 1;
            }
        }
        dw_buf_free(&b);
    }
    if (rc && quiet && s.first_error[0]) fprintf(stderr, "%s\n", s.first_error);
    dw_session_free(&s);
    return rc;
}

/* ---- dwc validate ---- */
static const char validate_usage[] =
    "usage: dwc validate -p POLICIES -s SCHEMA|box [-k LINKS] [--events E] [--providers FILE] [--macros FILE] [--deny-warnings]\n"
    "Cedar's strict validation of a policy set against a schema (dogwood.md §5).\n"
    "Each diagnostic names the policy (@id, else policyN), points at the expression and\n"
    "says what type was expected and what was found.\n"
    "Exit 0 valid (warnings allowed unless --deny-warnings), 3 invalid, 1 on any other error.\n"
    "  -k, --template-linked FILE  also validate each template-linked policy (named by its link id)\n"
    "      --schema-format cedar|json  accepted for Cedar's CLI; the form is read from the text\n";

/* The template-linked policies of -k, validated as the static policies they
 * become; the templates themselves were validated with the set.  0, or the
 * exit status of a links file that cannot be read or linked. */
static int validate_links(dw_session *s, const char *path, dw_validate_result *r)
{
    dw_template_link *links;
    size_t n;
    if (dw_read_file(path, &s->links_text, &s->links_src.len)) { perror(path); return 1; }
    s->links_src.name = path;
    s->links_src.text = s->links_text;
    int lr = dw_links_parse(&s->scratch, &s->links_src, &links, &n, &s->diags);
    if (!lr) lr = dw_link_templates(s->ps, links, n, &s->links_src, false, &s->diags);
    if (lr) { dw_diags_print(&s->diags, stderr); return lr < 0 ? 1 : 3; }
    dw_policy_set linked = *s->ps;      /* a view of the links alone: they follow the statics */
    linked.policies += s->ps->npolicies - n;
    linked.npolicies = n;
    dw_validate_result lv = dw_validate(&linked, s->schema, &s->diags);
    r->nerrors += lv.nerrors;
    r->nwarnings += lv.nwarnings;
    return 0;
}

static int cmd_validate(int argc, char **argv)
{
    const char *pol = NULL, *sch = NULL, *events = NULL, *links = NULL, *schema_format = NULL, *policy_format = NULL;
    const char *providers = NULL, *macros = NULL;
    bool deny_warnings = false;
    const dw_cli_opt opts[] = {
        { "policies", 'p', &pol, NULL }, { "schema", 's', &sch, NULL }, { "events", 0, &events, NULL },
        { "providers", 0, &providers, NULL }, { "macros", 0, &macros, NULL },
        { "deny-warnings", 0, NULL, &deny_warnings }, { "template-linked", 'k', &links, NULL },
        { "schema-format", 0, &schema_format, NULL }, { "policy-format", 0, &policy_format, NULL }, { 0 },
    };
    int pr = dw_cli_parse(argc, argv, opts, NULL, validate_usage);
    if (pr) return pr > 0 ? 0 : dw_cli_usage_status();
    if (!dw_cli_cedar_form_ok("validate", "schema-format", schema_format) || !dw_cli_cedar_form_ok("validate", "policy-format", policy_format))
        return dw_cli_usage_status();
    if (!pol && as_cedar) pol = "-";           /* Cedar's: the policies on standard input */
    if (!pol || !sch) {
        fprintf(stderr, "dwc validate: error: %s\n", !sch ? "missing -s SCHEMA" : "missing -p POLICIES");
        fputs(validate_usage, stderr);
        return dw_cli_usage_status();
    }
    dw_session s;
    dw_session_init(&s);
    dw_fe_stage failed;
    dw_validate_result r;
    dw_policy_json pjson;
    int rc = dw_policy_format_apply(&s, policy_format, pol, &pjson);
    if (rc) { rc = rc == 2 ? 3 : 1; goto out; }
    if (providers && (rc = dw_session_load_providers(&s, providers))) { rc = rc == 2 ? 3 : 1; goto out; }
    if (macros && dw_session_load_macros(&s, macros)) { rc = 1; goto out; }
    rc = dw_validate_files(&s, pol, sch, events, &failed, &r) ? 1 : 0;
    if (rc) goto out;
    if (failed == DW_FE_PARSE) { dw_diags_print(&s.diags, stderr); rc = 3; goto out; }
    if (failed) {
        dw_diags_print(&s.diags, stdout);
        printf("validation failed\n");
        rc = 3;
        goto out;
    }
    r.nerrors += dw_report_hoisted_reads(s.ps, &s.diags);   /* §20 D4, as dwc compile refuses them */
    if (links) {
        int lr = validate_links(&s, links, &r);
        if (lr) { rc = lr; goto out; }
    }
    dw_diags_print(&s.diags, stdout);
    if (r.nerrors || (deny_warnings && r.nwarnings)) {
        printf("validation failed: %zu error(s), %zu warning(s)\n", r.nerrors, r.nwarnings);
        rc = 3;
    } else {
        if (r.nwarnings) printf("validation passed with %zu warning(s)\n", r.nwarnings);
        else printf("OK: validation passed with no errors or warnings.\n");
        rc = 0;
    }
out:
    dw_session_free(&s);
    dw_policy_json_free(&pjson);
    return rc;
}

static int cmd_format(int argc, char **argv) { return dw_cmd_format(argc, argv, as_cedar); }
static int cmd_link(int argc, char **argv) { return dw_cmd_link(argc, argv, as_cedar); }

/* ---- help ---- */
static int cmd_help(int argc, char **argv);

static const command commands[] = {
    { "authorize", cmd_authorize, "decide one request (ALLOW/DENY), like Cedar's CLI", authorize_usage },
    { "compile", cmd_compile, "compile a policy set to a verified .dwb artifact", compile_usage },
    { "bench", dw_cmd_bench, "measure decisions per second, latency percentiles, allocations", dw_bench_usage },
    { "format", cmd_format, "lay out policies canonically (Cedar's `format`, byte for byte)", dw_format_usage },
    { "link", cmd_link, "link a template (Cedar's `link`), appending to a -k links file", dw_link_usage },
    { "translate-policy", dw_cmd_translate_policy, "Cedar text <-> Cedar's JSON policy format (Cedar's command)", dw_translate_policy_usage },
    { "evaluate", dw_cmd_evaluate, "evaluate a Cedar expression for a request (Cedar's command)", dw_evaluate_usage },
    { "new", dw_cmd_new, "create a Cedar project directory: schema, policy, entities (Cedar's command)", dw_new_usage },
    { "check-parse", dw_cmd_check_parse, "check that policies, an expression, a schema, entities parse (Cedar's command)", dw_check_parse_usage },
    { "translate-schema", dw_cmd_translate_schema, "Cedar schema text <-> Cedar's JSON schema, resolved (Cedar's command)", dw_translate_schema_usage },
    { "validate", cmd_validate, "strict validation against a schema (exit 0 valid, 3 invalid)", validate_usage },
    { "replay", dw_cmd_replay, "feed a trace to one authorizer and check its expected verdicts", dw_replay_usage },
    { "test", dw_cmd_test, "run policy unit tests (*.dwtest files; human, tap, junit, json)", dw_test_usage },
    { "explain", dw_cmd_explain, "why a verdict: scopes, conditions, temporal leaves and the events behind them", dw_explain_usage },
    { "check", dw_cmd_check, "lint policies and analyse them (CI: human, json, sarif, github)", dw_check_usage },
    { "lsp", dw_cmd_lsp, "a language server for editors (LSP over stdio; docs/EDITORS.md)", dw_lsp_usage },
    { "disasm", cmd_disasm, "print the compiled bytecode of a policy set", disasm_usage },
    { "dogwood", dw_cmd_dogwood, "the Dogwood reference's commands: check-parse, validate, replay (dogwood.md §18)", dw_dogwood_usage },
    { "help", cmd_help, "show help for a command", "usage: dwc help [COMMAND]\n" },
};

/* The commands Cedar's CLI has too: they take its global options */
static bool cedar_command(const char *name)
{
    static const char *const cedar[] = { "authorize", "validate", "check-parse", "format", "link", "translate-policy",
                                         "translate-schema", "evaluate", "new" };
    for (size_t i = 0; i < sizeof cedar / sizeof *cedar; i++)
        if (!strcmp(cedar[i], name)) return true;
    return false;
}

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

static void usage(FILE *out)
{
    fputs("dwc - the Dogwood policy toolchain\n\nusage: dwc COMMAND [OPTIONS]\n\ncommands:\n", out);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fputs("\n`dwc COMMAND --help` describes a command; `dwc --version` prints the release.\n", out);
}

static int cmd_help(int argc, char **argv)
{
    if (argc > 1) {
        const command *c = find_command(argv[1]);
        if (!c) { fprintf(stderr, "dwc: unknown command `%s`\n", argv[1]); return 1; }
        fputs(c->usage, stdout);
        return 0;
    }
    usage(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    const char *base = strrchr(argv[0], '/');
    as_cedar = strcmp(base ? base + 1 : argv[0], "cedar") == 0;
    dw_cli_set_usage_status(as_cedar ? 2 : 1);
    /* installed as `dogwood` too (a link): the reference's command set */
    if (!strcmp(base ? base + 1 : argv[0], "dogwood")) return dw_cmd_dogwood(argc, argv);
    /* Cedar's global -f/--error-format, before the command (and among a Cedar command's options below) */
    if (argc > 1 && (!strncmp(argv[1], "-f", 2) || !strncmp(argv[1], "--error-format", 14))
        && (argc = dw_cli_take_error_format(argc, argv, 1)) < 0) return dw_cli_usage_status();
    if (argc < 2) { usage(stderr); return 1; }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) { usage(stdout); return 0; }
    if (strcmp(argv[1], "--version") == 0) { printf("dwc %s\n", dw_version()); return 0; }
    if (strcmp(argv[1], "--check") == 0) {     /* `dwc --check POLICY.dw ...` */
        argv[1] = "check";
        return dw_cmd_check(argc - 1, argv + 1);
    }
    const command *c = find_command(argv[1]);
    if (!c) {
        fprintf(stderr, "dwc: unknown command `%s`\n  hint: `dwc help` lists the commands\n", argv[1]);
        return 1;
    }
    if (cedar_command(c->name) && (argc = dw_cli_take_error_format(argc, argv, 2)) < 0) return dw_cli_usage_status();
    return c->run(argc - 1, argv + 1);
}
