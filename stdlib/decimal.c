/* decimal.c - Cedar's decimal extension type (dogwood.md §4.6): an i64
 * scaled by 10^4, written -?[0-9]+\.[0-9]{1,4}. */
#include "ext.h"

#include <stdio.h>

enum { DW_DECIMAL_DIGITS = 4, DW_DECIMAL_SCALE = 10000 };

bool dw_decimal_parse(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    bool negative = false;
    if (i < n && s[i] == '-') {
        negative = true;
        i++;
    }
    /* The magnitude is accumulated unsigned so that the i64 minimum, whose
     * magnitude is one more than the maximum, can still be represented.
     * Leading zeros never overflow, so any number of them is accepted. */
    uint64_t whole = 0;
    size_t whole_start = i;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        if (__builtin_mul_overflow(whole, 10u, &whole) ||
            __builtin_add_overflow(whole, (uint64_t)(s[i] - '0'), &whole))
            return false;
        i++;
    }
    if (i == whole_start || i >= n || s[i] != '.')
        return false;
    i++;
    size_t frac_start = i;
    uint64_t frac = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        if (i - frac_start == DW_DECIMAL_DIGITS)
            return false;
        frac = frac * 10 + (uint64_t)(s[i] - '0');
        i++;
    }
    size_t frac_len = i - frac_start;
    if (frac_len == 0 || i != n)
        return false;
    for (size_t k = frac_len; k < DW_DECIMAL_DIGITS; k++)
        frac *= 10;

    uint64_t magnitude;
    if (__builtin_mul_overflow(whole, (uint64_t)DW_DECIMAL_SCALE, &magnitude) ||
        __builtin_add_overflow(magnitude, frac, &magnitude))
        return false;
    /* The sign comes from the text, not from the integer part, so "-0.5" is
     * negative (Cedar fixed exactly this bug in cedar#1964). */
    return dw_int64_from_sign_magnitude(negative, magnitude, out);
}

void dw_decimal_format(int64_t v, char *buf, size_t cap)
{
    if (cap == 0)
        return;
    /* Negating through uint64_t keeps the i64 minimum well defined. */
    uint64_t magnitude = v < 0 ? 0u - (uint64_t)v : (uint64_t)v;
    uint64_t whole = magnitude / DW_DECIMAL_SCALE;
    unsigned frac = (unsigned)(magnitude % DW_DECIMAL_SCALE);
    char frac_text[DW_DECIMAL_DIGITS];
    for (int k = DW_DECIMAL_DIGITS - 1; k >= 0; k--, frac /= 10)
        frac_text[k] = (char)('0' + frac % 10);
    int frac_len = DW_DECIMAL_DIGITS;
    while (frac_len > 1 && frac_text[frac_len - 1] == '0')
        frac_len--;
    snprintf(buf, cap, "%s%llu.%.*s", v < 0 ? "-" : "",
             (unsigned long long)whole, frac_len, frac_text);
}
