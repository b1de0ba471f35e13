/* retain.c - which events a temporal leaf can ever need (vm/retain.h). */
#include "retain.h"
#include "../stdlib/bytes.h"
#include "ident_hash.h"
#include "teval.h"             /* dw_tval_eq: predicate matching's equality */
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 1024

/* The abstract value of a formula at a dropped event of identity X. */
typedef struct absval { bool never, always, insens; } absval;

typedef struct actx {
    const dw_temporal_tables *t;
    const dw_str *strs; uint32_t nstrs;
    const dw_tf *x;          /* a predicate of identity X, or NULL: an identity no predicate names */
    uint32_t depth;
    bool bad;                /* malformed or too deep: keep everything */
    absval *memo;            /* per formula, for this X (tables may share subformulas) */
    uint8_t *done;           /* per formula: 0 not yet, 1 in progress, 2 memo set */
    uint8_t *tdone;          /* per term: 0 not yet, 1 in progress, 2 insensitive, 3 not */
} actx;

static const absval UNKNOWN = { false, false, false };

static bool str_eq(const actx *c, uint32_t a, uint32_t b)
{
    if (a >= c->nstrs || b >= c->nstrs) return false;
    return dw_str_eq(c->strs[a], c->strs[b]);
}

static bool same_identity(const actx *c, const dw_tf *p, const dw_tf *q)
{
    return str_eq(c, p->type_str, q->type_str) && str_eq(c, p->id_str, q->id_str) && str_eq(c, p->kind_str, q->kind_str);
}

static absval formula(actx *c, uint32_t fi);

/* A term is insensitive when every aggregate under it is (an aggregate
 * counts distinct projected rows of its body at the current event). */
static bool term_insens(actx *c, uint32_t ti)
{
    const dw_temporal_tables *t = c->t;
    if (ti >= t->ntterms || c->tdone[ti] == 1 || ++c->depth > MAX_DEPTH) { c->bad = true; return false; }
    if (c->tdone[ti] >= 2) { c->depth--; return c->tdone[ti] == 2; }
    c->tdone[ti] = 1;
    const dw_tterm *tt = &t->tterms[ti];
    bool ok = true;
    switch ((dw_tt_kind)tt->kind) {
    case DW_TT_CONST: case DW_TT_VAR: case DW_TT_CONTEXT: case DW_TT_PRINCIPAL: case DW_TT_RESOURCE: case DW_TT_WILD:
        break;
    case DW_TT_ARRAY:
        if (tt->n > t->ntargs || tt->a > t->ntargs - tt->n) { c->bad = true; return false; }
        for (uint32_t k = 0; k < tt->n && ok; k++) ok = term_insens(c, t->targs[tt->a + k]);
        break;
    case DW_TT_COUNT: case DW_TT_SUM:
        if (tt->a >= t->ntaggs) { c->bad = true; return false; }
        ok = formula(c, t->taggs[tt->a].body).insens;
        break;
    default:
        c->bad = true;
        return false;
    }
    c->depth--;
    c->tdone[ti] = ok ? 2 : 3;
    return ok;
}

static absval formula(actx *c, uint32_t fi)
{
    const dw_temporal_tables *t = c->t;
    if (c->bad || fi >= t->ntfs || c->done[fi] == 1 || ++c->depth > MAX_DEPTH) { c->bad = true; return UNKNOWN; }
    if (c->done[fi] == 2) { c->depth--; return c->memo[fi]; }
    c->done[fi] = 1;
    const dw_tf *f = &t->tfs[fi];
    absval r = UNKNOWN, a, b;
    switch ((dw_tf_kind)f->kind) {
    case DW_TF_PRED:         /* reads only the event it is evaluated at */
        r = (absval){ .never = !(c->x && same_identity(c, f, c->x)), .always = false, .insens = true };
        break;
    case DW_TF_AND:
        a = formula(c, f->a); b = formula(c, f->b);
        r = (absval){ a.never || b.never, a.always && b.always, a.insens && b.insens };
        break;
    case DW_TF_NOT:          /* binds nothing: holds iff its operand does not */
        a = formula(c, f->a);
        r = (absval){ a.always, a.never, a.insens };
        break;
    case DW_TF_FORMERLY:     /* a union over the window: a dropped witness must be impossible */
        a = formula(c, f->a);
        r = (absval){ false, false, a.insens && a.never };
        break;
    case DW_TF_PREVIOUS:     /* index-based: dropping the event before changes what it reads */
        formula(c, f->a);
        r = UNKNOWN;
        break;
    case DW_TF_SINCE:        /* a (left) must hold at every event after the anchor b */
        a = formula(c, f->a); b = formula(c, f->b);
        r = (absval){ false, false, a.insens && b.insens && b.never && a.always };
        break;
    case DW_TF_EXISTS:
        r = formula(c, f->a);
        break;
    case DW_TF_TP:           /* renumbered in order with the kept events */
        r = (absval){ false, false, true };
        break;
    case DW_TF_CMP:
        r = (absval){ false, false, term_insens(c, f->a) && term_insens(c, f->b) };
        break;
    default:
        c->bad = true;
        return UNKNOWN;
    }
    c->depth--;
    c->done[fi] = 2;
    c->memo[fi] = r;
    return r;
}

/* The predicates of the formulas and terms reachable from fi (marks in seen). */
static void collect(const dw_temporal_tables *t, uint32_t fi, uint8_t *seen, uint8_t *tseen, uint32_t depth, bool *bad);

static void collect_term(const dw_temporal_tables *t, uint32_t ti, uint8_t *seen, uint8_t *tseen, uint32_t depth, bool *bad)
{
    if (ti >= t->ntterms || depth > MAX_DEPTH) { *bad = true; return; }
    if (tseen[ti]) return;
    tseen[ti] = 1;
    const dw_tterm *tt = &t->tterms[ti];
    if (tt->kind == DW_TT_ARRAY) {
        if (tt->n > t->ntargs || tt->a > t->ntargs - tt->n) { *bad = true; return; }
        for (uint32_t k = 0; k < tt->n; k++) collect_term(t, t->targs[tt->a + k], seen, tseen, depth + 1, bad);
    } else if (tt->kind == DW_TT_COUNT || tt->kind == DW_TT_SUM) {
        if (tt->a >= t->ntaggs) { *bad = true; return; }
        collect(t, t->taggs[tt->a].body, seen, tseen, depth + 1, bad);
    }
}

static void collect(const dw_temporal_tables *t, uint32_t fi, uint8_t *seen, uint8_t *tseen, uint32_t depth, bool *bad)
{
    if (fi >= t->ntfs || depth > MAX_DEPTH) { *bad = true; return; }
    if (seen[fi]) return;
    seen[fi] = 1;
    const dw_tf *f = &t->tfs[fi];
    switch ((dw_tf_kind)f->kind) {
    case DW_TF_AND: case DW_TF_SINCE:
        collect(t, f->a, seen, tseen, depth + 1, bad);
        collect(t, f->b, seen, tseen, depth + 1, bad);
        break;
    case DW_TF_NOT: case DW_TF_FORMERLY: case DW_TF_PREVIOUS: case DW_TF_EXISTS:
        collect(t, f->a, seen, tseen, depth + 1, bad);
        break;
    case DW_TF_CMP:
        collect_term(t, f->a, seen, tseen, depth + 1, bad);
        collect_term(t, f->b, seen, tseen, depth + 1, bad);
        break;
    default:
        break;
    }
}


static bool dup_bytes(dw_arena *a, const dw_str *in, dw_str *out)
{
    char *c = dw_arena_memdup(a, in->s, in->len);
    *out = (dw_str){ c, in->len };
    return c != NULL;
}

/* The identity of predicate p with the constant patterns of every
 * predicate of that identity under the leaf (marked in seen). */
static int add_id(dw_retain_leaf *l, const actx *c, const uint8_t *seen, const dw_tf *p, const dw_value *consts,
                  uint32_t nconsts)
{
    const dw_temporal_tables *t = c->t;
    dw_arena *a = l->arena;
    dw_retain_id *n = realloc(l->ids, (l->nids + 1) * sizeof *n);
    if (!n) return -1;
    l->ids = n;
    dw_retain_id *d = &l->ids[l->nids];
    memset(d, 0, sizeof *d);
    if (!dup_bytes(a, &c->strs[p->type_str], &d->atype) || !dup_bytes(a, &c->strs[p->id_str], &d->aid) ||
        !dup_bytes(a, &c->strs[p->kind_str], &d->kind))
        return -1;
    uint32_t np = 0;
    for (uint32_t fi = 0; fi < t->ntfs; fi++) np += seen[fi] && t->tfs[fi].kind == DW_TF_PRED && same_identity(c, &t->tfs[fi], p);
    if (!(d->preds = dw_arena_alloc(a, np * sizeof *d->preds))) return -1;
    for (uint32_t fi = 0; fi < t->ntfs; fi++) {
        const dw_tf *q = &t->tfs[fi];
        if (!seen[fi] || q->kind != DW_TF_PRED || !same_identity(c, q, p)) continue;
        if (q->n > t->ntpatterns || q->first > t->ntpatterns - q->n) return -1;
        dw_retain_pred *rp = &d->preds[d->npreds++];
        if (!(rp->pats = dw_arena_alloc(a, (q->n ? q->n : 1) * sizeof *rp->pats))) return -1;
        for (uint32_t k = 0; k < q->n; k++) {
            const dw_tpattern *fp = &t->tpatterns[q->first + k];
            dw_retain_pat *x = &rp->pats[rp->npats++];
            if (fp->path_str >= c->nstrs || fp->term >= t->ntterms) return -1;
            if (!dup_bytes(a, &c->strs[fp->path_str], &x->path)) return -1;
            const dw_tterm *tt = &t->tterms[fp->term];
            if (tt->kind == DW_TT_CONST) {          /* otherwise any value may match (variables, context, ...) */
                if (tt->a >= nconsts) return -1;
                dw_value *v = dw_arena_alloc(a, sizeof *v);
                if (!v) return -1;
                x->value = dw_value_clone(a, &consts[tt->a], v) ? v : NULL;   /* uncopyable: any value */
            }
        }
    }
    l->nids++;
    return 0;
}

int dw_retain_leaf_build(const dw_temporal_tables *t, const dw_str *strs, uint32_t nstrs, const dw_value *consts,
                         uint32_t nconsts, uint32_t leaf, dw_retain_leaf *out)
{
    memset(out, 0, sizeof *out);
    out->keep_all = true;
    if (!t || leaf >= t->nleaves) return 0;
    out->identity = t->leaves[leaf].identity;
    out->reach = t->leaves[leaf].reach;
    uint8_t *seen = calloc(t->ntfs + 1, 1), *tseen = calloc(t->ntterms + 1, 1), *done = calloc(t->ntfs + 1, 1);
    uint8_t *tdone = calloc(t->ntterms + 1, 1);
    absval *memo = calloc(t->ntfs + 1, sizeof *memo);
    out->arena = malloc(sizeof *out->arena);
    if (!seen || !tseen || !done || !memo || !tdone || !out->arena) {
        free(seen); free(tseen); free(done); free(memo); free(tdone); free(out->arena);
        out->arena = NULL;
        return -1;
    }
    dw_arena_init(out->arena, 4096);
    bool bad = false;
    collect(t, t->leaves[leaf].root, seen, tseen, 0, &bad);
    actx c = { t, strs, nstrs, NULL, 0, bad, memo, done, tdone };
    /* events no predicate of the leaf can match */
    bool other_ok = formula(&c, t->leaves[leaf].root).insens && !c.bad;
    int rc = 0;
    if (other_ok) {
        out->keep_all = false;
        /* each named identity once: X's events may all be dropped when the
         * leaf is insensitive to them even where X's predicates match */
        for (uint32_t fi = 0; fi < t->ntfs && !rc; fi++) {
            const dw_tf *p = &t->tfs[fi];
            if (!seen[fi] || p->kind != DW_TF_PRED) continue;
            if (p->type_str >= nstrs || p->id_str >= nstrs || p->kind_str >= nstrs) { out->keep_all = true; break; }
            bool dup = false;
            for (uint32_t q = 0; q < fi && !dup; q++)
                dup = seen[q] && t->tfs[q].kind == DW_TF_PRED && same_identity(&c, &t->tfs[q], p);
            if (dup) continue;
            memset(done, 0, t->ntfs + 1);
            memset(tdone, 0, t->ntterms + 1);
            actx cx = { t, strs, nstrs, p, 0, false, memo, done, tdone };
            absval v = formula(&cx, t->leaves[leaf].root);
            if (!v.insens || cx.bad) rc = add_id(out, &cx, seen, p, consts, nconsts);
        }
    }
    free(seen);
    free(tseen);
    free(done);
    free(memo);
    free(tdone);
    if (rc) {
        dw_retain_leaf_free(out);
        *out = (dw_retain_leaf){ .identity = t->leaves[leaf].identity, .reach = t->leaves[leaf].reach, .keep_all = true };
    }
    return rc;
}

static bool id_eq(const dw_retain_id *d, const dw_event *ev)
{
    return dw_str_eq(d->atype, ev->atype) && dw_str_eq(d->aid, ev->aid) && dw_str_eq(d->kind, ev->kind);
}

/* Can predicate p (of ev's identity) match ev, under some environment? */
static bool pred_can_match(const dw_retain_pred *p, const dw_event *ev)
{
    for (uint32_t q = 0; q < p->npats; q++) {
        const dw_value *v = dw_record_path(&ev->logged, p->pats[q].path.s, p->pats[q].path.len);
        if (!v || (p->pats[q].value && !dw_tval_eq(p->pats[q].value, v))) return false;
    }
    return true;
}

/* Can some predicate of d match ev? */
static bool id_can_match(const dw_retain_id *d, const dw_event *ev)
{
    for (uint32_t k = 0; k < d->npreds; k++)
        if (pred_can_match(&d->preds[k], ev)) return true;
    return false;
}

bool dw_retain_leaf_needs(const dw_retain_leaf *l, const dw_event *ev)
{
    if (l->keep_all) return true;
    for (uint32_t k = 0; k < l->nids; k++)
        if (id_eq(&l->ids[k], ev) && id_can_match(&l->ids[k], ev)) return true;
    return false;
}

void dw_retain_leaf_free(dw_retain_leaf *l)
{
    if (l->arena) dw_arena_free(l->arena);
    free(l->arena);
    free(l->ids);
    l->arena = NULL;
    l->ids = NULL;
    l->nids = 0;
}

/* ---- the union ---- */

uint64_t dw_retain_ident_hash(const dw_event *ev)
{
    /* over program-defined keys: lookups of other keys only probe the
     * clusters the program's keys form, so agent input cannot lengthen
     * them (vm/ident_hash.h) */
    return dw_ident_hash(ev->atype, ev->aid, ev->kind);
}

/* The entry of identity d's (or ev's) in s: its slot, empty (key NULL) if none. */
static dw_retain_entry *entry_of(const dw_retain_set *s, uint64_t h, dw_str atype, dw_str aid, dw_str kind)
{
    uint32_t j = (uint32_t)h & (s->nslots - 1);
    while (s->slot[j].key && !(dw_str_eq(s->slot[j].key->atype, atype) && dw_str_eq(s->slot[j].key->aid, aid) &&
                               dw_str_eq(s->slot[j].key->kind, kind)))
        j = (j + 1) & (s->nslots - 1);
    return &s->slot[j];
}

static bool fieldless(const dw_retain_id *d)
{
    for (uint32_t k = 0; k < d->npreds; k++)
        if (d->preds[k].npats || d->preds[k].any_field) return false;
    return d->npreds > 0;
}

int dw_retain_set_build(dw_retain_set *s, const dw_retain_leaf *leaves, uint32_t n)
{
    memset(s, 0, sizeof *s);
    uint32_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (leaves[i].keep_all) s->keep_all = true;
        if (leaves[i].reach > s->reach) s->reach = leaves[i].reach;
        total += leaves[i].nids;
    }
    if (s->keep_all || !total) return 0;
    uint32_t ns = 8;
    while (ns < 2 * total) ns *= 2;
    s->slot = calloc(ns, sizeof *s->slot);
    s->ids = calloc(total, sizeof *s->ids);
    if (!s->slot || !s->ids) { dw_retain_set_free(s); s->keep_all = true; return -1; }
    s->nslots = ns;
    /* one entry per identity, with every leaf's needs of it: count, place, fill */
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t k = 0; k < leaves[i].nids; k++) {
                const dw_retain_id *d = &leaves[i].ids[k];
                dw_retain_entry *en = entry_of(s, dw_ident_hash(d->atype, d->aid, d->kind), d->atype, d->aid, d->kind);
                if (!en->key) *en = (dw_retain_entry){ .key = d, .fieldless = true };
                if (pass) en->ids[en->nids++] = d;
                else en->nids++;
                en->fieldless &= fieldless(d);
            }
        if (!pass) {
            uint32_t at = 0;
            for (uint32_t j = 0; j < ns; j++)
                if (s->slot[j].key) { s->slot[j].ids = s->ids + at; at += s->slot[j].nids; s->slot[j].nids = 0; }
        }
    }
    return 0;
}

static const dw_retain_entry *set_find(const dw_retain_set *s, const dw_event *ev, uint64_t ihash)
{
    if (!s->nslots) return NULL;
    const dw_retain_entry *en = entry_of(s, ihash, ev->atype, ev->aid, ev->kind);
    return en->key ? en : NULL;
}

bool dw_retain_set_needs(const dw_retain_set *s, const dw_event *ev)
{
    if (s->keep_all) return true;
    const dw_retain_entry *en = set_find(s, ev, dw_retain_ident_hash(ev));
    if (!en) return false;
    if (en->fieldless) return true;
    for (uint32_t k = 0; k < en->nids; k++)
        if (id_can_match(en->ids[k], ev)) return true;
    return false;
}

void dw_retain_set_free(dw_retain_set *s)
{
    free(s->slot);
    free(s->ids);
    memset(s, 0, sizeof *s);
}

/* dw_retain_entry_fields past its fieldless case (retain.h). */
int dw_retain_entry_fields_read(const void *id, const dw_event *ev, dw_str *paths, uint32_t cap, uint32_t *n)
{
    const dw_retain_entry *en = id;
    *n = 0;
    bool needed = false, whole = false;
    for (uint32_t i = 0; i < en->nids; i++) {
        const dw_retain_id *d = en->ids[i];
        for (uint32_t k = 0; k < d->npreds; k++) {
            const dw_retain_pred *p = &d->preds[k];
            if (!pred_can_match(p, ev)) continue;
            needed = true;
            whole |= p->any_field;
            for (uint32_t q = 0; q < p->npats && !whole; q++) {
                uint32_t r = 0;
                while (r < *n && !dw_str_eq(paths[r], p->pats[q].path)) r++;
                if (r < *n) continue;
                if (*n == cap) whole = true;
                else paths[(*n)++] = p->pats[q].path;
            }
        }
    }
    return !needed ? DW_RETAIN_NONE : whole ? DW_RETAIN_WHOLE : DW_RETAIN_FIELDS;
}

int dw_retain_set_fields(const dw_retain_set *s, const dw_event *ev, uint64_t ihash, dw_str *paths, uint32_t cap,
                         uint32_t *n, const void **id)
{
    *n = 0;
    *id = NULL;
    if (s->keep_all) return DW_RETAIN_WHOLE;
    const dw_retain_entry *en = set_find(s, ev, ihash);
    if (!en) return DW_RETAIN_NONE;
    int need = dw_retain_entry_fields(en, ev, paths, cap, n);
    if (need != DW_RETAIN_NONE) *id = en;
    return need;
}

/* ---- projection ---- */

#define PROJECT_DEPTH 32

/* How paths[0..n) use field f: 2 one names it, 1 some go through it (f a
 * record; their rests in sub[0..*ns), at most n), 0 none. */
static int field_use(const dw_field *f, const dw_str *paths, uint32_t n, dw_str *sub, uint32_t *ns)
{
    uint32_t m = 0;
    for (uint32_t q = 0; q < n; q++) {
        const dw_str *p = &paths[q];
        if (p->len < f->klen || memcmp(p->s, f->key, f->klen)) continue;
        if (p->len == f->klen) return 2;
        if (p->s[f->klen] != '.' || f->v.kind != DW_V_RECORD) continue;
        if (sub) sub[m] = (dw_str){ p->s + f->klen + 1, p->len - f->klen - 1 };
        m++;
    }
    if (ns) *ns = m;
    return m ? 1 : 0;
}

static bool project(dw_arena *a, const dw_value *rec, const dw_str *paths, uint32_t n, dw_value *out, int depth)
{
    *out = (dw_value){ .kind = DW_V_RECORD };
    if (rec->kind != DW_V_RECORD || depth > PROJECT_DEPTH) return false;
    if (!n) return true;                /* identity and time only */
    uint32_t keep = 0;
    for (uint32_t i = 0; i < rec->n; i++) keep += field_use(&rec->u.fields[i], paths, n, NULL, NULL) != 0;
    if (!keep) return true;
    dw_field *f = dw_arena_alloc_raw(a, keep * sizeof *f);
    dw_str sub[DW_RETAIN_PATHS_MAX];
    bool ok = f != NULL;
    uint32_t k = 0, ns;
    for (uint32_t i = 0; ok && i < rec->n; i++) {      /* in the record's order: still sorted */
        const dw_field *sf = &rec->u.fields[i];
        int use = field_use(sf, paths, n, sub, &ns);
        if (!use) continue;
        dw_field *d = &f[k++];
        *d = *sf;
        ok = (d->key = dw_arena_memdup(a, sf->key, sf->klen)) != NULL &&
             (use == 2 ? dw_value_clone(a, &sf->v, &d->v) : project(a, &sf->v, sub, ns, &d->v, depth + 1));
    }
    out->n = keep;
    out->u.fields = f;
    return ok;
}

bool dw_retain_project(dw_arena *a, const dw_value *rec, const dw_str *paths, uint32_t n, dw_value *out)
{
    return n <= DW_RETAIN_PATHS_MAX && project(a, rec, paths, n, out, 0);
}

