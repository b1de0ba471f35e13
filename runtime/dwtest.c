/* dwtest.c - `dwc test [DIR|FILE]...`: policy unit tests (docs/TESTING.md).
 *
 * A test file is JSON lines: an optional {"policy": …} line first, then
 * cases, each a {"case": NAME} line followed by Box trace lines (box.md
 * §15.2, checked by trace_box.c; `time` may be left out).  Each case runs
 * on a fresh history of one engine per file; its decision lines' `expect`,
 * `rules` and `cause` are its checks.  A whole file is checked before any
 * of its cases runs: an invalid file is an error on its line and runs
 * nothing.  Exit 0 all passed, 1 a case failed, 2 an invalid test file (or
 * usage). */
#include "dwtest.h"
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "cli.h"
#include "dogwood_parts.h"
#include "load.h"
#include "trace_box.h"
#include "explain.h"
#include "explain_cmd.h"
#include "../stdlib/json_escape.h"

const char dw_test_usage[] =
    "usage: dwc test [-p POLICY] [-s SCHEMA | --schema box] [--events E] [--format human|tap|junit|json]\n"
    "                [--explain] [DIR|FILE]...\n"
    "Run policy unit tests: every *.dwtest file under each DIR (default: .), and each FILE.\n"
    "A test file is JSON lines (docs/TESTING.md):\n"
    "  {\"policy\": \"policy.dw\", \"schema\": \"box\"}           first: the set under test (paths\n"
    "                                                     relative to the test file; else -p)\n"
    "  {\"case\": \"env contents are secret\"}                a case: a fresh, empty history\n"
    "  {\"action\":\"fs:read\",\"kind\":\"request\",\"input\":{…},\"expect\":\"deny\",\"rules\":[\"no_env\"],\n"
    "   \"cause\":\"forbidden\"}                              Box trace lines (box.md §15.2);\n"
    "                                                     `time` optional (1 s apart)\n"
    "Blank lines and lines starting with // are skipped.  Every file is checked before its\n"
    "cases run: an invalid line, an unknown rule name or a case without an `expect` is an\n"
    "error on its line.  Reports each case with FILE:LINE and ends with `N passed, N failed`;\n"
    "--format tap (TAP 13), junit (JUnit XML) or json instead.\n"
    "Exit 0 when every case passed, 1 when one failed, 2 on an invalid test file.\n"
    "  -p, --policies FILE   the policy set of files without a {\"policy\"} line\n"
    "  -s, --schema FILE     Cedar schema, or `box` (default)\n"
    "      --events E        event schema (.dwschema file or built-in name)\n"
    "      --format F        human (default), tap, junit, json\n"
    "      --explain         under each failed check, why the verdict (as `dwc explain`)\n";

/* What a file's cases run against. */
typedef struct target { const char *policy, *schema, *events; } target;

/* ---- finding the files ---- */

typedef struct paths { char **v; size_t n, cap; } paths;

static int paths_add(paths *p, char *s)
{
    if (!s) return -1;
    if (p->n == p->cap) {
        char **nv = realloc(p->v, (p->cap = p->cap ? 2 * p->cap : 16) * sizeof *nv);
        if (!nv) { free(s); return -1; }
        p->v = nv;
    }
    p->v[p->n++] = s;
    return 0;
}

static int cmp_path(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool is_test_name(const char *n)
{
    size_t l = strlen(n);
    return l > 7 && !strcmp(n + l - 7, ".dwtest");
}

/* Every *.dwtest under dir, sorted (hidden entries skipped). */
static int walk(paths *out, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) { fprintf(stderr, "dwc test: %s: %s\n", dir, strerror(errno)); return -1; }
    size_t from = out->n;
    struct dirent *de;
    int rc = 0;
    while (!rc && (de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        size_t n = strlen(dir) + strlen(de->d_name) + 2;
        char *p = malloc(n);
        if (!p) { rc = -1; break; }
        snprintf(p, n, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", de->d_name);
        struct stat st;
        if (stat(p, &st)) { fprintf(stderr, "dwc test: %s: %s\n", p, strerror(errno)); free(p); rc = -1; }
        else if (S_ISDIR(st.st_mode)) { paths sub = { 0 }; rc = walk(&sub, p); free(p);
            for (size_t i = 0; i < sub.n; i++) if (!rc) rc = paths_add(out, sub.v[i]); else free(sub.v[i]);
            free(sub.v); }
        else if (is_test_name(de->d_name)) rc = paths_add(out, p);
        else free(p);
    }
    closedir(d);
    if (out->n > from) qsort(out->v + from, out->n - from, sizeof *out->v, cmp_path);
    return rc;
}

static int find_files(paths *out, const dw_cli_list *args)
{
    const char *dot = ".";
    size_t n = args->n ? args->n : 1;
    for (size_t i = 0; i < n; i++) {
        const char *a = args->n ? args->v[i] : dot;
        struct stat st;
        if (stat(a, &st)) { fprintf(stderr, "dwc test: %s: %s\n", a, strerror(errno)); return -1; }
        if (S_ISDIR(st.st_mode) ? walk(out, a) : paths_add(out, strdup(a))) return -1;
    }
    return 0;
}

/* ---- checking a file ---- */

/* One file being checked and run. */
typedef struct tfile {
    dw_test_file *f;
    dw_arena *ra;                /* the run's results */
    char *text;
    size_t len;
    target tg;
    bool have_header;
    dw_box_trace t;
    bool trace_open;
    dw_engine *e;
    dw_arena la;                 /* the current line's JSON */
    bool explain;                /* --explain: a failed check carries its explanation */
    int64_t *fed_ts;             /* --explain: the case's lines so far, by time, to name events by line */
    size_t *fed_no, nfed, capfed;
    char msg[600];
} tfile;

static int file_error(tfile *x, size_t line, const char *fmt, const char *detail)
{
    char m[700];
    snprintf(m, sizeof m, fmt, detail);
    x->f->error = dw_arena_printf(x->ra, "%s:%zu: error: %s", x->f->path, line, m);
    x->f->error_line = line;
    return -1;
}

/* PATH relative to the test file's directory (absolute paths as given), in
 * the run's arena (the line's JSON does not outlive the line) */
static const char *beside(tfile *x, const char *path)
{
    const char *slash = strrchr(x->f->path, '/');
    if (path[0] == '/' || !slash) return dw_arena_printf(x->ra, "%s", path);
    return dw_arena_printf(x->ra, "%.*s/%s", (int)(slash - x->f->path), x->f->path, path);
}

/* {"policy": P, "schema"?: S, "events"?: E, "note"?: …} */
static int header_line(tfile *x, const dw_json *j, size_t line)
{
    if (x->e || x->f->ncases) return file_error(x, line, "%s", "the {\"policy\": …} line comes first, before any case");
    if (x->have_header) return file_error(x, line, "%s", "a test file has one {\"policy\": …} line");
    static const char *const keys[] = { "policy", "schema", "events", "note" };
    const char *got[4] = { 0 };
    for (size_t i = 0; i < j->u.obj.n; i++) {
        const dw_json_member *m = &j->u.obj.v[i];
        size_t k = 0;
        while (k < 4 && !(strlen(keys[k]) == m->key.len && !memcmp(keys[k], m->key.s, m->key.len))) k++;
        if (k == 4) {
            char key[80];
            snprintf(key, sizeof key, "%.*s", (int)(m->key.len > 64 ? 64 : m->key.len), m->key.s);
            return file_error(x, line, "unknown member \"%s\" of a {\"policy\": …} line; it has policy, schema, events and note", key);
        }
        if (m->value->kind != DW_JSON_STRING) return file_error(x, line, "\"%s\" must be a string", keys[k]);
        got[k] = m->value->u.str.s;
    }
    if (!got[0]) return file_error(x, line, "%s", "a header line names the policy set: {\"policy\": \"FILE\"}");
    x->tg.policy = beside(x, got[0]);
    if (got[1]) x->tg.schema = strcmp(got[1], "box") ? beside(x, got[1]) : "box";
    if (got[2]) x->tg.events = dw_event_schema_builtin_text(got[2]) ? dw_arena_printf(x->ra, "%s", got[2]) : beside(x, got[2]);
    if (!x->tg.policy || (got[1] && !x->tg.schema) || (got[2] && !x->tg.events)) return file_error(x, line, "%s", "out of memory");
    x->have_header = true;
    return 0;
}

/* The trace checker and the engine, once the target is known. */
static int open_target(tfile *x, size_t line)
{
    if (x->e) return 0;
    if (!x->tg.policy) return file_error(x, line, "%s", "no policy set: give -p POLICY or a first line {\"policy\": \"FILE\"}");
    x->f->policy = x->tg.policy;
    x->trace_open = true;
    int rc = dw_box_trace_open(&x->t, x->tg.schema, x->tg.events);
    x->t.test_file = true;
    if (rc) return file_error(x, line, "cannot load the schemas of %s (diagnostics above)", x->tg.policy);
    dw_engine_config cfg = { .policy_path = x->tg.policy, .schema_path = x->tg.schema ? x->tg.schema : "box",
                             .events_path = x->tg.events, .ticks_per_second = 1000000000, .replay_timestamps = true };
    char err[300];
    x->e = dw_engine_open_printing(&cfg, err, sizeof err);
    if (!x->e) return file_error(x, line, "%s", err);
    return 0;
}

static dw_test_case *new_case(tfile *x, size_t line, const char *name)
{
    dw_test_case *nc = dw_arena_alloc(x->ra, (x->f->ncases + 1) * sizeof *nc);
    if (!nc) return NULL;
    if (x->f->ncases) memcpy(nc, x->f->cases, x->f->ncases * sizeof *nc);
    x->f->cases = nc;
    dw_test_case *c = &nc[x->f->ncases++];
    memset(c, 0, sizeof *c);
    c->name = name;
    c->line = line;
    x->t.have_last = false;      /* a fresh history: times start again */
    return c;
}

/* {"case": NAME, "note"?: …} */
static int case_line(tfile *x, const dw_json *j, size_t line)
{
    for (size_t i = 0; i < j->u.obj.n; i++) {
        const dw_json_member *m = &j->u.obj.v[i];
        bool known = (m->key.len == 4 && !memcmp(m->key.s, "case", 4)) || (m->key.len == 4 && !memcmp(m->key.s, "note", 4));
        if (!known) {
            char key[80];
            snprintf(key, sizeof key, "%.*s", (int)(m->key.len > 64 ? 64 : m->key.len), m->key.s);
            return file_error(x, line, "unknown member \"%s\" of a {\"case\": …} line; it has case and note", key);
        }
        if (m->value->kind != DW_JSON_STRING) return file_error(x, line, "\"%s\" must be a string", m->key.len == 4 && !memcmp(m->key.s, "case", 4) ? "case" : "note");
    }
    const dw_json *n = dw_json_get(j, "case");
    if (!n->u.str.len) return file_error(x, line, "%s", "a case has a name: {\"case\": \"NAME\"}");
    if (open_target(x, line)) return -1;
    for (size_t i = 0; i < x->f->ncases; i++)
        if (!strcmp(x->f->cases[i].name, n->u.str.s))
            return file_error(x, line, "case \"%s\" is named twice in the file", n->u.str.s);
    const char *name = dw_arena_memdup(x->ra, n->u.str.s, n->u.str.len + 1);
    return name && new_case(x, line, name) ? 0 : file_error(x, line, "%s", "out of memory");
}

/* Every expected rule name is a rule of the set (a typo would be a failure
 * that looks like the policy's fault). */
static int check_rule_names(tfile *x, const dw_box_line *bl, size_t line)
{
    if (!bl->rules) return 0;
    for (size_t i = 0; i < bl->rules->u.arr.n; i++) {
        const dw_str *want = &bl->rules->u.arr.v[i]->u.str;
        size_t best = (size_t)-1;
        const char *hit = NULL, *n;
        bool found = false;
        for (uint32_t r = 0; !found && (n = dw_engine_rule_name(x->e, r)) && strcmp(n, "<default-deny>"); r++) {
            found = strlen(n) == want->len && !memcmp(n, want->s, want->len);
            if (dw_hint_closer(want->s, want->len, n, strlen(n), &best)) hit = n;
        }
        if (found) continue;
        char m[300];
        snprintf(m, sizeof m, "\"rules\" names \"%.*s\", which is not a rule of %s%s%s%s", (int)(want->len > 100 ? 100 : want->len),
                 want->s, x->tg.policy, hit ? " (did you mean \"" : "", hit ? hit : "", hit ? "\"?)" : "");
        return file_error(x, line, "%s", m);
    }
    return 0;
}

static bool skip_line(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) i++;
    return i == n || (i + 1 < n && s[i] == '/' && s[i + 1] == '/');
}

/* Parse line [s, s+n) into x->la; NULL with the error set. */
static const dw_json *parse_line(tfile *x, const char *s, size_t n, size_t line)
{
    dw_arena_reset(&x->la);
    dw_source src = { x->f->path, s, n };
    dw_diags d;
    dw_diags_init(&d);
    const dw_json *j = dw_json_parse(&x->la, &src, &d);
    if (!j) {
        char m[400];
        snprintf(m, sizeof m, "%s (column %u)", d.n ? d.v[0].msg : "invalid JSON", d.n ? d.v[0].loc.col : 1);
        file_error(x, line, "%s", m);
    } else if (j->kind != DW_JSON_OBJECT) {
        file_error(x, line, "a test line is a JSON object, not %s", dw_json_kind_name(j->kind));
        j = NULL;
    }
    dw_diags_free(&d);
    return j;
}

/* Walk the file's lines; each event line goes to fn (NULL: none). */
typedef int (*line_fn)(tfile *x, dw_test_case *c, const dw_json *j, const dw_box_line *bl, const char *s, size_t n, size_t line);

static int check_file(tfile *x)
{
    size_t line = 0;
    dw_test_case *c = NULL;
    for (size_t off = 0; off < x->len;) {
        const char *s = x->text + off;
        const char *nl = memchr(s, '\n', x->len - off);
        size_t n = nl ? (size_t)(nl - s) : x->len - off;
        size_t at = off;
        off += n + (nl ? 1 : 0);
        line++;
        if (skip_line(s, n)) continue;
        const dw_json *j = parse_line(x, s, n, line);
        if (!j) return -1;
        bool event = dw_json_get(j, "action") != NULL;
        if (!event && dw_json_get(j, "case")) {
            if (case_line(x, j, line)) return -1;
            c = &x->f->cases[x->f->ncases - 1];
            continue;
        }
        if (!event && dw_json_get(j, "policy")) { if (header_line(x, j, line)) return -1; continue; }
        if (open_target(x, line)) return -1;
        if (!c) {                /* lines before any {"case"}: one case named after its first line */
            const char *name = dw_arena_printf(x->ra, "line %zu", line);
            if (!name || !(c = new_case(x, line, name))) return file_error(x, line, "%s", "out of memory");
        }
        c = &x->f->cases[x->f->ncases - 1];
        dw_box_line bl;
        if (dw_box_trace_line(&x->t, j, line, &bl, x->msg, sizeof x->msg)) return file_error(x, line, "%s", x->msg);
        if (check_rule_names(x, &bl, line)) return -1;
        if (!c->first) { c->first = at + 1; c->first_line = line; }
        c->last = off;
        if (bl.decision && bl.expect) c->nchecks++;
    }
    if (!x->f->ncases) return file_error(x, line ? line : 1, "%s", "no test cases: a case is {\"case\": NAME} and the trace lines that follow");
    for (size_t i = 0; i < x->f->ncases; i++)
        if (!x->f->cases[i].nchecks)
            return file_error(x, x->f->cases[i].line, "case \"%s\" checks nothing: it needs a request line with \"expect\"",
                              x->f->cases[i].name);
    return 0;
}

/* ---- running ---- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *memstream_text(dw_arena *a, FILE *m, char **buf, size_t *len)
{
    fclose(m);
    char *t = *buf ? dw_arena_memdup(a, *buf, *len + 1) : NULL;
    free(*buf);
    return t;
}

static void json_names(FILE *m, const char *const *names, size_t n)
{
    fputc('[', m);
    for (size_t i = 0; i < n; i++) {
        if (i) fputc(',', m);
        dw_json_escape_file(m, names[i], strlen(names[i]), DW_JSON_REPLACE);
    }
    fputc(']', m);
}

/* The check's four texts: expected and actual, as words and as JSON. */
static int describe(tfile *x, dw_test_check *k, const dw_box_line *bl, const dw_verdict *v, bool fault)
{
    char *b[4] = { 0 };
    size_t l[4] = { 0 };
    FILE *m[4];
    for (int i = 0; i < 4; i++)
        if (!(m[i] = open_memstream(&b[i], &l[i]))) {
            while (i--) { fclose(m[i]); free(b[i]); }
            return -1;
        }
    dw_box_print_expected(m[0], bl);
    fprintf(m[1], "%s ", v->allow ? "allow" : "deny");
    dw_box_print_rules(m[1], x->e, v);
    fprintf(m[1], " %s", dw_cause_name(v->cause));
    if ((v->cause == DW_CAUSE_INTERNAL_FAULT || v->nerrors) && v->message[0]) fprintf(m[1], " (%s)", v->message);
    if (fault) fprintf(m[1], " (an internal fault: a line that expects one says \"cause\":\"internal_fault\")");
    fprintf(m[2], "{\"verdict\":\"%s\"", bl->expect->u.str.s);
    if (bl->rules) {
        const char *names[DW_VERDICT_MAX_RULES * 4];
        size_t n = 0;
        for (size_t i = 0; i < bl->rules->u.arr.n && n < sizeof names / sizeof *names; i++) names[n++] = bl->rules->u.arr.v[i]->u.str.s;
        fprintf(m[2], ",\"rules\":");
        json_names(m[2], names, n);
    }
    if (bl->cause) fprintf(m[2], ",\"cause\":\"%s\"", bl->cause->u.str.s);
    fputc('}', m[2]);
    const char *names[DW_VERDICT_MAX_RULES];
    for (uint32_t i = 0; i < v->ndetermining; i++) names[i] = dw_engine_rule_name(x->e, v->determining[i]);
    fprintf(m[3], "{\"verdict\":\"%s\",\"rules\":", v->allow ? "allow" : "deny");
    json_names(m[3], names, v->ndetermining);
    fprintf(m[3], ",\"cause\":\"%s\",\"message\":", dw_cause_name(v->cause));
    dw_json_escape_file(m[3], v->message, strlen(v->message), DW_JSON_REPLACE);
    fputc('}', m[3]);
    const char **dst[4] = { &k->expected, &k->actual, &k->expected_json, &k->actual_json };
    int rc = 0;
    for (int i = 0; i < 4; i++)
        if (!(*dst[i] = memstream_text(x->ra, m[i], &b[i], &l[i]))) rc = -1;
    return rc;
}

static int fed(tfile *x, int64_t ts, size_t line)
{
    if (x->nfed == x->capfed) {
        size_t cap = x->capfed ? 2 * x->capfed : 64;
        int64_t *t = realloc(x->fed_ts, cap * sizeof *t);
        if (t) x->fed_ts = t;
        size_t *no = t ? realloc(x->fed_no, cap * sizeof *no) : NULL;
        if (!no) return -1;
        x->fed_no = no;
        x->capfed = cap;
    }
    x->fed_ts[x->nfed] = ts;
    x->fed_no[x->nfed++] = line;
    return 0;
}

static int run_case(tfile *x, dw_test_case *c)
{
    dw_engine_reset_history(x->e);
    x->t.have_last = false;
    x->nfed = 0;
    c->checks = dw_arena_alloc(x->ra, c->nchecks * sizeof *c->checks);
    if (!c->checks) return -1;
    size_t nk = 0;
    double t0 = now_s();
    /* the case's lines again: they were checked, so they parse */
    size_t line = c->first_line;
    for (size_t off = c->first - 1; off < c->last; line++) {
        const char *s = x->text + off;
        const char *nl = memchr(s, '\n', x->len - off);
        size_t n = nl ? (size_t)(nl - s) : x->len - off;
        off += n + (nl ? 1 : 0);
        if (skip_line(s, n)) continue;
        const dw_json *j = parse_line(x, s, n, line);
        dw_box_line bl;
        if (!j || dw_box_trace_line(&x->t, j, line, &bl, x->msg, sizeof x->msg)) return -1;
        if (x->explain && fed(x, bl.time_ns, line)) return -1;
        if (!bl.decision) {
            if (dw_engine_record_json(x->e, s, n, bl.time_ns, x->msg, sizeof x->msg)) {
                c->error = dw_arena_printf(x->ra, "%s:%zu: error: the engine refused the event: %s", x->f->path, line, x->msg);
                break;
            }
            continue;
        }
        dw_verdict v;
        dw_explanation xp;
        bool explain = x->explain && bl.expect;
        if (explain) { dw_explanation_init(&xp); dw_engine_explain_next(x->e, &xp); }
        dw_engine_decide_json(x->e, s, n, bl.time_ns, &v);
        if (explain) dw_engine_explain_next(x->e, NULL);   /* disarmed even if nothing was taken apart */
        if (!bl.expect || nk == c->nchecks) { if (explain) dw_explanation_free(&xp); continue; }
        dw_test_check *k = &c->checks[nk++];
        bool fault;
        k->line = line;
        k->ok = dw_box_line_holds(x->e, &bl, &v, &fault);
        if (!k->ok) c->nfailed++;
        if (explain && !k->ok) {
            char *b = NULL, where[512];
            size_t bl_len = 0;
            FILE *m = open_memstream(&b, &bl_len);
            snprintf(where, sizeof where, "%s:%zu", x->f->path, line);
            dw_explanation_refused(&xp, &v);
            xp.trace = x->f->path;
            xp.line_ts = x->fed_ts;
            xp.line_no = x->fed_no;
            xp.nlines = x->nfed;
            if (m) { dw_explain_print(m, &xp, x->e, where, &bl); k->explanation = memstream_text(x->ra, m, &b, &bl_len); }
        }
        if (explain) dw_explanation_free(&xp);
        if (describe(x, k, &bl, &v, fault)) return -1;
    }
    c->nchecks = nk;
    if (c->error) c->nfailed++;
    c->seconds = now_s() - t0;
    return 0;
}

/* Check file f, then run its cases (an invalid file runs none). */
static void test_file(dw_test_file *f, dw_arena *ra, const target *defaults, bool explain)
{
    tfile x = { .f = f, .ra = ra, .tg = *defaults, .explain = explain };
    dw_arena_init(&x.la, 64 * 1024);
    double t0 = now_s();
    if (dw_read_file(f->path, &x.text, &x.len)) file_error(&x, 0, "cannot read the file: %s", strerror(errno));
    else if (!check_file(&x))
        for (size_t i = 0; i < f->ncases; i++)
            if (run_case(&x, &f->cases[i]) && !f->error) {
                f->error = dw_arena_printf(ra, "%s:%zu: error: out of memory running case \"%s\"", f->path, f->cases[i].line,
                                           f->cases[i].name);
                f->error_line = f->cases[i].line;
            }
    f->seconds = now_s() - t0;
    if (x.e) dw_engine_close(x.e);
    if (x.trace_open) dw_box_trace_close(&x.t);
    dw_arena_free(&x.la);
    free(x.fed_ts);
    free(x.fed_no);
    free(x.text);
}

int dw_cmd_test(int argc, char **argv)
{
    const char *fmt = "human";
    bool explain = false;
    target tg = { 0 };
    dw_cli_list args = { 0 };
    const dw_cli_opt opts[] = {
        { "policies", 'p', &tg.policy, NULL }, { "schema", 's', &tg.schema, NULL }, { "events", 0, &tg.events, NULL },
        { "format", 0, &fmt, NULL }, { "explain", 0, NULL, &explain }, { 0 },
    };
    int pr = dw_cli_parse_operands(argc, argv, opts, &args, dw_test_usage);
    if (pr) { free(args.v); return pr > 0 ? 0 : 2; }
    static const char *const fmts[] = { "human", "tap", "junit", "json" };
    int fi = 0;
    while (fi < 4 && strcmp(fmt, fmts[fi])) fi++;
    if (fi == 4) {
        fprintf(stderr, "dwc test: error: --format must be human, tap, junit or json, not `%s`\n", fmt);
        free(args.v);
        return 2;
    }
    paths files = { 0 };
    int rc = find_files(&files, &args);
    free(args.v);
    if (!rc && !files.n) { fprintf(stderr, "dwc test: error: no *.dwtest files found\n"); rc = -1; }
    dw_arena ra;
    dw_arena_init(&ra, 64 * 1024);
    dw_test_run r = { 0 };
    if (!rc) r.files = dw_arena_alloc(&ra, files.n * sizeof *r.files);
    if (!rc && !r.files) rc = -1;
    for (size_t i = 0; !rc && i < files.n; i++) {
        dw_test_file *f = &r.files[r.nfiles++];
        memset(f, 0, sizeof *f);
        f->path = files.v[i];
        test_file(f, &ra, &tg, explain);
        /* the machine formats' documents carry the errors too; stderr is for the reader */
        bool tell = fi != DW_TEST_HUMAN;
        if (f->error) { r.invalid++; if (tell) fprintf(stderr, "%s\n", f->error); }
        for (size_t c = 0; c < f->ncases && !f->error; c++) {
            if (f->cases[c].error && tell) fprintf(stderr, "%s\n", f->cases[c].error);
            if (f->cases[c].nfailed) r.failed++;
            else r.passed++;
        }
    }
    if (!rc) dw_test_report(&r, (dw_test_format)fi, stdout);
    for (size_t i = 0; i < files.n; i++) free(files.v[i]);
    free(files.v);
    dw_arena_free(&ra);
    if (rc) return 2;
    return r.invalid ? 2 : r.failed ? 1 : 0;
}
