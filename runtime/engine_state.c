/* engine_state.c - the engine state codec: the retained history and the
 * leaves' install positions as bytes (checkpoints, dw_engine_export_state),
 * and back. */
#include "engine_int.h"
#include "../stdlib/le.h"

/* Checkpoint state (dw_engine_export_state; little-endian, version 2):
 *   "DWENGST2"  i64 last_ts  u8 have_ts
 *   u32 nleaves  { u64 identity  i64 install position }   per leaf of the program
 *   the leaves' needs, retired ones too (dw_retention_encode; not in version 1)
 *   u32 nevents  { u64 seq  i64 ts  str atype  str aid  str kind  value logged }
 *   str = u32 length + bytes; value = u8 kind + payload (record fields and
 *   set/array elements in stored order).
 * Only the events some leaf can still need are exported, so a checkpoint
 * (and reopening) follows the deepest window, not the number of events
 * ever logged; the monitors are rebuilt from them (their state is a function
 * of the events in the window since each leaf's install position). */

void engine_wb_put(wbuf *b, const void *s, size_t n)
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
static void wb_u8(wbuf *b, uint8_t x) { engine_wb_put(b, &x, 1); }
static void wb_u32(wbuf *b, uint32_t x) { uint8_t t[4]; dw_put_le32(t, x); engine_wb_put(b, t, 4); }
static void wb_u64(wbuf *b, uint64_t x) { uint8_t t[8]; dw_put_le64(t, x); engine_wb_put(b, t, 8); }
static void wb_str(wbuf *b, const char *s, size_t n) { wb_u32(b, (uint32_t)n); engine_wb_put(b, s, n); }

static bool enc_val(wbuf *b, const dw_value *v, int depth)
{
    if (depth > 256) return false;
    wb_u8(b, v->kind);
    switch (v->kind) {
    case DW_V_BOOL: wb_u8(b, v->u.b); return true;
    case DW_V_LONG: case DW_V_DECIMAL: case DW_V_DATETIME: case DW_V_DURATION: wb_u64(b, (uint64_t)v->u.i); return true;
    case DW_V_STRING: wb_str(b, v->u.s, v->n); return true;
    case DW_V_ENTITY: wb_str(b, v->u.uid->type, v->u.uid->tlen); wb_str(b, v->u.uid->id, v->u.uid->idlen); return true;
    case DW_V_IPADDR: engine_wb_put(b, v->u.ip, sizeof *v->u.ip); return true;
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

/* stdlib/le.h's bounded reader, under this file's names */
typedef dw_le_reader rbuf;
#define rb_take dw_le_take
#define rb_u8 dw_le_read8
#define rb_u32 dw_le_read32
#define rb_u64 dw_le_read64
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
int engine_export_locked(dw_engine *e, const dw_program *prog, const int64_t *since, wbuf *b, uint64_t *keep)
{
    const history *h = &e->h;
    engine_wb_put(b, STATE_MAGIC, 8);
    wb_u64(b, (uint64_t)e->last_ts);
    wb_u8(b, e->have_ts);
    const dw_temporal_tables *t = &prog->temporal;
    wb_u32(b, t->nleaves);
    for (uint32_t l = 0; l < t->nleaves; l++) { wb_u64(b, t->leaves[l].identity); wb_u64(b, (uint64_t)since[l]); }
    dw_buf needs = { 0 };        /* and retired leaves' (runtime/retention.h): a restart may meet them again */
    if (dw_retention_encode(&e->ret, e->s.prog, e->since, prog, since, &needs)) b->oom = true;
    else engine_wb_put(b, needs.p, needs.len);
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

/* With mu held, on an engine whose history is empty: load a state.  The
 * monitors are rebuilt by engine_feed_monitors. */
int engine_import_locked(dw_engine *e, const void *data, size_t len, itab *it, char *err, size_t cap)
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
        b.ev.atype = (dw_str){ at, n1 };
        b.ev.aid = (dw_str){ id, n2 };
        b.ev.kind = (dw_str){ kd, n3 };
        e->next_seq = seq;
        if (engine_history_append(e, &b, ts)) { snprintf(err, cap, "out of memory"); return -1; }
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
bool engine_apply_installs(dw_engine *e, const itab *it)
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
void engine_feed_monitors(dw_engine *e, dw_monitors *m, const dw_program *p, const int64_t *since)
{
    if (!m) return;
    dw_monitors_reset(m);
    for (uint32_t l = 0; l < p->temporal.nleaves; l++) dw_monitors_set_since(m, l, since[l]);
    for (uint32_t i = 0; i < e->h.n; i++) dw_monitors_observe(m, p, &e->h.ev[i]);
}

int dw_engine_export_state(dw_engine *e, void **out, size_t *len)
{
    if (!e || !out || !len) return -1;
    wbuf b = { 0 };
    uint64_t keep;
    pthread_mutex_lock(&e->mu);
    int rc = engine_export_locked(e, e->s.prog, e->since, &b, &keep);
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
        rc = engine_import_locked(e, state, len, &it, err, errcap);
        e->restoring = false;
        if (!rc) {
            engine_apply_installs(e, &it);
            engine_feed_monitors(e, e->mon, e->s.prog, e->since);
        } else engine_reset_history_locked(e);
    }
    pthread_mutex_unlock(&e->mu);
    free(it.id);
    free(it.since);
    return rc;
}
