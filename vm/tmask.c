/* tmask.c - the binding masks of temporal formulas (vm/tmask.h): per
 * formula, the slots its rows may bind and the slots it mentions, which
 * decide when teval.c's boolean mode (holds) may stand in for rel. */
#include "teval.h"
#include "tmask.h"

typedef struct dw_tmaskctx {
    const dw_temporal_tables *t;
    uint64_t *m;
    uint8_t *st;
    uint32_t depth;
    int err;
} dw_tmaskctx;

static int slot_bit(uint32_t slot, uint64_t *bit)
{
    if (slot >= DW_TEMPORAL_MAX_VARS) return -1;
    *bit = (uint64_t)1 << slot;
    return 0;
}

static int mask_formula(dw_tmaskctx *mc, uint32_t fi, uint64_t *bind, uint64_t *men);

static int mask_term(dw_tmaskctx *mc, uint32_t ti, uint64_t *men)
{
    const dw_temporal_tables *t = mc->t;
    if (ti >= t->ntterms || ++mc->depth > DW_TEVAL_MAX_DEPTH) return -1;
    const dw_tterm *tt = &t->tterms[ti];
    uint64_t m = 0, bit, b2, m2;
    switch ((dw_tt_kind)tt->kind) {
    case DW_TT_CONST: case DW_TT_CONTEXT: case DW_TT_PRINCIPAL: case DW_TT_RESOURCE: case DW_TT_WILD:
        break;
    case DW_TT_VAR:
        if (slot_bit(tt->a, &bit)) return -1;
        m = bit;
        break;
    case DW_TT_ARRAY:
        if (tt->n > t->ntargs || tt->a > t->ntargs - tt->n) return -1;
        for (uint32_t k = 0; k < tt->n; k++) {
            if (mask_term(mc, t->targs[tt->a + k], &m2)) return -1;
            m |= m2;
        }
        break;
    case DW_TT_COUNT: case DW_TT_SUM: {
        if (tt->a >= t->ntaggs) return -1;
        const dw_tagg *g = &t->taggs[tt->a];
        if (g->nvars > t->naggvars || g->first_var > t->naggvars - g->nvars) return -1;
        if (mask_formula(mc, g->body, &b2, &m)) return -1;
        for (uint32_t k = 0; k < g->nvars; k++) {
            if (slot_bit(t->aggvars[g->first_var + k], &bit)) return -1;
            m |= bit;
        }
        if (tt->kind == DW_TT_SUM) {
            if (slot_bit(g->sum_var, &bit)) return -1;
            m |= bit;
        }
        break;
    }
    default:
        return -1;
    }
    mc->depth--;
    *men = m;
    return 0;
}

/* binds: slots f's rows may bind (an over-approximation); men: slots whose
 * value in ρ may change f's rows (all variables under f). */
static int mask_formula(dw_tmaskctx *mc, uint32_t fi, uint64_t *bind, uint64_t *men)
{
    const dw_temporal_tables *t = mc->t;
    if (fi >= t->ntfs) return -1;
    if (mc->st[fi] == 2) { *bind = mc->m[2 * (size_t)fi]; *men = mc->m[2 * (size_t)fi + 1]; return 0; }
    if (mc->st[fi] == 1 || ++mc->depth > DW_TEVAL_MAX_DEPTH) return -1;   /* cycle or too deep */
    mc->st[fi] = 1;
    const dw_tf *f = &t->tfs[fi];
    uint64_t b = 0, m = 0, ba, ma, bb, mb, bit;
    switch ((dw_tf_kind)f->kind) {
    case DW_TF_PRED:
        if (f->n > t->ntpatterns || f->first > t->ntpatterns - f->n) return -1;
        for (uint32_t k = 0; k < f->n; k++) {
            uint32_t ti = t->tpatterns[f->first + k].term;
            if (mask_term(mc, ti, &ma)) return -1;
            m |= ma;
            if (t->tterms[ti].kind == DW_TT_VAR) b |= ma;
        }
        break;
    case DW_TF_AND:
        if (mask_formula(mc, f->a, &ba, &ma) || mask_formula(mc, f->b, &bb, &mb)) return -1;
        b = ba | bb; m = ma | mb;
        break;
    case DW_TF_NOT:
        if (mask_formula(mc, f->a, &ba, &m)) return -1;
        break;
    case DW_TF_FORMERLY: case DW_TF_PREVIOUS:
        if (mask_formula(mc, f->a, &b, &m)) return -1;
        break;
    case DW_TF_SINCE:           /* only the anchor binds */
        if (mask_formula(mc, f->a, &ba, &ma) || mask_formula(mc, f->b, &bb, &mb)) return -1;
        b = bb; m = ma | mb;
        break;
    case DW_TF_EXISTS:
        if (slot_bit(f->var, &bit) || mask_formula(mc, f->a, &ba, &m)) return -1;
        b = ba & ~bit; m |= bit;
        break;
    case DW_TF_TP:
        if (slot_bit(f->var, &bit)) return -1;
        b = m = bit;
        break;
    case DW_TF_CMP:
        if (mask_term(mc, f->a, &ma) || mask_term(mc, f->b, &mb)) return -1;
        m = ma | mb;
        if (f->op == DW_TC_OP_EQ) {
            if (t->tterms[f->a].kind == DW_TT_VAR) b |= ma;
            if (t->tterms[f->b].kind == DW_TT_VAR) b |= mb;
        }
        break;
    default:
        return -1;
    }
    mc->depth--;
    mc->st[fi] = 2;
    mc->m[2 * (size_t)fi] = b;
    mc->m[2 * (size_t)fi + 1] = m;
    *bind = b; *men = m;
    return 0;
}

int dw_teval_masks(const dw_temporal_tables *t, dw_arena *a, const uint64_t **out)
{
    size_t n = t->ntfs ? t->ntfs : 1;
    dw_tmaskctx mc = { .t = t };
    mc.m = dw_arena_alloc(a, 2 * n * sizeof *mc.m);
    mc.st = dw_arena_alloc(a, n);
    if (!mc.m || !mc.st) return -1;
    for (uint32_t f = 0; f < t->ntfs; f++) {
        uint64_t b, m;
        mc.depth = 0;
        if (mask_formula(&mc, f, &b, &m)) return -1;
    }
    *out = mc.m;
    return 0;
}

int dw_tmask_formula(const dw_temporal_tables *t, uint64_t *m, uint8_t *st, uint32_t fi, uint64_t *bind, uint64_t *men)
{
    dw_tmaskctx mc = { .t = t, .m = m, .st = st };
    return mask_formula(&mc, fi, bind, men);
}
