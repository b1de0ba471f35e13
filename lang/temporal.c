/* temporal.c - parser and printer for temporal bodies (dogwood.md §6).
 * A hand-written PEG parser: ordered alternatives, each restoring the
 * position on failure (backtracking).  The furthest position any
 * alternative reached is where a syntax error is reported. */
#include "tast.h"
#include "strlit.h"
#include <setjmp.h>
#include <string.h>

typedef struct tp {
    dw_arena *A;
    const dw_source *src;
    dw_diags *diags;
    const char *s;          /* body text */
    size_t n, pos, far;     /* far: furthest failure */
    uint32_t base;          /* byte offset of s[0] in the source */
    dw_tmode mode;
    int depth;
    bool failed;            /* an error was reported */
    jmp_buf oom;
} tp;

#define T_MAX_DEPTH DW_MAX_EXPR_DEPTH

static void *talloc(tp *T, size_t n)
{
    void *p = dw_arena_alloc(T->A, n);
    if (!p) longjmp(T->oom, 1);
    return p;
}

static dw_loc tloc(tp *T, size_t a, size_t b) { return dw_loc_at(T->src, T->base + (uint32_t)a, T->base + (uint32_t)b); }

static void terr(tp *T, size_t a, size_t b, const char *hint, const char *msg, const char *arg, size_t alen)
{
    if (T->failed) return;
    T->failed = true;
    dw_error_hint(T->diags, T->src, tloc(T, a, b), hint, msg, (int)alen, arg);
}

static dw_tnode *node(tp *T, dw_tkind k, size_t start)
{
    dw_tnode *x = talloc(T, sizeof *x);
    x->kind = k;
    x->loc = tloc(T, start, T->pos);
    return x;
}

static void ws(tp *T)
{
    for (;;) {
        while (T->pos < T->n && strchr(" \t\r\n", T->s[T->pos]) && T->s[T->pos]) T->pos++;
        if (T->pos + 1 < T->n && T->s[T->pos] == '/' && T->s[T->pos + 1] == '/') {
            while (T->pos < T->n && T->s[T->pos] != '\n') T->pos++;
            continue;
        }
        return;
    }
}

static void miss(tp *T) { if (T->pos > T->far) T->far = T->pos; }

static bool streq_(dw_str s, const char *l) { return s.len == strlen(l) && memcmp(s.s, l, s.len) == 0; }

static bool idch(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

static bool lit(tp *T, const char *p)
{
    ws(T);
    size_t k = strlen(p);
    if (T->pos + k <= T->n && memcmp(T->s + T->pos, p, k) == 0) {
        /* `:` must not eat half of `::`, `<` not half of `<=` ... */
        if (k == 1 && (p[0] == ':' || p[0] == '<' || p[0] == '>' || p[0] == '!') && T->pos + 1 < T->n &&
            (T->s[T->pos + 1] == (p[0] == ':' ? ':' : '=')))
            { miss(T); return false; }
        T->pos += k;
        return true;
    }
    miss(T);
    return false;
}

static const char *kws[] = { "formerly", "previous", "since", "within", "exists", "tp", "count", "sum",
                             "for", "where", "true", "false", NULL };

static bool is_kw(const char *s, size_t n)
{
    for (int i = 0; kws[i]; i++)
        if (strlen(kws[i]) == n && memcmp(kws[i], s, n) == 0) return true;
    return false;
}

static bool kw(tp *T, const char *w)
{
    ws(T);
    size_t k = strlen(w);
    if (T->pos + k <= T->n && memcmp(T->s + T->pos, w, k) == 0 && (T->pos + k == T->n || !idch(T->s[T->pos + k]))) {
        T->pos += k;
        return true;
    }
    miss(T);
    return false;
}

static bool ident(tp *T, dw_str *out)
{
    ws(T);
    size_t p = T->pos;
    if (p < T->n && idch(T->s[p]) && !(T->s[p] >= '0' && T->s[p] <= '9')) {
        while (p < T->n && idch(T->s[p])) p++;
        out->s = dw_arena_memdup(T->A, T->s + T->pos, p - T->pos);
        if (!out->s) longjmp(T->oom, 1);
        out->len = p - T->pos;
        T->pos = p;
        return true;
    }
    miss(T);
    return false;
}

/* An identifier that is not a temporal keyword. */
static bool name(tp *T, dw_str *out)
{
    size_t save = T->pos;
    if (!ident(T, out)) return false;
    if (is_kw(out->s, out->len)) { T->pos = save; miss(T); return false; }
    return true;
}

static bool string(tp *T, dw_str *out)
{
    ws(T);
    size_t p = T->pos;
    if (p >= T->n || T->s[p] != '"') { miss(T); return false; }
    p++;
    while (p < T->n && T->s[p] != '"') p += T->s[p] == '\\' && p + 1 < T->n ? 2 : 1;
    if (p >= T->n) { T->far = T->n; return false; }
    dw_strlit_err e;
    if (!dw_strlit_decode(T->A, T->s + T->pos + 1, p - T->pos - 1, out, &e)) {
        if (!e.len) longjmp(T->oom, 1);
        size_t a = T->pos + 1 + e.off;
        terr(T, a, a + e.len, e.hint, e.msg, T->s + a, e.len);
    }
    T->pos = p + 1;
    return true;
}

static bool integer(tp *T, int64_t *v)
{
    ws(T);
    size_t p = T->pos;
    bool neg = p < T->n && T->s[p] == '-';
    if (neg) p++;
    if (p >= T->n || !(T->s[p] >= '0' && T->s[p] <= '9')) { miss(T); return false; }
    uint64_t x = 0;
    bool over = false;
    while (p < T->n && T->s[p] >= '0' && T->s[p] <= '9') {
        unsigned d = (unsigned)(T->s[p] - '0');
        if (x > (UINT64_MAX - d) / 10) over = true; else x = x * 10 + d;
        p++;
    }
    if (p < T->n && idch(T->s[p]) && !strchr("smhd", T->s[p])) { miss(T); return false; }
    if (over || x > (uint64_t)INT64_MAX + (neg ? 1 : 0))
        terr(T, T->pos, p, NULL, "integer literal `%.*s` is out of range", T->s + T->pos, p - T->pos);
    *v = neg ? (int64_t)(0 - x) : (int64_t)x;
    T->pos = p;
    return true;
}

/* INTEGER UNIT, e.g. 1h (whitespace before the unit tolerated, §2.2). */
static bool interval(tp *T, int64_t *secs)
{
    size_t save = T->pos;
    int64_t v;
    if (!integer(T, &v)) return false;
    ws(T);
    if (T->pos < T->n && strchr("smhd", T->s[T->pos]) && T->s[T->pos] &&
        (T->pos + 1 == T->n || !idch(T->s[T->pos + 1]))) {
        char u = T->s[T->pos++];
        int64_t m = u == 's' ? 1 : u == 'm' ? 60 : u == 'h' ? 3600 : 86400;
        if (v > INT64_MAX / m || v < INT64_MIN / m) terr(T, save, T->pos, NULL, "interval `%.*s` is out of range", T->s + save, T->pos - save);
        else *secs = v * m;
        return true;
    }
    miss(T);
    T->pos = save;
    return false;
}

static void need_macro(tp *T, size_t a, const char *what, dw_str nm)
{
    if (T->mode == DW_TMODE_MACRO) return;
    char msg[96];
    snprintf(msg, sizeof msg, "%s", what);
    terr(T, a, T->pos, "sigils may only be used inside a `def temporal` body", msg, nm.s, nm.len);
}

static bool sigil(tp *T, char c, dw_str *out)
{
    ws(T);
    size_t save = T->pos;
    if (T->pos < T->n && T->s[T->pos] == c) {
        T->pos++;
        if (T->pos < T->n && idch(T->s[T->pos]) && ident(T, out)) return true;
    }
    T->pos = save;
    miss(T);
    return false;
}

static dw_tnode *condition(tp *T);
static dw_tnode *term(tp *T);
static dw_tnode *call(tp *T);

static bool enter(tp *T)
{
    if (++T->depth > T_MAX_DEPTH) {
        terr(T, T->pos, T->pos + 1, "simplify the temporal body", "temporal body nested too deeply%.*s", "", 0);
        T->depth--;
        return false;
    }
    return true;
}

static bool within(tp *T, dw_twindow *w)
{
    size_t save = T->pos;
    if (!kw(T, "within")) return false;
    size_t a = T->pos;
    ws(T);
    a = T->pos;
    if (sigil(T, '?', &w->param)) {
        need_macro(T, a, "stray macro parameter reference `?%.*s` outside a macro body", w->param);
        w->loc = tloc(T, a, T->pos);
        return true;
    }
    if (interval(T, &w->secs)) { w->loc = tloc(T, a, T->pos); return true; }
    T->pos = save;
    return false;
}

static bool binder_slot(tp *T, dw_tslot *b)
{
    ws(T);
    size_t a = T->pos;
    if (sigil(T, '?', &b->name)) { b->sigil = '?'; need_macro(T, a, "stray macro parameter reference `?%.*s` outside a macro body", b->name); }
    else if (sigil(T, '$', &b->name)) { b->sigil = '$'; need_macro(T, a, "stray macro binder reference `$%.*s`", b->name); }
    else if (name(T, &b->name)) b->sigil = 0;
    else return false;
    b->loc = tloc(T, a, T->pos);
    return true;
}

static bool typed_binder(tp *T, dw_tbinder *b)
{
    size_t save = T->pos;
    ws(T);
    size_t a = T->pos;
    if (!lit(T, "(") || !binder_slot(T, &b->slot) || !lit(T, ":")) goto fail;
    dw_str seg;
    if (!ident(T, &seg)) goto fail;
    size_t ts = T->pos - seg.len;
    while (lit(T, "::")) if (!ident(T, &seg)) goto fail;
    b->type.s = dw_arena_memdup(T->A, T->s + ts, T->pos - ts);
    if (!b->type.s) longjmp(T->oom, 1);
    b->type.len = T->pos - ts;
    if (!lit(T, ")")) goto fail;
    b->loc = tloc(T, a, T->pos);
    return true;
fail:
    T->pos = save;
    return false;
}

static bool binders(tp *T, dw_tnode *x)
{
    size_t save = T->pos;
    if (!kw(T, "for")) return false;
    size_t cap = 0;
    do {
        if (x->nbinders == cap) {
            cap = cap ? cap * 2 : 4;
            dw_tbinder *nb = talloc(T, cap * sizeof *nb);
            if (x->nbinders) memcpy(nb, x->binders, x->nbinders * sizeof *nb);
            x->binders = nb;
        }
        if (!typed_binder(T, &x->binders[x->nbinders])) { T->pos = save; return false; }
        x->nbinders++;
    } while (lit(T, ","));
    if (!lit(T, ".")) { T->pos = save; return false; }
    return true;
}

/* agg_expr = "sum" slot for_binders "where" condition | "count" for_binders "where" condition | call */
static dw_tnode *agg(tp *T)
{
    ws(T);
    size_t a = T->pos;
    dw_tnode *x = talloc(T, sizeof *x);
    if (kw(T, "sum")) {
        x->kind = DW_T_SUM;
        if (!binder_slot(T, &x->slot)) goto fail;
    } else if (kw(T, "count")) {
        x->kind = DW_T_COUNT;
    } else {
        return call(T);
    }
    if (!binders(T, x) || !kw(T, "where") || !(x->kids[0] = condition(T))) goto fail;
    x->loc = tloc(T, a, T->pos);
    return x;
fail:
    T->pos = a;
    return NULL;
}

static void push(tp *T, dw_tnode ***v, size_t *n, size_t *cap, dw_tnode *x)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        dw_tnode **nv = talloc(T, *cap * sizeof *nv);
        if (*n) memcpy(nv, *v, *n * sizeof *nv);
        *v = nv;
    }
    (*v)[(*n)++] = x;
}

static dw_str dotted(tp *T, size_t a)
{
    dw_str s = { dw_arena_memdup(T->A, T->s + a, T->pos - a), T->pos - a };
    if (!s.s) longjmp(T->oom, 1);
    /* drop whitespace the author may have put around dots */
    char *w = (char *)s.s, *r = w;
    for (size_t i = 0; i < s.len; i++) if (!strchr(" \t\r\n", r[i])) *w++ = r[i];
    s.len = (size_t)(w - s.s);
    *w = 0;
    return s;
}

/* a.b.c after a root: returns the dotted path text (without the root) */
static dw_str field_path(tp *T, bool need_one)
{
    dw_str seg, none = { "", 0 };
    size_t save = T->pos;
    if (!lit(T, ".")) { if (need_one) T->pos = save; return none; }
    ws(T);
    size_t a = T->pos;
    if (!ident(T, &seg)) { T->pos = save; return none; }
    for (;;) {
        size_t s2 = T->pos;
        if (!lit(T, ".") || !ident(T, &seg)) { T->pos = s2; break; }
    }
    return dotted(T, a);
}

/* entity = IDENT { "::" IDENT } "::" STRING */
static bool entity(tp *T, dw_str *type, dw_str *id)
{
    size_t save = T->pos;
    dw_str seg;
    ws(T);
    size_t a = T->pos;
    if (!ident(T, &seg)) return false;
    size_t tend = T->pos;
    for (;;) {
        if (!lit(T, "::")) goto fail;
        size_t s2 = T->pos;
        if (string(T, id)) break;
        T->pos = s2;
        if (!ident(T, &seg)) goto fail;
        tend = T->pos;
    }
    T->pos = tend;
    *type = dotted(T, a);
    lit(T, "::");
    string(T, id);
    return true;
fail:
    T->pos = save;
    return false;
}

static dw_tnode *term(tp *T)
{
    if (!enter(T)) return NULL;
    ws(T);
    size_t a = T->pos;
    dw_tnode *x = NULL;
    dw_str s, t;
    int64_t v;
    if (entity(T, &t, &s)) { x = node(T, DW_T_LIT_ENTITY, a); x->type = t; x->str = s; goto done; }
    T->pos = a;
    if (kw(T, "decimal") && lit(T, "(") && string(T, &s) && lit(T, ")")) { x = node(T, DW_T_LIT_DECIMAL, a); x->str = s; goto done; }
    T->pos = a;
    if (lit(T, "(")) {
        dw_tnode *g = agg(T);
        if (g && lit(T, ")")) { x = g; goto done; }
    }
    T->pos = a;
    if ((x = agg(T))) goto done;
    T->pos = a;
    if (integer(T, &v)) { x = node(T, DW_T_LIT_LONG, a); x->i = v; goto done; }
    if (string(T, &s)) { x = node(T, DW_T_LIT_STRING, a); x->str = s; goto done; }
    if (kw(T, "true") || kw(T, "false")) { x = node(T, DW_T_LIT_BOOL, a); x->b = T->s[a] == 't'; goto done; }
    if (lit(T, "[")) {
        dw_tnode *arr = talloc(T, sizeof *arr);
        size_t cap = 0;
        arr->kind = DW_T_ARRAY;
        if (!lit(T, "]")) {
            do {
                dw_tnode *e = term(T);
                if (!e) { T->pos = a; goto done; }
                push(T, &arr->args, &arr->nargs, &cap, e);
            } while (lit(T, ","));
            if (!lit(T, "]")) { T->pos = a; goto done; }
        }
        arr->loc = tloc(T, a, T->pos);
        x = arr;
        goto done;
    }
    if (kw(T, "context")) {
        size_t s2 = T->pos;
        dw_str p = field_path(T, true);
        if (p.len) { x = node(T, DW_T_CONTEXT, a); x->path = p; goto done; }
        T->pos = s2;
        T->pos = a;
    }
    if (kw(T, "principal") || kw(T, "resource")) {
        bool pr = T->s[a] == 'p';
        dw_str p = field_path(T, false);
        x = node(T, pr ? DW_T_PRINCIPAL : DW_T_RESOURCE, a);
        x->path = p;
        goto done;
    }
    if (lit(T, "*")) { x = node(T, DW_T_WILDCARD, a); goto done; }
    if (sigil(T, '?', &s)) {
        need_macro(T, a, "stray macro parameter reference `?%.*s` outside a macro body", s);
        x = node(T, DW_T_PARAM, a); x->name = s; goto done;
    }
    if (sigil(T, '$', &s)) {
        need_macro(T, a, "stray macro binder reference `$%.*s`", s);
        x = node(T, DW_T_BINDER, a); x->name = s; goto done;
    }
    if (name(T, &s)) {
        x = node(T, streq_(s, "_") ? DW_T_WILDCARD : DW_T_VAR, a);
        x->name = s;
        goto done;
    }
done:
    T->depth--;
    return x;
}

/* named_args = IDENT {"." IDENT} ":" term { "," ... }, inside braces already opened */
static bool named_args(tp *T, dw_tnode *x, size_t *cap)
{
    if (lit(T, "}")) return true;
    do {
        ws(T);
        size_t a = T->pos;
        dw_str seg;
        if (!ident(T, &seg)) return false;
        for (;;) {
            size_t s2 = T->pos;
            if (!lit(T, ".") || !ident(T, &seg)) { T->pos = s2; break; }
        }
        dw_str path = dotted(T, a);
        if (!lit(T, ":")) return false;
        dw_tnode *t = term(T);
        if (!t) return false;
        if (x->nfields == *cap) {
            *cap = *cap ? *cap * 2 : 4;
            dw_tfield *nf = talloc(T, *cap * sizeof *nf);
            if (x->nfields) memcpy(nf, x->fields, x->nfields * sizeof *nf);
            x->fields = nf;
        }
        x->fields[x->nfields++] = (dw_tfield){ path, t, tloc(T, a, T->pos) };
    } while (lit(T, ","));
    return lit(T, "}");
}

/* refinable = ( predicate | "?" IDENT ) { "{" [named_args] "}" } */
static dw_tnode *refinable(tp *T)
{
    ws(T);
    size_t a = T->pos;
    dw_tnode *x = talloc(T, sizeof *x);
    size_t cap = 0;
    dw_str s;
    if (sigil(T, '?', &s)) {
        need_macro(T, a, "stray macro parameter reference `?%.*s` outside a macro body", s);
        x->kind = DW_T_PARAM;
        x->name = s;
        x->loc = tloc(T, a, T->pos);
        size_t s2 = T->pos;
        if (!lit(T, "{")) { T->pos = s2; return x; }
        T->pos = s2;
        dw_tnode *r = talloc(T, sizeof *r);
        r->kind = DW_T_REFINE;
        r->kids[0] = x;
        x = r;
    } else {
        dw_str type, id, kind;
        if (!entity(T, &type, &id) || !lit(T, "::") || !name(T, &kind) || !lit(T, "{")) { T->pos = a; return NULL; }
        x->kind = DW_T_PRED;
        x->type = type;
        x->str = id;
        x->ekind = kind;
        if (!named_args(T, x, &cap)) { T->pos = a; return NULL; }
    }
    for (;;) {   /* refinements P{a: 1}{b: 2} merge into one field list */
        size_t s2 = T->pos;
        if (!lit(T, "{")) { T->pos = s2; break; }
        if (!named_args(T, x, &cap)) { T->pos = a; return NULL; }
    }
    x->loc = tloc(T, a, T->pos);
    return x;
}

static bool cmp_op(tp *T, dw_tcmp *op)
{
    static const struct { const char *t; dw_tcmp op; } ops[] = {
        {"<=", DW_TC_LE}, {">=", DW_TC_GE}, {"!=", DW_TC_NE}, {"==", DW_TC_EQ}, {"<", DW_TC_LT}, {">", DW_TC_GT},
    };
    for (size_t i = 0; i < 6; i++) if (lit(T, ops[i].t)) { *op = ops[i].op; return true; }
    return false;
}

static dw_tnode *comparison(tp *T)
{
    ws(T);
    size_t a = T->pos;
    dw_tnode *l = term(T), *r;
    dw_tcmp op;
    if (!l || !cmp_op(T, &op) || !(r = term(T))) { T->pos = a; return NULL; }
    dw_tnode *x = node(T, DW_T_CMP, a);
    x->op = op;
    x->kids[0] = l;
    x->kids[1] = r;
    return x;
}

/* call = IDENT "(" [ call_arg { "," call_arg } ] ")";  call_arg = INTEGER UNIT | condition | term */
static dw_tnode *call(tp *T)
{
    ws(T);
    size_t a = T->pos;
    dw_str nm;
    if (!name(T, &nm) || !lit(T, "(")) { T->pos = a; return NULL; }
    if (!enter(T)) return NULL;
    dw_tnode *x = talloc(T, sizeof *x);
    size_t cap = 0;
    x->kind = DW_T_CALL;
    x->name = nm;
    if (!lit(T, ")")) {
        do {
            ws(T);
            size_t b = T->pos;
            dw_tnode *arg;
            int64_t secs;
            if (interval(T, &secs)) {
                /* an interval only if the argument ends here */
                size_t s2 = T->pos;
                if (lit(T, ",") || lit(T, ")")) { T->pos = s2; arg = node(T, DW_T_INTERVAL, b); arg->win.secs = secs; arg->win.loc = arg->loc; goto have; }
                T->pos = b;
            }
            if ((arg = condition(T))) {
                size_t s2 = T->pos;
                if (lit(T, ",") || lit(T, ")")) { T->pos = s2; goto have; }
                T->pos = b;
            }
            if (!(arg = term(T))) { T->pos = a; T->depth--; return NULL; }
        have:
            push(T, &x->args, &x->nargs, &cap, arg);
        } while (lit(T, ","));
        if (!lit(T, ")")) { T->pos = a; T->depth--; return NULL; }
    }
    T->depth--;
    x->loc = tloc(T, a, T->pos);
    return x;
}

static dw_tnode *tp_op(tp *T)
{
    ws(T);
    size_t a = T->pos;
    dw_tslot sl;
    if (!kw(T, "tp") || !lit(T, "(") || !binder_slot(T, &sl) || !lit(T, ")")) { T->pos = a; return NULL; }
    dw_tnode *x = node(T, DW_T_TP, a);
    x->slot = sl;
    return x;
}

static dw_tnode *paren(tp *T)
{
    ws(T);
    size_t a = T->pos;
    dw_tnode *c;
    if (!lit(T, "(") || !(c = condition(T)) || !lit(T, ")")) { T->pos = a; return NULL; }
    return c;
}

/* atom = "(" condition ")" | tp_op | call | refinable | comparison */
static dw_tnode *atom(tp *T)
{
    dw_tnode *x;
    size_t a = T->pos;
    if ((x = paren(T)) || (x = tp_op(T)) || (x = call(T)) || (x = refinable(T)) || (x = comparison(T))) return x;
    T->pos = a;
    return NULL;
}

static dw_tnode *temporal_op(tp *T)
{
    ws(T);
    size_t a = T->pos;
    dw_tkind k;
    if (kw(T, "formerly")) k = DW_T_FORMERLY;
    else if (kw(T, "previous")) k = DW_T_PREVIOUS;
    else return NULL;
    dw_twindow w = {0};
    dw_tnode *b;
    if (!within(T, &w) || !(b = atom(T))) { T->pos = a; return NULL; }
    dw_tnode *x = node(T, k, a);
    x->win = w;
    x->kids[0] = b;
    return x;
}

static dw_tnode *exists_op(tp *T)
{
    ws(T);
    size_t a = T->pos;
    dw_tnode *x = talloc(T, sizeof *x);
    x->kind = DW_T_EXISTS;
    x->binders = talloc(T, sizeof *x->binders);
    if (!kw(T, "exists") || !typed_binder(T, &x->binders[0]) || !lit(T, ".") || !(x->kids[0] = condition(T))) {
        T->pos = a;
        return NULL;
    }
    x->nbinders = 1;
    x->loc = tloc(T, a, T->pos);
    return x;
}

/* conjunct = comparison | "(" condition ")" | temporal_op | exists_op | tp_op | call | refinable */
static dw_tnode *conjunct(tp *T)
{
    dw_tnode *x;
    size_t a = T->pos;
    if ((x = comparison(T)) || (x = paren(T)) || (x = temporal_op(T)) || (x = exists_op(T)) ||
        (x = tp_op(T)) || (x = call(T)) || (x = refinable(T)))
        return x;
    T->pos = a;
    return NULL;
}

static dw_tnode *neg_conjunct(tp *T)
{
    ws(T);
    size_t a = T->pos;
    int nots = 0;
    while (lit(T, "!")) nots++;
    if (T->depth + nots > T_MAX_DEPTH) {   /* each `!` is one more level */
        terr(T, a, T->pos, "simplify the temporal body", "temporal body nested too deeply%.*s", "", 0);
        return NULL;
    }
    dw_tnode *x = conjunct(T);
    if (!x) { T->pos = a; return NULL; }
    while (nots--) {
        dw_tnode *n = node(T, DW_T_NOT, a);
        n->kids[0] = x;
        x = n;
    }
    return x;
}

static dw_tnode *conj_or_since(tp *T)
{
    ws(T);
    size_t a = T->pos;
    dw_tnode *l = neg_conjunct(T);
    if (!l) return NULL;
    size_t s2 = T->pos;
    if (kw(T, "since")) {
        dw_twindow w = {0};
        dw_tnode *r;
        if (within(T, &w) && (r = atom(T))) {
            dw_tnode *x = node(T, DW_T_SINCE, a);
            x->win = w;
            x->kids[0] = l;
            x->kids[1] = r;
            return x;
        }
        T->pos = a;
        return NULL;
    }
    T->pos = s2;
    return l;
}

/* condition = conj_or_since { "&&" conj_or_since } */
static dw_tnode *condition(tp *T)
{
    if (!enter(T)) return NULL;
    ws(T);
    size_t a = T->pos;
    dw_tnode *x = conj_or_since(T);
    int links = 0;   /* the chain is left-deep: each `&&` is one more level */
    while (x) {
        size_t s2 = T->pos;
        if (!lit(T, "&&")) { T->pos = s2; break; }
        if (T->depth + ++links > T_MAX_DEPTH) {
            terr(T, s2, T->pos, "simplify the temporal body or split it into rules", "temporal body nested too deeply%.*s", "", 0);
            x = NULL;
            break;
        }
        dw_tnode *r = conj_or_since(T);
        if (!r) { T->pos = s2; break; }
        dw_tnode *n = node(T, DW_T_AND, a);
        n->kids[0] = x;
        n->kids[1] = r;
        x = n;
    }
    T->depth--;
    return x;
}

/* ---- hints for the commonest slips at the failure point ---- */

/* the identifier ending just before q (whitespace skipped), or an empty one */
static dw_str word_before(const tp *T, size_t q)
{
    while (q > 0 && strchr(" \t\r\n", T->s[q - 1])) q--;
    size_t b = q;
    while (b > 0 && idch(T->s[b - 1])) b--;
    return (dw_str){ T->s + b, q - b };
}

/* A window written with another unit: the number of seconds one of it is, or 0. */
static int64_t unit_secs(dw_str u)
{
    static const struct { const char *name; int64_t secs; } units[] = {
        { "sec", 1 }, { "secs", 1 }, { "second", 1 }, { "seconds", 1 }, { "min", 60 }, { "mins", 60 },
        { "minute", 60 }, { "minutes", 60 }, { "hr", 3600 }, { "hrs", 3600 }, { "hour", 3600 }, { "hours", 3600 },
        { "day", 86400 }, { "days", 86400 }, { "w", 604800 }, { "wk", 604800 }, { "week", 604800 }, { "weeks", 604800 },
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (streq_(u, units[i].name)) return units[i].secs;
    return 0;
}

/* p..e is the unexpected text; true when a specific message was given */
static bool explain(tp *T, size_t p, size_t e)
{
    size_t d = p;                        /* a window: digits directly before a unit (`10min`) */
    while (d > 0 && T->s[d - 1] >= '0' && T->s[d - 1] <= '9') d--;
    if (d == p && T->s[p] >= '0' && T->s[p] <= '9') {
        while (p < T->n && T->s[p] >= '0' && T->s[p] <= '9') p++;
        while (e < T->n && idch(T->s[e])) e++;
    }
    dw_str pw = word_before(T, d);
    if (d < p) {                         /* d..p digits, p..e the unit */
        dw_str num = { T->s + d, p - d }, unit = { T->s + p, e - p };
        char hint[96];
        if (streq_(pw, "formerly") || streq_(pw, "since")) {
            snprintf(hint, sizeof hint, "write `%.*s within %.*s%.*s ...`", (int)pw.len, pw.s, (int)num.len, num.s, (int)unit.len, unit.s);
            terr(T, d, e, hint, "expected `within` after `%.*s`", pw.s, pw.len);
            return true;
        }
        if (streq_(pw, "within")) {
            int64_t m = unit_secs(unit), n = 0;
            for (size_t i = 0; i < num.len && n < INT64_MAX / 100; i++) n = n * 10 + (num.s[i] - '0');
            const char *u = m % 86400 == 0 ? "d" : m % 3600 == 0 ? "h" : m % 60 == 0 ? "m" : "s";
            int64_t per = *u == 'd' ? 86400 : *u == 'h' ? 3600 : *u == 'm' ? 60 : 1;
            if (m && n <= INT64_MAX / m) snprintf(hint, sizeof hint, "window units are s, m, h, d: write `%lld%s`", (long long)(n * (m / per)), u);
            else snprintf(hint, sizeof hint, "window units are s, m, h, d (seconds, minutes, hours, days)");
            terr(T, d, e, hint, "`%.*s` is not a window", T->s + d, e - d);
            return true;
        }
        return false;
    }
    dw_str w = { T->s + p, e - p };
    if (pw.len && !is_kw(pw.s, pw.len) && (streq_(w, "within") || (e > p && T->s[p] >= '0' && T->s[p] <= '9'))) {
        static const char *ops[] = { "formerly", "since", "previous" };
        size_t best = (size_t)-1;
        const char *hit = NULL;
        for (size_t i = 0; i < 3; i++) if (dw_hint_closer(pw.s, pw.len, ops[i], strlen(ops[i]), &best)) hit = ops[i];
        char hint[96];
        snprintf(hint, sizeof hint, hit ? "did you mean `%s`?" : "the temporal operators are `formerly`, `previous` and `since`", hit);
        size_t a = (size_t)(pw.s - T->s);
        terr(T, a, a + pw.len, hint, "`%.*s` is not a temporal operator", pw.s, pw.len);
        return true;
    }
    return false;
}

static void report(tp *T)
{
    size_t p = T->far < T->n ? T->far : T->n;
    while (p < T->n && strchr(" \t\r\n", T->s[p]) && T->s[p]) p++;
    if (p >= T->n) { terr(T, T->n, T->n, NULL, "unexpected end of temporal body%.*s", "", 0); return; }
    size_t e = p + 1;
    if (idch(T->s[p])) while (e < T->n && idch(T->s[e])) e++;
    else if (e < T->n && strchr("&|=<>!:", T->s[e]) && T->s[e]) e++;
    dw_str w = { T->s + p, e - p };
    /* `let x = ...` fails after `let` (an ordinary name): blame the `let` */
    size_t q = p;
    while (q > 0 && strchr(" \t\r\n", T->s[q - 1])) q--;
    if (q >= 3 && memcmp(T->s + q - 3, "let", 3) == 0 && (q == 3 || !idch(T->s[q - 4]))) {
        p = q - 3;
        e = q;
        w = (dw_str){ T->s + p, 3 };
    }
    if (p > 0 && T->s[p - 1] >= '0' && T->s[p - 1] <= '9' && explain(T, p, e)) return;
    if (streq_(w, "let"))
        terr(T, p, e, "bind an aggregate with `exists (n: Long). ((count ...) == n && ...)`",
             "`%.*s` is not recognized", w.s, w.len);
    else if (streq_(w, "||"))
        terr(T, p, e, "write separate rules, or separate clauses", "`%.*s` is not allowed in temporal bodies", w.s, w.len);
    else if (streq_(w, "once") || streq_(w, "previously") || streq_(w, "min") || streq_(w, "max") || streq_(w, "avg"))
        terr(T, p, e, "the temporal operators are `formerly`, `previous` and `since`; aggregates are `count` and `sum`",
             "`%.*s` is not a temporal operator", w.s, w.len);
    else if (!explain(T, p, e))
        terr(T, p, e, NULL, "unexpected `%.*s` in temporal body", w.s, w.len);
}

dw_temporal *dw_temporal_parse(dw_arena *a, const dw_source *src, dw_diags *diags,
                               uint32_t body_off, uint32_t body_len, dw_loc loc, dw_tmode mode)
{
    dw_temporal *t = dw_arena_alloc(a, sizeof *t);
    if (!t) return NULL;
    t->text.s = dw_arena_memdup(a, src->text + body_off, body_len);
    if (!t->text.s) return NULL;
    t->text.len = body_len;
    t->body_off = body_off;
    t->loc = loc;
    tp T0, *T = &T0;
    memset(T, 0, sizeof *T);
    T->A = a;
    T->src = src;
    T->diags = diags;
    T->s = src->text + body_off;
    T->n = body_len;
    T->base = body_off;
    T->mode = mode;
    if (setjmp(T->oom)) return NULL;
    dw_tnode *r = NULL;
    if (mode == DW_TMODE_MACRO) {
        /* §10.1: an aggregation expression first, then a condition */
        r = agg(T);
        if (r && r->kind != DW_T_CALL) {
            ws(T);
            if (T->pos == T->n) { t->root = r; t->is_aggregate = true; return t; }
        }
        T->pos = 0;
        T->depth = 0;
    }
    r = condition(T);
    ws(T);
    if (r && T->pos == T->n && !T->failed) { t->root = r; return t; }
    if (r && T->pos > T->far) T->far = T->pos;
    if (!T->failed) report(T);
    return t;
}

/* ---- printer ---- */

static void pwin(FILE *out, const dw_twindow *w)
{
    if (w->param.s) fprintf(out, "?%.*s", (int)w->param.len, w->param.s);
    else fprintf(out, "%llds", (long long)w->secs);
}

static void pslot(FILE *out, const dw_tslot *s)
{
    if (s->sigil) fputc(s->sigil, out);
    fprintf(out, "%.*s", (int)s->name.len, s->name.s);
}

static void pbinders(FILE *out, const dw_tnode *n)
{
    for (size_t i = 0; i < n->nbinders; i++) {
        fputs(" (", out);
        pslot(out, &n->binders[i].slot);
        fprintf(out, " %.*s)", (int)n->binders[i].type.len, n->binders[i].type.s);
    }
}

static void pfields(FILE *out, const dw_tnode *n)
{
    for (size_t i = 0; i < n->nfields; i++) {
        fprintf(out, " (%.*s ", (int)n->fields[i].path.len, n->fields[i].path.s);
        dw_tnode_print(out, n->fields[i].term);
        fputc(')', out);
    }
}

void dw_tnode_print(FILE *out, const dw_tnode *n)
{
    static const char *ops[] = { "==", "!=", "<", "<=", ">", ">=" };
    if (!n) { fputs("<null>", out); return; }
    switch (n->kind) {
    case DW_T_AND: fputs("(&& ", out); dw_tnode_print(out, n->kids[0]); fputc(' ', out); dw_tnode_print(out, n->kids[1]); fputc(')', out); break;
    case DW_T_NOT: fputs("(! ", out); dw_tnode_print(out, n->kids[0]); fputc(')', out); break;
    case DW_T_SINCE:
        fputs("(since ", out); pwin(out, &n->win); fputc(' ', out);
        dw_tnode_print(out, n->kids[0]); fputc(' ', out); dw_tnode_print(out, n->kids[1]); fputc(')', out);
        break;
    case DW_T_FORMERLY: case DW_T_PREVIOUS:
        fprintf(out, "(%s ", n->kind == DW_T_FORMERLY ? "formerly" : "previous");
        pwin(out, &n->win); fputc(' ', out); dw_tnode_print(out, n->kids[0]); fputc(')', out);
        break;
    case DW_T_EXISTS: fputs("(exists", out); pbinders(out, n); fputc(' ', out); dw_tnode_print(out, n->kids[0]); fputc(')', out); break;
    case DW_T_TP: fputs("(tp ", out); pslot(out, &n->slot); fputc(')', out); break;
    case DW_T_PRED:
        fprintf(out, "(pred %.*s::", (int)n->type.len, n->type.s);
        dw_str_print_quoted(out, n->str.s, n->str.len);
        fprintf(out, "::%.*s", (int)n->ekind.len, n->ekind.s);
        pfields(out, n); fputc(')', out);
        break;
    case DW_T_REFINE: fputs("(refine ", out); dw_tnode_print(out, n->kids[0]); pfields(out, n); fputc(')', out); break;
    case DW_T_CMP:
        fprintf(out, "(%s ", ops[n->op]); dw_tnode_print(out, n->kids[0]); fputc(' ', out);
        dw_tnode_print(out, n->kids[1]); fputc(')', out);
        break;
    case DW_T_CALL:
        fprintf(out, "(call %.*s", (int)n->name.len, n->name.s);
        for (size_t i = 0; i < n->nargs; i++) { fputc(' ', out); dw_tnode_print(out, n->args[i]); }
        fputc(')', out);
        break;
    case DW_T_PARAM: fprintf(out, "?%.*s", (int)n->name.len, n->name.s); break;
    case DW_T_LIT_LONG: fprintf(out, "%lld", (long long)n->i); break;
    case DW_T_LIT_STRING: dw_str_print_quoted(out, n->str.s, n->str.len); break;
    case DW_T_LIT_BOOL: fputs(n->b ? "true" : "false", out); break;
    case DW_T_LIT_DECIMAL: fputs("(decimal ", out); dw_str_print_quoted(out, n->str.s, n->str.len); fputc(')', out); break;
    case DW_T_LIT_ENTITY: fprintf(out, "%.*s::", (int)n->type.len, n->type.s); dw_str_print_quoted(out, n->str.s, n->str.len); break;
    case DW_T_ARRAY:
        fputs("[", out);
        for (size_t i = 0; i < n->nargs; i++) { if (i) fputc(' ', out); dw_tnode_print(out, n->args[i]); }
        fputc(']', out);
        break;
    case DW_T_CONTEXT: fprintf(out, "context.%.*s", (int)n->path.len, n->path.s); break;
    case DW_T_PRINCIPAL: case DW_T_RESOURCE:
        fputs(n->kind == DW_T_PRINCIPAL ? "principal" : "resource", out);
        if (n->path.len) fprintf(out, ".%.*s", (int)n->path.len, n->path.s);
        break;
    case DW_T_WILDCARD: fputc('_', out); break;
    case DW_T_VAR: fprintf(out, "%.*s", (int)n->name.len, n->name.s); break;
    case DW_T_BINDER: fprintf(out, "$%.*s", (int)n->name.len, n->name.s); break;
    case DW_T_COUNT: fputs("(count", out); pbinders(out, n); fputc(' ', out); dw_tnode_print(out, n->kids[0]); fputc(')', out); break;
    case DW_T_SUM:
        fputs("(sum ", out); pslot(out, &n->slot); pbinders(out, n); fputc(' ', out);
        dw_tnode_print(out, n->kids[0]); fputc(')', out);
        break;
    case DW_T_INTERVAL: pwin(out, &n->win); break;
    }
}

void dw_temporal_print(FILE *out, const dw_temporal *t)
{
    fputs(t->is_aggregate ? "(temporal-agg " : "(temporal ", out);
    if (t->root) dw_tnode_print(out, t->root);
    else dw_str_print_quoted(out, t->text.s, t->text.len);
    fputc(')', out);
}
