/* replay.c - `dwc replay`: feed a trace to one authorizer and check the
 * verdicts it carries.  Box's JSON-lines traces (box.md §15.2): each line an
 * event; `request` lines are decided and compared with `expect`, `rules`
 * (by Box name, as a set) and `cause`; other lines are recorded. */
#include "replay.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dogwood.h"
#include "load.h"

const char dw_replay_usage[] =
    "usage: dwc replay -p POLICY [-s SCHEMA | --schema box] [--events E] TRACE\n"
    "Feed a trace to one authorizer, in order; print one verdict per decision and check\n"
    "the expectations the trace carries.  TRACE is Box's JSON lines (box.md §15.2):\n"
    "  {\"time\":\"2025-06-02T09:00:00Z\",\"action\":\"fs:write\",\"kind\":\"request\",\"input\":{...},\n"
    "   \"expect\":\"deny\",\"rules\":[\"tests_before_release\"],\"cause\":\"forbidden\"}\n"
    "Ends with `N passed, N failed` (decisions whose expectations hold); exit 0 when all\n"
    "hold, 3 on a mismatch, 1 or 2 on an error.\n";

/* Do the verdict's rules equal the expected Box names (as sets)? */
static bool rules_match(dw_engine *e, const dw_verdict *v, const dw_json *rules)
{
    if (!rules || rules->kind != DW_JSON_ARRAY) return true;
    for (size_t i = 0; i < rules->u.arr.n; i++) {
        const dw_json *r = rules->u.arr.v[i];
        if (r->kind != DW_JSON_STRING) return false;
        bool found = false;
        for (uint32_t k = 0; k < v->ndetermining && !found; k++)
            found = strcmp(dw_engine_rule_name(e, v->determining[k]), r->u.str.s) == 0;
        if (!found) return false;
    }
    for (uint32_t k = 0; k < v->ndetermining; k++) {
        bool found = false;
        for (size_t i = 0; i < rules->u.arr.n && !found; i++)
            found = rules->u.arr.v[i]->kind == DW_JSON_STRING && strcmp(dw_engine_rule_name(e, v->determining[k]), rules->u.arr.v[i]->u.str.s) == 0;
        if (!found) return false;
    }
    return true;
}

static void print_rules(dw_engine *e, const dw_verdict *v)
{
    printf("[");
    for (uint32_t k = 0; k < v->ndetermining; k++) printf("%s%s", k ? ", " : "", dw_engine_rule_name(e, v->determining[k]));
    printf("]");
}

int dw_cmd_replay(int argc, char **argv)
{
    const char *pol = NULL, *sch = NULL, *ev = NULL, *trace = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if ((!strcmp(a, "-p") || !strcmp(a, "--policies")) && i + 1 < argc) pol = argv[++i];
        else if ((!strcmp(a, "-s") || !strcmp(a, "--schema")) && i + 1 < argc) sch = argv[++i];
        else if (!strcmp(a, "--events") && i + 1 < argc) ev = argv[++i];
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { fputs(dw_replay_usage, stdout); return 0; }
        else if (a[0] != '-' && !trace) trace = a;
        else { fprintf(stderr, "dwc replay: unexpected argument `%s`\n", a); fputs(dw_replay_usage, stderr); return 2; }
    }
    if (!pol || !trace) { fputs(dw_replay_usage, stderr); return 2; }
    char *text;
    size_t len;
    if (dw_read_file(trace, &text, &len)) { perror(trace); return 1; }
    dw_engine_config cfg = { .policy_path = pol, .schema_path = sch ? sch : "box", .events_path = ev,
                             .ticks_per_second = 1000000000, .replay_timestamps = true };
    char err[256];
    dw_engine *e = dw_engine_open(&cfg, err, sizeof err);
    if (!e) { fprintf(stderr, "dwc replay: error: %s\n", err); free(text); return 2; }
    size_t pass = 0, fail = 0, lineno = 0;
    int rc = 0;
    dw_arena a;
    dw_arena_init(&a, 64 * 1024);
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        size_t ll = nl ? (size_t)(nl - line) : strlen(line);
        lineno++;
        bool blank = true;
        for (size_t i = 0; i < ll; i++) if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r') blank = false;
        if (!blank) {
            dw_arena_reset(&a);
            dw_source src = { trace, line, ll };
            dw_diags d;
            dw_diags_init(&d);
            const dw_json *j = dw_json_parse(&a, &src, &d);
            const dw_json *kind = j ? dw_json_get(j, "kind") : NULL;
            const dw_json *time = j ? dw_json_get(j, "time") : NULL;
            const char *when = time && time->kind == DW_JSON_STRING ? time->u.str.s : "?";
            if (!j) {
                fprintf(stderr, "%s:%zu: error: not a JSON object\n", trace, lineno);
                dw_diags_free(&d);
                rc = 2;
                break;
            }
            dw_diags_free(&d);
            const dw_json *expect = dw_json_get(j, "expect");
            bool is_request = kind && kind->kind == DW_JSON_STRING && strcmp(kind->u.str.s, "request") == 0;
            if (is_request || expect) {
                dw_verdict v;
                dw_engine_decide_json(e, line, ll, 0, &v);
                printf("line %zu @%s: %s ", lineno, when, v.allow ? "ALLOW" : "DENY");
                print_rules(e, &v);
                printf(" %s", dw_cause_name(v.cause));
                bool ok = true;
                if (expect && expect->kind == DW_JSON_STRING) ok = (strcmp(expect->u.str.s, "allow") == 0) == v.allow;
                ok = ok && rules_match(e, &v, dw_json_get(j, "rules"));
                const dw_json *cause = dw_json_get(j, "cause");
                if (cause && cause->kind == DW_JSON_STRING) ok = ok && strcmp(cause->u.str.s, dw_cause_name(v.cause)) == 0;
                if (expect) {
                    if (ok) { pass++; printf("  ok"); }
                    else { fail++; printf("  MISMATCH (expected %s)", expect->kind == DW_JSON_STRING ? expect->u.str.s : "?"); }
                }
                if (v.cause == DW_CAUSE_INTERNAL_FAULT && v.message[0]) printf("  (%s)", v.message);
                printf("\n");
            } else {
                char msg[256];
                if (dw_engine_record_json(e, line, ll, 0, msg, sizeof msg)) {
                    fprintf(stderr, "%s:%zu: error: cannot record the event: %s\n", trace, lineno, msg);
                    rc = 2;
                    break;
                }
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    printf("%zu passed, %zu failed\n", pass, fail);
    dw_arena_free(&a);
    dw_engine_close(e);
    free(text);
    if (rc) return rc;
    return fail ? 3 : 0;
}
