/* ipaddr.c - Cedar's ipaddr extension type (dogwood.md §4.7).  The parser
 * follows Cedar exactly: Cedar delegates to Rust's std::net address parser
 * and adds a few pre-checks, so the corner cases (group width, where `::`
 * may appear, leading zeros) are those of that parser. */
#include "ext.h"

#include <stdio.h>
#include <string.h>

/* Longest accepted text: "ABCD:EF01:2345:6789:ABCD:EF01:2345:6789/128". */
enum { DW_IP_TEXT_MAX = 43 };

static bool is_decimal_digit(char c) { return c >= '0' && c <= '9'; }

static int hex_digit_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static size_t count_char(const char *s, size_t n, char c)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += s[i] == c;
    return count;
}

/* A dotted quad filling the whole of s[0..n): four parts of 1-3 digits,
 * each <= 255, with no leading zero. */
static bool parse_ipv4(const char *s, size_t n, uint8_t addr[4])
{
    size_t pos = 0;
    for (int part = 0; part < 4; part++) {
        if (part > 0) {
            if (pos >= n || s[pos] != '.')
                return false;
            pos++;
        }
        size_t start = pos;
        unsigned value = 0;
        while (pos < n && is_decimal_digit(s[pos])) {
            if (pos - start == 3)
                return false;
            value = value * 10 + (unsigned)(s[pos] - '0');
            pos++;
        }
        size_t digits = pos - start;
        if (digits == 0 || value > 255 || (digits > 1 && s[start] == '0'))
            return false;
        addr[part] = (uint8_t)value;
    }
    return pos == n;
}

/* Reads up to `limit` colon-separated groups of 1-4 hex digits starting at
 * *pos, as Rust's parser does: a separator is consumed only together with a
 * valid group after it.  Returns how many groups were read. */
static size_t read_hex_groups(const char *s, size_t n, size_t *pos,
                              uint16_t *groups, size_t limit)
{
    for (size_t i = 0; i < limit; i++) {
        size_t p = *pos;
        if (i > 0) {
            if (p >= n || s[p] != ':')
                return i;
            p++;
        }
        size_t start = p;
        unsigned value = 0;
        while (p < n && hex_digit_value(s[p]) >= 0) {
            if (p - start == 4)
                return i;
            value = value * 16 + (unsigned)hex_digit_value(s[p]);
            p++;
        }
        if (p == start)
            return i;
        groups[i] = (uint16_t)value;
        *pos = p;
    }
    return limit;
}

/* Hexadecimal colon form filling the whole of s[0..n), at most one `::`.
 * Embedded IPv4 tails never reach here (see dw_ip_parse). */
static bool parse_ipv6(const char *s, size_t n, uint8_t addr[16])
{
    uint16_t groups[8] = {0};
    size_t pos = 0;
    size_t head = read_hex_groups(s, n, &pos, groups, 8);
    if (head < 8) {
        if (pos + 1 >= n || s[pos] != ':' || s[pos + 1] != ':')
            return false;
        pos += 2;
        /* `::` stands for at least one zero group. */
        uint16_t tail[7] = {0};
        size_t tail_count = read_hex_groups(s, n, &pos, tail, 8 - (head + 1));
        for (size_t i = 0; i < tail_count; i++)
            groups[8 - tail_count + i] = tail[i];
    }
    if (pos != n)
        return false;
    for (int i = 0; i < 8; i++) {
        addr[2 * i] = (uint8_t)(groups[i] >> 8);
        addr[2 * i + 1] = (uint8_t)(groups[i] & 0xff);
    }
    return true;
}

static bool parse_address(const char *s, size_t n, dw_ipaddr *ip)
{
    if (parse_ipv4(s, n, ip->addr)) {
        ip->v6 = 0;
        return true;
    }
    if (parse_ipv6(s, n, ip->addr)) {
        ip->v6 = 1;
        return true;
    }
    return false;
}

/* Digits only, no sign, no leading zero, at most 2 (IPv4) or 3 (IPv6)
 * characters, and no larger than the address width. */
static bool parse_prefix(const char *s, size_t n, bool v6, uint8_t *prefix)
{
    size_t max_len = v6 ? 3 : 2;
    unsigned max_value = v6 ? 128 : 32;
    if (n == 0 || n > max_len || (s[0] == '0' && n > 1))
        return false;
    unsigned value = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_decimal_digit(s[i]))
            return false;
        value = value * 10 + (unsigned)(s[i] - '0');
    }
    if (value > max_value)
        return false;
    *prefix = (uint8_t)value;
    return true;
}

bool dw_ip_parse(const char *s, size_t n, dw_ipaddr *out)
{
    if (n > DW_IP_TEXT_MAX)
        return false;
    /* Cedar refuses IPv4 embedded in IPv6 with this blunt textual test. */
    if (count_char(s, n, ':') >= 2 && count_char(s, n, '.') >= 2)
        return false;
    dw_ipaddr ip;
    memset(&ip, 0, sizeof ip);
    const char *slash = n ? memchr(s, '/', n) : NULL;
    size_t addr_len = slash ? (size_t)(slash - s) : n;
    if (!parse_address(s, addr_len, &ip))
        return false;
    if (slash) {
        if (!parse_prefix(slash + 1, n - addr_len - 1, ip.v6, &ip.prefix))
            return false;
    } else {
        ip.prefix = ip.v6 ? 128 : 32;
    }
    *out = ip;
    return true;
}

static size_t address_width(const dw_ipaddr *a) { return a->v6 ? 16 : 4; }

int dw_ip_compare(const dw_ipaddr *a, const dw_ipaddr *b)
{
    if (a->v6 != b->v6)
        return a->v6 < b->v6 ? -1 : 1;
    int by_addr = memcmp(a->addr, b->addr, address_width(a));
    if (by_addr != 0)
        return by_addr < 0 ? -1 : 1;
    if (a->prefix != b->prefix)
        return a->prefix < b->prefix ? -1 : 1;
    return 0;
}

bool dw_ip_equal(const dw_ipaddr *a, const dw_ipaddr *b)
{
    return dw_ip_compare(a, b) == 0;
}

/* Loopback and multicast test the written address plus a minimum prefix,
 * which is the same as "the whole range lies inside the special block". */
bool dw_ip_is_loopback(const dw_ipaddr *a)
{
    if (!a->v6)
        return a->addr[0] == 127 && a->prefix >= 8;
    for (int i = 0; i < 15; i++)
        if (a->addr[i] != 0)
            return false;
    return a->addr[15] == 1 && a->prefix >= 128;
}

bool dw_ip_is_multicast(const dw_ipaddr *a)
{
    if (!a->v6)
        return a->addr[0] >= 224 && a->addr[0] <= 239 && a->prefix >= 4;
    return a->addr[0] == 0xff && a->prefix >= 8;
}

/* First and last address of the range the value denotes. */
static void range_bounds(const dw_ipaddr *a, uint8_t first[16], uint8_t last[16])
{
    size_t width = address_width(a);
    unsigned prefix = a->prefix;
    for (size_t i = 0; i < width; i++) {
        unsigned bits_here = prefix >= 8 * (i + 1) ? 8
                           : prefix > 8 * i ? prefix - 8 * (unsigned)i : 0;
        uint8_t mask = (uint8_t)(0xff00u >> bits_here);
        first[i] = a->addr[i] & mask;
        last[i] = a->addr[i] | (uint8_t)~mask;
    }
}

bool dw_ip_in_range(const dw_ipaddr *a, const dw_ipaddr *range)
{
    if (a->v6 != range->v6)
        return false;
    uint8_t a_first[16], a_last[16], r_first[16], r_last[16];
    range_bounds(a, a_first, a_last);
    range_bounds(range, r_first, r_last);
    size_t width = address_width(a);
    return memcmp(r_first, a_first, width) <= 0 && memcmp(a_last, r_last, width) <= 0;
}

/* RFC 5952 text: lower-case hex, the first longest run of two or more zero
 * groups written as `::`.  (Unlike Rust's Display, IPv4-mapped addresses are
 * not shown dotted, so that the text parses back under Cedar's rules.) */
void dw_ip_format(const dw_ipaddr *a, char *buf, size_t cap)
{
    if (cap == 0)
        return;
    buf[0] = '\0';
    size_t used = 0;
#define DW_IP_APPEND(...)                                                     \
    do {                                                                      \
        if (used < cap) {                                                     \
            int written_ = snprintf(buf + used, cap - used, __VA_ARGS__);     \
            used += written_ > 0 ? (size_t)written_ : 0;                      \
        }                                                                     \
    } while (0)
    if (!a->v6) {
        DW_IP_APPEND("%u.%u.%u.%u/%u", a->addr[0], a->addr[1], a->addr[2],
                     a->addr[3], a->prefix);
        return;
    }
    unsigned groups[8];
    for (int i = 0; i < 8; i++)
        groups[i] = (unsigned)a->addr[2 * i] << 8 | a->addr[2 * i + 1];
    int best_start = -1, best_len = 1;
    for (int i = 0; i < 8;) {
        if (groups[i] != 0) {
            i++;
            continue;
        }
        int j = i;
        while (j < 8 && groups[j] == 0)
            j++;
        if (j - i > best_len) {
            best_start = i;
            best_len = j - i;
        }
        i = j;
    }
    for (int i = 0; i < 8; i++) {
        if (i == best_start) {
            DW_IP_APPEND("::");
            i += best_len - 1;
            continue;
        }
        bool after_gap = best_start >= 0 && i == best_start + best_len;
        DW_IP_APPEND("%s%x", i > 0 && !after_gap ? ":" : "", groups[i]);
    }
    DW_IP_APPEND("/%u", a->prefix);
#undef DW_IP_APPEND
}
