/* schema_model.c - the resolved schema as data: allocation, lookup,
 * printing, type equality.  The serving path (dwd) links this file and not
 * the parsers or the resolver (schema.c, schema_text.c, schema_json.c): it
 * rebuilds its schema from an artifact (runtime/artifact_serve.c). */
#include "schema.h"
#include "strlit.h"
#include "../stdlib/bytes.h"
#include "../stdlib/uid_hash.h"
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- basics */

dw_schema *dw_schema_new(const dw_source *src)
{
    dw_schema *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    dw_arena_init(&s->arena, 0);
    s->src = src;
    return s;
}

void dw_schema_free(dw_schema *s)
{
    if (!s) return;
    dw_arena_free(&s->arena);
    free(s);
}

bool dw_schema_is_ident(const char *p, size_t n)
{
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
    }
    return true;
}

bool dw_schema_is_reserved(const char *p, size_t n)
{
    static const char *const words[] = { "true", "false", "if", "then", "else", "in", "is", "like", "has" };
    dw_str s = { p, n };
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (dw_str_is(s, words[i])) return true;
    return false;
}

int dw_schema_name_cmp(dw_str a, dw_str b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.s, b.s, n) : 0;
    if (c) return c;
    return a.len < b.len ? -1 : a.len > b.len;
}


/* ---------------------------------------------------------------- lookup */

/* Open addressing over the hashes (a power of two, at most half full); a
 * slot holds its decl's index + 1 (0: empty). */
typedef struct index_slot { uint64_t hash; uint32_t at; } index_slot;
struct dw_schema_index {
    const dw_entity_decl *entities; size_t nentities;   /* the arrays it was built for */
    const dw_action_decl *actions; size_t nactions;
    index_slot *eslot, *aslot;
    size_t emask, amask;
    uint8_t *scope_enums;        /* per action: DW_SCOPE_ENUM_* */
};

static index_slot *index_table(dw_arena *a, size_t n, size_t *mask)
{
    size_t cap = 4;
    while (cap < 2 * n) cap *= 2;
    *mask = cap - 1;
    return dw_arena_alloc(a, cap * sizeof(index_slot));   /* zeroed: every slot empty */
}

static void index_put(index_slot *t, size_t mask, uint64_t h, size_t at)
{
    size_t k = (size_t)h & mask;
    while (t[k].at) k = (k + 1) & mask;
    t[k] = (index_slot){ h, (uint32_t)at + 1 };
}

/* The index, when it was built for s's arrays as they are. */
static const dw_schema_index *index_of(const dw_schema *s)
{
    const dw_schema_index *x = s->index;
    return x && x->entities == s->entities && x->nentities == s->nentities && x->actions == s->actions &&
                   x->nactions == s->nactions
               ? x
               : NULL;
}

static const dw_entity_decl *entity_search(const dw_schema *s, const char *name, size_t len)
{
    dw_str key = { name, len };
    size_t lo = 0, hi = s->nentities;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = dw_schema_name_cmp(s->entities[mid].name, key);
        if (c == 0) return &s->entities[mid];
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    return NULL;
}

bool dw_schema_build_index(dw_schema *s)
{
    s->index = NULL;
    if (s->nentities > UINT32_MAX / 4 || s->nactions > UINT32_MAX / 4) return false;
    dw_schema_index *x = dw_arena_alloc(&s->arena, sizeof *x);
    if (!x || !(x->eslot = index_table(&s->arena, s->nentities, &x->emask)) ||
        !(x->aslot = index_table(&s->arena, s->nactions, &x->amask)))
        return false;
    if (!(x->scope_enums = dw_arena_alloc(&s->arena, s->nactions + 1))) return false;
    x->entities = s->entities, x->nentities = s->nentities;
    x->actions = s->actions, x->nactions = s->nactions;
    for (size_t i = 0; i < s->nentities; i++)
        index_put(x->eslot, x->emask, dw_type_hash(s->entities[i].name.s, s->entities[i].name.len), i);
    for (size_t i = 0; i < s->nactions; i++) {
        const dw_action_decl *ad = &s->actions[i];
        index_put(x->aslot, x->amask, dw_uid_hash_typed(dw_type_hash(ad->uid.type.s, ad->uid.type.len), ad->uid.id.s, ad->uid.id.len), i);
        for (size_t k = 0; k < ad->nprincipals; k++) {
            const dw_entity_decl *d = entity_search(s, ad->principals[k].s, ad->principals[k].len);
            if (d && d->is_enum) x->scope_enums[i] |= DW_SCOPE_ENUM_PRINCIPAL;
        }
        for (size_t k = 0; k < ad->nresources; k++) {
            const dw_entity_decl *d = entity_search(s, ad->resources[k].s, ad->resources[k].len);
            if (d && d->is_enum) x->scope_enums[i] |= DW_SCOPE_ENUM_RESOURCE;
        }
    }
    s->index = x;
    return true;
}

unsigned dw_schema_scope_enums(const dw_schema *s, const dw_action_decl *ad)
{
    const dw_schema_index *x = s ? index_of(s) : NULL;
    if (!x || ad < s->actions || ad >= s->actions + s->nactions) return DW_SCOPE_ENUM_PRINCIPAL | DW_SCOPE_ENUM_RESOURCE;
    return x->scope_enums[ad - s->actions];
}

const dw_entity_decl *dw_schema_entity_h(const dw_schema *s, const char *name, size_t len, uint64_t type_hash)
{
    if (!s) return NULL;
    const dw_schema_index *x = index_of(s);
    if (!x) return entity_search(s, name, len);
    for (size_t k = (size_t)type_hash & x->emask; x->eslot[k].at; k = (k + 1) & x->emask) {
        const dw_entity_decl *d = &s->entities[x->eslot[k].at - 1];
        if (x->eslot[k].hash == type_hash && dw_str_eq(d->name, (dw_str){ name, len })) return d;
    }
    return NULL;
}

const dw_entity_decl *dw_schema_entity(const dw_schema *s, const char *name, size_t len)
{
    if (!s) return NULL;
    return index_of(s) ? dw_schema_entity_h(s, name, len, dw_type_hash(name, len)) : entity_search(s, name, len);
}

int dw_schema_uid_cmp(dw_str at, dw_str aid, dw_str bt, dw_str bid)
{
    int c = dw_schema_name_cmp(at, bt);
    return c ? c : dw_schema_name_cmp(aid, bid);
}

static const dw_action_decl *action_search(const dw_schema *s, const char *type, size_t tlen, const char *id, size_t idlen)
{
    dw_str t = { type, tlen }, i = { id, idlen };
    size_t lo = 0, hi = s->nactions;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = dw_schema_uid_cmp(s->actions[mid].uid.type, s->actions[mid].uid.id, t, i);
        if (c == 0) return &s->actions[mid];
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    return NULL;
}

const dw_action_decl *dw_schema_action_h(const dw_schema *s, const char *type, size_t tlen, const char *id, size_t idlen,
                                         uint64_t uid_hash)
{
    if (!s) return NULL;
    const dw_schema_index *x = index_of(s);
    if (!x) return action_search(s, type, tlen, id, idlen);
    for (size_t k = (size_t)uid_hash & x->amask; x->aslot[k].at; k = (k + 1) & x->amask) {
        const dw_action_decl *d = &s->actions[x->aslot[k].at - 1];
        if (x->aslot[k].hash == uid_hash && dw_str_eq(d->uid.id, (dw_str){ id, idlen }) &&
            dw_str_eq(d->uid.type, (dw_str){ type, tlen }))
            return d;
    }
    return NULL;
}

const dw_action_decl *dw_schema_action(const dw_schema *s, const char *type, size_t tlen,
                                       const char *id, size_t idlen)
{
    if (!s) return NULL;
    if (!index_of(s)) return action_search(s, type, tlen, id, idlen);
    return dw_schema_action_h(s, type, tlen, id, idlen, dw_uid_hash_typed(dw_type_hash(type, tlen), id, idlen));
}

/* ---------------------------------------------------------------- printing */

static void print_attr_name(FILE *out, dw_str n)
{
    if (dw_schema_is_ident(n.s, n.len) && !dw_schema_is_reserved(n.s, n.len))
        fwrite(n.s, 1, n.len, out);
    else
        dw_str_print_quoted(out, n.s, n.len);
}

void dw_type_print(FILE *out, const dw_type *t)
{
    if (!t) { fputs("<null>", out); return; }
    switch (t->kind) {
    case DW_T_BOOL: fputs("Bool", out); break;
    case DW_T_LONG: fputs("Long", out); break;
    case DW_T_STRING: fputs("String", out); break;
    case DW_T_DECIMAL: fputs("decimal", out); break;
    case DW_T_IPADDR: fputs("ipaddr", out); break;
    case DW_T_DATETIME: fputs("datetime", out); break;
    case DW_T_DURATION: fputs("duration", out); break;
    case DW_T_ENTITY: fwrite(t->name.s, 1, t->name.len, out); break;
    case DW_T_SET: fputs("Set<", out); dw_type_print(out, t->elem); fputc('>', out); break;
    case DW_T_RECORD:
        fputc('{', out);
        for (size_t i = 0; i < t->nattrs; i++) {
            if (i) fputs(", ", out);
            print_attr_name(out, t->attrs[i].name);
            fputs(t->attrs[i].required ? ": " : "?: ", out);
            dw_type_print(out, t->attrs[i].type);
        }
        if (t->additional_attrs) fputs(t->nattrs ? ", ..." : "...", out);
        fputc('}', out);
        break;
    }
}

bool dw_type_equal(const dw_type *a, const dw_type *b)
{
    if (a == b) return true;
    if (!a || !b || a->kind != b->kind) return false;
    switch (a->kind) {
    case DW_T_ENTITY: return dw_str_eq(a->name, b->name);
    case DW_T_SET: return dw_type_equal(a->elem, b->elem);
    case DW_T_RECORD:
        if (a->nattrs != b->nattrs || a->additional_attrs != b->additional_attrs) return false;
        for (size_t i = 0; i < a->nattrs; i++)
            if (!dw_str_eq(a->attrs[i].name, b->attrs[i].name) || a->attrs[i].required != b->attrs[i].required ||
                !dw_type_equal(a->attrs[i].type, b->attrs[i].type))
                return false;
        return true;
    default: return true;
    }
}

static void print_names(FILE *out, const dw_str *v, size_t n)
{
    fputc('[', out);
    for (size_t i = 0; i < n; i++) {
        if (i) fputs(", ", out);
        fwrite(v[i].s, 1, v[i].len, out);
    }
    fputc(']', out);
}

static void print_uid(FILE *out, const dw_euid_lit *u)
{
    fwrite(u->type.s, 1, u->type.len, out);
    fputs("::", out);
    dw_str_print_quoted(out, u->id.s, u->id.len);
}

void dw_schema_print(FILE *out, const dw_schema *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->nentities; i++) {
        const dw_entity_decl *e = &s->entities[i];
        fputs("entity ", out);
        fwrite(e->name.s, 1, e->name.len, out);
        if (e->is_enum) {
            fputs(" enum [", out);
            for (size_t j = 0; j < e->nenum; j++) {
                if (j) fputs(", ", out);
                dw_str_print_quoted(out, e->enum_ids[j].s, e->enum_ids[j].len);
            }
            fputs("];\n", out);
            continue;
        }
        if (e->nmember_of) { fputs(" in ", out); print_names(out, e->member_of, e->nmember_of); }
        fputc(' ', out);
        dw_type_print(out, e->shape);
        if (e->tags) { fputs(" tags ", out); dw_type_print(out, e->tags); }
        fputs(";\n", out);
    }
    for (size_t i = 0; i < s->nactions; i++) {
        const dw_action_decl *a = &s->actions[i];
        fputs("action ", out);
        print_uid(out, &a->uid);
        if (a->nparents) {
            fputs(" in [", out);
            for (size_t j = 0; j < a->nparents; j++) {
                if (j) fputs(", ", out);
                print_uid(out, &a->parents[j]);
            }
            fputc(']', out);
        }
        if (a->has_applies_to) {
            fputs(" appliesTo {principal: ", out);
            print_names(out, a->principals, a->nprincipals);
            fputs(", resource: ", out);
            print_names(out, a->resources, a->nresources);
            fputs(", context: ", out);
            dw_type_print(out, a->context);
            fputc('}', out);
        }
        fputs(";\n", out);
    }
}
