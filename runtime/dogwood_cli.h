/* dogwood_cli.h - `dwc dogwood`: the Dogwood reference's command set
 * (dogwood.md §18) with its arguments, outputs and exit codes. */
#ifndef DW_DOGWOOD_CLI_H
#define DW_DOGWOOD_CLI_H
#include "../lang/diag.h"
int dw_cmd_dogwood(int argc, char **argv);
extern const char dw_dogwood_usage[];
/* The diagnostics of one severity as §18's JSON findings,
 * [{"message": …, "labels": [[start, end]]}], on stdout. */
void dw_dogwood_json_findings(const dw_diags *d, dw_severity sev);
#endif
