/* lsp_hover.c - textDocument/hover: the type of an attribute or expression
 * (per action the rule's scope admits), an action's principal, resource and
 * context shape, an entity type's declaration, a macro's definition, a
 * temporal predicate's event and its fields, and a rule's @id and
 * @description. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lsp_types.h"

static void md_type(dw_jw *md, const dw_type *t)
{
    char *x = dw_lsp_type_text(t);
    if (!x) { md->oom = true; return; }
    dw_jw_raw(md, x);
    free(x);
}

static void md_names(dw_jw *md, const dw_str *v, size_t n)
{
    for (size_t i = 0; i < n; i++) { dw_jw_raw(md, i ? " | " : ""); dw_jw_rawn(md, v[i].s, v[i].len); }
    if (!n) dw_jw_raw(md, "(none)");
}

static void hover_action(dw_jw *md, const dw_action_decl *a)
{
    dw_jw_printf(md, "```dogwood\naction %.*s::\"%.*s\"\n", (int)a->uid.type.len, a->uid.type.s, (int)a->uid.id.len, a->uid.id.s);
    if (a->has_applies_to) {
        dw_jw_raw(md, "  principal: ");
        md_names(md, a->principals, a->nprincipals);
        dw_jw_raw(md, "\n  resource: ");
        md_names(md, a->resources, a->nresources);
        dw_jw_raw(md, "\n  context: ");
        md_type(md, a->context);
        dw_jw_raw(md, "\n");
    } else dw_jw_raw(md, "  (applies to nothing: an action group)\n");
    dw_jw_raw(md, "```");
}

static void hover_entity(dw_jw *md, const dw_entity_decl *e)
{
    dw_jw_printf(md, "```dogwood\nentity %.*s", (int)e->name.len, e->name.s);
    if (e->nmember_of) { dw_jw_raw(md, " in ["); for (size_t i = 0; i < e->nmember_of; i++) dw_jw_printf(md, "%s%.*s", i ? ", " : "", (int)e->member_of[i].len, e->member_of[i].s); dw_jw_raw(md, "]"); }
    if (e->is_enum) {
        dw_jw_raw(md, " enum [");
        for (size_t i = 0; i < e->nenum; i++) dw_jw_printf(md, "%s\"%.*s\"", i ? ", " : "", (int)e->enum_ids[i].len, e->enum_ids[i].s);
        dw_jw_raw(md, "]");
    } else if (e->shape && e->shape->nattrs) { dw_jw_raw(md, " = "); md_type(md, e->shape); }
    if (e->tags) { dw_jw_raw(md, " tags "); md_type(md, e->tags); }
    dw_jw_raw(md, "\n```");
}

static void hover_macro(dw_jw *md, const dw_macro_def *m, bool lib)
{
    dw_jw_printf(md, "```dogwood\ndef %s %.*s(", m->kind == DW_MACRO_TEMPORAL ? "temporal" : "cedar", (int)m->name.len, m->name.s);
    for (size_t i = 0; i < m->nparams; i++) dw_jw_printf(md, "%s?%.*s", i ? ", " : "", (int)m->params[i].len, m->params[i].s);
    dw_jw_raw(md, ") {");
    dw_jw_rawn(md, m->body_text.s, m->body_text.len);
    dw_jw_raw(md, "}\n```");
    if (lib) dw_jw_raw(md, "\nfrom the standard macro library");
}

/* The expression e of rule p: its type for each action the scope admits,
 * once when they agree. */
static bool hover_expr(dw_lsp *s, dw_lsp_doc *d, const dw_policy *p, const dw_expr *e, dw_jw *md)
{
    const dw_schema *sc = dw_lsp_schema(s);
    if (!sc || !sc->nactions) return false;
    const dw_action_decl **acts = calloc(sc->nactions, sizeof *acts);
    char **texts = calloc(sc->nactions, sizeof *texts);
    if (!acts || !texts) { free(acts); free(texts); md->oom = true; return false; }
    size_t n = dw_lsp_scope_actions(sc, p, acts, sc->nactions), known = 0;
    bool same = true;
    dw_arena a;
    dw_arena_init(&a, 1024);
    for (size_t i = 0; i < n; i++) {
        const dw_type *t = dw_lsp_type_of(sc, acts[i], &a, e, 0);
        if (!t) continue;
        if (!(texts[i] = dw_lsp_type_text(t))) { md->oom = true; break; }
        for (size_t k = 0; k < i; k++) if (texts[k] && strcmp(texts[k], texts[i])) same = false;
        known++;
    }
    if (known) {
        size_t len = e->loc.end > e->loc.off && e->loc.end <= d->len ? e->loc.end - e->loc.off : 0;
        dw_jw_raw(md, "`");
        dw_jw_rawn(md, d->text + e->loc.off, len > 200 ? 200 : len);
        if (same) {
            for (size_t i = 0; i < n; i++) if (texts[i]) { dw_jw_printf(md, "`: `%s`", texts[i]); break; }
        } else {
            dw_jw_raw(md, "`, by action:");
            for (size_t i = 0; i < n; i++)
                if (texts[i]) dw_jw_printf(md, "\n- `%.*s`: `%s`", (int)acts[i]->uid.id.len, acts[i]->uid.id.s, texts[i]);
        }
    }
    for (size_t i = 0; i < n; i++) free(texts[i]);
    free(texts);
    free(acts);
    dw_arena_free(&a);
    return known > 0;
}

static bool ident_char(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

static void md_field_type(dw_jw *md, const dw_event_field *f)
{
    char *p = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&p, &n);
    if (!m) { md->oom = true; return; }
    dw_event_field_type_print(m, f);
    if (fclose(m)) { free(p); md->oom = true; return; }
    dw_jw_raw(md, p);
    free(p);
}

/* Inside a temporal predicate: the event kind (its fields), or a field
 * pattern's name (its type). */
static bool hover_event(dw_lsp *s, const dw_lsp_at *at, dw_jw *md, size_t *ro, size_t *re)
{
    const dw_lsp_doc *d = at->d;
    const char *t = d->text;
    if (at->tok.kind != DW_TOK_IDENT && at->tok.kind != DW_TOK_MEMBER) return false;
    size_t ws = (size_t)(at->tok.name.s - t), we = ws + at->tok.name.len;
    const dw_derived_event *ev;
    if (ws >= 3 && t[ws - 1] == ':' && t[ws - 2] == ':' && t[ws - 3] == '"') {
        size_t k = we;
        while (k < d->len && (t[k] == ' ' || t[k] == '\t')) k++;
        if (k >= d->len || t[k] != '{' || !(ev = dw_lsp_predicate_at(s, t, k + 1))) return false;
        dw_jw_printf(md, "event `%.*s::\"%.*s\"::%.*s`%s\n", (int)ev->action_type.len, ev->action_type.s, (int)ev->action_id.len,
                     ev->action_id.s, (int)ev->kind.len, ev->kind.s, ev->decision ? " (a decision event)" : "");
        for (size_t i = 0; i < ev->nfields; i++) {
            const dw_event_field *f = &ev->fields[i];
            for (size_t j = 0; j < (f->is_group ? f->nfields : 1); j++) {
                const dw_event_field *g = f->is_group ? &f->fields[j] : f;
                dw_jw_printf(md, "\n- `%.*s%s%.*s`: `", (int)f->name.len, f->name.s, f->is_group ? "." : "",
                             f->is_group ? (int)g->name.len : 0, f->is_group ? g->name.s : "");
                md_field_type(md, g);
                dw_jw_raw(md, g->optional || f->optional ? "` (optional)" : "`");
            }
        }
        *ro = ws;
        *re = we;
        return true;
    }
    if (!(ev = dw_lsp_predicate_at(s, t, ws))) return false;
    size_t pb = ws;
    while (pb >= 2 && t[pb - 1] == '.' && ident_char(t[pb - 2])) {
        pb--;
        while (pb > 0 && ident_char(t[pb - 1])) pb--;
    }
    const dw_event_field *f = dw_event_field_lookup(ev, t + pb, we - pb);
    if (!f) return false;
    dw_jw_printf(md, "`%.*s`: `", (int)(we - pb), t + pb);
    md_field_type(md, f);
    dw_jw_printf(md, "`%s, a field of `%.*s::\"%.*s\"::%.*s`", f->optional ? " (optional)" : "", (int)ev->action_type.len,
                 ev->action_type.s, (int)ev->action_id.len, ev->action_id.s, (int)ev->kind.len, ev->kind.s);
    *ro = pb;
    *re = we;
    return true;
}

/* The temporal operators, in dogwood.md §8.6's words. */
static bool hover_keyword(dw_str w, dw_jw *md)
{
    static const struct { const char *word, *text; } ops[] = {
        { "formerly", "`formerly within W A`: A holds at some event in the window of the current one, the current event included (dogwood.md §8.6)" },
        { "previous", "`previous within W A`: the event just before the current one is in the window and A holds there (index-based: whatever that event is)" },
        { "since", "`L since within W R`: R held at some event j in the window, and L holds at every later event up to the current one" },
        { "within", "`within N u`: a window of N seconds, minutes, hours or days (`s m h d`), at most the event schema's max_window (default 24h)" },
        { "exists", "`exists (x: T). A`: A holds for some value of x" },
        { "count", "`count for (g: T), .... where A`: the number of distinct tuples (g, ...) among the rows of A (dogwood.md §8.7)" },
        { "sum", "`sum v for (v: Long), .... where A`: the sum of v over the distinct tuples of the rows of A (dogwood.md §8.7)" },
        { "tp", "`tp(t)`: binds t to the timepoint of the event it is evaluated at; t must be declared `Timepoint`" },
    };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (dw_str_is(w, ops[i].word)) { dw_jw_raw(md, ops[i].text); return true; }
    return false;
}

static void hover_policy(const dw_policy_set *ps, size_t i, dw_jw *md)
{
    const dw_policy *p = &ps->policies[i];
    char name[256];
    dw_lsp_policy_name(ps, i, name, sizeof name);
    dw_jw_printf(md, "**%s** `%s`", p->effect == DW_PERMIT ? "permit" : "forbid", name);
    for (size_t k = 0; k < p->nannots; k++)
        if (dw_str_is(p->annots[k].key, "description")) {
            dw_jw_raw(md, "\n\n");
            dw_jw_rawn(md, p->annots[k].value.s, p->annots[k].value.len);
        }
}

int dw_lsp_hover(dw_lsp *s, const dw_json *params, dw_jw *w, char *err, size_t errcap)
{
    dw_lsp_at at;
    if (!dw_lsp_cursor(s, params, &at, err, errcap)) return DW_RPC_INVALID_PARAMS;
    dw_lsp_doc *d = at.d;
    size_t off = at.off;
    dw_tok_kind k = at.tok.kind;
    dw_jw md = { 0 };
    size_t ro = at.tok.off, re = at.tok.end;
    if (at.action) hover_action(&md, at.action);
    else if (at.entity) hover_entity(&md, at.entity);
    else if (at.macro) hover_macro(&md, at.macro, at.macro_in_stdlib);
    else if (hover_event(s, &at, &md, &ro, &re)) { /* written */ }
    else if (k == DW_TOK_IDENT && hover_keyword(at.tok.name, &md)) { ro = at.tok.off; re = at.tok.end; }
    else if (d->kind == DW_DOC_POLICY && (k == DW_TOK_MEMBER || k == DW_TOK_IDENT || k == DW_TOK_CALL)) {
        const dw_policy_set *ps = dw_lsp_doc_policies(d);
        long pi = dw_lsp_policy_at(ps, off);
        const dw_expr *x = pi >= 0 ? dw_lsp_expr_at(&ps->policies[pi], off) : NULL;
        /* inside a temporal body the words answer for themselves (above) */
        if (x && x->kind != DW_E_TEMPORAL && hover_expr(s, d, &ps->policies[pi], x, &md)) { ro = x->loc.off; re = x->loc.end; }
        else if (pi >= 0 && !x) {
            hover_policy(ps, (size_t)pi, &md);
            ro = re = off;
        }
    }
    if (md.oom) { dw_buf_free(&md.b); w->oom = true; return 0; }
    if (!md.b.len) { dw_jw_raw(w, "null"); return 0; }
    dw_jw_raw(w, "{\"contents\":{\"kind\":\"markdown\",\"value\":");
    dw_jw_str(w, md.b.p, md.b.len);
    dw_jw_raw(w, "}");
    if (re > ro) { dw_jw_raw(w, ",\"range\":"); dw_lsp_w_range(w, s, d, ro, re); }
    dw_jw_raw(w, "}");
    dw_buf_free(&md.b);
    return 0;
}
