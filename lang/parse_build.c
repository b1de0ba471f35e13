/* parse_build.c - the tree the grammar's actions build (nodes, paths, calls, `has` paths, literals, scopes, policies and macros) and the checks Cedar makes on it after parsing: C helpers kept out of parser.y so the grammar reads as a grammar. */
#include "parse_build.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "strlit.h"

void *dw_parse_palloc(dw_parser *P, size_t n)
{
    void *p = dw_arena_alloc(P->A, n);
    if (!p) longjmp(P->oom, 1);
    return p;
}

dw_str dw_parse_pstr(dw_parser *P, const char *s, size_t n)
{
    char *p = dw_arena_memdup(P->A, s, n);
    if (!p) longjmp(P->oom, 1);
    return (dw_str){ p, n };
}

void *dw_parse_vpush(dw_parser *P, dw_pvec **vp, size_t esz)
{
    dw_pvec *v = *vp;
    if (!v) *vp = v = dw_parse_palloc(P, sizeof *v);
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 4;
        void *nv = dw_parse_palloc(P, cap * esz);
        if (v->n) memcpy(nv, v->v, v->n * esz);
        v->v = nv;
        v->cap = cap;
    }
    return (char *)v->v + esz * v->n++;
}

bool dw_parse_streq(dw_str s, const char *lit) { return s.len == strlen(lit) && memcmp(s.s, lit, s.len) == 0; }

dw_expr *dw_parse_mk(dw_parser *P, dw_expr_kind k, dw_loc loc)
{
    dw_expr *e = dw_expr_new(P->A, k, loc);
    if (!e) longjmp(P->oom, 1);
    return e;
}

/* Set depth; refuse expressions deeper than §19's limit (once per item). */
dw_expr *dw_parse_fin(dw_parser *P, dw_expr *e)
{
    e->depth = dw_expr_compute_depth(e);
    if (e->depth > DW_MAX_EXPR_DEPTH && !P->depth_reported) {
        P->depth_reported = true;
        ERRH(e->loc, "simplify the expression or split it with a macro", "expression nested too deeply");
    }
    return e;
}

dw_expr *dw_parse_bin(dw_parser *P, dw_expr_kind k, dw_expr *a, dw_expr *b, dw_loc loc)
{
    dw_expr *e = dw_parse_mk(P, k, loc);
    e->u.kids[0] = a;
    e->u.kids[1] = b;
    return dw_parse_fin(P, e);
}

/* A member that is used other than directly negated: 9223372036854775808 is too large. */
dw_expr *dw_parse_used(dw_parser *P, dw_expr *e)
{
    if (e && e == P->big_lit) {
        P->big_lit = NULL;
        ERRH(e->loc, "only `-9223372036854775808` (direct negation) may use this magnitude",
             "integer literal `9223372036854775808` is too large");
    }
    return e;
}

dw_str dw_parse_decode_str(dw_parser *P, dw_str raw, dw_loc loc)
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

bool dw_parse_check_ident(dw_parser *P, dw_str s, dw_loc loc)
{
    if (dw_parse_streq(s, "__cedar")) {
        ERR(loc, "the name `__cedar` is reserved and cannot be used");
        return false;
    }
    return true;
}

void dw_parse_reserved_err(dw_parser *P, dw_str s, dw_loc loc)
{
    ERRH(loc, "quote it instead, e.g. `e[\"if\"]`, `e has \"if\"` or `{\"if\": 1}`",
         "this identifier is reserved and cannot be used: %.*s", PS(s));
}

dw_ppath dw_parse_path1(dw_parser *P, dw_str s, dw_loc loc)
{
    dw_parse_check_ident(P, s, loc);
    return (dw_ppath){ dw_parse_pstr(P, s.s, s.len), 1, loc };
}

dw_ppath dw_parse_path_add(dw_parser *P, dw_ppath p, dw_str seg, dw_loc loc)
{
    dw_parse_check_ident(P, seg, loc);
    char *t = dw_parse_palloc(P, p.text.len + 2 + seg.len + 1);
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
    return dw_parse_streq(n, "decimal") || dw_parse_streq(n, "ip") || dw_parse_streq(n, "datetime") || dw_parse_streq(n, "duration");
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

dw_expr *dw_parse_mk_call(dw_parser *P, dw_ppath *p, dw_pvec *args, dw_loc loc)
{
    dw_expr *e = dw_parse_mk(P, DW_E_CALL, loc);
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
    return dw_parse_fin(P, e);
}

dw_expr *dw_parse_mk_method(dw_parser *P, dw_expr *recv, dw_pname name, dw_pvec *args, dw_loc loc)
{
    dw_expr *e = dw_parse_mk(P, DW_E_METHOD, loc);
    e->u.call.recv = recv;
    e->u.call.name = dw_parse_pstr(P, name.s.s, name.s.len);
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
    return dw_parse_fin(P, e);
}

dw_expr *dw_parse_mk_getattr(dw_parser *P, dw_expr *obj, dw_str attr, dw_loc loc)
{
    dw_expr *e = dw_parse_mk(P, DW_E_GETATTR, loc);
    e->u.attr.kids0 = obj;
    e->u.attr.attr = attr;
    return dw_parse_fin(P, e);
}

/* `e has a` is one HAS node; `e has a.b.c` (`e has a && e.a has b && e.a.b has c`, §3.6) one
 * HAS_PATH node holding e once and the names: a tree linear in the source, however the paths nest
 * (Cedar shares e the same way). */
dw_expr *dw_parse_mk_has(dw_parser *P, dw_expr *obj, dw_pvec *segs, dw_loc loc)
{
    dw_pname *s = segs->v;
    size_t n = segs->n;
    if (n > DW_MAX_EXPR_DEPTH) {   /* a path is read as an attribute chain that long */
        if (!P->depth_reported)
            ERRH(loc, "simplify the expression or split it with a macro", "expression nested too deeply");
        P->depth_reported = true;
        n = 1;
    }
    if (n == 1) {
        dw_expr *h = dw_parse_mk(P, DW_E_HAS, loc);
        h->u.attr.kids0 = obj;
        h->u.attr.attr = s[0].s;
        return dw_parse_fin(P, h);
    }
    dw_expr *h = dw_parse_mk(P, DW_E_HAS_PATH, loc);
    dw_str *attrs = dw_parse_palloc(P, n * sizeof *attrs);
    dw_loc *locs = dw_parse_palloc(P, n * sizeof *locs);
    for (size_t k = 0; k < n; k++) { attrs[k] = s[k].s; locs[k] = s[k].loc; }
    h->u.path.kids0 = obj;
    h->u.path.attrs = attrs;
    h->u.path.locs = locs;
    h->u.path.n = n;
    return dw_parse_fin(P, h);
}

dw_expr *dw_parse_mk_rel(dw_parser *P, int op, dw_expr *a, dw_expr *b, dw_loc loc)
{
    return dw_parse_bin(P, (dw_expr_kind)op, a, b, loc);
}

void dw_parse_chain_err(dw_parser *P, dw_loc start, dw_loc loc)
{
    /* one report per chain, however long */
    if (P->chain_off == start.off + 1) return;
    P->chain_off = start.off + 1;
    ERRH(loc, "use parentheses",
         "multiple relational operators (>, ==, in, etc.) must be used with parentheses to make ordering explicit");
}

dw_expr *dw_parse_mk_like(dw_parser *P, dw_expr *a, dw_str raw, dw_loc sloc, dw_loc loc)
{
    dw_expr *e = dw_parse_mk(P, DW_E_LIKE, loc);
    e->u.like.kids0 = a;
    e->u.like.raw = dw_parse_pstr(P, raw.s, raw.len);
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
    return dw_parse_fin(P, e);
}

dw_expr *dw_parse_mk_is(dw_parser *P, dw_expr *a, dw_ppath *t, dw_expr *in, dw_loc loc)
{
    dw_expr *e = dw_parse_mk(P, DW_E_IS, loc);
    e->u.is.kids0 = a;
    e->u.is.type = t->text;
    e->u.is.in = in;
    return dw_parse_fin(P, e);
}

dw_expr *dw_parse_mk_var(dw_parser *P, dw_ppath *p, dw_loc loc)
{
    dw_expr *e = dw_parse_mk(P, DW_E_VAR, loc);
    static const char *names[] = { "principal", "action", "resource", "context" };
    if (p->nsegs == 1)
        for (int i = 0; i < 4; i++)
            if (dw_parse_streq(p->text, names[i])) { e->u.var = (dw_var)i; return e; }
    if (p->nsegs == 1)
        ERRH(loc, "the variables are `principal`, `action`, `resource` and `context`; did you mean to quote it as a string?",
             "`%.*s` is not a valid variable", PS(p->text));
    else
        ERRH(loc, "an entity reference needs a quoted id, e.g. `Ns::Type::\"id\"`",
             "`%.*s` is not a valid expression", PS(p->text));
    return e;
}

dw_expr *dw_parse_mk_slot(dw_parser *P, dw_str name, dw_loc loc)
{
    dw_expr *e = dw_parse_mk(P, DW_E_SLOT, loc);
    e->u.name = dw_parse_pstr(P, name.s, name.len);
    if (dw_parse_streq(name, "principal") || dw_parse_streq(name, "resource")) {
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

dw_expr *dw_parse_mk_unary(dw_parser *P, int n, bool neg, dw_expr *m, dw_loc oploc, dw_loc loc)
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
        dw_parse_used(P, m);
    }
    dw_expr *e = m;
    for (int i = 0; i < n; i++) {
        dw_expr *u = dw_parse_mk(P, neg ? DW_E_NEG : DW_E_NOT, loc);
        u->u.kids[0] = e;
        e = dw_parse_fin(P, u);
    }
    return e;
}

dw_euid_lit dw_parse_mk_euid(dw_parser *P, dw_ppath *p, dw_str raw, dw_loc sloc, dw_loc loc)
{
    dw_euid_lit u;
    u.type = p->text;
    u.id = dw_parse_decode_str(P, raw, sloc);
    u.loc = loc;
    return u;
}

void dw_parse_item_reset(dw_parser *P) { P->depth_reported = false; P->template_slot = false; }
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
    if (!dw_parse_streq(c->slot, want)) {
        char hint[64];
        snprintf(hint, sizeof hint, "did you mean `?%s`?", want);
        if (dw_parse_streq(c->slot, "principal") || dw_parse_streq(c->slot, "resource"))
            ERRH(l, hint, "`?%.*s` cannot be used in the %s constraint", PS(c->slot), want);
        else
            ERRH(l, hint, "`?%.*s` is not a recognized template slot", PS(c->slot));
    } else {
        P->template_slot = true;
    }
}

static bool is_action_type(dw_str t)
{
    return dw_parse_streq(t, "Action") || (t.len > 8 && memcmp(t.s + t.len - 8, "::Action", 8) == 0);
}

static void check_action_uid(dw_parser *P, const dw_euid_lit *u)
{
    if (is_action_type(u->type)) return;
    ERRH(u->loc, "action entities have type `Action` or `Namespace::Action`",
         "expected an entity uid with type `Action` but got `%.*s::\"%.*s\"`", PS(u->type), PS(u->id));
}

void dw_parse_add_policy(dw_parser *P, dw_pvec *annots, dw_str eff, dw_loc eff_loc,
                         dw_pvec *scope, dw_pvec *clauses, dw_loc loc)
{
    dw_policy *p = dw_parse_vpush(P, &P->policies, sizeof *p);
    p->loc = loc;
    p->effect_loc = eff_loc;
    if (dw_parse_streq(eff, "permit")) p->effect = DW_PERMIT;
    else if (dw_parse_streq(eff, "forbid")) p->effect = DW_FORBID;
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
            if (dw_parse_streq(s->var, scope_var_names[k])) var = k;
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

void dw_parse_add_macro(dw_parser *P, bool cedar, dw_str name, dw_loc name_loc, dw_pvec *params,
                        dw_expr *body, dw_str tbody, dw_loc tloc, dw_loc loc)
{
    dw_macro_def *m = dw_parse_vpush(P, &P->macros, sizeof *m);
    m->kind = cedar ? DW_MACRO_CEDAR : DW_MACRO_TEMPORAL;
    m->name = dw_parse_pstr(P, name.s, name.len);
    m->name_loc = name_loc;
    m->loc = loc;
    for (size_t i = 0; i < sizeof reserved_macro_names / sizeof *reserved_macro_names; i++)
        if (dw_parse_streq(name, reserved_macro_names[i]))
            ERRH(name_loc, "choose another name", "`%.*s` is a reserved name and cannot be defined as a macro", PS(name));
    if (params) {
        dw_pname *pn = params->v;
        m->params = dw_parse_palloc(P, params->n * sizeof *m->params);
        m->nparams = params->n;
        for (size_t i = 0; i < params->n; i++) {
            m->params[i] = pn[i].s;
            for (size_t j = 0; j < i; j++)
                if (dw_parse_streq(pn[i].s, m->params[j].s) && pn[i].s.len == m->params[j].len)
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
        m->body_text = dw_parse_pstr(P, t + b, e > b ? e - b : 0);
    } else {
        m->temporal_body = dw_parse_temporal_leaf(P, tbody, tloc, DW_TMODE_MACRO);
        m->body_off = (uint32_t)(tbody.s - P->src->text);
        m->body_text = dw_parse_pstr(P, tbody.s, tbody.len);
    }
    for (size_t i = 0; i + 1 < P->macros->n; i++) {
        dw_macro_def *o = (dw_macro_def *)P->macros->v + i;
        if (o->name.len == m->name.len && memcmp(o->name.s, m->name.s, m->name.len) == 0) {
            ERR(name_loc, "duplicate macro definition `%.*s`", PS(name));
            break;
        }
    }
}

dw_temporal *dw_parse_temporal_leaf(dw_parser *P, dw_str body, dw_loc loc, dw_tmode mode)
{
    uint32_t off = (uint32_t)(body.s - P->src->text);
    dw_temporal *t = dw_temporal_parse(P->A, P->src, P->diags, off, (uint32_t)body.len, loc, mode);
    if (!t) longjmp(P->oom, 1);
    return t;
}
