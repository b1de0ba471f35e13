/* ext_error.c - see ext_error.h.  Each check mirrors a step of Cedar's
 * parser, in its order: the first step the text fails names the error. */
#include "ext_error.h"
#include <stdio.h>
#include <string.h>
#include "../stdlib/ext.h"

static int put(dw_buf *b, const char *s) { return dw_buf_append(b, s, strlen(s)); }
static int putn(dw_buf *b, const char *s, size_t n) { return dw_buf_append(b, s, n); }
static bool digit(char c) { return c >= '0' && c <= '9'; }

static bool digits(const char *s, size_t from, size_t count)
{
    for (size_t i = from; i < from + count; i++) if (!digit(s[i])) return false;
    return true;
}

static unsigned num(const char *s, size_t from, size_t count)
{
    unsigned v = 0;
    for (size_t i = from; i < from + count; i++) v = v * 10 + (unsigned)(s[i] - '0');
    return v;
}

static int decimal_error(dw_buf *b, const char *s, size_t n)
{
    size_t i = n && s[0] == '-', int_digits = 0, frac = 0;
    while (i < n && digit(s[i])) { i++; int_digits++; }
    bool point = i < n && s[i] == '.';
    if (point) for (i++; i < n && digit(s[i]); i++) frac++;
    if (!int_digits || !point || !frac || i != n)
        return put(b, "`") || putn(b, s, n) || put(b, "` is not a well-formed decimal value") ? -1 : 0;
    if (frac > 4) return put(b, "too many digits after the decimal in `") || putn(b, s, n) || put(b, "`") ? -1 : 0;
    return put(b, "overflow when converting to decimal");
}

static int ip_error(dw_buf *b, const char *s, size_t n)
{
    if (memchr(s, ':', n) && memchr(s, '.', n))
        return put(b, "error parsing IP address from string: We do not accept IPv4 embedded in IPv6 (e.g., ::ffff:127.0.0.1). Found: `") ||
               putn(b, s, n) || put(b, "`") ? -1 : 0;
    const char *slash = memchr(s, '/', n);
    if (!slash) return put(b, "invalid IP address: ") || putn(b, s, n) ? -1 : 0;
    size_t an = (size_t)(slash - s), pn = n - an - 1;
    const char *p = slash + 1;
    dw_ipaddr ip;
    if (!dw_ip_parse(s, an, &ip) || memchr(s, '/', an))
        return put(b, "error parsing IP address from the string `") || putn(b, s, an) || put(b, "`: invalid IP address syntax") ? -1 : 0;
    char t[96];
    unsigned limit = ip.v6 ? 128 : 32;
    if (pn > (ip.v6 ? 3u : 2u)) { snprintf(t, sizeof t, "error parsing prefix: string length %zu is too large", pn); return put(b, t); }
    if (!pn) return put(b, "error parsing prefix from the string ``: cannot parse integer from empty string");
    if (!digits(p, 0, pn)) return put(b, "error parsing prefix `") || putn(b, p, pn) || put(b, "`: encountered non-digit") ? -1 : 0;
    if (pn > 1 && p[0] == '0') return put(b, "error parsing prefix `") || putn(b, p, pn) || put(b, "`: leading zero(s)") ? -1 : 0;
    snprintf(t, sizeof t, "error parsing prefix: %u is larger than the limit %u", num(p, 0, pn), limit);
    return put(b, t);
}

static bool valid_date(unsigned y, unsigned m, unsigned d)
{
    static const unsigned char len[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m >= 1 && m <= 12 && d >= 1 && d <= (m == 2 && leap ? 29u : len[m - 1]);
}

static int datetime_error(dw_buf *b, const char *s, size_t n)
{
    if (n < 10 || !digits(s, 0, 4) || s[4] != '-' || !digits(s, 5, 2) || s[7] != '-' || !digits(s, 8, 2))
        return put(b, "invalid date pattern");
    size_t off = 0;
    if (n > 10) {
        if (n < 19 || s[10] != 'T' || !digits(s, 11, 2) || s[13] != ':' || !digits(s, 14, 2) || s[16] != ':' || !digits(s, 17, 2))
            return put(b, "invalid hour/minute/second pattern");
        size_t i = 19;
        if (i < n && s[i] == '.') {
            if (n < i + 4 || !digits(s, i + 1, 3)) return put(b, "invalid millisecond and/or offset pattern");
            i += 4;
        }
        bool z = i + 1 == n && s[i] == 'Z';
        bool o = i + 5 == n && (s[i] == '+' || s[i] == '-') && digits(s, i + 1, 4);
        if (!z && !o) return put(b, "invalid millisecond and/or offset pattern");
        off = o ? i : 0;
    }
    if (!valid_date(num(s, 0, 4), num(s, 5, 2), num(s, 8, 2))) return put(b, "invalid date: ") || putn(b, s, 10) ? -1 : 0;
    if (n > 10 && (num(s, 11, 2) > 23 || num(s, 14, 2) > 59 || num(s, 17, 2) > 59))
        return put(b, "invalid hour/minute/second: ") || putn(b, s + 11, 8) ? -1 : 0;
    if (off) {
        char t[64];
        snprintf(t, sizeof t, "invalid offset range: %u%u", num(s, off + 1, 2), num(s, off + 3, 2));
        return put(b, t);
    }
    return put(b, "invalid date pattern");       /* not reached: the text would have parsed */
}

/* -?(Nd)?(Nh)?(Nm)?(Ns)?(Nms)? with at least one unit: the shape, whatever the size */
static bool duration_shape(const char *s, size_t n)
{
    static const char *const unit[] = { "d", "h", "m", "s", "ms" };
    size_t i = n && s[0] == '-', start = i;
    for (int u = 0; u < 5 && i < n; u++) {
        size_t j = i;
        while (j < n && digit(s[j])) j++;
        size_t ul = strlen(unit[u]);
        if (j == i || j + ul > n || memcmp(s + j, unit[u], ul)) continue;
        if (u == 2 && j + 1 < n && s[j + 1] == 's') continue;     /* "5ms" is milliseconds, not minutes */
        i = j + ul;
    }
    return i == n && i > start;
}

int dw_ext_parse_error(dw_buf *b, dw_extfn fn, const char *s, size_t n)
{
    switch (fn) {
    case DW_FN_DECIMAL: return decimal_error(b, s, n);
    case DW_FN_IP: return ip_error(b, s, n);
    case DW_FN_DATETIME: return datetime_error(b, s, n);
    default: return put(b, duration_shape(s, n) ? "Duration overflows internal representation" : "invalid duration pattern");
    }
}
