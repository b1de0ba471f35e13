/* like.c - Cedar's `like` pattern match (dogwood.md §4.4).  With `*` as the
 * only wildcard, matching the first segment as a prefix, the last as a
 * suffix and every middle segment at its leftmost occurrence is exact, and
 * takes linear-ish time instead of backtracking. */
#include "ext.h"

#include <stdint.h>
#include <string.h>
#include "bytes.h"
#include "like_find.h"

/* How common a byte is in the subjects `like` meets (paths, hosts, names):
 * higher is more common, unlisted bytes are rare.  A middle segment is
 * searched by its rarest byte, so a path full of '/' costs one memchr for
 * "/.env." instead of one per slash. */
static const uint8_t byte_commonness[256] = {
    ['/'] = 250, ['e'] = 245, ['.'] = 240, ['a'] = 235, ['t'] = 232, ['o'] = 230, ['i'] = 228, ['n'] = 226,
    ['s'] = 224, ['r'] = 222, ['c'] = 220, ['l'] = 218, ['p'] = 216, ['m'] = 214, ['d'] = 212, ['h'] = 210,
    ['u'] = 208, ['-'] = 206, ['_'] = 204, [' '] = 202, ['g'] = 200, ['b'] = 198, ['f'] = 196, ['0'] = 194,
    ['1'] = 192, ['2'] = 190, ['y'] = 188, ['w'] = 186, ['k'] = 184, ['3'] = 182, [':'] = 180, ['v'] = 178,
    ['~'] = 176, ['4'] = 174, ['5'] = 172, ['6'] = 170, ['7'] = 168, ['8'] = 166, ['9'] = 164, ['x'] = 162,
    ['j'] = 160, ['q'] = 158, ['z'] = 156, ['S'] = 154, ['E'] = 152, ['A'] = 150, ['T'] = 148, ['R'] = 146,
};

/* The offset of needle's rarest byte: memchr for it stops at few false starts. */
size_t dw_like_rare_offset(const char *needle, size_t needle_len)
{
    size_t k = 0;
    for (size_t i = 1; i < needle_len; i++)
        if (byte_commonness[(unsigned char)needle[i]] < byte_commonness[(unsigned char)needle[k]]) k = i;
    return k;
}

bool dw_like_match(const dw_like_pattern *p, const char *s, size_t n)
{
    if (p->nseg == 0)
        return false;   /* not a pattern; ext.h promises nseg >= 1 */
    if (!s)
        s = "";         /* an empty string may arrive as NULL; offsets need a base */
    const dw_str *first = &p->seg[0];
    if (p->nseg == 1)
        return first->len == n && dw_mem_eq(first->s, s, n);
    const dw_str *last = &p->seg[p->nseg - 1];
    /* The prefix and the suffix must not overlap. */
    if (first->len > n || last->len > n - first->len)
        return false;
    if (!dw_mem_eq(first->s, s, first->len) ||
        !dw_mem_eq(last->s, s + (n - last->len), last->len))
        return false;
    size_t pos = first->len;
    size_t end = n - last->len;
    for (size_t i = 1; i + 1 < p->nseg; i++) {
        const dw_str *seg = &p->seg[i];
        const char *found = dw_like_find(s + pos, end - pos, seg->s, seg->len, SIZE_MAX);
        if (!found)
            return false;
        pos = (size_t)(found - s) + seg->len;
    }
    return true;
}

bool dw_like_match_mid(const dw_like_pattern *p, size_t rare, const char *s, size_t n)
{
    return dw_like_match_mid_inline(p, rare, s, n);
}
