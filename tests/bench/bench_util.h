/* bench_util.h - timing and percentiles shared by the benchmark programs in
 * tests/bench/ (figures only, never pass/fail).  Percentiles are nearest-rank
 * over an array the caller has sorted with bench_cmp_u64 / bench_cmp_u32. */
#ifndef DW_BENCH_UTIL_H
#define DW_BENCH_UTIL_H
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The value of option --opt as a number in [lo, hi] (whole when integer), or
 * exit 2 saying what was wanted: a mistyped figure must not run a benchmark
 * that measures something else. */
static inline double bench_option_number(const char *prog, const char *opt, const char *s, double lo, double hi, bool integer)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !(v >= lo && v <= hi) || (integer && v != (double)(long long)v)) {
        fprintf(stderr, "%s: --%s wants %s from %g to %g, not `%s`\n", prog, opt, integer ? "a whole number" : "a number", lo, hi, s);
        exit(2);
    }
    return v;
}

static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline int bench_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static inline int bench_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static inline size_t bench_rank(size_t n, double p) { return (size_t)(p * (double)(n - 1) + 0.5); }

/* The p-quantile of n sorted nanosecond samples, in microseconds (NaN when n is 0). */
static inline double bench_pct_us_u64(const uint64_t *v, size_t n, double p)
{
    return n ? (double)v[bench_rank(n, p)] / 1000.0 : NAN;
}
static inline double bench_pct_us_u32(const uint32_t *v, size_t n, double p)
{
    return n ? (double)v[bench_rank(n, p)] / 1000.0 : NAN;
}

#endif
