/* artifact_serve.c - decoding the SERVE section (vm/artifact_format.h).
 * The bytes passed the artifact's checksum, which catches damage but not a
 * hostile writer: every read is bounded, every count is checked against the
 * bytes left, and the sorted orders the schema's binary searches rely on
 * are checked, so a malformed section is refused, never half-used. */
#include "artifact_serve.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../stdlib/le.h"
#include "../vm/artifact_format.h"

typedef struct rd {
    dw_le_reader in;
    dw_arena *a;
    char *msg; size_t cap;
    bool bad;
} rd;

static void fail(rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(rd *r, const char *fmt, ...)
{
    if (r->bad) return;
    r->bad = true;
    int k = snprintf(r->msg, r->cap, "serving context (SERVE section) is malformed at byte %zu: ", r->in.off);
    va_list ap;
    va_start(ap, fmt);
    if (k >= 0 && (size_t)k < r->cap) vsnprintf(r->msg + k, r->cap - (size_t)k, fmt, ap);
    va_end(ap);
}

/* The reader's fields: past the end is a refusal ("it ends inside a field"). */
static void at_end(rd *r) { if (r->in.bad) fail(r, "it ends inside a field"); }
static const uint8_t *take(rd *r, size_t k) { const uint8_t *b = dw_le_take(&r->in, k); at_end(r); return b; }
static uint8_t rd8(rd *r) { uint8_t v = dw_le_read8(&r->in); at_end(r); return v; }
static uint32_t rd32(rd *r) { uint32_t v = dw_le_read32(&r->in); at_end(r); return v; }
static uint64_t rd64(rd *r) { uint64_t v = dw_le_read64(&r->in); at_end(r); return v; }

static bool rd_bool(rd *r)
{
    uint8_t v = rd8(r);
    if (v > 1) fail(r, "a flag is %u, not 0 or 1", v);
    return v == 1;
}

/* A count of items of at least `least` bytes each: never more than the bytes left can hold. */
static size_t rd_count(rd *r, size_t least)
{
    uint32_t n = rd32(r);
    if (!r->bad && n > (r->in.n - r->in.off) / least) fail(r, "a count of %u exceeds the bytes left", n);
    return r->bad ? 0 : n;
}

static void *alloc(rd *r, size_t n, size_t size)
{
    if (r->bad || !n) return NULL;
    void *v = dw_arena_alloc(r->a, n * size);
    if (!v) fail(r, "out of memory");
    return v;
}

/* A string, NUL-terminated in the arena (the engine prints some with %s): no NUL inside. */
static dw_str rd_str(rd *r)
{
    size_t len = rd32(r);
    const uint8_t *b = take(r, len);
    char *s = b ? dw_arena_alloc(r->a, len + 1) : NULL;
    if (b && !s) fail(r, "out of memory");
    if (!s) return (dw_str){ "", 0 };
    if (memchr(b, 0, len)) { fail(r, "a name holds a NUL byte"); return (dw_str){ "", 0 }; }
    memcpy(s, b, len);
    s[len] = 0;
    return (dw_str){ s, len };
}

static dw_str *rd_strs(rd *r, size_t *n)
{
    *n = rd_count(r, 4);
    dw_str *v = alloc(r, *n, sizeof *v);
    for (size_t i = 0; v && i < *n && !r->bad; i++) v[i] = rd_str(r);
    if (r->bad) *n = 0;
    return v;
}

static dw_type *rd_type(rd *r, int depth)
{
    uint8_t kind = rd8(r);
    if (r->bad) return NULL;
    if (kind > DW_T_DURATION) { fail(r, "unknown type kind %u", kind); return NULL; }
    if (depth > DW_SCHEMA_MAX_DEPTH) { fail(r, "types nest deeper than %d", DW_SCHEMA_MAX_DEPTH); return NULL; }
    dw_type *t = alloc(r, 1, sizeof *t);
    if (!t) return NULL;
    t->kind = (dw_type_kind)kind;
    if (kind == DW_T_ENTITY) {
        t->name = rd_str(r);
        if (!r->bad && !t->name.len) fail(r, "an entity type has no name");
    } else if (kind == DW_T_SET) t->elem = rd_type(r, depth + 1);
    else if (kind == DW_T_RECORD) {
        t->additional_attrs = rd_bool(r);
        t->nattrs = rd_count(r, 6);     /* name length, required flag, a kind at least */
        t->attrs = alloc(r, t->nattrs, sizeof *t->attrs);
        for (size_t i = 0; i < t->nattrs && !r->bad; i++) {
            dw_attr_decl *d = &t->attrs[i];
            d->name = rd_str(r);
            d->required = rd_bool(r);
            d->type = rd_type(r, depth + 1);
            if (!r->bad && i && dw_schema_name_cmp(t->attrs[i - 1].name, d->name) >= 0)
                fail(r, "record attributes are not in sorted order (%s after %s)", d->name.s, t->attrs[i - 1].name.s);
        }
    }
    return r->bad ? NULL : t;
}

static dw_type *rd_record(rd *r, const char *what)
{
    dw_type *t = rd_type(r, 0);
    if (t && t->kind != DW_T_RECORD) fail(r, "%s is not a record type", what);
    return r->bad ? NULL : t;
}

static void rd_events(rd *r, dw_event_schema *es)
{
    es->max_window = rd64(r);
    es->has_max_window = rd_bool(r);
    /* the parser's promise (eventschema.h): the window in nanoseconds fits an int64_t */
    if (!r->bad && es->max_window > (uint64_t)INT64_MAX / 1000000000u) fail(r, "max_window is out of range");
    es->decision_kinds = rd_strs(r, &es->ndecision_kinds);
    es->nkey = rd_count(r, 4);
    es->key = alloc(r, es->nkey, sizeof *es->key);
    for (size_t k = 0; k < es->nkey && !r->bad; k++) {
        es->key[k].path = rd_str(r);
        if (!r->bad && !es->key[k].path.len) fail(r, "a key pin has an empty path");
    }
    if (r->bad) es->nkey = es->ndecision_kinds = 0;
}

static void rd_schema(rd *r, dw_schema *s)
{
    s->nentities = rd_count(r, 17);
    s->entities = alloc(r, s->nentities, sizeof *s->entities);
    for (size_t i = 0; i < s->nentities && !r->bad; i++) {
        dw_entity_decl *d = &s->entities[i];
        d->name = rd_str(r);
        d->member_of = rd_strs(r, &d->nmember_of);
        uint8_t flags = rd8(r);
        if (!r->bad && flags & ~(DW_SERVE_ENUM | DW_SERVE_TAGS)) fail(r, "entity %s has unknown flags %#x", d->name.s, flags);
        d->is_enum = flags & DW_SERVE_ENUM;
        d->shape = rd_record(r, "an entity's shape");
        if (flags & DW_SERVE_TAGS) d->tags = rd_type(r, 0);
        d->enum_ids = rd_strs(r, &d->nenum);
        if (!r->bad && i && dw_schema_name_cmp(s->entities[i - 1].name, d->name) >= 0)
            fail(r, "entity types are not in sorted order (%s after %s)", d->name.s, s->entities[i - 1].name.s);
    }
    s->nactions = rd_count(r, 26);
    s->actions = alloc(r, s->nactions, sizeof *s->actions);
    for (size_t i = 0; i < s->nactions && !r->bad; i++) {
        dw_action_decl *a = &s->actions[i];
        a->uid.type = rd_str(r);
        a->uid.id = rd_str(r);
        a->nparents = rd_count(r, 8);
        a->parents = alloc(r, a->nparents, sizeof *a->parents);
        for (size_t k = 0; k < a->nparents && !r->bad; k++) {
            a->parents[k].type = rd_str(r);
            a->parents[k].id = rd_str(r);
        }
        a->has_applies_to = rd_bool(r);
        a->principals = rd_strs(r, &a->nprincipals);
        a->resources = rd_strs(r, &a->nresources);
        a->context = rd_record(r, "an action's context");
        if (!r->bad && i && dw_schema_uid_cmp(s->actions[i - 1].uid.type, s->actions[i - 1].uid.id, a->uid.type, a->uid.id) >= 0)
            fail(r, "actions are not in sorted order (%s::\"%s\")", a->uid.type.s, a->uid.id.s);
    }
    if (r->bad) s->nentities = s->nactions = 0;
    else dw_schema_build_index(s);   /* false on OOM: the lookups binary search */
}

int dw_serve_decode(const uint8_t *data, size_t len, dw_serve_ctx *out, char *msg, size_t cap)
{
    memset(out, 0, sizeof *out);
    dw_schema *s = dw_schema_new(NULL);
    dw_event_schema *es = calloc(1, sizeof *es);
    if (!s || !es) {
        dw_schema_free(s);
        free(es);
        snprintf(msg, cap, "out of memory");
        return -1;
    }
    dw_arena_init(&es->arena, 0);
    rd r = { { data, len, 0, false }, &es->arena, msg, cap, false };
    out->events_digest = rd64(&r);
    rd_events(&r, es);
    r.a = &s->arena;
    rd_schema(&r, s);
    if (!r.bad && r.in.off != len) fail(&r, "%zu bytes follow the last action", len - r.in.off);
    if (r.bad) {
        dw_schema_free(s);
        dw_event_schema_free(es);
        return -1;
    }
    out->schema = s;
    out->es = es;
    return 0;
}

void dw_serve_ctx_free(dw_serve_ctx *c)
{
    if (!c) return;
    dw_schema_free(c->schema);
    dw_event_schema_free(c->es);
    memset(c, 0, sizeof *c);
}
