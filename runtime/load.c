#include "load.h"
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "../lang/strlit.h"
#include "../vm/artifact.h"
#include "../compiler/pipeline.h"
#include "box_gate.h"
#include "links.h"
#include "../lang/providers.h"

void dw_session_init(dw_session *s)
{
    memset(s, 0, sizeof *s);
    dw_store_init(&s->store);
    dw_arena_init(&s->scratch, 64 * 1024);
    dw_diags_init(&s->diags);
}

void dw_session_free(dw_session *s)
{
    if (s->prog) dw_program_free(s->prog);
    if (s->ps) dw_policy_set_free(s->ps);
    if (s->macro_lib) dw_policy_set_free(s->macro_lib);
    if (s->dv) dw_event_derivation_free(s->dv);
    if (s->es) dw_event_schema_free(s->es);
    if (s->schema) dw_schema_free(s->schema);
    dw_store_free(&s->store);
    dw_arena_free(&s->scratch);
    dw_diags_free(&s->diags);
    free(s->policy_text);
    free(s->schema_text);
    free(s->entities_text);
    free(s->events_text);
    free(s->links_text);
    dw_providers_free(s->providers);
    free(s->providers_text);
    free(s->macros_text);
    memset(s, 0, sizeof *s);
}

/* An error without a source position: printed, or kept as the first. */
static void report(dw_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(dw_session *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!s->quiet) { vfprintf(stderr, fmt, ap); fputc('\n', stderr); }
    else if (!s->first_error[0]) vsnprintf(s->first_error, sizeof s->first_error, fmt, ap);
    va_end(ap);
}

static int read_source(dw_session *s, const char *path, dw_source *src, char **text)
{
    size_t len;
    if (dw_read_file(path, text, &len)) {
        report(s, "%s: error: cannot read: %s", path, strerror(errno));
        return 1;
    }
    src->name = path;
    src->text = *text;
    src->len = len;
    return 0;
}

static int flush_diags(dw_session *s)
{
    if (!s->quiet) dw_diags_print(&s->diags, stderr);
    for (size_t i = 0; s->quiet && !s->first_error[0] && i < s->diags.n; i++)
        if (s->diags.v[i].sev == DW_SEV_ERROR) dw_diag_format(&s->diags.v[i], s->first_error, sizeof s->first_error);
    if (s->quiet && !s->first_error[0] && s->diags.nerrors) report(s, "error: the input was rejected (out of memory recording why)");
    int rc = s->diags.nerrors ? 2 : 0;
    dw_diags_free(&s->diags);
    dw_diags_init(&s->diags);
    return rc;
}

const char *dw_session_artifact_refusal(const dw_session *s, const dw_program *p)
{
    if (s->no_providers && p->provider.ncalls)
        return "information providers are not enabled in this build: the set calls a provider (dogwood.md §13.6)";
    return dw_box_profile_refusal(s->box, p);
}

typedef struct diag_at { size_t i; const dw_diag *g; const dw_source *src; } diag_at;
static int diag_at_cmp(const void *a, const void *b)
{
    const diag_at *x = a, *y = b;
    bool xin = x->g->src == x->src, yin = y->g->src == y->src;   /* the policy's first, as check */
    if (xin != yin) return xin ? -1 : 1;
    if (xin && x->g->loc.off != y->g->loc.off) return x->g->loc.off < y->g->loc.off ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i ? 1 : 0;
}

/* Order d's diagnostics by their position in src (stable), as `dwc check`
 * orders its findings.  Left as it is if out of memory. */
static void diags_by_position(dw_diags *d, const dw_source *src)
{
    diag_at *v = d->n > 1 ? malloc(d->n * sizeof *v) : NULL;
    dw_diag *o = v ? malloc(d->n * sizeof *o) : NULL;
    if (!o) { free(v); return; }
    for (size_t i = 0; i < d->n; i++) v[i] = (diag_at){ i, &d->v[i], src };
    qsort(v, d->n, sizeof *v, diag_at_cmp);
    for (size_t i = 0; i < d->n; i++) o[i] = *v[i].g;
    memcpy(d->v, o, d->n * sizeof *o);
    free(o);
    free(v);
}

/* The first provider call under e, or NULL. */
static const dw_expr *first_provider_call(const dw_expr *e)
{
    if (e->kind == DW_E_CALL && e->u.call.nsegs >= 2) return e;
    const dw_expr *k, *hit;
    for (size_t i = 0; (k = dw_expr_kid_c(e, i)); i++)
        if ((hit = first_provider_call(k))) return hit;
    return NULL;
}

/* The deployment switch of dogwood.md §13.6: a set that calls a provider is
 * refused, at its first call. */
static void refuse_providers(dw_session *s)
{
    for (size_t i = 0; s->ps && i < s->ps->npolicies; i++)
        for (size_t c = 0; c < s->ps->policies[i].nclauses; c++) {
            const dw_expr *e = first_provider_call(s->ps->policies[i].clauses[c].body);
            if (!e) continue;
            dw_diag_add(&s->diags, DW_SEV_ERROR, &s->policy_src, e->u.call.name_loc,
                        s->box ? "Box has no information providers (box.md §11); remove the call"
                               : "this deployment switches providers off; remove the call",
                        "information providers are not enabled in this build: policy%zu calls `%.*s`", i,
                        (int)e->u.call.name.len, e->u.call.name.s);
            return;
        }
    report(s, "%s: error: information providers are not enabled in this build", s->policy_src.name);
}

int dw_session_parse_providers(dw_session *s, const char *path)
{
    if (read_source(s, path, &s->providers_src, &s->providers_text)) return 1;
    dw_providers_free(s->providers);
    s->providers = dw_providers_parse(&s->providers_src, &s->diags);
    return 0;
}

int dw_session_load_providers(dw_session *s, const char *path)
{
    if (dw_session_parse_providers(s, path)) return 1;
    if (!s->providers || s->diags.nerrors) { flush_diags(s); return 2; }
    return flush_diags(s);
}

int dw_session_load_macros(dw_session *s, const char *path)
{
    return read_source(s, path, &s->macros_src, &s->macros_text) ? 1 : 0;
}

const dw_source *dw_session_macros(const dw_session *s)
{
    return s->macros_src.name ? &s->macros_src : NULL;
}

int dw_session_load_policies(dw_session *s, const char *path)
{
    if (s->policy_given) s->policy_src = *s->policy_given;
    else if (read_source(s, path, &s->policy_src, &s->policy_text)) return 1;
    if (!s->policy_given && dw_is_artifact(s->policy_text, s->policy_src.len)) {
        char msg[256];
        if (s->links_path || s->links_given) { report(s, "%s: error: template links apply to policy text, not to a compiled artifact", path); return 2; }
        s->prog = dw_artifact_load(s->policy_text, s->policy_src.len, msg, sizeof msg);
        if (!s->prog) { report(s, "%s: error: artifact refused: %s", path, msg); return 2; }
        /* validated against another schema than the one loaded: its verdicts do not hold here
         * (one compiled without a schema is taken; dw_engine_reload refuses that too) */
        uint64_t own = dw_session_schema_digest(s);
        if (own && s->prog->schema_digest && s->prog->schema_digest != own) {
            report(s, "%s: error: artifact refused: compiled for another schema; recompile it with dwc compile -s "
                      "and the schema it is served with", path);
            return 2;
        }
        const char *why = dw_session_artifact_refusal(s, s->prog);
        if (why) { report(s, "%s: error: artifact refused: %s", path, why); return 2; }
        return 0;
    }
    /* the temporal checks against the schemas need the event schema: the default one if none was named */
    if (!s->dv && s->schema && dw_session_load_events(s, NULL)) return 2;
    /* every stage is fatal: the schema-dependent temporal checks (§9.6-§9.9)
     * are validation findings, which also stop compiling (D13) */
    /* with --schema box, Box's load checks (box.md §11, §17): the error
     * findings of `dwc check --schema box` are refusals, in its words */
    dw_lint_options box = { .box = true, .schema = s->schema, .dv = s->dv, .refusals_only = true };
    dw_front_end fe = { .src = &s->policy_src, .schema = s->schema, .dv = s->dv,
                        .max_window = s->es ? (int64_t)s->es->max_window : 0, .cedar_ids = s->cedar_ids,
                        .profile = s->box && !s->schema_findings_warn ? &box : NULL, .providers = s->providers,
                        .macros = dw_session_macros(s) };
    if (s->links_path || s->links_given) {
        dw_template_link *links;
        if (s->links_given) s->links_src = *s->links_given;
        else if (read_source(s, s->links_path, &s->links_src, &s->links_text)) return 1;
        if (dw_links_parse(&s->scratch, &s->links_src, &links, &fe.nlinks, &s->diags)) return flush_diags(s);
        fe.links = links;
        fe.links_src = &s->links_src;
    }
    if (s->ngiven_links) {      /* a JSON set's links, then -k's */
        dw_template_link *all = dw_arena_alloc(&s->scratch, (s->ngiven_links + fe.nlinks) * sizeof *all);
        if (!all) { report(s, "%s: error: out of memory", path); return 1; }
        memcpy(all, s->given_links, s->ngiven_links * sizeof *all);
        if (fe.nlinks) memcpy(all + s->ngiven_links, fe.links, fe.nlinks * sizeof *all);
        fe.links = all;
        fe.nlinks += s->ngiven_links;
        if (!fe.links_src) fe.links_src = s->given_links_src;
    }
    dw_fe_stage failed = DW_FE_NONE;
    if (s->policy_ids) {        /* the ids a JSON policy set gives, before linking names the rest */
        failed = dw_front_end_run(&fe, DW_FE_PARSE, &s->diags, NULL);
        for (size_t i = 0; !failed && fe.ps && i < fe.ps->npolicies && i < s->npolicy_ids; i++) fe.ps->policies[i].id = s->policy_ids[i];
    }
    if (!failed) failed = dw_front_end_run(&fe, s->schema_findings_warn ? DW_FE_STRUCTURE : DW_FE_COMPILE, &s->diags, NULL);
    if (s->schema_findings_warn && !failed) {
        /* the reference's replay does not validate (§16): its findings are reported, not fatal */
        size_t first = s->diags.n;
        int step = dw_front_end_step(&fe, &s->diags);
        if (step >= 0) {
            for (size_t i = first; i < s->diags.n; i++)
                if (s->diags.v[i].sev == DW_SEV_ERROR) { s->diags.v[i].sev = DW_SEV_WARNING; s->diags.nerrors--; }
            failed = dw_front_end_run(&fe, DW_FE_COMPILE, &s->diags, NULL);
        } else failed = DW_FE_SCHEMA;
    }
    if (fe.profile && failed == DW_FE_SCHEMA) {
        /* `dwc check` reports the profile's findings beside the temporal
         * validation's, and its first error is the first in the text: so do we */
        dw_front_end_step(&fe, &s->diags);
        diags_by_position(&s->diags, &s->policy_src);
    }
    s->ps = fe.ps;             /* the session owns what was built, even on failure */
    s->macro_lib = fe.lib;
    s->prog = fe.prog;
    fe.ps = NULL; fe.lib = NULL; fe.prog = NULL;
    dw_front_end_free(&fe);    /* the profile's findings (its errors are in s->diags) */
    if (s->prog && !failed) s->prog->box_profile = fe.profile != NULL;   /* it passed DW_FE_PROFILE: an artifact says so */
    if (s->prog && !failed && (s->box || s->no_providers) && s->prog->provider.ncalls) {
        refuse_providers(s);
        failed = DW_FE_COMPILE;
    }
    int rc = flush_diags(s);
    return failed ? 2 : rc;
}

int dw_session_load_schema(dw_session *s, const char *path)
{
    if (strcmp(path, "box") == 0) {
        s->box = true;
        s->schema_src = (dw_source){ "<box actions.cedarschema>", dw_box_actions_schema_text, dw_box_actions_schema_len };
        s->schema = dw_schema_parse(&s->schema_src, &s->diags);
        if (!s->schema || s->diags.nerrors) { flush_diags(s); return 2; }
        return flush_diags(s);
    }
    if (read_source(s, path, &s->schema_src, &s->schema_text)) return 1;
    s->schema = dw_schema_parse(&s->schema_src, &s->diags);
    if (!s->schema || s->diags.nerrors) { flush_diags(s); return 2; }
    return flush_diags(s);
}

int dw_session_load_events(dw_session *s, const char *what)
{
    if (s->dv) { dw_event_derivation_free(s->dv); s->dv = NULL; }
    if (s->es) { dw_event_schema_free(s->es); s->es = NULL; }
    if (!what) what = s->box ? "box" : "default";
    if (dw_event_schema_builtin_text(what)) s->es = dw_event_schema_builtin(what, &s->diags);
    else {
        if (read_source(s, what, &s->events_src, &s->events_text)) return 1;
        s->es = dw_event_schema_parse(&s->events_src, &s->diags);
    }
    if (!s->es || s->diags.nerrors) { flush_diags(s); return 2; }
    s->dv = dw_event_schema_derive(s->es, s->schema, &s->diags);
    if (!s->dv || s->diags.nerrors) { flush_diags(s); return 2; }
    return flush_diags(s);
}

int dw_session_load_entities(dw_session *s, const char *path)
{
    dw_buf err = { 0 };
    int rc = 0;
    if (path) {
        if (read_source(s, path, &s->entities_src, &s->entities_text)) return 1;
        const dw_json *j = dw_json_parse(&s->store.arena, &s->entities_src, &s->diags);
        if (!j) return flush_diags(s) ? 2 : 2;
        if (dw_store_load_json(&s->store, j, s->schema, &err)) {
            report(s, "%s: error: %s", path, err.p ? err.p : "invalid entities");
            rc = 2;
        }
    } else {
        if ((s->schema && dw_store_add_schema_actions(&s->store, s->schema, &err)) || dw_store_seal(&s->store)) {
            report(s, "error: %s", err.p ? err.p : "out of memory");
            rc = 2;
        }
    }
    dw_buf_free(&err);
    s->store_ready = rc == 0;
    return rc;
}

static bool is_ident_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
static bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

const dw_json *dw_uid_json(dw_arena *a, const dw_uid *u)
{
    dw_json *o = dw_arena_alloc(a, sizeof *o);
    dw_json_member *m = dw_arena_alloc(a, 2 * sizeof *m);
    dw_json *t = dw_arena_alloc(a, sizeof *t), *id = dw_arena_alloc(a, sizeof *id);
    if (!o || !m || !t || !id) return NULL;
    t->kind = id->kind = DW_JSON_STRING;
    t->u.str = (dw_str){ u->type, u->tlen };
    id->u.str = (dw_str){ u->id, u->idlen };
    m[0] = (dw_json_member){ { "type", 4 }, t, 0 };
    m[1] = (dw_json_member){ { "id", 2 }, id, 0 };
    o->kind = DW_JSON_OBJECT;
    o->u.obj.v = m;
    o->u.obj.n = 2;
    return o;
}

const dw_uid *dw_uid_from_text(dw_arena *a, const char *t, size_t n)
{
    /* Path ("::" Ident)* "::" '"' id '"' with optional surrounding spaces */
    while (n && (*t == ' ' || *t == '\t')) { t++; n--; }
    while (n && (t[n - 1] == ' ' || t[n - 1] == '\t' || t[n - 1] == '\n')) n--;
    size_t i = 0;
    for (;;) {
        if (i >= n || !is_ident_start(t[i])) return NULL;
        while (i < n && is_ident_char(t[i])) i++;
        if (i + 2 > n || t[i] != ':' || t[i + 1] != ':') return NULL;
        if (i + 2 < n && t[i + 2] == '"') break;
        i += 2;
    }
    size_t tlen = i;
    size_t q = i + 3;
    if (n < q + 1 || t[n - 1] != '"') return NULL;
    dw_str id;
    dw_strlit_err e;
    if (!dw_strlit_decode(a, t + q, n - 1 - q, &id, &e)) return NULL;
    return dw_make_uid(a, t, tlen, id.s, id.len);
}

uint64_t dw_session_schema_digest(const dw_session *s)
{
    if (!s->schema || !s->schema_src.text) return 0;
    uint64_t d = XXH3_64bits(s->schema_src.text, s->schema_src.len);
    return d ? d : 1;   /* 0 means "none" */
}

uint64_t dw_session_events_digest(const dw_session *s)
{
    const dw_source *src = s->es ? s->es->src : dw_event_schema_builtin_source(s->box ? "box" : "default");
    return src ? XXH3_64bits(src->text, src->len) : 0;
}
