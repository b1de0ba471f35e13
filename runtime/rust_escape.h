/* rust_escape.h - Rust's str::escape_debug, the escaping Cedar 4.x applies
 * when it prints a string, an entity id or an attribute (its Display of a
 * policy, of a value and of an entity uid): \0 \t \r \n \\ \" \' by their
 * short forms, \u{…} for a character that is not printable and for a
 * combining mark that starts the text; everything else as it is. */
#ifndef DW_RUST_ESCAPE_H
#define DW_RUST_ESCAPE_H
#include <stdbool.h>
#include <stddef.h>
#include "../stdlib/arena.h"

/* Append the escaped body of s[0..n) (no quotes) to b.  pattern: a like
 * pattern's literal text (`*` as \*, a combining mark escaped wherever it
 * stands).  0; 1 s is not UTF-8; -1 out of memory. */
int dw_rust_escape_debug(dw_buf *b, const char *s, size_t n, bool pattern);

#endif
