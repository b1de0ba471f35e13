/* stdlib/arena.h: the inline allocation and reset (the newest block has
 * room; the arena is one standard block) against what the out-of-line
 * paths do: every piece 16-byte aligned, distinct and intact, oversized
 * pieces in blocks of their own behind the current one, a reset keeping
 * exactly one standard block, used_total counting rounded sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include "stdlib/arena.h"

static size_t nblocks(const dw_arena *a)
{
    size_t n = 0;
    for (const dw_arena_block *b = a->head; b; b = b->next) n++;
    return n;
}

static void test_alloc_and_reset(void **state)
{
    (void)state;
    dw_arena a;
    dw_arena_init(&a, 1024);
    uint32_t seed = 7;
    for (int round = 0; round < 50; round++) {
        unsigned char *piece[200];
        size_t len[200], total = 0;
        for (int i = 0; i < 200; i++) {
            seed = seed * 1103515245u + 12345u;
            len[i] = (seed >> 16) % (i % 17 == 0 ? 3000 : 200);    /* some past the block size, some 0 */
            piece[i] = dw_arena_alloc_raw(&a, len[i]);
            assert_non_null(piece[i]);
            assert_int_equal((uintptr_t)piece[i] % 16, 0);
            memset(piece[i], i, len[i]);
            total += len[i] ? (len[i] + 15) & ~(size_t)15 : 16;
            assert_int_equal(a.used_total, total);
            assert_true(a.head->size >= a.head->used);
        }
        for (int i = 0; i < 200; i++)
            for (size_t k = 0; k < len[i]; k++)
                if (piece[i][k] != (unsigned char)i) fail_msg("round %d: piece %d overwritten at %zu", round, i, k);
        /* zeroed allocation still zeroes */
        unsigned char *z = dw_arena_alloc(&a, 100);
        for (int k = 0; k < 100; k++) assert_int_equal(z[k], 0);
        dw_arena_reset(&a);        /* keeps the oldest block if it is a standard one */
        assert_true(nblocks(&a) <= 1);
        assert_true(!a.head || (a.head->size == 1024 && a.head->used == 0));
        assert_int_equal(a.used_total, 0);
        assert_non_null(dw_arena_alloc_raw(&a, 8));
        dw_arena_reset(&a);        /* the inline case: one standard block */
        assert_int_equal(nblocks(&a), 1);
        assert_int_equal(a.head->used, 0);
    }
    dw_arena_free(&a);
    /* a reset of an arena whose only block is oversized keeps none */
    dw_arena_init(&a, 64);
    assert_non_null(dw_arena_alloc_raw(&a, 4096));
    dw_arena_reset(&a);
    assert_null(a.head);
    assert_non_null(dw_arena_alloc_raw(&a, 8));
    assert_int_equal(a.head->size, 64);
    dw_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_alloc_and_reset) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
