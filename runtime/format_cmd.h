/* format_cmd.h - `dwc format` (and `cedar format` when dwc runs as `cedar`). */
#ifndef DW_FORMAT_CMD_H
#define DW_FORMAT_CMD_H
#include <stdbool.h>
extern const char dw_format_usage[];
/* as_cedar: Cedar's CLI's output and exit codes (cedar-policy-cli's format). */
int dw_cmd_format(int argc, char **argv, bool as_cedar);
#endif
