/* dogwood_cli.h - `dwc dogwood`: the Dogwood reference's command set
 * (dogwood.md §18) with its arguments, outputs and exit codes. */
#ifndef DW_DOGWOOD_CLI_H
#define DW_DOGWOOD_CLI_H
int dw_cmd_dogwood(int argc, char **argv);
extern const char dw_dogwood_usage[];
#endif
