/* dw-golden - golden tests: each input file's output must equal NAME.expected
 * byte for byte.  One handler per folder under tests/golden/:
 *   schema/    NAME.cedarschema | NAME.json  -> diagnostics + resolved schema
 *   parse/     NAME.dw                        -> diagnostics, or the printed AST
 *   validate/  NAME.cedar (+ NAME.cedarschema)-> validator diagnostics
 * Usage: dw-golden [--update] DIR   (DIR = tests/golden)
 * Input names are printed relative to their folder, so expected files do not
 * depend on where the repository is checked out. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "compiler/compile.h"
#include "compiler/macros.h"
#include "compiler/pipeline.h"
#include "lang/ast.h"
#include "lang/eventschema.h"
#include "lang/schema.h"
#if __has_include("compiler/typecheck.h")
#include "compiler/typecheck.h"
#define HAVE_TYPECHECK 1
#endif

typedef void (*handler)(const char *name, FILE *out);

static bool ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static int load_src(const char *name, dw_source *src, char **text)
{
    size_t len;
    if (dw_read_file(name, text, &len)) return -1;
    src->name = name;
    src->text = *text;
    src->len = len;
    return 0;
}

static void run_schema(const char *name, FILE *out)
{
    dw_source src;
    char *text;
    if (load_src(name, &src, &text)) { fprintf(out, "cannot read %s\n", name); return; }
    dw_diags d;
    dw_diags_init(&d);
    dw_schema *s = dw_schema_parse(&src, &d);
    dw_diags_print(&d, out);
    if (s) { dw_schema_print(out, s); dw_schema_free(s); }
    dw_diags_free(&d);
    free(text);
}

static void run_parse(const char *name, FILE *out)
{
    dw_source src;
    char *text;
    if (load_src(name, &src, &text)) { fprintf(out, "cannot read %s\n", name); return; }
    dw_diags d;
    dw_diags_init(&d);
    dw_policy_set *ps = dw_parse_policy_set(&src, &d);
    if (d.nerrors || !ps) dw_diags_print(&d, out);
    else dw_policy_set_print(out, ps);
    if (ps) dw_policy_set_free(ps);
    dw_diags_free(&d);
    free(text);
}

#ifdef HAVE_TYPECHECK
static void run_validate(const char *name, FILE *out)
{
    char schema_name[1024];
    snprintf(schema_name, sizeof schema_name, "%.*s.cedarschema", (int)(strlen(name) - strlen(".cedar")), name);
    dw_source src, ssrc;
    char *text, *stext;
    if (load_src(name, &src, &text)) { fprintf(out, "cannot read %s\n", name); return; }
    if (load_src(schema_name, &ssrc, &stext)) { fprintf(out, "cannot read %s\n", schema_name); free(text); return; }
    dw_diags d;
    dw_diags_init(&d);
    dw_policy_set *ps = dw_parse_policy_set(&src, &d);
    dw_schema *s = dw_schema_parse(&ssrc, &d);
    if (ps && s && d.nerrors == 0) dw_validate(ps, s, &d);
    dw_diags_print(&d, out);
    if (ps) dw_policy_set_free(ps);
    if (s) dw_schema_free(s);
    dw_diags_free(&d);
    free(text);
    free(stext);
}
#endif

/* strip: NAME.expected (parse/, validate/) rather than NAME.EXT.expected (schema/) */
static void run_eventschema(const char *name, FILE *out)
{
    char cedar_name[1024];
    snprintf(cedar_name, sizeof cedar_name, "%.*s.cedarschema", (int)(strlen(name) - strlen(".dwschema")), name);
    dw_source src, csrc;
    char *text, *ctext = NULL;
    if (load_src(name, &src, &text)) { fprintf(out, "cannot read %s\n", name); return; }
    dw_diags d;
    dw_diags_init(&d);
    dw_schema *s = NULL;
    if (load_src(cedar_name, &csrc, &ctext) == 0) s = dw_schema_parse(&csrc, &d);
    dw_event_schema *es = dw_event_schema_parse(&src, &d);
    dw_event_derivation *dv = es ? dw_event_schema_derive(es, s, &d) : NULL;
    dw_diags_print(&d, out);
    if (dv) dw_event_derivation_print(out, dv);
    dw_event_derivation_free(dv);
    dw_event_schema_free(es);
    if (s) dw_schema_free(s);
    dw_diags_free(&d);
    free(text);
    free(ctext);
}

static dw_policy_set *stdlib_macros;

static void run_macros(const char *name, FILE *out)
{
    dw_source src;
    char *text;
    if (load_src(name, &src, &text)) { fprintf(out, "cannot read %s\n", name); return; }
    dw_diags d;
    dw_diags_init(&d);
    dw_front_end fe = { .src = &src, .lib = stdlib_macros };
    dw_front_end_run(&fe, DW_FE_EXPAND, &d, NULL);
    if (d.nerrors || !fe.ps) dw_diags_print(&d, out);
    else {
        dw_policy_set_print(out, fe.ps);
        dw_macros_print_leaves(out, fe.ps);
    }
    fe.lib = NULL;             /* shared by every case */
    dw_front_end_free(&fe);
    dw_diags_free(&d);
    free(text);
}

/* temporal/: Box's schemas from the folder itself, loaded on first use */
static void run_temporal(const char *name, FILE *out)
{
    static dw_schema *as;
    static dw_event_schema *es;
    static dw_event_derivation *dv;
    static char *atext, *etext;
    static dw_source asrc, esrc;
    static dw_diags sd;
    if (!name) {   /* teardown */
        if (dv) dw_event_derivation_free(dv);
        if (es) dw_event_schema_free(es);
        if (as) dw_schema_free(as);
        dw_diags_free(&sd);
        free(atext);
        free(etext);
        return;
    }
    if (!as) {
        dw_diags_init(&sd);
        if (load_src("actions.cedarschema", &asrc, &atext) || load_src("events.dwschema", &esrc, &etext)) {
            fprintf(out, "cannot read the folder's schemas\n");
            return;
        }
        as = dw_schema_parse(&asrc, &sd);
        es = as ? dw_event_schema_parse(&esrc, &sd) : NULL;
        dv = es ? dw_event_schema_derive(es, as, &sd) : NULL;
    }
    dw_source src;
    char *text;
    if (load_src(name, &src, &text)) { fprintf(out, "cannot read %s\n", name); return; }
    dw_diags d;
    dw_diags_init(&d);
    dw_front_end fe = { .src = &src, .schema = as, .dv = dv, .schema_checks_without_schema = true, .lib = stdlib_macros };
    dw_front_end_run(&fe, DW_FE_SCHEMA, &d, NULL);
    dw_diags_print(&d, out);
    fe.lib = NULL;
    dw_front_end_free(&fe);
    dw_diags_free(&d);
    free(text);
}

typedef struct suite { const char *dir; const char *suffixes[3]; handler run; bool strip; } suite;
static const suite suites[] = {
    { "schema", { ".cedarschema", ".json", NULL }, run_schema, false },
    { "parse", { ".dw", ".cedar", NULL }, run_parse, true },
    { "eventschema", { ".dwschema", NULL, NULL }, run_eventschema, true },
    { "macros", { ".dw", NULL, NULL }, run_macros, true },
    { "temporal", { ".dw", NULL, NULL }, run_temporal, true },
#ifdef HAVE_TYPECHECK
    { "validate", { ".cedar", NULL, NULL }, run_validate, true },
#endif
};

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
    bool update = false;
    const char *root = NULL;
    static const struct option longopts[] = { { "update", no_argument, NULL, 'u' }, { NULL, 0, NULL, 0 } };
    for (int o; (o = getopt_long(argc, argv, "", longopts, NULL)) != -1;)
        if (o == 'u') update = true;
        else { fprintf(stderr, "usage: dw-golden [--update] DIR\n"); return 2; }
    if (optind + 1 == argc) root = argv[optind];
    if (!root) { fprintf(stderr, "usage: dw-golden [--update] DIR\n"); return 2; }
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) return 2;
    dw_source lsrc = { "macros.dw", dw_stdlib_macros_text, dw_stdlib_macros_len };
    dw_diags ld;
    dw_diags_init(&ld);
    stdlib_macros = dw_macro_library_parse(&lsrc, &ld);
    if (!stdlib_macros || ld.nerrors) { dw_diags_print(&ld, stderr); return 2; }
    size_t pass = 0, fail = 0;
    for (size_t s = 0; s < sizeof suites / sizeof *suites; s++) {
        char dir[4096];
        if (root[0] == '/') snprintf(dir, sizeof dir, "%s/%s", root, suites[s].dir);
        else snprintf(dir, sizeof dir, "%s/%s/%s", cwd, root, suites[s].dir);
        if (chdir(dir)) continue;
        DIR *d = opendir(".");
        if (!d) continue;
        char **names = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
            bool match = false;
            for (int k = 0; k < 3 && suites[s].suffixes[k]; k++)
                if (ends_with(de->d_name, suites[s].suffixes[k])) match = true;
            if (!match || de->d_name[0] == '.') continue;
            if (n == cap) { cap = cap ? cap * 2 : 64; names = realloc(names, cap * sizeof *names); }
            names[n++] = strdup(de->d_name);
        }
        closedir(d);
        if (n) qsort(names, n, sizeof *names, cmp_str);
        for (size_t i = 0; i < n; i++) {
            /* validate/ pairs NAME.cedar with NAME.cedarschema: only .cedar drives it */
            char *got = NULL;
            size_t glen = 0;
            FILE *mem = open_memstream(&got, &glen);
            suites[s].run(names[i], mem);
            fclose(mem);
            char exp_name[1200];
            const char *dot = strrchr(names[i], '.');
            int stem = suites[s].strip && dot ? (int)(dot - names[i]) : (int)strlen(names[i]);
            snprintf(exp_name, sizeof exp_name, "%.*s.expected", stem, names[i]);
            char *want = NULL;
            size_t wlen = 0;
            if (update) {
                FILE *f = fopen(exp_name, "wb");
                if (f) { fwrite(got, 1, glen, f); fclose(f); }
                pass++;
            } else if (dw_read_file(exp_name, &want, &wlen) == 0 && wlen == glen && memcmp(want, got, glen) == 0) {
                pass++;
            } else {
                fail++;
                printf("FAIL %s/%s\n--- expected\n%s--- got\n%s---\n", suites[s].dir, names[i], want ? want : "(missing)\n", got);
            }
            free(want);
            free(got);
            free(names[i]);
        }
        free(names);
    }
    if (chdir(cwd)) return 2;
    run_temporal(NULL, NULL);
    dw_policy_set_free(stdlib_macros);
    dw_diags_free(&ld);
    printf("golden: %zu passed, %zu failed\n", pass, fail);
    return fail ? 1 : 0;
}
