/* authorize.c - Cedar's decision (dogwood.md §15.2): a satisfied forbid
 * denies; otherwise a satisfied permit allows; otherwise the implicit deny.
 * Erroring policies are skipped and reported.  Only the candidates the
 * decision index returns are run (program.h explains why that is sound). */
#include "vm.h"
#include <string.h>
#include "../stdlib/bytes.h"
#include "../stdlib/hot.h"

/* key: the probed uid (its type alone for a TYPE probe); by_ptr: it may be
 * the program's interned one.  Its fields are read only when the pointer
 * does not match. */
static inline __attribute__((always_inline)) const dw_index_bucket *probe(const dw_index *ix, uint8_t kind, uint8_t var, uint64_t hash,
                                           const dw_uid *key, bool by_ptr)
{
    uint32_t j = (uint32_t)hash & (ix->nslots - 1);
    while (ix->slots[j]) {
        const dw_index_bucket *b = &ix->buckets[ix->slots[j] - 1];
        if (b->hash == hash && b->kind == kind && b->var == var &&
            ((by_ptr && b->uid == key) ||
             (b->type.len == key->tlen && dw_mem_eq(b->type.s, key->type, key->tlen) &&
              (kind != DW_IX_ENTITY || (b->id.len == key->idlen && dw_mem_eq(b->id.s, key->id, key->idlen))))))
            return b;
        j = (j + 1) & (ix->nslots - 1);
    }
    return NULL;
}

static bool uid_is(const dw_str *t, const dw_str *i, const dw_uid *u)
{
    return t->len == u->tlen && i->len == u->idlen && dw_mem_eq(t->s, u->type, u->tlen) && dw_mem_eq(i->s, u->id, u->idlen);
}

DW_HOT static const dw_index_bucket *probe_pair(const dw_index *ix, uint8_t var, const dw_uid *a, const dw_uid *e)
{
    uint64_t hash = dw_index_pair_hash(var, a->hash, e->hash);
    uint32_t j = (uint32_t)hash & (ix->nslots - 1);
    while (ix->slots[j]) {
        const dw_index_bucket *b = &ix->buckets[ix->slots[j] - 1];
        if (b->hash == hash && b->kind == DW_IX_PAIR && b->var == var &&
            ((b->uid == e && b->auid == a && e) || (uid_is(&b->type, &b->id, e) && uid_is(&b->atype, &b->aid, a))))
            return b;
        j = (j + 1) & (ix->nslots - 1);
    }
    return NULL;
}

/* The candidate postings (policy << 1 | DW_IX_IMPLIED), each ANDed with
 * keep.  The first run is borrowed from the index as it is (most requests
 * find one bucket); a second one copies both into buf.  exact: the bucket
 * being added was probed with the request's own uid, so its IMPLIED bits hold. */
typedef struct cands {
    const uint32_t *v; uint32_t n, keep;
    uint32_t *buf; uint32_t cap;
    dw_arena *a; uint32_t runs; const dw_request *req; bool exact;
} cands;

static int cands_reserve(cands *c, uint32_t more)
{
    if (c->n + more <= c->cap) return 0;
    uint32_t cap = c->cap * 2 > c->n + more ? c->cap * 2 : c->n + more;
    if (cap < 32) cap = 32;
    uint32_t *v = dw_arena_alloc_raw(c->a, cap * sizeof *v);
    if (!v) return -1;
    if (c->n) memcpy(v, c->buf, c->n * sizeof *v);
    if (c->v == c->buf) c->v = v;
    c->buf = v;
    c->cap = cap;
    return 0;
}

static int add_more(cands *c, const uint32_t *run, uint32_t n);

static inline int add_ids_inline(cands *c, const uint32_t *run, uint32_t n)
{
    if (n == 0) return 0;
    if (c->runs++ == 0) {               /* borrowed: nothing copied */
        c->v = run;
        c->n = n;
        c->keep = c->exact ? ~0u : ~DW_IX_IMPLIED;
        return 0;
    }
    return add_more(c, run, n);
}

static int add_ids(void *ctx, const uint32_t *run, uint32_t n) { return add_ids_inline(ctx, run, n); }

static int add_more(cands *c, const uint32_t *run, uint32_t n)
{
    uint32_t keep = c->exact ? ~0u : ~DW_IX_IMPLIED;
    if (c->v != c->buf) {               /* the borrowed run goes to buf first */
        const uint32_t *v0 = c->v;
        uint32_t n0 = c->n, k0 = c->keep;
        c->n = 0;
        if (cands_reserve(c, n0 + n)) return -1;
        for (uint32_t i = 0; i < n0; i++) c->buf[i] = v0[i] & k0;
        c->n = n0;
        c->v = c->buf;
        c->keep = ~0u;
    } else if (cands_reserve(c, n)) return -1;
    uint32_t *d = c->buf + c->n;
    for (uint32_t i = 0; i < n; i++) d[i] = run[i] & keep;    /* runs are short: no memcpy call */
    c->n += n;
    return 0;
}

/* A bucket's policies: its whole run, or, when it has a condition guard and
 * the request's field is a String, only the runs that field can satisfy. */
static inline int add_run(cands *c, const dw_index *ix, const dw_index_bucket *b)
{
    if (!b) return 0;
    if (b->guard) {
        const dw_value *field = dw_guard_field(b->guard, c->req);
        if (field) return dw_guard_runs(b->guard, field, add_ids, c);
    }
    return add_ids_inline(c, ix->policies + b->first, b->n);
}

/* Candidate lists are usually short (insertion sort) but can hold hundreds of
 * policies (heapsort: no allocation, no recursion). */
static void sift(uint32_t *v, uint32_t i, uint32_t n)
{
    for (;;) {
        uint32_t l = 2 * i + 1, m = i;
        if (l < n && v[l] > v[m]) m = l;
        if (l + 1 < n && v[l + 1] > v[m]) m = l + 1;
        if (m == i) return;
        uint32_t t = v[i]; v[i] = v[m]; v[m] = t;
        i = m;
    }
}

static void sort_u32(uint32_t *v, uint32_t n)
{
    if (n <= 32) {
        for (uint32_t i = 1; i < n; i++) {
            uint32_t x = v[i], j = i;
            while (j > 0 && v[j - 1] > x) { v[j] = v[j - 1]; j--; }
            v[j] = x;
        }
        return;
    }
    for (uint32_t i = n / 2; i-- > 0;) sift(v, i, n);
    for (uint32_t e = n - 1; e > 0; e--) {
        uint32_t t = v[0]; v[0] = v[e]; v[e] = t;
        sift(v, 0, e);
    }
}

static uint64_t entity_key(uint8_t var, const dw_uid *u)
{
    return u->hash ^ ((uint64_t)(DW_IX_ENTITY * 4u + var + 1u) * 0x9E3779B97F4A7C15ull);
}

/* Candidates: ALWAYS, plus for each scope variable the buckets of its entity,
 * of every ancestor of it, and of its type.  Sorted ascending, no duplicates. */
static inline __attribute__((always_inline)) int candidates(const dw_program *prog, const dw_store *store, const dw_request *req, cands *c)
{
    const dw_index *ix = &prog->index;
    c->exact = true;
    if (ix->always_n) {
        if (add_ids(c, ix->policies + ix->always_first, ix->always_n)) return -1;
    }
    for (uint32_t vars = ix->probe_vars; vars; vars &= vars - 1) {
        uint8_t var = (uint8_t)__builtin_ctz(vars);
        const dw_value *v = &req->vars[var];
        if (v->kind != DW_V_ENTITY) continue;
        const dw_uid *u = v->u.uid;
        if (ix->has_entity[var]) {
            if (add_run(c, ix, probe(ix, DW_IX_ENTITY, var, entity_key(var, u), u, true))) return -1;
            const dw_entity *e = req->ent[var];
            if (e && e->nanc) {
                c->exact = false;          /* an ancestor's bucket: its scope tests still run */
                for (uint32_t k = 0; k < e->nanc; k++) {
                    const dw_uid *a = e->ancestors[k];
                    if (add_run(c, ix, probe(ix, DW_IX_ENTITY, var, entity_key(var, a), a, false))) return -1;
                }
                c->exact = true;
            }
        }
        if (ix->has_type[var]) {
            uint64_t h = dw_index_hash(DW_IX_TYPE, var, u->type, u->tlen, NULL, 0);
            if (add_run(c, ix, probe(ix, DW_IX_TYPE, var, h, u, false))) return -1;
        }
    }
    /* PAIR keys: the action or one of its groups, with the entity or one of its ancestors */
    const dw_value *act = &req->vars[DW_VAR_A];
    for (uint8_t var = 0; ix->any_pair && var < 3 && act->kind == DW_V_ENTITY; var += 2) {
        if (!ix->has_pair[var] || req->vars[var].kind != DW_V_ENTITY) continue;
        const dw_entity *ea = req->ent[DW_VAR_A], *ex = req->ent[var];
        uint32_t na = ea ? ea->nanc : 0, nx = ex ? ex->nanc : 0;
        for (uint32_t i = 0; i <= na; i++) {
            const dw_uid *a = i == 0 ? act->u.uid : ea->ancestors[i - 1];
            for (uint32_t k = 0; k <= nx; k++) {
                const dw_uid *x = k == 0 ? req->vars[var].u.uid : ex->ancestors[k - 1];
                c->exact = i == 0 && k == 0;
                if (add_run(c, ix, probe_pair(ix, var, a, x))) return -1;
            }
        }
    }
    if (c->runs <= 1) return 0;      /* one bucket: already ascending and distinct */
    uint32_t *v = c->buf;
    sort_u32(v, c->n);
    /* one posting per policy: implied if any bucket that found it implies its scope */
    uint32_t w = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        if (w && DW_IX_POLICY(v[w - 1]) == DW_IX_POLICY(v[i])) v[w - 1] |= v[i];
        else v[w++] = v[i];
    }
    c->n = w;
    return 0;
}

/* which: postings (each ANDed with keep), or NULL: policies 0 .. n-1.
 * Nothing is allocated unless it must be: the stack and the result lists
 * are on the C stack while they fit (the lists copied to scratch at the end
 * only when two or more policies determine; one points into index.self). */
static inline __attribute__((always_inline)) int decide(const dw_program *prog, const dw_store *store, const dw_request *req, dw_arena *scratch,
                  dw_response *resp, const uint32_t *which, uint32_t keep, uint32_t n)
{
    dw_value local[32], *stack = local;
    uint32_t lists[2 * 32], *permits = lists;
    if (prog->max_stack + 1 > 32 && !(stack = dw_arena_alloc_raw(scratch, (prog->max_stack + 1) * sizeof(dw_value)))) goto oom;
    if (n + 1 > 32 && !(permits = dw_arena_alloc_raw(scratch, 2 * (n + 1) * sizeof(uint32_t)))) goto oom;
    dw_policy_error *errs = NULL;
    uint32_t ne = 0;
    dw_attr_memo memo;
    memo.valid = 0;
    dw_eval_ctx cx = { .prog = prog, .store = store, .req = req, .scratch = scratch, .stack = stack, .memo = &memo };
    dw_eval_batch b = { .which = which, .keep = keep, .n = n, .permits = permits, .forbids = permits + (n + 1) };
    dw_eval_status st;
    while ((st = dw_eval_candidates(&cx, &b)) != DW_EVAL_OK) {
        if (st == DW_ERR_OOM) goto oom;
        if (!errs && !(errs = dw_arena_alloc_raw(scratch, (n + 1) * sizeof *errs))) goto oom;
        errs[ne].policy = b.pol;
        errs[ne].status = st;
        errs[ne].detail = cx.err_detail;
        ne++;
        b.k++;
    }
    uint32_t nd = b.nf ? b.nf : b.np;
    const uint32_t *d = b.nf ? b.forbids : permits;
    resp->allow = b.nf == 0 && b.np > 0;
    resp->ndetermining = nd;
    resp->errors = errs;                           /* NULL while nerrors is 0 */
    resp->nerrors = ne;
    resp->evaluated = n;
    if (nd <= 1) {
        static const uint32_t none[1];
        resp->determining = nd ? &prog->index.self[d[0]] : prog->index.self ? prog->index.self : none;
    } else if (permits != lists) resp->determining = d;
    else {
        uint32_t *v = dw_arena_alloc_raw(scratch, nd * sizeof *v);
        if (!v) goto oom;
        memcpy(v, d, nd * sizeof *v);
        resp->determining = v;
    }
    return 0;
oom:
    memset(resp, 0, sizeof *resp);
    return -1;
}

const dw_uid *dw_bind_uid(const dw_program *prog, const dw_store *store, dw_value *var, const dw_entity **ent)
{
    const dw_uid *canon = dw_program_find_uid(prog, var->u.uid);
    if (canon) var->u.uid = canon;
    *ent = dw_store_get(store, var->u.uid);
    return canon;
}

void dw_request_bind(dw_request *req, const dw_program *prog, const dw_store *store)
{
    for (int i = 0; i < 3; i++) {
        req->ent[i] = NULL;
        if (req->vars[i].kind == DW_V_ENTITY) dw_bind_uid(prog, store, &req->vars[i], &req->ent[i]);
    }
    req->bound_prog = prog;
    req->bound_store = store;
}

/* req itself when it is already bound to (prog, store), else a bound copy in *local. */
static const dw_request *bound_request(const dw_program *prog, const dw_store *store,
                                       const dw_request *req, dw_request *local)
{
    if (req->bound_prog == prog && req->bound_store == store) return req;
    *local = *req;
    dw_request_bind(local, prog, store);
    return local;
}

/* dw_authorize with pass between the candidates and the decision (in one
 * frame: the leaf pass of vm/leaves.c runs per decision). */
int dw_authorize_pass(const dw_program *prog, const dw_store *store, const dw_request *req, dw_arena *scratch,
                      dw_response *resp, dw_postings_pass pass, void *ctx)
{
    uint32_t first[32];          /* a merged list, as dw_authorize's */
    dw_postings c = { .n = prog->npolicies, .keep = ~0u };
    if (prog->index.nslots) {
        cands cs = { .buf = first, .cap = 32, .a = scratch, .req = req };
        if (candidates(prog, store, req, &cs)) return -1;
        c = (dw_postings){ .v = cs.v, .n = cs.n, .keep = cs.keep, .owned = cs.v && cs.v == cs.buf };
    }
    if (pass(ctx, &c)) return 1;
    return decide(prog, store, req, scratch, resp, c.v, c.keep, c.n);
}

/* dw_index_candidates' pass: the list copied out, the decision not taken. */
typedef struct capture { dw_arena *a; dw_candidates *out; } capture;

static int capture_pass(void *ctx, dw_postings *c)
{
    capture *k = ctx;
    /* the caller may rewrite the list: always a copy, never NULL */
    uint32_t *v = dw_arena_alloc_raw(k->a, (c->n + 1) * sizeof *v);
    if (v) for (uint32_t i = 0; i < c->n; i++) v[i] = c->v[i] & c->keep;
    k->out->v = v;
    k->out->n = c->n;
    return 1;
}

int dw_index_candidates(const dw_program *prog, const dw_store *store, const dw_request *req,
                        dw_arena *scratch, dw_candidates *out)
{
    out->v = NULL;
    out->n = prog->npolicies;
    if (!prog->index.nslots) return 0;
    capture k = { scratch, out };
    dw_response unused;
    return dw_authorize_pass(prog, store, req, scratch, &unused, capture_pass, &k) < 0 || !out->v ? -1 : 0;
}

int dw_authorize_candidates(const dw_program *prog, const dw_store *store, const dw_request *req,
                            dw_arena *scratch, const dw_candidates *c, dw_response *resp)
{
    return decide(prog, store, req, scratch, resp, c->v, ~0u, c->n);
}

DW_HOT int dw_authorize(const dw_program *prog, const dw_store *store, const dw_request *req,
                 dw_arena *scratch, dw_response *resp)
{
    dw_request local;
    req = bound_request(prog, store, req, &local);
    if (!prog->index.nslots) return decide(prog, store, req, scratch, resp, NULL, ~0u, prog->npolicies);
    /* a second run is copied to a list on the stack (decide copies nothing
     * from it into the response); add_ids moves it to the arena only past 32 */
    uint32_t first[32];
    cands c = { .buf = first, .cap = 32, .a = scratch, .req = req };
    if (candidates(prog, store, req, &c)) return -1;
    return decide(prog, store, req, scratch, resp, c.v, c.keep, c.n);
}

int dw_authorize_all(const dw_program *prog, const dw_store *store, const dw_request *req,
                     dw_arena *scratch, dw_response *resp)
{
    dw_request local;
    req = bound_request(prog, store, req, &local);
    return decide(prog, store, req, scratch, resp, NULL, ~0u, prog->npolicies);
}
