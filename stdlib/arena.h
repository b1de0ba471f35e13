/* arena.h - bump allocator used for every AST, schema, entity store and
 * per-decision scratch value.  One free per arena, so error paths never leak. */
#ifndef DW_ARENA_H
#define DW_ARENA_H
#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>
#include <setjmp.h>

typedef struct dw_arena_block dw_arena_block;
typedef struct dw_arena {
    dw_arena_block *head;   /* newest block first */
    size_t block_size;      /* default size of a fresh block */
    size_t used_total;      /* bytes handed out since init/reset (statistics) */
} dw_arena;

void  dw_arena_init(dw_arena *a, size_t block_size);
/* 16-byte aligned, zero-filled.  Returns NULL only when malloc fails. */
void *dw_arena_alloc(dw_arena *a, size_t n);
/* The same without zeroing, for scratch the caller fills before reading:
 * inline while the newest block has room (a decision's scratch, a reader's
 * values), dw_arena_alloc_block otherwise. */
struct dw_arena_block {
    dw_arena_block *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};
void *dw_arena_alloc_block(dw_arena *a, size_t n);    /* n: already rounded to 16 */
static inline void *dw_arena_alloc_raw(dw_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (n == 0) n = 16;
    dw_arena_block *b = a->head;
    if (__builtin_expect(!b || b->size - b->used < n, 0)) return dw_arena_alloc_block(a, n);
    void *p = b->data + b->used;
    b->used += n;
    a->used_total += n;
    return p;
}
/* Copy n bytes and append a NUL (the copy may itself contain NULs). */
char *dw_arena_memdup(dw_arena *a, const void *p, size_t n);
/* printf into the arena (NUL terminated).  NULL on OOM. */
char *dw_arena_vprintf(dw_arena *a, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
char *dw_arena_printf(dw_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same calls for whole passes (type checker, linter) that set one setjmp
 * at their entry: allocation failure longjmps to *oom instead of returning
 * NULL, so the pass has a single out-of-memory path.  alloc of 0 bytes
 * returns a valid 1-byte block. */
void *dw_arena_alloc_or_jump(dw_arena *a, size_t n, jmp_buf *oom);
char *dw_arena_vprintf_or_jump(dw_arena *a, jmp_buf *oom, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
char *dw_arena_printf_or_jump(dw_arena *a, jmp_buf *oom, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Keep the first block, drop the rest: cheap per-decision reset (inline
 * when the arena is that one block already). */
void  dw_arena_reset_blocks(dw_arena *a);
static inline void dw_arena_reset(dw_arena *a)
{
    dw_arena_block *b = a->head;
    if (!b) { a->used_total = 0; return; }          /* nothing was allocated (a decision may not) */
    if (!b->next && b->size == a->block_size) { b->used = 0; a->used_total = 0; return; }
    dw_arena_reset_blocks(a);
}
void  dw_arena_free(dw_arena *a);

/* Many small pieces carved from one arena block at a time (8-byte aligned,
 * not zeroed): a reader that builds many small values calls the arena once
 * per block, not once per value.  want: the size of a fresh block (at least
 * n is taken).  NULL on OOM. */
typedef struct dw_carve { char *cur, *lim; } dw_carve;
static inline void *dw_carve_take(dw_carve *c, dw_arena *a, size_t n, size_t want)
{
    n = (n + 7) & ~(size_t)7;
    if ((size_t)(c->lim - c->cur) < n) {
        if (want < n) want = n;
        char *b = (char *)dw_arena_alloc_raw(a, want);
        if (!b) return NULL;
        c->cur = b;
        c->lim = b + want;
    }
    void *r = c->cur;
    c->cur += n;
    return r;
}

/* Growable byte buffer (heap), for building strings of unknown length. */
typedef struct dw_buf { char *p; size_t len, cap; } dw_buf;
int  dw_buf_reserve(dw_buf *b, size_t extra);          /* 0 ok, -1 OOM */
int  dw_buf_append(dw_buf *b, const void *p, size_t n);
int  dw_buf_putc(dw_buf *b, char c);
int  dw_buf_printf(dw_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dw_buf_free(dw_buf *b);

#endif
