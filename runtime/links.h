/* links.h - reading Cedar's template-linked file (`-k FILE`): a JSON array of
 * {"template_id", "link_id", "args": {"?principal": UID text, "?resource": UID text}}.
 * An empty file holds no links, as in Cedar's CLI. */
#ifndef DW_LINKS_H
#define DW_LINKS_H
#include "../compiler/link.h"
#include <stdio.h>
#include "../lang/json.h"

/* 0 and the links (in a's memory) in *out and *n; 1 with diagnostics. */
int dw_links_parse(dw_arena *a, const dw_source *src, dw_template_link **out, size_t *n, dw_diags *diags);
/* The links as Cedar's CLI writes its links file: one compact JSON array.
 * -1 if a string is not UTF-8 (a links file is read back: no replacement)
 * or the write failed. */
int dw_links_write(FILE *out, const dw_template_link *links, size_t n);

#endif
