#include "json.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../stdlib/bytes.h"
#include "../stdlib/utf8.h"
#include "json_scan.h"

typedef struct jp {
    dw_arena *a;
    const dw_source *src;
    dw_diags *diags;
    const char *s;
    size_t n, i;
    bool failed;
    dw_carve carve;          /* the current block of nodes and strings (jalloc) */
} jp;

/* Nodes, member arrays and strings are carved from blocks the arena hands
 * out a few KB at a time (sized by the input left), not one arena call per
 * node.  8-byte aligned: every JSON node holds at most 8-byte members. */
static inline void *jalloc(jp *p, size_t n)
{
    size_t left = p->n - p->i;
    return dw_carve_take(&p->carve, p->a, n, left < 8192 ? 8 * left + 256 : 65536);
}

static void jerr(jp *p, size_t off, const char *msg)
{
    if (p->failed) return;
    p->failed = true;
    dw_error(p->diags, p->src, dw_loc_at(p->src, (uint32_t)off, (uint32_t)off + 1), "invalid JSON: %s", msg);
}

static inline void skip_ws(jp *p) { p->i = dw_json_skip_ws(p->s, p->i, p->n); }

static inline dw_json *node(jp *p, dw_json_kind k, size_t off)
{
    dw_json *j = jalloc(p, sizeof *j);    /* every member set here */
    if (!j) { jerr(p, off, "out of memory"); return NULL; }
    *j = (dw_json){ .kind = k, .off = (uint32_t)off };
    return j;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int read_hex4(jp *p, unsigned *out)
{
    if (p->i + 4 > p->n) return -1;
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        int h = hexval(p->s[p->i + k]);
        if (h < 0) return -1;
        v = v * 16 + (unsigned)h;
    }
    p->i += 4;
    *out = v;
    return 0;
}

/* The first '"' or '\\' at or after i (n if none), a word at a time. */
static inline size_t scan_quote(const char *s, size_t i, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        uint64_t q = w ^ (DW_SWAR_ONES * '"'), b = w ^ (DW_SWAR_ONES * '\\');
        uint64_t hit = (((q - DW_SWAR_ONES) & ~q) | ((b - DW_SWAR_ONES) & ~b)) & DW_SWAR_HIGHS;
        if (hit) return i + ((size_t)__builtin_ctzll(hit) >> 3);
    }
#endif
    while (i < n && s[i] != '"' && s[i] != '\\') i++;
    return i;
}

/* A string: the plain runs between escapes and non-ASCII bytes are found a
 * word at a time and copied whole; the result is one NUL-terminated arena
 * copy (consumers read keys and values as C strings too). */
static int parse_string(jp *p, dw_str *out)
{
    size_t start = p->i, i = start + 1;
    const char *s = p->s;
    size_t run = dw_json_scan_plain(s, i, p->n);
    if (run < p->n && s[run] == '"') {          /* the common case: nothing to decode */
        size_t len = run - i, words = (len + 7) & ~(size_t)7;
        char *o = jalloc(p, len + 1);                 /* rounded up to 8: room for the words */
        if (!o) { jerr(p, start, "out of memory"); return -1; }
        if (i + words <= p->n)                        /* short strings: whole words, no memcpy call */
            for (size_t k = 0; k < words; k += 8) memcpy(o + k, s + i + k, 8);
        else memcpy(o, s + i, len);
        o[len] = 0;
        out->s = o;
        out->len = run - i;
        p->i = run + 1;
        return 0;
    }
    /* decoded output is never longer than the input up to the closing quote */
    size_t end = i;
    for (;;) {
        end = scan_quote(s, end, p->n);
        if (end >= p->n) { jerr(p, start, "unterminated string"); return -1; }
        if (s[end] == '"') break;
        end += 2;                               /* a backslash and the byte it escapes */
    }
    char *o = jalloc(p, end - i + 1);
    if (!o) { jerr(p, start, "out of memory"); return -1; }
    size_t k = 0;
    p->i = i;
    for (;;) {
        run = dw_json_scan_plain(s, p->i, end + 1);     /* stops at the closing quote at the latest */
        memcpy(o + k, s + p->i, run - p->i);
        k += run - p->i;
        p->i = run;
        unsigned char c = (unsigned char)s[p->i];
        if (c == '"') { p->i++; o[k] = 0; out->s = o; out->len = k; return 0; }
        if (c < 0x20) { jerr(p, p->i, "control character in string (escape it)"); return -1; }
        if (c == '\\') {
            size_t esc = p->i;
            p->i++;
            char e = s[p->i++];
            switch (e) {
            case '"': o[k++] = '"'; break;
            case '\\': o[k++] = '\\'; break;
            case '/': o[k++] = '/'; break;
            case 'b': o[k++] = '\b'; break;
            case 'f': o[k++] = '\f'; break;
            case 'n': o[k++] = '\n'; break;
            case 'r': o[k++] = '\r'; break;
            case 't': o[k++] = '\t'; break;
            case 'u': {
                unsigned cp;
                if (read_hex4(p, &cp)) { jerr(p, esc, "bad \\u escape"); return -1; }
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    unsigned lo;
                    if (p->i + 2 <= p->n && s[p->i] == '\\' && s[p->i + 1] == 'u') {
                        p->i += 2;
                        if (read_hex4(p, &lo) || lo < 0xDC00 || lo > 0xDFFF) { jerr(p, esc, "unpaired surrogate"); return -1; }
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    } else { jerr(p, esc, "unpaired surrogate"); return -1; }
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) { jerr(p, esc, "unpaired surrogate"); return -1; }
                k += dw_utf8_put(o + k, cp);
                break;
            }
            default: jerr(p, esc, "invalid escape"); return -1;
            }
            continue;
        }
        size_t l = dw_utf8_len((const unsigned char *)s + p->i, p->n - p->i);
        if (!l) { jerr(p, p->i, "invalid UTF-8"); return -1; }
        memcpy(o + k, s + p->i, l);
        k += l;
        p->i += l;
    }
}

static dw_json *parse_value(jp *p, int depth);

static dw_json *parse_number(jp *p)
{
    size_t start = p->i;
    bool neg = false, is_float = false;
    if (p->s[p->i] == '-') { neg = true; p->i++; }
    if (p->i >= p->n || !(p->s[p->i] >= '0' && p->s[p->i] <= '9')) { jerr(p, start, "bad number"); return NULL; }
    if (p->s[p->i] == '0' && p->i + 1 < p->n && p->s[p->i + 1] >= '0' && p->s[p->i + 1] <= '9') {
        jerr(p, start, "leading zero in number"); return NULL;
    }
    size_t ds = p->i;
    while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
    size_t de = p->i;
    if (p->i < p->n && p->s[p->i] == '.') {
        is_float = true;
        p->i++;
        if (p->i >= p->n || !(p->s[p->i] >= '0' && p->s[p->i] <= '9')) { jerr(p, start, "bad number"); return NULL; }
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
    }
    if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
        is_float = true;
        p->i++;
        if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-')) p->i++;
        if (p->i >= p->n || !(p->s[p->i] >= '0' && p->s[p->i] <= '9')) { jerr(p, start, "bad number"); return NULL; }
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
    }
    dw_json *j = node(p, DW_JSON_INT, start);
    if (!j) return NULL;
    j->end = (uint32_t)p->i;
    if (!is_float) {
        /* exact: accumulate as a negative number so i64::MIN fits */
        int64_t v = 0;
        bool over = false;
        for (size_t k = ds; k < de; k++) {
            int d = p->s[k] - '0';
            if (v < (INT64_MIN + d) / 10) { over = true; break; }
            v = v * 10 - d;
        }
        if (!over && !neg && v == INT64_MIN) over = true;
        if (!over) { j->u.i = neg ? v : -v; return j; }
    }
    char tmp[64];
    size_t len = p->i - start;
    if (len >= sizeof tmp) len = sizeof tmp - 1;
    memcpy(tmp, p->s + start, len);
    tmp[len] = 0;
    j->kind = DW_JSON_FLOAT;
    j->u.d = strtod(tmp, NULL);
    return j;
}

static dw_json *parse_value(jp *p, int depth)
{
    skip_ws(p);
    if (p->i >= p->n) { jerr(p, p->i, "unexpected end of input"); return NULL; }
    if (depth > DW_JSON_MAX_DEPTH) { jerr(p, p->i, "nested too deeply (limit 128)"); return NULL; }
    size_t start = p->i;
    char c = p->s[p->i];
    dw_json *j;
    if (c == '{') {
        j = node(p, DW_JSON_OBJECT, start);
        if (!j) return NULL;
        p->i++;
        size_t cap = 0;
        skip_ws(p);
        if (p->i < p->n && p->s[p->i] == '}') { p->i++; j->end = (uint32_t)p->i; return j; }
        for (;;) {
            skip_ws(p);
            if (p->i >= p->n || p->s[p->i] != '"') { jerr(p, p->i, "expected a string key"); return NULL; }
            dw_json_member m;
            m.key_off = (uint32_t)p->i;
            if (parse_string(p, &m.key)) return NULL;
            skip_ws(p);
            if (p->i >= p->n || p->s[p->i] != ':') { jerr(p, p->i, "expected ':'"); return NULL; }
            p->i++;
            m.value = parse_value(p, depth + 1);
            if (!m.value) return NULL;
            if (j->u.obj.n == cap) {
                size_t nc = cap ? cap * 2 : 8;    /* Box's input records have up to 8 members */
                dw_json_member *nv = jalloc(p, nc * sizeof *nv);
                if (!nv) { jerr(p, start, "out of memory"); return NULL; }
                if (cap) memcpy(nv, j->u.obj.v, cap * sizeof *nv);
                j->u.obj.v = nv;
                cap = nc;
            }
            j->u.obj.v[j->u.obj.n++] = m;
            skip_ws(p);
            if (p->i < p->n && p->s[p->i] == ',') { p->i++; continue; }
            if (p->i < p->n && p->s[p->i] == '}') { p->i++; break; }
            jerr(p, p->i, "expected ',' or '}'");
            return NULL;
        }
    } else if (c == '[') {
        j = node(p, DW_JSON_ARRAY, start);
        if (!j) return NULL;
        p->i++;
        size_t cap = 0;
        skip_ws(p);
        if (p->i < p->n && p->s[p->i] == ']') { p->i++; j->end = (uint32_t)p->i; return j; }
        for (;;) {
            dw_json *v = parse_value(p, depth + 1);
            if (!v) return NULL;
            if (j->u.arr.n == cap) {
                size_t nc = cap ? cap * 2 : 4;
                dw_json **nv = jalloc(p, nc * sizeof *nv);
                if (!nv) { jerr(p, start, "out of memory"); return NULL; }
                if (cap) memcpy(nv, j->u.arr.v, cap * sizeof *nv);
                j->u.arr.v = nv;
                cap = nc;
            }
            j->u.arr.v[j->u.arr.n++] = v;
            skip_ws(p);
            if (p->i < p->n && p->s[p->i] == ',') { p->i++; continue; }
            if (p->i < p->n && p->s[p->i] == ']') { p->i++; break; }
            jerr(p, p->i, "expected ',' or ']'");
            return NULL;
        }
    } else if (c == '"') {
        j = node(p, DW_JSON_STRING, start);
        if (!j || parse_string(p, &j->u.str)) return NULL;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        return parse_number(p);
    } else if (p->n - p->i >= 4 && memcmp(p->s + p->i, "true", 4) == 0) {
        j = node(p, DW_JSON_BOOL, start);
        if (!j) return NULL;
        j->u.b = true;
        p->i += 4;
    } else if (p->n - p->i >= 5 && memcmp(p->s + p->i, "false", 5) == 0) {
        j = node(p, DW_JSON_BOOL, start);
        if (!j) return NULL;
        p->i += 5;
    } else if (p->n - p->i >= 4 && memcmp(p->s + p->i, "null", 4) == 0) {
        j = node(p, DW_JSON_NULL, start);
        if (!j) return NULL;
        p->i += 4;
    } else {
        jerr(p, start, "unexpected character");
        return NULL;
    }
    j->end = (uint32_t)p->i;
    return j;
}

dw_json *dw_json_parse(dw_arena *a, const dw_source *src, dw_diags *diags)
{
    jp p = { a, src, diags, src->text, src->len, 0, false, { NULL, NULL } };
    dw_json *j = parse_value(&p, 0);
    if (!j) return NULL;
    skip_ws(&p);
    if (p.i != p.n) { jerr(&p, p.i, "trailing characters after the JSON value"); return NULL; }
    return j;
}

const dw_json *dw_json_get_n(const dw_json *obj, const char *key, size_t kl)
{
    if (!obj || obj->kind != DW_JSON_OBJECT) return NULL;
    for (size_t i = 0; i < obj->u.obj.n; i++)
        if (obj->u.obj.v[i].key.len == kl && dw_mem_eq(obj->u.obj.v[i].key.s, key, kl))
            return obj->u.obj.v[i].value;
    return NULL;
}

size_t dw_json_count(const dw_json *obj, const char *key)
{
    if (!obj || obj->kind != DW_JSON_OBJECT) return 0;
    size_t kl = strlen(key), c = 0;
    for (size_t i = 0; i < obj->u.obj.n; i++)
        if (obj->u.obj.v[i].key.len == kl && memcmp(obj->u.obj.v[i].key.s, key, kl) == 0) c++;
    return c;
}

const char *dw_json_kind_name(dw_json_kind k)
{
    static const char *names[] = { "null", "boolean", "integer", "number", "string", "array", "object" };
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}
