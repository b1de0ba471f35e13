/* bytes.h - the one byte-string type (pointer, length: Cedar strings may hold
 * NUL) and equality for the short strings that dominate policy evaluation
 * (attribute names, entity ids, paths): overlapping word loads instead of a
 * call to memcmp. */
#ifndef DW_BYTES_H
#define DW_BYTES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Bytes not owned by the holder; the AST, the program and history all use it. */
typedef struct dw_str { const char *s; size_t len; } dw_str;

static inline bool dw_mem_eq(const void *pa, const void *pb, size_t n)
{
    const char *a = pa, *b = pb;
    if (n >= 8) {
        if (n > 16) return memcmp(a, b, n) == 0;
        uint64_t x1, y1, x2, y2;
        memcpy(&x1, a, 8); memcpy(&y1, b, 8);
        memcpy(&x2, a + n - 8, 8); memcpy(&y2, b + n - 8, 8);
        return x1 == y1 && x2 == y2;
    }
    if (n >= 4) {
        uint32_t x1, y1, x2, y2;
        memcpy(&x1, a, 4); memcpy(&y1, b, 4);
        memcpy(&x2, a + n - 4, 4); memcpy(&y2, b + n - 4, 4);
        return x1 == y1 && x2 == y2;
    }
    for (size_t i = 0; i < n; i++) if (a[i] != b[i]) return false;
    return true;
}

/* Byte equality of two strings, and of a string with a C string.  An empty
 * dw_str may carry a NULL pointer: dw_mem_eq reads nothing for length 0. */
static inline bool dw_str_eq(dw_str a, dw_str b) { return a.len == b.len && dw_mem_eq(a.s, b.s, a.len); }
static inline bool dw_str_is(dw_str a, const char *z) { size_t n = strlen(z); return a.len == n && dw_mem_eq(a.s, z, n); }
/* Byte order (memcmp, then the shorter first): the order of Cedar's sorted maps. */
static inline int dw_str_cmp(dw_str a, dw_str b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.s, b.s, n) : 0;
    return c ? c : (a.len > b.len) - (a.len < b.len);
}

#endif
