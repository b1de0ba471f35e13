/* explain_parts.h - a policy taken apart into its scope and conditions
 * (runtime/explain_parts.c), for `dwc explain` (engine_explain.c) and
 * dw-conformance, which checks on Cedar's corpus that the parts always make
 * the whole (dw_explain_parts_agree). */
#ifndef DW_EXPLAIN_PARTS_H
#define DW_EXPLAIN_PARTS_H
#include "explain.h"
#include "../vm/vm.h"

/* The policy code of p, copied so that one instruction at a time can be cut. */
typedef struct dw_cut {
    const dw_program *p;
    dw_eval_ctx cx;              /* over copy, whose code is the patched one */
    dw_program copy;
    uint32_t *code;
} dw_cut;

/* stack: at least p->max_stack + 1 values.  0, or -1 out of memory. */
int dw_cut_init(dw_cut *c, const dw_program *p, const dw_store *store, const dw_request *req, dw_arena *scratch,
                dw_value *stack);
void dw_cut_free(dw_cut *c);
/* Policy i's scope and conditions into xp (scope, nconds, conds; from a),
 * given the program's cond_marks.  Conditions after the first that fails
 * or errors are DW_X_NOT_REACHED, as Cedar's && never runs them. */
void dw_explain_conditions(dw_arena *a, dw_cut *c, uint32_t i, dw_x_policy *xp);
/* Do scope && conditions give xp->value (the policy's own result)? */
bool dw_explain_parts_agree(const dw_x_policy *xp);

#endif
