/* box_events.c - decides Box's example events through the installed shared
 * library, as an embedder would: built with nothing but
 * $(pkg-config --cflags --libs dogwood), or (-DDW_DLOPEN) with only the
 * header and dlopen().  tests/lib/run.sh builds and runs both.
 *
 *   box_events EXAMPLES_DIR OUT [LIBRARY]      (LIBRARY: the .so to dlopen)
 *
 * For each bundle: every requests.jsonl line is decided alone on an empty
 * history (dw_engine_decide_request_json after dw_engine_reset_history);
 * trace.jsonl is fed to one engine in order, its expectations (expect,
 * rules, cause) checked.  Every verdict is written to OUT as
 * "BUNDLE/FILE:LINE ALLOW|DENY CAUSE [rule,...]" (the Python and Rust
 * bindings write the same lines; run.sh compares them).  A policy that does
 * not load must come back as text in err, nothing on stderr.  Ends with
 * "N passed, N failed". */
#include <dogwood.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef DW_DLOPEN
#include <dlfcn.h>
#define API(ret, name, args) static ret(*p_##name) args;
#else
#define API(ret, name, args) static ret(*const p_##name) args = name;
#endif
API(dw_engine *, dw_engine_open, (const dw_engine_config *, char *, size_t))
API(int, dw_engine_close, (dw_engine *))
API(int, dw_engine_decide_json, (dw_engine *, const char *, size_t, int64_t, dw_verdict *))
API(int, dw_engine_record_json, (dw_engine *, const char *, size_t, int64_t, char *, size_t))
API(int, dw_engine_decide_request_json, (dw_engine *, const char *, size_t, int64_t, dw_verdict *))
API(void, dw_engine_reset_history, (dw_engine *))
API(const char *, dw_engine_rule_name, (dw_engine *, uint32_t))
API(const char *, dw_cause_name, (dw_cause))
API(const char *, dw_version, (void))

static int pass, fail;

static void check(int ok, const char *what)
{
    if (ok) pass++;
    else { fail++; printf("FAIL %s\n", what); }
}

/* The string value of "key" in a flat JSON line (the examples' own
 * expectation members), or NULL. */
static const char *member(const char *line, const char *key, char *buf, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\"", key);
    const char *p = strstr(line, pat);
    if (!p) return NULL;
    p += strlen(pat);
    while (*p == ' ') p++;
    if (*p++ != ':') return NULL;
    while (*p == ' ') p++;
    if (*p == '[') {                     /* an array of strings: "a,b" */
        size_t n = 0;
        for (p++; *p && *p != ']'; p++)
            if (*p != '"' && *p != ' ' && n + 1 < cap) buf[n++] = *p;
        buf[n] = 0;
        return buf;
    }
    if (*p++ != '"') return NULL;
    size_t n = 0;
    while (*p && *p != '"' && n + 1 < cap) buf[n++] = *p++;
    buf[n] = 0;
    return buf;
}

static void rules_of(dw_engine *e, const dw_verdict *v, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < v->ndetermining && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? "," : "", p_dw_engine_rule_name(e, v->determining[i]));
}

static char *read_lines(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *t = malloc((size_t)n + 1);
    if (t && fread(t, 1, (size_t)n, f) != (size_t)n) { free(t); t = NULL; }
    if (t) t[n] = 0;
    fclose(f);
    return t;
}

static void run_file(FILE *out, const char *dir, const char *bundle, const char *file)
{
    char path[4096], policy[4096];
    snprintf(path, sizeof path, "%s/%s/%s", dir, bundle, file);
    snprintf(policy, sizeof policy, "%s/%s/policy.dw", dir, bundle);
    char *text = read_lines(path);
    if (!text) return;
    int trace = strcmp(file, "trace.jsonl") == 0;
    dw_engine_config cfg = { .policy_path = policy, .schema_path = "box", .replay_timestamps = trace };
    char err[512];
    dw_engine *e = p_dw_engine_open(&cfg, err, sizeof err);
    check(e != NULL, policy);
    if (!e) { printf("  %s\n", err); free(text); return; }
    int lineno = 0;
    for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl) *nl = 0;
        lineno++;
        if (!*line) continue;
        char kind[32], expect[16], want_rules[256], want_cause[32], rules[1024];
        int has_expect = member(line, "expect", expect, sizeof expect) != NULL;
        dw_verdict v;
        if (!trace) {
            p_dw_engine_reset_history(e);
            check(p_dw_engine_decide_request_json(e, line, strlen(line), DW_TS_NOW, &v) == 0, path);
        } else if (has_expect || (member(line, "kind", kind, sizeof kind) && !strcmp(kind, "request"))) {
            check(p_dw_engine_decide_json(e, line, strlen(line), DW_TS_NOW, &v) == 0, path);
        } else {
            check(p_dw_engine_record_json(e, line, strlen(line), DW_TS_NOW, err, sizeof err) == 0, path);
            continue;
        }
        rules_of(e, &v, rules, sizeof rules);
        fprintf(out, "%s/%s:%d %s %s [%s]\n", bundle, file, lineno, v.allow ? "ALLOW" : "DENY",
                p_dw_cause_name(v.cause), rules);
        if (has_expect) {
            char what[4200];
            snprintf(what, sizeof what, "%s:%d: expected %s", path, lineno, expect);
            check((strcmp(expect, "allow") == 0) == v.allow &&
                  (!member(line, "rules", want_rules, sizeof want_rules) || !strcmp(want_rules, rules)) &&
                  (!member(line, "cause", want_cause, sizeof want_cause) || !strcmp(want_cause, p_dw_cause_name(v.cause))),
                  what);
        }
    }
    p_dw_engine_close(e);
    free(text);
}

static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }

int main(int argc, char **argv)
{
    if (argc < 3) { fprintf(stderr, "usage: box_events EXAMPLES_DIR OUT [LIBRARY]\n"); return 2; }
#ifdef DW_DLOPEN
#define STR_(x) #x
#define STR(x) STR_(x)
    void *h = dlopen(argc > 3 ? argv[3] : "libdogwood.so." STR(DW_VERSION_MAJOR), RTLD_NOW | RTLD_LOCAL);
    if (!h) { printf("FAIL dlopen: %s\n0 passed, 1 failed\n", dlerror()); return 1; }
#define BIND(name) check((*(void **)&p_##name = dlsym(h, #name)) != NULL, "dlsym " #name)
    BIND(dw_engine_open); BIND(dw_engine_close); BIND(dw_engine_decide_json); BIND(dw_engine_record_json);
    BIND(dw_engine_decide_request_json); BIND(dw_engine_reset_history); BIND(dw_engine_rule_name);
    BIND(dw_cause_name); BIND(dw_version);
    if (fail) { printf("%d passed, %d failed\n", pass, fail); return 1; }
    /* internal names stay inside the library */
    check(dlsym(h, "dw_arena_init") == NULL && dlsym(h, "dw_engine_decide_event") == NULL, "internal symbols are hidden");
#endif
    check(strcmp(p_dw_version(), DW_VERSION_STRING) == 0, "dw_version() is the header's DW_VERSION_STRING");
    FILE *out = fopen(argv[2], "w");
    if (!out) { perror(argv[2]); return 2; }
    struct dirent **ents;
    int n = scandir(argv[1], &ents, NULL, by_name);
    check(n > 2, "the examples directory lists bundles");
    for (int i = 0; i < n; i++) {
        if (ents[i]->d_name[0] != '.') {
            run_file(out, argv[1], ents[i]->d_name, "requests.jsonl");
            run_file(out, argv[1], ents[i]->d_name, "trace.jsonl");
        }
        free(ents[i]);
    }
    free(ents);
    fclose(out);

    /* a policy that does not load: the first diagnostic comes back in err */
    char bad[] = "/tmp/dw-lib-badXXXXXX";
    int fd = mkstemp(bad);
    if (fd >= 0) {
        const char src[] = "permit(principal, action, resource)\n  when { context.input.path like };\n";
        check(write(fd, src, sizeof src - 1) == (ssize_t)(sizeof src - 1), "write the bad policy");
        close(fd);
        char err[512] = "";
        dw_engine_config cfg = { .policy_path = bad, .schema_path = "box" };
        dw_engine *e = p_dw_engine_open(&cfg, err, sizeof err);
        char want[600];
        snprintf(want, sizeof want, "%s:2:", bad);
        check(e == NULL && strncmp(err, want, strlen(want)) == 0 && strstr(err, ": error: ") != NULL, "open error text");
        if (e || strncmp(err, want, strlen(want))) printf("  err: %s\n", err);
        unlink(bad);
    }
    printf("%d passed, %d failed\n", pass, fail);
    return fail ? 1 : 0;
}
