/* box_gate.h - Box mode's refusals (an engine on Box's built-in schema,
 * --schema box): events that are valid Cedar but that Box never sends and
 * that Box's C enforcement points would read differently from the policy
 * (issue 13).  Each refused event is a deny with cause internal_fault (a
 * decision) or a failed record, and never enters the history. */
#ifndef DW_BOX_GATE_H
#define DW_BOX_GATE_H
#include <stdbool.h>
#include <stddef.h>
#include "../lang/json.h"
#include "../vm/value.h"

/* 0 if the event may be taken; -1 with the reason in msg.  event: the
 * event's (or Cedar request's) JSON object, or NULL; text, len: the JSON text
 * it was read from (NULL: unknown), which spares the walk for NUL bytes when
 * it holds no escape; principal, resource: its scope (NULL: absent, left to
 * the schema gate). */
int dw_box_gate(const dw_json *event, const char *text, size_t len, const dw_uid *principal, const dw_uid *resource,
                char *msg, size_t cap);

#endif
