/* strlit.h - decoding of string literals and `like` patterns (dogwood.md §2.5).
 * The lexer hands over the raw text between the quotes; decoding happens
 * here so the same rules serve the core parser, temporal bodies and traces. */
#ifndef DW_STRLIT_H
#define DW_STRLIT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "ast.h"

/* Where and why decoding failed: [off, off+len) is relative to `raw`. */
typedef struct dw_strlit_err {
    const char *msg;    /* static text, may contain one %.*s for the escape */
    const char *hint;   /* static, may be NULL */
    size_t off, len;
} dw_strlit_err;

/* Decode Cedar escapes (\n \r \t \\ \0 \' \" \xHH<=7F \u{H..}) of the raw
 * text between the quotes into an arena copy (NUL terminated, may contain
 * NULs).  Also rejects invalid UTF-8.  Returns false and fills *err. */
bool dw_strlit_decode(dw_arena *a, const char *raw, size_t n, dw_str *out, dw_strlit_err *err);

/* Same escapes plus \* (a literal star); an unescaped `*` (or one produced by
 * \x2a / \u{2a}) is a wildcard and splits the segments. */
bool dw_like_decode(dw_arena *a, const char *raw, size_t n, dw_like_pattern *out, dw_strlit_err *err);

/* Print s as a double-quoted literal that dw_strlit_decode reads back. */
void dw_str_print_quoted(FILE *out, const char *s, size_t n);
/* Print a pattern as a quoted like-literal: wildcards as *, literal stars as \*. */
void dw_like_print(FILE *out, const dw_like_pattern *p);

#endif
