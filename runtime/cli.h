/* cli.h - option parsing shared by the dwc commands: getopt_long driven by a
 * table, with dwc's own messages, so `--opt=value`, `--opt value`, `-o VALUE`,
 * `-oVALUE` and options after the positional argument work in every command. */
#ifndef DW_CLI_H
#define DW_CLI_H
#include <stdbool.h>
#include <stddef.h>

/* One option: a long name, an optional short letter, and where it goes: a
 * value option stores its text in *value (the last one given wins), a flag
 * sets *flag.  Exactly one of value and flag is set; a table ends with a
 * zero entry. */
typedef struct dw_cli_opt {
    const char *name;
    char letter;
    const char **value;
    bool *flag;
} dw_cli_opt;

/* Parse a command's argv (argv[0] is the command name, e.g. "check";
 * -h/--help are implied).  operand receives the one positional argument the
 * command takes unless an option already set it (NULL: it takes none).
 * 0 parsed; 1 help asked for (usage printed to stdout); -1 an unknown option,
 * a missing value or an extra argument ("dwc CMD: error: ..." and the usage
 * printed to stderr). */
int dw_cli_parse(int argc, char **argv, const dw_cli_opt *opts, const char **operand, const char *usage);

/* Options that may be given several times: each value is appended to
 * *list (free list->v after use).  dw_cli_parse_lists takes a second table
 * of them (ending with a zero entry) beside the usual one. */
typedef struct dw_cli_list { const char **v; size_t n, cap; } dw_cli_list;
typedef struct dw_cli_list_opt { const char *name; char letter; dw_cli_list *list; } dw_cli_list_opt;
int dw_cli_parse_lists(int argc, char **argv, const dw_cli_opt *opts, const dw_cli_list_opt *lists, const char **operand,
                       const char *usage);

/* For a command that takes any number of positional arguments: each is
 * appended to *operands (free operands->v after use). */
int dw_cli_parse_operands(int argc, char **argv, const dw_cli_opt *opts, dw_cli_list *operands, const char *usage);

/* Cedar's --schema-format / --policy-format value: absent, cedar, json or
 * human (Cedar 3.x's cedar); else "dwc CMD: error: --OPT must be ..." and false. */
bool dw_cli_cedar_form_ok(const char *cmd, const char *opt, const char *value);

/* Cedar's CLI takes a global `-f/--error-format human|plain|json` anywhere on
 * its command line.  Take it out of argv[from..argc) (up to a `--`) and return
 * the new argc: human and plain are dwc's text reports already; json, a
 * missing or another value is refused ("dwc: error: ...", -1). */
int dw_cli_take_error_format(int argc, char **argv, int from);

/* The exit status of a usage error (an unknown option, a missing or bad
 * argument): 1 for dwc's commands, 2 when dwc runs as `cedar`, since
 * Cedar's CLI (clap) exits 2 on one.  main sets it before any command runs. */
void dw_cli_set_usage_status(int status);
int dw_cli_usage_status(void);

/* A decimal count in [min, max] into *out; false (message printed) if the
 * text is anything else. */
bool dw_cli_count(const char *cmd, const char *opt, const char *text, long long min, long long max, long long *out);

#endif
