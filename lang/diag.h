/* diag.h - source locations and diagnostics shared by every front-end
 * parser (policies, schemas, JSON, traces).
 * Format:  file:line:col: error: message
 *            <source line>
 *            <spaces>^~~~
 *          hint: ...                                                    */
#ifndef DW_DIAG_H
#define DW_DIAG_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct dw_loc {
    uint32_t line, col;     /* 1-based; col counts Unicode scalar values */
    uint32_t off, end;      /* byte offsets [off, end) into the source */
} dw_loc;

typedef struct dw_source {
    const char *name;       /* file name as given by the user ("-" = stdin) */
    const char *text;       /* whole text, BOM already stripped */
    size_t len;
} dw_source;

typedef enum { DW_SEV_ERROR, DW_SEV_WARNING, DW_SEV_NOTE } dw_severity;

typedef struct dw_diag {
    dw_severity sev;
    const dw_source *src;   /* may be NULL for diagnostics without a source */
    dw_loc loc;
    char *msg;              /* heap */
    char *hint;             /* heap, may be NULL */
    char *code;             /* stable rule id, heap, may be NULL: printed "error[code]" */
} dw_diag;

typedef struct dw_diags {
    dw_diag *v;
    size_t n, cap;
    size_t nerrors;
    size_t limit;           /* stop recording after this many (0 = 100) */
} dw_diags;

void dw_diags_init(dw_diags *d);
void dw_diags_free(dw_diags *d);
void dw_diag_add(dw_diags *d, dw_severity sev, const dw_source *src, dw_loc loc,
                 const char *hint, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
#define dw_error(d, src, loc, ...) dw_diag_add((d), DW_SEV_ERROR, (src), (loc), NULL, __VA_ARGS__)
#define dw_error_hint(d, src, loc, hint, ...) dw_diag_add((d), DW_SEV_ERROR, (src), (loc), (hint), __VA_ARGS__)
/* Render every diagnostic, in order, in the format above. */
void dw_diags_print(const dw_diags *d, FILE *out);
void dw_diag_print(const dw_diag *g, FILE *out);
/* One diagnostic on one line, "file:line:col: error: message (hint: ...)",
 * into buf (truncated, NUL-terminated): the text library callers get back
 * instead of stderr. */
void dw_diag_format(const dw_diag *g, char *buf, size_t cap);
/* The source line containing loc, and a caret span under it (every diagnostic
 * printer uses it, so carets line up the same everywhere). */
void dw_print_source_span(FILE *out, const dw_source *src, dw_loc loc);

/* Compute line/col for a byte offset (used by parsers that track only offsets). */
dw_loc dw_loc_at(const dw_source *src, uint32_t off, uint32_t end);
/* The same, scanning on from a location `from` computed earlier in the same text (its line, col
 * and off; a zero line, or an off past the target, scans from the start): callers that walk a
 * text in order (the compiler's policy lines) stay linear instead of rescanning from byte 0. */
dw_loc dw_loc_from(const dw_source *src, dw_loc from, uint32_t off, uint32_t end);
/* The line starts of one text, for callers that locate many offsets in no
 * particular order (dwc check's findings): each lookup is a binary search
 * and a scan of one line, not of the text from byte 0. */
typedef struct dw_lines { const char *text; size_t len; uint32_t *start; size_t n; } dw_lines;
/* dw_loc_at(src, off, end), through *lines (built for src's text when it is
 * not; without memory for it, dw_loc_at itself). */
dw_loc dw_lines_loc(dw_lines *lines, const dw_source *src, uint32_t off, uint32_t end);
void dw_lines_free(dw_lines *lines);

/* Levenshtein distance for "did you mean" hints; SIZE_MAX when either string
 * is longer than 64 bytes (no hint is worth that much work). */
size_t dw_edit_distance(const char *a, size_t an, const char *b, size_t bn);
/* Is cand a closer "did you mean" for want than *best (start at SIZE_MAX)?
 * Close: within a third of want's length (1 for up to 2 bytes, else at
 * least 2); an exact match is no hint.  Updates *best when it is. */
bool dw_hint_closer(const char *want, size_t wlen, const char *cand, size_t clen, size_t *best);

/* Read a whole file ("-" = stdin) into a NUL-terminated heap buffer and strip
 * a leading UTF-8 BOM.  Returns 0, or -1 with errno set. */
int dw_read_file(const char *path, char **text, size_t *len);

#endif
