/* load_bench.c - time loading a compiled artifact: read, checksum, verify
 * (every operand, jump, stack bound, temporal table and index entry) and
 * prepare (interning, index probe table, condition guards).  Prints the best of
 * 20 runs, in ms, as key=value lines.  Usage: load_bench FILE.dwb */
#include <stdio.h>
#include "tests/bench/bench_util.h"
#include "vm/artifact.h"
#include "vm/program.h"
int main(int argc, char **argv)
{
    if (argc != 2) { fprintf(stderr, "usage: load_bench FILE.dwb\n"); return 2; }
    double best = 1e9;
    for (int i = 0; i < 20; i++) {
        char msg[256];
        uint64_t t0 = bench_now_ns();
        dw_program *p = dw_artifact_load_file(argv[1], msg, sizeof msg);
        uint64_t t1 = bench_now_ns();
        if (!p) { printf("refused: %s\n", msg); return 1; }
        dw_program_free(p);
        double ms = (double)(t1 - t0) / 1e6;
        if (ms < best) best = ms;
    }
    printf("artifact=%s\nload_verify_ms=%.2f\n", argv[1], best);
    return 0;
}
