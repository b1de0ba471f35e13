/* eventschema_builtin.c - the event schemas dwc ships (dogwood.md §12.7,
 * §20 Q1) and Box's (box.md §5), kept as `.dwschema` text so they go through
 * the same parser as user files.  The Box text is byte-identical to
 * box/events.dwschema: Box compares stored schemas by text. */
#include "eventschema.h"
#include <string.h>

/* The default: pinned on the principal, so histories are per principal. */
static const char DEFAULT_TEXT[] =
    "// dwc default event schema (dogwood.md 12.7): pinned on the principal.\n"
    "decision event <A>::request {\n"
    "    ...inputs(A),\n"
    "    pin callerPrincipal: principalType(A) = principal,\n"
    "    callerResource: resourceType(A),\n"
    "    requestId: String,\n"
    "    sessionId: String\n"
    "}\n"
    "event <A>::response {\n"
    "    ...inputs(A),\n"
    "    ...outputs(A),\n"
    "    pin callerPrincipal: principalType(A) = principal,\n"
    "    callerResource: resourceType(A),\n"
    "    requestId: String,\n"
    "    sessionId: String\n"
    "}\n"
    "event <A>::error {\n"
    "    ...inputs(A),\n"
    "    pin callerPrincipal: principalType(A) = principal,\n"
    "    callerResource: resourceType(A),\n"
    "    requestId: String,\n"
    "    sessionId: String\n"
    "}\n";

/* The same without pins: one global history. */
static const char UNPINNED_TEXT[] =
    "// dwc event schema variant `unpinned` (dogwood.md 12.7): one global history.\n"
    "decision event <A>::request {\n"
    "    ...inputs(A),\n"
    "    callerPrincipal: principalType(A),\n"
    "    callerResource: resourceType(A),\n"
    "    requestId: String,\n"
    "    sessionId: String\n"
    "}\n"
    "event <A>::response {\n"
    "    ...inputs(A),\n"
    "    ...outputs(A),\n"
    "    callerPrincipal: principalType(A),\n"
    "    callerResource: resourceType(A),\n"
    "    requestId: String,\n"
    "    sessionId: String\n"
    "}\n"
    "event <A>::error {\n"
    "    ...inputs(A),\n"
    "    callerPrincipal: principalType(A),\n"
    "    callerResource: resourceType(A),\n"
    "    requestId: String,\n"
    "    sessionId: String\n"
    "}\n";

/* The same, keyed on the session instead of the principal. */
static const char SESSION_TEXT[] =
    "// dwc event schema variant `session-pinned` (dogwood.md 12.7): one history per session.\n"
    "decision event <A>::request {\n"
    "    ...inputs(A),\n"
    "    callerPrincipal: principalType(A),\n"
    "    callerResource: resourceType(A),\n"
    "    requestId: String,\n"
    "    pin sessionId: String = context.sessionId\n"
    "}\n"
    "event <A>::response {\n"
    "    ...inputs(A),\n"
    "    ...outputs(A),\n"
    "    callerPrincipal: principalType(A),\n"
    "    callerResource: resourceType(A),\n"
    "    requestId: String,\n"
    "    pin sessionId: String = context.sessionId\n"
    "}\n"
    "event <A>::error {\n"
    "    ...inputs(A),\n"
    "    callerPrincipal: principalType(A),\n"
    "    callerResource: resourceType(A),\n"
    "    requestId: String,\n"
    "    pin sessionId: String = context.sessionId\n"
    "}\n";

static const char BOX_TEXT[] =
    "// Strands Box event convention for dwc.\n"
    "//\n"
    "// Each declaration is instantiated for every action A of the action schema. Only ::request\n"
    "// events receive a verdict; ::response and ::error events are history recorded after the\n"
    "// effect. callerPrincipal / callerResource hold the scope principal and resource, which the\n"
    "// engine copies into every event. There are no pins (one box, one history) and no max_window\n"
    "// directive, so the default cap of 24h applies to every window.\n"
    "\n"
    "decision event <A>::request {\n"
    "    ...inputs(A),\n"
    "    callerPrincipal: principalType(A),\n"
    "    callerResource: resourceType(A),\n"
    "    requestId: String\n"
    "}\n"
    "\n"
    "event <A>::response {\n"
    "    ...inputs(A),\n"
    "    ...outputs(A),\n"
    "    callerPrincipal: principalType(A),\n"
    "    callerResource: resourceType(A),\n"
    "    requestId: String\n"
    "}\n"
    "\n"
    "event <A>::error {\n"
    "    ...inputs(A),\n"
    "    callerPrincipal: principalType(A),\n"
    "    callerResource: resourceType(A),\n"
    "    requestId: String\n"
    "}\n";

typedef struct builtin { const char *name; const char *text; size_t len; dw_source src; } builtin;
#define B(n, t) { n, t, sizeof t - 1, { "<builtin:" n ">", t, sizeof t - 1 } }
static const builtin BUILTINS[] = {
    B("default", DEFAULT_TEXT),
    B("unpinned", UNPINNED_TEXT),
    B("session-pinned", SESSION_TEXT),
    B("box", BOX_TEXT),
};
#undef B

static const builtin *find(const char *name)
{
    for (size_t i = 0; name && i < sizeof BUILTINS / sizeof BUILTINS[0]; i++)
        if (strcmp(BUILTINS[i].name, name) == 0) return &BUILTINS[i];
    return NULL;
}

const char *dw_event_schema_builtin_text(const char *name)
{
    const builtin *b = find(name);
    return b ? b->text : NULL;
}

const dw_source *dw_event_schema_builtin_source(const char *name)
{
    const builtin *b = find(name);
    return b ? &b->src : NULL;
}
