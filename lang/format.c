/* format.c - Cedar's layout of a policy set (format.h).
 *
 * Each function mirrors one of cedar-policy-formatter's `Doc` impls for a CST
 * node: the same documents (groups, nests, line kinds) and, as much as the
 * layout, the same order of taking comments from the side table, because a
 * comment goes to the first node that asks for the token it is attached to
 * (and a comment no node asks for is dropped, as Cedar drops it).  Where the
 * order looks arbitrary below, it is Cedar's. */
#include "format_int.h"
#include <stdio.h>
#include <string.h>

_Noreturn void fmt_fail(fmt_ctx *f, uint32_t tok, const char *msg)
{
    snprintf(f->err, sizeof f->err, "%s", msg);
    f->err_off = tok < f->c->ntoks ? f->c->toks[tok].off : (uint32_t)f->c->len;
    longjmp(f->fail, 1);
}

fmt_cmt fmt_take(fmt_ctx *f, uint32_t tok)
{
    if (tok >= f->c->ntoks) tok = 0;          /* Cedar: the first token when none follows */
    fmt_cmt r = { 0 };
    if (!f->c->ntoks) return r;
    fmt_tok *t = &f->c->toks[tok];
    r.lead = f->c->lines + t->lead;
    r.nlead = t->nlead;
    r.trail = t->trail;
    t->nlead = 0;
    t->trail.len = 0;
    return r;
}

static fmt_cmt take_lead(fmt_ctx *f, uint32_t tok)
{
    fmt_cmt r = { 0 };
    if (tok >= f->c->ntoks) return r;
    fmt_tok *t = &f->c->toks[tok];
    r.lead = f->c->lines + t->lead;
    r.nlead = t->nlead;
    t->nlead = 0;
    return r;
}

static uint32_t after(const fmt_node *x) { return x->last + 1; }

#define CAT(a, b) fmt_cat(&f->d, (a), (b))
#define TXT(z) fmt_textz(&f->d, (z))
#define NEST(n, a) fmt_nest(&f->d, (n), (a))
#define GROUP(a) fmt_group(&f->d, (a))
#define NIL (&fmt_nil_doc)

const fmt_doc *fmt_tok_text(fmt_ctx *f, uint32_t tok)
{
    const fmt_tok *t = &f->c->toks[tok];
    return fmt_text(&f->d, f->c->text + t->off, t->end - t->off);
}

static const fmt_doc *lead_doc(fmt_ctx *f, fmt_cmt c)
{
    if (!c.nlead) return NIL;
    const fmt_doc *d = fmt_hardline();
    for (uint32_t i = 0; i < c.nlead; i++) {
        if (i) d = CAT(d, fmt_hardline());
        d = CAT(d, fmt_text(&f->d, f->c->text + c.lead[i].off, c.lead[i].len));
    }
    return CAT(d, fmt_hardline());
}

static const fmt_doc *trail_doc(fmt_ctx *f, fmt_cmt c, const fmt_doc *next)
{
    if (!c.trail.len) return next;
    return CAT(CAT(fmt_space(), fmt_text(&f->d, f->c->text + c.trail.off, c.trail.len)), fmt_hardline());
}

const fmt_doc *fmt_add_comment(fmt_ctx *f, const fmt_doc *d, fmt_cmt c, const fmt_doc *next)
{
    const fmt_doc *l = lead_doc(f, c);
    return CAT(CAT(l, d), trail_doc(f, c, next));
}

const fmt_doc *fmt_tok_doc(fmt_ctx *f, uint32_t tok)
{
    return fmt_add_comment(f, fmt_tok_text(f, tok), fmt_take(f, tok), NIL);
}

/* Punctuation or a keyword Cedar prints itself, with the comments of token tok. */
static const fmt_doc *word(fmt_ctx *f, const char *z, uint32_t tok, const fmt_doc *next)
{
    return fmt_add_comment(f, TXT(z), fmt_take(f, tok), next);
}

/* Node<Ident>: its comments are those at the start of its span. */
static const fmt_doc *ident_doc(fmt_ctx *f, const fmt_node *x)
{
    return fmt_add_comment(f, fmt_tok_text(f, x->tok), fmt_take(f, x->first), NIL);
}

static const fmt_doc *doc(fmt_ctx *f, const fmt_node *x);

/* `e1 op e2 op ...` for || and &&: operator at the line's end. */
static const fmt_doc *bool_chain(fmt_ctx *f, const fmt_node *x, const char *op)
{
    const fmt_doc *d = NIL;
    for (size_t i = 0; i + 1 < x->nv; i++) {
        fmt_cmt c = fmt_take(f, after(x->v[i]));
        d = CAT(d, doc(f, x->v[i]));
        d = CAT(d, fmt_space());
        d = CAT(d, fmt_add_comment(f, TXT(op), c, fmt_line()));
    }
    return CAT(d, doc(f, x->v[x->nv - 1]));
}

/* Add and Mult: `e1 op e2 ...`, grouped. */
static const fmt_doc *arith(fmt_ctx *f, const fmt_node *x)
{
    const fmt_doc *d = doc(f, x->v[0]);
    for (size_t i = 1; i < x->nv; i++) {
        const fmt_doc *op = fmt_tok_text(f, x->ops[i]);
        d = CAT(d, fmt_space());
        d = CAT(d, fmt_add_comment(f, op, fmt_take(f, after(x->v[i - 1])), NIL));
        d = CAT(d, fmt_line());
        d = CAT(d, doc(f, x->v[i]));
    }
    return GROUP(d);
}

/* `e1, e2, ...` with each comma's comments (taken after the element before it). */
static const fmt_doc *commas(fmt_ctx *f, fmt_node *const *v, size_t n)
{
    if (!n) return NIL;
    const fmt_doc *d = doc(f, v[0]);
    for (size_t i = 1; i < n; i++) {
        d = CAT(d, word(f, ",", after(v[i - 1]), NIL));
        d = CAT(d, fmt_line());
        d = CAT(d, doc(f, v[i]));
    }
    return d;
}

/* Dogwood allows a comma before the closing token: keep that comma's comments. */
static const fmt_doc *trailing_comma(fmt_ctx *f, const fmt_node *last, uint32_t close)
{
    if (!last || last->last + 1 >= close) return NIL;
    return fmt_add_comment(f, NIL, fmt_take(f, last->last + 1), NIL);
}

static const fmt_doc *literal(fmt_ctx *f, const fmt_node *x)
{
    const fmt_tok *t = &f->c->toks[x->tok];
    const fmt_doc *text;
    if (t->kind == FT_NUM) {
        /* Cedar prints the number it read (a u64): leading zeros go */
        unsigned long long v = 0;
        for (uint32_t i = t->off; i < t->end; i++) {
            unsigned d = (unsigned)(f->c->text[i] - '0');
            if (v > (~0ULL - d) / 10) fmt_fail(f, x->tok, "integer literal too large");
            v = v * 10 + d;
        }
        text = fmt_textz(&f->d, dw_arena_printf_or_jump(f->d.A, f->d.oom, "%llu", v));
    } else {
        text = fmt_tok_text(f, x->tok);
    }
    return fmt_add_comment(f, text, fmt_take(f, x->first), NIL);
}

static const fmt_doc *name_doc(fmt_ctx *f, const fmt_node *x)
{
    if (!x->nv) return ident_doc(f, x->a);
    const fmt_doc *d = ident_doc(f, x->v[0]);
    for (size_t i = 1; i < x->nv; i++) {
        d = CAT(d, word(f, "::", after(x->v[i - 1]), NIL));
        d = CAT(d, ident_doc(f, x->v[i]));
    }
    d = CAT(d, word(f, "::", after(x->v[x->nv - 1]), NIL));
    return CAT(d, ident_doc(f, x->a));
}

static const fmt_doc *brackets(fmt_ctx *f, const fmt_node *x, const char *open, const char *close)
{
    const fmt_doc *inner = commas(f, x->v, x->nv);
    inner = CAT(inner, trailing_comma(f, x->nv ? x->v[x->nv - 1] : NULL, x->last));
    const fmt_doc *l = word(f, open, x->first, NIL);
    const fmt_doc *r = word(f, close, x->last, NIL);
    return CAT(CAT(l, NEST(1, inner)), r);
}

static const fmt_doc *access(fmt_ctx *f, const fmt_node *x)
{
    switch (x->kind) {
    case FN_FIELD: {
        const fmt_doc *dot = word(f, ".", x->first, NIL);
        return CAT(dot, ident_doc(f, x->a));
    }
    case FN_CALL: {
        const fmt_doc *open = word(f, "(", x->first, NIL);
        if (!x->nv) return CAT(open, word(f, ")", x->last, NIL));
        const fmt_doc *args = commas(f, x->v, x->nv);
        args = CAT(args, trailing_comma(f, x->v[x->nv - 1], x->last));
        const fmt_doc *d = NEST(f->ind, CAT(CAT(open, fmt_line_()), args));
        d = CAT(d, fmt_line_());
        return CAT(d, word(f, ")", x->last, NIL));
    }
    default: {   /* FN_INDEX */
        const fmt_doc *open = word(f, "[", x->first, NIL);
        const fmt_doc *d = CAT(open, doc(f, x->a));
        return CAT(d, word(f, "]", x->last, NIL));
    }
    }
}

static const fmt_doc *unary(fmt_ctx *f, const fmt_node *x)
{
    const fmt_doc *d = NIL;
    /* the operators' comments first, then the operand's */
    fmt_cmt cs[4];
    for (int i = 0; i < x->n; i++) cs[i] = fmt_take(f, x->tok + (uint32_t)i);
    const char *op = fmt_tok_is(f->c, x->tok, "!") ? "!" : "-";
    for (int i = 0; i < x->n; i++) d = CAT(d, fmt_add_comment(f, TXT(op), cs[i], NIL));
    return CAT(d, doc(f, x->a));
}

static const fmt_doc *member(fmt_ctx *f, const fmt_node *x)
{
    const fmt_doc *item = doc(f, x->a);
    const fmt_doc *acc = NIL;
    for (size_t i = 0; i < x->nv; i++) {
        if (i) acc = CAT(acc, fmt_line_());
        acc = CAT(acc, access(f, x->v[i]));
    }
    return GROUP(CAT(item, NEST(f->ind, acc)));
}

static const fmt_doc *if_part(fmt_ctx *f, const char *kw, fmt_cmt c, const fmt_node *e)
{
    const fmt_doc *k = fmt_add_comment(f, TXT(kw), c, NIL);
    return CAT(k, NEST(f->ind, CAT(fmt_line(), doc(f, e))));
}

static const fmt_doc *relation(fmt_ctx *f, const fmt_node *x)
{
    switch (x->kind) {
    case FN_REL: {
        if (x->nv == 1) return doc(f, x->v[0]);
        if (x->nv > 2) fmt_fail(f, x->ops[2], "chained relational operators");
        const fmt_doc *d = doc(f, x->v[0]);
        d = CAT(d, fmt_space());
        d = CAT(d, fmt_add_comment(f, fmt_tok_text(f, x->ops[1]), fmt_take(f, after(x->v[0])), NIL));
        d = CAT(d, fmt_space());
        return CAT(d, doc(f, x->v[1]));
    }
    case FN_HAS: case FN_LIKE: {
        const fmt_doc *d = doc(f, x->a);
        d = CAT(d, fmt_line());
        d = CAT(d, word(f, x->kind == FN_HAS ? "has" : "like", after(x->a), NIL));
        d = CAT(d, fmt_line());
        return GROUP(CAT(d, NEST(f->ind, doc(f, x->b))));
    }
    default: {   /* FN_ISIN */
        const fmt_doc *d = doc(f, x->a);
        d = CAT(d, fmt_space());
        d = CAT(d, word(f, "is", after(x->a), NIL));
        d = CAT(d, fmt_space());
        d = CAT(d, NEST(f->ind, doc(f, x->b)));
        if (x->c) {
            d = CAT(d, fmt_line());
            d = CAT(d, word(f, "in", after(x->b), NIL));
            d = CAT(d, fmt_space());
            d = CAT(d, NEST(f->ind, doc(f, x->c)));
        }
        return GROUP(d);
    }
    }
}

static const fmt_doc *doc(fmt_ctx *f, const fmt_node *x)
{
    switch (x->kind) {
    case FN_EXPR: return doc(f, x->a);
    case FN_IF: {
        fmt_cmt ic = fmt_take(f, x->first), tc = fmt_take(f, after(x->a)), ec = fmt_take(f, after(x->b));
        const fmt_doc *d = if_part(f, "if", ic, x->a);
        d = CAT(CAT(d, fmt_line()), if_part(f, "then", tc, x->b));
        d = CAT(CAT(d, fmt_line()), if_part(f, "else", ec, x->c));
        return GROUP(d);
    }
    case FN_OR: return bool_chain(f, x, "||");
    case FN_AND: return bool_chain(f, x, "&&");
    case FN_REL: case FN_HAS: case FN_LIKE: case FN_ISIN: return relation(f, x);
    case FN_ADD: case FN_MULT: return arith(f, x);
    case FN_UNARY: return unary(f, x);
    case FN_MEMBER: return member(f, x);
    case FN_IDENT: return ident_doc(f, x);
    case FN_NAME: return name_doc(f, x);
    case FN_LIT: return literal(f, x);
    case FN_STR: case FN_SLOT: return fmt_add_comment(f, fmt_tok_text(f, x->tok), fmt_take(f, x->first), NIL);
    case FN_TBLOCK: return fmt_add_comment(f, fmt_temporal_doc(f, x->tok), fmt_take(f, x->first), NIL);
    case FN_REF: {
        const fmt_doc *d = name_doc(f, x->a);
        d = CAT(d, word(f, "::", after(x->a), NIL));
        return CAT(d, doc(f, x->b));
    }
    case FN_PAREN: {
        const fmt_doc *d = word(f, "(", x->first, NIL);
        d = CAT(d, NEST(1, doc(f, x->a)));
        return GROUP(CAT(d, word(f, ")", x->last, NIL)));
    }
    case FN_LIST: return brackets(f, x, "[", "]");
    case FN_RECORD: {
        /* `{ k: v, ... }`, or one entry a line, indented, `}` back at the start */
        const fmt_doc *inner = commas(f, x->v, x->nv);
        inner = CAT(inner, trailing_comma(f, x->nv ? x->v[x->nv - 1] : NULL, x->last));
        const fmt_doc *l = word(f, "{", x->first, NIL);
        const fmt_doc *r = word(f, "}", x->last, NIL);
        if (!x->nv) return CAT(l, r);
        const fmt_doc *d = CAT(l, NEST(f->ind, CAT(fmt_line(), inner)));
        return GROUP(CAT(CAT(d, fmt_line()), r));
    }
    case FN_RECINIT: {
        const fmt_doc *k = doc(f, x->a), *v = doc(f, x->b);
        const fmt_doc *colon = word(f, ":", after(x->a), NIL);
        return CAT(CAT(CAT(k, colon), fmt_space()), v);
    }
    default: fmt_fail(f, x->first, "unexpected syntax");
    }
}

const fmt_doc *fmt_expr_doc(fmt_ctx *f, const fmt_node *x) { return doc(f, x); }

static const fmt_doc *vardef(fmt_ctx *f, const fmt_node *x)
{
    fmt_cmt sc = fmt_take(f, x->first);
    const fmt_doc *var = fmt_tok_text(f, x->a->tok);
    const fmt_doc *is = NIL;
    if (x->b) {
        fmt_cmt c1 = fmt_take(f, after(x->a));
        const fmt_doc *t = doc(f, x->b);
        fmt_cmt c2 = fmt_take(f, x->b->first);
        const fmt_doc *kw = GROUP(CAT(fmt_line(), fmt_add_comment(f, TXT("is"), c1, NIL)));
        is = GROUP(NEST(f->ind, CAT(kw, CAT(fmt_line(), fmt_add_comment(f, t, c2, NIL)))));
    }
    if (x->op == UINT32_MAX) return CAT(fmt_add_comment(f, var, sc, NIL), is);
    fmt_cmt oc = fmt_take(f, after(x->b ? x->b : x->a));
    const fmt_doc *d = CAT(CAT(var, trail_doc(f, sc, NIL)), is);
    d = CAT(d, fmt_line());
    d = GROUP(CAT(d, fmt_add_comment(f, fmt_tok_text(f, x->op), oc, NIL)));
    d = GROUP(CAT(d, NEST(f->ind, CAT(fmt_line(), doc(f, x->c)))));
    sc.trail.len = 0;
    return CAT(lead_doc(f, sc), d);
}

static const fmt_doc *cond(fmt_ctx *f, const fmt_node *x)
{
    if (x->c && x->c->kind == FN_TBLOCK) {      /* Dogwood: when temporal { ... } */
        fmt_cmt cc = fmt_take(f, x->a->first);
        const fmt_doc *d = CAT(lead_doc(f, cc), fmt_tok_text(f, x->a->tok));
        d = CAT(d, trail_doc(f, cc, fmt_space()));
        return CAT(d, doc(f, x->c));
    }
    const fmt_node *kw = x->b ? x->b : x->a;    /* Dogwood: when guardrails { ... } */
    fmt_cmt lb = fmt_take(f, after(kw)), rb = fmt_take(f, x->last), cc = fmt_take(f, x->a->first);
    const fmt_doc *rbd = fmt_add_comment(f, TXT("}"), rb, NIL);
    const fmt_doc *cd = ident_doc(f, x->a);
    if (x->b) cd = CAT(CAT(cd, fmt_space()), ident_doc(f, x->b));
    const fmt_doc *head = CAT(cd, trail_doc(f, cc, fmt_line()));
    head = CAT(head, lead_doc(f, (fmt_cmt){ lb.lead, lb.nlead, { 0, 0 } }));
    const fmt_doc *body;
    if (x->c) {
        fmt_cmt el = take_lead(f, x->c->first);
        const fmt_doc *e = doc(f, x->c);
        const fmt_doc *in = CAT(trail_doc(f, lb, fmt_line()), CAT(lead_doc(f, el), GROUP(e)));
        body = CAT(TXT("{"), GROUP(CAT(CAT(NEST(f->ind, in), fmt_line()), rbd)));
    } else {
        body = GROUP(CAT(CAT(TXT("{"), trail_doc(f, lb, fmt_line())), rbd));
    }
    cc.trail.len = 0;
    return CAT(lead_doc(f, cc), GROUP(CAT(head, body)));
}

static const fmt_doc *annotation(fmt_ctx *f, const fmt_node *x)
{
    const fmt_doc *id = ident_doc(f, x->a);
    const fmt_doc *at = word(f, "@", x->first, NIL);
    const fmt_doc *val = fmt_hardline();
    if (x->b) {
        const fmt_doc *lp = word(f, "(", after(x->a), NIL);
        const fmt_doc *v = doc(f, x->b);
        const fmt_doc *rp = word(f, ")", x->last, fmt_hardline());
        val = CAT(CAT(lp, v), rp);
    }
    return CAT(CAT(at, id), val);
}

static const fmt_doc *policy(fmt_ctx *f, const fmt_node *x)
{
    const fmt_doc *an = NIL;
    for (size_t i = 0; i < x->nv; i++) an = CAT(an, annotation(f, x->v[i]));
    fmt_cmt el = take_lead(f, x->a->first);
    const fmt_doc *eff = ident_doc(f, x->a);
    /* Cedar's scope has three elements; Dogwood's any number, in any order */
    const fmt_doc **vd = dw_arena_alloc_or_jump(f->d.A, (x->nw + 1) * sizeof *vd, f->d.oom);
    bool simple = true;
    for (size_t i = 0; i < x->nw; i++) {
        vd[i] = vardef(f, x->w[i]);
        simple &= !x->w[i]->b && x->w[i]->op == UINT32_MAX;
    }
    const fmt_doc *sep = simple ? fmt_space() : fmt_hardline();
    const fmt_doc *vars = NIL;
    for (size_t i = 0; i < x->nw; i++) {
        vars = CAT(vars, vd[i]);
        if (i + 1 < x->nw) vars = CAT(vars, word(f, ",", after(x->w[i]), sep));
    }
    const fmt_node *lastv = x->nw ? x->w[x->nw - 1] : NULL;
    vars = CAT(vars, trailing_comma(f, lastv, x->tok));
    if (simple) vars = GROUP(NEST(f->ind, vars));
    else vars = CAT(NEST(f->ind, CAT(fmt_hardline(), vars)), fmt_hardline());
    const fmt_doc *conds = NIL;
    for (size_t i = 0; i < x->nx; i++) {
        if (i) conds = CAT(conds, fmt_hardline());
        conds = CAT(conds, cond(f, x->x[i]));
    }
    const fmt_doc *head = GROUP(CAT(CAT(eff, fmt_line()), word(f, "(", after(x->a), NIL)));
    const fmt_doc *d = CAT(CAT(an, lead_doc(f, el)), head);
    d = CAT(CAT(d, vars), word(f, ")", x->tok, x->nx ? fmt_hardline() : NIL));
    d = CAT(d, conds);
    return CAT(d, word(f, ";", x->last, NIL));
}

int dw_format_layout(const char *text, size_t len, const dw_format_opts *o, dw_buf *out,
                     char *err, size_t errcap, uint32_t *err_off)
{
    dw_arena A;
    dw_arena_init(&A, 0);
    jmp_buf oom;
    fmt_cst cst;
    dw_buf one = { 0 };
    volatile int rc = -1;
    if (setjmp(oom)) goto done;
    if (!fmt_cst_read(&cst, text, len, &A, &oom)) {
        snprintf(err, errcap, "%s", cst.err);
        *err_off = cst.err_off;
        rc = 1;
        goto done;
    }
    fmt_ctx f = { .d = { &A, &oom }, .c = &cst, .ind = o->indent_width };
    if (setjmp(f.fail)) {
        snprintf(err, errcap, "%s", f.err);
        *err_off = f.err_off;
        rc = 1;
        goto done;
    }
    for (size_t i = 0; i < cst.nitems; i++) {
        const fmt_node *x = cst.items[i];
        const fmt_doc *d = x->kind == FN_MACRO ? fmt_macro_doc(&f, x) : policy(&f, x);
        one.len = 0;
        if (fmt_render(d, o->line_width, &one)) goto done;
        if (i && dw_buf_append(out, "\n\n", 2)) goto done;
        if (fmt_remove_empty_lines(one.p, one.len, out)) goto done;
    }
    if (dw_buf_putc(out, '\n')) goto done;
    for (size_t i = 0; i < cst.neof; i++)
        if (dw_buf_append(out, text + cst.eof[i].off, cst.eof[i].len) || dw_buf_putc(out, '\n')) goto done;
    rc = 0;
done:
    dw_buf_free(&one);
    dw_arena_free(&A);
    return rc;
}
