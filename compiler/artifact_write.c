#include "artifact_write.h"
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "../vm/artifact_format.h"

typedef struct wbuf { dw_buf b; uint32_t count; } wbuf;

typedef struct writer {
    wbuf sec[DW_SEC__COUNT];
    uint32_t *str_slots; uint32_t str_cap;   /* dedupe: strtab index + 1 */
    bool oom;
} writer;

static void put(writer *w, dw_section_id s, const void *p, size_t n)
{
    if (dw_buf_append(&w->sec[s].b, p, n)) w->oom = true;
    w->sec[s].count++;
}

static void put_u32(writer *w, dw_section_id s, uint32_t v) { put(w, s, &v, 4); }

/* strtab index of a string, deduplicated */
static uint32_t str_index(writer *w, const char *s, size_t len)
{
    wbuf *tab = &w->sec[DW_SEC_STRTAB];
    if ((tab->count + 1) * 2 > w->str_cap) {
        uint32_t cap = w->str_cap ? w->str_cap * 2 : 1024;
        uint32_t *slots = calloc(cap, sizeof *slots);
        if (!slots) { w->oom = true; return 0; }
        const uint32_t *ents = (const uint32_t *)tab->b.p;
        for (uint32_t i = 0; i < tab->count; i++) {
            uint32_t j = (uint32_t)XXH3_64bits(w->sec[DW_SEC_STRDATA].b.p + ents[2 * i], ents[2 * i + 1]) & (cap - 1);
            while (slots[j]) j = (j + 1) & (cap - 1);
            slots[j] = i + 1;
        }
        free(w->str_slots);
        w->str_slots = slots;
        w->str_cap = cap;
    }
    uint32_t j = (uint32_t)XXH3_64bits(s, len) & (w->str_cap - 1);
    while (w->str_slots[j]) {
        const uint32_t *e = (const uint32_t *)tab->b.p + 2 * (w->str_slots[j] - 1);
        if (e[1] == len && memcmp(w->sec[DW_SEC_STRDATA].b.p + e[0], s, len) == 0) return w->str_slots[j] - 1;
        j = (j + 1) & (w->str_cap - 1);
    }
    uint32_t ent[2] = { (uint32_t)w->sec[DW_SEC_STRDATA].b.len, (uint32_t)len };
    if (dw_buf_append(&w->sec[DW_SEC_STRDATA].b, s, len) || dw_buf_putc(&w->sec[DW_SEC_STRDATA].b, 0)) w->oom = true;
    put(w, DW_SEC_STRTAB, ent, sizeof ent);
    w->str_slots[j] = tab->count;
    return tab->count - 1;
}

/* Write v (children first); returns its value index. */
static uint32_t put_value(writer *w, const dw_value *v)
{
    struct { uint8_t kind, pad[3]; uint32_t n; uint64_t payload; } rec;
    memset(&rec, 0, sizeof rec);
    rec.kind = v->kind;
    rec.n = v->n;
    switch ((dw_vkind)v->kind) {
    case DW_V_BOOL: rec.payload = v->u.b; rec.n = 0; break;
    case DW_V_LONG: case DW_V_DECIMAL: case DW_V_DATETIME: case DW_V_DURATION:
        rec.payload = (uint64_t)v->u.i; rec.n = 0; break;
    case DW_V_STRING: rec.payload = str_index(w, v->u.s, v->n); break;
    case DW_V_ENTITY: {
        uint32_t u[2] = { str_index(w, v->u.uid->type, v->u.uid->tlen), str_index(w, v->u.uid->id, v->u.uid->idlen) };
        put(w, DW_SEC_UIDS, u, sizeof u);
        rec.payload = w->sec[DW_SEC_UIDS].count - 1;
        rec.n = 0;
        break;
    }
    case DW_V_SET: {
        /* children first, then copy their indices into a contiguous run */
        uint32_t *idx = v->n ? malloc(v->n * sizeof *idx) : NULL;
        if (v->n && !idx) { w->oom = true; break; }
        for (uint32_t i = 0; i < v->n; i++) idx[i] = put_value(w, &v->u.elems[i]);
        /* a run of VALUES indices is stored as FIELDS with key 0xFFFFFFFF */
        rec.payload = w->sec[DW_SEC_FIELDS].count;
        for (uint32_t i = 0; i < v->n; i++) { uint32_t f[2] = { UINT32_MAX, idx[i] }; put(w, DW_SEC_FIELDS, f, sizeof f); }
        free(idx);
        break;
    }
    case DW_V_RECORD: {
        uint32_t *idx = v->n ? malloc(v->n * sizeof *idx) : NULL;
        if (v->n && !idx) { w->oom = true; break; }
        for (uint32_t i = 0; i < v->n; i++) idx[i] = put_value(w, &v->u.fields[i].v);
        rec.payload = w->sec[DW_SEC_FIELDS].count;
        for (uint32_t i = 0; i < v->n; i++) {
            uint32_t f[2] = { str_index(w, v->u.fields[i].key, v->u.fields[i].klen), idx[i] };
            put(w, DW_SEC_FIELDS, f, sizeof f);
        }
        free(idx);
        break;
    }
    case DW_V_IPADDR: {
        uint8_t ip[20] = { 0 };
        ip[0] = v->u.ip->v6;
        ip[1] = v->u.ip->prefix;
        memcpy(ip + 2, v->u.ip->addr, 16);
        put(w, DW_SEC_IPS, ip, sizeof ip);
        rec.payload = w->sec[DW_SEC_IPS].count - 1;
        rec.n = 0;
        break;
    }
    default: break;
    }
    put(w, DW_SEC_VALUES, &rec, sizeof rec);
    return w->sec[DW_SEC_VALUES].count - 1;
}

int dw_artifact_write(const dw_program *p, uint64_t schema_digest, dw_buf *out)
{
    if (p->temporal.nleaves) return -2;     /* temporal tables are not serialised yet */
    writer w;
    memset(&w, 0, sizeof w);
    for (uint32_t i = 0; i < p->nstrs; i++) put_u32(&w, DW_SEC_STRS, str_index(&w, p->strs[i].s, p->strs[i].len));
    for (uint32_t i = 0; i < p->nconsts; i++) put_u32(&w, DW_SEC_CONSTS, put_value(&w, &p->consts[i]));
    if (p->ncode) put(&w, DW_SEC_CODE, p->code, (size_t)p->ncode * 4);
    w.sec[DW_SEC_CODE].count = p->ncode;
    for (uint32_t i = 0; i < p->npats; i++) {
        uint32_t pr[2] = { w.sec[DW_SEC_SEGS].count, (uint32_t)p->pats[i].nseg };
        for (size_t s = 0; s < p->pats[i].nseg; s++) put_u32(&w, DW_SEC_SEGS, str_index(&w, p->pats[i].seg[s].s, p->pats[i].seg[s].len));
        put(&w, DW_SEC_PATS, pr, sizeof pr);
    }
    for (uint32_t i = 0; i < p->nkeylists; i++) put(&w, DW_SEC_KEYLISTS, &p->keylists[i], sizeof p->keylists[i]);
    for (uint32_t i = 0; i < p->nkeyidx; i++) put_u32(&w, DW_SEC_KEYIDX, p->keyidx[i]);
    for (uint32_t i = 0; i < p->npolicies; i++) {
        const dw_policy_code *pc = &p->policies[i];
        dw_artifact_policy ap;
        memset(&ap, 0, sizeof ap);
        ap.effect = pc->effect;
        ap.entry = pc->entry;
        ap.end = pc->end;
        ap.max_stack = pc->max_stack;
        ap.id = str_index(&w, pc->id.s, pc->id.len);
        ap.annot_first = w.sec[DW_SEC_ANNOTS].count;
        ap.nannots = pc->nannots;
        ap.line = pc->src_line;
        ap.col = pc->src_col;
        for (uint32_t a = 0; a < pc->nannots; a++) {
            uint32_t kv[2] = { str_index(&w, pc->annots[a].key.s, pc->annots[a].key.len),
                               str_index(&w, pc->annots[a].value.s, pc->annots[a].value.len) };
            put(&w, DW_SEC_ANNOTS, kv, sizeof kv);
        }
        put(&w, DW_SEC_POLICIES, &ap, sizeof ap);
    }
    for (uint32_t i = 0; i < p->nixents; i++) {
        const dw_index_entry *e = &p->ixents[i];
        uint8_t rec[16] = { e->kind, e->var, 0, 0 };
        memcpy(rec + 4, &e->type_str, 4);
        memcpy(rec + 8, &e->id_str, 4);
        memcpy(rec + 12, &e->policy, 4);
        put(&w, DW_SEC_INDEX, rec, sizeof rec);
    }
    dw_artifact_meta meta = { p->max_stack, 0, schema_digest };
    put(&w, DW_SEC_META, &meta, sizeof meta);

    w.sec[DW_SEC_STRDATA].count = (uint32_t)w.sec[DW_SEC_STRDATA].b.len;   /* counted in bytes */
    /* layout: header, section table, sections 8-byte aligned */
    uint32_t nsec = DW_SEC__COUNT - 1;
    size_t off = DW_ARTIFACT_HEADER + (size_t)nsec * 16;
    size_t base = out->len;
    uint8_t hdr[DW_ARTIFACT_HEADER];
    memset(hdr, 0, sizeof hdr);
    memcpy(hdr, DW_ARTIFACT_MAGIC, 4);
    uint16_t ver[2] = { DW_ARTIFACT_MAJOR, DW_ARTIFACT_MINOR };
    memcpy(hdr + 4, ver, 4);
    memcpy(hdr + 8, &nsec, 4);
    if (dw_buf_append(out, hdr, sizeof hdr)) w.oom = true;
    size_t data_off = off;
    for (uint32_t s = 1; s <= nsec; s++) {
        data_off = (data_off + 7) & ~(size_t)7;
        uint32_t ent[4] = { s, w.sec[s].count, (uint32_t)data_off, (uint32_t)w.sec[s].b.len };
        if (dw_buf_append(out, ent, sizeof ent)) w.oom = true;
        data_off += w.sec[s].b.len;
    }
    for (uint32_t s = 1; s <= nsec; s++) {
        while ((out->len - base) % 8) if (dw_buf_putc(out, 0)) { w.oom = true; break; }
        if (w.sec[s].b.len && dw_buf_append(out, w.sec[s].b.p, w.sec[s].b.len)) w.oom = true;
    }
    for (uint32_t s = 0; s < DW_SEC__COUNT; s++) dw_buf_free(&w.sec[s].b);
    free(w.str_slots);
    if (w.oom) return -1;
    uint64_t size = out->len - base;
    memcpy(out->p + base + 16, &size, 8);
    uint64_t sum = XXH3_64bits_withSeed(out->p + base + 32, size - 32, XXH3_64bits(out->p + base, 16));
    memcpy(out->p + base + 24, &sum, 8);
    return 0;
}
