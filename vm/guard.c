/* guard.c - condition guards: the decision index's second level.
 *
 * The scope index (index.c) narrows a request to the policies whose scope
 * can match; in Box-style sets hundreds of those share one scope and differ
 * only in a test on the same request field (`context.input.path like
 * "~/w3/d1/" followed by a star`, `context.input.host == "api.github.com"`).  A policy whose
 * code is
 *
 *     scope tests that cannot error  (VAR p/a/r; CONST E; EQ|IN; AND -> ret)*
 *     VAR context; GETATTR a; [GETATTR b; [GETATTR c]];
 *     LIKE "lit" star ...  |  CONST "lit"; EQ
 *     (OR; the same field; LIKE ... | CONST; EQ)*     up to 8 alternatives
 *     [CHECK_BOOL]; AND -> ret  |  RET
 *
 * (also `[lits].contains(field)`, and after a `context.a has b` or `context has a.b`
 * block on the field's own path) is false, without error, whenever that field holds a
 * String the test rejects.  Such a policy is filed under its field path and literal (exact
 * string, or the literal prefix of its `like` pattern); a request looks the
 * field up once per bucket and gathers only the unguarded policies plus the
 * runs whose literal equals the field or one of its prefixes.  When the field
 * is absent or not a String, the whole bucket runs, so the policy's own code
 * still decides (and reports) every error.
 *
 * Guards are derived at load time from verified code, never read from an
 * artifact: they add no trusted input. */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "vm.h"
#include "../stdlib/bytes.h"

enum { GUARD_EXACT = 1, GUARD_PREFIX = 2 };
#define GUARD_MIN_BUCKET 8          /* smaller buckets run whole: cheaper than a probe */
#define GUARD_MAX_PATH 3

#define GUARD_MAX_ALT 16            /* alternatives of one `||` chain */

typedef struct guard_alt { uint8_t kind; dw_str lit; } guard_alt;   /* GUARD_EXACT or _PREFIX */

typedef struct policy_guard {
    uint8_t nalt;                   /* 0: no guard */
    uint8_t npath;
    uint32_t path[GUARD_MAX_PATH];  /* strs[] indices */
    guard_alt alt[GUARD_MAX_ALT];   /* the test is true only if one alternative holds */
} policy_guard;

static bool is_ret(const dw_program *p, uint32_t target, const dw_policy_code *pc)
{
    return target >= pc->entry && target < pc->end && DW_INS_OP(p->code[target]) == DW_OP_RET;
}

/* A constant that `VAR x; CONST k; IN` tests without error: an entity, or a
 * set of entities. */
static bool entity_or_entity_set(const dw_value *k)
{
    if (k->kind == DW_V_ENTITY) return true;
    if (k->kind != DW_V_SET) return false;
    for (uint32_t i = 0; i < k->n; i++) if (k->u.elems[i].kind != DW_V_ENTITY) return false;
    return true;
}

/* Recognise the guard of policy i (see the header); kind 0 if it has none. */
static policy_guard analyse(const dw_program *p, uint32_t i)
{
    policy_guard g = { 0 };
    const dw_policy_code *pc = &p->policies[i];
    if (pc->nleaves) return g;      /* temporal leaves run per scope match: never skip those */
    const uint32_t *c = p->code;
    uint32_t pc_ = pc->entry, end = pc->end;
#define OPAT(k) (pc_ + (k) < end ? DW_INS_OP(c[pc_ + (k)]) : DW_OP__COUNT)
#define AAT(k) DW_INS_A(c[pc_ + (k)])
    uint32_t has[GUARD_MAX_PATH + 1], nhas = 0;   /* one `context.a has b` block's path */
    for (;;) {      /* scope blocks, and `context.a has b` blocks */
        if (OPAT(0) == DW_OP_VAR && AAT(0) == DW_VAR_C && nhas == 0) {
            uint32_t k = 1;
            while (OPAT(k) == DW_OP_GETATTR && nhas < GUARD_MAX_PATH) has[nhas++] = AAT(k), k++;
            if (OPAT(k) == DW_OP_HAS) has[nhas++] = AAT(k);
            else if (OPAT(k) == DW_OP_HASPATH && AAT(k) < p->nkeylists && nhas + p->keylists[AAT(k)].n <= GUARD_MAX_PATH) {
                const dw_keylist *kl = &p->keylists[AAT(k)];     /* `context has a.b`: the path a.b */
                for (uint32_t j = 0; j < kl->n; j++) has[nhas++] = p->keyidx[kl->first + j];
            } else { nhas = 0; break; }
            if (OPAT(k + 1) != DW_OP_AND || !is_ret(p, AAT(k + 1), pc)) return g;
            pc_ += k + 2;
            continue;
        }
        if (OPAT(0) != DW_OP_VAR || AAT(0) > DW_VAR_R) break;
        uint32_t len;
        if (OPAT(1) == DW_OP_IS) len = 2;
        else if (OPAT(1) == DW_OP_CONST && (OPAT(2) == DW_OP_EQ || OPAT(2) == DW_OP_IN) && AAT(1) < p->nconsts &&
                 (OPAT(2) == DW_OP_EQ || entity_or_entity_set(&p->consts[AAT(1)])))
            len = 3;
        else return g;
        if (OPAT(len) != DW_OP_AND || !is_ret(p, AAT(len), pc)) return g;
        pc_ += len + 1;
    }
    /* atom (OR; atom)* on one context path.  Where an OR jumps on true does
     * not matter: the guard only speaks of the path where every atom is false. */
    for (;;) {
        const dw_value *set = NULL;      /* [lits].contains(field) */
        if (OPAT(0) == DW_OP_CONST && AAT(0) < p->nconsts && p->consts[AAT(0)].kind == DW_V_SET) set = &p->consts[AAT(0)], pc_++;
        if (OPAT(0) != DW_OP_VAR || AAT(0) != DW_VAR_C || g.nalt == GUARD_MAX_ALT) return (policy_guard){ 0 };
        uint32_t k = 1, path[GUARD_MAX_PATH], npath = 0;
        while (OPAT(k) == DW_OP_GETATTR && npath < GUARD_MAX_PATH) path[npath++] = AAT(k), k++;
        if (!npath) return (policy_guard){ 0 };
        if (g.nalt == 0) {
            g.npath = (uint8_t)npath;
            memcpy(g.path, path, sizeof path);
        } else if (g.npath != npath || memcmp(g.path, path, npath * sizeof *path)) return (policy_guard){ 0 };
        guard_alt *alt = &g.alt[g.nalt];
        if (set) {
            if (OPAT(k) != DW_OP_CALL || AAT(k) != DW_CALL_A(DW_FN_CONTAINS, 2)) return (policy_guard){ 0 };
            for (uint32_t e = 0; e < set->n; e++) {
                const dw_value *el = &set->u.elems[e];
                if (el->kind != DW_V_STRING) continue;      /* never equal to a String field */
                if (g.nalt == GUARD_MAX_ALT) return (policy_guard){ 0 };
                g.alt[g.nalt].kind = GUARD_EXACT;
                g.alt[g.nalt].lit = (dw_str){ .s = el->u.s, .len = el->n };
                g.nalt++;
            }
            if (g.nalt == 0) return (policy_guard){ 0 };
            k++;
        } else if (OPAT(k) == DW_OP_LIKE && AAT(k) < p->npats) {
            const dw_like_pattern *pat = &p->pats[AAT(k)];
            if (pat->nseg == 0) return (policy_guard){ 0 };
            alt->lit = pat->seg[0];
            alt->kind = pat->nseg == 1 ? GUARD_EXACT : GUARD_PREFIX;
            if (alt->kind == GUARD_PREFIX && alt->lit.len == 0) return (policy_guard){ 0 };   /* starts with a star */
            k++;
        } else if (OPAT(k) == DW_OP_CONST && OPAT(k + 1) == DW_OP_EQ && AAT(k) < p->nconsts &&
                   p->consts[AAT(k)].kind == DW_V_STRING) {
            alt->lit.s = p->consts[AAT(k)].u.s;
            alt->lit.len = p->consts[AAT(k)].n;
            alt->kind = GUARD_EXACT;
            k += 2;
        } else return (policy_guard){ 0 };
        if (!set) g.nalt++;
        pc_ += k;
        if (OPAT(0) != DW_OP_OR) break;
        pc_++;
    }
    if (OPAT(0) == DW_OP_CHECK_BOOL) pc_++;     /* the last atom pushed a Bool */
    /* a `has` block is true whenever the guarded field exists: it must test
     * a prefix of the field's path */
    if (nhas && (nhas > g.npath || memcmp(has, g.path, nhas * sizeof *has))) return (policy_guard){ 0 };
    bool tail_ok = OPAT(0) == DW_OP_RET || (OPAT(0) == DW_OP_AND && is_ret(p, AAT(0), pc));
#undef OPAT
#undef AAT
    return tail_ok ? g : (policy_guard){ 0 };
}

static bool same_path(const dw_program *p, const policy_guard *a, const policy_guard *b)
{
    if (!a->nalt || !b->nalt || a->npath != b->npath) return false;
    for (uint8_t i = 0; i < a->npath; i++) {
        const dw_str *x = &p->strs[a->path[i]], *y = &p->strs[b->path[i]];
        if (x->len != y->len || !dw_mem_eq(x->s, y->s, x->len)) return false;
    }
    return true;
}

static uint64_t key_hash(uint8_t kind, const char *s, size_t n)
{
    return XXH3_64bits_withSeed(s, n, kind);
}

typedef struct guarded { uint32_t policy; const guard_alt *alt; } guarded;

static int alt_cmp(const guard_alt *a, const guard_alt *b)
{
    if (a->kind != b->kind) return a->kind - b->kind;
    return dw_bytes_cmp(a->lit.s, a->lit.len, b->lit.s, b->lit.len);
}

static int guarded_cmp(const void *x, const void *y)
{
    const guarded *a = x, *b = y;
    int c = alt_cmp(a->alt, b->alt);
    if (c) return c;
    return a->policy < b->policy ? -1 : a->policy > b->policy;
}

static int u32_cmp(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* Build bucket b's guard table if enough of its policies share a guard path. */
static int build_table(dw_program *p, dw_index_bucket *b, const policy_guard *pg, guarded *tmp)
{
    const uint32_t *run = p->index.policies + b->first;
    /* The path most of the bucket's guarded policies test; only one tested by
     * at least half the bucket is used.  Misra-Gries with two counters keeps
     * every path tested by more than a third of the run (NULL stands for
     * "no guard"), so two linear passes find it even in a hostile artifact
     * whose one bucket holds 100,000 policies on as many paths. */
    const policy_guard *cand[2] = { NULL, NULL };
    uint32_t cnt[2] = { 0, 0 };
    for (uint32_t i = 0; i < b->n; i++) {
        const policy_guard *g = pg[DW_IX_POLICY(run[i])].nalt ? &pg[DW_IX_POLICY(run[i])] : NULL;
        int k = -1;
        for (int c = 0; c < 2 && k < 0; c++)
            if (cnt[c] && (cand[c] == g || (g && cand[c] && same_path(p, g, cand[c])))) k = c;
        if (k < 0 && !cnt[0]) k = 0, cand[0] = g;
        else if (k < 0 && !cnt[1]) k = 1, cand[1] = g;
        if (k >= 0) cnt[k]++;
        else cnt[0]--, cnt[1]--;
    }
    /* exact counts; on a tie the path met first wins */
    const policy_guard *best = NULL;
    uint32_t best_n = 0, best_first = 0;
    for (int c = 0; c < 2; c++) {
        if (!cand[c] || (c == 1 && cand[0] && same_path(p, cand[0], cand[1]))) continue;
        uint32_t n = 0, first = b->n;
        for (uint32_t i = 0; i < b->n; i++)
            if (same_path(p, cand[c], &pg[DW_IX_POLICY(run[i])])) { if (!n) first = i; n++; }
        if (n > best_n || (n == best_n && n && first < best_first)) best = cand[c], best_n = n, best_first = first;
    }
    if (best_n < GUARD_MIN_BUCKET / 2 || best_n * 2 < b->n) return 0;

    dw_guard_table *t = dw_arena_alloc(&p->arena, sizeof *t);
    uint32_t nent = 0;
    for (uint32_t i = 0; i < b->n; i++) nent += same_path(p, &pg[DW_IX_POLICY(run[i])], best) ? pg[DW_IX_POLICY(run[i])].nalt : 1;
    uint32_t *pol = dw_arena_alloc(&p->arena, nent * sizeof *pol);
    if (!t || !pol) return -1;
    memset(t, 0, sizeof *t);
    t->npath = best->npath;
    for (uint8_t i = 0; i < best->npath; i++) {
        t->path[i] = p->strs[best->path[i]];
        t->path_hash[i] = p->str_hash[best->path[i]];
    }
    uint32_t ng = 0, nr = 0;
    for (uint32_t i = 0; i < b->n; i++) {
        const policy_guard *g = &pg[DW_IX_POLICY(run[i])];
        if (same_path(p, g, best))
            for (uint8_t a = 0; a < g->nalt; a++) tmp[ng++] = (guarded){ run[i], &g->alt[a] };
        else pol[nr++] = run[i];            /* the rest, still ascending */
    }
    t->rest_n = nr;
    qsort(tmp, ng, sizeof *tmp, guarded_cmp);
    uint32_t nkeys = 0;
    for (uint32_t i = 0; i < ng; i++)
        if (i == 0 || alt_cmp(tmp[i - 1].alt, tmp[i].alt)) nkeys++;
    uint32_t ns = 8;
    while (ns < nkeys * 2) ns *= 2;
    t->keys = dw_arena_alloc(&p->arena, nkeys * sizeof *t->keys);
    t->slots = dw_arena_alloc(&p->arena, ns * sizeof *t->slots);
    t->lens = dw_arena_alloc(&p->arena, (nkeys + 1) * sizeof *t->lens);
    if (!t->keys || !t->slots || !t->lens) return -1;
    memset(t->slots, 0, ns * sizeof *t->slots);
    t->nslots = ns;
    for (uint32_t i = 0; i < ng; i++) {
        bool fresh = i == 0 || alt_cmp(tmp[i - 1].alt, tmp[i].alt);
        if (fresh) {
            dw_guard_key *k = &t->keys[t->nkeys++];
            k->kind = tmp[i].alt->kind;
            k->lit = tmp[i].alt->lit;
            k->hash = key_hash(k->kind, k->lit.s, k->lit.len);
            k->first = nr + i;
            k->n = 0;
            uint32_t j = (uint32_t)k->hash & (ns - 1);
            while (t->slots[j]) j = (j + 1) & (ns - 1);
            t->slots[j] = t->nkeys;
            if (k->kind == GUARD_PREFIX) t->lens[t->nlens++] = (uint32_t)k->lit.len;
        }
        pol[nr + i] = tmp[i].policy;
        t->keys[t->nkeys - 1].n++;
    }
    /* distinct prefix lengths, ascending, so a probe stops at the field's length */
    qsort(t->lens, t->nlens, sizeof *t->lens, u32_cmp);
    uint32_t w = 0;
    for (uint32_t i = 0; i < t->nlens; i++) if (w == 0 || t->lens[w - 1] != t->lens[i]) t->lens[w++] = t->lens[i];
    t->nlens = w;
    t->policies = pol;
    b->guard = t;
    return 0;
}

int dw_guards_build(dw_program *p)
{
    dw_index *ix = &p->index;
    uint32_t maxn = 0;
    for (uint32_t b = 0; b < ix->nbuckets; b++) if (ix->buckets[b].n > maxn) maxn = ix->buckets[b].n;
    if (maxn < GUARD_MIN_BUCKET) return 0;
    policy_guard *pg = calloc(p->npolicies, sizeof *pg);
    guarded *tmp = malloc((size_t)maxn * GUARD_MAX_ALT * sizeof *tmp);
    int rc = pg && tmp ? 0 : -1;
    for (uint32_t i = 0; rc == 0 && i < p->npolicies; i++) pg[i] = analyse(p, i);
    for (uint32_t b = 0; rc == 0 && b < ix->nbuckets; b++)
        if (ix->buckets[b].n >= GUARD_MIN_BUCKET) rc = build_table(p, &ix->buckets[b], pg, tmp);
    free(pg);
    free(tmp);
    return rc;
}

static const dw_guard_key *probe(const dw_guard_table *t, uint8_t kind, const char *s, size_t n)
{
    uint64_t h = key_hash(kind, s, n);
    uint32_t j = (uint32_t)h & (t->nslots - 1);
    while (t->slots[j]) {
        const dw_guard_key *k = &t->keys[t->slots[j] - 1];
        if (k->hash == h && k->kind == kind && k->lit.len == n && dw_mem_eq(k->lit.s, s, n)) return k;
        j = (j + 1) & (t->nslots - 1);
    }
    return NULL;
}

const dw_value *dw_guard_field(const dw_guard_table *t, const dw_request *req)
{
    const dw_value *v = &req->vars[DW_VAR_C];
    for (uint8_t i = 0; i < t->npath && v; i++) {
        if (v->kind != DW_V_RECORD) return NULL;
        v = dw_record_get_h(v, t->path[i].s, t->path[i].len, t->path_hash[i]);
    }
    return v && v->kind == DW_V_STRING ? v : NULL;
}

int dw_guard_runs(const dw_guard_table *t, const dw_value *field, dw_guard_run_fn add, void *ctx)
{
    if (t->rest_n && add(ctx, t->policies, t->rest_n)) return -1;
    const dw_guard_key *k = probe(t, GUARD_EXACT, field->u.s, field->n);
    if (k && add(ctx, t->policies + k->first, k->n)) return -1;
    for (uint32_t i = 0; i < t->nlens && t->lens[i] <= field->n; i++) {
        k = probe(t, GUARD_PREFIX, field->u.s, t->lens[i]);
        if (k && add(ctx, t->policies + k->first, k->n)) return -1;
    }
    return 0;
}

void dw_guard_print(const dw_guard_table *t, const dw_program *p, FILE *out)
{
    fputs("    guard context", out);
    for (uint8_t i = 0; i < t->npath; i++) fprintf(out, ".%.*s", (int)t->path[i].len, t->path[i].s);
    fprintf(out, ": %u unguarded, %u keys\n", t->rest_n, t->nkeys);
    for (uint32_t i = 0; i < t->nkeys; i++) {
        const dw_guard_key *k = &t->keys[i];
        fprintf(out, "      %s \"%.*s\" ->", k->kind == GUARD_EXACT ? "==" : "prefix", (int)k->lit.len, k->lit.s);
        for (uint32_t j = 0; j < k->n; j++) {
            const dw_policy_code *pc = &p->policies[DW_IX_POLICY(t->policies[k->first + j])];
            fprintf(out, " %.*s", (int)pc->id.len, pc->id.s);
        }
        fputc('\n', out);
    }
}
