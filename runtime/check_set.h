/* check_set.h - the policy set of `dwc check` from several files: every -p
 * file, and each directory's .dw and .cedar files (sorted by name), read
 * into one text, so the rules and proofs see one set; findings are mapped
 * back to the file and line they are in. */
#ifndef DW_CHECK_SET_H
#define DW_CHECK_SET_H
#include <stddef.h>
#include <stdint.h>
#include "cli.h"
#include "../compiler/lint.h"

typedef struct dw_check_part {
    char *path;
    char *text;
    dw_source src;           /* the file alone */
    uint32_t off, line;      /* where it starts in the joined text (byte offset, 1-based line) */
} dw_check_part;

typedef struct dw_check_set {
    dw_check_part *parts;
    size_t nparts, cap;
    char *text;              /* the files joined, each from a line start */
    size_t len;
} dw_check_set;

/* Read every path (file or directory).  0, or 1 with a message printed (an
 * unreadable file, an empty directory). */
int dw_check_set_read(dw_check_set *cs, const dw_cli_list *paths);
void dw_check_set_free(dw_check_set *cs);
/* Point each finding of the joined text (src NULL) into its own file. */
void dw_check_set_map(const dw_check_set *cs, dw_findings *f);

#endif
