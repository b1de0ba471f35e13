/* explain_cmd.h - `dwc explain` (runtime/explain_cmd.c). */
#ifndef DW_EXPLAIN_CMD_H
#define DW_EXPLAIN_CMD_H
extern const char dw_explain_usage[];
int dw_cmd_explain(int argc, char **argv);

/* The human explanation of x (a decision of e, line bl at `where`), for
 * `dwc explain` and `dwc test --explain`. */
#include <stdio.h>
struct dw_explanation;
struct dw_box_line;
struct dw_engine;
struct dw_verdict;
/* After the decision v: when the engine did not take it apart (the event was
 * refused before any policy ran), x says so with v's verdict. */
void dw_explanation_refused(struct dw_explanation *x, const struct dw_verdict *v);
void dw_explain_print(FILE *out, const struct dw_explanation *x, struct dw_engine *e, const char *where,
                      const struct dw_box_line *bl);
#endif
