/* schema_text.c - Cedar's human schema syntax (`.cedarschema`, dogwood.md
 * §11.1, Cedar 4.10's grammar): a hand-written lexer and recursive-descent
 * parser producing the raw schema that schema.c resolves.  The parser stops
 * at the first syntax error (later errors are usually consequences). */
#define DW_SCHEMA_INTERNAL
#include "schema.h"
#include <stdlib.h>
#include <string.h>
#include "../stdlib/utf8.h"

typedef enum { TK_EOF, TK_IDENT, TK_STR, TK_NUM, TK_PUNCT } tk_kind;

typedef struct tok {
    tk_kind k;
    char p;                 /* TK_PUNCT: the character; ':' is ":", 'C' is "::" */
    dw_str text;            /* IDENT/NUM: source text; STR: decoded */
    dw_loc loc;
} tok;

typedef struct tp {
    dw_schema *s;
    const dw_source *src;
    dw_diags *d;
    const char *t;
    size_t n, pos;
    uint32_t line, col;
    tok cur, nxt;
    bool have_nxt;
    bool failed;
    dw_rschema r;
    dw_str ns;              /* current namespace ("" at top level) */
    dw_rname *nss; size_t nnss, capnss;   /* named namespaces seen */
    int depth;
} tp;

static void fail(tp *p, dw_loc loc, const char *hint, const char *fmt, const char *a)
{
    if (p->failed) return;
    p->failed = true;
    if (hint) dw_error_hint(p->d, p->src, loc, hint, fmt, a);
    else dw_error(p->d, p->src, loc, fmt, a);
}

static void oom(tp *p) { fail(p, dw_loc_at(p->src, (uint32_t)p->pos, (uint32_t)p->pos), NULL, "%s", "out of memory"); }

/* ---------------------------------------------------------------- lexer */

static void adv(tp *p)
{
    unsigned char c = (unsigned char)p->t[p->pos++];
    if (c == '\n') { p->line++; p->col = 1; }
    else if (!dw_utf8_is_cont(c)) p->col++;
}

static dw_loc here(tp *p) { return (dw_loc){ p->line, p->col, (uint32_t)p->pos, (uint32_t)p->pos }; }

static int hexv(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static void put_utf8(dw_buf *b, uint32_t cp)
{
    char t[4];
    dw_buf_append(b, t, dw_utf8_put(t, cp));
}

static const char *ESC_HINT =
    "valid escapes are \\n \\r \\t \\\\ \\0 \\' \\\" \\xHH (at most \\x7f) and \\u{H...} (1 to 6 hex digits)";

/* Lex a string literal starting at the opening quote; decode escapes. */
static bool lex_string(tp *p, tok *t)
{
    dw_buf b = { 0 };
    adv(p);  /* opening quote */
    for (;;) {
        if (p->pos >= p->n) {
            dw_buf_free(&b);
            fail(p, t->loc, "add the closing `\"`", "%s", "unterminated string literal");
            return false;
        }
        char c = p->t[p->pos];
        if (c == '"') { adv(p); break; }
        if (c != '\\') { dw_buf_putc(&b, c); adv(p); continue; }
        dw_loc eloc = here(p);
        adv(p);
        if (p->pos >= p->n) continue;  /* reported as unterminated */
        char e = p->t[p->pos];
        bool ok = true;
        switch (e) {
        case 'n': dw_buf_putc(&b, '\n'); adv(p); break;
        case 'r': dw_buf_putc(&b, '\r'); adv(p); break;
        case 't': dw_buf_putc(&b, '\t'); adv(p); break;
        case '\\': dw_buf_putc(&b, '\\'); adv(p); break;
        case '0': dw_buf_putc(&b, '\0'); adv(p); break;
        case '\'': dw_buf_putc(&b, '\''); adv(p); break;
        case '"': dw_buf_putc(&b, '"'); adv(p); break;
        case 'x': {
            adv(p);
            int h1 = p->pos < p->n ? hexv(p->t[p->pos]) : -1;
            int h2 = p->pos + 1 < p->n ? hexv(p->t[p->pos + 1]) : -1;
            if (h1 < 0 || h2 < 0 || h1 > 7) { ok = false; break; }
            adv(p); adv(p);
            dw_buf_putc(&b, (char)(h1 * 16 + h2));
            break;
        }
        case 'u': {
            adv(p);
            if (p->pos >= p->n || p->t[p->pos] != '{') { ok = false; break; }
            adv(p);
            uint32_t cp = 0;
            int digits = 0;
            while (p->pos < p->n && p->t[p->pos] != '}') {
                char h = p->t[p->pos];
                if (h == '_' && digits > 0) { adv(p); continue; }
                int v = hexv(h);
                if (v < 0 || digits >= 6) { ok = false; break; }
                cp = cp * 16 + (uint32_t)v;
                digits++;
                adv(p);
            }
            if (!ok || p->pos >= p->n || digits == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) { ok = false; break; }
            adv(p);  /* '}' */
            put_utf8(&b, cp);
            break;
        }
        default: ok = false;
        }
        if (!ok) {
            dw_buf_free(&b);
            /* caret over the escape as far as it reached */
            uint32_t end = (uint32_t)(p->pos > eloc.off + 1 ? p->pos : eloc.off + 2);
            if (end > p->n) end = (uint32_t)p->n;
            eloc.end = end;
            fail(p, eloc, ESC_HINT, "%s", "invalid escape sequence in string literal");
            return false;
        }
    }
    t->k = TK_STR;
    char *m = dw_arena_memdup(&p->s->arena, b.p ? b.p : "", b.len);
    size_t len = b.len;
    dw_buf_free(&b);
    if (!m) { oom(p); return false; }
    t->text = (dw_str){ m, len };
    return true;
}

static bool lex(tp *p, tok *t)
{
    memset(t, 0, sizeof *t);
    for (;;) {
        while (p->pos < p->n) {
            char c = p->t[p->pos];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') adv(p);
            else break;
        }
        if (p->pos + 1 < p->n && p->t[p->pos] == '/' && p->t[p->pos + 1] == '/') {
            while (p->pos < p->n && p->t[p->pos] != '\n') adv(p);
            continue;
        }
        break;
    }
    t->loc = here(p);
    if (p->pos >= p->n) { t->k = TK_EOF; return true; }
    char c = p->t[p->pos];
    size_t start = p->pos;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
        while (p->pos < p->n) {
            char d = p->t[p->pos];
            if ((d >= 'a' && d <= 'z') || (d >= 'A' && d <= 'Z') || d == '_' || (d >= '0' && d <= '9')) adv(p);
            else break;
        }
        t->k = TK_IDENT;
    } else if (c >= '0' && c <= '9') {
        while (p->pos < p->n && p->t[p->pos] >= '0' && p->t[p->pos] <= '9') adv(p);
        t->k = TK_NUM;
    } else if (c == '"') {
        if (!lex_string(p, t)) return false;
        t->loc.end = (uint32_t)p->pos;
        return true;
    } else if (strchr(",;:{}[]<>=?@()", c) && c) {
        adv(p);
        t->k = TK_PUNCT;
        t->p = c;
        if (c == ':' && p->pos < p->n && p->t[p->pos] == ':') { adv(p); t->p = 'C'; }
    } else {
        /* one whole UTF-8 character for the caret */
        adv(p);
        while (p->pos < p->n && dw_utf8_is_cont((unsigned char)p->t[p->pos])) adv(p);
        t->loc.end = (uint32_t)p->pos;
        const char *h = NULL;
        if (c == '/' && p->pos < p->n && p->t[p->pos] == '*') h = "only `//` line comments are supported";
        else if (c == '\'') h = "strings are written with double quotes";
        fail(p, t->loc, h, "unexpected character `%s`", (unsigned char)c >= 0x20 && (unsigned char)c < 0x7f ?
             (char[]){ c, 0 } : "?");
        return false;
    }
    t->loc.end = (uint32_t)p->pos;
    t->text = (dw_str){ p->t + start, p->pos - start };
    return true;
}

static bool next(tp *p)
{
    if (p->have_nxt) { p->cur = p->nxt; p->have_nxt = false; return true; }
    return lex(p, &p->cur);
}

static const tok *peek(tp *p)
{
    if (!p->have_nxt) {
        if (!lex(p, &p->nxt)) return NULL;
        p->have_nxt = true;
    }
    return &p->nxt;
}

/* ---------------------------------------------------------------- helpers */

static bool is_punct(const tok *t, char c) { return t->k == TK_PUNCT && t->p == c; }

static bool is_kw(const tok *t, const char *w)
{
    size_t n = strlen(w);
    return t->k == TK_IDENT && t->text.len == n && memcmp(t->text.s, w, n) == 0;
}

static void describe(const tok *t, char *buf, size_t cap)
{
    switch (t->k) {
    case TK_EOF: snprintf(buf, cap, "end of file"); break;
    case TK_IDENT: snprintf(buf, cap, "`%.*s`", (int)(t->text.len > 40 ? 40 : t->text.len), t->text.s); break;
    case TK_NUM: snprintf(buf, cap, "number `%.*s`", (int)(t->text.len > 40 ? 40 : t->text.len), t->text.s); break;
    case TK_STR: snprintf(buf, cap, "a string literal"); break;
    case TK_PUNCT: if (t->p == 'C') snprintf(buf, cap, "`::`"); else snprintf(buf, cap, "`%c`", t->p); break;
    }
}

static bool expected(tp *p, const char *what, const char *hint)
{
    char found[96], msg[256];
    describe(&p->cur, found, sizeof found);
    snprintf(msg, sizeof msg, "expected %s, found %s", what, found);
    fail(p, p->cur.loc, hint, "%s", msg);
    return false;
}

static bool expect_punct(tp *p, char c, const char *what, const char *hint)
{
    if (!is_punct(&p->cur, c)) return expected(p, what, hint);
    return next(p);
}

/* An identifier that is not one of Cedar's reserved words. */
static bool ident(tp *p, const char *what, dw_str *out, dw_loc *loc)
{
    if (p->cur.k != TK_IDENT) return expected(p, what, NULL);
    if (dw_schema_is_reserved(p->cur.text.s, p->cur.text.len)) {
        char msg[128], hint[128];
        snprintf(msg, sizeof msg, "this identifier is reserved and cannot be used: %.*s", (int)p->cur.text.len, p->cur.text.s);
        snprintf(hint, sizeof hint, "choose another name, or quote it (`\"%.*s\"`) where a string is allowed",
                 (int)p->cur.text.len, p->cur.text.s);
        fail(p, p->cur.loc, hint, "%s", msg);
        return false;
    }
    *out = p->cur.text;
    if (loc) *loc = p->cur.loc;
    return next(p);
}

/* path = IDENT { "::" IDENT }; joined with "::" (whitespace dropped). */
static bool path(tp *p, const char *what, dw_str *out, dw_loc *loc)
{
    dw_loc start = p->cur.loc;
    dw_str first;
    if (!ident(p, what, &first, NULL)) return false;
    if (!is_punct(&p->cur, 'C')) { *out = first; if (loc) *loc = start, loc->end = start.off + (uint32_t)first.len; return true; }
    dw_buf b = { 0 };
    dw_buf_append(&b, first.s, first.len);
    uint32_t end = start.end;
    while (is_punct(&p->cur, 'C')) {
        const tok *nx = peek(p);
        if (!nx) { dw_buf_free(&b); return false; }
        if (nx->k != TK_IDENT) break;  /* e.g. `Ns::"id"`: the caller handles it */
        if (!next(p)) { dw_buf_free(&b); return false; }
        dw_str part;
        end = p->cur.loc.end;
        if (!ident(p, "an identifier after `::`", &part, NULL)) { dw_buf_free(&b); return false; }
        dw_buf_append(&b, "::", 2);
        dw_buf_append(&b, part.s, part.len);
    }
    char *m = dw_arena_memdup(&p->s->arena, b.p, b.len);
    *out = (dw_str){ m, b.len };
    dw_buf_free(&b);
    if (!m) { oom(p); return false; }
    if (loc) { *loc = start; loc->end = end; }
    return true;
}

/* annotation = "@" ANYIDENT [ "(" STRING ")" ]; parsed and dropped, but
 * duplicates on one item are an error as in Cedar. */
static bool annotations(tp *p)
{
    dw_str keys[64];
    size_t nkeys = 0;
    while (is_punct(&p->cur, '@')) {
        if (!next(p)) return false;
        if (p->cur.k != TK_IDENT) return expected(p, "an annotation name after `@`", "annotations look like `@doc(\"text\")`");
        dw_str key = p->cur.text;
        dw_loc kloc = p->cur.loc;
        for (size_t i = 0; i < nkeys; i++)
            if (keys[i].len == key.len && memcmp(keys[i].s, key.s, key.len) == 0) {
                char msg[128];
                snprintf(msg, sizeof msg, "duplicate annotation `@%.*s`", (int)(key.len > 60 ? 60 : key.len), key.s);
                fail(p, kloc, "each annotation may appear once per declaration", "%s", msg);
                return false;
            }
        if (nkeys < sizeof keys / sizeof *keys) keys[nkeys++] = key;
        if (!next(p)) return false;
        if (is_punct(&p->cur, '(')) {
            if (!next(p)) return false;
            if (p->cur.k != TK_STR) return expected(p, "a string literal", "annotation values are strings: `@doc(\"text\")`");
            if (!next(p)) return false;
            if (!expect_punct(p, ')', "`)`", NULL)) return false;
        }
    }
    return true;
}

static dw_rtype *new_rtype(tp *p, dw_rtype_kind k, dw_loc loc)
{
    dw_rtype *t = dw_arena_alloc(&p->s->arena, sizeof *t);
    if (!t) { oom(p); return NULL; }
    t->kind = k;
    t->loc = loc;
    return t;
}

/* ---------------------------------------------------------------- types */

static dw_rtype *type(tp *p);

/* record_type = "{" [ attr { "," attr } [ "," ] ] "}" ; current token is "{" */
static dw_rtype *record(tp *p)
{
    dw_rtype *t = new_rtype(p, DW_RT_RECORD, p->cur.loc);
    if (!t || !next(p)) return NULL;
    size_t cap = 0;
    if (++p->depth > DW_SCHEMA_MAX_DEPTH) {
        fail(p, t->loc, NULL, "%s", "types nested too deeply (limit 128 levels)");
        return NULL;
    }
    while (!is_punct(&p->cur, '}')) {
        if (!annotations(p)) return NULL;
        dw_rattr a = { 0 };
        a.loc = p->cur.loc;
        if (p->cur.k == TK_STR) {
            a.name = p->cur.text;
            if (!next(p)) return NULL;
        } else if (p->cur.k == TK_IDENT) {
            if (!ident(p, "an attribute name", &a.name, NULL)) return NULL;
        } else {
            expected(p, "an attribute name or `}`", t->nattrs ? NULL : "a record type looks like `{ name: String, age?: Long }`");
            return NULL;
        }
        a.required = true;
        if (is_punct(&p->cur, '?')) { a.required = false; if (!next(p)) return NULL; }
        if (!expect_punct(p, ':', "`:` after the attribute name", "attributes are declared as `name: Type` or `name?: Type`")) return NULL;
        if (!(a.type = type(p))) return NULL;
        a.loc.end = a.type->loc.end;
        dw_rattr *v = dw_schema_grow(p->s, t->attrs, t->nattrs, &cap, sizeof *v);
        if (!v) { oom(p); return NULL; }
        t->attrs = v;
        t->attrs[t->nattrs++] = a;
        if (is_punct(&p->cur, ',')) { if (!next(p)) return NULL; continue; }
        if (!is_punct(&p->cur, '}')) {
            expected(p, "`,` or `}`", "separate attributes with `,`");
            return NULL;
        }
    }
    t->loc.end = p->cur.loc.end;
    p->depth--;
    if (!next(p)) return NULL;
    return t;
}

static dw_rtype *type(tp *p)
{
    if (is_punct(&p->cur, '{')) return record(p);
    if (is_kw(&p->cur, "Set")) {
        const tok *nx = peek(p);
        if (!nx) return NULL;
        if (is_punct(nx, '<')) {
            dw_rtype *t = new_rtype(p, DW_RT_SET, p->cur.loc);
            if (!t || !next(p) || !next(p)) return NULL;
            if (++p->depth > DW_SCHEMA_MAX_DEPTH) {
                fail(p, t->loc, NULL, "%s", "types nested too deeply (limit 128 levels)");
                return NULL;
            }
            if (!(t->elem = type(p))) return NULL;
            p->depth--;
            t->loc.end = p->cur.loc.end;
            if (!expect_punct(p, '>', "`>` to close `Set<`", NULL)) return NULL;
            return t;
        }
    }
    if (p->cur.k != TK_IDENT) {
        expected(p, "a type", "a type is `Long`, `String`, `Bool`, `Set<T>`, a record `{ ... }`, or a type name");
        return NULL;
    }
    dw_rtype *t = new_rtype(p, DW_RT_NAME, p->cur.loc);
    if (!t) return NULL;
    t->ref = DW_REF_ANY;
    if (!path(p, "a type", &t->name, &t->loc)) return NULL;
    if (is_punct(&p->cur, 'C')) {
        expected(p, "a type", NULL);
        return NULL;
    }
    return t;
}

/* type_list = path | "[" [ path { "," path } [ "," ] ] "]" */
static bool type_list(tp *p, dw_rname **v, size_t *n, const char *what)
{
    size_t cap = 0;
    bool bracket = is_punct(&p->cur, '[');
    if (bracket && !next(p)) return false;
    while (!bracket || !is_punct(&p->cur, ']')) {
        dw_rname rn;
        if (!path(p, what, &rn.name, &rn.loc)) return false;
        dw_rname *nv = dw_schema_grow(p->s, *v, *n, &cap, sizeof *nv);
        if (!nv) { oom(p); return false; }
        *v = nv;
        (*v)[(*n)++] = rn;
        if (!bracket) return true;
        if (is_punct(&p->cur, ',')) { if (!next(p)) return false; continue; }
        if (!is_punct(&p->cur, ']')) return expected(p, "`,` or `]`", NULL);
    }
    return next(p);
}

/* ---------------------------------------------------------------- declarations */

static bool end_decl(tp *p, const char *what)
{
    if (is_punct(&p->cur, ';')) return next(p);
    char hint[96];
    snprintf(hint, sizeof hint, "every %s declaration ends with `;`", what);
    return expected(p, "`;`", hint);
}

/* entity_decl (after "entity") */
static bool entity_decl(tp *p)
{
    dw_rdecl proto = { 0 };
    proto.kind = DW_RD_ENTITY;
    proto.ns = p->ns;
    dw_rname *nv = NULL;
    size_t nn = 0, cap = 0;
    for (;;) {
        dw_rname rn;
        if (!ident(p, "an entity type name", &rn.name, &rn.loc)) return false;
        if (is_punct(&p->cur, 'C')) {
            fail(p, p->cur.loc, "declare it inside `namespace ... { }` instead", "%s",
                 "an entity type name cannot be qualified in its declaration");
            return false;
        }
        dw_rname *g = dw_schema_grow(p->s, nv, nn, &cap, sizeof *g);
        if (!g) { oom(p); return false; }
        nv = g;
        nv[nn++] = rn;
        if (!is_punct(&p->cur, ',')) break;
        if (!next(p)) return false;
    }
    if (is_kw(&p->cur, "enum")) {
        proto.is_enum = true;
        if (!next(p)) return false;
        if (!expect_punct(p, '[', "`[` after `enum`", "an enum entity type is declared as `entity E enum [\"a\", \"b\"];`")) return false;
        size_t ecap = 0;
        for (;;) {
            if (p->cur.k != TK_STR)
                return expected(p, "a string literal", proto.nenum ? "the list of enum values has no trailing comma"
                                                                   : "an enum entity type needs at least one value");
            dw_str *ev = dw_schema_grow(p->s, proto.enum_ids, proto.nenum, &ecap, sizeof *ev);
            if (!ev) { oom(p); return false; }
            proto.enum_ids = ev;
            proto.enum_ids[proto.nenum++] = p->cur.text;
            if (!next(p)) return false;
            if (!is_punct(&p->cur, ',')) break;
            if (!next(p)) return false;
        }
        if (!expect_punct(p, ']', "`,` or `]`", NULL)) return false;
        if (is_kw(&p->cur, "in") || is_punct(&p->cur, '{') || is_punct(&p->cur, '=') || is_kw(&p->cur, "tags")) {
            fail(p, p->cur.loc, "an enum entity type has no parents, attributes or tags", "%s",
                 "unexpected token after an enum entity type's values");
            return false;
        }
    } else {
        if (is_kw(&p->cur, "in")) {
            if (!next(p)) return false;
            if (!type_list(p, &proto.parents, &proto.nparents, "a parent entity type")) return false;
        }
        bool eq = false;
        if (is_punct(&p->cur, '=')) { eq = true; if (!next(p)) return false; }
        if (is_punct(&p->cur, '{')) {
            if (!(proto.shape = record(p))) return false;
        } else if (eq) {
            return expected(p, "`{` after `=`", "an entity's attributes are written as a record: `entity E = { a: Long };`");
        }
        if (is_kw(&p->cur, "tags")) {
            if (!next(p)) return false;
            if (!(proto.tags = type(p))) return false;
        }
        if (is_kw(&p->cur, "enum")) {
            fail(p, p->cur.loc, "an enum entity type has no parents, attributes or tags", "%s",
                 "`enum` cannot be combined with `in`, attributes or `tags`");
            return false;
        }
    }
    if (!end_decl(p, "entity")) return false;
    for (size_t i = 0; i < nn; i++) {
        dw_rdecl *d = dw_rschema_add(p->s, &p->r);
        if (!d) { oom(p); return false; }
        *d = proto;
        d->name = nv[i].name;
        d->loc = nv[i].loc;
    }
    return true;
}

/* act_name = IDENT | STRING */
static bool act_name(tp *p, dw_str *out, dw_loc *loc)
{
    if (p->cur.k == TK_STR) { *out = p->cur.text; *loc = p->cur.loc; return next(p); }
    if (p->cur.k == TK_IDENT) return ident(p, "an action name", out, loc);
    return expected(p, "an action name (identifier or string)", NULL);
}

/* act_ref = [ path "::" ] act_name */
static bool act_ref(tp *p, dw_raref *r)
{
    memset(r, 0, sizeof *r);
    r->loc = p->cur.loc;
    if (p->cur.k == TK_STR) { r->id = p->cur.text; return next(p); }
    dw_str first;
    dw_loc ploc;
    if (p->cur.k != TK_IDENT) return expected(p, "an action reference such as `Action::\"read\"`", NULL);
    if (!path(p, "an action reference", &first, &ploc)) return false;
    if (is_punct(&p->cur, 'C')) {
        if (!next(p)) return false;
        if (p->cur.k != TK_STR) return expected(p, "a string literal after `::`", "an action reference is `Action::\"id\"` or `Ns::Action::\"id\"`");
        r->has_type = true;
        r->type = first;
        r->id = p->cur.text;
        r->loc.end = p->cur.loc.end;
        return next(p);
    }
    if (memchr(first.s, ':', first.len)) {
        fail(p, ploc, "write the action id as a string: `Ns::Action::\"id\"`", "%s", "expected `::` and a string literal after the action type");
        return false;
    }
    r->id = first;
    r->loc.end = ploc.end;
    return true;
}

/* action_decl (after "action") */
static bool action_decl(tp *p)
{
    dw_rdecl proto = { 0 };
    proto.kind = DW_RD_ACTION;
    proto.ns = p->ns;
    dw_rname *nv = NULL;
    size_t nn = 0, cap = 0;
    for (;;) {
        dw_rname rn;
        if (!act_name(p, &rn.name, &rn.loc)) return false;
        dw_rname *g = dw_schema_grow(p->s, nv, nn, &cap, sizeof *g);
        if (!g) { oom(p); return false; }
        nv = g;
        nv[nn++] = rn;
        if (!is_punct(&p->cur, ',')) break;
        if (!next(p)) return false;
    }
    if (is_kw(&p->cur, "in")) {
        if (!next(p)) return false;
        size_t pcap = 0;
        bool bracket = is_punct(&p->cur, '[');
        if (bracket && !next(p)) return false;
        if (bracket && is_punct(&p->cur, ']'))
            return expected(p, "an action reference", "drop the `in []` or name at least one action group");
        while (!bracket || !is_punct(&p->cur, ']')) {
            dw_raref ref;
            if (!act_ref(p, &ref)) return false;
            dw_raref *g = dw_schema_grow(p->s, proto.aparents, proto.naparents, &pcap, sizeof *g);
            if (!g) { oom(p); return false; }
            proto.aparents = g;
            proto.aparents[proto.naparents++] = ref;
            if (!bracket) break;
            if (is_punct(&p->cur, ',')) { if (!next(p)) return false; continue; }
            if (!is_punct(&p->cur, ']')) return expected(p, "`,` or `]`", NULL);
        }
        if (bracket && !next(p)) return false;
    }
    if (is_kw(&p->cur, "appliesTo")) {
        dw_loc aloc = p->cur.loc;
        proto.has_applies_to = true;
        if (!next(p)) return false;
        if (!expect_punct(p, '{', "`{` after `appliesTo`", NULL)) return false;
        bool seen_p = false, seen_r = false, seen_c = false;
        while (!is_punct(&p->cur, '}')) {
            dw_loc kloc = p->cur.loc;
            bool *seen;
            int which;
            if (is_kw(&p->cur, "principal")) { seen = &seen_p; which = 0; }
            else if (is_kw(&p->cur, "resource")) { seen = &seen_r; which = 1; }
            else if (is_kw(&p->cur, "context")) { seen = &seen_c; which = 2; }
            else return expected(p, "`principal`, `resource` or `context`", NULL);
            if (*seen) {
                fail(p, kloc, "each of `principal`, `resource` and `context` may appear once", "duplicate `%s` in appliesTo",
                     which == 0 ? "principal" : which == 1 ? "resource" : "context");
                return false;
            }
            *seen = true;
            if (!next(p)) return false;
            if (!expect_punct(p, ':', "`:`", NULL)) return false;
            if (which == 0) { if (!type_list(p, &proto.principals, &proto.nprincipals, "an entity type")) return false; }
            else if (which == 1) { if (!type_list(p, &proto.resources, &proto.nresources, "an entity type")) return false; }
            else {
                if (is_punct(&p->cur, '{')) { if (!(proto.context = record(p))) return false; }
                else if (p->cur.k == TK_IDENT) {
                    dw_rtype *t = new_rtype(p, DW_RT_NAME, p->cur.loc);
                    if (!t) return false;
                    t->ref = DW_REF_ANY;
                    if (!path(p, "a record type or a common type name", &t->name, &t->loc)) return false;
                    proto.context = t;
                } else return expected(p, "a record type or a common type name", NULL);
            }
            if (is_punct(&p->cur, ',')) { if (!next(p)) return false; continue; }
            if (!is_punct(&p->cur, '}')) return expected(p, "`,` or `}`", NULL);
        }
        if (!seen_p && !seen_r && !seen_c)
            return expected(p, "`principal`, `resource` or `context`", "omit `appliesTo` entirely for an action that applies to nothing");
        if (!seen_p || !seen_r) {
            char msg[160];
            snprintf(msg, sizeof msg, "`appliesTo` of action `%.*s` does not declare `%s`",
                     (int)(nv[0].name.len > 60 ? 60 : nv[0].name.len), nv[0].name.s, !seen_p ? "principal" : "resource");
            fail(p, aloc, "Cedar 4 requires both `principal` and `resource` in `appliesTo`", "%s", msg);
            return false;
        }
        if (!next(p)) return false;
    }
    if (is_kw(&p->cur, "attributes")) {
        /* Cedar's grammar accepts an empty `attributes {}` and ignores it */
        if (!next(p)) return false;
        if (!expect_punct(p, '{', "`{`", NULL)) return false;
        if (!expect_punct(p, '}', "`}`", "action attributes are not supported")) return false;
    }
    if (!end_decl(p, "action")) return false;
    for (size_t i = 0; i < nn; i++) {
        dw_rdecl *d = dw_rschema_add(p->s, &p->r);
        if (!d) { oom(p); return false; }
        *d = proto;
        d->name = nv[i].name;
        d->loc = nv[i].loc;
    }
    return true;
}

static bool type_decl(tp *p)
{
    dw_rdecl *d = dw_rschema_add(p->s, &p->r);
    if (!d) { oom(p); return false; }
    d->kind = DW_RD_COMMON;
    d->ns = p->ns;
    if (!ident(p, "a type name", &d->name, &d->loc)) return false;
    if (!expect_punct(p, '=', "`=`", "a common type is declared as `type Name = Type;`")) return false;
    if (!(d->def = type(p))) return false;
    return end_decl(p, "type");
}

static bool decl(tp *p)
{
    if (!annotations(p)) return false;
    if (is_kw(&p->cur, "entity")) return next(p) && entity_decl(p);
    if (is_kw(&p->cur, "action")) return next(p) && action_decl(p);
    if (is_kw(&p->cur, "type")) return next(p) && type_decl(p);
    if (is_kw(&p->cur, "namespace") && p->ns.len)
        return expected(p, "`entity`, `action` or `type`", "namespaces cannot be nested");
    return expected(p, "`entity`, `action` or `type`", NULL);
}

static bool namespace_decl(tp *p)
{
    dw_rname rn;
    if (!next(p)) return false;
    if (!path(p, "a namespace name", &rn.name, &rn.loc)) return false;
    for (size_t i = 0; i + 7 <= rn.name.len; i++)
        if (memcmp(rn.name.s + i, "__cedar", 7) == 0 && (i == 0 || rn.name.s[i - 1] == ':') &&
            (i + 7 == rn.name.len || rn.name.s[i + 7] == ':')) {
            fail(p, rn.loc, "`__cedar` is reserved for Cedar's built-in types", "%s", "the namespace name contains `__cedar`, which is reserved");
            return false;
        }
    for (size_t i = 0; i < p->nnss; i++)
        if (p->nss[i].name.len == rn.name.len && memcmp(p->nss[i].name.s, rn.name.s, rn.name.len) == 0) {
            char hint[96];
            snprintf(hint, sizeof hint, "the first declaration is at line %u; merge the two", p->nss[i].loc.line);
            char msg[160];
            snprintf(msg, sizeof msg, "duplicate namespace `%.*s`", (int)(rn.name.len > 80 ? 80 : rn.name.len), rn.name.s);
            fail(p, rn.loc, hint, "%s", msg);
            return false;
        }
    dw_rname *g = dw_schema_grow(p->s, p->nss, p->nnss, &p->capnss, sizeof *g);
    if (!g) { oom(p); return false; }
    p->nss = g;
    p->nss[p->nnss++] = rn;
    if (!expect_punct(p, '{', "`{` after the namespace name", NULL)) return false;
    p->ns = rn.name;
    while (!is_punct(&p->cur, '}')) {
        if (p->cur.k == TK_EOF) return expected(p, "`}` to close the namespace", NULL);
        if (!decl(p)) return false;
    }
    p->ns = (dw_str){ "", 0 };
    return next(p);
}

dw_schema *dw_schema_parse_text(const dw_source *src, dw_diags *diags)
{
    tp P;
    memset(&P, 0, sizeof P);
    P.s = dw_schema_new(src);
    if (!P.s) { dw_error(diags, src, dw_loc_at(src, 0, 0), "out of memory"); return NULL; }
    P.src = src;
    P.d = diags;
    P.t = src->text;
    P.n = src->len;
    P.line = 1;
    P.col = 1;
    P.ns = (dw_str){ "", 0 };
    tp *p = &P;
    bool ok = next(p);
    while (ok && p->cur.k != TK_EOF) {
        if (!annotations(p)) { ok = false; break; }
        if (is_kw(&p->cur, "namespace")) ok = namespace_decl(p);
        else ok = decl(p);
    }
    if (!ok || p->failed) {
        if (!p->failed) dw_error(diags, src, dw_loc_at(src, 0, 0), "schema syntax error");
        dw_schema_free(P.s);
        return NULL;
    }
    return dw_schema_resolve(P.s, &P.r, diags);
}
