/* parser.y - the .dw core grammar (dogwood.md §3), a pure bison parser over
 * the reentrant flex lexer in lexer.l.  Semantic checks that Cedar performs
 * after parsing (reserved names, scope shapes, arities ...) are reported from
 * the actions so one run reports every error; after a syntax error the parser
 * resynchronises at the next top-level `;`.
 *
 * No %expect: the grammar is conflict-free.  The one shift/reduce choice
 * (`e is T` followed by `in`: `is T in E` wins over a chained `in`) is settled
 * by precedence declarations. */

%code requires {
#include <setjmp.h>
#include "ast.h"
#include "tast.h"

/* An arena-backed growable array (parser values must not own heap memory,
 * so error recovery can drop them without leaking). */
typedef struct dw_pvec { void *v; size_t n, cap; } dw_pvec;

/* A `::`-separated path as written: joined text, segment count, span. */
typedef struct dw_ppath { dw_str text; size_t nsegs; dw_loc loc; } dw_ppath;

/* A name with its location (attribute segments, params). */
typedef struct dw_pname { dw_str s; dw_loc loc; } dw_pname;

/* One element of a scope before it is assigned to principal/action/resource. */
typedef enum { DW_PS_OK, DW_PS_COLON, DW_PS_ASSIGN, DW_PS_BADOP, DW_PS_IS_EQ, DW_PS_EQ_LIST } dw_pscope_err;
typedef struct dw_pscope {
    dw_str var; dw_loc var_loc;
    dw_scope_con con;
    dw_pscope_err err; dw_loc err_loc; dw_str err_tok;
    bool slot_bad; dw_loc slot_loc;      /* target is a slot (checked per variable) */
} dw_pscope;

/* Shared lexer + parser state (flex's yyextra). */
typedef struct dw_parser {
    const dw_source *src;
    dw_diags *diags;
    dw_arena *A;
    jmp_buf oom;
    /* lexer */
    uint32_t line, col, off;
    int start_tok;             /* first token to return (START_SET / START_EXPR) */
    int depth;                 /* bracket nesting, to refuse absurd nesting early */
    bool item_start;           /* at the start of a top-level item */
    int def_state;             /* 0, 1 after `def`, 2 in def cedar, 3 in def temporal */
    int tb_depth;              /* brace depth inside a captured temporal body */
    uint32_t tb_body_off;
    dw_loc tb_loc;
    int prev_tok, cur_tok;     /* for syntax-error messages */
    bool fatal;                /* stop reporting: the lexer already explained */
    dw_loc mls_loc;            /* the last string literal that spans lines (a missing `"` */
    uint32_t mls_end_line;     /*   makes one run to the next string), and its last line */
    /* parser */
    dw_expr *bare_lit;         /* INTEGER primary not (yet) wrapped: `-N` folds into it */
    dw_expr *big_lit;          /* the literal 9223372036854775808, legal only negated */
    bool depth_reported;       /* one "nested too deeply" per item */
    size_t has_copy_left;      /* nodes `has`-path desugaring may still copy (DW_HAS_PATH_MAX_NODES) */
    bool has_copy_refused;     /* reported once: the parse has failed, expand no more */
    uint32_t chain_off;        /* 1 + start offset of the last reported relational chain */
    bool template_slot;        /* current policy mentions ?principal / ?resource */
    dw_pvec *policies, *macros;
    dw_expr *expr_result;
} dw_parser;
}

%code provides {
#define YYSTYPE DW_YYSTYPE
#define YYLTYPE DW_YYLTYPE
int dw_yylex(DW_YYSTYPE *lval, DW_YYLTYPE *lloc, void *scanner);
}

%code {
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "strlit.h"

/* dw_loc has no first/last fields: a span runs from the first symbol's
 * start to the last symbol's end; an empty rule sits at the previous end. */
#define YYLLOC_DEFAULT(Cur, Rhs, N) do {                                 \
    if (N) {                                                             \
        (Cur).line = YYRHSLOC(Rhs, 1).line; (Cur).col = YYRHSLOC(Rhs, 1).col; \
        (Cur).off = YYRHSLOC(Rhs, 1).off; (Cur).end = YYRHSLOC(Rhs, N).end; \
    } else {                                                             \
        (Cur) = YYRHSLOC(Rhs, 0); (Cur).off = (Cur).end;                 \
    }                                                                    \
} while (0)

static void dw_yyerror(DW_YYLTYPE *loc, void *scanner, dw_parser *P, const char *msg);

static void *palloc(dw_parser *P, size_t n)
{
    void *p = dw_arena_alloc(P->A, n);
    if (!p) longjmp(P->oom, 1);
    return p;
}

static dw_str pstr(dw_parser *P, const char *s, size_t n)
{
    char *p = dw_arena_memdup(P->A, s, n);
    if (!p) longjmp(P->oom, 1);
    return (dw_str){ p, n };
}

static void *vpush(dw_parser *P, dw_pvec **vp, size_t esz)
{
    dw_pvec *v = *vp;
    if (!v) *vp = v = palloc(P, sizeof *v);
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 4;
        void *nv = palloc(P, cap * esz);
        if (v->n) memcpy(nv, v->v, v->n * esz);
        v->v = nv;
        v->cap = cap;
    }
    return (char *)v->v + esz * v->n++;
}

/* After a fatal lexer error (runaway nesting, unterminated literal) the rest
 * of the parse only unwinds: stay quiet instead of cascading. */
#define ERR(loc, ...) do { if (!P->fatal) dw_error(P->diags, P->src, (loc), __VA_ARGS__); } while (0)
#define ERRH(loc, hint, ...) do { if (!P->fatal) dw_error_hint(P->diags, P->src, (loc), (hint), __VA_ARGS__); } while (0)

static bool streq(dw_str s, const char *lit) { return s.len == strlen(lit) && memcmp(s.s, lit, s.len) == 0; }
#define PS(x_) (int)(x_).len, (x_).s

static dw_expr *mk(dw_parser *P, dw_expr_kind k, dw_loc loc)
{
    dw_expr *e = dw_expr_new(P->A, k, loc);
    if (!e) longjmp(P->oom, 1);
    return e;
}

/* Set depth; refuse expressions deeper than §19's limit (once per item). */
static dw_expr *fin(dw_parser *P, dw_expr *e)
{
    e->depth = dw_expr_compute_depth(e);
    if (e->depth > DW_MAX_EXPR_DEPTH && !P->depth_reported) {
        P->depth_reported = true;
        ERRH(e->loc, "simplify the expression or split it with a macro", "expression nested too deeply");
    }
    return e;
}

static dw_expr *bin(dw_parser *P, dw_expr_kind k, dw_expr *a, dw_expr *b, dw_loc loc)
{
    dw_expr *e = mk(P, k, loc);
    e->u.kids[0] = a;
    e->u.kids[1] = b;
    return fin(P, e);
}

/* A member that is used other than directly negated: 9223372036854775808 is too large. */
static dw_expr *used(dw_parser *P, dw_expr *e)
{
    if (e && e == P->big_lit) {
        P->big_lit = NULL;
        ERRH(e->loc, "only `-9223372036854775808` (direct negation) may use this magnitude",
             "integer literal `9223372036854775808` is too large");
    }
    return e;
}

static dw_str decode_str(dw_parser *P, dw_str raw, dw_loc loc)
{
    dw_str out = { "", 0 };
    dw_strlit_err err;
    if (!dw_strlit_decode(P->A, raw.s, raw.len, &out, &err)) {
        if (!err.len) longjmp(P->oom, 1);
        uint32_t at = (uint32_t)(raw.s - P->src->text + err.off);
        ERRH(dw_loc_at(P->src, at, at + (uint32_t)err.len), err.hint, err.msg, (int)err.len, raw.s + err.off);
        return (dw_str){ "", 0 };
    }
    (void)loc;
    return out;
}

static bool check_ident(dw_parser *P, dw_str s, dw_loc loc)
{
    if (streq(s, "__cedar")) {
        ERR(loc, "the name `__cedar` is reserved and cannot be used");
        return false;
    }
    return true;
}

static void reserved_err(dw_parser *P, dw_str s, dw_loc loc)
{
    ERRH(loc, "quote it instead, e.g. `e[\"if\"]`, `e has \"if\"` or `{\"if\": 1}`",
         "this identifier is reserved and cannot be used: %.*s", PS(s));
}

static dw_ppath path1(dw_parser *P, dw_str s, dw_loc loc)
{
    check_ident(P, s, loc);
    return (dw_ppath){ pstr(P, s.s, s.len), 1, loc };
}

static dw_ppath path_add(dw_parser *P, dw_ppath p, dw_str seg, dw_loc loc)
{
    check_ident(P, seg, loc);
    char *t = palloc(P, p.text.len + 2 + seg.len + 1);
    memcpy(t, p.text.s, p.text.len);
    memcpy(t + p.text.len, "::", 2);
    memcpy(t + p.text.len + 2, seg.s, seg.len);
    p.text = (dw_str){ t, p.text.len + 2 + seg.len };
    p.nsegs++;
    p.loc.end = loc.end;
    return p;
}

static bool is_ext_ctor(dw_str n)
{
    return streq(n, "decimal") || streq(n, "ip") || streq(n, "datetime") || streq(n, "duration");
}

/* `e.m(...)` with a non-Cedar m is legal only on a provider call or on
 * another provider output method (§3.8, §13.1). */
static bool provider_chain(const dw_expr *e)
{
    while (e && e->kind == DW_E_METHOD && !dw_is_cedar_method(e->u.call.name.s, e->u.call.name.len, NULL))
        e = e->u.call.recv;
    return e && e->kind == DW_E_CALL && e->u.call.nsegs >= 2;
}

static void args_to(dw_parser *P, dw_pvec *v, dw_expr ***args, size_t *n)
{
    *args = v ? v->v : NULL;
    *n = v ? v->n : 0;
}

static dw_expr *mk_call(dw_parser *P, dw_ppath *p, dw_pvec *args, dw_loc loc)
{
    dw_expr *e = mk(P, DW_E_CALL, loc);
    e->u.call.name = p->text;
    e->u.call.nsegs = p->nsegs;
    e->u.call.name_loc = p->loc;
    args_to(P, args, &e->u.call.args, &e->u.call.nargs);
    if (P->def_state == 2) {
        if (p->nsegs >= 2)
            ERR(p->loc, "a `def cedar` body cannot contain a provider call (`%.*s`)", PS(p->text));
        else if (!is_ext_ctor(p->text))
            ERRH(p->loc, "nest macros through call-site arguments instead", "macro-in-macro is not supported (call to `%.*s`)", PS(p->text));
    }
    return fin(P, e);
}

static dw_expr *mk_method(dw_parser *P, dw_expr *recv, dw_pname name, dw_pvec *args, dw_loc loc)
{
    dw_expr *e = mk(P, DW_E_METHOD, loc);
    e->u.call.recv = recv;
    e->u.call.name = pstr(P, name.s.s, name.s.len);
    e->u.call.name_loc = name.loc;
    args_to(P, args, &e->u.call.args, &e->u.call.nargs);
    int arity;
    if (dw_is_cedar_method(name.s.s, name.s.len, &arity)) {
        if (arity >= 0 && e->u.call.nargs != (size_t)arity)
            ERR(loc, "call to `%.*s` requires exactly %d argument%s, but got %zu argument%s", PS(name.s),
                arity, arity == 1 ? "" : "s", e->u.call.nargs, e->u.call.nargs == 1 ? "" : "s");
    } else if (!provider_chain(recv)) {
        ERRH(name.loc, "only Cedar methods may be called here; provider output methods follow a `Ns::Fn(...)` call",
             "unknown method `%.*s`", PS(name.s));
    }
    return fin(P, e);
}

static dw_expr *mk_getattr(dw_parser *P, dw_expr *obj, dw_str attr, dw_loc loc)
{
    dw_expr *e = mk(P, DW_E_GETATTR, loc);
    e->u.attr.kids0 = obj;
    e->u.attr.attr = attr;
    return fin(P, e);
}

/* `e has a.b.c` = `e has a && e.a has b && e.a.b has c` (§3.6). */
static dw_expr *mk_has(dw_parser *P, dw_expr *obj, dw_pvec *segs, dw_loc loc, dw_loc has_loc)
{
    dw_pname *s = segs->v;
    dw_expr *acc = NULL;
    size_t n = segs->n;
    if (n > DW_MAX_EXPR_DEPTH) {   /* the desugaring is quadratic: refuse early */
        if (!P->depth_reported)
            ERRH(loc, "simplify the expression or split it with a macro", "expression nested too deeply");
        P->depth_reported = true;
        n = 1;
    }
    if (n > 1 && P->has_copy_refused) n = 1;
    if (n > 1 && obj->depth <= DW_MAX_EXPR_DEPTH) {
        /* each name after the first copies obj: a path over a parenthesised path, k deep, is 3^k nodes */
        size_t copies = dw_expr_count_nodes(obj, P->has_copy_left / (n - 1) + 1) * (n - 1);
        if (copies > P->has_copy_left) {
            ERRH(has_loc, "split the expression or name the path in a macro",
                 "`has` path too large to expand: `e has a.b` is `e has a && e.a has b`, and the copies of `e` "
                 "pass this input's limit of %zu syntax nodes",
                 (size_t)DW_HAS_PATH_MAX_NODES + DW_HAS_PATH_NODES_PER_BYTE * P->src->len);
            P->has_copy_refused = true;
            n = 1;
        } else P->has_copy_left -= copies;
    }
    for (size_t k = 0; k < n; k++) {
        dw_expr *base = obj;
        /* each conjunct gets its own copy, so the tree stays a tree */
        if (k > 0 && obj->depth <= DW_MAX_EXPR_DEPTH && !(base = dw_expr_clone(P->A, obj))) longjmp(P->oom, 1);
        for (size_t j = 0; j < k; j++) base = mk_getattr(P, base, s[j].s, loc);
        dw_expr *h = mk(P, DW_E_HAS, loc);
        h->u.attr.kids0 = base;
        h->u.attr.attr = s[k].s;
        fin(P, h);
        if (acc) { acc = bin(P, DW_E_AND, acc, h, loc); acc->sugar |= DW_SUGAR_HAS_PATH; }
        else acc = h;
    }
    return acc;
}

static dw_expr *mk_rel(dw_parser *P, int op, dw_expr *a, dw_expr *b, dw_loc loc)
{
    return bin(P, (dw_expr_kind)op, a, b, loc);
}

static void chain_err(dw_parser *P, dw_loc start, dw_loc loc)
{
    /* one report per chain, however long */
    if (P->chain_off == start.off + 1) return;
    P->chain_off = start.off + 1;
    ERRH(loc, "use parentheses",
         "multiple relational operators (>, ==, in, etc.) must be used with parentheses to make ordering explicit");
}

static dw_expr *mk_like(dw_parser *P, dw_expr *a, dw_str raw, dw_loc sloc, dw_loc loc)
{
    dw_expr *e = mk(P, DW_E_LIKE, loc);
    e->u.like.kids0 = a;
    e->u.like.raw = pstr(P, raw.s, raw.len);
    dw_strlit_err err;
    if (!dw_like_decode(P->A, raw.s, raw.len, &e->u.like.pat, &err)) {
        if (!err.len) longjmp(P->oom, 1);
        uint32_t at = (uint32_t)(raw.s - P->src->text + err.off);
        ERRH(dw_loc_at(P->src, at, at + (uint32_t)err.len), err.hint, err.msg, (int)err.len, raw.s + err.off);
        static const dw_str empty = { "", 0 };
        e->u.like.pat.nseg = 1;
        e->u.like.pat.seg = &empty;
    }
    (void)sloc;
    return fin(P, e);
}

static dw_expr *mk_is(dw_parser *P, dw_expr *a, dw_ppath *t, dw_expr *in, dw_loc loc)
{
    dw_expr *e = mk(P, DW_E_IS, loc);
    e->u.is.kids0 = a;
    e->u.is.type = t->text;
    e->u.is.in = in;
    return fin(P, e);
}

static dw_expr *mk_var(dw_parser *P, dw_ppath *p, dw_loc loc)
{
    dw_expr *e = mk(P, DW_E_VAR, loc);
    static const char *names[] = { "principal", "action", "resource", "context" };
    if (p->nsegs == 1)
        for (int i = 0; i < 4; i++)
            if (streq(p->text, names[i])) { e->u.var = (dw_var)i; return e; }
    if (p->nsegs == 1)
        ERRH(loc, "the variables are `principal`, `action`, `resource` and `context`; did you mean to quote it as a string?",
             "`%.*s` is not a valid variable", PS(p->text));
    else
        ERRH(loc, "an entity reference needs a quoted id, e.g. `Ns::Type::\"id\"`",
             "`%.*s` is not a valid expression", PS(p->text));
    return e;
}

static dw_expr *mk_slot(dw_parser *P, dw_str name, dw_loc loc)
{
    dw_expr *e = mk(P, DW_E_SLOT, loc);
    e->u.name = pstr(P, name.s, name.len);
    if (streq(name, "principal") || streq(name, "resource")) {
        if (P->def_state == 0)      /* Cedar: a slot belongs to the scope alone */
            ERRH(loc, "a template slot may only be used in the policy scope, e.g. `principal == ?principal`",
                 "found template slot ?%.*s in a condition", PS(name));
        else if (P->def_state != 2) P->template_slot = true;
    } else if (P->def_state != 2) {
        ERRH(loc, "`?name` parameters may only be used inside a `def` body",
             "stray macro parameter reference `?%.*s` outside a macro body", PS(name));
    }
    return e;
}

static dw_expr *mk_unary(dw_parser *P, int n, bool neg, dw_expr *m, dw_loc oploc, dw_loc loc)
{
    if (n > 4)
        ERRH(oploc, "Cedar allows at most 4 repeated unary operators",
             "too many occurrences of `%s`", neg ? "-" : "!");
    if (neg && m == P->bare_lit && m->kind == DW_E_LONG) {
        /* `-N` directly before a literal folds into it; only the innermost `-` */
        if (m == P->big_lit) P->big_lit = NULL;
        else m->u.i = -m->u.i;
        m->loc.off = loc.off + (uint32_t)(n - 1);   /* approximate: the last `-` */
        m->loc = dw_loc_at(P->src, m->loc.off, m->loc.end);
        P->bare_lit = NULL;
        n--;
    } else {
        used(P, m);
    }
    dw_expr *e = m;
    for (int i = 0; i < n; i++) {
        dw_expr *u = mk(P, neg ? DW_E_NEG : DW_E_NOT, loc);
        u->u.kids[0] = e;
        e = fin(P, u);
    }
    return e;
}

static dw_euid_lit mk_euid(dw_parser *P, dw_ppath *p, dw_str raw, dw_loc sloc, dw_loc loc)
{
    dw_euid_lit u;
    u.type = p->text;
    u.id = decode_str(P, raw, sloc);
    u.loc = loc;
    return u;
}

static void add_policy(dw_parser *P, dw_pvec *annots, dw_str eff, dw_loc eff_loc,
                       dw_pvec *scope, dw_pvec *clauses, dw_loc loc);
static void add_macro(dw_parser *P, bool cedar, dw_str name, dw_loc name_loc, dw_pvec *params,
                      dw_expr *body, dw_str tbody, dw_loc tloc, dw_loc loc);
static dw_temporal *temporal_leaf(dw_parser *P, dw_str body, dw_loc loc, dw_tmode mode);
static void item_reset(dw_parser *P) { P->depth_reported = false; P->template_slot = false; }
}

%define api.pure full
%define api.prefix {dw_yy}
%define api.location.type {dw_loc}
%define parse.error custom
%locations
%lex-param {void *scanner}
%parse-param {void *scanner} {dw_parser *P}

%union {
    dw_str s;
    dw_expr *e;
    dw_pvec *v;
    dw_ppath path;
    dw_pname name;
    dw_euid_lit uid;
    dw_pscope *sc;
    int n;
}

%token START_SET START_EXPR
%token <s> IDENT "identifier" STRING "string literal" INTEGER "integer literal"
%token <s> SLOT "`?name`" BINDER "`$name`" TBLOCK "`temporal { ... }`"
%token TRUE "`true`" FALSE "`false`" IF "`if`" THEN "`then`" ELSE "`else`"
%token IN "`in`" IS "`is`" LIKE "`like`" HAS "`has`"
%token EQ "`==`" NE "`!=`" LE "`<=`" GE "`>=`" AND "`&&`" OR "`||`" COLONCOLON "`::`"
%token DEF "`def`" KW_CEDAR "`cedar`" KW_TEMPORAL "`temporal`"

/* `e is T` then `in`: shift, so `is T in E` wins over a chained relation. */
%precedence IS_NOIN
%precedence IN

%type <e> expr or and relation relchain add mult unary member member_np primary_np
%type <v> annots scope_opt scope_list clauses exprs_opt exprlist recinits_opt recinits
%type <v> uids_opt uids attrpath params_opt params
%type <path> path
%type <name> attrname anyname recinit_key
%type <uid> ref
%type <sc> scope_el target
%type <n> relop badop nots negs
%type <s> reserved

%%

top:
  START_SET items
| START_EXPR expr { P->expr_result = $2; }
;

items:
  %empty
| items item
;

item:
  policy
| macro_def
| error ';' { item_reset(P); P->bare_lit = P->big_lit = NULL; }
;

policy:
  annots IDENT '(' scope_opt ')' clauses ';' {
      add_policy(P, $1, $2, @2, $4, $6, @$);
      item_reset(P);
  }
;

macro_def:
  DEF KW_CEDAR IDENT '(' params_opt ')' '{' expr '}' ';' {
      add_macro(P, true, $3, @3, $5, $8, (dw_str){0}, @7, @$);
      item_reset(P);
  }
| DEF KW_TEMPORAL IDENT '(' params_opt ')' TBLOCK ';' {
      add_macro(P, false, $3, @3, $5, NULL, $7, @7, @$);
      item_reset(P);
  }
;

params_opt:
  %empty { $$ = NULL; }
| params
;

params:
  SLOT { $$ = NULL; dw_pname *n = vpush(P, &$$, sizeof *n); n->s = pstr(P, $1.s, $1.len); n->loc = @1; }
| params ',' SLOT { $$ = $1; dw_pname *n = vpush(P, &$$, sizeof *n); n->s = pstr(P, $3.s, $3.len); n->loc = @3; }
;

annots:
  %empty { $$ = NULL; }
| annots '@' anyname {
      $$ = $1;
      dw_annotation *a = vpush(P, &$$, sizeof *a);
      a->key = $3.s; a->loc = @$; a->loc.off = @2.off; a->loc.line = @2.line; a->loc.col = @2.col;
  }
| annots '@' anyname '(' STRING ')' {
      $$ = $1;
      dw_annotation *a = vpush(P, &$$, sizeof *a);
      a->key = $3.s; a->has_value = true; a->value = decode_str(P, $5, @5);
      a->loc = @$; a->loc.off = @2.off; a->loc.line = @2.line; a->loc.col = @2.col;
  }
;

anyname:
  IDENT { $$.s = pstr(P, $1.s, $1.len); $$.loc = @1; }
| reserved { $$.s = $1; $$.loc = @1; }
;

reserved:
  TRUE { $$ = (dw_str){ "true", 4 }; }
| FALSE { $$ = (dw_str){ "false", 5 }; }
| IF { $$ = (dw_str){ "if", 2 }; }
| THEN { $$ = (dw_str){ "then", 4 }; }
| ELSE { $$ = (dw_str){ "else", 4 }; }
| IN { $$ = (dw_str){ "in", 2 }; }
| IS { $$ = (dw_str){ "is", 2 }; }
| LIKE { $$ = (dw_str){ "like", 4 }; }
| HAS { $$ = (dw_str){ "has", 3 }; }
;

/* ---- scope (§3.4) ---- */

scope_opt:
  %empty { $$ = NULL; }
| scope_list
| scope_list ','
;

scope_list:
  scope_el { $$ = NULL; *(dw_pscope **)vpush(P, &$$, sizeof(dw_pscope *)) = $1; }
| scope_list ',' scope_el { $$ = $1; *(dw_pscope **)vpush(P, &$$, sizeof(dw_pscope *)) = $3; }
;

scope_el:
  IDENT { $$ = palloc(P, sizeof *$$); $$->var = pstr(P, $1.s, $1.len); $$->var_loc = @1; $$->con.kind = DW_SC_ANY; $$->con.loc = @$; }
| IDENT EQ target { $$ = $3; $$->var = pstr(P, $1.s, $1.len); $$->var_loc = @1; $$->con.kind = DW_SC_EQ; $$->con.loc = @$; }
| IDENT IN target { $$ = $3; $$->var = pstr(P, $1.s, $1.len); $$->var_loc = @1; $$->con.kind = DW_SC_IN; $$->con.loc = @$; }
| IDENT IN '[' uids_opt ']' {
      $$ = palloc(P, sizeof *$$); $$->var = pstr(P, $1.s, $1.len); $$->var_loc = @1;
      $$->con.kind = DW_SC_IN_LIST; $$->con.loc = @$;
      if ($4) { $$->con.list = $4->v; $$->con.nlist = $4->n; }
  }
| IDENT EQ '[' uids_opt ']' {
      $$ = palloc(P, sizeof *$$); $$->var = pstr(P, $1.s, $1.len); $$->var_loc = @1;
      $$->con.kind = DW_SC_IN_LIST; $$->con.loc = @$; $$->err = DW_PS_EQ_LIST; $$->err_loc = @3;
  }
| IDENT IS path %prec IS_NOIN {
      $$ = palloc(P, sizeof *$$); $$->var = pstr(P, $1.s, $1.len); $$->var_loc = @1;
      $$->con.kind = DW_SC_IS; $$->con.loc = @$; $$->con.is_type = $3.text;
  }
| IDENT IS path IN target {
      $$ = $5; $$->var = pstr(P, $1.s, $1.len); $$->var_loc = @1;
      $$->con.kind = DW_SC_IS_IN; $$->con.loc = @$; $$->con.is_type = $3.text;
  }
| IDENT IS path EQ target {
      $$ = $5; $$->var = pstr(P, $1.s, $1.len); $$->var_loc = @1;
      $$->con.kind = DW_SC_IS_IN; $$->con.loc = @$; $$->con.is_type = $3.text;
      $$->err = DW_PS_IS_EQ; $$->err_loc = @4;
  }
| IDENT ':' path {
      $$ = palloc(P, sizeof *$$); $$->var = pstr(P, $1.s, $1.len); $$->var_loc = @1;
      $$->con.kind = DW_SC_IS; $$->con.loc = @$; $$->con.is_type = $3.text;
      $$->err = DW_PS_COLON; $$->err_loc = @2;
  }
| IDENT '=' target {
      $$ = $3; $$->var = pstr(P, $1.s, $1.len); $$->var_loc = @1;
      $$->con.kind = DW_SC_EQ; $$->con.loc = @$; $$->err = DW_PS_ASSIGN; $$->err_loc = @2;
  }
| IDENT badop target {
      $$ = $3; $$->var = pstr(P, $1.s, $1.len); $$->var_loc = @1;
      $$->con.kind = DW_SC_EQ; $$->con.loc = @$; $$->err = DW_PS_BADOP; $$->err_loc = @2;
      $$->err_tok = pstr(P, P->src->text + @2.off, @2.end - @2.off);
  }
;

badop: NE { $$ = 0; } | '<' { $$ = 0; } | LE { $$ = 0; } | '>' { $$ = 0; } | GE { $$ = 0; } ;

/* A scope target; the value is a fresh dw_pscope carrying it (passed via $<sc>). */
target:
  ref { dw_pscope *s = palloc(P, sizeof *s); s->con.target = $1; $$ = s; }
| SLOT {
      dw_pscope *s = palloc(P, sizeof *s);
      s->con.target_is_slot = true; s->con.slot = pstr(P, $1.s, $1.len); s->slot_loc = @1;
      $$ = s;
  }
;

uids_opt:
  %empty { $$ = NULL; }
| uids
| uids ','
;

uids:
  ref { $$ = NULL; *(dw_euid_lit *)vpush(P, &$$, sizeof(dw_euid_lit)) = $1; }
| uids ',' ref { $$ = $1; *(dw_euid_lit *)vpush(P, &$$, sizeof(dw_euid_lit)) = $3; }
;

ref:
  path COLONCOLON STRING { $$ = mk_euid(P, &$1, $3, @3, @$); }
;

path:
  IDENT { $$ = path1(P, $1, @1); }
| path COLONCOLON IDENT { $$ = path_add(P, $1, $3, @3); }
| path COLONCOLON reserved { reserved_err(P, $3, @3); $$ = path_add(P, $1, $3, @3); }
;

/* ---- conditions (§3.5) ---- */

clauses:
  %empty { $$ = NULL; }
| clauses IDENT '{' expr '}' {
      $$ = $1; dw_clause *c = vpush(P, &$$, sizeof *c);
      c->is_when = streq($2, "when"); c->body = $4; c->loc = @2; c->loc.end = @5.end;
      if (!c->is_when && !streq($2, "unless"))
          ERR(@2, "condition keyword must be `when` or `unless`, found `%.*s`", PS($2));
  }
| clauses IDENT '{' '}' {
      $$ = $1;
      ERRH(@3, "write a condition between the braces, or drop the clause", "condition body is empty");
      if (!streq($2, "when") && !streq($2, "unless"))
          ERR(@2, "condition keyword must be `when` or `unless`, found `%.*s`", PS($2));
  }
| clauses IDENT IDENT '{' expr '}' {
      $$ = $1; dw_clause *c = vpush(P, &$$, sizeof *c);
      c->is_when = streq($2, "when"); c->guardrails = true; c->body = $5; c->loc = @2; c->loc.end = @6.end;
      if (!c->is_when && !streq($2, "unless"))
          ERR(@2, "condition keyword must be `when` or `unless`, found `%.*s`", PS($2));
      if (!streq($3, "guardrails"))
          ERRH(@3, "a condition is `when { ... }`, `when guardrails { ... }` or `when temporal { ... }`",
               "unexpected `%.*s` after `%.*s`", PS($3), PS($2));
  }
| clauses IDENT IDENT '{' '}' {
      $$ = $1;
      ERRH(@4, "write a condition between the braces, or drop the clause", "condition body is empty");
  }
| clauses IDENT TBLOCK {
      $$ = $1; dw_clause *c = vpush(P, &$$, sizeof *c);
      c->is_when = streq($2, "when"); c->loc = @2; c->loc.end = @3.end;
      if (!c->is_when && !streq($2, "unless"))
          ERR(@2, "condition keyword must be `when` or `unless`, found `%.*s`", PS($2));
      dw_expr *e = mk(P, DW_E_TEMPORAL, @3);
      e->u.temporal = temporal_leaf(P, $3, @3, DW_TMODE_POLICY);
      c->body = e;
  }
;

/* ---- expressions (§3.6, §3.7) ---- */

expr:
  IF expr THEN expr ELSE expr {
      dw_expr *e = mk(P, DW_E_IF, @$);
      e->u.kids[0] = $2; e->u.kids[1] = $4; e->u.kids[2] = $6;
      $$ = fin(P, e);
  }
| or
;

or:
  and
| or OR and { $$ = bin(P, DW_E_OR, $1, $3, @$); }
;

and:
  relation
| and AND relation { $$ = bin(P, DW_E_AND, $1, $3, @$); }
;

relation:
  add
| relchain
;

/* One relational operator per relation; a chain is parsed, then rejected (D2). */
relchain:
  add relop add { $$ = mk_rel(P, $2, $1, $3, @$); }
| add HAS attrpath { $$ = mk_has(P, $1, $3, @$, @2); }
| add HAS STRING {
      dw_pvec *v = NULL; dw_pname *n = vpush(P, &v, sizeof *n); n->s = decode_str(P, $3, @3); n->loc = @3;
      $$ = mk_has(P, $1, v, @$, @2);
  }
| add LIKE STRING { $$ = mk_like(P, $1, $3, @3, @$); }
| add IS path %prec IS_NOIN { $$ = mk_is(P, $1, &$3, NULL, @$); }
| add IS path IN add { $$ = mk_is(P, $1, &$3, $5, @$); }
| relchain relop add { chain_err(P, @1, @2); $$ = mk_rel(P, $2, $1, $3, @$); }
| relchain HAS attrpath {
      /* the parse has failed: expanding the path (a has b.c is a has b && a.b has c) would clone
       * $1 once per name, exponential over a chain (fuzz_evaluate: 13 s and 4 GB on 619 bytes) */
      chain_err(P, @1, @2); (void)$3; $$ = $1;
  }
| relchain HAS STRING {
      chain_err(P, @1, @2);
      dw_pvec *v = NULL; dw_pname *n = vpush(P, &v, sizeof *n); n->s = decode_str(P, $3, @3); n->loc = @3;
      $$ = mk_has(P, $1, v, @$, @2);
  }
| relchain LIKE STRING { chain_err(P, @1, @2); $$ = mk_like(P, $1, $3, @3, @$); }
| relchain IS path %prec IS_NOIN { chain_err(P, @1, @2); $$ = mk_is(P, $1, &$3, NULL, @$); }
| relchain IS path IN add { chain_err(P, @1, @2); $$ = mk_is(P, $1, &$3, $5, @$); }
;

relop:
  EQ { $$ = DW_E_EQ; }
| NE { $$ = DW_E_NE; }
| '<' { $$ = DW_E_LT; }
| LE { $$ = DW_E_LE; }
| '>' { $$ = DW_E_GT; }
| GE { $$ = DW_E_GE; }
| IN { $$ = DW_E_IN; }
| '=' { $$ = DW_E_EQ; ERRH(@1, "did you mean `==`?", "invalid operator `=`"); }
;

attrpath:
  attrname { $$ = NULL; *(dw_pname *)vpush(P, &$$, sizeof(dw_pname)) = $1; }
| attrpath '.' attrname { $$ = $1; *(dw_pname *)vpush(P, &$$, sizeof(dw_pname)) = $3; }
;

attrname:
  IDENT { $$.s = pstr(P, $1.s, $1.len); $$.loc = @1; check_ident(P, $1, @1); }
| reserved { $$.s = $1; $$.loc = @1; reserved_err(P, $1, @1); }
;

add:
  mult
| add '+' mult { $$ = bin(P, DW_E_ADD, $1, $3, @$); }
| add '-' mult { $$ = bin(P, DW_E_SUB, $1, $3, @$); }
;

mult:
  unary
| mult '*' unary { $$ = bin(P, DW_E_MUL, $1, $3, @$); }
| mult '/' unary { ERR(@2, "`/` is not a supported operator"); $$ = bin(P, DW_E_MUL, $1, $3, @$); }
| mult '%' unary { ERR(@2, "`%%` is not a supported operator"); $$ = bin(P, DW_E_MUL, $1, $3, @$); }
;

unary:
  member { $$ = used(P, $1); }
| nots member { $$ = mk_unary(P, $1, false, $2, @1, @$); }
| negs member { $$ = mk_unary(P, $1, true, $2, @1, @$); }
;

nots: '!' { $$ = 1; } | nots '!' { $$ = $1 + 1; } ;
negs: '-' { $$ = 1; } | negs '-' { $$ = $1 + 1; } ;

member:
  path { $$ = mk_var(P, &$1, @$); }
| member_np
;

member_np:
  primary_np
| ref { $$ = mk(P, DW_E_ENTITY, @$); $$->u.euid = $1; }
| path COLONCOLON '{' recinits_opt '}' {
      ERRH(@$, "write an entity reference `Type::\"id\"`", "entity literals `%.*s::{...}` are not supported", PS($1.text));
      $$ = mk(P, DW_E_RECORD, @$);
  }
| path '(' exprs_opt ')' { $$ = mk_call(P, &$1, $3, @$); }
| member '.' attrname { $$ = mk_getattr(P, used(P, $1), $3.s, @$); }
| member '.' attrname '(' exprs_opt ')' { $$ = mk_method(P, used(P, $1), $3, $5, @$); }
| member '[' expr ']' {
      used(P, $1);
      if ($3->kind != DW_E_STRING)
          ERRH(@3, "write the key as a string literal, e.g. `r[\"key\"]`", "dynamic indexing is not supported");
      $$ = mk_getattr(P, $1, $3->kind == DW_E_STRING ? $3->u.str : (dw_str){ "", 0 }, @$);
  }
;

primary_np:
  TRUE { $$ = mk(P, DW_E_BOOL, @$); $$->u.b = true; }
| FALSE { $$ = mk(P, DW_E_BOOL, @$); $$->u.b = false; }
| INTEGER {
      $$ = mk(P, DW_E_LONG, @$);
      uint64_t v = 0;
      bool over = false;
      for (size_t i = 0; i < $1.len; i++) {
          unsigned d = (unsigned)($1.s[i] - '0');
          if (v > (UINT64_MAX - d) / 10) over = true;
          else v = v * 10 + d;
      }
      if (over || v > (uint64_t)INT64_MAX + 1)
          ERRH(@1, "the largest integer is 9223372036854775807",
               "integer literal `%.*s` is too large", PS($1));
      else if (v == (uint64_t)INT64_MAX + 1) { $$->u.i = INT64_MIN; P->big_lit = $$; }
      else $$->u.i = (int64_t)v;
      P->bare_lit = $$;
  }
| STRING { $$ = mk(P, DW_E_STRING, @$); $$->u.str = decode_str(P, $1, @1); }
| SLOT { $$ = mk_slot(P, $1, @$); }
| BINDER {
      $$ = mk(P, DW_E_BINDER, @$); $$->u.name = pstr(P, $1.s, $1.len);
      if (P->def_state == 2)
          ERRH(@$, "fresh binders belong to `def temporal` bodies", "stray macro binder reference `$%.*s`", PS($1));
      else
          ERRH(@$, "`$name` binders may only be used inside a `def temporal` body", "stray macro binder reference `$%.*s`", PS($1));
  }
| TBLOCK {
      $$ = mk(P, DW_E_TEMPORAL, @$);
      if (P->def_state == 2)
          ERRH(@$, "lift the block to the call site instead", "a `def cedar` body cannot contain a `temporal { ... }` block");
      $$->u.temporal = temporal_leaf(P, $1, @1, DW_TMODE_POLICY);
  }
| '(' expr ')' {
      $$ = $2;
      if (P->bare_lit == $2) P->bare_lit = NULL;   /* `-(N)` stays a negation */
  }
| '[' exprs_opt ']' {
      $$ = mk(P, DW_E_SET, @$);
      if ($2) { $$->u.list.v = $2->v; $$->u.list.n = $2->n; }
      $$ = fin(P, $$);
  }
| '{' recinits_opt '}' {
      $$ = mk(P, DW_E_RECORD, @$);
      if ($2) {
          dw_record_entry *r = $2->v;
          for (size_t i = 1; i < $2->n; i++)
              for (size_t j = 0; j < i; j++)
                  if (r[i].key.len == r[j].key.len && memcmp(r[i].key.s, r[j].key.s, r[i].key.len) == 0) {
                      ERR(r[i].key_loc, "duplicate key `%.*s` in record literal", PS(r[i].key));
                      break;
                  }
          $$->u.rec.v = r; $$->u.rec.n = $2->n;
      }
      $$ = fin(P, $$);
  }
;

exprs_opt:
  %empty { $$ = NULL; }
| exprlist
| exprlist ','
;

exprlist:
  expr { $$ = NULL; *(dw_expr **)vpush(P, &$$, sizeof(dw_expr *)) = $1; }
| exprlist ',' expr { $$ = $1; *(dw_expr **)vpush(P, &$$, sizeof(dw_expr *)) = $3; }
;

recinits_opt:
  %empty { $$ = NULL; }
| recinits
| recinits ','
;

recinits:
  recinit_key ':' expr {
      $$ = NULL; dw_record_entry *r = vpush(P, &$$, sizeof *r);
      r->key = $1.s; r->key_loc = $1.loc; r->value = $3;
  }
| recinits ',' recinit_key ':' expr {
      $$ = $1; dw_record_entry *r = vpush(P, &$$, sizeof *r);
      r->key = $3.s; r->key_loc = $3.loc; r->value = $5;
  }
;

recinit_key:
  IDENT { $$.s = pstr(P, $1.s, $1.len); $$.loc = @1; check_ident(P, $1, @1); }
| STRING { $$.s = decode_str(P, $1, @1); $$.loc = @1; }
| reserved { $$.s = $1; $$.loc = @1; reserved_err(P, $1, @1); }
;

%%

static const char *scope_var_names[3] = { "principal", "action", "resource" };

static void check_target(dw_parser *P, int var, dw_scope_con *c)
{
    if (!c->target_is_slot) return;
    dw_loc l = c->loc;
    if (var == 1) {
        ERRH(l, "the action constraint takes entity uids such as `Action::\"view\"`",
             "template slot `?%.*s` is not allowed in the action scope", PS(c->slot));
        return;
    }
    const char *want = scope_var_names[var];
    if (!streq(c->slot, want)) {
        char hint[64];
        snprintf(hint, sizeof hint, "did you mean `?%s`?", want);
        if (streq(c->slot, "principal") || streq(c->slot, "resource"))
            ERRH(l, hint, "`?%.*s` cannot be used in the %s constraint", PS(c->slot), want);
        else
            ERRH(l, hint, "`?%.*s` is not a recognized template slot", PS(c->slot));
    } else {
        P->template_slot = true;
    }
}

static bool is_action_type(dw_str t)
{
    return streq(t, "Action") || (t.len > 8 && memcmp(t.s + t.len - 8, "::Action", 8) == 0);
}

static void check_action_uid(dw_parser *P, const dw_euid_lit *u)
{
    if (is_action_type(u->type)) return;
    ERRH(u->loc, "action entities have type `Action` or `Namespace::Action`",
         "expected an entity uid with type `Action` but got `%.*s::\"%.*s\"`", PS(u->type), PS(u->id));
}

static void add_policy(dw_parser *P, dw_pvec *annots, dw_str eff, dw_loc eff_loc,
                       dw_pvec *scope, dw_pvec *clauses, dw_loc loc)
{
    dw_policy *p = vpush(P, &P->policies, sizeof *p);
    p->loc = loc;
    p->effect_loc = eff_loc;
    if (streq(eff, "permit")) p->effect = DW_PERMIT;
    else if (streq(eff, "forbid")) p->effect = DW_FORBID;
    else ERR(eff_loc, "policy effect must be `permit` or `forbid`, found `%.*s`", PS(eff));
    if (annots) {
        p->annots = annots->v;
        p->nannots = annots->n;
        for (size_t i = 1; i < p->nannots; i++)
            for (size_t j = 0; j < i; j++)
                if (p->annots[i].key.len == p->annots[j].key.len &&
                    memcmp(p->annots[i].key.s, p->annots[j].key.s, p->annots[i].key.len) == 0) {
                    ERRH(p->annots[i].loc, "each annotation key may appear once per policy",
                         "duplicate annotation key `@%.*s`", PS(p->annots[i].key));
                    break;
                }
    }
    bool seen[3] = { false, false, false };
    dw_scope_con *slots[3] = { &p->principal, &p->action, &p->resource };
    size_t n = scope ? scope->n : 0;
    for (size_t i = 0; i < n; i++) {
        dw_pscope *s = ((dw_pscope **)scope->v)[i];
        if (i >= 3) {
            ERR(s->var_loc, "this policy has an extra element in the scope: `%.*s`", PS(s->var));
            continue;
        }
        int var = -1;
        for (int k = 0; k < 3; k++)
            if (streq(s->var, scope_var_names[k])) var = k;
        if (var < 0) {
            ERR(s->var_loc, "unexpected scope variable `%.*s`; expected `principal`, `action`, or `resource`", PS(s->var));
            continue;
        }
        if (seen[var]) {
            ERR(s->var_loc, "duplicate `%s` in scope", scope_var_names[var]);
            continue;
        }
        seen[var] = true;
        switch (s->err) {
        case DW_PS_COLON:
            ERRH(s->err_loc, "use `is` for type tests", "type constraints `%s : T` are not supported; use `%s is T`",
                 scope_var_names[var], scope_var_names[var]);
            break;
        case DW_PS_ASSIGN: ERRH(s->err_loc, "did you mean `==`?", "invalid operator `=` in the scope"); break;
        case DW_PS_BADOP:
            ERR(s->err_loc, "scope only allows `==` or `in`, found `%.*s`", PS(s->err_tok));
            break;
        case DW_PS_IS_EQ:
            ERR(s->err_loc, "only `is T in ...` is allowed");
            break;
        case DW_PS_EQ_LIST:
            ERRH(s->err_loc, "write `in [...]` to test membership in a list of actions",
                 "the right-hand side of `==` in the scope must be a single entity uid, not a list");
            break;
        case DW_PS_OK: break;
        }
        dw_scope_con *c = &s->con;
        if (var == 1 && (c->kind == DW_SC_IS || c->kind == DW_SC_IS_IN))
            ERRH(c->loc, "test the action with `==` or `in`", "`action is Type` is not valid in the action scope");
        if (var != 1 && c->kind == DW_SC_IN_LIST && s->err != DW_PS_EQ_LIST)
            ERRH(c->loc, "only the action constraint accepts a list", "`%s in [...]`: the scope expects a single entity uid here",
                 scope_var_names[var]);
        if (c->kind == DW_SC_EQ || c->kind == DW_SC_IN || c->kind == DW_SC_IS_IN) {
            check_target(P, var, c);
            if (var == 1 && !c->target_is_slot) check_action_uid(P, &c->target);
        }
        if (var == 1 && c->kind == DW_SC_IN_LIST)
            for (size_t k = 0; k < c->nlist; k++) check_action_uid(P, &c->list[k]);
        *slots[var] = *c;
    }
    if (clauses) {
        p->clauses = clauses->v;
        p->nclauses = clauses->n;
    }
    p->is_template = P->template_slot;
}

static const char *reserved_macro_names[] = {
    "decimal", "datetime", "duration", "ip", "let", "in", "where", "for", "sum", "count",
    "tp", "formerly", "previous", "since", "true", "false",
};

static void add_macro(dw_parser *P, bool cedar, dw_str name, dw_loc name_loc, dw_pvec *params,
                      dw_expr *body, dw_str tbody, dw_loc tloc, dw_loc loc)
{
    dw_macro_def *m = vpush(P, &P->macros, sizeof *m);
    m->kind = cedar ? DW_MACRO_CEDAR : DW_MACRO_TEMPORAL;
    m->name = pstr(P, name.s, name.len);
    m->name_loc = name_loc;
    m->loc = loc;
    for (size_t i = 0; i < sizeof reserved_macro_names / sizeof *reserved_macro_names; i++)
        if (streq(name, reserved_macro_names[i]))
            ERRH(name_loc, "choose another name", "`%.*s` is a reserved name and cannot be defined as a macro", PS(name));
    if (params) {
        dw_pname *pn = params->v;
        m->params = palloc(P, params->n * sizeof *m->params);
        m->nparams = params->n;
        for (size_t i = 0; i < params->n; i++) {
            m->params[i] = pn[i].s;
            for (size_t j = 0; j < i; j++)
                if (streq(pn[i].s, m->params[j].s) && pn[i].s.len == m->params[j].len)
                    ERR(pn[i].loc, "duplicate macro parameter `?%.*s`", PS(pn[i].s));
        }
    }
    if (cedar) {
        m->cedar_body = body;
        /* the body text is between the braces: tloc is the `{` */
        uint32_t b = tloc.end, e = body ? body->loc.end : b;
        const char *t = P->src->text;
        while (e < P->src->len && t[e] != '}') e++;   /* up to the closing brace */
        m->body_off = b;
        m->body_text = pstr(P, t + b, e > b ? e - b : 0);
    } else {
        m->temporal_body = temporal_leaf(P, tbody, tloc, DW_TMODE_MACRO);
        m->body_off = (uint32_t)(tbody.s - P->src->text);
        m->body_text = pstr(P, tbody.s, tbody.len);
    }
    for (size_t i = 0; i + 1 < P->macros->n; i++) {
        dw_macro_def *o = (dw_macro_def *)P->macros->v + i;
        if (o->name.len == m->name.len && memcmp(o->name.s, m->name.s, m->name.len) == 0) {
            ERR(name_loc, "duplicate macro definition `%.*s`", PS(name));
            break;
        }
    }
}

static dw_temporal *temporal_leaf(dw_parser *P, dw_str body, dw_loc loc, dw_tmode mode)
{
    uint32_t off = (uint32_t)(body.s - P->src->text);
    dw_temporal *t = dw_temporal_parse(P->A, P->src, P->diags, off, (uint32_t)body.len, loc, mode);
    if (!t) longjmp(P->oom, 1);
    return t;
}

static void dw_yyerror(DW_YYLTYPE *loc, void *scanner, dw_parser *P, const char *msg)
{
    if (strstr(msg, "exhausted"))
        ERRH(*loc, "simplify the expression", "expression nested too deeply");
    else
        ERR(*loc, "%s", msg);
    P->fatal = true;
}

/* Display name of a token: bison's names are "`==`"-style aliases or 'c'. */
static void sym_text(char *buf, size_t cap, yysymbol_kind_t k)
{
    const char *n = yysymbol_name(k);
    if (k == YYSYMBOL_YYEOF) snprintf(buf, cap, "end of input");
    else if (n[0] == '"') snprintf(buf, cap, "%.*s", (int)strlen(n) - 2, n + 1);
    else if (n[0] == '\'') snprintf(buf, cap, "`%c`", n[1]);
    else snprintf(buf, cap, "%s", n);
}

static int yyreport_syntax_error(const yypcontext_t *ctx, void *scanner, dw_parser *P)
{
    if (P->fatal) return 0;
    yysymbol_kind_t tok = yypcontext_token(ctx);
    const DW_YYLTYPE *loc = yypcontext_location(ctx);
    /* An error on the line where a multi-line string ends: that string most
     * likely lacks its closing quote (it ran on to the next string's opening
     * one).  Blame its opening quote, and nothing after it. */
    if (P->mls_end_line && loc->line == P->mls_end_line && loc->off >= P->mls_loc.end) {
        dw_loc q = P->mls_loc;
        q.end = q.off + 1;
        ERRH(q, "add the closing `\"` (a string may span lines, so this one ends at the next `\"`)",
             "unterminated string literal: the string runs to line %u", P->mls_end_line);
        P->fatal = true;
        return 0;
    }
    char what[96];
    if (tok == YYSYMBOL_YYEOF || tok == YYSYMBOL_YYEMPTY) snprintf(what, sizeof what, "end of input");
    else {
        uint32_t n = loc->end - loc->off;
        const char *s = P->src->text + loc->off;
        for (uint32_t i = 0; i < n; i++)
            if (s[i] == '\n') { n = i; break; }
        if (n > 40) snprintf(what, sizeof what, "`%.40s...`", s);
        else snprintf(what, sizeof what, "`%.*s`", (int)n, s);
    }
    yysymbol_kind_t exp[8];
    int ne = yypcontext_expected_tokens(ctx, exp, 8);
    char hint[512] = "";
    if ((P->prev_tok == '!' && P->cur_tok == '-') || (P->prev_tok == '-' && P->cur_tok == '!')) {
        ERRH(*loc, "a unary run repeats one operator; write `!(-x)` or `-(!x)`",
             "unexpected %s after `%c`", what, P->prev_tok);
        return 0;
    }
    if ((P->prev_tok == ')' || P->prev_tok == ']') && P->cur_tok == '(') {
        ERRH(*loc, "call a function by name, `f(...)`, or a method, `e.m(...)`",
             "unexpected call: only extension functions and methods can be called");
        return 0;
    }
    if (P->prev_tok == LIKE && tok != YYSYMBOL_STRING) {
        ERRH(*loc, "`like` takes a string literal pattern, e.g. `x like \"a*\"`",
             "the right-hand side of a `like` expression must be a pattern literal");
        return 0;
    }
    if (ne > 0) {
        size_t len = (size_t)snprintf(hint, sizeof hint, "expected ");
        for (int i = 0; i < ne && len < sizeof hint; i++) {
            char t[64];
            sym_text(t, sizeof t, exp[i]);
            len += (size_t)snprintf(hint + len, sizeof hint - len, "%s%s", i == 0 ? "" : i == ne - 1 ? " or " : ", ", t);
        }
    }
    ERRH(*loc, ne > 0 ? hint : NULL, "unexpected %s", what);
    return 0;
}

#include "lexer.h"

static void *dw_scan_start(dw_parser *P, int start_tok, YY_BUFFER_STATE *bufp)
{
    yyscan_t sc;
    if (dw_yylex_init_extra(P, &sc)) return NULL;
    P->line = 1;
    P->col = 1;
    P->off = 0;
    P->start_tok = start_tok;
    P->item_start = true;
    *bufp = dw_yy_scan_bytes(P->src->text ? P->src->text : "", (int)P->src->len, sc);
    if (!*bufp) { dw_yylex_destroy(sc); return NULL; }
    return sc;
}

dw_policy_set *dw_parse_policy_set(const dw_source *src, dw_diags *diags)
{
    if (src->len > INT32_MAX) return NULL;   /* offsets are 32-bit */
    dw_policy_set *volatile ps = calloc(1, sizeof *ps);
    if (!ps) return NULL;
    dw_arena_init(&ps->arena, 0);
    ps->src = src;
    dw_parser P0, *P = &P0;
    memset(P, 0, sizeof *P);
    P->src = src;
    P->diags = diags;
    P->A = &ps->arena;
    P->has_copy_left = DW_HAS_PATH_MAX_NODES + DW_HAS_PATH_NODES_PER_BYTE * src->len;
    YY_BUFFER_STATE buf = NULL;
    void *volatile sc = NULL;
    if (setjmp(P->oom)) {
        if (sc) dw_yylex_destroy(sc);
        dw_policy_set_free(ps);
        return NULL;
    }
    sc = dw_scan_start(P, START_SET, &buf);
    if (!sc) { dw_policy_set_free(ps); return NULL; }
    int rc = dw_yyparse(sc, P);
    dw_yylex_destroy(sc);
    sc = NULL;
    if (rc != 0 && diags->nerrors == 0)   /* never fail silently */
        dw_error(diags, src, dw_loc_at(src, P->off, P->off), "syntax error");
    if (P->policies) { ps->policies = P->policies->v; ps->npolicies = P->policies->n; }
    if (P->macros) { ps->macros = P->macros->v; ps->nmacros = P->macros->n; }
    return ps;
}

dw_expr *dw_parse_expr(dw_policy_set *owner, const dw_source *src, dw_diags *diags)
{
    if (src->len > INT32_MAX) return NULL;
    dw_parser P0, *P = &P0;
    memset(P, 0, sizeof *P);
    P->src = src;
    P->diags = diags;
    P->A = &owner->arena;
    P->has_copy_left = DW_HAS_PATH_MAX_NODES + DW_HAS_PATH_NODES_PER_BYTE * src->len;
    YY_BUFFER_STATE buf = NULL;
    void *volatile sc = NULL;
    if (setjmp(P->oom)) {
        if (sc) dw_yylex_destroy(sc);
        return NULL;
    }
    sc = dw_scan_start(P, START_EXPR, &buf);
    if (!sc) return NULL;
    int rc = dw_yyparse(sc, P);
    dw_yylex_destroy(sc);
    if (rc != 0 && diags->nerrors == 0)
        dw_error(diags, src, dw_loc_at(src, P->off, P->off), "syntax error");
    return rc == 0 ? P->expr_result : NULL;
}
