/* check_filter.h - `dwc check`'s findings after the rules ran: each one
 * attributed to the policy it lies in, and the ones the author turned off
 * removed (`--disable RULE`, a policy's `@suppress("RULE, ...")`). */
#ifndef DW_CHECK_FILTER_H
#define DW_CHECK_FILTER_H
#include <stdbool.h>
#include "cli.h"
#include "../compiler/lint.h"

/* A finding of the policy file without a policy (a string-literal or
 * lexical rule) gets the policy whose text contains it.  ps: the parsed
 * set (NULL: nothing to do). */
void dw_check_attribute(dw_findings *f, const dw_policy_set *ps);

/* Is s[0..n) a rule id as given: a dw-… id or its Box name? */
bool dw_check_rule_known(const char *s, size_t n);

/* Check --disable's names (each may be a comma-separated list): false, with
 * a message, if one names no rule. */
bool dw_check_disable_valid(const dw_cli_list *disable);

/* Drop the findings --disable names, and those of a policy whose
 * @suppress annotation lists their rule. */
void dw_check_suppress(dw_findings *f, const dw_cli_list *disable, const dw_policy_set *ps);

#endif
