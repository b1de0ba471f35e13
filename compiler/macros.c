/* macros.c - macro library merge and macro expansion (dogwood.md §10).
 * Expansion works on syntax trees: arguments are expanded first, then the
 * macro body is cloned with every parameter replaced by (a clone of) its
 * argument, so grouping is kept and no text is re-parsed.  Canonical text
 * and stable leaf identities (§14.5, §20 D8) follow at the end of this file. */
#include "macros.h"
#include <assert.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "../lang/strlit.h"

/* Parameter kinds, from their uses in the body (§10.2); a bit set because a
 * parameter may be used several times. */
enum { PK_WINDOW = 1, PK_COND = 2, PK_BINDER = 4, PK_TERM = 8, PK_REFINED = 16 };

typedef struct mdef {
    const dw_macro_def *m;
    const dw_source *src;       /* source the definition was parsed from */
    bool from_library;
    bool ok;                    /* definition passed its checks */
    unsigned *kinds;            /* per parameter */
} mdef;

/* Position of a temporal node, which decides which macro kinds may be called there (§10.3). */
typedef enum tpos { TP_COND, TP_CMP, TP_TERM, TP_ARG } tpos;

typedef struct X {
    dw_arena *A;                /* the policy set's arena */
    const dw_source *src;       /* the policy source */
    dw_diags *diags;
    mdef *defs; size_t ndefs;
    size_t nodes;               /* nodes created for the current policy */
    bool in_policy;             /* the node budget applies (abort_policy is set) */
    jmp_buf oom;                /* OOM: abandon the whole expansion */
    jmp_buf abort_policy;       /* a limit was hit: skip the rest of this policy */
} X;

/* ---------------------------------------------------------------- helpers */

static bool seq(dw_str a, dw_str b) { return a.len == b.len && memcmp(a.s, b.s, a.len) == 0; }
static bool seqz(dw_str a, const char *z) { return a.len == strlen(z) && memcmp(a.s, z, a.len) == 0; }
#define PS(v_) (int)(v_).len, (v_).s

static void *xalloc(X *x, size_t n)
{
    void *p = dw_arena_alloc(x->A, n ? n : 1);
    if (!p) longjmp(x->oom, 1);
    return p;
}

static dw_str xstr(X *x, const char *s, size_t n)
{
    char *p = dw_arena_memdup(x->A, s, n);
    if (!p) longjmp(x->oom, 1);
    return (dw_str){ p, n };
}

static void count_node(X *x, dw_loc loc)
{
    if (x->in_policy && ++x->nodes == DW_MACRO_MAX_NODES + 1) {
        dw_error_hint(x->diags, x->src, loc, "split the policy, or pass smaller arguments to macros that repeat a parameter",
                      "macro expansion of this policy is too large (more than %u syntax nodes)", DW_MACRO_MAX_NODES);
        longjmp(x->abort_policy, 1);
    }
}

static bool is_ext_ctor(dw_str n)
{
    return seqz(n, "decimal") || seqz(n, "ip") || seqz(n, "datetime") || seqz(n, "duration");
}

static bool is_macro_call(const dw_expr *e)
{
    return e->kind == DW_E_CALL && e->u.call.nsegs == 1 && !is_ext_ctor(e->u.call.name);
}

static const mdef *lookup(const X *x, dw_str name)
{
    for (size_t i = 0; i < x->ndefs; i++)
        if (seq(x->defs[i].m->name, name)) return &x->defs[i];
    return NULL;
}

static int param_index(const dw_macro_def *m, dw_str name)
{
    for (size_t i = 0; i < m->nparams; i++)
        if (seq(m->params[i], name)) return (int)i;
    return -1;
}

/* A note at the definition: only for the policy file's own macros, whose
 * text the reader has; library macros get a note without a location. */
static void def_note(X *x, const mdef *d)
{
    if (d->from_library)
        dw_diag_add(x->diags, DW_SEV_NOTE, NULL, (dw_loc){0}, NULL,
                    "`%.*s` is defined by the macro library", PS(d->m->name));
    else
        dw_diag_add(x->diags, DW_SEV_NOTE, d->src, d->m->name_loc, NULL,
                    "`%.*s` is defined here", PS(d->m->name));
}

/* ------------------------------------------------------- child iteration */

/* The i-th child slot of a temporal node, left to right, and its position. */
static dw_tnode **tkid(dw_tnode *n, size_t i, tpos *pos)
{
    *pos = TP_COND;
    switch (n->kind) {
    case DW_T_AND: case DW_T_SINCE: return i < 2 ? &n->kids[i] : NULL;
    case DW_T_NOT: case DW_T_FORMERLY: case DW_T_PREVIOUS: case DW_T_EXISTS:
    case DW_T_COUNT: case DW_T_SUM:
        return i < 1 ? &n->kids[0] : NULL;
    case DW_T_CMP: *pos = TP_CMP; return i < 2 ? &n->kids[i] : NULL;
    case DW_T_REFINE:
        if (i == 0) return &n->kids[0];
        i--;
        /* fall through */
    case DW_T_PRED: *pos = TP_TERM; return i < n->nfields ? &n->fields[i].term : NULL;
    case DW_T_ARRAY: *pos = TP_TERM; return i < n->nargs ? &n->args[i] : NULL;
    case DW_T_CALL: *pos = TP_ARG; return i < n->nargs ? &n->args[i] : NULL;
    default: return NULL;
    }
}

/* ------------------------------------------------------------- cloning */

static dw_tnode *tclone(X *x, const dw_tnode *n)
{
    if (!n) return NULL;
    dw_tnode *c = xalloc(x, sizeof *c);
    count_node(x, n->loc);
    *c = *n;
    if (n->nfields) {
        c->fields = xalloc(x, n->nfields * sizeof *c->fields);
        memcpy(c->fields, n->fields, n->nfields * sizeof *c->fields);
    }
    if (n->nargs) {
        c->args = xalloc(x, n->nargs * sizeof *c->args);
        memcpy(c->args, n->args, n->nargs * sizeof *c->args);
    }
    if (n->nbinders) {
        c->binders = xalloc(x, n->nbinders * sizeof *c->binders);
        memcpy(c->binders, n->binders, n->nbinders * sizeof *c->binders);
    }
    tpos pos;
    dw_tnode **k;
    for (size_t i = 0; (k = tkid(c, i, &pos)); i++) *k = tclone(x, *k);
    return c;
}

static dw_temporal *temporal_clone(X *x, const dw_temporal *t)
{
    dw_temporal *c = xalloc(x, sizeof *c);
    *c = *t;
    c->root = tclone(x, t->root);
    return c;
}

/* Give every temporal leaf of a freshly cloned Cedar tree its own body
 * (dw_expr_clone shares them, but a leaf duplicated by `?x && ?x` must be a
 * distinct leaf). */
static void own_leaves(X *x, dw_expr *e)
{
    count_node(x, e->loc);
    if (e->kind == DW_E_TEMPORAL && e->u.temporal) e->u.temporal = temporal_clone(x, e->u.temporal);
    dw_expr **k;
    for (size_t i = 0; (k = dw_expr_kid(e, i)); i++)
        if (*k) own_leaves(x, *k);
}

static dw_expr *cclone(X *x, const dw_expr *e)
{
    if (!e) return NULL;
    dw_expr *c = dw_expr_clone(x->A, e);
    if (!c) longjmp(x->oom, 1);
    own_leaves(x, c);
    return c;
}

/* ------------------------------------------------- definition checks */

static void mark_param(X *x, mdef *d, dw_str name, dw_loc loc, unsigned kind)
{
    int p = param_index(d->m, name);
    if (p < 0) {
        char hint[160];
        snprintf(hint, sizeof hint, "add `?%.*s` to the parameter list of `%.*s`", PS(name), PS(d->m->name));
        dw_error_hint(x->diags, d->src, loc, hint, "macro parameter `?%.*s` is not declared by macro `%.*s`",
                      PS(name), PS(d->m->name));
        d->ok = false;
        return;
    }
    d->kinds[p] |= kind;
}

static void mark_slot(X *x, mdef *d, const dw_tslot *s)
{
    if (s->sigil == '?') mark_param(x, d, s->name, s->loc, PK_BINDER);
}

static void check_tbody(X *x, mdef *d, const dw_tnode *n, tpos pos)
{
    if (!n) return;
    switch (n->kind) {
    case DW_T_CALL:
        dw_error_hint(x->diags, d->src, n->loc, "nest macros through call-site arguments instead",
                      "macro-in-macro is not supported (call to `%.*s`)", PS(n->name));
        d->ok = false;
        return;
    case DW_T_PARAM:
        mark_param(x, d, n->name, n->loc, pos == TP_COND ? PK_COND : PK_TERM);
        return;
    case DW_T_REFINE:
        if (n->kids[0] && n->kids[0]->kind == DW_T_PARAM)
            mark_param(x, d, n->kids[0]->name, n->kids[0]->loc, PK_COND | PK_REFINED);
        for (size_t i = 0; i < n->nfields; i++) check_tbody(x, d, n->fields[i].term, TP_TERM);
        return;
    case DW_T_SINCE: case DW_T_FORMERLY: case DW_T_PREVIOUS:
        if (n->win.param.s) mark_param(x, d, n->win.param, n->win.loc, PK_WINDOW);
        break;
    case DW_T_TP: mark_slot(x, d, &n->slot); break;
    case DW_T_SUM: mark_slot(x, d, &n->slot); break;
    default: break;
    }
    for (size_t i = 0; i < n->nbinders; i++) mark_slot(x, d, &n->binders[i].slot);
    tpos kp;
    dw_tnode **k;
    for (size_t i = 0; (k = tkid((dw_tnode *)n, i, &kp)); i++) check_tbody(x, d, *k, kp);
}

static void check_cbody(X *x, mdef *d, const dw_expr *e)
{
    if (!e) return;
    if (e->kind == DW_E_SLOT) mark_param(x, d, e->u.name, e->loc, PK_TERM);
    dw_expr **k;
    for (size_t i = 0; (k = dw_expr_kid((dw_expr *)e, i)); i++) check_cbody(x, d, *k);
}

static const char *kind_name(unsigned k)
{
    return k & PK_WINDOW ? "a window" : k & PK_COND ? "a condition" : k & PK_BINDER ? "a binder" : "a term";
}

static void check_def(X *x, mdef *d)
{
    const dw_macro_def *m = d->m;
    d->kinds = xalloc(x, (m->nparams + 1) * sizeof *d->kinds);
    d->ok = true;
    if (m->kind == DW_MACRO_CEDAR) {
        if (!m->cedar_body) { d->ok = false; return; }
        check_cbody(x, d, m->cedar_body);
        return;
    }
    if (!m->temporal_body || !m->temporal_body->root) { d->ok = false; return; }
    check_tbody(x, d, m->temporal_body->root, TP_COND);
    /* one kind per parameter; a binder may also be read as a term (§10.2) */
    static const unsigned clash[][2] = {
        { PK_WINDOW, PK_COND }, { PK_WINDOW, PK_BINDER }, { PK_WINDOW, PK_TERM },
        { PK_COND, PK_BINDER }, { PK_COND, PK_TERM },
    };
    for (size_t i = 0; i < m->nparams; i++)
        for (size_t c = 0; c < sizeof clash / sizeof *clash; c++)
            if ((d->kinds[i] & clash[c][0]) && (d->kinds[i] & clash[c][1])) {
                dw_error_hint(x->diags, d->src, m->name_loc, "use a separate parameter for each role",
                              "parameter `?%.*s` of macro `%.*s` is used both as %s and as %s",
                              PS(m->params[i]), PS(m->name), kind_name(clash[c][0]), kind_name(clash[c][1]));
                d->ok = false;
                break;
            }
}

/* ------------------------------------------------------- diagnostics */


static bool similar(dw_str want, dw_str have)
{
    size_t lim = want.len / 3 > 2 ? want.len / 3 : 2;
    if (dw_edit_distance(want.s, want.len, have.s, have.len) <= lim) return true;
    /* `count` for `count_within`: a shared prefix of 4+ characters */
    size_t p = 0;
    while (p < want.len && p < have.len && want.s[p] == have.s[p]) p++;
    return p >= 4 && (p == want.len || p == have.len);
}

static void unknown_macro(X *x, dw_str name, dw_loc loc)
{
    char hint[512];
    size_t used = 0, found = 0;
    hint[0] = 0;
    for (size_t i = 0; i < x->ndefs; i++) {
        dw_str h = x->defs[i].m->name;
        if (!similar(name, h)) continue;
        if (used + h.len + 8 >= sizeof hint) break;
        used += (size_t)snprintf(hint + used, sizeof hint - used, "%s`%.*s`", found ? ", " : "", PS(h));
        found++;
    }
    char full[600];
    if (found == 1) snprintf(full, sizeof full, "did you mean %s?", hint);
    else if (found) snprintf(full, sizeof full, "similar macros: %s", hint);
    dw_error_hint(x->diags, x->src, loc, found ? full : NULL,
                  "unknown function or macro `%.*s` (not a Cedar built-in and not a declared macro)", PS(name));
}

/* --------------------------------------------------- Cedar expansion */

typedef struct csub {
    const mdef *d;
    dw_expr **args;
    dw_loc loc;                 /* call site */
} csub;

static dw_expr *csubst(X *x, const csub *s, const dw_expr *b)
{
    if (b->kind == DW_E_SLOT) {
        int p = param_index(s->d->m, b->u.name);
        if (p >= 0) return cclone(x, s->args[p]);
    }
    dw_expr *c = xalloc(x, sizeof *c);
    count_node(x, s->loc);
    *c = *b;
    c->loc = s->loc;
    /* fresh arrays for variable-size children (never share the definition's) */
    switch (b->kind) {
    case DW_E_SET:
        c->u.list.v = xalloc(x, b->u.list.n * sizeof *c->u.list.v);
        memcpy(c->u.list.v, b->u.list.v, b->u.list.n * sizeof *c->u.list.v);
        break;
    case DW_E_RECORD:
        c->u.rec.v = xalloc(x, b->u.rec.n * sizeof *c->u.rec.v);
        memcpy(c->u.rec.v, b->u.rec.v, b->u.rec.n * sizeof *c->u.rec.v);
        for (size_t i = 0; i < b->u.rec.n; i++) c->u.rec.v[i].key_loc = s->loc;
        break;
    case DW_E_METHOD: case DW_E_CALL:
        c->u.call.args = xalloc(x, b->u.call.nargs * sizeof *c->u.call.args);
        memcpy(c->u.call.args, b->u.call.args, b->u.call.nargs * sizeof *c->u.call.args);
        c->u.call.name_loc = s->loc;
        break;
    case DW_E_ENTITY: c->u.euid.loc = s->loc; break;
    case DW_E_HAS_PATH: {
        dw_loc *locs = xalloc(x, b->u.path.n * sizeof *locs);
        for (size_t i = 0; i < b->u.path.n; i++) locs[i] = s->loc;
        c->u.path.locs = locs;
        break;
    }
    default: break;
    }
    dw_expr **k;
    for (size_t i = 0; (k = dw_expr_kid(c, i)); i++)
        if (*k) *k = csubst(x, s, *k);
    c->depth = dw_expr_compute_depth(c);
    return c;
}

static dw_temporal *texpand_leaf(X *x, dw_temporal *t);

/* Expand every macro call in e; returns the (possibly replaced) node. */
static dw_expr *cexpand(X *x, dw_expr *e)
{
    if (!e) return NULL;
    if (e->kind == DW_E_TEMPORAL) {
        if (e->u.temporal) texpand_leaf(x, e->u.temporal);
        return e;
    }
    dw_expr **k;
    for (size_t i = 0; (k = dw_expr_kid(e, i)); i++)
        if (*k) *k = cexpand(x, *k);
    e->depth = dw_expr_compute_depth(e);
    if (!is_macro_call(e)) goto done;

    dw_str name = e->u.call.name;
    const mdef *d = lookup(x, name);
    if (!d) { unknown_macro(x, name, e->u.call.name_loc); goto done; }
    if (d->m->kind != DW_MACRO_CEDAR) {
        dw_error_hint(x->diags, x->src, e->u.call.name_loc,
                      "temporal macros are called inside `temporal { ... }` bodies",
                      "temporal macro `%.*s` cannot be called in a Cedar expression", PS(name));
        def_note(x, d);
        goto done;
    }
    if (e->u.call.nargs != d->m->nparams) {
        dw_error(x->diags, x->src, e->u.call.name_loc, "macro `%.*s` expects %zu argument(s), got %zu",
                 PS(name), d->m->nparams, e->u.call.nargs);
        def_note(x, d);
        goto done;
    }
    if (!d->ok) goto done;   /* the definition's own error was reported */
    csub s = { d, e->u.call.args, e->loc };
    e = csubst(x, &s, d->m->cedar_body);
done:
    if (e->depth > DW_MAX_EXPR_DEPTH) {
        dw_error_hint(x->diags, x->src, e->loc, "simplify the expression or the macro arguments",
                      "expression nested too deeply after macro expansion");
        longjmp(x->abort_policy, 1);
    }
    return e;
}

/* ------------------------------------------------ temporal expansion */

static bool t_is_cond(const dw_tnode *n)
{
    switch (n->kind) {
    case DW_T_AND: case DW_T_NOT: case DW_T_SINCE: case DW_T_FORMERLY: case DW_T_PREVIOUS:
    case DW_T_EXISTS: case DW_T_TP: case DW_T_PRED: case DW_T_CMP:
        return true;
    default: return false;
    }
}

static bool t_is_term(const dw_tnode *n)
{
    switch (n->kind) {
    case DW_T_LIT_LONG: case DW_T_LIT_STRING: case DW_T_LIT_BOOL: case DW_T_LIT_DECIMAL: case DW_T_LIT_ENTITY:
    case DW_T_ARRAY: case DW_T_CONTEXT: case DW_T_PRINCIPAL: case DW_T_RESOURCE:
    case DW_T_WILDCARD: case DW_T_VAR: case DW_T_COUNT: case DW_T_SUM:
        return true;
    default: return false;
    }
}

/* Depth of a temporal tree, giving up past `cap` (the bound keeps the walk shallow). */
static uint32_t tdepth(const dw_tnode *n, uint32_t cap)
{
    if (!n || cap == 0) return 0;
    uint32_t m = 0;
    tpos p;
    dw_tnode **k;
    for (size_t i = 0; (k = tkid((dw_tnode *)n, i, &p)); i++) {
        uint32_t d = tdepth(*k, cap - 1);
        if (d > m) m = d;
        if (m >= cap) break;
    }
    return m + 1;
}

typedef struct tsub {
    const mdef *d;
    dw_tnode **args;
    dw_loc loc;                 /* call site */
    uint32_t off;               /* byte offset of the macro name: hygiene suffix */
} tsub;

static dw_str fresh(X *x, const tsub *s, dw_str name)
{
    char buf[160];
    int n = snprintf(buf, sizeof buf, "%.*s$%u", (int)(name.len > 100 ? 100 : name.len), name.s, s->off);
    return xstr(x, buf, (size_t)n);
}

static void subst_slot(X *x, const tsub *s, dw_tslot *sl)
{
    if (sl->sigil == '?') {
        const dw_tnode *a = s->args[param_index(s->d->m, sl->name)];
        *sl = (dw_tslot){ 0, a->name, a->loc };
    } else if (sl->sigil == '$') {
        *sl = (dw_tslot){ 0, fresh(x, s, sl->name), s->loc };
    }
}

static dw_tnode *tsubst(X *x, const tsub *s, const dw_tnode *b)
{
    if (b->kind == DW_T_PARAM) return tclone(x, s->args[param_index(s->d->m, b->name)]);
    if (b->kind == DW_T_REFINE) {
        /* ?s{ f: t } on a predicate argument: append the fields (§6.4) */
        dw_tnode *c = tclone(x, s->args[param_index(s->d->m, b->kids[0]->name)]);
        size_t n = c->nfields + b->nfields;
        dw_tfield *f = xalloc(x, n * sizeof *f);
        if (c->nfields) memcpy(f, c->fields, c->nfields * sizeof *f);
        for (size_t i = 0; i < b->nfields; i++) {
            f[c->nfields + i] = b->fields[i];
            f[c->nfields + i].loc = s->loc;
            f[c->nfields + i].term = tsubst(x, s, b->fields[i].term);
        }
        c->fields = f;
        c->nfields = n;
        return c;
    }
    dw_tnode *c = xalloc(x, sizeof *c);
    count_node(x, s->loc);
    *c = *b;
    c->loc = s->loc;
    if (b->kind == DW_T_BINDER) {
        c->kind = DW_T_VAR;
        c->name = fresh(x, s, b->name);
        return c;
    }
    if (b->nfields) {
        c->fields = xalloc(x, b->nfields * sizeof *c->fields);
        memcpy(c->fields, b->fields, b->nfields * sizeof *c->fields);
        for (size_t i = 0; i < b->nfields; i++) c->fields[i].loc = s->loc;
    }
    if (b->nargs) {
        c->args = xalloc(x, b->nargs * sizeof *c->args);
        memcpy(c->args, b->args, b->nargs * sizeof *c->args);
    }
    if (b->nbinders) {
        c->binders = xalloc(x, b->nbinders * sizeof *c->binders);
        memcpy(c->binders, b->binders, b->nbinders * sizeof *c->binders);
        for (size_t i = 0; i < b->nbinders; i++) {
            subst_slot(x, s, &c->binders[i].slot);
            c->binders[i].loc = s->loc;
        }
    }
    if (b->kind == DW_T_TP || b->kind == DW_T_SUM) subst_slot(x, s, &c->slot);
    if (b->win.param.s) {
        const dw_tnode *a = s->args[param_index(s->d->m, b->win.param)];
        c->win = (dw_twindow){ a->win.secs, { NULL, 0 }, a->loc };
    } else {
        c->win.loc = s->loc;
    }
    tpos p;
    dw_tnode **k;
    for (size_t i = 0; (k = tkid(c, i, &p)); i++)
        if (*k) *k = tsubst(x, s, *k);
    return c;
}

/* §10.5 shape: does argument `a` fit parameter p's kind?  Reports if not. */
static bool check_arg(X *x, const mdef *d, size_t p, const dw_tnode *a)
{
    unsigned k = d->kinds[p];
    dw_str pn = d->m->params[p];
    const char *need = NULL, *hint = NULL;
    char msg[256];
    if (k & PK_WINDOW) {
        if (a->kind == DW_T_INTERVAL) return true;
        need = "is a window, so the call-site argument must be a bare interval";
        hint = "write the interval alone, e.g. `10m` or `1h` (not `within 1h`)";
    } else if (k & PK_BINDER) {
        if (a->kind == DW_T_VAR) return true;
        need = "is used in a binder position, so the call-site argument must be a single identifier";
        hint = "name the variable the macro binds, e.g. `n`";
    } else if (k & PK_REFINED) {
        if (a->kind == DW_T_PRED) return true;
        need = "is refined in the macro body, so the call-site argument must be a single predicate";
        hint = "pass one predicate such as `Ns::Action::\"a\"::response{}`";
    } else if (k & PK_COND) {
        if (t_is_cond(a)) return true;
        need = "is used as a condition, so the call-site argument must be a temporal condition";
        hint = a->kind == DW_T_COUNT || a->kind == DW_T_SUM ? "an aggregate is a term: compare it, e.g. `(...) > 2`" : NULL;
    } else if (k & PK_TERM) {
        if (t_is_term(a)) return true;
        need = "is used as a term, so the call-site argument must be a term";
    } else {
        return true;   /* unused parameter: anything goes */
    }
    snprintf(msg, sizeof msg, "parameter `?%.*s` %s", PS(pn), need);
    dw_error_hint(x->diags, x->src, a->loc, hint, "%s", msg);
    return false;
}

static dw_tnode *texpand(X *x, dw_tnode *n, tpos pos);

static dw_tnode *expand_tcall(X *x, dw_tnode *n, tpos pos)
{
    size_t errs = x->diags->nerrors;
    tpos ap;
    dw_tnode **k;
    for (size_t i = 0; (k = tkid(n, i, &ap)); i++)   /* arguments first (§10.3) */
        if (*k) *k = texpand(x, *k, ap);
    dw_loc nloc = dw_loc_at(x->src, n->loc.off, n->loc.off + (uint32_t)n->name.len);
    const mdef *d = lookup(x, n->name);
    if (!d) { unknown_macro(x, n->name, nloc); return n; }
    if (d->m->kind == DW_MACRO_CEDAR) {
        dw_error_hint(x->diags, x->src, nloc, "Cedar macros are called in Cedar conditions (`when { ... }`)",
                      "Cedar macro `%.*s` cannot be called inside a temporal body", PS(n->name));
        def_note(x, d);
        return n;
    }
    bool agg = d->m->temporal_body && d->m->temporal_body->is_aggregate;
    if (agg && (pos == TP_COND || pos == TP_TERM)) {
        dw_error_hint(x->diags, x->src, nloc, "compare it, e.g. `count_within(1h, P) > 2`, or bind it: `bind(n, count_within(1h, P), n > 2)`",
                      "aggregation macro `%.*s` can only be used as an operand of a comparison", PS(n->name));
        def_note(x, d);
        return n;
    }
    if (!agg && (pos == TP_CMP || pos == TP_TERM)) {
        dw_error_hint(x->diags, x->src, nloc, "a condition macro is a condition: use it as a conjunct, not as a value",
                      pos == TP_CMP ? "condition macro `%.*s` cannot be used as an operand of a comparison"
                                    : "condition macro `%.*s` cannot be used as a term", PS(n->name));
        def_note(x, d);
        return n;
    }
    if (n->nargs != d->m->nparams) {
        dw_error(x->diags, x->src, nloc, "macro `%.*s` expects %zu argument(s), got %zu",
                 PS(n->name), d->m->nparams, n->nargs);
        def_note(x, d);
        return n;
    }
    if (!d->ok || x->diags->nerrors != errs) return n;
    bool shapes = true;
    for (size_t i = 0; i < n->nargs; i++) shapes &= check_arg(x, d, i, n->args[i]);
    if (!shapes) { def_note(x, d); return n; }
    tsub s = { d, n->args, n->loc, n->loc.off };
    dw_tnode *r = tsubst(x, &s, d->m->temporal_body->root);
    if (tdepth(r, DW_MAX_EXPR_DEPTH + 1) > DW_MAX_EXPR_DEPTH) {
        dw_error_hint(x->diags, x->src, nloc, "simplify the macro arguments",
                      "temporal body nested too deeply after macro expansion");
        longjmp(x->abort_policy, 1);
    }
    return r;
}

static dw_tnode *texpand(X *x, dw_tnode *n, tpos pos)
{
    if (!n) return NULL;
    if (n->kind == DW_T_CALL) return expand_tcall(x, n, pos);
    tpos kp;
    dw_tnode **k;
    for (size_t i = 0; (k = tkid(n, i, &kp)); i++)
        if (*k) *k = texpand(x, *k, kp);
    return n;
}

static dw_temporal *texpand_leaf(X *x, dw_temporal *t)
{
    if (t->root) t->root = texpand(x, t->root, TP_COND);
    return t;
}

/* ------------------------------------------------ post-condition */

static bool t_clean(const dw_tnode *n)
{
    if (!n) return true;
    switch (n->kind) {
    case DW_T_CALL: case DW_T_PARAM: case DW_T_BINDER: case DW_T_REFINE: case DW_T_INTERVAL: return false;
    default: break;
    }
    if (n->win.param.s || n->slot.sigil) return false;
    for (size_t i = 0; i < n->nbinders; i++) if (n->binders[i].slot.sigil) return false;
    tpos p;
    dw_tnode **k;
    for (size_t i = 0; (k = tkid((dw_tnode *)n, i, &p)); i++) if (!t_clean(*k)) return false;
    return true;
}

static bool c_clean(const dw_expr *e)
{
    if (!e) return true;
    if (is_macro_call(e) || e->kind == DW_E_BINDER) return false;
    if (e->kind == DW_E_SLOT && !seqz(e->u.name, "principal") && !seqz(e->u.name, "resource")) return false;
    if (e->kind == DW_E_TEMPORAL && e->u.temporal && !t_clean(e->u.temporal->root)) return false;
    dw_expr **k;
    for (size_t i = 0; (k = dw_expr_kid((dw_expr *)e, i)); i++) if (!c_clean(*k)) return false;
    return true;
}

bool dw_macros_fully_expanded(const dw_policy_set *ps)
{
    for (size_t i = 0; i < ps->npolicies; i++)
        for (size_t j = 0; j < ps->policies[i].nclauses; j++)
            if (!c_clean(ps->policies[i].clauses[j].body)) return false;
    return true;
}

/* ------------------------------------------------ library merge */

static dw_macro_def copy_def(X *x, const dw_macro_def *m)
{
    dw_macro_def c = *m;
    c.name = xstr(x, m->name.s, m->name.len);
    c.params = xalloc(x, m->nparams * sizeof *c.params);
    for (size_t i = 0; i < m->nparams; i++) c.params[i] = xstr(x, m->params[i].s, m->params[i].len);
    c.body_text = xstr(x, m->body_text.s, m->body_text.len);
    if (m->cedar_body && !(c.cedar_body = dw_expr_clone(x->A, m->cedar_body))) longjmp(x->oom, 1);
    if (m->temporal_body) c.temporal_body = temporal_clone(x, m->temporal_body);
    return c;
}

dw_policy_set *dw_macro_library_parse(const dw_source *src, dw_diags *diags)
{
    dw_policy_set *lib = dw_parse_policy_set(src, diags);
    if (!lib) return NULL;
    /* the library keeps its own copy of src: its definitions are checked,
     * and expanded policies point into it, after the caller's copy is gone */
    dw_source *own = dw_arena_alloc(&lib->arena, sizeof *own);
    if (!own) { dw_policy_set_free(lib); return NULL; }
    *own = *src;
    lib->src = own;
    lib->npolicies = 0;     /* a library's policies are ignored (§10.6) */
    return lib;
}

static void expand_clauses(X *x, dw_policy *p)
{
    for (size_t j = 0; j < p->nclauses; j++) p->clauses[j].body = cexpand(x, p->clauses[j].body);
}

/* A limit hit inside one policy abandons that policy only (the error is
 * recorded), so the others still get their diagnostics. */
static void expand_policy(X *x, dw_policy *p)
{
    x->nodes = 0;
    x->in_policy = true;
    if (setjmp(x->abort_policy)) return;
    expand_clauses(x, p);
}

int dw_expand_macros(dw_policy_set *ps, const dw_policy_set *library, dw_diags *diags)
{
    /* on the heap: fields change after setjmp, and longjmp only keeps
     * non-volatile locals that did not */
    X *x = calloc(1, sizeof *x);
    if (!x) { dw_error(diags, ps->src, (dw_loc){0}, "out of memory during macro expansion"); return -1; }
    x->A = &ps->arena;
    x->src = ps->src;
    x->diags = diags;
    size_t errs0 = diags->nerrors;
    if (setjmp(x->oom)) {
        free(x->defs);
        free(x);
        dw_error(diags, ps->src, (dw_loc){0}, "out of memory during macro expansion");
        return -1;
    }
    size_t nlib = library ? library->nmacros : 0;
    mdef *defs = x->defs = calloc(ps->nmacros + nlib + 1, sizeof *defs);
    if (!defs) longjmp(x->oom, 1);

    /* the file's own definitions first: lookup takes the first match, so
     * they win over the library and over a later duplicate (already reported) */
    for (size_t i = 0; i < ps->nmacros; i++) {
        defs[x->ndefs] = (mdef){ &ps->macros[i], ps->src, false, false, NULL };
        check_def(x, &defs[x->ndefs++]);
    }
    size_t nown = ps->nmacros, nadd = 0;
    dw_macro_def *merged = NULL;
    if (nlib) {
        merged = xalloc(x, (nown + nlib) * sizeof *merged);
        if (nown) memcpy(merged, ps->macros, nown * sizeof *merged);
    }
    for (size_t i = 0; i < nlib; i++) {
        const dw_macro_def *lm = &library->macros[i];
        /* the library is checked on its own, whether or not the file overrides it */
        mdef ld = { lm, library->src, true, false, NULL };
        x->src = library->src;
        check_def(x, &ld);
        x->src = ps->src;
        bool own = false;
        for (size_t j = 0; j < nown && !own; j++) own = seq(ps->macros[j].name, lm->name);
        for (size_t j = 0; j < nadd && !own; j++) own = seq(merged[nown + j].name, lm->name);
        if (own) continue;
        merged[nown + nadd] = copy_def(x, lm);
        nadd++;
        defs[x->ndefs] = ld;
        defs[x->ndefs].m = NULL;   /* set below, once `merged` is final */
        x->ndefs++;
    }
    if (merged) {
        ps->macros = merged;
        ps->nmacros = nown + nadd;
        for (size_t i = 0; i < ps->nmacros; i++) defs[i].m = &ps->macros[i];
    }

    for (size_t i = 0; i < ps->npolicies; i++) expand_policy(x, &ps->policies[i]);
    x->in_policy = false;
    free(defs);
    free(x);
    if (diags->nerrors != errs0) return -1;
    assert(dw_macros_fully_expanded(ps));
    return 0;
}

/* ------------------------------------------------ canonical text */

typedef struct canon {
    FILE *out;
    bool stable;
    dw_str *seen; size_t nseen, cap;   /* fresh binders, in order of first appearance */
    bool oom;
} canon;

static void cname(canon *c, dw_str n)
{
    const char *dollar = memchr(n.s, '$', n.len);
    if (!c->stable || !dollar) { fprintf(c->out, "%.*s", PS(n)); return; }
    size_t k = 0;
    while (k < c->nseen && !seq(c->seen[k], n)) k++;
    if (k == c->nseen) {
        if (c->nseen == c->cap) {
            size_t cap = c->cap ? c->cap * 2 : 8;
            dw_str *v = realloc(c->seen, cap * sizeof *v);
            if (!v) { c->oom = true; fprintf(c->out, "%.*s", PS(n)); return; }
            c->seen = v;
            c->cap = cap;
        }
        c->seen[c->nseen++] = n;
    }
    fprintf(c->out, "%.*s$%zu", (int)(dollar - n.s), n.s, k);
}

static void cwin(canon *c, int64_t secs)
{
    static const struct { int64_t m; char u; } units[] = { { 86400, 'd' }, { 3600, 'h' }, { 60, 'm' } };
    for (size_t i = 0; i < 3; i++)
        if (secs != 0 && secs % units[i].m == 0) { fprintf(c->out, "within %lld%c", (long long)(secs / units[i].m), units[i].u); return; }
    fprintf(c->out, "within %llds", (long long)secs);
}

static void ccond(canon *c, const dw_tnode *n);
static void cterm(canon *c, const dw_tnode *n);

/* Nodes that the grammar accepts as an atom without parentheses. */
static bool c_atomic(const dw_tnode *n)
{
    return n->kind == DW_T_PRED || n->kind == DW_T_CMP || n->kind == DW_T_TP;
}

static void cgroup(canon *c, const dw_tnode *n)
{
    if (c_atomic(n)) { ccond(c, n); return; }
    fputc('(', c->out);
    ccond(c, n);
    fputc(')', c->out);
}

/* The left operand of `since` is a neg_conjunct: `!`s over a conjunct that is
 * not itself an `&&`, a `since` or an `exists` (which would swallow the rest). */
static bool since_left_ok(const dw_tnode *n)
{
    while (n->kind == DW_T_NOT) n = n->kids[0];
    return c_atomic(n) || n->kind == DW_T_FORMERLY || n->kind == DW_T_PREVIOUS;
}

static void cbinders(canon *c, const dw_tnode *n)
{
    for (size_t i = 0; i < n->nbinders; i++) {
        fputs(i ? ", (" : "(", c->out);
        cname(c, n->binders[i].slot.name);
        fprintf(c->out, ": %.*s)", PS(n->binders[i].type));
    }
}

static void ccond(canon *c, const dw_tnode *n)
{
    static const char *ops[] = { "==", "!=", "<", "<=", ">", ">=" };
    FILE *o = c->out;
    switch (n->kind) {
    case DW_T_AND:
        /* left-associative: a left `&&` needs no parentheses */
        if (n->kids[0]->kind == DW_T_AND || n->kids[0]->kind == DW_T_SINCE || since_left_ok(n->kids[0])) ccond(c, n->kids[0]);
        else cgroup(c, n->kids[0]);
        fputs(" && ", o);
        if (n->kids[1]->kind == DW_T_SINCE || since_left_ok(n->kids[1])) ccond(c, n->kids[1]);
        else cgroup(c, n->kids[1]);
        break;
    case DW_T_NOT:
        fputc('!', o);
        if (since_left_ok(n->kids[0])) ccond(c, n->kids[0]); else cgroup(c, n->kids[0]);
        break;
    case DW_T_SINCE:
        if (since_left_ok(n->kids[0])) ccond(c, n->kids[0]); else cgroup(c, n->kids[0]);
        fputs(" since ", o);
        cwin(c, n->win.secs);
        fputc(' ', o);
        cgroup(c, n->kids[1]);
        break;
    case DW_T_FORMERLY: case DW_T_PREVIOUS:
        fputs(n->kind == DW_T_FORMERLY ? "formerly " : "previous ", o);
        cwin(c, n->win.secs);
        fputc(' ', o);
        cgroup(c, n->kids[0]);
        break;
    case DW_T_EXISTS:
        fputs("exists ", o);
        cbinders(c, n);
        fputs(". ", o);
        ccond(c, n->kids[0]);
        break;
    case DW_T_TP: fputs("tp(", o); cname(c, n->slot.name); fputc(')', o); break;
    case DW_T_PRED:
        fprintf(o, "%.*s::", PS(n->type));
        dw_str_print_quoted(o, n->str.s, n->str.len);
        fprintf(o, "::%.*s{", PS(n->ekind));
        for (size_t i = 0; i < n->nfields; i++) {
            fprintf(o, "%s%.*s: ", i ? ", " : " ", PS(n->fields[i].path));
            cterm(c, n->fields[i].term);
        }
        fputs(n->nfields ? " }" : "}", o);
        break;
    case DW_T_CMP:
        cterm(c, n->kids[0]);
        fprintf(o, " %s ", ops[n->op]);
        cterm(c, n->kids[1]);
        break;
    default:   /* not a condition: only reachable on unexpanded input */
        cterm(c, n);
        break;
    }
}

static void cterm(canon *c, const dw_tnode *n)
{
    FILE *o = c->out;
    switch (n->kind) {
    case DW_T_LIT_LONG: fprintf(o, "%lld", (long long)n->i); break;
    case DW_T_LIT_STRING: dw_str_print_quoted(o, n->str.s, n->str.len); break;
    case DW_T_LIT_BOOL: fputs(n->b ? "true" : "false", o); break;
    case DW_T_LIT_DECIMAL: fputs("decimal(", o); dw_str_print_quoted(o, n->str.s, n->str.len); fputc(')', o); break;
    case DW_T_LIT_ENTITY: fprintf(o, "%.*s::", PS(n->type)); dw_str_print_quoted(o, n->str.s, n->str.len); break;
    case DW_T_ARRAY:
        fputc('[', o);
        for (size_t i = 0; i < n->nargs; i++) { if (i) fputs(", ", o); cterm(c, n->args[i]); }
        fputc(']', o);
        break;
    case DW_T_CONTEXT: fprintf(o, "context.%.*s", PS(n->path)); break;
    case DW_T_PRINCIPAL: case DW_T_RESOURCE:
        fputs(n->kind == DW_T_PRINCIPAL ? "principal" : "resource", o);
        if (n->path.len) fprintf(o, ".%.*s", PS(n->path));
        break;
    case DW_T_WILDCARD: fputc('_', o); break;
    case DW_T_VAR: cname(c, n->name); break;
    case DW_T_COUNT: case DW_T_SUM:
        /* always parenthesised: a `where` body extends to the right (§6.3) */
        fputs(n->kind == DW_T_COUNT ? "(count for " : "(sum ", o);
        if (n->kind == DW_T_SUM) { cname(c, n->slot.name); fputs(" for ", o); }
        cbinders(c, n);
        fputs(". where ", o);
        ccond(c, n->kids[0]);
        fputc(')', o);
        break;
    /* macro constructs: printed in source form so unexpanded input stays readable */
    case DW_T_PARAM: fprintf(o, "?%.*s", PS(n->name)); break;
    case DW_T_BINDER: fprintf(o, "$%.*s", PS(n->name)); break;
    case DW_T_INTERVAL: cwin(c, n->win.secs); break;
    case DW_T_CALL:
        fprintf(o, "%.*s(", PS(n->name));
        for (size_t i = 0; i < n->nargs; i++) { if (i) fputs(", ", o); ccond(c, n->args[i]); }
        fputc(')', o);
        break;
    default: ccond(c, n); break;
    }
}

void dw_temporal_canon_print(FILE *out, const dw_temporal *t, bool stable)
{
    canon c = { out, stable, NULL, 0, 0, false };
    if (!t || !t->root) fputs("<invalid>", out);
    else if (t->is_aggregate) cterm(&c, t->root);
    else ccond(&c, t->root);
    free(c.seen);
}

char *dw_temporal_canon_text(const dw_temporal *t, bool stable, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f) return NULL;
    dw_temporal_canon_print(f, t, stable);
    if (fclose(f) != 0) { free(buf); return NULL; }
    if (len) *len = n;
    return buf;
}

uint64_t dw_temporal_leaf_identity(const dw_temporal *leaf)
{
    size_t n;
    char *s = dw_temporal_canon_text(leaf, true, &n);
    if (!s) return 0;
    uint64_t h = XXH3_64bits(s, n);
    free(s);
    return h;
}

static void print_leaves(FILE *out, const dw_expr *e, size_t pi, size_t *j)
{
    if (!e) return;
    if (e->kind == DW_E_TEMPORAL && e->u.temporal) {
        fprintf(out, "leaf policy%zu.%zu: ", pi, (*j)++);
        dw_temporal_canon_print(out, e->u.temporal, false);
        fprintf(out, "\n  identity %016llx: ", (unsigned long long)dw_temporal_leaf_identity(e->u.temporal));
        dw_temporal_canon_print(out, e->u.temporal, true);
        fputc('\n', out);
        return;
    }
    dw_expr **k;
    for (size_t i = 0; (k = dw_expr_kid((dw_expr *)e, i)); i++) print_leaves(out, *k, pi, j);
}

void dw_macros_print_leaves(FILE *out, const dw_policy_set *ps)
{
    for (size_t i = 0; i < ps->npolicies; i++) {
        size_t j = 0;
        for (size_t k = 0; k < ps->policies[i].nclauses; k++) print_leaves(out, ps->policies[i].clauses[k].body, i, &j);
    }
}
