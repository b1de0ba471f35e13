/* check.c - `dwc check` (and `dwc --check`): lint rules and analysis of a
 * policy set, printed for people (human), tools (json, sarif) or GitHub
 * Actions (github).  The rules live in compiler/lint.c. */
#include "check.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check_filter.h"
#include "check_lint.h"
#include "check_set.h"
#include "cli.h"
#include "dogwood.h"
#include "load.h"
#include "../compiler/artifact_write.h"
#include "../compiler/lint.h"
#include "../compiler/pipeline.h"
#include "../compiler/prove.h"
#include "../vm/artifact.h"
#include "../stdlib/json_escape.h"

const char dw_check_usage[] =
    "usage: dwc check -p POLICY... [-s SCHEMA | --schema box] [--events EVENTS]\n"
    "                 [--format human|json|sarif|github] [--fail-level error|warning|info] [--exit-zero]\n"
    "                 [--disable RULE,...] [--home DIR] [--against OLD.dw] [--assert ASSERTIONS.dw] [--timeout MS]\n"
    "                 [--budget S] [--cache DIR] [-j N] [--lint-only] [--macros FILE]\n"
    "                 [--providers FILE]\n"
    "       dwc --check POLICY [options]\n"
    "Lint a policy set: every strict-validation and temporal finding, plus lint rules\n"
    "(duplicate @id, reserved names, Unicode hygiene, comparisons with \"\", …) and a\n"
    "structural analysis (impossible / always-true rules, shadowed permits and forbids,\n"
    "permits overridden by forbids).  `--schema box` selects Box's schema and the Box\n"
    "profile (box.md §11: Box's rule ids and severities, and the box-* rules).\n"
    "  -p, --policies FILE   the policy set (.dw or .cedar); also accepted as a bare argument;\n"
    "                        several -p, and directories (their .dw and .cedar files, sorted),\n"
    "                        form one set\n"
    "  -s, --schema FILE     Cedar schema, or `box`; without one only schema-free rules run\n"
    "      --events EVENTS   event schema (.dwschema or a built-in name); needs a schema\n"
    "      --format F        human (default), json, sarif (SARIF 2.1.0) or github\n"
    "      --fail-level L    exit 3 when a finding is at least this severe (default error)\n"
    "      --exit-zero       report only: exit 0 whatever the findings (1 still on a usage or I/O error)\n"
    "      --disable RULES   drop the findings of these rules (ids as reported; repeatable, comma-separated);\n"
    "                        a policy's @suppress(\"RULE, ...\") drops its own findings of them\n"
    "      --home DIR        the operator's home directory (Box profile inert-literal rules);\n"
    "                        without it /home/NAME, /Users/NAME and /root count as home spellings\n"
    "      --against OLD     compare with OLD (needs a schema): equivalent, more or less\n"
    "                        permissive, or incomparable, with counterexample requests\n"
    "      --assert FILE     forbid-shaped assertions (\"the set never allows ...\"): each is\n"
    "                        proved or refuted with a counterexample\n"
    "      --timeout MS      Z3's limit per query (default 2000); a timeout is reported as unknown\n"
    "      --budget S        bound the proofs to S seconds (plus one query's --timeout): once spent,\n"
    "                        what is left is reported as unknown (dw-proof-unknown), never as proved\n"
    "      --cache DIR       keep each environment's proofs in DIR (created if missing) by a hash of\n"
    "                        its rules, the schema and the release: a re-run re-proves only the\n"
    "                        environments a change touched (not with --against or --assert)\n"
    "  -j, --jobs N          prove N environments at once, each in its own process (default: the\n"
    "                        number of cores; 1: one process; not with --against or --assert)\n"
    "      --lint-only       every finding but the proofs' (no Z3): fast, for editors and pre-commit hooks\n"
    "      --macros FILE     a macro library (only `def`s) that replaces the standard one\n"
    "                        (dogwood.md §10.6); the policy file's own definitions win\n"
    "      --providers FILE  provider declarations (dogwood.md §13.2) for the set, --against and\n"
    "                        --assert, as dwc compile reads them; their errors are findings in FILE\n"
    "With a schema the set is also analysed with Z3 per request environment (forbids that\n"
    "may error, overridden / shadowed / redundant / vacuous rules; docs/CHECK.md); every\n"
    "counterexample is re-run on the VM and reported only when the VM agrees.\n"
    "Findings are sorted by position, then rule id.  Exit 0 nothing at or above the fail\n"
    "level, 3 findings at or above it (a parse or validation error is a finding: the SARIF\n"
    "is still written), 1 on a usage, I/O or tool error.\n";

enum { F_HUMAN, F_JSON, F_SARIF, F_GITHUB };

/* What the proofs did, for the summary line and the JSON stats. */
typedef struct run_info {
    bool proofs;                 /* the SMT analysis ran */
    const char *skipped;         /* why it did not, or NULL */
    dw_prove_stats ps;
    bool index_verified;
} run_info;

static const dw_source *fsrc(const dw_source *src, const dw_finding *g) { return g->src ? g->src : src; }

static bool any_leaf(const dw_finding *g)
{
    for (uint32_t k = 0; k < g->cex_nleaves; k++) if (g->cex_leaves[k]) return true;
    return false;
}

static void leaves_text(FILE *out, const dw_finding *g)
{
    fputc('[', out);
    for (uint32_t k = 0; k < g->cex_nleaves; k++) fprintf(out, "%s%u", k ? ", " : "", g->cex_leaves[k]);
    fputc(']', out);
}

/* ---- human ---- */

static void print_human(FILE *out, const dw_source *src, const dw_findings *f, const run_info *ri)
{
    size_t n[3] = { 0, 0, 0 };
    for (size_t i = 0; i < f->n; i++) {
        const dw_finding *g = &f->v[i];
        const dw_source *s = fsrc(src, g);
        n[g->sev]++;
        fprintf(out, "%s:%u:%u: %s[%s]: %s\n", s->name, g->loc.line, g->loc.col, dw_lint_sev_name(g->sev), g->rule, g->msg);
        dw_print_source_span(out, s, g->loc);
        if (g->hint) fprintf(out, "  hint: %s\n", g->hint);
        if (g->cex_request) {
            fprintf(out, "  request: %s\n", g->cex_request);
            fprintf(out, "  entities: %s\n", g->cex_entities ? g->cex_entities : "[]");
            if (g->cex_leaves && any_leaf(g)) { fputs("  temporal leaves: ", out); leaves_text(out, g); fputc('\n', out); }
        }
    }
    if (!f->n) fprintf(out, "%s: no findings\n", src->name);
    else
        fprintf(out, "%s: %zu error%s, %zu warning%s, %zu info\n", src->name, n[0], n[0] == 1 ? "" : "s", n[1],
                n[1] == 1 ? "" : "s", n[2]);
    if (ri->proofs)
        fprintf(out, "proofs: %zu environment%s, pairs pruned %zu, solved %zu, %zu queries (%zu unknown), "
                     "%zu counterexample%s confirmed by the VM, solver %.0f ms; temporal leaves are free booleans, "
                     "hierarchy is a free ancestor relation (docs/CHECK.md)\n",
                ri->ps.envs, ri->ps.envs == 1 ? "" : "s", ri->ps.pairs_pruned, ri->ps.pairs_solved, ri->ps.queries,
                ri->ps.unknown, ri->ps.confirmed, ri->ps.confirmed == 1 ? "" : "s", ri->ps.solver_ms);
    else if (ri->skipped) fprintf(out, "proofs: not run (%s)\n", ri->skipped);
}

/* ---- JSON helpers ---- */

static void json_str(FILE *out, const char *s)
{
    if (!s) { fputs("null", out); return; }
    dw_json_escape_file(out, s, strlen(s), DW_JSON_REPLACE);   /* a report: stays JSON */
}

/* the counterexample object; request and entities are JSON already */
static void json_cex(FILE *out, const dw_finding *g)
{
    fprintf(out, "{\"request\": %s, \"entities\": %s", g->cex_request, g->cex_entities ? g->cex_entities : "[]");
    if (g->cex_leaves && any_leaf(g)) { fputs(", \"temporal_leaves\": ", out); leaves_text(out, g); }
    fputc('}', out);
}

static void policy_name(FILE *out, const dw_finding *g, const dw_policy_set *ps, const dw_policy_set *as)
{
    const dw_policy_set *set = g->src ? as : ps;
    if (g->policy < 0 || !set || (size_t)g->policy >= set->npolicies) { fputs("null", out); return; }
    const dw_policy *p = &set->policies[g->policy];
    for (size_t k = 0; k < p->nannots; k++)
        if (p->annots[k].has_value && p->annots[k].key.len == 2 && memcmp(p->annots[k].key.s, "id", 2) == 0) {
            char *v = strndup(p->annots[k].value.s, p->annots[k].value.len);
            json_str(out, v ? v : "");
            free(v);
            return;
        }
    fprintf(out, "\"policy%ld\"", g->policy);
}

static void print_json(FILE *out, const dw_source *src, const dw_findings *f, const run_info *ri,
                       const dw_policy_set *ps, const dw_policy_set *as)
{
    fputs("{\"findings\": [", out);
    for (size_t i = 0; i < f->n; i++) {
        const dw_finding *g = &f->v[i];
        fputs(i ? ",\n  {" : "\n  {", out);
        fputs("\"rule\": ", out); json_str(out, g->rule);
        fputs(", \"kind\": ", out); json_str(out, dw_lint_rules[g->rule_index].kind);
        fputs(", \"severity\": ", out); json_str(out, dw_lint_sev_name(g->sev));
        fputs(", \"policy\": ", out); policy_name(out, g, ps, as);
        if (g->policy >= 0) fprintf(out, ", \"policy_index\": %ld", g->policy);
        fputs(", \"message\": ", out); json_str(out, g->msg);
        fputs(", \"hint\": ", out); json_str(out, g->hint);
        fputs(", \"file\": ", out); json_str(out, fsrc(src, g)->name);
        fprintf(out, ", \"line\": %u, \"col\": %u, \"end_line\": %u, \"end_col\": %u", g->loc.line, g->loc.col,
                g->end_line, g->end_col);
        if (g->cex_request) { fputs(", \"counterexample\": ", out); json_cex(out, g); }
        fputc('}', out);
    }
    fputs(f->n ? "\n], \"stats\": {" : "], \"stats\": {", out);
    fprintf(out, "\"findings\": %zu, \"proofs\": %s", f->n, ri->proofs ? "true" : "false");
    if (ri->proofs) {
        const dw_prove_stats *s = &ri->ps;
        fprintf(out, ", \"environments\": %zu, \"policies\": %zu, \"unencodable\": %zu, \"approximated\": %zu, "
                     "\"environments_cached\": %zu, \"pairs_pruned\": %zu, \"pairs_pruned_disjoint\": %zu, \"pairs_pruned_scope\": %zu, \"pairs_memo\": %zu, \"pairs_solved\": %zu, \"queries\": %zu, \"sat\": %zu, \"unsat\": %zu, "
                     "\"unknown\": %zu, \"unknown_over_budget\": %zu, \"vm_confirmed\": %zu, \"vm_rejected\": %zu, \"solver_ms\": %.1f, \"total_ms\": %.1f, "
                     "\"index_dominance\": %s, \"temporal_leaves\": \"free booleans (over-approximation)\", "
                     "\"hierarchy\": \"free ancestor relation per schema memberOf type pair, depth unbounded, transitivity not encoded\"",
                s->envs, s->policies, s->unencodable, s->approximated, s->envs_cached, s->pairs_pruned, s->pairs_pruned_disjoint, s->pairs_pruned_scope, s->pairs_memo, s->pairs_solved, s->queries, s->sat,
                s->unsat, s->unknown, s->over_budget, s->confirmed, s->vm_rejected, s->solver_ms, s->total_ms,
                ri->index_verified ? "\"verified\"" : "\"refused\"");
    } else if (ri->skipped) {
        fputs(", \"proofs_skipped\": ", out);
        json_str(out, ri->skipped);
    }
    fputs("}}\n", out);
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
          "          \"version\": \"" DW_VERSION_STRING "\",\n", out);
#ifdef DW_PROJECT_URL
    fputs("          \"informationUri\": \"" DW_PROJECT_URL "\",\n", out);
#endif
    fputs("          \"rules\": [", out);
    for (size_t k = 0; k < nr; k++) {
        const dw_lint_rule *r = &dw_lint_rules[first[k]->rule_index];
        fputs(k ? ",\n            {" : "\n            {", out);
        fputs("\"id\": ", out); json_str(out, first[k]->rule);
        fputs(", \"shortDescription\": {\"text\": ", out); json_str(out, r->summary);
        char help[512];
        snprintf(help, sizeof help, "%s. Each finding's message says why and its hint how to fix it; rules are listed in "
                 "docs/CHECK.md. Turn the rule off with `--disable %s`, or for one policy with @suppress(\"%s\").",
                 r->summary, first[k]->rule, first[k]->rule);
        fputs("}, \"help\": {\"text\": ", out); json_str(out, help);
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
        json_uri(out, fsrc(src, g)->name);
        fprintf(out, "}, \"region\": {\"startLine\": %u, \"startColumn\": %u, \"endLine\": %u, \"endColumn\": %u}}}]",
                g->loc.line, g->loc.col, g->end_line, g->end_col);
        if (g->hint || g->cex_request) {
            fputs(", \"properties\": {", out);
            if (g->hint) { fputs("\"hint\": ", out); json_str(out, g->hint); }
            if (g->cex_request) { fputs(g->hint ? ", \"counterexample\": " : "\"counterexample\": ", out); json_cex(out, g); }
            fputs("}", out);
        }
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
        gh_escape(out, fsrc(src, g)->name, true);
        fprintf(out, ",line=%u,col=%u,endLine=%u,endColumn=%u,title=", g->loc.line, g->loc.col, g->end_line, g->end_col);
        gh_escape(out, g->rule, true);
        fputs("::", out);
        gh_escape(out, g->msg, false);
        if (g->hint) { fputs("%0Ahint: ", out); gh_escape(out, g->hint, false); }
        if (g->cex_request) {
            fputs("%0Arequest: ", out); gh_escape(out, g->cex_request, false);
            fputs("%0Aentities: ", out); gh_escape(out, g->cex_entities ? g->cex_entities : "[]", false);
        }
        fputc('\n', out);
    }
}

/* ---- the proofs: loading, the VM hook ---- */

/* One policy file, front end to bytecode, quietly (lint reports the diagnostics). */
typedef struct loaded {
    dw_source src;
    char *text;
    dw_policy_set *ps, *lib;
    dw_program *prog;
} loaded;

static void loaded_free(loaded *l)
{
    if (l->prog) dw_program_free(l->prog);
    if (l->ps) dw_policy_set_free(l->ps);
    if (l->lib) dw_policy_set_free(l->lib);
    free(l->text);
    memset(l, 0, sizeof *l);
}

/* 0 ok, 1 I/O error (message printed), 2 rejected (message printed) */
static int load_quiet(loaded *l, const char *path, const char *text, size_t len, const dw_session *s)
{
    if (!text) {
        size_t n;
        if (dw_read_file(path, &l->text, &n)) { fprintf(stderr, "%s: error: cannot read\n", path); return 1; }
        len = n;
        text = l->text;
    }
    l->src = (dw_source){ path, text, len };
    dw_diags d;
    dw_diags_init(&d);
    dw_front_end fe = { .src = &l->src, .schema = s->schema, .dv = s->dv, .max_window = s->es ? (int64_t)s->es->max_window : 0,
                        .macros = dw_session_macros(s), .providers = s->providers };
    int rc = dw_front_end_run(&fe, DW_FE_COMPILE, &d, NULL) ? 2 : 0;
    l->ps = fe.ps;
    l->lib = fe.lib;
    l->prog = fe.prog;
    if (rc && l->text) {
        /* a file given to --against/--assert: its diagnostics are the message */
        dw_diags_print(&d, stderr);
    }
    dw_diags_free(&d);
    return rc;
}

typedef struct vm_hook { const dw_schema *schema; const dw_program *prog[3]; } vm_hook;

static int vm_decide(void *ud, int which, const char *request, const char *entities, const uint8_t *leaves, uint32_t nleaves,
                     const uint32_t *only, uint32_t nonly, bool *allow, uint8_t *outcome)
{
    vm_hook *h = ud;
    const dw_program *prog = h->prog[which];
    dw_arena a;
    dw_arena_init(&a, 1 << 14);
    dw_diags d;
    dw_diags_init(&d);
    dw_store st;
    dw_store_init(&st);
    dw_buf err = { 0 };
    int rc = -1;
    dw_source rs = { "<counterexample request>", request, strlen(request) };
    dw_source es = { "<counterexample entities>", entities, strlen(entities) };
    const dw_json *rj = dw_json_parse(&a, &rs, &d), *ej = dw_json_parse(&a, &es, &d);
    dw_value *stack = NULL;
    if (!rj || !ej || d.nerrors) goto out;
    if (dw_store_load_json(&st, ej, h->schema, &err)) goto out;
    dw_request req;
    if (dw_request_from_json(&a, dw_json_get(rj, "principal"), dw_json_get(rj, "action"), dw_json_get(rj, "resource"),
                             dw_json_get(rj, "context"), h->schema, true, &req, &err))
        goto out;
    req.leaf_values = leaves;
    req.nleaf_values = nleaves;
    dw_request_bind(&req, prog, &st);
    dw_response resp;
    /* the decision index's candidates: a policy it leaves out has a scope the
     * request does not match, so it is false (10,000 rules: most of them);
     * or only the policies asked for (a witness of one rule's fact) */
    dw_candidates c = { NULL, 0 };
    if ((allow || !only) && dw_index_candidates(prog, &st, &req, &a, &c)) goto out;
    if (allow && dw_authorize_candidates(prog, &st, &req, &a, &c, &resp)) goto out;
    if (allow) *allow = resp.allow;
    stack = calloc(prog->max_stack + 1, sizeof *stack);
    if (!stack) goto out;
    memset(outcome, DW_OUT_FALSE, prog->npolicies);
    bool every = !only && !prog->index.nslots;   /* (no index: c.v is NULL, every policy runs) */
    for (uint32_t k = 0; k < (only ? nonly : every ? prog->npolicies : c.n); k++) {
        uint32_t i = only ? only[k] : every ? k : DW_IX_POLICY(c.v[k]);
        if (i >= prog->npolicies) continue;
        dw_eval_ctx cx = { .prog = prog, .store = &st, .req = &req, .scratch = &a, .stack = stack };
        bool res = false;
        dw_eval_status s = dw_eval_policy(&cx, i, &res);
        outcome[i] = s != DW_EVAL_OK ? DW_OUT_ERROR : res ? DW_OUT_TRUE : DW_OUT_FALSE;
    }
    rc = 0;
out:
    if (rc && getenv("DWC_CHECK_DEBUG")) fprintf(stderr, "dwc check: the VM refused a counterexample: %s\n%s\n%s\n", err.p ? err.p : "", request, entities);
    free(stack);
    dw_buf_free(&err);
    dw_store_free(&st);
    dw_diags_free(&d);
    dw_arena_free(&a);
    return rc;
}

/* Index dominance: the artifact verifier (vm/verify.c) certifies that every
 * policy is filed under a key its scope requires. */
static bool index_verifies(const dw_program *prog, char *msg, size_t cap)
{
    dw_buf b = { 0 };
    if (dw_artifact_write(prog, 0, &b)) { snprintf(msg, cap, "the artifact could not be written"); dw_buf_free(&b); return false; }
    dw_program *p = dw_artifact_load(b.p, b.len, msg, cap);
    dw_buf_free(&b);
    if (!p) return false;
    dw_program_free(p);
    return true;
}

/* lint's structural findings that the proofs decide instead */
static bool proof_kind(const dw_finding *g)
{
    return !strcmp(g->rule, "dw-shadowed-permit") || !strcmp(g->rule, "dw-shadowed-forbid") || !strcmp(g->rule, "dw-overridden-permit");
}

/* linted: what lint compiled (taken over), or nothing: then the set is compiled
 * here (lint does not compile a set it found an error in, which the proofs
 * still analyse, reporting around the errors) */
static int run_proofs(dw_session *s, dw_lint_products *linted, dw_findings *f, const char *against, const char *asserts, unsigned timeout_ms, double budget_s,
                      const char *cache, unsigned jobs, run_info *ri)
{
    loaded set = { 0 }, old = { 0 }, as = { 0 };
    int rc = 0;
    if (linted->prog) {
        set = (loaded){ .src = s->policy_src, .ps = linted->ps, .lib = linted->lib, .prog = linted->prog };
        *linted = (dw_lint_products){ 0 };
    } else if (load_quiet(&set, s->policy_src.name, s->policy_src.text, s->policy_src.len, s)) {
        ri->skipped = "the set does not compile";
        goto out;
    }
    if (against && (rc = load_quiet(&old, against, NULL, 0, s))) goto out;
    if (asserts && (rc = load_quiet(&as, asserts, NULL, 0, s))) goto out;
    char msg[256];
    ri->index_verified = index_verifies(set.prog, msg, sizeof msg);
    if (!ri->index_verified) {
        dw_loc at = { 1, 1, 0, 0 };
        char m[400];
        snprintf(m, sizeof m, "the compiled decision index does not verify: %s", msg);
        dw_findings_push(f, &s->policy_src, "dw-index-dominance", -1, at, -1, "report this as a compiler bug", m, NULL, NULL, NULL, 0);
    }
    size_t np = set.ps->npolicies;
    bool *err_found = calloc(np + 1, 1), *imp = calloc(np + 1, 1), *decided = calloc(np + 1, 1), *always = calloc(np + 1, 1);
    if (!err_found || !imp || !decided || !always) { free(err_found); free(imp); free(decided); free(always); rc = -1; goto out; }
    for (size_t i = 0; i < f->n; i++) {
        const dw_finding *g = &f->v[i];
        if (g->policy < 0 || (size_t)g->policy >= np) continue;
        if (g->sev == DW_LINT_ERROR) err_found[g->policy] = true;
        if (!strcmp(g->rule, "dw-impossible-policy")) imp[g->policy] = true;
        if (!strcmp(g->rule, "dw-always-true-policy")) always[g->policy] = true;
    }
    vm_hook hook = { s->schema, { set.prog, old.prog, as.prog } };
    char salt[160];
    snprintf(salt, sizeof salt, "dwc %s %s, schema %016llx%s", DW_VERSION_STRING,
#if defined(__x86_64__)
             "x86_64",
#elif defined(__aarch64__)
             "aarch64",
#else
             "other",
#endif
             (unsigned long long)dw_session_schema_digest(s), s->box ? " box" : "");
    dw_prove_options o = {
        .schema = s->schema,
        .set = { &set.src, set.ps, set.prog },
        .old = { &old.src, old.ps, old.prog },
        .asserts = { &as.src, as.ps, as.prog },
        .has_error_finding = err_found,
        .impossible_reported = imp,
        .always_reported = always,
        .timeout_ms = timeout_ms,
        .budget_s = budget_s,
        .cache_dir = cache,
        .jobs = jobs,
        .cache_salt = salt,
        .vm = { &hook, vm_decide },
        .decided = decided,
    };
    /* findings of --assert point into that file: keep its source alive with the findings */
    size_t before = f->n;
    if (dw_prove_run(&o, f, &ri->ps)) rc = -1;
    else {
        ri->proofs = true;
        /* the proofs are the authority on shadowing and overriding */
        size_t k = 0;
        for (size_t i = 0; i < f->n; i++) {
            const dw_finding *g = &f->v[i];
            if (i < before && proof_kind(g) && g->policy >= 0 && (size_t)g->policy < np && decided[g->policy]) {
                free(f->v[i].msg); free(f->v[i].hint); free(f->v[i].cex_request); free(f->v[i].cex_entities); free(f->v[i].cex_leaves);
                continue;
            }
            f->v[k++] = f->v[i];
        }
        f->n = k;
        for (size_t i = 0; i < f->n; i++)
            if (f->v[i].src == &set.src) f->v[i].src = NULL;   /* the policy file itself */
    }
    free(err_found);
    free(imp);
    free(decided);
    free(always);
out:
    loaded_free(&set);
    loaded_free(&old);
    loaded_free(&as);
    return rc;
}

/* --providers FILE (dogwood.md §13.2), read as dwc compile reads it: its
 * diagnostics become dw-validation findings in that file (the session keeps
 * its text alive past them).  0, or 1: I/O error or out of memory (printed). */
static int load_providers(dw_session *s, const char *path, dw_findings *f, bool *errors)
{
    if (dw_session_parse_providers(s, path)) return 1;
    bool oom = !s->providers && !s->diags.nerrors;
    for (size_t i = 0; i < s->diags.n && !oom; i++) {
        const dw_diag *g = &s->diags.v[i];
        int sev = g->sev == DW_SEV_ERROR ? DW_LINT_ERROR : g->sev == DW_SEV_WARNING ? DW_LINT_WARNING : DW_LINT_INFO;
        oom = dw_findings_push(f, &s->providers_src, "dw-validation", sev, g->loc, -1, g->hint, g->msg, NULL, NULL, NULL, 0) != 0;
    }
    *errors = s->diags.nerrors || !s->providers;
    dw_diags_free(&s->diags);
    dw_diags_init(&s->diags);
    if (oom) fprintf(stderr, "dwc check: error: out of memory\n");
    return oom;
}

static int check_main(int pr, const char *bare, dw_cli_list *pols, const dw_cli_list *disable, bool exit_zero, bool lint_only, const char *sch,
                      const char *events, const char *home, const char *against, const char *asserts, const char *timeout, const char *budget, const char *cache, const char *jobs,
                      const char *fmt, const char *level, const char *macros, const char *providers);

int dw_cmd_check(int argc, char **argv)
{
    const char *bare = NULL, *sch = NULL, *events = NULL, *home = NULL, *against = NULL, *asserts = NULL;
    const char *timeout = NULL, *budget = NULL, *cache = NULL, *jobs = NULL, *fmt = NULL, *level = NULL, *macros = NULL;
    const char *providers = NULL;
    dw_cli_list pols = { 0 }, disable = { 0 };
    bool exit_zero = false, lint_only = false;
    const dw_cli_opt opts[] = {
        { "schema", 's', &sch, NULL }, { "events", 0, &events, NULL },
        { "home", 0, &home, NULL }, { "against", 0, &against, NULL }, { "assert", 0, &asserts, NULL },
        { "timeout", 0, &timeout, NULL }, { "budget", 0, &budget, NULL }, { "cache", 0, &cache, NULL }, { "jobs", 'j', &jobs, NULL }, { "format", 0, &fmt, NULL }, { "fail-level", 0, &level, NULL },
        { "exit-zero", 0, NULL, &exit_zero }, { "lint-only", 0, NULL, &lint_only }, { "macros", 0, &macros, NULL },
        { "providers", 0, &providers, NULL }, { 0 },
    };
    const dw_cli_list_opt lists[] = { { "policies", 'p', &pols }, { "disable", 0, &disable }, { 0 } };
    int pr = dw_cli_parse_lists(argc, argv, opts, lists, &bare, dw_check_usage);
    int rc = check_main(pr, bare, &pols, &disable, exit_zero, lint_only, sch, events, home, against, asserts, timeout, budget, cache, jobs, fmt, level, macros, providers);
    free(pols.v);
    free(disable.v);
    return rc;
}

static int check_main(int pr, const char *bare, dw_cli_list *pols, const dw_cli_list *disable, bool exit_zero, bool lint_only, const char *sch,
                      const char *events, const char *home, const char *against, const char *asserts, const char *timeout, const char *budget, const char *cache, const char *jobs,
                      const char *fmt, const char *level, const char *macros, const char *providers)
{
    if (pr) return pr > 0 ? 0 : 1;
    if (bare) {
        const char **nv = realloc(pols->v, (pols->n + 1) * sizeof *nv);
        if (!nv) { fprintf(stderr, "dwc check: error: out of memory\n"); return 1; }
        pols->v = nv;
        memmove(pols->v + 1, pols->v, pols->n++ * sizeof *nv);   /* the bare argument is the first file */
        pols->v[0] = bare;
    }
    if (!dw_check_disable_valid(disable)) return 1;
    unsigned timeout_ms = 2000;
    long long t;
    if (timeout && !dw_cli_count("check", "--timeout (milliseconds)", timeout, 0, 3600000, &t)) return 1;
    if (timeout) timeout_ms = (unsigned)t;
    if (budget && !dw_cli_count("check", "--budget (seconds)", budget, 1, 86400, &t)) return 1;
    double budget_s = budget ? (double)t : 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned njobs = cores > 0 ? (unsigned)(cores > 64 ? 64 : cores) : 1;
    if (jobs && !dw_cli_count("check", "-j (processes)", jobs, 1, 64, &t)) return 1;
    if (jobs) njobs = (unsigned)t;
    if (cache && mkdir(cache, 0777) && errno != EEXIST) {
        fprintf(stderr, "dwc check: error: --cache %s: %s\n", cache, strerror(errno));
        return 1;
    }
    int format = F_HUMAN;
    if (!fmt || !strcmp(fmt, "human")) format = F_HUMAN;
    else if (!strcmp(fmt, "json")) format = F_JSON;
    else if (!strcmp(fmt, "sarif")) format = F_SARIF;
    else if (!strcmp(fmt, "github")) format = F_GITHUB;
    else { fprintf(stderr, "dwc check: error: unknown format `%s`\n  hint: human, json, sarif or github\n", fmt); return 1; }
    dw_lint_sev fail = DW_LINT_ERROR;
    if (!level || !strcmp(level, "error")) fail = DW_LINT_ERROR;
    else if (!strcmp(level, "warning")) fail = DW_LINT_WARNING;
    else if (!strcmp(level, "info")) fail = DW_LINT_INFO;
    else { fprintf(stderr, "dwc check: error: unknown fail level `%s`\n  hint: error, warning or info\n", level); return 1; }
    if (!pols->n) { fputs(dw_check_usage, stderr); return 1; }
    if (events && !sch) { fprintf(stderr, "dwc check: error: --events needs a schema (-s)\n"); return 1; }
    if ((against || asserts) && !sch) { fprintf(stderr, "dwc check: error: --against and --assert need a schema (-s)\n"); return 1; }

    dw_session s;
    dw_session_init(&s);
    int rc = 1;
    dw_findings f = { 0 };
    run_info ri = { 0 };
    loaded keep_as = { 0 }, names = { 0 };
    dw_check_set cs = { 0 };
    dw_lint_products linted = { 0 };   /* the set lint compiled, for the proofs */
    bool joined = false;
    if (sch && dw_session_load_schema(&s, sch)) goto out;
    if (sch && dw_session_load_events(&s, events)) goto out;
    bool providers_errors = false;
    if (providers && load_providers(&s, providers, &f, &providers_errors)) goto out;
    if (macros && dw_session_load_macros(&s, macros)) goto out;
    if (dw_check_set_read(&cs, pols)) goto out;
    /* one file is checked as itself; several (or a directory) as their joined text */
    joined = cs.nparts > 1 || strcmp(cs.parts[0].path, pols->v[0]);
    char set_name[64];
    snprintf(set_name, sizeof set_name, "<policy set of %zu files>", cs.nparts);
    s.policy_src = joined ? (dw_source){ set_name, cs.text, cs.len } : cs.parts[0].src;
    dw_lint_options opt = { .box = s.box, .home = home, .schema = s.schema, .dv = s.dv, .macros = dw_session_macros(&s),
                            .providers = s.providers };
    int lr = dw_lint_run(&s.policy_src, &opt, &f, &linted);
    if (lr < 0) { fprintf(stderr, "dwc check: error: out of memory\n"); goto out; }
    bool front_end_errors = false;
    for (size_t i = 0; i < f.n; i++)
        if (!strcmp(f.v[i].rule, "dw-parse") || !strcmp(f.v[i].rule, "dw-macro") || !strcmp(f.v[i].rule, "dw-temporal")) front_end_errors = true;
    if (lint_only) ri.skipped = "--lint-only";
    else if (!s.schema) ri.skipped = "no schema";
    else if (providers_errors) ri.skipped = "the provider declarations have errors";
    else if (lr != 0 || front_end_errors) ri.skipped = "the set has front-end errors";
    else {
        int pr = run_proofs(&s, &linted, &f, against, asserts, timeout_ms, budget_s, cache, njobs, &ri);
        if (pr < 0) { fprintf(stderr, "dwc check: error: the SMT analysis failed (Z3 or out of memory)\n"); goto out; }
        if (pr > 0) goto out;   /* --against / --assert did not load: message printed */
    }
    /* findings of the assertion file keep pointing at a source that outlives them */
    if (asserts && ri.proofs) {
        size_t n;
        if (dw_read_file(asserts, &keep_as.text, &n) == 0) keep_as.src = (dw_source){ asserts, keep_as.text, n };
        for (size_t i = 0; i < f.n; i++) if (f.v[i].src && f.v[i].src != opt.macros && f.v[i].src != &s.providers_src) f.v[i].src = &keep_as.src;
    }
    {
        /* the parsed set: each finding's policy, @suppress, and names in JSON output */
        dw_diags d;
        dw_diags_init(&d);
        names.ps = dw_parse_policy_set(&s.policy_src, &d);
        dw_diags_free(&d);
    }
    dw_check_lint_finish(&s.policy_src, names.ps, disable, &f);
    if (joined) dw_check_set_map(&cs, &f);
    dw_findings_sort(&f);
    {
        loaded anames = { 0 };
        if (format == F_JSON && asserts && keep_as.text) {
            dw_diags d;
            dw_diags_init(&d);
            anames.ps = dw_parse_policy_set(&keep_as.src, &d);
            dw_diags_free(&d);
        }
        switch (format) {
        case F_HUMAN: print_human(stdout, &s.policy_src, &f, &ri); break;
        case F_JSON: print_json(stdout, &s.policy_src, &f, &ri, names.ps, anames.ps); break;
        case F_SARIF:
            if (print_sarif(stdout, &s.policy_src, &f, s.box)) { fprintf(stderr, "dwc check: error: out of memory\n"); goto out; }
            break;
        case F_GITHUB: print_github(stdout, &s.policy_src, &f); break;
        }
        loaded_free(&anames);
    }
    if (fflush(stdout)) { fprintf(stderr, "dwc check: error: cannot write the output\n"); goto out; }
    rc = 0;
    /* a set that did not parse is a finding like any other error (CI still gets its SARIF) */
    for (size_t i = 0; i < f.n; i++) if (f.v[i].sev <= fail || lr == 1) rc = 3;
    if (exit_zero) rc = 0;
out:
    dw_lint_products_free(&linted);
    dw_findings_free(&f);
    loaded_free(&keep_as);
    loaded_free(&names);
    if (s.policy_src.text == cs.text || (cs.nparts && s.policy_src.text == cs.parts[0].text)) s.policy_src = (dw_source){ 0 };
    dw_check_set_free(&cs);
    dw_session_free(&s);
    return rc;
}
