/* alloc_fail.h - allocation failure injection for tests (test-only: linked
 * into build/tests/test_engine_faults with -Wl,--wrap=malloc,... so that the
 * library's calls of the malloc family come here; never part of libdogwood
 * or its API). */
#ifndef DW_ALLOC_FAIL_H
#define DW_ALLOC_FAIL_H
#include <stdbool.h>

/* Arm: the n-th allocation from now (0-based) fails; with `persistent`,
 * every later one fails too (memory pressure), else only that one. */
void dw_test_fail_alloc_after(long n, bool persistent);
/* Disarm; true if some allocation was failed since arming. */
bool dw_test_alloc_disarm(void);

#endif
