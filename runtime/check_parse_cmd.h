/* check_parse_cmd.h - Cedar's `check-parse` command. */
#ifndef DW_CHECK_PARSE_CMD_H
#define DW_CHECK_PARSE_CMD_H
extern const char dw_check_parse_usage[];
int dw_cmd_check_parse(int argc, char **argv);
#endif
