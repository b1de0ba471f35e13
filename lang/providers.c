/* providers.c - see providers.h. */
#include "providers.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"

/* dwc's built-in providers (dogwood.md §13.5), declared in the file format
 * itself so they go through the same reader. */
static const char builtin_text[] =
    "{\"availableProviders\": {\n"
    " \"Strings::Matches\": {\"argumentTypes\": [{\"paramType\": \"string\"}, {\"paramType\": \"string\"}],\n"
    "  \"outputType\": {\"paramType\": \"record\", \"fields\": {\"matched\": {\"paramType\": \"bool\"}}, \"required\": [\"matched\"]}},\n"
    " \"Strings::Length\": {\"argumentTypes\": [{\"paramType\": \"string\"}],\n"
    "  \"outputType\": {\"paramType\": \"record\", \"fields\": {\"length\": {\"paramType\": \"long\"}}, \"required\": [\"length\"]}},\n"
    " \"Strings::DigitCount\": {\"argumentTypes\": [{\"paramType\": \"string\"}],\n"
    "  \"outputType\": {\"paramType\": \"record\", \"fields\": {\"count\": {\"paramType\": \"long\"}}, \"required\": [\"count\"]}},\n"
    " \"Regex::Analyze\": {\"argumentTypes\": [{\"paramType\": \"string\"}, {\"paramType\": \"string\"}],\n"
    "  \"outputType\": {\"paramType\": \"record\", \"fields\": {\"is_match\": {\"paramType\": \"bool\"},\n"
    "   \"count\": {\"paramType\": \"long\"}, \"first_match\": {\"paramType\": \"string\"}},\n"
    "   \"required\": [\"is_match\", \"count\", \"first_match\"]}}\n"
    "}}\n";

typedef struct rd {
    dw_providers *p;
    const dw_source *src;
    dw_diags *diags;
    bool builtin;
    size_t cap;
} rd;

static dw_loc at(const rd *r, const dw_json *j) { return dw_loc_at(r->src, j->off, j->end); }

static size_t nerrors(const rd *r) { return r->diags ? r->diags->nerrors : 0; }

#define ERR(r, j, hint, ...) dw_diag_add((r)->diags, DW_SEV_ERROR, (r)->src, at((r), (j)), (hint), __VA_ARGS__)
#define WARN(r, j, hint, ...) dw_diag_add((r)->diags, DW_SEV_WARNING, (r)->src, at((r), (j)), (hint), __VA_ARGS__)

static int attr_cmp(const void *a, const void *b)
{
    const dw_attr_decl *x = a, *y = b;
    size_t n = x->name.len < y->name.len ? x->name.len : y->name.len;
    int c = n ? memcmp(x->name.s, y->name.s, n) : 0;
    return c ? c : (x->name.len > y->name.len) - (x->name.len < y->name.len);
}

/* Only the members a construct knows; others are reported (a typo such as
 * "argumentType" would otherwise silently declare no arguments). */
static void unknown_members(rd *r, const dw_json *o, const char *const *known, const char *what)
{
    for (size_t i = 0; i < o->u.obj.n; i++) {
        const dw_json_member *m = &o->u.obj.v[i];
        bool ok = false;
        for (size_t k = 0; known[k] && !ok; k++) ok = dw_str_is(m->key, known[k]);
        if (!ok) WARN(r, m->value, NULL, "unknown member `%.*s` in %s (ignored)", (int)m->key.len, m->key.s, what);
        for (size_t k = 0; ok && k < i; k++)
            if (dw_str_eq(o->u.obj.v[k].key, m->key)) ERR(r, m->value, NULL, "member `%.*s` is given twice", (int)m->key.len, m->key.s);
    }
}

static dw_type *param_type(rd *r, const dw_json *j, int depth);

static dw_type *new_type(rd *r, dw_type_kind k, const dw_json *j)
{
    dw_type *t = dw_arena_alloc(&r->p->arena, sizeof *t);
    if (!t) return NULL;
    memset(t, 0, sizeof *t);
    t->kind = k;
    t->loc = at(r, j);
    return t;
}

static dw_type *record_type(rd *r, const dw_json *j, int depth)
{
    const dw_json *f = dw_json_get(j, "fields"), *req = dw_json_get(j, "required");
    dw_type *t = new_type(r, DW_T_RECORD, j);
    if (!t) return NULL;
    if (f && f->kind != DW_JSON_OBJECT) { ERR(r, f, NULL, "`fields` must be an object of parameter types"); return t; }
    if (req && req->kind != DW_JSON_ARRAY) { ERR(r, req, NULL, "`required` must be an array of field names"); req = NULL; }
    size_t n = f ? f->u.obj.n : 0;
    t->attrs = n ? dw_arena_alloc(&r->p->arena, n * sizeof *t->attrs) : NULL;
    if (n && !t->attrs) return NULL;
    for (size_t i = 0; i < n; i++) {
        const dw_json_member *m = &f->u.obj.v[i];
        for (size_t k = 0; k < i; k++)
            if (dw_str_eq(f->u.obj.v[k].key, m->key)) ERR(r, m->value, NULL, "field `%.*s` is declared twice", (int)m->key.len, m->key.s);
        dw_type *ft = param_type(r, m->value, depth + 1);
        if (!ft) return NULL;
        t->attrs[t->nattrs++] = (dw_attr_decl){ m->key, ft, false, at(r, m->value) };
    }
    for (size_t i = 0; req && i < req->u.arr.n; i++) {
        const dw_json *q = req->u.arr.v[i];
        if (q->kind != DW_JSON_STRING) { ERR(r, q, NULL, "`required` lists field names (strings)"); continue; }
        size_t k = 0;
        while (k < t->nattrs && !dw_str_eq(t->attrs[k].name, q->u.str)) k++;
        if (k == t->nattrs) ERR(r, q, "list only fields declared under `fields`", "required field `%.*s` is not declared", (int)q->u.str.len, q->u.str.s);
        else t->attrs[k].required = true;
    }
    if (t->nattrs > 1) qsort(t->attrs, t->nattrs, sizeof *t->attrs, attr_cmp);
    return t;
}

/* ParamType (§13.2).  NULL only on OOM. */
static dw_type *param_type(rd *r, const dw_json *j, int depth)
{
    static const char *const known[] = { "paramType", "items", "fields", "required", NULL };
    if (depth > DW_SCHEMA_MAX_DEPTH) { ERR(r, j, NULL, "parameter type nested too deeply"); return new_type(r, DW_T_STRING, j); }
    if (j->kind != DW_JSON_OBJECT) {
        ERR(r, j, "write {\"paramType\": \"string\"}", "a parameter type must be an object with a `paramType`");
        return new_type(r, DW_T_STRING, j);
    }
    unknown_members(r, j, known, "a parameter type");
    const dw_json *pt = dw_json_get(j, "paramType");
    if (!pt || pt->kind != DW_JSON_STRING) {
        ERR(r, pt ? pt : j, "one of string, integer, long, bool, boolean, decimal, set, record", "`paramType` must be a string");
        return new_type(r, DW_T_STRING, j);
    }
    dw_str n = pt->u.str;
    if (dw_str_is(n, "string")) return new_type(r, DW_T_STRING, j);
    if (dw_str_is(n, "integer") || dw_str_is(n, "long")) return new_type(r, DW_T_LONG, j);
    if (dw_str_is(n, "bool") || dw_str_is(n, "boolean")) return new_type(r, DW_T_BOOL, j);
    if (dw_str_is(n, "decimal")) return new_type(r, DW_T_DECIMAL, j);
    if (dw_str_is(n, "record")) return record_type(r, j, depth);
    if (dw_str_is(n, "set")) {
        dw_type *t = new_type(r, DW_T_SET, j);
        if (!t) return NULL;
        const dw_json *it = dw_json_get(j, "items");
        t->elem = it ? param_type(r, it, depth + 1) : new_type(r, DW_T_STRING, j);   /* default string */
        return t->elem ? t : NULL;
    }
    WARN(r, pt, "one of string, integer, long, bool, boolean, decimal, set, record",
         "unknown paramType `%.*s`: taken as string (dogwood.md §13.2)", (int)n.len, n.s);
    return new_type(r, DW_T_STRING, j);
}

/* argumentTypes: an array of ParamType (absent: none). */
static int arg_types(rd *r, const dw_json *o, dw_type ***out, size_t *n)
{
    const dw_json *a = dw_json_get(o, "argumentTypes");
    *out = NULL;
    *n = 0;
    if (!a) return 0;
    if (a->kind != DW_JSON_ARRAY) { ERR(r, a, NULL, "`argumentTypes` must be an array of parameter types"); return 0; }
    if (!a->u.arr.n) return 0;
    *out = dw_arena_alloc(&r->p->arena, a->u.arr.n * sizeof **out);
    if (!*out) return -1;
    for (size_t i = 0; i < a->u.arr.n; i++)
        if (!((*out)[(*n)++] = param_type(r, a->u.arr.v[i], 1))) return -1;
    return 0;
}

static dw_type *out_type(rd *r, const dw_json *o, const dw_json *whole, const char *what, dw_str name)
{
    const dw_json *t = dw_json_get(o, "outputType");
    if (t) return param_type(r, t, 1);
    ERR(r, whole, "add \"outputType\": {\"paramType\": ...}", "%s `%.*s` has no `outputType`", what, (int)name.len, name.s);
    return new_type(r, DW_T_STRING, whole);
}

/* A name of two or more identifiers joined by "::" (§13.1). */
static bool provider_name_ok(dw_str n)
{
    size_t segs = 0, i = 0;
    while (i <= n.len) {
        size_t s = i;
        while (i < n.len && n.s[i] != ':') {
            char c = n.s[i];
            bool ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > s && c >= '0' && c <= '9');
            if (!ok) return false;
            i++;
        }
        if (i == s) return false;
        segs++;
        if (i == n.len) break;
        if (i + 1 >= n.len || n.s[i + 1] != ':') return false;
        i += 2;
        if (i == n.len) return false;
    }
    return segs >= 2;
}

static int read_methods(rd *r, const dw_json *o, dw_provider_decl *d)
{
    static const char *const known[] = { "argumentTypes", "outputType", "inputType", NULL };
    const dw_json *ms = dw_json_get(o, "availableMethods");
    if (!ms) return 0;
    if (ms->kind != DW_JSON_OBJECT) { ERR(r, ms, NULL, "`availableMethods` must be an object of method declarations"); return 0; }
    if (!ms->u.obj.n) return 0;
    d->methods = dw_arena_alloc(&r->p->arena, ms->u.obj.n * sizeof *d->methods);
    if (!d->methods) return -1;
    for (size_t i = 0; i < ms->u.obj.n; i++) {
        const dw_json_member *m = &ms->u.obj.v[i];
        dw_provider_method pm = { .name = m->key, .loc = at(r, m->value) };
        bool ident = m->key.len > 0 && !strchr(m->key.s, ':');
        for (size_t k = 0; ident && k < m->key.len; k++) {
            char c = m->key.s[k];
            ident = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (k && c >= '0' && c <= '9');
        }
        if (!ident) ERR(r, m->value, NULL, "method name `%.*s` of provider `%.*s` is not an identifier", (int)m->key.len, m->key.s, (int)d->name.len, d->name.s);
        else if (dw_is_cedar_method(m->key.s, m->key.len, NULL))
            ERR(r, m->value, "rename the output method: a Cedar method of that name would be called instead",
                "output method `%.*s` of provider `%.*s` shadows the Cedar method of that name", (int)m->key.len, m->key.s,
                (int)d->name.len, d->name.s);
        for (size_t k = 0; k < i; k++)
            if (dw_str_eq(ms->u.obj.v[k].key, m->key)) ERR(r, m->value, NULL, "method `%.*s` is declared twice", (int)m->key.len, m->key.s);
        if (m->value->kind != DW_JSON_OBJECT) { ERR(r, m->value, NULL, "a method declaration must be an object"); continue; }
        unknown_members(r, m->value, known, "a method declaration");
        if (arg_types(r, m->value, &pm.args, &pm.nargs)) return -1;
        if (!(pm.out = out_type(r, m->value, m->value, "method", m->key))) return -1;
        const dw_json *in = dw_json_get(m->value, "inputType");
        if (in && !(pm.input = param_type(r, in, 1))) return -1;
        d->methods[d->nmethods++] = pm;
    }
    return 0;
}

static bool same_types(dw_type *const *a, size_t na, dw_type *const *b, size_t nb)
{
    if (na != nb) return false;
    for (size_t i = 0; i < na; i++) if (!dw_type_equal(a[i], b[i])) return false;
    return true;
}

static int read_doc(rd *r, const dw_json *doc)
{
    static const char *const known[] = { "argumentTypes", "outputType", "availableMethods", "implementation", NULL };
    if (doc->kind != DW_JSON_OBJECT) { ERR(r, doc, NULL, "a provider declaration file is a JSON object with `availableProviders`"); return 0; }
    const dw_json *ap = dw_json_get(doc, "availableProviders");
    if (!ap) { ERR(r, doc, "write {\"availableProviders\": {\"Ns::Fn\": {...}}}", "missing `availableProviders`"); return 0; }
    if (ap->kind != DW_JSON_OBJECT) { ERR(r, ap, NULL, "`availableProviders` must be an object keyed by provider name"); return 0; }
    for (size_t i = 0; i < doc->u.obj.n; i++)
        if (!dw_str_is(doc->u.obj.v[i].key, "availableProviders"))
            WARN(r, doc->u.obj.v[i].value, NULL, "unknown member `%.*s` (ignored)", (int)doc->u.obj.v[i].key.len, doc->u.obj.v[i].key.s);
    for (size_t i = 0; i < ap->u.obj.n; i++) {
        const dw_json_member *m = &ap->u.obj.v[i];
        const dw_json *o = m->value;
        if (!provider_name_ok(m->key)) {
            ERR(r, o, "a provider name has two or more `::`-separated identifiers, e.g. `Strings::Matches`",
                "`%.*s` is not a provider name", (int)m->key.len, m->key.s);
            continue;
        }
        size_t errors0 = nerrors(r);
        dw_provider_decl d = { .name = m->key, .builtin = r->builtin, .loc = at(r, o) };
        if (o->kind != DW_JSON_OBJECT) {
            ERR(r, o, NULL, "the declaration of `%.*s` must be an object", (int)m->key.len, m->key.s);
            if (!(d.out = new_type(r, DW_T_STRING, o))) return -1;   /* kept (broken) so a call names this error only */
        } else {
            unknown_members(r, o, known, "a provider declaration");
            if (arg_types(r, o, &d.args, &d.nargs)) return -1;
            if (!(d.out = out_type(r, o, o, "provider", m->key))) return -1;
            if (read_methods(r, o, &d)) return -1;
        }
        d.broken = nerrors(r) > errors0;
        const dw_json *impl = o->kind == DW_JSON_OBJECT ? dw_json_get(o, "implementation") : NULL;
        if (impl && impl->kind != DW_JSON_OBJECT) ERR(r, impl, NULL, "`implementation` must be an object");
        else if (impl) {
            const dw_json *kind = dw_json_get(impl, "kind");
            if (kind && kind->kind == DW_JSON_STRING && dw_str_is(kind->u.str, "rhai"))
                WARN(r, impl, "register a host callback for it (dw_engine_register_provider) or use a built-in",
                     "the script implementation of `%.*s` is ignored: dwc runs no scripts (dogwood.md §13.5); the "
                     "declaration is used as an interface", (int)m->key.len, m->key.s);
        }
        dw_provider_decl *prev = NULL;
        for (size_t k = 0; k < r->p->n; k++) if (dw_str_eq(r->p->v[k].name, d.name)) prev = &r->p->v[k];
        if (prev && prev->builtin && !r->builtin) {
            if (!d.broken && (!same_types(prev->args, prev->nargs, d.args, d.nargs) || !dw_type_equal(prev->out, d.out) || d.nmethods))
                ERR(r, o, "declare the built-in's own types, or leave the entry out (built-ins need none)",
                    "`%.*s` is a built-in provider (dogwood.md §13.5): its declaration must have the built-in's "
                    "argument and output types and no output methods", (int)m->key.len, m->key.s);
            continue;
        }
        if (prev) { ERR(r, o, NULL, "provider `%.*s` is declared twice", (int)m->key.len, m->key.s); continue; }
        if (r->p->n == r->cap) {
            size_t cap = r->cap ? r->cap * 2 : 8;
            dw_provider_decl *v = dw_arena_alloc(&r->p->arena, cap * sizeof *v);
            if (!v) return -1;
            if (r->p->n) memcpy(v, r->p->v, r->p->n * sizeof *v);
            r->p->v = v;
            r->cap = cap;
        }
        r->p->v[r->p->n++] = d;
    }
    return 0;
}

static int read_text(rd *r, const dw_source *src)
{
    r->src = src;
    dw_json *doc = dw_json_parse(&r->p->arena, src, r->diags);
    if (!doc) return 1;
    return read_doc(r, doc) ? -1 : 0;
}

static const dw_source builtin_src = { "<built-in providers>", builtin_text, sizeof builtin_text - 1 };

dw_providers *dw_providers_parse(const dw_source *src, dw_diags *diags)
{
    dw_providers *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    dw_arena_init(&p->arena, 16 * 1024);
    rd r = { .p = p, .diags = diags, .builtin = true };
    dw_diags quiet;
    dw_diags_init(&quiet);
    r.diags = &quiet;
    int rc = read_text(&r, &builtin_src);
    dw_diags_free(&quiet);
    r.diags = diags;
    r.builtin = false;
    if (!rc && src) rc = read_text(&r, src);
    p->src = src;
    if (rc) { dw_providers_free(p); return NULL; }
    return p;
}

void dw_providers_free(dw_providers *p)
{
    if (!p) return;
    dw_arena_free(&p->arena);
    free(p);
}

static dw_providers *builtins;
static void make_builtins(void) { builtins = dw_providers_parse(NULL, NULL); }

const dw_providers *dw_providers_builtins(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, make_builtins);
    return builtins;
}

const dw_provider_decl *dw_providers_find(const dw_providers *p, const char *name, size_t len)
{
    if (!p) p = dw_providers_builtins();
    for (size_t i = 0; p && i < p->n; i++)
        if (p->v[i].name.len == len && memcmp(p->v[i].name.s, name, len) == 0) return &p->v[i];
    return NULL;
}

const dw_provider_method *dw_provider_method_find(const dw_provider_decl *d, const char *name, size_t len)
{
    for (size_t i = 0; d && i < d->nmethods; i++)
        if (d->methods[i].name.len == len && memcmp(d->methods[i].name.s, name, len) == 0) return &d->methods[i];
    return NULL;
}
