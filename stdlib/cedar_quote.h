/* cedar_quote.h - the one writer of Cedar string-literal text: what
 * lang/strlit.c's decoder reads back.  `"` and `\` get a backslash, \n \r
 * \t \0 their short forms, other bytes below 0x20 and 0x7f \u{x}; all else
 * (UTF-8 included) as it is.  (runtime/est_read.c prints Rust's
 * escape_debug instead, Cedar's own output, and lang/fmt_*.c keeps the
 * source's token text: neither is a copy of this.) */
#ifndef DW_CEDAR_QUOTE_H
#define DW_CEDAR_QUOTE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "arena.h"
#include "json_escape.h"

/* The most bytes one input byte escapes to (\u{7f}). */
#define DW_CEDAR_ESCAPE_MAX 6

/* Write the body of s[0..n) (no quotes); under like, a `*` as \* (a literal
 * star in a like-pattern).  Returns 0, or -1 if the sink failed. */
int dw_cedar_escape(dw_json_sink put, void *ctx, const char *s, size_t n, bool like);
/* The body into out (room for DW_CEDAR_ESCAPE_MAX * n bytes); its length. */
size_t dw_cedar_escape_mem(char *out, const char *s, size_t n);
/* s as a quoted literal, "...". */
int dw_cedar_quote_buf(dw_buf *b, const char *s, size_t n);
int dw_cedar_quote_file(FILE *f, const char *s, size_t n);

#endif
