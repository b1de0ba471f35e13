/* link_cmd.h - `dwc link`, Cedar's CLI `link` command. */
#ifndef DW_LINK_CMD_H
#define DW_LINK_CMD_H
extern const char dw_link_usage[];
int dw_cmd_link(int argc, char **argv);
#endif
