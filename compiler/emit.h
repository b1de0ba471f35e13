/* emit.h - the compiler's shared state, internal to compiler/: constant and
 * string pools, code buffer, and the helpers that fill them.  compile.c emits
 * Cedar expressions; tlower.c lowers temporal leaves into the same program. */
#ifndef DW_EMIT_H
#define DW_EMIT_H
#include "compile.h"
#include "../vm/temporal.h"

typedef struct vec { void *p; uint32_t n, cap; } vec;
int dw_vec_push(vec *v, const void *elem, size_t size);

typedef struct compiler {
    const dw_policy_set *ps;
    const dw_compile_options *opt;
    dw_diags *diags;
    dw_program *prog;          /* arena owner for constant data */
    vec code, consts, strs, pats, keylists, keyidx, ixents;
    /* temporal tables (vm/temporal.h) */
    vec tfs, tpatterns, tterms, targs, taggs, aggvars, leaves;
    vec cond_marks;            /* dw_program.cond_marks */
    /* provider call sites (vm/provider.h) */
    vec ptypes, pfields, pargs, psegs, psteps, pcalls;
    uint32_t leaf_ordinal;     /* k of the next hoisted leaf of the policy (temporal or provider, §14.3) */
    vec var_names, var_first;  /* dw_program.leaf_var_names, leaf_var_first (per leaf) */
    /* string interning: open addressing over strs indices (+1, 0 = empty) */
    uint32_t *str_slots; uint32_t str_cap;
    int depth, max_depth;      /* stack depth while emitting one policy */
    uint32_t cur_policy;       /* index of the policy being compiled */
    dw_loc src_cursor;         /* the last policy's effect location: lines are counted on from it */
    bool hoisted_names_reserved;   /* the set hoists something (§20 D4, dw_set_hoists) */
    bool failed;
} compiler;

void dw_compile_error(compiler *c, dw_loc loc, const char *hint, const char *msg);
void dw_compile_oom(compiler *c);
uint32_t dw_emit_const(compiler *c, dw_value v);
uint32_t dw_emit_str(compiler *c, const char *s, size_t len);
dw_value dw_emit_uid(compiler *c, const dw_euid_lit *e);

/* Lower one temporal leaf of policy `policy`; returns its leaf index (or
 * UINT32_MAX after reporting an error). */
uint32_t dw_lower_temporal(compiler *c, const dw_temporal *t, uint32_t policy);

/* Lower one provider invocation (a call, or the last output method of its
 * chain) of the current policy; returns its call-site index (or UINT32_MAX
 * after reporting an error).  compiler/plower.c. */
uint32_t dw_lower_provider(compiler *c, const dw_expr *e);
/* The value of a literal (and of a set of literals, an extension
 * constructor on a valid string literal), or false. */
bool dw_compile_literal(compiler *c, const dw_expr *e, dw_value *out);

#endif
