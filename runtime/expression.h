/* expression.h - a Cedar expression on its own (`dwc evaluate`): compiled
 * as the one condition of `permit(principal, action, resource) when { E };`
 * and run by the VM's dw_eval_value, with what it gives back in Cedar's
 * words: the value as Cedar prints it (runtime/cedar_value.h), or why it
 * does not parse or evaluate (runtime/eval_error.h). */
#ifndef DW_EXPRESSION_H
#define DW_EXPRESSION_H
#include "../compiler/compile.h"
#include "../vm/vm.h"

typedef struct dw_expression {
    dw_source src;
    dw_policy_set owner;       /* owns the parsed expression */
    dw_diags diags;
    dw_program *prog;
} dw_expression;

/* Parse and compile text[0..len) (it must outlive x).  0; 1 refused (a
 * syntax error, an unknown function, a template slot, a temporal rule or a
 * provider call: dw_expression_refusal says why); -1 out of memory.  Free x
 * with dw_expression_free whatever it returns. */
int dw_expression_compile(dw_expression *x, const char *text, size_t len);
/* Why it was refused, in Cedar's words where Cedar has them. */
void dw_expression_refusal(const dw_expression *x, char *buf, size_t cap);
/* Evaluate for req over store (req is bound here; run-time values live in
 * scratch).  0 with the value's text in out; 1 it failed, Cedar's message in
 * out and its help line, if any, in help (both NUL-terminated); -1 out of
 * memory. */
int dw_expression_eval(const dw_expression *x, const dw_store *store, dw_request *req, dw_arena *scratch,
                       dw_buf *out, dw_buf *help);
void dw_expression_free(dw_expression *x);

#endif
