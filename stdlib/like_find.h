/* like_find.h - the search for a `like` pattern's middle segment (stdlib/like.c),
 * inline for the interpreter's two-star patterns (vm/interp.c): a call and its
 * register saves cost as much as the search of a short path. */
#ifndef DW_LIKE_FIND_H
#define DW_LIKE_FIND_H
#include <stdint.h>
#include <string.h>
#include "bytes.h"
#include "ext.h"

/* Leftmost occurrence of needle in haystack, or NULL; k: needle's rarest byte
 * (dw_like_rare_offset), or SIZE_MAX to find it here. */
static inline __attribute__((always_inline)) const char *dw_like_find(const char *haystack, size_t haystack_len,
                              const char *needle, size_t needle_len, size_t k)
{
    if (needle_len == 0)
        return haystack;
    if (needle_len > haystack_len)
        return NULL;
    if (needle_len > 16)
        return memmem(haystack, haystack_len, needle, needle_len);
    /* A pattern's middle segment is short and the subject (a path, a host) is
     * too: glibc's memmem spends more on its setup (~170 instructions) than a
     * memchr for one byte and a compare of the rest.  The byte is the
     * segment's rarest (at offset k), so memchr stops at few false starts;
     * starts come in increasing order, so the first match is the leftmost. */
    if (k >= needle_len)
        k = dw_like_rare_offset(needle, needle_len);
    const char *p = haystack + k, *end = haystack + (haystack_len - needle_len) + k + 1;   /* last start + k + 1 */
    while (p < end && (p = memchr(p, (unsigned char)needle[k], (size_t)(end - p))) != NULL) {
        if (dw_mem_eq(p - k, needle, needle_len))
            return p - k;
        p++;
    }
    return NULL;
}

/* prefix * mid * suffix, mid searched by its byte at offset rare (SIZE_MAX: found here) */
static inline __attribute__((always_inline)) bool dw_like_match_mid_inline(const dw_like_pattern *p, size_t rare, const char *s, size_t n)
{
    const dw_str *first = &p->seg[0], *mid = &p->seg[1], *last = &p->seg[2];
    if (!s)
        s = "";
    if (first->len > n || last->len > n - first->len)
        return false;
    if ((first->len && !dw_mem_eq(first->s, s, first->len)) ||
        (last->len && !dw_mem_eq(last->s, s + (n - last->len), last->len)))
        return false;
    return dw_like_find(s + first->len, n - last->len - first->len, mid->s, mid->len, rare) != NULL;
}

#endif
