/* trace_log.h - the `.log` trace format of the reference replay
 * (dogwood.md §17):
 *
 *   @TS [scope(principal: E, resource: E)] [entities(E: {..} in [..], ..)]
 *       [request_context(group: value, ..)] Ns::Action::"id"::kind(field: value, ..)
 *
 * dw_tlog_parse reads a whole trace before anything is replayed; every
 * malformed line is reported as `file:line:col: error: ...` with a caret.
 * Values are event values (§7.2, vm/temporal.h): Null (DW_V_NULL), Bool,
 * Long, Decimal (DW_V_DECIMAL, fixed point), String (also bare tokens),
 * Entity, Array (DW_V_ARRAY, in order) and Record, all in the caller's
 * arena.  Nesting is bounded at DW_TLOG_MAX_DEPTH (§19). */
#ifndef DW_TRACE_LOG_H
#define DW_TRACE_LOG_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../lang/diag.h"
#include "../vm/temporal.h"

#define DW_TLOG_MAX_DEPTH 128

typedef struct dw_tlog_entity {
    const dw_uid *uid;
    dw_value attrs;                  /* RECORD of event values */
    const dw_uid **parents; uint32_t nparents;
} dw_tlog_entity;

typedef struct dw_tlog_event {
    uint32_t line;                   /* 1-based line in the trace */
    int64_t ts;                      /* seconds, as written */
    bool has_scope;
    const dw_uid *principal, *resource;   /* NULL when absent */
    dw_tlog_entity *entities; uint32_t nentities;
    bool has_context;
    dw_value context;                /* RECORD: the request-context groups */
    dw_str atype, aid, kind;       /* "Drupe::Action", "Read", "request" */
    dw_value logged;                 /* RECORD: the logged record, exactly as listed */
} dw_tlog_event;

typedef struct dw_tlog {
    dw_tlog_event *ev;               /* heap array; free with dw_tlog_free */
    size_t n, cap;
} dw_tlog;

/* Parse every line of src.  Returns 0, or -1 when any line was rejected
 * (diagnostics in d; out may then hold only the good lines) or on OOM. */
int dw_tlog_parse(dw_arena *a, const dw_source *src, dw_diags *d, dw_tlog *out);
void dw_tlog_free(dw_tlog *t);

/* One parsed event as the engine's input (dw_engine_decide_event); its
 * entity list is allocated in `a`.  0, or -1 on OOM. */
struct dw_event_input;
int dw_tlog_event_input(dw_arena *a, const dw_tlog_event *x, struct dw_event_input *in);

#endif
