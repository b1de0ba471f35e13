/* index.c - the decision index's probe table (see program.h). */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "vm.h"

uint64_t dw_index_hash(uint8_t kind, uint8_t var, const char *type, size_t tlen, const char *id, size_t idlen)
{
    /* ENTITY keys reuse the uid hash, so a probe costs no hashing at all */
    uint64_t h = kind == DW_IX_ENTITY ? dw_uid_hash(type, tlen, id, idlen) : XXH3_64bits(type, tlen);
    return h ^ ((uint64_t)(kind * 4u + var + 1u) * 0x9E3779B97F4A7C15ull);
}

uint64_t dw_index_pair_hash(uint8_t var, uint64_t action_uid_hash, uint64_t entity_uid_hash)
{
    uint64_t a = (action_uid_hash << 23) | (action_uid_hash >> 41);
    return (entity_uid_hash ^ a) ^ ((uint64_t)(DW_IX_PAIR * 4u + var + 1u) * 0x9E3779B97F4A7C15ull);
}

static int entry_cmp(const void *x, const void *y)
{
    const dw_index_entry *a = x, *b = y;
    if (a->kind != b->kind) return a->kind - b->kind;
    if (a->var != b->var) return a->var - b->var;
    if (a->type_str != b->type_str) return a->type_str < b->type_str ? -1 : 1;
    if (a->id_str != b->id_str) return a->id_str < b->id_str ? -1 : 1;
    if (a->act_type_str != b->act_type_str) return a->act_type_str < b->act_type_str ? -1 : 1;
    if (a->act_id_str != b->act_id_str) return a->act_id_str < b->act_id_str ? -1 : 1;
    return a->policy < b->policy ? -1 : a->policy > b->policy;
}

int dw_index_build(dw_program *p)
{
    dw_index *ix = &p->index;
    memset(ix, 0, sizeof *ix);
    uint32_t n = p->nixents;
    dw_index_entry *e = n ? dw_arena_alloc(&p->arena, n * sizeof *e) : NULL;
    if (n && !e) return -1;
    if (n) memcpy(e, p->ixents, n * sizeof *e);
    if (n > 1) qsort(e, n, sizeof *e, entry_cmp);
    /* A scope may name one key twice (`action in [A, A]`): one entry per
     * (key, policy), so a one-bucket candidate run stays distinct. */
    uint32_t w = 0;
    for (uint32_t i = 0; i < n; i++)
        if (w == 0 || entry_cmp(&e[w - 1], &e[i]) != 0) e[w++] = e[i];
    n = w;
    ix->policies = n ? dw_arena_alloc(&p->arena, n * sizeof *ix->policies) : NULL;
    char *raw = n ? dw_arena_alloc(&p->arena, n * sizeof *ix->buckets + 63) : NULL;   /* aligned to a line (program.h) */
    ix->buckets = raw ? (dw_index_bucket *)(raw + (-(uintptr_t)raw & 63)) : NULL;
    if (n && (!ix->policies || !ix->buckets)) return -1;
    for (uint32_t i = 0; i < n; i++) {
        ix->policies[i] = e[i].policy;
        bool same = i > 0 && e[i].kind == e[i - 1].kind && e[i].var == e[i - 1].var &&
                    e[i].type_str == e[i - 1].type_str && e[i].id_str == e[i - 1].id_str &&
                    e[i].act_type_str == e[i - 1].act_type_str && e[i].act_id_str == e[i - 1].act_id_str;
        if (same) { ix->buckets[ix->nbuckets - 1].n++; continue; }
        dw_index_bucket *b = &ix->buckets[ix->nbuckets++];
        b->kind = e[i].kind;
        b->var = e[i].var;
        b->first = i;
        b->n = 1;
        if (b->kind != DW_IX_ALWAYS) b->type = p->strs[e[i].type_str];
        if (b->kind == DW_IX_ENTITY || b->kind == DW_IX_PAIR) b->id = p->strs[e[i].id_str];
        if (b->kind == DW_IX_PAIR) {
            b->atype = p->strs[e[i].act_type_str];
            b->aid = p->strs[e[i].act_id_str];
            b->hash = dw_index_pair_hash(b->var, dw_uid_hash(b->atype.s, b->atype.len, b->aid.s, b->aid.len),
                                         dw_uid_hash(b->type.s, b->type.len, b->id.s, b->id.len));
        } else
            b->hash = dw_index_hash(b->kind, b->var, b->type.s, b->type.len, b->id.s, b->id.len);
        if (b->kind == DW_IX_ENTITY) ix->has_entity[b->var % 3] = true;
        if (b->kind == DW_IX_TYPE) ix->has_type[b->var % 3] = true;
        if (b->kind == DW_IX_PAIR) ix->has_pair[b->var % 3] = true;
    }
    for (int v = 0; v < 3; v++) {
        if (ix->has_entity[v] || ix->has_type[v]) ix->probe_vars |= (uint8_t)(1u << v);
        if (ix->has_pair[v]) ix->any_pair = true;
    }
    ix->body = p->npolicies ? dw_arena_alloc(&p->arena, p->npolicies * sizeof *ix->body) : NULL;
    ix->self = p->npolicies ? dw_arena_alloc(&p->arena, p->npolicies * sizeof *ix->self) : NULL;
    if (p->npolicies && (!ix->body || !ix->self)) return -1;
    for (uint32_t i = 0; i < p->npolicies; i++) ix->body[i] = dw_scope_prefix_end(p, i), ix->self[i] = i;
    for (uint32_t b = 0; b < ix->nbuckets; b++) {
        const dw_index_bucket *k = &ix->buckets[b];
        for (uint32_t i = k->first; i < k->first + k->n; i++) {
            uint32_t pol = ix->policies[i];
            ix->policies[i] = pol << 1 | (k->kind != DW_IX_ALWAYS && dw_scope_prefix_implied(p, pol, k) ? DW_IX_IMPLIED : 0);
        }
    }
    for (uint32_t b = 0; b < ix->nbuckets; b++)
        if (ix->buckets[b].kind == DW_IX_ALWAYS) { ix->always_first = ix->buckets[b].first; ix->always_n = ix->buckets[b].n; }
    uint32_t ns = 16;
    while (ns < ix->nbuckets * 2) ns *= 2;
    ix->slots = dw_arena_alloc(&p->arena, ns * sizeof *ix->slots);
    if (!ix->slots) return -1;
    ix->nslots = ns;
    for (uint32_t b = 0; b < ix->nbuckets; b++) {
        if (ix->buckets[b].kind == DW_IX_ALWAYS) continue;
        uint32_t j = (uint32_t)ix->buckets[b].hash & (ns - 1);
        while (ix->slots[j]) j = (j + 1) & (ns - 1);
        ix->slots[j] = b + 1;
    }
    return 0;
}

static const dw_uid *interned(const dw_program *p, const dw_str *type, const dw_str *id)
{
    dw_uid k = { .type = type->s, .tlen = (uint32_t)type->len, .idlen = (uint32_t)id->len, .id = id->s,
                 .hash = dw_uid_hash(type->s, type->len, id->s, id->len) };
    return dw_program_find_uid(p, &k);
}

void dw_index_link_uids(dw_program *p)
{
    for (uint32_t i = 0; i < p->index.nbuckets; i++) {
        dw_index_bucket *b = &p->index.buckets[i];
        if (b->kind != DW_IX_ENTITY && b->kind != DW_IX_PAIR) continue;
        b->uid = interned(p, &b->type, &b->id);
        if (b->kind == DW_IX_PAIR) b->auid = interned(p, &b->atype, &b->aid);
    }
}

void dw_index_print(const dw_program *p, FILE *out)
{
    const dw_index *ix = &p->index;
    static const char *vars[] = { "principal", "action", "resource" };
    fprintf(out, "index: %u buckets over %u policies\n", ix->nbuckets, p->npolicies);
    for (uint32_t b = 0; b < ix->nbuckets; b++) {
        const dw_index_bucket *k = &ix->buckets[b];
        if (k->kind == DW_IX_ALWAYS) fputs("  always", out);
        else if (k->kind == DW_IX_TYPE) fprintf(out, "  %s is %.*s", vars[k->var % 3], (int)k->type.len, k->type.s);
        else if (k->kind == DW_IX_PAIR)
            fprintf(out, "  action in %.*s::\"%.*s\" & %s in %.*s::\"%.*s\"", (int)k->atype.len, k->atype.s, (int)k->aid.len, k->aid.s,
                    vars[k->var % 3], (int)k->type.len, k->type.s, (int)k->id.len, k->id.s);
        else fprintf(out, "  %s in %.*s::\"%.*s\"", vars[k->var % 3], (int)k->type.len, k->type.s, (int)k->id.len, k->id.s);
        fputs(" ->", out);
        for (uint32_t i = 0; i < k->n; i++) {
            const dw_policy_code *pc = &p->policies[DW_IX_POLICY(ix->policies[k->first + i])];
            fprintf(out, " %.*s%s", (int)pc->id.len, pc->id.s, pc->effect == DW_EFFECT_FORBID ? "(forbid)" : "");
        }
        fputc('\n', out);
        if (k->guard) dw_guard_print(k->guard, p, out);
    }
}
