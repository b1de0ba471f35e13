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
    char *q = end;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do *--q = (char)('0' + u % 10); while (u /= 10);
    if (v < 0) *--q = '-';
    return (size_t)(end - q);
}

#endif
