/* libFuzzer target: the .dwb loader and verifier.  Inputs that pass both are
 * also run against a fixed request, and every temporal leaf is evaluated on a
 * small fixed history: a verified program must never crash.  Its serving
 * context (SERVE) goes through dwd's decoder (runtime/artifact_serve.h) and,
 * decoded, builds the store's schema actions as dwd's open does.
 * LLVMFuzzerInitialize seeds each corpus directory with a temporal artifact
 * (Box's request budget), compiled here so the seed never goes stale. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include "compiler/artifact_serve.h"
#include "compiler/artifact_write.h"
#include "runtime/artifact_serve.h"
#include "tests/fuzz/fuzz_seeds.h"
#include "runtime/load.h"
#include "vm/artifact.h"
#include "vm/artifact_format.h"
#include "stdlib/le.h"
#include "vm/teval.h"
#include "vm/vm.h"

static void seed_dir(const char *dir)
{
    struct stat st;
    char path[4096], src[64];
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) return;
    snprintf(path, sizeof path, "%s/seed-temporal.dwb", dir);
    if (stat(path, &st) == 0) return;
    snprintf(src, sizeof src, "/tmp/fuzz_artifact_seed_%d.dw", (int)getpid());
    FILE *f = fopen(src, "w");
    if (!f) return;
    fputs(dw_fuzz_box_policy, f);   /* Box's request budget */
    fclose(f);
    dw_session s;
    dw_session_init(&s);
    if (!dw_session_load_schema(&s, "box") && !dw_session_load_events(&s, NULL) && !dw_session_load_policies(&s, src)) {
        dw_buf b = { 0 };
        if (!dw_artifact_attach_serve(s.prog, s.schema, s.es, dw_session_events_digest(&s)) &&
            dw_artifact_write(s.prog, 0, &b) == 0 && (f = fopen(path, "wb"))) {
            fwrite(b.p, 1, b.len, f);
            fclose(f);
        }
        dw_buf_free(&b);
    }
    dw_session_free(&s);
    unlink(src);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    for (int i = 1; i < *argc; i++)
        if ((*argv)[i][0] != '-') seed_dir((*argv)[i]);
    return 0;
}

static void run_leaves(const dw_program *p, dw_arena *scratch)
{
    if (!p->temporal.nleaves) return;
    dw_field in = { .key = "host", .klen = 4 };
    dw_make_string(scratch, "api.github.com", 14, &in.v);
    dw_field lf = { .key = "input", .klen = 5 };
    dw_make_record(&in, 1, &lf.v);
    dw_event ev[3];
    const dw_event *evp[3];
    for (int i = 0; i < 3; i++) {
        ev[i].ts = i * 30;
        ev[i].atype = (dw_str){ "Box::Action", 11 };
        ev[i].aid = (dw_str){ "http:request", 12 };
        ev[i].kind = i == 1 ? (dw_str){ "response", 8 } : (dw_str){ "request", 7 };
        dw_make_record(&lf, 1, &ev[i].logged);
        evp[i] = &ev[i];
    }
    dw_history_view hv = { evp, 3, 1 };
    dw_tanchor an = { 0 };
    an.context.kind = DW_V_RECORD;
    an.principal_attrs.kind = an.resource_attrs.kind = DW_V_RECORD;
    for (uint32_t l = 0; l < p->temporal.nleaves; l++) {
        dw_teval_ctx tc = { .t = &p->temporal, .strs = p->strs, .nstrs = p->nstrs, .consts = p->consts,
                            .nconsts = p->nconsts, .h = &hv, .anchor = &an, .scratch = scratch, .budget = 100000 };
        bool holds;
        dw_teval_leaf(&tc, l, &holds);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char msg[256];
    /* Half of the inputs get a valid checksum and this build's instruction-set
     * digest so the fuzzer reaches past both (test_artifact checks the refusals). */
    uint8_t *copy = NULL;
    if (size >= DW_ARTIFACT_HEADER && (data[size - 1] & 1)) {
        copy = malloc(size);
        if (!copy) return 0;
        memcpy(copy, data, size);
        dw_put_le64(copy + 16, size);
        dw_put_le64(copy + 32, dw_isa_digest());
        dw_put_le64(copy + 24, XXH3_64bits_withSeed(copy + 32, size - 32, XXH3_64bits(copy, 16)));
        data = copy;
    }
    dw_program *p = dw_artifact_load(data, size, msg, sizeof msg);
    if (p) {
        dw_store st;
        dw_store_init(&st);
        dw_serve_ctx sc;
        if (p->serve_len && !dw_serve_decode(p->serve, p->serve_len, &sc, msg, sizeof msg)) {
            dw_buf berr = { 0 };
            dw_store_add_schema_actions(&st, sc.schema, &berr);
            dw_buf_free(&berr);
            dw_serve_ctx_free(&sc);
        }
        dw_store_seal(&st);
        dw_arena scratch;
        dw_arena_init(&scratch, 4096);
        dw_request req;
        memset(&req, 0, sizeof req);
        const dw_uid *u = dw_make_uid(&scratch, "User", 4, "alice", 5);
        for (int i = 0; i < 3; i++) { req.vars[i].kind = DW_V_ENTITY; req.vars[i].u.uid = u; }
        req.vars[3].kind = DW_V_RECORD;
        req.vars[3].n = 0;
        dw_response r;
        dw_authorize(p, &st, &req, &scratch, &r);
        run_leaves(p, &scratch);
        dw_arena_free(&scratch);
        dw_store_free(&st);
        dw_program_free(p);
    }
    free(copy);
    return 0;
}
