/* Hostile artifacts: byte flips, truncations and splices of compiled .dwb
 * files.  Each mutant is refused (checksum, bounds or verifier), or it loads
 * and decides exactly as the original.  Half the mutants get a recomputed
 * checksum so the structural checks and the verifier are exercised too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "compiler/artifact_write.h"
#include "compiler/compile.h"
#include "vm/artifact.h"
#include "vm/artifact_format.h"
#include "vm/vm.h"

static const char *policies =
    "@id(\"a\") permit (principal == User::\"alice\", action in [Action::\"view\", Action::\"edit\"], resource is Photo in Album::\"x\")\n"
    "  when { context.n + 1 > 3 && context.tags.contains(\"t\") && context.s like \"a*b\\*c\" };\n"
    "forbid (principal, action, resource) when { {a: [1, 2, {b: ip(\"10.0.0.1/8\")}], c: decimal(\"1.5\")} has a }\n"
    "  unless { if context.n == 7 then true else principal.dept == \"x\" };\n"
    "permit (principal, action, resource) when { datetime(\"2024-01-01\").offset(duration(\"1h\")) > datetime(\"2024-01-01\") || resource has owner };\n";

typedef struct fixture {
    dw_program *prog;
    dw_buf bytes;
    dw_store store;
    dw_request reqs[4];
    dw_arena arena;
    bool want_allow[4];
} fixture;

static void decide(const dw_program *p, fixture *f, int r, bool *allow, uint32_t *nerr)
{
    dw_arena scratch;
    dw_arena_init(&scratch, 4096);
    dw_response resp;
    if (dw_authorize(p, &f->store, &f->reqs[r], &scratch, &resp)) { *allow = false; *nerr = 0; }
    else { *allow = resp.allow; *nerr = resp.nerrors; }
    dw_arena_free(&scratch);
}

static dw_value ent(dw_arena *a, const char *t, const char *id)
{
    dw_value v = { .kind = DW_V_ENTITY };
    v.u.uid = dw_make_uid(a, t, strlen(t), id, strlen(id));
    return v;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    dw_source src = { "t.dw", policies, strlen(policies) };
    dw_diags d;
    dw_diags_init(&d);
    dw_policy_set *ps = dw_parse_policy_set(&src, &d);
    assert_non_null(ps);
    assert_int_equal(d.nerrors, 0);
    f->prog = dw_compile(ps, NULL, &d);
    assert_non_null(f->prog);
    dw_policy_set_free(ps);
    dw_diags_free(&d);
    assert_int_equal(dw_artifact_write(f->prog, 0, &f->bytes), 0);
    dw_store_init(&f->store);
    dw_store_seal(&f->store);
    dw_arena_init(&f->arena, 4096);
    for (int i = 0; i < 4; i++) {
        f->reqs[i].vars[0] = ent(&f->arena, "User", i ? "bob" : "alice");
        f->reqs[i].vars[1] = ent(&f->arena, "Action", i == 2 ? "edit" : "view");
        f->reqs[i].vars[2] = ent(&f->arena, "Photo", "p");
        dw_field *fl = dw_arena_alloc(&f->arena, 3 * sizeof *fl);
        fl[0] = (dw_field){ .key = "n", .klen = 1, .v = dw_long(i * 3) };
        dw_value *t = dw_arena_alloc(&f->arena, sizeof *t);
        dw_make_string(&f->arena, "t", 1, t);
        fl[1] = (dw_field){ .key = "tags", .klen = 4, .v = dw_make_set(t, 1) };
        dw_make_string(&f->arena, "a-b*c", 5, &fl[2].v);
        fl[2].key = "s"; fl[2].klen = 1;
        dw_make_record(fl, 3, &f->reqs[i].vars[3]);
        uint32_t ne;
        decide(f->prog, f, i, &f->want_allow[i], &ne);
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    dw_program_free(f->prog);
    dw_buf_free(&f->bytes);
    dw_store_free(&f->store);
    dw_arena_free(&f->arena);
    free(f);
    return 0;
}

static void reseal(uint8_t *b, size_t n)
{
    if (n < DW_ARTIFACT_HEADER) return;
    uint64_t sz = n;
    memcpy(b + 16, &sz, 8);
    uint64_t sum = XXH3_64bits_withSeed(b + 32, n - 32, XXH3_64bits(b, 16));
    memcpy(b + 24, &sum, 8);
}

static void test_original_loads(void **state)
{
    fixture *f = *state;
    char msg[256];
    dw_program *p = dw_artifact_load(f->bytes.p, f->bytes.len, msg, sizeof msg);
    assert_non_null(p);
    for (int r = 0; r < 4; r++) {
        bool allow;
        uint32_t ne;
        decide(p, f, r, &allow, &ne);
        assert_int_equal(allow, f->want_allow[r]);
    }
    dw_program_free(p);
    /* determinism: the same program serialises to the same bytes */
    dw_buf again = { 0 };
    assert_int_equal(dw_artifact_write(f->prog, 0, &again), 0);
    assert_int_equal(again.len, f->bytes.len);
    assert_memory_equal(again.p, f->bytes.p, again.len);
    dw_buf_free(&again);
}

static void test_mutations(void **state)
{
    fixture *f = *state;
    size_t n = f->bytes.len;
    uint8_t *m = malloc(n * 2);
    unsigned seed = 12345;
    size_t refused = 0, loaded = 0;
    for (int iter = 0; iter < 1000; iter++) {
        memcpy(m, f->bytes.p, n);
        size_t len = n;
        seed = seed * 1103515245u + 12345u;
        int kind = (int)(seed >> 16) % 3;
        if (kind == 0) {                       /* flip 1-4 bytes */
            int flips = 1 + (int)((seed >> 8) % 4);
            for (int k = 0; k < flips; k++) {
                seed = seed * 1103515245u + 12345u;
                m[(seed >> 8) % n] ^= (uint8_t)(1 + (seed >> 24) % 255);
            }
        } else if (kind == 1) {                /* truncate */
            len = (seed >> 8) % n;
        } else {                               /* splice: copy a run onto another place */
            seed = seed * 1103515245u + 12345u;
            size_t from = (seed >> 8) % n, to = (seed >> 4) % n, run = 1 + (seed >> 20) % 32;
            if (from + run > n) run = n - from;
            if (to + run > n) run = n - to;
            memmove(m + to, m + from, run);
        }
        if (iter % 2) reseal(m, len);
        char msg[256];
        dw_program *p = dw_artifact_load(m, len, msg, sizeof msg);
        if (!p) { refused++; continue; }
        loaded++;
        /* a program that verifies must run without crashing; a mutant that
         * only touched padding or unused bytes decides as the original */
        for (int r = 0; r < 4; r++) {
            bool allow;
            uint32_t ne;
            decide(p, f, r, &allow, &ne);
            /* with the original checksum, only a no-op mutation can load */
            if (iter % 2 == 0) assert_int_equal(allow, f->want_allow[r]);
        }
        dw_program_free(p);
    }
    free(m);
    assert_int_equal(refused + loaded, 1000);
    print_message("artifact mutations: %zu refused, %zu loaded and ran\n", refused, loaded);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_original_loads),
        cmocka_unit_test(test_mutations),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
