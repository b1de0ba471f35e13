/* dogwood.h - the dwc runtime's public API: an engine that holds a compiled
 * policy set, its schemas and the event history, and decides Box-style events
 * (dogwood.md §15, box.md §6).  Every name is prefixed dw_.
 *
 *   dw_engine_config cfg = { .policy_path = "policy.dw", .schema_path = "box" };
 *   char err[256];
 *   dw_engine *e = dw_engine_open(&cfg, err, sizeof err);
 *   dw_verdict v;
 *   dw_engine_decide_json(e, "{\"action\":\"fs:read\",\"kind\":\"request\",\"input\":{...}}", len, DW_TS_NOW, &v);
 *   ... the effect happens ...
 *   dw_engine_record_json(e, "{\"action\":\"fs:read\",\"kind\":\"response\",\"input\":{...},\"output\":{...}}", len,
 *                         DW_TS_NOW, err, sizeof err);
 *   dw_engine_close(e);
 *
 * decide appends the decision event to the history *before* evaluating it, as
 * Box requires (so a count over ::request events includes the current one).
 * Every failure on the decision path is a deny (cause internal_fault); every
 * verdict starts as one, so no path leaves cause PERMITTED undecided.  Every
 * entry point returns an error (or a deny) on a NULL engine, config, path,
 * event or verdict.
 *
 * A lost event: when an accepted event cannot enter the in-memory history
 * (out of memory), the call fails (record: non-zero with the reason; decide:
 * a deny) and from then on the engine refuses every event (decisions deny
 * with cause internal_fault, "policy history failure: ..."; records fail;
 * nothing is appended or logged) until it holds the whole history again: a
 * non-durable engine after dw_engine_reset_history (an explicit, empty
 * history) or a reopen; a durable one, whose log holds the event, keeps a
 * copy of it and adds it at the start of the next call that finds memory
 * (as a reopen would replay it), or, if even the copy failed, after a
 * reopen.  dw_engine_history_error says why meanwhile.  A
 * failed compaction of the history (dropping events out of every window)
 * leaves the history whole and is retried later: verdicts are unaffected.
 *
 * Box mode (schema_path "box"): an event whose principal is not
 * Box::Agent::"self" or whose resource is not Box::Resource::"unused" (box.md
 * §1), or with a NUL byte in any string (which a C enforcement point would
 * read cut short), is refused: a deny with cause internal_fault (or a failed
 * record), never recorded.
 *
 * Threads: every function may be called from many threads at once on one
 * engine (one lock around the engine's state; a durable engine waits for
 * its log after releasing it, so concurrent decisions share one fsync).
 * Rule names and descriptions refer to the policy installed at the time of
 * the call (dw_engine_reload replaces it); returned names stay valid until
 * dw_engine_close. */
#ifndef DW_DOGWOOD_H
#define DW_DOGWOOD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The one definition of the release: dwc --version, dwd --version,
 * dw_version(), the SONAME (libdogwood.so.MAJOR), dogwood.pc, the man pages,
 * SARIF's driver.version and the decision log's OTLP scope all take it from
 * here (the Makefile reads these three lines). */
#define DW_VERSION_MAJOR 1
#define DW_VERSION_MINOR 0
#define DW_VERSION_PATCH 0
#define DW_VERSION_TEXT_(a, b, c) #a "." #b "." #c
#define DW_VERSION_TEXT(a, b, c) DW_VERSION_TEXT_(a, b, c)
#define DW_VERSION_STRING DW_VERSION_TEXT(DW_VERSION_MAJOR, DW_VERSION_MINOR, DW_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif
/* The library is compiled with -fvisibility=hidden: what this header
 * declares is the shared library's whole interface (libdogwood.map gives it
 * the version DOGWOOD_1); everything else links only statically.  The
 * bindings (runtime/bindings/) mirror the structures below field for field:
 * change one, change them (tests/lib/run.sh compares their sizes) and the
 * SONAME's MAJOR when the change is incompatible. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

typedef struct dw_engine dw_engine;

/* "No time given" for the ts arguments below: the event's "time" member if
 * it has one, else the clock.  Not a time (no RFC 3339 time maps to it), so
 * every other value, 0 (1970-01-01T00:00:00Z) included, is taken as a time. */
#define DW_TS_NOW INT64_MIN

typedef struct dw_engine_config {
    const char *policy_path;     /* .dw source or .dwb artifact */
    const char *schema_path;     /* Cedar schema file, or "box" for Box's built-in vocabulary */
    const char *events_path;     /* .dwschema file or built-in name; NULL: "box" with the box schema, else "default" */
    int64_t ticks_per_second;    /* 1000000000 (runtime, RFC 3339 times) or 1 (.log replay); 0 = 1e9 */
    bool replay_timestamps;      /* take timestamps as given (replay); else force strictly increasing */
    uint64_t temporal_work_bound;   /* steps of temporal evaluation per decision; 0 = the default below */
    /* dw_engine_decide_event only: true takes the request as given, unchecked
     * against the schema (the reference's behaviour, Cedar's
     * --request-validation false); false (default) denies a non-conforming
     * request (dogwood.md §20 D9).  Box's JSON events always pass its gate. */
    bool no_request_validation;
    /* Information providers (dogwood.md §13): a provider declaration file
     * (providers.json, §13.2; NULL: the built-ins alone), and the
     * deployment switch that refuses any set calling a provider ("information
     * providers are not enabled in this build", §13.6; always on in Box mode). */
    const char *providers_path;
    bool no_providers;
} dw_engine_config;

/* The work bound of one decision's temporal leaves (those without an
 * incremental monitor, vm/teval.h): every formula node evaluated, event
 * visited and row produced is a step.  A decision that needs more is denied
 * with cause internal_fault and a message naming the bound; at the default
 * that takes tens of milliseconds (docs/RELIABILITY.md), so one hostile
 * history cannot stall dwd's other clients for long. */
#define DW_TEMPORAL_WORK_BOUND_DEFAULT 4000000u

typedef enum dw_cause {
    DW_CAUSE_PERMITTED, DW_CAUSE_FORBIDDEN, DW_CAUSE_NO_MATCH, DW_CAUSE_INTERNAL_FAULT,
} dw_cause;

#define DW_VERDICT_MAX_RULES 32

typedef struct dw_verdict {
    bool decided;                /* false: the event's kind is not a decision kind */
    bool allow;
    dw_cause cause;
    uint32_t ndetermining;       /* determining rule indices, ascending (the first 32) */
    uint32_t determining[DW_VERDICT_MAX_RULES];
    uint32_t nerrors;            /* erroring policies (Box denies on any) */
    int64_t timestamp;           /* ticks assigned to the event */
    char message[256];           /* why, for internal faults and errors */
} dw_verdict;

/* A host callback for an information provider (dogwood.md §13.5): name is the
 * provider ("Ns::Fn") or one of its output methods ("Ns::Fn.m"); args is a
 * NUL-terminated JSON array of the resolved arguments in Cedar's JSON value
 * form (strings, numbers, booleans, null for an unresolvable argument, sets
 * as arrays, records as objects, {"__entity": {"type", "id"}},
 * {"__extn": {"fn": "decimal", "arg": "1.5"}}); an output method gets the
 * previous step's value first.  Write the result as JSON into out (capacity
 * outcap) and return its length; a length >= outcap asks to be called again
 * with a larger buffer (at most 1 MiB).  Return a negative number for an
 * error, with a NUL-terminated message in out.  The result must conform to
 * the declared output type, else the call is an error; every error denies
 * the decision (cause internal_fault, the message in dw_verdict.message).
 * The callback must be pure (same arguments, same result), thread-safe and
 * non-blocking, must not keep args after returning, and must not call back
 * into the engine: it runs under the engine's lock. */
typedef long (*dw_provider_fn)(void *ud, const char *name, const char *args, size_t args_len, char *out,
                               size_t outcap);

/* NULL with a message in err on any load or compile failure. */
dw_engine *dw_engine_open(const dw_engine_config *cfg, char *err, size_t errcap);
/* Frees e.  0, or -1 when a durable engine's log could not be flushed (or
 * had failed earlier): recorded events may not be durable. */
int dw_engine_close(dw_engine *e);
/* Register fn for provider (or output method) `name`, replacing an earlier
 * one; fn NULL unregisters.  At decision time a registered callback is used
 * first, else a built-in of that name, else the call fails (deny).  The
 * provider must be declared (providers_path) unless it is a built-in.  May
 * be called at any time from any thread.  0, or -1 (NULL engine or name,
 * out of memory). */
int dw_engine_register_provider(dw_engine *e, const char *name, dw_provider_fn fn, void *ud);

/* An event in Box's JSON form: {"time"?, "action", "namespace"?, "kind",
 * "input", "output"?, "request_id"?} (box.md §15.2).  ts: ticks, or
 * DW_TS_NOW to use "time" or else the clock.  0 on success (v filled; a deny
 * is a success), -1 only when an argument is NULL. */
int dw_engine_decide_json(dw_engine *e, const char *json, size_t len, int64_t ts, dw_verdict *v);
/* Append a ::response / ::error (or any non-decision) event.  0 once it is
 * in the history (and durable, for a durable engine); non-zero with the
 * reason in err when it is not (a refused event, a log failure, a lost
 * event: see above). */
int dw_engine_record_json(dw_engine *e, const char *json, size_t len, int64_t ts, char *err, size_t errcap);
/* A Cedar-shaped request ({"principal","action","resource","context"}) as a
 * ::request event (box.md §15.1). */
int dw_engine_decide_request_json(dw_engine *e, const char *json, size_t len, int64_t ts, dw_verdict *v);

/* Forget the history (a fresh authorizer on the same policy set); also ends
 * a non-durable engine's lost-event refusals. */
void dw_engine_reset_history(dw_engine *e);
/* Box's name for a rule: its @id, else policy_<i>.  The string stays valid
 * until dw_engine_close (across reloads). */
const char *dw_engine_rule_name(dw_engine *e, uint32_t rule);
/* Events retained in memory: those some leaf can still read (within the
 * leaves' reach, and of an identity some leaf needs: dogwood.md §7.3). */
uint32_t dw_engine_history_length(const dw_engine *e);
/* Replay (replay_timestamps): a promise that no event given from now on is
 * timed before ts, so the history drops what no window from ts on reaches.
 * Without one, a replay drops only events no leaf needs by identity.  A
 * floor lower than an earlier one is ignored. */
void dw_engine_set_time_floor(dw_engine *e, int64_t ts);
const char *dw_cause_name(dw_cause c);


/* ---- for the decision service (runtime/dwd_main.c) ---- */
typedef enum dw_observe_mode {
    DW_OBSERVE_DECIDE,   /* the kind must be a decision kind: gate, hook, append, evaluate */
    DW_OBSERVE_RECORD,   /* the kind must not be a decision kind: hook, append */
    DW_OBSERVE_RESTORE,  /* any kind: append without evaluating (a recovered history) */
} dw_observe_mode;
/* Called after the gate, before the event enters the history, with the
 * timestamp the engine will give it; non-zero refuses the event (a deny with
 * cause internal_fault, nothing appended). */
typedef int (*dw_engine_append_hook)(void *ctx, int64_t ts);
/* Box's JSON event form (as dw_engine_decide_json).  Returns 1 when the event
 * was appended to the history (v filled; v->timestamp its time), 0 when it
 * was refused or could not be appended (gate failure, wrong kind, hook
 * failure, a lost event: v->message says why; for DECIDE v is a deny with
 * cause internal_fault), -1 on a NULL argument. */
int dw_engine_observe_json(dw_engine *e, const char *json, size_t len, int64_t ts, dw_observe_mode mode,
                           dw_engine_append_hook hook, void *ctx, dw_verdict *v);
/* A rule's @description into buf (truncated); returns its length, 0 if none. */
size_t dw_engine_rule_description(dw_engine *e, uint32_t rule, char *buf, size_t cap);

/* ---- durable history (box.md §7; runtime/histlog.h) ----
 * dw_engine_open_durable opens the engine together with its history log in
 * state_dir: recovery loads the latest checkpoint and replays only the
 * records after it; every event a JSON entry point accepts is appended to
 * the log (its sequence number assigned under the engine lock) before it
 * enters the history, and the call returns once the record is durable
 * (DW_DURABILITY_FULL) or written (BATCH, NONE).  A log failure denies
 * (cause internal_fault, "policy history failure: ..."), and the log stays
 * failed until reopened.  dw_engine_decide_event and
 * dw_engine_decide_request_json deny on a durable engine (the log records
 * Box's JSON form), and dw_engine_reset_history does nothing. */
struct dw_histlog_fileops;

typedef struct dw_engine_durable {
    const char *state_dir;
    int durability;                      /* dw_durability: 0 full, 1 batch, 2 none; | DW_DURABLE_SALVAGE */
    int64_t checkpoint_every;            /* events between checkpoints; 0: 10,000; < 0: never by count */
    uint32_t checkpoint_interval_ms;     /* also after this long (if anything was logged); 0: not by time */
    const struct dw_histlog_fileops *fileops;   /* a confined process's file operations (runtime/keeper.h) */
} dw_engine_durable;
/* OR'ed into durability: open a corrupt history anyway, keeping every
 * intact record (runtime/histlog.h, recovery rules); the recovery's note
 * then starts "SALVAGED: N record(s) lost, K of them acknowledged".  Without
 * it a corrupt history fails the open.  (A flag, not a member: the layout
 * of libdogwood.so.1's structures stays.) */
#define DW_DURABLE_SALVAGE 0x100

typedef struct dw_engine_recovery {
    uint64_t events;             /* events logged so far (the log's next sequence number) */
    uint64_t replayed;           /* records replayed after the checkpoint */
    bool checkpoint;             /* a checkpoint was loaded */
    uint64_t checkpoint_seq;
    uint32_t retained;           /* events in the in-memory history after recovery */
    double seconds;              /* wall time of the whole open */
    char note[256];              /* torn data dropped; "SALVAGED: ..." losses ("" if none) */
} dw_engine_recovery;

dw_engine *dw_engine_open_durable(const dw_engine_config *cfg, const dw_engine_durable *d, dw_engine_recovery *rec,
                                  char *err, size_t errcap);

/* Split form for servers that batch (dwd): decide / record / observe
 * without waiting for the log; *ticket (0: nothing to wait for) is then
 * passed to dw_engine_wait, which returns 0 once the record is durable
 * (FULL) or written, -1 on a log failure (the caller must deny). */
int dw_engine_submit_json(dw_engine *e, const char *json, size_t len, int64_t ts, dw_observe_mode mode,
                          dw_verdict *v, uint64_t *ticket);
int dw_engine_wait(dw_engine *e, uint64_t ticket);
/* Why the engine refuses events ("" if it does not): a lost event (see the
 * top of this file) or the durable log's failure. */
const char *dw_engine_history_error(dw_engine *e);

/* Checkpoints.  The state is the retained history (only events some window
 * can still reach), each leaf's identity and install position, and the
 * clock; importing it into a fresh engine on the same policy and schemas
 * gives the same verdicts.  A durable engine also checkpoints by itself
 * (checkpoint_every / checkpoint_interval_ms) on a background thread and
 * retires log segments no window reaches.  0, or -1. */
int dw_engine_checkpoint(dw_engine *e);
int dw_engine_export_state(dw_engine *e, void **state, size_t *len);   /* *state: malloc'd */
int dw_engine_import_state(dw_engine *e, const void *state, size_t len, char *err, size_t errcap);

/* Swap the policy for a compiled artifact (.dwb bytes) atomically (box.md
 * §7: edits are prospective).  A temporal leaf whose identity (dogwood.md
 * D8) the installed policy also has keeps its state; a new or changed one
 * starts empty and sees only events after the reload.  A durable engine
 * writes a checkpoint with the new install positions before the swap, so a
 * restart on the new artifact gives the same verdicts; if that fails the
 * old policy stays.  The artifact must be compiled for the engine's
 * schemas.  0, or -1 with a message. */
typedef struct dw_reload_info { uint32_t leaves, kept, fresh, generation; } dw_reload_info;
int dw_engine_reload(dw_engine *e, const void *artifact, size_t len, dw_reload_info *info, char *err, size_t errcap);

typedef struct dw_engine_stats {
    uint32_t history_events;     /* retained in memory */
    uint64_t next_seq;           /* position of the next event */
    uint64_t restored, replayed; /* events logged before this open; records replayed by it */
    uint64_t log_next_seq, log_appends, log_syncs, log_max_batch;
    uint64_t checkpoints, checkpoint_failures;
    uint32_t generation;         /* reloads */
    uint64_t policies_evaluated; /* by the Cedar decisions since open (dwc bench --engine) */
    bool durable;
    char checkpoint_error[256];  /* the last checkpoint failure, "" if none */
} dw_engine_stats;
void dw_engine_get_stats(dw_engine *e, dw_engine_stats *st);

/* The library's release, "MAJOR.MINOR.PATCH" (DW_VERSION_STRING of the
 * library actually loaded, which may be newer than the header compiled
 * against).  Static storage. */
const char *dw_version(void);
/* Frees memory the library handed to the caller (dw_engine_export_state's
 * *state).  NULL is a no-op. */
void dw_free(void *p);

/* ---- ownership and threads, per function ----
 * dw_engine_open, dw_engine_open_durable: any thread; the engine belongs to
 *   the caller until dw_engine_close.  cfg, d and every string in them are
 *   read during the call only.  On failure NULL, and err holds the first
 *   diagnostic ("file:line:col: error: message"; truncated to errcap).
 * dw_engine_close: once, when no other call on the engine is running or
 *   will start; every name the engine returned is invalid afterwards.
 * dw_engine_decide_json, _decide_request_json, _record_json, _observe_json,
 *   _submit_json, _wait, _checkpoint, _export_state, _import_state,
 *   _reload, _reset_history, _get_stats, _history_length: any number of
 *   threads at once on one engine (one lock; durability waits happen after
 *   it is released).  json/artifact/state bytes are read during the call
 *   only; v, info, st, rec and err are the caller's and filled by the call.
 *   A hook runs on the calling thread under the engine lock and must not
 *   call back into the engine.
 * dw_engine_rule_name, dw_engine_history_error: any thread; the string is
 *   the engine's, valid until dw_engine_close (not freed by the caller).
 * dw_engine_rule_description: any thread; copies into the caller's buf.
 * dw_engine_export_state: *state is the caller's, freed with dw_free.
 * dw_cause_name, dw_version: any thread; static strings. */

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
