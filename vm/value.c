#include "value.h"
#include <stdlib.h>
#include <string.h>
/* inlined: the hashes of short keys and uids on every decision, without a call through the PLT (same values) */
#define XXH_INLINE_ALL
#include <xxhash.h>
#include "../stdlib/bytes.h"
#include "../stdlib/cedar_quote.h"
#include "../stdlib/uid_hash.h"

uint64_t dw_serial_next(void)
{
    static _Atomic uint64_t last;
    return ++last;
}

const char *dw_vkind_name(dw_vkind k)
{
    static const char *names[DW_V__COUNT] = {
        "Bool", "Long", "String", "Entity", "Set", "Record",
        "decimal", "ipaddr", "datetime", "duration", "Array", "Null",
    };
    return (unsigned)k < DW_V__COUNT ? names[k] : "?";
}

uint64_t dw_uid_hash(const char *type, size_t tlen, const char *id, size_t idlen)
{
    /* the one formula, in two steps (stdlib/uid_hash.h): a reader that
     * hashed the type already reuses it */
    return dw_uid_hash_typed(dw_type_hash(type, tlen), id, idlen);
}

bool dw_uid_eq(const dw_uid *a, const dw_uid *b)
{
    if (a == b) return true;
    return a->hash == b->hash && a->tlen == b->tlen && a->idlen == b->idlen &&
           dw_mem_eq(a->type, b->type, a->tlen) && dw_mem_eq(a->id, b->id, a->idlen);
}

int dw_bytes_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    size_t m = an < bn ? an : bn;
    int c = m ? memcmp(a, b, m) : 0;
    if (c) return c < 0 ? -1 : 1;
    return an < bn ? -1 : an > bn ? 1 : 0;
}

uint32_t dw_key_hash(const char *key, size_t len) { return (uint32_t)XXH3_64bits(key, len); }

bool dw_value_eq(const dw_value *a, const dw_value *b)
{
    if (a->kind != b->kind) return false;
    switch ((dw_vkind)a->kind) {
    case DW_V_BOOL: return a->u.b == b->u.b;
    case DW_V_LONG: case DW_V_DECIMAL: case DW_V_DATETIME: case DW_V_DURATION: return a->u.i == b->u.i;
    case DW_V_STRING: return a->n == b->n && (a->u.s == b->u.s || dw_mem_eq(a->u.s, b->u.s, a->n));
    case DW_V_ENTITY: return dw_uid_eq(a->u.uid, b->u.uid);
    default: return dw_value_cmp(a, b) == 0;
    }
}

static int cmp_i64(int64_t a, int64_t b) { return a < b ? -1 : a > b ? 1 : 0; }

int dw_value_cmp(const dw_value *a, const dw_value *b)
{
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    switch ((dw_vkind)a->kind) {
    case DW_V_BOOL: return (int)a->u.b - (int)b->u.b;
    case DW_V_LONG: case DW_V_DECIMAL: case DW_V_DATETIME: case DW_V_DURATION:
        return cmp_i64(a->u.i, b->u.i);
    case DW_V_STRING: return dw_bytes_cmp(a->u.s, a->n, b->u.s, b->n);
    case DW_V_ENTITY: {
        const dw_uid *x = a->u.uid, *y = b->u.uid;
        if (x == y) return 0;
        int c = dw_bytes_cmp(x->type, x->tlen, y->type, y->tlen);
        return c ? c : dw_bytes_cmp(x->id, x->idlen, y->id, y->idlen);
    }
    case DW_V_NULL: return 0;
    case DW_V_SET: case DW_V_ARRAY: {
        if (a->n != b->n) return a->n < b->n ? -1 : 1;
        for (uint32_t i = 0; i < a->n; i++) {
            int c = dw_value_cmp(&a->u.elems[i], &b->u.elems[i]);
            if (c) return c;
        }
        return 0;
    }
    case DW_V_RECORD: {
        if (a->n != b->n) return a->n < b->n ? -1 : 1;
        for (uint32_t i = 0; i < a->n; i++) {
            const dw_field *f = &a->u.fields[i], *g = &b->u.fields[i];
            int c = dw_bytes_cmp(f->key, f->klen, g->key, g->klen);
            if (c) return c;
            c = dw_value_cmp(&f->v, &g->v);
            if (c) return c;
        }
        return 0;
    }
    case DW_V_IPADDR: return dw_ip_compare(a->u.ip, b->u.ip);
    default: return 0;
    }
}

bool dw_make_string(dw_arena *a, const char *s, size_t n, dw_value *out)
{
    char *p = dw_arena_memdup(a, s, n);
    if (!p) return false;
    out->kind = DW_V_STRING;
    out->n = (uint32_t)n;
    out->u.s = p;
    return true;
}

const dw_uid *dw_make_uid(dw_arena *a, const char *type, size_t tlen, const char *id, size_t idlen)
{
    dw_uid *u = dw_arena_alloc_raw(a, sizeof *u);     /* every member set below */
    if (!u) return NULL;
    u->type = dw_arena_memdup(a, type, tlen);
    u->id = dw_arena_memdup(a, id, idlen);
    if (!u->type || !u->id) return NULL;
    u->tlen = (uint32_t)tlen;
    u->idlen = (uint32_t)idlen;
    u->hash = dw_uid_hash(type, tlen, id, idlen);
    return u;
}

static int value_qcmp(const void *x, const void *y) { return dw_value_cmp(x, y); }

dw_value dw_make_set(dw_value *elems, size_t n)
{
    if (n > 1) {
        qsort(elems, n, sizeof *elems, value_qcmp);
        size_t w = 1;
        for (size_t r = 1; r < n; r++)
            if (dw_value_cmp(&elems[w - 1], &elems[r]) != 0) elems[w++] = elems[r];
        n = w;
    }
    dw_value v = { .kind = DW_V_SET, .n = (uint32_t)n };
    v.u.elems = elems;
    return v;
}

static int field_qcmp(const void *x, const void *y)
{
    const dw_field *a = x, *b = y;
    return dw_bytes_cmp(a->key, a->klen, b->key, b->klen);
}

bool dw_make_record(dw_field *fields, size_t n, dw_value *out)
{
    for (size_t i = 0; i < n; i++) fields[i].khash = dw_key_hash(fields[i].key, fields[i].klen);
    if (n > 16) qsort(fields, n, sizeof *fields, field_qcmp);
    else                         /* a request's records are small: no qsort call per record */
        for (size_t i = 1; i < n; i++) {
            dw_field f = fields[i];
            size_t k = i;
            for (; k > 0 && field_qcmp(&fields[k - 1], &f) > 0; k--) fields[k] = fields[k - 1];
            fields[k] = f;
        }
    for (size_t i = 1; i < n; i++)
        if (field_qcmp(&fields[i - 1], &fields[i]) == 0) return false;
    out->kind = DW_V_RECORD;
    out->n = (uint32_t)n;
    out->u.fields = fields;
    return true;
}

const dw_value *dw_record_get_h(const dw_value *rec, const char *key, size_t klen, uint32_t khash)
{
    if (rec->n > 12) return dw_record_get(rec, key, klen);
    for (uint32_t i = 0; i < rec->n; i++) {
        const dw_field *f = &rec->u.fields[i];
        if (f->khash == khash && f->klen == klen && dw_mem_eq(f->key, key, klen)) return &f->v;
    }
    return NULL;
}

const dw_value *dw_record_get(const dw_value *rec, const char *key, size_t klen)
{
    size_t lo = 0, hi = rec->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const dw_field *f = &rec->u.fields[mid];
        int c = dw_bytes_cmp(f->key, f->klen, key, klen);
        if (c == 0) return &f->v;
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    return NULL;
}

const dw_value *dw_record_path(const dw_value *v, const char *p, size_t n)
{
    size_t k = 0;
    for (;;) {
        if (v->kind != DW_V_RECORD) return NULL;
        size_t e = k;
        while (e < n && p[e] != '.') e++;
        v = dw_record_get(v, p + k, e - k);
        if (!v || e == n) return v;
        k = e + 1;
    }
}

bool dw_set_contains(const dw_value *set, const dw_value *v)
{
    size_t lo = 0, hi = set->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = dw_value_cmp(&set->u.elems[mid], v);
        if (c == 0) return true;
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    return false;
}

static void print_str(FILE *out, const char *s, size_t n)
{
    dw_cedar_quote_file(out, s, n);
}

void dw_value_print(FILE *out, const dw_value *v)
{
    char buf[64];
    switch ((dw_vkind)v->kind) {
    case DW_V_BOOL: fputs(v->u.b ? "true" : "false", out); break;
    case DW_V_LONG: fprintf(out, "%lld", (long long)v->u.i); break;
    case DW_V_STRING: print_str(out, v->u.s, v->n); break;
    case DW_V_ENTITY:
        fwrite(v->u.uid->type, 1, v->u.uid->tlen, out);
        fputs("::", out);
        print_str(out, v->u.uid->id, v->u.uid->idlen);
        break;
    case DW_V_NULL: fputs("null", out); break;
    case DW_V_SET: case DW_V_ARRAY:
        fputc('[', out);
        for (uint32_t i = 0; i < v->n; i++) { if (i) fputs(", ", out); dw_value_print(out, &v->u.elems[i]); }
        fputc(']', out);
        break;
    case DW_V_RECORD:
        fputc('{', out);
        for (uint32_t i = 0; i < v->n; i++) {
            if (i) fputs(", ", out);
            print_str(out, v->u.fields[i].key, v->u.fields[i].klen);
            fputs(": ", out);
            dw_value_print(out, &v->u.fields[i].v);
        }
        fputc('}', out);
        break;
    case DW_V_DECIMAL: dw_decimal_format(v->u.i, buf, sizeof buf); fprintf(out, "decimal(\"%s\")", buf); break;
    case DW_V_IPADDR: dw_ip_format(v->u.ip, buf, sizeof buf); fprintf(out, "ip(\"%s\")", buf); break;
    case DW_V_DATETIME: dw_datetime_format(v->u.i, buf, sizeof buf); fprintf(out, "datetime(\"%s\")", buf); break;
    case DW_V_DURATION: dw_duration_format(v->u.i, buf, sizeof buf); fprintf(out, "duration(\"%s\")", buf); break;
    default: fputs("?", out);
    }
}

static bool clone_at(dw_arena *a, const dw_value *v, dw_value *out, int depth)
{
    if (depth > 256) return false;
    *out = *v;
    switch ((dw_vkind)v->kind) {
    case DW_V_STRING:
        return dw_make_string(a, v->u.s, v->n, out);
    case DW_V_ENTITY:
        out->u.uid = dw_make_uid(a, v->u.uid->type, v->u.uid->tlen, v->u.uid->id, v->u.uid->idlen);
        return out->u.uid != NULL;
    case DW_V_IPADDR: {
        dw_ipaddr *ip = dw_arena_alloc(a, sizeof *ip);
        if (!ip) return false;
        *ip = *v->u.ip;
        out->u.ip = ip;
        return true;
    }
    case DW_V_SET: case DW_V_ARRAY: {
        if (!v->n) return true;
        dw_value *el = dw_arena_alloc(a, v->n * sizeof *el);
        if (!el) return false;
        for (uint32_t i = 0; i < v->n; i++) if (!clone_at(a, &v->u.elems[i], &el[i], depth + 1)) return false;
        out->u.elems = el;
        return true;
    }
    case DW_V_RECORD: {
        if (!v->n) return true;
        dw_field *f = dw_arena_alloc(a, v->n * sizeof *f);
        if (!f) return false;
        for (uint32_t i = 0; i < v->n; i++) {
            f[i] = v->u.fields[i];
            f[i].key = dw_arena_memdup(a, v->u.fields[i].key, v->u.fields[i].klen);
            if (!f[i].key || !clone_at(a, &v->u.fields[i].v, &f[i].v, depth + 1)) return false;
        }
        out->u.fields = f;
        return true;
    }
    default:
        return true;
    }
}

bool dw_value_clone(dw_arena *a, const dw_value *v, dw_value *out) { return clone_at(a, v, out, 0); }

/* ---- the same copy in one block ---- */

static size_t al8(size_t n) { return (n + 7) & ~(size_t)7; }

static size_t packed_size_at(const dw_value *v, int depth)
{
    if (depth > 256) return SIZE_MAX;
    size_t n = 0, k;
    switch ((dw_vkind)v->kind) {
    case DW_V_STRING: return al8((size_t)v->n + 1);
    case DW_V_ENTITY: return al8(sizeof(dw_uid)) + al8((size_t)v->u.uid->tlen + 1) + al8((size_t)v->u.uid->idlen + 1);
    case DW_V_IPADDR: return al8(sizeof(dw_ipaddr));
    case DW_V_SET: case DW_V_ARRAY:
        if (!v->n) return 0;
        n = al8((size_t)v->n * sizeof(dw_value));
        for (uint32_t i = 0; i < v->n; i++) {
            if ((k = packed_size_at(&v->u.elems[i], depth + 1)) == SIZE_MAX) return SIZE_MAX;
            n += k;
        }
        return n;
    case DW_V_RECORD:
        if (!v->n) return 0;
        n = al8((size_t)v->n * sizeof(dw_field));
        for (uint32_t i = 0; i < v->n; i++) {
            if ((k = packed_size_at(&v->u.fields[i].v, depth + 1)) == SIZE_MAX) return SIZE_MAX;
            n += al8((size_t)v->u.fields[i].klen + 1) + k;
        }
        return n;
    default:
        return 0;
    }
}

size_t dw_value_packed_size(const dw_value *v) { return packed_size_at(v, 0); }

size_t dw_packed_len(size_t n) { return al8(n); }

void *dw_packed_take(char **cur, size_t n)
{
    void *p = *cur;
    *cur += al8(n);
    return p;
}
#define carve dw_packed_take

char *dw_packed_str(char **cur, const char *s, size_t n)
{
    char *o = carve(cur, n + 1);
    if (n) memcpy(o, s, n);
    o[n] = 0;
    return o;
}

/* As clone_at, into the block at *cur (sized by packed_size_at: the depth
 * was checked there); a uid keeps its hash (it covers the bytes copied). */
static void packed_at(char **cur, const dw_value *v, dw_value *out)
{
    *out = *v;
    switch ((dw_vkind)v->kind) {
    case DW_V_STRING:
        out->u.s = dw_packed_str(cur, v->u.s, v->n);
        return;
    case DW_V_ENTITY: {
        const dw_uid *u = v->u.uid;
        dw_uid *c = carve(cur, sizeof *c);
        *c = *u;
        c->type = dw_packed_str(cur, u->type, u->tlen);
        c->id = dw_packed_str(cur, u->id, u->idlen);
        out->u.uid = c;
        return;
    }
    case DW_V_IPADDR: {
        dw_ipaddr *ip = carve(cur, sizeof *ip);
        *ip = *v->u.ip;
        out->u.ip = ip;
        return;
    }
    case DW_V_SET: case DW_V_ARRAY: {
        if (!v->n) return;
        dw_value *el = carve(cur, (size_t)v->n * sizeof *el);
        for (uint32_t i = 0; i < v->n; i++) packed_at(cur, &v->u.elems[i], &el[i]);
        out->u.elems = el;
        return;
    }
    case DW_V_RECORD: {
        if (!v->n) return;
        dw_field *f = carve(cur, (size_t)v->n * sizeof *f);
        for (uint32_t i = 0; i < v->n; i++) {
            f[i] = v->u.fields[i];
            f[i].key = dw_packed_str(cur, v->u.fields[i].key, v->u.fields[i].klen);
            packed_at(cur, &v->u.fields[i].v, &f[i].v);
        }
        out->u.fields = f;
        return;
    }
    default:
        return;
    }
}

void dw_value_clone_packed(char **cur, const dw_value *v, dw_value *out) { packed_at(cur, v, out); }
