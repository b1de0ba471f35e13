/* cedar_value.c - see cedar_value.h. */
#include "cedar_value.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rust_escape.h"
#include "../vm/ext_spelling.h"

#define MAX_DEPTH 256
#define MS_PER_DAY INT64_C(86400000)

static int put(dw_buf *b, const char *s) { return dw_buf_append(b, s, strlen(s)); }

static int quoted(dw_buf *b, const char *s, size_t n)
{
    if (put(b, "\"")) return -1;
    int rc = dw_rust_escape_debug(b, s, n, false);
    if (rc > 0) rc = dw_buf_append(b, s, n);      /* not UTF-8: the reader refuses such text before */
    return rc || put(b, "\"") ? -1 : 0;
}

static int putf(dw_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int putf(dw_buf *b, const char *fmt, ...)
{
    char t[160];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t, sizeof t, fmt, ap);
    va_end(ap);
    return k < 0 ? -1 : dw_buf_append(b, t, (size_t)k < sizeof t ? (size_t)k : sizeof t - 1);
}

/* ---- extension values ---- */

static void decimal_text(const dw_value *v, char *out, size_t cap)
{
    unsigned digits = dw_spell_decimal_digits(v->n);
    if (!digits) { dw_decimal_format(v->u.i, out, cap); return; }
    uint64_t mag = v->u.i < 0 ? (uint64_t)0 - (uint64_t)v->u.i : (uint64_t)v->u.i;
    char frac[8];
    snprintf(frac, sizeof frac, "%04u", (unsigned)(mag % 10000));
    frac[digits] = 0;
    snprintf(out, cap, "%s%0*llu.%s", v->u.i < 0 ? "-" : "", (int)dw_spell_decimal_int_digits(v->n),
             (unsigned long long)(mag / 10000), frac);
}

/* The prefix as written; unknown: a host address without one. */
static void ip_text(const dw_value *v, char *out, size_t cap)
{
    const dw_ipaddr *ip = v->u.ip;
    dw_ip_format(ip, out, cap);
    char *slash = strrchr(out, '/');
    if (slash && v->n != DW_SPELL_IP_PREFIX && (unsigned)atoi(slash + 1) == (ip->v6 ? 128u : 32u)) *slash = 0;
}

/* The datetime as written (form and offset from its spelling); false when it
 * cannot be written so (a year outside 0000-9999: Cedar's syntax has four digits). */
static bool datetime_written(int64_t ms, uint32_t sp, char *out, size_t cap)
{
    dw_dt_form form = sp >= 2 ? dw_spell_dt_form(sp) : DW_DT_Z;
    if (sp < 2) form = ms % MS_PER_DAY == 0 ? DW_DT_DATE : ms % 1000 ? DW_DT_MS_Z : DW_DT_Z;
    int64_t off_ms = 0;
    unsigned hhmm = 0;
    bool neg = false;
    if (form == DW_DT_OFFSET || form == DW_DT_MS_OFFSET) {
        hhmm = dw_spell_dt_hhmm(sp);
        neg = dw_spell_dt_negative(sp);
        off_ms = ((int64_t)(hhmm / 100) * 3600 + (hhmm % 100) * 60) * 1000 * (neg ? -1 : 1);
    }
    if (__builtin_add_overflow(ms, off_ms, &ms)) return false;
    int64_t days = ms / MS_PER_DAY, t = ms % MS_PER_DAY;
    if (t < 0) { days--; t += MS_PER_DAY; }
    int64_t y;
    unsigned mo, d;
    dw_civil_from_days(days, &y, &mo, &d);
    if (y < 0 || y > 9999) return false;
    unsigned h = (unsigned)(t / 3600000), mi = (unsigned)(t / 60000 % 60), s = (unsigned)(t / 1000 % 60), milli = (unsigned)(t % 1000);
    int k = snprintf(out, cap, "%04lld-%02u-%02u", (long long)y, mo, d);
    if (form == DW_DT_DATE) return true;
    k += snprintf(out + k, cap - (size_t)k, "T%02u:%02u:%02u", h, mi, s);
    if (form == DW_DT_MS_Z || form == DW_DT_MS_OFFSET) k += snprintf(out + k, cap - (size_t)k, ".%03u", milli);
    if (form == DW_DT_Z || form == DW_DT_MS_Z) snprintf(out + k, cap - (size_t)k, "Z");
    else snprintf(out + k, cap - (size_t)k, "%c%04u", neg ? '-' : '+', hhmm);
    return true;
}

/* The duration in the units it was written with, largest first; false when
 * those units cannot say it (the spelling then is not this value's). */
static bool duration_written(int64_t ms, unsigned units, char *out, size_t cap)
{
    static const int64_t unit_ms[5] = { 86400000, 3600000, 60000, 1000, 1 };
    static const char *const name[5] = { "d", "h", "m", "s", "ms" };
    uint64_t mag = ms < 0 ? (uint64_t)0 - (uint64_t)ms : (uint64_t)ms;
    int k = snprintf(out, cap, "%s", ms < 0 ? "-" : "");
    for (int i = 0; i < 5; i++) {
        if (!(units >> i & 1)) continue;
        uint64_t q = mag / (uint64_t)unit_ms[i];
        mag -= q * (uint64_t)unit_ms[i];
        k += snprintf(out + k, cap - (size_t)k, "%llu%s", (unsigned long long)q, name[i]);
    }
    return mag == 0;
}

static int ext_text(dw_buf *b, const dw_value *v)
{
    char t[96];
    switch ((dw_vkind)v->kind) {
    case DW_V_DECIMAL: decimal_text(v, t, sizeof t); return putf(b, "decimal(\"%s\")", t);
    case DW_V_IPADDR: ip_text(v, t, sizeof t); return putf(b, "ip(\"%s\")", t);
    case DW_V_DATETIME:
        if (v->n != DW_SPELL_COMPUTED && datetime_written(v->u.i, v->n, t, sizeof t)) return putf(b, "datetime(\"%s\")", t);
        return putf(b, "datetime(\"1970-01-01\").offset(duration(\"%lldms\"))", (long long)v->u.i);
    case DW_V_DURATION: {
        unsigned units = v->n >= 2 ? dw_spell_duration_units(v->n) : 0;
        if (v->n == DW_SPELL_COMPUTED) return putf(b, "duration(\"%lldms\")", (long long)v->u.i);
        if (!units || !duration_written(v->u.i, units, t, sizeof t)) dw_duration_format(v->u.i, t, sizeof t);
        return putf(b, "duration(\"%s\")", t);
    }
    default: return -1;
    }
}

/* ---- Cedar's order of values in a set (EvalResult's derived Ord) ---- */

static int rank(const dw_value *v)
{
    switch ((dw_vkind)v->kind) {
    case DW_V_BOOL: return 0;
    case DW_V_LONG: return 1;
    case DW_V_STRING: return 2;
    case DW_V_ENTITY: return 3;
    case DW_V_SET: return 4;
    case DW_V_RECORD: return 5;
    default: return 6;
    }
}

/* A type name's basename and its namespace path ("A::B::T" -> "T", "A::B"). */
static void split_type(const dw_uid *u, dw_str *base, dw_str *path)
{
    size_t i = u->tlen;
    while (i >= 2 && !(u->type[i - 1] == ':' && u->type[i - 2] == ':')) i--;
    if (i < 2) i = 0;
    *base = (dw_str){ u->type + i, u->tlen - i };
    *path = (dw_str){ u->type, i >= 2 ? i - 2 : 0 };
}

/* Namespace paths compare component by component (a Vec of names). */
static int path_cmp(dw_str a, dw_str b)
{
    while (a.len && b.len) {
        const char *ea = memmem(a.s, a.len, "::", 2), *eb = memmem(b.s, b.len, "::", 2);
        size_t la = ea ? (size_t)(ea - a.s) : a.len, lb = eb ? (size_t)(eb - b.s) : b.len;
        int c = dw_bytes_cmp(a.s, la, b.s, lb);
        if (c) return c;
        a = ea ? (dw_str){ ea + 2, a.len - la - 2 } : (dw_str){ "", 0 };
        b = eb ? (dw_str){ eb + 2, b.len - lb - 2 } : (dw_str){ "", 0 };
    }
    return a.len ? 1 : b.len ? -1 : 0;
}

static int cedar_cmp(const dw_value *a, const dw_value *b);

static int set_cmp(const dw_value *a, const dw_value *b)
{
    for (uint32_t i = 0; i < a->n && i < b->n; i++) {
        int c = cedar_cmp(&a->u.elems[i], &b->u.elems[i]);
        if (c) return c;
    }
    return a->n < b->n ? -1 : a->n > b->n ? 1 : 0;
}

static int record_cmp(const dw_value *a, const dw_value *b)
{
    for (uint32_t i = 0; i < a->n && i < b->n; i++) {
        const dw_field *f = &a->u.fields[i], *g = &b->u.fields[i];
        int c = dw_bytes_cmp(f->key, f->klen, g->key, g->klen);
        if (!c) c = cedar_cmp(&f->v, &g->v);
        if (c) return c;
    }
    return a->n < b->n ? -1 : a->n > b->n ? 1 : 0;
}

/* Both values already in Cedar's order inside (sorted_copy). */
static int cedar_cmp(const dw_value *a, const dw_value *b)
{
    int ra = rank(a), rb = rank(b);
    if (ra != rb) return ra < rb ? -1 : 1;
    switch ((dw_vkind)a->kind) {
    case DW_V_BOOL: return (int)a->u.b - (int)b->u.b;
    case DW_V_LONG: return a->u.i < b->u.i ? -1 : a->u.i > b->u.i;
    case DW_V_STRING: return dw_bytes_cmp(a->u.s, a->n, b->u.s, b->n);
    case DW_V_ENTITY: {
        dw_str ba, pa, bb, pb;
        split_type(a->u.uid, &ba, &pa);
        split_type(b->u.uid, &bb, &pb);
        int c = dw_bytes_cmp(ba.s, ba.len, bb.s, bb.len);
        if (!c) c = path_cmp(pa, pb);
        return c ? c : dw_bytes_cmp(a->u.uid->id, a->u.uid->idlen, b->u.uid->id, b->u.uid->idlen);
    }
    case DW_V_SET: return set_cmp(a, b);
    case DW_V_RECORD: return record_cmp(a, b);
    default: {                              /* extension values: by their text */
        dw_buf x = { 0 }, y = { 0 };
        int c = ext_text(&x, a) || ext_text(&y, b) ? 0 : dw_bytes_cmp(x.p, x.len, y.p, y.len);
        dw_buf_free(&x);
        dw_buf_free(&y);
        return c;
    }
    }
}

static int qcmp(const void *x, const void *y) { return cedar_cmp(x, y); }

static int field_qcmp(const void *x, const void *y)
{
    const dw_field *a = x, *b = y;
    return dw_bytes_cmp(a->key, a->klen, b->key, b->klen);
}

/* v with every set and record inside it in Cedar's order (malloc'd copies,
 * listed in *owned for freeing). */
typedef struct owned { void **v; size_t n, cap; } owned;

static void *own(owned *o, size_t size)
{
    if (o->n == o->cap) {
        void **nv = realloc(o->v, (o->cap = o->cap ? 2 * o->cap : 8) * sizeof *nv);
        if (!nv) return NULL;
        o->v = nv;
    }
    void *p = malloc(size ? size : 1);
    if (p) o->v[o->n++] = p;
    return p;
}

static int sorted_copy(owned *o, const dw_value *v, dw_value *out, int depth)
{
    if (depth > MAX_DEPTH) return -1;
    *out = *v;
    if (v->kind == DW_V_SET) {
        dw_value *el = own(o, v->n * sizeof *el);
        if (!el) return -1;
        for (uint32_t i = 0; i < v->n; i++) if (sorted_copy(o, &v->u.elems[i], &el[i], depth + 1)) return -1;
        qsort(el, v->n, sizeof *el, qcmp);
        out->u.elems = el;
    } else if (v->kind == DW_V_RECORD) {
        dw_field *f = own(o, v->n * sizeof *f);
        if (!f) return -1;
        for (uint32_t i = 0; i < v->n; i++) {
            f[i] = v->u.fields[i];
            if (sorted_copy(o, &v->u.fields[i].v, &f[i].v, depth + 1)) return -1;
        }
        qsort(f, v->n, sizeof *f, field_qcmp);
        out->u.fields = f;
    }
    return 0;
}

/* ---- the text ---- */

static int text(dw_buf *b, const dw_value *v)
{
    switch ((dw_vkind)v->kind) {
    case DW_V_BOOL: return put(b, v->u.b ? "true" : "false");
    case DW_V_LONG: return putf(b, "%lld", (long long)v->u.i);
    case DW_V_STRING: return quoted(b, v->u.s, v->n);
    case DW_V_ENTITY:
        return dw_buf_append(b, v->u.uid->type, v->u.uid->tlen) || put(b, "::") ||
               quoted(b, v->u.uid->id, v->u.uid->idlen) ? -1 : 0;
    case DW_V_SET:
        if (put(b, "[")) return -1;
        for (uint32_t i = 0; i < v->n; i++)
            if ((i && put(b, ", ")) || text(b, &v->u.elems[i])) return -1;
        return put(b, "]");
    case DW_V_RECORD:
        if (put(b, "{")) return -1;
        for (uint32_t i = 0; i < v->n; i++) {
            const dw_field *f = &v->u.fields[i];
            if ((i && put(b, ", ")) || quoted(b, f->key, f->klen) || put(b, ": ") || text(b, &f->v)) return -1;
        }
        return put(b, "}");
    case DW_V_DECIMAL: case DW_V_IPADDR: case DW_V_DATETIME: case DW_V_DURATION: return ext_text(b, v);
    default: return -1;         /* event-only kinds never come out of Cedar evaluation */
    }
}

int dw_cedar_value_text(dw_buf *b, const dw_value *v)
{
    owned o = { 0 };
    dw_value s;
    int rc = sorted_copy(&o, v, &s, 0) ? -1 : text(b, &s);
    for (size_t i = 0; i < o.n; i++) free(o.v[i]);
    free(o.v);
    return rc;
}

int dw_cedar_type_text(dw_buf *b, const dw_value *v)
{
    switch ((dw_vkind)v->kind) {
    case DW_V_BOOL: return put(b, "bool");
    case DW_V_LONG: return put(b, "long");
    case DW_V_STRING: return put(b, "string");
    case DW_V_SET: return put(b, "set");
    case DW_V_RECORD: return put(b, "record");
    case DW_V_ENTITY:
        return put(b, "(entity of type `") || dw_buf_append(b, v->u.uid->type, v->u.uid->tlen) || put(b, "`)") ? -1 : 0;
    case DW_V_IPADDR: return put(b, "ipaddr");
    default: return put(b, dw_vkind_name((dw_vkind)v->kind));
    }
}
