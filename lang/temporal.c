/* temporal.c - parser and printer for temporal bodies (dogwood.md §6). */
#include "tast.h"
#include "strlit.h"
#include <string.h>

dw_temporal *dw_temporal_parse(dw_arena *a, const dw_source *src, dw_diags *diags,
                               uint32_t body_off, uint32_t body_len, dw_loc loc, dw_tmode mode)
{
    dw_temporal *t = dw_arena_alloc(a, sizeof *t);
    if (!t) return NULL;
    t->text.s = dw_arena_memdup(a, src->text + body_off, body_len);
    if (!t->text.s) return NULL;
    t->text.len = body_len;
    t->body_off = body_off;
    t->loc = loc;
    return t;
}

void dw_tnode_print(FILE *out, const dw_tnode *n) { fputs("?", out); }

void dw_temporal_print(FILE *out, const dw_temporal *t)
{
    fputs("(temporal ", out);
    dw_str_print_quoted(out, t->text.s, t->text.len);
    fputc(')', out);
}
