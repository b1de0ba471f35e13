/* fmt_doc.h - the formatter's documents: a Wadler-style pretty-printing
 * algebra (text, breakable lines, nesting, groups) and the renderer that lays
 * a document out in a line width.  The layout rules are those of the Rust
 * `pretty` crate (0.12) that Cedar's formatter renders with, so `dwc format`
 * can match Cedar's output byte for byte: a group is flat when it and the
 * rest of the current line fit; text width counts Unicode scalar values (as
 * Cedar's does, whatever their display width); a hard line always breaks and
 * keeps its group from being flat. */
#ifndef DW_FMT_DOC_H
#define DW_FMT_DOC_H
#include <setjmp.h>
#include <stddef.h>
#include "../stdlib/arena.h"

typedef enum fmt_doc_kind {
    FMT_NIL, FMT_TEXT, FMT_HARD, FMT_ALT, FMT_NEST, FMT_GROUP, FMT_CAT,
} fmt_doc_kind;

/* ALT: a when its group is broken, b when flat (a `line` is ALT(HARD, " ")). */
typedef struct fmt_doc {
    fmt_doc_kind kind;
    int nest;                       /* NEST: indentation added to a's lines */
    const char *s; size_t len;      /* TEXT */
    size_t width;                   /* TEXT: characters */
    const struct fmt_doc *a, *b;
} fmt_doc;

/* Every document lives in the arena; allocation failure longjmps to *oom. */
typedef struct fmt_docs { dw_arena *A; jmp_buf *oom; } fmt_docs;

extern const fmt_doc fmt_nil_doc;
const fmt_doc *fmt_text(fmt_docs *d, const char *s, size_t len);
const fmt_doc *fmt_textz(fmt_docs *d, const char *s);   /* a static C string */
const fmt_doc *fmt_space(void);     /* " " */
const fmt_doc *fmt_hardline(void);  /* always a newline */
const fmt_doc *fmt_line(void);      /* newline, or " " when flat */
const fmt_doc *fmt_line_(void);     /* newline, or nothing when flat */
const fmt_doc *fmt_cat(fmt_docs *d, const fmt_doc *a, const fmt_doc *b);
const fmt_doc *fmt_nest(fmt_docs *d, int by, const fmt_doc *a);
const fmt_doc *fmt_group(fmt_docs *d, const fmt_doc *a);

/* Lay doc out in `width` columns, appending to out.  0, or -1 on OOM. */
int fmt_render(const fmt_doc *doc, size_t width, dw_buf *out);

#endif
