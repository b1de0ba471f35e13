/* schema_write.c - a resolved schema written back as Cedar schema text or
 * Cedar's JSON schema (schema.h): what `dwc dogwood lower` prints for the
 * augmented schema (dogwood.md §14.4).  Declarations are grouped by
 * namespace; every type reference is written fully qualified, so the text
 * means what the resolved schema means whatever the namespace it is read
 * in (an empty-namespace type shadowed by a same-named one of the
 * namespace it is used in is the one form this cannot say).  Common types
 * were inlined by resolution and stay inlined. */
#include <stdlib.h>
#include "schema.h"
#include "strlit.h"
#include "../stdlib/json_escape.h"

typedef struct sw { FILE *f; int err; } sw;

static void put(sw *w, const char *s, size_t n) { if (!w->err && n && fwrite(s, 1, n, w->f) != n) w->err = -1; }
static void puts_(sw *w, const char *s) { put(w, s, strlen(s)); }
static void jstr(sw *w, dw_str s) { if (!w->err && dw_json_escape_file(w->f, s.s, s.len, DW_JSON_EXACT)) w->err = -1; }
static void qstr(sw *w, dw_str s) { if (!w->err) dw_str_print_quoted(w->f, s.s, s.len); }

/* "Ns::Inner::T" -> namespace "Ns::Inner", basename "T" */
static dw_str ns_of(dw_str name, dw_str *base)
{
    size_t cut = 0;
    for (size_t i = 0; i + 1 < name.len; i++) if (name.s[i] == ':' && name.s[i + 1] == ':') cut = i + 2;
    *base = (dw_str){ name.s + cut, name.len - cut };
    return (dw_str){ name.s, cut ? cut - 2 : 0 };
}

static const char *ext_name(dw_type_kind k)
{
    switch (k) {
    case DW_T_DECIMAL: return "decimal";
    case DW_T_IPADDR: return "ipaddr";
    case DW_T_DATETIME: return "datetime";
    case DW_T_DURATION: return "duration";
    default: return NULL;
    }
}

/* An appliesTo with no principal and no resource type and an empty context
 * says what no appliesTo says (the action applies to nothing): written the
 * one way, so both forms of the same schema print the same. */
static bool applies(const dw_action_decl *a)
{
    return a->has_applies_to && (a->nprincipals || a->nresources || (a->context && a->context->nattrs) ||
                                 (a->context && a->context->additional_attrs));
}

/* ---- Cedar schema text ---- */
static void text_type(sw *w, const dw_type *t)
{
    switch (t->kind) {
    case DW_T_BOOL: puts_(w, "Bool"); return;
    case DW_T_LONG: puts_(w, "Long"); return;
    case DW_T_STRING: puts_(w, "String"); return;
    case DW_T_ENTITY: put(w, t->name.s, t->name.len); return;
    case DW_T_SET: puts_(w, "Set<"); text_type(w, t->elem); puts_(w, ">"); return;
    case DW_T_RECORD:
        puts_(w, "{");
        for (size_t i = 0; i < t->nattrs; i++) {
            if (i) puts_(w, ", ");
            qstr(w, t->attrs[i].name);
            puts_(w, t->attrs[i].required ? ": " : "?: ");
            text_type(w, t->attrs[i].type);
        }
        puts_(w, "}");
        return;
    default: puts_(w, ext_name(t->kind)); return;
    }
}

static void text_names(sw *w, const dw_str *v, size_t n)
{
    puts_(w, "[");
    for (size_t i = 0; i < n; i++) { if (i) puts_(w, ", "); put(w, v[i].s, v[i].len); }
    puts_(w, "]");
}

static void text_uid(sw *w, const dw_euid_lit *u) { put(w, u->type.s, u->type.len); puts_(w, "::"); qstr(w, u->id); }

/* the namespaces of s, each once, in order of first appearance */
static size_t namespaces(const dw_schema *s, dw_str *out)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nentities + s->nactions; i++) {
        dw_str base, ns = i < s->nentities ? ns_of(s->entities[i].name, &base) : ns_of(s->actions[i - s->nentities].uid.type, &base);
        bool seen = false;
        for (size_t k = 0; k < n && !seen; k++) seen = dw_str_eq(out[k], ns);
        if (!seen) out[n++] = ns;
    }
    return n;
}

int dw_schema_write_text(FILE *out, const dw_schema *s)
{
    sw w = { out, 0 };
    dw_str *nss = malloc((s->nentities + s->nactions + 1) * sizeof *nss);
    if (!nss) return -1;
    size_t nn = namespaces(s, nss);
    for (size_t k = 0; k < nn && !w.err; k++) {
        const char *ind = nss[k].len ? "  " : "";
        if (nss[k].len) { puts_(&w, "namespace "); put(&w, nss[k].s, nss[k].len); puts_(&w, " {\n"); }
        for (size_t i = 0; i < s->nentities; i++) {
            const dw_entity_decl *e = &s->entities[i];
            dw_str base;
            if (!dw_str_eq(ns_of(e->name, &base), nss[k])) continue;
            puts_(&w, ind); puts_(&w, "entity "); put(&w, base.s, base.len);
            if (e->is_enum) {
                puts_(&w, " enum [");
                for (size_t j = 0; j < e->nenum; j++) { if (j) puts_(&w, ", "); qstr(&w, e->enum_ids[j]); }
                puts_(&w, "];\n");
                continue;
            }
            if (e->nmember_of) { puts_(&w, " in "); text_names(&w, e->member_of, e->nmember_of); }
            if (e->shape && e->shape->nattrs) { puts_(&w, " = "); text_type(&w, e->shape); }
            if (e->tags) { puts_(&w, " tags "); text_type(&w, e->tags); }
            puts_(&w, ";\n");
        }
        for (size_t i = 0; i < s->nactions; i++) {
            const dw_action_decl *a = &s->actions[i];
            dw_str base;
            if (!dw_str_eq(ns_of(a->uid.type, &base), nss[k])) continue;
            puts_(&w, ind); puts_(&w, "action "); qstr(&w, a->uid.id);
            if (a->nparents) {
                puts_(&w, " in [");
                for (size_t j = 0; j < a->nparents; j++) { if (j) puts_(&w, ", "); text_uid(&w, &a->parents[j]); }
                puts_(&w, "]");
            }
            if (applies(a)) {
                puts_(&w, " appliesTo { principal: "); text_names(&w, a->principals, a->nprincipals);
                puts_(&w, ", resource: "); text_names(&w, a->resources, a->nresources);
                puts_(&w, ", context: "); text_type(&w, a->context); puts_(&w, " }");
            }
            puts_(&w, ";\n");
        }
        if (nss[k].len) puts_(&w, "}\n");
    }
    free(nss);
    return w.err;
}

/* ---- Cedar's JSON schema ---- */
/* A type object; `optional`: an attribute's, with "required": false. */
static void json_type(sw *w, const dw_type *t, bool optional)
{
    const char *tail = optional ? ",\"required\":false}" : "}";
    switch (t->kind) {
    case DW_T_BOOL: puts_(w, "{\"type\":\"Boolean\""); break;
    case DW_T_LONG: puts_(w, "{\"type\":\"Long\""); break;
    case DW_T_STRING: puts_(w, "{\"type\":\"String\""); break;
    case DW_T_ENTITY: puts_(w, "{\"type\":\"Entity\",\"name\":"); jstr(w, t->name); break;
    case DW_T_SET: puts_(w, "{\"type\":\"Set\",\"element\":"); json_type(w, t->elem, false); break;
    case DW_T_RECORD:
        puts_(w, "{\"type\":\"Record\",\"attributes\":{");
        for (size_t i = 0; i < t->nattrs; i++) {
            if (i) puts_(w, ",");
            jstr(w, t->attrs[i].name);
            puts_(w, ":");
            json_type(w, t->attrs[i].type, !t->attrs[i].required);
        }
        puts_(w, "}");
        if (t->additional_attrs) puts_(w, ",\"additionalAttributes\":true");
        break;
    default: puts_(w, "{\"type\":\"Extension\",\"name\":\""); puts_(w, ext_name(t->kind)); puts_(w, "\""); break;
    }
    puts_(w, tail);
}

static void json_names(sw *w, const dw_str *v, size_t n)
{
    puts_(w, "[");
    for (size_t i = 0; i < n; i++) { if (i) puts_(w, ","); jstr(w, v[i]); }
    puts_(w, "]");
}

int dw_schema_write_json(FILE *out, const dw_schema *s)
{
    sw w = { out, 0 };
    dw_str *nss = malloc((s->nentities + s->nactions + 1) * sizeof *nss);
    if (!nss) return -1;
    size_t nn = namespaces(s, nss);
    puts_(&w, "{");
    for (size_t k = 0; k < nn && !w.err; k++) {
        if (k) puts_(&w, ",");
        jstr(&w, nss[k]);
        puts_(&w, ":{\"entityTypes\":{");
        bool first = true;
        for (size_t i = 0; i < s->nentities; i++) {
            const dw_entity_decl *e = &s->entities[i];
            dw_str base;
            if (!dw_str_eq(ns_of(e->name, &base), nss[k])) continue;
            if (!first) puts_(&w, ",");
            first = false;
            jstr(&w, base);
            puts_(&w, ":{");
            if (e->is_enum) {
                puts_(&w, "\"enum\":"); json_names(&w, e->enum_ids, e->nenum); puts_(&w, "}");
                continue;
            }
            puts_(&w, "\"memberOfTypes\":"); json_names(&w, e->member_of, e->nmember_of);
            if (e->shape) { puts_(&w, ",\"shape\":"); json_type(&w, e->shape, false); }
            if (e->tags) { puts_(&w, ",\"tags\":"); json_type(&w, e->tags, false); }
            puts_(&w, "}");
        }
        puts_(&w, "},\"actions\":{");
        first = true;
        for (size_t i = 0; i < s->nactions; i++) {
            const dw_action_decl *a = &s->actions[i];
            dw_str base;
            if (!dw_str_eq(ns_of(a->uid.type, &base), nss[k])) continue;
            if (!first) puts_(&w, ",");
            first = false;
            jstr(&w, a->uid.id);
            puts_(&w, ":{\"memberOf\":[");
            for (size_t j = 0; j < a->nparents; j++) {
                if (j) puts_(&w, ",");
                puts_(&w, "{\"id\":"); jstr(&w, a->parents[j].id);
                puts_(&w, ",\"type\":"); jstr(&w, a->parents[j].type); puts_(&w, "}");
            }
            puts_(&w, "]");
            if (applies(a)) {
                puts_(&w, ",\"appliesTo\":{\"principalTypes\":"); json_names(&w, a->principals, a->nprincipals);
                puts_(&w, ",\"resourceTypes\":"); json_names(&w, a->resources, a->nresources);
                puts_(&w, ",\"context\":"); json_type(&w, a->context, false); puts_(&w, "}");
            }
            puts_(&w, "}");
        }
        puts_(&w, "}}");
    }
    puts_(&w, "}");
    free(nss);
    return w.err;
}
