/* digits.h - an integer's decimal text, written backwards so the caller
 * needs no printf and no reversal (log records, dwd subjects, policy ids).
 * The one formatter for that: Cedar's i64 range, INT64_MIN included. */
#ifndef DW_DIGITS_H
#define DW_DIGITS_H
#include <stddef.h>
#include <stdint.h>

#define DW_I64_TEXT_MAX 20   /* "-9223372036854775808" */

/* v's decimal text in the DW_I64_TEXT_MAX bytes before end (no NUL): its
 * length; the text starts at end - length. */
static inline size_t dw_i64_text(int64_t v, char *end)
{
    /* two digits a step (a log record's nanosecond timestamp has 19) */
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    char *q = end;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    for (; u >= 100; u /= 100) {
        const char *p = pairs + 2 * (u % 100);
        *--q = p[1];
        *--q = p[0];
    }
    if (u >= 10) {
        *--q = pairs[2 * u + 1];
        *--q = pairs[2 * u];
    } else *--q = (char)('0' + u);
    if (v < 0) *--q = '-';
    return (size_t)(end - q);
}

#endif
