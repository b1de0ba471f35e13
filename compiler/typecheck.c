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
 * and their conditions are skipped.
 *
 * This file: messages, reporting, schema lookups, least upper bound,
 * capabilities and the per-policy driver; expressions are typed in
 * typecheck_expr.c, the name and action application passes are in
 * typecheck_names.c. */
#include "typecheck_int.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../stdlib/cedar_quote.h"

const dw_type dw_tc_t_bool = { .kind = DW_T_BOOL };
const dw_type dw_tc_t_true = { .kind = DW_T_BOOL };
const dw_type dw_tc_t_false = { .kind = DW_T_BOOL };
const dw_type dw_tc_t_long = { .kind = DW_T_LONG };
const dw_type dw_tc_t_string = { .kind = DW_T_STRING };
const dw_type dw_tc_t_decimal = { .kind = DW_T_DECIMAL };
const dw_type dw_tc_t_ipaddr = { .kind = DW_T_IPADDR };
const dw_type dw_tc_t_datetime = { .kind = DW_T_DATETIME };
const dw_type dw_tc_t_duration = { .kind = DW_T_DURATION };

/* ---- small helpers ---- */

/* A type as text for messages, cut short so huge records stay readable. */
const char *dw_tc_ty_str(tc *T, const dw_type *t)
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
const char *dw_tc_euid_str(tc *T, dw_str type, dw_str id)
{
    dw_buf b = {0};
    dw_buf_printf(&b, "%.*s::", (int)type.len, type.s);
    dw_cedar_quote_buf(&b, id.s, id.len);
    char *out = b.p ? dw_arena_memdup(&T->a, b.p, b.len) : "?";
    dw_buf_free(&b);
    return out ? out : "?";
}

const char *dw_tc_quoted(tc *T, dw_str s)
{
    return dw_tc_euid_str(T, (dw_str){ "", 0 }, s) + 2;   /* reuse the escaper, drop the "::" */
}

/* Record one finding of the current policy; the same finding reached from
 * several environments is kept once. */
void dw_tc_report(tc *T, dw_severity sev, dw_loc loc, const char *hint, const char *f, ...)
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
/* ---- schema lookups ---- */

static long ent_index(const tc *T, dw_str name)
{
    const dw_entity_decl *d = dw_schema_entity(T->s, name.s, name.len);
    return d ? (long)(d - T->s->entities) : -1;
}

long dw_tc_act_index(const tc *T, dw_str type, dw_str id)
{
    const dw_action_decl *d = dw_schema_action(T->s, type.s, type.len, id.s, id.len);
    return d ? (long)(d - T->s->actions) : -1;
}

/* Cedar treats every type whose last segment is `Action` as an action type. */
bool dw_tc_is_action_type_name(dw_str n)
{
    if (dw_str_is(n, "Action")) return true;
    return n.len > 8 && memcmp(n.s + n.len - 8, "::Action", 8) == 0;
}

bool dw_tc_enum_id_ok(const dw_entity_decl *d, dw_str id)
{
    if (!d->is_enum) return true;
    for (size_t i = 0; i < d->nenum; i++)
        if (dw_str_eq(d->enum_ids[i], id)) return true;
    return false;
}

/* Is entity type a equal to or a descendant of b in the declared hierarchy? */
bool dw_tc_ent_desc(const tc *T, dw_str a, dw_str b)
{
    if (dw_str_eq(a, b)) return true;
    long i = ent_index(T, a), j = ent_index(T, b);
    return i >= 0 && j >= 0 && T->ent_anc[(size_t)i * T->nent + (size_t)j];
}

bool dw_tc_act_desc(const tc *T, long i, dw_str type, dw_str id)
{
    long j = dw_tc_act_index(T, type, id);
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
                long j = dw_tc_act_index(T, d->parents[k].type, d->parents[k].id);
                if (j >= 0 && !row[j]) { row[j] = 1; stack[sp++] = (size_t)j; }
            }
        }
    }
}

const dw_type *dw_tc_entity_ty(tc *T, dw_str name)
{
    dw_type *t = alloc(T, sizeof *t);
    t->kind = DW_T_ENTITY;
    t->name = name;
    return t;
}

const dw_attr_decl *dw_tc_find_attr(const dw_type *rec, dw_str name)
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
const dw_type *dw_tc_lub(tc *T, const dw_type *a, const dw_type *b)
{
    if (!a || !b) return NULL;
    if (a->kind != b->kind) return NULL;
    switch (a->kind) {
    case DW_T_BOOL: return a == b ? a : &dw_tc_t_bool;
    case DW_T_ENTITY: return dw_str_eq(a->name, b->name) ? a : NULL;
    case DW_T_SET: {
        const dw_type *e = dw_tc_lub(T, a->elem, b->elem);
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
            tys[i] = dw_tc_lub(T, a->attrs[i].type, b->attrs[i].type);
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

bool dw_tc_caps_has(tc_caps c, const dw_expr *e, dw_str attr, const dw_expr *tag)
{
    for (size_t i = 0; i < c.n; i++)
        if (cap_eq(&c.v[i], e, attr, tag)) return true;
    return false;
}

tc_caps dw_tc_caps_one(tc *T, const dw_expr *e, dw_str attr, const dw_expr *tag)
{
    tc_cap *v = alloc(T, sizeof *v);
    *v = (tc_cap){ e, tag, attr };
    return (tc_caps){ v, 1 };
}

tc_caps dw_tc_caps_union(tc *T, tc_caps a, tc_caps b)
{
    if (!a.n) return b;
    if (!b.n) return a;
    tc_cap *v = alloc(T, (a.n + b.n) * sizeof *v);
    memcpy(v, a.v, a.n * sizeof *v);
    size_t n = a.n;
    for (size_t i = 0; i < b.n; i++)
        if (!dw_tc_caps_has(a, b.v[i].e, b.v[i].attr, b.v[i].tag)) v[n++] = b.v[i];
    return (tc_caps){ v, n };
}

tc_caps dw_tc_caps_inter(tc *T, tc_caps a, tc_caps b)
{
    if (!a.n || !b.n) return NOCAPS;
    tc_cap *v = alloc(T, a.n * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < a.n; i++)
        if (dw_tc_caps_has(b, a.v[i].e, a.v[i].attr, a.v[i].tag)) v[n++] = a.v[i];
    return (tc_caps){ v, n };
}

/* ---- the policy as one conjunction, typed in the current environment ---- */

/* Type of the principal/resource scope test; `var` is the variable's type. */
static tc_res scope_pr_type(tc *T, const dw_scope_con *s, const dw_type *var)
{
    if (s->kind == DW_SC_ANY) return ok(&dw_tc_t_true);
    if (s->kind == DW_SC_IS || s->kind == DW_SC_IS_IN) {
        if (!dw_str_eq(var->name, s->is_type)) return ok(&dw_tc_t_false);
        if (s->kind == DW_SC_IS) return ok(&dw_tc_t_true);
    }
    if (s->target_is_slot) return ok(&dw_tc_t_bool);       /* a slot is instantiated with a compatible type */
    const dw_type *tt = dw_tc_euid_type(T, s->target.type, s->target.id);
    if (!tt) return BAD;
    if (s->kind == DW_SC_EQ) return ok(dw_str_eq(var->name, tt->name) ? &dw_tc_t_bool : &dw_tc_t_false);
    return ok(dw_tc_ent_desc(T, var->name, tt->name) ? &dw_tc_t_bool : &dw_tc_t_false);
}

static tc_res scope_action_type(tc *T, const dw_scope_con *s)
{
    long a = (long)T->act_idx;
    switch (s->kind) {
    case DW_SC_ANY: return ok(&dw_tc_t_true);
    case DW_SC_EQ: {
        if (!dw_tc_euid_type(T, s->target.type, s->target.id)) return BAD;
        return ok(bool_of(dw_str_eq(s->target.type, T->act->uid.type) && dw_str_eq(s->target.id, T->act->uid.id)));
    }
    case DW_SC_IN:
        if (!dw_tc_euid_type(T, s->target.type, s->target.id)) return BAD;
        return ok(bool_of(dw_tc_act_desc(T, a, s->target.type, s->target.id)));
    case DW_SC_IN_LIST: {
        const dw_type *t = NULL;
        for (size_t i = 0; i < s->nlist; i++) {
            const dw_type *u = dw_tc_euid_type(T, s->list[i].type, s->list[i].id);
            if (!u) return BAD;
            if (t && !dw_tc_lub(T, t, u)) {
                ERROR(T, s->list[i].loc, "every element of a set literal must have the same type",
                      "set elements have incompatible types: %s and %s", dw_tc_ty_str(T, t), dw_tc_ty_str(T, u));
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
            if (dw_tc_act_desc(T, a, s->list[i].type, s->list[i].id)) any = true;
        return ok(bool_of(any));
    }
    default: return ok(&dw_tc_t_bool);
    }
}

/* Fold one conjunct into the running `&&` (Lean typeOfAnd); returns false once
 * the conjunction is False, so later conjuncts are skipped. */
static bool fold_conj(tc *T, tc_res *acc, tc_res r, bool *bad)
{
    if (!r.t) { *bad = true; return true; }
    if (r.t == &dw_tc_t_false) { *acc = ok(&dw_tc_t_false); return false; }
    acc->c = dw_tc_caps_union(T, acc->c, r.c);
    if (r.t != &dw_tc_t_true) acc->t = &dw_tc_t_bool;
    return true;
}

/* NULL when the policy is ill-typed here; else its type (True/False/Bool). */
static const dw_type *type_policy(tc *T, const dw_policy *p)
{
    tc_res acc = ok(&dw_tc_t_true);
    bool bad = false;
    if (!fold_conj(T, &acc, scope_pr_type(T, &p->principal, T->ptype), &bad)) return bad ? NULL : &dw_tc_t_false;
    if (!fold_conj(T, &acc, scope_action_type(T, &p->action), &bad)) return bad ? NULL : &dw_tc_t_false;
    if (!fold_conj(T, &acc, scope_pr_type(T, &p->resource, T->rtype), &bad)) return bad ? NULL : &dw_tc_t_false;
    for (size_t i = 0; i < p->nclauses; i++) {
        const dw_clause *cl = &p->clauses[i];
        const char *hint = cl->is_when ? "the condition of a `when` clause must be a boolean"
                                       : "the condition of an `unless` clause must be a boolean";
        tc_res r = dw_tc_type_bool_operand(T, cl->body, acc.c, hint);
        if (r.t && !cl->is_when) r = ok(dw_tc_bool_not(r.t));   /* `unless { c }` is `!c`: no capabilities */
        if (!fold_conj(T, &acc, r, &bad)) return bad ? NULL : &dw_tc_t_false;
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

    dw_tc_names_scope(T, &p->principal);
    dw_tc_names_scope(T, &p->action);
    dw_tc_names_scope(T, &p->resource);
    /* An unknown action or type in the scope is the root cause of every
     * later error of this policy (no applicable action; attributes checked
     * against unrelated actions): report it alone. */
    bool scope_ok = T->nerr == 0;
    for (size_t i = 0; i < p->nclauses; i++) dw_tc_names_expr(T, p->clauses[i].body);
    if (!scope_ok) { T->act = NULL; return; }

    if (!dw_tc_any_applicable_env(T, p))
        ERROR(T, policy_loc(T, p), "check the scope against the `appliesTo` of the actions in the schema",
              "unable to find an applicable action given the policy scope constraints");

    bool all_false = true;
    size_t nenv = 0;
    for (size_t i = 0; i < T->nact; i++) {
        const dw_action_decl *a = &T->s->actions[i];
        if (!a->has_applies_to) continue;
        T->act = a;
        T->act_idx = i;
        T->atype = dw_tc_entity_ty(T, a->uid.type);
        T->ctxtype = a->context;
        for (size_t pi = 0; pi < a->nprincipals; pi++) {
            T->ptype = dw_tc_entity_ty(T, a->principals[pi]);
            for (size_t ri = 0; ri < a->nresources; ri++) {
                T->rtype = dw_tc_entity_ty(T, a->resources[ri]);
                nenv++;
                const dw_type *t = type_policy(T, p);
                if (t != &dw_tc_t_false) all_false = false;
            }
        }
    }
    T->act = NULL;
    if (T->nerr == 0 && nenv && all_false)
        dw_tc_report(T, DW_SEV_WARNING, policy_loc(T, p), "its condition is False for every principal, action and resource type the schema allows",
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
