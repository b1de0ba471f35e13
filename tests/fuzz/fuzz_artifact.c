/* libFuzzer target: the .dwb loader and verifier.  Inputs that pass both are
 * also run against a fixed request: a verified program must never crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "vm/artifact.h"
#include "vm/vm.h"
#include "vm/artifact_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char msg[256];
    /* Half of the inputs get a valid checksum so the fuzzer reaches past it. */
    uint8_t *copy = NULL;
    if (size >= DW_ARTIFACT_HEADER && (data[size - 1] & 1)) {
        copy = malloc(size);
        if (!copy) return 0;
        memcpy(copy, data, size);
        uint64_t sz = size;
        memcpy(copy + 16, &sz, 8);
        uint64_t sum = XXH3_64bits_withSeed(copy + 32, size - 32, XXH3_64bits(copy, 16));
        memcpy(copy + 24, &sum, 8);
        data = copy;
    }
    dw_program *p = dw_artifact_load(data, size, msg, sizeof msg);
    if (p) {
        dw_store st;
        dw_store_init(&st);
        dw_store_seal(&st);
        dw_arena scratch;
        dw_arena_init(&scratch, 4096);
        dw_request req;
        const dw_uid *u = dw_make_uid(&scratch, "User", 4, "alice", 5);
        for (int i = 0; i < 3; i++) { req.vars[i].kind = DW_V_ENTITY; req.vars[i].u.uid = u; }
        req.vars[3].kind = DW_V_RECORD;
        req.vars[3].n = 0;
        dw_response r;
        dw_authorize(p, &st, &req, &scratch, &r);
        dw_arena_free(&scratch);
        dw_store_free(&st);
        dw_program_free(p);
    }
    free(copy);
    return 0;
}
