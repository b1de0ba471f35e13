/* lsp_format.c - textDocument/formatting: `dwc format`'s text
 * (lang/format.h) as one edit of the whole document, at dwc format's line
 * and indent widths (dwc.toml's line_width and indent_width, by default 80
 * and 2, as `dwc format`; the client's tabSize is not the project's style).
 * A text that does not parse, or that the formatter refuses, is a request
 * error naming why: nothing is ever half-formatted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../lang/format.h"
#include "lsp_int.h"

int dw_lsp_formatting(dw_lsp *s, const dw_json *params, dw_jw *w, char *err, size_t errcap)
{
    dw_lsp_doc *d = dw_lsp_doc_of(s, params, err, errcap);
    if (!d) return DW_RPC_INVALID_PARAMS;
    if (d->kind != DW_DOC_POLICY) { snprintf(err, errcap, "dwc format formats policy files only"); return DW_RPC_REQUEST_FAILED; }
    dw_format_opts o = { s->cfg.line_width ? s->cfg.line_width : 80, s->cfg.indent_width ? s->cfg.indent_width : 2 };
    dw_buf out = { 0 };
    dw_diags g;
    dw_diags_init(&g);
    dw_format_rc rc = dw_format_policies(&d->src, &o, &out, &g);
    int code = 0;
    if (rc == DW_FORMAT_OOM) { w->oom = true; }
    else if (rc != DW_FORMAT_OK) {
        char first[400] = "";
        if (g.n) dw_diag_format(&g.v[0], first, sizeof first);
        snprintf(err, errcap, "%s%s%s", rc == DW_FORMAT_INVALID ? "the text does not parse, so it is not formatted" : "dwc format refused the text",
                 first[0] ? ": " : "", first);
        code = DW_RPC_REQUEST_FAILED;
    } else if (out.len == d->len && (!out.len || !memcmp(out.p, d->text, d->len))) dw_jw_raw(w, "[]");
    else {
        dw_jw_raw(w, "[{\"range\":");
        dw_lsp_w_range(w, s, d, 0, d->len);
        dw_jw_raw(w, ",\"newText\":");
        dw_jw_str(w, out.p ? out.p : "", out.len);
        dw_jw_raw(w, "}]");
    }
    dw_buf_free(&out);
    dw_diags_free(&g);
    return code;
}
