/* test_box_profile.c - the Box profile at load (issue 15; box.md §11, §17).
 *
 * With the Box schema every load refusal of box.md §11 makes dw_engine_open
 * fail, and its err buffer holds exactly the first error `dwc check --schema
 * box` reports (file:line:col: error[rule]: message (hint: ...)), because
 * both come from one implementation (the pipeline's DW_FE_PROFILE stage).
 * Box's warnings do not refuse.  An artifact records that it passed the
 * profile (DW_AF_BOX_PROFILE); the Box loader and dw_engine_reload refuse one
 * that did not, and a reader refuses header flags it does not know. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/dogwood.h"
#include "runtime/load.h"
#include "compiler/lint.h"
#include "compiler/pipeline.h"
#include "compiler/artifact_write.h"
#include "vm/artifact.h"
#include "vm/artifact_format.h"
#include "stdlib/le.h"
#include <xxhash.h>

typedef struct refusal { const char *rule; const char *text; } refusal;

/* one policy per refusal of box.md §11 (inert-home-literal twice: a home
 * spelling and a trailing slash) */
static const refusal refusals[] = {
    { "box-duplicate-id",
      "@id(\"a\")\npermit (principal, action == Box::Action::\"fs:read\", resource) when { context.input.path like \"~/a/*\" };\n"
      "@id(\"a\")\npermit (principal, action == Box::Action::\"fs:read\", resource) when { context.input.path like \"~/b/*\" };\n" },
    /* the refusal first in the text is the one reported, though the validator's
     * finding (rule 3) is found before the duplicate @id (rule 2) */
    { "box-duplicate-id",
      "@id(\"a\")\npermit (principal, action == Box::Action::\"fs:read\", resource) when { context.input.path like \"~/a/*\" };\n"
      "@id(\"a\")\npermit (principal, action == Box::Action::\"fs:read\", resource) when { context.input.path like \"~/b/*\" };\n"
      "@id(\"rm\")\nforbid (principal, action == Box::Action::\"shell:exec\", resource)\n"
      "when { context.input.program == \"rm\" && context.input.arg1 == \"-rf\" };\n" },
    /* ... also when the other is temporal validation's (an earlier stage) */
    { "box-duplicate-id",
      "@id(\"a\")\npermit (principal, action == Box::Action::\"fs:read\", resource) when { context.input.path like \"~/a/*\" };\n"
      "@id(\"a\")\npermit (principal, action == Box::Action::\"fs:read\", resource) when { context.input.path like \"~/b/*\" };\n"
      "@id(\"weekly\")\nforbid (principal, action == Box::Action::\"fs:write\", resource)\nwhen temporal {\n"
      "  (count for (t: Timepoint). where (formerly within 48h (Box::Action::\"fs:write\"::response{ input.path: _ } && tp(t)))) > 100\n};\n" },
    { "box-unknown-action",
      "@id(\"typo\")\npermit (principal, action == Box::Action::\"fs:raed\", resource);\n" },
    { "box-unguarded-optional",
      "@id(\"rm\")\nforbid (principal, action == Box::Action::\"shell:exec\", resource)\n"
      "when { context.input.program == \"rm\" && context.input.arg1 == \"-rf\" };\n" },
    { "box-window-over-cap",
      "@id(\"weekly\")\nforbid (principal, action == Box::Action::\"fs:write\", resource)\nwhen temporal {\n"
      "  (count for (t: Timepoint). where (formerly within 48h (Box::Action::\"fs:write\"::response{ input.path: _ } && tp(t)))) > 100\n};\n" },
    { "box-inert-home-literal",
      "@id(\"project_read\")\npermit (principal, action == Box::Action::\"fs:read\", resource)\n"
      "when { context.input.path like \"/Users/dev/project/*\" };\n" },
    { "box-inert-home-literal",
      "@id(\"cfg\")\nforbid (principal, action == Box::Action::\"fs:write\", resource)\n"
      "when { context.input.path == \"~/.config/\" };\n" },
    { "box-temporal-permit-cap",
      "@id(\"writes\")\npermit (principal, action == Box::Action::\"fs:write\", resource);\n"
      "@id(\"write_budget\")\npermit (principal, action == Box::Action::\"fs:write\", resource)\nwhen temporal {\n"
      "  (count for (t: Timepoint). where (formerly within 60s (Box::Action::\"fs:write\"::response{ input.path: _ } && tp(t)))) < 6\n};\n" },
    { "box-reserved-action-only",
      "@id(\"other\")\nforbid (principal, action == Box::Action::\"fs:other\", resource);\n" },
    { "box-providers",
      "@id(\"moderation\")\nforbid (principal, action == Box::Action::\"mcp:call\", resource)\n"
      "when { context.input has prompt && guard::moderation(context.input.prompt).flagged };\n" },
};

/* Box's warnings: the set loads */
static const char *const warnings_only[] = {
    /* box-temporal-permit-cap beside a conditional permit */
    "@id(\"uploads\")\npermit (principal, action == Box::Action::\"http:request\", resource)\n"
    "when { context.input.host == \"uploads.example.com\" };\n"
    "@id(\"upload_budget\")\npermit (principal, action == Box::Action::\"http:request\", resource)\n"
    "when { context.input.host == \"api.example.com\" }\nwhen temporal {\n"
    "  (count for (t: Timepoint). where (formerly within 1h (Box::Action::\"http:request\"::response{ input.host: \"api.example.com\" } && tp(t)))) < 10\n};\n",
    /* box-program-slash */
    "@id(\"ls\")\npermit (principal, action == Box::Action::\"shell:exec\", resource) when { context.input.program == \"/bin/ls\" };\n",
    /* box-home-after-wildcard */
    "@id(\"w\")\npermit (principal, action == Box::Action::\"fs:read\", resource) when { context.input.path like \"*~/x\" };\n",
};

static char path[64];

static void write_text(const char *p, const void *data, size_t n)
{
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static const char *policy_file(const char *text)
{
    snprintf(path, sizeof path, "/tmp/dw_box_profile_%d.dw", (int)getpid());
    write_text(path, text, strlen(text));
    return path;
}

/* the first error `dwc check --schema box` reports (runtime/check.c: findings
 * sorted by position), formatted as the loader's one-line message */
static void check_first_error(const char *text, char *out, size_t cap, const char **rule)
{
    dw_session s;
    dw_session_init(&s);
    assert_int_equal(dw_session_load_schema(&s, "box"), 0);
    assert_int_equal(dw_session_load_events(&s, NULL), 0);
    dw_source src = { path, text, strlen(text) };
    dw_lint_options opt = { .box = true, .schema = s.schema, .dv = s.dv };
    dw_findings f = { 0 };
    assert_true(dw_lint_run(&src, &opt, &f, NULL) >= 0);
    dw_findings_sort(&f);
    out[0] = 0;
    *rule = NULL;
    for (size_t i = 0; i < f.n; i++) {
        const dw_finding *g = &f.v[i];
        if (g->sev != DW_LINT_ERROR) continue;
        int n = snprintf(out, cap, "%s:%u:%u: error[%s]: %s", path, g->loc.line, g->loc.col, g->rule, g->msg);
        if (g->hint && n >= 0 && (size_t)n < cap) snprintf(out + n, cap - (size_t)n, " (hint: %s)", g->hint);
        *rule = g->rule;
        break;
    }
    dw_findings_free(&f);
    dw_session_free(&s);
}

/* dwc check's proofs take the program lint's compile stage built (dw_lint_products) instead of
 * compiling the set again: it is the program the front end alone compiles, byte for byte; and a set
 * lint found an error in hands over nothing (the proofs compile it themselves). */
static void test_lint_hands_its_program(void **state)
{
    (void)state;
    dw_session s;
    dw_session_init(&s);
    assert_int_equal(dw_session_load_schema(&s, "box"), 0);
    assert_int_equal(dw_session_load_events(&s, NULL), 0);
    static const char clean[] =
        "@id(\"read\")\npermit (principal, action == Box::Action::\"fs:read\", resource) when { context.input.path like \"~/project/*\" };\n"
        "forbid (principal, action == Box::Action::\"fs:write\", resource)\n"
        "unless temporal { formerly within 1h Box::Action::\"shell:exec\"::response{ input.program: \"python3\" } };\n";
    dw_source src = { "clean.dw", clean, strlen(clean) };
    dw_lint_options opt = { .box = true, .schema = s.schema, .dv = s.dv };
    dw_findings f = { 0 };
    dw_lint_products keep;
    assert_int_equal(dw_lint_run(&src, &opt, &f, &keep), 0);
    assert_non_null(keep.prog);
    assert_non_null(keep.ps);
    assert_int_equal(keep.ps->npolicies, 2);
    dw_diags d;
    dw_diags_init(&d);
    dw_front_end fe = { .src = &src, .schema = s.schema, .dv = s.dv, .max_window = (int64_t)s.es->max_window };
    assert_int_equal(dw_front_end_run(&fe, DW_FE_COMPILE, &d, NULL), DW_FE_NONE);
    dw_buf a = { 0 }, b = { 0 };
    assert_int_equal(dw_artifact_write(keep.prog, 0, &a), 0);
    assert_int_equal(dw_artifact_write(fe.prog, 0, &b), 0);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.p, b.p, a.len);
    dw_buf_free(&a);
    dw_buf_free(&b);
    dw_front_end_free(&fe);
    dw_diags_free(&d);
    dw_lint_products_free(&keep);
    assert_null(keep.prog);
    dw_findings_free(&f);
    static const char refused[] = "permit (principal, action == Box::Action::\"fs:other\", resource);\n";
    dw_source rsrc = { "refused.dw", refused, strlen(refused) };
    dw_findings g = { 0 };
    assert_int_equal(dw_lint_run(&rsrc, &opt, &g, &keep), 0);
    assert_null(keep.prog);
    assert_null(keep.ps);
    assert_null(keep.lib);
    dw_findings_free(&g);
    dw_session_free(&s);
}

static void test_each_refusal(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof refusals / sizeof *refusals; i++) {
        const refusal *r = &refusals[i];
        dw_engine_config cfg = { .policy_path = policy_file(r->text), .schema_path = "box" };
        char err[1024], want[1024];
        const char *rule;
        check_first_error(r->text, want, sizeof want, &rule);
        assert_non_null(rule);
        if (strcmp(rule, r->rule) != 0) fail_msg("case %zu: dwc check's first error is %s, not %s", i, rule, r->rule);
        dw_engine *e = dw_engine_open(&cfg, err, sizeof err);
        if (e) { dw_engine_close(e); fail_msg("case %zu (%s): the Box loader accepted it", i, r->rule); }
        if (strcmp(err, want) != 0) fail_msg("case %zu:\n  load:  %s\n  check: %s", i, err, want);
        /* without the Box schema these rules are not the loader's: the set loads
         * (or fails for another reason, never with a Box rule id) */
        dw_engine_config plain = { .policy_path = path };
        e = dw_engine_open(&plain, err, sizeof err);
        if (!e) assert_null(strstr(err, "error[box-"));
        dw_engine_close(e);
    }
    unlink(path);
}

static void test_warnings_load(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof warnings_only / sizeof *warnings_only; i++) {
        dw_engine_config cfg = { .policy_path = policy_file(warnings_only[i]), .schema_path = "box" };
        char err[1024];
        dw_engine *e = dw_engine_open(&cfg, err, sizeof err);
        if (!e) fail_msg("case %zu: a Box warning refused the set: %s", i, err);
        dw_engine_close(e);
    }
    unlink(path);
}

/* compile `text` through the session loader (Box schema or none) to artifact
 * bytes for Box's schema; `unstamped`: as if the profile had not run */
static void compile_to(const char *text, bool box, bool unstamped, dw_buf *out)
{
    dw_session s;
    dw_session_init(&s);
    if (box) assert_int_equal(dw_session_load_schema(&s, "box"), 0);
    assert_int_equal(dw_session_load_policies(&s, policy_file(text)), 0);
    assert_int_equal(s.prog->box_profile, box);
    if (unstamped) s.prog->box_profile = false;
    assert_int_equal(dw_artifact_write(s.prog, dw_session_schema_digest(&s), out), 0);
    dw_session_free(&s);
}

static void reseal(uint8_t *b, size_t n)
{
    dw_put_le64(b + 24, XXH3_64bits_withSeed(b + 32, n - 32, XXH3_64bits(b, 16)));
}

static void test_artifact_records_profile(void **state)
{
    (void)state;
    const char *text = warnings_only[1];
    dw_buf boxed = { 0 }, plain = { 0 }, noschema = { 0 };
    compile_to(text, true, false, &boxed);
    compile_to(text, true, true, &plain);      /* Box's schema digest, not the profile's stamp */
    compile_to(text, false, false, &noschema);
    assert_int_equal(dw_le32((uint8_t *)noschema.p + 12), 0);
    assert_int_equal(dw_le32((uint8_t *)boxed.p + 12), DW_AF_BOX_PROFILE);
    assert_int_equal(dw_le32((uint8_t *)plain.p + 12), 0);
    char msg[256], err[512];
    dw_program *p = dw_artifact_load(boxed.p, boxed.len, msg, sizeof msg);
    assert_non_null(p);
    assert_true(p->box_profile);
    dw_program_free(p);

    char dwb[64];
    snprintf(dwb, sizeof dwb, "/tmp/dw_box_profile_%d.dwb", (int)getpid());
    dw_engine_config cfg = { .policy_path = dwb, .schema_path = "box" };
    /* the Box loader serves the checked artifact, refuses the unchecked one */
    write_text(dwb, boxed.p, boxed.len);
    dw_engine *e = dw_engine_open(&cfg, err, sizeof err);
    if (!e) fail_msg("a Box-checked artifact was refused: %s", err);
    /* ... and so does reload */
    assert_int_equal(dw_engine_reload(e, boxed.p, boxed.len, NULL, err, sizeof err), 0);
    assert_int_not_equal(dw_engine_reload(e, plain.p, plain.len, NULL, err, sizeof err), 0);
    assert_non_null(strstr(err, "not checked against the Box profile"));
    dw_engine_close(e);
    write_text(dwb, plain.p, plain.len);
    assert_null(dw_engine_open(&cfg, err, sizeof err));
    assert_non_null(strstr(err, "artifact refused: not checked against the Box profile"));
    /* without the Box schema either artifact serves */
    dw_engine_config any = { .policy_path = dwb };
    e = dw_engine_open(&any, err, sizeof err);
    if (!e) fail_msg("a plain artifact was refused without the Box schema: %s", err);
    dw_engine_close(e);

    /* a header flag this reader does not know is refused, resealed or not */
    dw_put_le32((uint8_t *)plain.p + 12, 2);
    reseal((uint8_t *)plain.p, plain.len);
    assert_null(dw_artifact_load(plain.p, plain.len, msg, sizeof msg));
    assert_non_null(strstr(msg, "unknown header flags"));
    unlink(dwb);
    unlink(path);
    dw_buf_free(&boxed);
    dw_buf_free(&plain);
    dw_buf_free(&noschema);
}

/* Box mode refuses provider calls at load (dogwood.md §13.6, box.md §11):
 * from source the profile does (box-providers); an artifact whose profile
 * flag says it passed is refused too when it carries call sites (the flag is
 * no signature), at open and at reload. */
static void test_provider_artifact_refused(void **state)
{
    (void)state;
    dw_session s;
    dw_session_init(&s);
    assert_int_equal(dw_session_load_policies(&s, policy_file(
        "permit (principal, action == Box::Action::\"fs:read\", resource) when { Strings::Matches(context.input.path, \"^~/a\").matched };\n")), 0);
    assert_int_equal(s.prog->provider.ncalls, 1);
    s.prog->box_profile = true;                  /* forged */
    dw_buf forged = { 0 }, boxed = { 0 };
    assert_int_equal(dw_artifact_write(s.prog, XXH3_64bits(dw_box_actions_schema_text, dw_box_actions_schema_len), &forged), 0);
    dw_session_free(&s);
    char dwb[64], err[512];
    snprintf(dwb, sizeof dwb, "/tmp/dw_box_prov_%d.dwb", (int)getpid());
    write_text(dwb, forged.p, forged.len);
    dw_engine_config cfg = { .policy_path = dwb, .schema_path = "box" };
    assert_null(dw_engine_open(&cfg, err, sizeof err));
    if (!strstr(err, "information providers are not enabled in this build")) fail_msg("open: %s", err);
    compile_to(warnings_only[1], true, false, &boxed);
    write_text(dwb, boxed.p, boxed.len);
    dw_engine *e = dw_engine_open(&cfg, err, sizeof err);
    if (!e) fail_msg("open: %s", err);
    assert_int_not_equal(dw_engine_reload(e, forged.p, forged.len, NULL, err, sizeof err), 0);
    if (!strstr(err, "information providers are not enabled in this build")) fail_msg("reload: %s", err);
    dw_engine_close(e);
    /* from source, in the profile's words */
    dw_engine_config src = { .policy_path = policy_file(
        "permit (principal, action == Box::Action::\"fs:read\", resource) when { Strings::Length(context.input.path).length > 3 };\n"),
        .schema_path = "box" };
    assert_null(dw_engine_open(&src, err, sizeof err));
    if (!strstr(err, "error[box-providers]: information providers are not enabled in this build")) fail_msg("source: %s", err);
    unlink(dwb);
    unlink(path);
    dw_buf_free(&forged);
    dw_buf_free(&boxed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_provider_artifact_refused),
        cmocka_unit_test(test_each_refusal),
        cmocka_unit_test(test_lint_hands_its_program),
        cmocka_unit_test(test_warnings_load),
        cmocka_unit_test(test_artifact_records_profile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
