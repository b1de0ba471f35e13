/* libFuzzer target: .dw policy text -> parse -> compile.  Must never crash or leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/compile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    dw_source src = { "fuzz.dw", text, size };
    dw_diags d;
    dw_diags_init(&d);
    dw_policy_set *ps = dw_parse_policy_set(&src, &d);
    if (ps && d.nerrors == 0) {
        dw_program *p = dw_compile(ps, NULL, &d);
        if (p) dw_program_free(p);
    }
    if (ps) dw_policy_set_free(ps);
    dw_diags_free(&d);
    free(text);
    return 0;
}
