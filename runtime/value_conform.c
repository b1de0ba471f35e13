/* value_conform.c - see value_conform.h.  Each rule mirrors
 * dw_value_from_json on the JSON form an event value would have (an entity
 * as {"__entity": …}, an extension value as {"__extn": …}), so a record that
 * spells one of those forms is read the same way here. */
#include "value_conform.h"
#include <string.h>
#include "../stdlib/bytes.h"

#define MAX_DEPTH 256

static bool dropped(const dw_field *f, bool drop_null) { return drop_null && f->v.kind == DW_V_NULL; }

/* A record's member as its JSON object would have it (Null members dropped
 * with drop_null): the first of that name. */
static const dw_value *member(const dw_value *rec, const char *key, size_t klen, bool drop_null)
{
    for (uint32_t i = 0; i < rec->n; i++) {
        const dw_field *f = &rec->u.fields[i];
        if (!dropped(f, drop_null) && f->klen == klen && dw_mem_eq(f->key, key, klen)) return &f->v;
    }
    return NULL;
}

static uint32_t members(const dw_value *rec, bool drop_null)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < rec->n; i++) n += !dropped(&rec->u.fields[i], drop_null);
    return n;
}

/* {"type": T, "id": I} or {"__entity": {…}} as a record: dw_uid_from_json's rules. */
static int uid_of(dw_arena *a, const dw_value *v, bool drop_null, const dw_uid **out, dw_buf *err)
{
    if (v->kind == DW_V_ENTITY) { *out = v->u.uid; return 0; }
    if (v->kind != DW_V_RECORD) return dw_value_fail(err, NULL, "expected an entity uid object");
    const dw_value *inner = member(v, "__entity", 8, drop_null);
    if (inner && members(v, drop_null) == 1) {
        if (inner->kind == DW_V_ENTITY) { *out = inner->u.uid; return 0; }
        v = inner;
    }
    const dw_value *t = v->kind == DW_V_RECORD ? member(v, "type", 4, drop_null) : NULL;
    const dw_value *id = v->kind == DW_V_RECORD ? member(v, "id", 2, drop_null) : NULL;
    if (!t || !id || t->kind != DW_V_STRING || id->kind != DW_V_STRING || members(v, drop_null) != 2)
        return dw_value_fail(err, NULL, "an entity uid needs exactly the string members \"type\" and \"id\"");
    if (!(*out = dw_make_uid(a, t->u.s, t->n, id->u.s, id->n))) return -2;
    return 0;
}

static int conform_at(dw_arena *a, const dw_value *v, const dw_type *expect, bool drop_null, dw_value *out,
                      dw_buf *err, int depth);

/* {"fn": F, "arg": A} or {"fn": F, "args": [A, B]} as a record. */
static int ext_of(dw_arena *a, const dw_value *x, bool drop_null, dw_value *out, dw_buf *err, int depth)
{
    const dw_value *fn = member(x, "fn", 2, drop_null), *arg = member(x, "arg", 3, drop_null);
    const dw_value *args = member(x, "args", 4, drop_null);
    if (!fn || fn->kind != DW_V_STRING) return dw_value_fail(err, NULL, "__extn needs a string \"fn\"");
    dw_value vals[4];
    uint32_t n = 0;
    int rc;
    if (arg) {
        if ((rc = conform_at(a, arg, NULL, drop_null, &vals[n++], err, depth + 1))) return rc;
    } else if (args && (args->kind == DW_V_ARRAY || args->kind == DW_V_SET) && args->n <= 4) {
        for (uint32_t i = 0; i < args->n; i++)
            if ((rc = conform_at(a, &args->u.elems[i], NULL, drop_null, &vals[n++], err, depth + 1))) return rc;
    } else return dw_value_fail(err, NULL, "__extn needs \"arg\" or \"args\"");
    return dw_ext_call(a, fn->u.s, fn->n, vals, n, out, err, NULL);
}

static int record_at(dw_arena *a, const dw_value *v, const dw_type *expect, bool drop_null, dw_value *out,
                     dw_buf *err, int depth)
{
    uint32_t n = members(v, drop_null);
    dw_field *f = n ? dw_arena_alloc(a, n * sizeof *f) : NULL;
    if (n && !f) return -2;
    uint32_t w = 0;
    for (uint32_t i = 0; i < v->n; i++) {
        const dw_field *m = &v->u.fields[i];
        if (dropped(m, drop_null)) continue;
        const dw_type *at = NULL;
        if (expect) {
            const dw_attr_decl *d = dw_record_attr_decl(expect, m->key, m->klen);
            if (!d && !expect->additional_attrs) return dw_value_fail(err, NULL, "attribute \"%s\" is not declared in the schema", m->key);
            at = d ? d->type : NULL;
        }
        f[w].key = m->key;
        f[w].klen = m->klen;
        int rc = conform_at(a, &m->v, at, drop_null, &f[w].v, err, depth + 1);
        if (rc) return rc;
        w++;
    }
    if (!dw_make_record(f, n, out)) return dw_value_fail(err, NULL, "duplicate attribute in record");
    return dw_record_check_required(out, expect, err, NULL);
}

static int conform_at(dw_arena *a, const dw_value *v, const dw_type *expect, bool drop_null, dw_value *out,
                      dw_buf *err, int depth)
{
    if (depth > MAX_DEPTH) return -2;
    int rc;
    if (v->kind == DW_V_RECORD && members(v, drop_null) == 1) {   /* the JSON reader's escapes */
        const dw_value *x = member(v, "__extn", 6, drop_null);
        if (x) {
            if (x->kind != DW_V_RECORD) return dw_value_fail(err, NULL, "__extn needs a string \"fn\"");
            if ((rc = ext_of(a, x, drop_null, out, err, depth))) return rc;
            return dw_value_check_type(out, expect, err, NULL);
        }
        if (member(v, "__entity", 8, drop_null)) {
            const dw_uid *u;
            if ((rc = uid_of(a, v, drop_null, &u, err))) return rc;
            *out = (dw_value){ .kind = DW_V_ENTITY };
            out->u.uid = u;
            return dw_value_check_type(out, expect, err, NULL);
        }
    }
    dw_value empty = { .kind = DW_V_STRING, .n = 0 };
    empty.u.s = "";
    if (v->kind == DW_V_NULL) v = &empty;     /* §20 Q15 */
    if (expect) {
        switch (expect->kind) {
        case DW_T_ENTITY: {
            const dw_uid *u;
            if ((rc = uid_of(a, v, drop_null, &u, err))) return rc;
            *out = (dw_value){ .kind = DW_V_ENTITY };
            out->u.uid = u;
            return dw_value_check_type(out, expect, err, NULL);
        }
        case DW_T_DECIMAL: case DW_T_IPADDR: case DW_T_DATETIME: case DW_T_DURATION:
            if (v->kind == DW_V_STRING) return dw_ext_from_string(a, v->u.s, v->n, expect->kind, out, err, NULL);
            if (v->kind == DW_V_RECORD && member(v, "fn", 2, drop_null)) {
                if ((rc = ext_of(a, v, drop_null, out, err, depth))) return rc;
                return dw_value_check_type(out, expect, err, NULL);
            }
            break;
        case DW_T_RECORD:
            if (v->kind != DW_V_RECORD) return dw_value_fail(err, NULL, "expected a record");
            return record_at(a, v, expect, drop_null, out, err, depth);
        case DW_T_SET:
            if (v->kind != DW_V_SET && v->kind != DW_V_ARRAY) return dw_value_fail(err, NULL, "expected a set (JSON array)");
            break;
        default: break;
        }
    }
    switch ((dw_vkind)v->kind) {
    case DW_V_SET: case DW_V_ARRAY: {
        dw_value *el = v->n ? dw_arena_alloc(a, v->n * sizeof *el) : NULL;
        if (v->n && !el) return -2;
        const dw_type *et = expect && expect->kind == DW_T_SET ? expect->elem : NULL;
        for (uint32_t i = 0; i < v->n; i++)
            if ((rc = conform_at(a, &v->u.elems[i], et, drop_null, &el[i], err, depth + 1))) return rc;
        *out = dw_make_set(el, v->n);
        break;
    }
    case DW_V_RECORD:
        if ((rc = record_at(a, v, NULL, drop_null, out, err, depth))) return rc;
        break;
    default: *out = *v; break;      /* Bool, Long, String, entity, extension values */
    }
    return dw_value_check_type(out, expect, err, NULL);
}

int dw_value_conform(dw_arena *a, const dw_value *v, const dw_type *expect, bool drop_null, dw_value *out, dw_buf *err)
{
    return conform_at(a, v, expect, drop_null, out, err, 0);
}

/* The same JSON, member for member (the JSON loader's test for an entity
 * given twice): event values compared as their JSON forms would be. */
static bool same_value(const dw_value *x, const dw_value *y, int depth)
{
    bool xs = x->kind == DW_V_SET || x->kind == DW_V_ARRAY, ys = y->kind == DW_V_SET || y->kind == DW_V_ARRAY;
    if (depth > MAX_DEPTH || (x->kind != y->kind && !(xs && ys))) return false;
    switch ((dw_vkind)x->kind) {
    case DW_V_SET: case DW_V_ARRAY:
        if (x->n != y->n) return false;
        for (uint32_t i = 0; i < x->n; i++) if (!same_value(&x->u.elems[i], &y->u.elems[i], depth + 1)) return false;
        return true;
    case DW_V_RECORD: {
        uint32_t i = 0, k = 0;
        for (;; i++, k++) {
            while (i < x->n && dropped(&x->u.fields[i], true)) i++;
            while (k < y->n && dropped(&y->u.fields[k], true)) k++;
            if (i == x->n || k == y->n) return i == x->n && k == y->n;
            const dw_field *a = &x->u.fields[i], *b = &y->u.fields[k];
            if (a->klen != b->klen || !dw_mem_eq(a->key, b->key, a->klen) || !same_value(&a->v, &b->v, depth + 1)) return false;
        }
    }
    default: return dw_value_eq(x, y);
    }
}

typedef struct item { const dw_uid *uid; const dw_value *attrs; const dw_uid *const *parents; uint32_t np; } item;

static bool same_item(const item *a, const item *b)
{
    if (!dw_uid_eq(a->uid, b->uid) || !a->attrs != !b->attrs || a->np != b->np) return false;
    if (a->attrs && !same_value(a->attrs, b->attrs, 0)) return false;
    for (uint32_t q = 0; q < a->np; q++) if (!dw_uid_eq(a->parents[q], b->parents[q])) return false;
    return true;
}

static int load_item(dw_store *s, const item *it, const item *earlier, uint32_t nearlier, const dw_schema *schema,
                     dw_buf *err)
{
    const dw_uid *u = dw_make_uid(&s->arena, it->uid->type, it->uid->tlen, it->uid->id, it->uid->idlen);
    bool created;
    dw_entity *e = u ? dw_store_put(s, u, &created) : NULL;
    if (!e) return -2;
    if (!created) {
        for (uint32_t k = 0; k < nearlier; k++) if (same_item(&earlier[k], it)) return 0;
        return dw_value_fail(err, NULL, "duplicate entity %s", u->id);
    }
    const dw_entity_decl *decl;
    bool has_attrs = it->attrs && it->attrs->kind == DW_V_RECORD && members(it->attrs, true);
    int rc = dw_entity_check_decl(schema, u, has_attrs, false, &decl, err, NULL, NULL, NULL);
    if (rc) return rc;
    if (it->attrs) {
        if (it->attrs->kind != DW_V_RECORD) return dw_value_fail(err, NULL, "\"attrs\" must be an object");
        if ((rc = record_at(&s->arena, it->attrs, decl ? decl->shape : NULL, true, &e->attrs, err, 0))) return rc;
    }
    if (it->np) {
        dw_uid const **p = dw_arena_alloc(&s->arena, it->np * sizeof *p);
        if (!p) return -2;
        for (uint32_t k = 0; k < it->np; k++) {
            if (!(p[k] = dw_make_uid(&s->arena, it->parents[k]->type, it->parents[k]->tlen, it->parents[k]->id,
                                     it->parents[k]->idlen)))
                return -2;
            if ((rc = dw_entity_check_parent(schema, decl, u, p[k], err, NULL))) return rc;
        }
        e->parents = p;
        e->nparents = it->np;
    }
    return 0;
}

int dw_store_load_event_entities(dw_store *s, const dw_event_entity *ents, uint32_t n, const dw_uid *principal,
                                 const dw_uid *resource, const dw_schema *schema, bool checked, dw_buf *err)
{
    item *items = dw_arena_alloc(&s->arena, (n + 2) * sizeof *items);
    if (!items) return -2;
    uint32_t ni = 0;
    bool have_p = false, have_r = false;
    for (uint32_t k = 0; k < n; k++) {
        items[ni++] = (item){ ents[k].uid, ents[k].attrs, ents[k].parents, ents[k].nparents };
        have_p = have_p || dw_uid_eq(ents[k].uid, principal);
        have_r = have_r || dw_uid_eq(ents[k].uid, resource);
    }
    if (!have_p) items[ni++] = (item){ principal, NULL, NULL, 0 };
    if (!have_r && !(!have_p && dw_uid_eq(principal, resource))) items[ni++] = (item){ resource, NULL, NULL, 0 };
    for (uint32_t k = 0; k < ni; k++) {
        int rc = load_item(s, &items[k], items, k, checked ? schema : NULL, err);
        if (rc) return rc;
    }
    return dw_store_finish(s, schema, err) ? -1 : 0;
}
