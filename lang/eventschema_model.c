/* eventschema_model.c - the event schema as data: freeing and the lookups
 * the engine makes while serving.  The serving path (dwd) links this file
 * and not the parser (eventschema.c): it rebuilds the event schema from an
 * artifact (runtime/artifact_serve.c). */
#include "eventschema.h"
#include <stdlib.h>
#include <string.h>

void dw_event_schema_free(dw_event_schema *es)
{
    if (!es) return;
    dw_arena_free(&es->arena);
    free(es);
}

bool dw_event_schema_is_decision_kind(const dw_event_schema *es, const char *kind, size_t len)
{
    for (size_t i = 0; es && i < es->ndecision_kinds; i++)
        if (es->decision_kinds[i].len == len && memcmp(es->decision_kinds[i].s, kind, len) == 0) return true;
    return false;
}

const dw_ev_decl *dw_event_schema_decl(const dw_event_schema *es, const char *kind, size_t len)
{
    for (size_t i = 0; es && i < es->ndecls; i++)
        if (es->decls[i].kind.len == len && memcmp(es->decls[i].kind.s, kind, len) == 0) return &es->decls[i];
    return NULL;
}

int64_t dw_event_schema_max_window_ticks(const dw_event_schema *es, int64_t ticks_per_second)
{
    uint64_t s = es ? es->max_window : DW_EVENT_DEFAULT_MAX_WINDOW;
    if (ticks_per_second <= 0) ticks_per_second = 1;
    if (s > (uint64_t)INT64_MAX / (uint64_t)ticks_per_second) return INT64_MAX;
    return (int64_t)(s * (uint64_t)ticks_per_second);
}
