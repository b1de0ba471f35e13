/* ext.h - Cedar's four extension types (dogwood.md §4.6-§4.9) and `like`.
 * Pure functions over plain C values: no allocation, no globals.  Every
 * parser takes (pointer, length) because Cedar strings may contain NUL.
 * Every function that can fail returns false on failure (an extension or
 * overflow error at run time) and leaves *out untouched. */
#ifndef DW_EXT_H
#define DW_EXT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bytes.h"

/* ---- decimal: i64 scaled by 10^4 (§4.6) ---- */
bool dw_decimal_parse(const char *s, size_t n, int64_t *out);
/* Canonical text as Cedar prints it: at least one fractional digit, trailing
 * zeros trimmed ("1.5", "-0.0001", "12.0").  buf needs >= 32 bytes. */
void dw_decimal_format(int64_t v, char *buf, size_t cap);

/* ---- ipaddr (§4.7) ---- */
typedef struct dw_ipaddr {
    uint8_t v6;        /* 0 = IPv4 (addr[0..3] used), 1 = IPv6 */
    uint8_t prefix;    /* 0..32 or 0..128 */
    uint8_t addr[16];  /* network byte order; host bits kept as written */
} dw_ipaddr;
bool dw_ip_parse(const char *s, size_t n, dw_ipaddr *out);
bool dw_ip_equal(const dw_ipaddr *a, const dw_ipaddr *b);
bool dw_ip_is_loopback(const dw_ipaddr *a);
bool dw_ip_is_multicast(const dw_ipaddr *a);
bool dw_ip_in_range(const dw_ipaddr *a, const dw_ipaddr *range);
/* Total order used for canonical set ordering (family, addr, prefix). */
int  dw_ip_compare(const dw_ipaddr *a, const dw_ipaddr *b);
/* "10.0.0.1/8", "::1/128"... buf needs >= 48 bytes. */
void dw_ip_format(const dw_ipaddr *a, char *buf, size_t cap);

/* ---- datetime: ms since epoch UTC; duration: ms (§4.8, §4.9) ---- */
bool dw_datetime_parse(const char *s, size_t n, int64_t *out_ms);
bool dw_duration_parse(const char *s, size_t n, int64_t *out_ms);
/* RFC 3339 UTC as Box times events: YYYY-MM-DDThh:mm:ss[.f{1,9}]Z -> ns since the epoch. */
bool dw_rfc3339_parse_ns(const char *s, size_t n, int64_t *ns);
bool dw_datetime_offset(int64_t dt, int64_t dur, int64_t *out);          /* dt + dur */
bool dw_datetime_duration_since(int64_t a, int64_t b, int64_t *out);     /* a - b */
bool dw_datetime_to_date(int64_t dt, int64_t *out);                      /* floor to UTC midnight */
int64_t dw_datetime_to_time(int64_t dt);                                 /* dt - toDate(dt), >= 0 */
/* Cedar's duration conversions truncate toward zero; they cannot overflow. */
int64_t dw_duration_to(int64_t ms, int64_t unit_ms);
void dw_datetime_format(int64_t ms, char *buf, size_t cap);   /* ISO text, for printing */
/* Days since 1970-01-01 to the proleptic Gregorian date. */
void dw_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);
void dw_duration_format(int64_t ms, char *buf, size_t cap);   /* e.g. "1h30m", "-500ms" */

/* ---- like (§4.4) ----
 * A pattern is literal segments separated by wildcards:
 *   seg[0] * seg[1] * ... * seg[nseg-1]     (nseg >= 1; segments may be empty)
 * so "abc" is one segment, "*" is two empty segments, "a*b*" is {"a","b",""}.
 * Matching is on UTF-8 bytes, which equals matching on scalar values. */
typedef struct dw_like_pattern { size_t nseg; const dw_str *seg; } dw_like_pattern;
bool dw_like_match(const dw_like_pattern *p, const char *s, size_t n);
/* Patterns with two stars (prefix * middle * suffix, nseg == 3), with the
 * offset of the middle segment's rarest byte found once, when the pattern is
 * loaded (dw_like_rare_offset(mid.s, mid.len)): the same answer as dw_like_match. */
size_t dw_like_rare_offset(const char *needle, size_t needle_len);
bool dw_like_match_mid(const dw_like_pattern *p, size_t rare, const char *s, size_t n);

/* ---- shared by the decimal and duration parsers ---- */
/* Sign and magnitude as parsed from text, to an i64: false when out of range.
 * The magnitude of INT64_MIN is one more than INT64_MAX, so "-9223372036854775808"
 * style inputs are representable only with the sign. */
static inline bool dw_int64_from_sign_magnitude(bool negative, uint64_t magnitude, int64_t *out)
{
    const uint64_t max_positive = (uint64_t)INT64_MAX;
    if (negative) {
        if (magnitude > max_positive + 1) return false;
        *out = magnitude == max_positive + 1 ? INT64_MIN : -(int64_t)magnitude;
    } else {
        if (magnitude > max_positive) return false;
        *out = (int64_t)magnitude;
    }
    return true;
}

#endif
