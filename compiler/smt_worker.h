/* smt_worker.h - Z3 queries answered in a forked worker process, so that a
 * crash, hang or out-of-memory of the solver costs one query (answered
 * unknown, with the reason) instead of the whole `dwc check` run
 * (docs/CHECK.md, Isolation).
 *
 * A worker per query: it inherits the encoded environment (the context, the
 * solver with the schema's well-formedness asserted, the goal), checks, and
 * sends back the answer and, when sat, the model as SMT-LIB text that the
 * parent rebuilds into a model of its own context.  The parent never calls
 * Z3_solver_check, so its solver never carries state from one query to the
 * next and no Z3 timer thread exists when it forks. */
#ifndef DW_SMT_WORKER_H
#define DW_SMT_WORKER_H
#include <stdbool.h>
#include <stddef.h>
#include <z3.h>
#include "../stdlib/arena.h"

typedef struct dw_smt_worker {
    unsigned timeout_ms;        /* Z3's own timeout; the watchdog allows twice that plus a second (0: none) */
    unsigned long mem_mb;       /* address space the worker may add (RLIMIT_AS; 0: no limit) */
    Z3_sort opaque;             /* the encoder's uninterpreted sort (named "Opaque") */
    unsigned long nqueries;     /* queries sent so far (DWC_SOLVER_FAULT counts them) */
    unsigned long failures;     /* workers that crashed, hung or ran out of memory */
    /* the current environment's worker */
    int pid;                    /* 0: none */
    int fd;                     /* the parent's end of its socket pair */
    size_t nwf_known;           /* well-formedness terms its solver holds */
    bool per_query;             /* it failed: a worker per query for the rest of the environment */
} dw_smt_worker;

/* SAT(assertions of s, goal) in a worker: 1 sat (*model: a model of the
 * parent's context, referenced once), 0 unsat, -1 unknown with the reason in
 * reason[0..cap).  wf[0..nwf): the well-formedness terms, all asserted in s.
 * s is left as it was. */
int dw_smt_worker_check(Z3_context c, Z3_solver s, const Z3_ast *wf, size_t nwf, Z3_ast goal, dw_smt_worker *w,
                        Z3_model *model, char *reason, size_t cap);
/* End the environment's worker (before its solver changes). */
void dw_smt_worker_stop(dw_smt_worker *w);

/* A model as SMT-LIB text (declarations, then one equation per constant,
 * function entry and function default); 0, or -1 when a value has no
 * SMT-LIB spelling (a free variable, a value of an uninterpreted sort). */
int dw_smt_model_write(Z3_context c, Z3_model m, dw_buf *out);
/* The model written by dw_smt_model_write, rebuilt in c (referenced once);
 * NULL with the reason in err. */
Z3_model dw_smt_model_read(Z3_context c, const char *text, Z3_sort opaque, char *err, size_t cap);

#endif
