/* test_providers.c - information providers (dogwood.md §13): a policy using
 * each built-in decides as §13.5 says; a host callback (C) decides, with an
 * output-method chain; a provider error denies (a failing callback, a
 * non-conforming or unreadable result, a declared provider nobody
 * implements); Box mode and the deployment switch refuse provider calls at
 * load (§13.6); the declaration file's rules (§13.2, §13.4) report
 * file:line:col errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/dogwood.h"
#include "lang/providers.h"
#include "compiler/artifact_write.h"
#include "compiler/typecheck.h"
#include "vm/artifact.h"
#include "unit_tmpdir.h"
#include "unit_compile.h"

static const char schema_text[] =
    "namespace App {\n"
    "  entity User = { dept: String };\n"
    "  entity Doc;\n"
    "  action \"Read\" appliesTo { principal: [User], resource: [Doc],\n"
    "    context: { input: { doc: String, note?: String } } };\n"
    "}\n";

static const char providers_text[] =
    "{ \"availableProviders\": {\n"
    "    \"Content::Filter\": {\n"
    "      \"argumentTypes\": [{ \"paramType\": \"string\" }, { \"paramType\": \"set\", \"items\": { \"paramType\": \"string\" } }],\n"
    "      \"outputType\": { \"paramType\": \"record\", \"fields\": { \"flagged\": { \"paramType\": \"bool\" },\n"
    "                        \"severity\": { \"paramType\": \"decimal\" } }, \"required\": [\"flagged\", \"severity\"] },\n"
    "      \"availableMethods\": { \"over\": { \"argumentTypes\": [{ \"paramType\": \"decimal\" }],\n"
    "          \"inputType\": { \"paramType\": \"record\", \"fields\": { \"flagged\": { \"paramType\": \"bool\" },\n"
    "                        \"severity\": { \"paramType\": \"decimal\" } }, \"required\": [\"flagged\", \"severity\"] },\n"
    "          \"outputType\": { \"paramType\": \"bool\" } } },\n"
    "      \"implementation\": { \"kind\": \"rhai\", \"script\": \"#{ flagged: false }\" }\n"
    "    },\n"
    "    \"Dept::Lookup\": { \"argumentTypes\": [{ \"paramType\": \"string\" }], \"outputType\": { \"paramType\": \"string\" } }\n"
    "} }\n";

typedef struct fixture { char root[256], policy[300], schema[300], providers[300]; } fixture;

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static dw_engine *open_with(fixture *fx, const char *policy, bool with_providers, bool no_providers, const char *schema,
                            char *err, size_t cap)
{
    assert_int_equal(unit_tmpdir_with_policy(fx->root, sizeof fx->root, fx->policy, sizeof fx->policy, "dw-providers", policy), 0);
    snprintf(fx->schema, sizeof fx->schema, "%s/s.cedarschema", fx->root);
    snprintf(fx->providers, sizeof fx->providers, "%s/providers.json", fx->root);
    write_file(fx->schema, schema_text);
    write_file(fx->providers, providers_text);
    dw_engine_config cfg = { .policy_path = fx->policy, .schema_path = schema ? schema : fx->schema,
                             .providers_path = with_providers ? fx->providers : NULL, .no_providers = no_providers };
    return dw_engine_open(&cfg, err, cap);
}

/* Decide a Read of doc (note given unless NULL); 1 allow, 0 deny (*v). */
static int decide(dw_engine *e, const char *doc, const char *note, dw_verdict *v)
{
    char req[1024];
    char notes[256] = "";
    if (note) snprintf(notes, sizeof notes, ",\"note\":\"%s\"", note);
    snprintf(req, sizeof req,
             "{\"principal\":{\"type\":\"App::User\",\"id\":\"alice\"},\"action\":{\"type\":\"App::Action\",\"id\":\"Read\"},"
             "\"resource\":{\"type\":\"App::Doc\",\"id\":\"d1\"},\"context\":{\"input\":{\"doc\":\"%s\"%s}}}", doc, notes);
    assert_int_equal(dw_engine_decide_request_json(e, req, strlen(req), DW_TS_NOW, v), 0);
    assert_true(v->decided);
    return v->allow;
}

static void test_builtins(void **st)
{
    (void)st;
    static const char policy[] =
        "permit (principal, action == App::Action::\"Read\", resource) when guardrails {\n"
        "  Strings::Matches(context.input.doc, \"^[A-Z]+$\").matched\n"
        "};\n"
        "forbid (principal, action == App::Action::\"Read\", resource) when { Strings::Length(context.input.doc).length > 8 };\n"
        "forbid (principal, action == App::Action::\"Read\", resource) when { Strings::DigitCount(context.input.doc).count >= 2 };\n"
        "forbid (principal, action == App::Action::\"Read\", resource) when {\n"
        "  Regex::Analyze(context.input.doc, \"X+\").count >= 2 && Regex::Analyze(context.input.doc, \"X+\").first_match == \"XX\"\n"
        "};\n"
        /* Null text is \"\": an absent optional attribute reaches the provider as Null */
        "permit (principal, action == App::Action::\"Read\", resource) when {\n"
        "  Strings::Length(context.input.note).length == 0 && Strings::Matches(context.input.doc, \"^n[[:digit:]]$\").matched\n"
        "};\n";
    fixture fx;
    char err[512];
    dw_engine *e = open_with(&fx, policy, false, false, NULL, err, sizeof err);
    if (!e) fail_msg("open: %s", err);
    dw_verdict v;
    assert_int_equal(decide(e, "HELLO", NULL, &v), 1);                        /* matches, short, no digits */
    assert_int_equal(v.ndetermining, 1);
    assert_int_equal(v.determining[0], 0);
    assert_int_equal(decide(e, "Hello", NULL, &v), 0);                        /* no rule */
    assert_int_equal(v.cause, DW_CAUSE_NO_MATCH);
    assert_int_equal(decide(e, "HELLOWORLD", NULL, &v), 0);                   /* 10 > 8 */
    assert_int_equal(v.cause, DW_CAUSE_FORBIDDEN);
    assert_int_equal(v.determining[0], 1);
    /* Length counts Unicode scalar values: 8 two-byte letters are 8, not 16 */
    assert_int_equal(decide(e, "\xc3\x89\xc3\x89\xc3\x89\xc3\x89\xc3\x89\xc3\x89\xc3\x89\xc3\x89", NULL, &v), 0);
    assert_int_equal(v.cause, DW_CAUSE_NO_MATCH);                             /* not [A-Z], and not > 8 */
    assert_int_equal(decide(e, "A1B2", NULL, &v), 0);                         /* two digits */
    assert_int_equal(v.determining[0], 2);
    assert_int_equal(decide(e, "XXAXXX", NULL, &v), 0);                       /* two runs, the first "XX" */
    assert_int_equal(v.cause, DW_CAUSE_FORBIDDEN);
    assert_int_equal(v.determining[0], 3);
    assert_int_equal(decide(e, "XXXAXX", NULL, &v), 1);                       /* first run "XXX": rule 3 is false */
    assert_int_equal(decide(e, "n4", NULL, &v), 1);                          /* note absent: Null -> "" */
    assert_int_equal(v.determining[0], 4);
    assert_int_equal(decide(e, "n4", "x", &v), 0);                           /* note given: length 1 */
    dw_engine_close(e);
    unit_tmpdir_remove(fx.root);
}

/* ---- host callbacks ---- */

static int calls;
static long filter_cb(void *ud, const char *name, const char *args, size_t len, char *out, size_t cap)
{
    (void)ud;
    calls++;
    if (strcmp(name, "Content::Filter") == 0) {
        assert_int_equal(strlen(args), len);
        bool hate = strstr(args, "hate") != NULL, list = strstr(args, "[\"HATE\"]") != NULL;
        return snprintf(out, cap, "{\"flagged\":%s,\"severity\":\"%s\"}", hate && list ? "true" : "false", hate ? "0.9" : "0.1");
    }
    if (strcmp(name, "Content::Filter.over") == 0) {   /* [input, threshold] */
        bool high = strstr(args, "\"severity\":{\"__extn\":{\"fn\":\"decimal\",\"arg\":\"0.9\"}}") != NULL;
        return snprintf(out, cap, "%s", high ? "true" : "false");
    }
    return snprintf(out, cap, "unexpected name %s", name) * -1 - 1;
}

static void test_host_callback(void **st)
{
    (void)st;
    static const char policy[] =
        "forbid (principal, action, resource) when { Content::Filter(context.input.doc, [\"HATE\"]).flagged };\n"
        "forbid (principal, action, resource) when { Content::Filter(context.input.doc, [\"HATE\"]).over(decimal(\"0.5\")) };\n"
        "permit (principal, action, resource);\n";
    fixture fx;
    char err[512];
    dw_engine *e = open_with(&fx, policy, true, false, NULL, err, sizeof err);
    if (!e) fail_msg("open: %s", err);
    dw_verdict v;
    /* declared but not implemented (its Rhai script is ignored): every decision denies */
    assert_int_equal(decide(e, "fine", NULL, &v), 0);
    assert_int_equal(v.cause, DW_CAUSE_INTERNAL_FAULT);
    if (!strstr(v.message, "no implementation")) fail_msg("message: %s", v.message);
    assert_int_equal(dw_engine_register_provider(e, "Content::Filter", filter_cb, NULL), 0);
    assert_int_equal(dw_engine_register_provider(e, "Content::Filter.over", filter_cb, NULL), 0);
    calls = 0;
    assert_int_equal(decide(e, "fine", NULL, &v), 1);
    assert_int_equal(v.determining[0], 2);
    assert_int_equal(calls, 3);                       /* two sites; the second has one method step */
    assert_int_equal(decide(e, "hate speech", NULL, &v), 0);
    assert_int_equal(v.cause, DW_CAUSE_FORBIDDEN);
    assert_int_equal(v.ndetermining, 2);
    /* unregistered again: a deny */
    assert_int_equal(dw_engine_register_provider(e, "Content::Filter.over", NULL, NULL), 0);
    assert_int_equal(decide(e, "fine", NULL, &v), 0);
    assert_int_equal(v.cause, DW_CAUSE_INTERNAL_FAULT);
    assert_int_equal(dw_engine_register_provider(NULL, "X::Y", filter_cb, NULL), -1);
    assert_int_equal(dw_engine_register_provider(e, NULL, filter_cb, NULL), -1);
    dw_engine_close(e);
    unit_tmpdir_remove(fx.root);
}

static int mode;
static long bad_cb(void *ud, const char *name, const char *args, size_t len, char *out, size_t cap)
{
    (void)ud; (void)name; (void)args; (void)len;
    switch (mode) {
    case 0: snprintf(out, cap, "service unavailable"); return -1;
    case 1: return snprintf(out, cap, "{\"flagged\":true}");                         /* severity missing */
    case 2: return snprintf(out, cap, "{\"flagged\":1,\"severity\":\"0.1\"}");        /* Long for Bool */
    case 3: return snprintf(out, cap, "{\"flagged\":true,");                          /* not JSON */
    case 4: return snprintf(out, cap, "{\"flagged\":false,\"severity\":\"0.1\",\"x\":1}");   /* undeclared */
    default: {                                                                        /* larger than the first buffer */
        const size_t need = 10000;
        if (cap <= need) return (long)need;                                           /* asks again, with need + 1 */
        int n = snprintf(out, cap, "{\"flagged\":false,\"severity\":\"0.1\"");
        memset(out + n, ' ', need - 1 - (size_t)n);
        out[need - 1] = '}';
        out[need] = 0;
        return (long)need;
    }
    }
}

static void test_provider_error_denies(void **st)
{
    (void)st;
    static const char policy[] =
        "permit (principal, action, resource) unless { Content::Filter(context.input.doc, [\"HATE\"]).flagged };\n";
    fixture fx;
    char err[512];
    dw_engine *e = open_with(&fx, policy, true, false, NULL, err, sizeof err);
    if (!e) fail_msg("open: %s", err);
    assert_int_equal(dw_engine_register_provider(e, "Content::Filter", bad_cb, NULL), 0);
    static const char *const why[] = { "service unavailable", "lacks the required attribute `severity`", "is Long where Bool",
                                       "invalid JSON", "undeclared attribute `x`" };
    for (mode = 0; mode < 5; mode++) {
        dw_verdict v;
        assert_int_equal(decide(e, "fine", NULL, &v), 0);
        assert_int_equal(v.cause, DW_CAUSE_INTERNAL_FAULT);
        assert_int_equal(v.ndetermining, 0);
        if (!strstr(v.message, why[mode]) || !strstr(v.message, "context.providers.policy_0_p_0"))
            fail_msg("mode %d: message '%s' lacks '%s'", mode, v.message, why[mode]);
    }
    dw_verdict v;
    assert_int_equal(decide(e, "fine", NULL, &v), 1);     /* mode 5: a 10,000-byte result, asked for again */
    dw_engine_close(e);
    unit_tmpdir_remove(fx.root);
}

/* Opening the policy fails, with want in the message. */
static void expect_refused(const char *policy, bool no_providers, const char *schema, const char *want)
{
    fixture fx;
    char err[512];
    dw_engine *e = open_with(&fx, policy, false, no_providers, schema, err, sizeof err);
    if (e) fail_msg("opened: %s", policy);
    if (!strstr(err, want)) fail_msg("'%s' lacks '%s'", err, want);
    unit_tmpdir_remove(fx.root);
}

static void test_refused_at_load(void **st)
{
    (void)st;
    static const char off[] = "information providers are not enabled in this build";
    /* Box mode, and the deployment switch (§13.6) */
    expect_refused("permit (principal, action == Box::Action::\"fs:read\", resource) when {"
                   " Strings::Matches(context.input.path, \"x\").matched };\n", false, "box", off);
    expect_refused("permit (principal, action, resource) when { Strings::Length(context.input.doc).length > 1 };\n", true, NULL, off);
    /* an invalid literal pattern is a compile-time error (§13.5) */
    expect_refused("permit (principal, action, resource) when { Strings::Matches(context.input.doc, \"(\").matched };\n",
                   false, NULL, "invalid pattern");
    /* undeclared, and argument forms (§13.3) */
    expect_refused("permit (principal, action, resource) when { Nope::Fn(context.input.doc) };\n", false, NULL,
                   "is not present in the provider declarations");
    expect_refused("permit (principal, action, resource) when { Strings::Length(if true then \"a\" else \"b\").length > 1 };\n",
                   false, NULL, "argument not allowed");
    expect_refused("permit (principal, action, resource) when { Strings::Length(context).length > 1 };\n", false, NULL,
                   "the whole context cannot be passed");
    /* the hoisted names are reserved (§14.3, §20 D4) in a set that hoists something ... */
    expect_refused("permit (principal, action, resource) when { context has providers && context.providers.policy_1_p_0.matched };\n"
                   "permit (principal, action, resource) when { Strings::Length(context.input.doc).length > 1 };\n",
                   false, NULL, "reserved attribute");
    /* ... while in plain Cedar (dwc dogwood lower's output) they are context attributes like any other */
    fixture fx;
    char err[512];
    dw_engine *e = open_with(&fx, "permit (principal, action, resource) when { context has providers && context.providers.policy_0_p_0.matched };\n",
                             false, false, NULL, err, sizeof err);
    if (!e) fail_msg("a plain Cedar set reading context.providers.policy_0_p_0 was refused: %s", err);
    dw_engine_close(e);
    unit_tmpdir_remove(fx.root);
}

/* The declaration file's rules, each an error at its position. */
static void test_declarations(void **st)
{
    (void)st;
    static const struct { const char *text, *want; int line; } cases[] = {
        { "{\"availableProviders\": {\"Solo\": {\"outputType\": {\"paramType\": \"string\"}}}}", "is not a provider name", 1 },
        { "{\"availableProviders\": {\n\"A::B\": {\"argumentTypes\": []}}}", "has no `outputType`", 2 },
        { "{\"availableProviders\": {\"A::B\": {\"outputType\": {\"paramType\": \"string\"},\n"
          " \"availableMethods\": {\"contains\": {\"outputType\": {\"paramType\": \"bool\"}}}}}}", "shadows the Cedar method", 2 },
        { "{\"availableProviders\": {\n\n\"Strings::Matches\": {\"argumentTypes\": [{\"paramType\": \"string\"}],\n"
          " \"outputType\": {\"paramType\": \"bool\"}}}}", "is a built-in provider", 3 },
        { "{\"availableProviders\": {\"A::B\": {\"outputType\": {\"paramType\": \"record\", \"fields\": {},\n"
          " \"required\": [\"ghost\"]}}}}", "required field `ghost` is not declared", 2 },
        { "{\"providers\": {}}", "missing `availableProviders`", 1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dw_source src = { "providers.json", cases[i].text, strlen(cases[i].text) };
        dw_diags d;
        dw_diags_init(&d);
        dw_providers *p = dw_providers_parse(&src, &d);
        bool found = false;
        for (size_t k = 0; k < d.n; k++)
            if (d.v[k].sev == DW_SEV_ERROR && strstr(d.v[k].msg, cases[i].want) && d.v[k].loc.line == (uint32_t)cases[i].line) found = true;
        if (!found) fail_msg("case %zu: no error '%s' on line %d (%zu diagnostics, first: %s)", i, cases[i].want, cases[i].line,
                             d.n, d.n ? d.v[0].msg : "-");
        dw_providers_free(p);
        dw_diags_free(&d);
    }
    /* the good file: its rhai script is a warning, the built-ins stay declared */
    dw_source src = { "providers.json", providers_text, strlen(providers_text) };
    dw_diags d;
    dw_diags_init(&d);
    dw_providers *p = dw_providers_parse(&src, &d);
    assert_non_null(p);
    assert_int_equal(d.nerrors, 0);
    assert_int_equal(d.n, 1);
    assert_non_null(strstr(d.v[0].msg, "script implementation"));
    assert_non_null(dw_providers_find(p, "Strings::Matches", 16));
    assert_non_null(dw_provider_method_find(dw_providers_find(p, "Content::Filter", 15), "over", 4));
    dw_providers_free(p);
    dw_diags_free(&d);
}

/* An entry with errors (reported in the file) does not type its calls: its
 * stand-in String output would add a second, wrong finding to the set (`saw
 * String`).  A good entry misused still gets its finding. */
static void test_broken_entry_not_typed(void **st)
{
    (void)st;
    static const char decls[] =
        "{\"availableProviders\": {\n"
        " \"Risk::Score\": {\"argumentTypes\": [{\"paramType\": \"string\"}]},\n"
        " \"Risk::Flag\": {\"outputType\": {\"paramType\": \"bool\"},\n"
        "   \"availableMethods\": {\"level\": {}}},\n"
        " \"Risk::Odd\": 7,\n"
        " \"Strings::Length\": {\"argumentTypes\": [{\"paramType\": \"string\"}]},\n"
        " \"Risk::Good\": {\"outputType\": {\"paramType\": \"string\"}}}}\n";
    static const char policies[] =
        "permit (principal, action == App::Action::\"Read\", resource) when { Risk::Score(context.input.doc).high };\n"
        "permit (principal, action == App::Action::\"Read\", resource) when { Risk::Flag().level().high };\n"
        "permit (principal, action == App::Action::\"Read\", resource) when { Risk::Odd().high };\n"
        "permit (principal, action == App::Action::\"Read\", resource) when { Strings::Length(context.input.doc).length > 2 };\n"
        "permit (principal, action == App::Action::\"Read\", resource) when { Risk::Good().high };\n";
    dw_source psrc = { "providers.json", decls, strlen(decls) }, ssrc = { "s.cedarschema", schema_text, strlen(schema_text) },
              src = { "p.cedar", policies, strlen(policies) };
    dw_diags d;
    dw_diags_init(&d);
    dw_providers *p = dw_providers_parse(&psrc, &d);
    assert_non_null(p);
    assert_int_equal(d.nerrors, 4);   /* no outputType (Score, Flag's method, Length), not an object: one each, none derived */
    assert_true(dw_providers_find(p, "Risk::Score", 11)->broken);
    assert_true(dw_providers_find(p, "Risk::Flag", 10)->broken);
    assert_true(dw_providers_find(p, "Risk::Odd", 9)->broken);
    assert_false(dw_providers_find(p, "Strings::Length", 15)->broken);   /* the built-in's own types stay in force */
    assert_false(dw_providers_find(p, "Risk::Good", 10)->broken);
    dw_diags_free(&d);
    dw_diags_init(&d);
    dw_schema *s = dw_schema_parse(&ssrc, &d);
    dw_policy_set *ps = dw_parse_policy_set(&src, &d);
    assert_non_null(s);
    assert_non_null(ps);
    assert_int_equal(d.n, 0);
    dw_validate_with_providers(ps, s, p, &d);
    if (d.n != 1 || d.v[0].loc.line != 5) dw_diags_print(&d, stderr);
    assert_int_equal(d.n, 1);        /* Risk::Good's String has no attributes: the one finding */
    assert_int_equal(d.v[0].loc.line, 5);
    dw_policy_set_free(ps);
    dw_schema_free(s);
    dw_providers_free(p);
    dw_diags_free(&d);
}

/* Call sites travel in artifacts (format 3.3) and the verifier checks them:
 * a round trip keeps every table; a hostile table is refused at load. */
typedef void (*mutate_fn)(dw_program *p);
static void m_call_policy(dw_program *p) { p->provider.calls[0].policy = 99; }
static void m_const_arg(dw_program *p) { p->provider.args[1].a = 99999; }
static void m_type_cycle(dw_program *p) { for (uint32_t i = 0; i < p->provider.nfields; i++) p->provider.fields[i].type = p->provider.ntypes - 1; }
static void m_step_out(dw_program *p) { p->provider.steps[0].out = 777; }
static void m_prov_operand(dw_program *p)
{
    for (uint32_t i = 0; i < p->ncode; i++)
        if (DW_INS_OP(p->code[i]) == DW_OP_PROV) { p->code[i] = DW_INS(DW_OP_PROV, 2); return; }   /* policy 0 owns call 0 only */
}

static dw_program *round_trip(dw_program *p, char *msg, size_t cap)
{
    dw_buf b = { 0 };
    assert_int_equal(dw_artifact_write(p, 0, &b), 0);
    dw_program *q = dw_artifact_load(b.p, b.len, msg, cap);
    dw_buf_free(&b);
    return q;
}

static void test_artifact_round_trip(void **st)
{
    (void)st;
    static const char ok_policy[] =
        "permit (principal, action, resource) when { Regex::Analyze(context.doc, \"a+\").count > 1 };\n"
        "forbid (principal, action, resource) when { Strings::Length(principal.name).length == 3 && temporal { formerly within 1h T::Action::\"Open\"::request{} } };\n"
        "permit (principal, action, resource) when { Strings::Matches(resource.id, \"^d\").matched };\n";
    dw_program *p = unit_compile("providers", ok_policy);
    char msg[256];
    dw_program *q = round_trip(p, msg, sizeof msg);
    if (!q) fail_msg("refused: %s", msg);
    const dw_provider_tables *a = &p->provider, *b = &q->provider;
    assert_int_equal(a->ncalls, 3);
    assert_int_equal(b->ncalls, a->ncalls);
    assert_int_equal(b->ntypes, a->ntypes);
    assert_int_equal(b->nargs, a->nargs);
    assert_int_equal(b->nsteps, a->nsteps);
    assert_int_equal(b->nsegs, a->nsegs);
    assert_memory_equal(b->calls, a->calls, a->ncalls * sizeof *a->calls);
    assert_memory_equal(b->steps, a->steps, a->nsteps * sizeof *a->steps);
    assert_memory_equal(b->types, a->types, a->ntypes * sizeof *a->types);
    assert_int_equal(b->calls[1].ordinal, 0);                 /* policy 1: the provider before the temporal leaf */
    for (uint32_t k = 0; k < p->npolicies; k++) {
        assert_int_equal(q->policies[k].npcalls, p->policies[k].npcalls);
        assert_int_equal(q->policies[k].scope_entry, p->policies[k].scope_entry);
    }
    dw_program_free(q);
    dw_program_free(p);
    static const struct { mutate_fn f; const char *want; } bad[] = {
        { m_call_policy, "provider call 0" }, { m_const_arg, "provider argument 1" }, { m_type_cycle, "type before it" },
        { m_step_out, "provider step 0" }, { m_prov_operand, "provider call 2 out of range" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        p = unit_compile("providers", ok_policy);
        bad[i].f(p);
        q = round_trip(p, msg, sizeof msg);
        if (q) fail_msg("mutation %zu was loaded", i);
        if (!strstr(msg, bad[i].want)) fail_msg("mutation %zu: '%s' lacks '%s'", i, msg, bad[i].want);
        dw_program_free(p);
    }
}

/* Registration is thread-safe: deciders on four threads while another
 * registers and unregisters the callback; every verdict is an allow by the
 * callback or a deny for want of one, never anything else. */
static long ok_cb(void *ud, const char *name, const char *args, size_t len, char *out, size_t cap)
{
    (void)ud; (void)name; (void)args; (void)len;
    return snprintf(out, cap, "{\"flagged\":false,\"severity\":\"0.1\"}");
}

typedef struct mt { dw_engine *e; int bad; } mt;
static void *decider(void *arg)
{
    mt *m = arg;
    for (int i = 0; i < 300; i++) {
        dw_verdict v;
        int a = decide(m->e, "fine", NULL, &v);
        if (!(a || (v.cause == DW_CAUSE_INTERNAL_FAULT && strstr(v.message, "no implementation")))) m->bad++;
    }
    return NULL;
}

static void test_register_concurrently(void **st)
{
    (void)st;
    fixture fx;
    char err[512];
    dw_engine *e = open_with(&fx, "permit (principal, action, resource) unless { Content::Filter(context.input.doc, [\"HATE\"]).flagged };\n",
                             true, false, NULL, err, sizeof err);
    if (!e) fail_msg("open: %s", err);
    pthread_t th[4];
    mt m[4];
    for (int i = 0; i < 4; i++) { m[i] = (mt){ e, 0 }; assert_int_equal(pthread_create(&th[i], NULL, decider, &m[i]), 0); }
    for (int i = 0; i < 2000; i++) assert_int_equal(dw_engine_register_provider(e, "Content::Filter", i % 2 ? NULL : ok_cb, NULL), 0);
    for (int i = 0; i < 4; i++) { pthread_join(th[i], NULL); assert_int_equal(m[i].bad, 0); }
    dw_engine_close(e);
    unit_tmpdir_remove(fx.root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtins),
        cmocka_unit_test(test_host_callback),
        cmocka_unit_test(test_provider_error_denies),
        cmocka_unit_test(test_refused_at_load),
        cmocka_unit_test(test_declarations),
        cmocka_unit_test(test_broken_entry_not_typed),
        cmocka_unit_test(test_artifact_round_trip),
        cmocka_unit_test(test_register_concurrently),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
