/* ext_error.h - why a string is not a decimal, ip, datetime or duration, in
 * Cedar 4.x's words (its extension parsers' messages, checked against
 * cedar-wasm by tests/cedar_evaluate.sh): the text already failed to parse
 * (stdlib/ext.h); this reads it again only to say why. */
#ifndef DW_EXT_ERROR_H
#define DW_EXT_ERROR_H
#include "../vm/program.h"

/* Append the reason s[0..n) fails constructor fn (DW_FN_DECIMAL, _IP,
 * _DATETIME, _DURATION) to b.  0, or -1 out of memory. */
int dw_ext_parse_error(dw_buf *b, dw_extfn fn, const char *s, size_t n);

#endif
