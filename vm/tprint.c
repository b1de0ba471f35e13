/* tprint.c - see tprint.h.  Bounded: indices out of range print `?` and
 * nesting beyond PRINT_DEPTH prints `…` (artifacts are verified, but a
 * printer never trusts). */
#include "tprint.h"
#include <inttypes.h>

enum { PRINT_DEPTH = 64 };

/* The leaf being printed: its slots' names, when the compiler kept them. */
typedef struct names { const dw_str *v; uint32_t n; } names;

static names leaf_names(const dw_program *p, uint32_t leaf)
{
    names ns = { 0 };
    if (p->leaf_var_names && p->leaf_var_first && leaf < p->temporal.nleaves) {
        ns.v = p->leaf_var_names + p->leaf_var_first[leaf];
        ns.n = p->temporal.leaves[leaf].nvars;
    }
    return ns;
}

static void var(const names *ns, uint32_t slot, FILE *out)
{
    if (ns && slot < ns->n && ns->v[slot].len) fprintf(out, "%.*s", (int)ns->v[slot].len, ns->v[slot].s);
    else fprintf(out, "v%u", slot);
}

static void str(const dw_program *p, uint32_t k, FILE *out)
{
    if (k < p->nstrs) fprintf(out, "%.*s", (int)p->strs[k].len, p->strs[k].s);
    else fputc('?', out);
}

void dw_twindow_print(int64_t w, FILE *out)
{
    static const struct { int64_t s; char u; } units[] = { { 86400, 'd' }, { 3600, 'h' }, { 60, 'm' } };
    for (size_t i = 0; i < 3; i++)
        if (w && w % units[i].s == 0) { fprintf(out, "%" PRId64 "%c", w / units[i].s, units[i].u); return; }
    fprintf(out, "%" PRId64 "s", w);
}

static void formula(const dw_program *p, const names *ns, uint32_t fi, unsigned depth, FILE *out);
static void agg(const dw_program *p, const names *ns, uint32_t a, FILE *out);

static void term(const dw_program *p, const names *ns, uint32_t ti, unsigned depth, FILE *out)
{
    const dw_temporal_tables *t = &p->temporal;
    if (ti >= t->ntterms) { fputc('?', out); return; }
    if (depth > PRINT_DEPTH) { fputs("…", out); return; }
    const dw_tterm *tt = &t->tterms[ti];
    switch (tt->kind) {
    case DW_TT_CONST: if (tt->a < p->nconsts) dw_value_print(out, &p->consts[tt->a]); else fputc('?', out); break;
    case DW_TT_VAR: var(ns, tt->a, out); break;
    case DW_TT_CONTEXT: fputs("context.", out); str(p, tt->a, out); break;
    case DW_TT_PRINCIPAL: case DW_TT_RESOURCE:
        fputs(tt->kind == DW_TT_PRINCIPAL ? "principal" : "resource", out);
        if (tt->a < p->nstrs && p->strs[tt->a].len) { fputc('.', out); str(p, tt->a, out); }
        break;
    case DW_TT_WILD: fputc('_', out); break;
    case DW_TT_ARRAY:
        fputc('[', out);
        for (uint32_t k = 0; k < tt->n; k++) {
            if (k) fputs(", ", out);
            if (tt->a + k < t->ntargs) term(p, ns, t->targs[tt->a + k], depth + 1, out);
            else fputc('?', out);
        }
        fputc(']', out);
        break;
    case DW_TT_COUNT: case DW_TT_SUM: fputc('(', out); agg(p, ns, tt->a, out); fputc(')', out); break;
    default: fputc('?', out);
    }
}

static void agg(const dw_program *p, const names *ns, uint32_t a, FILE *out)
{
    const dw_temporal_tables *t = &p->temporal;
    if (a >= t->ntaggs) { fputc('?', out); return; }
    const dw_tagg *g = &t->taggs[a];
    bool sum = false;
    for (uint32_t k = 0; k < t->ntterms && !sum; k++) sum = t->tterms[k].kind == DW_TT_SUM && t->tterms[k].a == a;
    if (sum) { fputs("sum ", out); var(ns, g->sum_var, out); fputs(" for (", out); }
    else fputs("count for (", out);
    for (uint32_t k = 0; k < g->nvars; k++)
        if (g->first_var + k < t->naggvars) { if (k) fputs(", ", out); var(ns, t->aggvars[g->first_var + k], out); }
    fputs("). where ", out);
    formula(p, ns, g->body, 1, out);
}

/* the leaf an aggregate belongs to: the one whose formulas reach it (for its names) */
static bool reaches(const dw_program *p, uint32_t fi, uint32_t a, unsigned depth);

static bool term_reaches(const dw_program *p, uint32_t ti, uint32_t a, unsigned depth)
{
    const dw_temporal_tables *t = &p->temporal;
    if (ti >= t->ntterms || depth > PRINT_DEPTH) return false;
    const dw_tterm *tt = &t->tterms[ti];
    if (tt->kind == DW_TT_COUNT || tt->kind == DW_TT_SUM)
        return tt->a == a || (tt->a < t->ntaggs && reaches(p, t->taggs[tt->a].body, a, depth + 1));
    for (uint32_t k = 0; tt->kind == DW_TT_ARRAY && k < tt->n; k++)
        if (tt->a + k < t->ntargs && term_reaches(p, t->targs[tt->a + k], a, depth + 1)) return true;
    return false;
}

static bool reaches(const dw_program *p, uint32_t fi, uint32_t a, unsigned depth)
{
    const dw_temporal_tables *t = &p->temporal;
    if (fi >= t->ntfs || depth > PRINT_DEPTH) return false;
    const dw_tf *f = &t->tfs[fi];
    switch (f->kind) {
    case DW_TF_AND: case DW_TF_SINCE: return reaches(p, f->a, a, depth + 1) || reaches(p, f->b, a, depth + 1);
    case DW_TF_NOT: case DW_TF_FORMERLY: case DW_TF_PREVIOUS: case DW_TF_EXISTS: return reaches(p, f->a, a, depth + 1);
    case DW_TF_CMP: return term_reaches(p, f->a, a, depth + 1) || term_reaches(p, f->b, a, depth + 1);
    case DW_TF_PRED:
        for (uint32_t k = 0; k < f->n; k++)
            if (f->first + k < t->ntpatterns && term_reaches(p, t->tpatterns[f->first + k].term, a, depth + 1)) return true;
        return false;
    default: return false;
    }
}

void dw_tagg_print(const dw_program *p, uint32_t a, FILE *out)
{
    names ns = { 0 };
    for (uint32_t l = 0; l < p->temporal.nleaves && !ns.v; l++)
        if (reaches(p, p->temporal.leaves[l].root, a, 0)) ns = leaf_names(p, l);
    agg(p, &ns, a, out);
}

void dw_tslot_print(const dw_program *p, uint32_t leaf, uint32_t slot, FILE *out)
{
    names ns = leaf_names(p, leaf);
    var(&ns, slot, out);
}

static const char *const cmp_ops[] = { "==", "!=", "<", "<=", ">", ">=" };

static void formula(const dw_program *p, const names *ns, uint32_t fi, unsigned depth, FILE *out)
{
    const dw_temporal_tables *t = &p->temporal;
    if (fi >= t->ntfs) { fputc('?', out); return; }
    if (depth > PRINT_DEPTH) { fputs("…", out); return; }
    const dw_tf *f = &t->tfs[fi];
    switch (f->kind) {
    case DW_TF_PRED:
        str(p, f->type_str, out); fputs("::\"", out); str(p, f->id_str, out); fputs("\"::", out); str(p, f->kind_str, out);
        if (f->n) {
            fputs("{ ", out);
            for (uint32_t k = 0; k < f->n; k++) {
                if (k) fputs(", ", out);
                if (f->first + k >= t->ntpatterns) { fputc('?', out); continue; }
                str(p, t->tpatterns[f->first + k].path_str, out);
                fputs(": ", out);
                term(p, ns, t->tpatterns[f->first + k].term, depth + 1, out);
            }
            fputs(" }", out);
        }
        break;
    case DW_TF_AND: fputc('(', out); formula(p, ns, f->a, depth + 1, out); fputs(" && ", out); formula(p, ns, f->b, depth + 1, out); fputc(')', out); break;
    case DW_TF_NOT: fputc('!', out); formula(p, ns, f->a, depth + 1, out); break;
    case DW_TF_FORMERLY: case DW_TF_PREVIOUS:
        fputs(f->kind == DW_TF_FORMERLY ? "formerly within " : "previous within ", out);
        dw_twindow_print(f->window, out);
        fputs(" (", out); formula(p, ns, f->a, depth + 1, out); fputc(')', out);
        break;
    case DW_TF_SINCE:
        fputc('(', out); formula(p, ns, f->a, depth + 1, out); fputs(" since within ", out); dw_twindow_print(f->window, out);
        fputc(' ', out); formula(p, ns, f->b, depth + 1, out); fputc(')', out);
        break;
    case DW_TF_EXISTS: fputs("exists (", out); var(ns, f->var, out); fputs("). ", out); formula(p, ns, f->a, depth + 1, out); break;
    case DW_TF_TP: fputs("tp(", out); var(ns, f->var, out); fputc(')', out); break;
    case DW_TF_CMP:
        term(p, ns, f->a, depth + 1, out);
        fprintf(out, " %s ", f->op < 6 ? cmp_ops[f->op] : "?");
        term(p, ns, f->b, depth + 1, out);
        break;
    default: fputc('?', out);
    }
}

void dw_tleaf_print(const dw_program *p, uint32_t leaf, FILE *out)
{
    if (leaf >= p->temporal.nleaves) { fputc('?', out); return; }
    names ns = leaf_names(p, leaf);
    formula(p, &ns, p->temporal.leaves[leaf].root, 0, out);
}
