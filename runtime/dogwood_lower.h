/* dogwood_lower.h - `dwc dogwood lower` (dogwood.md §18, §14). */
#ifndef DW_DOGWOOD_LOWER_H
#define DW_DOGWOOD_LOWER_H
#include <stdbool.h>
/* The lowered policies and/or the augmented schema (emit: cedar-policies,
 * cedar-schema, cedar-json or both) on stdout, or §18's JSON object with
 * json.  Exit code: 0; 1 an I/O error; 2 rejected (the set does not
 * validate, or holds a provider call). */
int dw_dogwood_lower(const char *pol, const char *sch, const char *ev, const char *providers, const char *macros,
                     const char *emit, bool json);
#endif
