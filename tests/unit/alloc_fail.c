/* alloc_fail.c - see alloc_fail.h.  The wrapped functions forward to the
 * real allocator (__real_*: the C library's, or AddressSanitizer's, which
 * keeps working under the ASan build). */
#include "alloc_fail.h"
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static atomic_long countdown = -1;      /* < 0: disarmed */
static atomic_bool persist, fired;

void dw_test_fail_alloc_after(long n, bool persistent)
{
    fired = false;
    persist = persistent;
    countdown = n;
}

bool dw_test_alloc_disarm(void)
{
    countdown = -1;
    return fired;
}

static bool fail_now(void)
{
    long c = atomic_load(&countdown);
    while (c >= 0) {
        long next = c > 0 ? c - 1 : (persist ? 0 : -1);
        if (atomic_compare_exchange_weak(&countdown, &c, next)) {
            if (c) return false;
            fired = true;
            errno = ENOMEM;
            return true;
        }
    }
    return false;
}

void *__wrap_malloc(size_t n) { return fail_now() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { return fail_now() ? NULL : __real_calloc(n, m); }
void *__wrap_realloc(void *p, size_t n) { return fail_now() ? NULL : __real_realloc(p, n); }

char *__wrap_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *d = fail_now() ? NULL : __real_malloc(len + 1);
    if (!d) return NULL;
    memcpy(d, s, len);
    d[len] = 0;
    return d;
}

char *__wrap_strdup(const char *s) { return __wrap_strndup(s, strlen(s)); }
