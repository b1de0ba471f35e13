/* engine_durable.c - durable history (dw_engine_open_durable): the log
 * records, the background checkpointer, recovery from a checkpoint and the
 * log, and reloading a program over the kept history. */
#include "engine_int.h"
#include "../stdlib/digits.h"

/* Log record payload (compatible with dwd's first version):
 *   "<engine timestamp, decimal>\n<the event in Box's JSON form>"
 * The checkpoint state is engine_state.c's. */

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
    int rc = engine_export_locked(e, prog, since, &b, &keep);
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
        int rc = engine_export_locked(e, e->s.prog, e->since, &b, &keep);
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

void engine_stop_checkpointer(dw_engine *e)
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
int engine_log_event(dw_engine *e, int64_t ts, const char *json, size_t len, uint64_t *ticket)
{
    /* "<ts>\n<json>", built in the per-decision scratch arena (no malloc,
     * no printf: once per event) */
    char *rec = len < SIZE_MAX - 24 ? dw_arena_alloc_raw(&e->scratch, len + 24) : NULL;
    if (!rec) return -1;
    char num[DW_I64_TEXT_MAX + 1];
    num[DW_I64_TEXT_MAX] = '\n';
    size_t hn = dw_i64_text(ts, num + DW_I64_TEXT_MAX) + 1;
    memcpy(rec, num + sizeof num - hn, hn);
    memcpy(rec + hn, json, len);
    uint64_t seq, lts;
    if (dw_histlog_enqueue(e->log, rec, hn + len, &seq, &lts)) return -1;
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
    int r = engine_observe_locked(e, nl + 1, len - (size_t)(nl + 1 - p), ts, DW_OBSERVE_RESTORE, NULL, NULL, &v, NULL);
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
    if (engine_import_locked(rc->e, state, len, &rc->it, m, sizeof m)) {
        snprintf(rc->err, sizeof rc->err, "checkpoint %016" PRIx64 ": %s", seq, m);
        return -1;
    }
    rc->e->next_seq = seq;
    rc->e->log_last_ts = last_ts;
    return 0;
}

bool engine_durable_invalid(const dw_engine_durable *d)
{
    int mode = d ? d->durability & ~DW_DURABLE_SALVAGE : -1;
    return !d || !d->state_dir || mode < 0 || mode > DW_DURABILITY_NONE;
}

/* Recover e's history from d's log (the log must have been written under
 * e's event schema, e->s.events_digest) and start its checkpointer.  e is
 * closed on failure. */
dw_engine *engine_make_durable(dw_engine *e, const dw_engine_durable *d, dw_engine_recovery *rec, char *err, size_t errcap)
{
    if (rec) memset(rec, 0, sizeof *rec);
    if (!err) errcap = 0;
    if (engine_durable_invalid(d)) { snprintf(err, errcap, "invalid durable-history options"); dw_engine_close(e); return NULL; }
    int mode = d->durability & ~DW_DURABLE_SALVAGE;
    uint64_t digest = e->s.events_digest;
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
        bool changed = engine_apply_installs(e, &rc.it);
        engine_feed_monitors(e, e->mon, e->s.prog, e->since);
        engine_history_retain(e);
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

int dw_engine_reload(dw_engine *e, const void *artifact, size_t len, dw_reload_info *info, char *err, size_t errcap)
{
    if (info) memset(info, 0, sizeof *info);
    if (!err) errcap = 0;
    if (!e || !artifact) { snprintf(err, errcap, "no %s", e ? "artifact" : "engine"); return -1; }
    char m[256];
    if (!dw_is_artifact(artifact, len)) { snprintf(err, errcap, "not a compiled policy artifact (.dwb): a reload takes artifacts only; compile the policy with dwc compile -s SCHEMA"); return -1; }
    dw_program *np = dw_artifact_load(artifact, len, m, sizeof m);
    if (!np) { snprintf(err, errcap, "artifact refused: %s", m); return -1; }
    uint64_t own = e->s.schema_digest;   /* its verdicts hold only under the schema it was validated against */
    if (np->schema_digest != own) {
        snprintf(err, errcap, "artifact refused: compiled %s; recompile it with dwc compile -s and the schema this engine serves",
                 !np->schema_digest ? "without a schema" : own ? "for another schema" : "for a schema, and this engine has none");
        dw_program_free(np);
        return -1;
    }
    const char *why = dw_box_profile_refusal(e->s.box, np);
    if (why) { snprintf(err, errcap, "artifact refused: %s", why); dw_program_free(np); return -1; }
    if (engine_reload_serve_check(e, np, m, sizeof m)) { snprintf(err, errcap, "artifact refused: %s", m); dw_program_free(np); return -1; }
    uint32_t nl = np->temporal.nleaves, nlp = 0;
    uint32_t *lp = calloc(np->npolicies + 1, sizeof *lp);
    int64_t *since = malloc((nl + 1) * sizeof *since);
    dw_monitors *mon = engine_new_monitors(e, np);
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
    engine_feed_monitors(e, mon, np, since);
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
    engine_history_retain(e);
    pthread_mutex_unlock(&e->mu);
    return 0;
fail:
    dw_monitors_free(mon);
    free(since);
    free(lp);
    dw_program_free(np);
    return -1;
}
