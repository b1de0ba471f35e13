/* le.h - explicit little-endian loads and stores for the on-disk formats
 * (the .dwb artifact, the history log), so a file means the same on every
 * host.  Written byte by byte: compilers fold each into one move on a
 * little-endian machine. */
#ifndef DW_LE_H
#define DW_LE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline uint16_t dw_le16(const void *src)
{
    const uint8_t *p = src;
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t dw_le32(const void *src)
{
    const uint8_t *p = src;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t dw_le64(const void *src)
{
    const uint8_t *p = src;
    return (uint64_t)dw_le32(p) | (uint64_t)dw_le32(p + 4) << 32;
}

static inline void dw_put_le16(void *dst, uint16_t v)
{
    uint8_t *p = dst;
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void dw_put_le32(void *dst, uint32_t v)
{
    uint8_t *p = dst;
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static inline void dw_put_le64(void *dst, uint64_t v)
{
    uint8_t *p = dst;
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* A bounded reader over n bytes: a read past the end sets bad and yields
 * NULL or 0, so a decoder checks once, at the end, instead of per field. */
typedef struct dw_le_reader { const uint8_t *p; size_t n, off; bool bad; } dw_le_reader;

static inline const uint8_t *dw_le_take(dw_le_reader *r, size_t k)
{
    if (r->bad || r->n - r->off < k) { r->bad = true; return NULL; }
    const uint8_t *at = r->p + r->off;
    r->off += k;
    return at;
}
static inline uint8_t dw_le_read8(dw_le_reader *r) { const uint8_t *b = dw_le_take(r, 1); return b ? b[0] : 0; }
static inline uint32_t dw_le_read32(dw_le_reader *r) { const uint8_t *b = dw_le_take(r, 4); return b ? dw_le32(b) : 0; }
static inline uint64_t dw_le_read64(dw_le_reader *r) { const uint8_t *b = dw_le_take(r, 8); return b ? dw_le64(b) : 0; }

#endif
