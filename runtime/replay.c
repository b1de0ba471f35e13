/* replay.c - `dwc replay`: feed a trace to one authorizer.
 *
 * The format is chosen by content: first non-blank character `{` -> Box's
 * JSON lines (box.md §15.2): every line checked first (trace_box.h), then
 * each an event; `request` lines are decided and compared with `expect`,
 * `rules` (by Box name, as a set) and `cause`; other lines are recorded;
 * ends with `N passed, N failed`, exit 3 on a mismatch.  `@` -> the reference's `.log` format (dogwood.md §17, parsed
 * whole by trace_log.c before any event is replayed): one line per decision
 * in §18's format, `--format json` for `{"verdicts":[...]}`; exit 0, 1 (I/O)
 * or 2 (rejected input), verdicts never affect it. */
#include "replay.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "dogwood_parts.h"
#include "load.h"
#include "trace_box.h"
#include "trace_log.h"

/* --providers FILE: provider declarations (dogwood.md §13.2) for either trace
 * format; --macros FILE: the macro library replacing the standard one (§10.6) */
static const char *providers_path, *macros_path;

const char dw_replay_usage[] =
    "usage: dwc replay -p POLICY [-s SCHEMA | --schema box] [--events E] [--format human|json|library]\n"
    "                  [--request-validation true|false] [--validate true|false] [--providers FILE]\n"
    "                  [--macros FILE] [--no-expect] TRACE\n"
    "Feed a trace to one authorizer, in order, and print one verdict per decision.\n"
    "The trace format is chosen by its first non-blank character:\n"
    "  `@`  the reference's .log format (dogwood.md §17); needs -s SCHEMA; events under the\n"
    "       default pinned event schema unless --events names a .dwschema file or a built-in\n"
    "       (default, unpinned, session-pinned, box).  1 tick = 1 second.  Prints\n"
    "       `@<ts> (time point <n>): ALLOW|DENY[  [rules: i, j]]`, or {\"verdicts\":[...]} with\n"
    "       --format json; --format library prints the reference library's form\n"
    "       `@<ts> (time point <i>): true|false`, i counting every trace line.\n"
    "       --request-validation false takes each request as given, unchecked against the\n"
    "       schema (the reference's behaviour; default true denies it, dogwood.md §20 D9).\n"
    "       --validate false replays as the reference does, without validating (§16): the\n"
    "       findings of the temporal checks against the schemas are printed as warnings.\n"
    "       Exit 0, 1 on an I/O error, 2 on rejected input (no verdicts then).\n"
    "  `{`  Box's JSON lines (box.md §15.2), checking the expectations they carry:\n"
    "  {\"time\":\"2025-06-02T09:00:00Z\",\"action\":\"fs:write\",\"kind\":\"request\",\"input\":{...},\n"
    "   \"expect\":\"deny\",\"rules\":[\"tests_before_release\"],\"cause\":\"forbidden\"}\n"
    "       Every line is checked first: its members, time (RFC 3339 UTC, increasing), action,\n"
    "       kind, and an `expect` on each decision line (--no-expect: optional); an invalid\n"
    "       line is an error with its line number (exit 2, no verdicts).  A deny by internal\n"
    "       fault holds only for a line that expects \"cause\":\"internal_fault\".\n"
    "Ends with `N passed, N failed` (decisions whose expectations hold), or with --format json\n"
    "{\"decisions\":[...],\"passed\":N,\"failed\":N}; exit 0 when all hold, 3 on a mismatch,\n"
    "1 or 2 on an error.\n";

/* ---- retention: replay keeps what the runtime keeps ----
 * Replay timestamps may go back (dogwood.md §7.3), so an event out of
 * every window now may be back in one later.  The whole trace is at hand,
 * though: before each event the engine is told the smallest timestamp of
 * the events still to come (dw_engine_set_time_floor), and drops what no
 * window from there reaches, exactly as the runtime does with its
 * increasing clock. */

/* floors[k] = min(ts[k..n)), in place. */
static void suffix_min(int64_t *ts, size_t n)
{
    for (size_t k = n; k-- > 1;)
        if (ts[k] < ts[k - 1]) ts[k - 1] = ts[k];
}

/* ---- the .log path ---- */

static bool readable(const char *path)
{
    if (!strcmp(path, "-")) return true;
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    fclose(f);
    return true;
}

static bool builtin_events(const char *name) { return dw_event_schema_builtin_text(name) != NULL; }

static void json_rules(const dw_verdict *v)
{
    printf("[");
    for (uint32_t k = 0; k < v->ndetermining; k++) printf("%s%u", k ? "," : "", v->determining[k]);
    printf("]");
}

static void json_errors(const dw_verdict *v)
{
    printf("[");
    const char *m = v->message;
    bool first = true;
    if (v->cause == DW_CAUSE_INTERNAL_FAULT || v->nerrors)
        while (*m) {
            const char *nl = strchr(m, '\n');
            size_t n = nl ? (size_t)(nl - m) : strlen(m);
            if (!first) printf(",");
            dw_json_escape_file(stdout, m, n, DW_JSON_REPLACE);
            first = false;
            m += n + (nl ? 1 : 0);
        }
    printf("]");
}

typedef enum { LOG_HUMAN, LOG_JSON, LOG_LIBRARY } log_format;

static int replay_log(const char *trace, char *text, size_t len, const char *pol, const char *sch, const char *ev,
                      log_format fmt, bool no_request_validation, bool no_validate)
{
    if (!sch) {
        fprintf(stderr, "dwc replay: error: a .log trace needs the action schema: -s SCHEMA\n");
        return 2;
    }
    /* I/O errors first (exit 1), then rejected input (exit 2) */
    const char *files[3] = { pol, strcmp(sch, "box") ? sch : NULL, ev && !builtin_events(ev) ? ev : NULL };
    for (int k = 0; k < 3; k++)
        if (files[k] && !readable(files[k])) { fprintf(stderr, "dwc replay: %s: %s\n", files[k], strerror(errno)); return 1; }
    dw_arena a;
    dw_arena_init(&a, 256 * 1024);
    dw_source src = { trace, text, len };
    dw_diags d;
    dw_diags_init(&d);
    dw_tlog log;
    int prc = dw_tlog_parse(&a, &src, &d, &log);
    if (prc || d.nerrors) {
        dw_diags_print(&d, stderr);
        dw_diags_free(&d);
        dw_tlog_free(&log);
        dw_arena_free(&a);
        return 2;
    }
    dw_diags_free(&d);
    dw_engine_config cfg = { .policy_path = pol, .schema_path = sch, .events_path = ev,
                             .ticks_per_second = 1, .replay_timestamps = true,
                             .no_request_validation = no_request_validation, .providers_path = providers_path };
    bool json = fmt == LOG_JSON;
    char err[256];
    dw_engine_cli_options eo = { .unvalidated = no_validate, .macros_path = macros_path };
    dw_engine *e = dw_engine_open_cli(&cfg, &eo, err, sizeof err);
    if (!e) {
        fprintf(stderr, "dwc replay: error: %s\n", err);
        dw_tlog_free(&log);
        dw_arena_free(&a);
        return 2;
    }
    int64_t *floors = malloc((log.n + 1) * sizeof *floors);
    if (floors) {
        for (size_t i = 0; i < log.n; i++) floors[i] = log.ev[i].ts;
        suffix_min(floors, log.n);
    }
    if (json) printf("{\"verdicts\":[");
    uint64_t n = 0;
    int rc = 0;
    for (size_t i = 0; i < log.n; i++) {
        const dw_tlog_event *x = &log.ev[i];
        if (floors) dw_engine_set_time_floor(e, floors[i]);     /* without (OOM): everything is kept */
        dw_event_input in;
        if (dw_tlog_event_input(&a, x, &in)) { fprintf(stderr, "dwc replay: out of memory\n"); rc = 2; break; }
        dw_verdict v;
        if (dw_engine_decide_event(e, &in, &v)) { fprintf(stderr, "%s:%u: error: the engine cannot take this event\n", trace, x->line); rc = 2; break; }
        if (!v.decided) continue;
        if (fmt == LOG_LIBRARY)        /* the reference library's form: i is the line's place in the trace */
            printf("@%lld (time point %zu): %s\n", (long long)x->ts, i, v.allow ? "true" : "false");
        else if (json) {
            printf("%s{\"index\":%llu,\"timestamp\":%lld,\"verdict\":\"%s\",\"determining_rules\":", n ? "," : "",
                   (unsigned long long)n, (long long)x->ts, v.allow ? "allow" : "deny");
            json_rules(&v);
            printf(",\"errors\":");
            json_errors(&v);
            printf("}");
        } else {
            printf("@%lld (time point %llu): %s", (long long)x->ts, (unsigned long long)n, v.allow ? "ALLOW" : "DENY");
            if (v.ndetermining) {
                printf("  [rules: ");
                for (uint32_t k = 0; k < v.ndetermining; k++) printf("%s%u", k ? ", " : "", v.determining[k]);
                printf("]");
            }
            printf("\n");
        }
        n++;
    }
    if (json) printf("]}\n");
    free(floors);
    dw_engine_close(e);
    dw_tlog_free(&log);
    dw_arena_free(&a);
    return rc;
}

/* ---- Box's JSON lines ---- */

/* One non-blank line parsed and checked (trace_box.h); false with the error
 * printed (`TRACE:LINE: error: ...`). */
static bool box_line(dw_box_trace *t, dw_arena *a, const char *trace, const char *line, size_t ll, size_t lineno,
                     const dw_json **j, dw_box_line *bl)
{
    dw_arena_reset(a);
    dw_source src = { trace, line, ll };
    dw_diags d;
    dw_diags_init(&d);
    *j = dw_json_parse(a, &src, &d);
    if (!*j) {
        fprintf(stderr, "%s:%zu:%u: error: %s\n", trace, lineno, d.n ? d.v[0].loc.col : 1, d.n ? d.v[0].msg : "invalid JSON");
        dw_diags_free(&d);
        return false;
    }
    dw_diags_free(&d);
    char msg[512];
    if (dw_box_trace_line(t, *j, lineno, bl, msg, sizeof msg)) {
        fprintf(stderr, "%s:%zu: error: %s\n", trace, lineno, msg);
        return false;
    }
    return true;
}

static bool blank_line(const char *line, size_t ll)
{
    for (size_t i = 0; i < ll; i++)
        if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r') return false;
    return true;
}

static void json_rule_names(dw_engine *e, const dw_verdict *v)
{
    printf("[");
    for (uint32_t k = 0; k < v->ndetermining; k++) {
        const char *n = dw_engine_rule_name(e, v->determining[k]);
        if (k) printf(",");
        dw_json_escape_file(stdout, n, strlen(n), DW_JSON_REPLACE);
    }
    printf("]");
}

static void json_decision(dw_engine *e, const dw_box_line *bl, size_t lineno, const dw_verdict *v, bool checked, bool ok, bool first)
{
    printf("%s{\"line\":%zu,\"time\":", first ? "" : ",", lineno);
    dw_json_escape_file(stdout, bl->time_text, strlen(bl->time_text), DW_JSON_REPLACE);
    printf(",\"verdict\":\"%s\",\"rules\":", v->allow ? "allow" : "deny");
    json_rule_names(e, v);
    printf(",\"cause\":\"%s\",\"errors\":", dw_cause_name(v->cause));
    json_errors(v);
    if (checked) {
        printf(",\"expected\":{\"verdict\":\"%s\"", bl->expect->u.str.s);
        if (bl->rules) {
            printf(",\"rules\":[");
            for (size_t i = 0; i < bl->rules->u.arr.n; i++) {
                if (i) printf(",");
                dw_json_escape_file(stdout, bl->rules->u.arr.v[i]->u.str.s, bl->rules->u.arr.v[i]->u.str.len, DW_JSON_REPLACE);
            }
            printf("]");
        }
        if (bl->cause) printf(",\"cause\":\"%s\"", bl->cause->u.str.s);
        printf("},\"ok\":%s", ok ? "true" : "false");
    }
    printf("}");
}

/* Every line is checked before any is replayed (an invalid line: exit 2,
 * no verdicts), which also gives the retention floors. */
static int replay_box(const char *trace, FILE *f, const char *pol, const char *sch, const char *ev, bool json, bool no_expect)
{
    dw_box_trace t;
    int lrc = dw_box_trace_open(&t, sch, ev);
    if (lrc) { dw_box_trace_close(&t); return lrc; }
    t.no_expect = no_expect;
    dw_engine_config cfg = { .policy_path = pol, .schema_path = sch ? sch : "box", .events_path = ev,
                             .ticks_per_second = 1000000000, .replay_timestamps = true, .providers_path = providers_path };
    char err[256];
    dw_engine_cli_options eo = { .macros_path = macros_path };
    dw_engine *e = dw_engine_open_cli(&cfg, &eo, err, sizeof err);
    if (!e) { fprintf(stderr, "dwc replay: error: %s\n", err); dw_box_trace_close(&t); return 2; }
    size_t pass = 0, fail = 0, lineno = 0, nlines = 0, cap = 0, ndecided = 0;
    int rc = 0;
    dw_arena a;
    dw_arena_init(&a, 64 * 1024);
    char *line = NULL;
    size_t lcap = 0;
    ssize_t got;
    int64_t *floors = NULL;
    bool floors_ok = true;
    const dw_json *j;
    dw_box_line bl;
    if (f) rewind(f);
    while (f && (got = getline(&line, &lcap, f)) >= 0) {
        size_t ll = (size_t)got;
        while (ll && line[ll - 1] == '\n') ll--;
        lineno++;
        bool blank = blank_line(line, ll);
        if (!blank && !box_line(&t, &a, trace, line, ll, lineno, &j, &bl)) { rc = 2; break; }
        if (floors_ok && nlines == cap) {
            int64_t *n = realloc(floors, (cap = cap ? 2 * cap : 4096) * sizeof *n);
            if (n) floors = n;
            else floors_ok = false;
        }
        if (floors_ok) floors[nlines++] = blank ? INT64_MAX : bl.time_ns;
    }
    if (rc) goto done;
    if (floors_ok) suffix_min(floors, nlines);
    else { free(floors); floors = NULL; }             /* without floors (OOM): everything is kept */
    t.have_last = false;                              /* the lines are checked again as they are replayed */
    lineno = 0;
    if (json) printf("{\"decisions\":[");
    if (f) rewind(f);
    while (f && (got = getline(&line, &lcap, f)) >= 0) {
        size_t ll = (size_t)got;
        while (ll && line[ll - 1] == '\n') ll--;
        if (floors && lineno < nlines && floors[lineno] != INT64_MAX) dw_engine_set_time_floor(e, floors[lineno]);
        lineno++;
        if (blank_line(line, ll)) continue;
        if (!box_line(&t, &a, trace, line, ll, lineno, &j, &bl)) { rc = 2; break; }   /* the file changed */
        if (!bl.decision) {
            char msg[256];
            if (dw_engine_record_json(e, line, ll, DW_TS_NOW, msg, sizeof msg)) {
                fprintf(stderr, "%s:%zu: error: cannot record the event: %s\n", trace, lineno, msg);
                rc = 2;
                break;
            }
            continue;
        }
        dw_verdict v;
        dw_engine_decide_json(e, line, ll, DW_TS_NOW, &v);
        bool checked = bl.expect != NULL, unexpected_fault;
        /* a fault (a gate failure: input that does not conform) is never an
         * expected deny unless the line says so */
        bool ok = dw_box_line_holds(e, &bl, &v, &unexpected_fault);
        if (checked) { if (ok) pass++; else fail++; }
        if (json) { json_decision(e, &bl, lineno, &v, checked, ok, ndecided == 0); ndecided++; continue; }
        printf("line %zu @%s: %s ", lineno, bl.time_text, v.allow ? "ALLOW" : "DENY");
        dw_box_print_rules(stdout, e, &v);
        printf(" %s", dw_cause_name(v.cause));
        if (checked && ok) printf("  ok");
        else if (checked) { printf("  MISMATCH (expected "); dw_box_print_expected(stdout, &bl); printf(")"); }
        if (v.cause == DW_CAUSE_INTERNAL_FAULT && v.message[0]) printf("  (%s)", v.message);
        if (checked && unexpected_fault) printf("  (an internal fault; a line that expects one says \"cause\":\"internal_fault\")");
        printf("\n");
    }
    if (json) printf("],\"passed\":%zu,\"failed\":%zu}\n", pass, fail);
    else if (!rc) printf("%zu passed, %zu failed\n", pass, fail);
done:
    free(floors);
    free(line);
    dw_arena_free(&a);
    dw_engine_close(e);
    dw_box_trace_close(&t);
    if (rc) return rc;
    return fail ? 3 : 0;
}

int dw_cmd_replay(int argc, char **argv)
{
    const char *pol = NULL, *sch = NULL, *ev = NULL, *trace = NULL, *fmt = "human", *reqval = "true", *validate = "true";
    bool no_expect = false;
    const dw_cli_opt opts[] = {
        { "policies", 'p', &pol, NULL }, { "schema", 's', &sch, NULL }, { "events", 0, &ev, NULL },
        { "format", 0, &fmt, NULL }, { "no-expect", 0, NULL, &no_expect },
        { "request-validation", 0, &reqval, NULL }, { "validate", 0, &validate, NULL },
        { "providers", 0, &providers_path, NULL }, { "macros", 0, &macros_path, NULL }, { 0 },
    };
    int pr = dw_cli_parse(argc, argv, opts, &trace, dw_replay_usage);
    if (pr) return pr > 0 ? 0 : 2;
    if (!pol || !trace) { fputs(dw_replay_usage, stderr); return 2; }
    if (strcmp(fmt, "human") && strcmp(fmt, "json") && strcmp(fmt, "library")) {
        fprintf(stderr, "dwc replay: --format must be human, json or library, not `%s`\n", fmt);
        return 2;
    }
    const char *bools[2][2] = { { "request-validation", reqval }, { "validate", validate } };
    for (int k = 0; k < 2; k++)
        if (strcmp(bools[k][1], "true") && strcmp(bools[k][1], "false")) {
            fprintf(stderr, "dwc replay: --%s must be true or false, not `%s`\n", bools[k][0], bools[k][1]);
            return 2;
        }
    /* Box's JSON lines are read twice, a line at a time (the floors, then
     * the replay), so memory follows the history, not the trace; stdin is
     * read whole first.  A .log trace is parsed whole (dogwood.md §17). */
    char *text = NULL;
    size_t len = 0;
    FILE *f = strcmp(trace, "-") ? fopen(trace, "rb") : NULL;
    if (!f) {
        if (dw_read_file(trace, &text, &len)) { perror(trace); return 1; }
        f = len ? fmemopen(text, len, "rb") : NULL;
    }
    int c = f ? fgetc(f) : EOF;
    while (c == ' ' || c == '\t' || c == '\r' || c == '\n') c = fgetc(f);
    if (c == '@') {
        if (!text && dw_read_file(trace, &text, &len)) { perror(trace); fclose(f); return 1; }
        fclose(f);
        log_format lf = !strcmp(fmt, "json") ? LOG_JSON : !strcmp(fmt, "library") ? LOG_LIBRARY : LOG_HUMAN;
        int rc = replay_log(trace, text, len, pol, sch, ev, lf, !strcmp(reqval, "false"), !strcmp(validate, "false"));
        free(text);
        return rc;
    }
    if (c != EOF && c != '{') {
        fprintf(stderr, "%s: error: not a trace: expected `@` (a .log trace, dogwood.md §17) or `{` (Box's JSON lines)\n", trace);
        if (f) fclose(f);
        free(text);
        return 2;
    }
    if (c != EOF && (!strcmp(fmt, "library") || !strcmp(reqval, "false") || !strcmp(validate, "false"))) {
        /* Box's events always pass Box's gate (box.md §6) */
        fprintf(stderr, "dwc replay: error: --format library, --request-validation false and --validate false are for .log traces only\n");
        fclose(f);
        free(text);
        return 2;
    }
    int rc = replay_box(trace, f, pol, sch, ev, !strcmp(fmt, "json"), no_expect);
    if (f) fclose(f);
    free(text);
    return rc;
}
