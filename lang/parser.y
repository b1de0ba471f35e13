/* parser.y - the .dw core grammar (dogwood.md §3), a pure bison parser over
 * the reentrant flex lexer in lexer.l.  Semantic checks that Cedar performs
 * after parsing (reserved names, scope shapes, arities ...) are reported from
 * the actions so one run reports every error; after a syntax error the parser
 * resynchronises at the next top-level `;`.
 *
 * No %expect: the grammar is conflict-free.  The one shift/reduce choice
 * (`e is T` followed by `in`: `is T in E` wins over a chained `in`) is settled
 * by precedence declarations.  The C helpers the actions call to build and
 * check the tree are in parse_build.c. */

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
#include "parse_build.h"   /* the tree building helpers the actions call (parse_build.c) */

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
| error ';' { dw_parse_item_reset(P); P->bare_lit = P->big_lit = NULL; }
;

policy:
  annots IDENT '(' scope_opt ')' clauses ';' {
      dw_parse_add_policy(P, $1, $2, @2, $4, $6, @$);
      dw_parse_item_reset(P);
  }
;

macro_def:
  DEF KW_CEDAR IDENT '(' params_opt ')' '{' expr '}' ';' {
      dw_parse_add_macro(P, true, $3, @3, $5, $8, (dw_str){0}, @7, @$);
      dw_parse_item_reset(P);
  }
| DEF KW_TEMPORAL IDENT '(' params_opt ')' TBLOCK ';' {
      dw_parse_add_macro(P, false, $3, @3, $5, NULL, $7, @7, @$);
      dw_parse_item_reset(P);
  }
;

params_opt:
  %empty { $$ = NULL; }
| params
;

params:
  SLOT { $$ = NULL; dw_pname *n = dw_parse_vpush(P, &$$, sizeof *n); n->s = dw_parse_pstr(P, $1.s, $1.len); n->loc = @1; }
| params ',' SLOT { $$ = $1; dw_pname *n = dw_parse_vpush(P, &$$, sizeof *n); n->s = dw_parse_pstr(P, $3.s, $3.len); n->loc = @3; }
;

annots:
  %empty { $$ = NULL; }
| annots '@' anyname {
      $$ = $1;
      dw_annotation *a = dw_parse_vpush(P, &$$, sizeof *a);
      a->key = $3.s; a->loc = @$; a->loc.off = @2.off; a->loc.line = @2.line; a->loc.col = @2.col;
  }
| annots '@' anyname '(' STRING ')' {
      $$ = $1;
      dw_annotation *a = dw_parse_vpush(P, &$$, sizeof *a);
      a->key = $3.s; a->has_value = true; a->value = dw_parse_decode_str(P, $5, @5);
      a->loc = @$; a->loc.off = @2.off; a->loc.line = @2.line; a->loc.col = @2.col;
  }
;

anyname:
  IDENT { $$.s = dw_parse_pstr(P, $1.s, $1.len); $$.loc = @1; }
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
  scope_el { $$ = NULL; *(dw_pscope **)dw_parse_vpush(P, &$$, sizeof(dw_pscope *)) = $1; }
| scope_list ',' scope_el { $$ = $1; *(dw_pscope **)dw_parse_vpush(P, &$$, sizeof(dw_pscope *)) = $3; }
;

scope_el:
  IDENT { $$ = dw_parse_palloc(P, sizeof *$$); $$->var = dw_parse_pstr(P, $1.s, $1.len); $$->var_loc = @1; $$->con.kind = DW_SC_ANY; $$->con.loc = @$; }
| IDENT EQ target { $$ = $3; $$->var = dw_parse_pstr(P, $1.s, $1.len); $$->var_loc = @1; $$->con.kind = DW_SC_EQ; $$->con.loc = @$; }
| IDENT IN target { $$ = $3; $$->var = dw_parse_pstr(P, $1.s, $1.len); $$->var_loc = @1; $$->con.kind = DW_SC_IN; $$->con.loc = @$; }
| IDENT IN '[' uids_opt ']' {
      $$ = dw_parse_palloc(P, sizeof *$$); $$->var = dw_parse_pstr(P, $1.s, $1.len); $$->var_loc = @1;
      $$->con.kind = DW_SC_IN_LIST; $$->con.loc = @$;
      if ($4) { $$->con.list = $4->v; $$->con.nlist = $4->n; }
  }
| IDENT EQ '[' uids_opt ']' {
      $$ = dw_parse_palloc(P, sizeof *$$); $$->var = dw_parse_pstr(P, $1.s, $1.len); $$->var_loc = @1;
      $$->con.kind = DW_SC_IN_LIST; $$->con.loc = @$; $$->err = DW_PS_EQ_LIST; $$->err_loc = @3;
  }
| IDENT IS path %prec IS_NOIN {
      $$ = dw_parse_palloc(P, sizeof *$$); $$->var = dw_parse_pstr(P, $1.s, $1.len); $$->var_loc = @1;
      $$->con.kind = DW_SC_IS; $$->con.loc = @$; $$->con.is_type = $3.text;
  }
| IDENT IS path IN target {
      $$ = $5; $$->var = dw_parse_pstr(P, $1.s, $1.len); $$->var_loc = @1;
      $$->con.kind = DW_SC_IS_IN; $$->con.loc = @$; $$->con.is_type = $3.text;
  }
| IDENT IS path EQ target {
      $$ = $5; $$->var = dw_parse_pstr(P, $1.s, $1.len); $$->var_loc = @1;
      $$->con.kind = DW_SC_IS_IN; $$->con.loc = @$; $$->con.is_type = $3.text;
      $$->err = DW_PS_IS_EQ; $$->err_loc = @4;
  }
| IDENT ':' path {
      $$ = dw_parse_palloc(P, sizeof *$$); $$->var = dw_parse_pstr(P, $1.s, $1.len); $$->var_loc = @1;
      $$->con.kind = DW_SC_IS; $$->con.loc = @$; $$->con.is_type = $3.text;
      $$->err = DW_PS_COLON; $$->err_loc = @2;
  }
| IDENT '=' target {
      $$ = $3; $$->var = dw_parse_pstr(P, $1.s, $1.len); $$->var_loc = @1;
      $$->con.kind = DW_SC_EQ; $$->con.loc = @$; $$->err = DW_PS_ASSIGN; $$->err_loc = @2;
  }
| IDENT badop target {
      $$ = $3; $$->var = dw_parse_pstr(P, $1.s, $1.len); $$->var_loc = @1;
      $$->con.kind = DW_SC_EQ; $$->con.loc = @$; $$->err = DW_PS_BADOP; $$->err_loc = @2;
      $$->err_tok = dw_parse_pstr(P, P->src->text + @2.off, @2.end - @2.off);
  }
;

badop: NE { $$ = 0; } | '<' { $$ = 0; } | LE { $$ = 0; } | '>' { $$ = 0; } | GE { $$ = 0; } ;

/* A scope target; the value is a fresh dw_pscope carrying it (passed via $<sc>). */
target:
  ref { dw_pscope *s = dw_parse_palloc(P, sizeof *s); s->con.target = $1; $$ = s; }
| SLOT {
      dw_pscope *s = dw_parse_palloc(P, sizeof *s);
      s->con.target_is_slot = true; s->con.slot = dw_parse_pstr(P, $1.s, $1.len); s->slot_loc = @1;
      $$ = s;
  }
;

uids_opt:
  %empty { $$ = NULL; }
| uids
| uids ','
;

uids:
  ref { $$ = NULL; *(dw_euid_lit *)dw_parse_vpush(P, &$$, sizeof(dw_euid_lit)) = $1; }
| uids ',' ref { $$ = $1; *(dw_euid_lit *)dw_parse_vpush(P, &$$, sizeof(dw_euid_lit)) = $3; }
;

ref:
  path COLONCOLON STRING { $$ = dw_parse_mk_euid(P, &$1, $3, @3, @$); }
;

path:
  IDENT { $$ = dw_parse_path1(P, $1, @1); }
| path COLONCOLON IDENT { $$ = dw_parse_path_add(P, $1, $3, @3); }
| path COLONCOLON reserved { dw_parse_reserved_err(P, $3, @3); $$ = dw_parse_path_add(P, $1, $3, @3); }
;

/* ---- conditions (§3.5) ---- */

clauses:
  %empty { $$ = NULL; }
| clauses IDENT '{' expr '}' {
      $$ = $1; dw_clause *c = dw_parse_vpush(P, &$$, sizeof *c);
      c->is_when = dw_parse_streq($2, "when"); c->body = $4; c->loc = @2; c->loc.end = @5.end;
      if (!c->is_when && !dw_parse_streq($2, "unless"))
          ERR(@2, "condition keyword must be `when` or `unless`, found `%.*s`", PS($2));
  }
| clauses IDENT '{' '}' {
      $$ = $1;
      ERRH(@3, "write a condition between the braces, or drop the clause", "condition body is empty");
      if (!dw_parse_streq($2, "when") && !dw_parse_streq($2, "unless"))
          ERR(@2, "condition keyword must be `when` or `unless`, found `%.*s`", PS($2));
  }
| clauses IDENT IDENT '{' expr '}' {
      $$ = $1; dw_clause *c = dw_parse_vpush(P, &$$, sizeof *c);
      c->is_when = dw_parse_streq($2, "when"); c->guardrails = true; c->body = $5; c->loc = @2; c->loc.end = @6.end;
      if (!c->is_when && !dw_parse_streq($2, "unless"))
          ERR(@2, "condition keyword must be `when` or `unless`, found `%.*s`", PS($2));
      if (!dw_parse_streq($3, "guardrails"))
          ERRH(@3, "a condition is `when { ... }`, `when guardrails { ... }` or `when temporal { ... }`",
               "unexpected `%.*s` after `%.*s`", PS($3), PS($2));
  }
| clauses IDENT IDENT '{' '}' {
      $$ = $1;
      ERRH(@4, "write a condition between the braces, or drop the clause", "condition body is empty");
  }
| clauses IDENT TBLOCK {
      $$ = $1; dw_clause *c = dw_parse_vpush(P, &$$, sizeof *c);
      c->is_when = dw_parse_streq($2, "when"); c->loc = @2; c->loc.end = @3.end;
      if (!c->is_when && !dw_parse_streq($2, "unless"))
          ERR(@2, "condition keyword must be `when` or `unless`, found `%.*s`", PS($2));
      dw_expr *e = dw_parse_mk(P, DW_E_TEMPORAL, @3);
      e->u.temporal = dw_parse_temporal_leaf(P, $3, @3, DW_TMODE_POLICY);
      c->body = e;
  }
;

/* ---- expressions (§3.6, §3.7) ---- */

expr:
  IF expr THEN expr ELSE expr {
      dw_expr *e = dw_parse_mk(P, DW_E_IF, @$);
      e->u.kids[0] = $2; e->u.kids[1] = $4; e->u.kids[2] = $6;
      $$ = dw_parse_fin(P, e);
  }
| or
;

or:
  and
| or OR and { $$ = dw_parse_bin(P, DW_E_OR, $1, $3, @$); }
;

and:
  relation
| and AND relation { $$ = dw_parse_bin(P, DW_E_AND, $1, $3, @$); }
;

relation:
  add
| relchain
;

/* One relational operator per relation; a chain is parsed, then rejected (D2). */
relchain:
  add relop add { $$ = dw_parse_mk_rel(P, $2, $1, $3, @$); }
| add HAS attrpath { $$ = dw_parse_mk_has(P, $1, $3, @$); }
| add HAS STRING {
      dw_pvec *v = NULL; dw_pname *n = dw_parse_vpush(P, &v, sizeof *n); n->s = dw_parse_decode_str(P, $3, @3); n->loc = @3;
      $$ = dw_parse_mk_has(P, $1, v, @$);
  }
| add LIKE STRING { $$ = dw_parse_mk_like(P, $1, $3, @3, @$); }
| add IS path %prec IS_NOIN { $$ = dw_parse_mk_is(P, $1, &$3, NULL, @$); }
| add IS path IN add { $$ = dw_parse_mk_is(P, $1, &$3, $5, @$); }
| relchain relop add { dw_parse_chain_err(P, @1, @2); $$ = dw_parse_mk_rel(P, $2, $1, $3, @$); }
| relchain HAS attrpath { dw_parse_chain_err(P, @1, @2); $$ = dw_parse_mk_has(P, $1, $3, @$); }
| relchain HAS STRING {
      dw_parse_chain_err(P, @1, @2);
      dw_pvec *v = NULL; dw_pname *n = dw_parse_vpush(P, &v, sizeof *n); n->s = dw_parse_decode_str(P, $3, @3); n->loc = @3;
      $$ = dw_parse_mk_has(P, $1, v, @$);
  }
| relchain LIKE STRING { dw_parse_chain_err(P, @1, @2); $$ = dw_parse_mk_like(P, $1, $3, @3, @$); }
| relchain IS path %prec IS_NOIN { dw_parse_chain_err(P, @1, @2); $$ = dw_parse_mk_is(P, $1, &$3, NULL, @$); }
| relchain IS path IN add { dw_parse_chain_err(P, @1, @2); $$ = dw_parse_mk_is(P, $1, &$3, $5, @$); }
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
  attrname { $$ = NULL; *(dw_pname *)dw_parse_vpush(P, &$$, sizeof(dw_pname)) = $1; }
| attrpath '.' attrname { $$ = $1; *(dw_pname *)dw_parse_vpush(P, &$$, sizeof(dw_pname)) = $3; }
;

attrname:
  IDENT { $$.s = dw_parse_pstr(P, $1.s, $1.len); $$.loc = @1; dw_parse_check_ident(P, $1, @1); }
| reserved { $$.s = $1; $$.loc = @1; dw_parse_reserved_err(P, $1, @1); }
;

add:
  mult
| add '+' mult { $$ = dw_parse_bin(P, DW_E_ADD, $1, $3, @$); }
| add '-' mult { $$ = dw_parse_bin(P, DW_E_SUB, $1, $3, @$); }
;

mult:
  unary
| mult '*' unary { $$ = dw_parse_bin(P, DW_E_MUL, $1, $3, @$); }
| mult '/' unary { ERR(@2, "`/` is not a supported operator"); $$ = dw_parse_bin(P, DW_E_MUL, $1, $3, @$); }
| mult '%' unary { ERR(@2, "`%%` is not a supported operator"); $$ = dw_parse_bin(P, DW_E_MUL, $1, $3, @$); }
;

unary:
  member { $$ = dw_parse_used(P, $1); }
| nots member { $$ = dw_parse_mk_unary(P, $1, false, $2, @1, @$); }
| negs member { $$ = dw_parse_mk_unary(P, $1, true, $2, @1, @$); }
;

nots: '!' { $$ = 1; } | nots '!' { $$ = $1 + 1; } ;
negs: '-' { $$ = 1; } | negs '-' { $$ = $1 + 1; } ;

member:
  path { $$ = dw_parse_mk_var(P, &$1, @$); }
| member_np
;

member_np:
  primary_np
| ref { $$ = dw_parse_mk(P, DW_E_ENTITY, @$); $$->u.euid = $1; }
| path COLONCOLON '{' recinits_opt '}' {
      ERRH(@$, "write an entity reference `Type::\"id\"`", "entity literals `%.*s::{...}` are not supported", PS($1.text));
      $$ = dw_parse_mk(P, DW_E_RECORD, @$);
  }
| path '(' exprs_opt ')' { $$ = dw_parse_mk_call(P, &$1, $3, @$); }
| member '.' attrname { $$ = dw_parse_mk_getattr(P, dw_parse_used(P, $1), $3.s, @$); }
| member '.' attrname '(' exprs_opt ')' { $$ = dw_parse_mk_method(P, dw_parse_used(P, $1), $3, $5, @$); }
| member '[' expr ']' {
      dw_parse_used(P, $1);
      if ($3->kind != DW_E_STRING)
          ERRH(@3, "write the key as a string literal, e.g. `r[\"key\"]`", "dynamic indexing is not supported");
      $$ = dw_parse_mk_getattr(P, $1, $3->kind == DW_E_STRING ? $3->u.str : (dw_str){ "", 0 }, @$);
  }
;

primary_np:
  TRUE { $$ = dw_parse_mk(P, DW_E_BOOL, @$); $$->u.b = true; }
| FALSE { $$ = dw_parse_mk(P, DW_E_BOOL, @$); $$->u.b = false; }
| INTEGER {
      $$ = dw_parse_mk(P, DW_E_LONG, @$);
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
| STRING { $$ = dw_parse_mk(P, DW_E_STRING, @$); $$->u.str = dw_parse_decode_str(P, $1, @1); }
| SLOT { $$ = dw_parse_mk_slot(P, $1, @$); }
| BINDER {
      $$ = dw_parse_mk(P, DW_E_BINDER, @$); $$->u.name = dw_parse_pstr(P, $1.s, $1.len);
      if (P->def_state == 2)
          ERRH(@$, "fresh binders belong to `def temporal` bodies", "stray macro binder reference `$%.*s`", PS($1));
      else
          ERRH(@$, "`$name` binders may only be used inside a `def temporal` body", "stray macro binder reference `$%.*s`", PS($1));
  }
| TBLOCK {
      $$ = dw_parse_mk(P, DW_E_TEMPORAL, @$);
      if (P->def_state == 2)
          ERRH(@$, "lift the block to the call site instead", "a `def cedar` body cannot contain a `temporal { ... }` block");
      $$->u.temporal = dw_parse_temporal_leaf(P, $1, @1, DW_TMODE_POLICY);
  }
| '(' expr ')' {
      $$ = $2;
      if (P->bare_lit == $2) P->bare_lit = NULL;   /* `-(N)` stays a negation */
  }
| '[' exprs_opt ']' {
      $$ = dw_parse_mk(P, DW_E_SET, @$);
      if ($2) { $$->u.list.v = $2->v; $$->u.list.n = $2->n; }
      $$ = dw_parse_fin(P, $$);
  }
| '{' recinits_opt '}' {
      $$ = dw_parse_mk(P, DW_E_RECORD, @$);
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
      $$ = dw_parse_fin(P, $$);
  }
;

exprs_opt:
  %empty { $$ = NULL; }
| exprlist
| exprlist ','
;

exprlist:
  expr { $$ = NULL; *(dw_expr **)dw_parse_vpush(P, &$$, sizeof(dw_expr *)) = $1; }
| exprlist ',' expr { $$ = $1; *(dw_expr **)dw_parse_vpush(P, &$$, sizeof(dw_expr *)) = $3; }
;

recinits_opt:
  %empty { $$ = NULL; }
| recinits
| recinits ','
;

recinits:
  recinit_key ':' expr {
      $$ = NULL; dw_record_entry *r = dw_parse_vpush(P, &$$, sizeof *r);
      r->key = $1.s; r->key_loc = $1.loc; r->value = $3;
  }
| recinits ',' recinit_key ':' expr {
      $$ = $1; dw_record_entry *r = dw_parse_vpush(P, &$$, sizeof *r);
      r->key = $3.s; r->key_loc = $3.loc; r->value = $5;
  }
;

recinit_key:
  IDENT { $$.s = dw_parse_pstr(P, $1.s, $1.len); $$.loc = @1; dw_parse_check_ident(P, $1, @1); }
| STRING { $$.s = dw_parse_decode_str(P, $1, @1); $$.loc = @1; }
| reserved { $$.s = $1; $$.loc = @1; dw_parse_reserved_err(P, $1, @1); }
;

%%

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
