/* libFuzzer target: MCP tool manifests (runtime/mcp_schema.c, `dwc dogwood
 * schema mcp`), with and without --number decimal; what it writes must read
 * back as a schema. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/mcp_schema.h"
#include "lang/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    dw_source src = { "fuzz.json", text, size };
    for (int dec = 0; dec < 2; dec++) {
        dw_mcp_options opt = { .number_decimal = dec };
        dw_diags d;
        dw_diags_init(&d);
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        int rc = m ? dw_mcp_schema(&src, &opt, m, &d) : 1;
        if (m) fclose(m);
        if (!rc) {
            dw_source gen = { "gen", buf, len };
            dw_schema *s = dw_schema_parse_text(&gen, &d);
            if (s) dw_schema_free(s);
        }
        free(buf);
        dw_diags_free(&d);
    }
    free(text);
    return 0;
}
