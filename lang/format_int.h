/* format_int.h - what format.c (Cedar's layout rules) and format_dw.c
 * (Dogwood's items, the text passes) share. */
#ifndef DW_FORMAT_INT_H
#define DW_FORMAT_INT_H
#include <setjmp.h>
#include "fmt_cst.h"
#include "fmt_doc.h"
#include "format.h"

typedef struct fmt_ctx {
    fmt_docs d;
    fmt_cst *c;
    int ind;                 /* indent width */
    jmp_buf fail;            /* a construct the layout cannot take */
    char err[160];
    uint32_t err_off;
} fmt_ctx;

/* A token's comments as taken (consumed) from the side table. */
typedef struct fmt_cmt { const fmt_span *lead; uint32_t nlead; fmt_span trail; } fmt_cmt;

fmt_cmt fmt_take(fmt_ctx *f, uint32_t tok);          /* leading and trailing */
const fmt_doc *fmt_tok_text(fmt_ctx *f, uint32_t tok);
/* Cedar's add_comment: leading lines, d, then the trailing comment (and a
 * hard line) or else `next`. */
const fmt_doc *fmt_add_comment(fmt_ctx *f, const fmt_doc *d, fmt_cmt c, const fmt_doc *next);
/* The token's text with its comments (taken now). */
const fmt_doc *fmt_tok_doc(fmt_ctx *f, uint32_t tok);
const fmt_doc *fmt_expr_doc(fmt_ctx *f, const fmt_node *x);
_Noreturn void fmt_fail(fmt_ctx *f, uint32_t tok, const char *msg);

/* format_dw.c */
const fmt_doc *fmt_temporal_doc(fmt_ctx *f, uint32_t tok);
const fmt_doc *fmt_macro_doc(fmt_ctx *f, const fmt_node *x);
/* Cedar's remove_empty_lines: drop blank lines outside string literals and
 * comments, then trim the whole text.  Appends to out; -1 on OOM. */
int fmt_remove_empty_lines(const char *s, size_t n, dw_buf *out);

#endif
