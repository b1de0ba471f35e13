/* compile.c - AST -> bytecode.  One pass per policy: the scope and every
 * clause become one short-circuit conjunction ending in RET.  Stack depth
 * is tracked from dw_opinfo_table so max_stack is exact. */
#include "compile.h"
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "emit.h"
#include "provcheck.h"
#include "../vm/vm.h"

int dw_vec_push(vec *v, const void *elem, size_t size)
{
    if (v->n == v->cap) {
        uint32_t cap = v->cap ? v->cap * 2 : 16;
        void *np = realloc(v->p, (size_t)cap * size);
        if (!np) return -1;
        v->p = np;
        v->cap = cap;
    }
    memcpy((char *)v->p + (size_t)v->n * size, elem, size);
    v->n++;
    return 0;
}

void dw_compile_error(compiler *c, dw_loc loc, const char *hint, const char *msg)
{
    c->failed = true;
    dw_diag_add(c->diags, DW_SEV_ERROR, c->ps->src, loc, hint, "%s", msg);
}

void dw_compile_oom(compiler *c) { c->failed = true; }

static uint32_t here(compiler *c) { return c->code.n; }

static uint32_t emit(compiler *c, dw_opcode op, uint32_t a)
{
    if (a > DW_MAX_A) { dw_compile_oom(c); a = 0; }
    uint32_t ins = DW_INS(op, a);
    if (dw_vec_push(&c->code, &ins, sizeof ins)) dw_compile_oom(c);
    const dw_opinfo *oi = &dw_opinfo_table[op];
    int pops = oi->pops;
    if (pops < 0) {
        if (oi->kind == DW_OPK_COUNT) pops = (int)a;
        else if (oi->kind == DW_OPK_CALL) pops = (int)DW_CALL_ARGC(a);
        else if (oi->kind == DW_OPK_KEYS) pops = (int)((dw_keylist *)c->keylists.p)[a].n;
    }
    c->depth += oi->pushes - pops;
    if (c->depth > c->max_depth) c->max_depth = c->depth;
    return c->code.n - 1;
}

static void patch(compiler *c, uint32_t at, uint32_t target)
{
    uint32_t *code = c->code.p;
    code[at] = DW_INS(DW_INS_OP(code[at]), target);
}

uint32_t dw_emit_const(compiler *c, dw_value v)
{
    if (dw_vec_push(&c->consts, &v, sizeof v)) dw_compile_oom(c);
    return c->consts.n - 1;
}

uint32_t dw_emit_str(compiler *c, const char *s, size_t len)
{
    if ((c->strs.n + 1) * 2 > c->str_cap) {
        uint32_t cap = c->str_cap ? c->str_cap * 2 : 256;
        uint32_t *slots = calloc(cap, sizeof *slots);
        if (!slots) { dw_compile_oom(c); return 0; }
        for (uint32_t i = 0; i < c->strs.n; i++) {
            dw_str *b = &((dw_str *)c->strs.p)[i];
            uint32_t j = (uint32_t)XXH3_64bits(b->s, b->len) & (cap - 1);
            while (slots[j]) j = (j + 1) & (cap - 1);
            slots[j] = i + 1;
        }
        free(c->str_slots);
        c->str_slots = slots;
        c->str_cap = cap;
    }
    uint32_t j = (uint32_t)XXH3_64bits(s, len) & (c->str_cap - 1);
    while (c->str_slots[j]) {
        dw_str *b = &((dw_str *)c->strs.p)[c->str_slots[j] - 1];
        if (b->len == len && memcmp(b->s, s, len) == 0) return c->str_slots[j] - 1;
        j = (j + 1) & (c->str_cap - 1);
    }
    dw_str b = { dw_arena_memdup(&c->prog->arena, s, len), len };
    if (!b.s || dw_vec_push(&c->strs, &b, sizeof b)) { dw_compile_oom(c); return 0; }
    c->str_slots[j] = c->strs.n;
    return c->strs.n - 1;
}

dw_value dw_emit_uid(compiler *c, const dw_euid_lit *e)
{
    dw_value v = { .kind = DW_V_ENTITY };
    v.u.uid = dw_make_uid(&c->prog->arena, e->type.s, e->type.len, e->id.s, e->id.len);
    if (!v.u.uid) dw_compile_oom(c);
    return v;
}

static void compile_expr(compiler *c, const dw_expr *e);

static void compile_short_circuit(compiler *c, const dw_expr *e, dw_opcode op)
{
    compile_expr(c, e->u.kids[0]);
    uint32_t j = emit(c, op, 0);
    compile_expr(c, e->u.kids[1]);
    emit(c, DW_OP_CHECK_BOOL, 0);
    patch(c, j, here(c));
}

/* A literal's value, or false: folding never changes what can error, since a
 * literal cannot. */
static bool literal_value(compiler *c, const dw_expr *e, dw_value *out);
bool dw_compile_literal(compiler *c, const dw_expr *e, dw_value *out) { return literal_value(c, e, out); }

static bool literal_value(compiler *c, const dw_expr *e, dw_value *out)
{
    switch (e->kind) {
    case DW_E_BOOL: *out = dw_bool(e->u.b); return true;
    case DW_E_LONG: *out = dw_long(e->u.i); return true;
    case DW_E_STRING: return dw_make_string(&c->prog->arena, e->u.str.s, e->u.str.len, out);
    case DW_E_ENTITY: *out = dw_emit_uid(c, &e->u.euid); return out->u.uid != NULL;
    case DW_E_SET: {
        dw_value *el = e->u.list.n ? dw_arena_alloc(&c->prog->arena, e->u.list.n * sizeof *el) : NULL;
        if (e->u.list.n && !el) return false;
        for (size_t i = 0; i < e->u.list.n; i++) if (!literal_value(c, e->u.list.v[i], &el[i])) return false;
        *out = dw_make_set(el, e->u.list.n);
        return true;
    }
    case DW_E_CALL: {
        /* an extension constructor on a string literal that parses is a constant;
         * one that does not parse stays a call, so it errors when evaluated */
        int fn = e->u.call.nsegs == 1 ? dw_extfn_lookup(e->u.call.name.s, e->u.call.name.len, 0) : -1;
        if (fn < 0 || e->u.call.nargs != 1 || e->u.call.args[0]->kind != DW_E_STRING) return false;
        dw_value arg;
        if (!dw_make_string(&c->prog->arena, e->u.call.args[0]->u.str.s, e->u.call.args[0]->u.str.len, &arg)) return false;
        return dw_call_extfn(&c->prog->arena, NULL, (dw_extfn)fn, &arg, 1, out) == DW_EVAL_OK;
    }
    default: return false;
    }
}

static void compile_expr(compiler *c, const dw_expr *e)
{
    if (c->failed) return;
    dw_value folded;
    if ((e->kind == DW_E_SET || e->kind == DW_E_CALL) && literal_value(c, e, &folded)) {
        emit(c, DW_OP_CONST, dw_emit_const(c, folded));
        return;
    }
    switch (e->kind) {
    case DW_E_BOOL: emit(c, DW_OP_CONST, dw_emit_const(c, dw_bool(e->u.b))); break;
    case DW_E_LONG: emit(c, DW_OP_CONST, dw_emit_const(c, dw_long(e->u.i))); break;
    case DW_E_STRING: {
        dw_value v;
        if (!dw_make_string(&c->prog->arena, e->u.str.s, e->u.str.len, &v)) { dw_compile_oom(c); break; }
        emit(c, DW_OP_CONST, dw_emit_const(c, v));
        break;
    }
    case DW_E_ENTITY: emit(c, DW_OP_CONST, dw_emit_const(c, dw_emit_uid(c, &e->u.euid))); break;
    case DW_E_VAR: emit(c, DW_OP_VAR, (uint32_t)e->u.var); break;
    case DW_E_SLOT:
        dw_compile_error(c, e->loc, "templates are parsed but cannot be evaluated (dogwood.md §3.9)", "policy is not static: it contains a template slot");
        break;
    case DW_E_BINDER:
        dw_compile_error(c, e->loc, NULL, "stray macro binder reference outside a macro body");
        break;
    case DW_E_IF: {
        compile_expr(c, e->u.kids[0]);
        uint32_t jelse = emit(c, DW_OP_JUMP_IF_NOT, 0);
        compile_expr(c, e->u.kids[1]);
        uint32_t jend = emit(c, DW_OP_JUMP, 0);
        c->depth--;                      /* the else branch starts without the then value */
        patch(c, jelse, here(c));
        compile_expr(c, e->u.kids[2]);
        patch(c, jend, here(c));
        break;
    }
    case DW_E_AND: compile_short_circuit(c, e, DW_OP_AND); break;
    case DW_E_OR: compile_short_circuit(c, e, DW_OP_OR); break;
    case DW_E_NOT: compile_expr(c, e->u.kids[0]); emit(c, DW_OP_NOT, 0); break;
    case DW_E_NEG: compile_expr(c, e->u.kids[0]); emit(c, DW_OP_NEG, 0); break;
    case DW_E_EQ: case DW_E_NE: case DW_E_LT: case DW_E_LE: case DW_E_GT: case DW_E_GE:
    case DW_E_IN: case DW_E_ADD: case DW_E_SUB: case DW_E_MUL: {
        static const dw_opcode ops[] = {
            [DW_E_EQ] = DW_OP_EQ, [DW_E_NE] = DW_OP_NE, [DW_E_LT] = DW_OP_LT, [DW_E_LE] = DW_OP_LE,
            [DW_E_GT] = DW_OP_GT, [DW_E_GE] = DW_OP_GE, [DW_E_IN] = DW_OP_IN,
            [DW_E_ADD] = DW_OP_ADD, [DW_E_SUB] = DW_OP_SUB, [DW_E_MUL] = DW_OP_MUL,
        };
        compile_expr(c, e->u.kids[0]);
        compile_expr(c, e->u.kids[1]);
        emit(c, ops[e->kind], 0);
        break;
    }
    case DW_E_HAS: case DW_E_GETATTR:
        if (c->hoisted_names_reserved && dw_reads_hoisted_name(e)) {   /* §20 D4: only lowering writes these (compiler/provcheck.h) */
            dw_compile_error(c, e->loc, DW_HOISTED_READ_HINT, DW_HOISTED_READ_MSG);
            break;
        }
        compile_expr(c, e->u.attr.kids0);
        emit(c, e->kind == DW_E_HAS ? DW_OP_HAS : DW_OP_GETATTR, dw_emit_str(c, e->u.attr.attr.s, e->u.attr.attr.len));
        break;
    case DW_E_HAS_PATH: {     /* e once, then every step in one instruction (no copies of e) */
        if (c->hoisted_names_reserved && dw_reads_hoisted_name(e)) {
            dw_compile_error(c, e->loc, DW_HOISTED_READ_HINT, DW_HOISTED_READ_MSG);
            break;
        }
        compile_expr(c, e->u.path.kids0);
        dw_keylist kl = { c->keyidx.n, (uint32_t)e->u.path.n };
        for (size_t i = 0; i < e->u.path.n; i++) {
            uint32_t k = dw_emit_str(c, e->u.path.attrs[i].s, e->u.path.attrs[i].len);
            if (dw_vec_push(&c->keyidx, &k, sizeof k)) dw_compile_oom(c);
        }
        if (dw_vec_push(&c->keylists, &kl, sizeof kl)) { dw_compile_oom(c); break; }
        emit(c, DW_OP_HASPATH, c->keylists.n - 1);
        break;
    }
    case DW_E_LIKE: {
        compile_expr(c, e->u.like.kids0);
        const dw_like_pattern *src = &e->u.like.pat;
        dw_like_pattern p = { src->nseg, NULL };
        dw_str *segs = dw_arena_alloc(&c->prog->arena, (src->nseg ? src->nseg : 1) * sizeof *segs);
        if (!segs) { dw_compile_oom(c); break; }
        for (size_t i = 0; i < src->nseg; i++) {
            segs[i].s = dw_arena_memdup(&c->prog->arena, src->seg[i].s, src->seg[i].len);
            segs[i].len = src->seg[i].len;
            if (!segs[i].s) dw_compile_oom(c);
        }
        p.seg = segs;
        if (dw_vec_push(&c->pats, &p, sizeof p)) dw_compile_oom(c);
        emit(c, DW_OP_LIKE, c->pats.n - 1);
        break;
    }
    case DW_E_IS: {
        compile_expr(c, e->u.is.kids0);
        emit(c, DW_OP_IS, dw_emit_str(c, e->u.is.type.s, e->u.is.type.len));
        if (e->u.is.in) {                /* e is T in y  ==  e is T && e in y */
            uint32_t j = emit(c, DW_OP_AND, 0);
            compile_expr(c, e->u.is.kids0);
            compile_expr(c, e->u.is.in);
            emit(c, DW_OP_IN, 0);
            patch(c, j, here(c));
        }
        break;
    }
    case DW_E_SET:
        for (size_t i = 0; i < e->u.list.n; i++) compile_expr(c, e->u.list.v[i]);
        emit(c, DW_OP_MKSET, (uint32_t)e->u.list.n);
        break;
    case DW_E_RECORD: {
        /* values first (they may contain records of their own), then this
         * record's keys as one contiguous run; both in key order, the order
         * Cedar evaluates a record's values in (its literal is a sorted map),
         * so the first error is Cedar's */
        size_t n = e->u.rec.n;
        uint32_t *ord = n ? malloc(n * sizeof *ord) : NULL;
        if (n && !ord) { dw_compile_oom(c); break; }
        bool keyed = true;
        for (size_t i = 0; i < n && keyed; i++) keyed = !dw_expr_hoists(e->u.rec.v[i].value);
        for (size_t i = 0; i < n; i++) {
            size_t j = i;
            for (; keyed && j > 0; j--) {
                const dw_str *a = &e->u.rec.v[ord[j - 1]].key, *b = &e->u.rec.v[i].key;
                if (dw_bytes_cmp(a->s, a->len, b->s, b->len) <= 0) break;
                ord[j] = ord[j - 1];
            }
            ord[j] = (uint32_t)i;
        }
        for (size_t i = 0; i < n; i++) compile_expr(c, e->u.rec.v[ord[i]].value);
        dw_keylist kl = { c->keyidx.n, (uint32_t)n };
        for (size_t i = 0; i < n; i++) {
            uint32_t k = dw_emit_str(c, e->u.rec.v[ord[i]].key.s, e->u.rec.v[ord[i]].key.len);
            if (dw_vec_push(&c->keyidx, &k, sizeof k)) dw_compile_oom(c);
        }
        free(ord);
        if (dw_vec_push(&c->keylists, &kl, sizeof kl)) { dw_compile_oom(c); break; }
        emit(c, DW_OP_MKRECORD, c->keylists.n - 1);
        break;
    }
    case DW_E_METHOD: {
        if (!dw_is_cedar_method(e->u.call.name.s, e->u.call.name.len, NULL)) {   /* a provider's output method */
            uint32_t k = dw_lower_provider(c, e);
            if (k != UINT32_MAX) emit(c, DW_OP_PROV, k);
            break;
        }
        int fn = dw_extfn_lookup(e->u.call.name.s, e->u.call.name.len, 1);
        if (fn < 0) { dw_compile_error(c, e->u.call.name_loc, NULL, "unknown method"); break; }
        compile_expr(c, e->u.call.recv);
        for (size_t i = 0; i < e->u.call.nargs; i++) compile_expr(c, e->u.call.args[i]);
        emit(c, DW_OP_CALL, DW_CALL_A(fn, e->u.call.nargs + 1));
        break;
    }
    case DW_E_CALL: {
        int fn = e->u.call.nsegs == 1 ? dw_extfn_lookup(e->u.call.name.s, e->u.call.name.len, 0) : -1;
        if (e->u.call.nsegs >= 2) {
            uint32_t k = dw_lower_provider(c, e);
            if (k != UINT32_MAX) emit(c, DW_OP_PROV, k);
            break;
        }
        if (fn < 0) {
            dw_compile_error(c, e->u.call.name_loc, "define it with `def cedar NAME(...) { ... };`",
                     "unknown function or macro (not a Cedar built-in and not a declared macro)");
            break;
        }
        for (size_t i = 0; i < e->u.call.nargs; i++) compile_expr(c, e->u.call.args[i]);
        emit(c, DW_OP_CALL, DW_CALL_A(fn, e->u.call.nargs));
        break;
    }
    case DW_E_TEMPORAL: {
        c->leaf_ordinal++;
        uint32_t leaf = dw_lower_temporal(c, e->u.temporal, c->cur_policy);
        if (leaf != UINT32_MAX) emit(c, DW_OP_LEAF, leaf);
        break;
    }
    default:
        dw_compile_error(c, e->loc, NULL, "internal: unknown expression kind");
    }
}

/* One conjunct of the policy's condition: emits code leaving a value. */
static void compile_scope(compiler *c, const dw_scope_con *sc, uint32_t var, uint32_t *jumps, uint32_t *nj)
{
    if (sc->kind == DW_SC_ANY) return;
    if (sc->target_is_slot && sc->kind != DW_SC_IS && sc->kind != DW_SC_IN_LIST) {
        dw_compile_error(c, sc->loc, "templates are parsed but cannot be evaluated (dogwood.md §3.9)", "policy is not static: it contains a template slot");
        return;
    }
    switch (sc->kind) {
    case DW_SC_EQ: case DW_SC_IN:
        emit(c, DW_OP_VAR, var);
        emit(c, DW_OP_CONST, dw_emit_const(c, dw_emit_uid(c, &sc->target)));
        emit(c, sc->kind == DW_SC_EQ ? DW_OP_EQ : DW_OP_IN, 0);
        break;
    case DW_SC_IS: case DW_SC_IS_IN:
        emit(c, DW_OP_VAR, var);
        emit(c, DW_OP_IS, dw_emit_str(c, sc->is_type.s, sc->is_type.len));
        if (sc->kind == DW_SC_IS_IN) {
            jumps[(*nj)++] = emit(c, DW_OP_AND, 0);
            emit(c, DW_OP_VAR, var);
            emit(c, DW_OP_CONST, dw_emit_const(c, dw_emit_uid(c, &sc->target)));
            emit(c, DW_OP_IN, 0);
        }
        break;
    case DW_SC_IN_LIST: {
        dw_value *elems = sc->nlist ? dw_arena_alloc(&c->prog->arena, sc->nlist * sizeof *elems) : NULL;
        if (sc->nlist && !elems) { dw_compile_oom(c); return; }
        for (size_t i = 0; i < sc->nlist; i++) elems[i] = dw_emit_uid(c, &sc->list[i]);
        emit(c, DW_OP_VAR, var);
        emit(c, DW_OP_CONST, dw_emit_const(c, dw_make_set(elems, sc->nlist)));
        emit(c, DW_OP_IN, 0);
        break;
    }
    default: break;
    }
    jumps[(*nj)++] = emit(c, DW_OP_AND, 0);
}

/* ---- the decision index (program.h) ----
 * Every policy offers several ways to be filed: under its action together with
 * its principal or resource entity (PAIR), under that entity alone, under its
 * action alone, under a type (`is T`), or ALWAYS.  A first pass counts how many
 * policies could share each key; each policy then takes the option whose keys
 * are shared least, so a request's candidates are about the policies whose
 * scope can match it (principal == Box::Agent::"self" on every Box rule says
 * nothing; its resource and action do). */
typedef struct ixkey {
    uint8_t kind, var;
    const dw_euid_lit *act;          /* PAIR */
    const dw_euid_lit *ent;          /* ENTITY, PAIR */
    const dw_str *type;              /* TYPE */
} ixkey;

typedef struct ixopt { ixkey *keys; uint32_t n; } ixopt;

static uint64_t str_h(uint64_t h, const dw_str *s) { return XXH3_64bits_withSeed(s->s, s->len, h); }

static uint64_t ixkey_hash(const ixkey *k)
{
    uint64_t h = (uint64_t)k->kind * 31 + k->var + 1;
    if (k->act) h = str_h(str_h(h, &k->act->type), &k->act->id);
    if (k->ent) h = str_h(str_h(h ^ 0x5bd1e995, &k->ent->type), &k->ent->id);
    if (k->type) h = str_h(h ^ 0x27d4eb2f, k->type);
    return h;
}

/* The options of one policy, most specific first.  Returns the number of
 * options; an `action in []` policy has none (it matches no request). */
static uint32_t ix_options(const dw_policy *p, ixopt *opt, ixkey *pool, uint32_t cap)
{
    const dw_euid_lit *acts[64];
    uint32_t na = 0;
    bool action_any = p->action.kind == DW_SC_ANY;
    if (p->action.kind == DW_SC_EQ || p->action.kind == DW_SC_IN) acts[na++] = &p->action.target;
    else if (p->action.kind == DW_SC_IN_LIST) {
        if (p->action.nlist == 0) return 0;
        for (size_t i = 0; i < p->action.nlist && na < 64; i++) acts[na++] = &p->action.list[i];
        if (p->action.nlist > 64) action_any = true;    /* too long to file per action: treat as any */
    }
    if (action_any) na = 0;
    const dw_scope_con *pr[2] = { &p->principal, &p->resource };
    const uint8_t prv[2] = { 0, 2 };
    uint32_t no = 0, used = 0;
#define NEED(k) if (used + (k) > cap || no >= 8) return no
    for (int v = 0; v < 2; v++) {
        const dw_scope_con *sc = pr[v];
        bool ent = !sc->target_is_slot && (sc->kind == DW_SC_EQ || sc->kind == DW_SC_IN || sc->kind == DW_SC_IS_IN);
        if (!ent || !na) continue;
        NEED(na);
        opt[no] = (ixopt){ pool + used, na };
        for (uint32_t i = 0; i < na; i++) pool[used++] = (ixkey){ DW_IX_PAIR, prv[v], acts[i], &sc->target, NULL };
        no++;
    }
    for (int v = 0; v < 2; v++) {
        const dw_scope_con *sc = pr[v];
        if (sc->target_is_slot || !(sc->kind == DW_SC_EQ || sc->kind == DW_SC_IN || sc->kind == DW_SC_IS_IN)) continue;
        NEED(1);
        opt[no++] = (ixopt){ pool + used, 1 };
        pool[used++] = (ixkey){ DW_IX_ENTITY, prv[v], NULL, &sc->target, NULL };
    }
    if (na) {
        NEED(na);
        opt[no] = (ixopt){ pool + used, na };
        for (uint32_t i = 0; i < na; i++) pool[used++] = (ixkey){ DW_IX_ENTITY, 1, NULL, acts[i], NULL };
        no++;
    }
    for (int v = 0; v < 2; v++) {
        if (pr[v]->kind != DW_SC_IS) continue;
        NEED(1);
        opt[no++] = (ixopt){ pool + used, 1 };
        pool[used++] = (ixkey){ DW_IX_TYPE, prv[v], NULL, NULL, &pr[v]->is_type };
    }
    NEED(1);
    opt[no++] = (ixopt){ pool + used, 1 };
    pool[used++] = (ixkey){ DW_IX_ALWAYS, 0, NULL, NULL, NULL };
#undef NEED
    return no;
}

typedef struct ixcount { uint64_t *h; uint32_t *n; uint32_t cap; } ixcount;

static uint32_t *count_slot(ixcount *t, uint64_t h)
{
    uint32_t j = (uint32_t)h & (t->cap - 1);
    while (t->n[j] && t->h[j] != h) j = (j + 1) & (t->cap - 1);
    t->h[j] = h;
    return &t->n[j];
}

static void add_ix(compiler *c, const ixkey *k, uint32_t policy)
{
    dw_index_entry e = { .kind = k->kind, .var = k->var, .policy = policy };
    if (k->ent) { e.type_str = dw_emit_str(c, k->ent->type.s, k->ent->type.len); e.id_str = dw_emit_str(c, k->ent->id.s, k->ent->id.len); }
    if (k->type) e.type_str = dw_emit_str(c, k->type->s, k->type->len);
    if (k->act) { e.act_type_str = dw_emit_str(c, k->act->type.s, k->act->type.len); e.act_id_str = dw_emit_str(c, k->act->id.s, k->act->id.len); }
    if (dw_vec_push(&c->ixents, &e, sizeof e)) dw_compile_oom(c);
}

static void build_index(compiler *c)
{
    const dw_policy_set *ps = c->ps;
    enum { POOL = 8 * 64 + 8 };
    ixopt opt[8];
    ixkey *pool = malloc(POOL * sizeof *pool);
    ixcount t = { 0 };
    t.cap = 64;
    while (t.cap < ps->npolicies * 16 + 16) t.cap *= 2;
    t.h = calloc(t.cap, sizeof *t.h);
    t.n = calloc(t.cap, sizeof *t.n);
    if (!pool || !t.h || !t.n) { dw_compile_oom(c); goto out; }
    for (size_t i = 0; i < ps->npolicies; i++) {
        uint32_t no = ix_options(&ps->policies[i], opt, pool, POOL);
        for (uint32_t o = 0; o < no; o++)
            for (uint32_t k = 0; k < opt[o].n; k++) (*count_slot(&t, ixkey_hash(&opt[o].keys[k])))++;
    }
    for (size_t i = 0; i < ps->npolicies && !c->failed; i++) {
        uint32_t no = ix_options(&ps->policies[i], opt, pool, POOL);
        uint32_t best = 0;
        uint64_t best_cost = UINT64_MAX;
        for (uint32_t o = 0; o < no; o++) {
            /* a request probes about one key of a list option (its action),
             * so an option costs its most shared key */
            uint64_t cost = 0;
            for (uint32_t k = 0; k < opt[o].n; k++) {
                uint64_t c = *count_slot(&t, ixkey_hash(&opt[o].keys[k]));
                if (c > cost) cost = c;
            }
            if (cost < best_cost) { best_cost = cost; best = o; }
        }
        for (uint32_t k = 0; no && k < opt[best].n; k++) add_ix(c, &opt[best].keys[k], (uint32_t)i);
    }
out:
    free(pool);
    free(t.h);
    free(t.n);
}

/* scope && when && !unless ... ending in RET: each conjunct but the last is
 * followed by AND -> end.  scope_only stops after the scope. */
static void emit_conjunction(compiler *c, const dw_policy *p, bool scope_only)
{
    uint32_t *jumps = calloc(7 + p->nclauses, sizeof *jumps), nj = 0;   /* scope: up to 2 each */
    if (!jumps) { dw_compile_oom(c); return; }
    compile_scope(c, &p->principal, 0, jumps, &nj);
    compile_scope(c, &p->action, 1, jumps, &nj);
    compile_scope(c, &p->resource, 2, jumps, &nj);
    uint32_t at = here(c);
    if (!scope_only && dw_vec_push(&c->cond_marks, &at, sizeof at)) dw_compile_oom(c);
    for (size_t i = 0; i < p->nclauses && !scope_only; i++) {
        uint32_t mark[2] = { here(c), 0 };
        compile_expr(c, p->clauses[i].body);
        mark[1] = here(c);
        if (dw_vec_push(&c->cond_marks, &mark[0], sizeof *mark) || dw_vec_push(&c->cond_marks, &mark[1], sizeof *mark))
            dw_compile_oom(c);
        if (!p->clauses[i].is_when) emit(c, DW_OP_NOT, 0);
        jumps[nj++] = emit(c, DW_OP_AND, 0);
    }
    if (nj == 0) {
        emit(c, DW_OP_CONST, dw_emit_const(c, dw_bool(true)));
    } else {
        /* the last AND is unnecessary: drop it, keep the value (checked Bool by RET) */
        c->code.n--;
        c->depth++;
        nj--;
    }
    for (uint32_t i = 0; i < nj; i++) patch(c, jumps[i], here(c));
    emit(c, DW_OP_RET, 0);
    free(jumps);
}

static void compile_policy(compiler *c, const dw_policy *p, uint32_t index, const char *prefix)
{
    dw_policy_code pc = { 0 };
    pc.effect = p->effect == DW_FORBID ? DW_EFFECT_FORBID : DW_EFFECT_PERMIT;
    pc.entry = here(c);
    pc.src_line = p->loc.line;
    pc.src_col = p->loc.col;
    /* the parser keeps byte offsets; the line of the effect keyword comes from the text */
    const dw_source *src = c->ps->src;
    if (src && src->text && p->effect_loc.off < src->len && (p->effect_loc.off || p->effect_loc.end)) {
        dw_loc at = dw_loc_from(src, c->src_cursor, p->effect_loc.off, p->effect_loc.end);
        c->src_cursor = at;
        pc.src_line = at.line;
        pc.src_col = at.col;
    }
    char idbuf[64];
    int n = p->id.len ? (int)p->id.len : snprintf(idbuf, sizeof idbuf, "%s%u", prefix, index);
    pc.id.s = dw_arena_memdup(&c->prog->arena, p->id.len ? p->id.s : idbuf, (size_t)n);
    pc.id.len = (size_t)n;
    if (p->nannots) {
        pc.annots = dw_arena_alloc(&c->prog->arena, p->nannots * sizeof *pc.annots);
        if (!pc.annots) dw_compile_oom(c);
        else for (size_t i = 0; i < p->nannots; i++) {
            pc.annots[i].key.s = dw_arena_memdup(&c->prog->arena, p->annots[i].key.s, p->annots[i].key.len);
            pc.annots[i].key.len = p->annots[i].key.len;
            pc.annots[i].value.s = dw_arena_memdup(&c->prog->arena, p->annots[i].value.s, p->annots[i].value.len);
            pc.annots[i].value.len = p->annots[i].value.len;
        }
        pc.nannots = (uint32_t)p->nannots;
    }
    c->depth = c->max_depth = 0;
    c->cur_policy = index;
    pc.first_leaf = c->leaves.n;
    if (c->prog->cond_first) c->prog->cond_first[index] = c->cond_marks.n;
    pc.first_pcall = c->pcalls.n;
    c->leaf_ordinal = 0;
    emit_conjunction(c, p, false);
    pc.end = here(c);
    pc.nleaves = c->leaves.n - pc.first_leaf;
    pc.npcalls = c->pcalls.n - pc.first_pcall;
    if (pc.nleaves || pc.npcalls) {
        /* the scope alone, so the engine knows whose leaves to evaluate */
        pc.scope_entry = here(c);
        c->depth = 0;
        emit_conjunction(c, p, true);
        pc.scope_end = here(c);
    }
    pc.max_stack = (uint32_t)c->max_depth;
    dw_policy_code *slot = &c->prog->policies[index];
    *slot = pc;
    if (pc.max_stack > c->prog->max_stack) c->prog->max_stack = pc.max_stack;
}

static void *to_arena(compiler *c, vec *v, size_t size)
{
    if (!v->n) return NULL;
    void *p = dw_arena_alloc(&c->prog->arena, (size_t)v->n * size);
    if (!p) { dw_compile_oom(c); return NULL; }
    memcpy(p, v->p, (size_t)v->n * size);
    return p;
}

dw_program *dw_compile(const dw_policy_set *ps, const dw_compile_options *opt, dw_diags *diags)
{
    compiler c = { .ps = ps, .diags = diags, .opt = opt, .hoisted_names_reserved = dw_set_hoists(ps) };
    c.prog = calloc(1, sizeof *c.prog);
    if (!c.prog) return NULL;
    dw_arena_init(&c.prog->arena, 64 * 1024);
    const char *prefix = opt && opt->id_prefix ? opt->id_prefix : "policy";
    c.prog->npolicies = (uint32_t)ps->npolicies;
    c.prog->policies = ps->npolicies ? dw_arena_alloc(&c.prog->arena, ps->npolicies * sizeof *c.prog->policies) : NULL;
    if (ps->npolicies && !c.prog->policies) c.failed = true;
    c.prog->cond_first = dw_arena_alloc(&c.prog->arena, (ps->npolicies + 1) * sizeof *c.prog->cond_first);
    if (!c.prog->cond_first) c.failed = true;
    for (size_t i = 0; i < ps->npolicies && !c.failed; i++) compile_policy(&c, &ps->policies[i], (uint32_t)i, prefix);
    if (!c.failed) build_index(&c);
    if (!c.failed) {
        c.prog->code = to_arena(&c, &c.code, sizeof(uint32_t)); c.prog->ncode = c.code.n;
        c.prog->consts = to_arena(&c, &c.consts, sizeof(dw_value)); c.prog->nconsts = c.consts.n;
        c.prog->strs = to_arena(&c, &c.strs, sizeof(dw_str)); c.prog->nstrs = c.strs.n;
        c.prog->pats = to_arena(&c, &c.pats, sizeof(dw_like_pattern)); c.prog->npats = c.pats.n;
        c.prog->keylists = to_arena(&c, &c.keylists, sizeof(dw_keylist)); c.prog->nkeylists = c.keylists.n;
        c.prog->keyidx = to_arena(&c, &c.keyidx, sizeof(uint32_t)); c.prog->nkeyidx = c.keyidx.n;
        c.prog->ixents = to_arena(&c, &c.ixents, sizeof(dw_index_entry)); c.prog->nixents = c.ixents.n;
        c.prog->cond_first[ps->npolicies] = c.cond_marks.n;
        c.prog->cond_marks = to_arena(&c, &c.cond_marks, sizeof(uint32_t));
        dw_temporal_tables *t = &c.prog->temporal;
        t->tfs = to_arena(&c, &c.tfs, sizeof(dw_tf)); t->ntfs = c.tfs.n;
        t->tpatterns = to_arena(&c, &c.tpatterns, sizeof(dw_tpattern)); t->ntpatterns = c.tpatterns.n;
        t->tterms = to_arena(&c, &c.tterms, sizeof(dw_tterm)); t->ntterms = c.tterms.n;
        t->targs = to_arena(&c, &c.targs, sizeof(uint32_t)); t->ntargs = c.targs.n;
        t->taggs = to_arena(&c, &c.taggs, sizeof(dw_tagg)); t->ntaggs = c.taggs.n;
        t->aggvars = to_arena(&c, &c.aggvars, sizeof(uint16_t)); t->naggvars = c.aggvars.n;
        t->leaves = to_arena(&c, &c.leaves, sizeof(dw_tleaf)); t->nleaves = c.leaves.n;
        dw_provider_tables *pt = &c.prog->provider;
        pt->types = to_arena(&c, &c.ptypes, sizeof(dw_ptype)); pt->ntypes = c.ptypes.n;
        pt->fields = to_arena(&c, &c.pfields, sizeof(dw_pfield)); pt->nfields = c.pfields.n;
        pt->args = to_arena(&c, &c.pargs, sizeof(dw_parg)); pt->nargs = c.pargs.n;
        pt->segs = to_arena(&c, &c.psegs, sizeof(uint32_t)); pt->nsegs = c.psegs.n;
        pt->steps = to_arena(&c, &c.psteps, sizeof(dw_pstep)); pt->nsteps = c.psteps.n;
        pt->calls = to_arena(&c, &c.pcalls, sizeof(dw_pcall)); pt->ncalls = c.pcalls.n;
        c.prog->leaf_var_names = to_arena(&c, &c.var_names, sizeof(dw_str));
        c.prog->leaf_var_first = c.var_first.n == c.leaves.n ? to_arena(&c, &c.var_first, sizeof(uint32_t)) : NULL;
        for (uint32_t i = 0; i < t->nleaves; i++)
            if (t->leaves[i].reach > c.prog->max_reach) c.prog->max_reach = t->leaves[i].reach;
        if (dw_program_prepare(c.prog)) c.failed = true;
    }
    free(c.code.p); free(c.consts.p); free(c.strs.p); free(c.pats.p);
    free(c.keylists.p); free(c.keyidx.p); free(c.ixents.p); free(c.str_slots);
    free(c.tfs.p); free(c.tpatterns.p); free(c.tterms.p); free(c.targs.p);
    free(c.taggs.p); free(c.aggvars.p); free(c.leaves.p); free(c.cond_marks.p);
    free(c.ptypes.p); free(c.pfields.p); free(c.pargs.p); free(c.psegs.p); free(c.psteps.p); free(c.pcalls.p);
    free(c.var_names.p); free(c.var_first.p);
    if (c.failed) {
        if (diags->nerrors == 0) { dw_loc l0 = { 1, 1, 0, 0 }; dw_error(diags, ps->src, l0, "out of memory while compiling"); }
        dw_program_free(c.prog);
        return NULL;
    }
    return c.prog;
}
