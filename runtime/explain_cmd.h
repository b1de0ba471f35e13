/* explain_cmd.h - `dwc explain` (runtime/explain_cmd.c). */
#ifndef DW_EXPLAIN_CMD_H
#define DW_EXPLAIN_CMD_H
extern const char dw_explain_usage[];
int dw_cmd_explain(int argc, char **argv);
#endif
