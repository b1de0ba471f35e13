/* eventschema_derive.c - instantiate every event declaration for every
 * action of the action schema (dogwood.md §12.2-§12.3), the lookups the
 * temporal validator needs (§9.8-§9.9), and the golden-test printer. */
#include "eventschema.h"
#include "strlit.h"
#include <stdlib.h>
#include <string.h>

typedef struct dv_ctx {
    dw_event_derivation *dv;
    const dw_event_schema *es;
    dw_diags *d;
    const dw_type **types;      /* by dw_ev_fdecl.id: resolved DW_FD_TYPE */
    bool oom;
} dv_ctx;


static void *dv_alloc(dv_ctx *c, size_t n)
{
    void *p = dw_arena_alloc(&c->dv->arena, n ? n : 1);
    if (!p) c->oom = true;
    return p;
}

static dw_type *new_type(dv_ctx *c, dw_type_kind k, dw_str name)
{
    dw_type *t = dv_alloc(c, sizeof *t);
    if (t) { t->kind = k; t->name = name; }
    return t;
}

/* ---------------------------------------------------------------- type names */

static bool prim_of(dw_str n, dw_type_kind *k)
{
    if (n.len > 9 && memcmp(n.s, "__cedar::", 9) == 0) { n.s += 9; n.len -= 9; }
    static const struct { const char *name; dw_type_kind k; } P[] = {
        { "Bool", DW_T_BOOL }, { "Long", DW_T_LONG }, { "String", DW_T_STRING },
        { "decimal", DW_T_DECIMAL }, { "ipaddr", DW_T_IPADDR },
        { "datetime", DW_T_DATETIME }, { "duration", DW_T_DURATION },
    };
    for (size_t i = 0; i < sizeof P / sizeof P[0]; i++)
        if (dw_str_is(n, P[i].name)) { *k = P[i].k; return true; }
    return false;
}

static void resolve_type(dv_ctx *c, const dw_ev_fdecl *f, const dw_schema *s)
{
    dw_type_kind k;
    bool cedar = f->type_name.len > 9 && memcmp(f->type_name.s, "__cedar::", 9) == 0;
    if (prim_of(f->type_name, &k)) { c->types[f->id] = new_type(c, k, (dw_str){ NULL, 0 }); return; }
    const dw_entity_decl *e = (s && !cedar) ? dw_schema_entity(s, f->type_name.s, f->type_name.len) : NULL;
    if (e) { c->types[f->id] = new_type(c, DW_T_ENTITY, e->name); return; }
    /* Suggest the qualified name when exactly one entity type has this basename. */
    char hint[256];
    const dw_entity_decl *m = NULL;
    size_t nm = 0;
    for (size_t i = 0; s && i < s->nentities; i++) {
        dw_str n = s->entities[i].name;
        size_t L = f->type_name.len;
        if (n.len > L + 2 && memcmp(n.s + n.len - L, f->type_name.s, L) == 0 && n.s[n.len - L - 1] == ':') { m = &s->entities[i]; nm++; }
    }
    if (nm == 1)
        snprintf(hint, sizeof hint, "entity types are written fully qualified: did you mean `%.*s`?",
                 (int)(m->name.len > 200 ? 200 : m->name.len), m->name.s);
    else if (dw_str_is(f->type_name, "Boolean"))
        snprintf(hint, sizeof hint, "did you mean `Bool`?");
    else
        snprintf(hint, sizeof hint, "a field type is Bool, Long, String, decimal, ipaddr, datetime, duration, "
                                    "an entity type of the action schema, or `{ … }`");
    dw_error_hint(c->d, c->es->src, f->type_loc, hint, "`%.*s` is not a Cedar type or a declared entity type",
                  (int)f->type_name.len, f->type_name.s);
}

static void resolve_types(dv_ctx *c, const dw_ev_fdecl *v, size_t n, const dw_schema *s)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i].kind == DW_FD_TYPE) resolve_type(c, &v[i], s);
        else if (v[i].kind == DW_FD_GROUP) resolve_types(c, v[i].fields, v[i].nfields, s);
    }
}

/* ---------------------------------------------------------------- instantiation */

/* A record attribute becomes a group (records) or a leaf (anything else). */
static void from_attr(dv_ctx *c, dw_event_field *out, dw_str name, const dw_type *t, bool optional, const dw_ev_fdecl *decl)
{
    out->name = name;
    out->optional = optional;
    out->decl = decl;
    if (t && t->kind == DW_T_RECORD) {
        out->is_group = true;
        out->open = t->additional_attrs;
        out->nfields = t->nattrs;
        out->fields = dv_alloc(c, t->nattrs * sizeof *out->fields);
        if (!out->fields) { out->nfields = 0; return; }
        /* Depth is bounded by the schema resolver (DW_SCHEMA_MAX_DEPTH). */
        for (size_t i = 0; i < t->nattrs; i++)
            from_attr(c, &out->fields[i], t->attrs[i].name, t->attrs[i].type, !t->attrs[i].required, decl);
    } else
        out->type = t;
}

static const dw_attr_decl *ctx_attr(const dw_action_decl *a, const char *name)
{
    const dw_type *ctx = a->context;
    for (size_t i = 0; ctx && ctx->kind == DW_T_RECORD && i < ctx->nattrs; i++)
        if (dw_str_is(ctx->attrs[i].name, name)) return &ctx->attrs[i];
    return NULL;
}

static void build(dv_ctx *c, const dw_action_decl *a, const dw_ev_fdecl *v, size_t n,
                  dw_event_field **out, size_t *nout)
{
    dw_event_field *f = dv_alloc(c, n * sizeof *f);
    size_t k = 0;
    if (!f) { *out = NULL; *nout = 0; return; }
    for (size_t i = 0; i < n; i++) {
        const dw_ev_fdecl *d = &v[i];
        dw_event_field *o = &f[k];
        switch (d->kind) {
        case DW_FD_SPREAD: {
            const dw_attr_decl *at = ctx_attr(a, d->sel == DW_SEL_OUTPUTS ? "output" : "input");
            if (!at) continue;          /* the action declares no input/output: nothing */
            from_attr(c, o, d->name, at->type, !at->required, d);
            break;
        }
        case DW_FD_TYPE:
            o->name = d->name;
            o->decl = d;
            o->type = c->types[d->id];
            break;
        case DW_FD_SELECTOR: {
            o->name = d->name;
            o->decl = d;
            o->from_selector = true;
            bool pr = d->sel == DW_SEL_PRINCIPAL_TYPE;
            o->etypes = pr ? a->principals : a->resources;
            o->netypes = pr ? a->nprincipals : a->nresources;
            if (o->netypes == 1) o->type = new_type(c, DW_T_ENTITY, o->etypes[0]);
            break;
        }
        case DW_FD_GROUP:
            o->name = d->name;
            o->decl = d;
            o->is_group = true;
            build(c, a, d->fields, d->nfields, &o->fields, &o->nfields);
            break;
        }
        if (d->pinned) o->pin = &d->ref;
        k++;
    }
    *out = f;
    *nout = k;
}

static void derive_event(dv_ctx *c, dw_derived_event *ev, const dw_action_decl *a, const dw_ev_decl *dc)
{
    ev->action_type = a->uid.type;
    ev->action_id = a->uid.id;
    ev->kind = dc->kind;
    ev->decision = dw_event_schema_is_decision_kind(c->es, dc->kind.s, dc->kind.len);
    ev->action = a;
    ev->decl = dc;
    build(c, a, dc->fields, dc->nfields, &ev->fields, &ev->nfields);
    ev->pins = dv_alloc(c, dc->npins * sizeof *ev->pins);
    for (size_t i = 0; ev->pins && i < dc->npins; i++) {
        const dw_event_field *f = dw_event_field_lookup(ev, dc->pins[i].path.s, dc->pins[i].path.len);
        ev->pins[ev->npins++] = (dw_event_pin){ dc->pins[i].path, f, &dc->pins[i].ref };
    }
}

dw_event_derivation *dw_event_schema_derive(const dw_event_schema *es, const dw_schema *s, dw_diags *d)
{
    dw_event_derivation *dv = calloc(1, sizeof *dv);
    if (!dv) { dw_error(d, es->src, dw_loc_at(es->src, 0, 0), "out of memory"); return NULL; }
    dw_arena_init(&dv->arena, 64 * 1024);
    dv->es = es;
    dv->actions = s;
    dv_ctx C = { .dv = dv, .es = es, .d = d }, *c = &C;
    size_t nerr0 = d->nerrors;
    c->types = dv_alloc(c, es->nfdecls * sizeof *c->types);
    for (size_t k = 0; c->types && k < es->ndecls; k++) resolve_types(c, es->decls[k].fields, es->decls[k].nfields, s);
    size_t nact = s ? s->nactions : 0;
    if (!c->oom && d->nerrors == nerr0 && nact && es->ndecls) {
        if (nact > SIZE_MAX / es->ndecls / sizeof *dv->events) c->oom = true;
        else dv->events = dv_alloc(c, nact * es->ndecls * sizeof *dv->events);
        for (size_t a = 0; dv->events && a < nact && !c->oom; a++)
            for (size_t k = 0; k < es->ndecls; k++)
                derive_event(c, &dv->events[a * es->ndecls + k], &s->actions[a], &es->decls[k]);
        if (dv->events) dv->nevents = nact * es->ndecls;
    }
    if (c->oom) dw_error(d, es->src, dw_loc_at(es->src, 0, 0), "out of memory");
    if (d->nerrors > nerr0) { dw_event_derivation_free(dv); return NULL; }
    return dv;
}

void dw_event_derivation_free(dw_event_derivation *dv)
{
    if (!dv) return;
    dw_arena_free(&dv->arena);
    free(dv);
}

/* ---------------------------------------------------------------- lookups */

const dw_derived_event *dw_event_find(const dw_event_derivation *dv, const char *type, size_t tlen,
                                      const char *id, size_t idlen, const char *kind, size_t klen)
{
    if (!dv || !dv->actions || !dv->nevents) return NULL;
    const dw_action_decl *a = dw_schema_action(dv->actions, type, tlen, id, idlen);
    if (!a) return NULL;
    size_t ai = (size_t)(a - dv->actions->actions);
    for (size_t k = 0; k < dv->es->ndecls; k++) {
        dw_str kn = dv->es->decls[k].kind;
        if (kn.len == klen && memcmp(kn.s, kind, klen) == 0) return &dv->events[ai * dv->es->ndecls + k];
    }
    return NULL;
}

const dw_event_field *dw_event_field_lookup(const dw_derived_event *ev, const char *path, size_t len)
{
    if (!ev) return NULL;
    const dw_event_field *v = ev->fields, *hit = NULL;
    size_t n = ev->nfields, i = 0;
    while (i <= len) {
        size_t j = i;
        while (j < len && path[j] != '.') j++;
        hit = NULL;
        for (size_t k = 0; k < n; k++)
            if (v[k].name.len == j - i && memcmp(v[k].name.s, path + i, j - i) == 0) { hit = &v[k]; break; }
        if (!hit) return NULL;
        if (j == len) return hit;
        if (!hit->is_group) return NULL;    /* a path through a leaf */
        v = hit->fields;
        n = hit->nfields;
        i = j + 1;
    }
    return NULL;
}

/* ---------------------------------------------------------------- printer */

void dw_event_field_type_print(FILE *out, const dw_event_field *f)
{
    if (f->is_group) { fputs(f->open ? "group (open)" : "group", out); return; }
    if (f->from_selector && f->netypes != 1) {
        if (f->netypes == 0) { fputs("<no entity type>", out); return; }
        for (size_t i = 0; i < f->netypes; i++) {
            if (i) fputs(" | ", out);
            fwrite(f->etypes[i].s, 1, f->etypes[i].len, out);
        }
        return;
    }
    dw_type_print(out, f->type);
}

static void print_fields(FILE *out, const dw_event_field *v, size_t n, dw_buf *path)
{
    for (size_t i = 0; i < n; i++) {
        size_t mark = path->len;
        if (mark) dw_buf_putc(path, '.');
        dw_buf_append(path, v[i].name.s, v[i].name.len);
        fprintf(out, "  %.*s%s: ", (int)path->len, path->p, v[i].optional ? "?" : "");
        dw_event_field_type_print(out, &v[i]);
        if (v[i].pin) fprintf(out, " pin = %.*s", (int)v[i].pin->text.len, v[i].pin->text.s);
        fputc('\n', out);
        if (v[i].is_group) print_fields(out, v[i].fields, v[i].nfields, path);
        path->len = mark;
    }
}

static void print_fdecls(FILE *out, const dw_ev_fdecl *v, size_t n, const dw_str binder)
{
    for (size_t i = 0; i < n; i++) {
        const dw_ev_fdecl *f = &v[i];
        if (i) fputs(", ", out);
        static const char *SEL[] = { "inputs", "outputs", "principalType", "resourceType" };
        if (f->kind == DW_FD_SPREAD) { fprintf(out, "...%s(%.*s)", SEL[f->sel], (int)binder.len, binder.s); continue; }
        fprintf(out, "%s%.*s: ", f->pinned ? "pin " : "", (int)f->name.len, f->name.s);
        if (f->kind == DW_FD_TYPE) fwrite(f->type_name.s, 1, f->type_name.len, out);
        else if (f->kind == DW_FD_SELECTOR) fprintf(out, "%s(%.*s)", SEL[f->sel], (int)binder.len, binder.s);
        else { fputs("{ ", out); print_fdecls(out, f->fields, f->nfields, binder); fputs(" }", out); }
        if (f->pinned) fprintf(out, " = %.*s", (int)f->ref.text.len, f->ref.text.s);
    }
}

void dw_event_derivation_print(FILE *out, const dw_event_derivation *dv)
{
    const dw_event_schema *es = dv->es;
    fprintf(out, "max_window %llus (%.*s%s)\n", (unsigned long long)es->max_window,
            (int)es->max_window_text.len, es->max_window_text.s, es->has_max_window ? "" : ", default");
    fputs("decision kinds:", out);
    for (size_t i = 0; i < es->ndecision_kinds; i++) fprintf(out, " %.*s", (int)es->decision_kinds[i].len, es->decision_kinds[i].s);
    fputs(es->ndecision_kinds ? "\n" : " (none)\n", out);
    fputs("key-local pins:", out);
    for (size_t i = 0; i < es->nkey; i++)
        fprintf(out, "%s %.*s = %.*s", i ? "," : "", (int)es->key[i].path.len, es->key[i].path.s,
                (int)es->key[i].ref.text.len, es->key[i].ref.text.s);
    fputs(es->nkey ? "\n" : " (none)\n", out);
    if (es->loose_tokens)
        fprintf(out, "style: whitespace inside a composite token at line %u, column %u\n", es->loose_loc.line, es->loose_loc.col);
    for (size_t k = 0; k < es->ndecls; k++) {
        const dw_ev_decl *d = &es->decls[k];
        fprintf(out, "declaration %s<%.*s>::%.*s { ", d->decision ? "decision " : "", (int)d->binder.len, d->binder.s,
                (int)d->kind.len, d->kind.s);
        print_fdecls(out, d->fields, d->nfields, d->binder);
        fputs(d->nfields ? " }\n" : "}\n", out);
    }
    fprintf(out, "events: %zu\n", dv->nevents);
    dw_buf path = { 0 };
    for (size_t i = 0; i < dv->nevents; i++) {
        const dw_derived_event *ev = &dv->events[i];
        fprintf(out, "event %.*s::", (int)ev->action_type.len, ev->action_type.s);
        dw_str_print_quoted(out, ev->action_id.s, ev->action_id.len);
        fprintf(out, "::%.*s%s\n", (int)ev->kind.len, ev->kind.s, ev->decision ? " (decision)" : "");
        path.len = 0;
        print_fields(out, ev->fields, ev->nfields, &path);
    }
    dw_buf_free(&path);
}
