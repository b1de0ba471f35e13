/* json_request.c - a request's JSON line to a dw_request in one pass (see
 * json_request.h).  The pass takes on only what it can decide exactly as
 * dw_json_parse + dw_request_from_json would, and says "not mine" (NULL, 0)
 * for everything else, errors included: the general path then runs from the
 * start.  So it never needs an error message, a JSON node or an offset.
 *
 * Each step takes the cursor c (into the line, which ends at e) and returns
 * the cursor past what it read, or NULL: the cursor lives in registers, not
 * in the reader's state, which the stores of the values being built would
 * make the compiler reload after each one. */
#include "json_request.h"
#include <string.h>
#include "../lang/json_scan.h"
#include "../stdlib/bytes.h"
#include "../stdlib/uid_hash.h"
#include "../stdlib/utf8.h"
#include "json_read_cache.h"
#include "../stdlib/hot.h"

/* Beyond these the general path decides (Box's requests nest 4 levels and
 * hold a few members per record). */
#define FAST_MAX_DEPTH 16
#define FAST_MAX_FIELDS 16
#define FAST_MAX_ELEMS 32

typedef struct rd {
    dw_arena *a;
    const char *e;            /* the line's end */
    dw_carve carve;           /* the block strings, uids, fields and elements are carved from */
    dw_read_cache *cache;     /* uid objects and keys read before (NULL: none) */
    dw_read_cache_uid *last;  /* the slot holding the reading uid_object last gave, if any */
    dw_read_cache_key *last_key;   /* the same for cached_str */
} rd;

/* One arena call per request, not one per value: a block sized by the input
 * left after c (a request's values take at most a few bytes per input byte). */
static inline void *take(rd *p, const char *c, size_t n)
{
    size_t left = (size_t)(p->e - c);
    return dw_carve_take(&p->carve, p->a, n, left < 4096 ? 4 * left + 512 : 32768);
}

/* n items of the given size from the stack into the block (NULL for none). */
static bool items(rd *p, const char *c, const void *from, size_t n, size_t size, void **out)
{
    *out = NULL;
    if (!n) return true;
    if (!(*out = take(p, c, n * size))) return false;
    memcpy(*out, from, n * size);
    return true;
}

static inline const char *ws(const char *c, const char *e)
{
    while (c < e) {
        unsigned char b = (unsigned char)*c;
        if (b > ' ') break;                 /* every JSON white space byte is <= ' ': compact JSON's one test */
        if (b != ' ' && b != '\t' && b != '\n' && b != '\r') break;
        c++;
    }
    return c;
}

/* the byte at c (0 at the end: a NUL byte is no JSON punctuation either) */
static inline char peek(const char *c, const char *e) { return c < e ? *c : 0; }

/* past ch, after any white space; NULL if ch is not next */
static inline const char *eat(const char *c, const char *e, char ch)
{
    if (c < e && *c == ch) return c + 1;   /* compact JSON: no white space to skip */
    c = ws(c, e);
    return c < e && *c == ch ? c + 1 : NULL;
}

/* c at a member whose key is exactly the literal (quoted, no escape: an
 * escaped spelling of the same key is left to the general path): past it
 * and its ':'. */
#define KEY(c, e, lit) key_is((c), (e), "\"" lit "\"", sizeof lit + 1)
static inline const char *key_is(const char *c, const char *e, const char *quoted, size_t ql)
{
    if ((size_t)(e - c) < ql || !dw_mem_eq(c, quoted, ql)) return NULL;   /* no memcmp call */
    return eat(c + ql, e, ':');
}

/* c at '"': the bytes of a string with no escape and no control byte (valid
 * UTF-8, as the reader checks it), in place; past its closing quote.  NULL
 * for any other string. */
static inline __attribute__((always_inline)) const char *span(const char *c, const char *e, const char **s, size_t *len)
{
    const char *b = c + 1;
    size_t n = (size_t)(e - b), i = 0;
    for (;;) {
        i = dw_json_scan_plain(b, i, n);
        if (i >= n) return NULL;
        unsigned char x = (unsigned char)b[i];
        if (x == '"') break;
        if (x < 0x80) return NULL;             /* a backslash or a control byte */
        size_t l = dw_utf8_len((const unsigned char *)b + i, n - i);
        if (!l) return NULL;
        i += l;
    }
    *s = b;
    *len = i;
    return b + i + 1;
}

/* The 8 bytes at s are those of the 8-character literal w (one compare). */
static inline bool word_is(const char *s, const char w[9])
{
    uint64_t x, y;
    memcpy(&x, s, 8);
    memcpy(&y, w, 8);
    return x == y;
}

/* s[0..len) NUL-terminated at o (room for round8(len + 1) bytes), in whole
 * words when the line has them (the line's bytes past the string are read,
 * never kept). */
static inline void put(const rd *p, char *o, const char *s, size_t len)
{
    size_t words = (len + 8) & ~(size_t)7;     /* the NUL's word too: what take(len + 1) gave */
    if (len < 32 && s + words <= p->e)
        switch (words) {                        /* no loop: a short string is one to four moves */
        case 32: memcpy(o + 24, s + 24, 8); /* fall through */
        case 24: memcpy(o + 16, s + 16, 8); /* fall through */
        case 16: memcpy(o + 8, s + 8, 8);   /* fall through */
        default: memcpy(o, s, 8);
        }
    else memcpy(o, s, len);
    o[len] = 0;
}

/* s[0..len) (in the line, the reader at c) as a NUL-terminated copy, as the
 * reader's strings are (the carve's pieces are rounded up to 8 bytes: room
 * for put's words). */
static inline __attribute__((always_inline)) bool copy(rd *p, const char *c, const char *s, size_t len, const char **out)
{
    char *o = take(p, c, len + 1);
    if (!o) return false;
    put(p, o, s, len);
    *out = o;
    return true;
}

/* The same as a NUL-terminated copy. */
static const char *str(rd *p, const char *c, const char **out, size_t *len)
{
    const char *s;
    c = span(c, p->e, &s, len);
    return c && copy(p, c, s, *len, out) ? c : NULL;
}

/* The uid of type t and id (spans of the line) with copies of both, in one
 * piece of the carve; hash: its dw_uid_hash. */
static const dw_uid *make_uid(rd *p, const char *c, const char *t, size_t tl, const char *id, size_t il, uint64_t hash)
{
    size_t tw = (tl + 8) & ~(size_t)7, iw = (il + 8) & ~(size_t)7;
    char *b = take(p, c, sizeof(dw_uid) + tw + iw);
    if (!b) return NULL;
    dw_uid *u = (dw_uid *)(void *)b;
    char *ot = b + sizeof *u, *oi = ot + tw;
    put(p, ot, t, tl);
    put(p, oi, id, il);
    *u = (dw_uid){ .type = ot, .tlen = (uint32_t)tl, .idlen = (uint32_t)il, .id = oi, .hash = hash };
    return u;
}

/* After an entity object's '{': exactly "type" and "id", strings, either
 * order, and the '}'; their spans in the line. */
static const char *uid_spans(const char *c, const char *e, const char **t, size_t *tl, const char **id, size_t *il)
{
    *t = *id = NULL;
    /* the compact form {"type":"T","id":"I"}: the bytes between the strings
     * are two 8-byte words */
    if (e - c >= 8 && word_is(c, "\"type\":\"")) {
        const char *q = span(c + 7, e, t, tl);                /* T at its opening quote */
        if (q && e - q >= 8 && word_is(q - 1, "\",\"id\":\"")) {
            q = span(q + 6, e, id, il);                       /* I at its opening quote */
            if (q && q < e && *q == '}') return q + 1;
        }
        *t = *id = NULL;
    }
    for (int m = 0; m < 2; m++) {
        if (m && !(c = eat(c, e, ','))) return NULL;
        c = ws(c, e);
        char k = e - c > 1 ? c[1] : 0;
        const char *q;
        if (!*t && k == 't' && (q = KEY(c, e, "type"))) {
            q = ws(q, e);
            if (peek(q, e) != '"' || !(c = span(q, e, t, tl))) return NULL;
        } else if (!*id && k == 'i' && (q = KEY(c, e, "id"))) {
            q = ws(q, e);
            if (peek(q, e) != '"' || !(c = span(q, e, id, il))) return NULL;
        } else return NULL;
    }
    return eat(c, e, '}');
}

/* A copy just made in a keeping reader's arena: later lines share it
 * (json_read_cache.h, "Shared copies"). */
static inline void keep_uid(dw_read_cache *rc, dw_read_cache_uid *sl, const dw_uid *u)
{
    if (!rc->keep) return;
    sl->kept = u;
    sl->kept_gen = rc->keep_gen;
    rc->kept_new = true;
}

/* A copy of a string the cache does not lend, shared with later lines when
 * the reader keeps.  Out of line: the lending path's code stays small. */
static __attribute__((noinline)) bool copy_kept(rd *p, const char *c, const char *s, size_t len, const char **out,
                                               dw_read_cache_key *sl)
{
    dw_read_cache *rc = p->cache;
    if (!copy(p, c, s, len, out)) return false;
    if (rc->keep) {
        sl->kept = *out;
        sl->kept_gen = rc->keep_gen;
        rc->kept_new = true;
    }
    return true;
}

/* c at an entity object's '{' (the members' object, inside any
 * "__entity"): its uid in *out, *th its type's dw_type_hash; past the
 * object.  Through the cache when there is one: an object whose bytes (up to
 * its first '}', which ends it unless a string holds one) are a stored one's
 * takes that reading. */
DW_HOT static const char *uid_object(rd *p, const char *c, uint64_t *th, const dw_uid **out)
{
    const char *e = p->e, *t, *id, *raw = c;
    size_t tl = 0, il = 0;
    dw_read_cache *rc = p->cache;
    dw_read_cache_uid *sl = NULL;
    uint64_t key = 0;
    size_t rl = 0;
    p->last = NULL;
    if (rc) {
        rl = dw_read_cache_uid_len(raw, (size_t)(e - raw) < DW_READ_CACHE_UID_RAW ? (size_t)(e - raw) : DW_READ_CACHE_UID_RAW);
        if (rl >= DW_READ_CACHE_UID_MIN) {
            key = dw_read_cache_uid_key(raw, rl);
            dw_read_cache_uid *hit = dw_read_cache_uid_find(rc, key, raw, rl, &sl);
            if (hit) {
                rc->hits++;
                *th = hit->type_hash;
                p->last = hit;
                hit->used = rc->line;
                if (rc->lend) {
                    hit->lent = rc->line;
                    *out = &hit->uid;
                } else if (rc->keep && hit->kept_gen == rc->keep_gen) {
                    *out = hit->kept;              /* the copy an earlier kept line made */
                } else {
                    if (!(*out = make_uid(p, raw + rl, raw + hit->toff, hit->uid.tlen, raw + hit->ioff, hit->uid.idlen,
                                          hit->uid.hash)))
                        return NULL;
                    keep_uid(rc, hit, *out);
                }
                return raw + rl;
            }
        }
    }
    if (!(c = uid_spans(c + 1, e, &t, &tl, &id, &il))) return NULL;
    *th = dw_type_hash(t, tl);
    uint64_t h = dw_uid_hash_typed(*th, id, il);
    /* store it when it was read to its first '}' and a slot of its pair is not lent to this line */
    if (sl && c == raw + rl) {
        rc->misses++;
        p->last = sl;
        sl->used = rc->line;
        sl->version = ++rc->stores;
        sl->ad_schema = sl->chk_schema = NULL;
        sl->bind_prog_serial = 0;
        sl->key = key;
        sl->type_hash = *th;
        sl->rawlen = (uint16_t)rl;
        sl->toff = (uint16_t)(t - raw);
        sl->ioff = (uint16_t)(id - raw);
        memcpy(sl->raw, raw, rl);
        memcpy(sl->str, t, tl);                /* tl + il + 2 < rl: room in str */
        sl->str[tl] = 0;
        memcpy(sl->str + tl + 1, id, il);
        sl->str[tl + 1 + il] = 0;
        sl->uid = (dw_uid){ .type = sl->str, .tlen = (uint32_t)tl, .idlen = (uint32_t)il, .id = sl->str + tl + 1, .hash = h };
        sl->kept_gen = 0;                      /* a new reading: no copy of it yet */
        if (rc->lend) {
            sl->lent = rc->line;
            *out = &sl->uid;
            return c;
        }
        if (!(*out = make_uid(p, c, t, tl, id, il, h))) return NULL;
        keep_uid(rc, sl, *out);
        return c;
    }
    return (*out = make_uid(p, c, t, tl, id, il, h)) ? c : NULL;
}

/* c at '{': {"type": T, "id": I} or {"__entity": {...}} (dw_uid_from_json). */
static const char *entity(rd *p, const char *c, uint64_t *th, const dw_uid **out)
{
    const char *e = p->e;
    if (e - c > 2 && c[1] == '"' && c[2] != '_') return uid_object(p, c, th, out);   /* compact, not "__entity" */
    const char *q = KEY(ws(c + 1, e), e, "__entity");
    if (q) {
        q = ws(q, e);
        if (peek(q, e) != '{' || !(q = uid_object(p, q, th, out))) return NULL;
        return eat(q, e, '}');
    }
    return uid_object(p, c, th, out);
}

/* c at '"': a string with no escape, past its closing quote, through the
 * cache's short strings when there is one (json_read_cache.h): *k a
 * NUL-terminated copy in the carve, or the cache's own when it lends; *kh
 * its dw_key_hash when kh is given (a miss hashes it either way, to store
 * it).  Record keys, and an event's repeated values (its action and kind). */
static inline __attribute__((always_inline)) const char *cached_str(rd *p, const char *c, const char **k, size_t *kl,
                                                                    uint32_t *kh)
{
    const char *e = p->e, *b = c + 1;
    dw_read_cache *rc = p->cache;
    dw_read_cache_key *sl = NULL;
    uint64_t w = 0;
    size_t ql = 0;
    p->last_key = NULL;
    if (rc && e - b >= 8) {
        w = dw_read_cache_key_word(b, &ql);
        sl = dw_read_cache_key_slot(rc, w, ql);
        size_t l = sl->len;
        if (l && sl->word == w && (ql < 8 ? l == ql : l >= 8 && (size_t)(e - b) > l && b[l] == '"' && dw_mem_eq(sl->s, b, l))) {
            rc->key_hits++;
            p->last_key = sl;
            *kl = l;
            if (kh) *kh = sl->khash;
            c = b + l + 1;
            if (rc->lend) {
                sl->lent = rc->line;
                *k = sl->s;
                return c;
            }
            if (rc->keep && sl->kept_gen == rc->keep_gen) {
                *k = sl->kept;                 /* the copy an earlier kept line made */
                return c;
            }
            return copy_kept(p, c, b, l, k, sl) ? c : NULL;
        }
    }
    const char *s;
    if (!(c = span(c, e, &s, kl))) return NULL;
    uint32_t h = dw_key_hash(s, *kl);
    if (kh) *kh = h;
    if (sl && *kl && *kl <= DW_READ_CACHE_KEY_MAX && sl->lent != rc->line) {
        rc->key_misses++;
        p->last_key = sl;
        sl->in_type = NULL;
        sl->word = w;
        sl->khash = h;
        sl->len = (uint8_t)*kl;
        memcpy(sl->s, s, *kl);
        sl->s[*kl] = 0;
        sl->kept_gen = 0;                      /* a new reading: no copy of it yet */
        if (rc->lend) {
            sl->lent = rc->line;
            *k = sl->s;
            return c;
        }
        return copy_kept(p, c, s, *kl, k, sl) ? c : NULL;
    }
    return copy(p, c, s, *kl, k) ? c : NULL;
}

static const char *value(rd *p, const char *c, const dw_type *expect, int depth, dw_value *out);


/* How many of record type t's attributes are required. */
static size_t required_of(const dw_type *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nattrs; i++) n += t->attrs[i].required;
    return n;
}

/* After a record's '{' (record_from_json): members checked against expect's
 * declared attributes when given, then sorted, then its required ones. */
DW_HOT static const char *record(rd *p, const char *c, const dw_type *expect, int depth, dw_value *out)
{
    const char *e = p->e;
    dw_field f[FAST_MAX_FIELDS];
    size_t n = 0, required = 0;   /* members naming a required attribute */
    size_t type_required = SIZE_MAX;   /* how many expect requires (SIZE_MAX: not counted yet) */
    /* when every member names a declared attribute, the declarations' order
     * is the record's (schema.h: attributes sorted by name, as dw_make_record
     * sorts keys): the fields are sorted by declaration, no key compared, and
     * two members of one declaration are a repeated key */
    const dw_attr_decl *decl[FAST_MAX_FIELDS];
    bool declared = expect != NULL;
    c = ws(c, e);
    if (peek(c, e) == '}') c++;
    else
        for (;;) {
            if (n == FAST_MAX_FIELDS || peek(c, e) != '"') return NULL;
            const char *k;
            size_t kl;
            uint32_t kh;
            if (!(c = cached_str(p, c, &k, &kl, &kh)) || !(c = eat(c, e, ':'))) return NULL;
            const dw_type *t = NULL;
            const dw_attr_decl *d = NULL;
            if (expect) {
                dw_read_cache_key *ks = p->last_key;      /* this key's answer for this type, when kept */
                if (ks && ks->in_type == expect) d = ks->decl, type_required = ks->type_required;
                else {
                    for (size_t i = 0; i < expect->nattrs; i++)
                        if (expect->attrs[i].name.len == kl && dw_mem_eq(expect->attrs[i].name.s, k, kl)) { d = &expect->attrs[i]; break; }
                    if (type_required == SIZE_MAX) type_required = required_of(expect);
                    if (ks) ks->in_type = expect, ks->decl = d, ks->type_required = type_required;
                }
                if (!d && !expect->additional_attrs) return NULL;
                declared &= d != NULL;
                decl[n] = d;
                t = d ? d->type : NULL;
                required += d && d->required;
            }
            f[n].key = k;
            f[n].klen = (uint32_t)kl;
            f[n].khash = kh;
            if (!(c = value(p, c, t, depth + 1, &f[n].v))) return NULL;
            n++;
            c = ws(c, e);
            char x = peek(c, e);
            if (x == ',') { c = ws(c + 1, e); continue; }
            if (x == '}') { c++; break; }
            return NULL;
        }
    if (declared)
        for (size_t i = 1; i < n; i++) {
            dw_field x = f[i];
            const dw_attr_decl *xd = decl[i];
            size_t k = i;
            for (; k > 0 && decl[k - 1] > xd; k--) f[k] = f[k - 1], decl[k] = decl[k - 1];
            if (k > 0 && decl[k - 1] == xd) return NULL;   /* a repeated key */
            f[k] = x, decl[k] = xd;
        }
    dw_field *af;
    if (!items(p, c, f, n, sizeof *f, (void **)&af)) return NULL;
    if (declared) {
        *out = (dw_value){ .kind = DW_V_RECORD, .n = (uint32_t)n };
        out->u.fields = af;
    } else if (!dw_make_record(af, n, out)) return NULL;
    /* every required attribute present: the members are distinct (dw_make_record), so count them */
    if (expect && type_required == SIZE_MAX) type_required = required_of(expect);
    return !expect || required == type_required ? c : NULL;
}

/* An i64 written plainly: up to 18 digits (longer ones, fractions and
 * exponents go to the reader's exact path). */
static const char *number(const char *c, const char *e, int64_t *out)
{
    bool neg = *c == '-';
    const char *ds = c + neg, *i = ds;
    while (i < e && *i >= '0' && *i <= '9') i++;
    size_t nd = (size_t)(i - ds);
    if (nd == 0 || nd > 18 || (nd > 1 && *ds == '0')) return NULL;
    if (i < e && (*i == '.' || *i == 'e' || *i == 'E')) return NULL;
    int64_t v = 0;
    for (const char *k = ds; k < i; k++) v = v * 10 + (*k - '0');
    *out = neg ? -v : v;
    return i;
}

/* dw_value_from_json for the kinds the pass takes on: a String, Long or Bool
 * where the schema expects one (or says nothing), a record, a set, an entity
 * reference (checked against the expected type). */
DW_HOT static const char *value(rd *p, const char *c, const dw_type *expect, int depth, dw_value *out)
{
    const char *e = p->e;
    c = ws(c, e);
    if (c >= e || depth > FAST_MAX_DEPTH) return NULL;
    dw_type_kind want = expect ? expect->kind : (dw_type_kind)-1;
    switch (*c) {
    case '"': {
        if (expect && want != DW_T_STRING) return NULL;   /* entity, extension: the general path */
        const char *s;
        size_t l;
        if (!(c = str(p, c, &s, &l))) return NULL;
        *out = (dw_value){ .kind = DW_V_STRING, .n = (uint32_t)l };
        out->u.s = s;
        return c;
    }
    case '{': {
        const char *q = ws(c + 1, e), *w = NULL;
        /* `{"__extn": ...}` alone is an extension value, `{"__entity": ...}`
         * alone an entity reference (dw_value_from_json); both keys start `"__` */
        if (e - q > 2 && q[1] == '_' && q[2] == '_') {
            if (KEY(q, e, "__extn")) return NULL;
            w = KEY(q, e, "__entity");
        }
        if (w || want == DW_T_ENTITY) {
            const dw_uid *u = NULL;
            uint64_t th;
            if (w) {                     /* entity()'s wrapped form, from past its key */
                w = ws(w, e);
                w = peek(w, e) == '{' ? uid_object(p, w, &th, &u) : NULL;
                if (w) w = eat(w, e, '}');
            } else w = entity(p, c, &th, &u);
            if (!w) return NULL;
            if (expect && (want != DW_T_ENTITY || u->tlen != expect->name.len ||
                           !dw_mem_eq(u->type, expect->name.s, u->tlen)))
                return NULL;
            *out = (dw_value){ .kind = DW_V_ENTITY };
            out->u.uid = u;
            return w;
        }
        if (expect && want != DW_T_RECORD) return NULL;
        return record(p, c + 1, expect, depth, out);
    }
    case '[': {
        if (expect && want != DW_T_SET) return NULL;
        const dw_type *et = expect ? expect->elem : NULL;
        dw_value v[FAST_MAX_ELEMS];
        size_t n = 0;
        c = ws(c + 1, e);
        if (peek(c, e) == ']') c++;
        else
            for (;;) {
                if (n == FAST_MAX_ELEMS || !(c = value(p, c, et, depth + 1, &v[n]))) return NULL;
                n++;
                c = ws(c, e);
                char x = peek(c, e);
                if (x == ',') { c++; continue; }
                if (x == ']') { c++; break; }
                return NULL;
            }
        dw_value *av;
        if (!items(p, c, v, n, sizeof *v, (void **)&av)) return NULL;
        *out = dw_make_set(av, n);
        return c;
    }
    case 't': case 'f': {
        if (expect && want != DW_T_BOOL) return NULL;
        bool t = *c == 't';
        size_t l = t ? 4 : 5;
        if ((size_t)(e - c) < l || memcmp(c, t ? "true" : "false", l) != 0) return NULL;
        *out = dw_bool(t);
        return c + l;
    }
    default: {
        if (expect && want != DW_T_LONG) return NULL;
        char x = *c;
        if (x != '-' && (x < '0' || x > '9')) return NULL;  /* null, or not JSON */
        int64_t v;
        if (!(c = number(c, e, &v))) return NULL;
        *out = dw_long(v);
        return c;
    }
    }
}

/* A line that begins with a head the cache keeps (json_read_cache.h): the
 * three readings and the action's declaration it stands for, marked lent to
 * this line, and the cursor at its context's value; NULL if none.  The same
 * bytes read the same way, so taking the head is reading them. */
static const char *known_head(dw_read_cache *rc, const char *text, size_t len, const dw_schema *schema,
                              dw_read_cache_uid *sl[3], uint64_t ver[3], const dw_action_decl **ad)
{
    for (int k = 0; k < 2; k++) {
        struct dw_read_cache_head *h = &rc->head[k];
        if (!h->len || len <= h->len || h->schema != schema || !dw_mem_eq(h->bytes, text, h->len)) continue;
        if (h->sl[0]->version != h->ver[0] || h->sl[1]->version != h->ver[1] || h->sl[2]->version != h->ver[2]) continue;
        for (int m = 0; m < 3; m++) {
            sl[m] = h->sl[m], ver[m] = h->ver[m];
            sl[m]->lent = sl[m]->used = rc->line;
        }
        *ad = h->ad;
        if (k) {                          /* the most recent first */
            struct dw_read_cache_head x = rc->head[0];
            rc->head[0] = *h, rc->head[1] = x;
        }
        rc->head_hits++;
        return text + rc->head[0].len;
    }
    return NULL;
}

/* Keep text[0..n) as the newest head, standing for these readings. */
static void keep_head(dw_read_cache *rc, const char *text, size_t n, const dw_schema *schema, dw_read_cache_uid *const sl[3],
                      const uint64_t ver[3], const dw_action_decl *ad)
{
    rc->head[1] = rc->head[0];
    struct dw_read_cache_head *h = &rc->head[0];
    h->len = (uint16_t)n;
    h->schema = schema, h->ad = ad;
    for (int m = 0; m < 3; m++) h->sl[m] = sl[m], h->ver[m] = ver[m];
    memcpy(h->bytes, text, n);
}

int dw_request_json_fast(dw_arena *a, const char *text, size_t len, const dw_schema *schema, bool validate,
                         dw_read_cache *cache, dw_request *out)
{
    memset(out, 0, sizeof *out);
    if (cache) dw_read_cache_next_line(cache);   /* a line not read whole leaves req_line behind it */
    const char *c = text, *e = text + len;
    rd p = { a, e, { NULL, NULL }, cache, NULL, NULL };
    const dw_uid *u[3] = { NULL, NULL, NULL };
    uint64_t th[3];                      /* their types' hashes */
    dw_read_cache_uid *sl[3] = { NULL, NULL, NULL };   /* their readings' cache slots */
    uint64_t ver[3] = { 0, 0, 0 };       /* and those readings */
    const dw_action_decl *ad = NULL;
    bool have_ctx = false;
    int m;
    const char *q, *head_end = NULL;     /* past the context's key, when the line's head may be kept */
    bool lending = cache && cache->lend;
    if (lending && (q = known_head(cache, text, len, schema, sl, ver, &ad))) {
        for (int i = 0; i < 3; i++) u[i] = &sl[i]->uid, th[i] = sl[i]->type_hash;
        m = 3;
        goto member;
    }
    if (!(c = eat(c, e, '{')) || peek(c = ws(c, e), e) == '}') return 0;
    for (;;) {
        c = ws(c, e);
        m = -1;
        q = NULL;
        switch (e - c > 1 ? c[1] : 0) {     /* the key's first letter picks the one to compare */
        case 'p': m = (q = KEY(c, e, "principal")) ? 0 : -1; break;
        case 'a': m = (q = KEY(c, e, "action")) ? 1 : -1; break;
        case 'r': m = (q = KEY(c, e, "resource")) ? 2 : -1; break;
        case 'c': m = (q = KEY(c, e, "context")) ? 3 : -1; break;
        }
        if (m < 0) return 0;              /* the general path ignores other members, after reading them */
        /* a head of the three lent readings, then the context's key */
        if (m == 3 && lending && sl[0] && sl[1] && sl[2] && u[0] == &sl[0]->uid && u[1] == &sl[1]->uid && u[2] == &sl[2]->uid &&
            (size_t)(q - text) <= DW_READ_CACHE_HEAD_MAX)
            head_end = q;
    member:
        c = ws(q, e);
        if (m < 3) {
            if (u[m] || peek(c, e) != '{' || !(c = entity(&p, c, &th[m], &u[m]))) return 0;
            if ((sl[m] = p.last)) ver[m] = sl[m]->version;
            if (m == 1 && schema) {
                dw_read_cache_uid *as = sl[1];
                if (as && as->ad_schema == schema) ad = as->ad;      /* this reading's answer */
                else {
                    if (!(ad = dw_schema_action_h(schema, u[1]->type, u[1]->tlen, u[1]->id, u[1]->idlen, u[1]->hash))) return 0;
                    if (as) as->ad_schema = schema, as->ad = ad;
                }
            }
        } else {
            /* the context's type comes from its action */
            if (have_ctx || (schema && !u[1]) || peek(c, e) != '{') return 0;
            if (!(c = record(&p, c + 1, ad ? ad->context : NULL, 1, &out->vars[DW_VAR_C]))) return 0;
            have_ctx = true;
        }
        c = ws(c, e);
        char x = peek(c, e);
        if (x == ',') { c++; continue; }
        if (x == '}') { c++; break; }
        return 0;
    }
    if (ws(c, e) != e || !u[0] || !u[1] || !u[2]) return 0;
    for (int i = 0; i < 3; i++) {
        out->vars[i].kind = DW_V_ENTITY;
        out->vars[i].u.uid = u[i];
    }
    if (!have_ctx) {
        out->vars[DW_VAR_C].kind = DW_V_RECORD;
        if (ad)
            for (size_t i = 0; i < ad->context->nattrs; i++)
                if (ad->context->attrs[i].required) return 0;
    }
    /* the request check depends on the schema, validate and the three
     * readings alone: the answer kept with the action's reading, when all
     * three are still the slots' (a slot may be overwritten later in a line
     * that does not lend) */
    bool memo = schema && sl[0] && sl[1] && sl[2] && sl[0]->version == ver[0] && sl[1]->version == ver[1] &&
                sl[2]->version == ver[2];
    dw_read_cache_uid *as = sl[1];
    if (!(memo && as->chk_schema == schema && as->chk_validate == validate && as->chk_p == ver[0] && as->chk_r == ver[2])) {
        if (dw_request_check_hashed(schema, ad, validate, out, th, NULL, NULL)) return 0;
        if (memo) as->chk_schema = schema, as->chk_validate = validate, as->chk_p = ver[0], as->chk_r = ver[2];
    }
    /* a line read whole keeps its head (its readings are still the slots': memo) */
    if (head_end && memo) keep_head(cache, text, (size_t)(head_end - text), schema, sl, ver, ad);
    if (cache) {
        cache->req_line = cache->line;
        for (int i = 0; i < 3; i++) cache->req_sl[i] = sl[i], cache->req_ver[i] = ver[i];
    }
    return 1;
}

static inline __attribute__((always_inline)) const dw_uid *bind_from_slot(dw_read_cache_uid *sl, uint64_t ver, const dw_program *p,
                                                                           const dw_store *st, dw_value *var, const dw_entity **ent)
{
    if (!sl || sl->version != ver) return dw_bind_uid(p, st, var, ent);
    if (dw_read_cache_bind_is_current(sl, p->serial, st->serial)) {
        if (sl->bind_canon) var->u.uid = sl->bind_canon;
        *ent = sl->bind_ent;
        return sl->bind_canon;
    }
    const dw_uid *canon = dw_bind_uid(p, st, var, ent);
    sl->bind_canon = canon, sl->bind_ent = *ent;
    sl->bind_prog_serial = p->serial, sl->bind_store_serial = st->serial;
    return canon;
}

const dw_uid *dw_read_cache_bind_uid(dw_read_cache_uid *sl, uint64_t ver, const dw_program *p, const dw_store *st,
                                     dw_value *var, const dw_entity **ent)
{
    return bind_from_slot(sl, ver, p, st, var, ent);
}

void dw_request_bind_read(dw_request *req, dw_read_cache *cache, const dw_program *p, const dw_store *st)
{
    bool read = cache && cache->req_line == cache->line;
    for (int i = 0; i < 3; i++) {
        req->ent[i] = NULL;
        if (req->vars[i].kind != DW_V_ENTITY) continue;
        dw_read_cache_uid *sl = read ? cache->req_sl[i] : NULL;
        /* the slot's reading only when it is this uid (a lent reading): any other request binds in full */
        if (sl && req->vars[i].u.uid != &sl->uid) sl = NULL;
        bind_from_slot(sl, sl ? cache->req_ver[i] : 0, p, st, &req->vars[i], &req->ent[i]);
    }
    req->bound_prog = p;
    req->bound_store = st;
}

int dw_request_parse_json(dw_arena *a, const char *text, size_t len, const dw_schema *schema, bool validate,
                          dw_read_cache *cache, dw_request *out, dw_buf *err)
{
    if (dw_request_json_fast(a, text, len, schema, validate, cache, out)) return 0;
    dw_source src = { "request", text, len };
    dw_diags d;
    dw_diags_init(&d);
    const dw_json *j = dw_json_parse(a, &src, &d);
    if (!j) {
        dw_buf_printf(err, "%s", d.n && d.v[0].msg ? d.v[0].msg : "invalid JSON");
        dw_diags_free(&d);
        return -1;
    }
    dw_diags_free(&d);
    return dw_request_from_json(a, dw_json_get(j, "principal"), dw_json_get(j, "action"), dw_json_get(j, "resource"),
                                dw_json_get(j, "context"), schema, validate, out, err);
}

/* ---- the reader's pieces, for other one-pass readers (the engine's Box events) ---- */

DW_HOT bool dw_json_fast_value(dw_arena *a, dw_carve *c, dw_read_cache *cache, const char *text, size_t len, size_t *pos,
                        const dw_type *expect, dw_value *out)
{
    rd p = { a, text + len, *c, cache, NULL, NULL };
    const char *q = value(&p, text + *pos, expect, 1, out);
    *c = p.carve;
    if (q) *pos = (size_t)(q - text);
    return q != NULL;
}

DW_HOT const dw_uid *dw_json_fast_uid(dw_arena *a, dw_carve *c, dw_read_cache *cache, const char *text, size_t len, size_t *pos)
{
    rd p = { a, text + len, *c, cache, NULL, NULL };
    const char *q = ws(text + *pos, p.e);
    uint64_t th;
    const dw_uid *u = NULL;
    if (peek(q, p.e) != '{' || !(q = entity(&p, q, &th, &u))) u = NULL;
    if (cache) cache->last_uid = u ? p.last : NULL;
    *c = p.carve;
    if (u) *pos = (size_t)(q - text);
    return u;
}

DW_HOT bool dw_json_fast_string(dw_arena *a, dw_carve *c, dw_read_cache *cache, const char *text, size_t len, size_t *pos,
                         const char **s, size_t *n)
{
    rd p = { a, text + len, *c, cache, NULL, NULL };
    const char *q = ws(text + *pos, p.e);
    q = peek(q, p.e) == '"' ? cached_str(&p, q, s, n, NULL) : NULL;
    *c = p.carve;
    if (q) *pos = (size_t)(q - text);
    return q != NULL;
}

DW_HOT bool dw_json_fast_key(const char *text, size_t len, size_t *pos, const char **s, size_t *n)
{
    const char *e = text + len, *q = ws(text + *pos, e);
    q = peek(q, e) == '"' ? span(q, e, s, n) : NULL;   /* a short key: scanning beats a cache lookup */
    if (q) *pos = (size_t)(q - text);
    return q != NULL;
}
