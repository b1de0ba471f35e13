/* schema.c - the parts of the schema front end shared by both syntaxes:
 * name resolution (Cedar RFC 24), inlining of common types, well-formedness
 * checks.  The resolved schema's lookup, printing and freeing are
 * schema_model.c's. */
#define DW_SCHEMA_INTERNAL
#include "schema.h"
#include "strlit.h"
#include "json_scan.h"
#include <stdlib.h>
#include <string.h>
#include "../stdlib/cedar_quote.h"

void *dw_schema_grow(dw_schema *s, void *v, size_t n, size_t *cap, size_t size)
{
    if (n < *cap) return v;
    size_t nc = *cap ? *cap * 2 : 4;
    void *nv = dw_arena_alloc(&s->arena, nc * size);
    if (!nv) return NULL;
    if (n) memcpy(nv, v, n * size);
    *cap = nc;
    return nv;
}

dw_rdecl *dw_rschema_add(dw_schema *s, dw_rschema *r)
{
    dw_rdecl *v = dw_schema_grow(s, r->v, r->n, &r->cap, sizeof *v);
    if (!v) return NULL;
    r->v = v;
    dw_rdecl *d = &r->v[r->n++];
    memset(d, 0, sizeof *d);
    return d;
}


/* ---------------------------------------------------------------- resolution */

/* Open-addressing hash map from a byte string to a declaration index; lives
 * in a scratch arena that is dropped after resolution. */
typedef struct hmap { dw_str *keys; size_t *vals; size_t cap, n; } hmap;

static void print_uid_buf(dw_buf *b, dw_str type, dw_str id);

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) { h ^= (unsigned char)p[i]; h *= 1099511628211ull; }
    return h;
}

static bool hmap_init(hmap *m, dw_arena *a, size_t want)
{
    size_t cap = 16;
    while (cap < want * 2 + 1) cap *= 2;
    m->keys = dw_arena_alloc(a, cap * sizeof *m->keys);
    m->vals = dw_arena_alloc(a, cap * sizeof *m->vals);
    m->cap = cap;
    m->n = 0;
    return m->keys && m->vals;
}

/* Returns the existing value for key, or inserts val and returns SIZE_MAX. */
static size_t hmap_put(hmap *m, dw_str key, size_t val)
{
    size_t i = (size_t)hash_bytes(key.s, key.len) & (m->cap - 1);
    while (m->keys[i].s) {
        if (dw_str_eq(m->keys[i], key)) return m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    m->keys[i] = key;
    m->vals[i] = val;
    m->n++;
    return SIZE_MAX;
}

static size_t hmap_get(const hmap *m, dw_str key)
{
    if (!key.s) return SIZE_MAX;
    size_t i = (size_t)hash_bytes(key.s, key.len) & (m->cap - 1);
    while (m->keys[i].s) {
        if (dw_str_eq(m->keys[i], key)) return m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    return SIZE_MAX;
}

enum { CT_TODO, CT_BUSY, CT_DONE, CT_FAILED };

typedef struct res {
    dw_schema *s;
    const dw_rschema *r;
    dw_diags *d;
    dw_arena scratch;
    bool oom;
    dw_str *fq;                   /* per decl: fully qualified name (actions: type) */
    hmap ents, commons, acts;
    /* common types */
    unsigned char *ct_state;
    dw_type **ct_type;
    int *ct_height;
    size_t ct_stack[DW_SCHEMA_MAX_DEPTH + 1];
    size_t ct_top;
    int frames;
    bool depth_failed;            /* report the nesting limit once */
} res;

static const char *KW_CEDAR = "__cedar";

static dw_str join(res *R, dw_str ns, dw_str name)
{
    if (ns.len == 0) return name;
    size_t n = ns.len + 2 + name.len;
    char *p = dw_arena_alloc(&R->s->arena, n + 1);
    if (!p) { R->oom = true; return name; }
    memcpy(p, ns.s, ns.len);
    memcpy(p + ns.len, "::", 2);
    memcpy(p + ns.len + 2, name.s, name.len);
    return (dw_str){ p, n };
}

/* Key for the action map: type, NUL, id (types never contain NUL). */
static dw_str act_key(res *R, dw_str type, dw_str id)
{
    size_t n = type.len + 1 + id.len;
    char *p = dw_arena_alloc(&R->scratch, n + 1);
    if (!p) { R->oom = true; return (dw_str){ NULL, 0 }; }
    memcpy(p, type.s, type.len);
    p[type.len] = 0;
    if (id.len) memcpy(p + type.len + 1, id.s, id.len);
    return (dw_str){ p, n };
}

static bool is_qualified(dw_str n)
{
    for (size_t i = 0; i + 1 < n.len; i++)
        if (n.s[i] == ':' && n.s[i + 1] == ':') return true;
    return false;
}

/* Does any "::"-separated component of n equal __cedar? */
static bool has_cedar_component(dw_str n)
{
    size_t start = 0;
    for (size_t i = 0; i <= n.len; i++) {
        if (i == n.len || (n.s[i] == ':' && i + 1 < n.len && n.s[i + 1] == ':')) {
            dw_str c = { n.s + start, i - start };
            if (dw_str_is(c, KW_CEDAR)) return true;
            if (i < n.len) i++;
            start = i + 1;
        }
    }
    return false;
}

static dw_str name_base(dw_str n)
{
    size_t b = 0;
    for (size_t i = 0; i + 1 < n.len; i++)
        if (n.s[i] == ':' && n.s[i + 1] == ':') b = i + 2;
    return (dw_str){ n.s + b, n.len - b };
}

static bool builtin_kind(dw_str n, bool human, dw_type_kind *k)
{
    if (dw_str_is(n, "Long")) *k = DW_T_LONG;
    else if (dw_str_is(n, "String")) *k = DW_T_STRING;
    else if (dw_str_is(n, "Bool")) *k = DW_T_BOOL;
    else if (!human && dw_str_is(n, "Boolean")) *k = DW_T_BOOL;
    else return false;
    return true;
}

static bool ext_kind(dw_str n, dw_type_kind *k)
{
    if (dw_str_is(n, "ipaddr")) *k = DW_T_IPADDR;
    else if (dw_str_is(n, "decimal")) *k = DW_T_DECIMAL;
    else if (dw_str_is(n, "datetime")) *k = DW_T_DATETIME;
    else if (dw_str_is(n, "duration")) *k = DW_T_DURATION;
    else return false;
    return true;
}

static dw_type *new_type(res *R, dw_type_kind k, dw_loc loc)
{
    dw_type *t = dw_arena_alloc(&R->s->arena, sizeof *t);
    if (!t) { R->oom = true; return NULL; }
    t->kind = k;
    t->loc = loc;
    return t;
}

#define ERR(R, loc, ...) dw_error((R)->d, (R)->s->src, (loc), __VA_ARGS__)
#define ERRH(R, loc, hint, ...) dw_error_hint((R)->d, (R)->s->src, (loc), (hint), __VA_ARGS__)

static size_t lookup_in(const hmap *m, res *R, dw_str ns, dw_str name)
{
    if (ns.len == 0) return hmap_get(m, name);
    char buf[256];
    dw_str key;
    char *heap = NULL;
    size_t n = ns.len + 2 + name.len;
    char *p = n <= sizeof buf ? buf : (heap = malloc(n));
    if (!p) { R->oom = true; return SIZE_MAX; }
    memcpy(p, ns.s, ns.len);
    memcpy(p + ns.len, "::", 2);
    memcpy(p + ns.len + 2, name.s, name.len);
    key = (dw_str){ p, n };
    size_t v = hmap_get(m, key);
    free(heap);
    return v;
}

/* Entity type reference: absolute when qualified, else N::T then T. */
static size_t find_entity(res *R, dw_str ns, dw_str name)
{
    if (is_qualified(name) || ns.len == 0) return hmap_get(&R->ents, name);
    size_t i = lookup_in(&R->ents, R, ns, name);
    return i != SIZE_MAX ? i : hmap_get(&R->ents, name);
}

static size_t find_common(res *R, dw_str ns, dw_str name)
{
    if (is_qualified(name) || ns.len == 0) return hmap_get(&R->commons, name);
    size_t i = lookup_in(&R->commons, R, ns, name);
    return i != SIZE_MAX ? i : hmap_get(&R->commons, name);
}

/* A hint for a name that is not an entity type: is it something else, or
 * declared in another namespace? */
static void entity_hint(res *R, dw_str ns, dw_str name, char *buf, size_t cap)
{
    buf[0] = 0;
    if (find_common(R, ns, name) != SIZE_MAX) {
        snprintf(buf, cap, "`%.*s` is a common type; only entity types are allowed here", (int)name.len, name.s);
        return;
    }
    dw_type_kind k;
    if (builtin_kind(name, false, &k) || ext_kind(name, &k)) {
        snprintf(buf, cap, "`%.*s` is a built-in type; only entity types are allowed here", (int)name.len, name.s);
        return;
    }
    dw_str base = name_base(name);
    for (size_t i = 0; i < R->r->n; i++) {
        const dw_rdecl *d = &R->r->v[i];
        if (d->kind == DW_RD_ENTITY && dw_str_eq(d->name, base) && !dw_str_eq(R->fq[i], name)) {
            snprintf(buf, cap, "did you mean `%.*s`?", (int)R->fq[i].len, R->fq[i].s);
            return;
        }
    }
    snprintf(buf, cap, "declare it with `entity %.*s;`", (int)base.len, base.s);
}

static bool resolve_entity_ref(res *R, dw_str ns, const dw_rname *n, dw_str *out)
{
    size_t i = has_cedar_component(n->name) ? SIZE_MAX : find_entity(R, ns, n->name);
    if (i == SIZE_MAX) {
        char hint[512];
        entity_hint(R, ns, n->name, hint, sizeof hint);
        ERRH(R, n->loc, hint[0] ? hint : NULL, "undeclared entity type `%.*s`", (int)n->name.len, n->name.s);
        return false;
    }
    *out = R->fq[i];
    return true;
}

static dw_type *resolve_type(res *R, const dw_rtype *t, dw_str ns, int *height);

static dw_type *resolve_common(res *R, size_t ci, dw_loc use, int *height)
{
    switch (R->ct_state[ci]) {
    case CT_DONE: *height = R->ct_height[ci]; return R->ct_type[ci];
    case CT_FAILED: return NULL;
    case CT_BUSY: {
        /* Report the cycle once, as the chain of names from its start. */
        dw_buf b = { 0 };
        size_t start = 0;
        for (size_t k = 0; k < R->ct_top; k++) if (R->ct_stack[k] == ci) { start = k; break; }
        for (size_t k = start; k < R->ct_top; k++)
            dw_buf_printf(&b, "`%.*s` -> ", (int)R->fq[R->ct_stack[k]].len, R->fq[R->ct_stack[k]].s);
        dw_buf_printf(&b, "`%.*s`", (int)R->fq[ci].len, R->fq[ci].s);
        ERRH(R, use, "a common type cannot refer to itself, directly or through other common types",
             "cycle in common type definitions: %s", b.p ? b.p : "");
        dw_buf_free(&b);
        for (size_t k = start; k < R->ct_top; k++) R->ct_state[R->ct_stack[k]] = CT_FAILED;
        return NULL;
    }
    default: break;
    }
    const dw_rdecl *d = &R->r->v[ci];
    if (R->ct_top >= DW_SCHEMA_MAX_DEPTH) {
        if (!R->depth_failed)
            ERRH(R, use, "common types are inlined where they are used", "common types nested too deeply (limit %d)", DW_SCHEMA_MAX_DEPTH);
        R->depth_failed = true;
        R->ct_state[ci] = CT_FAILED;
        return NULL;
    }
    R->ct_state[ci] = CT_BUSY;
    R->ct_stack[R->ct_top++] = ci;
    int h = 0;
    dw_type *t = resolve_type(R, d->def, d->ns, &h);
    R->ct_top--;
    if (R->ct_state[ci] == CT_FAILED || !t) { R->ct_state[ci] = CT_FAILED; return NULL; }
    R->ct_state[ci] = CT_DONE;
    R->ct_type[ci] = t;
    R->ct_height[ci] = h;
    *height = h;
    return t;
}

static int attr_cmp(const void *a, const void *b)
{
    const dw_attr_decl *x = a, *y = b;
    int c = dw_schema_name_cmp(x->name, y->name);
    if (c) return c;
    return x->loc.off < y->loc.off ? -1 : x->loc.off > y->loc.off;
}

static dw_type *resolve_name(res *R, const dw_rtype *t, dw_str ns, int *height)
{
    dw_str n = t->name;
    dw_type_kind k;
    *height = 0;
    /* __cedar::X always names the built-in X. */
    if (n.len > 9 && memcmp(n.s, "__cedar::", 9) == 0) {
        dw_str rest = { n.s + 9, n.len - 9 };
        if ((builtin_kind(rest, t->ref != DW_REF_ANY, &k) || ext_kind(rest, &k)) && t->ref != DW_REF_ENTITY)
            return new_type(R, k, t->loc);
        ERR(R, t->loc, "unknown built-in type `%.*s`", (int)n.len, n.s);
        return NULL;
    }
    if (t->ref == DW_REF_EXT) {
        if (ext_kind(n, &k)) return new_type(R, k, t->loc);
        ERRH(R, t->loc, "the extension types are `ipaddr`, `decimal`, `datetime` and `duration`",
             "unknown extension type `%.*s`", (int)n.len, n.s);
        return NULL;
    }
    if (t->ref != DW_REF_ENTITY) {
        size_t ci;
        if (is_qualified(n) || ns.len == 0) ci = hmap_get(&R->commons, n);
        else ci = lookup_in(&R->commons, R, ns, n);
        /* RFC 24 order: N::T common, N::T entity, T common, T entity, built-in. */
        if (ci != SIZE_MAX) return resolve_common(R, ci, t->loc, height);
        if (t->ref == DW_REF_ANY && !is_qualified(n) && ns.len) {
            size_t ei = lookup_in(&R->ents, R, ns, n);
            if (ei != SIZE_MAX) { dw_type *e = new_type(R, DW_T_ENTITY, t->loc); if (e) e->name = R->fq[ei]; return e; }
            ci = hmap_get(&R->commons, n);
            if (ci != SIZE_MAX) return resolve_common(R, ci, t->loc, height);
        }
        if (t->ref == DW_REF_ANY) {
            size_t ei = hmap_get(&R->ents, n);
            if (ei != SIZE_MAX) { dw_type *e = new_type(R, DW_T_ENTITY, t->loc); if (e) e->name = R->fq[ei]; return e; }
            if (builtin_kind(n, false, &k) || ext_kind(n, &k)) {
                if (dw_str_is(n, "Boolean")) {
                    ERRH(R, t->loc, "the boolean type is written `Bool`", "undeclared type `Boolean`");
                    return NULL;
                }
                return new_type(R, k, t->loc);
            }
        }
        char hint[512];
        entity_hint(R, ns, n, hint, sizeof hint);
        if (t->ref == DW_REF_COMMON) {
            ERRH(R, t->loc, "declare it under \"commonTypes\", or use {\"type\": \"Entity\", \"name\": ...} for an entity type",
                 "undeclared common type `%.*s`", (int)n.len, n.s);
        } else if (strncmp(hint, "did you mean", 12) == 0) {
            ERRH(R, t->loc, hint, "undeclared type `%.*s`", (int)n.len, n.s);
        } else {
            ERRH(R, t->loc, "declare it as an entity type (`entity X;`) or a common type (`type X = ...;`)",
                 "undeclared type `%.*s`", (int)n.len, n.s);
        }
        return NULL;
    }
    dw_rname rn = { n, t->loc };
    dw_str fq;
    if (!resolve_entity_ref(R, ns, &rn, &fq)) return NULL;
    dw_type *e = new_type(R, DW_T_ENTITY, t->loc);
    if (e) e->name = fq;
    return e;
}

static dw_type *resolve_type(res *R, const dw_rtype *t, dw_str ns, int *height)
{
    *height = 0;
    if (!t) return NULL;
    if (++R->frames > 4 * DW_SCHEMA_MAX_DEPTH) {
        R->frames--;
        if (R->depth_failed) return NULL;
        R->depth_failed = true;
        ERR(R, t->loc, "type nested too deeply (limit %d levels)", DW_SCHEMA_MAX_DEPTH);
        return NULL;
    }
    dw_type *out = NULL;
    switch (t->kind) {
    case DW_RT_PRIM: out = new_type(R, t->prim, t->loc); break;
    case DW_RT_NAME: out = resolve_name(R, t, ns, height); break;
    case DW_RT_SET: {
        int h = 0;
        dw_type *e = resolve_type(R, t->elem, ns, &h);
        if (e && (out = new_type(R, DW_T_SET, t->loc))) { out->elem = e; *height = h + 1; }
        break;
    }
    case DW_RT_RECORD: {
        out = new_type(R, DW_T_RECORD, t->loc);
        if (!out) break;
        out->additional_attrs = t->additional_attrs;
        out->nattrs = t->nattrs;
        if (t->nattrs) {
            out->attrs = dw_arena_alloc(&R->s->arena, t->nattrs * sizeof *out->attrs);
            if (!out->attrs) { R->oom = true; out = NULL; break; }
        }
        bool ok = true;
        int hmax = 0;
        for (size_t i = 0; i < t->nattrs; i++) {
            int h = 0;
            dw_attr_decl *a = &out->attrs[i];
            a->name = t->attrs[i].name;
            a->required = t->attrs[i].required;
            a->loc = t->attrs[i].loc;
            a->type = resolve_type(R, t->attrs[i].type, ns, &h);
            if (!a->type) ok = false;
            if (h > hmax) hmax = h;
        }
        if (!ok) { out = NULL; break; }
        if (out->nattrs > 1) qsort(out->attrs, out->nattrs, sizeof *out->attrs, attr_cmp);
        for (size_t i = 1; i < out->nattrs; i++) {
            if (dw_str_eq(out->attrs[i].name, out->attrs[i - 1].name)) {
                char hint[128];
                snprintf(hint, sizeof hint, "the first declaration is at line %u", out->attrs[i - 1].loc.line);
                ERRH(R, out->attrs[i].loc, hint, "duplicate attribute `%.*s` in record type",
                     (int)out->attrs[i].name.len, out->attrs[i].name.s);
                ok = false;
            }
        }
        if (!ok) { out = NULL; break; }
        *height = hmax + 1;
        break;
    }
    }
    R->frames--;
    if (out && *height > DW_SCHEMA_MAX_DEPTH) {
        if (R->depth_failed) return NULL;
        R->depth_failed = true;
        ERRH(R, t->loc, "common types are inlined, so their nesting counts too",
             "type nested too deeply (more than %d levels of sets and records)", DW_SCHEMA_MAX_DEPTH);
        return NULL;
    }
    return out;
}

static dw_type *resolve_record(res *R, const dw_rtype *t, dw_str ns, const char *what, dw_loc where)
{
    if (!t) {
        dw_type *e = new_type(R, DW_T_RECORD, where);
        return e;
    }
    int h;
    dw_type *r = resolve_type(R, t, ns, &h);
    if (!r) return NULL;
    if (r->kind != DW_T_RECORD) {
        ERRH(R, t->loc, "write a record type `{ ... }` or the name of a common type that is a record",
             "%s must be a record type, not `%s`", what,
             r->kind == DW_T_SET ? "Set<...>" : r->kind == DW_T_ENTITY ? "entity type" :
             r->kind == DW_T_BOOL ? "Bool" : r->kind == DW_T_LONG ? "Long" : r->kind == DW_T_STRING ? "String" :
             "extension type");
        return NULL;
    }
    return r;
}

static const char *kind_word(dw_rdecl_kind k)
{
    return k == DW_RD_ENTITY ? "entity type" : k == DW_RD_ACTION ? "action" : "common type";
}

static bool check_decl_names(res *R)
{
    bool ok = true;
    for (size_t i = 0; i < R->r->n; i++) {
        const dw_rdecl *d = &R->r->v[i];
        if (d->kind == DW_RD_ACTION) {
            R->fq[i] = join(R, d->ns, (dw_str){ "Action", 6 });
            dw_str key = act_key(R, R->fq[i], d->name);
            if (!key.s) return false;
            size_t prev = hmap_put(&R->acts, key, i);
            if (prev != SIZE_MAX) {
                char hint[128];
                snprintf(hint, sizeof hint, "the first declaration is at line %u", R->r->v[prev].loc.line);
                dw_buf b = { 0 };
                print_uid_buf(&b, R->fq[i], d->name);
                ERRH(R, d->loc, hint, "duplicate action %.*s", (int)b.len, b.p ? b.p : "");
                dw_buf_free(&b);
                ok = false;
            }
            continue;
        }
        if (dw_str_is(d->name, KW_CEDAR) || has_cedar_component(d->ns)) {
            ERRH(R, d->loc, "`__cedar` is reserved for Cedar's built-in types",
                 "the name `%.*s` contains `__cedar`, which is reserved", (int)d->name.len, d->name.s);
            ok = false;
        }
        R->fq[i] = join(R, d->ns, d->name);
        if (d->kind == DW_RD_COMMON) {
            /* Cedar's to_json_schema reserves the JSON type keywords; the
             * primitive names may be shadowed (with a warning). */
            static const char *const reserved[] = { "Entity", "Extension", "Record", "Set" };
            for (size_t k = 0; k < sizeof reserved / sizeof *reserved; k++)
                if (dw_str_is(d->name, reserved[k])) {
                    ERRH(R, d->loc, "choose another name; this one is a JSON schema type keyword",
                         "`%s` is reserved and cannot be the name of a common type", reserved[k]);
                    ok = false;
                }
        }
        hmap *m = d->kind == DW_RD_ENTITY ? &R->ents : &R->commons;
        size_t prev = hmap_put(m, R->fq[i], i);
        if (prev != SIZE_MAX) {
            char hint[128];
            snprintf(hint, sizeof hint, "the first declaration is at line %u", R->r->v[prev].loc.line);
            ERRH(R, d->loc, hint, "duplicate %s `%.*s`", kind_word(d->kind), (int)R->fq[i].len, R->fq[i].s);
            ok = false;
        }
    }
    /* Cedar's warnings: a common type shadowing an entity type of the same
     * namespace, or a declaration shadowing a built-in type name. */
    for (size_t i = 0; i < R->r->n; i++) {
        const dw_rdecl *d = &R->r->v[i];
        if (d->kind == DW_RD_ACTION) continue;
        dw_type_kind k;
        if (d->kind == DW_RD_COMMON && hmap_get(&R->ents, R->fq[i]) != SIZE_MAX)
            dw_diag_add(R->d, DW_SEV_WARNING, R->s->src, d->loc, "unqualified references to this name now mean the common type",
                        "common type `%.*s` shadows the entity type of the same name", (int)R->fq[i].len, R->fq[i].s);
        if (builtin_kind(d->name, false, &k) || ext_kind(d->name, &k)) {
            char hint[96];
            snprintf(hint, sizeof hint, "write `__cedar::%.*s` to refer to the built-in type", (int)d->name.len, d->name.s);
            dw_diag_add(R->d, DW_SEV_WARNING, R->s->src, d->loc, hint,
                        "`%.*s` shadows a built-in type", (int)d->name.len, d->name.s);
        }
    }
    return ok;
}

/* Append s to v[0..n) unless already present. */
static void add_unique(dw_str *v, size_t *n, dw_str s)
{
    for (size_t i = 0; i < *n; i++) if (dw_str_eq(v[i], s)) return;
    v[(*n)++] = s;
}

static bool resolve_entity(res *R, size_t i, dw_entity_decl *e)
{
    const dw_rdecl *d = &R->r->v[i];
    bool ok = true;
    e->name = R->fq[i];
    e->loc = d->loc;
    e->is_enum = d->is_enum;
    if (d->is_enum) {
        e->enum_ids = dw_arena_alloc(&R->s->arena, (d->nenum ? d->nenum : 1) * sizeof *e->enum_ids);
        if (!e->enum_ids) { R->oom = true; return false; }
        for (size_t k = 0; k < d->nenum; k++) add_unique(e->enum_ids, &e->nenum, d->enum_ids[k]);
    }
    if (d->nparents) {
        e->member_of = dw_arena_alloc(&R->s->arena, d->nparents * sizeof *e->member_of);
        if (!e->member_of) { R->oom = true; return false; }
        for (size_t k = 0; k < d->nparents; k++) {
            dw_str fq;
            if (resolve_entity_ref(R, d->ns, &d->parents[k], &fq)) add_unique(e->member_of, &e->nmember_of, fq);
            else ok = false;
        }
    }
    e->shape = resolve_record(R, d->shape, d->ns, "an entity's shape", d->loc);
    if (!e->shape) ok = false;
    if (d->tags) {
        int h;
        e->tags = resolve_type(R, d->tags, d->ns, &h);
        if (!e->tags) ok = false;
    }
    return ok;
}

static void print_uid_buf(dw_buf *b, dw_str type, dw_str id)
{
    dw_buf_printf(b, "%.*s::", (int)type.len, type.s);
    dw_cedar_quote_buf(b, id.s, id.len);
}

static size_t find_action(res *R, dw_str ns, const dw_raref *p, dw_str *type_out)
{
    dw_str cands[2];
    size_t nc = 0;
    dw_str ty = p->has_type ? p->type : (dw_str){ "Action", 6 };
    if (!p->has_type || (!is_qualified(ty) && ns.len)) cands[nc++] = join(R, ns, ty);
    if (p->has_type) cands[nc++] = ty;
    for (size_t c = 0; c < nc; c++) {
        dw_str key = act_key(R, cands[c], p->id);
        if (!key.s) return SIZE_MAX;
        size_t i = hmap_get(&R->acts, key);
        if (i != SIZE_MAX) { *type_out = R->fq[i]; return i; }
    }
    *type_out = cands[0];
    return SIZE_MAX;
}

static bool resolve_action(res *R, size_t i, dw_action_decl *a, size_t *parent_idx)
{
    const dw_rdecl *d = &R->r->v[i];
    bool ok = true;
    a->uid.type = R->fq[i];
    a->uid.id = d->name;
    a->uid.loc = d->loc;
    a->loc = d->loc;
    if (d->naparents) {
        a->parents = dw_arena_alloc(&R->s->arena, d->naparents * sizeof *a->parents);
        if (!a->parents) { R->oom = true; return false; }
    }
    for (size_t k = 0; k < d->naparents; k++) {
        dw_str ty;
        size_t pi = find_action(R, d->ns, &d->aparents[k], &ty);
        if (pi == SIZE_MAX) {
            dw_buf b = { 0 };
            print_uid_buf(&b, ty, d->aparents[k].id);
            ERRH(R, d->aparents[k].loc, "every action group must itself be declared with `action`",
                 "undeclared action %.*s", (int)b.len, b.p ? b.p : "");
            dw_buf_free(&b);
            ok = false;
            continue;
        }
        bool dup = false;
        for (size_t j = 0; j < a->nparents; j++)
            if (parent_idx[j] == pi) dup = true;
        if (dup) continue;
        parent_idx[a->nparents] = pi;
        a->parents[a->nparents].type = ty;
        a->parents[a->nparents].id = R->r->v[pi].name;
        a->parents[a->nparents].loc = d->aparents[k].loc;
        a->nparents++;
    }
    a->has_applies_to = d->has_applies_to;
    if (d->nprincipals) a->principals = dw_arena_alloc(&R->s->arena, d->nprincipals * sizeof *a->principals);
    if (d->nresources) a->resources = dw_arena_alloc(&R->s->arena, d->nresources * sizeof *a->resources);
    if ((d->nprincipals && !a->principals) || (d->nresources && !a->resources)) { R->oom = true; return false; }
    for (size_t k = 0; k < d->nprincipals; k++) {
        dw_str fq;
        if (resolve_entity_ref(R, d->ns, &d->principals[k], &fq)) add_unique(a->principals, &a->nprincipals, fq);
        else ok = false;
    }
    for (size_t k = 0; k < d->nresources; k++) {
        dw_str fq;
        if (resolve_entity_ref(R, d->ns, &d->resources[k], &fq)) add_unique(a->resources, &a->nresources, fq);
        else ok = false;
    }
    a->context = resolve_record(R, d->context, d->ns, "an action's context", d->loc);
    if (!a->context) ok = false;
    return ok;
}

/* Cedar rejects cycles in the action hierarchy.  Iterative DFS over the
 * action graph (a chain of thousands of actions must not overflow the C
 * stack). */
static bool check_action_cycles(res *R, dw_action_decl *acts, size_t **pidx, size_t n)
{
    if (!n) return true;
    unsigned char *color = dw_arena_alloc(&R->scratch, n);
    size_t *stack = dw_arena_alloc(&R->scratch, n * sizeof *stack);
    size_t *next = dw_arena_alloc(&R->scratch, n * sizeof *next);
    if (!color || !stack || !next) { R->oom = true; return false; }
    for (size_t root = 0; root < n; root++) {
        if (color[root]) continue;
        size_t top = 0;
        stack[top++] = root;
        color[root] = 1;
        next[root] = 0;
        while (top) {
            size_t v = stack[top - 1];
            if (next[v] < acts[v].nparents) {
                size_t w = pidx[v][next[v]++];
                if (color[w] == 1) {
                    dw_buf b = { 0 };
                    print_uid_buf(&b, acts[w].uid.type, acts[w].uid.id);
                    ERRH(R, acts[v].parents[next[v] - 1].loc, "an action cannot be a member of itself, directly or through its groups",
                         "cycle in the action hierarchy involving %.*s", (int)b.len, b.p ? b.p : "");
                    dw_buf_free(&b);
                    return false;
                }
                if (!color[w]) { color[w] = 1; next[w] = 0; stack[top++] = w; }
            } else {
                color[v] = 2;
                top--;
            }
        }
    }
    return true;
}

static int ent_cmp(const void *a, const void *b)
{
    return dw_schema_name_cmp(((const dw_entity_decl *)a)->name, ((const dw_entity_decl *)b)->name);
}

static int act_cmp(const void *a, const void *b)
{
    const dw_action_decl *x = a, *y = b;
    return dw_schema_uid_cmp(x->uid.type, x->uid.id, y->uid.type, y->uid.id);
}

dw_schema *dw_schema_resolve(dw_schema *s, const dw_rschema *r, dw_diags *d)
{
    res R;
    memset(&R, 0, sizeof R);
    R.s = s;
    R.r = r;
    R.d = d;
    dw_arena_init(&R.scratch, 0);
    size_t errs0 = d->nerrors;
    size_t n = r->n, ne = 0, na = 0;
    for (size_t i = 0; i < n; i++) {
        if (r->v[i].kind == DW_RD_ENTITY) ne++;
        else if (r->v[i].kind == DW_RD_ACTION) na++;
    }
    R.fq = dw_arena_alloc(&R.scratch, (n + 1) * sizeof *R.fq);
    R.ct_state = dw_arena_alloc(&R.scratch, n + 1);
    R.ct_type = dw_arena_alloc(&R.scratch, (n + 1) * sizeof *R.ct_type);
    R.ct_height = dw_arena_alloc(&R.scratch, (n + 1) * sizeof *R.ct_height);
    size_t **pidx = dw_arena_alloc(&R.scratch, (na + 1) * sizeof *pidx);
    size_t *act_slot = dw_arena_alloc(&R.scratch, (n + 1) * sizeof *act_slot);
    s->entities = dw_arena_alloc(&s->arena, (ne + 1) * sizeof *s->entities);
    s->actions = dw_arena_alloc(&s->arena, (na + 1) * sizeof *s->actions);
    if (!R.fq || !R.ct_state || !R.ct_type || !R.ct_height || !pidx || !act_slot || !s->entities || !s->actions ||
        !hmap_init(&R.ents, &R.scratch, ne) || !hmap_init(&R.commons, &R.scratch, n - ne - na) ||
        !hmap_init(&R.acts, &R.scratch, na)) {
        R.oom = true;
        goto done;
    }
    bool ok = check_decl_names(&R);
    if (R.oom) goto done;
    /* Common types first, so each error is reported once, at its definition. */
    for (size_t i = 0; i < n; i++)
        if (r->v[i].kind == DW_RD_COMMON && R.ct_state[i] == CT_TODO) {
            int h;
            if (!resolve_common(&R, i, r->v[i].loc, &h)) ok = false;
        }
    for (size_t i = 0; i < n; i++) {
        if (r->v[i].kind == DW_RD_ENTITY) {
            if (!resolve_entity(&R, i, &s->entities[s->nentities++])) ok = false;
        } else if (r->v[i].kind == DW_RD_ACTION) {
            act_slot[i] = s->nactions;
            pidx[s->nactions] = dw_arena_alloc(&R.scratch, (r->v[i].naparents + 1) * sizeof **pidx);
            if (!pidx[s->nactions]) { R.oom = true; goto done; }
            if (!resolve_action(&R, i, &s->actions[s->nactions], pidx[s->nactions])) ok = false;
            s->nactions++;
        }
        if (R.oom) goto done;
    }
    if (ok) {
        /* parent indices are decl indices; map them to action slots */
        for (size_t a = 0; a < s->nactions; a++)
            for (size_t k = 0; k < s->actions[a].nparents; k++) pidx[a][k] = act_slot[pidx[a][k]];
        if (!check_action_cycles(&R, s->actions, pidx, s->nactions)) ok = false;
    }
    if (ok) {
        qsort(s->entities, s->nentities, sizeof *s->entities, ent_cmp);
        qsort(s->actions, s->nactions, sizeof *s->actions, act_cmp);
        dw_schema_build_index(s);   /* false on OOM: the lookups binary search */
    }
done:
    if (R.oom) dw_error(d, s->src, dw_loc_at(s->src, 0, 0), "out of memory while resolving the schema");
    dw_arena_free(&R.scratch);
    if (d->nerrors > errs0) {
        dw_schema_free(s);
        return NULL;
    }
    return s;
}

/* ---------------------------------------------------------------- dispatch */

dw_schema *dw_schema_parse(const dw_source *src, dw_diags *diags)
{
    size_t i = 0;
    i = dw_json_skip_ws(src->text, i, src->len);
    if (i < src->len && src->text[i] == '{') return dw_schema_parse_json(src, diags);
    return dw_schema_parse_text(src, diags);
}
