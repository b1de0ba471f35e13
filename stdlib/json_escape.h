/* json_escape.h - the one JSON string writer: every byte class escaped the
 * same way for every caller (reports, the dwd protocol and decision log,
 * links files, counterexamples).  Takes a length, so NUL is \u0000, never
 * the end.  `"` and `\` get a backslash, \n \r \t their short forms, other
 * bytes below 0x20 and 0x7f \u00xx; UTF-8 is checked with stdlib/utf8.h. */
#ifndef DW_JSON_ESCAPE_H
#define DW_JSON_ESCAPE_H
#include <stddef.h>
#include <stdio.h>
#include "arena.h"

/* What to do with bytes that are not UTF-8: a report or a log line stays
 * parseable with U+FFFD in their place; a caller whose text is read back
 * (a links file, a counterexample the VM confirms) needs it exact and
 * gets a refusal instead. */
/* DW_JSON_SERDE is DW_JSON_EXACT in serde_json's spelling, for output a
 * Cedar tool compares byte for byte: \b and \f short too, 0x7f as it is. */
typedef enum { DW_JSON_REPLACE, DW_JSON_EXACT, DW_JSON_SERDE } dw_json_utf8;

/* Sink for the escaped text: returns 0, or nonzero to stop. */
typedef int (*dw_json_sink)(void *ctx, const char *p, size_t n);

/* Write s[0..n) as a quoted JSON string.  Returns 0; -1 if the sink failed;
 * -2 under DW_JSON_EXACT if s is not UTF-8 (the sink may have part of it). */
int dw_json_escape(dw_json_sink put, void *ctx, const char *s, size_t n, dw_json_utf8 mode);
int dw_json_escape_buf(dw_buf *b, const char *s, size_t n, dw_json_utf8 mode);
int dw_json_escape_file(FILE *f, const char *s, size_t n, dw_json_utf8 mode);

#endif
