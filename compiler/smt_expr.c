/* smt_expr.c - Cedar expressions as Z3 terms (equality, hierarchy, attributes, operators, extension calls): separate from smt.c's environment and solver, which it is called from per policy. */
#include "smt_int.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "macros.h"

/* ------------------------------------------------------------------ operations */

static sv bool_sv(Z3_ast v, Z3_ast err) { sv r = { .t = &TY_BOOL, .v = v, .err = err }; return r; }

static bool bv_type(const dw_type *t)
{
    return t && (t->kind == DW_T_LONG || t->kind == DW_T_DECIMAL || t->kind == DW_T_DATETIME || t->kind == DW_T_DURATION);
}

static Z3_ast eq_val(dw_smt *x, const sv *a, const sv *b);

static Z3_ast rec_eq(dw_smt *x, const srec *a, const srec *b)
{
    Z3_ast r = TRUE_;
    for (size_t i = 0; i < a->n; i++) {
        size_t j = 0;
        while (j < b->n && !dw_str_eq(a->k[i], b->k[j])) j++;
        if (j == b->n) { r = AND(r, NOT(a->has[i])); continue; }
        Z3_ast both = AND(a->has[i], b->has[j]);
        r = AND(r, Z3_mk_eq(C, a->has[i], b->has[j]));
        r = AND(r, Z3_mk_implies(C, both, eq_val(x, &a->v[i], &b->v[j])));
    }
    for (size_t j = 0; j < b->n; j++) {
        size_t i = 0;
        while (i < a->n && !dw_str_eq(a->k[i], b->k[j])) i++;
        if (i == a->n) r = AND(r, NOT(b->has[j]));
    }
    return r;
}

/* a == b as Cedar decides it (different types are unequal, never an error) */
static Z3_ast eq_val(dw_smt *x, const sv *a, const sv *b)
{
    const dw_type *s = a->t, *t = b->t;
    if (!s || !t) FAIL();
    if (s->kind == DW_T_RECORD || t->kind == DW_T_RECORD) {
        if (s->kind != t->kind) return FALSE_;
        return rec_eq(x, a->rec, b->rec);
    }
    if (s->kind == DW_T_ENTITY || t->kind == DW_T_ENTITY) {
        if (s->kind != t->kind || !dw_str_eq(s->name, t->name)) return FALSE_;
        return Z3_mk_eq(C, a->v, b->v);
    }
    if (s->kind != t->kind) return FALSE_;
    if (!Z3_is_eq_sort(C, Z3_get_sort(C, a->v), Z3_get_sort(C, b->v))) return FALSE_;
    if (s->kind == DW_T_SET && (dw_smt_opaque_set(s) || dw_smt_opaque_set(t))) FAIL();
    return Z3_mk_eq(C, a->v, b->v);
}

/* x in y for entities: x == y, or x exists and y is among its ancestors */
Z3_ast dw_smt_in_entity(dw_smt *x, const sv *a, const sv *b)
{
    dw_str ta = a->t->name, tb = b->t->name;
    if (a->lit && b->lit && dw_smt_is_action_type(ta) && dw_smt_is_action_type(tb)) return dw_smt_bool(x, dw_smt_action_below(x, a->lit, b->lit, 0));
    Z3_ast r = dw_str_eq(ta, tb) ? Z3_mk_eq(C, a->v, b->v) : FALSE_;
    if (dw_smt_is_action_type(ta)) return r;
    if (dw_smt_type_below(x, ta, tb, 0)) {
        char *n = dw_arena_printf(&x->a, "%.*s!in!%.*s", (int)ta.len, ta.s, (int)tb.len, tb.s);
        if (!n) FAIL();
        Z3_ast args[2] = { a->v, b->v };
        r = OR(r, AND(dw_smt_exists(x, ta, a->v), dw_smt_app(x, n, x->bool_s, 2, args)));
    }
    return r;
}

static Z3_ast bv_const(dw_smt *x, int64_t v) { return Z3_mk_int64(C, v, x->bv_s); }

/* ------------------------------------------------------------------ expressions */

static sv enc(dw_smt *x, const dw_expr *e);

sv dw_smt_enc_bool(dw_smt *x, const dw_expr *e)
{
    sv r = enc(x, e);
    if (!r.t || r.t->kind != DW_T_BOOL) FAIL();
    return r;
}

static const dw_type *mk_set_type(dw_smt *x, const dw_type *elem)
{
    dw_type *t = dw_smt_xalloc(x, sizeof *t);
    t->kind = DW_T_SET;
    t->elem = (dw_type *)elem;
    return t;
}

static sv attr_of(dw_smt *x, const sv *o, dw_str attr, bool has)
{
    if (!o->t) FAIL();
    if (o->t->kind == DW_T_RECORD) {
        for (size_t i = 0; i < o->rec->n; i++) {
            if (!dw_str_eq(o->rec->k[i], attr)) continue;
            if (has) return bool_sv(o->rec->has[i], o->err);
            sv r = o->rec->v[i];
            r.err = OR(o->err, NOT(o->rec->has[i]));
            return r;
        }
        if (has) return bool_sv(FALSE_, o->err);
        FAIL();
    }
    if (o->t->kind != DW_T_ENTITY || dw_smt_is_action_type(o->t->name)) FAIL();
    const dw_entity_decl *d = dw_smt_entity(x, o->t->name);
    if (!d || !d->shape) FAIL();
    Z3_ast ex = dw_smt_exists(x, o->t->name, o->v);
    for (size_t i = 0; i < d->shape->nattrs; i++) {
        const dw_attr_decl *ad = &d->shape->attrs[i];
        if (!dw_str_eq(ad->name, attr)) continue;
        char *fn = dw_arena_printf(&x->a, "%.*s.%.*s", (int)o->t->name.len, o->t->name.s, (int)attr.len, attr.s);
        if (!fn) FAIL();
        Z3_ast h = TRUE_;
        if (!ad->required) {
            char *hn = dw_arena_printf(&x->a, "%s?", fn);
            if (!hn) FAIL();
            h = dw_smt_app(x, hn, x->bool_s, 1, &o->v);
        }
        if (has) return bool_sv(AND(ex, h), o->err);
        sv r = dw_smt_mk_free(x, ad->type, fn, 1, &o->v);
        r.err = OR(o->err, OR(NOT(ex), NOT(h)));
        return r;
    }
    if (has) return bool_sv(FALSE_, o->err);
    FAIL();
}

static sv tag_of(dw_smt *x, const sv *o, const sv *key, bool has)
{
    if (!o->t || o->t->kind != DW_T_ENTITY || !key->t || key->t->kind != DW_T_STRING) FAIL();
    const dw_entity_decl *d = dw_smt_entity(x, o->t->name);
    Z3_ast err = OR(o->err, key->err);
    if (!d || !d->tags) {
        if (has) return bool_sv(FALSE_, err);
        sv r = bool_sv(FALSE_, TRUE_);   /* no tags: getTag always errors */
        return r;
    }
    Z3_ast args[2] = { o->v, key->v };
    char *fn = dw_arena_printf(&x->a, "%.*s#tag", (int)o->t->name.len, o->t->name.s);
    char *hn = dw_arena_printf(&x->a, "%.*s#tag?", (int)o->t->name.len, o->t->name.s);
    if (!fn || !hn) FAIL();
    Z3_ast h = AND(dw_smt_exists(x, o->t->name, o->v), dw_smt_app(x, hn, x->bool_s, 2, args));
    if (has) return bool_sv(h, err);
    if (d->tags->kind == DW_T_RECORD) FAIL();
    sv r = dw_smt_mk_free(x, d->tags, fn, 2, args);
    r.err = OR(err, NOT(h));
    return r;
}

static sv arith(dw_smt *x, const dw_expr *e)
{
    sv a = enc(x, e->u.kids[0]), b = enc(x, e->u.kids[1]);
    if (!a.t || !b.t || a.t->kind != DW_T_LONG || b.t->kind != DW_T_LONG) FAIL();
    Z3_ast v, ok;
    switch (e->kind) {
    case DW_E_ADD: v = Z3_mk_bvadd(C, a.v, b.v); ok = AND(Z3_mk_bvadd_no_overflow(C, a.v, b.v, true), Z3_mk_bvadd_no_underflow(C, a.v, b.v)); break;
    case DW_E_SUB: v = Z3_mk_bvsub(C, a.v, b.v); ok = AND(Z3_mk_bvsub_no_overflow(C, a.v, b.v), Z3_mk_bvsub_no_underflow(C, a.v, b.v, true)); break;
    default: v = Z3_mk_bvmul(C, a.v, b.v); ok = AND(Z3_mk_bvmul_no_overflow(C, a.v, b.v, true), Z3_mk_bvmul_no_underflow(C, a.v, b.v)); break;
    }
    sv r = { .t = &TY_LONG, .v = v, .err = OR(OR(a.err, b.err), NOT(ok)) };
    return r;
}

static sv compare(dw_smt *x, const dw_expr *e)
{
    sv a = enc(x, e->u.kids[0]), b = enc(x, e->u.kids[1]);
    if (!bv_type(a.t) || !bv_type(b.t) || a.t->kind != b.t->kind) FAIL();
    Z3_ast v;
    switch (e->kind) {
    case DW_E_LT: v = Z3_mk_bvslt(C, a.v, b.v); break;
    case DW_E_LE: v = Z3_mk_bvsle(C, a.v, b.v); break;
    case DW_E_GT: v = Z3_mk_bvsgt(C, a.v, b.v); break;
    default: v = Z3_mk_bvsge(C, a.v, b.v); break;
    }
    return bool_sv(v, OR(a.err, b.err));
}

static sv enc_in(dw_smt *x, const dw_expr *e)
{
    sv a = enc(x, e->u.kids[0]);
    if (!a.t || a.t->kind != DW_T_ENTITY) FAIL();
    const dw_expr *rhs = e->u.kids[1];
    if (rhs->kind == DW_E_SET) {
        Z3_ast v = FALSE_, err = a.err;
        for (size_t k = 0; k < rhs->u.list.n; k++) {
            sv b = enc(x, rhs->u.list.v[k]);
            if (!b.t || b.t->kind != DW_T_ENTITY) FAIL();
            err = OR(err, b.err);
            v = OR(v, dw_smt_in_entity(x, &a, &b));
        }
        return bool_sv(v, err);
    }
    sv b = enc(x, rhs);
    if (!b.t) FAIL();
    if (b.t->kind == DW_T_ENTITY) return bool_sv(dw_smt_in_entity(x, &a, &b), OR(a.err, b.err));
    if (b.t->kind != DW_T_SET || !b.t->elem || b.t->elem->kind != DW_T_ENTITY) FAIL();
    dw_str ta = a.t->name, tb = b.t->elem->name;
    Z3_ast direct = dw_str_eq(ta, tb) ? Z3_mk_set_member(C, a.v, b.v) : FALSE_;
    if (!dw_smt_type_below(x, ta, tb, 0) || dw_smt_is_action_type(ta)) return bool_sv(direct, OR(a.err, b.err));
    /* an ancestor among a set's members: a free Boolean (implied by direct membership) */
    sv f = dw_smt_approx(x, e, &TY_BOOL, FALSE_, false);
    return bool_sv(OR(direct, f.v), OR(a.err, b.err));
}

static sv set_lit(dw_smt *x, const dw_expr *e)
{
    if (e->u.list.n == 0) FAIL();
    sv first = enc(x, e->u.list.v[0]);
    if (!first.t || first.t->kind == DW_T_RECORD || first.t->kind == DW_T_SET) FAIL();
    const dw_type *et = first.t;
    Z3_ast s = Z3_mk_empty_set(C, dw_smt_sort_of(x, et)), err = FALSE_;
    for (size_t k = 0; k < e->u.list.n; k++) {
        sv v = k ? enc(x, e->u.list.v[k]) : first;
        if (!v.t || v.t->kind != et->kind || (et->kind == DW_T_ENTITY && !dw_str_eq(et->name, v.t->name))) FAIL();
        err = OR(err, v.err);
        s = Z3_mk_set_add(C, s, v.v);
    }
    sv r = { .t = mk_set_type(x, et), .v = s, .err = err };
    return r;
}

static sv rec_lit(dw_smt *x, const dw_expr *e)
{
    size_t n = e->u.rec.n;
    dw_type *t = dw_smt_xalloc(x, sizeof *t);
    t->kind = DW_T_RECORD;
    t->attrs = dw_smt_xalloc(x, (n + 1) * sizeof *t->attrs);
    t->nattrs = n;
    srec *rc = dw_smt_xalloc(x, sizeof *rc);
    rc->n = n;
    rc->k = dw_smt_xalloc(x, (n + 1) * sizeof *rc->k);
    rc->v = dw_smt_xalloc(x, (n + 1) * sizeof *rc->v);
    rc->has = dw_smt_xalloc(x, (n + 1) * sizeof *rc->has);
    Z3_ast err = FALSE_;
    for (size_t i = 0; i < n; i++) {
        sv v = enc(x, e->u.rec.v[i].value);
        err = OR(err, v.err);
        v.err = FALSE_;
        rc->k[i] = e->u.rec.v[i].key;
        rc->v[i] = v;
        rc->has[i] = TRUE_;
        t->attrs[i].name = rc->k[i];
        t->attrs[i].type = (dw_type *)v.t;
        t->attrs[i].required = true;
    }
    sv r = { .t = t, .err = err, .rec = rc };
    return r;
}

/* an extension constructor: folded on a literal, else approximated */
static sv ext_ctor(dw_smt *x, const dw_expr *e, const dw_type *t)
{
    if (e->u.call.nargs != 1) return (sv){ .t = t, .v = t == &TY_IPADDR ? Z3_mk_int64(C, 0, x->int_s) : bv_const(x, 0), .err = TRUE_ };
    const dw_expr *a = e->u.call.args[0];
    if (a->kind == DW_E_STRING) {
        const char *s = a->u.str.s;
        size_t n = a->u.str.len;
        int64_t v = 0;
        bool ok;
        if (t == &TY_IPADDR) {
            dw_ipaddr ip;
            ok = dw_ip_parse(s, n, &ip);
            if (ok) {
                size_t k = 0;
                while (k < x->nips && !(dw_ip_equal(&x->ips[k].ip, &ip) && x->ips[k].ip.prefix == ip.prefix)) k++;
                if (k == x->nips) {
                    dw_smt_grow(x, (void **)&x->ips, x->nips, &x->capips, sizeof *x->ips);
                    x->ips[x->nips++].ip = ip;
                }
                return (sv){ .t = t, .v = Z3_mk_int64(C, 1000000 + (int64_t)k, x->int_s), .err = FALSE_ };
            }
        } else if (t == &TY_DECIMAL) ok = dw_decimal_parse(s, n, &v);
        else if (t == &TY_DATETIME) ok = dw_datetime_parse(s, n, &v);
        else ok = dw_duration_parse(s, n, &v);
        if (ok) return (sv){ .t = t, .v = bv_const(x, v), .err = FALSE_ };
        return (sv){ .t = t, .v = t == &TY_IPADDR ? Z3_mk_int64(C, 0, x->int_s) : bv_const(x, 0), .err = TRUE_ };
    }
    sv arg = enc(x, a);
    if (!arg.t || arg.t->kind != DW_T_STRING) FAIL();
    if (t == &TY_DECIMAL) {
        /* decimal(s) errors exactly when s is not -?[0-9]+.[0-9]{1,4} (or is out
         * of range: that part stays a free error); the value is free */
        Z3_ast digit = Z3_mk_re_range(C, Z3_mk_lstring(C, 1, "0"), Z3_mk_lstring(C, 1, "9"));
        Z3_ast parts[4] = { Z3_mk_re_option(C, Z3_mk_seq_to_re(C, Z3_mk_lstring(C, 1, "-"))), Z3_mk_re_plus(C, digit),
                            Z3_mk_seq_to_re(C, Z3_mk_lstring(C, 1, ".")), Z3_mk_re_loop(C, digit, 1, 4) };
        Z3_ast ok = Z3_mk_seq_in_re(C, arg.v, Z3_mk_re_concat(C, 4, parts));
        sv r = dw_smt_approx(x, e, t, arg.err, true);
        r.err = OR(arg.err, NOT(ok));
        return r;
    }
    return dw_smt_approx(x, e, t, arg.err, true);
}

/* [l1, ..., ln].contains(a) on a set literal: l1 == a || ... || ln == a.
 * Z3 4.8.12 decides a disjunction of string equalities at once, but times
 * out on cover queries over a hundred such sets as store chains (the shell
 * allowlists of the Box-shaped set, issue 22). */
static sv contains_lit(dw_smt *x, const dw_expr *e)
{
    const dw_expr *set = e->u.call.recv;
    sv first = enc(x, set->u.list.v[0]);
    if (!first.t || first.t->kind == DW_T_RECORD || first.t->kind == DW_T_SET) FAIL();
    Z3_ast err = FALSE_;
    sv *el = dw_smt_xalloc(x, set->u.list.n * sizeof *el);
    for (size_t k = 0; k < set->u.list.n; k++) {
        el[k] = k ? enc(x, set->u.list.v[k]) : first;
        const dw_type *t = el[k].t;
        if (!t || t->kind != first.t->kind || (t->kind == DW_T_ENTITY && !dw_str_eq(t->name, first.t->name))) FAIL();
        err = OR(err, el[k].err);
    }
    sv a = enc(x, e->u.call.args[0]);
    err = OR(err, a.err);
    const dw_type *et = first.t;
    if (!a.t || a.t->kind != et->kind || (et->kind == DW_T_ENTITY && !dw_str_eq(et->name, a.t->name))) return bool_sv(FALSE_, err);
    Z3_ast v = FALSE_;
    for (size_t k = 0; k < set->u.list.n; k++) v = OR(v, Z3_mk_eq(C, el[k].v, a.v));
    return bool_sv(v, err);
}

static sv method(dw_smt *x, const dw_expr *e)
{
    dw_str m = e->u.call.name;
    size_t na = e->u.call.nargs;
    if (dw_str_is(m, "contains") && na == 1 && e->u.call.recv && e->u.call.recv->kind == DW_E_SET && e->u.call.recv->u.list.n > 0)
        return contains_lit(x, e);
    sv r0 = enc(x, e->u.call.recv);
    if (!r0.t) FAIL();
    sv a1 = { 0 };
    if (na >= 1) a1 = enc(x, e->u.call.args[0]);
    Z3_ast err = na >= 1 ? OR(r0.err, a1.err) : r0.err;
    if (dw_str_is(m, "contains") && na == 1 && r0.t->kind == DW_T_SET) {
        if (dw_smt_opaque_set(r0.t)) return dw_smt_approx(x, e, &TY_BOOL, err, false);
        const dw_type *et = r0.t->elem;
        if (!a1.t || a1.t->kind != et->kind || (et->kind == DW_T_ENTITY && !dw_str_eq(et->name, a1.t->name))) return bool_sv(FALSE_, err);
        return bool_sv(Z3_mk_set_member(C, a1.v, r0.v), err);
    }
    if ((dw_str_is(m, "containsAll") || dw_str_is(m, "containsAny")) && na == 1 && r0.t->kind == DW_T_SET) {
        if (!a1.t || a1.t->kind != DW_T_SET) FAIL();
        if (dw_smt_opaque_set(r0.t) || dw_smt_opaque_set(a1.t)) return dw_smt_approx(x, e, &TY_BOOL, err, false);
        if (!Z3_is_eq_sort(C, Z3_get_sort(C, r0.v), Z3_get_sort(C, a1.v))) FAIL();
        if (dw_str_is(m, "containsAll")) return bool_sv(Z3_mk_set_subset(C, a1.v, r0.v), err);
        Z3_ast both[2] = { r0.v, a1.v };
        Z3_ast in = Z3_mk_set_intersect(C, 2, both);
        return bool_sv(NOT(Z3_mk_eq(C, in, Z3_mk_empty_set(C, Z3_get_array_sort_domain(C, Z3_get_sort(C, r0.v))))), err);
    }
    if (dw_str_is(m, "isEmpty") && na == 0 && r0.t->kind == DW_T_SET) {
        if (dw_smt_opaque_set(r0.t)) return dw_smt_approx(x, e, &TY_BOOL, err, false);
        return bool_sv(Z3_mk_eq(C, r0.v, Z3_mk_empty_set(C, dw_smt_sort_of(x, r0.t->elem))), err);
    }
    if ((dw_str_is(m, "getTag") || dw_str_is(m, "hasTag")) && na == 1) return tag_of(x, &r0, &a1, dw_str_is(m, "hasTag"));
    if (na == 1 && bv_type(r0.t) && a1.t && r0.t->kind == a1.t->kind && r0.t->kind == DW_T_DECIMAL) {
        if (dw_str_is(m, "lessThan")) return bool_sv(Z3_mk_bvslt(C, r0.v, a1.v), err);
        if (dw_str_is(m, "lessThanOrEqual")) return bool_sv(Z3_mk_bvsle(C, r0.v, a1.v), err);
        if (dw_str_is(m, "greaterThan")) return bool_sv(Z3_mk_bvsgt(C, r0.v, a1.v), err);
        if (dw_str_is(m, "greaterThanOrEqual")) return bool_sv(Z3_mk_bvsge(C, r0.v, a1.v), err);
    }
    if (r0.t->kind == DW_T_IPADDR && (dw_str_is(m, "isIpv4") || dw_str_is(m, "isIpv6") || dw_str_is(m, "isLoopback") ||
                                      dw_str_is(m, "isMulticast") || dw_str_is(m, "isInRange")))
        return dw_smt_approx(x, e, &TY_BOOL, err, false);
    if (r0.t->kind == DW_T_DATETIME && dw_str_is(m, "offset") && na == 1 && a1.t && a1.t->kind == DW_T_DURATION) {
        Z3_ast ok = AND(Z3_mk_bvadd_no_overflow(C, r0.v, a1.v, true), Z3_mk_bvadd_no_underflow(C, r0.v, a1.v));
        return (sv){ .t = &TY_DATETIME, .v = Z3_mk_bvadd(C, r0.v, a1.v), .err = OR(err, NOT(ok)) };
    }
    if (r0.t->kind == DW_T_DATETIME && dw_str_is(m, "durationSince") && na == 1 && a1.t && a1.t->kind == DW_T_DATETIME) {
        Z3_ast ok = AND(Z3_mk_bvsub_no_overflow(C, r0.v, a1.v), Z3_mk_bvsub_no_underflow(C, r0.v, a1.v, true));
        return (sv){ .t = &TY_DURATION, .v = Z3_mk_bvsub(C, r0.v, a1.v), .err = OR(err, NOT(ok)) };
    }
    if (r0.t->kind == DW_T_DATETIME && dw_str_is(m, "toDate") && na == 0) return dw_smt_approx(x, e, &TY_DATETIME, err, true);
    if (r0.t->kind == DW_T_DATETIME && dw_str_is(m, "toTime") && na == 0) return dw_smt_approx(x, e, &TY_DURATION, err, false);
    if (r0.t->kind == DW_T_DURATION && na == 0) {
        static const struct { const char *n; int64_t ms; } U[] = {
            { "toMilliseconds", 1 }, { "toSeconds", 1000 }, { "toMinutes", 60000 }, { "toHours", 3600000 }, { "toDays", 86400000 },
        };
        for (size_t k = 0; k < sizeof U / sizeof *U; k++)
            if (dw_str_is(m, U[k].n))
                return (sv){ .t = &TY_LONG, .v = U[k].ms == 1 ? r0.v : Z3_mk_bvsdiv(C, r0.v, bv_const(x, U[k].ms)), .err = err };
    }
    FAIL();
}

/* `like` with at most two wildcards, as equality, prefix, suffix and
 * containment (cheaper for the string solver than a regular expression) */
static Z3_ast like_fast(dw_smt *x, Z3_ast s, const dw_like_pattern *p)
{
    const dw_str *g = p->seg;
    if (p->nseg == 1) return Z3_mk_eq(C, s, Z3_mk_lstring(C, (unsigned)g[0].len, g[0].s));
    if (p->nseg == 2) {
        Z3_ast pre = Z3_mk_lstring(C, (unsigned)g[0].len, g[0].s), suf = Z3_mk_lstring(C, (unsigned)g[1].len, g[1].s);
        Z3_ast r = TRUE_;
        if (g[0].len) r = AND(r, Z3_mk_seq_prefix(C, pre, s));
        if (g[1].len) r = AND(r, Z3_mk_seq_suffix(C, suf, s));
        if (g[0].len && g[1].len)
            r = AND(r, Z3_mk_ge(C, Z3_mk_seq_length(C, s), Z3_mk_int64(C, (int64_t)(g[0].len + g[1].len), x->int_s)));
        return r;
    }
    if (p->nseg == 3 && g[0].len == 0 && g[2].len == 0)
        return Z3_mk_seq_contains(C, s, Z3_mk_lstring(C, (unsigned)g[1].len, g[1].s));
    return NULL;
}

static sv enc(dw_smt *x, const dw_expr *e)
{
    if (!e) FAIL();
    switch (e->kind) {
    case DW_E_BOOL: return bool_sv(dw_smt_bool(x, e->u.b), FALSE_);
    case DW_E_LONG: return (sv){ .t = &TY_LONG, .v = bv_const(x, e->u.i), .err = FALSE_ };
    case DW_E_STRING: return (sv){ .t = &TY_STRING, .v = Z3_mk_lstring(C, (unsigned)e->u.str.len, e->u.str.s), .err = FALSE_ };
    case DW_E_ENTITY: {
        Z3_ast id = Z3_mk_int64(C, dw_smt_lit_number(x, e->u.euid.type, e->u.euid.id), x->int_s);
        if (!dw_smt_is_action_type(e->u.euid.type)) dw_smt_note_entity(x, dw_smt_tname(x, e->u.euid.type), id);
        return dw_smt_entity_value(x, e->u.euid.type, id, &e->u.euid);
    }
    case DW_E_VAR:
        switch (e->u.var) {
        case DW_VAR_PRINCIPAL: return x->principal;
        case DW_VAR_RESOURCE: return x->resource;
        case DW_VAR_ACTION: return x->action;
        default: return x->context;
        }
    case DW_E_IF: {
        sv c = dw_smt_enc_bool(x, e->u.kids[0]), a = enc(x, e->u.kids[1]), b = enc(x, e->u.kids[2]);
        if (!a.t || !b.t || a.t->kind != b.t->kind || a.t->kind == DW_T_RECORD) FAIL();
        if (a.t->kind == DW_T_ENTITY && !dw_str_eq(a.t->name, b.t->name)) FAIL();
        if (!Z3_is_eq_sort(C, Z3_get_sort(C, a.v), Z3_get_sort(C, b.v))) FAIL();
        sv r = a;
        r.lit = NULL;
        r.v = Z3_mk_ite(C, c.v, a.v, b.v);
        r.err = OR(c.err, Z3_mk_ite(C, c.v, a.err, b.err));
        return r;
    }
    case DW_E_AND: {
        /* a constant left operand decides without the right one (which Cedar's
         * validator then does not type either) */
        sv a = dw_smt_enc_bool(x, e->u.kids[0]);
        if (dw_smt_is_false(x, a.v) && dw_smt_is_false(x, a.err)) return a;
        sv b = dw_smt_enc_bool(x, e->u.kids[1]);
        return bool_sv(AND(a.v, b.v), OR(a.err, AND(a.v, b.err)));
    }
    case DW_E_OR: {
        sv a = dw_smt_enc_bool(x, e->u.kids[0]);
        if (dw_smt_is_true(x, a.v) && dw_smt_is_false(x, a.err)) return a;
        sv b = dw_smt_enc_bool(x, e->u.kids[1]);
        return bool_sv(OR(a.v, b.v), OR(a.err, AND(NOT(a.v), b.err)));
    }
    case DW_E_NOT: { sv a = dw_smt_enc_bool(x, e->u.kids[0]); return bool_sv(NOT(a.v), a.err); }
    case DW_E_NEG: {
        sv a = enc(x, e->u.kids[0]);
        if (!a.t || a.t->kind != DW_T_LONG) FAIL();
        return (sv){ .t = &TY_LONG, .v = Z3_mk_bvneg(C, a.v), .err = OR(a.err, NOT(Z3_mk_bvneg_no_overflow(C, a.v))) };
    }
    case DW_E_EQ: case DW_E_NE: {
        sv a = enc(x, e->u.kids[0]), b = enc(x, e->u.kids[1]);
        Z3_ast v = eq_val(x, &a, &b);
        return bool_sv(e->kind == DW_E_EQ ? v : NOT(v), OR(a.err, b.err));
    }
    case DW_E_LT: case DW_E_LE: case DW_E_GT: case DW_E_GE: return compare(x, e);
    case DW_E_IN: return enc_in(x, e);
    case DW_E_ADD: case DW_E_SUB: case DW_E_MUL: return arith(x, e);
    case DW_E_HAS: case DW_E_GETATTR: {
        sv o = enc(x, e->u.attr.kids0);
        return attr_of(x, &o, e->u.attr.attr, e->kind == DW_E_HAS);
    }
    case DW_E_HAS_PATH: {
        /* `e has a && e.a has b && …` with e encoded once; a step encoded constant false (and
         * error-free) ends the chain, as DW_E_AND does, the rest not encoded */
        sv o = enc(x, e->u.path.kids0), acc = { 0 };
        for (size_t i = 0; i < e->u.path.n; i++) {
            sv h = attr_of(x, &o, e->u.path.attrs[i], true);
            acc = i ? bool_sv(AND(acc.v, h.v), OR(acc.err, AND(acc.v, h.err))) : h;
            if (dw_smt_is_false(x, acc.v) && dw_smt_is_false(x, acc.err)) return acc;
            if (i + 1 < e->u.path.n) o = attr_of(x, &o, e->u.path.attrs[i], false);
        }
        return acc;
    }
    case DW_E_LIKE: {
        sv s = enc(x, e->u.like.kids0);
        if (!s.t || s.t->kind != DW_T_STRING) FAIL();
        const dw_like_pattern *p = &e->u.like.pat;
        Z3_ast fast = like_fast(x, s.v, p);
        if (fast) return bool_sv(fast, s.err);
        size_t n = p->nseg * 2;
        Z3_ast *parts = dw_smt_xalloc(x, (n + 1) * sizeof *parts);
        size_t k = 0;
        for (size_t i = 0; i < p->nseg; i++) {
            if (i) parts[k++] = Z3_mk_re_full(C, x->re_s);
            if (p->seg[i].len) parts[k++] = Z3_mk_seq_to_re(C, Z3_mk_lstring(C, (unsigned)p->seg[i].len, p->seg[i].s));
        }
        Z3_ast re = k == 0 ? Z3_mk_seq_to_re(C, Z3_mk_lstring(C, 0, "")) : k == 1 ? parts[0] : Z3_mk_re_concat(C, (unsigned)k, parts);
        return bool_sv(Z3_mk_seq_in_re(C, s.v, re), s.err);
    }
    case DW_E_IS: {
        sv o = enc(x, e->u.is.kids0);
        if (!o.t || o.t->kind != DW_T_ENTITY) FAIL();
        bool same = dw_str_eq(o.t->name, e->u.is.type);
        if (!e->u.is.in) return bool_sv(dw_smt_bool(x, same), o.err);
        Z3_ast err = o.err, v = FALSE_;
        const dw_expr *rhs = e->u.is.in;
        if (rhs->kind == DW_E_SET) {
            for (size_t k = 0; k < rhs->u.list.n; k++) {
                sv b = enc(x, rhs->u.list.v[k]);
                if (!b.t || b.t->kind != DW_T_ENTITY) FAIL();
                err = OR(err, b.err);
                v = OR(v, dw_smt_in_entity(x, &o, &b));
            }
        } else {
            sv b = enc(x, rhs);
            if (!b.t || b.t->kind != DW_T_ENTITY) FAIL();
            err = OR(err, b.err);
            v = dw_smt_in_entity(x, &o, &b);
        }
        return bool_sv(same ? v : FALSE_, err);
    }
    case DW_E_SET: return set_lit(x, e);
    case DW_E_RECORD: return rec_lit(x, e);
    case DW_E_METHOD: return method(x, e);
    case DW_E_CALL:
        if (e->u.call.nsegs != 1) FAIL();
        if (dw_str_is(e->u.call.name, "decimal")) return ext_ctor(x, e, &TY_DECIMAL);
        if (dw_str_is(e->u.call.name, "ip")) return ext_ctor(x, e, &TY_IPADDR);
        if (dw_str_is(e->u.call.name, "datetime")) return ext_ctor(x, e, &TY_DATETIME);
        if (dw_str_is(e->u.call.name, "duration")) return ext_ctor(x, e, &TY_DURATION);
        FAIL();
    case DW_E_TEMPORAL: {
        /* A leaf is a free boolean named by its identity (dogwood.md D8):
         * the same leaf text is one variable wherever it occurs, in this set
         * and in the one it is compared with (--against), since on one
         * history and request it has one value. */
        x->approx = true;
        char *n = dw_arena_printf(&x->a, "leaf!%016llx", (unsigned long long)dw_temporal_leaf_identity(e->u.temporal));
        if (!n) FAIL();
        Z3_ast v = dw_smt_app(x, n, x->bool_s, 0, NULL);
        dw_smt_grow(x, (void **)&x->leaves, x->nleaves, &x->capleaves, sizeof *x->leaves);
        x->leaves[x->nleaves++] = (leaf_t){ x->tag, x->leaf_k++, v };
        return bool_sv(v, FALSE_);
    }
    default: FAIL();
    }
}
