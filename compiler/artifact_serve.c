/* artifact_serve.c - writing the SERVE section (vm/artifact_format.h). */
#include "artifact_serve.h"
#include <string.h>
#include "../stdlib/le.h"
#include "../vm/artifact_format.h"

typedef struct sw { dw_buf b; bool bad; } sw;

static void put(sw *w, const void *p, size_t n) { if (dw_buf_append(&w->b, p, n)) w->bad = true; }
static void put8(sw *w, uint8_t v) { put(w, &v, 1); }
static void put32(sw *w, size_t v)
{
    uint8_t b[4];
    if (v > UINT32_MAX) w->bad = true;
    dw_put_le32(b, (uint32_t)v);
    put(w, b, 4);
}
static void put64(sw *w, uint64_t v)
{
    uint8_t b[8];
    dw_put_le64(b, v);
    put(w, b, 8);
}
static void put_str(sw *w, dw_str s)
{
    put32(w, s.len);
    if (s.len) put(w, s.s, s.len);
}
static void put_strs(sw *w, const dw_str *v, size_t n)
{
    put32(w, n);
    for (size_t i = 0; i < n; i++) put_str(w, v[i]);
}

static void put_type(sw *w, const dw_type *t)
{
    put8(w, (uint8_t)t->kind);
    switch (t->kind) {
    case DW_T_ENTITY: put_str(w, t->name); break;
    case DW_T_SET: put_type(w, t->elem); break;
    case DW_T_RECORD:
        put8(w, t->additional_attrs);
        put32(w, t->nattrs);
        for (size_t i = 0; i < t->nattrs; i++) {
            put_str(w, t->attrs[i].name);
            put8(w, t->attrs[i].required);
            put_type(w, t->attrs[i].type);
        }
        break;
    default: break;
    }
}

int dw_artifact_attach_serve(dw_program *p, const dw_schema *schema, const dw_event_schema *es, uint64_t events_digest)
{
    sw w = { { 0 }, false };
    put64(&w, events_digest);
    put64(&w, es ? es->max_window : DW_EVENT_DEFAULT_MAX_WINDOW);
    put8(&w, es && es->has_max_window);
    put_strs(&w, es ? es->decision_kinds : NULL, es ? es->ndecision_kinds : 0);
    put32(&w, es ? es->nkey : 0);
    for (size_t k = 0; es && k < es->nkey; k++) put_str(&w, es->key[k].path);
    put32(&w, schema ? schema->nentities : 0);
    for (size_t i = 0; schema && i < schema->nentities; i++) {
        const dw_entity_decl *d = &schema->entities[i];
        put_str(&w, d->name);
        put_strs(&w, d->member_of, d->nmember_of);
        put8(&w, (uint8_t)((d->is_enum ? DW_SERVE_ENUM : 0) | (d->tags ? DW_SERVE_TAGS : 0)));
        put_type(&w, d->shape);
        if (d->tags) put_type(&w, d->tags);
        put_strs(&w, d->enum_ids, d->nenum);
    }
    put32(&w, schema ? schema->nactions : 0);
    for (size_t i = 0; schema && i < schema->nactions; i++) {
        const dw_action_decl *a = &schema->actions[i];
        put_str(&w, a->uid.type);
        put_str(&w, a->uid.id);
        put32(&w, a->nparents);
        for (size_t k = 0; k < a->nparents; k++) {
            put_str(&w, a->parents[k].type);
            put_str(&w, a->parents[k].id);
        }
        put8(&w, a->has_applies_to);
        put_strs(&w, a->principals, a->nprincipals);
        put_strs(&w, a->resources, a->nresources);
        put_type(&w, a->context);
    }
    if (!w.bad && w.b.len <= UINT32_MAX && (p->serve = (const uint8_t *)dw_arena_memdup(&p->arena, w.b.p, w.b.len)))
        p->serve_len = (uint32_t)w.b.len;
    else w.bad = true;
    dw_buf_free(&w.b);
    return w.bad ? -1 : 0;
}
