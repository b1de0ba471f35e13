/* smt_wire.c - a Z3 model as SMT-LIB text and back (smt_worker.h): how a
 * forked solver worker hands its model to the parent process.
 *
 *   (declare-fun NAME (DOMAIN) RANGE) ...          every symbol the model interprets
 *   (assert (= NAME VALUE))                        a constant
 *   (assert (= (_ as-array F) (lambda (x) ELSE)))  a function's default, then
 *   (assert (= (F ARGS) VALUE)) ...                its entries
 *
 * Declarations name the parent's own symbols: Z3 shares a declaration by
 * name and sorts, so the parsed equations point at the parent's terms. */
#include "smt_worker.h"
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* does t mention a value of an uninterpreted sort (no SMT-LIB spelling)? */
static bool has_opaque(Z3_context c, Z3_ast t, int depth)
{
    if (depth > 200) return true;
    if (Z3_get_sort_kind(c, Z3_get_sort(c, t)) == Z3_UNINTERPRETED_SORT) return true;
    Z3_ast_kind k = Z3_get_ast_kind(c, t);
    if (k == Z3_QUANTIFIER_AST) return has_opaque(c, Z3_get_quantifier_body(c, t), depth + 1);
    if (k != Z3_APP_AST) return false;
    Z3_app a = Z3_to_app(c, t);
    for (unsigned i = 0; i < Z3_get_app_num_args(c, a); i++)
        if (has_opaque(c, Z3_get_app_arg(c, a, i), depth + 1)) return true;
    return false;
}

/* a symbol SMT-LIB can quote (|...| holds neither '|' nor '\') */
static bool spellable(Z3_context c, Z3_func_decl d)
{
    Z3_symbol s = Z3_get_decl_name(c, d);
    if (Z3_get_symbol_kind(c, s) != Z3_STRING_SYMBOL) return true;
    const char *n = Z3_get_symbol_string(c, s);
    return n && !strpbrk(n, "|\\");
}

static int put_ast(Z3_context c, dw_buf *b, Z3_ast t)
{
    if (has_opaque(c, t, 0)) return -1;
    const char *s = Z3_ast_to_string(c, t);
    return s && Z3_get_error_code(c) == Z3_OK ? dw_buf_printf(b, "%s", s) : -1;
}

static int put_eq(Z3_context c, dw_buf *b, Z3_ast l, Z3_ast r)
{
    if (dw_buf_printf(b, "(assert (= ") || put_ast(c, b, l) || dw_buf_putc(b, ' ') || put_ast(c, b, r)) return -1;
    return dw_buf_printf(b, "))\n");
}

static int put_decl(Z3_context c, dw_buf *b, Z3_func_decl d)
{
    if (!spellable(c, d)) return -1;
    const char *s = Z3_func_decl_to_string(c, d);
    return s ? dw_buf_printf(b, "%s\n", s) : -1;
}

/* function f's default as (lambda (w!0 ... w!n-1) ELSE): bound constants
 * stand for the default's free variables (variable i is argument i) */
static int put_func(Z3_context c, dw_buf *b, Z3_func_decl f, Z3_func_interp fi)
{
    unsigned n = Z3_get_arity(c, f);
    Z3_ast els = Z3_func_interp_get_else(c, fi);
    if (!els || n == 0 || n > 16) return -1;
    Z3_ast w[16];
    Z3_app wa[16];
    for (unsigned i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "w!%u", i);
        w[i] = Z3_mk_const(c, Z3_mk_string_symbol(c, name), Z3_get_domain(c, f, i));
        wa[i] = Z3_to_app(c, w[i]);
    }
    Z3_ast body = Z3_substitute_vars(c, els, n, w);
    Z3_ast lam = body ? Z3_mk_lambda_const(c, n, wa, body) : NULL;
    if (!lam || Z3_get_error_code(c) != Z3_OK || put_eq(c, b, Z3_mk_as_array(c, f), lam)) return -1;
    unsigned ne = Z3_func_interp_get_num_entries(c, fi);
    for (unsigned k = 0; k < ne; k++) {
        Z3_func_entry e = Z3_func_interp_get_entry(c, fi, k);
        Z3_func_entry_inc_ref(c, e);
        Z3_ast args[16];
        for (unsigned i = 0; i < n; i++) args[i] = Z3_func_entry_get_arg(c, e, i);
        int rc = put_eq(c, b, Z3_mk_app(c, f, n, args), Z3_func_entry_get_value(c, e));
        Z3_func_entry_dec_ref(c, e);
        if (rc) return -1;
    }
    return 0;
}

int dw_smt_model_write(Z3_context c, Z3_model m, dw_buf *b)
{
    Z3_set_ast_print_mode(c, Z3_PRINT_SMTLIB2_COMPLIANT);
    unsigned nc = Z3_model_get_num_consts(c, m), nf = Z3_model_get_num_funcs(c, m);
    for (unsigned i = 0; i < nc; i++)
        if (put_decl(c, b, Z3_model_get_const_decl(c, m, i))) return -1;
    for (unsigned i = 0; i < nf; i++)
        if (put_decl(c, b, Z3_model_get_func_decl(c, m, i))) return -1;
    for (unsigned i = 0; i < nc; i++) {
        Z3_func_decl d = Z3_model_get_const_decl(c, m, i);
        Z3_ast v = Z3_model_get_const_interp(c, m, d);
        if (v && put_eq(c, b, Z3_mk_app(c, d, 0, NULL), v)) return -1;
    }
    for (unsigned i = 0; i < nf; i++) {
        Z3_func_decl f = Z3_model_get_func_decl(c, m, i);
        Z3_func_interp fi = Z3_model_get_func_interp(c, m, f);
        if (!fi) return -1;
        Z3_func_interp_inc_ref(c, fi);
        int rc = put_func(c, b, f, fi);
        Z3_func_interp_dec_ref(c, fi);
        if (rc) return -1;
    }
    return Z3_get_error_code(c) == Z3_OK ? 0 : -1;
}

/* ------------------------------------------------------------------ reading */

static Z3_model fail(Z3_context c, Z3_model m, char *err, size_t cap, const char *why)
{
    snprintf(err, cap, "the worker's model could not be rebuilt (%s)", why);
    if (m) Z3_model_dec_ref(c, m);
    return NULL;
}

/* a lambda's body as a function default: the lambda binds w!0 ... w!n-1
 * left to right, so w!i is de Bruijn variable n-1-i; a default's variable i
 * is argument i */
static Z3_ast default_of(Z3_context c, Z3_func_decl f, Z3_ast lam)
{
    unsigned n = Z3_get_arity(c, f);
    if (!Z3_is_lambda(c, lam) || Z3_get_quantifier_num_bound(c, lam) != n || n > 16) return NULL;
    Z3_ast body = Z3_get_quantifier_body(c, lam);
    if (n == 1) return body;
    Z3_ast to[16];
    for (unsigned j = 0; j < n; j++) to[j] = Z3_mk_bound(c, n - 1 - j, Z3_get_domain(c, f, n - 1 - j));
    return Z3_substitute_vars(c, body, n, to);
}

Z3_model dw_smt_model_read(Z3_context c, const char *text, Z3_sort opaque, char *err, size_t cap)
{
    Z3_symbol on = Z3_mk_string_symbol(c, "Opaque");
    Z3_ast_vector v = Z3_parse_smtlib2_string(c, text, opaque ? 1 : 0, &on, &opaque, 0, NULL, NULL);
    if (!v || Z3_get_error_code(c) != Z3_OK) return fail(c, NULL, err, cap, "SMT-LIB parse error");
    Z3_ast_vector_inc_ref(c, v);
    Z3_model m = Z3_mk_model(c);
    Z3_model_inc_ref(c, m);
    Z3_func_interp fi = NULL;
    Z3_func_decl f = NULL;
    const char *why = NULL;
    unsigned n = Z3_ast_vector_size(c, v);
    for (unsigned k = 0; k < n && !why; k++) {
        Z3_ast e = Z3_ast_vector_get(c, v, k);
        if (Z3_get_ast_kind(c, e) != Z3_APP_AST || Z3_get_app_num_args(c, Z3_to_app(c, e)) != 2) { why = "not an equation"; break; }
        Z3_ast l = Z3_get_app_arg(c, Z3_to_app(c, e), 0), r = Z3_get_app_arg(c, Z3_to_app(c, e), 1);
        if (Z3_is_as_array(c, l)) {
            if (fi) Z3_func_interp_dec_ref(c, fi);
            f = Z3_get_as_array_func_decl(c, l);
            Z3_ast els = default_of(c, f, r);
            fi = els ? Z3_add_func_interp(c, m, f, els) : NULL;
            if (!fi) { why = "a function default"; break; }
            Z3_func_interp_inc_ref(c, fi);
            continue;
        }
        if (Z3_get_ast_kind(c, l) != Z3_APP_AST) { why = "not a symbol"; break; }
        Z3_app a = Z3_to_app(c, l);
        Z3_func_decl d = Z3_get_app_decl(c, a);
        unsigned na = Z3_get_app_num_args(c, a);
        if (na == 0) {
            Z3_add_const_interp(c, m, d, r);
            if (Z3_get_error_code(c) != Z3_OK) why = "a constant";
            continue;
        }
        if (!fi || !Z3_is_eq_func_decl(c, d, f)) { why = "an entry without its function"; break; }
        Z3_ast_vector args = Z3_mk_ast_vector(c);
        Z3_ast_vector_inc_ref(c, args);
        for (unsigned i = 0; i < na; i++) Z3_ast_vector_push(c, args, Z3_get_app_arg(c, a, i));
        Z3_func_interp_add_entry(c, fi, args, r);
        if (Z3_get_error_code(c) != Z3_OK) why = "a function entry";
        Z3_ast_vector_dec_ref(c, args);
    }
    if (fi) Z3_func_interp_dec_ref(c, fi);
    Z3_ast_vector_dec_ref(c, v);
    return why ? fail(c, m, err, cap, why) : m;
}
