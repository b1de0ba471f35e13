/* libFuzzer target: Cedar's JSON policy format (runtime/est_read.c).  The
 * input is read as a JSON policy, template or set and printed as Cedar text
 * both ways (Cedar's form and the one dwc parses back); the text for parsing
 * is then parsed and, when it parses, written back to JSON (est_write.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/est.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    dw_source src = { "fuzz.json", text, size };
    for (int for_parse = 0; for_parse < 2; for_parse++) {
        dw_diags d;
        dw_diags_init(&d);
        dw_est_text t;
        int r = dw_est_to_cedar(&src, for_parse, &t, &d);
        if (!r && for_parse) {
            dw_source ts = { "fuzz.cedar", t.text.p ? t.text.p : "", t.text.len };
            dw_policy_set *ps = dw_parse_policy_set(&ts, &d);
            if (ps && !d.nerrors && !dw_link_templates(ps, NULL, 0, NULL, true, &d) && !d.nerrors) {
                dw_buf out = { 0 };
                dw_est_write_set(&out, ps, &d);
                dw_buf_free(&out);
            }
            if (ps) dw_policy_set_free(ps);
        }
        dw_est_text_free(&t);
        dw_diags_free(&d);
    }
    free(text);
    return 0;
}
