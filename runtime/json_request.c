/* json_request.c - a request's JSON line to a dw_request in one pass (see
 * json_request.h).  The pass takes on only what it can decide exactly as
 * dw_json_parse + dw_request_from_json would, and says "not mine" (0) for
 * everything else, errors included: the general path then runs from the
 * start.  So it never needs an error message, a JSON node or an offset. */
#include "json_request.h"
#include <string.h>
#include "../lang/json_scan.h"
#include "../stdlib/bytes.h"
#include "../stdlib/uid_hash.h"
#include "../stdlib/utf8.h"
#include "json_read_cache.h"

/* Beyond these the general path decides (Box's requests nest 4 levels and
 * hold a few members per record). */
#define FAST_MAX_DEPTH 16
#define FAST_MAX_FIELDS 16
#define FAST_MAX_ELEMS 32

typedef struct rd {
    dw_arena *a;
    const char *s;
    size_t n, i;
    dw_carve carve;          /* the block strings, uids, fields and elements are carved from */
    dw_read_cache *cache;     /* uid objects and keys read before (NULL: none) */
    dw_read_cache_uid *last;  /* the slot holding the reading uid_object last gave, if any */
} rd;

/* One arena call per request, not one per value: a block sized by the input
 * left (a request's values take at most a few bytes per input byte). */
static inline void *take(rd *p, size_t n)
{
    size_t left = p->n - p->i;
    return dw_carve_take(&p->carve, p->a, n, left < 4096 ? 4 * left + 512 : 32768);
}

/* n items of the given size from the stack into the block (NULL for none). */
static bool items(rd *p, const void *from, size_t n, size_t size, void **out)
{
    *out = NULL;
    if (!n) return true;
    if (!(*out = take(p, n * size))) return false;
    memcpy(*out, from, n * size);
    return true;
}

static inline void ws(rd *p)
{
    while (p->i < p->n) {
        unsigned char c = (unsigned char)p->s[p->i];
        if (c > ' ') break;                 /* every JSON white space byte is <= ' ': compact JSON's one test */
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') p->i++;
        else break;
    }
}

static inline bool eat(rd *p, char c)
{
    if (p->i < p->n && p->s[p->i] == c) { p->i++; return true; }   /* compact JSON: no whitespace to skip */
    ws(p);
    if (p->i < p->n && p->s[p->i] == c) { p->i++; return true; }
    return false;
}

static inline bool at(rd *p, char c) { return p->i < p->n && p->s[p->i] == c; }

/* White space skipped, the byte p is at (0 at the end: a NUL byte is no
 * JSON punctuation either), not consumed: one test picks between ',' and a
 * closing bracket after a member. */
static inline char next(rd *p)
{
    ws(p);
    return p->i < p->n ? p->s[p->i] : 0;
}

/* p at a member whose key is exactly the literal (quoted, no escape: an
 * escaped spelling of the same key is left to the general path): skip it and
 * its ':'. */
#define KEY(p, lit) key_is((p), "\"" lit "\"", sizeof lit + 1)
static inline bool key_is(rd *p, const char *quoted, size_t ql)
{
    if (p->n - p->i < ql || !dw_mem_eq(p->s + p->i, quoted, ql)) return false;   /* no memcmp call */
    size_t back = p->i;
    p->i += ql;
    if (eat(p, ':')) return true;
    p->i = back;
    return false;
}

/* p at '"': the bytes of a string with no escape and no control byte (valid
 * UTF-8, as the reader checks it), in place.  False for any other string. */
static inline __attribute__((always_inline)) bool span(rd *p, const char **s, size_t *len)
{
    size_t b = p->i + 1, i = b;
    for (;;) {
        i = dw_json_scan_plain(p->s, i, p->n);
        if (i >= p->n) return false;
        unsigned char c = (unsigned char)p->s[i];
        if (c == '"') break;
        if (c < 0x80) return false;             /* a backslash or a control byte */
        size_t l = dw_utf8_len((const unsigned char *)p->s + i, p->n - i);
        if (!l) return false;
        i += l;
    }
    *s = p->s + b;
    *len = i - b;
    p->i = i + 1;
    return true;
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
    if (len < 32 && s + words <= p->s + p->n)
        switch (words) {                        /* no loop: a short string is one to four moves */
        case 32: memcpy(o + 24, s + 24, 8); /* fall through */
        case 24: memcpy(o + 16, s + 16, 8); /* fall through */
        case 16: memcpy(o + 8, s + 8, 8);   /* fall through */
        default: memcpy(o, s, 8);
        }
    else memcpy(o, s, len);
    o[len] = 0;
}

/* s[0..len) (in the line) as a NUL-terminated copy, as the reader's strings
 * are (the carve's pieces are rounded up to 8 bytes: room for put's words). */
static inline __attribute__((always_inline)) bool copy(rd *p, const char *s, size_t len, const char **out)
{
    char *o = take(p, len + 1);
    if (!o) return false;
    put(p, o, s, len);
    *out = o;
    return true;
}

/* The same as a NUL-terminated copy. */
static bool str(rd *p, const char **out, size_t *len)
{
    const char *s;
    return span(p, &s, len) && copy(p, s, *len, out);
}

/* The uid of type t and id (spans of the line) with copies of both, in one
 * piece of the carve; hash: its dw_uid_hash. */
static const dw_uid *make_uid(rd *p, const char *t, size_t tl, const char *id, size_t il, uint64_t hash)
{
    size_t tw = (tl + 8) & ~(size_t)7, iw = (il + 8) & ~(size_t)7;
    char *b = take(p, sizeof(dw_uid) + tw + iw);
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
static bool uid_spans(rd *p, const char **t, size_t *tl, const char **id, size_t *il)
{
    size_t start = p->i;
    *t = *id = NULL;
    /* the compact form {"type":"T","id":"I"}: the bytes between the strings
     * are two 8-byte words */
    if (p->n - start >= 8 && word_is(p->s + start, "\"type\":\"")) {
        p->i = start + 7;                          /* T's opening quote */
        if (span(p, t, tl) && p->n - p->i >= 8 && word_is(p->s + p->i - 1, "\",\"id\":\"")) {
            p->i += 6;                             /* I's opening quote */
            if (span(p, id, il) && at(p, '}')) {
                p->i++;
                return true;
            }
        }
        p->i = start;
        *t = *id = NULL;
    }
    for (int m = 0; m < 2; m++) {
        if (m && !eat(p, ',')) return false;
        ws(p);
        char k = p->i + 1 < p->n ? p->s[p->i + 1] : 0;
        if (!*t && k == 't' && KEY(p, "type")) { ws(p); if (!at(p, '"') || !span(p, t, tl)) return false; }
        else if (!*id && k == 'i' && KEY(p, "id")) { ws(p); if (!at(p, '"') || !span(p, id, il)) return false; }
        else return false;
    }
    return eat(p, '}');
}

/* p at an entity object's '{' (the members' object, inside any
 * "__entity"): its uid, *th its type's dw_type_hash.  Through the cache when
 * there is one: an object whose bytes (up to its first '}', which ends it
 * unless a string holds one) are a stored one's takes that reading. */
static const dw_uid *uid_object(rd *p, uint64_t *th)
{
    size_t o = p->i;
    const char *t, *id, *raw = p->s + o;
    size_t tl = 0, il = 0;
    dw_read_cache *c = p->cache;
    dw_read_cache_uid *sl = NULL;
    uint64_t key = 0;
    size_t rl = 0;
    p->last = NULL;
    if (c) {
        rl = dw_read_cache_uid_len(raw, p->n - o < DW_READ_CACHE_UID_RAW ? p->n - o : DW_READ_CACHE_UID_RAW);
        if (rl >= DW_READ_CACHE_UID_MIN) {
            key = dw_read_cache_uid_key(raw, rl);
            dw_read_cache_uid *hit = dw_read_cache_uid_find(c, key, raw, rl, &sl);
            if (hit) {
                c->hits++;
                p->i = o + rl;
                *th = hit->type_hash;
                p->last = hit;
                hit->used = c->line;
                if (c->lend) {
                    hit->lent = c->line;
                    return &hit->uid;
                }
                return make_uid(p, raw + hit->toff, hit->uid.tlen, raw + hit->ioff, hit->uid.idlen, hit->uid.hash);
            }
        }
    }
    p->i = o + 1;
    if (!uid_spans(p, &t, &tl, &id, &il)) return NULL;
    *th = dw_type_hash(t, tl);
    uint64_t h = dw_uid_hash_typed(*th, id, il);
    /* store it when it was read to its first '}' and a slot of its pair is not lent to this line */
    if (sl && p->i == o + rl) {
        c->misses++;
        p->last = sl;
        sl->used = c->line;
        sl->version = ++c->stores;
        sl->ad_schema = sl->chk_schema = NULL;
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
        if (c->lend) {
            sl->lent = c->line;
            return &sl->uid;
        }
    }
    return make_uid(p, t, tl, id, il, h);
}

/* p at '{': {"type": T, "id": I} or {"__entity": {...}} (dw_uid_from_json). */
static const dw_uid *entity(rd *p, uint64_t *th)
{
    size_t open = p->i;
    p->i++;
    ws(p);
    if (KEY(p, "__entity")) {
        ws(p);
        if (!at(p, '{')) return NULL;
        const dw_uid *u = uid_object(p, th);
        return u && eat(p, '}') ? u : NULL;
    }
    p->i = open;
    return uid_object(p, th);
}

/* p at a record member's '"': its key (NUL-terminated: a copy in the carve,
 * or the cache's own when it lends), length and dw_key_hash; p past the
 * closing quote.  Through the cache when there is one (json_read_cache.h). */
static bool member_key(rd *p, const char **k, size_t *kl, uint32_t *kh)
{
    dw_read_cache *c = p->cache;
    dw_read_cache_key *sl = NULL;
    uint64_t w = 0;
    size_t ql = 0, b = p->i + 1;
    if (c && p->n - b >= 8) {
        w = dw_read_cache_key_word(p->s + b, &ql);
        sl = dw_read_cache_key_slot(c, w, ql);
        size_t l = sl->len;
        if (l && sl->word == w && (ql < 8 ? l == ql : l >= 8 && p->n - b > l && p->s[b + l] == '"' && dw_mem_eq(sl->s, p->s + b, l))) {
            c->key_hits++;
            p->i = b + l + 1;
            *kl = l;
            *kh = sl->khash;
            if (c->lend) {
                sl->lent = c->line;
                *k = sl->s;
                return true;
            }
            return copy(p, p->s + b, l, k);
        }
    }
    const char *s;
    if (!span(p, &s, kl)) return false;
    *kh = dw_key_hash(s, *kl);
    if (sl && *kl && *kl <= DW_READ_CACHE_KEY_MAX && sl->lent != c->line) {
        c->key_misses++;
        sl->word = w;
        sl->khash = *kh;
        sl->len = (uint8_t)*kl;
        memcpy(sl->s, s, *kl);
        sl->s[*kl] = 0;
        if (c->lend) {
            sl->lent = c->line;
            *k = sl->s;
            return true;
        }
    }
    return copy(p, s, *kl, k);
}

static bool value(rd *p, const dw_type *expect, int depth, dw_value *out);

/* After a record's '{' (record_from_json): members checked against expect's
 * declared attributes when given, then sorted, then its required ones. */
static bool record(rd *p, const dw_type *expect, int depth, dw_value *out)
{
    dw_field f[FAST_MAX_FIELDS];
    size_t n = 0, required = 0;   /* members naming a required attribute */
    /* when every member names a declared attribute, the declarations' order
     * is the record's (schema.h: attributes sorted by name, as dw_make_record
     * sorts keys): the fields are sorted by declaration, no key compared, and
     * two members of one declaration are a repeated key */
    const dw_attr_decl *decl[FAST_MAX_FIELDS];
    bool declared = expect != NULL;
    char c = next(p);
    if (c == '}') p->i++;
    else
        for (;;) {
            if (n == FAST_MAX_FIELDS || c != '"') return false;
            const char *k;
            size_t kl;
            uint32_t kh;
            if (!member_key(p, &k, &kl, &kh) || !eat(p, ':')) return false;
            const dw_type *t = NULL;
            const dw_attr_decl *d = NULL;
            if (expect) {
                for (size_t i = 0; i < expect->nattrs; i++)
                    if (expect->attrs[i].name.len == kl && dw_mem_eq(expect->attrs[i].name.s, k, kl)) { d = &expect->attrs[i]; break; }
                if (!d && !expect->additional_attrs) return false;
                declared &= d != NULL;
                decl[n] = d;
                t = d ? d->type : NULL;
                required += d && d->required;
            }
            f[n].key = k;
            f[n].klen = (uint32_t)kl;
            f[n].khash = kh;
            if (!value(p, t, depth + 1, &f[n].v)) return false;
            n++;
            c = next(p);
            p->i++;                  /* past c, when it is one of these */
            if (c == ',') { c = next(p); continue; }
            if (c == '}') break;
            return false;
        }
    if (declared)
        for (size_t i = 1; i < n; i++) {
            dw_field x = f[i];
            const dw_attr_decl *xd = decl[i];
            size_t k = i;
            for (; k > 0 && decl[k - 1] > xd; k--) f[k] = f[k - 1], decl[k] = decl[k - 1];
            if (k > 0 && decl[k - 1] == xd) return false;   /* a repeated key */
            f[k] = x, decl[k] = xd;
        }
    dw_field *af;
    if (!items(p, f, n, sizeof *f, (void **)&af)) return false;
    if (declared) {
        *out = (dw_value){ .kind = DW_V_RECORD, .n = (uint32_t)n };
        out->u.fields = af;
    } else if (!dw_make_record(af, n, out)) return false;
    /* every required attribute present: the members are distinct (dw_make_record), so count them */
    if (expect)
        for (size_t i = 0; i < expect->nattrs; i++) required -= expect->attrs[i].required;
    return required == 0;
}

/* An i64 written plainly: up to 18 digits (longer ones, fractions and
 * exponents go to the reader's exact path). */
static bool number(rd *p, int64_t *out)
{
    size_t i = p->i;
    bool neg = p->s[i] == '-';
    if (neg) i++;
    size_t ds = i;
    while (i < p->n && p->s[i] >= '0' && p->s[i] <= '9') i++;
    size_t nd = i - ds;
    if (nd == 0 || nd > 18 || (nd > 1 && p->s[ds] == '0')) return false;
    if (i < p->n && (p->s[i] == '.' || p->s[i] == 'e' || p->s[i] == 'E')) return false;
    int64_t v = 0;
    for (size_t k = ds; k < i; k++) v = v * 10 + (p->s[k] - '0');
    *out = neg ? -v : v;
    p->i = i;
    return true;
}

/* dw_value_from_json for the kinds the pass takes on: a String, Long or Bool
 * where the schema expects one (or says nothing), a record, a set, an entity
 * reference (checked against the expected type). */
static bool value(rd *p, const dw_type *expect, int depth, dw_value *out)
{
    ws(p);
    if (p->i >= p->n || depth > FAST_MAX_DEPTH) return false;
    dw_type_kind want = expect ? expect->kind : (dw_type_kind)-1;
    switch (p->s[p->i]) {
    case '"': {
        if (expect && want != DW_T_STRING) return false;   /* entity, extension: the general path */
        const char *s;
        size_t l;
        if (!str(p, &s, &l)) return false;
        *out = (dw_value){ .kind = DW_V_STRING, .n = (uint32_t)l };
        out->u.s = s;
        return true;
    }
    case '{': {
        size_t open = p->i;
        p->i++;
        ws(p);
        /* `{"__extn": ...}` alone is an extension value, `{"__entity": ...}`
         * alone an entity reference (dw_value_from_json) */
        if (KEY(p, "__extn")) return false;
        bool wrapped = KEY(p, "__entity");
        if (wrapped || want == DW_T_ENTITY) {
            const dw_uid *u;
            uint64_t th;
            if (wrapped) {               /* entity()'s wrapped form, from past its key */
                ws(p);
                u = at(p, '{') ? uid_object(p, &th) : NULL;
                if (u && !eat(p, '}')) u = NULL;
            } else {
                p->i = open;
                u = entity(p, &th);
            }
            if (!u) return false;
            if (expect && (want != DW_T_ENTITY || u->tlen != expect->name.len || !dw_mem_eq(u->type, expect->name.s, u->tlen)))
                return false;
            *out = (dw_value){ .kind = DW_V_ENTITY };
            out->u.uid = u;
            return true;
        }
        if (expect && want != DW_T_RECORD) return false;
        p->i = open + 1;
        return record(p, expect, depth, out);
    }
    case '[': {
        if (expect && want != DW_T_SET) return false;
        const dw_type *et = expect ? expect->elem : NULL;
        dw_value v[FAST_MAX_ELEMS];
        size_t n = 0;
        p->i++;
        if (next(p) == ']') p->i++;
        else
            for (;;) {
                if (n == FAST_MAX_ELEMS || !value(p, et, depth + 1, &v[n])) return false;
                n++;
                char c = next(p);
                p->i++;
                if (c == ',') continue;
                if (c == ']') break;
                return false;
            }
        dw_value *av;
        if (!items(p, v, n, sizeof *v, (void **)&av)) return false;
        *out = dw_make_set(av, n);
        return true;
    }
    case 't': case 'f': {
        if (expect && want != DW_T_BOOL) return false;
        bool t = p->s[p->i] == 't';
        size_t l = t ? 4 : 5;
        if (p->n - p->i < l || memcmp(p->s + p->i, t ? "true" : "false", l) != 0) return false;
        p->i += l;
        *out = dw_bool(t);
        return true;
    }
    default: {
        if (expect && want != DW_T_LONG) return false;
        char c = p->s[p->i];
        if (c != '-' && (c < '0' || c > '9')) return false;  /* null, or not JSON */
        int64_t v;
        if (!number(p, &v)) return false;
        *out = dw_long(v);
        return true;
    }
    }
}

int dw_request_json_fast(dw_arena *a, const char *text, size_t len, const dw_schema *schema, bool validate,
                         dw_read_cache *cache, dw_request *out)
{
    memset(out, 0, sizeof *out);
    if (cache) dw_read_cache_next_line(cache);
    rd p = { a, text, len, 0, { NULL, NULL }, cache, NULL };
    const dw_uid *u[3] = { NULL, NULL, NULL };
    uint64_t th[3];                      /* their types' hashes */
    dw_read_cache_uid *sl[3] = { NULL, NULL, NULL };   /* their readings' cache slots */
    uint64_t ver[3] = { 0, 0, 0 };       /* and those readings */
    const dw_action_decl *ad = NULL;
    bool have_ctx = false;
    if (!eat(&p, '{') || next(&p) == '}') return 0;
    for (;;) {
        ws(&p);
        int m = -1;
        switch (p.i + 1 < p.n ? p.s[p.i + 1] : 0) {     /* the key's first letter picks the one to compare */
        case 'p': m = KEY(&p, "principal") ? 0 : -1; break;
        case 'a': m = KEY(&p, "action") ? 1 : -1; break;
        case 'r': m = KEY(&p, "resource") ? 2 : -1; break;
        case 'c': m = KEY(&p, "context") ? 3 : -1; break;
        }
        if (m < 0) return 0;              /* the general path ignores other members, after reading them */
        ws(&p);
        if (m < 3) {
            if (u[m] || !at(&p, '{') || !(u[m] = entity(&p, &th[m]))) return 0;
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
            if (have_ctx || (schema && !u[1]) || !at(&p, '{')) return 0;
            p.i++;
            if (!record(&p, ad ? ad->context : NULL, 1, &out->vars[DW_VAR_C])) return 0;
            have_ctx = true;
        }
        char c = next(&p);
        p.i++;
        if (c == ',') continue;
        if (c == '}') break;
        return 0;
    }
    ws(&p);
    if (p.i != p.n || !u[0] || !u[1] || !u[2]) return 0;
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
    if (memo && as->chk_schema == schema && as->chk_validate == validate && as->chk_p == ver[0] && as->chk_r == ver[2])
        return 1;
    if (dw_request_check_hashed(schema, ad, validate, out, th, NULL, NULL)) return 0;
    if (memo) as->chk_schema = schema, as->chk_validate = validate, as->chk_p = ver[0], as->chk_r = ver[2];
    return 1;
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

bool dw_json_fast_value(dw_arena *a, dw_carve *c, dw_read_cache *cache, const char *text, size_t len, size_t *pos,
                        const dw_type *expect, dw_value *out)
{
    rd p = { a, text, len, *pos, *c, cache, NULL };
    bool ok = value(&p, expect, 1, out);
    *c = p.carve;
    if (ok) *pos = p.i;
    return ok;
}

const dw_uid *dw_json_fast_uid(dw_arena *a, dw_carve *c, dw_read_cache *cache, const char *text, size_t len, size_t *pos)
{
    rd p = { a, text, len, *pos, *c, cache, NULL };
    ws(&p);
    uint64_t th;
    const dw_uid *u = at(&p, '{') ? entity(&p, &th) : NULL;
    *c = p.carve;
    if (u) *pos = p.i;
    return u;
}

bool dw_json_fast_string(dw_arena *a, dw_carve *c, const char *text, size_t len, size_t *pos, const char **s, size_t *n)
{
    rd p = { a, text, len, *pos, *c, NULL, NULL };
    ws(&p);
    bool ok = at(&p, '"') && str(&p, s, n);
    *c = p.carve;
    if (ok) *pos = p.i;
    return ok;
}

bool dw_json_fast_key(const char *text, size_t len, size_t *pos, const char **s, size_t *n)
{
    rd p = { NULL, text, len, *pos, { NULL, NULL }, NULL, NULL };
    ws(&p);
    bool ok = at(&p, '"') && span(&p, s, n);
    if (ok) *pos = p.i;
    return ok;
}
