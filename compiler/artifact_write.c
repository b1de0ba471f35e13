#include "artifact_write.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "../stdlib/le.h"
#include "../vm/artifact_format.h"

typedef struct wbuf { dw_buf b; uint32_t count; } wbuf;

/* Deduplication map: byte keys -> u32, insertion-ordered (so deterministic). */
typedef struct dmap {
    uint32_t *slots; uint32_t cap;     /* entry + 1, 0 empty */
    dw_buf keys;
    uint32_t *off, *len, *val; uint32_t n, ecap;
} dmap;

typedef struct writer {
    wbuf sec[DW_SEC__COUNT];
    dmap strs, uids, ips, vals, consts, ixkeys, tpreds, twins;
    bool oom;
} writer;

static void dmap_free(dmap *m)
{
    free(m->slots); free(m->off); free(m->len); free(m->val);
    dw_buf_free(&m->keys);
}

/* The value stored under key, or UINT32_MAX after adding key -> val. */
static uint32_t dmap_get_or_add(writer *w, dmap *m, const void *key, size_t n, uint32_t val)
{
    if ((m->n + 1) * 2 > m->cap) {
        uint32_t cap = m->cap ? m->cap * 2 : 256;
        uint32_t *slots = calloc(cap, sizeof *slots);
        if (!slots) { w->oom = true; return 0; }
        for (uint32_t i = 0; i < m->n; i++) {
            uint32_t j = (uint32_t)XXH3_64bits(m->keys.p + m->off[i], m->len[i]) & (cap - 1);
            while (slots[j]) j = (j + 1) & (cap - 1);
            slots[j] = i + 1;
        }
        free(m->slots);
        m->slots = slots;
        m->cap = cap;
    }
    uint32_t j = (uint32_t)XXH3_64bits(key, n) & (m->cap - 1);
    while (m->slots[j]) {
        uint32_t e = m->slots[j] - 1;
        if (m->len[e] == n && (n == 0 || memcmp(m->keys.p + m->off[e], key, n) == 0)) return m->val[e];
        j = (j + 1) & (m->cap - 1);
    }
    if (m->n == m->ecap) {
        uint32_t ecap = m->ecap ? m->ecap * 2 : 256;
        uint32_t *o = realloc(m->off, ecap * sizeof *o);
        if (o) m->off = o;
        uint32_t *l = realloc(m->len, ecap * sizeof *l);
        if (l) m->len = l;
        uint32_t *v = realloc(m->val, ecap * sizeof *v);
        if (v) m->val = v;
        if (!o || !l || !v) { w->oom = true; return 0; }
        m->ecap = ecap;
    }
    m->off[m->n] = (uint32_t)m->keys.len;
    m->len[m->n] = (uint32_t)n;
    m->val[m->n] = val;
    if (n && dw_buf_append(&m->keys, key, n)) { w->oom = true; return 0; }
    m->slots[j] = ++m->n;
    return UINT32_MAX;
}

static void put(writer *w, dw_section_id s, const void *p, size_t n)
{
    if (dw_buf_append(&w->sec[s].b, p, n)) w->oom = true;
    w->sec[s].count++;
}

static void wr32(uint8_t *p, uint32_t v) { dw_put_le32(p, v); }

/* n u32s as one little-endian record (n <= 5) */
static void put_u32s(writer *w, dw_section_id s, const uint32_t *v, size_t n)
{
    uint8_t r[20];
    for (size_t i = 0; i < n; i++) wr32(r + 4 * i, v[i]);
    put(w, s, r, 4 * n);
}

static void put_u32(writer *w, dw_section_id s, uint32_t v) { put_u32s(w, s, &v, 1); }

/* strtab index of a string, deduplicated */
static uint32_t str_index(writer *w, const char *s, size_t len)
{
    uint32_t next = w->sec[DW_SEC_STRTAB].count;
    uint32_t got = dmap_get_or_add(w, &w->strs, s, len, next);
    if (got != UINT32_MAX) return got;
    put_u32(w, DW_SEC_STRTAB, (uint32_t)w->sec[DW_SEC_STRDATA].b.len);
    if ((len && dw_buf_append(&w->sec[DW_SEC_STRDATA].b, s, len)) || dw_buf_putc(&w->sec[DW_SEC_STRDATA].b, 0)) w->oom = true;
    return next;
}

/* Index of a record in a deduplicated section. */
static uint32_t put_dedup(writer *w, dmap *m, dw_section_id s, const void *rec, size_t n)
{
    uint32_t next = w->sec[s].count;
    uint32_t got = dmap_get_or_add(w, m, rec, n, next);
    if (got != UINT32_MAX) return got;
    put(w, s, rec, n);
    return next;
}

/* Write v (children first); returns its value index.  Equal values share one. */
static uint32_t put_value(writer *w, const dw_value *v)
{
    uint8_t rec[16];
    memset(rec, 0, sizeof rec);
    uint32_t n = 0;
    uint64_t payload = 0;
    rec[0] = v->kind;
    switch ((dw_vkind)v->kind) {
    case DW_V_BOOL: payload = v->u.b; break;
    case DW_V_LONG: case DW_V_DECIMAL: case DW_V_DATETIME: case DW_V_DURATION: payload = (uint64_t)v->u.i; break;
    case DW_V_STRING: payload = str_index(w, v->u.s, v->n); break;
    case DW_V_ENTITY: {
        uint8_t u[8];
        wr32(u, str_index(w, v->u.uid->type, v->u.uid->tlen));
        wr32(u + 4, str_index(w, v->u.uid->id, v->u.uid->idlen));
        payload = put_dedup(w, &w->uids, DW_SEC_UIDS, u, sizeof u);
        break;
    }
    case DW_V_IPADDR: {
        uint8_t ip[20] = { 0 };
        ip[0] = v->u.ip->v6;
        ip[1] = v->u.ip->prefix;
        memcpy(ip + 2, v->u.ip->addr, 16);
        payload = put_dedup(w, &w->ips, DW_SEC_IPS, ip, sizeof ip);
        break;
    }
    case DW_V_SET: case DW_V_RECORD: {
        /* children first; the key is the kind and the run's content */
        n = v->n;
        uint8_t *key = malloc(8 + (size_t)n * 8);
        if (!key) { w->oom = true; return 0; }
        key[0] = 'C'; key[1] = v->kind; key[2] = key[3] = 0;
        wr32(key + 4, n);
        for (uint32_t i = 0; i < n; i++) {
            bool set = v->kind == DW_V_SET;
            uint32_t vi = put_value(w, set ? &v->u.elems[i] : &v->u.fields[i].v);
            uint32_t ki = set ? UINT32_MAX : str_index(w, v->u.fields[i].key, v->u.fields[i].klen);
            wr32(key + 8 + 8 * (size_t)i, ki);
            wr32(key + 12 + 8 * (size_t)i, vi);
        }
        uint32_t next = w->sec[DW_SEC_VALUES].count;
        uint32_t got = dmap_get_or_add(w, &w->vals, key, 8 + (size_t)n * 8, next);
        if (got != UINT32_MAX) { free(key); return got; }
        payload = w->sec[DW_SEC_FIELDS].count;
        for (uint32_t i = 0; i < n; i++) put(w, DW_SEC_FIELDS, key + 8 + 8 * (size_t)i, 8);
        free(key);
        wr32(rec + 4, n);
        dw_put_le64(rec + 8, payload);
        put(w, DW_SEC_VALUES, rec, sizeof rec);
        return next;
    }
    default: break;
    }
    wr32(rec + 4, n);
    dw_put_le64(rec + 8, payload);
    uint8_t key[17];
    key[0] = 'S';
    memcpy(key + 1, rec, 16);
    uint32_t next = w->sec[DW_SEC_VALUES].count;
    uint32_t got = dmap_get_or_add(w, &w->vals, key, sizeof key, next);
    if (got != UINT32_MAX) return got;
    put(w, DW_SEC_VALUES, rec, sizeof rec);
    return next;
}

/* The longest prefix P such that some policy's id is P followed by its index
 * in decimal: the first such policy decides.  Returns its length, or -1. */
static long positional_prefix(const dw_program *p, const char **prefix)
{
    for (uint32_t i = 0; i < p->npolicies; i++) {
        char num[16];
        int n = snprintf(num, sizeof num, "%u", i);
        const dw_str *id = &p->policies[i].id;
        if (id->len >= (size_t)n && memcmp(id->s + id->len - n, num, (size_t)n) == 0) {
            *prefix = id->s;
            return (long)(id->len - (size_t)n);
        }
    }
    return -1;
}

static bool is_positional(const dw_str *id, const char *prefix, long plen, uint32_t index)
{
    char num[16];
    int n = snprintf(num, sizeof num, "%u", index);
    return plen >= 0 && id->len == (size_t)plen + (size_t)n && memcmp(id->s, prefix, (size_t)plen) == 0 &&
           memcmp(id->s + plen, num, (size_t)n) == 0;
}

static void put_temporal(writer *w, const dw_program *p, const uint32_t *cremap)
{
    const dw_temporal_tables *t = &p->temporal;
    for (uint32_t i = 0; i < t->ntfs; i++) {
        const dw_tf *f = &t->tfs[i];
        uint8_t r[DW_AREC_TF];
        memset(r, 0, sizeof r);
        r[0] = f->kind;
        r[1] = f->op;
        dw_put_le16(r + 2, f->var);
        uint32_t a = f->a, b = f->b, c = 0;
        if (f->kind == DW_TF_PRED) {
            uint8_t pr[12];
            wr32(pr, f->type_str); wr32(pr + 4, f->id_str); wr32(pr + 8, f->kind_str);
            a = f->first;
            b = f->n;
            c = put_dedup(w, &w->tpreds, DW_SEC_TPREDS, pr, sizeof pr);
        } else if (f->kind == DW_TF_FORMERLY || f->kind == DW_TF_PREVIOUS || f->kind == DW_TF_SINCE) {
            uint8_t win[8];
            dw_put_le64(win, (uint64_t)f->window);
            c = put_dedup(w, &w->twins, DW_SEC_TWINDOWS, win, sizeof win);
        }
        wr32(r + 4, a); wr32(r + 8, b); wr32(r + 12, c);
        put(w, DW_SEC_TFORMULAS, r, sizeof r);
    }
    for (uint32_t i = 0; i < t->ntpatterns; i++) {
        uint32_t r[2] = { t->tpatterns[i].path_str, t->tpatterns[i].term };
        put_u32s(w, DW_SEC_TPATTERNS, r, 2);
    }
    for (uint32_t i = 0; i < t->ntterms; i++) {
        const dw_tterm *tt = &t->tterms[i];
        uint8_t r[DW_AREC_TTERM] = { tt->kind };
        uint32_t a = tt->a;
        if (tt->kind == DW_TT_CONST && a < p->nconsts) a = cremap[a];
        wr32(r + 4, a); wr32(r + 8, tt->n);
        put(w, DW_SEC_TTERMS, r, sizeof r);
    }
    for (uint32_t i = 0; i < t->ntargs; i++) put_u32(w, DW_SEC_TARGS, t->targs[i]);
    for (uint32_t i = 0; i < t->ntaggs; i++) {
        const dw_tagg *g = &t->taggs[i];
        uint8_t r[DW_AREC_TAGG] = { 0 };
        wr32(r, g->body);
        dw_put_le16(r + 4, g->sum_var);
        wr32(r + 8, g->first_var); wr32(r + 12, g->nvars);
        put(w, DW_SEC_TAGGS, r, sizeof r);
    }
    for (uint32_t i = 0; i < t->naggvars; i++) {
        uint8_t r[2];
        dw_put_le16(r, t->aggvars[i]);
        put(w, DW_SEC_AGGVARS, r, sizeof r);
    }
    for (uint32_t i = 0; i < t->nleaves; i++) {
        const dw_tleaf *l = &t->leaves[i];
        uint8_t r[DW_AREC_TLEAF] = { 0 };
        wr32(r, l->root); wr32(r + 4, l->nvars);
        dw_put_le64(r + 8, (uint64_t)l->reach);
        dw_put_le64(r + 16, l->identity);
        put(w, DW_SEC_TLEAVES, r, sizeof r);
    }
    for (uint32_t i = 0; i < p->npolicies; i++) {
        const dw_policy_code *pc = &p->policies[i];
        if (!pc->nleaves) continue;
        uint32_t r[5] = { i, pc->first_leaf, pc->nleaves, pc->scope_entry, pc->scope_end };
        put_u32s(w, DW_SEC_TPOLICIES, r, 5);
    }
}

/* The provider tables (vm/provider.h): every record is u32s. */
static void put_providers(writer *w, const dw_program *p, const uint32_t *cremap)
{
    const dw_provider_tables *t = &p->provider;
    for (uint32_t i = 0; i < t->ntypes; i++) {
        uint32_t r[4] = { t->types[i].kind, t->types[i].elem, t->types[i].first_field, t->types[i].nfields };
        put_u32s(w, DW_SEC_PTYPES, r, 4);
    }
    for (uint32_t i = 0; i < t->nfields; i++) {
        uint32_t r[3] = { t->fields[i].name, t->fields[i].type, t->fields[i].required };
        put_u32s(w, DW_SEC_PFIELDS, r, 3);
    }
    for (uint32_t i = 0; i < t->nargs; i++) {
        const dw_parg *g = &t->args[i];
        uint32_t r[3] = { g->kind, g->kind == DW_PARG_CONST && g->a < p->nconsts ? cremap[g->a] : g->a, g->n };
        put_u32s(w, DW_SEC_PARGS, r, 3);
    }
    for (uint32_t i = 0; i < t->nsegs; i++) put_u32(w, DW_SEC_PSEGS, t->segs[i]);
    for (uint32_t i = 0; i < t->nsteps; i++) {
        uint32_t r[4] = { t->steps[i].name, t->steps[i].first_arg, t->steps[i].nargs, t->steps[i].out };
        put_u32s(w, DW_SEC_PSTEPS, r, 4);
    }
    for (uint32_t i = 0; i < t->ncalls; i++) {
        uint32_t r[4] = { t->calls[i].policy, t->calls[i].first_step, t->calls[i].nsteps, t->calls[i].ordinal };
        put_u32s(w, DW_SEC_PCALLS, r, 4);
    }
    for (uint32_t i = 0; i < p->npolicies; i++) {
        const dw_policy_code *pc = &p->policies[i];
        if (!pc->npcalls) continue;
        uint32_t r[5] = { i, pc->first_pcall, pc->npcalls, pc->scope_entry, pc->scope_end };
        put_u32s(w, DW_SEC_PPOLICIES, r, 5);
    }
}

int dw_artifact_write_for_isa(const dw_program *p, uint64_t schema_digest, uint64_t isa_digest, dw_buf *out)
{
    writer w;
    memset(&w, 0, sizeof w);
    for (uint32_t i = 0; i < p->nstrs; i++) put_u32(&w, DW_SEC_STRS, str_index(&w, p->strs[i].s, p->strs[i].len));
    /* constants: one per distinct value, renumbered in first-use order */
    uint32_t *cremap = p->nconsts ? malloc((size_t)p->nconsts * sizeof *cremap) : NULL;
    if (p->nconsts && !cremap) return -1;
    for (uint32_t i = 0; i < p->nconsts && !w.oom; i++) {
        uint32_t vi = put_value(&w, &p->consts[i]);
        uint32_t next = w.sec[DW_SEC_CONSTS].count;
        uint32_t got = dmap_get_or_add(&w, &w.consts, &vi, 4, next);
        if (got == UINT32_MAX) { put_u32(&w, DW_SEC_CONSTS, vi); got = next; }
        cremap[i] = got;
    }
    for (uint32_t i = 0; i < p->ncode; i++) {
        uint32_t ins = p->code[i];
        unsigned op = DW_INS_OP(ins);
        if (op < DW_OP__COUNT && dw_opinfo_table[op].kind == DW_OPK_K && DW_INS_A(ins) < p->nconsts)
            ins = DW_INS(op, cremap[DW_INS_A(ins)]);
        put_u32(&w, DW_SEC_CODE, ins);
    }
    for (uint32_t i = 0; i < p->npats; i++) {
        uint32_t pr[2] = { w.sec[DW_SEC_SEGS].count, (uint32_t)p->pats[i].nseg };
        for (size_t s = 0; s < p->pats[i].nseg; s++) put_u32(&w, DW_SEC_SEGS, str_index(&w, p->pats[i].seg[s].s, p->pats[i].seg[s].len));
        put_u32s(&w, DW_SEC_PATS, pr, 2);
    }
    for (uint32_t i = 0; i < p->nkeylists; i++) {
        uint32_t kl[2] = { p->keylists[i].first, p->keylists[i].n };
        put_u32s(&w, DW_SEC_KEYLISTS, kl, 2);
    }
    for (uint32_t i = 0; i < p->nkeyidx; i++) put_u32(&w, DW_SEC_KEYIDX, p->keyidx[i]);
    const char *prefix = NULL;
    long plen = positional_prefix(p, &prefix);
    uint32_t prefix_str = plen >= 0 ? str_index(&w, prefix, (size_t)plen) : UINT32_MAX;
    for (uint32_t i = 0; i < p->npolicies; i++) {
        const dw_policy_code *pc = &p->policies[i];
        uint8_t ap[DW_AREC_POLICY] = { pc->effect };
        if (is_positional(&pc->id, prefix, plen, i)) ap[1] |= DW_APOL_POSITIONAL_ID;
        else wr32(ap + 16, str_index(&w, pc->id.s, pc->id.len));
        wr32(ap + 4, pc->entry);
        wr32(ap + 8, pc->end);
        wr32(ap + 12, pc->max_stack);
        wr32(ap + 20, pc->nannots);
        wr32(ap + 24, pc->src_line);
        wr32(ap + 28, pc->src_col);
        for (uint32_t a = 0; a < pc->nannots; a++) {
            uint32_t kv[2] = { str_index(&w, pc->annots[a].key.s, pc->annots[a].key.len),
                               str_index(&w, pc->annots[a].value.s, pc->annots[a].value.len) };
            put_u32s(&w, DW_SEC_ANNOTS, kv, 2);
        }
        put(&w, DW_SEC_POLICIES, ap, sizeof ap);
    }
    for (uint32_t i = 0; i < p->nixents; i++) {
        const dw_index_entry *e = &p->ixents[i];
        uint8_t key[20] = { e->kind, e->var };
        if (e->kind != DW_IX_ALWAYS) wr32(key + 4, e->type_str);
        else key[1] = 0;
        if (e->kind == DW_IX_ENTITY || e->kind == DW_IX_PAIR) wr32(key + 8, e->id_str);
        if (e->kind == DW_IX_PAIR) { wr32(key + 12, e->act_type_str); wr32(key + 16, e->act_id_str); }
        uint32_t r[2] = { put_dedup(&w, &w.ixkeys, DW_SEC_IXKEYS, key, sizeof key), e->policy };
        put_u32s(&w, DW_SEC_INDEX, r, 2);
    }
    put_temporal(&w, p, cremap);
    put_providers(&w, p, cremap);
    free(cremap);
    uint8_t meta[DW_AREC_META];
    wr32(meta, p->max_stack);
    wr32(meta + 4, prefix_str);
    dw_put_le64(meta + 8, schema_digest);
    put(&w, DW_SEC_META, meta, sizeof meta);
    if (p->serve_len) put(&w, DW_SEC_SERVE, p->serve, p->serve_len);

    /* layout: header, section table (non-empty sections only), sections back to back */
    uint32_t nsec = 0;
    for (uint32_t s = 1; s < DW_SEC__COUNT; s++) if (w.sec[s].b.len) nsec++;
    size_t base = out->len;
    uint8_t hdr[DW_ARTIFACT_HEADER];
    memset(hdr, 0, sizeof hdr);
    memcpy(hdr, DW_ARTIFACT_MAGIC, 4);
    dw_put_le16(hdr + 4, DW_ARTIFACT_MAJOR);
    dw_put_le16(hdr + 6, DW_ARTIFACT_MINOR);
    wr32(hdr + 8, nsec);
    wr32(hdr + 12, p->box_profile ? DW_AF_BOX_PROFILE : 0);
    dw_put_le64(hdr + 32, isa_digest);
    if (dw_buf_append(out, hdr, sizeof hdr)) w.oom = true;
    for (uint32_t s = 1; s < DW_SEC__COUNT; s++) {
        if (!w.sec[s].b.len) continue;
        if (w.sec[s].b.len > UINT32_MAX) w.oom = true;
        uint8_t ent[8];
        wr32(ent, s);
        wr32(ent + 4, (uint32_t)w.sec[s].b.len);
        if (dw_buf_append(out, ent, sizeof ent)) w.oom = true;
    }
    for (uint32_t s = 1; s < DW_SEC__COUNT; s++)
        if (w.sec[s].b.len && dw_buf_append(out, w.sec[s].b.p, w.sec[s].b.len)) w.oom = true;
    for (uint32_t s = 0; s < DW_SEC__COUNT; s++) dw_buf_free(&w.sec[s].b);
    dmap_free(&w.strs); dmap_free(&w.uids); dmap_free(&w.ips);
    dmap_free(&w.vals); dmap_free(&w.consts); dmap_free(&w.ixkeys);
    dmap_free(&w.tpreds); dmap_free(&w.twins);
    if (w.oom) return -1;
    uint64_t size = out->len - base;
    dw_put_le64(out->p + base + 16, size);
    uint64_t sum = XXH3_64bits_withSeed(out->p + base + 32, size - 32, XXH3_64bits(out->p + base, 16));
    dw_put_le64(out->p + base + 24, sum);
    return 0;
}

int dw_artifact_write(const dw_program *p, uint64_t schema_digest, dw_buf *out)
{
    return dw_artifact_write_for_isa(p, schema_digest, dw_isa_digest(), out);
}
