/* check.c - `dwc check` (and `dwc --check`): lint rules and analysis of a
 * policy set, printed for people (human), tools (json, sarif) or GitHub
 * Actions (github).  The rules live in compiler/lint.c. */
#include "check.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "load.h"
#include "../compiler/lint.h"

const char dw_check_usage[] =
    "usage: dwc check -p POLICY [-s SCHEMA | --schema box] [--events EVENTS]\n"
    "                 [--format human|json|sarif|github] [--fail-level error|warning|info]\n"
    "                 [--home DIR]\n"
    "       dwc --check POLICY [options]\n"
    "Lint a policy set: every strict-validation and temporal finding, plus lint rules\n"
    "(duplicate @id, reserved names, Unicode hygiene, comparisons with \"\", …) and a\n"
    "structural analysis (impossible / always-true rules, shadowed permits and forbids,\n"
    "permits overridden by forbids).  `--schema box` selects Box's schema and the Box\n"
    "profile (box.md §11: Box's rule ids and severities, and the box-* rules).\n"
    "  -p, --policies FILE   the policy set (.dw or .cedar); also accepted as a bare argument\n"
    "  -s, --schema FILE     Cedar schema, or `box`; without one only schema-free rules run\n"
    "      --events EVENTS   event schema (.dwschema or a built-in name); needs a schema\n"
    "      --format F        human (default), json, sarif (SARIF 2.1.0) or github\n"
    "      --fail-level L    exit 3 when a finding is at least this severe (default error)\n"
    "      --home DIR        the operator's home directory (Box profile inert-literal rules);\n"
    "                        without it /home/NAME, /Users/NAME and /root count as home spellings\n"
    "Findings are sorted by position, then rule id.  Exit 0 nothing at or above the fail\n"
    "level, 3 findings at or above it, 1 on a usage, I/O, parse or tool error.\n";

enum { F_HUMAN, F_JSON, F_SARIF, F_GITHUB };

static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n) == 0 && a[n] == '=') return a + n + 1;
    if (strcmp(a, name) == 0 && *i + 1 < argc) return argv[++*i];
    return NULL;
}

/* ---- human ---- */

static void print_human(FILE *out, const dw_source *src, const dw_findings *f)
{
    size_t n[3] = { 0, 0, 0 };
    for (size_t i = 0; i < f->n; i++) {
        const dw_finding *g = &f->v[i];
        n[g->sev]++;
        fprintf(out, "%s:%u:%u: %s[%s]: %s\n", src->name, g->loc.line, g->loc.col, dw_lint_sev_name(g->sev), g->rule, g->msg);
        dw_print_source_span(out, src, g->loc);
        if (g->hint) fprintf(out, "  hint: %s\n", g->hint);
    }
    if (!f->n) fprintf(out, "%s: no findings\n", src->name);
    else
        fprintf(out, "%s: %zu error%s, %zu warning%s, %zu info\n", src->name, n[0], n[0] == 1 ? "" : "s", n[1],
                n[1] == 1 ? "" : "s", n[2]);
}

/* ---- JSON helpers ---- */

static void json_str(FILE *out, const char *s)
{
    if (!s) { fputs("null", out); return; }
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(out, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", out);
        else if (*p == '\r') fputs("\\r", out);
        else if (*p == '\t') fputs("\\t", out);
        else if (*p < 0x20 || *p == 0x7f) fprintf(out, "\\u%04x", *p);
        else fputc(*p, out);
    }
    fputc('"', out);
}

static void print_json(FILE *out, const dw_source *src, const dw_findings *f)
{
    fputs("[", out);
    for (size_t i = 0; i < f->n; i++) {
        const dw_finding *g = &f->v[i];
        fputs(i ? ",\n  {" : "\n  {", out);
        fputs("\"rule\": ", out); json_str(out, g->rule);
        fputs(", \"severity\": ", out); json_str(out, dw_lint_sev_name(g->sev));
        fputs(", \"message\": ", out); json_str(out, g->msg);
        fputs(", \"hint\": ", out); json_str(out, g->hint);
        fputs(", \"file\": ", out); json_str(out, src->name);
        fprintf(out, ", \"line\": %u, \"col\": %u, \"end_line\": %u, \"end_col\": %u}", g->loc.line, g->loc.col,
                g->end_line, g->end_col);
    }
    fputs(f->n ? "\n]\n" : "]\n", out);
}

/* ---- SARIF 2.1.0 ---- */

static const char *sarif_level(dw_lint_sev s) { return s == DW_LINT_ERROR ? "error" : s == DW_LINT_WARNING ? "warning" : "note"; }

static void json_uri(FILE *out, const char *path)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        unsigned char c = *p;
        bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || strchr("-._~/", c);
        if (keep) fputc(c, out);
        else fprintf(out, "%%%02X", c);
    }
    fputc('"', out);
}

static int rule_cmp(const void *a, const void *b)
{
    const dw_finding *const *x = a, *const *y = b;
    return strcmp((*x)->rule, (*y)->rule);
}

static int print_sarif(FILE *out, const dw_source *src, const dw_findings *f, bool box)
{
    /* the rules that occur, sorted by id; results refer to them by index */
    const dw_finding **first = calloc(f->n + 1, sizeof *first);
    size_t *ridx = calloc(f->n + 1, sizeof *ridx);
    if (!first || !ridx) { free(first); free(ridx); return -1; }
    size_t nr = 0;
    for (size_t i = 0; i < f->n; i++) {
        bool seen = false;
        for (size_t k = 0; k < nr && !seen; k++) seen = strcmp(first[k]->rule, f->v[i].rule) == 0;
        if (!seen) first[nr++] = &f->v[i];
    }
    qsort(first, nr, sizeof *first, rule_cmp);
    for (size_t i = 0; i < f->n; i++)
        for (size_t k = 0; k < nr; k++)
            if (strcmp(first[k]->rule, f->v[i].rule) == 0) ridx[i] = k;
    fputs("{\n  \"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\",\n  \"version\": \"2.1.0\",\n"
          "  \"runs\": [\n    {\n      \"tool\": {\n        \"driver\": {\n          \"name\": \"dwc\",\n"
          "          \"rules\": [", out);
    for (size_t k = 0; k < nr; k++) {
        const dw_lint_rule *r = &dw_lint_rules[first[k]->rule_index];
        fputs(k ? ",\n            {" : "\n            {", out);
        fputs("\"id\": ", out); json_str(out, first[k]->rule);
        fputs(", \"shortDescription\": {\"text\": ", out); json_str(out, r->summary);
        fputs("}, \"defaultConfiguration\": {\"level\": ", out);
        json_str(out, sarif_level(box ? r->box_sev : r->sev));
        fputs("}}", out);
    }
    fputs(nr ? "\n          ]\n" : "]\n", out);
    fputs("        }\n      },\n      \"columnKind\": \"unicodeCodePoints\",\n      \"results\": [", out);
    for (size_t i = 0; i < f->n; i++) {
        const dw_finding *g = &f->v[i];
        fputs(i ? ",\n        {" : "\n        {", out);
        fputs("\"ruleId\": ", out); json_str(out, g->rule);
        fprintf(out, ", \"ruleIndex\": %zu, \"level\": ", ridx[i]);
        json_str(out, sarif_level(g->sev));
        fputs(", \"message\": {\"text\": ", out); json_str(out, g->msg);
        fputs("}, \"locations\": [{\"physicalLocation\": {\"artifactLocation\": {\"uri\": ", out);
        json_uri(out, src->name);
        fprintf(out, "}, \"region\": {\"startLine\": %u, \"startColumn\": %u, \"endLine\": %u, \"endColumn\": %u}}}]",
                g->loc.line, g->loc.col, g->end_line, g->end_col);
        if (g->hint) { fputs(", \"properties\": {\"hint\": ", out); json_str(out, g->hint); fputs("}", out); }
        fputs("}", out);
    }
    fputs(f->n ? "\n      ]\n    }\n  ]\n}\n" : "]\n    }\n  ]\n}\n", out);
    free(first);
    free(ridx);
    return 0;
}

/* ---- GitHub workflow commands ---- */

static void gh_escape(FILE *out, const char *s, bool property)
{
    for (; s && *s; s++) {
        if (*s == '%') fputs("%25", out);
        else if (*s == '\r') fputs("%0D", out);
        else if (*s == '\n') fputs("%0A", out);
        else if (property && *s == ':') fputs("%3A", out);
        else if (property && *s == ',') fputs("%2C", out);
        else fputc(*s, out);
    }
}

static void print_github(FILE *out, const dw_source *src, const dw_findings *f)
{
    for (size_t i = 0; i < f->n; i++) {
        const dw_finding *g = &f->v[i];
        fprintf(out, "::%s file=", g->sev == DW_LINT_ERROR ? "error" : g->sev == DW_LINT_WARNING ? "warning" : "notice");
        gh_escape(out, src->name, true);
        fprintf(out, ",line=%u,col=%u,endLine=%u,endColumn=%u,title=", g->loc.line, g->loc.col, g->end_line, g->end_col);
        gh_escape(out, g->rule, true);
        fputs("::", out);
        gh_escape(out, g->msg, false);
        if (g->hint) { fputs("%0Ahint: ", out); gh_escape(out, g->hint, false); }
        fputc('\n', out);
    }
}

int dw_cmd_check(int argc, char **argv)
{
    const char *pol = NULL, *sch = NULL, *events = NULL, *home = NULL, *v;
    int format = F_HUMAN;
    dw_lint_sev fail = DW_LINT_ERROR;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { fputs(dw_check_usage, stdout); return 0; }
        else if ((v = opt_value(argc, argv, &i, "-p")) || (v = opt_value(argc, argv, &i, "--policies"))) pol = v;
        else if ((v = opt_value(argc, argv, &i, "-s")) || (v = opt_value(argc, argv, &i, "--schema"))) sch = v;
        else if ((v = opt_value(argc, argv, &i, "--events"))) events = v;
        else if ((v = opt_value(argc, argv, &i, "--home"))) home = v;
        else if ((v = opt_value(argc, argv, &i, "--format"))) {
            if (!strcmp(v, "human")) format = F_HUMAN;
            else if (!strcmp(v, "json")) format = F_JSON;
            else if (!strcmp(v, "sarif")) format = F_SARIF;
            else if (!strcmp(v, "github")) format = F_GITHUB;
            else { fprintf(stderr, "dwc check: error: unknown format `%s`\n  hint: human, json, sarif or github\n", v); return 1; }
        } else if ((v = opt_value(argc, argv, &i, "--fail-level"))) {
            if (!strcmp(v, "error")) fail = DW_LINT_ERROR;
            else if (!strcmp(v, "warning")) fail = DW_LINT_WARNING;
            else if (!strcmp(v, "info")) fail = DW_LINT_INFO;
            else { fprintf(stderr, "dwc check: error: unknown fail level `%s`\n  hint: error, warning or info\n", v); return 1; }
        } else if (!pol && (a[0] != '-' || !strcmp(a, "-"))) pol = a;
        else {
            fprintf(stderr, "dwc check: error: unexpected argument `%s`\n", a);
            fputs(dw_check_usage, stderr);
            return 1;
        }
    }
    if (!pol) { fputs(dw_check_usage, stderr); return 1; }
    if (events && !sch) { fprintf(stderr, "dwc check: error: --events needs a schema (-s)\n"); return 1; }

    dw_session s;
    dw_session_init(&s);
    int rc = 1;
    dw_findings f = { 0 };
    if (sch && dw_session_load_schema(&s, sch)) goto out;
    if (sch && dw_session_load_events(&s, events)) goto out;
    size_t len;
    if (dw_read_file(pol, &s.policy_text, &len)) { fprintf(stderr, "%s: error: cannot read\n", pol); goto out; }
    s.policy_src = (dw_source){ pol, s.policy_text, len };
    dw_lint_options opt = { .box = s.box, .home = home, .schema = s.schema, .dv = s.dv };
    int lr = dw_lint_run(&s.policy_src, &opt, &f);
    if (lr < 0) { fprintf(stderr, "dwc check: error: out of memory\n"); goto out; }
    dw_findings_sort(&f);
    switch (format) {
    case F_HUMAN: print_human(stdout, &s.policy_src, &f); break;
    case F_JSON: print_json(stdout, &s.policy_src, &f); break;
    case F_SARIF:
        if (print_sarif(stdout, &s.policy_src, &f, s.box)) { fprintf(stderr, "dwc check: error: out of memory\n"); goto out; }
        break;
    case F_GITHUB: print_github(stdout, &s.policy_src, &f); break;
    }
    if (fflush(stdout)) { fprintf(stderr, "dwc check: error: cannot write the output\n"); goto out; }
    if (lr == 1) goto out;   /* did not parse */
    rc = 0;
    for (size_t i = 0; i < f.n; i++) if (f.v[i].sev <= fail) rc = 3;
out:
    dw_findings_free(&f);
    dw_session_free(&s);
    return rc;
}
