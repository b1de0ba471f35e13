/* dogwood_parts.h - events given by their parts: the in-tree half of the
 * engine API (runtime/dogwood.h is the public, installed half).  Its values
 * are the VM's own (struct dw_value, struct dw_uid: vm/value.h), which the
 * shared library does not export, so this header is not installed and
 * dw_engine_decide_event links only from the static libdogwood.a (dwc's
 * `.log` replay, runtime/trace_log.h; the fuzzers).  Embedders outside the
 * tree give events as Box's JSON (dw_engine_decide_json). */
#ifndef DW_DOGWOOD_PARTS_H
#define DW_DOGWOOD_PARTS_H
#include "dogwood.h"

/* ---- events given by their parts (dogwood.md §7.1, §15.1) ----
 * For hosts and trace readers with their own event formats (the `.log`
 * replay, runtime/trace_log.h).  Values are event values (§7.2) as defined in
 * vm/value.h + vm/temporal.h: Null (DW_V_NULL), Bool, Long, Decimal, String,
 * Entity, Array (DW_V_ARRAY, in order) and Record; the engine copies what it
 * keeps.  Nothing is mirrored: the logged record is exactly `logged` (§20 Q3;
 * hosts that want callerPrincipal/callerResource write them). */
struct dw_value;
struct dw_uid;

typedef struct dw_event_entity {
    const struct dw_uid *uid;
    const struct dw_value *attrs;               /* RECORD of event values, or NULL */
    const struct dw_uid *const *parents;        /* direct parents */
    uint32_t nparents;
} dw_event_entity;

typedef struct dw_event_input {
    const char *atype; size_t atype_len;        /* action namespace path + "Action": "Drupe::Action" */
    const char *aid; size_t aid_len;            /* action id: "Read" */
    const char *kind; size_t kind_len;          /* event kind: "request" */
    int64_t ts;                                 /* ticks (taken as given with replay_timestamps), or DW_TS_NOW */
    const struct dw_uid *principal, *resource;  /* scope; NULL when absent (a decision is then denied) */
    const struct dw_value *logged;              /* RECORD: the logged record; NULL = empty */
    const struct dw_value *context;             /* RECORD: the request-context groups; NULL = empty */
    const dw_event_entity *entities;            /* per-event entity data */
    uint32_t nentities;
} dw_event_input;

/* Observe one event (§15.1): it is appended to the history whatever follows;
 * an event whose kind is not a decision kind of the event schema gets
 * v->decided == false.  A decision gets Cedar's verdict (§15.2: an erroring
 * policy is skipped, it does not deny); a failure of steps 3-7 is a deny with
 * cause internal_fault.  v->message then holds the errors, one per line
 * ('\n'-separated, truncated to the buffer).  0, or -1 when the engine is
 * unusable. */
int dw_engine_decide_event(dw_engine *e, const dw_event_input *in, dw_verdict *v);

/* dw_engine_open for dwc's commands: every diagnostic is printed on stderr
 * with its source line and caret (as `dwc compile` prints them), and err
 * says "cannot load the policy set (diagnostics above)". */
dw_engine *dw_engine_open_printing(const dw_engine_config *cfg, char *err, size_t errcap);
/* The same for the reference's replay, which runs without validating
 * (dogwood.md §16): the findings of the temporal checks against the schemas
 * (§9.6-§9.9) are printed as warnings and the set is loaded. */
dw_engine *dw_engine_open_unvalidated(const dw_engine_config *cfg, char *err, size_t errcap);
/* Both, with what dwc's commands take beyond dw_engine_config (which the
 * bindings mirror field for field, so it stays as it is). */
typedef struct dw_engine_cli_options {
    bool unvalidated;           /* dw_engine_open_unvalidated's behaviour */
    const char *macros_path;    /* --macros FILE: replaces the standard macro library (§10.6); NULL: the standard one */
} dw_engine_cli_options;
dw_engine *dw_engine_open_cli(const dw_engine_config *cfg, const dw_engine_cli_options *o, char *err, size_t errcap);

#endif
