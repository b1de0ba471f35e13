/* lsp_complete.c - textDocument/completion, read from the text before the
 * cursor (which rarely parses while being typed): after `context.`,
 * `principal.` or `resource.` the attributes the schema gives the actions
 * of the rule's scope; after `.` inside a predicate's braces its event's
 * fields; in `Ns::Action::"` the action ids, in an enum type's `::"` its
 * ids; after `Ns::` the namespace's types; after `@` the annotations; after
 * `within N` the window units; elsewhere keywords, variables, macros,
 * actions and entity types. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lsp_types.h"

#define MAX_ITEMS 1000

typedef struct items {
    dw_lsp *s; dw_lsp_doc *d;
    dw_jw *w;
    size_t n;
    size_t eo, ee;          /* the text the item replaces */
    dw_str prefix;          /* only labels that start with it */
    const char *close;      /* appended to each newText (an unterminated string's quote) */
} items;

static void item(items *it, const char *label, size_t ln, int kind, const char *detail)
{
    if (it->n >= MAX_ITEMS || (it->prefix.len && (ln < it->prefix.len || memcmp(label, it->prefix.s, it->prefix.len)))) return;
    dw_jw *w = it->w;
    dw_jw_raw(w, it->n++ ? ",{\"label\":" : "{\"label\":");
    dw_jw_str(w, label, ln);
    dw_jw_printf(w, ",\"kind\":%d", kind);
    if (detail) { dw_jw_raw(w, ",\"detail\":"); dw_jw_strz(w, detail); }
    dw_jw_raw(w, ",\"textEdit\":{\"range\":");
    dw_lsp_w_range(w, it->s, it->d, it->eo, it->ee);
    dw_jw_raw(w, ",\"newText\":");
    if (it->close) {
        char *t = malloc(ln + strlen(it->close) + 1);
        if (!t) { w->oom = true; return; }
        memcpy(t, label, ln);
        strcpy(t + ln, it->close);
        dw_jw_strz(w, t);
        free(t);
    } else dw_jw_str(w, label, ln);
    dw_jw_raw(w, "}}");
}

static bool ident_char(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

enum { K_FIELD = 5, K_VARIABLE = 6, K_CLASS = 7, K_MODULE = 9, K_UNIT = 11, K_VALUE = 12, K_KEYWORD = 14, K_FUNCTION = 3, K_EVENT = 23, K_ENUM_MEMBER = 20 };

/* ---- members of context / principal / resource ---- */

typedef struct seg { size_t b, e; } seg;

/* The dotted chain before the `.` at dot: its segments, first to last. */
static size_t chain(const char *t, size_t dot, seg *out, size_t cap)
{
    seg rev[16];
    size_t n = 0, e = dot;
    while (n < 16) {
        size_t b = e;
        while (b > 0 && ident_char(t[b - 1])) b--;
        if (b == e) break;
        rev[n++] = (seg){ b, e };
        if (b > 0 && t[b - 1] == '.') e = b - 1;
        else break;
    }
    if (n > cap) n = cap;
    for (size_t i = 0; i < n; i++) out[i] = rev[n - 1 - i];
    return n;
}

/* The actions of the rule around off: the text is parsed with a placeholder
 * attribute at the cursor, so `context.input.` parses; every action with
 * appliesTo when the rule still does not parse. */
static size_t actions_around(dw_lsp_doc *d, const dw_schema *sc, size_t off, bool patch, const dw_action_decl **acts)
{
    static const char hole[] = "dwc_completion_";
    size_t n = 0, hl = patch ? sizeof hole - 1 : 0;
    char *text = malloc(d->len + hl + 1);
    if (text) {
        memcpy(text, d->text, off);
        memcpy(text + off, hole, hl);
        memcpy(text + off + hl, d->text + off, d->len - off);
        text[d->len + hl] = 0;
        dw_source src = { d->src.name, text, d->len + hl };
        dw_diags g;
        dw_diags_init(&g);
        dw_policy_set *ps = dw_parse_policy_set(&src, &g);
        dw_diags_free(&g);
        long pi = dw_lsp_policy_at(ps, off);
        if (pi >= 0) n = dw_lsp_scope_actions(sc, &ps->policies[pi], acts, sc->nactions);
        if (ps) dw_policy_set_free(ps);
        free(text);
        if (pi >= 0) return n;
    }
    for (size_t i = 0; i < sc->nactions; i++) if (sc->actions[i].has_applies_to) acts[n++] = &sc->actions[i];
    return n;
}

/* Collect the attributes of t (record or entity), once per name. */
static void add_attrs(const dw_schema *sc, const dw_type *t, const dw_attr_decl **seen, size_t *nseen, size_t cap)
{
    if (t && t->kind == DW_T_ENTITY) {
        const dw_entity_decl *e = dw_schema_entity(sc, t->name.s, t->name.len);
        t = e ? e->shape : NULL;
    }
    if (!t || t->kind != DW_T_RECORD) return;
    for (size_t i = 0; i < t->nattrs && *nseen < cap; i++) {
        bool dup = false;
        for (size_t k = 0; k < *nseen && !dup; k++) dup = dw_str_eq(seen[k]->name, t->attrs[i].name);
        if (!dup) seen[(*nseen)++] = &t->attrs[i];
    }
}

static void complete_members(items *it, const char *t, const seg *sg, size_t ns, size_t off, bool patch)
{
    const dw_schema *sc = dw_lsp_schema(it->s);
    if (!sc || !sc->nactions) return;
    const dw_action_decl **acts = calloc(sc->nactions, sizeof *acts);
    const dw_attr_decl **seen = calloc(MAX_ITEMS, sizeof *seen);
    if (!acts || !seen) { free(acts); free(seen); it->w->oom = true; return; }
    size_t na = actions_around(it->d, sc, off, patch, acts), nseen = 0;
    dw_str root = { t + sg[0].b, sg[0].e - sg[0].b };
    dw_arena a;
    dw_arena_init(&a, 1024);
    for (size_t i = 0; i < na; i++) {
        const dw_action_decl *ac = acts[i];
        /* principal and resource may be of several types: each is followed */
        const dw_str *roots = dw_str_is(root, "principal") ? ac->principals : dw_str_is(root, "resource") ? ac->resources : NULL;
        size_t nr = roots ? (dw_str_is(root, "principal") ? ac->nprincipals : ac->nresources) : 1;
        for (size_t r = 0; r < nr; r++) {
            const dw_type *ty = ac->context;
            if (roots) {
                dw_type *e = dw_arena_alloc(&a, sizeof *e);
                if (!e) break;
                e->kind = DW_T_ENTITY;
                e->name = roots[r];
                ty = e;
            }
            for (size_t k = 1; k < ns && ty; k++) ty = dw_lsp_attr_type(sc, ty, t + sg[k].b, sg[k].e - sg[k].b, NULL);
            add_attrs(sc, ty, seen, &nseen, MAX_ITEMS);
        }
    }
    for (size_t i = 0; i < nseen; i++) {
        char *ty = dw_lsp_type_text(seen[i]->type);
        char detail[300];
        snprintf(detail, sizeof detail, "%s%s", ty ? ty : "", seen[i]->required ? "" : " (optional: guard with `has`)");
        free(ty);
        item(it, seen[i]->name.s, seen[i]->name.len, K_FIELD, detail);
    }
    dw_arena_free(&a);
    free(acts);
    free(seen);
}

/* ---- event fields inside a predicate's braces ---- */

static void complete_fields(items *it, const dw_derived_event *ev, const char *path, size_t plen)
{
    const dw_event_field *v = ev->fields;
    size_t n = ev->nfields;
    if (plen) {
        const dw_event_field *g = dw_event_field_lookup(ev, path, plen);
        if (!g || !g->is_group) return;
        v = g->fields;
        n = g->nfields;
    }
    for (size_t i = 0; i < n; i++) {
        char *p = NULL;
        size_t pn = 0;
        FILE *f = open_memstream(&p, &pn);
        if (f) { dw_event_field_type_print(f, &v[i]); fclose(f); }
        item(it, v[i].name.s, v[i].name.len, K_FIELD, p);
        free(p);
    }
}

/* ---- ids, namespaces, everything else ---- */

static bool ends_with_action(dw_str p) { return dw_str_is(p, "Action") || (p.len > 8 && !memcmp(p.s + p.len - 8, "::Action", 8)); }

static void complete_ids(items *it, const dw_lsp_tok *tok)
{
    const dw_schema *sc = dw_lsp_schema(it->s);
    if (!sc) return;
    if (ends_with_action(tok->path)) {
        for (size_t i = 0; i < sc->nactions; i++)
            if (dw_str_eq(sc->actions[i].uid.type, tok->path)) item(it, sc->actions[i].uid.id.s, sc->actions[i].uid.id.len, K_EVENT, "action");
        return;
    }
    const dw_entity_decl *e = dw_schema_entity(sc, tok->path.s, tok->path.len);
    for (size_t i = 0; e && i < e->nenum; i++) item(it, e->enum_ids[i].s, e->enum_ids[i].len, K_ENUM_MEMBER, "enum id");
}

static void complete_namespace(items *it, dw_str ns)
{
    const dw_schema *sc = dw_lsp_schema(it->s);
    if (!sc) return;
    const char *last = NULL;
    size_t lastn = 0;
    for (size_t i = 0; i < sc->nentities + sc->nactions; i++) {
        dw_str name = i < sc->nentities ? sc->entities[i].name : sc->actions[i - sc->nentities].uid.type;
        if (name.len <= ns.len + 2 || memcmp(name.s, ns.s, ns.len) || name.s[ns.len] != ':' || name.s[ns.len + 1] != ':') continue;
        const char *segp = name.s + ns.len + 2, *end = name.s + name.len;
        const char *colon = memchr(segp, ':', (size_t)(end - segp));
        size_t sl = (size_t)((colon ? colon : end) - segp);
        if (last && lastn == sl && !memcmp(last, segp, sl)) continue;   /* actions share one type */
        last = segp;
        lastn = sl;
        item(it, segp, sl, colon ? K_MODULE : i < sc->nentities ? K_CLASS : K_EVENT, colon ? "namespace" : i < sc->nentities ? "entity type" : "action type");
    }
}

static void complete_general(items *it)
{
    static const char *const words[] = {
        "permit", "forbid", "when", "unless", "principal", "action", "resource", "context", "if", "then", "else",
        "in", "is", "like", "has", "true", "false", "temporal", "guardrails", "def", "cedar",
        "formerly", "previous", "since", "within", "exists", "count", "sum", "for", "where", "tp", "Timepoint",
    };
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        item(it, words[i], strlen(words[i]), i >= 4 && i < 8 ? K_VARIABLE : K_KEYWORD, NULL);
    const dw_policy_set *sets[2] = { dw_lsp_doc_policies(it->d), dw_lsp_stdlib(it->s) };
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; sets[k] && i < sets[k]->nmacros; i++) {
            const dw_macro_def *m = &sets[k]->macros[i];
            item(it, m->name.s, m->name.len, K_FUNCTION, m->kind == DW_MACRO_TEMPORAL ? "def temporal" : "def cedar");
        }
    const dw_schema *sc = dw_lsp_schema(it->s);
    for (size_t i = 0; sc && i < sc->nactions; i++) {
        const dw_action_decl *a = &sc->actions[i];
        char uid[300];
        int n = snprintf(uid, sizeof uid, "%.*s::\"%.*s\"", (int)(a->uid.type.len > 100 ? 100 : a->uid.type.len), a->uid.type.s,
                         (int)(a->uid.id.len > 150 ? 150 : a->uid.id.len), a->uid.id.s);
        item(it, uid, (size_t)n, K_EVENT, "action");
    }
    for (size_t i = 0; sc && i < sc->nentities; i++) item(it, sc->entities[i].name.s, sc->entities[i].name.len, K_CLASS, "entity type");
}

int dw_lsp_completion(dw_lsp *s, const dw_json *params, dw_jw *w, char *err, size_t errcap)
{
    size_t off;
    dw_lsp_doc *d = dw_lsp_doc_at(s, params, &off, err, errcap);
    if (!d) return DW_RPC_INVALID_PARAMS;
    const char *t = d->text;
    size_t ws = off;
    while (ws > 0 && ident_char(t[ws - 1])) ws--;
    items it = { s, d, w, 0, ws, off, { t + ws, off - ws }, NULL };
    dw_jw_raw(w, "{\"isIncomplete\":false,\"items\":[");
    dw_lsp_tok tok;
    dw_lsp_scan(t, d->len, off, &tok);
    if (d->kind != DW_DOC_POLICY) { /* schema files: nothing to offer yet */ }
    else if (tok.kind == DW_TOK_UID && off > tok.off && (size_t)(tok.id.s - t) <= off) {
        /* inside the quoted id: replace it whole */
        size_t ib = (size_t)(tok.id.s - t);
        it.eo = ib;
        it.ee = ib + tok.id.len;
        it.prefix = (dw_str){ t + ib, off - ib };
        it.close = tok.end == ib + tok.id.len ? "\"" : NULL;
        complete_ids(&it, &tok);
    } else if (ws > 0 && t[ws - 1] == '.') {
        seg sg[16];
        size_t ns = chain(t, ws - 1, sg, 16);
        dw_str root = ns ? (dw_str){ t + sg[0].b, sg[0].e - sg[0].b } : (dw_str){ "", 0 };
        const dw_derived_event *ev;
        if (dw_str_is(root, "context") || dw_str_is(root, "principal") || dw_str_is(root, "resource"))
            complete_members(&it, t, sg, ns, off, ws == off);
        else if (ns && (ev = dw_lsp_predicate_at(s, t, ws))) complete_fields(&it, ev, t + sg[0].b, sg[ns - 1].e - sg[0].b);
    } else if (ws >= 2 && t[ws - 1] == ':' && t[ws - 2] == ':') {
        size_t b = ws - 2;
        while (b > 0 && (ident_char(t[b - 1]) || t[b - 1] == ':')) b--;
        complete_namespace(&it, (dw_str){ t + b, ws - 2 - b });
    } else if (ws > 0 && t[ws - 1] == '@') {
        static const char *const annots[] = { "id", "description", "suppress" };
        for (size_t i = 0; i < 3; i++) item(&it, annots[i], strlen(annots[i]), K_KEYWORD, "annotation");
    } else if (ws < off && t[ws] >= '0' && t[ws] <= '9') {
        /* `within 10` + a unit */
        size_t digits = ws, b = ws;
        while (digits < off && t[digits] >= '0' && t[digits] <= '9') digits++;
        while (b > 0 && (t[b - 1] == ' ' || t[b - 1] == '\t')) b--;
        if (digits >= off - 1 && b >= 6 && !memcmp(t + b - 6, "within", 6)) {
            static const char *const units[] = { "s", "m", "h", "d" }, *const names[] = { "seconds", "minutes", "hours", "days" };
            for (size_t i = 0; i < 4; i++) {
                char l[40];
                int n = snprintf(l, sizeof l, "%.*s%s", (int)(digits - ws > 20 ? 20 : digits - ws), t + ws, units[i]);
                item(&it, l, (size_t)n, K_UNIT, names[i]);
            }
        }
    } else {
        const dw_derived_event *ev = dw_lsp_predicate_at(s, t, ws);
        if (ev) complete_fields(&it, ev, NULL, 0);
        else complete_general(&it);
    }
    dw_jw_raw(w, "]}");
    return 0;
}
