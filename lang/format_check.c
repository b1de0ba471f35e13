/* format_check.c - dw_format_policies: the layout (format.c) between two
 * parses.  The input must parse cleanly; the output must parse to the same
 * policy set (macros and policies, compared on their position-free printed
 * form, dw_policy_set_print), as Cedar's formatter checks its own output. */
#include "format.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ast.h"

/* The printed form of text's policy set, or NULL (errors in diags; *oom on OOM). */
static char *printed(const dw_source *src, dw_diags *diags, size_t *len, bool *oom)
{
    dw_policy_set *ps = dw_parse_policy_set(src, diags);
    if (!ps) { *oom = true; return NULL; }
    char *p = NULL;
    if (diags->nerrors == 0) {
        FILE *m = open_memstream(&p, len);
        if (m) {
            dw_policy_set_print(m, ps);
            if (fclose(m)) { free(p); p = NULL; }
        }
        if (!p) *oom = true;
    }
    dw_policy_set_free(ps);
    return p;
}

dw_format_rc dw_format_policies(const dw_source *src, const dw_format_opts *opts, dw_buf *out, dw_diags *diags)
{
    bool oom = false;
    size_t alen = 0, blen = 0;
    char *a = printed(src, diags, &alen, &oom), *b = NULL;
    if (!a) return oom ? DW_FORMAT_OOM : DW_FORMAT_INVALID;
    dw_format_rc rc = DW_FORMAT_OOM;
    char err[160];
    uint32_t at = 0;
    size_t start = out->len;
    int r = dw_format_layout(src->text, src->len, opts, out, err, sizeof err, &at);
    if (r < 0) goto done;
    if (r > 0) {
        dw_error(diags, src, dw_loc_at(src, at, at), "cannot format: %s", err);
        rc = DW_FORMAT_UNSUPPORTED;
        goto done;
    }
    dw_source fsrc = { src->name, out->p + start, out->len - start };
    dw_diags fd;
    dw_diags_init(&fd);
    b = printed(&fsrc, &fd, &blen, &oom);
    bool same = b && alen == blen && memcmp(a, b, alen) == 0;
    dw_diags_free(&fd);
    if (oom) goto done;
    if (!same) {
        dw_error_hint(diags, src, dw_loc_at(src, 0, 0), "please report this input: it is a formatter bug",
                      "internal error: formatting would change the policies; the file is left as it is");
        rc = DW_FORMAT_UNSOUND;
        goto done;
    }
    rc = DW_FORMAT_OK;
done:
    if (rc != DW_FORMAT_OK) out->len = start;
    free(a);
    free(b);
    return rc;
}
