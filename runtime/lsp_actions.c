/* lsp_actions.c - textDocument/codeAction: quick fixes for the fixes the
 * diagnostics already name in their hints.  "did you mean `X`?" replaces
 * the name the message quotes with X; "test it first: `G && ...`" (an
 * optional attribute read without `has`) puts the guard in front of the
 * comparison that reads it; `write "~/..."` (Box's home spelling, paths
 * without a trailing /) replaces the literal.  The findings are the
 * document's current ones (re-checked first when an edit is pending). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lsp_types.h"

typedef struct edit { size_t off, end; char *text; } edit;

static void w_action(dw_jw *w, dw_lsp *s, dw_lsp_doc *d, bool *first, const dw_finding *g, const char *title,
                     const edit *ed, size_t ned, bool preferred)
{
    dw_jw_raw(w, *first ? "{\"title\":" : ",{\"title\":");
    *first = false;
    dw_jw_strz(w, title);
    dw_jw_printf(w, ",\"kind\":\"quickfix\",\"isPreferred\":%s,\"diagnostics\":[", preferred ? "true" : "false");
    bool f2 = true;
    dw_lsp_w_diag(w, s, d, &f2, g->loc.off, g->loc.end, dw_lsp_sev(g->sev), g->rule, g->msg, g->hint);
    dw_jw_raw(w, "],\"edit\":{\"changes\":{");
    dw_jw_strz(w, d->uri);
    dw_jw_raw(w, ":[");
    for (size_t i = 0; i < ned; i++) {
        dw_jw_raw(w, i ? ",{\"range\":" : "{\"range\":");
        dw_lsp_w_range(w, s, d, ed[i].off, ed[i].end);
        dw_jw_raw(w, ",\"newText\":");
        dw_jw_strz(w, ed[i].text);
        dw_jw_raw(w, "}");
    }
    dw_jw_raw(w, "]}}}");
}

/* The first `...` quoted in s at or after *from: its bytes, *from moved past it. */
static bool backticked(const char *s, const char **from, dw_str *out)
{
    const char *a = strchr(*from, '`');
    const char *b = a ? strchr(a + 1, '`') : NULL;
    if (!b) return false;
    *out = (dw_str){ a + 1, (size_t)(b - a - 1) };
    *from = b + 1;
    return true;
}

/* "did you mean `X`?": the wrong name is the message's quoted name that the
 * diagnostic's text is, or ends with, or holds. */
static void fix_did_you_mean(dw_jw *w, dw_lsp *s, dw_lsp_doc *d, bool *first, const dw_finding *g)
{
    const char *h = strstr(g->hint, "did you mean `");
    if (!h) return;
    const char *from = h;
    dw_str want;
    if (!backticked(h, &from, &want) || !want.len) return;
    const char *r = d->text + g->loc.off;
    size_t rn = g->loc.end - g->loc.off;
    const char *m = g->msg;
    dw_str bad;
    while (backticked(g->msg, &m, &bad)) {
        if (!bad.len || bad.len > rn) continue;
        size_t at;
        if (bad.len == rn && !memcmp(r, bad.s, rn)) at = 0;
        else if (!memcmp(r + rn - bad.len, bad.s, bad.len)) at = rn - bad.len;
        else {
            const char *hit = memmem(r, rn, bad.s, bad.len);
            if (!hit) continue;
            at = (size_t)(hit - r);
        }
        edit e = { g->loc.off + at, g->loc.off + at + bad.len, strndup(want.s, want.len) };
        if (!e.text) { w->oom = true; return; }
        char title[300];
        snprintf(title, sizeof title, "Change to `%.*s`", (int)(want.len > 200 ? 200 : want.len), want.s);
        w_action(w, s, d, first, g, title, &e, 1, true);
        free(e.text);
        return;
    }
}

/* `write "A"` or `write "A" (...) or "B" (...)`: each literal replaces the
 * diagnostic's string literal. */
static void fix_write_literal(dw_jw *w, dw_lsp *s, dw_lsp_doc *d, bool *first, const dw_finding *g)
{
    if (strncmp(g->hint, "write \"", 7)) return;
    size_t rn = g->loc.end - g->loc.off;
    const char *r = d->text + g->loc.off;
    if (rn < 2 || r[0] != '"' || r[rn - 1] != '"') return;
    for (const char *p = g->hint + 6; (p = strchr(p, '"'));) {
        const char *q = p + 1;
        while (*q && *q != '"') q += *q == '\\' && q[1] ? 2 : 1;
        if (!*q) return;
        edit e = { g->loc.off, g->loc.end, strndup(p, (size_t)(q - p + 1)) };
        if (!e.text) { w->oom = true; return; }
        char title[300];
        snprintf(title, sizeof title, "Write %s", e.text);
        w_action(w, s, d, first, g, title, &e, 1, p == g->hint + 6);
        free(e.text);
        p = q + 1;
    }
}

static bool is_test(const dw_expr *e)
{
    switch (e->kind) {
    case DW_E_EQ: case DW_E_NE: case DW_E_LT: case DW_E_LE: case DW_E_GT: case DW_E_GE: case DW_E_IN:
    case DW_E_LIKE: case DW_E_IS: case DW_E_METHOD: return true;
    default: return false;
    }
}

/* The deepest comparison (or test) holding [off, end), under e. */
static const dw_expr *test_around(const dw_expr *e, size_t off, size_t end, unsigned depth)
{
    if (!e || e->loc.off > off || e->loc.end < end || depth > DW_MAX_EXPR_DEPTH + 8) return NULL;
    const dw_expr *k;
    for (size_t i = 0; (k = dw_expr_kid_c(e, i)); i++) {
        const dw_expr *hit = test_around(k, off, end, depth + 1);
        if (hit) return hit;
    }
    return is_test(e) ? e : NULL;
}

/* "test it first: `G && ...`": `(G && <the comparison>)`. */
static void fix_guard(dw_jw *w, dw_lsp *s, dw_lsp_doc *d, bool *first, const dw_finding *g)
{
    const char *h = strstr(g->hint, "test it first: `");
    const char *from = h;
    dw_str code;
    if (!h || !backticked(h, &from, &code) || code.len < 8 || memcmp(code.s + code.len - 7, " && ...", 7)) return;
    const dw_policy_set *ps = dw_lsp_doc_policies(d);
    long pi = dw_lsp_policy_at(ps, g->loc.off);
    if (pi < 0) return;
    const dw_policy *p = &ps->policies[pi];
    const dw_expr *t = NULL;
    for (size_t i = 0; i < p->nclauses && !t; i++) t = test_around(p->clauses[i].body, g->loc.off, g->loc.end, 0);
    if (!t) return;
    char *open = NULL;
    if (asprintf(&open, "(%.*s && ", (int)(code.len - 7), code.s) < 0) { w->oom = true; return; }
    edit e[2] = { { t->loc.off, t->loc.off, open }, { t->loc.end, t->loc.end, ")" } };
    char title[300];
    snprintf(title, sizeof title, "Guard with `%.*s`", (int)(code.len - 7 > 200 ? 200 : code.len - 7), code.s);
    w_action(w, s, d, first, g, title, e, 2, true);
    free(open);
}

int dw_lsp_code_action(dw_lsp *s, const dw_json *params, dw_jw *w, char *err, size_t errcap)
{
    dw_lsp_doc *d = dw_lsp_doc_of(s, params, err, errcap);
    if (!d) return DW_RPC_INVALID_PARAMS;
    const dw_json *range = dw_json_get(params, "range");
    size_t ro, re;
    if (!range || !dw_lsp_range_offsets(s, d, range, &ro, &re)) { snprintf(err, errcap, "params.range is missing or malformed"); return DW_RPC_INVALID_PARAMS; }
    /* fixes are offsets into the text as it is now */
    if (d->kind == DW_DOC_POLICY && (d->due || !d->have_findings || d->findings_version != d->version)) dw_lsp_publish(s, d);
    bool first = true;
    dw_jw_raw(w, "[");
    for (size_t i = 0; d->kind == DW_DOC_POLICY && i < d->findings.n; i++) {
        const dw_finding *g = &d->findings.v[i];
        if (g->src || !g->hint || g->loc.end > d->len || g->loc.end < g->loc.off || g->loc.end < ro || g->loc.off > re) continue;
        fix_did_you_mean(w, s, d, &first, g);
        fix_write_literal(w, s, d, &first, g);
        fix_guard(w, s, d, &first, g);
    }
    dw_jw_raw(w, "]");
    return 0;
}
