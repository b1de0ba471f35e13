#include "artifact.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include "artifact_format.h"
#include "../stdlib/le.h"
#include "../stdlib/digits.h"
#include "verify.h"

typedef struct section { uint32_t count; const uint8_t *p; size_t size; } section;

static int refuse(char *msg, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
    return -1;
}


bool dw_is_artifact(const void *data, size_t size)
{
    return size >= 4 && memcmp(data, DW_ARTIFACT_MAGIC, 4) == 0;
}

/* element sizes of the fixed-record sections */
static const size_t elem_size[DW_SEC__COUNT] = {
    [DW_SEC_STRDATA] = 1, [DW_SEC_STRTAB] = 4, [DW_SEC_STRS] = 4, [DW_SEC_UIDS] = 8,
    [DW_SEC_IPS] = 20, [DW_SEC_VALUES] = 16, [DW_SEC_FIELDS] = 8, [DW_SEC_CONSTS] = 4,
    [DW_SEC_CODE] = 4, [DW_SEC_PATS] = 8, [DW_SEC_SEGS] = 4, [DW_SEC_KEYLISTS] = 8,
    [DW_SEC_KEYIDX] = 4, [DW_SEC_POLICIES] = DW_AREC_POLICY, [DW_SEC_ANNOTS] = 8,
    [DW_SEC_META] = DW_AREC_META, [DW_SEC_IXKEYS] = 20, [DW_SEC_INDEX] = 8,
    [DW_SEC_TFORMULAS] = DW_AREC_TF, [DW_SEC_TPATTERNS] = 8, [DW_SEC_TTERMS] = DW_AREC_TTERM,
    [DW_SEC_TPREDS] = 12, [DW_SEC_TWINDOWS] = 8,
    [DW_SEC_TARGS] = 4, [DW_SEC_TAGGS] = DW_AREC_TAGG, [DW_SEC_AGGVARS] = 2,
    [DW_SEC_TLEAVES] = DW_AREC_TLEAF, [DW_SEC_TPOLICIES] = DW_AREC_TPOL, [DW_SEC_SERVE] = 1,
    [DW_SEC_PTYPES] = 16, [DW_SEC_PFIELDS] = 12, [DW_SEC_PARGS] = 12, [DW_SEC_PSEGS] = 4, [DW_SEC_PSTEPS] = 16,
    [DW_SEC_PCALLS] = 16, [DW_SEC_PPOLICIES] = 20,
};

typedef struct loader {
    section sec[DW_SEC__COUNT];
    dw_program *p;
    char *msg; size_t cap;
} loader;

/* String idx of STRTAB: [start_idx, start_{idx+1} - 1), NUL-terminated. */
static int str_at(loader *L, uint32_t idx, dw_str *out)
{
    const section *t = &L->sec[DW_SEC_STRTAB], *d = &L->sec[DW_SEC_STRDATA];
    if (idx >= t->count) return refuse(L->msg, L->cap, "string index %u out of range", idx);
    size_t start = dw_le32(t->p + 4 * (size_t)idx);
    size_t next = idx + 1 < t->count ? dw_le32(t->p + 4 * ((size_t)idx + 1)) : d->size;
    if (start >= next || next > d->size) return refuse(L->msg, L->cap, "string %u outside the string data", idx);
    if (d->p[next - 1] != 0) return refuse(L->msg, L->cap, "string %u is not terminated", idx);
    out->s = (const char *)d->p + start;
    out->len = next - 1 - start;
    return 0;
}

static int rebuild_values(loader *L, dw_value **out)
{
    const section *vs = &L->sec[DW_SEC_VALUES], *fs = &L->sec[DW_SEC_FIELDS];
    dw_arena *a = &L->p->arena;
    dw_value *vals = vs->count ? dw_arena_alloc(a, vs->count * sizeof *vals) : NULL;
    /* nesting depth of each value: comparing, printing and copying values
     * recurse, so a file may not nest them deeper than a program can */
    uint16_t *depth = vs->count ? dw_arena_alloc(a, vs->count * sizeof *depth) : NULL;
    if (vs->count && (!vals || !depth)) return refuse(L->msg, L->cap, "out of memory");
    for (uint32_t i = 0; i < vs->count; i++) {
        const uint8_t *r = vs->p + 16 * (size_t)i;
        uint8_t kind = r[0];
        uint32_t n = dw_le32(r + 4);
        uint64_t pl = dw_le64(r + 8);
        dw_value *v = &vals[i];
        v->kind = kind;
        depth[i] = 0;
        if (kind == DW_V_SET || kind == DW_V_RECORD) {
            if (pl > fs->count || n > fs->count - pl) return refuse(L->msg, L->cap, "value %u: elements out of range", i);
            for (uint32_t k = 0; k < n; k++) {
                uint32_t vi = dw_le32(fs->p + 8 * (pl + k) + 4);
                if (vi >= i) return refuse(L->msg, L->cap, "value %u: element %u is not stored before it", i, vi);
                if (depth[vi] + 1 > depth[i]) depth[i] = (uint16_t)(depth[vi] + 1);
            }
            if (depth[i] > DW_ARTIFACT_MAX_VALUE_DEPTH)
                return refuse(L->msg, L->cap, "value %u: nested deeper than %u", i, DW_ARTIFACT_MAX_VALUE_DEPTH);
        }
        switch (kind) {
        case DW_V_BOOL: if (pl > 1) return refuse(L->msg, L->cap, "value %u: bad Bool", i); v->u.b = pl; break;
        case DW_V_LONG: case DW_V_DECIMAL: case DW_V_DATETIME: case DW_V_DURATION: v->u.i = (int64_t)pl; break;
        case DW_V_STRING: {
            dw_str b;
            if (pl > UINT32_MAX || str_at(L, (uint32_t)pl, &b)) return refuse(L->msg, L->cap, "value %u: bad string", i);
            v->u.s = b.s; v->n = (uint32_t)b.len;
            break;
        }
        case DW_V_ENTITY: {
            const section *us = &L->sec[DW_SEC_UIDS];
            dw_str t, id;
            if (pl >= us->count || str_at(L, dw_le32(us->p + 8 * pl), &t) || str_at(L, dw_le32(us->p + 8 * pl + 4), &id))
                return refuse(L->msg, L->cap, "value %u: bad entity uid", i);
            dw_uid *u = dw_arena_alloc(a, sizeof *u);
            if (!u) return refuse(L->msg, L->cap, "out of memory");
            u->type = t.s; u->tlen = (uint32_t)t.len; u->id = id.s; u->idlen = (uint32_t)id.len;
            u->hash = dw_uid_hash(t.s, t.len, id.s, id.len);
            v->u.uid = u;
            break;
        }
        case DW_V_SET: case DW_V_RECORD: {
            if (pl > fs->count || n > fs->count - pl) return refuse(L->msg, L->cap, "value %u: elements out of range", i);
            if (kind == DW_V_SET) {
                dw_value *el = n ? dw_arena_alloc(a, n * sizeof *el) : NULL;
                if (n && !el) return refuse(L->msg, L->cap, "out of memory");
                for (uint32_t k = 0; k < n; k++) {
                    uint32_t vi = dw_le32(fs->p + 8 * (pl + k) + 4);
                    if (vi >= i) return refuse(L->msg, L->cap, "value %u: element %u is not stored before it", i, vi);
                    el[k] = vals[vi];
                }
                *v = dw_make_set(el, n);       /* re-sorts: the file's order is not trusted */
            } else {
                dw_field *f = n ? dw_arena_alloc(a, n * sizeof *f) : NULL;
                if (n && !f) return refuse(L->msg, L->cap, "out of memory");
                for (uint32_t k = 0; k < n; k++) {
                    dw_str key;
                    uint32_t vi = dw_le32(fs->p + 8 * (pl + k) + 4);
                    if (str_at(L, dw_le32(fs->p + 8 * (pl + k)), &key)) return -1;
                    if (vi >= i) return refuse(L->msg, L->cap, "value %u: field %u is not stored before it", i, vi);
                    f[k].key = key.s; f[k].klen = (uint32_t)key.len; f[k].v = vals[vi];
                }
                if (!dw_make_record(f, n, v)) return refuse(L->msg, L->cap, "value %u: duplicate record key", i);
            }
            break;
        }
        case DW_V_IPADDR: {
            const section *is = &L->sec[DW_SEC_IPS];
            if (pl >= is->count) return refuse(L->msg, L->cap, "value %u: bad ip index", i);
            const uint8_t *ip = is->p + 20 * pl;
            if (ip[0] > 1 || ip[1] > (ip[0] ? 128 : 32)) return refuse(L->msg, L->cap, "value %u: bad ip address", i);
            dw_ipaddr *x = dw_arena_alloc(a, sizeof *x);
            if (!x) return refuse(L->msg, L->cap, "out of memory");
            x->v6 = ip[0]; x->prefix = ip[1]; memcpy(x->addr, ip + 2, 16);
            v->u.ip = x;
            break;
        }
        default: return refuse(L->msg, L->cap, "value %u: unknown kind %u", i, kind);
        }
    }
    *out = vals;
    return 0;
}

/* A section of u32s as host integers; NULL if empty or out of memory. */
static uint32_t *copy_u32s(loader *L, dw_section_id s)
{
    const section *x = &L->sec[s];
    if (!x->count) return NULL;
    uint32_t *v = dw_arena_alloc(&L->p->arena, (size_t)x->count * 4);
    for (uint32_t i = 0; v && i < x->count; i++) v[i] = dw_le32(x->p + 4 * (size_t)i);
    return v;
}

/* The temporal tables, copied field by field; vm/verify.c checks them. */
static int build_temporal(loader *L)
{
    dw_program *p = L->p;
    dw_arena *a = &p->arena;
    dw_temporal_tables *t = &p->temporal;
    const section *s;
#define TALLOC(field, n) do { t->field = (n) ? dw_arena_alloc(a, (size_t)(n) * sizeof *t->field) : NULL; \
                              if ((n) && !t->field) return refuse(L->msg, L->cap, "out of memory"); } while (0)
    s = &L->sec[DW_SEC_TFORMULAS];
    t->ntfs = s->count;
    TALLOC(tfs, s->count);
    for (uint32_t i = 0; i < s->count; i++) {
        const uint8_t *r = s->p + DW_AREC_TF * (size_t)i;
        dw_tf *f = &t->tfs[i];
        f->kind = r[0]; f->op = r[1]; f->var = dw_le16(r + 2);
        uint32_t x = dw_le32(r + 4), y = dw_le32(r + 8), c = dw_le32(r + 12);
        if (f->kind == DW_TF_PRED) {
            const section *ps = &L->sec[DW_SEC_TPREDS];
            if (c >= ps->count) return refuse(L->msg, L->cap, "temporal formula %u: predicate %u out of range", i, c);
            f->type_str = dw_le32(ps->p + 12 * (size_t)c);
            f->id_str = dw_le32(ps->p + 12 * (size_t)c + 4);
            f->kind_str = dw_le32(ps->p + 12 * (size_t)c + 8);
            f->first = x;
            f->n = y;
        } else {
            f->a = x;
            f->b = y;
            if (f->kind == DW_TF_FORMERLY || f->kind == DW_TF_PREVIOUS || f->kind == DW_TF_SINCE) {
                const section *ws = &L->sec[DW_SEC_TWINDOWS];
                if (c >= ws->count) return refuse(L->msg, L->cap, "temporal formula %u: window %u out of range", i, c);
                f->window = (int64_t)dw_le64(ws->p + 8 * (size_t)c);
            } else if (c) return refuse(L->msg, L->cap, "temporal formula %u: stray operand", i);
        }
    }
    s = &L->sec[DW_SEC_TPATTERNS];
    t->ntpatterns = s->count;
    TALLOC(tpatterns, s->count);
    for (uint32_t i = 0; i < s->count; i++) {
        t->tpatterns[i].path_str = dw_le32(s->p + 8 * (size_t)i);
        t->tpatterns[i].term = dw_le32(s->p + 8 * (size_t)i + 4);
    }
    s = &L->sec[DW_SEC_TTERMS];
    t->ntterms = s->count;
    TALLOC(tterms, s->count);
    for (uint32_t i = 0; i < s->count; i++) {
        const uint8_t *r = s->p + DW_AREC_TTERM * (size_t)i;
        t->tterms[i].kind = r[0];
        t->tterms[i].a = dw_le32(r + 4);
        t->tterms[i].n = dw_le32(r + 8);
    }
    s = &L->sec[DW_SEC_TARGS];
    t->ntargs = s->count;
    TALLOC(targs, s->count);
    for (uint32_t i = 0; i < s->count; i++) t->targs[i] = dw_le32(s->p + 4 * (size_t)i);
    s = &L->sec[DW_SEC_TAGGS];
    t->ntaggs = s->count;
    TALLOC(taggs, s->count);
    for (uint32_t i = 0; i < s->count; i++) {
        const uint8_t *r = s->p + DW_AREC_TAGG * (size_t)i;
        t->taggs[i].body = dw_le32(r);
        t->taggs[i].sum_var = dw_le16(r + 4);
        t->taggs[i].first_var = dw_le32(r + 8);
        t->taggs[i].nvars = dw_le32(r + 12);
    }
    s = &L->sec[DW_SEC_AGGVARS];
    t->naggvars = s->count;
    TALLOC(aggvars, s->count);
    for (uint32_t i = 0; i < s->count; i++) t->aggvars[i] = dw_le16(s->p + 2 * (size_t)i);
    s = &L->sec[DW_SEC_TLEAVES];
    t->nleaves = s->count;
    TALLOC(leaves, s->count);
    p->max_reach = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        const uint8_t *r = s->p + DW_AREC_TLEAF * (size_t)i;
        dw_tleaf *l = &t->leaves[i];
        uint32_t nvars = dw_le32(r + 4);
        l->root = dw_le32(r);
        l->policy = UINT32_MAX;              /* set from TPOLICIES below */
        if (nvars > DW_TEMPORAL_MAX_VARS) return refuse(L->msg, L->cap, "temporal leaf %u: %u variables (limit %u)", i, nvars, DW_TEMPORAL_MAX_VARS);
        l->nvars = (uint16_t)nvars;
        l->reach = (int64_t)dw_le64(r + 8);
        l->identity = dw_le64(r + 16);
        if (l->reach > p->max_reach) p->max_reach = l->reach;
    }
#undef TALLOC
    s = &L->sec[DW_SEC_TPOLICIES];
    for (uint32_t i = 0; i < s->count; i++) {
        const uint8_t *r = s->p + DW_AREC_TPOL * (size_t)i;
        uint32_t k = dw_le32(r);
        if (k >= p->npolicies || (i && k <= dw_le32(r - DW_AREC_TPOL)))
            return refuse(L->msg, L->cap, "temporal policy record %u names policy %u out of order or range", i, k);
        dw_policy_code *pc = &p->policies[k];
        pc->first_leaf = dw_le32(r + 4);
        pc->nleaves = dw_le32(r + 8);
        pc->scope_entry = dw_le32(r + 12);
        pc->scope_end = dw_le32(r + 16);
        if (!pc->nleaves || pc->first_leaf > t->nleaves || pc->nleaves > t->nleaves - pc->first_leaf)
            return refuse(L->msg, L->cap, "temporal policy record %u: policy %u's leaves out of range", i, k);
        for (uint32_t l = pc->first_leaf; l < pc->first_leaf + pc->nleaves; l++) {
            if (t->leaves[l].policy != UINT32_MAX) return refuse(L->msg, L->cap, "temporal leaf %u has two owners", l);
            t->leaves[l].policy = k;
        }
    }
    return 0;
}

/* The provider tables, copied field by field (u32 records); vm/verify.c
 * checks every index. */
static int build_providers(loader *L)
{
    dw_program *p = L->p;
    dw_provider_tables *t = &p->provider;
#define PROWS(id, field, num) do { \
        t->num = L->sec[id].count; \
        t->field = t->num ? dw_arena_alloc(&p->arena, (size_t)t->num * sizeof *t->field) : NULL; \
        if (t->num && !t->field) return refuse(L->msg, L->cap, "out of memory"); \
    } while (0)
#define U(id, i, k, w) dw_le32(L->sec[id].p + (size_t)(i) * (w) + 4 * (k))
    PROWS(DW_SEC_PTYPES, types, ntypes);
    for (uint32_t i = 0; i < t->ntypes; i++) {
        uint32_t kind = U(DW_SEC_PTYPES, i, 0, 16);
        if (kind >= DW_V__COUNT) return refuse(L->msg, L->cap, "provider type %u: unknown kind %u", i, kind);
        t->types[i] = (dw_ptype){ (uint8_t)kind, U(DW_SEC_PTYPES, i, 1, 16), U(DW_SEC_PTYPES, i, 2, 16), U(DW_SEC_PTYPES, i, 3, 16) };
    }
    PROWS(DW_SEC_PFIELDS, fields, nfields);
    for (uint32_t i = 0; i < t->nfields; i++) {
        uint32_t req = U(DW_SEC_PFIELDS, i, 2, 12);
        if (req > 1) return refuse(L->msg, L->cap, "provider field %u: bad required flag", i);
        t->fields[i] = (dw_pfield){ U(DW_SEC_PFIELDS, i, 0, 12), U(DW_SEC_PFIELDS, i, 1, 12), (uint8_t)req };
    }
    PROWS(DW_SEC_PARGS, args, nargs);
    for (uint32_t i = 0; i < t->nargs; i++) {
        uint32_t kind = U(DW_SEC_PARGS, i, 0, 12);
        if (kind > DW_PARG_RESOURCE) return refuse(L->msg, L->cap, "provider argument %u: unknown kind %u", i, kind);
        t->args[i] = (dw_parg){ (uint8_t)kind, U(DW_SEC_PARGS, i, 1, 12), U(DW_SEC_PARGS, i, 2, 12) };
    }
    PROWS(DW_SEC_PSEGS, segs, nsegs);
    for (uint32_t i = 0; i < t->nsegs; i++) t->segs[i] = U(DW_SEC_PSEGS, i, 0, 4);
    PROWS(DW_SEC_PSTEPS, steps, nsteps);
    for (uint32_t i = 0; i < t->nsteps; i++)
        t->steps[i] = (dw_pstep){ U(DW_SEC_PSTEPS, i, 0, 16), U(DW_SEC_PSTEPS, i, 1, 16), U(DW_SEC_PSTEPS, i, 2, 16), U(DW_SEC_PSTEPS, i, 3, 16) };
    PROWS(DW_SEC_PCALLS, calls, ncalls);
#ifdef DW_NO_PROVIDERS   /* make PROVIDERS=0: no provider call runs here, compiled elsewhere or not (§13.6) */
    if (t->ncalls) return refuse(L->msg, L->cap, "information providers are not enabled in this build: the set calls a provider");
#endif
    for (uint32_t i = 0; i < t->ncalls; i++)
        t->calls[i] = (dw_pcall){ U(DW_SEC_PCALLS, i, 0, 16), U(DW_SEC_PCALLS, i, 1, 16), U(DW_SEC_PCALLS, i, 2, 16), U(DW_SEC_PCALLS, i, 3, 16) };
    const section *s = &L->sec[DW_SEC_PPOLICIES];
    for (uint32_t i = 0; i < s->count; i++) {
        uint32_t k = U(DW_SEC_PPOLICIES, i, 0, 20);
        if (k >= p->npolicies || (i && k <= U(DW_SEC_PPOLICIES, i - 1, 0, 20)))
            return refuse(L->msg, L->cap, "provider policy record %u names policy %u out of order or range", i, k);
        dw_policy_code *pc = &p->policies[k];
        uint32_t se = U(DW_SEC_PPOLICIES, i, 3, 20), sn = U(DW_SEC_PPOLICIES, i, 4, 20);
        if (pc->nleaves && (pc->scope_entry != se || pc->scope_end != sn))
            return refuse(L->msg, L->cap, "provider policy record %u: policy %u's scope code disagrees with its temporal record", i, k);
        pc->first_pcall = U(DW_SEC_PPOLICIES, i, 1, 20);
        pc->npcalls = U(DW_SEC_PPOLICIES, i, 2, 20);
        pc->scope_entry = se;
        pc->scope_end = sn;
        if (!pc->npcalls) return refuse(L->msg, L->cap, "provider policy record %u: policy %u owns no call", i, k);
    }
#undef U
#undef PROWS
    return 0;
}

static int build(loader *L)
{
    dw_program *p = L->p;
    dw_arena *a = &p->arena;
    /* the string data is copied once; every string points into the copy */
    section *d = &L->sec[DW_SEC_STRDATA];
    if (d->size) {
        uint8_t *copy = dw_arena_alloc(a, d->size);
        if (!copy) return refuse(L->msg, L->cap, "out of memory");
        memcpy(copy, d->p, d->size);
        d->p = copy;
    }
    const section *ss = &L->sec[DW_SEC_STRS];
    p->nstrs = ss->count;
    p->strs = ss->count ? dw_arena_alloc(a, ss->count * sizeof *p->strs) : NULL;
    for (uint32_t i = 0; i < ss->count; i++)
        if (!p->strs || str_at(L, dw_le32(ss->p + 4 * (size_t)i), &p->strs[i])) return -1;
    dw_value *vals = NULL;
    if (rebuild_values(L, &vals)) return -1;
    const section *cs = &L->sec[DW_SEC_CONSTS];
    p->nconsts = cs->count;
    p->consts = cs->count ? dw_arena_alloc(a, cs->count * sizeof *p->consts) : NULL;
    for (uint32_t i = 0; i < cs->count; i++) {
        uint32_t vi = dw_le32(cs->p + 4 * (size_t)i);
        if (!p->consts || vi >= L->sec[DW_SEC_VALUES].count) return refuse(L->msg, L->cap, "constant %u: bad value index", i);
        p->consts[i] = vals[vi];
    }
    p->ncode = L->sec[DW_SEC_CODE].count;
    p->code = copy_u32s(L, DW_SEC_CODE);
    const section *ps = &L->sec[DW_SEC_PATS], *sg = &L->sec[DW_SEC_SEGS];
    p->npats = ps->count;
    p->pats = ps->count ? dw_arena_alloc(a, ps->count * sizeof *p->pats) : NULL;
    for (uint32_t i = 0; i < ps->count; i++) {
        uint32_t first = dw_le32(ps->p + 8 * (size_t)i), n = dw_le32(ps->p + 8 * (size_t)i + 4);
        if (!p->pats || n == 0 || first > sg->count || n > sg->count - first) return refuse(L->msg, L->cap, "pattern %u: bad segments", i);
        dw_str *seg = dw_arena_alloc(a, n * sizeof *seg);
        if (!seg) return refuse(L->msg, L->cap, "out of memory");
        for (uint32_t k = 0; k < n; k++) if (str_at(L, dw_le32(sg->p + 4 * ((size_t)first + k)), &seg[k])) return -1;
        p->pats[i].seg = seg;
        p->pats[i].nseg = n;
    }
    p->nkeylists = L->sec[DW_SEC_KEYLISTS].count;
    if (p->nkeylists) {
        p->keylists = dw_arena_alloc(a, p->nkeylists * sizeof *p->keylists);
        if (!p->keylists) return refuse(L->msg, L->cap, "out of memory");
        for (uint32_t i = 0; i < p->nkeylists; i++) {
            p->keylists[i].first = dw_le32(L->sec[DW_SEC_KEYLISTS].p + 8 * (size_t)i);
            p->keylists[i].n = dw_le32(L->sec[DW_SEC_KEYLISTS].p + 8 * (size_t)i + 4);
        }
    }
    p->nkeyidx = L->sec[DW_SEC_KEYIDX].count;
    p->keyidx = copy_u32s(L, DW_SEC_KEYIDX);
    const section *m = &L->sec[DW_SEC_META];
    if (m->count != 1) return refuse(L->msg, L->cap, "missing metadata section");
    p->max_stack = dw_le32(m->p);
    uint32_t id_prefix = dw_le32(m->p + 4);
    p->schema_digest = dw_le64(m->p + 8);
    if (p->max_stack > 1u << 20) return refuse(L->msg, L->cap, "max_stack %u is implausible", p->max_stack);
    dw_str prefix = { "", 0 };
    bool have_prefix = id_prefix != UINT32_MAX;
    if (have_prefix && str_at(L, id_prefix, &prefix)) return -1;
    const section *pol = &L->sec[DW_SEC_POLICIES], *an = &L->sec[DW_SEC_ANNOTS];
    p->npolicies = pol->count;
    p->policies = pol->count ? dw_arena_alloc(a, pol->count * sizeof *p->policies) : NULL;
    if (pol->count && !p->policies) return refuse(L->msg, L->cap, "out of memory");
    uint64_t annot_at = 0;
    for (uint32_t i = 0; i < pol->count; i++) {
        const uint8_t *r = pol->p + DW_AREC_POLICY * (size_t)i;
        dw_policy_code *pc = &p->policies[i];
        uint8_t flags = r[1];
        uint32_t nannots = dw_le32(r + 20);
        pc->effect = r[0];
        pc->entry = dw_le32(r + 4);
        pc->end = dw_le32(r + 8);
        pc->max_stack = dw_le32(r + 12);
        pc->src_line = dw_le32(r + 24);
        pc->src_col = dw_le32(r + 28);
        if (flags & ~DW_APOL_POSITIONAL_ID) return refuse(L->msg, L->cap, "policy %u: unknown flags %u", i, flags);
        if (flags & DW_APOL_POSITIONAL_ID) {
            if (!have_prefix) return refuse(L->msg, L->cap, "policy %u: positional id without a prefix", i);
            char num[DW_I64_TEXT_MAX];
            size_t nl = dw_i64_text(i, num + sizeof num);
            const char *q = num + sizeof num - nl;
            char *id = dw_arena_alloc_raw(a, prefix.len + nl + 1);
            if (!id) return refuse(L->msg, L->cap, "out of memory");
            memcpy(id, prefix.s, prefix.len);
            memcpy(id + prefix.len, q, nl);
            id[prefix.len + nl] = 0;
            pc->id.s = id;
            pc->id.len = prefix.len + nl;
        } else if (str_at(L, dw_le32(r + 16), &pc->id)) return -1;
        if (nannots > an->count - annot_at) return refuse(L->msg, L->cap, "policy %u: annotations out of range", i);
        pc->nannots = nannots;
        pc->annots = nannots ? dw_arena_alloc(a, nannots * sizeof *pc->annots) : NULL;
        if (nannots && !pc->annots) return refuse(L->msg, L->cap, "out of memory");
        for (uint32_t k = 0; k < nannots; k++) {
            const uint8_t *kv = an->p + 8 * (annot_at + k);
            if (str_at(L, dw_le32(kv), &pc->annots[k].key) || str_at(L, dw_le32(kv + 4), &pc->annots[k].value)) return -1;
        }
        annot_at += nannots;
    }
    if (annot_at != an->count) return refuse(L->msg, L->cap, "annotations not owned by any policy");
    const section *ixs = &L->sec[DW_SEC_INDEX], *ixk = &L->sec[DW_SEC_IXKEYS];
    p->nixents = ixs->count;
    p->ixents = ixs->count ? dw_arena_alloc(a, ixs->count * sizeof *p->ixents) : NULL;
    if (ixs->count && !p->ixents) return refuse(L->msg, L->cap, "out of memory");
    for (uint32_t i = 0; i < ixs->count; i++) {
        const uint8_t *r = ixs->p + 8 * (size_t)i;
        uint32_t key = dw_le32(r);
        dw_index_entry *e = &p->ixents[i];
        if (key >= ixk->count) return refuse(L->msg, L->cap, "index entry %u is malformed", i);
        const uint8_t *k = ixk->p + 20 * (size_t)key;
        e->kind = k[0];
        e->var = k[1];
        e->type_str = dw_le32(k + 4);
        e->id_str = dw_le32(k + 8);
        e->act_type_str = dw_le32(k + 12);
        e->act_id_str = dw_le32(k + 16);
        e->policy = dw_le32(r + 4);
        if (e->kind > DW_IX_PAIR || e->var > 2 || e->policy >= p->npolicies ||
            (e->kind != DW_IX_ALWAYS && e->type_str >= p->nstrs) ||
            ((e->kind == DW_IX_ENTITY || e->kind == DW_IX_PAIR) && e->id_str >= p->nstrs) ||
            (e->kind == DW_IX_PAIR && (e->act_type_str >= p->nstrs || e->act_id_str >= p->nstrs || e->var == 1)))
            return refuse(L->msg, L->cap, "index entry %u is malformed", i);
    }
    return build_temporal(L) ? -1 : build_providers(L);
}

dw_program *dw_artifact_load(const void *data, size_t size, char *msg, size_t cap)
{
    const uint8_t *b = data;
    if (size < DW_ARTIFACT_HEADER || !dw_is_artifact(data, size)) { refuse(msg, cap, "not a dwc artifact (bad magic)"); return NULL; }
    uint16_t major = dw_le16(b + 4), minor = dw_le16(b + 6);
    if (major != DW_ARTIFACT_MAJOR) { refuse(msg, cap, "artifact format %u.%u is not supported (this dwc reads %u.x)", major, minor, DW_ARTIFACT_MAJOR); return NULL; }
    if (dw_le64(b + 16) != size) { refuse(msg, cap, "artifact is %zu bytes but says %llu (truncated or padded)", size, (unsigned long long)dw_le64(b + 16)); return NULL; }
    uint64_t sum = XXH3_64bits_withSeed(b + 32, size - 32, XXH3_64bits(b, 16));
    if (sum != dw_le64(b + 24)) { refuse(msg, cap, "artifact checksum mismatch (the file is corrupt)"); return NULL; }
    /* opcode and function numbers mean what this build's lists say only if
     * the file was compiled against the same lists */
    if (dw_le64(b + 32) != dw_isa_digest()) {
        refuse(msg, cap, "compiled for another instruction set (digest %016llx, this build's %016llx): recompile the policy with this dwc",
               (unsigned long long)dw_le64(b + 32), (unsigned long long)dw_isa_digest());
        return NULL;
    }
    uint32_t flags = dw_le32(b + 12);
    if (flags & ~DW_AF_KNOWN) { refuse(msg, cap, "unknown header flags %#x (written by a newer dwc)", flags & ~DW_AF_KNOWN); return NULL; }
    uint32_t nsec = dw_le32(b + 8);
    if (nsec > 64 || DW_ARTIFACT_HEADER + (size_t)nsec * 8 > size) { refuse(msg, cap, "bad section count %u", nsec); return NULL; }
    loader L;
    memset(&L, 0, sizeof L);
    L.msg = msg;
    L.cap = cap;
    size_t off = DW_ARTIFACT_HEADER + (size_t)nsec * 8;
    for (uint32_t i = 0; i < nsec; i++) {
        const uint8_t *e = b + DW_ARTIFACT_HEADER + 8 * (size_t)i;
        uint32_t id = dw_le32(e), sz = dw_le32(e + 4);
        if (sz > size - off) { refuse(msg, cap, "section %u lies outside the file", id); return NULL; }
        const uint8_t *at = b + off;
        off += sz;
        if (id == 0 || id >= DW_SEC__COUNT) continue;     /* unknown sections of a newer minor are skipped */
        if (L.sec[id].p) { refuse(msg, cap, "section %u appears twice", id); return NULL; }
        if (sz % elem_size[id] || sz / elem_size[id] > UINT32_MAX) { refuse(msg, cap, "section %u: %u bytes are not whole records", id, sz); return NULL; }
        L.sec[id].count = (uint32_t)(sz / elem_size[id]);
        L.sec[id].p = at;
        L.sec[id].size = sz;
    }
    if (off != size) { refuse(msg, cap, "artifact has %zu trailing bytes", size - off); return NULL; }
    dw_program *p = calloc(1, sizeof *p);
    if (!p) { refuse(msg, cap, "out of memory"); return NULL; }
    dw_arena_init(&p->arena, 64 * 1024);
    L.p = p;
    p->box_profile = (flags & DW_AF_BOX_PROFILE) != 0;
    if (L.sec[DW_SEC_SERVE].size) {   /* kept as bytes for the runtime's decoder (runtime/artifact_serve.h) */
        p->serve_len = (uint32_t)L.sec[DW_SEC_SERVE].size;
        if (!(p->serve = (const uint8_t *)dw_arena_memdup(&p->arena, L.sec[DW_SEC_SERVE].p, p->serve_len))) {
            refuse(msg, cap, "out of memory");
            dw_program_free(p);
            return NULL;
        }
    }
    if (build(&L) || dw_program_verify(p, msg, cap)) { dw_program_free(p); return NULL; }
    if (dw_program_prepare(p)) { refuse(msg, cap, "out of memory"); dw_program_free(p); return NULL; }
    return p;
}

dw_program *dw_artifact_load_file(const char *path, char *msg, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) { refuse(msg, cap, "cannot open %s: %s", path, strerror(errno)); return NULL; }
    struct stat st;
    if (fstat(fd, &st) || st.st_size <= 0) { close(fd); refuse(msg, cap, "cannot read %s", path); return NULL; }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) { refuse(msg, cap, "cannot map %s: %s", path, strerror(errno)); return NULL; }
    dw_program *p = dw_artifact_load(m, (size_t)st.st_size, msg, cap);
    munmap(m, (size_t)st.st_size);
    return p;
}
