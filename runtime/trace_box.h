/* trace_box.h - the lines of a Box trace (box.md §15.2) checked one at a
 * time for `dwc replay`: members, time, action, kind and expectations, so a
 * typo is an error on its line rather than an internal-fault deny that an
 * `expect: deny` line would count as passed. */
#ifndef DW_TRACE_BOX_H
#define DW_TRACE_BOX_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "load.h"

typedef struct dw_box_trace {
    dw_session s;            /* the action and event schemas the lines are checked against */
    bool no_expect;          /* --no-expect: a decision line may omit `expect` */
    bool test_file;          /* a `dwc test` file: a line without `time` is 1 s after the previous
                                (the first at box.md §15.1's 2025-01-01T00:00:00Z) */
    bool have_last;
    int64_t last_ns;         /* the previous line's time (strictly increasing) */
    size_t last_line;
} dw_box_trace;

/* What a valid line says. */
typedef struct dw_box_line {
    bool decision;           /* its kind is a decision kind: decided and compared */
    int64_t time_ns;
    const char *time_text;   /* NULL when the time was implied (test_file) */
    const dw_json *expect;   /* "allow"/"deny" string, or NULL (--no-expect) */
    const dw_json *rules;    /* array of strings, or NULL */
    const dw_json *cause;    /* a cause name, or NULL */
} dw_box_line;

/* Load the schemas (-s, --events as for the engine: NULL/"box" = Box's).
 * 0, or 1 / 2 as dw_session's loaders (diagnostics printed). */
int dw_box_trace_open(dw_box_trace *t, const char *schema, const char *events);
void dw_box_trace_close(dw_box_trace *t);
/* Check line `lineno`, already parsed to j.  0 with *out filled, or -1 with
 * the reason in msg. */
int dw_box_trace_line(dw_box_trace *t, const dw_json *j, size_t lineno, dw_box_line *out, char *msg, size_t cap);

/* Does verdict v (of engine e) meet line bl's expectations: expect, rules by
 * Box name as a set, cause?  A deny by internal fault meets them only when
 * the line expects that cause (*unexpected_fault says it was one). */
struct dw_engine;
struct dw_verdict;
bool dw_box_line_holds(struct dw_engine *e, const dw_box_line *bl, const struct dw_verdict *v, bool *unexpected_fault);
/* "[a, b]": the verdict's determining rules by Box name */
void dw_box_print_rules(FILE *f, struct dw_engine *e, const struct dw_verdict *v);
/* What the line expects, in the words of the output: "deny [a, b] forbidden" */
void dw_box_print_expected(FILE *f, const dw_box_line *bl);

#endif
