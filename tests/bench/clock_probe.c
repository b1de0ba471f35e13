/* clock_probe.c - the core clock a benchmark actually ran at: a chain of
 * dependent adds (one cycle each on every x86-64 core) timed against the
 * monotonic clock.  A cloud VM's cores run anywhere from their base clock to
 * their boost, and lose time to the host (steal), so the same binary's ns
 * figures differ by half between two machines of one kind, or two hours on
 * one: run.sh records this at the start and the end of a run.  Prints
 * clock_ghz=G (the best of 5 runs of 100M adds), or clock_ghz=n/a off x86-64.
 * Usage: clock_probe */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void)
{
#if defined(__x86_64__)
    double best = 0;
    for (int run = 0; run < 5; run++) {
        uint64_t x = 0, one = 1;
        double t0 = now_s();
        /* 8 dependent register adds a step (the loop's own cost overlaps them); not
         * `add $1`: newer Intel cores fold immediate adds at rename, several a cycle */
        for (long i = 0; i < 12500000; i++)
            __asm__ volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                             "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0" : "+r"(x) : "r"(one));
        double ghz = 1e8 / (now_s() - t0) / 1e9;
        if (x != 100000000ull) return 1;
        if (ghz > best) best = ghz;
    }
    printf("clock_ghz=%.2f\n", best);
#else
    printf("clock_ghz=n/a\n");
#endif
    return 0;
}
