/* tlower.c - temporal leaves: temporal AST (lang/tast.h, after macro
 * expansion) -> the flat tables the VM evaluates (vm/temporal.h).
 * Also injects pins (dogwood.md §8.9), checks windows (§9.7, Q8) and
 * computes each leaf's reach (§7.3) and identity (D8). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "emit.h"
#include "macros.h"
#include "../lang/eventschema.h"
#include "../lang/tast.h"

typedef struct lowering {
    compiler *c;
    dw_str vars[DW_TEMPORAL_MAX_VARS];
    uint16_t nvars;
    bool failed;
} lowering;

static void lerr(lowering *L, dw_loc loc, const char *hint, const char *fmt, const char *arg)
{
    L->failed = true;
    L->c->failed = true;
    dw_diag_add(L->c->diags, DW_SEV_ERROR, L->c->ps->src, loc, hint, fmt, arg ? arg : "");
}

static uint32_t push(lowering *L, vec *v, const void *elem, size_t size)
{
    if (dw_vec_push(v, elem, size)) { dw_compile_oom(L->c); L->failed = true; return 0; }
    return v->n - 1;
}

static uint16_t slot(lowering *L, dw_str name, dw_loc loc)
{
    for (uint16_t i = 0; i < L->nvars; i++)
        if (L->vars[i].len == name.len && memcmp(L->vars[i].s, name.s, name.len) == 0) return i;
    if (L->nvars == DW_TEMPORAL_MAX_VARS) {
        lerr(L, loc, "split the rule into several temporal clauses", "too many variables in one temporal condition (limit 64)%s", NULL);
        return 0;
    }
    L->vars[L->nvars] = name;
    return L->nvars++;
}

static uint32_t str(lowering *L, dw_str s) { return dw_emit_str(L->c, s.s, s.len); }

static int64_t window(lowering *L, const dw_twindow *w)
{
    if (w->param.s) {
        lerr(L, w->loc, "window parameters exist only inside `def temporal` bodies", "unexpanded window parameter `?%s`", w->param.s);
        return 0;
    }
    if (w->secs < 0) { lerr(L, w->loc, "a negative window can never contain an event (dogwood.md §20 Q8)", "window must not be negative%s", NULL); return 0; }
    int64_t cap = L->c->opt && L->c->opt->max_window > 0 ? L->c->opt->max_window : 86400;
    if (w->secs > cap) {
        char buf[160];
        snprintf(buf, sizeof buf, "temporal window `%llds` exceeds the maximum allowed window `%llds`",
                 (long long)w->secs, (long long)cap);
        lerr(L, w->loc, "the event schema's max_window caps every window (dogwood.md §9.7)", "%s", buf);
    }
    return w->secs;
}

static uint32_t term(lowering *L, const dw_tnode *n);
static uint32_t formula(lowering *L, const dw_tnode *n, int64_t *reach);

static uint32_t term_of(lowering *L, dw_tt_kind k, uint32_t a, uint32_t cnt)
{
    dw_tterm t = { (uint8_t)k, a, cnt };
    return push(L, &L->c->tterms, &t, sizeof t);
}

static uint32_t aggregate(lowering *L, const dw_tnode *n)
{
    int64_t reach = 0;
    dw_tagg g = { 0 };
    g.first_var = L->c->aggvars.n;
    g.nvars = (uint32_t)n->nbinders;
    for (size_t i = 0; i < n->nbinders; i++) {
        uint16_t v = slot(L, n->binders[i].slot.name, n->binders[i].loc);
        push(L, &L->c->aggvars, &v, sizeof v);
    }
    if (n->kind == DW_T_SUM) g.sum_var = slot(L, n->slot.name, n->slot.loc);
    g.body = formula(L, n->kids[0], &reach);
    return push(L, &L->c->taggs, &g, sizeof g);
}

static uint32_t term(lowering *L, const dw_tnode *n)
{
    dw_value v;
    switch (n->kind) {
    case DW_T_LIT_LONG: return term_of(L, DW_TT_CONST, dw_emit_const(L->c, dw_long(n->i)), 0);
    case DW_T_LIT_BOOL: return term_of(L, DW_TT_CONST, dw_emit_const(L->c, dw_bool(n->b)), 0);
    case DW_T_LIT_STRING:
        if (!dw_make_string(&L->c->prog->arena, n->str.s, n->str.len, &v)) { dw_compile_oom(L->c); return 0; }
        return term_of(L, DW_TT_CONST, dw_emit_const(L->c, v), 0);
    case DW_T_LIT_DECIMAL: {
        int64_t d;
        if (!dw_decimal_parse(n->str.s, n->str.len, &d)) {
            lerr(L, n->loc, "a decimal has 1 to 4 fractional digits, e.g. decimal(\"1.5\")", "invalid decimal literal \"%s\"", n->str.s);
            return 0;
        }
        v.kind = DW_V_DECIMAL;
        v.n = 0;
        v.u.i = d;
        return term_of(L, DW_TT_CONST, dw_emit_const(L->c, v), 0);
    }
    case DW_T_LIT_ENTITY: {
        dw_euid_lit e = { n->type, n->str, n->loc };
        return term_of(L, DW_TT_CONST, dw_emit_const(L->c, dw_emit_uid(L->c, &e)), 0);
    }
    case DW_T_ARRAY: {
        uint32_t *idx = n->nargs ? calloc(n->nargs, sizeof *idx) : NULL;
        for (size_t i = 0; i < n->nargs; i++) { uint32_t t = term(L, n->args[i]); if (idx) idx[i] = t; }
        uint32_t first = L->c->targs.n;
        for (size_t i = 0; i < n->nargs; i++) push(L, &L->c->targs, &idx[i], sizeof *idx);
        free(idx);
        return term_of(L, DW_TT_ARRAY, first, (uint32_t)n->nargs);
    }
    case DW_T_CONTEXT: return term_of(L, DW_TT_CONTEXT, str(L, n->path), 0);
    case DW_T_PRINCIPAL: return term_of(L, DW_TT_PRINCIPAL, str(L, n->path), 0);
    case DW_T_RESOURCE: return term_of(L, DW_TT_RESOURCE, str(L, n->path), 0);
    case DW_T_WILDCARD: return term_of(L, DW_TT_WILD, 0, 0);
    case DW_T_VAR: case DW_T_BINDER: return term_of(L, DW_TT_VAR, slot(L, n->name, n->loc), 0);
    case DW_T_COUNT: return term_of(L, DW_TT_COUNT, aggregate(L, n), 0);
    case DW_T_SUM: return term_of(L, DW_TT_SUM, aggregate(L, n), 0);
    case DW_T_PARAM:
        lerr(L, n->loc, "macro parameters exist only inside macro bodies", "unexpanded macro parameter `?%s`", n->name.s);
        return 0;
    case DW_T_CALL:
        lerr(L, n->loc, NULL, "unexpanded macro call `%s`", n->name.s);
        return 0;
    default:
        lerr(L, n->loc, NULL, "this is a condition, not a term%s", NULL);
        return 0;
    }
}

static uint32_t tf(lowering *L, const dw_tf *f) { return push(L, &L->c->tfs, f, sizeof *f); }

/* The pins of the predicate's event kind become extra field patterns (§8.9). */
static void inject_pins(lowering *L, const dw_tnode *n)
{
    const dw_event_derivation *dv = L->c->opt ? L->c->opt->events : NULL;
    if (!dv) return;
    const dw_derived_event *ev = dw_event_find(dv, n->type.s, n->type.len, n->str.s, n->str.len, n->ekind.s, n->ekind.len);
    if (!ev) return;
    for (size_t k = 0; k < ev->npins; k++) {
        const dw_event_pin *pin = &ev->pins[k];
        dw_tt_kind tk = pin->ref->root == DW_PIN_PRINCIPAL ? DW_TT_PRINCIPAL : pin->ref->root == DW_PIN_RESOURCE ? DW_TT_RESOURCE : DW_TT_CONTEXT;
        dw_tpattern p = { str(L, pin->path), term_of(L, tk, str(L, pin->ref->path), 0) };
        push(L, &L->c->tpatterns, &p, sizeof p);
    }
}

static uint32_t formula(lowering *L, const dw_tnode *n, int64_t *reach)
{
    dw_tf f;
    memset(&f, 0, sizeof f);
    int64_t ra = 0, rb = 0;
    *reach = 0;
    switch (n->kind) {
    case DW_T_PRED: {
        f.kind = DW_TF_PRED;
        f.type_str = str(L, n->type);
        f.id_str = str(L, n->str);
        f.kind_str = str(L, n->ekind);
        /* terms first (they may push patterns of nested aggregates), then this
         * predicate's patterns as one contiguous run */
        uint32_t *terms = n->nfields ? calloc(n->nfields, sizeof *terms) : NULL;
        for (size_t i = 0; i < n->nfields; i++) { uint32_t t = term(L, n->fields[i].term); if (terms) terms[i] = t; }
        f.first = L->c->tpatterns.n;
        for (size_t i = 0; i < n->nfields; i++) {
            dw_tpattern p = { str(L, n->fields[i].path), terms ? terms[i] : 0 };
            push(L, &L->c->tpatterns, &p, sizeof p);
        }
        free(terms);
        inject_pins(L, n);
        f.n = L->c->tpatterns.n - f.first;
        return tf(L, &f);
    }
    case DW_T_AND:
        f.kind = DW_TF_AND;
        f.a = formula(L, n->kids[0], &ra);
        f.b = formula(L, n->kids[1], &rb);
        *reach = ra > rb ? ra : rb;
        return tf(L, &f);
    case DW_T_NOT:
        f.kind = DW_TF_NOT;
        f.a = formula(L, n->kids[0], reach);
        return tf(L, &f);
    case DW_T_FORMERLY: case DW_T_PREVIOUS:
        f.kind = n->kind == DW_T_FORMERLY ? DW_TF_FORMERLY : DW_TF_PREVIOUS;
        f.window = window(L, &n->win);
        f.a = formula(L, n->kids[0], &ra);
        *reach = f.window + ra;
        return tf(L, &f);
    case DW_T_SINCE:
        f.kind = DW_TF_SINCE;
        f.window = window(L, &n->win);
        f.a = formula(L, n->kids[0], &ra);
        f.b = formula(L, n->kids[1], &rb);
        *reach = f.window + (ra > rb ? ra : rb);
        return tf(L, &f);
    case DW_T_EXISTS:
        f.kind = DW_TF_EXISTS;
        f.var = slot(L, n->binders[0].slot.name, n->binders[0].loc);
        f.a = formula(L, n->kids[0], reach);
        return tf(L, &f);
    case DW_T_TP:
        f.kind = DW_TF_TP;
        f.var = slot(L, n->slot.name, n->slot.loc);
        return tf(L, &f);
    case DW_T_CMP: {
        static const uint8_t ops[] = { [DW_TC_EQ] = DW_TC_OP_EQ, [DW_TC_NE] = DW_TC_OP_NE, [DW_TC_LT] = DW_TC_OP_LT,
                                       [DW_TC_LE] = DW_TC_OP_LE, [DW_TC_GT] = DW_TC_OP_GT, [DW_TC_GE] = DW_TC_OP_GE };
        f.kind = DW_TF_CMP;
        f.op = ops[n->op];
        f.a = term(L, n->kids[0]);
        f.b = term(L, n->kids[1]);
        return tf(L, &f);
    }
    case DW_T_CALL:
        lerr(L, n->loc, NULL, "unexpanded macro call `%s`", n->name.s);
        return 0;
    case DW_T_PARAM:
        lerr(L, n->loc, "macro parameters exist only inside macro bodies", "unexpanded macro parameter `?%s`", n->name.s);
        return 0;
    case DW_T_REFINE:
        lerr(L, n->loc, NULL, "refinement outside a macro body%s", NULL);
        return 0;
    default:
        lerr(L, n->loc, "compare terms with ==, !=, <, <=, > or >=", "a term is not a temporal condition%s", NULL);
        return 0;
    }
}

/* Aggregates' bodies are lowered from term(), which has no reach channel:
 * compute the reach of a whole leaf from the AST instead. */
static int64_t ast_reach(const dw_tnode *n, int depth)
{
    if (!n || depth > 300) return 0;
    int64_t r = 0;
    for (int k = 0; k < 2; k++) { int64_t x = ast_reach(n->kids[k], depth + 1); if (x > r) r = x; }
    for (size_t i = 0; i < n->nargs; i++) { int64_t x = ast_reach(n->args[i], depth + 1); if (x > r) r = x; }
    for (size_t i = 0; i < n->nfields; i++) { int64_t x = ast_reach(n->fields[i].term, depth + 1); if (x > r) r = x; }
    if (n->kind == DW_T_FORMERLY || n->kind == DW_T_PREVIOUS || n->kind == DW_T_SINCE)
        r += n->win.secs > 0 ? n->win.secs : 0;
    return r;
}

uint32_t dw_lower_temporal(compiler *c, const dw_temporal *t, uint32_t policy)
{
    lowering L = { .c = c };
    if (!t || !t->root) {
        dw_compile_error(c, t ? t->loc : (dw_loc){ 1, 1, 0, 0 }, NULL, "temporal condition did not parse");
        return UINT32_MAX;
    }
    if (t->is_aggregate) {
        dw_compile_error(c, t->loc, "compare it: `(count ...) > 3`, or bind it with exists", "an aggregate is not a condition");
        return UINT32_MAX;
    }
    int64_t unused_reach = 0;   /* formula() cannot see into aggregates: ast_reach does */
    dw_tleaf leaf = { 0 };
    leaf.root = formula(&L, t->root, &unused_reach);
    if (L.failed) return UINT32_MAX;
    leaf.policy = policy;
    leaf.nvars = L.nvars;
    leaf.reach = ast_reach(t->root, 0);
    leaf.identity = dw_temporal_leaf_identity(t);
    /* the slots' source names, for disasm and explain (not in artifacts) */
    uint32_t first = c->var_names.n;
    push(&L, &c->var_first, &first, sizeof first);
    for (uint16_t i = 0; i < L.nvars; i++) {
        dw_str n = { dw_arena_memdup(&c->prog->arena, L.vars[i].s, L.vars[i].len), L.vars[i].len };
        if (!n.s) dw_compile_oom(c);
        push(&L, &c->var_names, &n, sizeof n);
    }
    return push(&L, &c->leaves, &leaf, sizeof leaf);
}
