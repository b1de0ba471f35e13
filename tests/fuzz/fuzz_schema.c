/* libFuzzer target: Cedar schema text (human syntax, or JSON when it starts with '{'). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lang/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    dw_source src = { "fuzz.cedarschema", text, size };
    dw_diags d;
    dw_diags_init(&d);
    dw_schema *s = dw_schema_parse(&src, &d);
    if (s) dw_schema_free(s);
    dw_diags_free(&d);
    free(text);
    return 0;
}
