/* typecheck_expr.c - the typing of Cedar expressions in one request environment (literals, operators, attributes and tags, extension calls): the core of strict validation, separate from the schema lookups and the per-policy driver in typecheck.c. */
#include "typecheck_int.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- literals ----
 * Lean compares `==` operands by value when both are literals; `action` is a
 * literal there because it is replaced by the environment's action. */
typedef struct tc_lit { dw_expr_kind k; bool b; int64_t i; dw_str s, ty; } tc_lit;

static bool as_lit(const tc *T, const dw_expr *e, tc_lit *l)
{
    memset(l, 0, sizeof *l);
    switch (e->kind) {
    case DW_E_BOOL: l->k = e->kind; l->b = e->u.b; return true;
    case DW_E_AND: case DW_E_OR: {
        /* Cedar folds `&&` / `||` of two Boolean literals into a literal
         * before `==` looks for literals: `(true || false) == 1` is False,
         * `(true || 1) == 1` is a type error (checked against cedar-wasm) */
        tc_lit a, b;
        if (!as_lit(T, e->u.kids[0], &a) || a.k != DW_E_BOOL || !as_lit(T, e->u.kids[1], &b) || b.k != DW_E_BOOL)
            return false;
        l->k = DW_E_BOOL;
        l->b = e->kind == DW_E_AND ? (a.b && b.b) : (a.b || b.b);
        return true;
    }
    case DW_E_LONG: l->k = e->kind; l->i = e->u.i; return true;
    case DW_E_STRING: l->k = e->kind; l->s = e->u.str; return true;
    case DW_E_ENTITY: l->k = e->kind; l->ty = e->u.euid.type; l->s = e->u.euid.id; return true;
    case DW_E_VAR:
        if (e->u.var != DW_VAR_ACTION || !T->act) return false;
        l->k = DW_E_ENTITY; l->ty = T->act->uid.type; l->s = T->act->uid.id;
        return true;
    default: return false;
    }
}

static bool lit_eq(const tc_lit *a, const tc_lit *b)
{
    if (a->k != b->k) return false;
    switch (a->k) {
    case DW_E_BOOL: return a->b == b->b;
    case DW_E_LONG: return a->i == b->i;
    case DW_E_STRING: return dw_str_eq(a->s, b->s);
    default: return dw_str_eq(a->ty, b->ty) && dw_str_eq(a->s, b->s);
    }
}

/* Lean's actionUID?: a literal (or the substituted `action`) naming a declared action. */
static long action_uid_of(const tc *T, const dw_expr *e)
{
    tc_lit l;
    if (!as_lit(T, e, &l) || l.k != DW_E_ENTITY) return -1;
    return dw_tc_act_index(T, l.ty, l.s);
}

/* Type of an entity literal; NULL (silently) when the name pass reported it. */
const dw_type *dw_tc_euid_type(tc *T, dw_str type, dw_str id)
{
    const dw_entity_decl *d = dw_schema_entity(T->s, type.s, type.len);
    if (d && dw_tc_enum_id_ok(d, id)) return dw_tc_entity_ty(T, type);
    if (dw_tc_act_index(T, type, id) >= 0) return dw_tc_entity_ty(T, type);
    return NULL;
}

/* ---- typing ---- */
static tc_res type_of(tc *T, const dw_expr *e, tc_caps c);

static void expect_bool_err(tc *T, const dw_expr *e, const dw_type *t, const char *hint)
{
    ERROR(T, e->loc, hint, "unexpected type: expected Bool but saw %s", dw_tc_ty_str(T, t));
}

tc_res dw_tc_type_bool_operand(tc *T, const dw_expr *e, tc_caps c, const char *hint)
{
    tc_res r = type_of(T, e, c);
    if (r.t && !is_bool(r.t)) { expect_bool_err(T, e, r.t, hint); return BAD; }
    return r;
}

static tc_res type_if(tc *T, const dw_expr *e, tc_caps c)
{
    const dw_expr *x1 = e->u.kids[0], *x2 = e->u.kids[1], *x3 = e->u.kids[2];
    tc_res r1 = dw_tc_type_bool_operand(T, x1, c, "the condition of `if` must be a boolean");
    if (!r1.t) { type_of(T, x2, c); type_of(T, x3, c); return BAD; }
    if (r1.t == &dw_tc_t_true) {
        tc_res r2 = type_of(T, x2, dw_tc_caps_union(T, c, r1.c));
        if (!r2.t) return BAD;
        return ok_c(r2.t, dw_tc_caps_union(T, r1.c, r2.c));
    }
    if (r1.t == &dw_tc_t_false) return type_of(T, x3, c);
    tc_res r2 = type_of(T, x2, dw_tc_caps_union(T, c, r1.c));
    tc_res r3 = type_of(T, x3, c);
    if (!r2.t || !r3.t) return BAD;
    const dw_type *t = dw_tc_lub(T, r2.t, r3.t);
    if (!t) {
        ERROR(T, e->loc, "both branches of `if` must have the same type",
              "the types %s and %s are not compatible", dw_tc_ty_str(T, r2.t), dw_tc_ty_str(T, r3.t));
        return BAD;
    }
    return ok_c(t, dw_tc_caps_inter(T, dw_tc_caps_union(T, r1.c, r2.c), r3.c));
}

static tc_res type_and(tc *T, const dw_expr *a, const dw_expr *b, tc_caps c)
{
    static const char *h = "both operands of `&&` must be booleans";
    tc_res r1 = dw_tc_type_bool_operand(T, a, c, h);
    if (!r1.t) { type_of(T, b, c); return BAD; }
    if (r1.t == &dw_tc_t_false) return ok(&dw_tc_t_false);        /* b is not checked at all */
    tc_res r2 = dw_tc_type_bool_operand(T, b, dw_tc_caps_union(T, c, r1.c), h);
    if (!r2.t) return BAD;
    if (r2.t == &dw_tc_t_false) return ok(&dw_tc_t_false);
    tc_caps cc = dw_tc_caps_union(T, r1.c, r2.c);
    if (r2.t == &dw_tc_t_true) return ok_c(r1.t, cc);
    return ok_c(&dw_tc_t_bool, cc);
}

static tc_res type_or(tc *T, const dw_expr *a, const dw_expr *b, tc_caps c)
{
    static const char *h = "both operands of `||` must be booleans";
    tc_res r1 = dw_tc_type_bool_operand(T, a, c, h);
    if (!r1.t) { type_of(T, b, c); return BAD; }
    if (r1.t == &dw_tc_t_true) return ok(&dw_tc_t_true);          /* b is not checked at all */
    tc_res r2 = dw_tc_type_bool_operand(T, b, c, h);
    if (!r2.t) return BAD;
    if (r1.t == &dw_tc_t_false) return r2;
    if (r2.t == &dw_tc_t_true) return ok(&dw_tc_t_true);
    if (r2.t == &dw_tc_t_false) return ok_c(r1.t, r1.c);
    return ok_c(&dw_tc_t_bool, dw_tc_caps_inter(T, r1.c, r2.c));
}

const dw_type *dw_tc_bool_not(const dw_type *t)
{
    return t == &dw_tc_t_true ? &dw_tc_t_false : t == &dw_tc_t_false ? &dw_tc_t_true : &dw_tc_t_bool;
}

/* `x == y` given the operand types (Lean typeOfEq). */
static tc_res eq_of(tc *T, const dw_expr *e, const dw_expr *x, const dw_expr *y, const dw_type *tx, const dw_type *ty)
{
    tc_lit lx, ly;
    if (as_lit(T, x, &lx) && as_lit(T, y, &ly)) return ok(bool_of(lit_eq(&lx, &ly)));
    if (dw_tc_lub(T, tx, ty)) return ok(&dw_tc_t_bool);
    if (tx->kind == DW_T_ENTITY && ty->kind == DW_T_ENTITY) return ok(&dw_tc_t_false);
    ERROR(T, e->loc, "`==` and `!=` compare values of the same type",
          "the types %s and %s are not compatible", dw_tc_ty_str(T, tx), dw_tc_ty_str(T, ty));
    return BAD;
}

/* `x in y` given the operand types (Lean typeOfInₑ / typeOfInₛ). */
static tc_res in_of(tc *T, const dw_expr *x, const dw_expr *y, const dw_type *tx, const dw_type *ty)
{
    if (tx->kind != DW_T_ENTITY) {
        ERROR(T, x->loc, "the left operand of `in` must be an entity",
              "unexpected type: expected an entity type but saw %s", dw_tc_ty_str(T, tx));
        return BAD;
    }
    long a = action_uid_of(T, x);
    if (ty->kind == DW_T_ENTITY) {
        tc_lit l;
        if (a >= 0 && y->kind == DW_E_ENTITY && as_lit(T, y, &l)) return ok(bool_of(dw_tc_act_desc(T, a, l.ty, l.s)));
        if (a >= 0 && y->kind == DW_E_VAR && y->u.var == DW_VAR_ACTION && as_lit(T, y, &l))
            return ok(bool_of(dw_tc_act_desc(T, a, l.ty, l.s)));
        return ok(dw_tc_ent_desc(T, tx->name, ty->name) ? &dw_tc_t_bool : &dw_tc_t_false);
    }
    if (ty->kind == DW_T_SET && ty->elem && ty->elem->kind == DW_T_ENTITY) {
        if (a >= 0 && y->kind == DW_E_SET) {
            bool all = true, any = false;
            for (size_t i = 0; i < y->u.list.n; i++) {
                tc_lit l;
                if (!as_lit(T, y->u.list.v[i], &l) || l.k != DW_E_ENTITY) { all = false; break; }
                if (dw_tc_act_desc(T, a, l.ty, l.s)) any = true;
            }
            if (all) return ok(bool_of(any));
        }
        return ok(dw_tc_ent_desc(T, tx->name, ty->elem->name) ? &dw_tc_t_bool : &dw_tc_t_false);
    }
    ERROR(T, y->loc, "the right operand of `in` must be an entity or a set of entities",
          "unexpected type: expected an entity type or a set of entities but saw %s", dw_tc_ty_str(T, ty));
    return BAD;
}

/* A variable or attribute chain as text (`principal.manager.email`), or NULL
 * for other expressions.  With drop_context, `context.input.arg1` prints as
 * `input.arg1`, the way Cedar names context attributes. */
static const char *path_text(tc *T, const dw_expr *e, bool drop_context)
{
    static const char *names[] = { "principal", "action", "resource", "context" };
    const dw_expr *chain[DW_MAX_EXPR_DEPTH + 2];
    size_t n = 0;
    while (e->kind == DW_E_GETATTR && n < DW_MAX_EXPR_DEPTH) { chain[n++] = e; e = e->u.attr.kids0; }
    if (e->kind != DW_E_VAR) return NULL;
    dw_buf b = {0};
    bool root = !(drop_context && n && e->u.var == DW_VAR_CONTEXT);
    if (root) dw_buf_printf(&b, "%s", names[e->u.var]);
    for (size_t i = n; i-- > 0;)
        dw_buf_printf(&b, "%s%.*s", (root || i + 1 < n) ? "." : "", (int)chain[i]->u.attr.attr.len,
                      chain[i]->u.attr.attr.s);
    char *out = b.p ? dw_arena_memdup(&T->a, b.p, b.len) : NULL;
    dw_buf_free(&b);
    return out;
}

static bool is_context(const dw_expr *e) { return e->kind == DW_E_VAR && e->u.var == DW_VAR_CONTEXT; }

/* The shape of an entity type, or NULL for action types and unknown ones. */
static const dw_type *shape_of(const tc *T, dw_str ety)
{
    const dw_entity_decl *d = dw_schema_entity(T->s, ety.s, ety.len);
    return d ? d->shape : NULL;
}

static tc_res has_in_record(tc *T, const dw_type *rec, const dw_expr *x, dw_str a, tc_caps c, bool known_to_exist)
{
    const dw_attr_decl *ad = dw_tc_find_attr(rec, a);
    if (!ad) return ok(&dw_tc_t_false);
    if (dw_tc_caps_has(c, x, a, NULL) || (ad->required && known_to_exist)) return ok(&dw_tc_t_true);
    return ok_c(&dw_tc_t_bool, dw_tc_caps_one(T, x, a, NULL));
}

static tc_res type_has(tc *T, const dw_expr *e, tc_caps c)
{
    const dw_expr *x = e->u.attr.kids0;
    dw_str a = e->u.attr.attr;
    tc_res r = type_of(T, x, c);
    if (!r.t) return BAD;
    if (r.t->kind == DW_T_RECORD) return has_in_record(T, r.t, x, a, c, true);
    if (r.t->kind == DW_T_ENTITY) {
        const dw_type *sh = shape_of(T, r.t->name);
        if (sh) return has_in_record(T, sh, x, a, c, false);
        return ok(&dw_tc_t_false);                          /* actions have no attributes */
    }
    ERROR(T, x->loc, "`has` tests an attribute of an entity or a record",
          "unexpected type: expected an entity or a record but saw %s", dw_tc_ty_str(T, r.t));
    return BAD;
}

static tc_res attr_in_record(tc *T, const dw_expr *e, const dw_type *rec, const dw_type *whole, tc_caps c);

/* `e has a.b.c` is `e has a && e.a has b && e.a.b has c` typed as written (Cedar's validator on
 * its desugaring), e typed once: each step's value must be an entity or a record (an error at the
 * name that read it; Cedar points at the whole `has`), a step typed False ends the chain False
 * without typing the rest, and each step's capability lets the next read its name.  The reads
 * `e.a`, `e.a.b` are GETATTR nodes made here, sharing e, so capabilities compare as written. */
static tc_res type_has_path(tc *T, const dw_expr *e, tc_caps c)
{
    const dw_expr *obj = e->u.path.kids0;
    tc_res r = type_of(T, obj, c);
    if (!r.t) return BAD;
    const dw_type *t = r.t, *res = &dw_tc_t_true;
    tc_caps acc = NOCAPS;
    for (size_t i = 0; i < e->u.path.n; i++) {
        dw_str a = e->u.path.attrs[i];
        tc_caps ci = dw_tc_caps_union(T, c, acc);
        const dw_type *rec = t->kind == DW_T_RECORD ? t : t->kind == DW_T_ENTITY ? shape_of(T, t->name) : NULL;
        if (t->kind != DW_T_RECORD && t->kind != DW_T_ENTITY) {
            const char *read = i ? path_text(T, obj, false) : NULL;   /* the step's value, `principal.n` */
            ERROR(T, i ? e->u.path.locs[i - 1] : obj->loc,
                  read ? fmt(T, "`has` tests an attribute of an entity or a record: `%s` has no attribute `%.*s` to test",
                             read, (int)a.len, a.s)
                       : "`has` tests an attribute of an entity or a record",
                  "unexpected type: expected an entity or a record but saw %s", dw_tc_ty_str(T, t));
            return BAD;
        }
        if (!rec) return ok(&dw_tc_t_false);                  /* actions have no attributes */
        tc_res h = has_in_record(T, rec, obj, a, ci, t->kind == DW_T_RECORD);
        if (h.t == &dw_tc_t_false) return ok(&dw_tc_t_false);  /* the rest is not typed at all */
        if (h.t != &dw_tc_t_true) res = &dw_tc_t_bool;
        acc = dw_tc_caps_union(T, acc, h.c);
        if (i + 1 == e->u.path.n) break;
        dw_expr *g = alloc(T, sizeof *g);
        *g = (dw_expr){ .kind = DW_E_GETATTR, .depth = obj->depth + 1, .loc = e->loc };
        g->u.attr.kids0 = (dw_expr *)obj;
        g->u.attr.attr = a;
        tc_res gr = attr_in_record(T, g, rec, t, dw_tc_caps_union(T, c, acc));
        if (!gr.t) return BAD;
        t = gr.t;
        obj = g;
    }
    return ok_c(res, acc);
}

static tc_res attr_in_record(tc *T, const dw_expr *e, const dw_type *rec, const dw_type *whole, tc_caps c)
{
    const dw_expr *x = e->u.attr.kids0;
    dw_str a = e->u.attr.attr;
    const dw_attr_decl *ad = dw_tc_find_attr(rec, a);
    if (ad && (ad->required || dw_tc_caps_has(c, x, a, NULL))) return ok(ad->type);
    if (ad) {
        const char *path = path_text(T, e, true), *base = path_text(T, x, false);
        ERROR(T, e->loc, base ? fmt(T, "test it first: `%s has %.*s && ...`", base, (int)a.len, a.s)
                              : "test it first with `has` on the same expression",
              "unable to guarantee safety of access to optional attribute `%s`",
              path ? path : fmt(T, "%.*s", (int)a.len, a.s));
        return BAD;
    }
    /* did you mean the closest declared attribute? */
    size_t best = (size_t)-1;
    const char *hint = NULL;
    for (size_t k = 0; rec && k < rec->nattrs; k++)
        if (dw_tc_close_enough(a, rec->attrs[k].name, &best))
            hint = fmt(T, "did you mean `%.*s`?", (int)rec->attrs[k].name.len, rec->attrs[k].name.s);
    if (is_context(x) && T->act)
        ERROR(T, e->loc, hint, "attribute `%.*s` in context for %s not found", (int)a.len, a.s,
              dw_tc_euid_str(T, T->act->uid.type, T->act->uid.id));
    else if (whole->kind == DW_T_ENTITY)
        ERROR(T, e->loc, hint, "attribute `%.*s` on entity type `%.*s` not found", (int)a.len, a.s,
              (int)whole->name.len, whole->name.s);
    else
        ERROR(T, e->loc, hint, "attribute `%.*s` not found in record type %s", (int)a.len, a.s, dw_tc_ty_str(T, whole));
    return BAD;
}

static tc_res type_getattr(tc *T, const dw_expr *e, tc_caps c)
{
    const dw_expr *x = e->u.attr.kids0;
    tc_res r = type_of(T, x, c);
    if (!r.t) return BAD;
    if (r.t->kind == DW_T_RECORD) return attr_in_record(T, e, r.t, r.t, c);
    if (r.t->kind == DW_T_ENTITY) {
        const dw_type *sh = shape_of(T, r.t->name);
        if (sh) return attr_in_record(T, e, sh, r.t, c);
        ERROR(T, e->loc, NULL, "attribute `%.*s` on entity type `%.*s` not found: actions have no attributes",
              (int)e->u.attr.attr.len, e->u.attr.attr.s, (int)r.t->name.len, r.t->name.s);
        return BAD;
    }
    ERROR(T, x->loc, "only entities and records have attributes",
          "unexpected type: expected an entity or a record but saw %s", dw_tc_ty_str(T, r.t));
    return BAD;
}

static tc_res type_set(tc *T, const dw_expr *e, tc_caps c)
{
    size_t n = e->u.list.n;
    const dw_type **tys = alloc(T, n * sizeof *tys);
    bool bad = false;
    for (size_t i = 0; i < n; i++) {
        tys[i] = type_of(T, e->u.list.v[i], c).t;
        if (!tys[i]) bad = true;
    }
    if (bad) return BAD;
    if (!n) {
        ERROR(T, e->loc, "the element type of `[]` is unknown; test `isEmpty()` on a typed set instead",
              "empty set literals are forbidden in policies");
        return BAD;
    }
    const dw_type *t = tys[0];
    for (size_t i = 1; i < n; i++) {
        const dw_type *u = dw_tc_lub(T, t, tys[i]);
        if (!u) {
            ERROR(T, e->u.list.v[i]->loc, "every element of a set literal must have the same type",
                  "set elements have incompatible types: %s and %s", dw_tc_ty_str(T, t), dw_tc_ty_str(T, tys[i]));
            return BAD;
        }
        t = u;
    }
    dw_type *s = alloc(T, sizeof *s);
    s->kind = DW_T_SET;
    s->elem = (dw_type *)t;
    return ok(s);
}

static int attr_cmp(const void *pa, const void *pb)
{
    const dw_attr_decl *a = pa, *b = pb;
    size_t n = a->name.len < b->name.len ? a->name.len : b->name.len;
    int c = n ? memcmp(a->name.s, b->name.s, n) : 0;
    if (c) return c;
    return a->name.len < b->name.len ? -1 : a->name.len > b->name.len;
}

static tc_res type_record(tc *T, const dw_expr *e, tc_caps c)
{
    size_t n = e->u.rec.n;
    dw_attr_decl *at = alloc(T, n * sizeof *at);
    bool bad = false;
    for (size_t i = 0; i < n; i++) {
        at[i].name = e->u.rec.v[i].key;
        at[i].required = true;
        at[i].type = (dw_type *)type_of(T, e->u.rec.v[i].value, c).t;
        if (!at[i].type) bad = true;
    }
    if (bad) return BAD;
    qsort(at, n, sizeof *at, attr_cmp);
    /* keep the last of duplicate keys, as Cedar's record literal does */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && dw_str_eq(at[m - 1].name, at[i].name)) at[m - 1] = at[i];
        else at[m++] = at[i];
    }
    dw_type *t = alloc(T, sizeof *t);
    t->kind = DW_T_RECORD;
    t->attrs = at;
    t->nattrs = m;
    return ok(t);
}

/* Extension methods: receiver and argument kinds, result. */
typedef struct ext_sig { const char *name; size_t nargs; dw_type_kind a0, a1; const dw_type *res; } ext_sig;
static const ext_sig EXT_METHODS[] = {
    { "lessThan", 2, DW_T_DECIMAL, DW_T_DECIMAL, &dw_tc_t_bool },
    { "lessThanOrEqual", 2, DW_T_DECIMAL, DW_T_DECIMAL, &dw_tc_t_bool },
    { "greaterThan", 2, DW_T_DECIMAL, DW_T_DECIMAL, &dw_tc_t_bool },
    { "greaterThanOrEqual", 2, DW_T_DECIMAL, DW_T_DECIMAL, &dw_tc_t_bool },
    { "isIpv4", 1, DW_T_IPADDR, DW_T_IPADDR, &dw_tc_t_bool },
    { "isIpv6", 1, DW_T_IPADDR, DW_T_IPADDR, &dw_tc_t_bool },
    { "isLoopback", 1, DW_T_IPADDR, DW_T_IPADDR, &dw_tc_t_bool },
    { "isMulticast", 1, DW_T_IPADDR, DW_T_IPADDR, &dw_tc_t_bool },
    { "isInRange", 2, DW_T_IPADDR, DW_T_IPADDR, &dw_tc_t_bool },
    { "offset", 2, DW_T_DATETIME, DW_T_DURATION, &dw_tc_t_datetime },
    { "durationSince", 2, DW_T_DATETIME, DW_T_DATETIME, &dw_tc_t_duration },
    { "toDate", 1, DW_T_DATETIME, DW_T_DATETIME, &dw_tc_t_datetime },
    { "toTime", 1, DW_T_DATETIME, DW_T_DATETIME, &dw_tc_t_duration },
    { "toDays", 1, DW_T_DURATION, DW_T_DURATION, &dw_tc_t_long },
    { "toHours", 1, DW_T_DURATION, DW_T_DURATION, &dw_tc_t_long },
    { "toMinutes", 1, DW_T_DURATION, DW_T_DURATION, &dw_tc_t_long },
    { "toSeconds", 1, DW_T_DURATION, DW_T_DURATION, &dw_tc_t_long },
    { "toMilliseconds", 1, DW_T_DURATION, DW_T_DURATION, &dw_tc_t_long },
};

static const char *kind_name(dw_type_kind k)
{
    switch (k) {
    case DW_T_BOOL: return "Bool";
    case DW_T_LONG: return "Long";
    case DW_T_STRING: return "String";
    case DW_T_DECIMAL: return "decimal";
    case DW_T_IPADDR: return "ipaddr";
    case DW_T_DATETIME: return "datetime";
    case DW_T_DURATION: return "duration";
    default: return "?";
    }
}

static const char *with_article(dw_type_kind k)
{
    switch (k) {
    case DW_T_DECIMAL: return "a decimal";
    case DW_T_IPADDR: return "an ipaddr";
    case DW_T_DATETIME: return "a datetime";
    case DW_T_DURATION: return "a duration";
    default: return "a value of another type";
    }
}

/* hasTag / getTag (Lean typeOfHasTag, typeOfGetTag); the capability key is
 * the receiver expression with the tag expression. */
static tc_res type_tag_method(tc *T, const dw_expr *e, tc_caps c, bool get, const dw_type *tr, const dw_type *tk)
{
    const dw_expr *x = e->u.call.recv, *k = e->u.call.args[0];
    static const dw_str none = { "", 0 };
    if (tr->kind != DW_T_ENTITY) {
        ERROR(T, x->loc, "only entities have tags", "unexpected type: expected an entity type but saw %s", dw_tc_ty_str(T, tr));
        return BAD;
    }
    if (tk->kind != DW_T_STRING) {
        ERROR(T, k->loc, "tag keys are strings", "unexpected type: expected String but saw %s", dw_tc_ty_str(T, tk));
        return BAD;
    }
    const dw_entity_decl *d = dw_schema_entity(T->s, tr->name.s, tr->name.len);
    const dw_type *tags = d ? d->tags : NULL;
    if (!get) {
        if (!tags) return ok(&dw_tc_t_false);                 /* no tags declared: never true */
        if (dw_tc_caps_has(c, x, none, k)) return ok(&dw_tc_t_true);
        return ok_c(&dw_tc_t_bool, dw_tc_caps_one(T, x, none, k));
    }
    if (!tags) {
        ERROR(T, e->loc, "declare `tags T` on the entity type to use getTag",
              "entity type `%.*s` declares no tags, so `getTag` cannot succeed", (int)tr->name.len, tr->name.s);
        return BAD;
    }
    if (!dw_tc_caps_has(c, x, none, k)) {
        ERROR(T, e->loc, "test it first with `hasTag` on the same entity and key",
              "unable to guarantee safety of access to tag %s on entity type `%.*s`",
              k->kind == DW_E_STRING ? fmt(T, "`%s`", dw_tc_quoted(T, k->u.str)) : "(computed key)",
              (int)tr->name.len, tr->name.s);
        return BAD;
    }
    return ok(tags);
}

static tc_res type_method(tc *T, const dw_expr *e, tc_caps c)
{
    dw_str name = e->u.call.name;
    size_t na = e->u.call.nargs;
    const dw_type *tr = type_of(T, e->u.call.recv, c).t;
    const dw_type *ta[8] = {0};
    bool bad = !tr;
    for (size_t i = 0; i < na; i++) {
        const dw_type *t = type_of(T, e->u.call.args[i], c).t;
        if (i < 8) ta[i] = t;
        if (!t) bad = true;
    }
    if (bad) return BAD;
    const dw_expr *recv = e->u.call.recv;
    if (dw_str_is(name, "contains") || dw_str_is(name, "containsAll") || dw_str_is(name, "containsAny") ||
        dw_str_is(name, "isEmpty") || dw_str_is(name, "hasTag") || dw_str_is(name, "getTag")) {
        size_t want = dw_str_is(name, "isEmpty") ? 0 : 1;
        if (na != want) {
            ERROR(T, e->loc, NULL, "wrong number of arguments to `%.*s`: expected %zu, got %zu", (int)name.len, name.s, want, na);
            return BAD;
        }
        if (dw_str_is(name, "hasTag") || dw_str_is(name, "getTag"))
            return type_tag_method(T, e, c, dw_str_is(name, "getTag"), tr, ta[0]);
        if (tr->kind != DW_T_SET) {
            ERROR(T, recv->loc, NULL, "unexpected type: `%.*s` expects a set but saw %s", (int)name.len, name.s, dw_tc_ty_str(T, tr));
            return BAD;
        }
        if (dw_str_is(name, "isEmpty")) return ok(&dw_tc_t_bool);
        const dw_type *other = ta[0];
        if (!dw_str_is(name, "contains")) {
            if (other->kind != DW_T_SET) {
                ERROR(T, e->u.call.args[0]->loc, NULL, "unexpected type: `%.*s` expects a set argument but saw %s",
                      (int)name.len, name.s, dw_tc_ty_str(T, other));
                return BAD;
            }
            other = other->elem;
        }
        if (!dw_tc_lub(T, tr->elem, other)) {
            ERROR(T, e->loc, "the elements compared must have the same type",
                  "the types %s and %s are not compatible", dw_tc_ty_str(T, tr->elem), dw_tc_ty_str(T, other));
            return BAD;
        }
        return ok(&dw_tc_t_bool);
    }
    for (size_t i = 0; i < sizeof EXT_METHODS / sizeof EXT_METHODS[0]; i++) {
        const ext_sig *s = &EXT_METHODS[i];
        if (!dw_str_is(name, s->name)) continue;
        if (na + 1 != s->nargs) {
            ERROR(T, e->loc, NULL,
                  "wrong number of arguments in extension function application: `%s` expects %zu, got %zu",
                  s->name, s->nargs - 1, na);
            return BAD;
        }
        if (tr->kind != s->a0) {
            ERROR(T, recv->loc, NULL, "unexpected type: `%s` expects %s receiver but saw %s", s->name,
                  with_article(s->a0), dw_tc_ty_str(T, tr));
            return BAD;
        }
        if (na == 1 && ta[0]->kind != s->a1) {
            ERROR(T, e->u.call.args[0]->loc, NULL, "unexpected type: `%s` expects %s argument but saw %s", s->name,
                  with_article(s->a1), dw_tc_ty_str(T, ta[0]));
            return BAD;
        }
        return ok(s->res);
    }
    ERROR(T, e->u.call.name_loc, NULL, "unknown method `%.*s`", (int)name.len, name.s);
    return BAD;
}

static tc_res type_call(tc *T, const dw_expr *e, tc_caps c)
{
    dw_str name = e->u.call.name;
    static const char *ctors[] = { "decimal", "ip", "datetime", "duration" };
    static const dw_type *cty[] = { &dw_tc_t_decimal, &dw_tc_t_ipaddr, &dw_tc_t_datetime, &dw_tc_t_duration };
    int k = -1;
    if (e->u.call.nsegs <= 1)
        for (int i = 0; i < 4; i++)
            if (dw_str_is(name, ctors[i])) k = i;
    if (k < 0) {
        ERROR(T, e->loc, "macros and provider calls are expanded before validation",
              "call of `%.*s` is not supported by the validator yet", (int)name.len, name.s);
        return BAD;
    }
    bool bad = false;
    for (size_t i = 0; i < e->u.call.nargs; i++)
        if (!type_of(T, e->u.call.args[i], c).t) bad = true;
    if (bad) return BAD;
    if (e->u.call.nargs != 1) {
        ERROR(T, e->loc, NULL, "wrong number of arguments in extension function application: `%s` expects 1, got %zu",
              ctors[k], e->u.call.nargs);
        return BAD;
    }
    const dw_expr *a = e->u.call.args[0];
    if (a->kind != DW_E_STRING) {
        ERROR(T, a->loc, "write the value as a string literal, e.g. decimal(\"1.5\")",
              "extension constructors may not be called with non-literal expressions: `%s` expects a string literal",
              ctors[k]);
        return BAD;
    }
    bool parsed;
    switch (k) {
    case 0: { int64_t v; parsed = dw_decimal_parse(a->u.str.s, a->u.str.len, &v); break; }
    case 1: { dw_ipaddr v; parsed = dw_ip_parse(a->u.str.s, a->u.str.len, &v); break; }
    case 2: { int64_t v; parsed = dw_datetime_parse(a->u.str.s, a->u.str.len, &v); break; }
    default: { int64_t v; parsed = dw_duration_parse(a->u.str.s, a->u.str.len, &v); break; }
    }
    if (!parsed) {
        static const char *what[] = { "decimal", "IP address", "datetime", "duration" };
        ERROR(T, a->loc, NULL, "error during extension function argument validation: `%s` is not a valid %s literal",
              dw_tc_quoted(T, a->u.str), what[k]);
        return BAD;
    }
    return ok(cty[k]);
}

/* A provider invocation: its declared output type (compiler/provcheck.c). */
static void provider_report(void *ctx, dw_loc loc, const char *hint, const char *msg)
{
    ERROR((tc *)ctx, loc, hint, "%s", msg);
}

static tc_res type_provider(tc *T, const dw_expr *e)
{
    dw_pcheck_env env = { T->providers, T->s, T->act, T->ptype, T->rtype, T->ctxtype, provider_report, T };
    const dw_type *t = dw_provider_chain_type(&env, e);
    return t ? ok(t) : BAD;
}

static tc_res type_cmp(tc *T, const dw_expr *e, tc_caps c)
{
    const dw_expr *x = e->u.kids[0], *y = e->u.kids[1];
    const dw_type *tx = type_of(T, x, c).t, *ty = type_of(T, y, c).t;
    if (!tx || !ty) return BAD;
    if (tx->kind != DW_T_LONG && tx->kind != DW_T_DATETIME && tx->kind != DW_T_DURATION) {
        ERROR(T, x->loc, "`<`, `<=`, `>` and `>=` compare Longs, datetimes or durations",
              "unexpected type: expected Long, datetime or duration but saw %s", dw_tc_ty_str(T, tx));
        return BAD;
    }
    if (ty->kind != tx->kind) {
        ERROR(T, y->loc, "both operands of a comparison must have the same type",
              "unexpected type: expected %s but saw %s", kind_name(tx->kind), dw_tc_ty_str(T, ty));
        return BAD;
    }
    return ok(&dw_tc_t_bool);
}

static tc_res type_arith(tc *T, const dw_expr *e, tc_caps c)
{
    const dw_type *tx = type_of(T, e->u.kids[0], c).t, *ty = type_of(T, e->u.kids[1], c).t;
    if (!tx || !ty) return BAD;
    for (int i = 0; i < 2; i++) {
        const dw_type *t = i ? ty : tx;
        if (t->kind != DW_T_LONG) {
            ERROR(T, e->u.kids[i]->loc, "arithmetic is on Longs only", "unexpected type: expected Long but saw %s",
                  dw_tc_ty_str(T, t));
            return BAD;
        }
    }
    return ok(&dw_tc_t_long);
}

static tc_res type_of(tc *T, const dw_expr *e, tc_caps c)
{
    switch (e->kind) {
    case DW_E_BOOL: return ok(bool_of(e->u.b));
    case DW_E_LONG: return ok(&dw_tc_t_long);
    case DW_E_STRING: return ok(&dw_tc_t_string);
    case DW_E_ENTITY: return ok(dw_tc_euid_type(T, e->u.euid.type, e->u.euid.id));
    case DW_E_VAR:
        switch (e->u.var) {
        case DW_VAR_PRINCIPAL: return ok(T->ptype);
        case DW_VAR_ACTION: return ok(T->atype);
        case DW_VAR_RESOURCE: return ok(T->rtype);
        default: return ok(T->ctxtype);
        }
    case DW_E_TEMPORAL:
        /* lowered to `context.policy_<i>__temporal_<k>`, a required Bool that the
         * augmented schema declares (dogwood.md §14.3-§14.4); the temporal body
         * itself is checked by compiler/tcheck.c */
        return ok(&dw_tc_t_bool);
    case DW_E_SLOT: case DW_E_BINDER:
        ERROR(T, e->loc, "macro parameters and binders are expanded before validation",
              "this %s is not supported by the validator yet", e->kind == DW_E_SLOT ? "slot" : "binder");
        return BAD;
    case DW_E_IF: return type_if(T, e, c);
    case DW_E_AND: return type_and(T, e->u.kids[0], e->u.kids[1], c);
    case DW_E_OR: return type_or(T, e->u.kids[0], e->u.kids[1], c);
    case DW_E_NOT: {
        tc_res r = dw_tc_type_bool_operand(T, e->u.kids[0], c, "`!` negates a boolean");
        return r.t ? ok(dw_tc_bool_not(r.t)) : BAD;
    }
    case DW_E_NEG: {
        const dw_type *t = type_of(T, e->u.kids[0], c).t;
        if (!t) return BAD;
        if (t->kind != DW_T_LONG) {
            ERROR(T, e->u.kids[0]->loc, NULL, "unexpected type: expected Long but saw %s", dw_tc_ty_str(T, t));
            return BAD;
        }
        return ok(&dw_tc_t_long);
    }
    case DW_E_EQ: case DW_E_NE: {
        const dw_type *tx = type_of(T, e->u.kids[0], c).t, *ty = type_of(T, e->u.kids[1], c).t;
        if (!tx || !ty) return BAD;
        tc_res r = eq_of(T, e, e->u.kids[0], e->u.kids[1], tx, ty);
        if (r.t && e->kind == DW_E_NE) r.t = dw_tc_bool_not(r.t);
        return r;
    }
    case DW_E_LT: case DW_E_LE: case DW_E_GT: case DW_E_GE: return type_cmp(T, e, c);
    case DW_E_ADD: case DW_E_SUB: case DW_E_MUL: return type_arith(T, e, c);
    case DW_E_IN: {
        const dw_type *tx = type_of(T, e->u.kids[0], c).t, *ty = type_of(T, e->u.kids[1], c).t;
        if (!tx || !ty) return BAD;
        return in_of(T, e->u.kids[0], e->u.kids[1], tx, ty);
    }
    case DW_E_HAS: return type_has(T, e, c);
    case DW_E_HAS_PATH: return type_has_path(T, e, c);
    case DW_E_GETATTR: return type_getattr(T, e, c);
    case DW_E_LIKE: {
        const dw_type *t = type_of(T, e->u.like.kids0, c).t;
        if (!t) return BAD;
        if (t->kind != DW_T_STRING) {
            ERROR(T, e->u.like.kids0->loc, "`like` matches strings", "unexpected type: expected String but saw %s",
                  dw_tc_ty_str(T, t));
            return BAD;
        }
        return ok(&dw_tc_t_bool);
    }
    case DW_E_IS: {
        /* `x is T in y` is `x is T && x in y` */
        const dw_expr *x = e->u.is.kids0;
        const dw_type *t = type_of(T, x, c).t;
        if (!t) { if (e->u.is.in) type_of(T, e->u.is.in, c); return BAD; }
        if (t->kind != DW_T_ENTITY) {
            ERROR(T, x->loc, "`is` tests the type of an entity", "unexpected type: expected an entity type but saw %s",
                  dw_tc_ty_str(T, t));
            return BAD;
        }
        if (!dw_str_eq(t->name, e->u.is.type)) return ok(&dw_tc_t_false);
        if (!e->u.is.in) return ok(&dw_tc_t_true);
        const dw_type *ty = type_of(T, e->u.is.in, c).t;
        if (!ty) return BAD;
        tc_res r = in_of(T, x, e->u.is.in, t, ty);
        if (!r.t) return BAD;
        return ok(r.t);
    }
    case DW_E_SET: return type_set(T, e, c);
    case DW_E_RECORD: return type_record(T, e, c);
    case DW_E_METHOD: return dw_is_provider_chain(e) ? type_provider(T, e) : type_method(T, e, c);
    case DW_E_CALL: return e->u.call.nsegs >= 2 ? type_provider(T, e) : type_call(T, e, c);
    }
    return BAD;
}
