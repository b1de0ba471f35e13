/* check.h - `dwc check`: lint a policy set for CI (compiler/lint.h). */
#ifndef DW_CHECK_H
#define DW_CHECK_H

/* argv[0] is the command name ("check").  Exit status: 0 nothing at or above
 * the fail level, 3 findings at or above it, 1 usage, I/O, parse or tool error. */
int dw_cmd_check(int argc, char **argv);
extern const char dw_check_usage[];

#endif
