/* parse_build.h - what the grammar's actions (parser.y) call in parse_build.c to build the tree and check it; internal to the parser, not part of the library's API. */
#ifndef DW_PARSE_BUILD_H
#define DW_PARSE_BUILD_H
#include "lang/parser.h"   /* dw_parser, dw_pvec, dw_ppath ... (bison's %code requires, in build/gen) */

/* After a fatal lexer error (runaway nesting, unterminated literal) the rest
 * of the parse only unwinds: stay quiet instead of cascading. */
#define ERR(loc, ...) do { if (!P->fatal) dw_error(P->diags, P->src, (loc), __VA_ARGS__); } while (0)
#define ERRH(loc, hint, ...) do { if (!P->fatal) dw_error_hint(P->diags, P->src, (loc), (hint), __VA_ARGS__); } while (0)
#define PS(x_) (int)(x_).len, (x_).s

/* parse_build.c: arena memory, nodes, names and paths, calls and members, literals; policies, macros and temporal leaves */
void *dw_parse_palloc(dw_parser *P, size_t n);
dw_str dw_parse_pstr(dw_parser *P, const char *s, size_t n);
void *dw_parse_vpush(dw_parser *P, dw_pvec **vp, size_t esz);
bool dw_parse_streq(dw_str s, const char *lit);
dw_expr *dw_parse_mk(dw_parser *P, dw_expr_kind k, dw_loc loc);
dw_expr *dw_parse_fin(dw_parser *P, dw_expr *e);
dw_expr *dw_parse_bin(dw_parser *P, dw_expr_kind k, dw_expr *a, dw_expr *b, dw_loc loc);
dw_expr *dw_parse_used(dw_parser *P, dw_expr *e);
dw_str dw_parse_decode_str(dw_parser *P, dw_str raw, dw_loc loc);
bool dw_parse_check_ident(dw_parser *P, dw_str s, dw_loc loc);
void dw_parse_reserved_err(dw_parser *P, dw_str s, dw_loc loc);
dw_ppath dw_parse_path1(dw_parser *P, dw_str s, dw_loc loc);
dw_ppath dw_parse_path_add(dw_parser *P, dw_ppath p, dw_str seg, dw_loc loc);
dw_expr *dw_parse_mk_call(dw_parser *P, dw_ppath *p, dw_pvec *args, dw_loc loc);
dw_expr *dw_parse_mk_method(dw_parser *P, dw_expr *recv, dw_pname name, dw_pvec *args, dw_loc loc);
dw_expr *dw_parse_mk_getattr(dw_parser *P, dw_expr *obj, dw_str attr, dw_loc loc);
dw_expr *dw_parse_mk_has(dw_parser *P, dw_expr *obj, dw_pvec *segs, dw_loc loc);
dw_expr *dw_parse_mk_rel(dw_parser *P, int op, dw_expr *a, dw_expr *b, dw_loc loc);
void dw_parse_chain_err(dw_parser *P, dw_loc start, dw_loc loc);
dw_expr *dw_parse_mk_like(dw_parser *P, dw_expr *a, dw_str raw, dw_loc sloc, dw_loc loc);
dw_expr *dw_parse_mk_is(dw_parser *P, dw_expr *a, dw_ppath *t, dw_expr *in, dw_loc loc);
dw_expr *dw_parse_mk_var(dw_parser *P, dw_ppath *p, dw_loc loc);
dw_expr *dw_parse_mk_slot(dw_parser *P, dw_str name, dw_loc loc);
dw_expr *dw_parse_mk_unary(dw_parser *P, int n, bool neg, dw_expr *m, dw_loc oploc, dw_loc loc);
dw_euid_lit dw_parse_mk_euid(dw_parser *P, dw_ppath *p, dw_str raw, dw_loc sloc, dw_loc loc);
void dw_parse_item_reset(dw_parser *P);
void dw_parse_add_policy(dw_parser *P, dw_pvec *annots, dw_str eff, dw_loc eff_loc,
                         dw_pvec *scope, dw_pvec *clauses, dw_loc loc);
void dw_parse_add_macro(dw_parser *P, bool cedar, dw_str name, dw_loc name_loc, dw_pvec *params,
                        dw_expr *body, dw_str tbody, dw_loc tloc, dw_loc loc);
dw_temporal *dw_parse_temporal_leaf(dw_parser *P, dw_str body, dw_loc loc, dw_tmode mode);

#endif
