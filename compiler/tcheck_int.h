/* tcheck_int.h - what the two temporal passes share (tcheck.c: well-formedness, tcheck_schema.c: validation against the schema): the checker's state, its memory and text helpers, diagnostics, leaves and scope; internal, not part of the library's API. */
#ifndef DW_TCHECK_INT_H
#define DW_TCHECK_INT_H
#include "tcheck.h"
#include <setjmp.h>
#include "../lang/tast.h"

typedef struct pdiag { dw_loc loc; char *msg; const char *hint; size_t seq; } pdiag;
typedef struct bnd { dw_str name; const dw_tbinder *b; } bnd;

typedef struct tc {
    dw_arena a;
    jmp_buf oom;
    const dw_source *src;
    const char *pid;
    pdiag *dv; size_t dn, dcap;
    bnd *sc; size_t nsc, capsc;                      /* binders in scope */
    const dw_tbinder **bad; size_t nbad, capbad;     /* binders that failed 9.2/9.4 */
    dw_str *freed; size_t nfreed, capfreed;          /* free names reported in this leaf */
    bool deep;                                       /* "too deep" reported for this leaf */
    /* schema pass */
    const dw_schema *s;
    const dw_event_derivation *ev;
    const dw_action_decl **acts; size_t nacts; bool acts_known;
    int64_t maxw;
    dw_str maxw_text;
} tc;

/* Allocation failure unwinds to the pass entry (stdlib/arena.h). */
#define alloc(T, n) dw_arena_alloc_or_jump(&(T)->a, (n), &(T)->oom)
#define vfmt(T, f, ap) dw_arena_vprintf_or_jump(&(T)->a, &(T)->oom, (f), (ap))
#define fmt(T, ...) dw_arena_printf_or_jump(&(T)->a, &(T)->oom, __VA_ARGS__)

#define PS(x) (int)(x).len, (x).s

typedef void (*leaf_fn)(tc *T, const dw_tnode *root);
typedef struct tvec { const dw_tnode **v; size_t n, cap; } tvec;

/* tcheck.c: memory and text, diagnostics, policies and leaves, scope */
void *dw_tcheck_grow(tc *T, void *v, size_t n, size_t *cap, size_t size);
char *dw_tcheck_esc(tc *T, dw_str s);
const char *dw_tcheck_pred_text(tc *T, const dw_tnode *p);
void dw_tcheck_report(tc *T, dw_loc loc, const char *hint, const char *f, ...) __attribute__((format(printf, 4, 5)));
size_t dw_tcheck_flush(tc *T, dw_diags *diags);
const char *dw_tcheck_policy_id(tc *T, const dw_policy *p, size_t idx);
void dw_tcheck_each_leaf(tc *T, const dw_expr *e, leaf_fn fn, int d);
tvec dw_tcheck_conjuncts(tc *T, const dw_tnode *n, int d);
void dw_tcheck_push(tc *T, const dw_tbinder *b);
long dw_tcheck_lookup(const tc *T, dw_str name);

#endif
