/* test_leaf_pass.c - the leaf pass's two walks (vm/leaves.c) answer alike.
 * Given the policies with leaves (dw_leaf_env.leaf_policies, as the engine
 * passes them) the pass looks each of them up among the candidates; without
 * the list it walks every candidate.  For every request of a grid, over a
 * history with and without an earlier write, both must leave the same
 * candidates (dropped: those with leaves whose scope excludes the request),
 * the same leaf values and the same fault, and the whole decision
 * (dw_authorize_leaves) the same verdict, determining policies, errors and
 * count of policies run.  The pass is also run on every list shape it can
 * be handed: no index (every policy), a borrowed list (keep drops the
 * IMPLIED bits), an owned one (rewritten in place). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/compile.h"
#include "vm/leaves.h"
#include "vm/vm.h"
#include "unit_compile.h"
#include "unit_request.h"

#define LEAF(what) " when temporal { formerly within 1h A::Action::\"" what "\"::request{} }"
static const char *POLICIES =
    "permit (principal, action, resource);\n"                                                  /* 0 */
    "forbid (principal == U::\"alice\", action, resource is Q)" LEAF("write") ";\n"            /* 1: `is Q` left to the scope test */
    "permit (principal == U::\"alice\", action == A::Action::\"read\", resource);\n"           /* 2 */
    "forbid (principal, action == A::Action::\"read\", resource)" LEAF("write") ";\n"          /* 3: the index implies it */
    "forbid (principal, action, resource is R)" LEAF("read") ";\n"                             /* 4 */
    "forbid (principal == U::\"bob\", action, resource) when { context.x == 1 };\n"            /* 5 */
    "forbid (principal in G::\"g\", action, resource is Q)" LEAF("read") ";\n"                 /* 6: through an ancestor */
    "permit (principal, action == A::Action::\"write\", resource) when { context.x == 2 };\n"; /* 7 */

static const char *ENTITIES =
    "[{\"uid\":{\"type\":\"U\",\"id\":\"carol\"},\"attrs\":{},\"parents\":[{\"type\":\"G\",\"id\":\"g\"}]},"
    " {\"uid\":{\"type\":\"G\",\"id\":\"g\"},\"attrs\":{},\"parents\":[]}]";

typedef struct fixture {
    dw_program *prog; dw_store st; dw_arena a, s;
    uint32_t lp[16], nlp;
    dw_event hist[2];
} fixture;

static void setup(fixture *f)
{
    f->prog = unit_compile("leafpass.dw", POLICIES);
    unit_store_json(&f->st, ENTITIES);
    dw_arena_init(&f->a, 64 * 1024);
    dw_arena_init(&f->s, 64 * 1024);
    f->nlp = 0;
    for (uint32_t i = 0; i < f->prog->npolicies; i++)
        if (f->prog->policies[i].nleaves) f->lp[f->nlp++] = i;
    assert_int_equal(f->nlp, 4);
}

static void teardown(fixture *f)
{
    dw_arena_free(&f->a);
    dw_arena_free(&f->s);
    dw_store_free(&f->st);
    dw_program_free(f->prog);
}

static dw_event event(const char *action, int64_t ts)
{
    return (dw_event){ .ts = ts, .atype = { "A::Action", 9 }, .aid = { action, strlen(action) }, .kind = { "request", 7 },
                       .logged = { .kind = DW_V_RECORD } };
}

/* What one pass left: the candidates (posting values, IMPLIED as it reads
 * them), the leaf values (NULL read as all "not evaluated") and the fault. */
typedef struct outcome { int rc; dw_leaf_fault fault; uint32_t post[32], n; uint8_t vals[16]; } outcome;

static void run_pass(fixture *f, dw_request *req, const dw_leaf_env *env, const dw_postings *in, uint32_t *buf, outcome *o)
{
    dw_postings c = *in;
    memset(o, 0, sizeof *o);
    o->rc = dw_eval_leaves(f->prog, &f->st, req, env, &f->s, &c, &o->fault);
    o->n = c.n;
    assert_true(c.n <= 32);
    for (uint32_t k = 0; k < c.n; k++) o->post[k] = c.v ? c.v[k] & c.keep : k << 1;
    uint32_t nl = f->prog->temporal.nleaves;
    for (uint32_t l = 0; l < nl; l++) o->vals[l] = req->leaf_values && l < req->nleaf_values ? req->leaf_values[l] : 2;
    (void)buf;
}

static void same_outcome(const outcome *a, const outcome *b, const char *what)
{
    if (a->rc != b->rc || a->fault.err != b->fault.err || a->fault.policy != b->fault.policy || a->n != b->n ||
        memcmp(a->post, b->post, a->n * sizeof *a->post) || memcmp(a->vals, b->vals, sizeof a->vals))
        fail_msg("%s: the two walks differ (rc %d/%d, n %u/%u)", what, a->rc, b->rc, a->n, b->n);
}

static void same_response(const dw_response *a, const dw_response *b, const char *what)
{
    if (a->allow != b->allow || a->ndetermining != b->ndetermining || a->nerrors != b->nerrors || a->evaluated != b->evaluated)
        fail_msg("%s: the two decisions differ", what);
    for (uint32_t k = 0; k < a->ndetermining; k++) assert_int_equal(a->determining[k], b->determining[k]);
    for (uint32_t k = 0; k < a->nerrors; k++) assert_int_equal(a->errors[k].policy, b->errors[k].policy);
}

static void test_walks_agree(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    static const char *principals[] = { "alice", "bob", "carol", "dave" };
    static const char *actions[] = { "read", "write", "list" };
    static const char *rtypes[] = { "Q", "R", "S" };
    unsigned drops = 0, found = 0;
    for (int h = 0; h < 2; h++)
        for (size_t pi = 0; pi < 4; pi++)
            for (size_t ai = 0; ai < 3; ai++)
                for (size_t ri = 0; ri < 3; ri++)
                    for (int x = 0; x < 3; x++) {
                        char rq[512], what[128];
                        snprintf(rq, sizeof rq,
                                 "{\"principal\":{\"type\":\"U\",\"id\":\"%s\"},\"action\":{\"type\":\"A::Action\",\"id\":\"%s\"},"
                                 "\"resource\":{\"type\":\"%s\",\"id\":\"x\"},\"context\":{\"x\":%d}}",
                                 principals[pi], actions[ai], rtypes[ri], x);
                        snprintf(what, sizeof what, "%s %s %s x=%d history %d", principals[pi], actions[ai], rtypes[ri], x, h);
                        dw_arena_reset(&f.a);
                        dw_request req;
                        unit_request_json(&f.a, f.prog, &f.st, rq, &req);
                        /* history: an earlier write (h 1), then the decision's own event */
                        uint32_t nh = 0;
                        if (h) f.hist[nh++] = event("write", 1000);
                        f.hist[nh++] = event(actions[ai], 2000);
                        dw_leaf_env with = { .hist = f.hist, .nhist = nh, .ticks_per_second = 1000000000,
                                             .work_bound = 1000000, .leaf_policies = f.lp, .nleaf_policies = f.nlp };
                        dw_leaf_env without = with;
                        without.leaf_policies = NULL;
                        without.nleaf_policies = 0;

                        /* the whole decision */
                        dw_response ra, rb;
                        dw_leaf_fault fa, fb;
                        dw_arena_reset(&f.s);
                        int a = dw_authorize_leaves(f.prog, &f.st, &req, &with, &f.s, &ra, &fa);
                        dw_request req2 = req;
                        int b = dw_authorize_leaves(f.prog, &f.st, &req2, &without, &f.s, &rb, &fb);
                        assert_int_equal(a, 0);
                        assert_int_equal(b, 0);
                        same_response(&ra, &rb, what);

                        /* the pass alone, on each list shape */
                        uint32_t n = f.prog->npolicies, all[32], own[32];
                        for (uint32_t i = 0; i < n; i++) all[i] = i << 1 | DW_IX_IMPLIED;   /* keep clears it */
                        dw_postings shapes[3] = {
                            { .v = NULL, .n = n, .keep = ~0u },
                            { .v = all, .n = n, .keep = ~DW_IX_IMPLIED },
                            { .v = own, .n = n, .keep = ~0u, .owned = true },
                        };
                        for (int sh = 0; sh < 3; sh++) {
                            outcome oa, ob;
                            for (uint32_t i = 0; i < n; i++) own[i] = i << 1;
                            run_pass(&f, &req, &with, &shapes[sh], own, &oa);
                            for (uint32_t i = 0; i < n; i++) own[i] = i << 1;
                            run_pass(&f, &req, &without, &shapes[sh], own, &ob);
                            same_outcome(&oa, &ob, what);
                            assert_int_equal(oa.rc, 0);
                            drops += oa.n < n;
                            for (uint32_t l = 0; l < f.prog->temporal.nleaves; l++) found += oa.vals[l] == 1;
                        }
                    }
    assert_true(drops > 0);          /* some scope excluded a request: the rewrite ran */
    assert_true(found > 0);          /* some leaf held */
    teardown(&f);
}

/* A pass that fails (no decision event) fails alike both ways. */
static void test_fault_alike(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    dw_request req;
    unit_request_json(&f.a, f.prog, &f.st,
                      "{\"principal\":{\"type\":\"U\",\"id\":\"alice\"},\"action\":{\"type\":\"A::Action\",\"id\":\"read\"},"
                      "\"resource\":{\"type\":\"Q\",\"id\":\"x\"},\"context\":{\"x\":0}}", &req);
    dw_leaf_env with = { .hist = f.hist, .nhist = 0, .ticks_per_second = 1000000000, .work_bound = 1000,
                         .leaf_policies = f.lp, .nleaf_policies = f.nlp };
    dw_leaf_env without = with;
    without.leaf_policies = NULL;
    outcome oa, ob;
    dw_postings all = { .v = NULL, .n = f.prog->npolicies, .keep = ~0u };
    run_pass(&f, &req, &with, &all, NULL, &oa);
    run_pass(&f, &req, &without, &all, NULL, &ob);
    same_outcome(&oa, &ob, "no history");
    assert_int_equal(oa.rc, -1);
    assert_int_equal(oa.fault.err, DW_LEAF_ETEVAL);
    teardown(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walks_agree),
        cmocka_unit_test(test_fault_alike),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
