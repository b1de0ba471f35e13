/* temporal.h - temporal leaves as the VM runs them (dogwood.md §6-§8).
 *
 * The compiler lowers each `temporal { φ }` leaf from the temporal AST into
 * the flat tables below (indices instead of pointers, so the artifact can
 * carry them and the verifier can bound them).  Variables are resolved to
 * per-leaf slots 0..nvars-1; strings are indices into the program's strs[];
 * constants are indices into consts[].
 *
 * Evaluation (vm/teval.c) follows §8: rel(i, ρ, φ) yields rows (variable
 * assignments); a leaf holds at the decision event i iff rel(i, ρ0, φ) is
 * non-empty. */
#ifndef DW_TEMPORAL_H
#define DW_TEMPORAL_H
#include <stdbool.h>
#include <stdint.h>
#include "value.h"

#define DW_TEMPORAL_MAX_VARS 64      /* slots per leaf; rows carry a 64-bit bound mask */

typedef enum dw_tf_kind {
    DW_TF_PRED,      /* event (type_str, id_str, kind_str) matches; fields [first, first+n) of tpatterns */
    DW_TF_AND,       /* a && b                      (a, b: formula indices) */
    DW_TF_NOT,       /* !a */
    DW_TF_FORMERLY,  /* formerly within window a */
    DW_TF_PREVIOUS,  /* previous within window a */
    DW_TF_SINCE,     /* a since within window b     (b is the anchor) */
    DW_TF_EXISTS,    /* exists (var). a */
    DW_TF_TP,        /* tp(var) */
    DW_TF_CMP,       /* term a <op> term b           (a, b: term indices) */
} dw_tf_kind;

typedef enum dw_tcmp_op { DW_TC_OP_EQ, DW_TC_OP_NE, DW_TC_OP_LT, DW_TC_OP_LE, DW_TC_OP_GT, DW_TC_OP_GE } dw_tcmp_op;

typedef struct dw_tf {
    uint8_t kind;            /* dw_tf_kind */
    uint8_t op;              /* CMP: dw_tcmp_op */
    uint16_t var;            /* EXISTS, TP: slot */
    uint32_t a, b;
    int64_t window;          /* FORMERLY, PREVIOUS, SINCE: seconds (the engine scales to ticks) */
    uint32_t type_str, id_str, kind_str;   /* PRED: "Box::Action", "fs:read", "request" */
    uint32_t first, n;       /* PRED: field patterns */
} dw_tf;

typedef struct dw_tpattern {
    uint32_t path_str;       /* dotted path into the logged record: "input.host" */
    uint32_t term;
} dw_tpattern;

typedef enum dw_tt_kind {
    DW_TT_CONST,     /* consts[a] */
    DW_TT_VAR,       /* slot a */
    DW_TT_CONTEXT,   /* the decision's request context at dotted path strs[a] */
    DW_TT_PRINCIPAL, /* the decision's principal: the uid when strs[a] is "", else an attribute path */
    DW_TT_RESOURCE,  /* likewise for the resource */
    DW_TT_WILD,      /* any value (unresolved as a value) */
    DW_TT_ARRAY,     /* elements: term indices targs[a .. a+n) */
    DW_TT_COUNT,     /* aggregate taggs[a] */
    DW_TT_SUM,       /* aggregate taggs[a] */
} dw_tt_kind;

typedef struct dw_tterm { uint8_t kind; uint32_t a, n; } dw_tterm;

typedef struct dw_tagg {
    uint32_t body;           /* formula */
    uint16_t sum_var;        /* SUM: the summed slot */
    uint32_t first_var, nvars;   /* the `for` slots: aggvars[first_var ..) */
} dw_tagg;

typedef struct dw_tleaf {
    uint32_t root;           /* formula */
    uint32_t policy;         /* owning policy (rule index) */
    uint16_t nvars;
    int64_t reach;           /* seconds of history the leaf can read (nesting sum of windows) */
    uint64_t identity;       /* canonical identity: same text => same state across reloads (D8) */
} dw_tleaf;

typedef struct dw_temporal_tables {
    dw_tf *tfs;         uint32_t ntfs;
    dw_tpattern *tpatterns; uint32_t ntpatterns;
    dw_tterm *tterms;   uint32_t ntterms;
    uint32_t *targs;    uint32_t ntargs;
    dw_tagg *taggs;     uint32_t ntaggs;
    uint16_t *aggvars;  uint32_t naggvars;
    dw_tleaf *leaves;   uint32_t nleaves;
} dw_temporal_tables;

/* ---- event values (§7.2) ----
 * Event Arrays keep their order (DW_V_ARRAY; a DW_V_SET is sorted) and Null is
 * an event value of its own (DW_V_NULL); both are dw_vkind members.  Temporal
 * code compares event values with dw_tval_cmp (vm/teval.h), which also reads
 * a DW_V_SET as an array in its stored order (§7.2: request sets are carried
 * as arrays). */

/* ---- history, as the evaluator sees it ---- */
typedef struct dw_event {
    int64_t ts;              /* ticks */
    dw_str atype, aid, kind;   /* identity: "Box::Action", "fs:read", "request" */
    dw_value logged;         /* RECORD: input, output, callerPrincipal, ... */
} dw_event;

/* The events a leaf may read, oldest first; the decision event is the last.
 * (A key-local schema passes only the current key's partition.) */
typedef struct dw_history_view {
    const dw_event *const *ev;
    uint32_t n;
    int64_t ticks_per_second;    /* 1 for .log replay, 1e9 for the runtime */
} dw_history_view;

/* The request-anchored environment ρ0 (§8.1). */
typedef struct dw_tanchor {
    dw_value context;        /* RECORD: the decision's request context */
    dw_value principal, resource;   /* entity values, or kind != DW_V_ENTITY when absent */
    dw_value principal_attrs, resource_attrs;   /* RECORD, n == 0 when not supplied */
} dw_tanchor;

#endif
