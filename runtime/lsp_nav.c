/* lsp_nav.c - textDocument/definition (actions and entity types into the
 * schema file, macros into the document or the standard library) and
 * textDocument/documentSymbol (rules by @id and macros; a schema's entity
 * types and actions). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lsp_types.h"

const dw_schema *dw_lsp_schema(const dw_lsp *s) { return s->sess_ok ? s->sess.schema : NULL; }

static bool ends_with_action(dw_str path)
{
    return dw_str_is(path, "Action") || (path.len > 8 && !memcmp(path.s + path.len - 8, "::Action", 8));
}

const dw_action_decl *dw_lsp_tok_action(const dw_lsp *s, const dw_lsp_tok *tok)
{
    const dw_schema *sc = dw_lsp_schema(s);
    if (!sc || tok->kind != DW_TOK_UID || tok->on_type || !ends_with_action(tok->path)) return NULL;
    return dw_schema_action(sc, tok->path.s, tok->path.len, tok->id.s, tok->id.len);
}

const dw_entity_decl *dw_lsp_tok_entity(const dw_lsp *s, const dw_lsp_tok *tok)
{
    const dw_schema *sc = dw_lsp_schema(s);
    if (!sc || (tok->kind != DW_TOK_UID && tok->kind != DW_TOK_PATH)) return NULL;
    return dw_schema_entity(sc, tok->path.s, tok->path.len);
}

const dw_macro_def *dw_lsp_macro(dw_lsp *s, dw_lsp_doc *d, dw_str name, bool *from_stdlib)
{
    const dw_policy_set *sets[2] = { dw_lsp_doc_policies(d), dw_lsp_stdlib(s) };
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; sets[k] && i < sets[k]->nmacros; i++)
            if (dw_str_eq(sets[k]->macros[i].name, name)) {
                *from_stdlib = k == 1;
                return &sets[k]->macros[i];
            }
    return NULL;
}

bool dw_lsp_cursor(dw_lsp *s, const dw_json *params, dw_lsp_at *at, char *err, size_t errcap)
{
    memset(at, 0, sizeof *at);
    if (!(at->d = dw_lsp_doc_at(s, params, &at->off, err, errcap))) return false;
    dw_lsp_scan(at->d->text, at->d->len, at->off, &at->tok);
    at->action = dw_lsp_tok_action(s, &at->tok);
    at->entity = at->action ? NULL : dw_lsp_tok_entity(s, &at->tok);
    if (at->tok.kind == DW_TOK_CALL) at->macro = dw_lsp_macro(s, at->d, at->tok.name, &at->macro_in_stdlib);
    return true;
}

/* {"uri": ..., "range": ...} for bytes [off, end) of a file's text. */
static void w_location(dw_jw *w, const dw_lsp *s, const char *path, const char *text, size_t len, size_t off, size_t end)
{
    dw_jw_raw(w, "{\"uri\":");
    dw_jw_uri(w, path);
    dw_jw_raw(w, ",\"range\":");
    dw_lsp_text_range(w, s, text, len, off, end);
    dw_jw_raw(w, "}");
}

int dw_lsp_definition(dw_lsp *s, const dw_json *params, dw_jw *w, char *err, size_t errcap)
{
    dw_lsp_at at;
    if (!dw_lsp_cursor(s, params, &at, err, errcap)) return DW_RPC_INVALID_PARAMS;
    dw_lsp_doc *d = at.d;
    const dw_source *sch = &s->sess.schema_src;
    const dw_action_decl *a = at.action;
    const dw_entity_decl *e = at.entity;
    const char *file = a || e ? dw_lsp_schema_file(s) : NULL;
    if (file && a) { w_location(w, s, file, sch->text, sch->len, a->loc.off, a->loc.end); return 0; }
    if (file && e) { w_location(w, s, file, sch->text, sch->len, e->loc.off, e->loc.end); return 0; }
    bool lib = at.macro_in_stdlib;
    const dw_macro_def *m = at.macro;
    if (m && !lib) {
        dw_jw_raw(w, "{\"uri\":");
        dw_jw_strz(w, d->uri);
        dw_jw_raw(w, ",\"range\":");
        dw_lsp_w_range(w, s, d, m->name_loc.off, m->name_loc.end);
        dw_jw_raw(w, "}");
        return 0;
    }
    const char *lf = m ? dw_lsp_stdlib_file(s) : NULL;
    if (lf) { w_location(w, s, lf, s->stdlib_src.text, s->stdlib_src.len, m->name_loc.off, m->name_loc.end); return 0; }
    dw_jw_raw(w, "null");
    return 0;
}

/* ---- document symbols ---- */

enum { SK_CLASS = 5, SK_ENUM = 10, SK_FUNCTION = 12, SK_OBJECT = 19, SK_EVENT = 24 };

static void w_symbol(dw_jw *w, dw_lsp *s, dw_lsp_doc *d, bool *first, const char *name, size_t nlen, const char *detail,
                     int kind, size_t off, size_t end, size_t soff, size_t send)
{
    dw_jw_raw(w, *first ? "{\"name\":" : ",{\"name\":");
    *first = false;
    dw_jw_str(w, name, nlen ? nlen : 1);   /* the protocol wants a non-empty name */
    if (detail) { dw_jw_raw(w, ",\"detail\":"); dw_jw_strz(w, detail); }
    dw_jw_printf(w, ",\"kind\":%d,\"range\":", kind);
    dw_lsp_w_range(w, s, d, off, end);
    dw_jw_raw(w, ",\"selectionRange\":");
    if (soff < off || send > end) { soff = off; send = end; }
    dw_lsp_w_range(w, s, d, soff, send);
    dw_jw_raw(w, "}");
}

static void policy_symbols(dw_lsp *s, dw_lsp_doc *d, dw_jw *w, bool *first)
{
    const dw_policy_set *ps = dw_lsp_doc_policies(d);
    for (size_t i = 0; ps && i < ps->nmacros; i++) {
        const dw_macro_def *m = &ps->macros[i];
        w_symbol(w, s, d, first, m->name.s, m->name.len, m->kind == DW_MACRO_TEMPORAL ? "def temporal" : "def cedar",
                 SK_FUNCTION, m->loc.off, m->loc.end, m->name_loc.off, m->name_loc.end);
    }
    for (size_t i = 0; ps && i < ps->npolicies; i++) {
        const dw_policy *p = &ps->policies[i];
        char name[256], detail[400];
        dw_lsp_policy_name(ps, i, name, sizeof name);
        size_t start = p->loc.off, sel = p->effect_loc.off, sele = p->effect_loc.end;
        dw_str desc = { "", 0 };
        for (size_t k = 0; k < p->nannots; k++) {
            if (p->annots[k].loc.off < start) start = p->annots[k].loc.off;
            if (dw_str_is(p->annots[k].key, "id")) { sel = p->annots[k].loc.off; sele = p->annots[k].loc.end; }
            if (dw_str_is(p->annots[k].key, "description")) desc = p->annots[k].value;
        }
        snprintf(detail, sizeof detail, "%s%s%.*s", p->effect == DW_PERMIT ? "permit" : "forbid", desc.len ? ": " : "",
                 (int)(desc.len > 300 ? 300 : desc.len), desc.s);
        w_symbol(w, s, d, first, name, strlen(name), detail, SK_OBJECT, start, p->loc.end, sel, sele);
    }
}

static void schema_symbols(dw_lsp *s, dw_lsp_doc *d, dw_jw *w, bool *first)
{
    dw_diags g;
    dw_diags_init(&g);
    dw_schema *sc = dw_schema_parse(&d->src, &g);
    dw_diags_free(&g);
    for (size_t i = 0; sc && i < sc->nentities; i++) {
        const dw_entity_decl *e = &sc->entities[i];
        w_symbol(w, s, d, first, e->name.s, e->name.len, e->is_enum ? "enum entity" : "entity", e->is_enum ? SK_ENUM : SK_CLASS,
                 e->loc.off, e->loc.end, e->loc.off, e->loc.end);
    }
    for (size_t i = 0; sc && i < sc->nactions; i++) {
        const dw_action_decl *a = &sc->actions[i];
        char name[300];
        snprintf(name, sizeof name, "%.*s::\"%.*s\"", (int)(a->uid.type.len > 100 ? 100 : a->uid.type.len), a->uid.type.s,
                 (int)(a->uid.id.len > 150 ? 150 : a->uid.id.len), a->uid.id.s);
        w_symbol(w, s, d, first, name, strlen(name), "action", SK_EVENT, a->loc.off, a->loc.end, a->loc.off, a->loc.end);
    }
    if (sc) dw_schema_free(sc);
}

int dw_lsp_symbols(dw_lsp *s, const dw_json *params, dw_jw *w, char *err, size_t errcap)
{
    dw_lsp_doc *d = dw_lsp_doc_of(s, params, err, errcap);
    if (!d) return DW_RPC_INVALID_PARAMS;
    bool first = true;
    dw_jw_raw(w, "[");
    if (d->kind == DW_DOC_POLICY) policy_symbols(s, d, w, &first);
    else if (d->kind == DW_DOC_SCHEMA) schema_symbols(s, d, w, &first);
    dw_jw_raw(w, "]");
    return 0;
}
