#include "arena.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dw_arena_init(dw_arena *a, size_t block_size)
{
    a->head = NULL;
    a->block_size = block_size ? block_size : 64 * 1024;
    a->used_total = 0;
}

void *dw_arena_alloc(dw_arena *a, size_t n)
{
    void *p = dw_arena_alloc_raw(a, n);
    if (p) memset(p, 0, n ? n : 1);
    return p;
}

void *dw_arena_alloc_block(dw_arena *a, size_t n)
{
    size_t sz = n > a->block_size ? n : a->block_size;
    dw_arena_block *b = malloc(sizeof *b + sz);
    if (!b) return NULL;
    b->size = sz;
    b->used = n;
    /* An oversized block goes second so the current block keeps filling. */
    if (a->head && n > a->block_size) {
        b->next = a->head->next;
        a->head->next = b;
    } else {
        b->next = a->head;
        a->head = b;
    }
    a->used_total += n;
    return b->data;
}

char *dw_arena_memdup(dw_arena *a, const void *p, size_t n)
{
    char *q = dw_arena_alloc_raw(a, n + 1);     /* every byte is written below */
    if (!q) return NULL;
    if (n) memcpy(q, p, n);
    q[n] = 0;
    return q;
}

char *dw_arena_vprintf(dw_arena *a, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    size_t len = n > 0 ? (size_t)n : 0;
    char *s = dw_arena_alloc(a, len + 1);
    if (s && len) vsnprintf(s, len + 1, fmt, ap);
    return s;
}

char *dw_arena_printf(dw_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = dw_arena_vprintf(a, fmt, ap);
    va_end(ap);
    return s;
}

void *dw_arena_alloc_or_jump(dw_arena *a, size_t n, jmp_buf *oom)
{
    void *p = dw_arena_alloc(a, n ? n : 1);
    if (!p) longjmp(*oom, 1);
    return p;
}

char *dw_arena_vprintf_or_jump(dw_arena *a, jmp_buf *oom, const char *fmt, va_list ap)
{
    char *s = dw_arena_vprintf(a, fmt, ap);
    if (!s) longjmp(*oom, 1);
    return s;
}

char *dw_arena_printf_or_jump(dw_arena *a, jmp_buf *oom, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = dw_arena_vprintf_or_jump(a, oom, fmt, ap);
    va_end(ap);
    return s;
}

void dw_arena_reset_blocks(dw_arena *a)
{
    dw_arena_block *b = a->head, *keep = NULL;
    /* keep the last (oldest, standard-sized) block */
    while (b) {
        dw_arena_block *next = b->next;
        if (!next && b->size == a->block_size) { keep = b; break; }
        free(b);
        b = next;
    }
    if (keep) keep->used = 0;
    a->head = keep;
    a->used_total = 0;
}

void dw_arena_free(dw_arena *a)
{
    dw_arena_block *b = a->head;
    while (b) { dw_arena_block *n = b->next; free(b); b = n; }
    a->head = NULL;
    a->used_total = 0;
}

int dw_buf_reserve(dw_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

int dw_buf_append(dw_buf *b, const void *p, size_t n)
{
    if (dw_buf_reserve(b, n)) return -1;
    if (n) memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = 0;
    return 0;
}

int dw_buf_putc(dw_buf *b, char c) { return dw_buf_append(b, &c, 1); }

int dw_buf_printf(dw_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || dw_buf_reserve(b, (size_t)n)) return -1;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

void dw_buf_free(dw_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}
