#include "store.h"
#include <stdlib.h>
#include <string.h>

void dw_store_init(dw_store *s)
{
    memset(s, 0, sizeof *s);
    dw_arena_init(&s->arena, 64 * 1024);
}

void dw_store_free(dw_store *s)
{
    free(s->slots);
    free(s->order);
    dw_arena_free(&s->arena);
    memset(s, 0, sizeof *s);
}

static int grow(dw_store *s)
{
    size_t cap = s->cap ? s->cap * 2 : 64;
    dw_entity **slots = calloc(cap, sizeof *slots);
    if (!slots) return -1;
    for (size_t i = 0; i < s->cap; i++) {
        dw_entity *e = s->slots[i];
        if (!e) continue;
        size_t j = e->uid->hash & (cap - 1);
        while (slots[j]) j = (j + 1) & (cap - 1);
        slots[j] = e;
    }
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
    return 0;
}

const dw_entity *dw_store_get(const dw_store *s, const dw_uid *uid)
{
    if (!s || !s->cap) return NULL;
    size_t j = uid->hash & (s->cap - 1);
    while (s->slots[j]) {
        if (dw_uid_eq(s->slots[j]->uid, uid)) return s->slots[j];
        j = (j + 1) & (s->cap - 1);
    }
    return NULL;
}

dw_entity *dw_store_put(dw_store *s, const dw_uid *uid, bool *created)
{
    *created = false;
    s->serial = 0;                  /* the caller may change the entity it gets */
    dw_entity *e = (dw_entity *)dw_store_get(s, uid);
    if (e) return e;
    if ((s->n + 1) * 2 > s->cap && grow(s)) return NULL;
    if (s->norder == s->order_cap) {
        size_t c = s->order_cap ? s->order_cap * 2 : 64;
        dw_entity **o = realloc(s->order, c * sizeof *o);
        if (!o) return NULL;
        s->order = o;
        s->order_cap = c;
    }
    e = dw_arena_alloc(&s->arena, sizeof *e);
    if (!e) return NULL;
    e->uid = uid;
    e->attrs.kind = DW_V_RECORD;
    e->tags.kind = DW_V_RECORD;
    size_t j = uid->hash & (s->cap - 1);
    while (s->slots[j]) j = (j + 1) & (s->cap - 1);
    s->slots[j] = e;
    s->n++;
    s->order[s->norder++] = e;
    *created = true;
    return e;
}

static int uid_ptr_cmp(const void *x, const void *y)
{
    const dw_uid *a = *(const dw_uid *const *)x, *b = *(const dw_uid *const *)y;
    if (a->hash != b->hash) return a->hash < b->hash ? -1 : 1;
    int c = dw_bytes_cmp(a->type, a->tlen, b->type, b->tlen);
    return c ? c : dw_bytes_cmp(a->id, a->idlen, b->id, b->idlen);
}

/* Iterative DFS from `root` over parent edges; collects every reachable uid
 * (entities absent from the store still count as ancestors, as in Cedar). */
int dw_store_seal(dw_store *s)
{
    const dw_uid **acc = NULL, **stack = NULL;
    size_t acap = 0, scap = 0, total = 0;
    int rc = 0;
    for (size_t k = 0; k < s->norder && rc == 0; k++) {
        dw_entity *root = s->order[k];
        uint32_t gen = ++s->gen;
        size_t na = 0, ns = 0;
        root->mark = gen;
        for (uint32_t p = 0; p < root->nparents; p++) {
            if (ns == scap) { scap = scap ? scap * 2 : 16; const dw_uid **t = realloc(stack, scap * sizeof *t); if (!t) { rc = -1; break; } stack = t; }
            stack[ns++] = root->parents[p];
        }
        while (ns && rc == 0) {
            const dw_uid *u = stack[--ns];
            dw_entity *pe = (dw_entity *)dw_store_get(s, u);
            if (pe) {
                if (pe->mark == gen) continue;
                pe->mark = gen;
            } else {
                bool seen = false;   /* absent entity: dedupe by scanning (rare) */
                for (size_t i = 0; i < na; i++) if (dw_uid_eq(acc[i], u)) { seen = true; break; }
                if (seen) continue;
            }
            if (++total > DW_STORE_MAX_ANCESTORS) { rc = DW_STORE_TOO_DEEP; break; }
            if (na == acap) { acap = acap ? acap * 2 : 16; const dw_uid **t = realloc(acc, acap * sizeof *t); if (!t) { rc = -1; break; } acc = t; }
            acc[na++] = u;
            if (pe) for (uint32_t p = 0; p < pe->nparents; p++) {
                if (ns == scap) { scap = scap ? scap * 2 : 16; const dw_uid **t = realloc(stack, scap * sizeof *t); if (!t) { rc = -1; break; } stack = t; }
                stack[ns++] = pe->parents[p];
            }
        }
        if (rc) break;
        /* root itself may be reachable through a cycle; `in` already covers x == y */
        const dw_uid **anc = na ? dw_arena_alloc(&s->arena, na * sizeof *anc) : NULL;
        if (na && !anc) { rc = -1; break; }
        if (na) memcpy(anc, acc, na * sizeof *anc);
        if (na > 1) qsort(anc, na, sizeof *anc, uid_ptr_cmp);
        root->ancestors = anc;
        root->nanc = (uint32_t)na;
    }
    free(acc);
    free(stack);
    if (rc == 0) s->serial = dw_serial_next();
    return rc;
}

bool dw_store_in(const dw_store *s, const dw_uid *x, const dw_uid *y)
{
    if (dw_uid_eq(x, y)) return true;
    const dw_entity *e = dw_store_get(s, x);
    return e && dw_entity_has_ancestor(e, y);
}

bool dw_entity_has_ancestor(const dw_entity *e, const dw_uid *y)
{
    size_t lo = 0, hi = e->nanc;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = uid_ptr_cmp(&e->ancestors[mid], &y);
        if (c == 0) return true;
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    return false;
}
