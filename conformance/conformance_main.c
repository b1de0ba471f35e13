/* dw-conformance - runs Cedar's integration tests (dogwood.md Appendix A).
 *   dw-conformance [--json] [--show N] ROOT
 * Runs every JSON test file under ROOT/tests/ (recursively) and ROOT/corpus-tests/, compares
 * decision, reason set and error set per request, prints a per-dimension
 * table, the first failures, and `N passed, N failed` (requests). */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "compiler/compile.h"
#include "compiler/typecheck.h"
#include "lang/ast.h"
#include "lang/json.h"
#include "lang/schema.h"
#include "runtime/json_value.h"
#include "runtime/explain_parts.h"
#include "compiler/artifact_write.h"
#include "vm/artifact.h"
#include "vm/vm.h"

typedef struct strlist { char **v; size_t n, cap; } strlist;

static void strlist_add(strlist *l, const char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (!l->v) { perror("realloc"); exit(1); }
    }
    l->v[l->n++] = strdup(s);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static void collect(const char *dir, bool recursive, strlist *out)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(path, &st)) continue;
        if (S_ISDIR(st.st_mode)) { if (recursive) collect(path, true, out); continue; }
        if (ends_with(de->d_name, ".json") && !ends_with(de->d_name, ".entities.json")) strlist_add(out, path);
    }
    closedir(d);
}

/* ---- per-dimension counters ---- */
typedef struct stats {
    size_t req_pass, req_fail;
    size_t decision_fail, reason_fail, errors_fail, setup_fail;
    size_t tests, tests_setup_failed;
    size_t validation_checked, validation_fail;
    size_t index_checked, index_fail;
    size_t parts_checked, parts_fail;   /* dwc explain's parts of each policy make its value */
} stats;

typedef struct failure_log { size_t shown, limit; } failure_log;

static void show_failure(failure_log *fl, const char *file, const char *desc, const char *what)
{
    if (fl->shown++ >= fl->limit) return;
    fprintf(stderr, "FAIL %s [%s]: %s\n", file, desc ? desc : "-", what);
}

/* A loaded text file that stays alive for the diagnostics that point into it. */
typedef struct loaded { dw_source src; char *text; } loaded;

static int load(const char *root, const char *rel, loaded *out, char *errbuf, size_t errcap)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    size_t len;
    if (dw_read_file(path, &out->text, &len)) {
        snprintf(errbuf, errcap, "cannot read %.300s: %.100s", path, strerror(errno));
        return -1;
    }
    out->src.name = strdup(path);
    out->src.text = out->text;
    out->src.len = len;
    return 0;
}

static void unload(loaded *l) { free(l->text); free((char *)l->src.name); memset(l, 0, sizeof *l); }

/* Compare the expected id array with the response's policy indices. */
static bool same_ids(const dw_json *expected, const dw_program *prog, const uint32_t *idx, uint32_t n, bool *bad_form)
{
    if (!expected || expected->kind != DW_JSON_ARRAY) { *bad_form = true; return false; }
    /* sets: every expected id must be produced and vice versa (duplicates ignored) */
    for (size_t i = 0; i < expected->u.arr.n; i++) {
        const dw_json *e = expected->u.arr.v[i];
        if (e->kind != DW_JSON_STRING) { *bad_form = true; return false; }
        bool found = false;
        for (uint32_t k = 0; k < n && !found; k++) {
            const dw_str *id = &prog->policies[idx[k]].id;
            found = id->len == e->u.str.len && memcmp(id->s, e->u.str.s, id->len) == 0;
        }
        if (!found) return false;
    }
    for (uint32_t k = 0; k < n; k++) {
        const dw_str *id = &prog->policies[idx[k]].id;
        bool found = false;
        for (size_t i = 0; i < expected->u.arr.n && !found; i++)
            found = expected->u.arr.v[i]->u.str.len == id->len && memcmp(expected->u.arr.v[i]->u.str.s, id->s, id->len) == 0;
        if (!found) return false;
    }
    return true;
}

static void describe_ids(char *buf, size_t cap, const dw_program *prog, const uint32_t *idx, uint32_t n)
{
    size_t o = 0;
    buf[0] = 0;
    o += (size_t)snprintf(buf + o, cap - o, "[");
    for (uint32_t k = 0; k < n && o < cap; k++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%.*s", k ? "," : "", (int)prog->policies[idx[k]].id.len, prog->policies[idx[k]].id.s);
    if (o < cap) snprintf(buf + o, cap - o, "]");
}

static bool via_artifact;

static bool parts_agree(const dw_program *prog, const dw_store *store, dw_request *req, dw_arena *scratch, stats *S)
{
    dw_request_bind(req, prog, store);
    dw_value *stack = dw_arena_alloc_raw(scratch, (prog->max_stack + 1) * sizeof *stack);
    dw_cut c;
    if (!stack || dw_cut_init(&c, prog, store, req, scratch, stack)) return true;   /* OOM: nothing checked */
    dw_eval_ctx cx = { .prog = prog, .store = store, .req = req, .scratch = scratch, .stack = stack };
    bool ok = true;
    for (uint32_t i = 0; i < prog->npolicies && ok; i++) {
        dw_x_policy xp = { 0 };
        bool r = false;
        dw_eval_status st = dw_eval_policy(&cx, i, &r);
        xp.value = st != DW_EVAL_OK ? DW_X_ERROR : r ? DW_X_TRUE : DW_X_FALSE;
        dw_explain_conditions(scratch, &c, i, &xp);
        S->parts_checked++;
        if (!dw_explain_parts_agree(&xp)) { S->parts_fail++; ok = false; }
    }
    dw_cut_free(&c);
    return ok;
}

static void run_test(const char *root, const char *file, stats *S, failure_log *fl)
{
    char err[512] = "";
    loaded tf = { 0 }, pf = { 0 }, sf = { 0 }, ef = { 0 };
    dw_arena ja;
    dw_arena_init(&ja, 64 * 1024);
    dw_diags diags;
    dw_diags_init(&diags);
    dw_policy_set *ps = NULL;
    dw_program *prog = NULL;
    dw_schema *schema = NULL;
    dw_store store;
    dw_store_init(&store);
    dw_buf eb = { 0 };
    const dw_json *test = NULL, *requests = NULL;
    S->tests++;

    size_t flen;
    if (dw_read_file(file, &tf.text, &flen)) { snprintf(err, sizeof err, "cannot read: %s", strerror(errno)); goto setup_failed; }
    tf.src.name = strdup(file); tf.src.text = tf.text; tf.src.len = flen;
    test = dw_json_parse(&ja, &tf.src, &diags);
    if (!test || test->kind != DW_JSON_OBJECT) { snprintf(err, sizeof err, "test file is not a JSON object"); goto setup_failed; }
    requests = dw_json_get(test, "requests");
    const dw_json *pol = dw_json_get(test, "policies"), *sch = dw_json_get(test, "schema"), *ent = dw_json_get(test, "entities");
    if (!pol || pol->kind != DW_JSON_STRING || !requests || requests->kind != DW_JSON_ARRAY) { snprintf(err, sizeof err, "test file lacks policies/requests"); goto setup_failed; }

    if (load(root, pol->u.str.s, &pf, err, sizeof err)) goto setup_failed;
    ps = dw_parse_policy_set(&pf.src, &diags);
    if (!ps || diags.nerrors) { snprintf(err, sizeof err, "policy parse failed: %s", diags.n ? diags.v[0].msg : "?"); goto setup_failed; }
    prog = dw_compile(ps, NULL, &diags);
    if (!prog) { snprintf(err, sizeof err, "compile failed: %s", diags.n ? diags.v[0].msg : "?"); goto setup_failed; }
    if (via_artifact) {
        /* round trip through the .dwb writer, loader and verifier */
        dw_buf ab = { 0 };
        char msg[256] = "out of memory";
        dw_program *loaded_prog = dw_artifact_write(prog, 0, &ab) ? NULL : dw_artifact_load(ab.p, ab.len, msg, sizeof msg);
        dw_buf_free(&ab);
        if (!loaded_prog) { snprintf(err, sizeof err, "artifact round trip failed: %s", msg); goto setup_failed; }
        dw_program_free(prog);
        prog = loaded_prog;
    }
    if (sch && sch->kind == DW_JSON_STRING) {
        if (load(root, sch->u.str.s, &sf, err, sizeof err)) goto setup_failed;
        schema = dw_schema_parse(&sf.src, &diags);
        if (!schema || diags.nerrors) { snprintf(err, sizeof err, "schema parse failed: %s", diags.n ? diags.v[0].msg : "?"); goto setup_failed; }
    }
    /* shouldValidate: strict validation must agree (its own dimension) */
    const dw_json *sv = dw_json_get(test, "shouldValidate");
    if (schema && sv && sv->kind == DW_JSON_BOOL) {
        dw_diags vd;
        dw_diags_init(&vd);
        dw_validate_result vr = dw_validate(ps, schema, &vd);
        S->validation_checked++;
        if ((vr.nerrors == 0) != sv->u.b) {
            S->validation_fail++;
            char msg[700];
            snprintf(msg, sizeof msg, "validation: expected %s, got %zu error(s)%s%s", sv->u.b ? "valid" : "invalid",
                     vr.nerrors, vd.n ? ": " : "", vd.n ? vd.v[0].msg : "");
            show_failure(fl, file, "shouldValidate", msg);
        }
        dw_diags_free(&vd);
    }
    if (ent && ent->kind == DW_JSON_STRING) {
        if (load(root, ent->u.str.s, &ef, err, sizeof err)) goto setup_failed;
        const dw_json *ej = dw_json_parse(&store.arena, &ef.src, &diags);
        if (!ej) { snprintf(err, sizeof err, "entities JSON invalid: %s", diags.n ? diags.v[0].msg : "?"); goto setup_failed; }
        if (dw_store_load_json(&store, ej, schema, &eb)) { snprintf(err, sizeof err, "entities: %s", eb.p); goto setup_failed; }
    } else if (schema) {
        if (dw_store_add_schema_actions(&store, schema, &eb) || dw_store_seal(&store)) { snprintf(err, sizeof err, "actions: %s", eb.p ? eb.p : "?"); goto setup_failed; }
    }

    dw_arena scratch;
    dw_arena_init(&scratch, 64 * 1024);
    for (size_t r = 0; r < requests->u.arr.n; r++) {
        const dw_json *rq = requests->u.arr.v[r];
        const dw_json *desc = dw_json_get(rq, "description");
        const char *d = desc && desc->kind == DW_JSON_STRING ? desc->u.str.s : "?";
        const dw_json *vr = dw_json_get(rq, "validateRequest");
        bool validate = !vr || (vr->kind == DW_JSON_BOOL && vr->u.b);
        dw_arena_reset(&scratch);
        dw_request req;
        eb.len = 0;
        if (eb.p) eb.p[0] = 0;
        if (dw_request_from_json(&scratch, dw_json_get(rq, "principal"), dw_json_get(rq, "action"),
                                 dw_json_get(rq, "resource"), dw_json_get(rq, "context"),
                                 schema, validate, &req, &eb)) {
            char msg[600];
            snprintf(msg, sizeof msg, "request: %s", eb.p ? eb.p : "?");
            show_failure(fl, file, d, msg);
            S->req_fail++;
            S->setup_fail++;
            continue;
        }
        size_t index_fail_before = S->index_fail;
        dw_response resp;
        if (dw_authorize(prog, &store, &req, &scratch, &resp)) {
            show_failure(fl, file, d, "authorizer out of memory");
            S->req_fail++;
            continue;
        }
        /* the decision index must be sound: the same answer with every policy run */
        dw_response all;
        if (dw_authorize_all(prog, &store, &req, &scratch, &all) == 0) {
            bool same = all.allow == resp.allow && all.ndetermining == resp.ndetermining && all.nerrors == resp.nerrors;
            for (uint32_t k = 0; same && k < all.ndetermining; k++) same = all.determining[k] == resp.determining[k];
            for (uint32_t k = 0; same && k < all.nerrors; k++) same = all.errors[k].policy == resp.errors[k].policy;
            S->index_checked++;
            if (!same) { S->index_fail++; show_failure(fl, file, d, "decision index disagrees with a full scan"); }
        }
        /* dwc explain takes every policy apart into scope and conditions (its
         * own code cut at the compiler's marks): the parts must give its value */
        if (prog->cond_marks && !parts_agree(prog, &store, &req, &scratch, S)) {
            S->index_fail++;     /* fails the request below, like an index disagreement */
            show_failure(fl, file, d, "dwc explain's scope and conditions of a policy disagree with its value");
        }
        const dw_json *dec = dw_json_get(rq, "decision");
        bool want_allow = dec && dec->kind == DW_JSON_STRING && strcmp(dec->u.str.s, "allow") == 0;
        bool ok_dec = dec && want_allow == resp.allow;
        bool bad_form = false;
        bool ok_reason = same_ids(dw_json_get(rq, "reason"), prog, resp.determining, resp.ndetermining, &bad_form);
        uint32_t *eidx = dw_arena_alloc(&scratch, (resp.nerrors + 1) * sizeof *eidx);
        for (uint32_t k = 0; k < resp.nerrors; k++) eidx[k] = resp.errors[k].policy;
        bool ok_err = same_ids(dw_json_get(rq, "errors"), prog, eidx, resp.nerrors, &bad_form);
        if (!ok_dec) S->decision_fail++;
        if (!ok_reason) S->reason_fail++;
        if (!ok_err) S->errors_fail++;
        if (ok_dec && ok_reason && ok_err && S->index_fail == index_fail_before) { S->req_pass++; continue; }
        S->req_fail++;
        char got_r[256], got_e[256], msg[800];
        describe_ids(got_r, sizeof got_r, prog, resp.determining, resp.ndetermining);
        describe_ids(got_e, sizeof got_e, prog, eidx, resp.nerrors);
        snprintf(msg, sizeof msg, "got %s reason=%s errors=%s%s%s (expected %s)%s",
                 resp.allow ? "allow" : "deny", got_r, got_e,
                 resp.nerrors ? " first error: " : "", resp.nerrors ? dw_eval_status_name(resp.errors[0].status) : "",
                 want_allow ? "allow" : "deny", bad_form ? " [malformed expectation]" : "");
        show_failure(fl, file, d, msg);
    }
    dw_arena_free(&scratch);
    goto done;

setup_failed:
    S->tests_setup_failed++;
    {
        size_t n = requests && requests->kind == DW_JSON_ARRAY ? requests->u.arr.n : 1;
        S->req_fail += n;
        S->setup_fail += n;
        show_failure(fl, file, "setup", err);
    }
done:
    dw_buf_free(&eb);
    dw_store_free(&store);
    if (schema) dw_schema_free(schema);
    if (prog) dw_program_free(prog);
    if (ps) dw_policy_set_free(ps);
    dw_diags_free(&diags);
    dw_arena_free(&ja);
    unload(&tf); unload(&pf); unload(&sf); unload(&ef);
}

int main(int argc, char **argv)
{
    const char *root = NULL;
    bool json = false;
    failure_log fl = { 0, 20 };
    static const char usage[] = "usage: dw-conformance [--json] [--show N] [--via-artifact] ROOT\n";
    static const struct option longopts[] = {
        { "json", no_argument, NULL, 'j' }, { "via-artifact", no_argument, NULL, 'a' },
        { "show", required_argument, NULL, 's' }, { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
    };
    for (int o; (o = getopt_long(argc, argv, "h", longopts, NULL)) != -1;) {
        switch (o) {
        case 'j': json = true; break;
        case 'a': via_artifact = true; break;
        case 's': {
            char *end;
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (!*optarg || *end || errno || v < 0) {
                fprintf(stderr, "dw-conformance: --show wants how many failures to print (0 or more), not `%s`\n", optarg);
                return 2;
            }
            fl.limit = (size_t)v;
            break;
        }
        case 'h':
            printf("%s"
                   "--via-artifact: write each compiled set to .dwb bytes, load and verify it, run that\n"
                   "Runs ROOT/tests/**/*.json and ROOT/corpus-tests/*.json (Cedar's integration tests)\n"
                   "and compares decision, reasons and errors per request.\n", usage);
            return 0;
        default: fputs(usage, stderr); return 2;
        }
    }
    if (optind + 1 < argc) { fprintf(stderr, "dw-conformance: unexpected argument %s\n", argv[optind + 1]); return 2; }
    if (optind < argc) root = argv[optind];
    if (!root) { fputs(usage, stderr); return 2; }
    strlist files = { 0 };
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests", root);
    collect(dir, true, &files);
    snprintf(dir, sizeof dir, "%s/corpus-tests", root);
    collect(dir, false, &files);
    qsort(files.v, files.n, sizeof *files.v, cmp_str);
    if (!files.n) { fprintf(stderr, "dw-conformance: no test files under %s\n", root); return 1; }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    stats S = { 0 };
    for (size_t i = 0; i < files.n; i++) {
        /* paths inside a test file resolve against ROOT */
        run_test(root, files.v[i], &S, &fl);
        free(files.v[i]);
    }
    free(files.v);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    size_t total = S.req_pass + S.req_fail;
    if (json) {
        printf("{\"tests\":%zu,\"requests\":%zu,\"passed\":%zu,\"failed\":%zu,"
               "\"dimensions\":{\"decision\":{\"failed\":%zu},\"reason\":{\"failed\":%zu},\"errors\":{\"failed\":%zu},"
               "\"index\":{\"checked\":%zu,\"failed\":%zu},\"explain_parts\":{\"checked\":%zu,\"failed\":%zu},"
               "\"setup\":{\"failed\":%zu},\"validation\":{\"checked\":%zu,\"failed\":%zu}},\"seconds\":%.3f}\n",
               S.tests, total, S.req_pass, S.req_fail, S.decision_fail, S.reason_fail, S.errors_fail,
               S.index_checked, S.index_fail, S.parts_checked, S.parts_fail, S.setup_fail, S.validation_checked, S.validation_fail, secs);
    } else {
        printf("Cedar conformance: %zu test files, %zu requests, %.2f s\n", S.tests, total, secs);
        printf("  %-11s %9s %9s\n", "dimension", "passed", "failed");
        printf("  %-11s %9zu %9zu\n", "decision", total - S.decision_fail - S.setup_fail, S.decision_fail);
        printf("  %-11s %9zu %9zu\n", "reason", total - S.reason_fail - S.setup_fail, S.reason_fail);
        printf("  %-11s %9zu %9zu\n", "errors", total - S.errors_fail - S.setup_fail, S.errors_fail);
        printf("  %-11s %9zu %9zu   (decision index on vs. off: identical responses)\n", "index",
               S.index_checked - S.index_fail, S.index_fail);
        printf("  %-11s %9zu %9zu   (policies: dwc explain's scope and conditions give the policy's value)\n", "parts",
               S.parts_checked - S.parts_fail, S.parts_fail);
        printf("  %-11s %9zu %9zu   (test files whose policies, schema or entities did not load)\n", "setup",
               S.tests - S.tests_setup_failed, S.tests_setup_failed);
        printf("  %-11s %9zu %9zu   (test files: strict validation agrees with shouldValidate)\n", "validation",
               S.validation_checked - S.validation_fail, S.validation_fail);
        if (fl.shown > fl.limit) printf("  (%zu failures not shown; --show N)\n", fl.shown - fl.limit);
    }
    /* the closing count covers requests and validation verdicts (one per test file) */
    printf("%zu passed, %zu failed\n", S.req_pass + S.validation_checked - S.validation_fail, S.req_fail + S.validation_fail);
    return S.req_fail || S.validation_fail ? 1 : 0;
}
