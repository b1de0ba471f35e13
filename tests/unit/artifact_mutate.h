/* artifact_mutate.h - what the hostile-artifact tests share
 * (tests/unit/test_artifact.c, one policy's and the temporal artifacts'
 * mutants, and tests/unit/test_artifact_corpus.c, the corpus campaign):
 * resealing a mutant (size and checksum recomputed, so the structural checks
 * and the verifier see it), writing a file, and silencing the diagnostics
 * refused inputs are expected to print. */
#ifndef DW_TEST_ARTIFACT_MUTATE_H
#define DW_TEST_ARTIFACT_MUTATE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>
#include "vm/artifact_format.h"

static inline void reseal(uint8_t *b, size_t n)
{
    if (n < DW_ARTIFACT_HEADER) return;
    uint64_t sz = n;
    memcpy(b + 16, &sz, 8);
    uint64_t sum = XXH3_64bits_withSeed(b + 32, n - 32, XXH3_64bits(b, 16));
    memcpy(b + 24, &sum, 8);
}

static inline void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    fclose(f);
}

/* Diagnostics of refused inputs are expected: silence them. */
static inline FILE *mute_stderr(void)
{
    FILE *saved = stderr;
    stderr = fopen("/dev/null", "w");
    return saved;
}

static inline void unmute_stderr(FILE *saved)
{
    fclose(stderr);
    stderr = saved;
}

#endif
