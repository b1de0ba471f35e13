/* libFuzzer target: entities and request JSON.  The input is parsed as JSON;
 * an array is loaded as an entities file, an object as a request. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/json_value.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    dw_source src = { "fuzz.json", text, size };
    dw_diags d;
    dw_diags_init(&d);
    dw_arena a;
    dw_arena_init(&a, 4096);
    dw_buf err = { 0 };
    const dw_json *j = dw_json_parse(&a, &src, &d);
    if (j && j->kind == DW_JSON_ARRAY) {
        dw_store s;
        dw_store_init(&s);
        dw_store_load_json(&s, j, NULL, &err);
        dw_store_free(&s);
    } else if (j && j->kind == DW_JSON_OBJECT) {
        dw_request r;
        dw_request_from_json(&a, dw_json_get(j, "principal"), dw_json_get(j, "action"),
                             dw_json_get(j, "resource"), dw_json_get(j, "context"), NULL, false, &r, &err);
    }
    dw_buf_free(&err);
    dw_arena_free(&a);
    dw_diags_free(&d);
    free(text);
    return 0;
}
