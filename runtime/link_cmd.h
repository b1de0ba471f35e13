/* link_cmd.h - `dwc link`, Cedar's CLI `link` command. */
#ifndef DW_LINK_CMD_H
#define DW_LINK_CMD_H
#include <stdbool.h>
extern const char dw_link_usage[];
/* as_cedar: run as `cedar`, where no -p means the policies on standard input, as Cedar's link reads them */
int dw_cmd_link(int argc, char **argv, bool as_cedar);
#endif
