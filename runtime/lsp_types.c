/* lsp_types.c - what the features ask of a document: the token under the
 * cursor read from the text itself (so it works in temporal bodies and in
 * text that does not parse), the policy and expression at an offset, the
 * actions a policy's scope admits, and an expression's type from the
 * action schema. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lsp_types.h"

static bool ident_char(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

/* The string literal around off on its line: [*qs, *qe) from the opening
 * quote to past the closing one (or the line end).  False when off is not
 * inside one, or is in a comment (*comment set). */
static bool string_around(const char *t, size_t n, size_t off, size_t *qs, size_t *qe, bool *comment)
{
    size_t ls = off;
    while (ls > 0 && t[ls - 1] != '\n') ls--;
    *comment = false;
    for (size_t i = ls; i < n && t[i] != '\n';) {
        if (t[i] == '/' && i + 1 < n && t[i + 1] == '/') { *comment = i <= off; return false; }
        if (t[i] != '"') { if (i >= off) return false; i++; continue; }
        size_t b = i++;
        while (i < n && t[i] != '"' && t[i] != '\n') i += t[i] == '\\' && i + 1 < n && t[i + 1] != '\n' ? 2 : 1;
        size_t e = i < n && t[i] == '"' ? i + 1 : i;
        if (off > b && off < e + (e == i)) { *qs = b; *qe = e; return true; }
        if (b >= off) return false;
        i = e;
    }
    return false;
}

/* the `A::B::` path ending at byte e (exclusive, e at the first ':' after it
 * excluded): its start */
static size_t path_start(const char *t, size_t e)
{
    size_t b = e;
    for (;;) {
        size_t w = b;
        while (w > 0 && ident_char(t[w - 1])) w--;
        if (w == b) return b;
        b = w;
        if (b >= 2 && t[b - 1] == ':' && t[b - 2] == ':' && b >= 3 && ident_char(t[b - 3])) b -= 2;
        else return b;
    }
}

void dw_lsp_scan(const char *t, size_t n, size_t off, dw_lsp_tok *tok)
{
    memset(tok, 0, sizeof *tok);
    if (off > n) off = n;
    size_t qs, qe;
    bool comment;
    if (string_around(t, n, off, &qs, &qe, &comment)) {
        if (qs >= 3 && t[qs - 1] == ':' && t[qs - 2] == ':' && ident_char(t[qs - 3])) {
            size_t ps = path_start(t, qs - 2);
            tok->kind = DW_TOK_UID;
            tok->off = ps;
            tok->end = qe;
            tok->path = (dw_str){ t + ps, qs - 2 - ps };
            size_t ie = qe > qs + 1 && t[qe - 1] == '"' ? qe - 1 : qe;
            tok->id = (dw_str){ t + qs + 1, ie - qs - 1 };
        }
        return;
    }
    if (comment) return;
    size_t ws = off, we = off;
    if (!(off < n && ident_char(t[off])) && !(off > 0 && ident_char(t[off - 1]))) return;
    while (ws > 0 && ident_char(t[ws - 1])) ws--;
    while (we < n && ident_char(t[we])) we++;
    /* the whole `A::B` path the word is in */
    size_t ps = path_start(t, we), pe = we;
    while (pe + 2 < n && t[pe] == ':' && t[pe + 1] == ':' && ident_char(t[pe + 2])) {
        pe += 2;
        while (pe < n && ident_char(t[pe])) pe++;
    }
    if (pe + 2 < n && t[pe] == ':' && t[pe + 1] == ':' && t[pe + 2] == '"') {
        size_t e = pe + 3;
        while (e < n && t[e] != '"' && t[e] != '\n') e += t[e] == '\\' && e + 1 < n ? 2 : 1;
        tok->kind = DW_TOK_UID;
        tok->off = ps;
        tok->end = e < n && t[e] == '"' ? e + 1 : e;
        tok->path = (dw_str){ t + ps, pe - ps };
        tok->id = (dw_str){ t + pe + 3, e - pe - 3 };
        /* the cursor on the type part of a uid names the type */
        tok->on_type = off < pe && memchr(t + ps, ':', pe - ps) && !(pe - ws >= 6 && !memcmp(t + pe - 6, "Action", 6));
        return;
    }
    tok->off = ps;
    tok->end = pe;
    tok->name = (dw_str){ t + ws, we - ws };
    if (memchr(t + ps, ':', pe - ps)) { tok->kind = DW_TOK_PATH; tok->path = (dw_str){ t + ps, pe - ps }; return; }
    size_t k = we;
    while (k < n && (t[k] == ' ' || t[k] == '\t')) k++;
    if (k < n && t[k] == '(') { tok->kind = DW_TOK_CALL; return; }
    tok->kind = ws > 0 && t[ws - 1] == '.' ? DW_TOK_MEMBER : DW_TOK_IDENT;
}

const dw_derived_event *dw_lsp_predicate_at(const dw_lsp *s, const char *t, size_t off)
{
    if (!s->sess_ok || !s->sess.dv) return NULL;
    size_t k = off;
    int depth = 0;
    while (k > 0) {
        char c = t[--k];
        if (c == '}') depth++;
        else if (c == '{' && depth-- == 0) break;
        else if (c == ';' || off - k > 4096) return NULL;
    }
    if (depth >= 0 || k == 0) return NULL;
    size_t j = k;
    while (j > 0 && (t[j - 1] == ' ' || t[j - 1] == '\t')) j--;
    size_t kb = j;
    while (kb > 0 && ident_char(t[kb - 1])) kb--;
    if (kb == j || kb < 4 || t[kb - 1] != ':' || t[kb - 2] != ':' || t[kb - 3] != '"') return NULL;
    size_t qe = kb - 3, qb = qe;
    while (qb > 0 && t[qb - 1] != '"' && t[qb - 1] != '\n') qb--;
    if (qb < 3 || t[qb - 1] != '"' || t[qb - 2] != ':' || t[qb - 3] != ':') return NULL;
    size_t pe = qb - 3, pb = pe;
    while (pb > 0 && (ident_char(t[pb - 1]) || t[pb - 1] == ':')) pb--;
    return dw_event_find(s->sess.dv, t + pb, pe - pb, t + qb, qe - qb, t + kb, j - kb);
}

/* ---- the parsed set ---- */

static uint32_t policy_start(const dw_policy *p)
{
    uint32_t off = p->loc.off;
    for (size_t k = 0; k < p->nannots; k++) if (p->annots[k].loc.off < off) off = p->annots[k].loc.off;
    return off;
}

long dw_lsp_policy_at(const dw_policy_set *ps, size_t off)
{
    if (!ps) return -1;
    for (size_t i = 0; i < ps->npolicies; i++) {
        const dw_policy *p = &ps->policies[i];
        if (off >= policy_start(p) && off <= p->loc.end) return (long)i;
    }
    return -1;
}

static const dw_expr *innermost(const dw_expr *e, size_t off, unsigned depth)
{
    if (!e || off < e->loc.off || off > e->loc.end || depth > DW_MAX_EXPR_DEPTH + 8) return NULL;
    const dw_expr *k;
    for (size_t i = 0; (k = dw_expr_kid_c(e, i)); i++) {
        const dw_expr *hit = innermost(k, off, depth + 1);
        if (hit) return hit;
    }
    return e;
}

const dw_expr *dw_lsp_expr_at(const dw_policy *p, size_t off)
{
    for (size_t i = 0; i < p->nclauses; i++) {
        const dw_expr *hit = innermost(p->clauses[i].body, off, 0);
        if (hit) return hit;
    }
    return NULL;
}

void dw_lsp_policy_name(const dw_policy_set *ps, size_t i, char *buf, size_t cap)
{
    const dw_policy *p = &ps->policies[i];
    for (size_t k = 0; k < p->nannots; k++)
        if (p->annots[k].has_value && dw_str_is(p->annots[k].key, "id")) {
            snprintf(buf, cap, "%.*s", (int)p->annots[k].value.len, p->annots[k].value.s);
            return;
        }
    snprintf(buf, cap, "policy%zu", i);
}

/* ---- actions and types ---- */

static bool action_below(const dw_schema *sc, const dw_action_decl *a, const dw_euid_lit *group, unsigned depth)
{
    if (dw_str_eq(a->uid.type, group->type) && dw_str_eq(a->uid.id, group->id)) return true;
    if (depth > 32) return false;
    for (size_t i = 0; i < a->nparents; i++) {
        const dw_action_decl *p = dw_schema_action(sc, a->parents[i].type.s, a->parents[i].type.len, a->parents[i].id.s, a->parents[i].id.len);
        if (p && action_below(sc, p, group, depth + 1)) return true;
    }
    return false;
}

size_t dw_lsp_scope_actions(const dw_schema *sc, const dw_policy *p, const dw_action_decl **out, size_t cap)
{
    size_t n = 0;
    if (!sc) return 0;
    const dw_scope_con *a = &p->action;
    for (size_t i = 0; i < sc->nactions && n < cap; i++) {
        const dw_action_decl *d = &sc->actions[i];
        bool in = a->kind == DW_SC_ANY;
        if (a->kind == DW_SC_EQ) in = dw_str_eq(d->uid.type, a->target.type) && dw_str_eq(d->uid.id, a->target.id);
        if (a->kind == DW_SC_IN) in = action_below(sc, d, &a->target, 0);
        for (size_t k = 0; a->kind == DW_SC_IN_LIST && !in && k < a->nlist; k++) in = action_below(sc, d, &a->list[k], 0);
        if (in && d->has_applies_to) out[n++] = d;
    }
    return n;
}

const dw_type *dw_lsp_attr_type(const dw_schema *sc, const dw_type *t, const char *name, size_t len, bool *required)
{
    if (!t) return NULL;
    if (t->kind == DW_T_ENTITY) {
        const dw_entity_decl *e = dw_schema_entity(sc, t->name.s, t->name.len);
        t = e ? e->shape : NULL;
        if (!t) return NULL;
    }
    if (t->kind != DW_T_RECORD) return NULL;
    for (size_t i = 0; i < t->nattrs; i++)
        if (t->attrs[i].name.len == len && !memcmp(t->attrs[i].name.s, name, len)) {
            if (required) *required = t->attrs[i].required;
            return t->attrs[i].type;
        }
    return NULL;
}

static const dw_type T_BOOL = { .kind = DW_T_BOOL }, T_LONG = { .kind = DW_T_LONG }, T_STRING = { .kind = DW_T_STRING };

static const dw_type *entity_type(dw_arena *a, dw_str name)
{
    dw_type *t = dw_arena_alloc(a, sizeof *t);
    if (t) { t->kind = DW_T_ENTITY; t->name = name; }
    return t;
}

const dw_type *dw_lsp_type_of(const dw_schema *sc, const dw_action_decl *act, dw_arena *a, const dw_expr *e, unsigned depth)
{
    if (!e || depth > DW_MAX_EXPR_DEPTH) return NULL;
    switch (e->kind) {
    case DW_E_BOOL: case DW_E_NOT: case DW_E_AND: case DW_E_OR: case DW_E_EQ: case DW_E_NE: case DW_E_LT: case DW_E_LE:
    case DW_E_GT: case DW_E_GE: case DW_E_IN: case DW_E_HAS: case DW_E_HAS_PATH: case DW_E_LIKE: case DW_E_IS: case DW_E_TEMPORAL:
        return &T_BOOL;
    case DW_E_LONG: case DW_E_NEG: case DW_E_ADD: case DW_E_SUB: case DW_E_MUL: return &T_LONG;
    case DW_E_STRING: return &T_STRING;
    case DW_E_ENTITY: return entity_type(a, e->u.euid.type);
    case DW_E_VAR:
        if (!act) return NULL;
        if (e->u.var == DW_VAR_CONTEXT) return act->context;
        if (e->u.var == DW_VAR_ACTION) return entity_type(a, act->uid.type);
        if (e->u.var == DW_VAR_PRINCIPAL && act->nprincipals == 1) return entity_type(a, act->principals[0]);
        if (e->u.var == DW_VAR_RESOURCE && act->nresources == 1) return entity_type(a, act->resources[0]);
        return NULL;
    case DW_E_GETATTR: {
        const dw_type *o = dw_lsp_type_of(sc, act, a, e->u.attr.kids0, depth + 1);
        return dw_lsp_attr_type(sc, o, e->u.attr.attr.s, e->u.attr.attr.len, NULL);
    }
    case DW_E_IF: return dw_lsp_type_of(sc, act, a, e->u.kids[1], depth + 1);
    case DW_E_SET: {
        dw_type *t = dw_arena_alloc(a, sizeof *t);
        if (!t) return NULL;
        t->kind = DW_T_SET;
        t->elem = e->u.list.n ? (dw_type *)dw_lsp_type_of(sc, act, a, e->u.list.v[0], depth + 1) : NULL;
        return t->elem ? t : NULL;
    }
    case DW_E_METHOD: {
        static const char *const bools[] = { "contains", "containsAll", "containsAny", "isEmpty", "hasTag", "lessThan",
                                             "lessThanOrEqual", "greaterThan", "greaterThanOrEqual", "isIpv4", "isIpv6",
                                             "isLoopback", "isMulticast", "isInRange" };
        for (size_t i = 0; i < sizeof bools / sizeof *bools; i++)
            if (dw_str_is(e->u.call.name, bools[i])) return &T_BOOL;
        return NULL;
    }
    default: return NULL;
    }
}

char *dw_lsp_type_text(const dw_type *t)
{
    char *p = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&p, &n);
    if (!f) return NULL;
    dw_type_print(f, t);
    if (fclose(f)) { free(p); return NULL; }
    return p;
}
