/* tprint.c - see tprint.h.  Bounded: indices out of range print `?` and
 * nesting beyond PRINT_DEPTH prints `…` (artifacts are verified, but a
 * printer never trusts). */
#include "tprint.h"
#include <inttypes.h>

enum { PRINT_DEPTH = 64 };

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

static void formula(const dw_program *p, uint32_t fi, unsigned depth, FILE *out);

static void term(const dw_program *p, uint32_t ti, unsigned depth, FILE *out)
{
    const dw_temporal_tables *t = &p->temporal;
    if (ti >= t->ntterms) { fputc('?', out); return; }
    if (depth > PRINT_DEPTH) { fputs("…", out); return; }
    const dw_tterm *tt = &t->tterms[ti];
    switch (tt->kind) {
    case DW_TT_CONST: if (tt->a < p->nconsts) dw_value_print(out, &p->consts[tt->a]); else fputc('?', out); break;
    case DW_TT_VAR: fprintf(out, "v%u", tt->a); break;
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
            if (tt->a + k < t->ntargs) term(p, t->targs[tt->a + k], depth + 1, out);
            else fputc('?', out);
        }
        fputc(']', out);
        break;
    case DW_TT_COUNT: case DW_TT_SUM: fputc('(', out); dw_tagg_print(p, tt->a, out); fputc(')', out); break;
    default: fputc('?', out);
    }
}

void dw_tagg_print(const dw_program *p, uint32_t agg, FILE *out)
{
    const dw_temporal_tables *t = &p->temporal;
    if (agg >= t->ntaggs) { fputc('?', out); return; }
    const dw_tagg *g = &t->taggs[agg];
    bool sum = false;
    for (uint32_t k = 0; k < t->ntterms && !sum; k++) sum = t->tterms[k].kind == DW_TT_SUM && t->tterms[k].a == agg;
    if (sum) fprintf(out, "sum v%u for (", g->sum_var);
    else fputs("count for (", out);
    for (uint32_t k = 0; k < g->nvars; k++)
        if (g->first_var + k < t->naggvars) fprintf(out, "%sv%u", k ? ", " : "", t->aggvars[g->first_var + k]);
    fputs("). where ", out);
    formula(p, g->body, 1, out);
}

static const char *const cmp_ops[] = { "==", "!=", "<", "<=", ">", ">=" };

static void formula(const dw_program *p, uint32_t fi, unsigned depth, FILE *out)
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
                term(p, t->tpatterns[f->first + k].term, depth + 1, out);
            }
            fputs(" }", out);
        }
        break;
    case DW_TF_AND: fputc('(', out); formula(p, f->a, depth + 1, out); fputs(" && ", out); formula(p, f->b, depth + 1, out); fputc(')', out); break;
    case DW_TF_NOT: fputc('!', out); formula(p, f->a, depth + 1, out); break;
    case DW_TF_FORMERLY: case DW_TF_PREVIOUS:
        fputs(f->kind == DW_TF_FORMERLY ? "formerly within " : "previous within ", out);
        dw_twindow_print(f->window, out);
        fputs(" (", out); formula(p, f->a, depth + 1, out); fputc(')', out);
        break;
    case DW_TF_SINCE:
        fputc('(', out); formula(p, f->a, depth + 1, out); fputs(" since within ", out); dw_twindow_print(f->window, out);
        fputc(' ', out); formula(p, f->b, depth + 1, out); fputc(')', out);
        break;
    case DW_TF_EXISTS: fprintf(out, "exists (v%u). ", f->var); formula(p, f->a, depth + 1, out); break;
    case DW_TF_TP: fprintf(out, "tp(v%u)", f->var); break;
    case DW_TF_CMP:
        term(p, f->a, depth + 1, out);
        fprintf(out, " %s ", f->op < 6 ? cmp_ops[f->op] : "?");
        term(p, f->b, depth + 1, out);
        break;
    default: fputc('?', out);
    }
}

void dw_tleaf_print(const dw_program *p, uint32_t leaf, FILE *out)
{
    if (leaf >= p->temporal.nleaves) { fputc('?', out); return; }
    formula(p, p->temporal.leaves[leaf].root, 0, out);
}
