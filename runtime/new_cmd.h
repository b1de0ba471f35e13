/* new_cmd.h - `dwc new`, Cedar CLI 4.x's `new`. */
#ifndef DW_NEW_CMD_H
#define DW_NEW_CMD_H

extern const char dw_new_usage[];
int dw_cmd_new(int argc, char **argv);

#endif
