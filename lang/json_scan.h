/* json_scan.h - the string scanner shared by the JSON reader (json.c) and
 * the request decoder (runtime/json_request.c), and the one JSON white-space
 * skip (the JSON reader, the schema and link-file sniffers, and
 * the line scanners runtime/engine_event.c and runtime/dwd_protocol.c). */
#ifndef DW_JSON_SCAN_H
#define DW_JSON_SCAN_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The first byte at or after i that a string scan must look at: '"', '\\',
 * a control byte (< 0x20) or a byte >= 0x80 (UTF-8, validated only there);
 * n if none.  Sixteen bytes at a time with SSE2, then (or without SSE2)
 * eight at a time (SWAR: a byte-wise "has zero" test flags bytes above a
 * true hit only, so the lowest flag is exact). */
#define DW_SWAR_ONES 0x0101010101010101ull
#define DW_SWAR_HIGHS 0x8080808080808080ull
static inline size_t dw_json_scan_plain(const char *s, size_t i, size_t n)
{
#if defined(__SSE2__)
    /* sixteen bytes at a time: '"', '\\', and (a signed compare) every byte
     * below 0x20 or from 0x80 up */
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)), _mm_cmplt_epi8(v, space));
        unsigned m = (unsigned)_mm_movemask_epi8(hit);
        if (m) return i + (size_t)__builtin_ctz(m);
    }
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        uint64_t q = w ^ (DW_SWAR_ONES * '"'), b = w ^ (DW_SWAR_ONES * '\\');
        uint64_t hit = ((q - DW_SWAR_ONES) & ~q) | ((b - DW_SWAR_ONES) & ~b) | ((w - DW_SWAR_ONES * 0x20) & ~w) | w;
        hit &= DW_SWAR_HIGHS;
        if (hit) return i + ((size_t)__builtin_ctzll(hit) >> 3);
    }
#endif
    for (; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) return i;
    }
    return n;
}

/* The first byte at or after i that is not JSON white space (' ', '\t',
 * '\n', '\r'); n if none.  Every one of them is <= ' ', so compact JSON
 * pays one test. */
static inline __attribute__((always_inline)) size_t dw_json_skip_ws(const char *s, size_t i, size_t n)
{
    if (i < n && (unsigned char)s[i] > ' ') return i;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
    return i;
}

#endif
