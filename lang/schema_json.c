/* schema_json.c - Cedar's JSON schema syntax:
 *   { "Ns": { "commonTypes": {...}, "entityTypes": {...}, "actions": {...} } }
 * read with lang/json.h into the raw schema that schema.c resolves, so both
 * syntaxes share one set of resolution rules and produce identical results.
 * Unknown keys are errors, as in Cedar (serde's deny_unknown_fields). */
#define DW_SCHEMA_INTERNAL
#include "schema.h"
#include "json.h"
#include <stdlib.h>
#include <string.h>
#include "../stdlib/utf8.h"

typedef struct jsp {
    dw_schema *s;
    const dw_source *src;
    dw_diags *d;
    dw_rschema r;
    bool failed;
    /* dw_loc_at scans from the start of the file; nodes are visited mostly in
     * source order, so continue from the previous position when we can. */
    uint32_t c_off, c_line, c_col;
} jsp;

static dw_loc jloc(jsp *p, uint32_t off, uint32_t end)
{
    const char *t = p->src->text;
    if (off > p->src->len) off = (uint32_t)p->src->len;
    if (off < p->c_off) { p->c_off = 0; p->c_line = 1; p->c_col = 1; }
    for (uint32_t i = p->c_off; i < off; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c == '\n') { p->c_line++; p->c_col = 1; }
        else if (!dw_utf8_is_cont(c)) p->c_col++;
    }
    p->c_off = off;
    return (dw_loc){ p->c_line, p->c_col, off, end > off ? end : off + 1 };
}

static dw_loc nloc(jsp *p, const dw_json *j) { return jloc(p, j->off, j->end); }
static dw_loc kloc(jsp *p, const dw_json_member *m)
{
    return jloc(p, m->key_off, m->key_off + (uint32_t)m->key.len + 2);
}

static bool jfail(jsp *p, dw_loc loc, const char *hint, const char *msg)
{
    p->failed = true;
    if (hint) dw_error_hint(p->d, p->src, loc, hint, "%s", msg);
    else dw_error(p->d, p->src, loc, "%s", msg);
    return false;
}

static bool want(jsp *p, const dw_json *j, dw_json_kind k, const char *what)
{
    if (j && j->kind == k) return true;
    char msg[160];
    snprintf(msg, sizeof msg, "%s must be a JSON %s, not %s", what, dw_json_kind_name(k),
             j ? dw_json_kind_name(j->kind) : "missing");
    return jfail(p, j ? nloc(p, j) : jloc(p, 0, 0), NULL, msg);
}

static bool key_is(const dw_json_member *m, const char *k)
{
    size_t n = strlen(k);
    return m->key.len == n && memcmp(m->key.s, k, n) == 0;
}

/* Reject keys outside `allowed` (NULL-terminated) and duplicate keys. */
static bool check_keys(jsp *p, const dw_json *obj, const char *const *allowed, const char *where)
{
    bool ok = true;
    for (size_t i = 0; i < obj->u.obj.n; i++) {
        const dw_json_member *m = &obj->u.obj.v[i];
        bool found = false;
        for (size_t k = 0; allowed[k]; k++) if (key_is(m, allowed[k])) found = true;
        char msg[200], hint[200];
        if (!found) {
            size_t o = 0;
            hint[0] = 0;
            for (size_t k = 0; allowed[k] && o < sizeof hint; k++)
                o += (size_t)snprintf(hint + o, sizeof hint - o, "%s\"%s\"", k ? ", " : "expected one of ", allowed[k]);
            snprintf(msg, sizeof msg, "unknown key \"%.*s\" in %s", (int)(m->key.len > 60 ? 60 : m->key.len), m->key.s, where);
            ok = jfail(p, kloc(p, m), hint, msg);
            continue;
        }
        for (size_t j = 0; j < i; j++)
            if (obj->u.obj.v[j].key.len == m->key.len && memcmp(obj->u.obj.v[j].key.s, m->key.s, m->key.len) == 0) {
                snprintf(msg, sizeof msg, "duplicate key \"%.*s\" in %s", (int)(m->key.len > 60 ? 60 : m->key.len), m->key.s, where);
                ok = jfail(p, kloc(p, m), NULL, msg);
                break;
            }
    }
    return ok;
}

static bool check_ident(jsp *p, const dw_json_member *m, const char *what)
{
    if (dw_schema_is_ident(m->key.s, m->key.len) && !dw_schema_is_reserved(m->key.s, m->key.len)) return true;
    char msg[200];
    snprintf(msg, sizeof msg, "invalid %s name \"%.*s\"", what, (int)(m->key.len > 60 ? 60 : m->key.len), m->key.s);
    return jfail(p, kloc(p, m), "names are identifiers: [A-Za-z_][A-Za-z0-9_]*, not a reserved word", msg);
}

/* A path written in a JSON string: IDENT { "::" IDENT } (empty allowed for
 * the namespace key). */
static bool is_path(dw_str s, bool allow_empty)
{
    if (s.len == 0) return allow_empty;
    size_t start = 0;
    for (size_t i = 0; i <= s.len; i++) {
        if (i == s.len || (s.s[i] == ':' && i + 1 < s.len && s.s[i + 1] == ':')) {
            if (!dw_schema_is_ident(s.s + start, i - start) || dw_schema_is_reserved(s.s + start, i - start)) return false;
            if (i == s.len) break;
            i++;
            start = i + 1;
        }
    }
    return true;
}

static bool name_string(jsp *p, const dw_json *j, const char *what, dw_rname *out)
{
    if (!want(p, j, DW_JSON_STRING, what)) return false;
    out->name = j->u.str;
    out->loc = nloc(p, j);
    if (!is_path(j->u.str, false)) {
        char msg[200];
        snprintf(msg, sizeof msg, "invalid type name \"%.*s\" in %s", (int)(j->u.str.len > 60 ? 60 : j->u.str.len), j->u.str.s, what);
        return jfail(p, out->loc, "type names are identifiers joined with `::`", msg);
    }
    return true;
}

static dw_rtype *new_rtype(jsp *p, dw_rtype_kind k, dw_loc loc)
{
    dw_rtype *t = dw_arena_alloc(&p->s->arena, sizeof *t);
    if (!t) { jfail(p, loc, NULL, "out of memory"); return NULL; }
    t->kind = k;
    t->loc = loc;
    return t;
}

static const char *const TYPE_KEYS[] = { "type", "element", "attributes", "additionalAttributes", "name", "annotations", NULL };
static const char *const ATTR_KEYS[] = { "type", "element", "attributes", "additionalAttributes", "name", "annotations", "required", NULL };

static dw_rtype *jtype(jsp *p, const dw_json *j, bool is_attr, int depth);

static dw_rtype *jrecord(jsp *p, const dw_json *j, dw_rtype *t, int depth)
{
    const dw_json *attrs = dw_json_get(j, "attributes");
    const dw_json *add = dw_json_get(j, "additionalAttributes");
    if (add) {
        if (!want(p, add, DW_JSON_BOOL, "\"additionalAttributes\"")) return NULL;
        t->additional_attrs = add->u.b;
    }
    if (!attrs) return t;
    if (!want(p, attrs, DW_JSON_OBJECT, "\"attributes\"")) return NULL;
    t->nattrs = attrs->u.obj.n;
    if (t->nattrs) {
        t->attrs = dw_arena_alloc(&p->s->arena, t->nattrs * sizeof *t->attrs);
        if (!t->attrs) { jfail(p, t->loc, NULL, "out of memory"); return NULL; }
    }
    for (size_t i = 0; i < attrs->u.obj.n; i++) {
        const dw_json_member *m = &attrs->u.obj.v[i];
        for (size_t k = 0; k < i; k++)
            if (attrs->u.obj.v[k].key.len == m->key.len && memcmp(attrs->u.obj.v[k].key.s, m->key.s, m->key.len) == 0) {
                char msg[160];
                snprintf(msg, sizeof msg, "duplicate attribute \"%.*s\"", (int)(m->key.len > 60 ? 60 : m->key.len), m->key.s);
                jfail(p, kloc(p, m), NULL, msg);
                return NULL;
            }
        dw_rattr *a = &t->attrs[i];
        a->name = m->key;
        a->loc = kloc(p, m);
        a->required = true;
        if (!(a->type = jtype(p, m->value, true, depth + 1))) return NULL;
        const dw_json *req = dw_json_get(m->value, "required");
        if (req) {
            if (!want(p, req, DW_JSON_BOOL, "\"required\"")) return NULL;
            a->required = req->u.b;
        }
    }
    return t;
}

static dw_rtype *jtype(jsp *p, const dw_json *j, bool is_attr, int depth)
{
    if (!want(p, j, DW_JSON_OBJECT, "a type")) return NULL;
    dw_loc loc = nloc(p, j);
    if (depth > DW_SCHEMA_MAX_DEPTH) { jfail(p, loc, NULL, "types nested too deeply (limit 128 levels)"); return NULL; }
    if (!check_keys(p, j, is_attr ? ATTR_KEYS : TYPE_KEYS, is_attr ? "an attribute" : "a type")) return NULL;
    const dw_json *ty = dw_json_get(j, "type");
    if (!ty) { jfail(p, loc, "every type object has a \"type\" key, e.g. {\"type\": \"Long\"}", "missing \"type\""); return NULL; }
    if (!want(p, ty, DW_JSON_STRING, "\"type\"")) return NULL;
    dw_str k = ty->u.str;
    const dw_json *name = dw_json_get(j, "name");
    const dw_json *elem = dw_json_get(j, "element");
#define IS(lit) (k.len == sizeof(lit) - 1 && memcmp(k.s, lit, k.len) == 0)
    /* keys that belong to another variant are errors (serde would reject them) */
    bool rec = IS("Record"), set = IS("Set"), named = IS("Entity") || IS("Extension") || IS("EntityOrCommon");
    if ((elem && !set) || (name && !named) || (!rec && (dw_json_get(j, "attributes") || dw_json_get(j, "additionalAttributes")))) {
        jfail(p, loc, NULL, "this type object has keys that do not belong to its \"type\"");
        return NULL;
    }
    dw_rtype *t;
    if (IS("Long") || IS("String") || IS("Boolean")) {
        if (!(t = new_rtype(p, DW_RT_PRIM, loc))) return NULL;
        t->prim = IS("Long") ? DW_T_LONG : IS("String") ? DW_T_STRING : DW_T_BOOL;
        return t;
    }
    if (set) {
        if (!elem) { jfail(p, loc, NULL, "a \"Set\" type needs an \"element\" type"); return NULL; }
        if (!(t = new_rtype(p, DW_RT_SET, loc))) return NULL;
        if (!(t->elem = jtype(p, elem, false, depth + 1))) return NULL;
        return t;
    }
    if (rec) {
        if (!(t = new_rtype(p, DW_RT_RECORD, loc))) return NULL;
        return jrecord(p, j, t, depth);
    }
    if (!(t = new_rtype(p, DW_RT_NAME, loc))) return NULL;
    if (named) {
        if (!name) { jfail(p, loc, NULL, "this type needs a \"name\""); return NULL; }
        dw_rname rn;
        if (!name_string(p, name, "\"name\"", &rn)) return NULL;
        t->name = rn.name;
        t->loc = rn.loc;
        t->ref = IS("Entity") ? DW_REF_ENTITY : IS("Extension") ? DW_REF_EXT : DW_REF_ANY;
        return t;
    }
    /* anything else names a common type */
    dw_rname rn;
    if (!name_string(p, ty, "\"type\"", &rn)) return NULL;
    t->name = rn.name;
    t->loc = rn.loc;
    t->ref = DW_REF_COMMON;
    return t;
#undef IS
}

static bool name_list(jsp *p, const dw_json *j, const char *what, dw_rname **v, size_t *n)
{
    if (!want(p, j, DW_JSON_ARRAY, what)) return false;
    *n = 0;
    if (!j->u.arr.n) return true;
    *v = dw_arena_alloc(&p->s->arena, j->u.arr.n * sizeof **v);
    if (!*v) return jfail(p, nloc(p, j), NULL, "out of memory");
    for (size_t i = 0; i < j->u.arr.n; i++)
        if (!name_string(p, j->u.arr.v[i], what, &(*v)[(*n)++])) return false;
    return true;
}

static bool entity(jsp *p, dw_str ns, const dw_json_member *m)
{
    static const char *const keys[] = { "memberOfTypes", "shape", "tags", "enum", "annotations", NULL };
    if (!check_ident(p, m, "entity type")) return false;
    if (!want(p, m->value, DW_JSON_OBJECT, "an entity type declaration")) return false;
    if (!check_keys(p, m->value, keys, "an entity type declaration")) return false;
    dw_rdecl *d = dw_rschema_add(p->s, &p->r);
    if (!d) return jfail(p, kloc(p, m), NULL, "out of memory");
    d->kind = DW_RD_ENTITY;
    d->ns = ns;
    d->name = m->key;
    d->loc = kloc(p, m);
    const dw_json *mo = dw_json_get(m->value, "memberOfTypes"), *shape = dw_json_get(m->value, "shape"),
                  *tags = dw_json_get(m->value, "tags"), *en = dw_json_get(m->value, "enum");
    if (en) {
        if (mo || shape || tags)
            return jfail(p, nloc(p, en), "an enum entity type has no parents, attributes or tags",
                         "\"enum\" cannot be combined with \"memberOfTypes\", \"shape\" or \"tags\"");
        if (!want(p, en, DW_JSON_ARRAY, "\"enum\"")) return false;
        if (!en->u.arr.n) return jfail(p, nloc(p, en), NULL, "\"enum\" needs at least one value");
        d->is_enum = true;
        d->enum_ids = dw_arena_alloc(&p->s->arena, en->u.arr.n * sizeof *d->enum_ids);
        if (!d->enum_ids) return jfail(p, nloc(p, en), NULL, "out of memory");
        for (size_t i = 0; i < en->u.arr.n; i++) {
            if (!want(p, en->u.arr.v[i], DW_JSON_STRING, "an enum value")) return false;
            d->enum_ids[d->nenum++] = en->u.arr.v[i]->u.str;
        }
        return true;
    }
    if (mo && !name_list(p, mo, "\"memberOfTypes\"", &d->parents, &d->nparents)) return false;
    if (shape && !(d->shape = jtype(p, shape, false, 1))) return false;
    if (tags && !(d->tags = jtype(p, tags, false, 1))) return false;
    return true;
}

static bool action(jsp *p, dw_str ns, const dw_json_member *m)
{
    static const char *const keys[] = { "memberOf", "appliesTo", "attributes", "annotations", NULL };
    static const char *const akeys[] = { "principalTypes", "resourceTypes", "context", NULL };
    static const char *const rkeys[] = { "id", "type", NULL };
    dw_rdecl *d = dw_rschema_add(p->s, &p->r);
    if (!d) return jfail(p, kloc(p, m), NULL, "out of memory");
    d->kind = DW_RD_ACTION;
    d->ns = ns;
    d->name = m->key;
    d->loc = kloc(p, m);
    if (m->value->kind == DW_JSON_NULL) return true;
    if (!want(p, m->value, DW_JSON_OBJECT, "an action declaration")) return false;
    if (!check_keys(p, m->value, keys, "an action declaration")) return false;
    const dw_json *mo = dw_json_get(m->value, "memberOf"), *ap = dw_json_get(m->value, "appliesTo"),
                  *at = dw_json_get(m->value, "attributes");
    if (at) return jfail(p, nloc(p, at), "remove \"attributes\"", "action attributes are not supported");
    if (mo && mo->kind != DW_JSON_NULL) {
        if (!want(p, mo, DW_JSON_ARRAY, "\"memberOf\"")) return false;
        if (mo->u.arr.n) {
            d->aparents = dw_arena_alloc(&p->s->arena, mo->u.arr.n * sizeof *d->aparents);
            if (!d->aparents) return jfail(p, nloc(p, mo), NULL, "out of memory");
        }
        for (size_t i = 0; i < mo->u.arr.n; i++) {
            const dw_json *r = mo->u.arr.v[i];
            if (!want(p, r, DW_JSON_OBJECT, "an action reference")) return false;
            if (!check_keys(p, r, rkeys, "an action reference")) return false;
            dw_raref *ref = &d->aparents[d->naparents++];
            ref->loc = nloc(p, r);
            const dw_json *id = dw_json_get(r, "id"), *ty = dw_json_get(r, "type");
            if (!id) return jfail(p, ref->loc, "write {\"id\": \"name\"} or {\"id\": \"name\", \"type\": \"Ns::Action\"}", "an action reference needs an \"id\"");
            if (!want(p, id, DW_JSON_STRING, "\"id\"")) return false;
            ref->id = id->u.str;
            if (ty) {
                dw_rname rn;
                if (!name_string(p, ty, "\"type\"", &rn)) return false;
                ref->has_type = true;
                ref->type = rn.name;
            }
        }
    }
    if (ap && ap->kind != DW_JSON_NULL) {
        if (!want(p, ap, DW_JSON_OBJECT, "\"appliesTo\"")) return false;
        if (!check_keys(p, ap, akeys, "\"appliesTo\"")) return false;
        d->has_applies_to = true;
        const dw_json *pt = dw_json_get(ap, "principalTypes"), *rt = dw_json_get(ap, "resourceTypes"),
                      *cx = dw_json_get(ap, "context");
        if (!pt || !rt)
            return jfail(p, nloc(p, ap), "Cedar 4 requires both in \"appliesTo\"",
                         !pt ? "\"appliesTo\" is missing \"principalTypes\"" : "\"appliesTo\" is missing \"resourceTypes\"");
        if (!name_list(p, pt, "\"principalTypes\"", &d->principals, &d->nprincipals)) return false;
        if (!name_list(p, rt, "\"resourceTypes\"", &d->resources, &d->nresources)) return false;
        if (cx && !(d->context = jtype(p, cx, false, 1))) return false;
    }
    return true;
}

static bool namespace(jsp *p, const dw_json_member *m)
{
    static const char *const keys[] = { "commonTypes", "entityTypes", "actions", "annotations", NULL };
    if (!is_path(m->key, true)) {
        char msg[200];
        snprintf(msg, sizeof msg, "invalid namespace name \"%.*s\"", (int)(m->key.len > 60 ? 60 : m->key.len), m->key.s);
        return jfail(p, kloc(p, m), "a namespace is identifiers joined with `::`, or \"\" for the empty namespace", msg);
    }
    if (!want(p, m->value, DW_JSON_OBJECT, "a namespace")) return false;
    if (!check_keys(p, m->value, keys, "a namespace")) return false;
    const dw_json *ct = dw_json_get(m->value, "commonTypes"), *et = dw_json_get(m->value, "entityTypes"),
                  *ac = dw_json_get(m->value, "actions");
    bool ok = true;
    if (!et) ok = jfail(p, kloc(p, m), "add \"entityTypes\": {}", "namespace is missing \"entityTypes\"");
    if (!ac) ok = jfail(p, kloc(p, m), "add \"actions\": {}", "namespace is missing \"actions\"");
    if (!ok) return false;
    if (ct) {
        if (!want(p, ct, DW_JSON_OBJECT, "\"commonTypes\"")) return false;
        for (size_t i = 0; i < ct->u.obj.n; i++) {
            const dw_json_member *c = &ct->u.obj.v[i];
            if (!check_ident(p, c, "common type")) return false;
            dw_rdecl *d = dw_rschema_add(p->s, &p->r);
            if (!d) return jfail(p, kloc(p, c), NULL, "out of memory");
            d->kind = DW_RD_COMMON;
            d->ns = m->key;
            d->name = c->key;
            d->loc = kloc(p, c);
            if (!(d->def = jtype(p, c->value, false, 1))) return false;
        }
    }
    if (!want(p, et, DW_JSON_OBJECT, "\"entityTypes\"")) return false;
    for (size_t i = 0; i < et->u.obj.n; i++)
        if (!entity(p, m->key, &et->u.obj.v[i])) return false;
    if (!want(p, ac, DW_JSON_OBJECT, "\"actions\"")) return false;
    for (size_t i = 0; i < ac->u.obj.n; i++)
        if (!action(p, m->key, &ac->u.obj.v[i])) return false;
    return true;
}

dw_schema *dw_schema_parse_json(const dw_source *src, dw_diags *diags)
{
    jsp P;
    memset(&P, 0, sizeof P);
    P.s = dw_schema_new(src);
    if (!P.s) { dw_error(diags, src, dw_loc_at(src, 0, 0), "out of memory"); return NULL; }
    P.src = src;
    P.d = diags;
    P.c_line = P.c_col = 1;
    dw_json *root = dw_json_parse(&P.s->arena, src, diags);
    bool ok = root != NULL;
    if (ok) ok = want(&P, root, DW_JSON_OBJECT, "a JSON schema");
    if (ok) {
        /* duplicate namespace keys (the JSON reader keeps duplicates) */
        for (size_t i = 0; ok && i < root->u.obj.n; i++)
            for (size_t j = 0; j < i; j++)
                if (root->u.obj.v[j].key.len == root->u.obj.v[i].key.len &&
                    memcmp(root->u.obj.v[j].key.s, root->u.obj.v[i].key.s, root->u.obj.v[i].key.len) == 0) {
                    char msg[160];
                    snprintf(msg, sizeof msg, "duplicate namespace \"%.*s\"", (int)(root->u.obj.v[i].key.len > 60 ? 60 : root->u.obj.v[i].key.len),
                             root->u.obj.v[i].key.s);
                    ok = jfail(&P, kloc(&P, &root->u.obj.v[i]), NULL, msg);
                    break;
                }
        for (size_t i = 0; ok && i < root->u.obj.n; i++) ok = namespace(&P, &root->u.obj.v[i]);
    }
    if (!ok || P.failed) {
        if (diags->nerrors == 0) dw_error(diags, src, dw_loc_at(src, 0, 0), "invalid JSON schema");
        dw_schema_free(P.s);
        return NULL;
    }
    return dw_schema_resolve(P.s, &P.r, diags);
}
