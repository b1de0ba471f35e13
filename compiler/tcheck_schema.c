/* tcheck_schema.c - temporal validation against the schema and the event derivation (dogwood.md §9.6-§9.9, §20 Q7: types of terms, fields, windows, per-action comparisons): separate from tcheck.c's well-formedness, which needs no schema. */
#include "tcheck_int.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../stdlib/cedar_quote.h"

typedef enum { TY_UNKNOWN, TY_TIMEPOINT, TY_LONG, TY_STRING, TY_BOOL, TY_DECIMAL, TY_ENTITY, TY_ARRAY, TY_CEDAR } tykind;
/* ENTITY: one of `names` (a union for principalType/resourceType leaves);
 * CEDAR: any other Cedar type (sets, records, extension types). */
typedef struct ty { tykind k; const dw_str *names; size_t nnames; const dw_type *ct; } ty;

/* ------------------------------------------------------------------ types (§9.8) */

static ty ty_k(tykind k) { return (ty){ k, NULL, 0, NULL }; }

static ty ty_of_cedar(const dw_type *t)
{
    if (!t) return ty_k(TY_UNKNOWN);
    switch (t->kind) {
    case DW_T_BOOL: return ty_k(TY_BOOL);
    case DW_T_LONG: return ty_k(TY_LONG);
    case DW_T_STRING: return ty_k(TY_STRING);
    case DW_T_DECIMAL: return ty_k(TY_DECIMAL);
    case DW_T_ENTITY: return (ty){ TY_ENTITY, &t->name, 1, NULL };
    default: return (ty){ TY_CEDAR, NULL, 0, t };
    }
}

static ty ty_of_field(const dw_event_field *f)
{
    if (!f || f->is_group) return ty_k(TY_UNKNOWN);
    if (f->type) return ty_of_cedar(f->type);
    if (f->from_selector) return (ty){ TY_ENTITY, f->etypes, f->netypes, NULL };
    return ty_k(TY_UNKNOWN);
}

static const char *ty_name(tc *T, ty t)
{
    switch (t.k) {
    case TY_UNKNOWN: return "unknown";
    case TY_TIMEPOINT: return "Timepoint";
    case TY_LONG: return "Long";
    case TY_STRING: return "String";
    case TY_BOOL: return "Bool";
    case TY_DECIMAL: return "decimal";
    case TY_ARRAY: return "an array";
    case TY_ENTITY: {
        if (!t.nnames) return "an entity of no type";
        char *s = fmt(T, "%.*s", PS(t.names[0]));
        for (size_t i = 1; i < t.nnames; i++) s = fmt(T, "%s | %.*s", s, PS(t.names[i]));
        return s;
    }
    case TY_CEDAR: {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f) longjmp(T->oom, 1);
        dw_type_print(f, t.ct);
        fclose(f);
        char *s = fmt(T, "%s", buf ? buf : "");
        free(buf);
        return s;
    }
    }
    return "unknown";
}

static bool known(ty t) { return t.k != TY_UNKNOWN; }

static bool compat(ty a, ty b)
{
    if (!known(a) || !known(b)) return true;
    if (a.k == TY_ARRAY || b.k == TY_ARRAY) {
        ty o = a.k == TY_ARRAY ? b : a;
        return o.k == TY_ARRAY || (o.k == TY_CEDAR && o.ct->kind == DW_T_SET);
    }
    if (a.k != b.k) return false;
    if (a.k == TY_ENTITY) {
        for (size_t i = 0; i < a.nnames; i++)
            for (size_t j = 0; j < b.nnames; j++) if (dw_str_eq(a.names[i], b.names[j])) return true;
        return false;
    }
    if (a.k == TY_CEDAR) return dw_type_equal(a.ct, b.ct);
    return true;
}

static bool is_action_type(const tc *T, dw_str name)
{
    if (!T->s) return false;
    for (size_t i = 0; i < T->s->nactions; i++) if (dw_str_eq(T->s->actions[i].uid.type, name)) return true;
    return false;
}

/* A binder annotation (§6.7): Timepoint, a Cedar primitive, or an entity type. */
static ty binder_ty(tc *T, const dw_tbinder *b, bool *ok)
{
    dw_str t = b->type;
    *ok = true;
    if (dw_str_is(t, "Timepoint")) return ty_k(TY_TIMEPOINT);
    if (dw_str_is(t, "Long")) return ty_k(TY_LONG);
    if (dw_str_is(t, "String")) return ty_k(TY_STRING);
    if (dw_str_is(t, "Bool")) return ty_k(TY_BOOL);
    if (dw_str_is(t, "decimal")) return ty_k(TY_DECIMAL);
    if (!T->s) return (ty){ TY_ENTITY, &b->type, 1, NULL };
    if (dw_schema_entity(T->s, t.s, t.len) || is_action_type(T, t)) return (ty){ TY_ENTITY, &b->type, 1, NULL };
    *ok = false;
    return ty_k(TY_UNKNOWN);
}

static ty var_ty(tc *T, dw_str name)
{
    long i = dw_tcheck_lookup(T, name);
    if (i < 0) return ty_k(TY_UNKNOWN);
    bool ok;
    return binder_ty(T, T->sc[i].b, &ok);
}

static void check_binder(tc *T, const dw_tbinder *b)
{
    bool ok;
    binder_ty(T, b, &ok);
    if (!ok)
        dw_tcheck_report(T, b->loc, "a binder type is `Timepoint`, `Long`, `String`, `Bool` or a declared entity type",
               "binder type `%.*s` is not a declared type", PS(b->type));
}

/* The actions the policy's action scope admits (§20 Q10), or unknown. */
static void admitted_actions(tc *T, const dw_policy *p)
{
    T->nacts = 0;
    T->acts_known = false;
    if (!T->s) return;
    const dw_scope_con *c = &p->action;
    const dw_euid_lit *targets;
    size_t nt;
    bool desc;
    if (c->kind == DW_SC_EQ) { targets = &c->target; nt = 1; desc = false; }
    else if (c->kind == DW_SC_IN) { targets = &c->target; nt = 1; desc = true; }
    else if (c->kind == DW_SC_IN_LIST) { targets = c->list; nt = c->nlist; desc = true; }
    else return;
    size_t na = T->s->nactions;
    bool *in = alloc(T, (na ? na : 1) * sizeof *in);
    for (size_t k = 0; k < nt; k++)
        for (size_t i = 0; i < na; i++)
            if (dw_str_eq(T->s->actions[i].uid.type, targets[k].type) && dw_str_eq(T->s->actions[i].uid.id, targets[k].id)) in[i] = true;
    /* descendants: fixpoint over the parent links (cycles cannot loop) */
    for (bool changed = desc; changed;) {
        changed = false;
        for (size_t i = 0; i < na; i++) {
            if (in[i]) continue;
            const dw_action_decl *a = &T->s->actions[i];
            for (size_t j = 0; j < a->nparents && !in[i]; j++)
                for (size_t k = 0; k < na; k++)
                    if (in[k] && dw_str_eq(T->s->actions[k].uid.type, a->parents[j].type) &&
                        dw_str_eq(T->s->actions[k].uid.id, a->parents[j].id)) { in[i] = true; changed = true; break; }
        }
    }
    T->acts = alloc(T, (na ? na : 1) * sizeof *T->acts);
    /* an action without appliesTo (a pure group) never is a request's action */
    for (size_t i = 0; i < na; i++)
        if (in[i] && T->s->actions[i].has_applies_to) T->acts[T->nacts++] = &T->s->actions[i];
    T->acts_known = true;
}

static const dw_type *ctx_lookup(const dw_type *rec, dw_str path)
{
    const char *p = path.s, *end = path.s + path.len;
    const dw_type *t = rec;
    while (t && p < end) {
        const char *q = memchr(p, '.', (size_t)(end - p));
        if (!q) q = end;
        dw_str seg = { p, (size_t)(q - p) };
        if (t->kind != DW_T_RECORD) return NULL;
        const dw_type *next = NULL;
        for (size_t i = 0; i < t->nattrs; i++) if (dw_str_eq(t->attrs[i].name, seg)) { next = t->attrs[i].type; break; }
        t = next;
        p = q < end ? q + 1 : end;
    }
    return t;
}

static ty scope_ty(tc *T, bool principal)
{
    if (!T->acts_known || !T->nacts) return ty_k(TY_UNKNOWN);
    dw_str *names = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < T->nacts; i++) {
        const dw_action_decl *a = T->acts[i];
        const dw_str *v = principal ? a->principals : a->resources;
        size_t nv = principal ? a->nprincipals : a->nresources;
        for (size_t j = 0; j < nv; j++) {
            bool dup = false;
            for (size_t k = 0; k < n; k++) if (dw_str_eq(names[k], v[j])) dup = true;
            if (dup) continue;
            names = dw_tcheck_grow(T, names, n, &cap, sizeof *names);
            names[n++] = v[j];
        }
    }
    return (ty){ TY_ENTITY, names, n, NULL };
}

static ty entity_lit_ty(tc *T, const dw_tnode *t)
{
    if (!T->s) return (ty){ TY_ENTITY, &t->type, 1, NULL };
    const dw_entity_decl *e = dw_schema_entity(T->s, t->type.s, t->type.len);
    if (e) {
        if (e->is_enum) {
            bool found = false;
            for (size_t i = 0; i < e->nenum && !found; i++) found = dw_str_eq(e->enum_ids[i], t->str);
            if (!found) {
                char *ids = "";
                for (size_t i = 0; i < e->nenum; i++) ids = fmt(T, "%s%s\"%s\"", ids, i ? ", " : "", dw_tcheck_esc(T, e->enum_ids[i]));
                dw_tcheck_report(T, t->loc, fmt(T, "declared values: %s", ids),
                       "`%.*s::\"%s\"` is not a declared value of the enumerated entity type `%.*s`",
                       PS(t->type), dw_tcheck_esc(T, t->str), PS(t->type));
            }
        }
        return (ty){ TY_ENTITY, &e->name, 1, NULL };
    }
    if (dw_schema_action(T->s, t->type.s, t->type.len, t->str.s, t->str.len)) return (ty){ TY_ENTITY, &t->type, 1, NULL };
    if (is_action_type(T, t->type))
        dw_tcheck_report(T, t->loc, "check the action id against the action schema", "action `%.*s::\"%s\"` is not declared",
               PS(t->type), dw_tcheck_esc(T, t->str));
    else
        dw_tcheck_report(T, t->loc, "check the type name against the action schema's entity declarations",
               "entity type `%.*s` is not declared", PS(t->type));
    return ty_k(TY_UNKNOWN);
}

/* ------------------------------------------------------------------ §9.6-§9.9 */

static void sc_cond(tc *T, const dw_tnode *n, int d);

/* §9.6: contains a predicate, a tp, an aggregate or a variable. */
static bool varies(const dw_tnode *n, int d)
{
    while (n && d <= DW_TCHECK_MAX_DEPTH) {
        switch (n->kind) {
        case DW_T_PRED: case DW_T_TP: case DW_T_COUNT: case DW_T_SUM: case DW_T_VAR: return true;
        default: break;
        }
        for (size_t i = 0; i < n->nfields; i++) if (varies(n->fields[i].term, d + 1)) return true;
        for (size_t i = 0; i < n->nargs; i++) if (varies(n->args[i], d + 1)) return true;
        if (n->kids[1] && varies(n->kids[1], d + 1)) return true;
        n = n->kids[0];
        d++;
    }
    return false;
}

static void need_varies(tc *T, const dw_tnode *n, const char *what)
{
    if (!n || varies(n, 0)) return;
    dw_tcheck_report(T, n->loc,
           "it must mention a predicate, `tp(…)`, an aggregate or a bound variable; a test of `context.*`, `principal` or `resource` alone belongs in a Cedar `when { … }` clause",
           "%s does not depend on the timepoint (it monitors nothing)", what);
}

/* The window as written (`48h`), else in its largest exact unit. */
static const char *win_text(tc *T, const dw_twindow *w)
{
    if (T->src && w->loc.end > w->loc.off && w->loc.end <= T->src->len && w->loc.end - w->loc.off < 64) {
        char buf[64];
        size_t k = 0;
        for (uint32_t i = w->loc.off; i < w->loc.end; i++)
            if (!strchr(" \t\r\n", T->src->text[i])) buf[k++] = T->src->text[i];
        buf[k] = 0;
        char *endp;
        long long v = strtoll(buf, &endp, 10);
        if (endp != buf && endp[0] && !endp[1] && strchr("smhd", endp[0])) {
            long long m = endp[0] == 's' ? 1 : endp[0] == 'm' ? 60 : endp[0] == 'h' ? 3600 : 86400;
            if (v == w->secs / m && w->secs % m == 0) return fmt(T, "%s", buf);
        }
    }
    static const struct { int64_t m; char u; } units[] = { { 86400, 'd' }, { 3600, 'h' }, { 60, 'm' } };
    for (size_t i = 0; i < 3; i++)
        if (w->secs != 0 && w->secs % units[i].m == 0) return fmt(T, "%lld%c", (long long)(w->secs / units[i].m), units[i].u);
    return fmt(T, "%llds", (long long)w->secs);
}

static void window_cap(tc *T, const dw_twindow *w)
{
    if (w->param.s || w->secs < 0 || w->secs <= T->maxw) return;
    /* Box's event schema is built in: its cap is Box's, not the author's to raise */
    bool box = T->ev && T->ev->es && T->ev->es->src && T->ev->es->src->name && !strcmp(T->ev->es->src->name, "<builtin:box>");
    dw_tcheck_report(T, w->loc,
           box ? fmt(T, "Box keeps %.*s of history (box.md §5) and a policy cannot raise it: shorten the window", PS(T->maxw_text))
               : fmt(T, "split the condition, or raise `max_window` in the event schema; nested windows may reach further back in total"),
           "temporal window `%s` exceeds the maximum allowed window `%.*s`", win_text(T, w), PS(T->maxw_text));
}

/* "did you mean `input.program`?", else the event's leaves */
static void leaf_paths(tc *T, const dw_event_field *fs, size_t n, const char *pre, dw_str want, size_t *best,
                       const char **hit, char **all)
{
    for (size_t i = 0; i < n; i++) {
        char *path = fmt(T, "%s%.*s", pre, PS(fs[i].name));
        if (fs[i].is_group) { leaf_paths(T, fs[i].fields, fs[i].nfields, fmt(T, "%s.", path), want, best, hit, all); continue; }
        if (dw_hint_closer(want.s, want.len, path, strlen(path), best)) *hit = path;
        *all = fmt(T, "%s%s`%s`", *all, **all ? ", " : "", path);
    }
}

static const char *field_hint(tc *T, const dw_derived_event *ev, dw_str want)
{
    size_t best = (size_t)-1;
    const char *hit = NULL;
    char *all = "";
    leaf_paths(T, ev->fields, ev->nfields, "", want, &best, &hit, &all);
    if (hit) return fmt(T, "did you mean `%s`?", hit);
    return *all ? fmt(T, "the event's fields are %s", all) : "this event has no fields";
}

static ty sc_term(tc *T, const dw_tnode *t, int d)
{
    if (!t || d > DW_TCHECK_MAX_DEPTH) return ty_k(TY_UNKNOWN);
    switch (t->kind) {
    case DW_T_LIT_LONG: return ty_k(TY_LONG);
    case DW_T_LIT_STRING: return ty_k(TY_STRING);
    case DW_T_LIT_BOOL: return ty_k(TY_BOOL);
    case DW_T_LIT_DECIMAL: return ty_k(TY_DECIMAL);
    case DW_T_LIT_ENTITY: return entity_lit_ty(T, t);
    case DW_T_ARRAY:
        for (size_t i = 0; i < t->nargs; i++) sc_term(T, t->args[i], d + 1);
        return ty_k(TY_ARRAY);
    case DW_T_VAR: return var_ty(T, t->name);
    case DW_T_PRINCIPAL: case DW_T_RESOURCE:
        if (t->path.len) return ty_k(TY_UNKNOWN);   /* attribute tails are not typed (§9.8) */
        return scope_ty(T, t->kind == DW_T_PRINCIPAL);
    case DW_T_CONTEXT: {
        if (!T->acts_known) return ty_k(TY_UNKNOWN);   /* unconstrained: left to the Cedar side */
        const dw_type *first = NULL;
        bool same = true;
        for (size_t i = 0; i < T->nacts; i++) {
            const dw_action_decl *a = T->acts[i];
            const dw_type *ct = ctx_lookup(a->context, t->path);
            if (!ct) {
                dw_tcheck_report(T, t->loc, "every action the policy's scope admits must declare it in its context (see the action schema)",
                       "attribute `context.%.*s` is not declared in the context of action %.*s::\"%s\"",
                       PS(t->path), PS(a->uid.type), dw_tcheck_esc(T, a->uid.id));
                return ty_k(TY_UNKNOWN);
            }
            if (!first) first = ct;
            else if (!dw_type_equal(first, ct)) same = false;
        }
        return same ? ty_of_cedar(first) : ty_k(TY_UNKNOWN);
    }
    case DW_T_COUNT: case DW_T_SUM: {
        size_t mark = T->nsc;
        for (size_t i = 0; i < t->nbinders; i++) { check_binder(T, &t->binders[i]); dw_tcheck_push(T, &t->binders[i]); }
        if (t->kind == DW_T_SUM) {
            ty v = var_ty(T, t->slot.name);
            if (known(v) && v.k != TY_LONG)
                dw_tcheck_report(T, t->slot.loc, "declare it `(… : Long)` in the `for` list", "summed variable `%.*s` must be declared `Long`, not `%s`",
                       PS(t->slot.name), ty_name(T, v));
        }
        need_varies(T, t->kids[0], "this `where` body");
        sc_cond(T, t->kids[0], d + 1);
        T->nsc = mark;
        return ty_k(TY_LONG);
    }
    default: return ty_k(TY_UNKNOWN);
    }
}

/* elem: t is an element of an array matched against a Set field. */
static void field_term(tc *T, const dw_tnode *t, ty ft, dw_str path, bool elem, int d)
{
    if (!t || d > DW_TCHECK_MAX_DEPTH) return;
    if (t->kind == DW_T_WILDCARD) return;
    if (t->kind == DW_T_ARRAY && ft.k == TY_CEDAR && ft.ct->kind == DW_T_SET) {
        for (size_t i = 0; i < t->nargs; i++) field_term(T, t->args[i], ty_of_cedar(ft.ct->elem), path, true, d + 1);
        return;
    }
    ty tt = sc_term(T, t, d + 1);
    if (compat(ft, tt)) return;
    const char *what = elem ? fmt(T, "the elements of field `%.*s` have", PS(path)) : fmt(T, "field `%.*s` has", PS(path));
    if (t->kind == DW_T_VAR)
        dw_tcheck_report(T, t->loc, "binder annotations are authoritative: declare the variable with the field's type",
               "%s type %s, but variable `%.*s` is declared `%s`", what, ty_name(T, ft), PS(t->name), ty_name(T, tt));
    else
        dw_tcheck_report(T, t->loc, NULL, "%s type %s, but the pattern has type %s", what, ty_name(T, ft), ty_name(T, tt));
}

/* The span of a field pattern's path, when the source text there is it. */
static dw_loc path_loc(tc *T, const dw_tfield *f)
{
    if (T->src && f->loc.off + f->path.len <= T->src->len && memcmp(T->src->text + f->loc.off, f->path.s, f->path.len) == 0)
        return dw_loc_at(T->src, f->loc.off, f->loc.off + (uint32_t)f->path.len);
    return f->loc;
}

static void sc_pred(tc *T, const dw_tnode *n, int d)
{
    const dw_derived_event *ev = NULL;
    if (T->ev) {
        ev = dw_event_find(T->ev, n->type.s, n->type.len, n->str.s, n->str.len, n->ekind.s, n->ekind.len);
        if (!ev) {
            const char *hint;
            if (T->s && !dw_schema_action(T->s, n->type.s, n->type.len, n->str.s, n->str.len)) {
                hint = fmt(T, "the action schema declares no action %.*s::\"%s\"", PS(n->type), dw_tcheck_esc(T, n->str));
            } else {
                char *kinds = "";
                for (size_t i = 0; i < T->ev->es->ndecls; i++) kinds = fmt(T, "%s%s`%.*s`", kinds, i ? ", " : "", PS(T->ev->es->decls[i].kind));
                hint = T->ev->es->ndecls ? fmt(T, "the event schema declares the kinds %s", kinds) : "the event schema declares no events";
            }
            dw_tcheck_report(T, n->loc, hint, "predicate `%s` does not name a declared event", dw_tcheck_pred_text(T, n));
        }
    }
    for (size_t i = 0; i < n->nfields; i++) {
        const dw_tfield *f = &n->fields[i];
        const dw_event_field *ef = ev ? dw_event_field_lookup(ev, f->path.s, f->path.len) : NULL;
        if (ev && !ef) {
            dw_tcheck_report(T, path_loc(T, f), field_hint(T, ev, f->path),
                   "field `%.*s` is not declared for event `%s`", PS(f->path), dw_tcheck_pred_text(T, n));
        } else if (ef && ef->is_group) {
            const char *hint = ef->nfields ? fmt(T, "name one of its leaves, e.g. `%.*s.%.*s`", PS(f->path), PS(ef->fields[0].name))
                                           : "name one of its leaves";
            dw_tcheck_report(T, path_loc(T, f), hint, "field `%.*s` of event `%s` is a group, not a leaf", PS(f->path), dw_tcheck_pred_text(T, n));
            ef = NULL;
        }
        field_term(T, f->term, ty_of_field(ef), f->path, false, d + 1);
    }
}

static const char *op_text(dw_tcmp op)
{
    static const char *t[] = { "==", "!=", "<", "<=", ">", ">=" };
    return t[op];
}

/* An operand's type under one admitted action: a `context.*` path as that
 * action declares it (UNKNOWN where it does not: reported already), any other
 * operand as typed over them all. */
static ty operand_ty_for(const dw_tnode *t, const dw_action_decl *a, ty all)
{
    if (t->kind != DW_T_CONTEXT) return all;
    const dw_type *ct = ctx_lookup(a->context, t->path);
    return ct ? ty_of_cedar(ct) : ty_k(TY_UNKNOWN);
}

/* A comparison with a `context.*` operand whose type differs across the
 * admitted actions (its type over them all is unknown): Cedar checks the
 * request environment of each action (§5.2), so check it under each: `==` /
 * `!=` need compatible sides, `<` `<=` `>` `>=` Long ones.  One report per
 * comparison, naming the first action it fails under. */
static void cmp_per_action(tc *T, const dw_tnode *n, ty l, ty r)
{
    if (!T->acts_known || T->nacts < 2 || (n->kids[0]->kind != DW_T_CONTEXT && n->kids[1]->kind != DW_T_CONTEXT)) return;
    bool eq = n->op == DW_TC_EQ || n->op == DW_TC_NE;
    for (size_t i = 0; i < T->nacts; i++) {
        const dw_action_decl *a = T->acts[i];
        ty la = operand_ty_for(n->kids[0], a, l), ra = operand_ty_for(n->kids[1], a, r);
        if (eq) {
            if (compat(la, ra)) continue;
            dw_tcheck_report(T, n->loc, "both sides of `==` / `!=` must have the same type under every action the policy's scope admits",
                   "`%s` compares incompatible types %s and %s under action %.*s::\"%s\"",
                   op_text(n->op), ty_name(T, la), ty_name(T, ra), PS(a->uid.type), dw_tcheck_esc(T, a->uid.id));
            return;
        }
        const dw_tnode *side = n->kids[0]->kind == DW_T_CONTEXT && known(la) && la.k != TY_LONG ? n->kids[0]
                             : n->kids[1]->kind == DW_T_CONTEXT && known(ra) && ra.k != TY_LONG ? n->kids[1] : NULL;
        if (!side) continue;
        dw_tcheck_report(T, side->loc, "`<`, `<=`, `>` and `>=` compare Longs only, under every action the policy's scope admits",
               "`%s` needs Long operands, but this operand has type %s under action %.*s::\"%s\"",
               op_text(n->op), ty_name(T, side == n->kids[0] ? la : ra), PS(a->uid.type), dw_tcheck_esc(T, a->uid.id));
        return;
    }
}

static void sc_cond(tc *T, const dw_tnode *n, int d)
{
    while (n && n->kind == DW_T_NOT) n = n->kids[0];
    if (!n || d > DW_TCHECK_MAX_DEPTH) return;
    switch (n->kind) {
    case DW_T_AND: {
        tvec v = dw_tcheck_conjuncts(T, n, d);
        for (size_t i = 0; i < v.n; i++) sc_cond(T, v.v[i], d + 1);
        return;
    }
    case DW_T_FORMERLY: case DW_T_PREVIOUS:
        window_cap(T, &n->win);
        need_varies(T, n->kids[0], n->kind == DW_T_FORMERLY ? "the body of `formerly`" : "the body of `previous`");
        sc_cond(T, n->kids[0], d + 1);
        return;
    case DW_T_SINCE:
        need_varies(T, n->kids[0], "the left operand of `since`");
        window_cap(T, &n->win);
        need_varies(T, n->kids[1], "the right operand of `since`");
        sc_cond(T, n->kids[0], d + 1);
        sc_cond(T, n->kids[1], d + 1);
        return;
    case DW_T_EXISTS: {
        check_binder(T, &n->binders[0]);
        need_varies(T, n->kids[0], "the body of `exists`");
        size_t mark = T->nsc;
        dw_tcheck_push(T, &n->binders[0]);
        sc_cond(T, n->kids[0], d + 1);
        T->nsc = mark;
        return;
    }
    case DW_T_TP: {
        ty v = var_ty(T, n->slot.name);
        if (known(v) && v.k != TY_TIMEPOINT)
            dw_tcheck_report(T, n->slot.loc, "declare it `(… : Timepoint)`", "variable `%.*s` in `tp(…)` must be declared `Timepoint`, not `%s`",
                   PS(n->slot.name), ty_name(T, v));
        return;
    }
    case DW_T_PRED: sc_pred(T, n, d); return;
    case DW_T_CMP: {
        ty l = sc_term(T, n->kids[0], d + 1), r = sc_term(T, n->kids[1], d + 1);
        if (n->op == DW_TC_EQ || n->op == DW_TC_NE) {
            if (!compat(l, r))
                dw_tcheck_report(T, n->loc, "both sides of `==` / `!=` must have the same type", "`%s` compares incompatible types %s and %s",
                       op_text(n->op), ty_name(T, l), ty_name(T, r));
            else cmp_per_action(T, n, l, r);
            return;
        }
        const dw_tnode *side[2] = { n->kids[0], n->kids[1] };
        ty st[2] = { l, r };
        bool bad = false;
        for (int i = 0; i < 2; i++)
            if (known(st[i]) && st[i].k != TY_LONG) {
                bad = true;
                dw_tcheck_report(T, side[i]->loc, "`<`, `<=`, `>` and `>=` compare Longs only in temporal bodies (aggregates are Long; decimals and timepoints are not ordered)",
                       "`%s` needs Long operands, but this operand has type %s", op_text(n->op), ty_name(T, st[i]));
            }
        if (!bad) cmp_per_action(T, n, l, r);
        return;
    }
    default: return;
    }
}

static void schema_leaf(tc *T, const dw_tnode *root)
{
    T->nsc = 0;
    tvec v = dw_tcheck_conjuncts(T, root, 0);
    for (size_t i = 0; i < v.n; i++) {
        /* a temporal operator's own operand check (below) names the same
         * subtree more precisely: report it once */
        const dw_tnode *c = v.v[i];
        while (c && c->kind == DW_T_NOT) c = c->kids[0];
        if (c && (c->kind == DW_T_FORMERLY || c->kind == DW_T_PREVIOUS || c->kind == DW_T_SINCE || c->kind == DW_T_EXISTS)) continue;
        need_varies(T, v.v[i], "this temporal condition");
    }
    sc_cond(T, root, 0);
    T->nsc = 0;
}

size_t dw_tcheck_schema(const dw_policy_set *ps, const dw_schema *actions, const dw_event_derivation *dv, dw_diags *diags)
{
    if (!ps) return 0;
    tc *T = calloc(1, sizeof *T);
    const dw_loc start = { .line = 1, .col = 1 };
    if (!T) { dw_error(diags, ps->src, start, "out of memory during temporal checks"); return 1; }
    dw_arena_init(&T->a, 1 << 14);
    T->src = ps->src;
    T->s = actions ? actions : dv ? dv->actions : NULL;
    T->ev = dv;
    T->maxw = dv && dv->es ? (int64_t)dv->es->max_window : (int64_t)DW_EVENT_DEFAULT_MAX_WINDOW;
    T->maxw_text = dv && dv->es && dv->es->max_window_text.len ? dv->es->max_window_text : (dw_str){ "24h", 3 };
    size_t nerr = 0;
    if (setjmp(T->oom)) {
        dw_error(diags, ps->src, start, "out of memory during temporal checks");
        nerr++;
    } else {
        for (size_t i = 0; i < ps->npolicies; i++) {
            const dw_policy *p = &ps->policies[i];
            T->pid = dw_tcheck_policy_id(T, p, i);
            admitted_actions(T, p);
            for (size_t c = 0; c < p->nclauses; c++) dw_tcheck_each_leaf(T, p->clauses[c].body, schema_leaf, 0);
            nerr += dw_tcheck_flush(T, diags);
        }
    }
    dw_arena_free(&T->a);
    free(T);
    return nerr;
}
