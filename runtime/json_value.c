#include "json_value.h"
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "../stdlib/bytes.h"

/* Append a message (printf-style) and the JSON offset; always -1.  Names that
 * come from the schema are dw_str slices of its source: print them %.*s. */
int dw_value_fail(dw_buf *err, const dw_json *at, const char *fmt, ...)
{
    if (!err) return -1;                   /* a caller that only needs the answer (json_request.c) */
    if (err->len) dw_buf_append(err, "; ", 2);
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    dw_buf_append(err, tmp, strlen(tmp));
    if (at) dw_buf_printf(err, " (at byte %u)", at->off);
    return -1;
}


const dw_uid *dw_uid_from_json(dw_arena *a, const dw_json *j, dw_buf *err)
{
    if (!j || j->kind != DW_JSON_OBJECT) { dw_value_fail(err, j, "expected an entity uid object"); return NULL; }
    const dw_json *inner = dw_json_get(j, "__entity");
    if (inner && j->u.obj.n == 1) j = inner;
    const dw_json *t = dw_json_get(j, "type"), *id = dw_json_get(j, "id");
    if (!t || !id || t->kind != DW_JSON_STRING || id->kind != DW_JSON_STRING || j->u.obj.n != 2) {
        dw_value_fail(err, j, "an entity uid needs exactly the string members \"type\" and \"id\"");
        return NULL;
    }
    const dw_uid *u = dw_make_uid(a, t->u.str.s, t->u.str.len, id->u.str.s, id->u.str.len);
    if (!u) dw_value_fail(err, j, "out of memory");
    return u;
}

int dw_ext_from_string(dw_arena *a, const char *s, size_t n, dw_type_kind k, dw_value *out, dw_buf *err, const dw_json *at)
{
    static const dw_extfn ctor[] = {
        [DW_T_DECIMAL] = DW_FN_DECIMAL, [DW_T_IPADDR] = DW_FN_IP,
        [DW_T_DATETIME] = DW_FN_DATETIME, [DW_T_DURATION] = DW_FN_DURATION,
    };
    dw_value arg;
    if (!dw_make_string(a, s, n, &arg)) return dw_value_fail(err, at, "out of memory");
    if (dw_call_extfn(a, NULL, ctor[k], &arg, 1, out) != DW_EVAL_OK)
        return dw_value_fail(err, at, "invalid extension value \"%s\"", s);
    return 0;
}

/* {"__extn": {"fn": F, "arg": A}} or {"fn": F, "args": [A, B]} */
static int ext_from_json(dw_arena *a, const dw_json *x, dw_value *out, dw_buf *err)
{
    const dw_json *fn = dw_json_get(x, "fn"), *arg = dw_json_get(x, "arg"), *args = dw_json_get(x, "args");
    if (!fn || fn->kind != DW_JSON_STRING) return dw_value_fail(err, x, "__extn needs a string \"fn\"");
    dw_value vals[4];
    uint32_t n = 0;
    if (arg) {
        if (dw_value_from_json(a, arg, NULL, &vals[n++], err)) return -1;
    } else if (args && args->kind == DW_JSON_ARRAY && args->u.arr.n <= 4) {
        for (size_t i = 0; i < args->u.arr.n; i++)
            if (dw_value_from_json(a, args->u.arr.v[i], NULL, &vals[n++], err)) return -1;
    } else return dw_value_fail(err, x, "__extn needs \"arg\" or \"args\"");
    return dw_ext_call(a, fn->u.str.s, fn->u.str.len, vals, n, out, err, x);
}

int dw_ext_call(dw_arena *a, const char *fn, size_t fnlen, const dw_value *args, uint32_t n, dw_value *out, dw_buf *err,
                const dw_json *at)
{
    int f = dw_extfn_lookup(fn, fnlen, 0);
    if (f < 0) f = dw_extfn_lookup(fn, fnlen, 1);
    if (f < 0) return dw_value_fail(err, at, "unknown extension function \"%s\"", fn);
    if (dw_call_extfn(a, NULL, (dw_extfn)f, args, n, out) != DW_EVAL_OK)
        return dw_value_fail(err, at, "extension call %s failed", fn);
    if (out->kind < DW_V_DECIMAL) return dw_value_fail(err, at, "__extn %s does not produce an extension value", fn);
    return 0;
}

static const char *type_kind_name(dw_type_kind k)
{
    static const char *n[] = { "Bool", "Long", "String", "entity", "Set", "record", "decimal", "ipaddr", "datetime", "duration" };
    return (unsigned)k < sizeof n / sizeof *n ? n[k] : "?";
}

static int record_from_json(dw_arena *a, const dw_json *j, const dw_type *expect, dw_value *out, dw_buf *err)
{
    size_t n = j->u.obj.n;
    dw_field *f = n ? dw_arena_alloc(a, n * sizeof *f) : NULL;
    if (n && !f) return dw_value_fail(err, j, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const dw_json_member *m = &j->u.obj.v[i];
        const dw_type *at = NULL;
        if (expect) {
            const dw_attr_decl *d = dw_record_attr_decl(expect, m->key.s, m->key.len);
            if (!d && !expect->additional_attrs) return dw_value_fail(err, m->value, "attribute \"%s\" is not declared in the schema", m->key.s);
            at = d ? d->type : NULL;
        }
        f[i].key = m->key.s;
        f[i].klen = (uint32_t)m->key.len;
        if (dw_value_from_json(a, m->value, at, &f[i].v, err)) return -1;
    }
    if (!dw_make_record(f, n, out)) return dw_value_fail(err, j, "duplicate attribute in record");
    return dw_record_check_required(out, expect, err, j);
}

int dw_record_check_required(const dw_value *rec, const dw_type *expect, dw_buf *err, const dw_json *at)
{
    for (size_t k = 0; expect && k < expect->nattrs; k++)
        if (expect->attrs[k].required && !dw_record_get(rec, expect->attrs[k].name.s, expect->attrs[k].name.len))
            return dw_value_fail(err, at, "required attribute \"%.*s\" is missing", (int)expect->attrs[k].name.len, expect->attrs[k].name.s);
    return 0;
}

const dw_attr_decl *dw_record_attr_decl(const dw_type *expect, const char *key, size_t klen)
{
    for (size_t k = 0; k < expect->nattrs; k++)
        if (expect->attrs[k].name.len == klen && dw_mem_eq(expect->attrs[k].name.s, key, klen)) return &expect->attrs[k];
    return NULL;
}

int dw_value_from_json(dw_arena *a, const dw_json *j, const dw_type *expect, dw_value *out, dw_buf *err)
{
    if (j->kind == DW_JSON_OBJECT && j->u.obj.n == 1) {
        const dw_json *x = dw_json_get(j, "__extn");
        if (x) {
            if (ext_from_json(a, x, out, err)) return -1;
            goto check;
        }
        if (dw_json_get(j, "__entity")) {
            const dw_uid *u = dw_uid_from_json(a, j, err);
            if (!u) return -1;
            out->kind = DW_V_ENTITY;
            out->u.uid = u;
            goto check;
        }
    }
    if (expect) {
        switch (expect->kind) {
        case DW_T_ENTITY: {
            const dw_uid *u = dw_uid_from_json(a, j, err);
            if (!u) return -1;
            out->kind = DW_V_ENTITY;
            out->u.uid = u;
            goto check;
        }
        case DW_T_DECIMAL: case DW_T_IPADDR: case DW_T_DATETIME: case DW_T_DURATION:
            if (j->kind == DW_JSON_STRING) return dw_ext_from_string(a, j->u.str.s, j->u.str.len, expect->kind, out, err, j);
            /* the schema says it is an extension value: Cedar also takes the
             * call without its `__extn` wrapper, {"fn": F, "arg": A} */
            if (j->kind == DW_JSON_OBJECT && dw_json_get(j, "fn")) {
                if (ext_from_json(a, j, out, err)) return -1;
                goto check;
            }
            break;
        case DW_T_RECORD:
            if (j->kind != DW_JSON_OBJECT) return dw_value_fail(err, j, "expected a record");
            return record_from_json(a, j, expect, out, err);
        case DW_T_SET:
            if (j->kind != DW_JSON_ARRAY) return dw_value_fail(err, j, "expected a set (JSON array)");
            break;
        default: break;
        }
    }
    switch (j->kind) {
    case DW_JSON_BOOL: *out = dw_bool(j->u.b); break;
    case DW_JSON_INT: *out = dw_long(j->u.i); break;
    case DW_JSON_STRING:
        /* the JSON outlives its values (record keys point into it too), and
         * the reader's strings are NUL-terminated copies: no second copy */
        *out = (dw_value){ .kind = DW_V_STRING, .n = (uint32_t)j->u.str.len };
        out->u.s = j->u.str.s;
        break;
    case DW_JSON_ARRAY: {
        size_t n = j->u.arr.n;
        dw_value *v = n ? dw_arena_alloc(a, n * sizeof *v) : NULL;
        if (n && !v) return dw_value_fail(err, j, "out of memory");
        const dw_type *et = expect && expect->kind == DW_T_SET ? expect->elem : NULL;
        for (size_t i = 0; i < n; i++)
            if (dw_value_from_json(a, j->u.arr.v[i], et, &v[i], err)) return -1;
        *out = dw_make_set(v, n);
        break;
    }
    case DW_JSON_OBJECT:
        if (record_from_json(a, j, NULL, out, err)) return -1;
        break;
    case DW_JSON_FLOAT: return dw_value_fail(err, j, "numbers must be 64-bit integers");
    case DW_JSON_NULL: return dw_value_fail(err, j, "null is not a Cedar value");
    }
check:
    return dw_value_check_type(out, expect, err, j);
}

int dw_value_check_type(const dw_value *out, const dw_type *expect, dw_buf *err, const dw_json *j)
{
    if (expect) {
        static const dw_vkind want[] = {
            [DW_T_BOOL] = DW_V_BOOL, [DW_T_LONG] = DW_V_LONG, [DW_T_STRING] = DW_V_STRING,
            [DW_T_ENTITY] = DW_V_ENTITY, [DW_T_SET] = DW_V_SET, [DW_T_RECORD] = DW_V_RECORD,
            [DW_T_DECIMAL] = DW_V_DECIMAL, [DW_T_IPADDR] = DW_V_IPADDR,
            [DW_T_DATETIME] = DW_V_DATETIME, [DW_T_DURATION] = DW_V_DURATION,
        };
        if (out->kind != want[expect->kind])
            return dw_value_fail(err, j, "type mismatch: the schema expects %s", type_kind_name(expect->kind));
        if (expect->kind == DW_T_ENTITY &&
            (out->u.uid->tlen != expect->name.len || memcmp(out->u.uid->type, expect->name.s, expect->name.len) != 0))
            return dw_value_fail(err, j, "type mismatch: the schema expects an entity of type %.*s", (int)expect->name.len, expect->name.s);
    }
    return 0;
}

int dw_store_add_schema_actions(dw_store *s, const dw_schema *schema, dw_buf *err)
{
    for (size_t i = 0; i < schema->nactions; i++) {
        const dw_action_decl *ad = &schema->actions[i];
        const dw_uid *u = dw_make_uid(&s->arena, ad->uid.type.s, ad->uid.type.len, ad->uid.id.s, ad->uid.id.len);
        bool created;
        dw_entity *e = u ? dw_store_put(s, u, &created) : NULL;
        if (!e) return dw_value_fail(err, NULL, "out of memory");
        if (!created) continue;     /* also given in the entities file: keep one definition */
        if (ad->nparents) {
            e->parents = dw_arena_alloc(&s->arena, ad->nparents * sizeof *e->parents);
            if (!e->parents) return dw_value_fail(err, NULL, "out of memory");
            for (size_t k = 0; k < ad->nparents; k++) {
                e->parents[k] = dw_make_uid(&s->arena, ad->parents[k].type.s, ad->parents[k].type.len,
                                            ad->parents[k].id.s, ad->parents[k].id.len);
                if (!e->parents[k]) return dw_value_fail(err, NULL, "out of memory");
            }
            e->nparents = (uint32_t)ad->nparents;
        }
    }
    return 0;
}

/* The same JSON value: same kinds, members in the same order (depth-bounded). */
static bool json_same(const dw_json *a, const dw_json *b, int depth)
{
    if (a->kind != b->kind || depth > 64) return false;
    switch (a->kind) {
    case DW_JSON_NULL: return true;
    case DW_JSON_BOOL: return a->u.b == b->u.b;
    case DW_JSON_INT: return a->u.i == b->u.i;
    case DW_JSON_FLOAT: return a->u.d == b->u.d;
    case DW_JSON_STRING: return a->u.str.len == b->u.str.len && memcmp(a->u.str.s, b->u.str.s, a->u.str.len) == 0;
    case DW_JSON_ARRAY:
        if (a->u.arr.n != b->u.arr.n) return false;
        for (size_t i = 0; i < a->u.arr.n; i++) if (!json_same(a->u.arr.v[i], b->u.arr.v[i], depth + 1)) return false;
        return true;
    case DW_JSON_OBJECT:
        if (a->u.obj.n != b->u.obj.n) return false;
        for (size_t i = 0; i < a->u.obj.n; i++) {
            const dw_json_member *x = &a->u.obj.v[i], *y = &b->u.obj.v[i];
            if (x->key.len != y->key.len || memcmp(x->key.s, y->key.s, x->key.len) || !json_same(x->value, y->value, depth + 1))
                return false;
        }
        return true;
    }
    return false;
}

/* false if u's type is an enumerated entity type without u's id */
static bool enum_id_declared(const dw_entity_decl *d, const dw_uid *u)
{
    if (!d || !d->is_enum) return true;
    for (size_t k = 0; k < d->nenum; k++)
        if (dw_str_eq(d->enum_ids[k], (dw_str){ u->id, u->idlen })) return true;
    return false;
}

bool dw_schema_enum_id_declared(const dw_schema *schema, const dw_uid *u)
{
    return enum_id_declared(dw_schema_entity(schema, u->type, u->tlen), u);
}

/* Is `parent`'s type reachable from decl through the schema's memberOf
 * chain?  Cedar checks a parent against the transitive closure
 * (`Reservation in [Property]`, `Property in [Hotel]`: a Reservation may
 * have a Hotel parent).  1 yes, 0 no, -1 out of memory. */
int dw_schema_member_of_reaches(const dw_schema *schema, const dw_entity_decl *decl, const dw_uid *parent)
{
    size_t n = schema->nentities, head = 0, tail = 0;
    const dw_entity_decl **queue = n ? malloc(n * sizeof *queue) : NULL;
    bool *seen = n ? calloc(n, 1) : NULL;
    if (n && (!queue || !seen)) { free(queue); free(seen); return -1; }
    int found = 0;
    queue[tail++] = decl;
    seen[decl - schema->entities] = true;
    while (head < tail && !found) {
        const dw_entity_decl *d = queue[head++];
        for (size_t m = 0; m < d->nmember_of && !found; m++) {
            const dw_str *t = &d->member_of[m];
            if (t->len == parent->tlen && memcmp(t->s, parent->type, t->len) == 0) { found = 1; break; }
            const dw_entity_decl *up = dw_schema_entity(schema, t->s, t->len);
            if (up && !seen[up - schema->entities]) { seen[up - schema->entities] = true; queue[tail++] = up; }
        }
    }
    free(queue);
    free(seen);
    return found;
}

/* checked: entity validation against the schema (§5.7); unchecked: the
 * entities as given, the schema supplying only its actions */
static int load_json(dw_store *s, const dw_json *arr, const dw_schema *actions, bool checked, dw_buf *err)
{
    const dw_schema *schema = checked ? actions : NULL;
    if (!arr || arr->kind != DW_JSON_ARRAY) return dw_value_fail(err, arr, "the entities file must be a JSON array");
    for (size_t i = 0; i < arr->u.arr.n; i++) {
        const dw_json *ej = arr->u.arr.v[i];
        if (ej->kind != DW_JSON_OBJECT) return dw_value_fail(err, ej, "each entity must be a JSON object");
        const dw_uid *u = dw_uid_from_json(&s->arena, dw_json_get(ej, "uid"), err);
        if (!u) return -1;
        bool created;
        dw_entity *e = dw_store_put(s, u, &created);
        if (!e) return dw_value_fail(err, ej, "out of memory");
        if (!created) {
            /* Cedar takes an entity given twice the same way once, and refuses two
             * different ones; "the same" here is the same JSON, member for member */
            bool same = false;
            for (size_t k = 0; k < i && !same; k++) same = json_same(arr->u.arr.v[k], ej, 0);
            if (same) continue;
            return dw_value_fail(err, ej, "duplicate entity %s", u->id);
        }
        const dw_json *attrs = dw_json_get(ej, "attrs"), *parents = dw_json_get(ej, "parents"), *tags = dw_json_get(ej, "tags");
        const dw_entity_decl *decl;
        if (dw_entity_check_decl(schema, u, attrs && attrs->kind == DW_JSON_OBJECT && attrs->u.obj.n,
                                 tags && tags->kind == DW_JSON_OBJECT && tags->u.obj.n, &decl, err, ej, attrs, tags))
            return -1;
        if (attrs) {
            if (attrs->kind != DW_JSON_OBJECT) return dw_value_fail(err, attrs, "\"attrs\" must be an object");
            if (record_from_json(&s->arena, attrs, decl ? decl->shape : NULL, &e->attrs, err)) return -1;
        }
        if (tags) {
            if (tags->kind != DW_JSON_OBJECT) return dw_value_fail(err, tags, "\"tags\" must be an object");
            /* every tag has the declared tag type */
            size_t n = tags->u.obj.n;
            dw_field *f = n ? dw_arena_alloc(&s->arena, n * sizeof *f) : NULL;
            if (n && !f) return dw_value_fail(err, tags, "out of memory");
            for (size_t k = 0; k < n; k++) {
                f[k].key = tags->u.obj.v[k].key.s;
                f[k].klen = (uint32_t)tags->u.obj.v[k].key.len;
                if (dw_value_from_json(&s->arena, tags->u.obj.v[k].value, decl ? decl->tags : NULL, &f[k].v, err)) return -1;
            }
            if (!dw_make_record(f, n, &e->tags)) return dw_value_fail(err, tags, "duplicate tag");
        }
        if (parents) {
            if (parents->kind != DW_JSON_ARRAY) return dw_value_fail(err, parents, "\"parents\" must be an array");
            size_t n = parents->u.arr.n;
            e->parents = n ? dw_arena_alloc(&s->arena, n * sizeof *e->parents) : NULL;
            if (n && !e->parents) return dw_value_fail(err, parents, "out of memory");
            for (size_t k = 0; k < n; k++) {
                const dw_uid *pu = dw_uid_from_json(&s->arena, parents->u.arr.v[k], err);
                if (!pu) return -1;
                e->parents[k] = pu;
                if (dw_entity_check_parent(schema, decl, u, pu, err, parents->u.arr.v[k])) return -1;
            }
            e->nparents = (uint32_t)n;
        }
    }
    return dw_store_finish(s, actions, err);
}

int dw_entity_check_decl(const dw_schema *schema, const dw_uid *u, bool has_attrs, bool has_tags,
                         const dw_entity_decl **decl_out, dw_buf *err, const dw_json *at, const dw_json *attrs_at,
                         const dw_json *tags_at)
{
    const dw_entity_decl *decl = schema ? dw_schema_entity(schema, u->type, u->tlen) : NULL;
    const dw_action_decl *adecl = schema && !decl ? dw_schema_action(schema, u->type, u->tlen, u->id, u->idlen) : NULL;
    *decl_out = decl;
    /* entity validation (dogwood.md §5.7) */
    if (schema && !decl && !adecl)
        return dw_value_fail(err, at, "entity type %s is not declared in the schema", u->type);
    if (decl && decl->is_enum) {
        if (!dw_schema_enum_id_declared(schema, u)) return dw_value_fail(err, at, "\"%s\" is not a declared id of its enumerated entity type", u->id);
        if (has_attrs) return dw_value_fail(err, attrs_at, "enumerated entities have no attributes");
    }
    if (decl && !decl->tags && has_tags) return dw_value_fail(err, tags_at, "entity type %s declares no tags", u->type);
    return 0;
}

int dw_entity_check_parent(const dw_schema *schema, const dw_entity_decl *decl, const dw_uid *u, const dw_uid *parent,
                           dw_buf *err, const dw_json *at)
{
    if (!decl) return 0;
    int r = dw_schema_member_of_reaches(schema, decl, parent);
    if (r < 0) return dw_value_fail(err, at, "out of memory");
    if (!r) return dw_value_fail(err, at, "an entity of type %s cannot have a parent of this type", u->type);
    return 0;
}

int dw_store_finish(dw_store *s, const dw_schema *actions, dw_buf *err)
{
    if (actions && dw_store_add_schema_actions(s, actions, err)) return -1;
    int rc = dw_store_seal(s);
    if (rc == DW_STORE_TOO_DEEP)
        return dw_value_fail(err, NULL, "the entity hierarchy is too large: more than %u ancestor links in all (a chain of "
                    "thousands of entities?); flatten deep membership chains", DW_STORE_MAX_ANCESTORS);
    if (rc) return dw_value_fail(err, NULL, "out of memory");
    return 0;
}

int dw_store_load_json(dw_store *s, const dw_json *arr, const dw_schema *schema, dw_buf *err)
{
    return load_json(s, arr, schema, true, err);
}

int dw_store_load_json_unchecked(dw_store *s, const dw_json *arr, const dw_schema *schema, dw_buf *err)
{
    return load_json(s, arr, schema, false, err);
}

bool dw_type_listed(const dw_str *list, size_t n, const dw_uid *u)
{
    for (size_t i = 0; i < n; i++)
        if (dw_str_eq(list[i], (dw_str){ u->type, u->tlen })) return true;
    return false;
}

int dw_request_from_json(dw_arena *a, const dw_json *principal, const dw_json *action,
                         const dw_json *resource, const dw_json *context,
                         const dw_schema *schema, bool validate, dw_request *out, dw_buf *err)
{
    /* unbound, no temporal leaf values: a caller's stack or realloc'd request
     * must not hand the VM stale pointers (dwc bench read garbage leaf_values) */
    memset(out, 0, sizeof *out);
    const dw_json *uj[3] = { principal, action, resource };
    for (int i = 0; i < 3; i++) {
        const dw_uid *u = dw_uid_from_json(a, uj[i], err);
        if (!u) return -1;
        out->vars[i].kind = DW_V_ENTITY;
        out->vars[i].u.uid = u;
    }
    /* With a schema the context is always parsed against the action's declared
     * context (closed records, required attributes, extension strings), so an
     * undeclared action fails even without validation (dogwood.md §5.7). */
    const dw_action_decl *ad = NULL;
    if (schema) {
        const dw_uid *au = out->vars[DW_VAR_A].u.uid;
        ad = dw_schema_action(schema, au->type, au->tlen, au->id, au->idlen);
        if (!ad) return dw_value_fail(err, action, "action %s is not declared in the schema", au->id);
    }
    if (context) {
        if (context->kind != DW_JSON_OBJECT) return dw_value_fail(err, context, "the context must be a JSON object");
        if (record_from_json(a, context, ad ? ad->context : NULL, &out->vars[DW_VAR_C], err)) return -1;
    } else {
        out->vars[DW_VAR_C].kind = DW_V_RECORD;
        out->vars[DW_VAR_C].n = 0;
        if (ad)
            for (size_t k = 0; k < ad->context->nattrs; k++)
                if (ad->context->attrs[k].required)
                    return dw_value_fail(err, NULL, "required context attribute \"%.*s\" is missing", (int)ad->context->attrs[k].name.len, ad->context->attrs[k].name.s);
    }
    return dw_request_check(schema, ad, validate, out, uj, err);
}

int dw_request_check(const dw_schema *schema, const dw_action_decl *ad, bool validate, const dw_request *out,
                     const dw_json *const uj[3], dw_buf *err)
{
    return dw_request_check_hashed(schema, ad, validate, out, NULL, uj, err);
}

int dw_request_check_hashed(const dw_schema *schema, const dw_action_decl *ad, bool validate, const dw_request *out,
                            const uint64_t type_hash[3], const dw_json *const uj[3], dw_buf *err)
{
    const dw_json *action = uj ? uj[1] : NULL, *principal = uj ? uj[0] : NULL, *resource = uj ? uj[2] : NULL;
    if (ad && validate) {
        if (!ad->has_applies_to) return dw_value_fail(err, action, "action %.*s applies to no principal or resource", (int)ad->uid.id.len, ad->uid.id.s);
        if (!dw_type_listed(ad->principals, ad->nprincipals, out->vars[DW_VAR_P].u.uid))
            return dw_value_fail(err, principal, "principal type %s is not allowed for this action", out->vars[DW_VAR_P].u.uid->type);
        if (!dw_type_listed(ad->resources, ad->nresources, out->vars[DW_VAR_R].u.uid))
            return dw_value_fail(err, resource, "resource type %s is not allowed for this action", out->vars[DW_VAR_R].u.uid->type);
        /* Cedar's request validation: an enumerated type's entity must be one of its ids
         * (none to check when no type the action lists is enumerated) */
        unsigned enums = dw_schema_scope_enums(schema, ad);
        for (int i = 0; i < 3; i += 2) {
            if (!(enums & (i == DW_VAR_P ? DW_SCOPE_ENUM_PRINCIPAL : DW_SCOPE_ENUM_RESOURCE))) continue;
            const dw_uid *u = out->vars[i].u.uid;
            const dw_entity_decl *d = type_hash ? dw_schema_entity_h(schema, u->type, u->tlen, type_hash[i])
                                                : dw_schema_entity(schema, u->type, u->tlen);
            if (!enum_id_declared(d, u))
                return dw_value_fail(err, uj ? uj[i] : NULL, "entity %s::\"%s\" is of an enumerated entity type, but \"%s\" is not declared as a valid eid",
                            u->type, u->id, u->id);
        }
    }
    return 0;
}
