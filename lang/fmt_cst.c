/* fmt_cst.c - the formatter's scanner, comment side table and concrete
 * syntax tree (fmt_cst.h).
 *
 * Comments are attached the way Cedar's formatter attaches them: the text
 * between two tokens is split at its first newline; what comes before is the
 * earlier token's trailing comment, the comments after it are the later
 * token's leading comment lines; everything before the first token leads it,
 * and the comments after the last token's line end the file.
 *
 * The grammar is Cedar's (cedar-policy-core's grammar.lalrpop), node for node,
 * so spans (and so the comments each node finds) are Cedar's, plus Dogwood's
 * items: `def cedar|temporal NAME(?p, ...) { ... };`, `temporal { ... }`
 * blocks (one token each), `when guardrails { ... }`, `$x` and `?x`. */
#include "fmt_cst.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct P {
    fmt_cst *c;
    dw_arena *A;
    jmp_buf *oom;
    jmp_buf fail;
    uint32_t i;                    /* next token */
} P;

static void *alloc(P *p, size_t n) { return dw_arena_alloc_or_jump(p->A, n ? n : 1, p->oom); }

/* ---- white space ---- */

/* Length of the Unicode White_Space character at s (0 if none). */
static int uspace(const unsigned char *s, size_t n)
{
    if (n >= 1 && (s[0] == ' ' || (s[0] >= 9 && s[0] <= 13))) return 1;
    if (n >= 2 && s[0] == 0xC2 && (s[1] == 0x85 || s[1] == 0xA0)) return 2;
    if (n >= 3 && s[0] == 0xE1 && s[1] == 0x9A && s[2] == 0x80) return 3;
    if (n >= 3 && s[0] == 0xE2 && s[1] == 0x80 && ((s[2] >= 0x80 && s[2] <= 0x8A) || s[2] == 0xA8 || s[2] == 0xA9 || s[2] == 0xAF)) return 3;
    if (n >= 3 && s[0] == 0xE2 && s[1] == 0x81 && s[2] == 0x9F) return 3;
    if (n >= 3 && s[0] == 0xE3 && s[1] == 0x80 && s[2] == 0x80) return 3;
    return 0;
}

fmt_span fmt_trim(const char *text, uint32_t off, uint32_t len)
{
    const unsigned char *t = (const unsigned char *)text;
    uint32_t b = off, e = off + len;
    for (int k; b < e && (k = uspace(t + b, e - b)); b += (uint32_t)k) {}
    while (e > b) {
        uint32_t s = e - 1;
        while (s > b && (t[s] & 0xC0) == 0x80) s--;   /* start of the last character */
        int k = uspace(t + s, e - s);
        if (k == 0 || s + (uint32_t)k != e) break;
        e = s;
    }
    return (fmt_span){ b, e - b };
}

bool fmt_tok_is(const fmt_cst *c, uint32_t i, const char *z)
{
    if (i >= c->ntoks) return false;
    size_t n = strlen(z);
    return c->toks[i].end - c->toks[i].off == n && memcmp(c->text + c->toks[i].off, z, n) == 0;
}

/* ---- scanner ---- */

static bool idch(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_'; }
static bool idstart(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_'; }

static size_t skip_ws(const char *t, size_t n, size_t i)
{
    for (;;) {
        while (i < n && (t[i] == ' ' || (t[i] >= 9 && t[i] <= 13))) i++;
        if (i + 1 < n && t[i] == '/' && t[i + 1] == '/') {
            while (i < n && t[i] != '\n' && t[i] != '\r') i++;
            continue;
        }
        return i;
    }
}

/* End of the string literal opening at i (just past its closing quote), or 0. */
static size_t str_end(const char *t, size_t n, size_t i)
{
    for (size_t j = i + 1; j < n; j++) {
        if (t[j] == '\\') j++;
        else if (t[j] == '"') return j + 1;
    }
    return 0;
}

/* End of the braced body opening at i (`{`), skipping strings and comments, or 0. */
static size_t block_end(const char *t, size_t n, size_t i)
{
    int depth = 0;
    for (size_t j = i; j < n; j++) {
        if (t[j] == '"') {
            size_t e = str_end(t, n, j);
            if (!e) return 0;
            j = e - 1;
        } else if (t[j] == '/' && j + 1 < n && t[j + 1] == '/') {
            while (j < n && t[j] != '\n') j++;
        } else if (t[j] == '{') depth++;
        else if (t[j] == '}' && --depth == 0) return j + 1;
    }
    return 0;
}

static bool word_at(const char *t, size_t n, size_t i, const char *w)
{
    size_t k = strlen(w);
    return i + k <= n && memcmp(t + i, w, k) == 0 && (i + k == n || !idch(t[i + k]));
}

static __attribute__((noreturn)) void fail_at(P *p, uint32_t off, const char *msg)
{
    snprintf(p->c->err, sizeof p->c->err, "%s", msg);
    p->c->err_off = off;
    longjmp(p->fail, 1);
}

static void push_tok(P *p, size_t *cap, fmt_tkind k, size_t off, size_t end)
{
    fmt_cst *c = p->c;
    if (c->ntoks == *cap) {
        *cap = *cap ? 2 * *cap : 256;
        fmt_tok *nv = alloc(p, *cap * sizeof *nv);
        if (c->ntoks) memcpy(nv, c->toks, c->ntoks * sizeof *nv);
        c->toks = nv;
    }
    c->toks[c->ntoks++] = (fmt_tok){ .kind = k, .off = (uint32_t)off, .end = (uint32_t)end };
}

static void scan(P *p)
{
    const char *t = p->c->text;
    size_t n = p->c->len, cap = 0, i = 0;
    int depth = 0, def_state = 0;      /* def_state: 1 after `def`, 2 `def temporal` */
    bool item_start = true;
    static const char *two[] = { "::", "==", "!=", "<=", ">=", "||", "&&" };
    for (;;) {
        i = skip_ws(t, n, i);
        if (i >= n) break;
        size_t s = i;
        char ch = t[i];
        if (idstart(ch)) {
            while (i < n && idch(t[i])) i++;
            size_t k = skip_ws(t, n, i);
            if (i - s == 8 && !memcmp(t + s, "temporal", 8) && def_state != 1 && k < n && t[k] == '{') {
                size_t e = block_end(t, n, k);
                if (!e) fail_at(p, (uint32_t)s, "unterminated temporal body");
                push_tok(p, &cap, FT_TBLOCK, s, e);
                i = e;
                item_start = false;
                continue;
            }
            if (item_start && depth == 0 && i - s == 3 && !memcmp(t + s, "def", 3) &&
                (word_at(t, n, k, "cedar") || word_at(t, n, k, "temporal")))
                def_state = word_at(t, n, k, "temporal") ? 1 : 3;
            else if (def_state == 1) def_state = 2;
            push_tok(p, &cap, FT_IDENT, s, i);
        } else if (ch >= '0' && ch <= '9') {
            while (i < n && t[i] >= '0' && t[i] <= '9') i++;
            push_tok(p, &cap, FT_NUM, s, i);
        } else if (ch == '"') {
            size_t e = str_end(t, n, i);
            if (!e) fail_at(p, (uint32_t)s, "unterminated string literal");
            push_tok(p, &cap, FT_STR, s, i = e);
        } else if ((ch == '?' || ch == '$') && i + 1 < n && idstart(t[i + 1])) {
            i++;
            while (i < n && idch(t[i])) i++;
            push_tok(p, &cap, ch == '?' ? FT_SLOT : FT_BINDER, s, i);
        } else if (ch == '{' && def_state == 2 && depth == 0) {
            size_t e = block_end(t, n, i);
            if (!e) fail_at(p, (uint32_t)s, "unterminated temporal body");
            push_tok(p, &cap, FT_TBLOCK, s, i = e);
        } else {
            size_t k = 1;
            for (size_t j = 0; j < sizeof two / sizeof *two; j++)
                if (i + 1 < n && t[i] == two[j][0] && t[i + 1] == two[j][1]) k = 2;
            if (k == 1 && !strchr("@.,;:(){}[]<>+-*/%!", ch)) fail_at(p, (uint32_t)s, "unexpected character");
            if (k == 1 && strchr("([{", ch)) depth++;
            if (k == 1 && strchr(")]}", ch) && depth > 0) depth--;
            push_tok(p, &cap, FT_PUNCT, s, i += k);
            if (k == 1 && ch == ';') { depth = 0; def_state = 0; item_start = true; continue; }
        }
        item_start = false;
    }
}

/* All `//` comments in [b, e), each trimmed, appended to *v. */
static void comments_in(P *p, uint32_t b, uint32_t e, fmt_span **v, size_t *nv, size_t *cap)
{
    const char *t = p->c->text;
    for (uint32_t i = b; i + 1 < e; i++) {
        if (t[i] != '/' || t[i + 1] != '/') continue;
        uint32_t j = i;
        while (j < e && t[j] != '\n' && t[j] != '\r') j++;
        if (*nv == *cap) {
            *cap = *cap ? 2 * *cap : 64;
            fmt_span *nw = alloc(p, *cap * sizeof *nw);
            if (*nv) memcpy(nw, *v, *nv * sizeof *nw);
            *v = nw;
        }
        (*v)[(*nv)++] = fmt_trim(t, i, j - i);
        i = j;
    }
}

static uint32_t first_newline(const char *t, uint32_t b, uint32_t e)
{
    for (uint32_t i = b; i < e; i++)
        if (t[i] == '\n') return i;
    return e;
}

static void attach_comments(P *p)
{
    fmt_cst *c = p->c;
    const char *t = c->text;
    size_t cap = 0, ecap = 0;
    uint32_t lead_b = 0;                  /* where the next token's leading text starts */
    for (size_t k = 0; k < c->ntoks; k++) {
        fmt_tok *tk = &c->toks[k];
        tk->lead = (uint32_t)c->nlines;
        comments_in(p, lead_b, tk->off, &c->lines, &c->nlines, &cap);
        tk->nlead = (uint32_t)(c->nlines - tk->lead);
        uint32_t next = k + 1 < c->ntoks ? c->toks[k + 1].off : (uint32_t)c->len;
        uint32_t nl = first_newline(t, tk->end, next);
        tk->trail = fmt_trim(t, tk->end, nl - tk->end);
        lead_b = nl < next ? nl + 1 : next;
    }
    if (c->ntoks == 0) lead_b = 0;
    comments_in(p, lead_b, (uint32_t)c->len, &c->eof, &c->neof, &ecap);
}

/* ---- parser: Cedar's grammar ---- */

typedef struct vec { fmt_node **v; size_t n, cap; uint32_t *ops; } vec;

static void vadd(P *p, vec *v, fmt_node *x, uint32_t op)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 4;
        fmt_node **nv = alloc(p, v->cap * sizeof *nv);
        uint32_t *no = alloc(p, v->cap * sizeof *no);
        if (v->n) { memcpy(nv, v->v, v->n * sizeof *nv); memcpy(no, v->ops, v->n * sizeof *no); }
        v->v = nv;
        v->ops = no;
    }
    v->ops[v->n] = op;
    v->v[v->n++] = x;
}

static fmt_node *mk(P *p, fmt_nkind k, uint32_t first)
{
    fmt_node *x = alloc(p, sizeof *x);
    x->kind = k;
    x->first = first;
    x->last = p->i ? p->i - 1 : 0;
    x->op = UINT32_MAX;
    return x;
}

static void done(P *p, fmt_node *x) { x->last = p->i - 1; }

static bool at(P *p, const char *z) { return fmt_tok_is(p->c, p->i, z); }
static bool at_kind(P *p, fmt_tkind k) { return p->i < p->c->ntoks && p->c->toks[p->i].kind == k; }

static void expect(P *p, const char *z)
{
    if (!at(p, z)) {
        char m[64];
        snprintf(m, sizeof m, "expected `%s`", z);
        fail_at(p, p->i < p->c->ntoks ? p->c->toks[p->i].off : (uint32_t)p->c->len, m);
    }
    p->i++;
}

static __attribute__((noreturn)) void unsupported(P *p, const char *what)
{
    fail_at(p, p->i < p->c->ntoks ? p->c->toks[p->i].off : (uint32_t)p->c->len, what);
}

/* A node of one token: the next one. */
static fmt_node *leaf(P *p, fmt_nkind k)
{
    fmt_node *x = mk(p, k, p->i);
    x->tok = p->i++;
    done(p, x);
    return x;
}

static fmt_node *ident(P *p)
{
    if (!at_kind(p, FT_IDENT)) unsupported(p, "expected an identifier");
    return leaf(p, FN_IDENT);
}

static fmt_node *expr(P *p);
static fmt_node *add(P *p);

static fmt_node *str(P *p)
{
    if (!at_kind(p, FT_STR)) unsupported(p, "expected a string literal");
    return leaf(p, FN_STR);
}

static void fill(fmt_node *x, vec *v) { x->v = v->v; x->nv = v->n; x->ops = v->ops; }

/* Comma<Expr> up to `close` (a trailing comma is Dogwood's, tolerated). */
static void exprs(P *p, vec *v, const char *close, bool recinit);

static fmt_node *recinit(P *p)
{
    uint32_t f = p->i;
    fmt_node *x = mk(p, FN_RECINIT, f);
    if (at(p, "if") && fmt_tok_is(p->c, p->i + 1, ":")) {
        /* Cedar builds the key `if` with the whole entry's span */
        p->i++;
        fmt_node *k = mk(p, FN_IDENT, f);
        k->tok = f;
        x->a = k;
        p->i++;
        x->b = expr(p);
        done(p, x);
        k->first = x->first;
        k->last = x->last;
        k->kind = FN_IDENT;
        k->n = 1;                       /* marks the synthesized key */
        return x;
    }
    x->a = expr(p);
    expect(p, ":");
    x->b = expr(p);
    done(p, x);
    return x;
}

static void exprs(P *p, vec *v, const char *close, bool rec)
{
    while (!at(p, close)) {
        vadd(p, v, rec ? recinit(p) : expr(p), UINT32_MAX);
        if (!at(p, ",")) break;
        p->i++;
    }
    expect(p, close);
}

static fmt_node *primary(P *p)
{
    uint32_t f = p->i;
    if (p->i >= p->c->ntoks) unsupported(p, "unexpected end of input");
    fmt_tok *t = &p->c->toks[p->i];
    fmt_node *x;
    switch (t->kind) {
    case FT_NUM: case FT_STR:
        x = mk(p, FN_LIT, f);
        x->tok = p->i++;
        break;
    case FT_SLOT: case FT_BINDER:
        x = mk(p, FN_SLOT, f);
        x->tok = p->i++;
        break;
    case FT_TBLOCK:
        x = mk(p, FN_TBLOCK, f);
        x->tok = p->i++;
        break;
    case FT_IDENT:
        if (at(p, "true") || at(p, "false")) {
            x = mk(p, FN_LIT, f);
            x->tok = p->i++;
            break;
        }
        if (at(p, "if")) unsupported(p, "unexpected `if`");
        {
            /* Name := IDENT {'::' IDENT}; Ref := Name '::' STR */
            vec path = { 0 };
            fmt_node *nm = mk(p, FN_NAME, f);
            fmt_node *last = ident(p);
            while (at(p, "::") && p->i + 1 < p->c->ntoks && p->c->toks[p->i + 1].kind == FT_IDENT) {
                vadd(p, &path, last, UINT32_MAX);
                p->i++;
                last = ident(p);
            }
            nm->a = last;
            fill(nm, &path);
            done(p, nm);
            if (at(p, "::") && p->i + 1 < p->c->ntoks && p->c->toks[p->i + 1].kind == FT_STR) {
                x = mk(p, FN_REF, f);
                x->a = nm;
                p->i++;
                x->b = str(p);
            } else if (at(p, "::")) {
                unsupported(p, "entity literals `Type::{...}` are not supported");
            } else {
                x = nm;
            }
        }
        break;
    case FT_PUNCT:
        if (at(p, "(")) {
            x = mk(p, FN_PAREN, f);
            p->i++;
            x->a = expr(p);
            expect(p, ")");
        } else if (at(p, "[") || at(p, "{")) {
            bool rec = at(p, "{");
            x = mk(p, rec ? FN_RECORD : FN_LIST, f);
            p->i++;
            vec v = { 0 };
            exprs(p, &v, rec ? "}" : "]", rec);
            fill(x, &v);
        } else {
            unsupported(p, "unexpected token");
            return NULL;
        }
        break;
    default:
        unsupported(p, "unexpected token");
        return NULL;
    }
    done(p, x);
    return x;
}

static fmt_node *member(P *p)
{
    fmt_node *x = mk(p, FN_MEMBER, p->i);
    x->a = primary(p);
    vec acc = { 0 };
    for (;;) {
        uint32_t f = p->i;
        fmt_node *m;
        if (at(p, ".")) {
            m = mk(p, FN_FIELD, f);
            p->i++;
            m->a = ident(p);
        } else if (at(p, "(")) {
            m = mk(p, FN_CALL, f);
            p->i++;
            vec v = { 0 };
            exprs(p, &v, ")", false);
            fill(m, &v);
        } else if (at(p, "[")) {
            m = mk(p, FN_INDEX, f);
            p->i++;
            m->a = expr(p);
            expect(p, "]");
        } else break;
        done(p, m);
        vadd(p, &acc, m, UINT32_MAX);
    }
    fill(x, &acc);
    done(p, x);
    return x;
}

static fmt_node *unary(P *p)
{
    fmt_node *x = mk(p, FN_UNARY, p->i);
    x->tok = p->i;
    if (at(p, "!") || at(p, "-")) {
        const char *op = at(p, "!") ? "!" : "-";
        while (at(p, op)) { x->n++; p->i++; }
        if (x->n > 4) unsupported(p, "more than four unary operators");
    }
    x->a = member(p);
    done(p, x);
    return x;
}

/* A left-assoc chain: kind's operands by `sub`, operators among ops. */
static fmt_node *chain(P *p, fmt_nkind k, fmt_node *(*sub)(P *), const char *const *ops)
{
    fmt_node *x = mk(p, k, p->i);
    vec v = { 0 };
    vadd(p, &v, sub(p), UINT32_MAX);
    for (;;) {
        bool hit = false;
        for (const char *const *o = ops; *o; o++) hit |= at(p, *o);
        if (!hit) break;
        uint32_t op = p->i++;
        vadd(p, &v, sub(p), op);
    }
    fill(x, &v);
    done(p, x);
    return x;
}

static const char *const mult_ops[] = { "*", "/", "%", NULL };
static const char *const add_ops[] = { "+", "-", NULL };
static const char *const rel_ops[] = { "<", "<=", ">=", ">", "!=", "==", "in", NULL };

static fmt_node *mult(P *p) { return chain(p, FN_MULT, unary, mult_ops); }
static fmt_node *add(P *p) { return chain(p, FN_ADD, mult, add_ops); }

static bool at_relop(P *p)
{
    for (const char *const *o = rel_ops; *o; o++)
        if (at(p, *o)) return true;
    return false;
}

static fmt_node *relation(P *p)
{
    uint32_t f = p->i;
    fmt_node *t = add(p);
    fmt_node *x;
    if (at(p, "has") || at(p, "like")) {
        x = mk(p, at(p, "has") ? FN_HAS : FN_LIKE, f);
        x->a = t;
        p->i++;
        if (x->kind == FN_HAS && at(p, "if")) {
            /* Cedar builds the field `if` with the whole relation's span */
            fmt_node *k = mk(p, FN_IDENT, f);
            k->tok = p->i++;
            k->n = 1;
            x->b = k;
            done(p, x);
            k->last = x->last;
            return x;
        }
        x->b = add(p);
    } else if (at(p, "is")) {
        x = mk(p, FN_ISIN, f);
        x->a = t;
        p->i++;
        x->b = add(p);
        if (at(p, "in")) { p->i++; x->c = add(p); }
    } else {
        x = mk(p, FN_REL, f);
        vec v = { 0 };
        vadd(p, &v, t, UINT32_MAX);
        while (at_relop(p)) {
            uint32_t op = p->i++;
            vadd(p, &v, add(p), op);
        }
        fill(x, &v);
    }
    done(p, x);
    return x;
}

static const char *const and_ops[] = { "&&", NULL };
static const char *const or_ops[] = { "||", NULL };
static fmt_node *and_(P *p) { return chain(p, FN_AND, relation, and_ops); }
static fmt_node *or_(P *p) { return chain(p, FN_OR, and_, or_ops); }

static fmt_node *expr(P *p)
{
    uint32_t f = p->i;
    if (at(p, "if")) {
        fmt_node *x = mk(p, FN_IF, f);
        p->i++;
        x->a = expr(p);
        expect(p, "then");
        x->b = expr(p);
        expect(p, "else");
        x->c = expr(p);
        done(p, x);
        return x;
    }
    fmt_node *x = mk(p, FN_EXPR, f);
    x->a = or_(p);
    done(p, x);
    return x;
}

static fmt_node *vardef(P *p)
{
    fmt_node *x = mk(p, FN_VARDEF, p->i);
    x->a = ident(p);
    if (at(p, ":")) unsupported(p, "`principal: Type` is not supported");
    if (at(p, "is")) { p->i++; x->b = add(p); }
    if (at_relop(p)) {
        x->op = p->i++;
        x->c = expr(p);
    }
    done(p, x);
    return x;
}

static fmt_node *cond(P *p)
{
    fmt_node *x = mk(p, FN_COND, p->i);
    x->a = ident(p);
    if (at_kind(p, FT_TBLOCK)) {
        x->c = leaf(p, FN_TBLOCK);
    } else {
        if (at_kind(p, FT_IDENT)) x->b = ident(p);      /* when guardrails { ... } */
        expect(p, "{");
        if (!at(p, "}")) x->c = expr(p);
        expect(p, "}");
    }
    done(p, x);
    return x;
}

static fmt_node *annotation(P *p)
{
    fmt_node *x = mk(p, FN_ANNOT, p->i);
    expect(p, "@");
    x->a = ident(p);
    if (at(p, "(")) {
        p->i++;
        x->b = str(p);
        expect(p, ")");
    }
    done(p, x);
    return x;
}

static fmt_node *macro(P *p)
{
    fmt_node *x = mk(p, FN_MACRO, p->i);
    p->i++;                                  /* def */
    x->tok = p->i;
    x->b = ident(p);                         /* cedar | temporal */
    x->a = ident(p);                         /* name */
    expect(p, "(");
    vec v = { 0 };
    while (at_kind(p, FT_SLOT)) {
        vadd(p, &v, leaf(p, FN_SLOT), UINT32_MAX);
        if (!at(p, ",")) break;
        p->i++;
    }
    x->w = v.v;
    x->nw = v.n;
    expect(p, ")");
    if (at_kind(p, FT_TBLOCK)) {
        x->c = leaf(p, FN_TBLOCK);
    } else {
        expect(p, "{");
        x->c = expr(p);
        expect(p, "}");
    }
    expect(p, ";");
    done(p, x);
    return x;
}

static fmt_node *policy(P *p)
{
    fmt_node *x = mk(p, FN_POLICY, p->i);
    vec an = { 0 }, vars = { 0 }, conds = { 0 };
    while (at(p, "@")) vadd(p, &an, annotation(p), UINT32_MAX);
    x->a = ident(p);
    expect(p, "(");
    while (!at(p, ")")) {
        vadd(p, &vars, vardef(p), UINT32_MAX);
        if (!at(p, ",")) break;
        p->i++;
    }
    x->tok = p->i;                           /* `)` */
    expect(p, ")");
    while (!at(p, ";")) vadd(p, &conds, cond(p), UINT32_MAX);
    expect(p, ";");
    fill(x, &an);
    x->w = vars.v; x->nw = vars.n;
    x->x = conds.v; x->nx = conds.n;
    done(p, x);
    return x;
}

bool fmt_cst_read(fmt_cst *c, const char *text, size_t len, dw_arena *A, jmp_buf *oom)
{
    memset(c, 0, sizeof *c);
    c->text = text;
    c->len = len;
    P p = { .c = c, .A = A, .oom = oom };
    if (setjmp(p.fail)) return false;
    if (len > UINT32_MAX / 2) fail_at(&p, 0, "text too large");
    scan(&p);
    attach_comments(&p);
    vec items = { 0 };
    while (p.i < c->ntoks) {
        bool def = fmt_tok_is(c, p.i, "def") && (fmt_tok_is(c, p.i + 1, "cedar") || fmt_tok_is(c, p.i + 1, "temporal"));
        vadd(&p, &items, def ? macro(&p) : policy(&p), UINT32_MAX);
    }
    c->items = items.v;
    c->nitems = items.n;
    return true;
}
