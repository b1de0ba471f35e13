/* explain.h - `dwc explain`: one decision taken apart, by the engine that
 * made it (runtime/engine_explain.c) and printed by runtime/explain_cmd.c.
 *
 * Nothing here has semantics of its own: the verdict, the leaf values and
 * each policy's value are the engine's; scopes and conditions are the
 * policy's own bytecode run on the VM up to the end of that part (the
 * compiler's dw_program.cond_marks); each temporal leaf is evaluated again
 * by the reference evaluator over the view the leaf pass used, with an
 * observer that reports every count and sum with its rows (the events that
 * made it).  Every re-evaluated part is checked against what the engine
 * used; a difference is reported as a disagreement, loudly. */
#ifndef DW_EXPLAIN_H
#define DW_EXPLAIN_H
#include "dogwood.h"
#include "../stdlib/arena.h"

typedef enum { DW_X_FALSE, DW_X_TRUE, DW_X_ERROR, DW_X_UNKNOWN, DW_X_NOT_REACHED } dw_xval;

typedef struct dw_x_event {
    uint32_t pos;                /* in the leaf's view of the history */
    int64_t ts;                  /* its timestamp (ticks) */
    const char *time, *what;     /* RFC 3339; "http:request::response" */
    const char *logged;          /* its logged record */
} dw_x_event;

typedef struct dw_x_row { const char *values; uint32_t nevents; dw_x_event *events; } dw_x_row;

typedef struct dw_x_agg {
    const char *formula, *value;
    uint32_t nrows;
    dw_x_row *rows;
} dw_x_agg;

typedef struct dw_x_leaf {
    uint32_t leaf;
    const char *formula;
    int engine;                  /* the value the decision used: 0, 1, 2 not evaluated */
    dw_xval value;               /* the reference evaluator's, again */
    const char *error;
    uint32_t naggs;
    dw_x_agg *aggs;              /* aggregates at the decision point */
} dw_x_leaf;

typedef struct dw_x_cond {
    bool unless;
    dw_xval value;
    const char *error;
    int32_t leaf;                /* the temporal leaf its code reads (a `when temporal`), else -1 */
} dw_x_cond;

typedef struct dw_x_policy {
    const char *name;
    bool forbid;
    uint32_t line;
    dw_xval scope, value;        /* value: the whole policy (scope && conditions) */
    const char *error;           /* of the policy's evaluation */
    bool determining;
    uint32_t nconds;
    dw_x_cond *conds;            /* NULL when the program has no marks (a .dwb) */
    uint32_t nleaves;
    dw_x_leaf *leaves;
} dw_x_policy;

typedef struct dw_explanation {
    dw_arena a;                  /* everything below */
    bool done;                   /* a decision was taken apart */
    bool gate;                   /* (explain_cmd.c) refused before any policy ran: only v */
    dw_verdict v;                /* the engine's verdict */
    uint32_t history;            /* events in the history at the decision */
    bool conditions;             /* conditions could be shown (compiled from source) */
    uint32_t npolicies;
    dw_x_policy *policies;
    uint32_t ndisagree;
    char disagree[1024];         /* where a re-evaluation differs from the engine: a bug, said loudly */
    /* set by the printer's caller: the trace lines fed, by time (ascending),
     * so an event is named by its line (times increase strictly in a trace) */
    const char *trace;
    const int64_t *line_ts;
    const size_t *line_no;
    size_t nlines;
} dw_explanation;

void dw_explanation_init(dw_explanation *x);
void dw_explanation_free(dw_explanation *x);
/* The engine's next decision (dw_engine_decide_json …) fills x.  A call
 * refused before any policy ran leaves it empty and still armed: call
 * dw_engine_explain_next(e, NULL) after the decision, always. */
void dw_engine_explain_next(dw_engine *e, dw_explanation *x);

#endif
