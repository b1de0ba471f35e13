/* engine_int.h - the engine's private parts, shared by the files that
 * implement runtime/dogwood.h's engine (one concern each):
 *   engine.c          the engine around its inputs, close, the decision entry points,
 *                     history append/retain
 *   engine_open.c     opening from an artifact alone: the serving path (dwd)
 *   engine_source.c   opening from policy text through the front end (the library)
 *   engine_event.c    events from Box's JSON form and the schema gate
 *   engine_parts.c    events given by their parts (dw_engine_decide_event)
 *   engine_state.c    the state codec (checkpoints, dw_engine_export_state)
 *   engine_keep.c     what of a kept event the history holds (the fields a leaf reads)
 *   engine_durable.c  durable history: log, checkpointer, recovery, reload
 *   engine_explain.c  dwc explain: one decision taken apart (runtime/explain.h)
 *   engine_providers.c  the provider pass and the host callbacks (dogwood.md §13.5)
 * Not installed: nothing outside runtime/engine*.c includes it. */
#ifndef DW_ENGINE_INT_H
#define DW_ENGINE_INT_H
#include "dogwood_parts.h"
#include "json_read_cache.h"
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>
#include "box_gate.h"
#include "histlog.h"
#include "json_value.h"
#include "../lang/eventschema.h"
#include "../lang/schema.h"
#include "names.h"
#include "retention.h"
#include "../vm/artifact.h"
#include "../vm/teval.h"
#include "../vm/monitor.h"   /* incremental monitors (vm/monitor.h) */
#include "../vm/leaves.h"    /* the leaf pass before a decision */

#define KEPT_IDS 4
typedef struct history {
    dw_event *ev;            /* events [0, n), oldest first */
    uint64_t *seq;           /* their log positions (durable engines: the history log's seq) */
    uint32_t n, cap;
    dw_arena arena;          /* logged records of every retained event */
    uint32_t dropped;        /* events dropped by retention since the arena was rebuilt */
    uint32_t scan;           /* events [0, scan) are known to be out of every leaf's reach
                                (retention's cursor: each event is tested once, not per decision) */
    uint32_t retry_at;       /* after a failed compaction: not again before n + dropped reaches this */
    int64_t scan_until;      /* ev[scan] is in reach until "now" passes this (the horizon of retention generation */
    uint64_t scan_gen;       /* scan_gen; 0: not known) */
    bool last_transient;     /* the last event points into the scratch arena (history_append_decision) */
    /* Box's event lines are read straight into the arena (engine_event.c's
     * one pass) when some leaf may keep events: a retained event is then
     * kept as it was read, no copy; one that is not kept gives the bytes
     * back (engine_history_uncarve) */
    dw_carve carve;
    char *mark, *mark_lim;   /* carve's position when the event began */
    bool carve_pending;      /* the last event's values are in the carve, not yet kept */
    int8_t last_needed;      /* whether a leaf needs the last event (retention): 1, 0, -1 not asked yet */
    bool expect_whole;       /* the last event was kept whole: the next line is read into the carve */
    /* engine_keep.c: the identity copies kept events share, by the retention identity they matched */
    struct kept_identity { const void *of; dw_str atype, aid, kind; } ids[KEPT_IDS];
    uint32_t ids_next;
    uint64_t ids_generation; /* the retention set's (dw_retention.generation) they are of */
    const void *last_id;     /* the retention set's identity of the last event it kept, its hash, */
    uint64_t last_hash, last_gen;   /* and the set's generation then (engine_keep.c) */
    bool last_fieldless;     /* that identity keeps no field and the history has no key: its parts are
                                time and identity only (engine_keep.c's fast path) */
    const struct kept_identity *last_share;   /* the ids slot the last kept event shared */
} history;

/* What serving reads, from an artifact's SERVE section (engine_open.c) or
 * from the front end (engine_source.c); the engine owns prog and store. */
typedef struct engine_inputs {
    dw_program *prog;
    dw_store store;
    const dw_schema *schema;   /* the request gate's action schema; NULL: none */
    const dw_event_schema *es; /* NULL: schema-free (kind "request" decides) */
    bool box;                  /* Box's built-in vocabulary: box_gate.h's refusals */
    uint64_t schema_digest;    /* XXH3-64 of the action schema's text, 0: none (a reload must match) */
    uint64_t events_digest;    /* XXH3-64 of the event schema's text, 0: unknown (the durable log's id) */
    void *owner;               /* what schema and es live in, given to release at close */
    void (*release)(void *owner);
} engine_inputs;

/* A durable engine's logged event that missed the in-memory history (keep_lost). */
typedef struct lost_event { char *json; size_t len; int64_t ts; uint64_t seq; } lost_event;

struct dw_engine {
    /* Every public entry point holds mu: decisions on many threads are
     * serialised on the engine's state (microseconds), while durability
     * waits happen after it is released, so concurrent deciders share one
     * fsync (group commit, runtime/histlog.h). */
    pthread_mutex_t mu;
    engine_inputs s;
    int64_t tps;
    bool replay_ts;
    int64_t last_ts;
    bool have_ts;
    history h;
    dw_arena scratch;        /* per-decision */
    uint64_t work_bound;     /* temporal steps per decision (dogwood.h) */
    bool whole_events;       /* kept events keep their whole record (dw_engine_open_printing: explain) */
    bool no_request_validation;   /* dw_engine_decide_event: the reference's unchecked requests (dogwood.h) */
    const char **names;      /* Box rule names, built on demand (interned in rule_names) */
    dw_names rule_names;     /* every name handed out: valid until close, across reloads */
    dw_retention ret;        /* which events the leaves need (runtime/retention.h) */
    int64_t floor;           /* replay: no later event is stamped before it (dw_engine_set_time_floor) */
    bool have_floor;
    uint32_t *leaf_policies; uint32_t nleaf_policies;   /* policies that own temporal leaves */
    dw_monitors *mon;        /* incremental monitors of the idiom leaves; NULL: teval only */
    int64_t *since;          /* per leaf: install position (ticks; INT64_MIN: all history), box.md §7 */
    uint64_t next_seq;       /* position of the next appended event */
    bool restoring;          /* recovery: monitors are rebuilt once at the end */
    uint32_t generation;     /* reloads so far */
    char lost[256];          /* why the in-memory history misses an event ("" if whole):
                                every event is refused until it is whole again (history_lost) */
    lost_event pend;         /* that event, retried by every later call (durable engines) */
    /* durable history (dw_engine_open_durable) */
    dw_histlog *log;
    uint64_t log_last_ts;    /* the log's timestamp of record next_seq - 1 */
    uint64_t ckpt_every, since_ckpt, ckpts, ckpt_failures;
    uint32_t ckpt_ms;
    pthread_t ckpt_thread;
    pthread_cond_t ckpt_cv;
    bool has_ckpt_thread, ckpt_stop, ckpt_busy;
    uint32_t ckpt_waiters;   /* threads in wait_ckpt_idle: the checkpointer starts none meanwhile */
    char ckpt_err[256];
    uint64_t restored, replayed;
    uint64_t evaluated;      /* policies the decisions evaluated (dw_engine_stats) */
    dw_uid box_self, box_unused;   /* Box's fixed scope (box.md §1), built once, not per event */
    dw_read_cache uids;       /* the event reader's uid objects of earlier lines (runtime/json_read_cache.h) */
    struct action_memo {     /* engine_event.c: the schema's answers for recent actions, by uid hash, two ways */
        uint64_t hash; uint32_t generation, used; const void *schema;
        const void *ad, *in_d, *out_d;   /* dw_action_decl, dw_attr_decl of "input" and "output" */
        uint8_t passed;      /* MEMO_* bits: gate checks of this action that passed (they depend on nothing else) */
        const dw_program *bound_prog; const dw_uid *canon; const dw_entity *ent;   /* dw_request_bind's answer */
    } action_memo[32];
    struct scope_bind {      /* dw_request_bind's answers for box_self and box_unused */
        uint32_t generation; const dw_program *prog; const dw_store *store;
        const dw_uid *canon[2]; const dw_entity *ent[2];
    } scope_bind;
    struct event_head {      /* engine_event.c: event line heads read before, by their first bytes, two ways */
        uint16_t len, aoff, koff; int8_t member; bool ns, box, decision;   /* len 0: empty */
        uint32_t generation, used; const void *schema, *es;
        uint64_t action_hash;
        const void *ad, *in_d, *out_d; struct action_memo *memo;
        const char *kept[2]; uint64_t kept_gen;   /* the action's and kind's shared copies in the history (uids.keep_gen; 0: none) */
        uint16_t atlen, aidlen, klen, nslen;
        char str[256], bytes[240];
    } event_head[16];
    uint32_t event_lines;    /* lines read (event_head's recency) */
    struct dw_explanation *explain;   /* dwc explain: the next decision is taken apart into it */
    struct engine_providers *providers;   /* host callbacks (engine_providers.c), NULL: none */
};

typedef struct built {
    dw_event ev;             /* logged record in the scratch arena until appended */
    dw_request req;          /* the Cedar request (decision kinds) */
    bool decision;
    uint64_t action_hash;    /* dw_uid_hash of the action */
    bool in_hist;            /* ev's strings and logged record live in the history's carve (history.carve) */
    dw_read_cache_uid *scope_sl[2];   /* the reader cache's slots of the principal and resource read, and their */
    uint64_t scope_ver[2];   /* readings (versions): bind_request keeps its answer there (NULL: none) */
} built;

/* State buffers (engine_state.c); log records are built in one too. */
typedef struct wbuf { uint8_t *p; size_t n, cap; bool oom; } wbuf;
/* Restored install table: identity -> position. */
typedef struct itab { uint64_t *id; int64_t *since; uint32_t n; bool have; } itab;

/* engine.c */
dw_engine *engine_new(const dw_engine_config *cfg, engine_inputs *in, char *err, size_t errcap);
int engine_events_digest(const char *events, uint64_t *out, char *err, size_t cap);
dw_monitors *engine_new_monitors(dw_engine *e, const dw_program *p);
void engine_reset_history_locked(dw_engine *e);
int engine_history_append(dw_engine *e, const built *b, int64_t ts);
void engine_history_retain(dw_engine *e);
int64_t engine_stamp(dw_engine *e, int64_t ts);
void engine_fault(dw_verdict *v, const char *fmt, const char *detail);
void engine_verdict_init(dw_verdict *v);
void engine_history_lost(dw_engine *e, dw_verdict *v);
bool engine_refuse_lost(dw_engine *e, dw_verdict *v);
const char *engine_rule_name_locked(dw_engine *e, uint32_t rule);   /* dw_engine_rule_name, mu held */
int engine_leaf_env(dw_engine *e, const dw_value *anchor_context, dw_leaf_env *env);   /* in scratch */
int engine_authorize(dw_engine *e, const dw_store *store, dw_request *req, const dw_value *anchor_context,
                     dw_response *resp, dw_verdict *v);
int engine_observe_locked(dw_engine *e, const char *json, size_t len, int64_t ts, dw_observe_mode mode,
                          dw_engine_append_hook hook, void *ctx, dw_verdict *v, uint64_t *ticket);

/* engine_event.c */
int engine_build_event(dw_engine *e, built *b, const char *atype, size_t atlen, const char *aid, size_t aidlen,
                       const char *kind, size_t klen, const dw_uid *principal, const dw_uid *resource,
                       const dw_json *input_j, const dw_json *output_j, const dw_json *request_id,
                       char *msg, size_t cap);
int engine_event_from_json(dw_engine *e, const char *json, size_t len, int64_t *ts, built *b, dw_verdict *v);
bool engine_clone_event(dw_engine *e, dw_arena *a, const dw_event *src, dw_event *out);
void engine_history_uncarve(dw_engine *e);
void engine_history_carve_reset(dw_engine *e);

/* engine_keep.c: what of ev a kept event holds (DW_RETAIN_*): with
 * DW_RETAIN_FIELDS, *cut is it, its parts copied into the history's arena;
 * -1 on OOM (nothing appended: the history misses the event) */
int engine_keep_part(dw_engine *e, const dw_event *ev, dw_event *cut, uint64_t *ihash);   /* *ihash: its identity's hash, 0 if not made */
void engine_keep_reset(history *h);   /* the history's arena is reset or replaced */

/* engine_open.c */
int engine_reload_serve_check(const dw_engine *e, const dw_program *np, char *msg, size_t cap);

/* engine_providers.c: the provider pass (§15.1 step 4), out of line; the
 * inline test keeps a set with no provider call from paying for the call */
int engine_provider_pass(dw_engine *e, const dw_store *store, dw_request *req, dw_verdict *v);
static inline int engine_evaluate_providers(dw_engine *e, const dw_store *store, dw_request *req, dw_verdict *v)
{
    return e->s.prog->provider.ncalls ? engine_provider_pass(e, store, req, v) : 0;
}
void engine_providers_free(dw_engine *e);

/* engine_parts.c */
int engine_decide_event_locked(dw_engine *e, const dw_event_input *in, dw_verdict *v);

/* engine_state.c */
void engine_wb_put(wbuf *b, const void *s, size_t n);
int engine_export_locked(dw_engine *e, const dw_program *prog, const int64_t *since, wbuf *b, uint64_t *keep);
int engine_import_locked(dw_engine *e, const void *data, size_t len, itab *it, char *err, size_t cap);
bool engine_apply_installs(dw_engine *e, const itab *it);
void engine_feed_monitors(dw_engine *e, dw_monitors *m, const dw_program *p, const int64_t *since);

/* engine_explain.c: resp NULL when the decision faulted before Cedar's */
void engine_explain_decision(dw_engine *e, const dw_request *req, const dw_response *resp, const dw_verdict *v);

/* engine_durable.c */
bool engine_durable_invalid(const dw_engine_durable *d);
dw_engine *engine_make_durable(dw_engine *e, const dw_engine_durable *d, dw_engine_recovery *rec, char *err, size_t errcap);
void engine_stop_checkpointer(dw_engine *e);
int engine_log_event(dw_engine *e, int64_t ts, const char *json, size_t len, uint64_t *ticket);

#endif
