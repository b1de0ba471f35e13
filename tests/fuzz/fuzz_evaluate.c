/* libFuzzer target: expression text -> `dwc evaluate`'s path (runtime/expression.h):
 * parse, compile as a condition, run by dw_eval_value, the value printed as Cedar
 * prints it or the failure worded from the failing instruction's operands
 * (runtime/eval_error.c reads them off the stack).  Must never crash or leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/expression.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    dw_expression x;
    if (dw_expression_compile(&x, text, size) == 0) {
        dw_store st;
        dw_store_init(&st);
        dw_arena a;
        dw_arena_init(&a, 0);
        dw_request req;
        memset(&req, 0, sizeof req);
        static const char *const type[3] = { "User", "Action", "Photo" };
        for (int i = 0; i < 3; i++) {
            req.vars[i].kind = DW_V_ENTITY;
            req.vars[i].u.uid = dw_make_uid(&a, type[i], strlen(type[i]), "a", 1);
        }
        req.vars[DW_VAR_C].kind = DW_V_RECORD;
        dw_buf out = { 0 }, help = { 0 };
        if (dw_store_seal(&st) == 0 && req.vars[0].u.uid && req.vars[1].u.uid && req.vars[2].u.uid)
            dw_expression_eval(&x, &st, &req, &a, &out, &help);
        dw_buf_free(&out);
        dw_buf_free(&help);
        dw_arena_free(&a);
        dw_store_free(&st);
    } else {
        char msg[512];
        dw_expression_refusal(&x, msg, sizeof msg);
    }
    dw_expression_free(&x);
    free(text);
    return 0;
}
