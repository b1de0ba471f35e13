/* ident_hash.h - the hash of an event identity (type, id, kind) that the
 * retention set and the monitors' dispatch table look events up by, once or
 * twice per appended event.  Both tables hold only program-defined
 * identities and resolve a hit by comparing the strings, so agent input can
 * neither lengthen their probe clusters nor forge a match: a plain
 * word-at-a-time multiply-xor (about a quarter of three XXH3 calls on
 * Box-sized names) is enough, and no seed is needed. */
#ifndef DW_IDENT_HASH_H
#define DW_IDENT_HASH_H
#include <stdint.h>
#include <string.h>
#include "../stdlib/bytes.h"

static inline uint64_t dw_ident_hash_part(uint64_t h, dw_str x)
{
    const uint64_t k = 0x9E3779B97F4A7C15ull;
    const char *s = x.s;
    size_t n = x.len;
    h = (h ^ n) * k;             /* the length separates the fields */
    for (; n >= 8; s += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * k;
        h ^= h >> 29;
    }
    uint64_t w = 0;
    if (n >= 4) {                /* 4..7 bytes: two overlapping 4-byte loads */
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        w = a | (uint64_t)b << 32;
    } else if (n) w = (uint8_t)s[0] | (uint64_t)(uint8_t)s[n / 2] << 8 | (uint64_t)(uint8_t)s[n - 1] << 16;
    h = (h ^ w) * k;
    return h ^ (h >> 31);
}

/* Never 0 (0 marks an empty slot of the monitors' table). */
static inline uint64_t dw_ident_hash(dw_str type, dw_str id, dw_str kind)
{
    uint64_t h = dw_ident_hash_part(dw_ident_hash_part(dw_ident_hash_part(0, type), id), kind);
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    return h ? h : 1;
}

#endif
