/* alloc_count.h - a counting allocator for proving "no allocation per
 * decision".  runtime/alloc_count.c wraps malloc/calloc/realloc/free (it is
 * linked into the dwc and test executables, not into the library); under
 * AddressSanitizer, which owns malloc, counting is unavailable. */
#ifndef DW_ALLOC_COUNT_H
#define DW_ALLOC_COUNT_H
#include <stdbool.h>
#include <stdint.h>

/* Number of malloc/calloc/realloc calls since the process started. */
uint64_t dw_alloc_count(void);
/* False when the wrappers are not linked in (sanitizer builds). */
bool dw_alloc_counting(void);

#endif
