/* names.h - interned rule names.
 *
 * dw_engine_rule_name promises that the strings it returns stay valid until
 * dw_engine_close, across reloads.  The engine interns them here, so a
 * reload can free the program it replaces while the names it handed out
 * live on, and reloading the same policy again and again adds nothing. */
#ifndef DW_NAMES_H
#define DW_NAMES_H
#include <stddef.h>
#include <stdint.h>

typedef struct dw_names { char **slot; uint32_t nslots, n; } dw_names;

/* The one copy of s[0..len) (NUL-terminated), or NULL on OOM. */
const char *dw_names_intern(dw_names *t, const char *s, size_t len);
void dw_names_free(dw_names *t);

#endif
