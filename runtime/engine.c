/* engine.c - the stateful authorizer (dogwood.md §15.1, box.md §6): events
 * in, verdicts out, temporal leaves evaluated over the retained history.
 *
 * decide:  build the event and its Cedar request -> gate (decision kinds must
 *          conform to the schema; a non-conforming request is denied and not
 *          recorded) -> append -> evaluate the leaves of every rule whose scope
 *          admits the request -> Cedar decision -> Box's verdict.
 * record:  build the event -> append.
 * Every failure after the gate is a deny with cause internal_fault. */
#include "dogwood_parts.h"
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
#include "load.h"
#include "names.h"
#include "retention.h"
#include "../vm/artifact.h"
#include "../vm/teval.h"
#include "../vm/monitor.h"   /* incremental monitors (vm/monitor.h) */

typedef struct history {
    dw_event *ev;            /* events [0, n), oldest first */
    uint64_t *seq;           /* their log positions (durable engines: the history log's seq) */
    uint32_t n, cap;
    dw_arena arena;          /* logged records of every retained event */
    uint32_t dropped;        /* events dropped by retention since the arena was rebuilt */
    uint32_t scan;           /* events [0, scan) are known to be out of every leaf's reach
                                (retention's cursor: each event is tested once, not per decision) */
    uint32_t retry_at;       /* after a failed compaction: not again before n + dropped reaches this */
    bool last_transient;     /* the last event points into the scratch arena (history_append_decision) */
} history;

/* A durable engine's logged event that missed the in-memory history (keep_lost). */
typedef struct lost_event { char *json; size_t len; int64_t ts; uint64_t seq; } lost_event;

struct dw_engine {
    /* Every public entry point holds mu: decisions on many threads are
     * serialised on the engine's state (microseconds), while durability
     * waits happen after it is released, so concurrent deciders share one
     * fsync (group commit, runtime/histlog.h). */
    pthread_mutex_t mu;
    dw_session s;
    int64_t tps;
    bool replay_ts;
    int64_t last_ts;
    bool have_ts;
    history h;
    dw_arena scratch;        /* per-decision */
    uint64_t work_bound;     /* temporal steps per decision (dogwood.h) */
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
};

const char *dw_cause_name(dw_cause c)
{
    switch (c) {
    case DW_CAUSE_PERMITTED: return "permitted";
    case DW_CAUSE_FORBIDDEN: return "forbidden";
    case DW_CAUSE_NO_MATCH: return "no_match";
    case DW_CAUSE_INTERNAL_FAULT: return "internal_fault";
    }
    return "internal_fault";
}

/* ---- opening ---- */

static void stop_checkpointer(dw_engine *e);

/* The incremental monitors of p: optional (on OOM every leaf simply runs
 * through teval). */
static dw_monitors *new_monitors(dw_engine *e, const dw_program *p)
{
    dw_monitors *m = p->temporal.nleaves ? dw_monitors_new(p, e->tps) : NULL;
    if (m && e->s.es && e->s.es->nkey) {   /* key-local (§8.9): partition the monitors' state too */
        dw_bytes kp[16];
        size_t nk = e->s.es->nkey;
        for (size_t k = 0; k < nk && k < 16; k++) kp[k] = (dw_bytes){ e->s.es->key[k].path.s, e->s.es->key[k].path.len };
        if (nk > 16 || dw_monitors_set_partition(m, kp, (uint32_t)nk)) { dw_monitors_free(m); m = NULL; }
    }
    return m;
}

/* print: dwc's commands, which show every diagnostic with its caret on
 * stderr; library callers get the first one back in err instead. */
static dw_engine *open_engine(const dw_engine_config *cfg, bool print, bool findings_warn, char *err, size_t errcap)
{
    if (!err) errcap = 0;
    if (!cfg || !cfg->policy_path) { snprintf(err, errcap, "no %s", cfg ? "policy path" : "configuration"); return NULL; }
    dw_monitors_seed();          /* getrandom now: dwd's seccomp filter, installed later, refuses it */
    dw_engine *e = calloc(1, sizeof *e);
    if (!e) { snprintf(err, errcap, "out of memory"); return NULL; }
    pthread_mutex_init(&e->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&e->ckpt_cv, &ca);
    pthread_condattr_destroy(&ca);
    dw_session_init(&e->s);
    e->s.quiet = !print;
    e->s.schema_findings_warn = findings_warn;
    dw_arena_init(&e->h.arena, 256 * 1024);
    dw_arena_init(&e->scratch, 256 * 1024);
    e->tps = cfg->ticks_per_second > 0 ? cfg->ticks_per_second : 1000000000;
    e->replay_ts = cfg->replay_timestamps;
    e->work_bound = cfg->temporal_work_bound ? cfg->temporal_work_bound : DW_TEMPORAL_WORK_BOUND_DEFAULT;
    e->no_request_validation = cfg->no_request_validation;
    int rc = 0;
    if (cfg->schema_path) rc = dw_session_load_schema(&e->s, cfg->schema_path);
    if (!rc && cfg->schema_path) rc = dw_session_load_events(&e->s, cfg->events_path);
    if (!rc) rc = dw_session_load_policies(&e->s, cfg->policy_path);
    if (!rc) rc = dw_session_load_entities(&e->s, NULL);
    if (rc) {
        if (print || !e->s.first_error[0]) snprintf(err, errcap, "cannot load the policy set%s", print ? " (diagnostics above)" : "");
        else snprintf(err, errcap, "%s", e->s.first_error);
        dw_engine_close(e);
        return NULL;
    }
    const dw_program *p = e->s.prog;
    e->leaf_policies = calloc(p->npolicies + 1, sizeof *e->leaf_policies);
    if (!e->leaf_policies) { snprintf(err, errcap, "out of memory"); dw_engine_close(e); return NULL; }
    for (uint32_t i = 0; i < p->npolicies; i++)
        if (p->policies[i].nleaves) e->leaf_policies[e->nleaf_policies++] = i;
    e->since = malloc((p->temporal.nleaves + 1) * sizeof *e->since);
    if (!e->since) { snprintf(err, errcap, "out of memory"); dw_engine_close(e); return NULL; }
    for (uint32_t l = 0; l < p->temporal.nleaves; l++) e->since[l] = INT64_MIN;
    e->mon = new_monitors(e, p);
    dw_retention_install(&e->ret, p);    /* on OOM it keeps everything */
    e->box_self = (dw_uid){ .type = "Box::Agent", .tlen = 10, .id = "self", .idlen = 4 };
    e->box_unused = (dw_uid){ .type = "Box::Resource", .tlen = 13, .id = "unused", .idlen = 6 };
    e->box_self.hash = dw_uid_hash(e->box_self.type, 10, e->box_self.id, 4);
    e->box_unused.hash = dw_uid_hash(e->box_unused.type, 13, e->box_unused.id, 6);
    return e;
}

dw_engine *dw_engine_open(const dw_engine_config *cfg, char *err, size_t errcap) { return open_engine(cfg, false, false, err, errcap); }
dw_engine *dw_engine_open_printing(const dw_engine_config *cfg, char *err, size_t errcap) { return open_engine(cfg, true, false, err, errcap); }
dw_engine *dw_engine_open_unvalidated(const dw_engine_config *cfg, char *err, size_t errcap) { return open_engine(cfg, true, true, err, errcap); }

int dw_engine_close(dw_engine *e)
{
    if (!e) return 0;
    stop_checkpointer(e);
    int rc = e->log && dw_histlog_close(e->log) ? -1 : 0;
    if (rc) fprintf(stderr, "dogwood: the history log's final flush failed\n");
    free(e->pend.json);
    dw_retention_free(&e->ret);
    free(e->since);
    free(e->h.seq);
    pthread_cond_destroy(&e->ckpt_cv);
    pthread_mutex_destroy(&e->mu);
    free(e->names);
    dw_names_free(&e->rule_names);
    free(e->leaf_policies);
    dw_monitors_free(e->mon);
    free(e->h.ev);
    dw_arena_free(&e->h.arena);
    dw_arena_free(&e->scratch);
    dw_session_free(&e->s);
    free(e);
    return rc;
}

static void reset_history_locked(dw_engine *e)
{
    if (e->log) return;          /* a durable history is never forgotten */
    e->lost[0] = 0;              /* an empty history is whole */
    e->h.n = 0;
    e->h.dropped = 0;
    e->h.scan = 0;
    e->h.retry_at = 0;
    dw_arena_reset(&e->h.arena);
    dw_monitors_reset(e->mon);   /* monitors follow the history */
    e->have_ts = false;
}

static const char *rule_name_locked(dw_engine *e, uint32_t rule)
{
    const dw_program *p = e->s.prog;
    if (rule >= p->npolicies) return "<default-deny>";
    if (!e->names && !(e->names = calloc(p->npolicies, sizeof *e->names))) return "policy_?";
    if (!e->names[rule]) {
        const dw_policy_code *pc = &p->policies[rule];
        char buf[512];
        snprintf(buf, sizeof buf, "policy_%u", rule);
        for (uint32_t k = 0; k < pc->nannots; k++)
            if (pc->annots[k].key.len == 2 && memcmp(pc->annots[k].key.s, "id", 2) == 0)
                snprintf(buf, sizeof buf, "%.*s", (int)pc->annots[k].value.len, pc->annots[k].value.s);
        e->names[rule] = dw_names_intern(&e->rule_names, buf, strlen(buf));
    }
    return e->names[rule] ? e->names[rule] : "policy_?";
}

/* ---- time ---- */

static int64_t clock_ticks(const dw_engine *e)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    return e->tps == 1000000000 ? ns : ns / (1000000000 / e->tps);
}

/* ---- building events ---- */

typedef struct built {
    dw_event ev;             /* logged record in the scratch arena until appended */
    dw_request req;          /* the Cedar request (decision kinds) */
    bool decision;
} built;

static const dw_attr_decl *record_attr(const dw_type *t, const char *name)
{
    if (!t || t->kind != DW_T_RECORD) return NULL;
    for (size_t i = 0; i < t->nattrs; i++)
        if (t->attrs[i].name.len == strlen(name) && memcmp(t->attrs[i].name.s, name, t->attrs[i].name.len) == 0)
            return &t->attrs[i];
    return NULL;
}

/* Box lets callers give an enumerated entity as its bare id ("read_content"
 * for Box::FsReadOperation::"read_content"; issue 7, box.md §6): where the
 * schema expects an enum entity type and the JSON has a string, the string
 * becomes {"__entity":{"type":T,"id":s}}; a string that is not one of the
 * enum's ids sets *bad (the request fails the gate).  Returns j itself when
 * nothing changes, NULL on OOM. */
static const dw_json *enum_strings(dw_arena *a, const dw_schema *sc, const dw_type *t, const dw_json *j, int depth,
                                   const dw_json **bad)
{
    if (!t || !j || depth > 64) return j;
    if (t->kind == DW_T_ENTITY && j->kind == DW_JSON_STRING) {
        const dw_entity_decl *d = dw_schema_entity(sc, t->name.s, t->name.len);
        if (!d || !d->is_enum) return j;
        size_t q = 0;
        while (q < d->nenum && !(d->enum_ids[q].len == j->u.str.len && !memcmp(d->enum_ids[q].s, j->u.str.s, j->u.str.len))) q++;
        if (q == d->nenum) { *bad = j; return j; }
        dw_json *o = dw_arena_alloc(a, sizeof *o), *in = dw_arena_alloc(a, sizeof *in);
        dw_json *ty = dw_arena_alloc(a, sizeof *ty), *id = dw_arena_alloc(a, sizeof *id);
        dw_json_member *m = dw_arena_alloc(a, 3 * sizeof *m);
        if (!o || !in || !ty || !id || !m) return NULL;
        *ty = (dw_json){ .kind = DW_JSON_STRING, .off = j->off, .end = j->end };
        ty->u.str = t->name;
        *id = *j;
        m[0] = (dw_json_member){ { "type", 4 }, ty, j->off };
        m[1] = (dw_json_member){ { "id", 2 }, id, j->off };
        *in = (dw_json){ .kind = DW_JSON_OBJECT, .off = j->off, .end = j->end };
        in->u.obj.v = m;
        in->u.obj.n = 2;
        m[2] = (dw_json_member){ { "__entity", 8 }, in, j->off };
        *o = (dw_json){ .kind = DW_JSON_OBJECT, .off = j->off, .end = j->end };
        o->u.obj.v = &m[2];
        o->u.obj.n = 1;
        return o;
    }
    if (t->kind == DW_T_SET && j->kind == DW_JSON_ARRAY) {
        dw_json *c = NULL;
        for (size_t k = 0; k < j->u.arr.n; k++) {
            const dw_json *x = enum_strings(a, sc, t->elem, j->u.arr.v[k], depth + 1, bad);
            if (!x) return NULL;
            if (x == j->u.arr.v[k]) continue;
            if (!c) {
                if (!(c = dw_arena_alloc(a, sizeof *c))) return NULL;
                *c = *j;
                if (!(c->u.arr.v = dw_arena_alloc(a, j->u.arr.n * sizeof *c->u.arr.v))) return NULL;
                memcpy(c->u.arr.v, j->u.arr.v, j->u.arr.n * sizeof *c->u.arr.v);
            }
            c->u.arr.v[k] = (dw_json *)x;
        }
        return c ? c : j;
    }
    if (t->kind == DW_T_RECORD && j->kind == DW_JSON_OBJECT) {
        dw_json *c = NULL;
        for (size_t k = 0; k < j->u.obj.n; k++) {
            const dw_json_member *mb = &j->u.obj.v[k];
            const dw_type *ft = NULL;
            for (size_t q = 0; q < t->nattrs && !ft; q++)
                if (t->attrs[q].name.len == mb->key.len && !memcmp(t->attrs[q].name.s, mb->key.s, mb->key.len)) ft = t->attrs[q].type;
            const dw_json *x = enum_strings(a, sc, ft, mb->value, depth + 1, bad);
            if (!x) return NULL;
            if (x == mb->value) continue;
            if (!c) {
                if (!(c = dw_arena_alloc(a, sizeof *c))) return NULL;
                *c = *j;
                if (!(c->u.obj.v = dw_arena_alloc(a, j->u.obj.n * sizeof *c->u.obj.v))) return NULL;
                memcpy(c->u.obj.v, j->u.obj.v, j->u.obj.n * sizeof *c->u.obj.v);
            }
            c->u.obj.v[k].value = (dw_json *)x;
        }
        return c ? c : j;
    }
    return j;
}

static bool set_field(dw_arena *a, dw_field *f, const char *key, dw_value v)
{
    f->key = key;
    f->klen = (uint32_t)strlen(key);
    f->v = v;
    (void)a;
    return true;
}

/* The common part of both event forms: identity, scope, input/output values.
 * `input_j`/`output_j` may be NULL.  Returns 0, or -1 with msg (a gate
 * failure for decision kinds). */
static int build_event(dw_engine *e, built *b, const char *atype, size_t atlen, const char *aid, size_t aidlen,
                       const char *kind, size_t klen, const dw_uid *principal, const dw_uid *resource,
                       const dw_json *input_j, const dw_json *output_j, const dw_json *request_id,
                       char *msg, size_t cap)
{
    dw_arena *a = &e->scratch;
    dw_buf err = { 0 };
    memset(b, 0, sizeof *b);
    /* aid and kind are NUL-terminated strings of the scratch arena already
     * (the event's JSON or its request's uid): only atype is copied */
    b->ev.atype = (dw_bytes){ dw_arena_memdup(a, atype, atlen), atlen };
    b->ev.aid = (dw_bytes){ aid, aidlen };
    b->ev.kind = (dw_bytes){ kind, klen };
    b->decision = e->s.es ? dw_event_schema_is_decision_kind(e->s.es, kind, klen) : (klen == 7 && !memcmp(kind, "request", 7));
    const dw_action_decl *ad = e->s.schema ? dw_schema_action(e->s.schema, atype, atlen, aid, aidlen) : NULL;
    if (e->s.schema && !ad) {
        snprintf(msg, cap, "action %.*s::\"%.*s\" is not declared in the schema", (int)atlen, atype, (int)aidlen, aid);
        return -1;
    }
    /* input and output, parsed against the declared context where there is one */
    const dw_attr_decl *in_d = ad ? record_attr(ad->context, "input") : NULL;
    const dw_attr_decl *out_d = ad ? record_attr(ad->context, "output") : NULL;
    dw_value in = { .kind = DW_V_RECORD }, out = { .kind = DW_V_RECORD };
    bool have_in = input_j != NULL, have_out = output_j != NULL;
    const dw_json *bad_enum = NULL;
    if (in_d && !(input_j = enum_strings(a, e->s.schema, in_d->type, input_j, 0, &bad_enum)) && have_in) { snprintf(msg, cap, "out of memory"); return -1; }
    if (out_d && !(output_j = enum_strings(a, e->s.schema, out_d->type, output_j, 0, &bad_enum)) && have_out) { snprintf(msg, cap, "out of memory"); return -1; }
    if (bad_enum && b->decision) {
        snprintf(msg, cap, "request does not conform to the schema: \"%.*s\" is not a value of its enumerated entity type",
                 (int)(bad_enum->u.str.len > 64 ? 64 : bad_enum->u.str.len), bad_enum->u.str.s);
        return -1;
    }
    if (have_in && dw_value_from_json(a, input_j, b->decision && in_d ? in_d->type : NULL, &in, &err)) {
        if (b->decision) { snprintf(msg, cap, "request does not conform to the schema: input: %s", err.p ? err.p : "?"); dw_buf_free(&err); return -1; }
        /* a record event that the schema cannot type is kept schema-free */
        err.len = 0;
        if (dw_value_from_json(a, input_j, NULL, &in, &err)) { snprintf(msg, cap, "input: %s", err.p ? err.p : "?"); dw_buf_free(&err); return -1; }
    }
    if (have_out && dw_value_from_json(a, output_j, out_d ? out_d->type : NULL, &out, &err)) {
        err.len = 0;
        if (dw_value_from_json(a, output_j, NULL, &out, &err)) { snprintf(msg, cap, "output: %s", err.p ? err.p : "?"); dw_buf_free(&err); return -1; }
    }
    dw_buf_free(&err);
    /* logged record: input, output, callerPrincipal, callerResource, requestId (§7.1 mirroring) */
    dw_field *lf = dw_arena_alloc(a, 5 * sizeof *lf);
    if (!lf) { snprintf(msg, cap, "out of memory"); return -1; }
    size_t nf = 0;
    if (have_in) set_field(a, &lf[nf++], "input", in);
    if (have_out) set_field(a, &lf[nf++], "output", out);
    dw_value pv = { .kind = DW_V_ENTITY }, rv = { .kind = DW_V_ENTITY };
    pv.u.uid = principal;
    rv.u.uid = resource;
    if (principal) set_field(a, &lf[nf++], "callerPrincipal", pv);
    if (resource) set_field(a, &lf[nf++], "callerResource", rv);
    if (request_id && request_id->kind == DW_JSON_STRING) {
        dw_value s;
        if (!dw_make_string(a, request_id->u.str.s, request_id->u.str.len, &s)) { snprintf(msg, cap, "out of memory"); return -1; }
        set_field(a, &lf[nf++], "requestId", s);
    }
    dw_make_record(lf, nf, &b->ev.logged);
    if (!b->decision) return 0;

    /* the Cedar request: context = { input } (box.md §15.2), checked like Box's gate */
    if (!principal || !resource) { snprintf(msg, cap, "decision event has no %s in scope", principal ? "resource" : "principal"); return -1; }
    dw_field *cf = dw_arena_alloc(a, sizeof *cf);
    if (!cf) { snprintf(msg, cap, "out of memory"); return -1; }
    size_t nc = 0;
    if (have_in) set_field(a, &cf[nc++], "input", in);
    dw_make_record(cf, nc, &b->req.vars[DW_VAR_C]);
    b->req.vars[DW_VAR_P] = pv;
    b->req.vars[DW_VAR_R] = rv;
    b->req.vars[DW_VAR_A].kind = DW_V_ENTITY;
    dw_uid *au = dw_arena_alloc_raw(a, sizeof *au);
    if (!au || !b->ev.atype.s) { snprintf(msg, cap, "out of memory"); return -1; }
    *au = (dw_uid){ .type = b->ev.atype.s, .tlen = (uint32_t)atlen, .id = aid, .idlen = (uint32_t)aidlen,
                    .hash = dw_uid_hash(atype, atlen, aid, aidlen) };
    b->req.vars[DW_VAR_A].u.uid = au;
    if (ad) {
        for (size_t k = 0; k < ad->context->nattrs; k++) {
            const dw_attr_decl *d = &ad->context->attrs[k];
            bool present = dw_record_get(&b->req.vars[DW_VAR_C], d->name.s, d->name.len) != NULL;
            if (d->required && !present) { snprintf(msg, cap, "request does not conform to the schema: context.%s is required", d->name.s); return -1; }
        }
        for (uint32_t k = 0; k < b->req.vars[DW_VAR_C].n; k++)
            if (!record_attr(ad->context, b->req.vars[DW_VAR_C].u.fields[k].key)) {
                snprintf(msg, cap, "request does not conform to the schema: context.%s is not declared", b->req.vars[DW_VAR_C].u.fields[k].key);
                return -1;
            }
        bool pok = false, rok = false;
        for (size_t k = 0; k < ad->nprincipals; k++)
            if (ad->principals[k].len == principal->tlen && !memcmp(ad->principals[k].s, principal->type, principal->tlen)) pok = true;
        for (size_t k = 0; k < ad->nresources; k++)
            if (ad->resources[k].len == resource->tlen && !memcmp(ad->resources[k].s, resource->type, resource->tlen)) rok = true;
        if (!pok || !rok) { snprintf(msg, cap, "request does not conform to the schema: %s type is not allowed for this action", pok ? "resource" : "principal"); return -1; }
    }
    return 0;
}

/* ---- history ---- */

static int history_put(dw_engine *e, const built *b, int64_t ts, bool transient)
{
    history *h = &e->h;
    if (h->n == h->cap) {
        uint32_t cap = h->cap ? h->cap * 2 : 256;
        dw_event *ev = realloc(h->ev, cap * sizeof *ev);
        if (!ev) return -1;
        h->ev = ev;
        uint64_t *sq = realloc(h->seq, cap * sizeof *sq);
        if (!sq) return -1;
        h->seq = sq;
        h->cap = cap;
    }
    h->seq[h->n] = e->next_seq;
    dw_event *ev = &h->ev[h->n];
    ev->ts = ts;
    h->last_transient = transient;
    if (transient) {
        ev->atype = b->ev.atype;
        ev->aid = b->ev.aid;
        ev->kind = b->ev.kind;
        ev->logged = b->ev.logged;
    } else {
        ev->atype = (dw_bytes){ dw_arena_memdup(&h->arena, b->ev.atype.s, b->ev.atype.len), b->ev.atype.len };
        ev->aid = (dw_bytes){ dw_arena_memdup(&h->arena, b->ev.aid.s, b->ev.aid.len), b->ev.aid.len };
        ev->kind = (dw_bytes){ dw_arena_memdup(&h->arena, b->ev.kind.s, b->ev.kind.len), b->ev.kind.len };
        if (!ev->atype.s || !ev->aid.s || !ev->kind.s || !dw_value_clone(&h->arena, &b->ev.logged, &ev->logged)) return -1;
    }
    h->n++;
    e->next_seq++;
    /* monitors see every appended event before its decision; a failure only
     * disables them (teval takes over), it is not a fault of this event.
     * During recovery they are rebuilt once at the end (rebuild_monitors). */
    if (e->mon && !e->restoring) dw_monitors_observe(e->mon, e->s.prog, ev);
    return 0;
}

static int history_append(dw_engine *e, const built *b, int64_t ts) { return history_put(e, b, ts, false); }

/* An event that no leaf needs (retention) is read only by its own decision
 * (monitors copy what they keep) and dropped by the history_retain that
 * ends it: it is not cloned into the history arena, it points into the
 * scratch arena that lives until the next event. */
static int history_append_decision(dw_engine *e, const built *b, int64_t ts)
{
    return history_put(e, b, ts, !dw_retention_needs(&e->ret, &b->ev));
}

/* Drop events no leaf can reach any more (dogwood.md §7.3): the event just
 * decided when no leaf needs its identity (runtime/retention.h), and those
 * older than the leaves' reach.  "Now" is the last timestamp with the
 * runtime's strictly increasing ones; a replay, whose timestamps may go
 * back, drops by time only below the floor its caller promises. */
static void history_retain(dw_engine *e)
{
    history *h = &e->h;
    if (h->n && !dw_retention_needs(&e->ret, &h->ev[h->n - 1])) {
        h->n--;
        if (!h->last_transient) h->dropped++;   /* its bytes stay in the arena until the next rebuild */
    }
    h->last_transient = false;   /* a transient event never outlives its decision */
    bool waste = h->dropped > h->n + 1024;
    if (!waste && h->n < 1024) return;
    int64_t horizon, d;
    /* an event out of reach stays out (the clock and the floor never go
     * back): resume from the cursor (amortized O(1) per event) */
    uint32_t keep_from = h->scan < h->n ? h->scan : h->n ? h->n - 1 : 0;
    if (h->n && (!e->replay_ts || e->have_floor) &&
        !__builtin_mul_overflow(dw_retention_reach(&e->ret, e->s.prog), e->tps, &horizon)) {
        int64_t now = e->replay_ts ? e->floor : h->ev[h->n - 1].ts;
        while (keep_from < h->n - 1 && (__builtin_sub_overflow(now, h->ev[keep_from].ts, &d) ? now > 0 : d > horizon))
            keep_from++;
    }
    h->scan = keep_from;
    if ((keep_from < h->n / 2 && !waste) || h->n + h->dropped < h->retry_at) return;
    /* rebuild: copy the retained events into a fresh arena and a fresh
     * array, and install them only once every copy succeeded: on a failure
     * (out of memory) the history stays whole and in place (nothing points
     * into the freed copy), and compaction waits until the history has
     * grown by half, so a lasting shortage does not redo the copy per event */
    uint32_t w = h->n - keep_from;
    dw_event *nev = malloc((w ? w : 1) * sizeof *nev);
    dw_arena fresh;
    dw_arena_init(&fresh, 256 * 1024);
    for (uint32_t i = 0; nev && i < w; i++) {
        const dw_event *ev = &h->ev[keep_from + i];
        dw_event *d = &nev[i];
        d->ts = ev->ts;
        d->atype = (dw_bytes){ dw_arena_memdup(&fresh, ev->atype.s, ev->atype.len), ev->atype.len };
        d->aid = (dw_bytes){ dw_arena_memdup(&fresh, ev->aid.s, ev->aid.len), ev->aid.len };
        d->kind = (dw_bytes){ dw_arena_memdup(&fresh, ev->kind.s, ev->kind.len), ev->kind.len };
        if (!d->atype.s || !d->aid.s || !d->kind.s || !dw_value_clone(&fresh, &ev->logged, &d->logged)) {
            free(nev);
            nev = NULL;
        }
    }
    if (!nev) {
        dw_arena_free(&fresh);
        h->retry_at = (h->n + h->dropped) + (h->n + h->dropped) / 2;   /* appended events, kept or dropped */
        return;
    }
    memcpy(h->ev, nev, w * sizeof *nev);
    memmove(h->seq, h->seq + keep_from, w * sizeof *h->seq);
    free(nev);
    dw_arena_free(&h->arena);
    h->arena = fresh;
    h->n = w;
    h->scan = 0;
    h->retry_at = 0;
    h->dropped = 0;
}

static int64_t stamp(dw_engine *e, int64_t ts)
{
    if (ts == DW_TS_NOW) ts = clock_ticks(e);
    if (!e->replay_ts && e->have_ts && ts <= e->last_ts) ts = e->last_ts + 1;   /* strictly increasing (§7.3) */
    e->last_ts = ts;
    e->have_ts = true;
    return ts;
}

/* ---- deciding ---- */

static void fault(dw_verdict *v, const char *fmt, const char *detail)
{
    v->allow = false;
    v->cause = DW_CAUSE_INTERNAL_FAULT;
    v->ndetermining = 0;
    snprintf(v->message, sizeof v->message, fmt, detail ? detail : "");
}

/* Every verdict starts as a deny with cause internal_fault, so no path that
 * ends before deciding can leave PERMITTED (cause 0) behind. */
static void verdict_init(dw_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->cause = DW_CAUSE_INTERNAL_FAULT;
}

/* An accepted event could not enter the in-memory history (out of memory):
 * verdicts over a history that misses it could permit what a whole one
 * denies, so from now on every event is refused (refuse_lost) until the
 * history is whole again: a non-durable engine by dw_engine_reset_history
 * or a reopen, a durable one by reopening (recovery replays its log, which
 * holds the event). */
static void history_lost(dw_engine *e, dw_verdict *v)
{
    snprintf(e->lost, sizeof e->lost,
             "policy history failure: an event could not be added to the in-memory history (out of memory); "
             "every event is refused until %s",
             e->log ? "the engine is reopened (recovery replays its log)" : "the history is reset or the engine reopened");
    fault(v, "%s", e->lost);
}

/* A durable engine's lost event is in its log: it keeps a copy and adds it
 * at the start of the next call that finds memory (retry_lost), exactly as
 * a reopen would replay it.  Without a copy (out of memory again) only a
 * reopen recovers. */
static void keep_lost(dw_engine *e, const char *json, size_t len, int64_t ts, dw_verdict *v)
{
    if (!e->log || !e->lost[0] || e->pend.json) return;
    char *c = malloc(len + 1);
    if (!c) return;
    memcpy(c, json, len);
    c[len] = 0;
    e->pend = (lost_event){ c, len, ts, e->next_seq };
    snprintf(e->lost, sizeof e->lost,
             "policy history failure: an event could not be added to the in-memory history (out of memory); "
             "every event is refused until it is (retried on every call) or the engine is reopened");
    fault(v, "%s", e->lost);
}

static int event_from_json(dw_engine *e, const char *json, size_t len, int64_t *ts, built *b, dw_verdict *v);

/* True once the kept event is in the history (the engine is whole again). */
static bool retry_lost(dw_engine *e)
{
    if (!e->pend.json) return false;
    built b;
    dw_verdict t;
    int64_t ts = e->pend.ts;
    verdict_init(&t);
    if (event_from_json(e, e->pend.json, e->pend.len, &ts, &b, &t)) return false;
    e->next_seq = e->pend.seq;       /* nothing was taken since: every event was refused */
    if (history_append(e, &b, e->pend.ts)) return false;
    free(e->pend.json);
    memset(&e->pend, 0, sizeof e->pend);
    e->lost[0] = 0;
    history_retain(e);
    return true;
}

/* With mu held: true (v a deny, nothing appended or logged) while the
 * history misses an event. */
static bool refuse_lost(dw_engine *e, dw_verdict *v)
{
    if (!e->lost[0] || retry_lost(e)) return false;
    fault(v, "%s", e->lost);
    return true;
}

/* Evaluate the leaves of every rule whose scope admits the request (D3). */
static int evaluate_leaves(dw_engine *e, dw_request *req, dw_verdict *v)
{
    const dw_program *p = e->s.prog;
    uint32_t nl = p->temporal.nleaves;
    if (!nl) return 0;
    uint8_t *vals = dw_arena_alloc_raw(&e->scratch, nl);
    if (!vals) { fault(v, "temporal evaluation: out of memory%s", NULL); return -1; }
    memset(vals, 2, nl);
    req->leaf_values = vals;
    req->nleaf_values = nl;

    /* the history view (every retained event, or only the current key's,
     * §8.9) is built only when some leaf has no monitor (teval fallback):
     * an all-idiom decision then costs O(1) in the window (vm/monitor.h) */
    const dw_event **view = NULL;
    uint32_t nv = 0;
    const dw_event *cur = &e->h.ev[e->h.n - 1];
    const dw_event_schema *es = e->s.es;
    dw_history_view hv = { NULL, 0, e->tps };
    dw_tanchor anchor = { 0 };
    anchor.context = req->vars[DW_VAR_C];
    anchor.principal = req->vars[DW_VAR_P];
    anchor.resource = req->vars[DW_VAR_R];
    anchor.principal_attrs.kind = DW_V_RECORD;
    anchor.resource_attrs.kind = DW_V_RECORD;
    if (req->ent[0]) anchor.principal_attrs = req->ent[0]->attrs;
    if (req->ent[2]) anchor.resource_attrs = req->ent[2]->attrs;

    dw_value *stack = dw_arena_alloc_raw(&e->scratch, (p->max_stack + 1) * sizeof *stack);
    if (!stack) { fault(v, "temporal evaluation: out of memory%s", NULL); return -1; }
    dw_eval_ctx cx = { .prog = p, .store = &e->s.store, .req = req, .scratch = &e->scratch, .stack = stack };
    uint64_t budget = e->work_bound;   /* shared by every leaf of the decision */
    for (uint32_t k = 0; k < e->nleaf_policies; k++) {
        const dw_policy_code *pc = &p->policies[e->leaf_policies[k]];
        bool in_scope = false;
        if (dw_eval_code(&cx, pc->scope_entry, &in_scope) != DW_EVAL_OK) { fault(v, "temporal evaluation: scope test failed%s", NULL); return -1; }
        if (!in_scope) continue;
        for (uint32_t l = pc->first_leaf; l < pc->first_leaf + pc->nleaves; l++) {
            bool holds = false;
            int mrc = e->mon ? dw_monitors_eval(e->mon, p, l, &anchor, cur, &holds) : DW_MON_FALLBACK;
            if (mrc == 0) { vals[l] = holds ? 1 : 0; continue; }   /* incremental */
            if (!view) {        /* first fallback of this decision: build the view */
                view = dw_arena_alloc_raw(&e->scratch, (e->h.n + 1) * sizeof *view);
                if (!view) { fault(v, "temporal evaluation: out of memory%s", NULL); return -1; }
                for (uint32_t i = 0; i < e->h.n; i++) {
                    const dw_event *ev = &e->h.ev[i];
                    bool same_key = true;
                    for (size_t q = 0; es && q < es->nkey && same_key; q++) {
                        const dw_str *path = &es->key[q].path;
                        const dw_value *a = dw_record_get(&ev->logged, path->s, path->len);
                        const dw_value *b = dw_record_get(&cur->logged, path->s, path->len);
                        same_key = (!a && !b) || (a && b && dw_value_eq(a, b));
                    }
                    if (same_key) view[nv++] = ev;
                }
            }
            /* a leaf installed by a reload reads only the events from its
             * install position on (box.md §7): the view's suffix */
            uint32_t from = 0;
            if (e->since[l] != INT64_MIN) {
                uint32_t lo = 0, hi = nv;
                while (lo < hi) {
                    uint32_t mid = lo + (hi - lo) / 2;
                    if (view[mid]->ts < e->since[l]) lo = mid + 1;
                    else hi = mid;
                }
                from = lo;
            }
            if (from >= nv && nv) from = nv - 1;   /* the decision event itself is never before it */
            hv.ev = view + from;
            hv.n = nv - from;
            dw_teval_ctx tc = {
                .t = &p->temporal, .strs = p->strs, .nstrs = p->nstrs, .consts = p->consts, .nconsts = p->nconsts,
                .h = &hv, .anchor = &anchor, .scratch = &e->scratch, .budget = budget,
            };
            int trc = dw_teval_leaf(&tc, l, &holds);
            budget = tc.budget;
            if (trc) {
                char msg[sizeof v->message];
                const char *rule = rule_name_locked(e, e->leaf_policies[k]);
                if (tc.err == DW_TEVAL_EBUDGET)
                    snprintf(msg, sizeof msg, "temporal evaluation: leaf of %s exceeded the work bound of %" PRIu64
                             " steps per decision (temporal_work_bound)", rule, e->work_bound);
                else snprintf(msg, sizeof msg, "temporal evaluation: leaf of %s failed (%s)", rule,
                              tc.err == DW_TEVAL_ENOMEM ? "out of memory" : tc.err == DW_TEVAL_EDEPTH ? "nested too deep" : "malformed tables");
                fault(v, "%s", msg);
                return -1;
            }
            vals[l] = holds ? 1 : 0;
        }
    }
    return 0;
}

static int decide_built(dw_engine *e, built *b, int64_t ts, dw_verdict *v)
{
    v->timestamp = stamp(e, ts);
    if (history_append_decision(e, b, v->timestamp)) { history_lost(e, v); v->decided = b->decision; return -1; }
    if (!b->decision) {
        v->decided = false;
        snprintf(v->message, sizeof v->message, "the event's kind is not a decision kind (recorded, not decided)");
        history_retain(e);
        return 0;
    }
    v->decided = true;
    dw_request_bind(&b->req, e->s.prog, &e->s.store);
    if (evaluate_leaves(e, &b->req, v)) { history_retain(e); return 0; }
    dw_response resp;
    if (dw_authorize(e->s.prog, &e->s.store, &b->req, &e->scratch, &resp)) {
        fault(v, "decision: out of memory%s", NULL);
        history_retain(e);
        return 0;
    }
    e->evaluated += resp.evaluated;
    v->ndetermining = resp.ndetermining < DW_VERDICT_MAX_RULES ? resp.ndetermining : DW_VERDICT_MAX_RULES;
    memcpy(v->determining, resp.determining, v->ndetermining * sizeof *v->determining);
    v->nerrors = resp.nerrors;
    /* Box's mapping (box.md §8): any error denies */
    if (resp.nerrors) {
        v->allow = false;
        v->cause = DW_CAUSE_INTERNAL_FAULT;
        snprintf(v->message, sizeof v->message, "%s errored: %s", rule_name_locked(e, resp.errors[0].policy),
                 dw_eval_status_name(resp.errors[0].status));
    } else if (resp.allow) v->allow = true, v->cause = DW_CAUSE_PERMITTED;
    else v->allow = false, v->cause = resp.ndetermining ? DW_CAUSE_FORBIDDEN : DW_CAUSE_NO_MATCH;
    history_retain(e);
    return 0;
}

/* Box's JSON event form. */
/* Box's JSON event form -> a built event (and its Cedar request).  *ts is
 * replaced by the event's "time" when the caller gave none.  0 on success;
 * -1 when the line is not an event (v says why); -2 when a decision event
 * fails the schema gate (v holds the deny; b->decision is set). */
static int event_from_json(dw_engine *e, const char *json, size_t len, int64_t *ts, built *b, dw_verdict *v)
{
    dw_arena_reset(&e->scratch);
    dw_source src = { "event", json, len };
    dw_diags d;
    dw_diags_init(&d);
    const dw_json *j = dw_json_parse(&e->scratch, &src, &d);
    dw_diags_free(&d);
    if (!j || j->kind != DW_JSON_OBJECT) { fault(v, "event is not a JSON object%s", NULL); return -1; }
    const dw_json *action = dw_json_get(j, "action"), *kind = dw_json_get(j, "kind"), *ns = dw_json_get(j, "namespace");
    const dw_json *time = dw_json_get(j, "time");
    if (!action || action->kind != DW_JSON_STRING || !kind || kind->kind != DW_JSON_STRING) {
        fault(v, "event needs string members \"action\" and \"kind\"%s", NULL);
        return -1;
    }
    if (ns && (ns->kind != DW_JSON_STRING || ns->u.str.len > 200)) { fault(v, "event \"namespace\" must be a short string%s", NULL); return -1; }
    char atype[256];                         /* NS::Action; a NUL in NS ends it, as %s did */
    size_t nslen = ns ? strnlen(ns->u.str.s, ns->u.str.len) : 3;
    memcpy(atype, ns ? ns->u.str.s : "Box", nslen);
    memcpy(atype + nslen, "::Action", sizeof "::Action");
    if (*ts == DW_TS_NOW && time && time->kind == DW_JSON_STRING) {
        int64_t ns_time;
        if (!dw_rfc3339_parse_ns(time->u.str.s, time->u.str.len, &ns_time)) {
            fault(v, "event time is not RFC 3339 UTC (YYYY-MM-DDThh:mm:ss[.fffffffff]Z)%s", NULL);
            return -1;
        }
        *ts = e->tps == 1000000000 ? ns_time : ns_time / (1000000000 / e->tps);
    }
    const dw_uid *P = &e->box_self, *R = &e->box_unused;
    const dw_json *pj = dw_json_get(j, "principal"), *rj = dw_json_get(j, "resource");
    dw_buf err = { 0 };
    if (pj) P = dw_uid_from_json(&e->scratch, pj, &err);
    if (rj) R = dw_uid_from_json(&e->scratch, rj, &err);
    dw_buf_free(&err);
    if (build_event(e, b, atype, strlen(atype), action->u.str.s, action->u.str.len, kind->u.str.s, kind->u.str.len,
                    P, R, dw_json_get(j, "input"), dw_json_get(j, "output"), dw_json_get(j, "request_id"),
                    v->message, sizeof v->message) ||
        (e->s.box && dw_box_gate(j, P, R, v->message, sizeof v->message))) {
        v->allow = false;          /* a gate failure: denied and not recorded (box.md §6.1) */
        v->cause = DW_CAUSE_INTERNAL_FAULT;
        return -2;
    }
    return 0;
}

static int64_t peek_stamp(dw_engine *e, int64_t ts);
static int log_event(dw_engine *e, int64_t ts, const char *json, size_t len, uint64_t *ticket);

/* Why log_event failed: the log's error, or (the record could not even be
 * formed) out of memory. */
static const char *log_error(dw_engine *e)
{
    const char *m = dw_histlog_error(e->log);
    return m && m[0] ? m : "the record could not be formed (out of memory)";
}

static int decide_or_record(dw_engine *e, const char *json, size_t len, int64_t ts, dw_verdict *v, bool must_decide,
                            uint64_t *ticket)
{
    verdict_init(v);
    if (refuse_lost(e, v)) { v->decided = must_decide; return must_decide ? 0 : -1; }
    built b;
    int rc = event_from_json(e, json, len, &ts, &b, v);
    if (rc) {
        v->decided = must_decide || (rc == -2 && b.decision);
        return v->decided ? 0 : -1;
    }
    if (e->log) {                /* durable: logged before it enters the history */
        ts = peek_stamp(e, ts);
        if (log_event(e, ts, json, len, ticket)) {
            fault(v, "policy history failure: %s", log_error(e));
            v->decided = b.decision;
            return b.decision ? 0 : -1;
        }
    }
    rc = decide_built(e, &b, ts, v);
    if (rc) keep_lost(e, json, len, v->timestamp, v);
    return must_decide ? 0 : rc;   /* a deny is a decision's success */
}

static int decide_request_json_locked(dw_engine *e, const char *json, size_t len, int64_t ts, dw_verdict *v)
{
    verdict_init(v);
    v->decided = true;
    if (refuse_lost(e, v)) return 0;
    dw_arena_reset(&e->scratch);
    dw_source src = { "request", json, len };
    dw_diags d;
    dw_diags_init(&d);
    const dw_json *j = dw_json_parse(&e->scratch, &src, &d);
    dw_diags_free(&d);
    dw_buf err = { 0 };
    const dw_uid *P = j ? dw_uid_from_json(&e->scratch, dw_json_get(j, "principal"), &err) : NULL;
    const dw_uid *A = j ? dw_uid_from_json(&e->scratch, dw_json_get(j, "action"), &err) : NULL;
    const dw_uid *R = j ? dw_uid_from_json(&e->scratch, dw_json_get(j, "resource"), &err) : NULL;
    if (!P || !A || !R) {
        fault(v, "request: %s", err.p ? err.p : "not a Cedar request");
        dw_buf_free(&err);
        return 0;
    }
    dw_buf_free(&err);
    const dw_json *ctx = dw_json_get(j, "context");
    const dw_json *input = ctx ? dw_json_get(ctx, "input") : NULL;
    built b;
    if (build_event(e, &b, A->type, A->tlen, A->id, A->idlen, "request", 7, P, R, input, NULL, NULL, v->message, sizeof v->message) ||
        (e->s.box && dw_box_gate(j, P, R, v->message, sizeof v->message))) {
        v->allow = false;
        v->cause = DW_CAUSE_INTERNAL_FAULT;
        return 0;
    }
    if (!b.decision) { fault(v, "`request` is not a decision kind of this event schema%s", NULL); return 0; }
    decide_built(e, &b, ts, v);
    return 0;
}

/* ---- events given by their parts (dogwood.h: dw_engine_decide_event) ----
 * Used by the `.log` replay (runtime/trace_log.c).  Unlike the Box forms it
 * does not mirror the scope into the logged record (§20 Q3), takes the
 * request context groups verbatim (§15.1 step 5), builds a per-event entity
 * store (step 7) and gives Cedar's verdict (§15.2) rather than Box's mapping. */

/* An event value as JSON for the schema-directed Cedar reader: entities as
 * __entity, decimals and other extension values as __extn, Null as "" (§20
 * Q15), or dropped as a record member when `drop_null` (entity attributes). */
static dw_json *ev_json(dw_arena *a, const dw_value *v, bool drop_null, int depth)
{
    dw_json *j = dw_arena_alloc(a, sizeof *j);
    if (!j || depth > 256) return NULL;
    switch (v->kind) {
    case DW_V_BOOL: j->kind = DW_JSON_BOOL; j->u.b = v->u.b; return j;
    case DW_V_LONG: j->kind = DW_JSON_INT; j->u.i = v->u.i; return j;
    case DW_V_STRING: j->kind = DW_JSON_STRING; j->u.str = (dw_str){ v->u.s, v->n }; return j;
    case DW_V_NULL: j->kind = DW_JSON_STRING; j->u.str = (dw_str){ "", 0 }; return j;
    case DW_V_ENTITY: {
        dw_json *in = dw_arena_alloc(a, sizeof *in), *t = dw_arena_alloc(a, sizeof *t), *id = dw_arena_alloc(a, sizeof *id);
        dw_json_member *m = dw_arena_alloc(a, 3 * sizeof *m);
        if (!in || !t || !id || !m) return NULL;
        t->kind = id->kind = DW_JSON_STRING;
        t->u.str = (dw_str){ v->u.uid->type, v->u.uid->tlen };
        id->u.str = (dw_str){ v->u.uid->id, v->u.uid->idlen };
        m[0] = (dw_json_member){ { "type", 4 }, t, 0 };
        m[1] = (dw_json_member){ { "id", 2 }, id, 0 };
        in->kind = DW_JSON_OBJECT; in->u.obj.v = m; in->u.obj.n = 2;
        m[2] = (dw_json_member){ { "__entity", 8 }, in, 0 };
        j->kind = DW_JSON_OBJECT; j->u.obj.v = &m[2]; j->u.obj.n = 1;
        return j;
    }
    case DW_V_DECIMAL: case DW_V_IPADDR: case DW_V_DATETIME: case DW_V_DURATION: {
        char buf[64];
        const char *fn = "decimal";
        if (v->kind == DW_V_DECIMAL) dw_decimal_format(v->u.i, buf, sizeof buf);
        else if (v->kind == DW_V_IPADDR) fn = "ip", dw_ip_format(v->u.ip, buf, sizeof buf);
        else if (v->kind == DW_V_DATETIME) fn = "datetime", dw_datetime_format(v->u.i, buf, sizeof buf);
        else fn = "duration", dw_duration_format(v->u.i, buf, sizeof buf);
        dw_json *x = dw_arena_alloc(a, sizeof *x), *f = dw_arena_alloc(a, sizeof *f), *arg = dw_arena_alloc(a, sizeof *arg);
        dw_json_member *m = dw_arena_alloc(a, 3 * sizeof *m);
        char *text = dw_arena_memdup(a, buf, strlen(buf));
        if (!x || !f || !arg || !m || !text) return NULL;
        f->kind = arg->kind = DW_JSON_STRING;
        f->u.str = (dw_str){ fn, strlen(fn) };
        arg->u.str = (dw_str){ text, strlen(text) };
        m[0] = (dw_json_member){ { "fn", 2 }, f, 0 };
        m[1] = (dw_json_member){ { "arg", 3 }, arg, 0 };
        x->kind = DW_JSON_OBJECT; x->u.obj.v = m; x->u.obj.n = 2;
        m[2] = (dw_json_member){ { "__extn", 6 }, x, 0 };
        j->kind = DW_JSON_OBJECT; j->u.obj.v = &m[2]; j->u.obj.n = 1;
        return j;
    }
    case DW_V_SET: case DW_V_ARRAY: {
        j->kind = DW_JSON_ARRAY;
        j->u.arr.n = v->n;
        j->u.arr.v = v->n ? dw_arena_alloc(a, v->n * sizeof *j->u.arr.v) : NULL;
        if (v->n && !j->u.arr.v) return NULL;
        for (uint32_t k = 0; k < v->n; k++)
            if (!(j->u.arr.v[k] = ev_json(a, &v->u.elems[k], drop_null, depth + 1))) return NULL;
        return j;
    }
    case DW_V_RECORD: {
        j->kind = DW_JSON_OBJECT;
        j->u.obj.v = v->n ? dw_arena_alloc(a, v->n * sizeof *j->u.obj.v) : NULL;
        if (v->n && !j->u.obj.v) return NULL;
        size_t n = 0;
        for (uint32_t k = 0; k < v->n; k++) {
            const dw_field *f = &v->u.fields[k];
            if (drop_null && f->v.kind == DW_V_NULL) continue;
            dw_json *fj = ev_json(a, &f->v, drop_null, depth + 1);
            if (!fj) return NULL;
            j->u.obj.v[n++] = (dw_json_member){ { f->key, f->klen }, fj, 0 };
        }
        j->u.obj.n = n;
        return j;
    }
    default: return NULL;
    }
}

/* A deep copy for the history in which arrays travel as DW_V_SET in their
 * given order (dw_value_clone copies sets element-wise and dw_tval_cmp reads
 * a set as an array in stored order; it does not copy DW_V_ARRAY). */
static bool ev_carry(dw_arena *a, const dw_value *v, dw_value *out, int depth)
{
    if (depth > 256) return false;
    *out = *v;
    if (v->kind == DW_V_ARRAY || v->kind == DW_V_SET) {
        out->kind = DW_V_SET;
        if (!v->n) return true;
        dw_value *el = dw_arena_alloc(a, v->n * sizeof *el);
        if (!el) return false;
        for (uint32_t k = 0; k < v->n; k++) if (!ev_carry(a, &v->u.elems[k], &el[k], depth + 1)) return false;
        out->u.elems = el;
    } else if (v->kind == DW_V_RECORD && v->n) {
        dw_field *f = dw_arena_alloc(a, v->n * sizeof *f);
        if (!f) return false;
        for (uint32_t k = 0; k < v->n; k++) {
            f[k] = v->u.fields[k];
            if (!ev_carry(a, &v->u.fields[k].v, &f[k].v, depth + 1)) return false;
        }
        out->u.fields = f;
    }
    return true;
}

static dw_json *uid_json(dw_arena *a, const dw_uid *u)
{
    dw_value v = { .kind = DW_V_ENTITY };
    v.u.uid = u;
    dw_json *j = ev_json(a, &v, false, 0);
    return j ? (dw_json *)j->u.obj.v[0].value : NULL;    /* the bare {"type","id"} */
}

/* The JSON reader's " (at byte N)" means nothing for values built in memory. */
static void strip_offsets(char *m)
{
    static const char tag[] = " (at byte 0)";
    for (char *p; (p = strstr(m, tag));) memmove(p, p + sizeof tag - 1, strlen(p + sizeof tag - 1) + 1);
}

static void errors_append(dw_verdict *v, const char *msg)
{
    size_t n = strlen(v->message);
    if (n && n + 1 < sizeof v->message) v->message[n++] = '\n';
    if (n < sizeof v->message) snprintf(v->message + n, sizeof v->message - n, "%s", msg);
}

/* Steps 3-9 of §15.1 for an appended decision event. */
static void decide_parts(dw_engine *e, const dw_event_input *in, dw_verdict *v)
{
    dw_arena *a = &e->scratch;
    const dw_schema *schema = e->s.schema;
    if (!in->principal || !in->resource) {
        fault(v, "decision event has no %s in scope", in->principal ? "resource" : "principal");
        return;
    }
    const dw_action_decl *ad = schema ? dw_schema_action(schema, in->atype, in->atype_len, in->aid, in->aid_len) : NULL;
    if (schema && !ad) {
        char m[200];
        snprintf(m, sizeof m, "%.*s::\"%.*s\"", (int)in->atype_len, in->atype, (int)in->aid_len, in->aid);
        fault(v, "action %s is not declared in the schema", m);
        return;
    }
    /* step 5: the Cedar context = the request-context groups (+ hoisted leaves, via the LEAF instruction) */
    dw_value empty = { .kind = DW_V_RECORD };
    const dw_value *ectx = in->context && in->context->kind == DW_V_RECORD ? in->context : &empty;
    dw_json *cj = ev_json(a, ectx, false, 0);
    if (!cj) { fault(v, "request context: out of memory or nested too deeply%s", NULL); return; }
    dw_value cctx;
    dw_buf err = { 0 };
    /* without request validation the context is taken as given, like the reference's schema-less request */
    const dw_type *ctype = ad && !e->no_request_validation ? ad->context : NULL;
    if (dw_value_from_json(a, cj, ctype, &cctx, &err)) {
        fault(v, "request does not conform to the schema: context: %s", err.p ? err.p : "?");
        strip_offsets(v->message);
        dw_buf_free(&err);
        return;
    }
    /* step 6: principal and resource types */
    if (ad && !e->no_request_validation) {
        bool pok = false, rok = false;
        for (size_t k = 0; k < ad->nprincipals; k++)
            if (ad->principals[k].len == in->principal->tlen && !memcmp(ad->principals[k].s, in->principal->type, in->principal->tlen)) pok = true;
        for (size_t k = 0; k < ad->nresources; k++)
            if (ad->resources[k].len == in->resource->tlen && !memcmp(ad->resources[k].s, in->resource->type, in->resource->tlen)) rok = true;
        if (!pok || !rok) {
            fault(v, "request does not conform to the schema: %s type is not allowed for this action", pok ? "resource" : "principal");
            return;
        }
    }
    /* step 7: the per-event entity store: supplied entities, then the scope
     * entities without attributes, then the schema's actions */
    size_t ne = in->nentities + 2, n = 0;
    dw_json *arr = dw_arena_alloc(a, sizeof *arr);
    dw_json **items = dw_arena_alloc(a, ne * sizeof *items);
    if (!arr || !items) { fault(v, "entities: out of memory%s", NULL); return; }
    bool have_p = false, have_r = false;
    for (uint32_t k = 0; k < in->nentities + 2; k++) {
        const dw_uid *uid;
        const dw_value *attrs = NULL;
        const dw_uid *const *parents = NULL;
        uint32_t np = 0;
        if (k < in->nentities) {
            const dw_event_entity *x = &in->entities[k];
            uid = x->uid;
            attrs = x->attrs;
            parents = x->parents;
            np = x->nparents;
            if (dw_uid_eq(uid, in->principal)) have_p = true;
            if (dw_uid_eq(uid, in->resource)) have_r = true;
        } else if (k == in->nentities) {
            if (have_p) continue;
            uid = in->principal;
            if (dw_uid_eq(uid, in->resource)) have_r = true;
        } else {
            if (have_r) continue;
            uid = in->resource;
        }
        dw_json *o = dw_arena_alloc(a, sizeof *o);
        dw_json_member *m = dw_arena_alloc(a, 3 * sizeof *m);
        dw_json *uj = uid_json(a, uid);
        if (!o || !m || !uj) { fault(v, "entities: out of memory%s", NULL); return; }
        size_t nm = 0;
        m[nm++] = (dw_json_member){ { "uid", 3 }, uj, 0 };
        if (attrs) {
            dw_json *aj = ev_json(a, attrs, true, 0);
            if (!aj) { fault(v, "entities: out of memory or nested too deeply%s", NULL); return; }
            m[nm++] = (dw_json_member){ { "attrs", 5 }, aj, 0 };
        }
        if (np) {
            dw_json *pj = dw_arena_alloc(a, sizeof *pj);
            dw_json **pv = dw_arena_alloc(a, np * sizeof *pv);
            if (!pj || !pv) { fault(v, "entities: out of memory%s", NULL); return; }
            for (uint32_t q = 0; q < np; q++)
                if (!(pv[q] = uid_json(a, parents[q]))) { fault(v, "entities: out of memory%s", NULL); return; }
            pj->kind = DW_JSON_ARRAY;
            pj->u.arr.v = pv;
            pj->u.arr.n = np;
            m[nm++] = (dw_json_member){ { "parents", 7 }, pj, 0 };
        }
        o->kind = DW_JSON_OBJECT;
        o->u.obj.v = m;
        o->u.obj.n = nm;
        items[n++] = o;
    }
    arr->kind = DW_JSON_ARRAY;
    arr->u.arr.v = items;
    arr->u.arr.n = n;
    dw_store st;
    dw_store_init(&st);
    /* without request validation the entities are taken untyped, as the reference's schema-less request */
    if ((e->no_request_validation ? dw_store_load_json_unchecked : dw_store_load_json)(&st, arr, schema, &err)) {
        fault(v, "entities: %s", err.p ? err.p : "invalid");
        strip_offsets(v->message);
        dw_buf_free(&err);
        dw_store_free(&st);
        return;
    }
    dw_buf_free(&err);
    /* the request; the leaves read the event-valued context (§8.1), Cedar the converted one */
    dw_request req;
    memset(&req, 0, sizeof req);
    req.vars[DW_VAR_P].kind = DW_V_ENTITY;
    req.vars[DW_VAR_P].u.uid = in->principal;
    req.vars[DW_VAR_R].kind = DW_V_ENTITY;
    req.vars[DW_VAR_R].u.uid = in->resource;
    req.vars[DW_VAR_A].kind = DW_V_ENTITY;
    req.vars[DW_VAR_A].u.uid = dw_make_uid(a, in->atype, in->atype_len, in->aid, in->aid_len);
    dw_value lctx;
    if (!req.vars[DW_VAR_A].u.uid || !ev_carry(a, ectx, &lctx, 0)) { fault(v, "request: out of memory%s", NULL); dw_store_free(&st); return; }
    req.vars[DW_VAR_C] = lctx;
    dw_store saved = e->s.store;
    e->s.store = st;
    dw_request_bind(&req, e->s.prog, &e->s.store);
    dw_response resp;
    int rc = evaluate_leaves(e, &req, v);
    if (!rc) {
        req.vars[DW_VAR_C] = cctx;
        if (dw_authorize(e->s.prog, &e->s.store, &req, a, &resp)) { fault(v, "decision: out of memory%s", NULL); rc = -1; }
    }
    st = e->s.store;
    e->s.store = saved;
    dw_store_free(&st);
    if (rc) return;
    v->allow = resp.allow;
    v->cause = resp.allow ? DW_CAUSE_PERMITTED : resp.ndetermining ? DW_CAUSE_FORBIDDEN : DW_CAUSE_NO_MATCH;
    v->ndetermining = resp.ndetermining < DW_VERDICT_MAX_RULES ? resp.ndetermining : DW_VERDICT_MAX_RULES;
    memcpy(v->determining, resp.determining, v->ndetermining * sizeof *v->determining);
    v->nerrors = resp.nerrors;
    v->message[0] = 0;
    for (uint32_t k = 0; k < resp.nerrors; k++) {
        char m[200];
        snprintf(m, sizeof m, "policy_%u: %s%s%s", resp.errors[k].policy, dw_eval_status_name(resp.errors[k].status),
                 resp.errors[k].detail ? ": " : "", resp.errors[k].detail ? resp.errors[k].detail : "");
        errors_append(v, m);
    }
}

static int decide_event_locked(dw_engine *e, const dw_event_input *in, dw_verdict *v)
{
    verdict_init(v);
    if (!e || !in || !e->s.prog) { snprintf(v->message, sizeof v->message, "no event"); return -1; }
    if (refuse_lost(e, v)) return 0;
    dw_arena_reset(&e->scratch);
    built b;
    memset(&b, 0, sizeof b);
    b.ev.atype = (dw_bytes){ in->atype, in->atype_len };
    b.ev.aid = (dw_bytes){ in->aid, in->aid_len };
    b.ev.kind = (dw_bytes){ in->kind, in->kind_len };
    b.decision = e->s.es ? dw_event_schema_is_decision_kind(e->s.es, in->kind, in->kind_len)
                         : (in->kind_len == 7 && !memcmp(in->kind, "request", 7));
    v->decided = b.decision;
    dw_value empty = { .kind = DW_V_RECORD };
    if (!ev_carry(&e->scratch, in->logged && in->logged->kind == DW_V_RECORD ? in->logged : &empty, &b.ev.logged, 0)) {
        fault(v, "event: out of memory or nested too deeply%s", NULL);
        return 0;
    }
    if (e->replay_ts && in->ts != DW_TS_NOW) {
        e->last_ts = in->ts;
        e->have_ts = true;
        v->timestamp = in->ts;
    } else v->timestamp = stamp(e, in->ts);
    if (history_append(e, &b, v->timestamp)) { history_lost(e, v); return 0; }
    if (b.decision) decide_parts(e, in, v);
    history_retain(e);
    return 0;
}

/* ---- for the decision service (runtime/dwd_main.c) ----
 * dw_engine_observe_json: Box's JSON event form with a hook that runs after
 * the gate and before the event enters the history (dwd appends it to its
 * durable log there), or without evaluation (restoring a recovered history). */

static int64_t peek_stamp(dw_engine *e, int64_t ts)
{
    if (ts == DW_TS_NOW) ts = clock_ticks(e);
    if (!e->replay_ts && e->have_ts && ts <= e->last_ts) ts = e->last_ts + 1;
    return ts;
}

static int log_event(dw_engine *e, int64_t ts, const char *json, size_t len, uint64_t *ticket);

/* Gate, hook, log (durable engines), append, evaluate.  *ticket: the log
 * position to wait for (seq + 1), 0 if none. */
static int observe_locked(dw_engine *e, const char *json, size_t len, int64_t ts, dw_observe_mode mode,
                          dw_engine_append_hook hook, void *ctx, dw_verdict *v, uint64_t *ticket)
{
    verdict_init(v);
    if (ticket) *ticket = 0;
    if (!e || !e->s.prog || !json) { snprintf(v->message, sizeof v->message, "no %s", json ? "engine" : "event"); return -1; }
    v->decided = mode == DW_OBSERVE_DECIDE;
    if (refuse_lost(e, v)) return 0;
    built b;
    if (event_from_json(e, json, len, &ts, &b, v)) return 0;
    if (mode == DW_OBSERVE_DECIDE && !b.decision) { fault(v, "the event's kind is not a decision kind%s", NULL); return 0; }
    if (mode == DW_OBSERVE_RECORD && b.decision) { fault(v, "a decision kind cannot be recorded without a decision%s", NULL); return 0; }
    ts = peek_stamp(e, ts);
    v->timestamp = ts;
    if (hook && hook(ctx, ts)) { fault(v, "history: the event could not be appended to the durable log%s", NULL); return 0; }
    if (e->log && mode == DW_OBSERVE_RESTORE) { fault(v, "a durable engine restores its own history%s", NULL); return 0; }
    if (e->log && log_event(e, ts, json, len, ticket)) {
        fault(v, "policy history failure: %s", log_error(e));
        return 0;
    }
    if (mode == DW_OBSERVE_RESTORE) {
        v->decided = false;
        v->timestamp = stamp(e, ts);
        if (history_append(e, &b, v->timestamp)) { history_lost(e, v); return 0; }
        history_retain(e);
        return 1;
    }
    if (!decide_built(e, &b, ts, v)) return 1;
    keep_lost(e, json, len, v->timestamp, v);
    return 0;
}

static size_t rule_description_locked(dw_engine *e, uint32_t rule, char *buf, size_t cap);

static size_t rule_description_locked(dw_engine *e, uint32_t rule, char *buf, size_t cap)
{
    if (cap) buf[0] = 0;
    const dw_program *p = e->s.prog;
    if (!p || rule >= p->npolicies) return 0;
    const dw_policy_code *pc = &p->policies[rule];
    for (uint32_t k = 0; k < pc->nannots; k++)
        if (pc->annots[k].key.len == 11 && memcmp(pc->annots[k].key.s, "description", 11) == 0) {
            if (cap) snprintf(buf, cap, "%.*s", (int)pc->annots[k].value.len, pc->annots[k].value.s);
            return pc->annots[k].value.len ? pc->annots[k].value.len : 0;
        }
    return 0;
}

/* ================================================================
 * Durable history, checkpoints, reloads (dw_engine_open_durable).
 *
 * Log record payload (compatible with dwd's first version):
 *   "<engine timestamp, decimal>\n<the event in Box's JSON form>"
 * Checkpoint state (dw_engine_export_state; little-endian, version 2):
 *   "DWENGST2"  i64 last_ts  u8 have_ts
 *   u32 nleaves  { u64 identity  i64 install position }   per leaf of the program
 *   the leaves' needs, retired ones too (dw_retention_encode; not in version 1)
 *   u32 nevents  { u64 seq  i64 ts  str atype  str aid  str kind  value logged }
 *   str = u32 length + bytes; value = u8 kind + payload (record fields and
 *   set/array elements in stored order).
 * Only the events some leaf can still need are exported, so a checkpoint
 * (and reopening) follows the deepest window, not the number of events
 * ever logged; the monitors are rebuilt from them (their state is a function
 * of the events in the window since each leaf's install position).
 * ================================================================ */

typedef struct wbuf { uint8_t *p; size_t n, cap; bool oom; } wbuf;

static void wb_put(wbuf *b, const void *s, size_t n)
{
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t nc = b->cap ? b->cap : 4096;
        while (nc < b->n + n) nc *= 2;
        uint8_t *p = realloc(b->p, nc);
        if (!p) { b->oom = true; return; }
        b->p = p;
        b->cap = nc;
    }
    if (n) memcpy(b->p + b->n, s, n);
    b->n += n;
}
static void wb_u8(wbuf *b, uint8_t x) { wb_put(b, &x, 1); }
static void wb_u32(wbuf *b, uint32_t x) { uint8_t t[4]; for (int i = 0; i < 4; i++) t[i] = (uint8_t)(x >> (8 * i)); wb_put(b, t, 4); }
static void wb_u64(wbuf *b, uint64_t x) { uint8_t t[8]; for (int i = 0; i < 8; i++) t[i] = (uint8_t)(x >> (8 * i)); wb_put(b, t, 8); }
static void wb_str(wbuf *b, const char *s, size_t n) { wb_u32(b, (uint32_t)n); wb_put(b, s, n); }

static bool enc_val(wbuf *b, const dw_value *v, int depth)
{
    if (depth > 256) return false;
    wb_u8(b, v->kind);
    switch (v->kind) {
    case DW_V_BOOL: wb_u8(b, v->u.b); return true;
    case DW_V_LONG: case DW_V_DECIMAL: case DW_V_DATETIME: case DW_V_DURATION: wb_u64(b, (uint64_t)v->u.i); return true;
    case DW_V_STRING: wb_str(b, v->u.s, v->n); return true;
    case DW_V_ENTITY: wb_str(b, v->u.uid->type, v->u.uid->tlen); wb_str(b, v->u.uid->id, v->u.uid->idlen); return true;
    case DW_V_IPADDR: wb_put(b, v->u.ip, sizeof *v->u.ip); return true;
    case DW_V_NULL: return true;
    case DW_V_SET: case DW_V_ARRAY:
        wb_u32(b, v->n);
        for (uint32_t k = 0; k < v->n; k++) if (!enc_val(b, &v->u.elems[k], depth + 1)) return false;
        return true;
    case DW_V_RECORD:
        wb_u32(b, v->n);
        for (uint32_t k = 0; k < v->n; k++) {
            wb_str(b, v->u.fields[k].key, v->u.fields[k].klen);
            if (!enc_val(b, &v->u.fields[k].v, depth + 1)) return false;
        }
        return true;
    default: return false;
    }
}

typedef struct rbuf { const uint8_t *p; size_t n, off; bool bad; } rbuf;

static const uint8_t *rb_take(rbuf *r, size_t n)
{
    if (r->bad || r->n - r->off < n) { r->bad = true; return NULL; }
    const uint8_t *p = r->p + r->off;
    r->off += n;
    return p;
}
static uint8_t rb_u8(rbuf *r) { const uint8_t *p = rb_take(r, 1); return p ? p[0] : 0; }
static uint32_t rb_u32(rbuf *r) { const uint8_t *p = rb_take(r, 4); uint32_t v = 0; for (int i = 3; p && i >= 0; i--) v = v << 8 | p[i]; return v; }
static uint64_t rb_u64(rbuf *r) { const uint8_t *p = rb_take(r, 8); uint64_t v = 0; for (int i = 7; p && i >= 0; i--) v = v << 8 | p[i]; return v; }
static const char *rb_str(rbuf *r, uint32_t *n) { *n = rb_u32(r); return (const char *)rb_take(r, *n); }

static bool dec_val(rbuf *r, dw_arena *a, dw_value *out, int depth)
{
    memset(out, 0, sizeof *out);
    if (depth > 256) return false;
    out->kind = rb_u8(r);
    uint32_t n, m;
    const char *s, *t;
    switch (out->kind) {
    case DW_V_BOOL: out->u.b = rb_u8(r) != 0; break;
    case DW_V_LONG: case DW_V_DECIMAL: case DW_V_DATETIME: case DW_V_DURATION: out->u.i = (int64_t)rb_u64(r); break;
    case DW_V_STRING:
        s = rb_str(r, &n);
        if (!s || !dw_make_string(a, s, n, out)) return false;
        break;
    case DW_V_ENTITY:
        s = rb_str(r, &n);
        t = rb_str(r, &m);
        if (!s || !t || !(out->u.uid = dw_make_uid(a, s, n, t, m))) return false;
        break;
    case DW_V_IPADDR: {
        const uint8_t *p = rb_take(r, sizeof(dw_ipaddr));
        dw_ipaddr *ip = p ? dw_arena_alloc(a, sizeof *ip) : NULL;
        if (!ip) return false;
        memcpy(ip, p, sizeof *ip);
        out->u.ip = ip;
        break;
    }
    case DW_V_NULL: break;
    case DW_V_SET: case DW_V_ARRAY: {
        n = rb_u32(r);
        if (r->bad || n > r->n - r->off) return false;     /* every element takes at least a byte */
        dw_value *el = n ? dw_arena_alloc(a, n * sizeof *el) : NULL;
        if (n && !el) return false;
        for (uint32_t k = 0; k < n; k++) if (!dec_val(r, a, &el[k], depth + 1)) return false;
        out->n = n;
        out->u.elems = el;
        break;
    }
    case DW_V_RECORD: {
        n = rb_u32(r);
        if (r->bad || n > r->n - r->off) return false;
        dw_field *f = n ? dw_arena_alloc(a, n * sizeof *f) : NULL;
        if (n && !f) return false;
        for (uint32_t k = 0; k < n; k++) {
            s = rb_str(r, &m);
            char *key = s ? dw_arena_memdup(a, s, m) : NULL;
            if (!key) return false;
            f[k].key = key;
            f[k].klen = m;
            f[k].khash = dw_key_hash(key, m);
            if (!dec_val(r, a, &f[k].v, depth + 1)) return false;
        }
        out->n = n;
        out->u.fields = f;           /* stored in the record's (sorted) order */
        break;
    }
    default: return false;
    }
    return !r->bad;
}

#define STATE_MAGIC "DWENGST2"      /* 2: + the leaves' needs after the install table */
#define STATE_MAGIC_V1 "DWENGST1"

/* With mu held: the state of the history for `prog` with install positions
 * `since`.  *keep: the oldest log position the state still needs. */
static int export_locked(dw_engine *e, const dw_program *prog, const int64_t *since, wbuf *b, uint64_t *keep)
{
    const history *h = &e->h;
    wb_put(b, STATE_MAGIC, 8);
    wb_u64(b, (uint64_t)e->last_ts);
    wb_u8(b, e->have_ts);
    const dw_temporal_tables *t = &prog->temporal;
    wb_u32(b, t->nleaves);
    for (uint32_t l = 0; l < t->nleaves; l++) { wb_u64(b, t->leaves[l].identity); wb_u64(b, (uint64_t)since[l]); }
    dw_buf needs = { 0 };        /* and retired leaves' (runtime/retention.h): a restart may meet them again */
    if (dw_retention_encode(&e->ret, e->s.prog, e->since, prog, since, &needs)) b->oom = true;
    else wb_put(b, needs.p, needs.len);
    dw_buf_free(&needs);
    uint32_t first = 0;
    if (!t->nleaves && !e->ret.nold && !e->ret.ncur) first = h->n;   /* nothing reads the history */
    else if (!e->replay_ts && h->n) {
        int64_t horizon, now = h->ev[h->n - 1].ts;
        if (!__builtin_mul_overflow(dw_retention_reach(&e->ret, prog), e->tps, &horizon))
            while (first < h->n && now - h->ev[first].ts > horizon) first++;
    }
    wb_u32(b, h->n - first);
    for (uint32_t i = first; i < h->n; i++) {
        const dw_event *ev = &h->ev[i];
        wb_u64(b, h->seq[i]);
        wb_u64(b, (uint64_t)ev->ts);
        wb_str(b, ev->atype.s, ev->atype.len);
        wb_str(b, ev->aid.s, ev->aid.len);
        wb_str(b, ev->kind.s, ev->kind.len);
        if (!enc_val(b, &ev->logged, 0)) return -1;
    }
    *keep = first < h->n ? h->seq[first] : e->next_seq;
    return b->oom ? -1 : 0;
}

/* Restored install table: identity -> position. */
typedef struct itab { uint64_t *id; int64_t *since; uint32_t n; bool have; } itab;

/* With mu held, on an engine whose history is empty: load a state.  The
 * monitors are left to rebuild_monitors. */
static int import_locked(dw_engine *e, const void *data, size_t len, itab *it, char *err, size_t cap)
{
    rbuf r = { data, len, 0, false };
    const uint8_t *m = rb_take(&r, 8);
    bool v1 = m && !memcmp(m, STATE_MAGIC_V1, 8);
    if (!m || (!v1 && memcmp(m, STATE_MAGIC, 8))) { snprintf(err, cap, "not an engine state (version 1 or 2)"); return -1; }
    int64_t last_ts = (int64_t)rb_u64(&r);
    bool have_ts = rb_u8(&r) != 0;
    uint32_t nl = rb_u32(&r);
    if (r.bad || nl > (r.n - r.off) / 16) { snprintf(err, cap, "truncated engine state"); return -1; }
    free(it->id);
    free(it->since);
    it->id = malloc((nl + 1) * sizeof *it->id);
    it->since = malloc((nl + 1) * sizeof *it->since);
    if (!it->id || !it->since) { snprintf(err, cap, "out of memory"); return -1; }
    for (uint32_t l = 0; l < nl; l++) { it->id[l] = rb_u64(&r); it->since[l] = (int64_t)rb_u64(&r); }
    it->n = nl;
    it->have = true;
    long used = v1 || r.bad ? 0 : dw_retention_decode(&e->ret, r.p + r.off, r.n - r.off);
    if (used < 0) { snprintf(err, cap, "damaged engine state (leaf needs)"); return -1; }
    r.off += (size_t)used;
    uint32_t ne = rb_u32(&r);
    for (uint32_t i = 0; i < ne && !r.bad; i++) {
        dw_arena_reset(&e->scratch);
        built b;
        memset(&b, 0, sizeof b);
        uint32_t n1, n2, n3;
        uint64_t seq = rb_u64(&r);
        int64_t ts = (int64_t)rb_u64(&r);
        const char *at = rb_str(&r, &n1), *id = rb_str(&r, &n2), *kd = rb_str(&r, &n3);
        if (!at || !id || !kd || !dec_val(&r, &e->scratch, &b.ev.logged, 0)) { r.bad = true; break; }
        b.ev.atype = (dw_bytes){ at, n1 };
        b.ev.aid = (dw_bytes){ id, n2 };
        b.ev.kind = (dw_bytes){ kd, n3 };
        e->next_seq = seq;
        if (history_append(e, &b, ts)) { snprintf(err, cap, "out of memory"); return -1; }
    }
    if (r.bad || r.off != r.n) { snprintf(err, cap, "damaged engine state"); return -1; }
    e->last_ts = last_ts;
    e->have_ts = have_ts;
    return 0;
}

/* Install positions of the current program's leaves from a restored table:
 * a leaf the table knows keeps its position; one it does not know is new
 * (the policy changed across the restart) and starts empty.  Without a
 * table (a fresh history, or one written before install positions were
 * recorded) every leaf sees all of it.  A leaf the table knows as retired
 * (a reload replaced it) resumes from its position, as after a reload back
 * to it.  True if the table must be written. */
static bool apply_installs(dw_engine *e, const itab *it)
{
    const dw_temporal_tables *t = &e->s.prog->temporal;
    int64_t fresh = e->have_ts ? e->last_ts + 1 : INT64_MIN;
    bool changed = !it->have || it->n != t->nleaves;
    for (uint32_t l = 0; l < t->nleaves; l++) {
        e->since[l] = INT64_MIN;
        if (!it->have) continue;
        uint32_t k = 0;
        while (k < it->n && it->id[k] != t->leaves[l].identity) k++;
        if (k < it->n) e->since[l] = it->since[k];
        else if (dw_retention_retired_since(&e->ret, t->leaves[l].identity, &e->since[l])) changed = true;
        else { e->since[l] = fresh; changed = true; }
    }
    dw_retention_install(&e->ret, e->s.prog);   /* the leaves found retired are installed again */
    return changed;
}

/* Monitors from the retained history (after recovery, an import, a reload). */
static void feed_monitors(dw_engine *e, dw_monitors *m, const dw_program *p, const int64_t *since)
{
    if (!m) return;
    dw_monitors_reset(m);
    for (uint32_t l = 0; l < p->temporal.nleaves; l++) dw_monitors_set_since(m, l, since[l]);
    for (uint32_t i = 0; i < e->h.n; i++) dw_monitors_observe(m, p, &e->h.ev[i]);
}

/* The checkpointer yields to a waiter (a reload, an explicit checkpoint):
 * without that it re-arms under steady load before the waiter can take the
 * lock back, and the waiter starves (issue 13, row 13). */
static void wait_ckpt_idle(dw_engine *e)
{
    e->ckpt_waiters++;
    while (e->ckpt_busy) pthread_cond_wait(&e->ckpt_cv, &e->mu);
    e->ckpt_waiters--;
    pthread_cond_broadcast(&e->ckpt_cv);     /* the checkpointer looks again once mu is free */
}

/* With mu held and no background checkpoint in flight: export and write
 * (the I/O under the lock; used at open, on reload, and on request). */
static int checkpoint_locked(dw_engine *e, const dw_program *prog, const int64_t *since)
{
    wbuf b = { 0 };
    uint64_t keep = 0;
    int rc = export_locked(e, prog, since, &b, &keep);
    if (rc) snprintf(e->ckpt_err, sizeof e->ckpt_err, "checkpoint: out of memory");
    else if ((rc = dw_histlog_checkpoint_at(e->log, e->next_seq, e->log_last_ts, b.p, b.n, keep)))
        snprintf(e->ckpt_err, sizeof e->ckpt_err, "%s", dw_histlog_error(e->log));
    free(b.p);
    if (rc) e->ckpt_failures++;
    else { e->ckpts++; e->since_ckpt = 0; }
    return rc;
}

/* The background checkpointer: every ckpt_every events or ckpt_ms
 * milliseconds (when something was logged).  The state is exported under
 * the lock; the file I/O (through the keeper when dwd is confined) runs
 * after releasing it, while decisions continue. */
static void *checkpointer(void *arg)
{
    dw_engine *e = arg;
    struct timespec last;
    clock_gettime(CLOCK_MONOTONIC, &last);
    pthread_mutex_lock(&e->mu);
    while (!e->ckpt_stop) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t el = (now.tv_sec - last.tv_sec) * 1000 + (now.tv_nsec - last.tv_nsec) / 1000000;
        bool due = (e->ckpt_every && e->since_ckpt >= e->ckpt_every) ||
                   (e->ckpt_ms && e->since_ckpt && el >= (int64_t)e->ckpt_ms);
        if (e->ckpt_waiters) { pthread_cond_wait(&e->ckpt_cv, &e->mu); continue; }
        if (!due) {
            if (e->ckpt_ms) {
                struct timespec dl = last;
                if (!e->since_ckpt) dl = now;
                uint64_t ns = (uint64_t)dl.tv_nsec + (uint64_t)e->ckpt_ms * 1000000u;
                dl.tv_sec += (time_t)(ns / 1000000000u);
                dl.tv_nsec = (long)(ns % 1000000000u);
                pthread_cond_timedwait(&e->ckpt_cv, &e->mu, &dl);
            } else pthread_cond_wait(&e->ckpt_cv, &e->mu);
            continue;
        }
        wbuf b = { 0 };
        uint64_t keep = 0, S = e->next_seq, lts = e->log_last_ts;
        int rc = export_locked(e, e->s.prog, e->since, &b, &keep);
        e->since_ckpt = 0;
        e->ckpt_busy = true;
        pthread_mutex_unlock(&e->mu);
        if (!rc) rc = dw_histlog_checkpoint_at(e->log, S, lts, b.p, b.n, keep);
        else errno = ENOMEM;
        free(b.p);
        pthread_mutex_lock(&e->mu);
        e->ckpt_busy = false;
        if (rc) {
            e->ckpt_failures++;
            snprintf(e->ckpt_err, sizeof e->ckpt_err, "%s", b.oom ? "checkpoint: out of memory" : dw_histlog_error(e->log));
        } else e->ckpts++;
        pthread_cond_broadcast(&e->ckpt_cv);
        clock_gettime(CLOCK_MONOTONIC, &last);
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

static void stop_checkpointer(dw_engine *e)
{
    if (!e->has_ckpt_thread) return;
    pthread_mutex_lock(&e->mu);
    e->ckpt_stop = true;
    pthread_cond_broadcast(&e->ckpt_cv);
    pthread_mutex_unlock(&e->mu);
    pthread_join(e->ckpt_thread, NULL);
    e->has_ckpt_thread = false;
}

/* With mu held: append the event's record to the log (seq assigned here, in
 * engine order; the caller waits for it after releasing the lock). */
static int log_event(dw_engine *e, int64_t ts, const char *json, size_t len, uint64_t *ticket)
{
    char head[32];
    int hn = snprintf(head, sizeof head, "%" PRId64 "\n", ts);
    wbuf b = { 0 };
    wb_put(&b, head, (size_t)hn);
    wb_put(&b, json, len);
    uint64_t seq, lts;
    int rc = b.oom ? -1 : dw_histlog_enqueue(e->log, b.p, b.n, &seq, &lts);
    free(b.p);
    if (rc) return -1;
    e->next_seq = seq;
    e->log_last_ts = lts;
    if (ticket) *ticket = seq + 1;
    if (++e->since_ckpt >= e->ckpt_every && e->ckpt_every && e->has_ckpt_thread && !e->ckpt_busy)
        pthread_cond_broadcast(&e->ckpt_cv);     /* the cv has waiters of two kinds */
    return 0;
}

typedef struct restore_ctx { dw_engine *e; itab it; char err[512]; } restore_ctx;

static int restore_record(void *ctx, uint64_t seq, uint64_t ts_log, const void *payload, size_t len)
{
    restore_ctx *rc = ctx;
    dw_engine *e = rc->e;
    const char *p = payload, *nl = memchr(p, '\n', len);
    char num[32];
    if (!nl || nl == p || (size_t)(nl - p) >= sizeof num) {
        snprintf(rc->err, sizeof rc->err, "history record %" PRIu64 " is not an event record", seq);
        return -1;
    }
    memcpy(num, p, (size_t)(nl - p));
    num[nl - p] = 0;
    char *end;
    errno = 0;
    long long ts = strtoll(num, &end, 10);
    if (errno || *end || ts == DW_TS_NOW) { snprintf(rc->err, sizeof rc->err, "history record %" PRIu64 " has a bad timestamp", seq); return -1; }
    e->next_seq = seq;
    e->log_last_ts = ts_log;
    dw_verdict v;
    int r = observe_locked(e, nl + 1, len - (size_t)(nl + 1 - p), ts, DW_OBSERVE_RESTORE, NULL, NULL, &v, NULL);
    if (r != 1) {
        snprintf(rc->err, sizeof rc->err, "history record %" PRIu64 " cannot be restored: %s", seq, v.message);
        return -1;
    }
    if (v.timestamp != ts) {
        snprintf(rc->err, sizeof rc->err, "history record %" PRIu64 " is out of time order", seq);
        return -1;
    }
    e->replayed++;
    return 0;
}

static int restore_checkpoint(void *ctx, uint64_t seq, uint64_t last_ts, const void *state, size_t len)
{
    restore_ctx *rc = ctx;
    char m[256];
    if (import_locked(rc->e, state, len, &rc->it, m, sizeof m)) {
        snprintf(rc->err, sizeof rc->err, "checkpoint %016" PRIx64 ": %s", seq, m);
        return -1;
    }
    rc->e->next_seq = seq;
    rc->e->log_last_ts = last_ts;
    return 0;
}

/* XXH3-64 of the event schema's text (the built-in text or the file's
 * bytes): a log written under another event schema is refused. */
static int schema_digest(const dw_engine_config *cfg, uint64_t *out, char *err, size_t cap)
{
    const char *name = cfg->events_path ? cfg->events_path
                       : (cfg->schema_path && strcmp(cfg->schema_path, "box") == 0 ? "box" : "default");
    const char *text = dw_event_schema_builtin_text(name);
    if (text) { *out = XXH3_64bits(text, strlen(text)); return 0; }
    char *t;
    size_t n;
    if (dw_read_file(name, &t, &n)) { snprintf(err, cap, "cannot read %s: %s", name, strerror(errno)); return -1; }
    *out = XXH3_64bits(t, n);
    free(t);
    return 0;
}

dw_engine *dw_engine_open_durable(const dw_engine_config *cfg, const dw_engine_durable *d, dw_engine_recovery *rec,
                                  char *err, size_t errcap)
{
    if (rec) memset(rec, 0, sizeof *rec);
    if (!err) errcap = 0;
    int mode = d ? d->durability & ~DW_DURABLE_SALVAGE : -1;
    if (!d || !d->state_dir || mode < 0 || mode > DW_DURABILITY_NONE) {
        snprintf(err, errcap, "invalid durable-history options");
        return NULL;
    }
    dw_engine *e = dw_engine_open(cfg, err, errcap);
    if (!e) return NULL;
    uint64_t digest;
    if (schema_digest(cfg, &digest, err, errcap)) { dw_engine_close(e); return NULL; }
    restore_ctx rc = { .e = e };
    dw_histlog_options opt = {
        .schema_digest = digest, .durability = (dw_durability)mode,
        .on_record = restore_record, .on_checkpoint = restore_checkpoint, .cb_ctx = &rc, .fileops = d->fileops,
        .salvage = (d->durability & DW_DURABLE_SALVAGE) != 0,
    };
    dw_histlog_recovery hr;
    char m[512];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_mutex_lock(&e->mu);
    e->restoring = true;
    e->log = dw_histlog_open(d->state_dir, &opt, &hr, m, sizeof m);
    e->restoring = false;
    int ok = e->log != NULL;
    if (!ok) snprintf(err, errcap, "policy history failure: %s%s%s", m, rc.err[0] ? ": " : "", rc.err);
    else {
        e->next_seq = hr.next_seq;
        e->log_last_ts = hr.last_ts;
        e->restored = hr.next_seq;
        e->ckpt_every = d->checkpoint_every < 0 ? 0 : d->checkpoint_every == 0 ? 10000 : (uint64_t)d->checkpoint_every;
        e->ckpt_ms = d->checkpoint_interval_ms;
        bool changed = apply_installs(e, &rc.it);
        feed_monitors(e, e->mon, e->s.prog, e->since);
        history_retain(e);
        /* persist a new install table; and, like Box's reference engine,
         * checkpoint after a long replay so the next reopen is short.  Only
         * the first must succeed before serving: the second merely shortens
         * the next replay, so a full disk fails it (stats say why) without
         * stopping the restart */
        if ((changed || hr.records >= 10000 || (e->ckpt_every && hr.records >= e->ckpt_every)) &&
            checkpoint_locked(e, e->s.prog, e->since) && changed) {
            snprintf(err, errcap, "policy history failure: %s", e->ckpt_err);
            ok = 0;
        }
        if (rec) {
            rec->events = hr.next_seq;
            rec->replayed = hr.records;
            rec->checkpoint = hr.has_checkpoint;
            rec->checkpoint_seq = hr.checkpoint_seq;
            rec->retained = e->h.n;
            if (hr.salvaged)
                snprintf(rec->note, sizeof rec->note, "SALVAGED: %" PRIu64 " record(s) lost, %" PRIu64 " of them acknowledged; %s",
                         hr.lost_records, hr.lost_acknowledged, hr.note);
            else snprintf(rec->note, sizeof rec->note, "%s", hr.note);
        }
    }
    pthread_mutex_unlock(&e->mu);
    free(rc.it.id);
    free(rc.it.since);
    if (ok && (e->ckpt_every || e->ckpt_ms)) {
        if (pthread_create(&e->ckpt_thread, NULL, checkpointer, e) != 0) {
            snprintf(err, errcap, "cannot start the checkpoint thread");
            ok = 0;
        } else e->has_ckpt_thread = true;
    }
    if (!ok) { dw_engine_close(e); return NULL; }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rec) rec->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    return e;
}

int dw_engine_checkpoint(dw_engine *e)
{
    if (!e || !e->log) return -1;
    pthread_mutex_lock(&e->mu);
    wait_ckpt_idle(e);
    int rc = checkpoint_locked(e, e->s.prog, e->since);
    pthread_mutex_unlock(&e->mu);
    return rc;
}

int dw_engine_export_state(dw_engine *e, void **out, size_t *len)
{
    if (!e || !out || !len) return -1;
    wbuf b = { 0 };
    uint64_t keep;
    pthread_mutex_lock(&e->mu);
    int rc = export_locked(e, e->s.prog, e->since, &b, &keep);
    pthread_mutex_unlock(&e->mu);
    if (rc) { free(b.p); return -1; }
    *out = b.p;
    *len = b.n;
    return 0;
}

int dw_engine_import_state(dw_engine *e, const void *state, size_t len, char *err, size_t errcap)
{
    if (!err) errcap = 0;
    if (!e || !state) { snprintf(err, errcap, "no %s", e ? "state" : "engine"); return -1; }
    pthread_mutex_lock(&e->mu);
    int rc = -1;
    itab it = { 0 };
    if (e->h.n || e->log) snprintf(err, errcap, "the engine already has a history");
    else {
        e->restoring = true;
        rc = import_locked(e, state, len, &it, err, errcap);
        e->restoring = false;
        if (!rc) {
            apply_installs(e, &it);
            feed_monitors(e, e->mon, e->s.prog, e->since);
        } else reset_history_locked(e);
    }
    pthread_mutex_unlock(&e->mu);
    free(it.id);
    free(it.since);
    return rc;
}

int dw_engine_reload(dw_engine *e, const void *artifact, size_t len, dw_reload_info *info, char *err, size_t errcap)
{
    if (info) memset(info, 0, sizeof *info);
    if (!err) errcap = 0;
    if (!e || !artifact) { snprintf(err, errcap, "no %s", e ? "artifact" : "engine"); return -1; }
    char m[256];
    if (!dw_is_artifact(artifact, len)) { snprintf(err, errcap, "not a compiled policy artifact (.dwb: dwc compile)"); return -1; }
    dw_program *np = dw_artifact_load(artifact, len, m, sizeof m);
    if (!np) { snprintf(err, errcap, "artifact refused: %s", m); return -1; }
    uint64_t own = dw_session_schema_digest(&e->s);   /* its verdicts hold only under the schema it was validated against */
    if (np->schema_digest != own) {
        snprintf(err, errcap, "artifact refused: compiled %s; recompile it with dwc compile -s and the schema this engine serves",
                 !np->schema_digest ? "without a schema" : own ? "for another schema" : "for a schema, and this engine has none");
        dw_program_free(np);
        return -1;
    }
    const char *why = dw_session_artifact_refusal(&e->s, np);
    if (why) { snprintf(err, errcap, "artifact refused: %s", why); dw_program_free(np); return -1; }
    uint32_t nl = np->temporal.nleaves, nlp = 0;
    uint32_t *lp = calloc(np->npolicies + 1, sizeof *lp);
    int64_t *since = malloc((nl + 1) * sizeof *since);
    dw_monitors *mon = new_monitors(e, np);
    if (!lp || !since || (nl && !mon)) {
        snprintf(err, errcap, "out of memory");
        goto fail;
    }
    for (uint32_t i = 0; i < np->npolicies; i++)
        if (np->policies[i].nleaves) lp[nlp++] = i;
    pthread_mutex_lock(&e->mu);
    wait_ckpt_idle(e);
    /* box.md §7: a leaf whose identity (D8) the installed program has keeps
     * its install position, hence its state; so does one a reload retired
     * (runtime/retention.h); a new or changed one starts empty: it reads
     * only events after this reload */
    int64_t fresh = e->have_ts ? e->last_ts + 1 : INT64_MIN;
    uint32_t kept = 0;
    dw_retention_match(&e->ret, e->s.prog, e->since, np, fresh, since, &kept);
    feed_monitors(e, mon, np, since);
    if (e->log && checkpoint_locked(e, np, since)) {
        snprintf(err, errcap, "policy history failure: the reload could not be made durable: %s", e->ckpt_err);
        pthread_mutex_unlock(&e->mu);
        goto fail;
    }
    /* no decision holds the old program past the lock (verdicts carry rule
     * indices, names are interned): it is freed here */
    dw_retention_commit(&e->ret, e->s.prog, e->since, np);   /* on OOM it keeps everything */
    dw_program_free(e->s.prog);
    e->s.prog = np;
    free(e->names);
    e->names = NULL;
    free(e->leaf_policies);
    e->leaf_policies = lp;
    e->nleaf_policies = nlp;
    dw_monitors_free(e->mon);
    e->mon = mon;
    free(e->since);
    e->since = since;
    e->generation++;
    if (info) *info = (dw_reload_info){ nl, kept, nl - kept, e->generation };
    history_retain(e);
    pthread_mutex_unlock(&e->mu);
    return 0;
fail:
    dw_monitors_free(mon);
    free(since);
    free(lp);
    dw_program_free(np);
    return -1;
}

void dw_engine_get_stats(dw_engine *e, dw_engine_stats *st)
{
    if (!st) return;
    memset(st, 0, sizeof *st);
    if (!e) return;
    pthread_mutex_lock(&e->mu);
    st->history_events = e->h.n;
    st->next_seq = e->next_seq;
    st->restored = e->restored;
    st->replayed = e->replayed;
    st->checkpoints = e->ckpts;
    st->checkpoint_failures = e->ckpt_failures;
    st->generation = e->generation;
    st->policies_evaluated = e->evaluated;
    st->durable = e->log != NULL;
    snprintf(st->checkpoint_error, sizeof st->checkpoint_error, "%s", e->ckpt_err);
    pthread_mutex_unlock(&e->mu);
    if (e->log) {
        dw_histlog_stats hs;
        dw_histlog_get_stats(e->log, &hs);
        st->log_next_seq = dw_histlog_next_seq(e->log);
        st->log_appends = hs.appends;
        st->log_syncs = hs.syncs;
        st->log_max_batch = hs.max_batch;
    }
}

const char *dw_engine_history_error(dw_engine *e)
{
    if (!e) return "no engine";
    pthread_mutex_lock(&e->mu);
    bool lost = e->lost[0] != 0;         /* the text stays until a recovery or a reset */
    pthread_mutex_unlock(&e->mu);
    if (lost) return e->lost;
    return e->log && dw_histlog_failed(e->log) ? dw_histlog_error(e->log) : "";
}

/* ================================================================
 * Public entry points: each holds the engine lock; durable engines wait
 * for their record after releasing it (group commit).
 * ================================================================ */

static void history_failed(dw_engine *e, dw_verdict *v)
{
    bool d = v->decided;
    int64_t ts = v->timestamp;
    memset(v, 0, sizeof *v);
    v->decided = d;
    v->timestamp = ts;
    fault(v, "policy history failure: %s", dw_engine_history_error(e));
}

int dw_engine_wait(dw_engine *e, uint64_t ticket)
{
    if (!e) return -1;
    if (!ticket || !e->log) return 0;
    return dw_histlog_wait(e->log, ticket - 1) ? -1 : 0;
}

/* The public entry points' NULL arguments: true (v, if any, a deny with the
 * reason) when one is missing. */
static bool missing(const dw_engine *e, const void *input, dw_verdict *v, char *err, size_t errcap)
{
    if (e && input) return false;
    const char *m = !e ? "no engine" : "no event";
    if (v) {
        verdict_init(v);
        v->decided = true;
        snprintf(v->message, sizeof v->message, "%s", m);
    }
    if (err) snprintf(err, errcap, "%s", m);
    return true;
}

int dw_engine_decide_json(dw_engine *e, const char *json, size_t len, int64_t ts, dw_verdict *v)
{
    if (!v || missing(e, json, v, NULL, 0)) return -1;
    uint64_t t = 0;
    pthread_mutex_lock(&e->mu);
    int rc = decide_or_record(e, json, len, ts, v, true, &t);
    pthread_mutex_unlock(&e->mu);
    if (dw_engine_wait(e, t)) history_failed(e, v);
    return rc;
}

int dw_engine_record_json(dw_engine *e, const char *json, size_t len, int64_t ts, char *err, size_t errcap)
{
    if (missing(e, json, NULL, err, errcap)) return -1;
    dw_verdict v;
    uint64_t t = 0;
    pthread_mutex_lock(&e->mu);
    int rc = decide_or_record(e, json, len, ts, &v, false, &t);
    pthread_mutex_unlock(&e->mu);
    if (!rc && dw_engine_wait(e, t)) { history_failed(e, &v); rc = -1; }
    if (rc && err) snprintf(err, errcap, "%s", v.message);
    return rc;
}

/* The forms that do not log (a durable engine records Box's JSON form):
 * with mu held; true (v denied) on a durable engine. */
static bool refuse_unlogged(dw_engine *e, dw_verdict *v)
{
    if (!e->log) return false;
    memset(v, 0, sizeof *v);
    v->decided = true;
    fault(v, "a durable engine takes events in Box's JSON form (dw_engine_decide_json)%s", NULL);
    return true;
}

int dw_engine_decide_request_json(dw_engine *e, const char *json, size_t len, int64_t ts, dw_verdict *v)
{
    if (!v || missing(e, json, v, NULL, 0)) return -1;
    pthread_mutex_lock(&e->mu);
    int rc = refuse_unlogged(e, v) ? 0 : decide_request_json_locked(e, json, len, ts, v);
    pthread_mutex_unlock(&e->mu);
    return rc;
}

int dw_engine_decide_event(dw_engine *e, const dw_event_input *in, dw_verdict *v)
{
    if (!v || missing(e, in, v, NULL, 0)) return -1;
    pthread_mutex_lock(&e->mu);
    int rc = refuse_unlogged(e, v) ? 0 : decide_event_locked(e, in, v);
    pthread_mutex_unlock(&e->mu);
    return rc;
}

int dw_engine_observe_json(dw_engine *e, const char *json, size_t len, int64_t ts, dw_observe_mode mode,
                           dw_engine_append_hook hook, void *ctx, dw_verdict *v)
{
    if (!v || missing(e, json, v, NULL, 0)) return -1;
    uint64_t t = 0;
    pthread_mutex_lock(&e->mu);
    int rc = observe_locked(e, json, len, ts, mode, hook, ctx, v, &t);
    pthread_mutex_unlock(&e->mu);
    if (rc == 1 && dw_engine_wait(e, t)) { history_failed(e, v); rc = 0; }
    return rc;
}

int dw_engine_submit_json(dw_engine *e, const char *json, size_t len, int64_t ts, dw_observe_mode mode,
                          dw_verdict *v, uint64_t *ticket)
{
    if (ticket) *ticket = 0;
    if (!v || !ticket || missing(e, json, v, NULL, 0)) return -1;
    pthread_mutex_lock(&e->mu);
    int rc = observe_locked(e, json, len, ts, mode, NULL, NULL, v, ticket);
    pthread_mutex_unlock(&e->mu);
    return rc;
}

void dw_engine_reset_history(dw_engine *e)
{
    if (!e) return;
    pthread_mutex_lock(&e->mu);
    reset_history_locked(e);
    pthread_mutex_unlock(&e->mu);
}

uint32_t dw_engine_history_length(const dw_engine *e)
{
    dw_engine *m = (dw_engine *)e;
    if (!m) return 0;
    pthread_mutex_lock(&m->mu);
    uint32_t n = e->h.n;
    pthread_mutex_unlock(&m->mu);
    return n;
}

void dw_engine_set_time_floor(dw_engine *e, int64_t ts)
{
    pthread_mutex_lock(&e->mu);
    if (!e->have_floor || ts > e->floor) e->floor = ts;
    e->have_floor = true;
    pthread_mutex_unlock(&e->mu);
}

const char *dw_engine_rule_name(dw_engine *e, uint32_t rule)
{
    if (!e) return "<default-deny>";
    pthread_mutex_lock(&e->mu);
    const char *n = rule_name_locked(e, rule);
    pthread_mutex_unlock(&e->mu);
    return n;
}

size_t dw_engine_rule_description(dw_engine *e, uint32_t rule, char *buf, size_t cap)
{
    if (!buf) cap = 0;
    if (!e) { if (cap) buf[0] = 0; return 0; }
    pthread_mutex_lock(&e->mu);
    size_t n = rule_description_locked(e, rule, buf, cap);
    pthread_mutex_unlock(&e->mu);
    return n;
}
