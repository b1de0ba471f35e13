/* typecheck_names.c - the validator's two policy-wide passes besides typing (unknown entity types, actions and enum ids with "did you mean" hints; actions that apply to no environment): separate from the typing, which skips code these passes still check. */
#include "typecheck_int.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- name pass (Rust: validate_entity_types, validate_action_ids,
 * validate_enum_entity): runs over the whole policy, skipped code included ---- */

/* Edit distance for "did you mean" hints; long names are not compared. */

bool dw_tc_close_enough(dw_str want, dw_str cand, size_t *best)
{
    return dw_hint_closer(want.s, want.len, cand.s, cand.len, best);
}

static const char *suggest_type(tc *T, dw_str type)
{
    size_t best = (size_t)-1;
    const dw_entity_decl *hit = NULL;
    for (size_t i = 0; i < T->nent; i++)
        if (dw_tc_close_enough(type, T->s->entities[i].name, &best)) hit = &T->s->entities[i];
    return hit ? fmt(T, "did you mean `%.*s`?", (int)hit->name.len, hit->name.s) : NULL;
}

static const char *suggest_action(tc *T, dw_str type, dw_str id)
{
    size_t best = (size_t)-1;
    const dw_action_decl *hit = NULL;
    for (size_t i = 0; i < T->nact; i++) {
        const dw_action_decl *a = &T->s->actions[i];
        if (dw_str_eq(a->uid.type, type) && dw_tc_close_enough(id, a->uid.id, &best)) hit = a;
    }
    if (hit) return fmt(T, "did you mean `%s`?", dw_tc_euid_str(T, hit->uid.type, hit->uid.id));
    /* the right id in another namespace (`Action::"shell:spawn"` for Box's), else a close one there */
    for (size_t i = 0; i < T->nact; i++) {
        const dw_action_decl *a = &T->s->actions[i];
        if (!dw_str_eq(a->uid.type, type) && dw_str_eq(a->uid.id, id)) hit = a;
    }
    for (size_t i = 0; !hit && i < T->nact; i++) {
        const dw_action_decl *a = &T->s->actions[i];
        if (!dw_str_eq(a->uid.type, type) && dw_tc_close_enough(id, a->uid.id, &best)) hit = a;
    }
    return hit ? fmt(T, "did you mean `%s`? (actions are written with their namespace)", dw_tc_euid_str(T, hit->uid.type, hit->uid.id))
               : "declare it in the schema with `action`, or fix the spelling";
}

static void check_euid(tc *T, dw_str type, dw_str id, dw_loc loc)
{
    if (dw_tc_is_action_type_name(type)) {
        if (dw_tc_act_index(T, type, id) < 0)
            ERROR(T, loc, suggest_action(T, type, id), "unrecognized action `%s`", dw_tc_euid_str(T, type, id));
        return;
    }
    const dw_entity_decl *d = dw_schema_entity(T->s, type.s, type.len);
    if (!d) {
        ERROR(T, loc, suggest_type(T, type), "unrecognized entity type `%.*s`", (int)type.len, type.s);
        return;
    }
    if (!dw_tc_enum_id_ok(d, id)) {
        dw_buf b = {0};
        for (size_t i = 0; i < d->nenum; i++)
            dw_buf_printf(&b, "%s%s", i ? ", " : "", dw_tc_quoted(T, d->enum_ids[i]));
        char *hint = fmt(T, "declared ids: %.*s", (int)b.len, b.p ? b.p : "");
        dw_buf_free(&b);
        ERROR(T, loc, hint, "entity `%s` is of an enumerated entity type, but `%s` is not declared as a valid eid",
              dw_tc_euid_str(T, type, id), dw_tc_quoted(T, id));
    }
}

static void check_type_name(tc *T, dw_str type, dw_loc loc)
{
    if (!dw_tc_is_action_type_name(type) && !dw_schema_entity(T->s, type.s, type.len))
        ERROR(T, loc, suggest_type(T, type), "unrecognized entity type `%.*s`", (int)type.len, type.s);
}

void dw_tc_names_expr(tc *T, const dw_expr *e)
{
    if (!e) return;
    switch (e->kind) {
    case DW_E_ENTITY: check_euid(T, e->u.euid.type, e->u.euid.id, e->loc); return;
    case DW_E_IF: dw_tc_names_expr(T, e->u.kids[0]); dw_tc_names_expr(T, e->u.kids[1]); dw_tc_names_expr(T, e->u.kids[2]); return;
    case DW_E_NOT: case DW_E_NEG: dw_tc_names_expr(T, e->u.kids[0]); return;
    case DW_E_AND: case DW_E_OR: case DW_E_EQ: case DW_E_NE: case DW_E_LT: case DW_E_LE: case DW_E_GT:
    case DW_E_GE: case DW_E_IN: case DW_E_ADD: case DW_E_SUB: case DW_E_MUL:
        dw_tc_names_expr(T, e->u.kids[0]); dw_tc_names_expr(T, e->u.kids[1]); return;
    case DW_E_HAS: case DW_E_GETATTR: dw_tc_names_expr(T, e->u.attr.kids0); return;
    case DW_E_HAS_PATH: dw_tc_names_expr(T, e->u.path.kids0); return;
    case DW_E_LIKE: dw_tc_names_expr(T, e->u.like.kids0); return;
    case DW_E_IS: {
        dw_tc_names_expr(T, e->u.is.kids0);
        /* the type name sits just before `in`/end; point at the whole test */
        check_type_name(T, e->u.is.type, e->loc);
        dw_tc_names_expr(T, e->u.is.in);
        return;
    }
    case DW_E_SET: for (size_t i = 0; i < e->u.list.n; i++) dw_tc_names_expr(T, e->u.list.v[i]); return;
    case DW_E_RECORD: for (size_t i = 0; i < e->u.rec.n; i++) dw_tc_names_expr(T, e->u.rec.v[i].value); return;
    case DW_E_METHOD: case DW_E_CALL:
        dw_tc_names_expr(T, e->u.call.recv);
        for (size_t i = 0; i < e->u.call.nargs; i++) dw_tc_names_expr(T, e->u.call.args[i]);
        return;
    default: return;
    }
}

void dw_tc_names_scope(tc *T, const dw_scope_con *s)
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
    case DW_SC_IN: return s->target_is_slot || dw_tc_ent_desc(T, x, s->target.type);
    case DW_SC_IS: return dw_str_eq(x, s->is_type);
    case DW_SC_IS_IN: return dw_str_eq(x, s->is_type) && (s->target_is_slot || dw_tc_ent_desc(T, x, s->target.type));
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
    case DW_SC_EQ: return dw_tc_act_index(T, s->target.type, s->target.id) == (long)i;
    case DW_SC_IN: v = &s->target; n = 1; break;
    case DW_SC_IN_LIST: v = s->list; n = s->nlist; break;
    default: return false;
    }
    /* Rust admits nothing when any listed action is undeclared */
    for (size_t k = 0; k < n; k++)
        if (dw_tc_act_index(T, v[k].type, v[k].id) < 0) return false;
    for (size_t k = 0; k < n; k++)
        if (dw_tc_act_desc(T, (long)i, v[k].type, v[k].id)) return true;
    return false;
}

bool dw_tc_any_applicable_env(const tc *T, const dw_policy *p)
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
