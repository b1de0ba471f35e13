/* eval_error.h - why an evaluation failed, in Cedar 4.x's words (its
 * EvaluationError messages: "type error: expected long, got string",
 * "record does not have the attribute `x`", "integer overflow while
 * attempting to add the values `…` and `…`", …), read from the failing
 * instruction and the operands it left on the stack (dw_eval_ctx's err_pc
 * and err_depth). */
#ifndef DW_EVAL_ERROR_H
#define DW_EVAL_ERROR_H
#include "../vm/vm.h"

/* The message into msg and Cedar's help line, if it has one, into help
 * (both NUL-terminated).  0, or -1 out of memory. */
int dw_eval_error_text(dw_buf *msg, dw_buf *help, const dw_program *p, const dw_eval_ctx *cx, dw_eval_status st);

#endif
