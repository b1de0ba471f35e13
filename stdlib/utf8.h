/* utf8.h - the one UTF-8 codec of the JSON reader and the string-literal
 * decoder: validation of one sequence (shortest form, no surrogates, at most
 * U+10FFFF), its code point, and encoding of one code point. */
#ifndef DW_UTF8_H
#define DW_UTF8_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether byte c continues a sequence (10xxxxxx).  Columns count Unicode
 * scalar values as the bytes that do not (a stray byte counts as one). */
static inline bool dw_utf8_is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }

/* Length of the valid UTF-8 sequence at s (1 for ASCII), 0 if the bytes
 * are not one: a stray continuation byte, an overlong form (C0, C1, E0 <A0,
 * F0 <90), a surrogate, above U+10FFFF, or cut short by avail. */
static inline size_t dw_utf8_len(const unsigned char *s, size_t avail)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
    else return 0;
    if (avail < len) return 0;
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
    if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
    return len;
}

/* The code point of a sequence dw_utf8_len accepted (len its result). */
static inline uint32_t dw_utf8_get(const unsigned char *s, size_t len)
{
    static const unsigned char lead_mask[5] = { 0, 0x7F, 0x1F, 0x0F, 0x07 };
    uint32_t cp = s[0] & lead_mask[len];
    for (size_t k = 1; k < len; k++) cp = (cp << 6) | (s[k] & 0x3F);
    return cp;
}

/* Encode cp (at most U+10FFFF) into o[0..3]; returns the length. */
static inline size_t dw_utf8_put(char *o, uint32_t cp)
{
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F)); return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F)); return 4;
}

#endif
