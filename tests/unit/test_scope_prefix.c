/* The index's scope skip (vm/scope_prefix.c): a candidate starts after its
 * scope tests only when the bucket that found it was probed with the
 * request's own uid and that key makes every one of those tests true.
 * Checked twice: which postings carry DW_IX_IMPLIED for given requests
 * (groups reached through an ancestor, `in` an entity, principal/resource
 * scopes, `is`), and that decisions with the skip equal those of every
 * policy run whole, errors included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/compile.h"
#include "vm/vm.h"
#include "unit_compile.h"
#include "unit_request.h"

static const char *POLICIES =
    "permit (principal, action == Action::\"read\", resource) when { context.n > 1 };\n"                 /* 0 */
    "permit (principal, action in [Action::\"read\", Action::\"write\"], resource) when { context.n > 2 };\n" /* 1 */
    "permit (principal, action in Action::\"all\", resource) when { context.n > 3 };\n"                 /* 2 */
    "permit (principal == User::\"u\", action == Action::\"read\", resource) when { context.n > 4 };\n"  /* 3 */
    "permit (principal in Group::\"g\", action, resource) when { context.n > 5 };\n"                     /* 4 */
    "permit (principal, action, resource is Doc) when { context.n > 6 };\n"                              /* 5 */
    "permit (principal, action == Action::\"read\", resource is Doc in Folder::\"f\") when { context.n > 7 };\n" /* 6 */
    "forbid (principal is User, action == Action::\"write\", resource) when { context.n > 8 };\n"        /* 7 */
    "permit (principal == User::\"u\", action, resource == Doc::\"d\") when { context.n > 9 };\n";       /* 8 */
#define NPOL 9

static const char *ENTITIES =
    "[{\"uid\":{\"type\":\"User\",\"id\":\"u\"},\"attrs\":{},\"parents\":[{\"type\":\"Group\",\"id\":\"g\"}]},"
    " {\"uid\":{\"type\":\"Group\",\"id\":\"g\"},\"attrs\":{},\"parents\":[]},"
    " {\"uid\":{\"type\":\"Action\",\"id\":\"read\"},\"attrs\":{},\"parents\":[{\"type\":\"Action\",\"id\":\"all\"}]},"
    " {\"uid\":{\"type\":\"Action\",\"id\":\"write\"},\"attrs\":{},\"parents\":[{\"type\":\"Action\",\"id\":\"all\"}]},"
    " {\"uid\":{\"type\":\"Action\",\"id\":\"all\"},\"attrs\":{},\"parents\":[]},"
    " {\"uid\":{\"type\":\"Doc\",\"id\":\"d\"},\"attrs\":{},\"parents\":[{\"type\":\"Folder\",\"id\":\"f\"}]},"
    " {\"uid\":{\"type\":\"Folder\",\"id\":\"f\"},\"attrs\":{},\"parents\":[]}]";

typedef struct fixture { dw_program *prog; dw_store st; dw_arena a, s1, s2; } fixture;

static void setup(fixture *f)
{
    f->prog = unit_compile("scope.cedar", POLICIES);
    dw_arena_init(&f->a, 4096);
    dw_arena_init(&f->s1, 64 * 1024);
    dw_arena_init(&f->s2, 64 * 1024);
    unit_store_json(&f->st, ENTITIES);
}

static void teardown(fixture *f)
{
    dw_arena_free(&f->a);
    dw_arena_free(&f->s1);
    dw_arena_free(&f->s2);
    dw_store_free(&f->st);
    dw_program_free(f->prog);
}

static void make_request(fixture *f, const char *p, const char *a, const char *r, const char *ctx, dw_request *req)
{
    char rq[512];
    snprintf(rq, sizeof rq, "{\"principal\":%s,\"action\":{\"type\":\"Action\",\"id\":\"%s\"},\"resource\":%s,\"context\":%s}",
             p, a, r, ctx);
    unit_request_json(&f->a, f->prog, &f->st, rq, req);
}

/* The candidates of a request as two masks: found, and found with the skip. */
static void candidates(fixture *f, const dw_request *req, unsigned *found, unsigned *implied)
{
    dw_candidates c;
    dw_arena_reset(&f->s1);
    assert_int_equal(dw_index_candidates(f->prog, &f->st, req, &f->s1, &c), 0);
    assert_non_null(c.v);     /* with an index: a list, even an empty one (NULL would mean every policy) */
    *found = *implied = 0;
    for (uint32_t k = 0; k < c.n; k++) {
        uint32_t p = DW_IX_POLICY(c.v[k]);
        if (k) assert_true(DW_IX_POLICY(c.v[k - 1]) < p);       /* ascending, distinct */
        *found |= 1u << p;
        if (c.v[k] & DW_IX_IMPLIED) *implied |= 1u << p;
    }
}

#define B(i) (1u << (i))
static const char *U = "{\"type\":\"User\",\"id\":\"u\"}", *G = "{\"type\":\"Group\",\"id\":\"g\"}",
                  *V = "{\"type\":\"User\",\"id\":\"v\"}", *D = "{\"type\":\"Doc\",\"id\":\"d\"}",
                  *F = "{\"type\":\"Folder\",\"id\":\"f\"}";

static void test_skip_only_when_implied(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    for (uint32_t i = 0; i < NPOL; i++) assert_true(f.prog->index.body[i] > f.prog->policies[i].entry);
    dw_request req;
    unsigned found, implied;

    /* read by u on d: action read exactly (0, 1 skip); `in Action::"all"` reached
     * through read's parent (2 runs whole); principal == u && action == read
     * (3: a PAIR or a one-variable bucket, skipped only if its key covers both);
     * u in g through u's parent (4 whole); resource is Doc (5 skips: the type
     * bucket); 6 `is Doc in f` (the `in` goes through d's parent: whole) */
    make_request(&f, U, "read", D, "{\"n\":100}", &req);
    candidates(&f, &req, &found, &implied);
    assert_int_equal(found, B(0) | B(1) | B(2) | B(3) | B(4) | B(5) | B(6) | B(7) | B(8));
    assert_int_equal(implied & (B(0) | B(1) | B(2) | B(4) | B(6) | B(7)), B(0) | B(1));
    assert_true(implied & B(5));
    /* 7 came through `principal is User`, which says nothing of its action test;
     * 8 through resource == d, which says nothing of principal == u */
    assert_false(implied & B(8));
    assert_true(implied & B(3));      /* the PAIR (read, u) holds both of its tests */

    /* write: 1 skips through its second key, 7 (`principal is User` &&
     * action == write) only if the bucket's key implies both tests */
    make_request(&f, U, "write", D, "{\"n\":100}", &req);
    candidates(&f, &req, &found, &implied);
    assert_true(found & B(1) && found & B(7) && !(found & B(0)));
    assert_true(implied & B(1));
    assert_false(implied & B(2));

    /* the group and the folder themselves: now the `in` tests' keys are the
     * request's own uids (policy 4 with principal g, policy 2 with action all) */
    make_request(&f, G, "all", F, "{\"n\":100}", &req);
    candidates(&f, &req, &found, &implied);
    assert_true(found & B(2) && found & B(4));
    assert_true(implied & B(2));
    assert_true(implied & B(4));
    assert_false(found & B(0));

    /* another user: 3 and 4 are not candidates; 8 is, through resource == d,
     * and must test its principal */
    make_request(&f, V, "read", D, "{\"n\":100}", &req);
    candidates(&f, &req, &found, &implied);
    assert_false(found & (B(3) | B(4)));
    assert_true(found & B(8));
    assert_false(implied & B(8));
    teardown(&f);
}

/* A temporal rule's scope-only code (what the leaf pass runs) must be implied
 * too; then the leaf pass takes the scope as true and the decision skips it. */
static void test_skip_with_scope_code(void **state)
{
    (void)state;
    fixture f;
    f.prog = unit_compile("temporal.dw",
        "forbid (principal, action == Action::\"write\", resource) when temporal { formerly within 1h Action::\"write\"::request{} };\n"
        "forbid (principal == User::\"u\", action, resource is Doc) when temporal { formerly within 1h Action::\"write\"::request{} };\n"
        "forbid (principal, action in [Action::\"write\", Action::\"read\"], resource is Doc) when temporal { formerly within 1h Action::\"read\"::request{} };\n");
    dw_store_init(&f.st);
    dw_arena_init(&f.a, 4096);
    dw_arena_init(&f.s1, 64 * 1024);
    dw_arena_init(&f.s2, 64 * 1024);
    for (uint32_t i = 0; i < 3; i++) assert_true(f.prog->policies[i].nleaves == 1 && f.prog->policies[i].scope_end > f.prog->policies[i].scope_entry);
    dw_request req;
    unsigned found, implied;
    make_request(&f, U, "write", D, "{}", &req);
    candidates(&f, &req, &found, &implied);
    assert_int_equal(found, B(0) | B(1) | B(2));
    assert_true(implied & B(0));
    assert_false(implied & B(1));     /* filed under principal u: `resource is Doc` still runs */
    assert_false(implied & B(2));     /* under the action, or Doc: never both */
    teardown(&f);
}

static void test_skip_never_changes_answers(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    const char *ps[] = { "{\"type\":\"User\",\"id\":\"u\"}", "{\"type\":\"User\",\"id\":\"v\"}", "{\"type\":\"Group\",\"id\":\"g\"}",
                         "{\"type\":\"Doc\",\"id\":\"d\"}" };
    const char *as[] = { "read", "write", "all", "other" };
    const char *rs[] = { "{\"type\":\"Doc\",\"id\":\"d\"}", "{\"type\":\"Doc\",\"id\":\"e\"}", "{\"type\":\"Folder\",\"id\":\"f\"}",
                         "{\"type\":\"User\",\"id\":\"u\"}" };
    const char *cs[] = { "{\"n\":0}", "{\"n\":5}", "{\"n\":100}", "{}", "{\"n\":\"x\"}" };
    uint32_t skipped = 0;
    for (size_t p = 0; p < 4; p++)
        for (size_t a = 0; a < 4; a++)
            for (size_t r = 0; r < 4; r++)
                for (size_t c = 0; c < 5; c++) {
                    dw_request req;
                    make_request(&f, ps[p], as[a], rs[r], cs[c], &req);
                    dw_response with, without;
                    dw_arena_reset(&f.s1);
                    dw_arena_reset(&f.s2);
                    assert_int_equal(dw_authorize(f.prog, &f.st, &req, &f.s1, &with), 0);
                    assert_int_equal(dw_authorize_all(f.prog, &f.st, &req, &f.s2, &without), 0);
                    assert_int_equal(with.allow, without.allow);
                    assert_int_equal(with.ndetermining, without.ndetermining);
                    for (uint32_t k = 0; k < with.ndetermining; k++) assert_int_equal(with.determining[k], without.determining[k]);
                    assert_int_equal(with.nerrors, without.nerrors);
                    for (uint32_t e = 0; e < with.nerrors; e++) {
                        assert_int_equal(with.errors[e].policy, without.errors[e].policy);
                        assert_int_equal(with.errors[e].status, without.errors[e].status);
                    }
                    unsigned found, implied;
                    candidates(&f, &req, &found, &implied);
                    skipped += (uint32_t)__builtin_popcount(implied);
                }
    assert_true(skipped > 0);
    teardown(&f);
}

static bool uid_spelt(const dw_uid *u, const dw_str *type, const dw_str *id)
{
    return u && u->tlen == type->len && u->idlen == id->len && !memcmp(u->type, type->s, type->len) && !memcmp(u->id, id->s, id->len);
}

/* ENTITY and PAIR buckets point at the program's interned uids of their keys
 * (a bound request's scope uids then match them by pointer). */
static void test_buckets_link_interned_uids(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    uint32_t pairs = 0;
    for (uint32_t i = 0; i < f.prog->index.nbuckets; i++) {
        const dw_index_bucket *b = &f.prog->index.buckets[i];
        if (b->kind != DW_IX_ENTITY && b->kind != DW_IX_PAIR) continue;
        assert_true(uid_spelt(b->uid, &b->type, &b->id));
        assert_ptr_equal(b->uid, dw_program_find_uid(f.prog, b->uid));
        if (b->kind != DW_IX_PAIR) continue;
        pairs++;
        assert_true(uid_spelt(b->auid, &b->atype, &b->aid));
        assert_ptr_equal(b->auid, dw_program_find_uid(f.prog, b->auid));
    }
    assert_true(pairs > 0);
    teardown(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skip_only_when_implied),
        cmocka_unit_test(test_skip_with_scope_code),
        cmocka_unit_test(test_skip_never_changes_answers),
        cmocka_unit_test(test_buckets_link_interned_uids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
