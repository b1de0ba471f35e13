/* typecheck.c - Cedar 4.10 strict validation (dogwood.md §5, §16).
 *
 * Follows Cedar's Lean model (Typechecker.lean, Validator.lean) plus the two
 * separate passes of the Rust validator that decide `shouldValidate` in the
 * conformance corpus: the name pass (unknown entity types, actions, enum ids,
 * checked everywhere, even in code that typing skips) and the action
 * application pass ("unable to find an applicable action ...").
 *
 * Typing runs once per schema request environment with the whole policy seen
 * as `principal-scope && action-scope && resource-scope && when... && !unless...`
 * and `action` replaced by the environment's action literal, exactly as the
 * Lean model does; environments the scope excludes therefore type as False
 * and their conditions are skipped. */
#include "typecheck.h"
#include "provcheck.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../stdlib/cedar_quote.h"

/* ---- types ----
 * Types are dw_type nodes: the schema's own, or built in the check arena.
 * The singleton Booleans True and False are two static nodes recognised by
 * address; any other Bool node is Cedar's anyBool.  A NULL type means "ill
 * typed, already reported" and silences every enclosing check. */
static const dw_type T_BOOL = { .kind = DW_T_BOOL };
static const dw_type T_TRUE = { .kind = DW_T_BOOL };
static const dw_type T_FALSE = { .kind = DW_T_BOOL };
static const dw_type T_LONG = { .kind = DW_T_LONG };
static const dw_type T_STRING = { .kind = DW_T_STRING };
static const dw_type T_DECIMAL = { .kind = DW_T_DECIMAL };
static const dw_type T_IPADDR = { .kind = DW_T_IPADDR };
static const dw_type T_DATETIME = { .kind = DW_T_DATETIME };
static const dw_type T_DURATION = { .kind = DW_T_DURATION };

static bool is_bool(const dw_type *t) { return t && t->kind == DW_T_BOOL; }
static const dw_type *bool_of(bool b) { return b ? &T_TRUE : &T_FALSE; }

/* ---- capabilities (§5.4) ----
 * (e, attr) or (e, tag expression); e is compared structurally. */
typedef struct tc_cap { const dw_expr *e; const dw_expr *tag; dw_str attr; } tc_cap;
typedef struct tc_caps { const tc_cap *v; size_t n; } tc_caps;
typedef struct tc_res { const dw_type *t; tc_caps c; } tc_res;
static const tc_caps NOCAPS = { NULL, 0 };

typedef struct tc_diag { dw_severity sev; dw_loc loc; char *msg; const char *hint; size_t seq; } tc_diag;

typedef struct tc {
    dw_arena a;
    jmp_buf oom;                /* allocation failure unwinds to dw_validate */
    const dw_schema *s;
    const dw_source *src;
    size_t nent, nact;
    uint8_t *ent_anc;           /* [i*nent+j]: entity type j is a transitive ancestor of i */
    uint8_t *act_anc;           /* [i*nact+j]: action j is a transitive ancestor (group) of i */
    /* current policy */
    const dw_policy *p;
    char *pid;
    tc_diag *dv; size_t dn, dcap;
    size_t nerr;
    /* current environment */
    const dw_action_decl *act;
    size_t act_idx;
    const dw_type *ptype, *rtype, *atype, *ctxtype;
    dw_validate_result res;
    const dw_providers *providers;   /* declarations (NULL: the built-ins), compiler/provcheck.h */
} tc;

/* ---- small helpers ---- */


/* Allocation failure unwinds to the pass entry (stdlib/arena.h). */
#define alloc(T, n) dw_arena_alloc_or_jump(&(T)->a, (n), &(T)->oom)
#define vfmt(T, f, ap) dw_arena_vprintf_or_jump(&(T)->a, &(T)->oom, (f), (ap))
#define fmt(T, ...) dw_arena_printf_or_jump(&(T)->a, &(T)->oom, __VA_ARGS__)

/* A type as text for messages, cut short so huge records stay readable. */
static const char *ty_str(tc *T, const dw_type *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return "?";
    dw_type_print(f, t);
    fclose(f);
    if (!buf) return "?";
    if (len > 160) memcpy(buf + 150, " ...}", 6);
    char *out = dw_arena_memdup(&T->a, buf, strlen(buf));
    free(buf);
    return out ? out : "?";
}

/* `Type::"id"` with Cedar escapes. */
static const char *euid_str(tc *T, dw_str type, dw_str id)
{
    dw_buf b = {0};
    dw_buf_printf(&b, "%.*s::", (int)type.len, type.s);
    dw_cedar_quote_buf(&b, id.s, id.len);
    char *out = b.p ? dw_arena_memdup(&T->a, b.p, b.len) : "?";
    dw_buf_free(&b);
    return out ? out : "?";
}

static const char *quoted(tc *T, dw_str s)
{
    return euid_str(T, (dw_str){ "", 0 }, s) + 2;   /* reuse the escaper, drop the "::" */
}

/* Record one finding of the current policy; the same finding reached from
 * several environments is kept once. */
static void report(tc *T, dw_severity sev, dw_loc loc, const char *hint, const char *f, ...)
    __attribute__((format(printf, 5, 6)));
static void report(tc *T, dw_severity sev, dw_loc loc, const char *hint, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *body = vfmt(T, f, ap);
    va_end(ap);
    char *msg = fmt(T, "for policy `%s`, %s", T->pid, body);
    for (size_t i = 0; i < T->dn; i++) {
        tc_diag *g = &T->dv[i];
        if (g->sev == sev && g->loc.off == loc.off && g->loc.end == loc.end && strcmp(g->msg, msg) == 0) return;
    }
    if (T->dn == T->dcap) {
        size_t cap = T->dcap ? T->dcap * 2 : 16;
        tc_diag *v = realloc(T->dv, cap * sizeof *v);
        if (!v) longjmp(T->oom, 1);
        T->dv = v;
        T->dcap = cap;
    }
    T->dv[T->dn] = (tc_diag){ sev, loc, msg, hint, T->dn };
    T->dn++;
    if (sev == DW_SEV_ERROR) T->nerr++;
}
#define ERROR(T, loc, hint, ...) report((T), DW_SEV_ERROR, (loc), (hint), __VA_ARGS__)

/* ---- schema lookups ---- */

static long ent_index(const tc *T, dw_str name)
{
    const dw_entity_decl *d = dw_schema_entity(T->s, name.s, name.len);
    return d ? (long)(d - T->s->entities) : -1;
}

static long act_index(const tc *T, dw_str type, dw_str id)
{
    const dw_action_decl *d = dw_schema_action(T->s, type.s, type.len, id.s, id.len);
    return d ? (long)(d - T->s->actions) : -1;
}

/* Cedar treats every type whose last segment is `Action` as an action type. */
static bool is_action_type_name(dw_str n)
{
    if (dw_str_is(n, "Action")) return true;
    return n.len > 8 && memcmp(n.s + n.len - 8, "::Action", 8) == 0;
}

static bool enum_id_ok(const dw_entity_decl *d, dw_str id)
{
    if (!d->is_enum) return true;
    for (size_t i = 0; i < d->nenum; i++)
        if (dw_str_eq(d->enum_ids[i], id)) return true;
    return false;
}

/* Is entity type a equal to or a descendant of b in the declared hierarchy? */
static bool ent_desc(const tc *T, dw_str a, dw_str b)
{
    if (dw_str_eq(a, b)) return true;
    long i = ent_index(T, a), j = ent_index(T, b);
    return i >= 0 && j >= 0 && T->ent_anc[(size_t)i * T->nent + (size_t)j];
}

static bool act_desc(const tc *T, long i, dw_str type, dw_str id)
{
    long j = act_index(T, type, id);
    if (i < 0 || j < 0) return false;
    return i == j || T->act_anc[(size_t)i * T->nact + (size_t)j];
}

/* Transitive closures of memberOf (entity types) and of action groups. */
static void build_closures(tc *T)
{
    size_t n = T->nent, m = T->nact;
    T->ent_anc = alloc(T, n * n);
    T->act_anc = alloc(T, m * m);
    size_t *stack = alloc(T, (n > m ? n : m) * sizeof(size_t) + 1);
    for (size_t i = 0; i < n; i++) {
        uint8_t *row = T->ent_anc + i * n;
        size_t sp = 0;
        stack[sp++] = i;
        while (sp) {
            const dw_entity_decl *d = &T->s->entities[stack[--sp]];
            for (size_t k = 0; k < d->nmember_of; k++) {
                long j = ent_index(T, d->member_of[k]);
                if (j >= 0 && !row[j]) { row[j] = 1; stack[sp++] = (size_t)j; }
            }
        }
    }
    for (size_t i = 0; i < m; i++) {
        uint8_t *row = T->act_anc + i * m;
        size_t sp = 0;
        stack[sp++] = i;
        while (sp) {
            const dw_action_decl *d = &T->s->actions[stack[--sp]];
            for (size_t k = 0; k < d->nparents; k++) {
                long j = act_index(T, d->parents[k].type, d->parents[k].id);
                if (j >= 0 && !row[j]) { row[j] = 1; stack[sp++] = (size_t)j; }
            }
        }
    }
}

static const dw_type *entity_ty(tc *T, dw_str name)
{
    dw_type *t = alloc(T, sizeof *t);
    t->kind = DW_T_ENTITY;
    t->name = name;
    return t;
}

static bool close_enough(dw_str want, dw_str cand, size_t *best);

static const dw_attr_decl *find_attr(const dw_type *rec, dw_str name)
{
    size_t lo = 0, hi = rec->nattrs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        dw_str k = rec->attrs[mid].name;
        size_t n = k.len < name.len ? k.len : name.len;
        int c = n ? memcmp(k.s, name.s, n) : 0;
        if (c == 0) c = k.len < name.len ? -1 : k.len > name.len ? 1 : 0;
        if (c == 0) return &rec->attrs[mid];
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    return NULL;
}

/* ---- least upper bound (§5.1; strict: no unions, records must agree on
 * attribute names and optionality) ---- */
static const dw_type *lub(tc *T, const dw_type *a, const dw_type *b)
{
    if (!a || !b) return NULL;
    if (a->kind != b->kind) return NULL;
    switch (a->kind) {
    case DW_T_BOOL: return a == b ? a : &T_BOOL;
    case DW_T_ENTITY: return dw_str_eq(a->name, b->name) ? a : NULL;
    case DW_T_SET: {
        const dw_type *e = lub(T, a->elem, b->elem);
        if (!e) return NULL;
        if (e == a->elem) return a;
        dw_type *t = alloc(T, sizeof *t);
        t->kind = DW_T_SET;
        t->elem = (dw_type *)e;
        return t;
    }
    case DW_T_RECORD: {
        if (a->nattrs != b->nattrs) return NULL;
        bool same = true;
        const dw_type **tys = alloc(T, a->nattrs * sizeof *tys);
        for (size_t i = 0; i < a->nattrs; i++) {
            if (!dw_str_eq(a->attrs[i].name, b->attrs[i].name) || a->attrs[i].required != b->attrs[i].required)
                return NULL;
            tys[i] = lub(T, a->attrs[i].type, b->attrs[i].type);
            if (!tys[i]) return NULL;
            if (tys[i] != a->attrs[i].type) same = false;
        }
        if (same) return a;
        dw_type *t = alloc(T, sizeof *t);
        *t = *a;
        dw_attr_decl *at = alloc(T, a->nattrs * sizeof *at);
        for (size_t i = 0; i < a->nattrs; i++) { at[i] = a->attrs[i]; at[i].type = (dw_type *)tys[i]; }
        t->attrs = at;
        return t;
    }
    default: return a;
    }
}

/* ---- structural equality of expressions (capability keys) ----
 * Temporal leaves never match: no capability is carried across them. */
static bool expr_eq(const dw_expr *a, const dw_expr *b) { return dw_expr_eq(a, b, NULL, NULL); }

static bool cap_eq(const tc_cap *x, const dw_expr *e, dw_str attr, const dw_expr *tag)
{
    if ((x->tag == NULL) != (tag == NULL)) return false;
    if (tag ? !expr_eq(x->tag, tag) : !dw_str_eq(x->attr, attr)) return false;
    return expr_eq(x->e, e);
}

static bool caps_has(tc_caps c, const dw_expr *e, dw_str attr, const dw_expr *tag)
{
    for (size_t i = 0; i < c.n; i++)
        if (cap_eq(&c.v[i], e, attr, tag)) return true;
    return false;
}

static tc_caps caps_one(tc *T, const dw_expr *e, dw_str attr, const dw_expr *tag)
{
    tc_cap *v = alloc(T, sizeof *v);
    *v = (tc_cap){ e, tag, attr };
    return (tc_caps){ v, 1 };
}

static tc_caps caps_union(tc *T, tc_caps a, tc_caps b)
{
    if (!a.n) return b;
    if (!b.n) return a;
    tc_cap *v = alloc(T, (a.n + b.n) * sizeof *v);
    memcpy(v, a.v, a.n * sizeof *v);
    size_t n = a.n;
    for (size_t i = 0; i < b.n; i++)
        if (!caps_has(a, b.v[i].e, b.v[i].attr, b.v[i].tag)) v[n++] = b.v[i];
    return (tc_caps){ v, n };
}

static tc_caps caps_inter(tc *T, tc_caps a, tc_caps b)
{
    if (!a.n || !b.n) return NOCAPS;
    tc_cap *v = alloc(T, a.n * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < a.n; i++)
        if (caps_has(b, a.v[i].e, a.v[i].attr, a.v[i].tag)) v[n++] = a.v[i];
    return (tc_caps){ v, n };
}

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
    return act_index(T, l.ty, l.s);
}

/* Type of an entity literal; NULL (silently) when the name pass reported it. */
static const dw_type *euid_type(tc *T, dw_str type, dw_str id)
{
    const dw_entity_decl *d = dw_schema_entity(T->s, type.s, type.len);
    if (d && enum_id_ok(d, id)) return entity_ty(T, type);
    if (act_index(T, type, id) >= 0) return entity_ty(T, type);
    return NULL;
}

/* ---- typing ---- */
static tc_res type_of(tc *T, const dw_expr *e, tc_caps c);

static tc_res ok(const dw_type *t) { return (tc_res){ t, NOCAPS }; }
static tc_res ok_c(const dw_type *t, tc_caps c) { return (tc_res){ t, c }; }
static const tc_res BAD = { NULL, { NULL, 0 } };

static void expect_bool_err(tc *T, const dw_expr *e, const dw_type *t, const char *hint)
{
    ERROR(T, e->loc, hint, "unexpected type: expected Bool but saw %s", ty_str(T, t));
}

static tc_res type_bool_operand(tc *T, const dw_expr *e, tc_caps c, const char *hint)
{
    tc_res r = type_of(T, e, c);
    if (r.t && !is_bool(r.t)) { expect_bool_err(T, e, r.t, hint); return BAD; }
    return r;
}

static tc_res type_if(tc *T, const dw_expr *e, tc_caps c)
{
    const dw_expr *x1 = e->u.kids[0], *x2 = e->u.kids[1], *x3 = e->u.kids[2];
    tc_res r1 = type_bool_operand(T, x1, c, "the condition of `if` must be a boolean");
    if (!r1.t) { type_of(T, x2, c); type_of(T, x3, c); return BAD; }
    if (r1.t == &T_TRUE) {
        tc_res r2 = type_of(T, x2, caps_union(T, c, r1.c));
        if (!r2.t) return BAD;
        return ok_c(r2.t, caps_union(T, r1.c, r2.c));
    }
    if (r1.t == &T_FALSE) return type_of(T, x3, c);
    tc_res r2 = type_of(T, x2, caps_union(T, c, r1.c));
    tc_res r3 = type_of(T, x3, c);
    if (!r2.t || !r3.t) return BAD;
    const dw_type *t = lub(T, r2.t, r3.t);
    if (!t) {
        ERROR(T, e->loc, "both branches of `if` must have the same type",
              "the types %s and %s are not compatible", ty_str(T, r2.t), ty_str(T, r3.t));
        return BAD;
    }
    return ok_c(t, caps_inter(T, caps_union(T, r1.c, r2.c), r3.c));
}

static tc_res type_and(tc *T, const dw_expr *a, const dw_expr *b, tc_caps c)
{
    static const char *h = "both operands of `&&` must be booleans";
    tc_res r1 = type_bool_operand(T, a, c, h);
    if (!r1.t) { type_of(T, b, c); return BAD; }
    if (r1.t == &T_FALSE) return ok(&T_FALSE);        /* b is not checked at all */
    tc_res r2 = type_bool_operand(T, b, caps_union(T, c, r1.c), h);
    if (!r2.t) return BAD;
    if (r2.t == &T_FALSE) return ok(&T_FALSE);
    tc_caps cc = caps_union(T, r1.c, r2.c);
    if (r2.t == &T_TRUE) return ok_c(r1.t, cc);
    return ok_c(&T_BOOL, cc);
}

static tc_res type_or(tc *T, const dw_expr *a, const dw_expr *b, tc_caps c)
{
    static const char *h = "both operands of `||` must be booleans";
    tc_res r1 = type_bool_operand(T, a, c, h);
    if (!r1.t) { type_of(T, b, c); return BAD; }
    if (r1.t == &T_TRUE) return ok(&T_TRUE);          /* b is not checked at all */
    tc_res r2 = type_bool_operand(T, b, c, h);
    if (!r2.t) return BAD;
    if (r1.t == &T_FALSE) return r2;
    if (r2.t == &T_TRUE) return ok(&T_TRUE);
    if (r2.t == &T_FALSE) return ok_c(r1.t, r1.c);
    return ok_c(&T_BOOL, caps_inter(T, r1.c, r2.c));
}

static const dw_type *bool_not(const dw_type *t)
{
    return t == &T_TRUE ? &T_FALSE : t == &T_FALSE ? &T_TRUE : &T_BOOL;
}

/* `x == y` given the operand types (Lean typeOfEq). */
static tc_res eq_of(tc *T, const dw_expr *e, const dw_expr *x, const dw_expr *y, const dw_type *tx, const dw_type *ty)
{
    tc_lit lx, ly;
    if (as_lit(T, x, &lx) && as_lit(T, y, &ly)) return ok(bool_of(lit_eq(&lx, &ly)));
    if (lub(T, tx, ty)) return ok(&T_BOOL);
    if (tx->kind == DW_T_ENTITY && ty->kind == DW_T_ENTITY) return ok(&T_FALSE);
    ERROR(T, e->loc, "`==` and `!=` compare values of the same type",
          "the types %s and %s are not compatible", ty_str(T, tx), ty_str(T, ty));
    return BAD;
}

/* `x in y` given the operand types (Lean typeOfInₑ / typeOfInₛ). */
static tc_res in_of(tc *T, const dw_expr *x, const dw_expr *y, const dw_type *tx, const dw_type *ty)
{
    if (tx->kind != DW_T_ENTITY) {
        ERROR(T, x->loc, "the left operand of `in` must be an entity",
              "unexpected type: expected an entity type but saw %s", ty_str(T, tx));
        return BAD;
    }
    long a = action_uid_of(T, x);
    if (ty->kind == DW_T_ENTITY) {
        tc_lit l;
        if (a >= 0 && y->kind == DW_E_ENTITY && as_lit(T, y, &l)) return ok(bool_of(act_desc(T, a, l.ty, l.s)));
        if (a >= 0 && y->kind == DW_E_VAR && y->u.var == DW_VAR_ACTION && as_lit(T, y, &l))
            return ok(bool_of(act_desc(T, a, l.ty, l.s)));
        return ok(ent_desc(T, tx->name, ty->name) ? &T_BOOL : &T_FALSE);
    }
    if (ty->kind == DW_T_SET && ty->elem && ty->elem->kind == DW_T_ENTITY) {
        if (a >= 0 && y->kind == DW_E_SET) {
            bool all = true, any = false;
            for (size_t i = 0; i < y->u.list.n; i++) {
                tc_lit l;
                if (!as_lit(T, y->u.list.v[i], &l) || l.k != DW_E_ENTITY) { all = false; break; }
                if (act_desc(T, a, l.ty, l.s)) any = true;
            }
            if (all) return ok(bool_of(any));
        }
        return ok(ent_desc(T, tx->name, ty->elem->name) ? &T_BOOL : &T_FALSE);
    }
    ERROR(T, y->loc, "the right operand of `in` must be an entity or a set of entities",
          "unexpected type: expected an entity type or a set of entities but saw %s", ty_str(T, ty));
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
    const dw_attr_decl *ad = find_attr(rec, a);
    if (!ad) return ok(&T_FALSE);
    if (caps_has(c, x, a, NULL) || (ad->required && known_to_exist)) return ok(&T_TRUE);
    return ok_c(&T_BOOL, caps_one(T, x, a, NULL));
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
        return ok(&T_FALSE);                          /* actions have no attributes */
    }
    ERROR(T, x->loc, "`has` tests an attribute of an entity or a record",
          "unexpected type: expected an entity or a record but saw %s", ty_str(T, r.t));
    return BAD;
}

static tc_res attr_in_record(tc *T, const dw_expr *e, const dw_type *rec, const dw_type *whole, tc_caps c)
{
    const dw_expr *x = e->u.attr.kids0;
    dw_str a = e->u.attr.attr;
    const dw_attr_decl *ad = find_attr(rec, a);
    if (ad && (ad->required || caps_has(c, x, a, NULL))) return ok(ad->type);
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
        if (close_enough(a, rec->attrs[k].name, &best))
            hint = fmt(T, "did you mean `%.*s`?", (int)rec->attrs[k].name.len, rec->attrs[k].name.s);
    if (is_context(x) && T->act)
        ERROR(T, e->loc, hint, "attribute `%.*s` in context for %s not found", (int)a.len, a.s,
              euid_str(T, T->act->uid.type, T->act->uid.id));
    else if (whole->kind == DW_T_ENTITY)
        ERROR(T, e->loc, hint, "attribute `%.*s` on entity type `%.*s` not found", (int)a.len, a.s,
              (int)whole->name.len, whole->name.s);
    else
        ERROR(T, e->loc, hint, "attribute `%.*s` not found in record type %s", (int)a.len, a.s, ty_str(T, whole));
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
          "unexpected type: expected an entity or a record but saw %s", ty_str(T, r.t));
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
        const dw_type *u = lub(T, t, tys[i]);
        if (!u) {
            ERROR(T, e->u.list.v[i]->loc, "every element of a set literal must have the same type",
                  "set elements have incompatible types: %s and %s", ty_str(T, t), ty_str(T, tys[i]));
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
    { "lessThan", 2, DW_T_DECIMAL, DW_T_DECIMAL, &T_BOOL },
    { "lessThanOrEqual", 2, DW_T_DECIMAL, DW_T_DECIMAL, &T_BOOL },
    { "greaterThan", 2, DW_T_DECIMAL, DW_T_DECIMAL, &T_BOOL },
    { "greaterThanOrEqual", 2, DW_T_DECIMAL, DW_T_DECIMAL, &T_BOOL },
    { "isIpv4", 1, DW_T_IPADDR, DW_T_IPADDR, &T_BOOL },
    { "isIpv6", 1, DW_T_IPADDR, DW_T_IPADDR, &T_BOOL },
    { "isLoopback", 1, DW_T_IPADDR, DW_T_IPADDR, &T_BOOL },
    { "isMulticast", 1, DW_T_IPADDR, DW_T_IPADDR, &T_BOOL },
    { "isInRange", 2, DW_T_IPADDR, DW_T_IPADDR, &T_BOOL },
    { "offset", 2, DW_T_DATETIME, DW_T_DURATION, &T_DATETIME },
    { "durationSince", 2, DW_T_DATETIME, DW_T_DATETIME, &T_DURATION },
    { "toDate", 1, DW_T_DATETIME, DW_T_DATETIME, &T_DATETIME },
    { "toTime", 1, DW_T_DATETIME, DW_T_DATETIME, &T_DURATION },
    { "toDays", 1, DW_T_DURATION, DW_T_DURATION, &T_LONG },
    { "toHours", 1, DW_T_DURATION, DW_T_DURATION, &T_LONG },
    { "toMinutes", 1, DW_T_DURATION, DW_T_DURATION, &T_LONG },
    { "toSeconds", 1, DW_T_DURATION, DW_T_DURATION, &T_LONG },
    { "toMilliseconds", 1, DW_T_DURATION, DW_T_DURATION, &T_LONG },
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
        ERROR(T, x->loc, "only entities have tags", "unexpected type: expected an entity type but saw %s", ty_str(T, tr));
        return BAD;
    }
    if (tk->kind != DW_T_STRING) {
        ERROR(T, k->loc, "tag keys are strings", "unexpected type: expected String but saw %s", ty_str(T, tk));
        return BAD;
    }
    const dw_entity_decl *d = dw_schema_entity(T->s, tr->name.s, tr->name.len);
    const dw_type *tags = d ? d->tags : NULL;
    if (!get) {
        if (!tags) return ok(&T_FALSE);                 /* no tags declared: never true */
        if (caps_has(c, x, none, k)) return ok(&T_TRUE);
        return ok_c(&T_BOOL, caps_one(T, x, none, k));
    }
    if (!tags) {
        ERROR(T, e->loc, "declare `tags T` on the entity type to use getTag",
              "entity type `%.*s` declares no tags, so `getTag` cannot succeed", (int)tr->name.len, tr->name.s);
        return BAD;
    }
    if (!caps_has(c, x, none, k)) {
        ERROR(T, e->loc, "test it first with `hasTag` on the same entity and key",
              "unable to guarantee safety of access to tag %s on entity type `%.*s`",
              k->kind == DW_E_STRING ? fmt(T, "`%s`", quoted(T, k->u.str)) : "(computed key)",
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
            ERROR(T, recv->loc, NULL, "unexpected type: `%.*s` expects a set but saw %s", (int)name.len, name.s, ty_str(T, tr));
            return BAD;
        }
        if (dw_str_is(name, "isEmpty")) return ok(&T_BOOL);
        const dw_type *other = ta[0];
        if (!dw_str_is(name, "contains")) {
            if (other->kind != DW_T_SET) {
                ERROR(T, e->u.call.args[0]->loc, NULL, "unexpected type: `%.*s` expects a set argument but saw %s",
                      (int)name.len, name.s, ty_str(T, other));
                return BAD;
            }
            other = other->elem;
        }
        if (!lub(T, tr->elem, other)) {
            ERROR(T, e->loc, "the elements compared must have the same type",
                  "the types %s and %s are not compatible", ty_str(T, tr->elem), ty_str(T, other));
            return BAD;
        }
        return ok(&T_BOOL);
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
                  with_article(s->a0), ty_str(T, tr));
            return BAD;
        }
        if (na == 1 && ta[0]->kind != s->a1) {
            ERROR(T, e->u.call.args[0]->loc, NULL, "unexpected type: `%s` expects %s argument but saw %s", s->name,
                  with_article(s->a1), ty_str(T, ta[0]));
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
    static const dw_type *cty[] = { &T_DECIMAL, &T_IPADDR, &T_DATETIME, &T_DURATION };
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
              quoted(T, a->u.str), what[k]);
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
              "unexpected type: expected Long, datetime or duration but saw %s", ty_str(T, tx));
        return BAD;
    }
    if (ty->kind != tx->kind) {
        ERROR(T, y->loc, "both operands of a comparison must have the same type",
              "unexpected type: expected %s but saw %s", kind_name(tx->kind), ty_str(T, ty));
        return BAD;
    }
    return ok(&T_BOOL);
}

static tc_res type_arith(tc *T, const dw_expr *e, tc_caps c)
{
    const dw_type *tx = type_of(T, e->u.kids[0], c).t, *ty = type_of(T, e->u.kids[1], c).t;
    if (!tx || !ty) return BAD;
    for (int i = 0; i < 2; i++) {
        const dw_type *t = i ? ty : tx;
        if (t->kind != DW_T_LONG) {
            ERROR(T, e->u.kids[i]->loc, "arithmetic is on Longs only", "unexpected type: expected Long but saw %s",
                  ty_str(T, t));
            return BAD;
        }
    }
    return ok(&T_LONG);
}

static tc_res type_of(tc *T, const dw_expr *e, tc_caps c)
{
    switch (e->kind) {
    case DW_E_BOOL: return ok(bool_of(e->u.b));
    case DW_E_LONG: return ok(&T_LONG);
    case DW_E_STRING: return ok(&T_STRING);
    case DW_E_ENTITY: return ok(euid_type(T, e->u.euid.type, e->u.euid.id));
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
        return ok(&T_BOOL);
    case DW_E_SLOT: case DW_E_BINDER:
        ERROR(T, e->loc, "macro parameters and binders are expanded before validation",
              "this %s is not supported by the validator yet", e->kind == DW_E_SLOT ? "slot" : "binder");
        return BAD;
    case DW_E_IF: return type_if(T, e, c);
    case DW_E_AND: return type_and(T, e->u.kids[0], e->u.kids[1], c);
    case DW_E_OR: return type_or(T, e->u.kids[0], e->u.kids[1], c);
    case DW_E_NOT: {
        tc_res r = type_bool_operand(T, e->u.kids[0], c, "`!` negates a boolean");
        return r.t ? ok(bool_not(r.t)) : BAD;
    }
    case DW_E_NEG: {
        const dw_type *t = type_of(T, e->u.kids[0], c).t;
        if (!t) return BAD;
        if (t->kind != DW_T_LONG) {
            ERROR(T, e->u.kids[0]->loc, NULL, "unexpected type: expected Long but saw %s", ty_str(T, t));
            return BAD;
        }
        return ok(&T_LONG);
    }
    case DW_E_EQ: case DW_E_NE: {
        const dw_type *tx = type_of(T, e->u.kids[0], c).t, *ty = type_of(T, e->u.kids[1], c).t;
        if (!tx || !ty) return BAD;
        tc_res r = eq_of(T, e, e->u.kids[0], e->u.kids[1], tx, ty);
        if (r.t && e->kind == DW_E_NE) r.t = bool_not(r.t);
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
    case DW_E_GETATTR: return type_getattr(T, e, c);
    case DW_E_LIKE: {
        const dw_type *t = type_of(T, e->u.like.kids0, c).t;
        if (!t) return BAD;
        if (t->kind != DW_T_STRING) {
            ERROR(T, e->u.like.kids0->loc, "`like` matches strings", "unexpected type: expected String but saw %s",
                  ty_str(T, t));
            return BAD;
        }
        return ok(&T_BOOL);
    }
    case DW_E_IS: {
        /* `x is T in y` is `x is T && x in y` */
        const dw_expr *x = e->u.is.kids0;
        const dw_type *t = type_of(T, x, c).t;
        if (!t) { if (e->u.is.in) type_of(T, e->u.is.in, c); return BAD; }
        if (t->kind != DW_T_ENTITY) {
            ERROR(T, x->loc, "`is` tests the type of an entity", "unexpected type: expected an entity type but saw %s",
                  ty_str(T, t));
            return BAD;
        }
        if (!dw_str_eq(t->name, e->u.is.type)) return ok(&T_FALSE);
        if (!e->u.is.in) return ok(&T_TRUE);
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

/* ---- name pass (Rust: validate_entity_types, validate_action_ids,
 * validate_enum_entity): runs over the whole policy, skipped code included ---- */

/* Edit distance for "did you mean" hints; long names are not compared. */

static bool close_enough(dw_str want, dw_str cand, size_t *best)
{
    return dw_hint_closer(want.s, want.len, cand.s, cand.len, best);
}

static const char *suggest_type(tc *T, dw_str type)
{
    size_t best = (size_t)-1;
    const dw_entity_decl *hit = NULL;
    for (size_t i = 0; i < T->nent; i++)
        if (close_enough(type, T->s->entities[i].name, &best)) hit = &T->s->entities[i];
    return hit ? fmt(T, "did you mean `%.*s`?", (int)hit->name.len, hit->name.s) : NULL;
}

static const char *suggest_action(tc *T, dw_str type, dw_str id)
{
    size_t best = (size_t)-1;
    const dw_action_decl *hit = NULL;
    for (size_t i = 0; i < T->nact; i++) {
        const dw_action_decl *a = &T->s->actions[i];
        if (dw_str_eq(a->uid.type, type) && close_enough(id, a->uid.id, &best)) hit = a;
    }
    if (hit) return fmt(T, "did you mean `%s`?", euid_str(T, hit->uid.type, hit->uid.id));
    /* the right id in another namespace (`Action::"shell:spawn"` for Box's), else a close one there */
    for (size_t i = 0; i < T->nact; i++) {
        const dw_action_decl *a = &T->s->actions[i];
        if (!dw_str_eq(a->uid.type, type) && dw_str_eq(a->uid.id, id)) hit = a;
    }
    for (size_t i = 0; !hit && i < T->nact; i++) {
        const dw_action_decl *a = &T->s->actions[i];
        if (!dw_str_eq(a->uid.type, type) && close_enough(id, a->uid.id, &best)) hit = a;
    }
    return hit ? fmt(T, "did you mean `%s`? (actions are written with their namespace)", euid_str(T, hit->uid.type, hit->uid.id))
               : "declare it in the schema with `action`, or fix the spelling";
}

static void check_euid(tc *T, dw_str type, dw_str id, dw_loc loc)
{
    if (is_action_type_name(type)) {
        if (act_index(T, type, id) < 0)
            ERROR(T, loc, suggest_action(T, type, id), "unrecognized action `%s`", euid_str(T, type, id));
        return;
    }
    const dw_entity_decl *d = dw_schema_entity(T->s, type.s, type.len);
    if (!d) {
        ERROR(T, loc, suggest_type(T, type), "unrecognized entity type `%.*s`", (int)type.len, type.s);
        return;
    }
    if (!enum_id_ok(d, id)) {
        dw_buf b = {0};
        for (size_t i = 0; i < d->nenum; i++)
            dw_buf_printf(&b, "%s%s", i ? ", " : "", quoted(T, d->enum_ids[i]));
        char *hint = fmt(T, "declared ids: %.*s", (int)b.len, b.p ? b.p : "");
        dw_buf_free(&b);
        ERROR(T, loc, hint, "entity `%s` is of an enumerated entity type, but `%s` is not declared as a valid eid",
              euid_str(T, type, id), quoted(T, id));
    }
}

static void check_type_name(tc *T, dw_str type, dw_loc loc)
{
    if (!is_action_type_name(type) && !dw_schema_entity(T->s, type.s, type.len))
        ERROR(T, loc, suggest_type(T, type), "unrecognized entity type `%.*s`", (int)type.len, type.s);
}

static void names_expr(tc *T, const dw_expr *e)
{
    if (!e) return;
    switch (e->kind) {
    case DW_E_ENTITY: check_euid(T, e->u.euid.type, e->u.euid.id, e->loc); return;
    case DW_E_IF: names_expr(T, e->u.kids[0]); names_expr(T, e->u.kids[1]); names_expr(T, e->u.kids[2]); return;
    case DW_E_NOT: case DW_E_NEG: names_expr(T, e->u.kids[0]); return;
    case DW_E_AND: case DW_E_OR: case DW_E_EQ: case DW_E_NE: case DW_E_LT: case DW_E_LE: case DW_E_GT:
    case DW_E_GE: case DW_E_IN: case DW_E_ADD: case DW_E_SUB: case DW_E_MUL:
        names_expr(T, e->u.kids[0]); names_expr(T, e->u.kids[1]); return;
    case DW_E_HAS: case DW_E_GETATTR: names_expr(T, e->u.attr.kids0); return;
    case DW_E_LIKE: names_expr(T, e->u.like.kids0); return;
    case DW_E_IS: {
        names_expr(T, e->u.is.kids0);
        /* the type name sits just before `in`/end; point at the whole test */
        check_type_name(T, e->u.is.type, e->loc);
        names_expr(T, e->u.is.in);
        return;
    }
    case DW_E_SET: for (size_t i = 0; i < e->u.list.n; i++) names_expr(T, e->u.list.v[i]); return;
    case DW_E_RECORD: for (size_t i = 0; i < e->u.rec.n; i++) names_expr(T, e->u.rec.v[i].value); return;
    case DW_E_METHOD: case DW_E_CALL:
        names_expr(T, e->u.call.recv);
        for (size_t i = 0; i < e->u.call.nargs; i++) names_expr(T, e->u.call.args[i]);
        return;
    default: return;
    }
}

static void names_scope(tc *T, const dw_scope_con *s)
{
    switch (s->kind) {
    case DW_SC_IS: check_type_name(T, s->is_type, s->loc); break;
    case DW_SC_IS_IN: check_type_name(T, s->is_type, s->loc); /* fallthrough */
    case DW_SC_EQ: case DW_SC_IN:
        if (!s->target_is_slot) check_euid(T, s->target.type, s->target.id, s->target.loc);
        break;
    case DW_SC_IN_LIST:
        for (size_t i = 0; i < s->nlist; i++) check_euid(T, s->list[i].type, s->list[i].id, s->list[i].loc);
        break;
    default: break;
    }
}

/* ---- action application pass (Rust: validate_action_application) ---- */

/* Does the principal/resource scope admit entity type x? */
static bool scope_admits(const tc *T, const dw_scope_con *s, dw_str x)
{
    switch (s->kind) {
    case DW_SC_ANY: return true;
    case DW_SC_EQ: return s->target_is_slot || dw_str_eq(x, s->target.type);
    case DW_SC_IN: return s->target_is_slot || ent_desc(T, x, s->target.type);
    case DW_SC_IS: return dw_str_eq(x, s->is_type);
    case DW_SC_IS_IN: return dw_str_eq(x, s->is_type) && (s->target_is_slot || ent_desc(T, x, s->target.type));
    default: return false;
    }
}

/* Does the action scope admit action i (itself or as a member of a listed group)? */
static bool action_admits(const tc *T, const dw_scope_con *s, size_t i)
{
    const dw_euid_lit *v;
    size_t n;
    switch (s->kind) {
    case DW_SC_ANY: return true;
    case DW_SC_EQ: return act_index(T, s->target.type, s->target.id) == (long)i;
    case DW_SC_IN: v = &s->target; n = 1; break;
    case DW_SC_IN_LIST: v = s->list; n = s->nlist; break;
    default: return false;
    }
    /* Rust admits nothing when any listed action is undeclared */
    for (size_t k = 0; k < n; k++)
        if (act_index(T, v[k].type, v[k].id) < 0) return false;
    for (size_t k = 0; k < n; k++)
        if (act_desc(T, (long)i, v[k].type, v[k].id)) return true;
    return false;
}

static bool any_applicable_env(const tc *T, const dw_policy *p)
{
    for (size_t i = 0; i < T->nact; i++) {
        const dw_action_decl *a = &T->s->actions[i];
        if (!a->has_applies_to || !action_admits(T, &p->action, i)) continue;
        bool pr = false, rs = false;
        for (size_t k = 0; k < a->nprincipals && !pr; k++) pr = scope_admits(T, &p->principal, a->principals[k]);
        for (size_t k = 0; k < a->nresources && !rs; k++) rs = scope_admits(T, &p->resource, a->resources[k]);
        if (pr && rs) return true;
    }
    return false;
}

/* ---- the policy as one conjunction, typed in the current environment ---- */

/* Type of the principal/resource scope test; `var` is the variable's type. */
static tc_res scope_pr_type(tc *T, const dw_scope_con *s, const dw_type *var)
{
    if (s->kind == DW_SC_ANY) return ok(&T_TRUE);
    if (s->kind == DW_SC_IS || s->kind == DW_SC_IS_IN) {
        if (!dw_str_eq(var->name, s->is_type)) return ok(&T_FALSE);
        if (s->kind == DW_SC_IS) return ok(&T_TRUE);
    }
    if (s->target_is_slot) return ok(&T_BOOL);       /* a slot is instantiated with a compatible type */
    const dw_type *tt = euid_type(T, s->target.type, s->target.id);
    if (!tt) return BAD;
    if (s->kind == DW_SC_EQ) return ok(dw_str_eq(var->name, tt->name) ? &T_BOOL : &T_FALSE);
    return ok(ent_desc(T, var->name, tt->name) ? &T_BOOL : &T_FALSE);
}

static tc_res scope_action_type(tc *T, const dw_scope_con *s)
{
    long a = (long)T->act_idx;
    switch (s->kind) {
    case DW_SC_ANY: return ok(&T_TRUE);
    case DW_SC_EQ: {
        if (!euid_type(T, s->target.type, s->target.id)) return BAD;
        return ok(bool_of(dw_str_eq(s->target.type, T->act->uid.type) && dw_str_eq(s->target.id, T->act->uid.id)));
    }
    case DW_SC_IN:
        if (!euid_type(T, s->target.type, s->target.id)) return BAD;
        return ok(bool_of(act_desc(T, a, s->target.type, s->target.id)));
    case DW_SC_IN_LIST: {
        const dw_type *t = NULL;
        for (size_t i = 0; i < s->nlist; i++) {
            const dw_type *u = euid_type(T, s->list[i].type, s->list[i].id);
            if (!u) return BAD;
            if (t && !lub(T, t, u)) {
                ERROR(T, s->list[i].loc, "every element of a set literal must have the same type",
                      "set elements have incompatible types: %s and %s", ty_str(T, t), ty_str(T, u));
                return BAD;
            }
            t = u;
        }
        if (!t) {
            ERROR(T, s->loc, NULL, "empty set literals are forbidden in policies");
            return BAD;
        }
        bool any = false;
        for (size_t i = 0; i < s->nlist; i++)
            if (act_desc(T, a, s->list[i].type, s->list[i].id)) any = true;
        return ok(bool_of(any));
    }
    default: return ok(&T_BOOL);
    }
}

/* Fold one conjunct into the running `&&` (Lean typeOfAnd); returns false once
 * the conjunction is False, so later conjuncts are skipped. */
static bool fold_conj(tc *T, tc_res *acc, tc_res r, bool *bad)
{
    if (!r.t) { *bad = true; return true; }
    if (r.t == &T_FALSE) { *acc = ok(&T_FALSE); return false; }
    acc->c = caps_union(T, acc->c, r.c);
    if (r.t != &T_TRUE) acc->t = &T_BOOL;
    return true;
}

/* NULL when the policy is ill-typed here; else its type (True/False/Bool). */
static const dw_type *type_policy(tc *T, const dw_policy *p)
{
    tc_res acc = ok(&T_TRUE);
    bool bad = false;
    if (!fold_conj(T, &acc, scope_pr_type(T, &p->principal, T->ptype), &bad)) return bad ? NULL : &T_FALSE;
    if (!fold_conj(T, &acc, scope_action_type(T, &p->action), &bad)) return bad ? NULL : &T_FALSE;
    if (!fold_conj(T, &acc, scope_pr_type(T, &p->resource, T->rtype), &bad)) return bad ? NULL : &T_FALSE;
    for (size_t i = 0; i < p->nclauses; i++) {
        const dw_clause *cl = &p->clauses[i];
        const char *hint = cl->is_when ? "the condition of a `when` clause must be a boolean"
                                       : "the condition of an `unless` clause must be a boolean";
        tc_res r = type_bool_operand(T, cl->body, acc.c, hint);
        if (r.t && !cl->is_when) r = ok(bool_not(r.t));   /* `unless { c }` is `!c`: no capabilities */
        if (!fold_conj(T, &acc, r, &bad)) return bad ? NULL : &T_FALSE;
    }
    return bad ? NULL : acc.t;
}

/* ---- driver ---- */

static int diag_cmp(const void *pa, const void *pb)
{
    const tc_diag *a = pa, *b = pb;
    if (a->loc.off != b->loc.off) return a->loc.off < b->loc.off ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static char *policy_id(tc *T, const dw_policy *p, size_t idx)
{
    if (p->id.len) return fmt(T, "%.*s", (int)p->id.len, p->id.s);     /* a link (compiler/link.h) */
    for (size_t i = 0; i < p->nannots; i++)
        if (dw_str_is(p->annots[i].key, "id") && p->annots[i].has_value)
            return fmt(T, "%.*s", (int)p->annots[i].value.len, p->annots[i].value.s);
    return fmt(T, "policy%zu", idx);
}

/* The policy from its effect keyword to its end: findings about the whole
 * policy point at `permit`/`forbid`, not at annotations or leading space. */
static dw_loc policy_loc(const tc *T, const dw_policy *p)
{
    uint32_t off = p->effect_loc.off, end = p->loc.end > off ? p->loc.end : p->effect_loc.end;
    return T->src ? dw_loc_at(T->src, off, end) : p->effect_loc;
}

static void validate_policy(tc *T, const dw_policy *p, size_t idx)
{
    T->p = p;
    T->pid = policy_id(T, p, idx);
    T->dn = 0;
    T->nerr = 0;
    T->act = NULL;

    names_scope(T, &p->principal);
    names_scope(T, &p->action);
    names_scope(T, &p->resource);
    /* An unknown action or type in the scope is the root cause of every
     * later error of this policy (no applicable action; attributes checked
     * against unrelated actions): report it alone. */
    bool scope_ok = T->nerr == 0;
    for (size_t i = 0; i < p->nclauses; i++) names_expr(T, p->clauses[i].body);
    if (!scope_ok) { T->act = NULL; return; }

    if (!any_applicable_env(T, p))
        ERROR(T, policy_loc(T, p), "check the scope against the `appliesTo` of the actions in the schema",
              "unable to find an applicable action given the policy scope constraints");

    bool all_false = true;
    size_t nenv = 0;
    for (size_t i = 0; i < T->nact; i++) {
        const dw_action_decl *a = &T->s->actions[i];
        if (!a->has_applies_to) continue;
        T->act = a;
        T->act_idx = i;
        T->atype = entity_ty(T, a->uid.type);
        T->ctxtype = a->context;
        for (size_t pi = 0; pi < a->nprincipals; pi++) {
            T->ptype = entity_ty(T, a->principals[pi]);
            for (size_t ri = 0; ri < a->nresources; ri++) {
                T->rtype = entity_ty(T, a->resources[ri]);
                nenv++;
                const dw_type *t = type_policy(T, p);
                if (t != &T_FALSE) all_false = false;
            }
        }
    }
    T->act = NULL;
    if (T->nerr == 0 && nenv && all_false)
        report(T, DW_SEV_WARNING, policy_loc(T, p), "its condition is False for every principal, action and resource type the schema allows",
               "policy is impossible: the policy expression evaluates to false for all valid requests");
}

dw_validate_result dw_validate(const dw_policy_set *ps, const dw_schema *schema, dw_diags *diags)
{
    return dw_validate_with_providers(ps, schema, NULL, diags);
}

dw_validate_result dw_validate_with_providers(const dw_policy_set *ps, const dw_schema *schema,
                                              const dw_providers *providers, dw_diags *diags)
{
    if (!ps || !schema) return (dw_validate_result){ 0, 0 };
    const dw_loc start = { .line = 1, .col = 1 };
    /* on the heap, so its contents survive the longjmp of an allocation failure */
    tc *T = calloc(1, sizeof *T);
    if (!T) {
        dw_error(diags, ps->src, start, "out of memory during validation");
        return (dw_validate_result){ 1, 0 };
    }
    dw_arena_init(&T->a, 1 << 16);
    T->s = schema;
    T->providers = providers;
    T->src = ps->src;
    T->nent = schema->nentities;
    T->nact = schema->nactions;
    if (setjmp(T->oom)) {
        dw_error(diags, ps->src, start, "out of memory during validation");
        T->res.nerrors++;
    } else {
        build_closures(T);
        for (size_t i = 0; i < ps->npolicies; i++) {
            validate_policy(T, &ps->policies[i], i);
            if (T->dn) qsort(T->dv, T->dn, sizeof *T->dv, diag_cmp);
            for (size_t k = 0; k < T->dn; k++) {
                const tc_diag *g = &T->dv[k];
                dw_diag_add(diags, g->sev, T->src, g->loc, g->hint, "%s", g->msg);
                if (g->sev == DW_SEV_ERROR) T->res.nerrors++;
                else if (g->sev == DW_SEV_WARNING) T->res.nwarnings++;
            }
        }
    }
    dw_validate_result res = T->res;
    free(T->dv);
    dw_arena_free(&T->a);
    free(T);
    return res;
}
