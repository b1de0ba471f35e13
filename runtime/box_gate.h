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
#include "../vm/program.h"
#include "../vm/value.h"

/* Box's action schema (lang/box_actions.cedarschema, embedded by the
 * Makefile): `--schema box`. */
extern const char dw_box_actions_schema_text[];
extern const size_t dw_box_actions_schema_len;

/* 0 if the event may be taken; -1 with the reason in msg.  event: the
 * event's (or Cedar request's) JSON object, or NULL; text, len: the JSON text
 * it was read from (NULL: unknown), which spares the walk for NUL bytes when
 * it holds no escape; principal, resource: its scope (NULL: absent, left to
 * the schema gate). */
int dw_box_gate(const dw_json *event, const char *text, size_t len, const dw_uid *principal, const dw_uid *resource,
                char *msg, size_t cap);

/* Why compiled program p may not serve an engine in Box mode (box: true),
 * or NULL: it must have passed the Box profile when it was compiled
 * (`dwc compile --schema box` stamps DW_AF_BOX_PROFILE, vm/artifact_format.h). */
const char *dw_box_profile_refusal(bool box, const dw_program *p);

#endif
