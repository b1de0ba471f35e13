/* lsp_docs.c - the open documents: their text under incremental sync
 * (TextDocumentSyncKind.Incremental: each change replaces a range), the
 * conversion between protocol positions (line, UTF-16 code unit, or UTF-8
 * byte when the client chose utf-8) and byte offsets, file uris, and the
 * parsed policy set the features share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lsp_int.h"
#include "../stdlib/utf8.h"

/* ---- uris ---- */

static int hexdig(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

char *dw_lsp_uri_path(const char *uri, size_t n)
{
    static const char scheme[] = "file://";
    if (n < sizeof scheme - 1 || strncasecmp(uri, scheme, sizeof scheme - 1)) return NULL;
    const char *p = uri + sizeof scheme - 1, *e = uri + n;
    /* an empty authority or localhost; the path starts at the next slash */
    if (e - p >= 9 && !strncasecmp(p, "localhost", 9)) p += 9;
    if (p == e || *p != '/') return NULL;
    char *out = malloc((size_t)(e - p) + 1), *o = out;
    if (!out) return NULL;
    for (; p < e; p++) {
        if (*p == '?' || *p == '#') { free(out); return NULL; }   /* a query or fragment: not a plain file */
        if (*p == '%' && e - p >= 3 && hexdig(p[1]) >= 0 && hexdig(p[2]) >= 0) {
            *o++ = (char)(hexdig(p[1]) * 16 + hexdig(p[2]));
            p += 2;
        } else *o++ = *p;
        if (o[-1] == 0) { free(out); return NULL; }
    }
    *o = 0;
    return out;
}

void dw_jw_uri(dw_jw *w, const char *path)
{
    dw_jw_raw(w, "\"file://");
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        unsigned char c = *p;
        bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || strchr("-._~/", c);
        if (keep) dw_jw_rawn(w, (const char *)p, 1);
        else { char e[3] = { '%', hex[c >> 4], hex[c & 15] }; dw_jw_rawn(w, e, 3); }
    }
    dw_jw_raw(w, "\"");
}

/* ---- the store ---- */

static bool ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && strncasecmp(s + n - k, suffix, k) == 0;
}

static void doc_invalidate(dw_lsp_doc *d)
{
    free(d->lines);
    d->lines = NULL;
    d->nlines = 0;
    if (d->ps) dw_policy_set_free(d->ps);
    d->ps = NULL;
    d->src = (dw_source){ d->path ? d->path : d->uri, d->text, d->len };
}

static void doc_free(dw_lsp_doc *d)
{
    doc_invalidate(d);
    dw_findings_free(&d->findings);
    free(d->uri);
    free(d->path);
    free(d->text);
    free(d);
}

void dw_lsp_docs_free(dw_lsp *s)
{
    for (size_t i = 0; i < s->ndocs; i++) doc_free(s->docs[i]);
    free(s->docs);
    s->docs = NULL;
    s->ndocs = s->capdocs = 0;
}

dw_lsp_doc *dw_lsp_doc_find(dw_lsp *s, const char *uri, size_t n)
{
    for (size_t i = 0; i < s->ndocs; i++)
        if (strlen(s->docs[i]->uri) == n && memcmp(s->docs[i]->uri, uri, n) == 0) return s->docs[i];
    return NULL;
}

dw_lsp_doc *dw_lsp_doc_of(dw_lsp *s, const dw_json *params, char *err, size_t errcap)
{
    const dw_json *td = params ? dw_json_get(params, "textDocument") : NULL;
    dw_str uri;
    if (!dw_lsp_get_str(td, "uri", &uri)) { snprintf(err, errcap, "params.textDocument.uri is missing"); return NULL; }
    dw_lsp_doc *d = dw_lsp_doc_find(s, uri.s, uri.len);
    if (!d) snprintf(err, errcap, "the document is not open (send textDocument/didOpen first)");
    return d;
}

/* Replace bytes [off, end) with ins[0..n).  -1 on OOM, -2 when the text
 * would outgrow DW_LSP_MAX_TEXT (the text unchanged either way). */
static int doc_splice(dw_lsp_doc *d, size_t off, size_t end, const char *ins, size_t n)
{
    size_t nl = d->len - (end - off) + n;
    if (nl > DW_LSP_MAX_TEXT) return -2;
    if (nl + 1 > d->cap) {
        size_t cap = d->cap ? d->cap : 256;
        while (cap < nl + 1) cap *= 2;
        char *t = realloc(d->text, cap);
        if (!t) return -1;
        d->text = t;
        d->cap = cap;
    }
    memmove(d->text + off + n, d->text + end, d->len - end);
    memcpy(d->text + off, ins, n);
    d->len = nl;
    d->text[nl] = 0;
    doc_invalidate(d);
    return 0;
}

/* Forget d, its diagnostics cleared in the editor. */
static void doc_close(dw_lsp *s, dw_lsp_doc *d)
{
    for (size_t i = 0; i < s->ndocs; i++)
        if (s->docs[i] == d) {
            dw_lsp_publish_empty(s, d->uri);
            doc_free(d);
            s->docs[i] = s->docs[--s->ndocs];
            return;
        }
}

/* A document the server cannot follow any more is closed on its side, loudly. */
static void doc_drop(dw_lsp *s, dw_lsp_doc *d, int why)
{
    if (why == -1) { dw_lsp_fail(s); return; }
    dw_lsp_show(s, 1, "dwc lsp: a document grew over 256 MiB; it is closed on the server and gets no more diagnostics");
    doc_close(s, d);
}

void dw_lsp_did_open(dw_lsp *s, const dw_json *params)
{
    const dw_json *td = dw_json_get(params, "textDocument");
    dw_str uri, text, lang = { "", 0 };
    int64_t version = 0;
    if (!dw_lsp_get_str(td, "uri", &uri) || !dw_lsp_get_str(td, "text", &text)) return;
    dw_lsp_get_str(td, "languageId", &lang);
    dw_lsp_get_int(td, "version", &version);
    dw_lsp_doc *d = dw_lsp_doc_find(s, uri.s, uri.len);
    if (!d) {
        if (s->ndocs >= DW_LSP_MAX_DOCS) { dw_lsp_show(s, 1, "dwc lsp: too many open documents; this one gets no diagnostics"); return; }
        if (s->ndocs == s->capdocs) {
            size_t cap = s->capdocs ? s->capdocs * 2 : 8;
            dw_lsp_doc **v = realloc(s->docs, cap * sizeof *v);
            if (!v) { dw_lsp_fail(s); return; }
            s->docs = v;
            s->capdocs = cap;
        }
        d = calloc(1, sizeof *d);
        if (!d || !(d->uri = strndup(uri.s, uri.len))) { free(d); dw_lsp_fail(s); return; }
        d->path = dw_lsp_uri_path(uri.s, uri.len);
        s->docs[s->ndocs++] = d;
    }
    const char *name = d->path ? d->path : d->uri;
    size_t nn = strlen(name);
    /* a JSON document sent to this server is a Cedar schema in its JSON syntax */
    if (ends_with(name, nn, ".cedarschema") || ends_with(name, nn, ".json") || dw_str_is(lang, "cedarschema") || dw_str_is(lang, "json"))
        d->kind = DW_DOC_SCHEMA;
    else if (ends_with(name, nn, ".dwschema") || dw_str_is(lang, "dwschema")) d->kind = DW_DOC_EVENTS;
    else d->kind = DW_DOC_POLICY;
    d->version = version;
    int rc = doc_splice(d, 0, d->len, text.s, text.len);
    if (rc) { doc_drop(s, d, rc); return; }
    dw_lsp_schedule(s, d, true);
}

void dw_lsp_did_change(dw_lsp *s, const dw_json *params)
{
    const dw_json *td = dw_json_get(params, "textDocument");
    dw_str uri;
    if (!dw_lsp_get_str(td, "uri", &uri)) return;
    dw_lsp_doc *d = dw_lsp_doc_find(s, uri.s, uri.len);
    const dw_json *ch = dw_json_get(params, "contentChanges");
    if (!d || !ch || ch->kind != DW_JSON_ARRAY) return;
    dw_lsp_get_int(td, "version", &d->version);
    for (size_t i = 0; i < ch->u.arr.n; i++) {
        const dw_json *c = ch->u.arr.v[i];
        dw_str text;
        if (!dw_lsp_get_str(c, "text", &text)) continue;
        const dw_json *r = dw_json_get(c, "range");
        size_t off = 0, end = d->len;
        if (r && !dw_lsp_range_offsets(s, d, r, &off, &end)) continue;
        int rc = doc_splice(d, off, end, text.s, text.len);
        if (rc) { doc_drop(s, d, rc); return; }
    }
    dw_lsp_schedule(s, d, false);
}

void dw_lsp_did_close(dw_lsp *s, const dw_json *params)
{
    const dw_json *td = dw_json_get(params, "textDocument");
    dw_str uri;
    dw_lsp_doc *d = dw_lsp_get_str(td, "uri", &uri) ? dw_lsp_doc_find(s, uri.s, uri.len) : NULL;
    if (d) doc_close(s, d);
}

/* ---- positions ---- */

static bool doc_lines(dw_lsp_doc *d)
{
    if (d->lines) return true;
    size_t n = 1;
    for (size_t i = 0; i < d->len; i++) n += d->text[i] == '\n';
    d->lines = malloc(n * sizeof *d->lines);
    if (!d->lines) return false;
    d->nlines = 0;
    d->lines[d->nlines++] = 0;
    for (size_t i = 0; i < d->len; i++)
        if (d->text[i] == '\n') d->lines[d->nlines++] = (uint32_t)(i + 1);
    return true;
}

/* The UTF-8 sequence at t[i] (i < n): its length in bytes and in UTF-16
 * units.  A byte that starts no valid sequence counts as one of each. */
static size_t char_at(const char *t, size_t i, size_t n, uint32_t *units)
{
    size_t k = dw_utf8_len((const unsigned char *)t + i, n - i);
    if (!k) k = 1;
    *units = k == 4 ? 2 : 1;
    return k;
}

/* The protocol's character count of bytes [from, to) of one line. */
static uint32_t units_between(bool utf8, const char *text, size_t len, size_t from, size_t to)
{
    uint32_t ch = 0;
    for (size_t i = from; i < to;) {
        uint32_t units;
        size_t k = char_at(text, i, len, &units);
        if (i + k > to) break;
        ch += utf8 ? (uint32_t)k : units;
        i += k;
    }
    return ch;
}

void dw_lsp_text_range(dw_jw *w, const dw_lsp *s, const char *text, size_t len, size_t off, size_t end)
{
    uint32_t l[2] = { 0, 0 }, c[2];
    size_t at[2] = { off < len ? off : len, end < len ? end : len }, start = 0;
    if (at[1] < at[0]) at[1] = at[0];
    for (int k = 0; k < 2; k++) {
        if (k) l[1] = l[0];
        for (size_t i = k ? at[0] : 0; i < at[k]; i++)
            if (text[i] == '\n') { l[k]++; start = i + 1; }
        c[k] = units_between(s->utf8, text, len, start, at[k]);
    }
    dw_jw_printf(w, "{\"start\":{\"line\":%u,\"character\":%u},\"end\":{\"line\":%u,\"character\":%u}}", l[0], c[0], l[1], c[1]);
}

size_t dw_lsp_offset(dw_lsp *s, dw_lsp_doc *d, uint32_t line, uint32_t character)
{
    if (!doc_lines(d)) { dw_lsp_fail(s); return 0; }
    if (line >= d->nlines) return d->len;
    size_t i = d->lines[line], n = d->len;
    uint32_t left = character;
    while (i < n && d->text[i] != '\n' && left) {
        uint32_t units;
        size_t k = char_at(d->text, i, n, &units);
        if (s->utf8) units = (uint32_t)k;
        if (units > left) break;           /* inside a character: its start */
        left -= units;
        i += k;
    }
    return i;
}

void dw_lsp_position(dw_lsp *s, dw_lsp_doc *d, size_t off, uint32_t *line, uint32_t *character)
{
    *line = *character = 0;
    if (!doc_lines(d)) { dw_lsp_fail(s); return; }
    if (off > d->len) off = d->len;
    size_t lo = 0, hi = d->nlines;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (d->lines[mid] <= off) lo = mid;
        else hi = mid;
    }
    uint32_t ch = units_between(s->utf8, d->text, d->len, d->lines[lo], off);
    *line = (uint32_t)lo;
    *character = ch;
}

/* A Position object as a byte offset. */
static bool pos_offset(dw_lsp *s, dw_lsp_doc *d, const dw_json *p, size_t *off)
{
    int64_t l, c;
    if (!dw_lsp_get_int(p, "line", &l) || !dw_lsp_get_int(p, "character", &c) || l < 0 || c < 0) return false;
    *off = dw_lsp_offset(s, d, l > UINT32_MAX ? UINT32_MAX : (uint32_t)l, c > UINT32_MAX ? UINT32_MAX : (uint32_t)c);
    return true;
}

bool dw_lsp_params_offset(dw_lsp *s, dw_lsp_doc *d, const dw_json *params, size_t *off)
{
    return pos_offset(s, d, dw_json_get(params, "position"), off);
}

dw_lsp_doc *dw_lsp_doc_at(dw_lsp *s, const dw_json *params, size_t *off, char *err, size_t errcap)
{
    dw_lsp_doc *d = dw_lsp_doc_of(s, params, err, errcap);
    if (d && !dw_lsp_params_offset(s, d, params, off)) {
        snprintf(err, errcap, "params.position is missing or malformed");
        return NULL;
    }
    return d;
}

bool dw_lsp_range_offsets(dw_lsp *s, dw_lsp_doc *d, const dw_json *range, size_t *off, size_t *end)
{
    if (range->kind != DW_JSON_OBJECT || !pos_offset(s, d, dw_json_get(range, "start"), off) ||
        !pos_offset(s, d, dw_json_get(range, "end"), end))
        return false;
    if (*end < *off) *end = *off;
    return true;
}

void dw_lsp_w_range(dw_jw *w, dw_lsp *s, dw_lsp_doc *d, size_t off, size_t end)
{
    uint32_t l0, c0, l1, c1;
    if (end < off) end = off;
    dw_lsp_position(s, d, off, &l0, &c0);
    dw_lsp_position(s, d, end, &l1, &c1);
    dw_jw_printf(w, "{\"start\":{\"line\":%u,\"character\":%u},\"end\":{\"line\":%u,\"character\":%u}}", l0, c0, l1, c1);
}

const dw_policy_set *dw_lsp_doc_policies(dw_lsp_doc *d)
{
    if (d->kind != DW_DOC_POLICY) return NULL;
    if (d->ps) return d->ps;
    dw_diags g;
    dw_diags_init(&g);
    d->ps = dw_parse_policy_set(&d->src, &g);
    dw_diags_free(&g);
    return d->ps;
}
