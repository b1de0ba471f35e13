/* evaluate_cmd.h - `dwc evaluate`, Cedar CLI 4.x's `evaluate`. */
#ifndef DW_EVALUATE_CMD_H
#define DW_EVALUATE_CMD_H

extern const char dw_evaluate_usage[];
int dw_cmd_evaluate(int argc, char **argv);

#endif
