/* engine.c - the stateful authorizer (dogwood.md §15.1, box.md §6): events
 * in, verdicts out, temporal leaves evaluated over the retained history.
 *
 * decide:  build the event and its Cedar request -> gate (decision kinds must
 *          conform to the schema; a non-conforming request is denied and not
 *          recorded) -> append -> evaluate the leaves of every rule whose scope
 *          admits the request -> Cedar decision -> Box's verdict.
 * record:  build the event -> append.
 * Every failure after the gate is a deny with cause internal_fault. */
#include "engine_int.h"
#include "../stdlib/hot.h"

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


/* The incremental monitors of p: optional (on OOM every leaf simply runs
 * through teval). */
dw_monitors *engine_new_monitors(dw_engine *e, const dw_program *p)
{
    dw_monitors *m = p->temporal.nleaves ? dw_monitors_new(p, e->tps) : NULL;
    if (m && e->s.es && e->s.es->nkey) {   /* key-local (§8.9): partition the monitors' state too */
        dw_str kp[16];
        size_t nk = e->s.es->nkey;
        for (size_t k = 0; k < nk && k < 16; k++) kp[k] = e->s.es->key[k].path;
        if (nk > 16 || dw_monitors_set_partition(m, kp, (uint32_t)nk)) { dw_monitors_free(m); m = NULL; }
    }
    return m;
}

/* The engine around in (taken over: released on failure too).  Both ways
 * of opening end here: engine_open.c from an artifact, engine_source.c
 * from policy text. */
dw_engine *engine_new(const dw_engine_config *cfg, engine_inputs *in, char *err, size_t errcap)
{
    if (!err) errcap = 0;
    dw_monitors_seed();          /* getrandom now: dwd's seccomp filter, installed later, refuses it */
    dw_engine *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, errcap, "out of memory");
        dw_program_free(in->prog);
        dw_store_free(&in->store);
        if (in->release) in->release(in->owner);
        return NULL;
    }
    pthread_mutex_init(&e->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&e->ckpt_cv, &ca);
    pthread_condattr_destroy(&ca);
    e->s = *in;
    dw_arena_init(&e->h.arena, 256 * 1024);
    dw_arena_init(&e->scratch, 256 * 1024);
    dw_read_cache_init(&e->uids, 0);
    e->tps = cfg->ticks_per_second > 0 ? cfg->ticks_per_second : 1000000000;
    e->replay_ts = cfg->replay_timestamps;
    e->work_bound = cfg->temporal_work_bound ? cfg->temporal_work_bound : DW_TEMPORAL_WORK_BOUND_DEFAULT;
    e->no_request_validation = cfg->no_request_validation;
    const dw_program *p = e->s.prog;
    e->leaf_policies = calloc(p->npolicies + 1, sizeof *e->leaf_policies);
    if (!e->leaf_policies) { snprintf(err, errcap, "out of memory"); dw_engine_close(e); return NULL; }
    for (uint32_t i = 0; i < p->npolicies; i++)
        if (p->policies[i].nleaves) e->leaf_policies[e->nleaf_policies++] = i;
    e->since = malloc((p->temporal.nleaves + 1) * sizeof *e->since);
    if (!e->since) { snprintf(err, errcap, "out of memory"); dw_engine_close(e); return NULL; }
    for (uint32_t l = 0; l < p->temporal.nleaves; l++) e->since[l] = INT64_MIN;
    e->mon = engine_new_monitors(e, p);
    dw_retention_install(&e->ret, p);    /* on OOM it keeps everything */
    e->box_self = (dw_uid){ .type = "Box::Agent", .tlen = 10, .id = "self", .idlen = 4 };
    e->box_unused = (dw_uid){ .type = "Box::Resource", .tlen = 13, .id = "unused", .idlen = 6 };
    e->box_self.hash = dw_uid_hash(e->box_self.type, 10, e->box_self.id, 4);
    e->box_unused.hash = dw_uid_hash(e->box_unused.type, 13, e->box_unused.id, 6);
    return e;
}

/* XXH3-64 of an event schema's text: a built-in name's, or a file's bytes.
 * The durable log records it, and refuses a log written under another. */
int engine_events_digest(const char *events, uint64_t *out, char *err, size_t cap)
{
    const char *text = dw_event_schema_builtin_text(events);
    if (text) { *out = XXH3_64bits(text, strlen(text)); return 0; }
    char *t;
    size_t n;
    if (dw_read_file(events, &t, &n)) { snprintf(err, cap, "cannot read %s: %s", events, strerror(errno)); return -1; }
    *out = XXH3_64bits(t, n);
    free(t);
    return 0;
}

int dw_engine_close(dw_engine *e)
{
    if (!e) return 0;
    engine_stop_checkpointer(e);
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
    engine_providers_free(e);
    dw_monitors_free(e->mon);
    free(e->h.ev);
    dw_arena_free(&e->h.arena);
    dw_arena_free(&e->scratch);
    dw_program_free(e->s.prog);
    dw_store_free(&e->s.store);
    if (e->s.release) e->s.release(e->s.owner);
    free(e);
    return rc;
}

void engine_reset_history_locked(dw_engine *e)
{
    if (e->log) return;          /* a durable history is never forgotten */
    e->lost[0] = 0;              /* an empty history is whole */
    e->h.n = 0;
    e->h.dropped = 0;
    e->h.scan = 0;
    e->h.scan_gen = 0;
    e->h.retry_at = 0;
    engine_history_carve_reset(e);
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

const char *engine_rule_name_locked(dw_engine *e, uint32_t rule) { return rule_name_locked(e, rule); }

/* ---- time ---- */

static int64_t clock_ticks(const dw_engine *e)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    return e->tps == 1000000000 ? ns : ns / (1000000000 / e->tps);
}

/* ---- history ---- */

/* Appends src: kept where it is when in_place (it lives in the history's
 * carve or arena already), pointed at when transient (read by its own
 * decision only), else copied into the history's arena. */
DW_HOT static int history_put(dw_engine *e, const dw_event *src, bool in_place, int64_t ts, bool transient, int8_t needed,
                       uint64_t ihash)
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
    h->last_transient = transient;
    h->last_needed = needed;
    if (transient || in_place) {
        *ev = *src;
        if (!transient) h->carve_pending = false;   /* read into the history's carve: kept where it is */
    } else if (!engine_clone_event(e, &h->arena, src, ev)) return -1;
    ev->ts = ts;
    h->n++;
    e->next_seq++;
    /* monitors see every appended event before its decision; a failure only
     * disables them (teval takes over), it is not a fault of this event.
     * During recovery they are rebuilt once at the end (engine_feed_monitors). */
    if (e->mon && !e->restoring)
        ihash ? dw_monitors_observe_hashed(e->mon, ev, ihash) : dw_monitors_observe(e->mon, e->s.prog, ev);
    return 0;
}

int engine_history_append(dw_engine *e, const built *b, int64_t ts) { return history_put(e, &b->ev, b->in_hist, ts, false, -1, 0); }

/* An event that no leaf needs (retention) is read only by its own decision
 * (monitors copy what they keep) and dropped by the engine_history_retain that
 * ends it: it is not cloned into the history arena, it points into the
 * scratch arena (or the history's carve) that lives until the next event.
 * One that a leaf needs keeps only what a leaf can read (engine_keep.c). */
static int history_append_decision(dw_engine *e, const built *b, int64_t ts)
{
    if (!dw_retention_keeps_any(&e->ret)) return history_put(e, &b->ev, b->in_hist, ts, true, 0, 0);   /* no leaf keeps any */
    dw_event cut;
    uint64_t ih;
    int need = engine_keep_part(e, &b->ev, &cut, &ih);
    if (need < 0) return -1;
    e->h.expect_whole = need == DW_RETAIN_WHOLE;   /* the next line is read into the carve (engine_event.c) */
    if (need != DW_RETAIN_FIELDS) return history_put(e, &b->ev, b->in_hist, ts, need == DW_RETAIN_NONE, need == DW_RETAIN_WHOLE, ih);
    int rc = history_put(e, &cut, true, ts, false, 1, ih);
    if (b->in_hist) e->h.carve_pending = true;     /* the line's bytes in the carve go back with the next one */
    return rc;
}

/* Drop events no leaf can reach any more (dogwood.md §7.3): the event just
 * decided when no leaf needs its identity (runtime/retention.h), and those
 * older than the leaves' reach.  "Now" is the last timestamp with the
 * runtime's strictly increasing ones; a replay, whose timestamps may go
 * back, drops by time only below the floor its caller promises. */
DW_HOT void engine_history_retain(dw_engine *e)
{
    history *h = &e->h;
    if (h->n && !(h->last_needed >= 0 ? h->last_needed : dw_retention_needs(&e->ret, &h->ev[h->n - 1]))) {
        h->n--;
        if (!h->last_transient) h->dropped++;   /* its bytes stay in the arena until the next rebuild */
    }
    h->last_transient = false;   /* a transient event never outlives its decision */
    h->last_needed = -1;
    bool waste = h->dropped > h->n + 1024;
    if (!waste && h->n < 1024) return;
    /* the cursor's event still in reach (scan_until, for the same horizon): nothing else is out of it yet */
    if (!waste && h->scan_gen == e->ret.generation && h->scan < h->n / 2 && (!e->replay_ts || e->have_floor) &&
        (e->replay_ts ? e->floor : h->ev[h->n - 1].ts) <= h->scan_until)
        return;
    int64_t horizon, d;
    /* an event out of reach stays out (the clock and the floor never go
     * back): resume from the cursor (amortized O(1) per event) */
    uint32_t keep_from = h->scan < h->n ? h->scan : h->n ? h->n - 1 : 0;
    if (h->n && (!e->replay_ts || e->have_floor) &&
        !__builtin_mul_overflow(dw_retention_reach(&e->ret, e->s.prog), e->tps, &horizon)) {
        int64_t now = e->replay_ts ? e->floor : h->ev[h->n - 1].ts;
        while (keep_from < h->n - 1 && (__builtin_sub_overflow(now, h->ev[keep_from].ts, &d) ? now > 0 : d > horizon))
            keep_from++;
        if (__builtin_add_overflow(h->ev[keep_from].ts, horizon, &h->scan_until)) h->scan_until = INT64_MAX;
        h->scan_gen = e->ret.generation;
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
        if (!engine_clone_event(e, &fresh, ev, d)) {
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
    engine_history_carve_reset(e);
    dw_arena_free(&h->arena);
    h->arena = fresh;
    h->n = w;
    h->scan = 0;
    h->scan_gen = 0;
    h->retry_at = 0;
    h->dropped = 0;
}

int64_t engine_stamp(dw_engine *e, int64_t ts)
{
    if (ts == DW_TS_NOW) ts = clock_ticks(e);
    if (!e->replay_ts && e->have_ts && ts <= e->last_ts) ts = e->last_ts + 1;   /* strictly increasing (§7.3) */
    e->last_ts = ts;
    e->have_ts = true;
    return ts;
}

/* ---- deciding ---- */

void engine_fault(dw_verdict *v, const char *fmt, const char *detail)
{
    v->allow = false;
    v->cause = DW_CAUSE_INTERNAL_FAULT;
    v->ndetermining = 0;
    snprintf(v->message, sizeof v->message, fmt, detail ? detail : "");
}

/* Every verdict starts as a deny with cause internal_fault, so no path that
 * ends before deciding can leave PERMITTED (cause 0) behind. */
void engine_verdict_init(dw_verdict *v)
{
    /* field by field, not a memset of the whole 408 bytes: once per decision,
     * and determining[] past ndetermining is never read */
    v->decided = false;
    v->allow = false;
    v->cause = DW_CAUSE_INTERNAL_FAULT;
    v->ndetermining = 0;
    v->nerrors = 0;
    v->timestamp = 0;
    v->message[0] = 0;
}

/* An accepted event could not enter the in-memory history (out of memory):
 * verdicts over a history that misses it could permit what a whole one
 * denies, so from now on every event is refused (engine_refuse_lost) until the
 * history is whole again: a non-durable engine by dw_engine_reset_history
 * or a reopen, a durable one by reopening (recovery replays its log, which
 * holds the event). */
void engine_history_lost(dw_engine *e, dw_verdict *v)
{
    snprintf(e->lost, sizeof e->lost,
             "policy history failure: an event could not be added to the in-memory history (out of memory); "
             "every event is refused until %s",
             e->log ? "the engine is reopened (recovery replays its log)" : "the history is reset or the engine reopened");
    engine_fault(v, "%s", e->lost);
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
    engine_fault(v, "%s", e->lost);
}


/* True once the kept event is in the history (the engine is whole again). */
static bool retry_lost(dw_engine *e)
{
    if (!e->pend.json) return false;
    built b;
    dw_verdict t;
    int64_t ts = e->pend.ts;
    engine_verdict_init(&t);
    if (engine_event_from_json(e, e->pend.json, e->pend.len, &ts, &b, &t)) return false;
    e->next_seq = e->pend.seq;       /* nothing was taken since: every event was refused */
    if (engine_history_append(e, &b, e->pend.ts)) return false;
    free(e->pend.json);
    memset(&e->pend, 0, sizeof e->pend);
    e->lost[0] = 0;
    engine_history_retain(e);
    return true;
}

/* With mu held: true (v a deny, nothing appended or logged) while the
 * history misses an event. */
bool engine_refuse_lost(dw_engine *e, dw_verdict *v)
{
    if (!e->lost[0] || retry_lost(e)) return false;
    engine_fault(v, "%s", e->lost);
    return true;
}

/* Cedar's decision of req over store, the temporal leaves of every rule whose
 * scope admits it first (vm/leaves.h, D3).  anchor_context: the leaves' ρ0
 * context when it is not req's (NULL).  0, or -1 with v a deny that says why. */
static inline int leaf_env(dw_engine *e, const dw_value *anchor_context, dw_leaf_env *env)
{
    const dw_event_schema *es = e->s.es;
    uint32_t nkey = es ? (uint32_t)es->nkey : 0;
    dw_str *key = NULL;
    if (nkey) {                  /* key-local (§8.9): the key paths, as the view reads them */
        if (!(key = dw_arena_alloc_raw(&e->scratch, nkey * sizeof *key))) return -1;
        for (uint32_t q = 0; q < nkey; q++) key[q] = es->key[q].path;
    }
    *env = (dw_leaf_env){
        .hist = e->h.ev, .nhist = e->h.n, .ticks_per_second = e->tps, .key = key, .nkey = nkey,
        .since = e->since, .mon = e->mon, .work_bound = e->work_bound, .anchor_context = anchor_context,
        .leaf_policies = e->leaf_policies, .nleaf_policies = e->nleaf_policies,
    };
    return 0;
}

int engine_leaf_env(dw_engine *e, const dw_value *anchor_context, dw_leaf_env *env) { return leaf_env(e, anchor_context, env); }

/* The deny for a failed leaf pass (out of line: the decision's code stays small). */
static __attribute__((cold, noinline)) void leaf_fault(dw_engine *e, dw_leaf_fault f, dw_verdict *v)
{
    char msg[sizeof v->message];
    const char *rule = rule_name_locked(e, f.policy);
    switch (f.err) {
    case DW_LEAF_ESCOPE: snprintf(msg, sizeof msg, "temporal evaluation: scope test failed"); break;
    case DW_LEAF_ETEVAL:
        if (f.teval_err == DW_TEVAL_EBUDGET)
            snprintf(msg, sizeof msg, "temporal evaluation: leaf of %s exceeded the work bound of %" PRIu64
                     " steps per decision (temporal_work_bound)", rule, e->work_bound);
        else snprintf(msg, sizeof msg, "temporal evaluation: leaf of %s failed (%s)", rule,
                      f.teval_err == DW_TEVAL_ENOMEM ? "out of memory" : f.teval_err == DW_TEVAL_EDEPTH ? "nested too deep" : "malformed tables");
        break;
    case DW_LEAF_EDECIDE: snprintf(msg, sizeof msg, "decision: out of memory"); break;
    default: snprintf(msg, sizeof msg, "temporal evaluation: out of memory"); break;
    }
    engine_fault(v, "%s", msg);
}

DW_HOT int engine_authorize(dw_engine *e, const dw_store *store, dw_request *req, const dw_value *anchor_context,
                     dw_response *resp, dw_verdict *v)
{
    const dw_program *p = e->s.prog;
    if (engine_evaluate_providers(e, store, req, v)) return -1;   /* §15.1 step 4: engine_int.h, engine_providers.c */
    if (!p->temporal.nleaves) {
        if (!dw_authorize(p, store, req, &e->scratch, resp)) return 0;
        engine_fault(v, "decision: out of memory%s", NULL);
        return -1;
    }
    dw_leaf_env env;
    if (leaf_env(e, anchor_context, &env)) { engine_fault(v, "temporal evaluation: out of memory%s", NULL); return -1; }
    dw_leaf_fault f;
    if (!dw_authorize_leaves(p, store, req, &env, &e->scratch, resp, &f)) return 0;
    leaf_fault(e, f, v);
    return -1;
}

DW_HOT static int decide_built(dw_engine *e, built *b, int64_t ts, dw_verdict *v)
{
    v->timestamp = engine_stamp(e, ts);
    if (history_append_decision(e, b, v->timestamp)) { engine_history_lost(e, v); v->decided = b->decision; return -1; }
    if (!b->decision) {
        v->decided = false;
        snprintf(v->message, sizeof v->message, "the event's kind is not a decision kind (recorded, not decided)");
        engine_history_retain(e);
        return 0;
    }
    v->decided = true;
    if (b->req.bound_prog != e->s.prog || b->req.bound_store != &e->s.store) dw_request_bind(&b->req, e->s.prog, &e->s.store);
    dw_response resp;
    if (engine_authorize(e, &e->s.store, &b->req, NULL, &resp, v)) {
        if (e->explain) engine_explain_decision(e, &b->req, NULL, v);
        engine_history_retain(e);
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
    if (e->explain) engine_explain_decision(e, &b->req, &resp, v);   /* dwc explain (engine_explain.c) */
    engine_history_retain(e);
    return 0;
}

static int64_t peek_stamp(dw_engine *e, int64_t ts);

/* Why engine_log_event failed: the log's error, or (the record could not even be
 * formed) out of memory. */
static const char *log_error(dw_engine *e)
{
    const char *m = dw_histlog_error(e->log);
    return m && m[0] ? m : "the record could not be formed (out of memory)";
}

DW_HOT static int decide_or_record(dw_engine *e, const char *json, size_t len, int64_t ts, dw_verdict *v, bool must_decide,
                            uint64_t *ticket)
{
    engine_verdict_init(v);
    if (engine_refuse_lost(e, v)) { v->decided = must_decide; return must_decide ? 0 : -1; }
    built b;
    int rc = engine_event_from_json(e, json, len, &ts, &b, v);
    if (rc) {
        v->decided = must_decide || (rc == -2 && b.decision);
        return v->decided ? 0 : -1;
    }
    if (e->log) {                /* durable: logged before it enters the history */
        ts = peek_stamp(e, ts);
        if (engine_log_event(e, ts, json, len, ticket)) {
            engine_fault(v, "policy history failure: %s", log_error(e));
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
    engine_verdict_init(v);
    v->decided = true;
    if (engine_refuse_lost(e, v)) return 0;
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
        engine_fault(v, "request: %s", err.p ? err.p : "not a Cedar request");
        dw_buf_free(&err);
        return 0;
    }
    dw_buf_free(&err);
    const dw_json *ctx = dw_json_get(j, "context");
    const dw_json *input = ctx ? dw_json_get(ctx, "input") : NULL;
    built b;
    if (engine_build_event(e, &b, A->type, A->tlen, A->id, A->idlen, "request", 7, P, R, input, NULL, NULL, v->message, sizeof v->message) ||
        (e->s.box && dw_box_gate(j, json, len, P, R, v->message, sizeof v->message))) {
        v->allow = false;
        v->cause = DW_CAUSE_INTERNAL_FAULT;
        return 0;
    }
    if (!b.decision) { engine_fault(v, "`request` is not a decision kind of this event schema%s", NULL); return 0; }
    decide_built(e, &b, ts, v);
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


/* Gate, hook, log (durable engines), append, evaluate.  *ticket: the log
 * position to wait for (seq + 1), 0 if none. */
DW_HOT int engine_observe_locked(dw_engine *e, const char *json, size_t len, int64_t ts, dw_observe_mode mode,
                          dw_engine_append_hook hook, void *ctx, dw_verdict *v, uint64_t *ticket)
{
    engine_verdict_init(v);
    if (ticket) *ticket = 0;
    if (!e || !e->s.prog || !json) { snprintf(v->message, sizeof v->message, "no %s", json ? "engine" : "event"); return -1; }
    v->decided = mode == DW_OBSERVE_DECIDE;
    if (engine_refuse_lost(e, v)) return 0;
    built b;
    if (engine_event_from_json(e, json, len, &ts, &b, v)) return 0;
    if (mode == DW_OBSERVE_DECIDE && !b.decision) { engine_fault(v, "the event's kind is not a decision kind%s", NULL); return 0; }
    if (mode == DW_OBSERVE_RECORD && b.decision) { engine_fault(v, "a decision kind cannot be recorded without a decision%s", NULL); return 0; }
    ts = peek_stamp(e, ts);
    v->timestamp = ts;
    if (hook && hook(ctx, ts)) { engine_fault(v, "history: the event could not be appended to the durable log%s", NULL); return 0; }
    if (e->log && mode == DW_OBSERVE_RESTORE) { engine_fault(v, "a durable engine restores its own history%s", NULL); return 0; }
    if (e->log && engine_log_event(e, ts, json, len, ticket)) {
        engine_fault(v, "policy history failure: %s", log_error(e));
        return 0;
    }
    if (mode == DW_OBSERVE_RESTORE) {
        v->decided = false;
        v->timestamp = engine_stamp(e, ts);
        if (engine_history_append(e, &b, v->timestamp)) { engine_history_lost(e, v); return 0; }
        engine_history_retain(e);
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
            if (cap) {   /* as snprintf's "%.*s" would (no printf: once per denial) */
                const char *v = pc->annots[k].value.s;
                size_t m = pc->annots[k].value.len < cap - 1 ? pc->annots[k].value.len : cap - 1;
                const char *z = m ? memchr(v, 0, m) : NULL;
                if (z) m = (size_t)(z - v);
                if (m) memcpy(buf, v, m);
                buf[m] = 0;
            }
            return pc->annots[k].value.len ? pc->annots[k].value.len : 0;
        }
    return 0;
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
    engine_fault(v, "policy history failure: %s", dw_engine_history_error(e));
}

DW_HOT int dw_engine_wait(dw_engine *e, uint64_t ticket)
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
        engine_verdict_init(v);
        v->decided = true;
        snprintf(v->message, sizeof v->message, "%s", m);
    }
    if (err) snprintf(err, errcap, "%s", m);
    return true;
}

DW_HOT int dw_engine_decide_json(dw_engine *e, const char *json, size_t len, int64_t ts, dw_verdict *v)
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
    engine_fault(v, "a durable engine takes events in Box's JSON form (dw_engine_decide_json)%s", NULL);
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
    int rc = refuse_unlogged(e, v) ? 0 : engine_decide_event_locked(e, in, v);
    pthread_mutex_unlock(&e->mu);
    return rc;
}

int dw_engine_observe_json(dw_engine *e, const char *json, size_t len, int64_t ts, dw_observe_mode mode,
                           dw_engine_append_hook hook, void *ctx, dw_verdict *v)
{
    if (!v || missing(e, json, v, NULL, 0)) return -1;
    uint64_t t = 0;
    pthread_mutex_lock(&e->mu);
    int rc = engine_observe_locked(e, json, len, ts, mode, hook, ctx, v, &t);
    pthread_mutex_unlock(&e->mu);
    if (rc == 1 && dw_engine_wait(e, t)) { history_failed(e, v); rc = 0; }
    return rc;
}

DW_HOT int dw_engine_submit_json(dw_engine *e, const char *json, size_t len, int64_t ts, dw_observe_mode mode,
                          dw_verdict *v, uint64_t *ticket)
{
    if (ticket) *ticket = 0;
    if (!v || !ticket || missing(e, json, v, NULL, 0)) return -1;
    pthread_mutex_lock(&e->mu);
    int rc = engine_observe_locked(e, json, len, ts, mode, NULL, NULL, v, ticket);
    pthread_mutex_unlock(&e->mu);
    return rc;
}

void dw_engine_reset_history(dw_engine *e)
{
    if (!e) return;
    pthread_mutex_lock(&e->mu);
    engine_reset_history_locked(e);
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
