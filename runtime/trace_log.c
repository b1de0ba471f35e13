/* trace_log.c - the `.log` trace reader (dogwood.md §17).  See trace_log.h.
 *
 * One event per non-blank line, trimmed.  A line is parsed by recursive
 * descent over [p, end) of the whole source, so every diagnostic carries a
 * byte offset into the file.  The three envelopes end at their first
 * unmatched `)` (parentheses are counted, quotes are not), as in the
 * reference; their contents are then parsed structurally and must fill the
 * envelope exactly. */
#include "trace_log.h"
#include <stdlib.h>
#include <string.h>
#include "../stdlib/utf8.h"
#include "../lang/strlit.h"
#include "dogwood_parts.h"

typedef struct lp {
    dw_arena *a;
    const dw_source *src;
    dw_diags *d;
    const char *t;           /* src->text */
    size_t line_start;       /* offset of the line (for columns) */
    uint32_t line;
    size_t p, end;           /* cursor and the current parse limit */
    bool failed;             /* this line already has its diagnostic */
} lp;

static void err_at(lp *s, size_t off, size_t end, const char *hint, const char *fmt, const char *arg, size_t arglen)
{
    if (s->failed) return;
    s->failed = true;
    dw_loc l;
    l.line = s->line;
    l.col = 1;
    for (size_t i = s->line_start; i < off && i < s->src->len; i++)
        if (!dw_utf8_is_cont((unsigned char)s->t[i])) l.col++;
    l.off = (uint32_t)off;
    l.end = (uint32_t)(end > off ? end : off + 1);
    if (arg) dw_diag_add(s->d, DW_SEV_ERROR, s->src, l, hint, fmt, (int)arglen, arg);
    else dw_diag_add(s->d, DW_SEV_ERROR, s->src, l, hint, "%s", fmt);
}
#define ERR(s, off, end, msg) err_at((s), (off), (end), NULL, (msg), NULL, 0)

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
static bool is_id0(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_id(char c) { return is_id0(c) || (c >= '0' && c <= '9'); }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_bare(char c)
{
    return !is_ws(c) && c != '\n' && c != ',' && c != ':' && c != '(' && c != ')' && c != '[' && c != ']' &&
           c != '{' && c != '}' && c != '"';
}

static void skip_ws(lp *s) { while (s->p < s->end && is_ws(s->t[s->p])) s->p++; }
static bool at(lp *s, char c) { skip_ws(s); return s->p < s->end && s->t[s->p] == c; }
static bool eat(lp *s, char c) { if (at(s, c)) { s->p++; return true; } return false; }
static bool expect(lp *s, char c, const char *what)
{
    if (eat(s, c)) return true;
    size_t o = s->p;
    if (o >= s->end) err_at(s, o, o + 1, NULL, "expected %.*s, found the end of the line", what, strlen(what));
    else err_at(s, o, o + 1, NULL, "expected %.*s", what, strlen(what));
    return false;
}

/* ---- lexical pieces ---- */

/* A string literal at s->p: decoded into *out.  Cedar escapes. */
static bool string_lit(lp *s, dw_str *out)
{
    skip_ws(s);
    size_t o = s->p;
    if (o >= s->end || s->t[o] != '"') { ERR(s, o, o + 1, "expected a string literal"); return false; }
    size_t i = o + 1;
    while (i < s->end && s->t[i] != '"') {
        if (s->t[i] == '\\') i++;
        i++;
    }
    if (i >= s->end) { ERR(s, o, s->end, "unterminated string literal"); return false; }
    dw_str str;
    dw_strlit_err e;
    if (!dw_strlit_decode(s->a, s->t + o + 1, i - o - 1, &str, &e)) {
        size_t eo = o + 1 + e.off;
        const char *esc = s->t + eo;
        size_t elen = e.len;
        if (strstr(e.msg, "%.*s")) err_at(s, eo, eo + elen, e.hint, e.msg, esc, elen);
        else err_at(s, eo, eo + (elen ? elen : 1), e.hint, e.msg, NULL, 0);
        return false;
    }
    out->s = str.s;
    out->len = str.len;
    s->p = i + 1;
    return true;
}

static bool ident(lp *s, dw_str *out)
{
    skip_ws(s);
    size_t o = s->p;
    if (o >= s->end || !is_id0(s->t[o])) return false;
    while (s->p < s->end && is_id(s->t[s->p])) s->p++;
    out->s = s->t + o;
    out->len = s->p - o;
    return true;
}

/* KEY = IDENT | STRING */
static bool key(lp *s, dw_str *out, size_t *off)
{
    skip_ws(s);
    *off = s->p;
    if (at(s, '"')) return string_lit(s, out);
    if (ident(s, out)) {
        out->s = dw_arena_memdup(s->a, out->s, out->len);
        return out->s != NULL;
    }
    ERR(s, s->p, s->p + 1, "expected a key (an identifier or a string)");
    return false;
}

/* The rest of an entity after its first path segment: { "::" IDENT } "::" STRING. */
static const dw_uid *entity_rest(lp *s, size_t start)
{
    for (;;) {
        if (s->p + 1 < s->end && s->t[s->p] == ':' && s->t[s->p + 1] == ':') {
            s->p += 2;
            if (s->p < s->end && s->t[s->p] == '"') break;
            dw_str seg;
            if (s->p >= s->end || !is_id0(s->t[s->p]) || !ident(s, &seg)) {
                ERR(s, s->p, s->p + 1, "expected an identifier or a quoted entity id after `::`");
                return NULL;
            }
            continue;
        }
        ERR(s, s->p, s->p + 1, "expected `::` followed by the quoted entity id");
        return NULL;
    }
    size_t tend = s->p - 2;
    dw_str id;
    if (!string_lit(s, &id)) return NULL;
    const dw_uid *u = dw_make_uid(s->a, s->t + start, tend - start, id.s, id.len);
    if (!u) ERR(s, start, s->p, "out of memory");
    return u;
}

static const dw_uid *entity(lp *s)
{
    skip_ws(s);
    size_t o = s->p;
    dw_str first;
    if (!ident(s, &first)) { ERR(s, o, o + 1, "expected an entity (Type::\"id\")"); return NULL; }
    return entity_rest(s, o);
}

/* ---- values ---- */

static bool value(lp *s, dw_value *out, int depth);

typedef struct kf { const char *key; size_t klen; size_t off; } kf;
static int kf_cmp(const void *x, const void *y)
{
    const kf *a = x, *b = y;
    int c = dw_bytes_cmp(a->key, a->klen, b->key, b->klen);
    return c ? c : (a->off < b->off ? -1 : a->off > b->off);
}

/* A field list `KEY: value, ...` up to (not including) `close`, into a record. */
static bool fields(lp *s, char close, dw_value *out, int depth, const char *what)
{
    size_t cap = 8, n = 0;
    dw_field *f = malloc(cap * sizeof *f);
    size_t *offs = malloc(cap * sizeof *offs);
    bool ok = false;
    if (!f || !offs) { ERR(s, s->p, s->p + 1, "out of memory"); goto out; }
    if (!at(s, close)) {
        for (;;) {
            if (n == cap) {
                cap *= 2;
                dw_field *nf = realloc(f, cap * sizeof *f);
                if (nf) f = nf;
                size_t *no = realloc(offs, cap * sizeof *offs);
                if (no) offs = no;
                if (!nf || !no) { ERR(s, s->p, s->p + 1, "out of memory"); goto out; }
            }
            dw_str k;
            if (!key(s, &k, &offs[n])) goto out;
            if (!expect(s, ':', "`:` after the key")) goto out;
            memset(&f[n], 0, sizeof f[n]);
            f[n].key = k.s;
            f[n].klen = (uint32_t)k.len;
            if (!value(s, &f[n].v, depth)) goto out;
            n++;
            if (!eat(s, ',')) break;
        }
    }
    skip_ws(s);
    if (!at(s, close)) {
        char w[32];
        snprintf(w, sizeof w, "`,` or `%c`", close);
        expect(s, close, w);
        goto out;
    }
    /* duplicate keys: find the later occurrence for the caret */
    if (n >= 2) {
        kf *k = malloc(n * sizeof *k);
        if (!k) { ERR(s, s->p, s->p + 1, "out of memory"); goto out; }
        for (size_t i = 0; i < n; i++) k[i] = (kf){ f[i].key, f[i].klen, offs[i] };
        qsort(k, n, sizeof *k, kf_cmp);
        for (size_t i = 1; i < n; i++)
            if (k[i].klen == k[i - 1].klen && memcmp(k[i].key, k[i - 1].key, k[i].klen) == 0) {
                char msg[96];
                snprintf(msg, sizeof msg, "duplicate key `%%.*s` in %s", what);
                size_t o = k[i].off;
                const char *kk = k[i].key;
                size_t kl = k[i].klen;
                free(k);
                err_at(s, o, o + kl, NULL, msg, kk, kl);
                goto out;
            }
        free(k);
    }
    dw_field *af = n ? dw_arena_alloc(s->a, n * sizeof *af) : NULL;
    if (n && !af) { ERR(s, s->p, s->p + 1, "out of memory"); goto out; }
    if (n) memcpy(af, f, n * sizeof *af);
    if (!dw_make_record(af, n, out)) { ERR(s, s->p, s->p + 1, "duplicate key"); goto out; }
    ok = true;
out:
    free(f);
    free(offs);
    return ok;
}

/* Classify a bare run [o, e): integer, decimal, or a plain token. */
static bool bare(lp *s, size_t o, size_t e, dw_value *out)
{
    const char *b = s->t + o;
    size_t n = e - o;
    if (n == 4 && !memcmp(b, "null", 4)) { memset(out, 0, sizeof *out); out->kind = DW_V_NULL; return true; }
    if (n == 4 && !memcmp(b, "true", 4)) { *out = dw_bool(true); return true; }
    if (n == 5 && !memcmp(b, "false", 5)) { *out = dw_bool(false); return true; }
    size_t i = b[0] == '-' ? 1 : 0;
    if (i < n && (is_digit(b[i]) || (b[i] == '.' && i + 1 < n && is_digit(b[i + 1])))) {
        size_t k = i;
        while (k < n && is_digit(b[k])) k++;
        if (k == n && k > i) {   /* INTEGER */
            int64_t v = 0;
            bool neg = i == 1;
            for (size_t m = i; m < n; m++) {
                int d = b[m] - '0';
                if (__builtin_mul_overflow(v, 10, &v) || (neg ? __builtin_sub_overflow(v, d, &v) : __builtin_add_overflow(v, d, &v))) {
                    err_at(s, o, e, NULL, "integer `%.*s` does not fit in 64 bits", b, n);
                    return false;
                }
            }
            *out = dw_long(v);
            return true;
        }
        /* float-like: digits, at most one '.', an optional exponent */
        bool floaty = false;
        size_t m = k;
        if (m < n && b[m] == '.') { m++; while (m < n && is_digit(b[m])) m++; floaty = true; }
        if (m < n && (b[m] == 'e' || b[m] == 'E')) {
            size_t x = m + 1;
            if (x < n && (b[x] == '+' || b[x] == '-')) x++;
            if (x < n && is_digit(b[x])) { while (x < n && is_digit(b[x])) x++; m = x; floaty = true; }
        }
        if (floaty && m == n) {
            int64_t d;
            if (!dw_decimal_parse(b, n, &d)) {
                err_at(s, o, e, "a decimal needs 1 to 4 digits after the point and must lie within Cedar's decimal range (§4.6)",
                       "`%.*s` is not a valid Cedar decimal", b, n);
                return false;
            }
            memset(out, 0, sizeof *out);
            out->kind = DW_V_DECIMAL;
            out->u.i = d;
            return true;
        }
    }
    if (!dw_make_string(s->a, b, n, out)) { ERR(s, o, e, "out of memory"); return false; }
    return true;
}

static bool value(lp *s, dw_value *out, int depth)
{
    skip_ws(s);
    size_t o = s->p;
    if (o >= s->end) { ERR(s, o, o + 1, "expected a value, found the end of the line"); return false; }
    char c = s->t[o];
    if (c == '[' || c == '{') {
        if (depth + 1 > DW_TLOG_MAX_DEPTH) {
            ERR(s, o, o + 1, "value nested deeper than 128 levels");
            return false;
        }
        s->p++;
        if (c == '{') {
            if (!fields(s, '}', out, depth + 1, "a record")) return false;
            s->p++;
            return true;
        }
        size_t cap = 8, n = 0;
        dw_value *v = malloc(cap * sizeof *v);
        if (!v) { ERR(s, o, o + 1, "out of memory"); return false; }
        if (!at(s, ']')) {
            for (;;) {
                if (n == cap) {
                    dw_value *nv = realloc(v, (cap *= 2) * sizeof *v);
                    if (!nv) { free(v); ERR(s, o, o + 1, "out of memory"); return false; }
                    v = nv;
                }
                if (!value(s, &v[n], depth + 1)) { free(v); return false; }
                n++;
                if (!eat(s, ',')) break;
            }
        }
        if (!expect(s, ']', "`,` or `]`")) { free(v); return false; }
        dw_value *av = n ? dw_arena_alloc(s->a, n * sizeof *av) : NULL;
        if (n && !av) { free(v); ERR(s, o, o + 1, "out of memory"); return false; }
        if (n) memcpy(av, v, n * sizeof *av);
        free(v);
        memset(out, 0, sizeof *out);
        out->kind = DW_V_ARRAY;
        out->n = (uint32_t)n;
        out->u.elems = av;
        return true;
    }
    if (c == '"') {
        dw_str str;
        if (!string_lit(s, &str)) return false;
        memset(out, 0, sizeof *out);
        out->kind = DW_V_STRING;
        out->n = (uint32_t)str.len;
        out->u.s = str.s;
        return true;
    }
    if (!is_bare(c)) { ERR(s, o, o + 1, "expected a value"); return false; }
    size_t e = o;
    while (e < s->end && is_bare(s->t[e])) e++;
    /* an entity: a path of identifiers followed by `::"id"` */
    if (is_id0(c) && e + 1 < s->end && s->t[e] == ':' && s->t[e + 1] == ':') {
        bool idrun = true;
        for (size_t k = o; k < e; k++) idrun = idrun && is_id(s->t[k]);
        if (!idrun) { ERR(s, o, e, "an entity type must be a path of identifiers"); return false; }
        s->p = e;
        const dw_uid *u = entity_rest(s, o);
        if (!u) return false;
        memset(out, 0, sizeof *out);
        out->kind = DW_V_ENTITY;
        out->u.uid = u;
        return true;
    }
    s->p = e;
    return bare(s, o, e, out);
}

/* ---- envelopes ---- */

/* The first unmatched `)` at or after s->p, or SIZE_MAX. */
static size_t envelope_end(lp *s, size_t lim)
{
    int depth = 0;
    for (size_t i = s->p; i < lim; i++) {
        if (s->t[i] == '(') depth++;
        else if (s->t[i] == ')') {
            if (depth == 0) return i;
            depth--;
        }
    }
    return SIZE_MAX;
}

static bool scope_env(lp *s, dw_tlog_event *ev)
{
    dw_value rec;
    if (!fields(s, ')', &rec, 0, "scope(…)")) return false;
    ev->has_scope = true;
    for (uint32_t k = 0; k < rec.n; k++) {
        const dw_field *f = &rec.u.fields[k];
        bool p = f->klen == 9 && !memcmp(f->key, "principal", 9), r = f->klen == 8 && !memcmp(f->key, "resource", 8);
        if (!p && !r) continue;
        if (f->v.kind != DW_V_ENTITY) {
            err_at(s, s->p, s->p + 1, NULL, "the scope's `%.*s` must be an entity (Type::\"id\")", f->key, f->klen);
            return false;
        }
        if (p) ev->principal = f->v.u.uid;
        else ev->resource = f->v.u.uid;
    }
    return true;
}

static bool entities_env(lp *s, dw_tlog_event *ev)
{
    size_t cap = 4, n = 0;
    dw_tlog_entity *es = malloc(cap * sizeof *es);
    size_t *offs = malloc(cap * sizeof *offs);
    bool ok = false;
    if (!es || !offs) { ERR(s, s->p, s->p + 1, "out of memory"); goto out; }
    if (!at(s, ')')) {
        for (;;) {
            if (n == cap) {
                cap *= 2;
                dw_tlog_entity *ne = realloc(es, cap * sizeof *es);
                if (ne) es = ne;
                size_t *no = realloc(offs, cap * sizeof *offs);
                if (no) offs = no;
                if (!ne || !no) { ERR(s, s->p, s->p + 1, "out of memory"); goto out; }
            }
            dw_tlog_entity *x = &es[n];
            memset(x, 0, sizeof *x);
            skip_ws(s);
            offs[n] = s->p;
            if (!(x->uid = entity(s))) goto out;
            for (size_t k = 0; k < n; k++)
                if (dw_uid_eq(es[k].uid, x->uid)) {
                    err_at(s, offs[n], s->p, NULL, "duplicate uid `%.*s` in entities(…)", s->t + offs[n], s->p - offs[n]);
                    goto out;
                }
            if (!expect(s, ':', "`:` and the entity's attribute record")) goto out;
            if (!expect(s, '{', "the entity's attribute record `{…}`")) goto out;
            if (!fields(s, '}', &x->attrs, 1, "an entity record")) goto out;
            s->p++;
            skip_ws(s);
            if (s->p + 2 <= s->end && !memcmp(s->t + s->p, "in", 2) && (s->p + 2 == s->end || !is_id(s->t[s->p + 2]))) {
                s->p += 2;
                if (!expect(s, '[', "`[` and the parent uids")) goto out;
                size_t pc = 0, pn = 0;
                const dw_uid **ps = NULL;
                if (!at(s, ']')) {
                    for (;;) {
                        if (pn == pc) {
                            pc = pc ? pc * 2 : 4;
                            const dw_uid **np = realloc(ps, pc * sizeof *ps);
                            if (!np) { free(ps); ERR(s, s->p, s->p + 1, "out of memory"); goto out; }
                            ps = np;
                        }
                        if (!(ps[pn] = entity(s))) { free(ps); goto out; }
                        pn++;
                        if (!eat(s, ',')) break;
                    }
                }
                if (!expect(s, ']', "`,` or `]`")) { free(ps); goto out; }
                x->parents = pn ? dw_arena_alloc(s->a, pn * sizeof *x->parents) : NULL;
                if (pn && !x->parents) { free(ps); ERR(s, s->p, s->p + 1, "out of memory"); goto out; }
                if (pn) memcpy(x->parents, ps, pn * sizeof *ps);
                x->nparents = (uint32_t)pn;
                free(ps);
            }
            n++;
            if (!eat(s, ',')) break;
        }
    }
    skip_ws(s);
    if (!at(s, ')')) { expect(s, ')', "`,` or `)`"); goto out; }
    ev->entities = n ? dw_arena_alloc(s->a, n * sizeof *ev->entities) : NULL;
    if (n && !ev->entities) { ERR(s, s->p, s->p + 1, "out of memory"); goto out; }
    if (n) memcpy(ev->entities, es, n * sizeof *es);
    ev->nentities = (uint32_t)n;
    ok = true;
out:
    free(es);
    free(offs);
    return ok;
}

static const char *const env_names[] = { "scope", "entities", "request_context" };

/* Which envelope starts at s->p (0..2), or -1. */
static int envelope_at(lp *s)
{
    for (int k = 0; k < 3; k++) {
        size_t n = strlen(env_names[k]);
        if (s->p + n < s->end && !memcmp(s->t + s->p, env_names[k], n)) {
            size_t q = s->p + n;
            while (q < s->end && is_ws(s->t[q])) q++;
            if (q < s->end && s->t[q] == '(') return k;
        }
    }
    return -1;
}

/* ---- one line ---- */

static bool parse_line(lp *s, dw_tlog_event *ev)
{
    memset(ev, 0, sizeof *ev);
    ev->line = s->line;
    ev->context.kind = DW_V_RECORD;
    ev->logged.kind = DW_V_RECORD;
    size_t o = s->p;
    if (s->t[o] != '@') {
        ERR(s, o, o + 1, "expected `@` and a timestamp at the start of the event line");
        return false;
    }
    s->p++;
    size_t ts0 = s->p, i = s->p;
    if (i < s->end && s->t[i] == '-') i++;
    size_t d0 = i;
    while (i < s->end && is_digit(s->t[i])) i++;
    if (i == d0) { ERR(s, ts0, ts0 + 1, "expected an integer timestamp after `@`"); return false; }
    int64_t ts = 0;
    bool neg = s->t[ts0] == '-';
    for (size_t k = d0; k < i; k++) {
        int dg = s->t[k] - '0';
        if (__builtin_mul_overflow(ts, 10, &ts) || (neg ? __builtin_sub_overflow(ts, dg, &ts) : __builtin_add_overflow(ts, dg, &ts))) {
            err_at(s, ts0, i, NULL, "timestamp `%.*s` does not fit in 64 bits", s->t + ts0, i - ts0);
            return false;
        }
    }
    ev->ts = ts;
    s->p = i;
    if (s->p >= s->end || !is_ws(s->t[s->p])) {
        ERR(s, s->p, s->p + 1, "expected whitespace after the timestamp");
        return false;
    }
    /* envelopes, in the order scope, entities, request_context */
    int last = -1;
    for (;;) {
        skip_ws(s);
        int k = envelope_at(s);
        if (k < 0) break;
        size_t eo = s->p;
        if (k <= last) {
            char msg[160];
            snprintf(msg, sizeof msg, "envelope `%s(…)` %s `%s(…)`", env_names[k],
                     k == last ? "repeated after" : "out of order: it must come before", env_names[last]);
            err_at(s, eo, eo + strlen(env_names[k]), "envelopes appear at most once each, in the order scope(…), entities(…), request_context(…)", "%.*s", msg, strlen(msg));
            return false;
        }
        s->p += strlen(env_names[k]);
        skip_ws(s);
        s->p++;   /* '(' */
        size_t close = envelope_end(s, s->end);
        if (close == SIZE_MAX) {
            err_at(s, eo, eo + strlen(env_names[k]), NULL, "unterminated envelope `%.*s(…)`: no matching `)` on this line", env_names[k], strlen(env_names[k]));
            return false;
        }
        size_t saved_end = s->end;
        s->end = close + 1;
        bool ok = k == 0 ? scope_env(s, ev)
                : k == 1 ? entities_env(s, ev)
                : (ev->has_context = true, fields(s, ')', &ev->context, 0, "request_context(…)"));
        if (ok) {
            skip_ws(s);
            if (s->p != close) { ERR(s, s->p, close, "unexpected text inside the envelope"); ok = false; }
        }
        s->end = saved_end;
        if (!ok) return false;
        s->p = close + 1;
        if (s->p < s->end && !is_ws(s->t[s->p])) {
            ERR(s, s->p, s->p + 1, "expected whitespace after the envelope");
            return false;
        }
        last = k;
    }
    /* the event: path::"id"::kind( fields ) */
    skip_ws(s);
    size_t po = s->p;
    dw_str seg;
    if (!ident(s, &seg)) { ERR(s, po, po + 1, "expected the event (Ns::Action::\"id\"::kind(…))"); return false; }
    for (;;) {
        if (s->p + 1 < s->end && s->t[s->p] == ':' && s->t[s->p + 1] == ':') {
            s->p += 2;
            if (s->p < s->end && s->t[s->p] == '"') break;
            size_t so = s->p;
            if (so >= s->end || !is_id0(s->t[so]) || !ident(s, &seg)) { ERR(s, so, so + 1, "expected an identifier or the quoted action id after `::`"); return false; }
            continue;
        }
        ERR(s, s->p, s->p + 1, "expected `::` and the quoted action id");
        return false;
    }
    ev->atype = (dw_str){ dw_arena_memdup(s->a, s->t + po, s->p - 2 - po), s->p - 2 - po };
    dw_str aid;
    if (!string_lit(s, &aid)) return false;
    ev->aid = aid;
    if (!(s->p + 1 < s->end && s->t[s->p] == ':' && s->t[s->p + 1] == ':')) {
        ERR(s, s->p, s->p + 1, "expected `::` and the event kind after the action id");
        return false;
    }
    s->p += 2;
    size_t ko = s->p;
    if (ko >= s->end || !is_id0(s->t[ko]) || !ident(s, &seg)) { ERR(s, ko, ko + 1, "expected the event kind (an identifier)"); return false; }
    ev->kind = (dw_str){ dw_arena_memdup(s->a, seg.s, seg.len), seg.len };
    if (!ev->atype.s || !ev->kind.s) { ERR(s, po, po + 1, "out of memory"); return false; }
    skip_ws(s);
    if (s->p >= s->end || s->t[s->p] != '(') { ERR(s, s->p, s->p + 1, "expected `(` and the event's logged fields"); return false; }
    s->p++;
    if (!fields(s, ')', &ev->logged, 0, "the event's fields")) return false;
    s->p++;
    skip_ws(s);
    if (s->p < s->end) { ERR(s, s->p, s->end, "unexpected text after the event"); return false; }
    return true;
}

int dw_tlog_parse(dw_arena *a, const dw_source *src, dw_diags *d, dw_tlog *out)
{
    memset(out, 0, sizeof *out);
    lp s = { .a = a, .src = src, .d = d, .t = src->text };
    int rc = 0;
    size_t pos = 0;
    uint32_t line = 0;
    while (pos < src->len) {
        size_t nl = pos;
        while (nl < src->len && src->text[nl] != '\n') nl++;
        line++;
        size_t b = pos, e = nl;
        while (b < e && (is_ws(src->text[b]))) b++;
        while (e > b && (is_ws(src->text[e - 1]))) e--;
        if (b < e) {
            s.line_start = pos;
            s.line = line;
            s.p = b;
            s.end = e;
            s.failed = false;
            if (out->n == out->cap) {
                size_t c = out->cap ? out->cap * 2 : 64;
                dw_tlog_event *ne = realloc(out->ev, c * sizeof *ne);
                if (!ne) { ERR(&s, b, b + 1, "out of memory"); return -1; }
                out->ev = ne;
                out->cap = c;
            }
            if (parse_line(&s, &out->ev[out->n])) out->n++;
            else {
                if (!s.failed) ERR(&s, b, b + 1, "malformed event line");
                rc = -1;
            }
        }
        pos = nl + 1;
    }
    return rc;
}

void dw_tlog_free(dw_tlog *t)
{
    free(t->ev);
    memset(t, 0, sizeof *t);
}

int dw_tlog_event_input(dw_arena *a, const dw_tlog_event *x, dw_event_input *in)
{
    dw_event_entity *ents = x->nentities ? dw_arena_alloc(a, x->nentities * sizeof *ents) : NULL;
    if (x->nentities && !ents) return -1;
    for (uint32_t k = 0; k < x->nentities; k++)
        ents[k] = (dw_event_entity){ x->entities[k].uid, &x->entities[k].attrs,
                                     (const dw_uid *const *)x->entities[k].parents, x->entities[k].nparents };
    *in = (dw_event_input){
        .atype = x->atype.s, .atype_len = x->atype.len, .aid = x->aid.s, .aid_len = x->aid.len,
        .kind = x->kind.s, .kind_len = x->kind.len, .ts = x->ts,
        .principal = x->principal, .resource = x->resource,
        .logged = &x->logged, .context = x->has_context ? &x->context : NULL,
        .entities = ents, .nentities = x->nentities,
    };
    return 0;
}
