/* provcheck.c - see provcheck.h.  The reference's wording (dogwood.md
 * §13.4) is kept where it has one. */
#include "provcheck.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../stdlib/cedar_quote.h"
#include "../stdlib/regex.h"

bool dw_is_provider_chain(const dw_expr *e)
{
    while (e && e->kind == DW_E_METHOD && !dw_is_cedar_method(e->u.call.name.s, e->u.call.name.len, NULL))
        e = e->u.call.recv;
    return e && e->kind == DW_E_CALL && e->u.call.nsegs >= 2;
}

static bool literal_form(const dw_expr *a, bool in_set)
{
    switch (a->kind) {
    case DW_E_STRING: case DW_E_LONG: case DW_E_BOOL: return true;
    case DW_E_CALL:
        return a->u.call.nsegs == 1 && dw_str_is(a->u.call.name, "decimal") && a->u.call.nargs == 1 &&
               a->u.call.args[0]->kind == DW_E_STRING;
    case DW_E_SET:
        if (in_set) return false;
        for (size_t i = 0; i < a->u.list.n; i++) if (!literal_form(a->u.list.v[i], true)) return false;
        return true;
    default: return false;
    }
}

/* The root variable of an attribute path and its length, or -1. */
static int path_root(const dw_expr *a, size_t *nsegs)
{
    size_t n = 0;
    while (a->kind == DW_E_GETATTR) { n++; a = a->u.attr.kids0; }
    *nsegs = n;
    if (a->kind != DW_E_VAR) return -1;
    return (int)a->u.var;
}

const char *dw_provider_arg_form_error(const dw_expr *a)
{
    if (literal_form(a, false)) return NULL;
    size_t n;
    int root = path_root(a, &n);
    if (root == DW_VAR_PRINCIPAL || root == DW_VAR_RESOURCE || (root == DW_VAR_CONTEXT && n > 0)) return NULL;
    if (root == DW_VAR_CONTEXT) return "the whole context cannot be passed; name an attribute path";
    if (root == DW_VAR_ACTION) return "an attribute path must be rooted at context, principal or resource, not action";
    return "arguments are attribute paths rooted at context, principal or resource, or string, integer, "
           "decimal(\"...\") or bool literals, or sets of those (dogwood.md §13.3)";
}

/* ---- messages ---- */

typedef struct pc { const dw_pcheck_env *env; dw_str name; bool bad; } pc;

static void say(pc *P, dw_loc loc, const char *hint, const char *f, ...) __attribute__((format(printf, 4, 5)));
static void say(pc *P, dw_loc loc, const char *hint, const char *f, ...)
{
    char *msg = NULL;
    va_list ap;
    va_start(ap, f);
    int n = vasprintf(&msg, f, ap);
    va_end(ap);
    P->bad = true;
    if (n < 0) return;
    P->env->report(P->env->ctx, loc, hint, msg);
    free(msg);
}

static char *type_text(const dw_type *t)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    if (!f) return NULL;
    if (t) dw_type_print(f, t);
    else fputs("(unknown)", f);
    fclose(f);
    return s;
}

/* `Ns::Action::"id"`, the id quoted as Cedar writes it. */
static char *action_text(const dw_action_decl *a)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    if (!f) return NULL;
    fprintf(f, "%.*s::", (int)a->uid.type.len, a->uid.type.s);
    dw_cedar_quote_file(f, a->uid.id.s, a->uid.id.len);
    fclose(f);
    return s;
}

static char *path_str(const dw_expr *a)
{
    static const char *names[] = { "principal", "action", "resource", "context" };
    const dw_expr *chain[DW_MAX_EXPR_DEPTH + 2];
    size_t n = 0;
    while (a->kind == DW_E_GETATTR && n < DW_MAX_EXPR_DEPTH) { chain[n++] = a; a = a->u.attr.kids0; }
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (!f) return NULL;
    fputs(a->kind == DW_E_VAR ? names[a->u.var] : "?", f);
    for (size_t i = n; i-- > 0;) fprintf(f, ".%.*s", (int)chain[i]->u.attr.attr.len, chain[i]->u.attr.attr.s);
    fclose(f);
    return s;
}

/* ---- arguments ---- */

static bool literal_matches(const dw_expr *a, const dw_type *t)
{
    switch (a->kind) {
    case DW_E_STRING: return t->kind == DW_T_STRING;
    case DW_E_LONG: return t->kind == DW_T_LONG;
    case DW_E_BOOL: return t->kind == DW_T_BOOL;
    case DW_E_CALL: return t->kind == DW_T_DECIMAL;
    case DW_E_SET:
        if (t->kind != DW_T_SET) return false;
        for (size_t i = 0; i < a->u.list.n; i++) if (!literal_matches(a->u.list.v[i], t->elem)) return false;
        return true;
    default: return false;
    }
}

static const dw_attr_decl *find_attr(const dw_type *rec, dw_str name)
{
    for (size_t i = 0; rec && rec->kind == DW_T_RECORD && i < rec->nattrs; i++)
        if (dw_str_eq(rec->attrs[i].name, name)) return &rec->attrs[i];
    return NULL;
}

/* The type of a path argument in the environment, or NULL after reporting. */
static const dw_type *path_type(pc *P, const dw_expr *a, size_t argno)
{
    const dw_pcheck_env *env = P->env;
    const dw_expr *chain[DW_MAX_EXPR_DEPTH + 2];
    size_t n = 0;
    const dw_expr *r = a;
    while (r->kind == DW_E_GETATTR && n < DW_MAX_EXPR_DEPTH) { chain[n++] = r; r = r->u.attr.kids0; }
    const dw_type *t = r->u.var == DW_VAR_CONTEXT ? env->ctxtype : r->u.var == DW_VAR_PRINCIPAL ? env->ptype : env->rtype;
    static const dw_type T_STRING = { .kind = DW_T_STRING };
    for (size_t i = n; t && i-- > 0;) {
        dw_str seg = chain[i]->u.attr.attr;
        const dw_type *rec = t;
        if (t->kind == DW_T_ENTITY) {
            const dw_entity_decl *d = env->schema ? dw_schema_entity(env->schema, t->name.s, t->name.len) : NULL;
            rec = d ? d->shape : NULL;
        }
        const dw_attr_decl *ad = find_attr(rec, seg);
        if (!ad && t->kind == DW_T_ENTITY && i + 1 == n && (dw_str_is(seg, "id") || dw_str_is(seg, "type")) && i == 0) {
            t = &T_STRING;     /* the uid's parts (§13.3) */
            continue;
        }
        if (!ad) {
            char *ps = path_str(a), *an = env->act ? action_text(env->act) : NULL;
            if (r->u.var == DW_VAR_CONTEXT)
                say(P, a->loc, "declare the attribute in that action's context, or narrow the rule's action scope",
                    "provider `%.*s`: argument `%s` is not present in the context of action `%s`", (int)P->name.len,
                    P->name.s, ps ? ps : "?", an ? an : "?");
            else
                say(P, a->loc, NULL, "provider `%.*s`: argument `%s` is not an attribute of `%.*s` (argument %zu)",
                    (int)P->name.len, P->name.s, ps ? ps : "?", (int)t->name.len, t->name.s, argno);
            free(ps);
            free(an);
            return NULL;
        }
        t = ad->type;
    }
    return t;
}

/* Check one step's arguments against its declared types. */
static void check_args(pc *P, const char *what, dw_str mname, dw_expr *const *args, size_t nargs, dw_type *const *want,
                       size_t nwant, dw_loc loc)
{
    if (nargs != nwant) {
        say(P, loc, NULL, "provider `%.*s`%s%.*s%s: expected %zu argument%s, got %zu", (int)P->name.len, P->name.s,
            what, (int)mname.len, mname.s, mname.len ? "`" : "", nwant, nwant == 1 ? "" : "s", nargs);
    }
    for (size_t i = 0; i < nargs; i++) {
        const dw_expr *a = args[i];
        const char *form = dw_provider_arg_form_error(a);
        if (form) {
            say(P, a->loc, "pass an attribute path such as `context.input.text`, or a literal",
                "provider `%.*s`: argument %zu is not allowed: %s", (int)P->name.len, P->name.s, i + 1, form);
            continue;
        }
        if (i >= nwant) continue;
        const dw_type *w = want[i];
        if (literal_form(a, false)) {
            if (!literal_matches(a, w)) {
                char *ws = type_text(w);
                say(P, a->loc, NULL, "provider `%.*s`: argument %zu does not match its declared type %s", (int)P->name.len,
                    P->name.s, i + 1, ws ? ws : "?");
                free(ws);
            }
            continue;
        }
        const dw_type *t = path_type(P, a, i + 1);
        if (!t) continue;
        /* an entity passes where a string is declared (the uid, §13.3) */
        if (!dw_type_equal(t, w) && !(t->kind == DW_T_ENTITY && w->kind == DW_T_STRING)) {
            char *ps = path_str(a), *ts = type_text(t), *ws = type_text(w), *an = P->env->act ? action_text(P->env->act) : NULL;
            say(P, a->loc, NULL, "provider `%.*s`: argument `%s` has type %s in the context of action `%s`, but the provider declares %s",
                (int)P->name.len, P->name.s, ps ? ps : "?", ts ? ts : "?", an ? an : "?", ws ? ws : "?");
            free(ps); free(ts); free(ws); free(an);
        }
    }
}

/* policy_<digits><mid><digits> */
static bool hoisted(dw_str a, const char *mid)
{
    size_t i = 7, ml = strlen(mid);
    if (a.len < 7 || memcmp(a.s, "policy_", 7)) return false;
    size_t d = i;
    while (i < a.len && a.s[i] >= '0' && a.s[i] <= '9') i++;
    if (i == d || a.len - i < ml || memcmp(a.s + i, mid, ml)) return false;
    i += ml;
    d = i;
    while (i < a.len && a.s[i] >= '0' && a.s[i] <= '9') i++;
    return i > d && i == a.len;
}

static bool is_context_var(const dw_expr *o) { return o->kind == DW_E_VAR && o->u.var == DW_VAR_CONTEXT; }

bool dw_reads_hoisted_name(const dw_expr *e)
{
    if (e->kind == DW_E_HAS_PATH) {     /* its first two steps: `context has __temporal_…`, `context has providers.policy_…` */
        const dw_expr *o = e->u.path.kids0;
        const dw_str *a = e->u.path.attrs;
        if (is_context_var(o))
            return hoisted(a[0], "__temporal_") || (dw_str_is(a[0], "providers") && hoisted(a[1], "_p_"));
        return o->kind == DW_E_GETATTR && dw_str_is(o->u.attr.attr, "providers") && is_context_var(o->u.attr.kids0) &&
               hoisted(a[0], "_p_");
    }
    if (e->kind != DW_E_GETATTR && e->kind != DW_E_HAS) return false;
    const dw_expr *o = e->u.attr.kids0;
    bool on_context = o->kind == DW_E_VAR && o->u.var == DW_VAR_CONTEXT;
    if (on_context) return hoisted(e->u.attr.attr, "__temporal_");
    return o->kind == DW_E_GETATTR && dw_str_is(o->u.attr.attr, "providers") && o->u.attr.kids0->kind == DW_E_VAR &&
           o->u.attr.kids0->u.var == DW_VAR_CONTEXT && hoisted(e->u.attr.attr, "_p_");
}

static size_t hoisted_reads(const dw_policy_set *ps, const dw_expr *e, dw_diags *d)
{
    size_t n = 0;
    if (dw_reads_hoisted_name(e)) {
        dw_error_hint(d, ps->src, e->loc, DW_HOISTED_READ_HINT, "%s", DW_HOISTED_READ_MSG);
        n++;
    }
    const dw_expr *k;
    for (size_t i = 0; (k = dw_expr_kid_c(e, i)); i++) n += hoisted_reads(ps, k, d);   /* depth <= DW_MAX_EXPR_DEPTH */
    return n;
}

bool dw_expr_hoists(const dw_expr *e)
{
    if (e->kind == DW_E_TEMPORAL || (e->kind == DW_E_CALL && e->u.call.nsegs >= 2) ||
        (e->kind == DW_E_METHOD && !dw_is_cedar_method(e->u.call.name.s, e->u.call.name.len, NULL)))
        return true;
    const dw_expr *k;
    for (size_t i = 0; (k = dw_expr_kid_c(e, i)); i++)
        if (dw_expr_hoists(k)) return true;
    return false;
}

bool dw_set_hoists(const dw_policy_set *ps)
{
    const dw_policy *sets[2] = { ps->policies, ps->templates };
    size_t counts[2] = { ps->npolicies, ps->ntemplates };
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < counts[s]; i++)
            for (size_t c = 0; c < sets[s][i].nclauses; c++)
                if (sets[s][i].clauses[c].body && dw_expr_hoists(sets[s][i].clauses[c].body)) return true;
    return false;
}

size_t dw_report_hoisted_reads(const dw_policy_set *ps, dw_diags *d)
{
    size_t n = 0;
    const dw_policy *sets[2] = { ps->policies, ps->templates };
    size_t counts[2] = { ps->npolicies, ps->ntemplates };
    /* A set that hoists nothing is plain Cedar, validated as Cedar validates
     * it: dwc's own lowering reads these names (dwc dogwood lower's output,
     * which tests/dogwood_ref/lower.js validates with dwc and Cedar). */
    if (!dw_set_hoists(ps)) return 0;
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < counts[s]; i++)
            for (size_t c = 0; c < sets[s][i].nclauses; c++)
                if (sets[s][i].clauses[c].body) n += hoisted_reads(ps, sets[s][i].clauses[c].body, d);
    return n;
}

const dw_expr *dw_provider_pattern_error(const dw_provider_decl *d, const dw_expr *call, char *err, size_t cap)
{
    if (!d->builtin || call->u.call.nargs != 2 || call->u.call.args[1]->kind != DW_E_STRING ||
        !(dw_str_is(d->name, "Strings::Matches") || dw_str_is(d->name, "Regex::Analyze")))
        return NULL;
    const dw_expr *pat = call->u.call.args[1];
    dw_regex *re = dw_regex_compile(pat->u.str.s, pat->u.str.len, err, cap);
    dw_regex_free(re);
    return re ? NULL : pat;
}

const dw_type *dw_provider_chain_type(const dw_pcheck_env *env, const dw_expr *e)
{
    const dw_expr *steps[64];
    size_t n = 0;
    while (e->kind == DW_E_METHOD && n < 63) { steps[n++] = e; e = e->u.call.recv; }
    if (e->kind == DW_E_METHOD) {
        env->report(env->ctx, e->loc, NULL, "provider output-method chain is too long (at most 63 methods)");
        return NULL;
    }
    steps[n++] = e;     /* steps[n-1] is the call, steps[0] the last method */
    pc P = { env, e->u.call.name, false };
#ifdef DW_NO_PROVIDERS
    say(&P, e->u.call.name_loc, "this dwc was built with providers switched off (make PROVIDERS=0)",
        "information providers are not enabled in this build: the policy calls `%.*s`", (int)P.name.len, P.name.s);
    return NULL;
#endif
    const dw_provider_decl *d = dw_providers_find(env->decls, e->u.call.name.s, e->u.call.name.len);
    if (!d) {
        say(&P, e->u.call.name_loc, "declare it in the provider declarations (--providers FILE), or use a built-in provider",
            "provider `%.*s` is not present in the provider declarations", (int)P.name.len, P.name.s);
        return NULL;
    }
    if (d->broken) return NULL;   /* its entry's errors are the findings: its stand-in types would add a wrong one */
    dw_str none = { "", 0 };
    check_args(&P, "", none, e->u.call.args, e->u.call.nargs, d->args, d->nargs, e->loc);
    char perr[160];
    const dw_expr *pat = dw_provider_pattern_error(d, e, perr, sizeof perr);
    if (pat) say(&P, pat->loc, "the pattern is a POSIX extended regular expression", "provider `%.*s`: invalid pattern: %s",
                 (int)P.name.len, P.name.s, perr);
    const dw_type *out = d->out;
    for (size_t s = n - 1; s-- > 0;) {
        const dw_expr *m = steps[s];
        dw_str mn = m->u.call.name;
        const dw_provider_method *pm = dw_provider_method_find(d, mn.s, mn.len);
        if (!pm) {
            say(&P, m->u.call.name_loc, "declare it under the provider's `availableMethods`",
                "provider `%.*s` has no output method `%.*s`", (int)P.name.len, P.name.s, (int)mn.len, mn.s);
            return NULL;
        }
        check_args(&P, ": output method `", mn, m->u.call.args, m->u.call.nargs, pm->args, pm->nargs, m->loc);
        if (pm->input && !dw_type_equal(pm->input, out)) {
            char *is = type_text(pm->input), *os = type_text(out);
            say(&P, m->u.call.name_loc, NULL, "provider `%.*s`: output method `%.*s` takes input %s but receives %s",
                (int)P.name.len, P.name.s, (int)mn.len, mn.s, is ? is : "?", os ? os : "?");
            free(is); free(os);
        }
        out = pm->out;
    }
    return P.bad ? NULL : out;
}
