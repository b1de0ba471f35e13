/* format.h - `dwc format`: the canonical layout of a policy set.
 *
 * Cedar policy text comes out byte for byte as Cedar's own formatter
 * (cedar-policy-formatter, `cedar format`) prints it, comments included and
 * placed where Cedar places them.  Dogwood's additions (macro definitions,
 * temporal bodies, `when guardrails`, `$x`/`?x`) follow the style described in
 * docs/FORMAT.md.  Formatting never changes meaning: the result is parsed
 * again and must give the same policy set as the input (else it is refused). */
#ifndef DW_FORMAT_H
#define DW_FORMAT_H
#include <stddef.h>
#include "../stdlib/arena.h"
#include "diag.h"

typedef struct dw_format_opts {
    size_t line_width;      /* Cedar's default: 80 */
    int indent_width;       /* Cedar's default: 2 */
} dw_format_opts;

typedef enum dw_format_rc {
    DW_FORMAT_OK = 0,
    DW_FORMAT_INVALID,      /* the input does not parse: errors are in diags */
    DW_FORMAT_UNSUPPORTED,  /* parses, but the formatter cannot lay it out (message in diags) */
    DW_FORMAT_UNSOUND,      /* the layout would change the policies (an internal error; diags) */
    DW_FORMAT_OOM,
} dw_format_rc;

/* Format src's text into out (appended).  Errors are reported into diags. */
dw_format_rc dw_format_policies(const dw_source *src, const dw_format_opts *opts, dw_buf *out, dw_diags *diags);

/* The layout alone, without the parse and soundness checks (format.c):
 * 0 ok, 1 cannot lay out (err, err_off set), -1 OOM. */
int dw_format_layout(const char *text, size_t len, const dw_format_opts *opts, dw_buf *out,
                     char *err, size_t errcap, uint32_t *err_off);

#endif
