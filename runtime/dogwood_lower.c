/* dogwood_lower.c - `dwc dogwood lower POLICY --policy-schema S [--emit
 * cedar-policies|cedar-schema|cedar-json|both]` (dogwood.md §18): the Cedar
 * policies a Dogwood set lowers to (§14) and the schema they validate
 * against (§14.4).  The set is validated first (a set that fails is
 * refused, exit 2).  Each rule i becomes one static policy: scope and
 * annotations as written, its clauses folded left to right into one `when`
 * (`unless e` as `!e`; no clause: `true`), `a != b` as `!(a == b)`, `a > b`
 * as `!(a <= b)`, `a >= b` as `!(a < b)`, each temporal leaf k as
 * `context.policy_<i>__temporal_<k>` (compiler/lint.c's dw_lower, the same
 * lowering strict validation uses).  The policies are printed as Cedar
 * prints policies (runtime/est.h: written as Cedar's JSON, read back as
 * text), so Cedar itself reads them; tests/dogwood_ref/lower.js checks that
 * cedar-wasm parses and validates the output.  Each provider invocation
 * becomes `context.providers.policy_<i>_p_<k>`, declared (§14.4) as a
 * required attribute of a `providers` record on every action's context. */
#include "dogwood_lower.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "est.h"
#include "validate_files.h"
#include "../compiler/lint.h"
#include "../lang/eventschema.h"

typedef struct lower_out { dw_arena *a; bool oom; } lower_out;

static dw_expr *node(lower_out *o, dw_expr_kind k, dw_loc loc)
{
    dw_expr *e = dw_expr_new(o->a, k, loc);
    if (!e) o->oom = true;
    return e;
}

/* In place on a private copy: != > >= rewritten as §14.2 says. */
static void rewrite(lower_out *o, dw_expr *e, int depth)
{
    if (!e || o->oom || depth > 4 * DW_MAX_EXPR_DEPTH) return;
    dw_expr **k;
    for (size_t i = 0; (k = dw_expr_kid(e, i)); i++) rewrite(o, *k, depth + 1);
    dw_expr_kind inner = e->kind == DW_E_NE ? DW_E_EQ : e->kind == DW_E_GT ? DW_E_LE : e->kind == DW_E_GE ? DW_E_LT : e->kind;
    if (inner == e->kind) return;
    dw_expr *in = node(o, inner, e->loc);
    if (!in) return;
    in->u.kids[0] = e->u.kids[0];
    in->u.kids[1] = e->u.kids[1];
    in->depth = dw_expr_compute_depth(in);
    e->kind = DW_E_NOT;
    e->u.kids[0] = in;
    e->u.kids[1] = NULL;
    e->depth = in->depth + 1;
}

/* One `when` holding the folded clauses. */
static bool fold(lower_out *o, dw_policy *p)
{
    dw_expr *acc = NULL;
    for (size_t c = 0; c < p->nclauses; c++) {
        dw_expr *b = dw_expr_clone(o->a, p->clauses[c].body);
        if (!b) return false;
        rewrite(o, b, 0);
        if (!p->clauses[c].is_when) {
            dw_expr *n = node(o, DW_E_NOT, b->loc);
            if (!n) return false;
            n->u.kids[0] = b;
            n->depth = b->depth + 1;
            b = n;
        }
        if (acc) {
            dw_expr *a = node(o, DW_E_AND, b->loc);
            if (!a) return false;
            a->u.kids[0] = acc;
            a->u.kids[1] = b;
            a->depth = dw_expr_compute_depth(a);
            b = a;
        }
        acc = b;
    }
    if (!acc) {
        if (!(acc = node(o, DW_E_BOOL, p->loc))) return false;
        acc->u.b = true;
    }
    dw_clause *cl = dw_arena_alloc(o->a, sizeof *cl);
    if (!cl || o->oom) return false;
    *cl = (dw_clause){ .is_when = true, .body = acc, .loc = p->loc };
    p->clauses = cl;
    p->nclauses = 1;
    return true;
}

/* The lowered policies as Cedar text into *text (malloc'd).  0; 1 refused (diags); -1 OOM. */
static int policies_text(const dw_lowering *lw, const dw_source *src, char **text, size_t *len, dw_diags *d)
{
    dw_arena a;
    dw_arena_init(&a, 1 << 14);
    lower_out o = { &a, false };
    dw_policy_set view = lw->set;
    view.policies = dw_arena_alloc(&a, (lw->set.npolicies + 1) * sizeof *view.policies);
    view.templates = NULL;
    view.ntemplates = 0;
    view.nmacros = 0;                       /* expanded: the definitions are not policies */
    int rc = view.policies ? 0 : -1;
    for (size_t i = 0; !rc && i < lw->set.npolicies; i++) {
        dw_policy p = lw->set.policies[i];
        if (!fold(&o, &p)) { rc = -1; break; }
        char id[32];                        /* ids that sort in rule order; text has no ids */
        int n = snprintf(id, sizeof id, "r%09zu", i);
        char *ids = dw_arena_memdup(&a, id, (size_t)n);
        if (!ids) { rc = -1; break; }
        p.id = (dw_str){ ids, (size_t)n };
        view.policies[i] = p;
    }
    dw_buf json = { 0 };
    if (!rc) rc = dw_est_write_set(&json, &view, d);
    if (!rc) {
        dw_source js = { src->name, json.p ? json.p : "{}", json.p ? json.len : 2 };
        dw_est_text t;
        rc = dw_est_to_cedar(&js, false, &t, d);
        if (!rc) {
            *len = t.text.len;
            *text = malloc(*len + 1);
            if (!*text) rc = -1;
            else { if (*len) memcpy(*text, t.text.p, *len); (*text)[*len] = 0; }
        }
        dw_est_text_free(&t);
    }
    dw_buf_free(&json);
    dw_arena_free(&a);
    return rc;
}

static char *schema_text(const dw_schema *s, bool json, size_t *len)
{
    char *buf = NULL;
    FILE *m = open_memstream(&buf, len);
    if (!m) return NULL;
    int r = json ? dw_schema_write_json(m, s) : dw_schema_write_text(m, s);
    if (fclose(m) || r) { free(buf); return NULL; }
    return buf;
}

static void json_str(const char *s, size_t n) { dw_json_escape_file(stdout, s, n, DW_JSON_REPLACE); }

int dw_dogwood_lower(const char *pol, const char *sch, const char *ev, const char *providers, const char *macros,
                     const char *emit, bool json)
{
    if (strcmp(emit, "both") && strcmp(emit, "cedar-policies") && strcmp(emit, "cedar-schema") && strcmp(emit, "cedar-json")) {
        fprintf(stderr, "dwc dogwood lower: error: --emit must be cedar-policies, cedar-schema, cedar-json or both, not `%s`\n", emit);
        return 2;
    }
    dw_session s;
    dw_session_init(&s);
    dw_fe_stage fatal;
    dw_validate_result r;
    int rc = providers ? dw_session_load_providers(&s, providers) : 0;
    if (!rc && macros) rc = dw_session_load_macros(&s, macros);
    if (!rc) rc = dw_validate_files(&s, pol, sch, ev, &fatal, &r);
    if (rc) { dw_session_free(&s); return rc; }
    if (fatal || r.nerrors) {
        dw_diags_print(&s.diags, stderr);
        fprintf(stderr, "dwc dogwood lower: error: the policy set does not validate, so it is not lowered\n");
        dw_session_free(&s);
        return 2;
    }
    dw_diags_print(&s.diags, stderr);         /* warnings */
    dw_diags_free(&s.diags);
    dw_diags_init(&s.diags);
    dw_lint_options opt = { .schema = s.schema, .dv = s.dv, .providers = s.providers };
    dw_lowering lw;
    char *ptext = NULL, *stext = NULL, *sjson = NULL;
    size_t plen = 0, slen = 0, jlen = 0;
    rc = 2;
    if (dw_lower(s.ps, &opt, &lw)) { fprintf(stderr, "dwc dogwood lower: error: out of memory\n"); goto out; }
    int pr = policies_text(&lw, &s.policy_src, &ptext, &plen, &s.diags);
    if (pr) {
        dw_diags_print(&s.diags, stderr);
        if (pr < 0) fprintf(stderr, "dwc dogwood lower: error: out of memory\n");
        goto out;
    }
    stext = schema_text(&lw.schema, false, &slen);
    sjson = schema_text(&lw.schema, true, &jlen);
    if (!stext || !sjson) { fprintf(stderr, "dwc dogwood lower: error: out of memory\n"); goto out; }
    bool self_contained = lw.nfields == 0 && lw.nprovider_fields == 0;
    if (lw.nprovider_fields)
        fprintf(stderr, "note: the lowered set is not self-contained: %zu provider attribute(s) of the context (first: "
                        "context.providers.%s) hold provider results the Cedar policies cannot compute\n",
                lw.nprovider_fields, lw.provider_fields[0]);
    if (lw.nfields)
        fprintf(stderr, "note: the lowered set is not self-contained: %zu temporal attribute(s) of the context (first: "
                        "context.%s) hold history the Cedar policies cannot see\n", lw.nfields, lw.fields[0]);
    if (json) {
        printf("{\"cedar_policies\":");
        json_str(ptext, plen);
        printf(",\"cedar_schema\":");
        json_str(stext, slen);
        printf(",\"cedar_schema_json\":%s,\"self_contained\":%s,\"temporal_fields\":[", sjson, self_contained ? "true" : "false");
        for (size_t i = 0; i < lw.nfields; i++) { if (i) putchar(','); json_str(lw.fields[i], strlen(lw.fields[i])); }
        printf("],\"provider_fields\":[");
        for (size_t i = 0; i < lw.nprovider_fields; i++) {
            if (i) putchar(',');
            char *f = NULL;
            if (asprintf(&f, "providers.%s", lw.provider_fields[i]) < 0) { rc = 2; goto out; }
            json_str(f, strlen(f));
            free(f);
        }
        printf("],\"decision_kinds\":[");
        const dw_event_schema *es = s.es;
        for (size_t i = 0; es && i < es->ndecision_kinds; i++) { if (i) putchar(','); json_str(es->decision_kinds[i].s, es->decision_kinds[i].len); }
        printf("]}\n");
    } else {
        bool pols = !strcmp(emit, "both") || !strcmp(emit, "cedar-policies");
        if (pols) printf("%s\n", ptext);
        if (!strcmp(emit, "both")) printf("\n");
        if (!strcmp(emit, "both") || !strcmp(emit, "cedar-schema")) fputs(stext, stdout);
        if (!strcmp(emit, "cedar-json")) printf("%s\n", sjson);
    }
    rc = 0;
out:
    free(ptext);
    free(stext);
    free(sjson);
    dw_lowering_free(&lw);
    dw_session_free(&s);
    return rc;
}
