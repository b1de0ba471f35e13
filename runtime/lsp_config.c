/* lsp_config.c - what the server checks against: the action schema (a
 * file, or `box` for Box's built-in one and its profile), the event
 * schema, the operator home and disabled rules, as `dwc check` takes them
 * on its command line.  Read from the first dwc.toml or .dwcrc found from
 * the workspace root upwards, then initializationOptions on top (the
 * editor's settings win).  Both use the same keys:
 *
 *   schema = "box"            # or a .cedarschema / JSON schema file
 *   events = "events.dwschema"   # or a built-in name; needs a schema
 *   profile = "box"           # the Box profile with a schema of your own
 *   home = "/home/agent"
 *   disable = ["dw-empty-string"]
 *   debounce_ms = 50
 *   line_width = 80           # dwc format's, for textDocument/formatting
 *   indent_width = 2
 *
 * The files' syntax is the TOML subset these need (strings, booleans,
 * integers, one-line arrays of strings, `#` comments; keys at the top or
 * under [lsp] or [check]).  Relative paths are relative to the file, or to
 * the workspace root for initializationOptions. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include "../compiler/macros.h"
#include "check_filter.h"
#include "lsp_int.h"

void dw_lsp_config_free(dw_lsp_config *c)
{
    free(c->schema);
    free(c->events);
    free(c->home);
    for (size_t i = 0; i < c->ndisable; i++) free(c->disable[i]);
    free(c->disable);
    free(c->file);
    *c = (dw_lsp_config){ .debounce_ms = DW_LSP_DEFAULT_DEBOUNCE_MS };
}

/* dir/name, or name when it is absolute or dir is NULL (heap) */
static char *join_path(const char *dir, const char *name, size_t n)
{
    char *out;
    if (name[0] == '/' || !dir) out = strndup(name, n);
    else if (asprintf(&out, "%s/%.*s", dir, (int)n, name) < 0) out = NULL;
    return out;
}

/* A setting's value, from either source. */
typedef struct setting {
    enum { V_STR, V_BOOL, V_INT, V_LIST } kind;
    const char *s; size_t n;          /* V_STR */
    bool b; long long i;              /* V_BOOL, V_INT */
    dw_str *list; size_t nlist;       /* V_LIST */
} setting;

static int set_str(char **dst, const setting *v, const char *base, bool path, const char *key, char *err, size_t cap)
{
    if (v->kind != V_STR || memchr(v->s, 0, v->n)) { snprintf(err, cap, "`%s` must be a string", key); return -1; }
    free(*dst);
    bool builtin = !path || (v->n == 3 && !memcmp(v->s, "box", 3)) || !v->n;
    *dst = builtin ? strndup(v->s, v->n) : join_path(base, v->s, v->n);
    if (!*dst) { snprintf(err, cap, "out of memory"); return -1; }
    return 0;
}

/* Apply one key.  base: the directory relative paths start from. */
static int apply(dw_lsp_config *c, const char *key, size_t kn, const setting *v, const char *base, char *err, size_t cap)
{
    char k[40];
    snprintf(k, sizeof k, "%.*s", (int)(kn < 39 ? kn : 39), key);
    if (!strcmp(k, "schema")) return set_str(&c->schema, v, base, true, k, err, cap);
    if (!strcmp(k, "events")) {
        /* a built-in event schema name stays a name (load.c tells them apart) */
        bool name = v->kind == V_STR && v->n && !memchr(v->s, '/', v->n) && !memchr(v->s, '.', v->n);
        return set_str(&c->events, v, base, !name, k, err, cap);
    }
    if (!strcmp(k, "home")) return set_str(&c->home, v, base, true, k, err, cap);
    if (!strcmp(k, "profile")) {
        if (v->kind != V_STR || !((v->n == 3 && !memcmp(v->s, "box", 3)) || (v->n == 4 && !memcmp(v->s, "none", 4)))) {
            snprintf(err, cap, "`profile` is \"box\" or \"none\"");
            return -1;
        }
        c->box = v->n == 3;
        return 0;
    }
    if (!strcmp(k, "debounce_ms") || !strcmp(k, "debounceMs")) {
        if (v->kind != V_INT || v->i < 0 || v->i > 10000) { snprintf(err, cap, "`%s` is a number of milliseconds, 0 to 10000", k); return -1; }
        c->debounce_ms = v->i;
        return 0;
    }
    if (!strcmp(k, "line_width") || !strcmp(k, "indent_width")) {
        if (v->kind != V_INT || v->i < 1 || v->i > 1000) { snprintf(err, cap, "`%s` is a number of columns, 1 to 1000", k); return -1; }
        if (k[0] == 'l') c->line_width = (size_t)v->i;
        else c->indent_width = (int)v->i;
        return 0;
    }
    if (!strcmp(k, "disable")) {
        if (v->kind != V_LIST) { snprintf(err, cap, "`disable` is a list of rule ids"); return -1; }
        for (size_t i = 0; i < c->ndisable; i++) free(c->disable[i]);
        free(c->disable);
        c->ndisable = 0;
        c->disable = calloc(v->nlist + 1, sizeof *c->disable);
        if (!c->disable) { snprintf(err, cap, "out of memory"); return -1; }
        for (size_t i = 0; i < v->nlist; i++) {
            if (!dw_check_rule_known(v->list[i].s, v->list[i].len)) {
                snprintf(err, cap, "`disable`: no rule is named `%.*s`", (int)(v->list[i].len > 60 ? 60 : v->list[i].len), v->list[i].s);
                return -1;
            }
            if (!(c->disable[c->ndisable++] = strndup(v->list[i].s, v->list[i].len))) { snprintf(err, cap, "out of memory"); return -1; }
        }
        return 0;
    }
    if (!strcmp(k, "path")) return 0;   /* the client's own: which dwc to start */
    snprintf(err, cap, "unknown setting `%s` (schema, events, profile, home, disable, debounce_ms, line_width, indent_width)", k);
    return -1;
}

/* ---- the file: a TOML subset ---- */

static const char *skip_blank(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
    return p;
}

/* A quoted string at p: "basic" (\" \\ \n \t escapes) or 'literal', decoded into a.  NULL if malformed. */
static const char *read_string(dw_arena *a, const char *p, const char *e, dw_str *out)
{
    char q = *p++;
    char *o = dw_arena_alloc(a, (size_t)(e - p) + 1);
    if (!o) return NULL;
    size_t n = 0;
    while (p < e && *p != q) {
        if (q == '"' && *p == '\\' && p + 1 < e) {
            p++;
            o[n++] = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
            p++;
        } else o[n++] = *p++;
    }
    if (p >= e) return NULL;
    *out = (dw_str){ o, n };
    return p + 1;
}

static const char *read_value(dw_arena *a, const char *p, const char *e, setting *v)
{
    memset(v, 0, sizeof *v);
    if (p < e && (*p == '"' || *p == '\'')) {
        dw_str s;
        if (!(p = read_string(a, p, e, &s))) return NULL;
        v->kind = V_STR; v->s = s.s; v->n = s.len;
        return p;
    }
    if (p < e && *p == '[') {
        v->kind = V_LIST;
        v->list = dw_arena_alloc(a, (size_t)(e - p) * sizeof *v->list);
        if (!v->list) return NULL;
        p = skip_blank(p + 1, e);
        while (p < e && *p != ']') {
            if (*p != '"' && *p != '\'') return NULL;
            if (!(p = read_string(a, p, e, &v->list[v->nlist++]))) return NULL;
            p = skip_blank(p, e);
            if (p < e && *p == ',') p = skip_blank(p + 1, e);
        }
        return p < e ? p + 1 : NULL;
    }
    if (e - p >= 4 && !memcmp(p, "true", 4)) { v->kind = V_BOOL; v->b = true; return p + 4; }
    if (e - p >= 5 && !memcmp(p, "false", 5)) { v->kind = V_BOOL; return p + 5; }
    if (p < e && *p >= '0' && *p <= '9') {
        v->kind = V_INT;
        while (p < e && *p >= '0' && *p <= '9') { if (v->i < 100000000) v->i = v->i * 10 + (*p - '0'); p++; }
        return p;
    }
    return NULL;
}

static int read_file_config(dw_lsp_config *c, const char *path, char *err, size_t cap)
{
    char *text;
    size_t len;
    if (dw_read_file(path, &text, &len)) { snprintf(err, cap, "%s: cannot read: %s", path, strerror(errno)); return -1; }
    char *dir = strdup(path);
    if (!dir) { free(text); snprintf(err, cap, "out of memory"); return -1; }
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    dw_arena a;
    dw_arena_init(&a, 4096);
    int rc = 0;
    bool in_section = true;   /* the top level counts */
    const char *p = text, *end = text + len;
    for (unsigned line = 1; p < end && !rc; line++) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e) e = end;
        const char *q = skip_blank(p, e);
        char m[300] = "";
        if (q == e || *q == '#') { /* blank or comment */ }
        else if (*q == '[') {
            const char *r = memchr(q, ']', (size_t)(e - q));
            if (!r) snprintf(m, sizeof m, "a section header needs `]`");
            else {
                size_t n = (size_t)(r - q - 1);
                in_section = (n == 3 && !memcmp(q + 1, "lsp", 3)) || (n == 5 && !memcmp(q + 1, "check", 5));
            }
        } else {
            const char *k = q;
            while (q < e && (*q == '_' || *q == '-' || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9'))) q++;
            size_t kn = (size_t)(q - k);
            q = skip_blank(q, e);
            setting v;
            if (!kn || q == e || *q != '=') snprintf(m, sizeof m, "expected `key = value`");
            else if (!(q = read_value(&a, skip_blank(q + 1, e), e, &v))) snprintf(m, sizeof m, "the value is not a string, boolean, integer or list of strings");
            else if ((q = skip_blank(q, e)) < e && *q != '#') snprintf(m, sizeof m, "unexpected text after the value");
            else if (in_section) apply(c, k, kn, &v, dir, m, sizeof m);
        }
        if (m[0]) { snprintf(err, cap, "%s:%u: %s", path, line, m); rc = -1; }
        p = e < end ? e + 1 : end;
    }
    dw_arena_free(&a);
    free(dir);
    free(text);
    return rc;
}

/* the first dwc.toml or .dwcrc from dir upwards (heap), or NULL */
static char *find_config(const char *dir)
{
    char *d = strdup(dir);
    while (d) {
        static const char *const names[] = { "dwc.toml", ".dwcrc" };
        for (size_t i = 0; i < 2; i++) {
            char *p = join_path(d, names[i], strlen(names[i]));
            struct stat st;
            if (p && stat(p, &st) == 0 && S_ISREG(st.st_mode)) { free(d); return p; }
            free(p);
        }
        char *slash = strrchr(d, '/');
        if (!slash || slash == d) break;
        *slash = 0;
    }
    free(d);
    return NULL;
}

/* ---- initializationOptions ---- */

static int read_init_options(dw_lsp_config *c, dw_arena *a, const dw_json *o, const char *base, char *err, size_t cap)
{
    for (size_t i = 0; i < o->u.obj.n; i++) {
        const dw_json_member *m = &o->u.obj.v[i];
        const dw_json *j = m->value;
        setting v = { 0 };
        if (j->kind == DW_JSON_NULL) continue;
        if (j->kind == DW_JSON_STRING) { v.kind = V_STR; v.s = j->u.str.s; v.n = j->u.str.len; }
        else if (j->kind == DW_JSON_BOOL) { v.kind = V_BOOL; v.b = j->u.b; }
        else if (j->kind == DW_JSON_INT) { v.kind = V_INT; v.i = j->u.i; }
        else if (j->kind == DW_JSON_ARRAY) {
            v.kind = V_LIST;
            v.list = dw_arena_alloc(a, (j->u.arr.n + 1) * sizeof *v.list);
            if (!v.list) { snprintf(err, cap, "out of memory"); return -1; }
            for (size_t k = 0; k < j->u.arr.n; k++) {
                if (j->u.arr.v[k]->kind != DW_JSON_STRING) { snprintf(err, cap, "initializationOptions.%.*s: a list of strings", (int)m->key.len, m->key.s); return -1; }
                v.list[v.nlist++] = j->u.arr.v[k]->u.str;
            }
        } else { v.kind = V_LIST; v.nlist = 0; }
        char m2[300] = "";
        if (apply(c, m->key.s, m->key.len, &v, base, m2, sizeof m2)) { snprintf(err, cap, "initializationOptions: %s", m2); return -1; }
    }
    return 0;
}

/* ---- loading ---- */

void dw_lsp_configure(dw_lsp *s)
{
    dw_lsp_config_free(&s->cfg);
    dw_session_free(&s->sess);
    dw_session_init(&s->sess);
    s->sess.quiet = true;
    s->sess_ok = false;
    s->config_error[0] = 0;
    char *cwd = s->root ? NULL : getcwd(NULL, 0);
    const char *base = s->root ? s->root : cwd;
    char *err = s->config_error;
    size_t cap = sizeof s->config_error;
    int rc = 0;
    if (base && (s->cfg.file = find_config(base))) rc = read_file_config(&s->cfg, s->cfg.file, err, cap);
    if (!rc && s->init_options) {
        dw_arena a;
        dw_arena_init(&a, 1024);
        rc = read_init_options(&s->cfg, &a, s->init_options, base, err, cap);
        dw_arena_free(&a);
    }
    free(cwd);
    if (!rc && s->cfg.events && !s->cfg.schema) { snprintf(err, cap, "`events` needs a `schema` (as dwc check's --events needs -s)"); rc = -1; }
    if (!rc && s->cfg.schema) {
        if (dw_session_load_schema(&s->sess, s->cfg.schema) || dw_session_load_events(&s->sess, s->cfg.events)) {
            snprintf(err, cap, "the schema did not load: %s", s->sess.first_error[0] ? s->sess.first_error : s->cfg.schema);
            rc = -1;
        }
        if (s->sess.box) s->cfg.box = true;
    }
    s->sess_ok = !rc;
    if (rc) {
        char m[700];
        snprintf(m, sizeof m, "dwc lsp: %s", err);
        dw_lsp_show(s, 1, m);
    }
}

bool dw_lsp_config_uses(const dw_lsp *s, const char *path)
{
    const char *const mine[] = { s->cfg.file, s->cfg.schema, s->cfg.events };
    for (size_t i = 0; i < 3; i++)
        if (mine[i] && !strcmp(mine[i], path)) return true;
    /* a config file appearing where none was */
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    return !s->cfg.file && (!strcmp(b, "dwc.toml") || !strcmp(b, ".dwcrc"));
}

/* Texts built into dwc (Box's schema, the standard macro library) are
 * written once to the user's cache, named by their digest, so an editor can
 * open a definition in them.  NULL when there is no cache to write. */
static char *cache_file(const char *stem, const char *ext, const char *text, size_t len)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char *dir;
    if (xdg && xdg[0] == '/') { if (asprintf(&dir, "%s/dwc", xdg) < 0) return NULL; }
    else if (home && home[0] == '/') { if (asprintf(&dir, "%s/.cache/dwc", home) < 0) return NULL; }
    else return NULL;
    char *parent = strdup(dir);
    if (parent) { char *sl = strrchr(parent, '/'); if (sl && sl != parent) { *sl = 0; mkdir(parent, 0755); } }
    free(parent);
    mkdir(dir, 0755);
    char *path = NULL, *tmp = NULL;
    if (asprintf(&path, "%s/%s-%016llx.%s", dir, stem, (unsigned long long)XXH3_64bits(text, len), ext) < 0) path = NULL;
    struct stat st;
    if (path && !(stat(path, &st) == 0 && (size_t)st.st_size == len)) {
        FILE *f = NULL;
        bool ok = false;
        if (asprintf(&tmp, "%s.%ld.tmp", path, (long)getpid()) < 0) tmp = NULL;
        if (tmp && (f = fopen(tmp, "w"))) {
            ok = fwrite(text, 1, len, f) == len;
            ok = fclose(f) == 0 && ok;
            ok = ok && rename(tmp, path) == 0;
            if (!ok) unlink(tmp);
        }
        if (!ok) { free(path); path = NULL; }
    }
    free(tmp);
    free(dir);
    return path;
}

const char *dw_lsp_schema_file(dw_lsp *s)
{
    if (!s->sess_ok || !s->sess.schema) return NULL;
    if (!s->sess.box) return s->cfg.schema;
    if (!s->box_schema_file) s->box_schema_file = cache_file("box_actions", "cedarschema", dw_box_actions_schema_text, dw_box_actions_schema_len);
    return s->box_schema_file;
}

const dw_policy_set *dw_lsp_stdlib(dw_lsp *s)
{
    if (!s->stdlib) {
        dw_diags d;
        dw_diags_init(&d);
        s->stdlib_src = (dw_source){ "<standard macro library>", dw_stdlib_macros_text, dw_stdlib_macros_len };
        s->stdlib = dw_macro_library_parse(&s->stdlib_src, &d);
        dw_diags_free(&d);
    }
    return s->stdlib;
}

const char *dw_lsp_stdlib_file(dw_lsp *s)
{
    if (!s->stdlib_file) s->stdlib_file = cache_file("macros", "dw", dw_stdlib_macros_text, dw_stdlib_macros_len);
    return s->stdlib_file;
}
