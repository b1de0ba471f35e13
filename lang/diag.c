#include "diag.h"
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "../stdlib/utf8.h"

void dw_diags_init(dw_diags *d) { memset(d, 0, sizeof *d); }

void dw_diags_free(dw_diags *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].msg);
        free(d->v[i].hint);
        free(d->v[i].code);
    }
    free(d->v);
    memset(d, 0, sizeof *d);
}

void dw_diag_add(dw_diags *d, dw_severity sev, const dw_source *src, dw_loc loc,
                 const char *hint, const char *fmt, ...)
{
    if (sev == DW_SEV_ERROR) d->nerrors++;
    size_t limit = d->limit ? d->limit : 100;
    if (d->n >= limit) return;
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 8;
        dw_diag *v = realloc(d->v, cap * sizeof *v);
        if (!v) return;
        d->v = v;
        d->cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *msg = malloc(n > 0 ? (size_t)n + 1 : 1);
    if (!msg) return;
    va_start(ap, fmt);
    vsnprintf(msg, (size_t)n + 1, fmt, ap);
    va_end(ap);
    dw_diag *g = &d->v[d->n++];
    g->sev = sev;
    g->src = src;
    g->loc = loc;
    g->msg = msg;
    g->hint = hint ? strdup(hint) : NULL;
    g->code = NULL;
}

dw_loc dw_loc_from(const dw_source *src, dw_loc from, uint32_t off, uint32_t end)
{
    dw_loc l = { 1, 1, off, end };
    if (!src || !src->text) return l;
    if (off > src->len) off = (uint32_t)src->len;
    uint32_t i = 0;
    if (from.line && from.off <= off && from.off <= src->len) { l.line = from.line; l.col = from.col; i = from.off; }
    for (; i < off; i++) {
        unsigned char c = (unsigned char)src->text[i];
        if (c == '\n') { l.line++; l.col = 1; }
        else if (!dw_utf8_is_cont(c)) l.col++;
    }
    return l;
}

dw_loc dw_loc_at(const dw_source *src, uint32_t off, uint32_t end)
{
    return dw_loc_from(src, (dw_loc){ 0 }, off, end);
}

static bool lines_build(dw_lines *ln, const dw_source *src)
{
    dw_lines_free(ln);
    size_t n = 1;
    for (size_t i = 0; i < src->len; i++) n += src->text[i] == '\n';
    if (!(ln->start = malloc(n * sizeof *ln->start))) return false;
    ln->start[0] = 0;
    ln->n = 1;
    for (size_t i = 0; i < src->len; i++) if (src->text[i] == '\n') ln->start[ln->n++] = (uint32_t)(i + 1);
    ln->text = src->text;
    ln->len = src->len;
    return true;
}

dw_loc dw_lines_loc(dw_lines *ln, const dw_source *src, uint32_t off, uint32_t end)
{
    if (!src || !src->text || src->len > UINT32_MAX) return dw_loc_at(src, off, end);
    if ((ln->text != src->text || ln->len != src->len || !ln->start) && !lines_build(ln, src)) return dw_loc_at(src, off, end);
    uint32_t at = off > src->len ? (uint32_t)src->len : off;
    size_t lo = 0, hi = ln->n;   /* the last line starting at or before it */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (ln->start[mid] <= at) lo = mid;
        else hi = mid;
    }
    return dw_loc_from(src, (dw_loc){ (uint32_t)lo + 1, 1, ln->start[lo], 0 }, off, end);
}

void dw_lines_free(dw_lines *ln)
{
    free(ln->start);
    memset(ln, 0, sizeof *ln);
}

static const char *sev_name(dw_severity s)
{
    return s == DW_SEV_ERROR ? "error" : s == DW_SEV_WARNING ? "warning" : "note";
}

void dw_print_source_span(FILE *out, const dw_source *src, dw_loc loc)
{
    if (!src || !src->text || loc.off > src->len) return;
    /* the line containing loc.off */
    size_t s = loc.off, e = loc.off;
    while (s > 0 && src->text[s - 1] != '\n') s--;
    while (e < src->len && src->text[e] != '\n') e++;
    size_t ll = e - s;
    if (ll && src->text[s + ll - 1] == '\r') ll--;
    fprintf(out, "  %.*s\n  ", (int)ll, src->text + s);
    /* caret: replicate tabs so the caret lines up */
    for (size_t i = s; i < loc.off; i++) {
        unsigned char c = (unsigned char)src->text[i];
        if (dw_utf8_is_cont(c)) continue;
        fputc(c == '\t' ? '\t' : ' ', out);
    }
    fputc('^', out);
    size_t span_end = loc.end > loc.off ? loc.end : loc.off;
    if (span_end > s + ll) span_end = s + ll;
    for (size_t i = (size_t)loc.off + 1; i < span_end; i++) {
        unsigned char c = (unsigned char)src->text[i];
        if (!dw_utf8_is_cont(c)) fputc('~', out);
    }
    fputc('\n', out);
}

/* "error", or "error[rule-id]" for a diagnostic a lint rule gave (as `dwc check` prints it) */
static const char *sev_label(const dw_diag *g, char *buf, size_t cap)
{
    if (!g->code) return sev_name(g->sev);
    snprintf(buf, cap, "%s[%s]", sev_name(g->sev), g->code);
    return buf;
}

void dw_diag_print(const dw_diag *g, FILE *out)
{
    const dw_source *src = g->src;
    char lb[96];
    if (src && src->name)
        fprintf(out, "%s:%u:%u: %s: %s\n", src->name, g->loc.line, g->loc.col, sev_label(g, lb, sizeof lb), g->msg);
    else
        fprintf(out, "%s: %s\n", sev_label(g, lb, sizeof lb), g->msg);
    dw_print_source_span(out, src, g->loc);
    if (g->hint) fprintf(out, "  hint: %s\n", g->hint);
}

void dw_diag_format(const dw_diag *g, char *buf, size_t cap)
{
    if (!buf || !cap) return;
    const dw_source *src = g->src;
    char lb[96];
    int n = src && src->name
        ? snprintf(buf, cap, "%s:%u:%u: %s: %s", src->name, g->loc.line, g->loc.col, sev_label(g, lb, sizeof lb), g->msg)
        : snprintf(buf, cap, "%s: %s", sev_label(g, lb, sizeof lb), g->msg);
    if (g->hint && n >= 0 && (size_t)n < cap) snprintf(buf + n, cap - (size_t)n, " (hint: %s)", g->hint);
}

void dw_diags_print(const dw_diags *d, FILE *out)
{
    for (size_t i = 0; i < d->n; i++) dw_diag_print(&d->v[i], out);
    if (d->nerrors > d->n)
        fprintf(out, "(%zu further errors not shown)\n", d->nerrors - d->n);
}

int dw_read_file(const char *path, char **text, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) return -1;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf) { if (f != stdin) fclose(f); errno = ENOMEM; return -1; }
    for (;;) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) { free(buf); if (f != stdin) fclose(f); errno = ENOMEM; return -1; }
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0) break;
    }
    int err = ferror(f);
    if (f != stdin) fclose(f);
    if (err) { free(buf); errno = EIO; return -1; }
    buf[n] = 0;
    if (n >= 3 && (unsigned char)buf[0] == 0xEF && (unsigned char)buf[1] == 0xBB && (unsigned char)buf[2] == 0xBF) {
        memmove(buf, buf + 3, n - 2);
        n -= 3;
    }
    *text = buf;
    *len = n;
    return 0;
}

size_t dw_edit_distance(const char *a, size_t an, const char *b, size_t bn)
{
    enum { MAXL = 64 };
    if (an > MAXL || bn > MAXL) return (size_t)-1;
    size_t row[MAXL + 1];
    for (size_t j = 0; j <= bn; j++) row[j] = j;
    for (size_t i = 1; i <= an; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= bn; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[bn];
}

bool dw_hint_closer(const char *want, size_t wlen, const char *cand, size_t clen, size_t *best)
{
    size_t d = dw_edit_distance(want, wlen, cand, clen);
    size_t lim = wlen <= 2 ? 1 : wlen / 3 > 2 ? wlen / 3 : 2;
    if (d == 0 || d > lim || d >= *best) return false;
    *best = d;
    return true;
}
