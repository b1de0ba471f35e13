/* alloc_count.c - see alloc_count.h.  glibc exports __libc_malloc and
 * friends, so the wrappers forward to the real allocator. */
#include "alloc_count.h"
#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define DW_NO_ALLOC_COUNT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DW_NO_ALLOC_COUNT 1
#endif
#endif

#ifndef DW_NO_ALLOC_COUNT
static _Atomic uint64_t allocs;

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

void *malloc(size_t n) { allocs++; return __libc_malloc(n); }
void *calloc(size_t n, size_t m) { allocs++; return __libc_calloc(n, m); }
void *realloc(void *p, size_t n) { allocs++; return __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }

uint64_t dw_alloc_count(void) { return allocs; }
bool dw_alloc_counting(void) { return true; }
#else
uint64_t dw_alloc_count(void) { return 0; }
bool dw_alloc_counting(void) { return false; }
#endif
