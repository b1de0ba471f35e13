/* explain_cmd.c - `dwc explain -p P [--schema box] [--trace T [--line N]] [EVENT]`:
 * why a verdict.  The trace (Box's JSON lines, checked by trace_box.c) is
 * fed to one engine as history; the explained decision is EVENT (a JSON
 * text, a file, or - for stdin) after it, or else the trace's decision line
 * N (default: its last).  The engine takes that decision apart
 * (runtime/explain.h); this file prints it, human or JSON. */
#include "explain_cmd.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "dogwood_parts.h"
#include "explain.h"
#include "trace_box.h"
#include "../stdlib/json_escape.h"

const char dw_explain_usage[] =
    "usage: dwc explain -p POLICY [-s SCHEMA | --schema box] [--events E] [--format human|json]\n"
    "                   [--trace TRACE [--line N]] [EVENT]\n"
    "Why a verdict: decide one Box event and show which policies' scopes matched, which\n"
    "conditions were true, false or erroring, each temporal leaf's value and, for counts\n"
    "and sums, the events that made them.  Everything shown is computed by the engine and\n"
    "the VM that decide (docs/TESTING.md § explain); a re-evaluation that differs from what\n"
    "the decision used is reported as a DISAGREEMENT (exit 4).\n"
    "  EVENT            a Box event (box.md §15.2) as JSON text, a file holding one, or -;\n"
    "                   `time` optional; decided after the whole --trace\n"
    "  --trace TRACE    Box JSON lines fed first as history (their expectations are not checked)\n"
    "  --line N         without EVENT: explain the trace's decision line N (default: its last)\n"
    "Exit 0 explained, 1 I/O error, 2 invalid input, 4 a disagreement.\n";

typedef struct source_line { const char *text; size_t len, lineno; } source_line;

/* Text of EVENT: inline JSON, a file, or stdin. */
static int event_text(const char *arg, char **owned, const char **text, size_t *len)
{
    *owned = NULL;
    const char *p = arg;
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    if (*p == '{') { *text = arg; *len = strlen(arg); return 0; }
    if (dw_read_file(arg, owned, len)) { fprintf(stderr, "dwc explain: %s: %s\n", arg, strerror(errno)); return 1; }
    *text = *owned;
    while (*len && ((*owned)[*len - 1] == '\n' || (*owned)[*len - 1] == '\r')) (*len)--;
    return 0;
}

/* Parse and check one line (the trace checker's rules); false with the error printed. */
static bool check_line(dw_box_trace *t, dw_arena *a, const char *name, const char *s, size_t n, size_t lineno, dw_box_line *bl)
{
    dw_arena_reset(a);
    dw_source src = { name, s, n };
    dw_diags d;
    dw_diags_init(&d);
    const dw_json *j = dw_json_parse(a, &src, &d);
    if (!j) fprintf(stderr, "%s:%zu: error: %s\n", name, lineno, d.n ? d.v[0].msg : "invalid JSON");
    dw_diags_free(&d);
    char msg[512];
    if (j && dw_box_trace_line(t, j, lineno, bl, msg, sizeof msg)) { fprintf(stderr, "%s:%zu: error: %s\n", name, lineno, msg); return false; }
    return j != NULL;
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return false;
    return true;
}

/* ---- printing ---- */

/* The trace line of the fed event at ts, or 0 (none given, or not one of them) */
static size_t line_of(const dw_explanation *x, int64_t ts)
{
    size_t lo = 0, hi = x->nlines;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->line_ts[mid] < ts) lo = mid + 1;
        else hi = mid;
    }
    return lo < x->nlines && x->line_ts[lo] == ts ? x->line_no[lo] : 0;
}

void dw_explanation_refused(struct dw_explanation *x, const dw_verdict *v)
{
    if (x->done) return;
    x->v = *v;                   /* refused before any policy ran (the schema gate): only the verdict */
    x->conditions = true;
    x->gate = true;
}

static const char *xval_word(dw_xval v)
{
    static const char *const w[] = { "false", "true", "error", "unknown", "not reached" };
    return w[v];
}

void dw_explain_print(FILE *out, const dw_explanation *x, dw_engine *e, const char *where, const dw_box_line *bl)
{
    const dw_verdict *v = &x->v;
    if (x->gate) fprintf(out, "event: %s\n", where);
    else fprintf(out, "event: %s (%u event%s in the retained history, this one included)\n", where, x->history, x->history == 1 ? "" : "s");
    fprintf(out, "verdict: %s ", v->allow ? "ALLOW" : "DENY");
    dw_box_print_rules(out, e, v);
    fprintf(out, " %s", dw_cause_name(v->cause));
    if ((v->cause == DW_CAUSE_INTERNAL_FAULT || v->nerrors) && v->message[0]) fprintf(out, "  (%s)", v->message);
    fprintf(out, "\n");
    if (bl->expect) {
        bool fault;
        fprintf(out, "expected: ");
        dw_box_print_expected(out, bl);
        fprintf(out, ": %s\n", dw_box_line_holds(e, bl, v, &fault) ? "holds" : "MISMATCH");
    }
    if (x->gate) fprintf(out, "no policy ran: the event was refused before the decision (%s)\n", v->message);
    if (x->ndisagree) fprintf(out, "DISAGREEMENT: the re-evaluation differs from the decision (a bug, please report): %s\n", x->disagree);
    if (!x->conditions) fprintf(out, "(a compiled artifact: conditions are shown only for a policy set compiled from source)\n");
    for (uint32_t i = 0; i < x->npolicies; i++) {
        const dw_x_policy *p = &x->policies[i];
        fprintf(out, "\n%s (%s, line %u): %s%s", p->name, p->forbid ? "forbid" : "permit", p->line,
               p->value == DW_X_TRUE ? "satisfied" : p->value == DW_X_ERROR ? "ERROR" : "not satisfied",
               p->determining ? ", determining" : "");
        if (p->error && p->value == DW_X_ERROR) fprintf(out, " (%s)", p->error);
        fprintf(out, "\n  scope: %s\n", p->scope == DW_X_TRUE ? "matches" : p->scope == DW_X_FALSE ? "does not match" : xval_word(p->scope));
        for (uint32_t k = 0; k < p->nconds; k++) {
            const dw_x_cond *c = &p->conds[k];
            fprintf(out, "  %s #%u: %s", c->unless ? "unless" : "when", k + 1, xval_word(c->value));
            if (c->error) fprintf(out, " (%s)", c->error);
            if (c->leaf >= 0) fprintf(out, "  (temporal leaf %d)", c->leaf);
            fprintf(out, "\n");
        }
        for (uint32_t l = 0; l < p->nleaves; l++) {
            const dw_x_leaf *xl = &p->leaves[l];
            fprintf(out, "  temporal leaf %u = %s", xl->leaf, xval_word(xl->value));
            if (xl->error) fprintf(out, " (%s)", xl->error);
            if (xl->engine != 2) fprintf(out, " (the decision used %s)", xl->engine ? "true" : "false");
            fprintf(out, ": %s\n", xl->formula);
            for (uint32_t g = 0; g < xl->naggs; g++) {
                const dw_x_agg *a = &xl->aggs[g];
                fprintf(out, "    %s = %s, over %u row%s%s\n", a->formula, a->value, a->nrows, a->nrows == 1 ? "" : "s", a->nrows ? ":" : "");
                for (uint32_t r = 0; r < a->nrows; r++) {
                    fprintf(out, "      %s\n", a->rows[r].values);
                    for (uint32_t k = 0; k < a->rows[r].nevents; k++) {
                        const dw_x_event *ev = &a->rows[r].events[k];
                        fprintf(out, "        event %u", ev->pos);
                        if (line_of(x, ev->ts)) fprintf(out, " (%s:%zu)", x->trace, line_of(x, ev->ts));
                        fprintf(out, ": %s %s %s\n", ev->time, ev->what, ev->logged);
                    }
                }
            }
        }
    }
}

static void jstr(const char *s)
{
    if (s) dw_json_escape_file(stdout, s, strlen(s), DW_JSON_REPLACE);
    else fputs("null", stdout);
}

static void json(const dw_explanation *x, dw_engine *e, const char *where, const dw_box_line *bl)
{
    const dw_verdict *v = &x->v;
    printf("{\"event\":");
    jstr(where);
    printf(",\"history\":%u,\"verdict\":\"%s\",\"rules\":[", x->history, v->allow ? "allow" : "deny");
    for (uint32_t k = 0; k < v->ndetermining; k++) { if (k) putchar(','); jstr(dw_engine_rule_name(e, v->determining[k])); }
    printf("],\"cause\":\"%s\",\"message\":", dw_cause_name(v->cause));
    jstr(v->message);
    if (bl->expect) {
        bool fault;
        printf(",\"expectation_holds\":%s", dw_box_line_holds(e, bl, v, &fault) ? "true" : "false");
    }
    printf(",\"disagreement\":");
    jstr(x->ndisagree ? x->disagree : NULL);
    printf(",\"refused_before_policies\":%s,\"conditions_shown\":%s,\"policies\":[", x->gate ? "true" : "false", x->conditions ? "true" : "false");
    for (uint32_t i = 0; i < x->npolicies; i++) {
        const dw_x_policy *p = &x->policies[i];
        printf("%s{\"name\":", i ? "," : "");
        jstr(p->name);
        printf(",\"effect\":\"%s\",\"line\":%u,\"value\":\"%s\",\"error\":", p->forbid ? "forbid" : "permit", p->line, xval_word(p->value));
        jstr(p->value == DW_X_ERROR ? p->error : NULL);
        printf(",\"determining\":%s,\"scope\":\"%s\",\"conditions\":[", p->determining ? "true" : "false", xval_word(p->scope));
        for (uint32_t k = 0; k < p->nconds; k++) {
            const dw_x_cond *c = &p->conds[k];
            printf("%s{\"kind\":\"%s\",\"value\":\"%s\",\"error\":", k ? "," : "", c->unless ? "unless" : "when", xval_word(c->value));
            jstr(c->error);
            if (c->leaf >= 0) printf(",\"leaf\":%d", c->leaf);
            printf("}");
        }
        printf("],\"leaves\":[");
        for (uint32_t l = 0; l < p->nleaves; l++) {
            const dw_x_leaf *xl = &p->leaves[l];
            printf("%s{\"leaf\":%u,\"formula\":", l ? "," : "", xl->leaf);
            jstr(xl->formula);
            printf(",\"value\":\"%s\",\"decision_used\":", xval_word(xl->value));
            if (xl->engine == 2) printf("null");
            else printf("%s", xl->engine ? "true" : "false");
            printf(",\"error\":");
            jstr(xl->error);
            printf(",\"aggregates\":[");
            for (uint32_t g = 0; g < xl->naggs; g++) {
                const dw_x_agg *a = &xl->aggs[g];
                printf("%s{\"formula\":", g ? "," : "");
                jstr(a->formula);
                printf(",\"value\":");
                jstr(a->value);
                printf(",\"rows\":[");
                for (uint32_t r = 0; r < a->nrows; r++) {
                    printf("%s{\"values\":", r ? "," : "");
                    jstr(a->rows[r].values);
                    printf(",\"events\":[");
                    for (uint32_t k = 0; k < a->rows[r].nevents; k++) {
                        const dw_x_event *ev = &a->rows[r].events[k];
                        printf("%s{\"position\":%u,", k ? "," : "", ev->pos);
                        if (line_of(x, ev->ts)) printf("\"line\":%zu,", line_of(x, ev->ts));
                        printf("\"time\":");
                        jstr(ev->time);
                        printf(",\"event\":");
                        jstr(ev->what);
                        printf(",\"logged\":");
                        jstr(ev->logged);
                        printf("}");
                    }
                    printf("]}");
                }
                printf("]}");
            }
            printf("]}");
        }
        printf("]}");
    }
    printf("]}\n");
}

/* ---- the command ---- */

typedef struct xopts { const char *pol, *sch, *ev, *trace, *line, *fmt, *event; } xopts;

static int run(const xopts *o)
{
    long long want = 0;
    if (o->line && !dw_cli_count("explain", "--line", o->line, 1, 1LL << 40, &want)) return 2;
    if (o->line && o->event) { fprintf(stderr, "dwc explain: error: --line picks a line of the trace; with EVENT the whole trace is history\n"); return 2; }
    if (!o->trace && !o->event) { fputs(dw_explain_usage, stderr); return 2; }
    char *ttext = NULL, *etext_owned = NULL;
    size_t tlen = 0, elen = 0;
    const char *etext = NULL;
    if (o->trace && dw_read_file(o->trace, &ttext, &tlen)) { fprintf(stderr, "dwc explain: %s: %s\n", o->trace, strerror(errno)); return 1; }
    if (o->event && event_text(o->event, &etext_owned, &etext, &elen)) { free(ttext); return 1; }
    dw_box_trace t;
    int rc = dw_box_trace_open(&t, o->sch, o->ev);
    t.test_file = true;          /* `time` optional, as in test files */
    t.no_expect = true;
    dw_arena a;
    dw_arena_init(&a, 64 * 1024);
    source_line *lines = NULL;
    size_t nlines = 0, target = (size_t)-1;
    dw_box_line bl;
    /* every trace line checked first; the target is the wanted (or last) decision line */
    for (size_t off = 0, lineno = 1; !rc && ttext && off < tlen; lineno++) {
        const char *s = ttext + off, *nl = memchr(s, '\n', tlen - off);
        size_t n = nl ? (size_t)(nl - s) : tlen - off;
        off += n + (nl ? 1 : 0);
        if (blank(s, n)) continue;
        if (!check_line(&t, &a, o->trace, s, n, lineno, &bl)) { rc = 2; break; }
        source_line *nv = realloc(lines, (nlines + 1) * sizeof *lines);
        if (!nv) { rc = 1; break; }
        lines = nv;
        lines[nlines++] = (source_line){ s, n, lineno };
        if (bl.decision && (!o->line || (long long)lineno == want) && !o->event) target = nlines - 1;
        if (o->line && (long long)lineno == want && !bl.decision) {
            fprintf(stderr, "%s:%zu: error: --line %zu is not a decision line\n", o->trace, lineno, lineno);
            rc = 2;
        }
    }
    if (!rc && !o->event && target == (size_t)-1) {
        if (o->line) fprintf(stderr, "%s: error: no line %lld in the trace\n", o->trace, want);
        else fprintf(stderr, "%s: error: the trace has no decision line to explain\n", o->trace);
        rc = 2;
    }
    const char *ename = o->event && etext == o->event ? "EVENT" : o->event;
    if (!rc && o->event && !check_line(&t, &a, ename, etext, elen, 1, &bl)) rc = 2;
    if (!rc && o->event && !bl.decision) { fprintf(stderr, "%s: error: the event's kind is not a decision kind: nothing to explain\n", ename); rc = 2; }
    dw_engine *e = NULL;
    if (!rc) {
        dw_engine_config cfg = { .policy_path = o->pol, .schema_path = o->sch ? o->sch : "box", .events_path = o->ev,
                                 .ticks_per_second = 1000000000, .replay_timestamps = true };
        char err[300];
        if (!(e = dw_engine_open_printing(&cfg, err, sizeof err))) { fprintf(stderr, "dwc explain: error: %s\n", err); rc = 2; }
    }
    /* the history: the trace up to the target (the checker runs again for each line's time) */
    t.have_last = false;
    size_t upto = o->event ? nlines : target;
    int64_t *line_ts = malloc((nlines + 1) * sizeof *line_ts);
    size_t *line_no = malloc((nlines + 1) * sizeof *line_no), nfed = 0;
    if (!rc && (!line_ts || !line_no)) rc = 1;
    for (size_t i = 0; !rc && i < upto; i++) {
        if (!check_line(&t, &a, o->trace, lines[i].text, lines[i].len, lines[i].lineno, &bl)) { rc = 2; break; }
        line_ts[nfed] = bl.time_ns;
        line_no[nfed++] = lines[i].lineno;
        char msg[256];
        dw_verdict v;
        if (bl.decision) dw_engine_decide_json(e, lines[i].text, lines[i].len, bl.time_ns, &v);
        else if (dw_engine_record_json(e, lines[i].text, lines[i].len, bl.time_ns, msg, sizeof msg)) {
            fprintf(stderr, "%s:%zu: error: cannot record the event: %s\n", o->trace, lines[i].lineno, msg);
            rc = 2;
        }
    }
    char where[600];
    if (!rc) {
        const char *s = o->event ? etext : lines[target].text;
        size_t n = o->event ? elen : lines[target].len;
        if (o->event) {
            if (!check_line(&t, &a, ename, s, n, 1, &bl)) rc = 2;
            snprintf(where, sizeof where, "%s", o->event == etext ? "the EVENT argument" : o->event);
        } else {
            if (!check_line(&t, &a, o->trace, s, n, lines[target].lineno, &bl)) rc = 2;
            snprintf(where, sizeof where, "%s:%zu", o->trace, lines[target].lineno);
        }
        if (!rc) {
            dw_explanation x;
            dw_explanation_init(&x);
            x.trace = o->trace;
            x.line_ts = line_ts;
            x.line_no = line_no;
            x.nlines = nfed;
            if (!o->event) { line_ts[nfed] = bl.time_ns; line_no[nfed] = lines[target].lineno; x.nlines++; }
            dw_engine_explain_next(e, &x);
            dw_verdict v;
            dw_engine_decide_json(e, s, n, bl.time_ns, &v);
            dw_engine_explain_next(e, NULL);
            dw_explanation_refused(&x, &v);
            {
                if (!strcmp(o->fmt, "json")) json(&x, e, where, &bl);
                else dw_explain_print(stdout, &x, e, where, &bl);
                if (x.ndisagree) {
                    fprintf(stderr, "dwc explain: DISAGREEMENT: %s\n", x.disagree);
                    rc = 4;
                }
            }
            dw_explanation_free(&x);
        }
    }
    if (e) dw_engine_close(e);
    dw_box_trace_close(&t);
    dw_arena_free(&a);
    free(lines);
    free(line_ts);
    free(line_no);
    free(ttext);
    free(etext_owned);
    return rc;
}

int dw_cmd_explain(int argc, char **argv)
{
    xopts o = { .fmt = "human" };
    const dw_cli_opt opts[] = {
        { "policies", 'p', &o.pol, NULL }, { "schema", 's', &o.sch, NULL }, { "events", 0, &o.ev, NULL },
        { "trace", 0, &o.trace, NULL }, { "line", 0, &o.line, NULL }, { "format", 0, &o.fmt, NULL }, { 0 },
    };
    int pr = dw_cli_parse(argc, argv, opts, &o.event, dw_explain_usage);
    if (pr) return pr > 0 ? 0 : 2;
    if (!o.pol) { fputs(dw_explain_usage, stderr); return 2; }
    if (strcmp(o.fmt, "human") && strcmp(o.fmt, "json")) {
        fprintf(stderr, "dwc explain: error: --format must be human or json, not `%s`\n", o.fmt);
        return 2;
    }
    return run(&o);
}
