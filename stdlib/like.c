/* like.c - Cedar's `like` pattern match (dogwood.md §4.4).  With `*` as the
 * only wildcard, matching the first segment as a prefix, the last as a
 * suffix and every middle segment at its leftmost occurrence is exact, and
 * takes linear-ish time instead of backtracking. */
#include "ext.h"

#include <string.h>
#include "bytes.h"

static bool bytes_equal(const char *a, const char *b, size_t n)
{
    return dw_mem_eq(a, b, n);
}

/* Leftmost occurrence of needle in haystack, or NULL. */
static const char *find_bytes(const char *haystack, size_t haystack_len,
                              const char *needle, size_t needle_len)
{
    if (needle_len == 0)
        return haystack;
    if (needle_len > haystack_len)
        return NULL;
    if (needle_len > 16)
        return memmem(haystack, haystack_len, needle, needle_len);
    /* A pattern's middle segment is short and the subject (a path, a host) is
     * too: glibc's memmem spends more on its setup (~170 instructions) than a
     * memchr for the first byte and a compare of the rest. */
    const char *p = haystack, *end = haystack + (haystack_len - needle_len) + 1;   /* last start + 1 */
    while (p < end && (p = memchr(p, (unsigned char)needle[0], (size_t)(end - p))) != NULL) {
        if (bytes_equal(p + 1, needle + 1, needle_len - 1))
            return p;
        p++;
    }
    return NULL;
}

bool dw_like_match(const dw_like_pattern *p, const char *s, size_t n)
{
    if (p->nseg == 0)
        return false;   /* not a pattern; ext.h promises nseg >= 1 */
    if (!s)
        s = "";         /* an empty string may arrive as NULL; offsets need a base */
    const dw_str *first = &p->seg[0];
    if (p->nseg == 1)
        return first->len == n && bytes_equal(first->s, s, n);
    const dw_str *last = &p->seg[p->nseg - 1];
    /* The prefix and the suffix must not overlap. */
    if (first->len > n || last->len > n - first->len)
        return false;
    if (!bytes_equal(first->s, s, first->len) ||
        !bytes_equal(last->s, s + (n - last->len), last->len))
        return false;
    size_t pos = first->len;
    size_t end = n - last->len;
    for (size_t i = 1; i + 1 < p->nseg; i++) {
        const dw_str *seg = &p->seg[i];
        const char *found = find_bytes(s + pos, end - pos, seg->s, seg->len);
        if (!found)
            return false;
        pos = (size_t)(found - s) + seg->len;
    }
    return true;
}
